/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* posture_load() on a fake tree (lib/setting/posture-load.c): the warnings that depend on
 * the host it reads: governors offered, [sysfs] patterns over read-only files, [nic]
 * irq_cpus against [irq] pins and two pins over one IRQ, and what lowlatd.service with its
 * drop-ins under the root leaves writable (lib/host/unit-sandbox.c). */
#include "setting/posture-load.h"
#include "host/unit-sandbox.h"
#include "faketree.h"
#include "tap.h"

typedef struct Fixture {
        char root[40];
        Host *host;
        ErrorList errors;
        Posture *posture;
} Fixture;

#define UNIT_DIR "usr/lib/systemd/system/"
#define ETC_DIR "etc/systemd/system/"
#define SHIPPED_READ_WRITE "ReadWritePaths=/sys/devices -/sys/kernel/mm -/sys/module\n"

static void fixture_start(Fixture *f) {
        faketree_mkdtemp(f->root, sizeof(f->root), "posture-load");
        faketree_cpus(f->root, "0-3", "", "");
        if (host_open(f->root, &f->host) < 0)
                abort();
        f->errors = ERROR_LIST_EMPTY;
        f->posture = NULL;
}

static void fixture_done(Fixture *f) {
        posture_free(f->posture);
        host_free(f->host);
        error_list_done(&f->errors);
        faketree_remove(f->root);
}

/* posture_load() of text (as etc/lowlatd/lowlatd.conf in the tree); the warnings that hold
 * needle, counted, the first in *ret_first (or NULL). -1 when it does not load. */
static int load(Fixture *f, const char *text, const char *needle, const char **ret_first) {
        _cleanup_free_ char *path = faketree_path(f->root, "etc/lowlatd/lowlatd.conf");
        int n = 0;

        posture_free(f->posture);
        f->posture = NULL;
        error_list_done(&f->errors);
        tree_write(f, "etc/lowlatd/lowlatd.conf", text);
        *ret_first = NULL;
        if (posture_load(path, f->host, &f->posture, &f->errors) < 0) {
                for (size_t i = 0; i < f->errors.n; i++)
                        printf("#   error: %s\n", f->errors.items[i]);
                return -1;
        }
        for (size_t i = 0; i < f->posture->config->warnings.n; i++) {
                const char *w = f->posture->config->warnings.items[i];
                printf("#   %s\n", w);
                if (strstr(w, needle) && n++ == 0)
                        *ret_first = w;
        }
        return n;
}

/* text warns exactly once with needle, at line, and with every one of the words (NULL-ended). */
static void check_warns(Fixture *f, const char *text, unsigned line, const char *needle, const char *const *words,
                        const char *what) {
        const char *w;
        char at[32];
        bool ok;

        snprintf(at, sizeof(at), "lowlatd.conf:%u: warning: ", line);
        ok = load(f, text, needle, &w) == 1 && strstr(w, at);
        for (size_t i = 0; ok && words && words[i]; i++)
                ok = strstr(w, words[i]) != NULL;
        CHECK(ok, what);
}

static void check_quiet(Fixture *f, const char *text, const char *needle, const char *what) {
        const char *w;

        CHECK(load(f, text, needle, &w) == 0, what);
}

#define OUTSIDE "outside what lowlatd.service may write"
#define RCU "[sysfs]\n/sys/kernel/rcu_normal = 1\n"
#define KSM "[sysfs]\n/sys/kernel/mm/ksm/run = 1\n"

static void test_unit_not_installed(void) {
        Fixture f;

        fixture_start(&f);
        check_warns(&f, RCU, 2, OUTSIDE,
                    (const char *const[]) { "ReadOnlyPaths=/sys in lowlatd.service as lowlatd ships it, none installed;",
                                            "ReadWritePaths=-/sys/kernel/rcu_normal", NULL },
                    "no unit installed: the shipped unit's paths, and the message says so");
        check_warns(&f, "[sysfs]\n/sys/power/pm_async = 0\n", 2, OUTSIDE, NULL, "/sys/power: the same");
        check_quiet(&f,
                    "[sysfs]\n/sys/kernel/mm/transparent_hugepage/enabled = never\n"
                    "/sys/devices/system/cpu/cpu*/power/energy_perf_bias = 0\n"
                    "/sys/module/rcutree/parameters/rcu_kick_kthreads = 1\n"
                    "/sys/class/net/eth0/device/power/control = on\n"
                    "/sys/block/sda/queue/scheduler = none\n"
                    "/sys/bus/pci/devices/0000:00:1f.0/power/control = on\n"
                    "/sys/fs/cgroup/cpu.weight = 100\n",
                    OUTSIDE, "paths the shipped unit may write, and links into /sys/devices: no warning");
        check_warns(&f, "[sysfs]\n/sys/kernel/*/rcu_normal = 1\n", 2, OUTSIDE,
                    (const char *const[]) { "(ReadWritePaths=-/sys/kernel)", NULL },
                    "a pattern: the advice names the directory before its first wildcard");
        fixture_done(&f);
}

