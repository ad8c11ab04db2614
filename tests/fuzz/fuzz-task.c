/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the /proc/PID/stat parser (task.c), which the kernel-thread settings trust for a
 * thread's flags (PF_KTHREAD, PF_NO_SETAFFINITY), start time and policy, against a
 * reference written from proc(5): the fields follow the last ')', separated by spaces, up to
 * the end of the line; and the policy text of originals ("fifo:50", sched_parse()) against
 * sched_format(). */
#include <inttypes.h>
#include <stdbool.h>

#include "fuzz.h"
#include "host/task.h"
#include "basic/util.h"

#define FIELDS_MAX 41

typedef struct Reference {
        bool ok;
        char comm[64];
        char state;
        bool have[FIELDS_MAX + 1];
        uint64_t value[FIELDS_MAX + 1];
} Reference;

/* Field n (3..41) of the line as proc(5) lays it out; numbers as parse_uint64 takes them
 * (fields longer than 31 bytes are not numbers the kernel writes, so not taken). */
static void reference_parse(const char *text, Reference *ref) {
        const char *open = strchr(text, '('), *close = strrchr(text, ')');
        char *rest, *save = NULL, *tok;
        unsigned field = 3;

        *ref = (Reference) {};
        if (!open || !close || close < open)
                return;
        snprintf(ref->comm, sizeof(ref->comm), "%.*s", (int) MIN((size_t) (close - open - 1), sizeof(ref->comm) - 1),
                 open + 1);
        rest = strndup(close + 1, strcspn(close + 1, "\n"));
        FUZZ_CHECK(rest, "out of memory");
        for (tok = strtok_r(rest, " ", &save); tok && field <= FIELDS_MAX; tok = strtok_r(NULL, " ", &save), field++) {
                if (field == 3)
                        ref->state = tok[0];
                if (strlen(tok) < 32)
                        ref->have[field] = parse_uint64(tok, &ref->value[field]) >= 0;
        }
        free(rest);
        ref->ok = ref->have[4] && ref->value[4] <= UINT32_MAX && ref->have[9];
}

static void check_stat(const char *text) {
        Reference ref;
        TaskStat ts;
        int r = task_stat_parse(text, &ts);

        reference_parse(text, &ref);
        FUZZ_CHECK((r == 0) == ref.ok, "task_stat_parse() returned %d, the reference says %s", r, ref.ok ? "ok" : "invalid");
        if (r < 0)
                return;
        FUZZ_CHECK(streq(ts.comm, ref.comm), "comm '%s', expected '%s'", ts.comm, ref.comm);
        FUZZ_CHECK(ts.state == ref.state, "state '%c', expected '%c'", ts.state, ref.state);
        FUZZ_CHECK(ts.ppid == ref.value[4], "ppid %u, expected %" PRIu64, ts.ppid, ref.value[4]);
        FUZZ_CHECK(ts.flags == ref.value[9], "flags %" PRIu64 ", expected %" PRIu64, ts.flags, ref.value[9]);
        FUZZ_CHECK(ts.start_time == (ref.have[22] ? ref.value[22] : 0), "start time %" PRIu64, ts.start_time);
        {
                uint64_t utime = ref.have[14] ? ref.value[14] : 0, stime = ref.have[15] ? ref.value[15] : 0;
                uint64_t sum = utime > UINT64_MAX - stime ? UINT64_MAX : utime + stime;
                FUZZ_CHECK(ts.cpu_time == sum, "cpu time %" PRIu64 ", expected %" PRIu64, ts.cpu_time, sum);
        }
        bool processor = ref.have[39] && ref.value[39] <= UINT32_MAX;
        FUZZ_CHECK(ts.have_processor == processor, "have_processor %d, expected %d", ts.have_processor, processor);
        if (processor)
                FUZZ_CHECK(ts.processor == ref.value[39], "processor %u", ts.processor);
        bool prio = ref.have[40] && ref.value[40] <= UINT32_MAX, policy = ref.have[41] && ref.value[41] <= UINT32_MAX;
        FUZZ_CHECK(ts.have_policy == (prio && policy), "have_policy %d, expected %d", ts.have_policy, prio && policy);
        if (ts.have_policy)
                FUZZ_CHECK(ts.policy == ref.value[41] && ts.rt_priority == ref.value[40], "policy %u:%u", ts.policy,
                           ts.rt_priority);
}

static void check_sched(const char *text) {
        SchedPolicy policy, again;
        unsigned priority, again_priority;
        char buf[32];

        if (sched_parse(text, &policy, &priority) < 0)
                return;
        FUZZ_CHECK(sched_policy_to_string(policy), "'%s' parsed to a policy without a name", text);
        FUZZ_CHECK(sched_policy_is_realtime(policy) ? priority >= 1 && priority <= 99 : priority == 0,
                   "'%s': priority %u for %s", text, priority, sched_policy_to_string(policy));
        FUZZ_CHECK(sched_format(policy, priority, buf, sizeof(buf)) == 0, "'%s' does not format back", text);
        FUZZ_CHECK(sched_parse(buf, &again, &again_priority) == 0 && again == policy && again_priority == priority,
                   "'%s' -> '%s' does not parse to the same", text, buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = fuzz_strndup(data, size);

        check_stat(text);
        check_sched(text);
        free(text);
        return 0;
}
