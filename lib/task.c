/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One task under /proc: the parser of its stat line, and matching it to the configured
 * applications. */
#include <string.h>

#include "task.h"
#include "util.h"

int task_stat_parse(const char *text, TaskStat *ret) {
        const char *open = strchr(text, '('), *close = strrchr(text, ')'), *p;
        TaskStat st = {};
        unsigned field = 3;
        bool have_ppid = false, have_flags = false, have_prio = false;

        if (!open || !close || close < open)
                return -EINVAL;
        snprintf(st.comm, sizeof(st.comm), "%.*s", (int) MIN((size_t) (close - open - 1), sizeof(st.comm) - 1), open + 1);
        p = close + 1;
        while (*p && field <= 41) {
                char token[32];
                size_t n;

                while (*p == ' ')
                        p++;
                n = strcspn(p, " \n");
                if (n == 0)
                        break;
                if (field == 3)
                        st.state = *p;
                if (n < sizeof(token) && (field == 4 || field == 9 || field == 22 || field == 40 || field == 41)) {
                        memcpy(token, p, n);
                        token[n] = '\0';
                        if (field == 4)
                                have_ppid = parse_unsigned(token, &st.ppid) >= 0;
                        else if (field == 9)
                                have_flags = parse_uint64(token, &st.flags) >= 0;
                        else if (field == 22)
                                (void) parse_uint64(token, &st.start_time);
                        else if (field == 40)
                                have_prio = parse_unsigned(token, &st.rt_priority) >= 0;
                        else
                                st.have_policy = have_prio && parse_unsigned(token, &st.policy) >= 0;
                }
                p += n;
                field++;
        }
        if (!have_ppid || !have_flags)
                return -EINVAL;
        *ret = st;
        return 0;
}

bool cgroup_in_unit(const char *text, const char *unit) {
        size_t ulen = strlen(unit);

        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n'), *path;
                const char *stop = end ?: line + strlen(line);

                path = memchr(line, ':', (size_t) (stop - line));
                path = path ? memchr(path + 1, ':', (size_t) (stop - path - 1)) : NULL;
                for (const char *s = path; s && s < stop;) {
                        const char *seg = s + 1, *next = memchr(seg, '/', (size_t) (stop - seg));
                        size_t len = (size_t) ((next ?: stop) - seg);
                        if (len == ulen && strncmp(seg, unit, ulen) == 0)
                                return true;
                        s = next;
                }
                line = end ? end + 1 : NULL;
        }
        return false;
}

bool app_matches(const AppSection *app, const char *comm, const char *cgroup) {
        char unit[256];

        if (app->kind == APP_PROCESS)
                return comm && streq(comm, app->name);
        if (!cgroup || snprintf(unit, sizeof(unit), "%s.service", app->name) >= (int) sizeof(unit))
                return false;
        return cgroup_in_unit(cgroup, unit);
}