static bool under_sys(const char *path) {
        return strncmp(path, "/sys", 4) == 0 && (path[4] == '\0' || path[4] == '/');
}

/* The same paths under /sys in the same order (the unit names /proc paths too). */
static bool same_paths(const UnitSandboxPath *a, size_t n_a, const UnitSandboxPath *b, size_t n_b) {
        size_t i = 0, j = 0;

        for (;; i++, j++) {
                while (i < n_a && !under_sys(a[i].path))
                        i++;
                while (j < n_b && !under_sys(b[j].path))
                        j++;
                if (i == n_a || j == n_b)
                        return i == n_a && j == n_b;
                if (!streq(a[i].path, b[j].path))
                        return false;
        }
}

/* The copy the code reads where no unit is installed says what units/lowlatd.service.in says. */
static void check_same_paths(Fixture *f, const char *unit) {
        _cleanup_(unit_sandbox_done) UnitSandbox kept = UNIT_SANDBOX_EMPTY, shipped = UNIT_SANDBOX_EMPTY;

        if (!CHECK(unit_sandbox_read(f->host, &kept, NULL) == 0 && !kept.installed &&
                           unit_sandbox_parse(&shipped, "lowlatd.service.in", unit) == 0,
                   "the kept copy (no unit installed) and units/lowlatd.service.in are read"))
                return;
        CHECK(kept.n_read_only > 0 && kept.n_read_write > 0 &&
                      same_paths(kept.read_only, kept.n_read_only, shipped.read_only, shipped.n_read_only) &&
                      same_paths(kept.read_write, kept.n_read_write, shipped.read_write, shipped.n_read_write),
              "... and name the same ReadOnlyPaths= and ReadWritePaths= under /sys, in the same order");
}

/* units/lowlatd.service.in installed as it is: the same verdicts as the copy the code keeps. */
static void test_shipped_unit_installed(void) {
        _cleanup_free_ char *unit = faketree_read_file(UNIT_IN);
        Fixture f;

        if (!CHECK(unit != NULL, "units/lowlatd.service.in can be read"))
                return;
        fixture_start(&f);
        check_same_paths(&f, unit);
        tree_write(&f, UNIT_DIR "lowlatd.service", unit);
        check_warns(&f, RCU, 2, OUTSIDE,
                    (const char *const[]) { "ReadOnlyPaths=/sys in ", UNIT_DIR "lowlatd.service;", NULL },
                    "the shipped unit installed: /sys/kernel/rcu_normal warned, naming the unit file");
        check_quiet(&f,
                    "[sysfs]\n/sys/kernel/mm/ksm/run = 1\n/sys/module/x/parameters/y = 1\n"
                    "/sys/kernel/debug/sched/fair_server/x = 0\n/sys/fs/cgroup/x = 1\n"
                    "/sys/devices/system/cpu/cpu0/power/energy_perf_bias = 0\n",
                    OUTSIDE, "... and every path its ReadWritePaths= names is quiet, as in the copy the code keeps");
        fixture_done(&f);
}

