/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Memory (section 10): swap in use, which turns a page the application touches into a
 * disk read. */
#include <inttypes.h>

#include "audit/audit-internal.h"
#include "host/task.h"
#include "basic/util.h"

/* A "Key:   N kB" field of /proc/meminfo. */
static int meminfo_kb(Audit *a, const char *meminfo, const char *key, uint64_t *ret) {
        _cleanup_free_ char *v = NULL;
        int r = audit_check_errno(a, task_status_field(meminfo, key, &v));

        if (r < 0)
                return r;
        v[strcspn(v, " ")] = '\0';
        return parse_uint64(v, ret);
}

void audit_check_swap(Audit *a) {
        _cleanup_free_ char *meminfo = NULL;
        uint64_t total, free_kb;

        if (audit_read_file(a, &meminfo, "proc/meminfo") < 0 || meminfo_kb(a, meminfo, "SwapTotal", &total) < 0 ||
            meminfo_kb(a, meminfo, "SwapFree", &free_kb) < 0 || free_kb >= total)
                return;
        finding_add(a, SEVERITY_WARNING, "memory.swap", "swap",
                    "%" PRIu64 " kB of swap is in use (of %" PRIu64 " kB): pages were pushed out, and the next touch "
                    "of one, by the application or by a kernel path it waits for, is a major fault that reads it "
                    "back, milliseconds on a disk. Take the pages back and stop swapping: swapoff -a (it needs as "
                    "much free memory), then remove the swap lines from /etc/fstab (and systemctl mask the swap "
                    "units systemd generates, e.g. systemctl mask dev-zram0.swap); keep the application's memory "
                    "locked with mlockall() (mlock = yes in its [service] or [process] section checks it).",
                    total - free_kb, total);
}
