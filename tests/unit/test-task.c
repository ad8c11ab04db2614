/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The task readers the audit and evict_strays share: stat parsing and matching a process
 * to the configured applications. */
#include "tap.h"
#include "task.h"
#include "util.h"

static void test_stat_parse(void) {
        TaskStat ts;

        CHECK(task_stat_parse("42 (a (b) c) R 7 1 1 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 3 0 98765 1000 10\n", &ts) == 0,
              "a stat line with parentheses in comm parses");
        CHECK_STR(ts.comm, "a (b) c", "comm runs to the last ')'");
        CHECK(ts.state == 'R' && ts.ppid == 7 && ts.flags == 4194560 && ts.start_time == 98765,
              "state, ppid, flags and start time");
        CHECK(task_stat_parse("42 (x) R\n", &ts) == -EINVAL, "a truncated line is refused");
        CHECK(cgroup_in_unit("0::/system.slice/trader.service/worker\n", "trader.service"), "a service's sub-cgroup");
        CHECK(!cgroup_in_unit("0::/system.slice/trader.service-x\n", "trader.service"), "not a prefix match");
}

int main(void) {
        test_stat_parse();
        return tap_finish();
}