static void test_dropins(void) {
        Fixture f;

        fixture_start(&f);
        tree_write(&f, UNIT_DIR "lowlatd.service",
                   "[Unit]\nDescription=x\nReadWritePaths=/sys/kernel/rcu_normal\n[Service]\nReadOnlyPaths=/sys\n"
                   SHIPPED_READ_WRITE "[Install]\nReadWritePaths=/sys\n");
        check_warns(&f, RCU, 2, OUTSIDE, NULL, "path not covered: a warning (keys outside [Service] count for nothing)");
        check_quiet(&f, KSM, OUTSIDE, "path covered by the unit's ReadWritePaths=: no warning");

        tree_write(&f, ETC_DIR "lowlatd.service.d/override.conf", "[Service]\nReadWritePaths=-/sys/kernel/rcu_normal\n");
        check_quiet(&f, RCU, OUTSIDE, "the drop-in the warning advises (systemctl edit lowlatd) silences it");
        check_quiet(&f, KSM, OUTSIDE, "... and the unit's own paths stay: ReadWritePaths= lines accumulate");

        tree_write(&f, ETC_DIR "lowlatd.service.d/override.conf", "[Service]\nReadWritePaths=\n");
        check_warns(&f, KSM, 2, OUTSIDE, NULL, "an empty ReadWritePaths= resets the list: /sys/kernel/mm warned");
        tree_write(&f, ETC_DIR "lowlatd.service.d/override.conf",
                   "[Service]\nReadWritePaths=\nReadWritePaths=\"/sys/kernel/rcu_normal\" \\\n  /sys/power\n");
        check_quiet(&f, RCU "/sys/power/pm_async = 0\n", OUTSIDE,
                    "after the reset, a quoted path and a continued line are read");
        check_warns(&f, KSM, 2, OUTSIDE, NULL, "... and what was reset stays out");

        /* The order of names over all directories; one in etc/ hides its namesake in usr/lib/. */
        tree_write(&f, ETC_DIR "lowlatd.service.d/override.conf", "[Service]\n");
        tree_write(&f, "run/systemd/system/lowlatd.service.d/20-reset.conf", "[Service]\nReadWritePaths=\n");
        tree_write(&f, UNIT_DIR "lowlatd.service.d/30-add.conf", "[Service]\nReadWritePaths=/sys/kernel/rcu_normal\n");
        check_quiet(&f, RCU, OUTSIDE, "drop-ins apply in the order of their names, whatever their directory");
        check_warns(&f, KSM, 2, OUTSIDE, (const char *const[]) { "ReadOnlyPaths=/sys in ", "lowlatd.service;", NULL },
                    "... the reset in 20-reset.conf came before 30-add.conf");
        tree_write(&f, ETC_DIR "lowlatd.service.d/30-add.conf", "[Service]\n");
        check_warns(&f, RCU, 2, OUTSIDE, NULL, "a drop-in in etc/ hides the one of the same name in usr/lib/");
        tree_symlink(&f, ETC_DIR "lowlatd.service.d/30-add.conf", "/dev/null");
        check_warns(&f, RCU, 2, OUTSIDE, NULL, "... as does a link to /dev/null (none in this tree): no error");
        tree_mkdir(&f, ETC_DIR "lowlatd.service.d/40-odd.conf");
        check_warns(&f, RCU, 2, "cannot be checked here",
                    (const char *const[]) { "lowlatd.service.d/40-odd.conf: Is a directory", NULL },
                    "a drop-in that cannot be read: said, with its name, at the first [sysfs] line");
        tree_remove(&f, ETC_DIR "lowlatd.service.d/40-odd.conf");

        /* The unit in etc/ wins over the one in usr/lib/. */
        tree_remove(&f, "run/systemd/system/lowlatd.service.d");
        tree_write(&f, ETC_DIR "lowlatd.service", "[Service]\nReadOnlyPaths=/sys/kernel\n");
        check_quiet(&f, "[sysfs]\n/sys/power/pm_async = 0\n", OUTSIDE, "the unit in etc/ is the one read");
        check_warns(&f, RCU, 2, OUTSIDE, (const char *const[]) { "ReadOnlyPaths=/sys/kernel in ", ETC_DIR, NULL },
                    "... and its ReadOnlyPaths= decides, the deepest path first");
        fixture_done(&f);
}

static void test_governor(void) {
        Fixture f;

        fixture_start(&f);
        check_warns(&f, "[pm]\ngovernor = performance\n", 2, "governor = performance cannot be checked here", NULL,
                    "governor on a host without cpufreq: said that it cannot be checked");
        for (int cpu = 0; cpu < 4; cpu++)
                tree_writef(&f, cpu == 2 ? "performance\n" : "performance powersave\n",
                            "sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors", cpu);
        check_warns(&f, "[daemon]\nmode = observe\n[pm]\ngovernor = ludicrous\n", 4,
                    "'ludicrous' is not offered by CPU 0",
                    (const char *const[]) { "(available: performance powersave)", NULL },
                    "a governor no CPU offers: a warning naming the first CPU and what it offers");
        check_warns(&f, "[pm]\ngovernor = powersave\n", 2, "'powersave' is not offered by CPU 2", NULL,
                    "a governor one CPU lacks: that CPU named");
        check_quiet(&f, "[pm]\ngovernor = performance\n", "governor", "a governor every CPU offers: no warning");
        fixture_done(&f);
}

static void test_sysfs_read_only_glob(void) {
        Fixture f;

        fixture_start(&f);
        tree_write(&f, "sys/kernel/mm/ksm/run", "0\n");
        tree_write(&f, "sys/kernel/mm/ksm/pages_shared", "0\n");
        tree_chmod(&f, "sys/kernel/mm/ksm/pages_shared", 0444);
        check_warns(&f, "[sysfs]\n/sys/kernel/mm/ksm/* = 1\n", 2, "read-only",
                    (const char *const[]) { "matches 2 files on this host, 1 of them read-only",
                                            "/sys/kernel/mm/ksm/pages_shared", NULL },
                    "a [sysfs] pattern over a read-only counter: a warning naming it");
        check_quiet(&f, "[sysfs]\n/sys/kernel/mm/ksm/r* = 1\n", "read-only", "a pattern over writable files: quiet");
        fixture_done(&f);
}

#define INTERRUPTS                                                                            \
        "           CPU0       CPU1       CPU2       CPU3\n"                                  \
        " 40:          0          0          0          0  PCI-MSI 1-edge      eth0-TxRx-0\n" \
        " 41:          0          0          0          0  PCI-MSI 2-edge      eth0-TxRx-1\n" \
        " 42:          0          0          0          0  PCI-MSI 3-edge      eth1-TxRx-0\n"

static void test_nic_pins(void) {
        Fixture f;

        fixture_start(&f);
        check_warns(&f, "[nic \"eth*\"]\nirq_cpus = 0\n[irq]\npin = eth0-TxRx-* 1\n", 2, "cannot be checked here",
                    (const char *const[]) { "proc/interrupts", NULL },
                    "no /proc/interrupts: irq_cpus against the pins cannot be checked, and that is said");
        tree_write(&f, "proc/interrupts", INTERRUPTS);
        tree_mkdir(&f, "sys/class/net/eth0");
        tree_mkdir(&f, "sys/class/net/eth1");
        check_warns(&f, "[nic \"eth*\"]\nirq_cpus = 0\n[irq]\npin = eth0-TxRx-* 1\n", 4, "no effect on eth0's IRQs",
                    (const char *const[]) { "IRQ 40 (eth0-TxRx-0) on CPUs 1", "irq_cpus = 0 (", "lowlatd.conf:2)", NULL },
                    "a pin over a NIC's IRQ with other CPUs than its irq_cpus: one warning at the pin");
        check_quiet(&f, "[nic \"eth*\"]\nirq_cpus = 0\n[irq]\npin = eth0-TxRx-* 0\n", "no effect",
                    "the same CPUs: quiet");
        check_quiet(&f, "[nic \"eth1\"]\nirq_cpus = 0\n[irq]\npin = eth0-TxRx-* 1\n", "no effect",
                    "a pin over another NIC's IRQs: quiet");
        check_warns(&f, "[irq]\npin = eth0-TxRx-* 0\npin = eth0-TxRx-1 1\n", 3, "overrides line 2's",
                    (const char *const[]) { "for IRQ 41 (eth0-TxRx-1)", NULL },
                    "two pins over one IRQ of this host with other CPUs: the later one warned");
        check_quiet(&f, "[irq]\npin = eth0-TxRx-0 0\npin = eth1-* 1\n", "overrides", "pins over different IRQs: quiet");
        fixture_done(&f);
}

int main(void) {
        test_unit_not_installed();
        test_shipped_unit_installed();
        test_dropins();
        test_governor();
        test_sysfs_read_only_glob();
        test_nic_pins();
        return tap_finish();
}
