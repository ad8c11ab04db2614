/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Settings reconciled against a fake --root tree: drift, correction, observe mode,
 * unmovable IRQs, unsupported sysctls and governors, the cpu_dma_latency hold, fights,
 * the IRQ table's scan, and what a reload inherits. */
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "originals.h"
#include "setting-default-affinity.h"
#include "setting-dma.h"
#include "setting-file.h"
#include "setting-governor.h"
#include "setting-irq.h"
#include "setting-nic.h"
#include "setting-slices.h"
#include "setting-sysctl.h"
#include "systemd-client.h"
#include "table.h"
#include "faketree.h"
#include "tap.h"
#include "util.h"

#define T0 (1000 * USEC_PER_SEC) /* a "now" far from zero, as CLOCK_MONOTONIC is */

typedef struct Fixture {
        char root[32];
        Host *host;
        Posture *posture;
        Reconciler rc;
        char events[FAKETREE_EVENTS_SIZE]; /* "drift corrected ..." since the last events_take() */
} Fixture;

/* --- the fake tree: the tree_*() chores and events_take() are faketree.h's --- */

static void tree_add_irq(Fixture *f, unsigned irq, const char *list) {
        char rel[64];
        snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irq);
        tree_write(f, rel, list);
}

static const char interrupts[] = "           CPU0       CPU1       CPU2       CPU3       \n"
                                 "  0:         45          0          0          0   IO-APIC   2-edge      timer\n"
                                 " 18:          7          0          0          0   IO-APIC  18-fasteoi   i8042, rtc0\n"
                                 " 24:          1          0          0          0  IO-APIC   5-edge      ACPI:Ged\n"
                                 "131:     123456          0          0          0  PCI-MSIX-0000:03:00.0   0-edge      eth0-TxRx-0\n"
                                 "132:          0     123456          0          0  PCI-MSIX-0000:03:00.0   1-edge      eth0-TxRx-1\n"
                                 "NMI:          0          0          0          0   Non-maskable interrupts\n";

/* A four-CPU host with nothing isolated by the kernel. */
static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        faketree_mkdtemp(f->root, sizeof(f->root), "test-setting");
        faketree_cpus(f->root, "0-3", "", "(null)");
        tree_write(f, "proc/irq/default_smp_affinity", "f\n");
        tree_write(f, "proc/interrupts", interrupts);
        tree_write(f, "proc/sys/net/core/somaxconn", "128\n");
        tree_write(f, "proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
        for (unsigned cpu = 0; cpu < 2; cpu++) {
                char rel[96];
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu);
                tree_write(f, rel, "powersave\n");
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%u/cpufreq/scaling_available_governors", cpu);
                tree_write(f, rel, "performance powersave\n");
        }
        tree_write_int32(f, "dev/cpu_dma_latency", 2000000000);
}

/* Opens the tree and builds the posture; call after the tree is complete. */
static bool fixture_start(Fixture *f, const char *config_text) {
        return faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events);
}

static void fixture_done(Fixture *f) {
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

static bool fd_is_open(int fd) {
        return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

/* --- IRQ affinity --- */

static void test_irq_corrected(void) {
        Fixture f;
        Setting *s = NULL, *ok = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_add_irq(&f, 25, "1\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fixture with CPUs 2-3 isolated"))
                { fixture_done(&f); return; }

        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK_STR(s->desired, "0-1", "an unpinned IRQ's desired list is housekeeping");
        CHECK(!setting_irq_is_exact(s), "an unpinned IRQ is not exact");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "first reconcile of IRQ 24");
        CHECK_STR(events_take(&f), "drift corrected", "IRQ on isolated CPUs: drift, then corrected");
        CHECK(s->state == SETTING_CORRECTED, "IRQ 24 is corrected");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/irq/24/smp_affinity_list")), "0-1",
                  "smp_affinity_list now holds the housekeeping list");
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1, "counters: one drift, one correction");

        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0) == 0, "second reconcile");
        CHECK_STR(events_take(&f), "", "no change: a second reconcile emits nothing");
        CHECK(setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced reconcile");
        CHECK_STR(events_take(&f), "", "no change: a forced reconcile emits nothing either");
        CHECK(f.rc.counters.corrections == 1, "still one correction");

        CHECK(setting_new_irq(f.posture, 25, NULL, &ok) == 0, "IRQ 25 setting");
        CHECK(setting_reconcile(&f.rc, ok, T0, 0) == 0, "reconcile IRQ 25");
        CHECK_STR(events_take(&f), "", "an unpinned IRQ on a subset of housekeeping is fine");
        CHECK(ok->state == SETTING_OK, "IRQ 25 is ok");
        CHECK_STR(tree_read(&f, "proc/irq/25/smp_affinity_list"), "1\n", "IRQ 25 is not rewritten");

        /* drift again later: logged again, corrected again */
        tree_add_irq(&f, 24, "3\n");
        CHECK(setting_reconcile(&f.rc, s, T0 + 3 * USEC_PER_SEC, 0) == 0, "reconcile after new drift");
        CHECK_STR(events_take(&f), "drift corrected", "a new drift is reported and corrected");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-1", "corrected again");

        setting_free(s);
        setting_free(ok);
        fixture_done(&f);
}

/* x86 without interrupt remapping moves the effective CPU only at the IRQ's next
 * interrupt: a quiet IRQ keeps an isolated effective CPU after a good write. That is not
 * drift (the VM e2e run saw such IRQs marked failed after every correction). */
static void test_irq_effective_lags(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_write(&f, "proc/irq/24/effective_affinity_list", "3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "fixture with CPUs 2-3 isolated"))
                { fixture_done(&f); return; }
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "reconcile IRQ 24");
        CHECK_STR(events_take(&f), "drift corrected", "affinity 0-3: drift, corrected although effective is still 3");
        CHECK(s->state == SETTING_CORRECTED, "IRQ 24 is corrected, not failed");
        CHECK_STR(s->observed, "0-1", "observed is the affinity, as the kernel lists it");
        {
                _cleanup_cpuset_ CPUSet effective = CPUSET_EMPTY;
                char buf[128];
                CHECK(setting_irq_effective(s, f.host, &effective) == 0 && cpuset_count(&effective) == 1 &&
                              cpuset_contains(&effective, 3),
                      "the effective CPUs are kept as a CPU set: {3}");
                CHECK_STR(setting_describe_observed(s, &f.rc, buf, sizeof(buf)), "0-1 (effective 3)",
                          "the lagging effective CPU stays visible where people look");
        }
        CHECK(!s->rewritten, "a first correction is not a rewrite of a held value");
        CHECK(setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced look");
        CHECK_STR(events_take(&f), "", "and is not drift on the next look");

        tree_add_irq(&f, 24, "2\n");
        CHECK(setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, 0) == 0, "someone moves it");
        CHECK_STR(events_take(&f), "drift corrected", "a rewrite of the held value: drift, corrected");
        CHECK(s->rewritten, "and flagged as a rewrite (the IRQ-writer report counts these)");
        setting_free(s);
        fixture_done(&f);
}

static void test_irq_observe(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "observe fixture"))
                { fixture_done(&f); return; }
        f.rc.observe = true;
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        setting_reconcile(&f.rc, s, T0, 0);
        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "drift", "observe: drift reported once over three passes");
        CHECK(s->state == SETTING_DRIFTED, "observe: IRQ stays drifted");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "observe: nothing written");
        CHECK(f.rc.counters.corrections == 0, "observe: no corrections counted");
        setting_free(s);
        fixture_done(&f);
}

static void test_irq_unmovable(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "unmovable fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_irq(f.posture, 24, "ACPI:Ged", &s) == 0, "IRQ 24 setting");
        CHECK(setting_reconcile(&f.rc, s, T0, 0) == 0, "reconcile a read-only IRQ");
        CHECK(s->state == SETTING_UNMOVABLE, "a 0444 smp_affinity_list makes the IRQ unmovable");
        CHECK(s->reason && *s->reason, "unmovable carries a reason");
        {
                const char *ev = events_take(&f);
                const char *first = strstr(ev, "unmovable");
                if (!CHECK(first && !strstr(first + 1, "unmovable"), "exactly one unmovable event"))
                        printf("#   events: '%s'\n", ev);
        }
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "a read-only IRQ is not written");

        CHECK(setting_reconcile(&f.rc, s, T0 + 20 * USEC_PER_SEC, 0) == 0, "reconcile it again");
        CHECK_STR(events_take(&f), "", "reconciling an unmovable IRQ again reports nothing");
        /* someone (root) moves it: in place, keeping the mode, and without needing root here */
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0644);
        tree_write(&f, "proc/irq/24/smp_affinity_list", "1-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        CHECK(setting_reconcile(&f.rc, s, T0 + 120 * USEC_PER_SEC, 0) == 0, "reconcile after it moved elsewhere");
        CHECK_STR(events_take(&f), "", "still nothing reported");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "1-3\n", "still not written");
        CHECK(s->state == SETTING_UNMOVABLE, "still unmovable");

        CHECK(setting_reconcile(&f.rc, s, T0 + 200 * USEC_PER_SEC, RECONCILE_FORCE) == 0, "forced reconcile (reload)");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "1-3\n", "a forced pass does not write it either");
        CHECK(s->state == SETTING_UNMOVABLE, "unmovable after a forced pass");
        {
                const char *ev = events_take(&f);
                if (!CHECK(streq(ev, ""), "a forced pass does not report the unmovable IRQ again (reported once)"))
                        printf("#   events: '%s'\n", ev);
        }
        setting_free(s);
        fixture_done(&f);
}

/* Restore puts back only what lowlatd changed and what still differs: an IRQ the kernel
 * refused at the first write has an original on file but was never changed (the VM e2e
 * run: restore failed with EPERM on the timer, the cascade and managed queues). */
static void test_restore_only_what_changed(void) {
        _cleanup_free_ char *dir = NULL;
        Setting *ro = NULL, *rw = NULL, *sys = NULL;
        Originals *o = NULL;
        Fixture f;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        tree_add_irq(&f, 25, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "restore fixture"))
                { fixture_done(&f); return; }
        dir = strdup_printf("%s/run", f.root);
        CHECK(dir && originals_open(dir, f.root, &o) == 0, "originals open");
        f.rc.originals = o;
        CHECK(setting_new_irq(f.posture, 24, "timer", &ro) == 0 && setting_new_irq(f.posture, 25, "eth0", &rw) == 0 &&
              setting_new_sysctl("net.core.somaxconn", "4096", &sys) == 0, "settings");
        if (!o || !ro || !rw || !sys)
                goto out;
        setting_reconcile(&f.rc, ro, T0, 0);
        setting_reconcile(&f.rc, rw, T0, 0);
        setting_reconcile(&f.rc, sys, T0, 0);
        CHECK(ro->state == SETTING_UNMOVABLE && rw->state == SETTING_CORRECTED && sys->state == SETTING_CORRECTED,
              "IRQ 24 unmovable, IRQ 25 and the sysctl corrected");
        CHECK(o->n == 3, "three originals on file (the unmovable IRQ's too, written before the write)");
        /* someone puts the sysctl back to what it was before lowlatd */
        tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");

        CHECK(setting_restore(&f.rc, ro) == 0, "the unmovable IRQ: nothing to restore, and no error");
        CHECK_STR(tree_read(&f, "proc/irq/24/smp_affinity_list"), "0-3\n", "and it is not written");
        CHECK(setting_restore(&f.rc, rw) == 1, "IRQ 25 is restored");
        CHECK_STR(tree_read(&f, "proc/irq/25/smp_affinity_list"), "0-3", "to 0-3");
        CHECK(setting_restore(&f.rc, sys) == 0, "the sysctl already holds its original: nothing to write");
        CHECK(o->n == 0, "and every original is forgotten");
out:
        setting_free(ro);
        setting_free(rw);
        setting_free(sys);
        originals_free(o);
        fixture_done(&f);
}

static void test_irq_pin_exact(void) {
        Fixture f;
        Setting *sub = NULL, *super = NULL, *same = NULL, *free_irq = NULL;

        fixture_init(&f);
        tree_add_irq(&f, 131, "0\n");
        tree_add_irq(&f, 132, "0-2\n");
        tree_add_irq(&f, 133, "0-1\n");
        tree_add_irq(&f, 0, "0-3\n");
        if (!CHECK(fixture_start(&f, "[irq]\npin = eth0-TxRx-* 0-1\n"), "pin fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_irq(f.posture, 131, "eth0-TxRx-0", &sub) == 0, "IRQ 131 setting");
        CHECK(setting_irq_is_exact(sub), "a pinned IRQ is exact");
        CHECK_STR(sub->desired, "0-1", "a pinned IRQ's desired list is its pin");
        setting_reconcile(&f.rc, sub, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a pinned IRQ on a subset of its pin is drifted");
        CHECK_STR(tree_read(&f, "proc/irq/131/smp_affinity_list"), "0-1", "the pin is written");

        CHECK(setting_new_irq(f.posture, 132, "eth0-TxRx-1", &super) == 0, "IRQ 132 setting");
        setting_reconcile(&f.rc, super, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a pinned IRQ on a superset of its pin is drifted");

        CHECK(setting_new_irq(f.posture, 133, "eth0-TxRx-2", &same) == 0, "IRQ 133 setting");
        setting_reconcile(&f.rc, same, T0, 0);
        CHECK_STR(events_take(&f), "", "a pinned IRQ on exactly its pin is ok");

        CHECK(setting_new_irq(f.posture, 0, "timer", &free_irq) == 0, "IRQ 0 setting");
        setting_reconcile(&f.rc, free_irq, T0, 0);
        CHECK_STR(events_take(&f), "", "with nothing isolated an unpinned IRQ is ok anywhere");
        CHECK_STR(tree_read(&f, "proc/irq/0/smp_affinity_list"), "0-3\n", "and is left alone");

        setting_free(sub);
        setting_free(super);
        setting_free(same);
        setting_free(free_irq);
        fixture_done(&f);
}

static void test_default_affinity(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "default affinity fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_default_affinity(f.posture, &s) == 0, "default affinity setting");
        CHECK_STR(s->desired, "3", "desired default affinity is the housekeeping mask");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "default_smp_affinity f is corrected");
        CHECK_STR(tree_read(&f, "proc/irq/default_smp_affinity"), "3", "default_smp_affinity written as a mask");
        tree_write(&f, "proc/irq/default_smp_affinity", "00000003\n");
        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "a zero-padded mask with the same CPUs is ok");
        setting_free(s);
        fixture_done(&f);
}

/* --- sysctl, governor, cpu_dma_latency --- */

static void test_sysctl(void) {
        Fixture f;
        Setting *s = NULL, *missing = NULL, *rmem = NULL, *rmem2 = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "sysctl fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");
        CHECK_STR(setting_file_path(s), "proc/sys/net/core/somaxconn", "dots become slashes in the path");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "somaxconn 128 → 4096");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/sys/net/core/somaxconn")), "4096", "somaxconn written");

        CHECK(setting_new_sysctl("net.core.no_such_thing", "1", &missing) == 0, "missing sysctl setting");
        setting_reconcile(&f.rc, missing, T0, 0);
        setting_reconcile(&f.rc, missing, T0 + USEC_PER_SEC, 0);
        setting_reconcile(&f.rc, missing, T0 + 2 * USEC_PER_SEC, RECONCILE_FORCE);
        CHECK_STR(events_take(&f), "unsupported", "a missing sysctl is unsupported, reported once");
        CHECK(missing->state == SETTING_UNSUPPORTED, "missing sysctl state");
        CHECK(missing->reason && strstr(missing->reason, "sysctl"), "missing sysctl reason");
        CHECK(tree_size(&f, "proc/sys/net/core/no_such_thing") < 0, "a missing sysctl is not created");

        CHECK(setting_new_sysctl("net.ipv4.tcp_rmem", "4096 131072  6291456", &rmem) == 0, "tcp_rmem setting");
        setting_reconcile(&f.rc, rmem, T0, 0);
        CHECK_STR(events_take(&f), "", "tcp_rmem with tabs equals the value with spaces");
        CHECK(rmem->state == SETTING_OK, "tcp_rmem ok");
        CHECK_STR(tree_read(&f, "proc/sys/net/ipv4/tcp_rmem"), "4096\t131072\t6291456\n", "tcp_rmem not rewritten");

        tree_write(&f, "proc/sys/net/ipv4/tcp_rmem", "4096 131072 6291456\n");
        CHECK(setting_new_sysctl("net.ipv4.tcp_rmem", "4096\t131072\t6291456", &rmem2) == 0, "tcp_rmem with tabs");
        setting_reconcile(&f.rc, rmem2, T0, 0);
        CHECK_STR(events_take(&f), "", "a desired value with tabs equals the file with spaces");

        CHECK(setting_new_sysctl("net..core", "1", &missing) == -EINVAL, "a bad sysctl key is refused");
        setting_free(s);
        setting_free(missing);
        setting_free(rmem);
        setting_free(rmem2);
        fixture_done(&f);
}

static void test_governor(void) {
        Fixture f;
        Setting *good = NULL, *bad = NULL, *nocpufreq = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "governor fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_governor(0, "performance", &good) == 0, "cpu0 governor setting");
        CHECK_STR(good->object, "cpu0", "governor object is cpu0");
        setting_reconcile(&f.rc, good, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "an available governor is set");
        CHECK_STR(strstrip((char *) tree_read(&f, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
                  "performance", "scaling_governor written");

        /* Leading white space in what the kernel prints is not part of the value. */
        tree_write(&f, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "  performance\n");
        setting_reconcile(&f.rc, good, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "leading white space in the file is not drift");
        CHECK_STR(good->observed, "performance", "observed value is trimmed at the start");

        CHECK(setting_new_governor(1, "schedutil", &bad) == 0, "cpu1 governor setting");
        setting_reconcile(&f.rc, bad, T0, 0);
        setting_reconcile(&f.rc, bad, T0 + USEC_PER_SEC, 0);
        {
                const char *ev = events_take(&f);
                const char *first = strstr(ev, "unsupported");
                if (!CHECK(first && !strstr(first + 1, "unsupported") && !strstr(ev, "correction-failed"),
                           "an unavailable governor is unsupported once, not a failure"))
                        printf("#   events: '%s'\n", ev);
        }
        CHECK(bad->state == SETTING_UNSUPPORTED, "unavailable governor state");
        if (!CHECK(bad->reason && strstr(bad->reason, "performance") && strstr(bad->reason, "powersave"),
                   "the reason names the available governors"))
                printf("#   reason: %s\n", bad->reason ?: "(null)");
        CHECK_STR(tree_read(&f, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), "powersave\n",
                  "an unavailable governor is not written");

        CHECK(setting_new_governor(2, "performance", &nocpufreq) == 0, "cpu2 governor setting");
        setting_reconcile(&f.rc, nocpufreq, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "a CPU without cpufreq is unsupported");
        setting_free(good);
        setting_free(bad);
        setting_free(nocpufreq);
        fixture_done(&f);
}

static void test_cpu_dma_latency(void) {
        Fixture f;
        Setting *s = NULL, *lax = NULL;
        int hold;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "latency fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_cpu_dma_latency(10, &s) == 0, "latency setting");
        CHECK_STR(s->desired, "10", "desired latency as decimal");
        setting_reconcile(&f.rc, s, T0, 0);
        CHECK_STR(events_take(&f), "drift corrected", "latency 2000000000 → 10");
        CHECK(tree_size(&f, "dev/cpu_dma_latency") == (off_t) sizeof(int32_t), "the file holds 4 bytes");
        CHECK(tree_read_int32(&f, "dev/cpu_dma_latency") == 10, "the file holds a native int32 10");
        CHECK(fd_is_open(setting_dma_hold_fd(s)), "hold_fd is kept open");
        CHECK_STR(s->observed, "10", "observed latency is 10");
        hold = setting_dma_hold_fd(s);

        setting_reconcile(&f.rc, s, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "no change: nothing reported");
        CHECK(setting_dma_hold_fd(s) == hold && fd_is_open(hold), "the same hold_fd stays open");

        tree_write_int32(&f, "dev/cpu_dma_latency", 100);
        setting_reconcile(&f.rc, s, T0 + 2 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "a laxer value is drift, corrected");
        CHECK(tree_read_int32(&f, "dev/cpu_dma_latency") == 10, "written back through the hold");
        CHECK(setting_dma_hold_fd(s) == hold, "through the same hold_fd");

        tree_write_int32(&f, "dev/cpu_dma_latency", 5);
        CHECK(setting_new_cpu_dma_latency(20, &lax) == 0, "second latency setting");
        setting_reconcile(&f.rc, lax, T0, 0);
        CHECK_STR(events_take(&f), "", "a stricter (lower) observed latency counts as ok");
        CHECK(lax->state == SETTING_OK, "stricter latency state is ok");
        /* SPEC: the request is "held open on /dev/cpu_dma_latency"; without a hold of its own,
         * lowlatd's constraint vanishes when the stricter holder closes its fd. */
        CHECK(fd_is_open(setting_dma_hold_fd(lax)), "enforce mode holds its own request even when a stricter one exists");

        setting_free(s);
        setting_free(lax);
        fixture_done(&f);
}

/* --- fights --- */

static void test_fight(void) {
        Fixture f;
        Setting *s = NULL;
        const char *path = "proc/sys/net/core/somaxconn";
        uint64_t t = T0;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "fight fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");

        for (unsigned i = 0; i < FIGHT_CORRECTIONS; i++) {
                char what[80];
                tree_write(&f, path, "128\n");
                t = T0 + i * USEC_PER_SEC;
                setting_reconcile(&f.rc, s, t, 0);
                snprintf(what, sizeof(what), "correction %u of %u within the window", i + 1, FIGHT_CORRECTIONS);
                if (i + 1 < FIGHT_CORRECTIONS)
                        CHECK_STR(events_take(&f), "drift corrected", what);
                else {
                        /* the order of "fight" and "corrected" in one pass is not specified */
                        const char *ev = events_take(&f);
                        if (!CHECK(streq(ev, "drift corrected fight") || streq(ev, "drift fight corrected"),
                                   "the fifth correction within the window starts one fight"))
                                printf("#   events: '%s'\n", ev);
                }
        }
        CHECK(s->fighting, "the setting is in a fight");
        uint64_t last_correction = t;

        /* drift during the back-off: reported, not corrected */
        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, last_correction + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift", "in a fight, drift is reported but the correction deferred");
        CHECK_STR(tree_read(&f, path), "128\n", "not written during the back-off");
        setting_reconcile(&f.rc, s, last_correction + FIGHT_BACKOFF_USEC - 1, 0);
        CHECK_STR(events_take(&f), "", "still deferred just before the back-off ends");
        CHECK_STR(tree_read(&f, path), "128\n", "still not written");
        CHECK(s->state == SETTING_DRIFTED, "drifted while deferred");

        t = last_correction + FIGHT_BACKOFF_USEC;
        setting_reconcile(&f.rc, s, t, 0);
        CHECK_STR(events_take(&f), "corrected", "corrected once the back-off is over, no second fight event");
        CHECK_STR(strstrip((char *) tree_read(&f, path)), "4096", "written after the back-off");
        last_correction = t;

        /* the back-off applies to each correction while the fight lasts */
        tree_write(&f, path, "256\n");
        setting_reconcile(&f.rc, s, last_correction + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift", "next drift in the fight is deferred again");
        setting_reconcile(&f.rc, s, last_correction + FIGHT_BACKOFF_USEC, 0);
        CHECK_STR(events_take(&f), "corrected", "and corrected after another back-off");
        last_correction += FIGHT_BACKOFF_USEC;

        /* quiet: the last drift was seen at last_correction (the deferred one was still drifted) */
        setting_tick(&f.rc, s, last_correction + FIGHT_QUIET_USEC - USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "fight not over before 60 s without drift");
        setting_tick(&f.rc, s, last_correction + FIGHT_QUIET_USEC, 0);
        CHECK_STR(events_take(&f), "fight-ended", "fight over after 60 s without drift");
        CHECK(!s->fighting, "no longer fighting");
        setting_tick(&f.rc, s, last_correction + 2 * FIGHT_QUIET_USEC, 0);
        CHECK_STR(events_take(&f), "", "fight-ended reported once");

        /* after the fight, corrections are immediate again */
        tree_write(&f, path, "128\n");
        t = last_correction + 2 * FIGHT_QUIET_USEC;
        setting_reconcile(&f.rc, s, t, 0);
        CHECK_STR(events_take(&f), "drift corrected", "after the fight a drift is corrected at once");
        setting_free(s);
        fixture_done(&f);
}

/* The first application of the posture is not drift: an alert on drift would fire at every
 * start. What a pass under RECONCILE_APPLYING sets is counted as applied; drift and
 * corrections count what happens to the posture once it is in place; the pass after a
 * restore counts no drift; failures count at any time; a fight counts once. */
static void test_counters(void) {
        Fixture f;
        Setting *s = NULL, *irq = NULL;
        const char *path = "proc/sys/net/core/somaxconn";
        uint64_t t = T0;

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n"), "counters fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0 && setting_new_irq(f.posture, 24, NULL, &irq) == 0,
              "a sysctl and an IRQ");
        if (!s || !irq)
                goto out;

        setting_reconcile(&f.rc, s, t, RECONCILE_FORCE | RECONCILE_APPLYING);
        setting_reconcile(&f.rc, irq, t, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK_STR(events_take(&f), "drift corrected drift corrected", "the first pass sets both");
        CHECK(f.rc.counters.applied == 2 && f.rc.counters.drift_events == 0 && f.rc.counters.corrections == 0,
              "first pass: 2 applied, no drift, no correction");

        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_HINTED);
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1 && f.rc.counters.applied == 2,
              "a rewrite once the posture is in place: one drift, one correction");

        /* a reload finds it rewritten again: put in place by the reload's pass, not drift */
        tree_write(&f, path, "256\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK(f.rc.counters.drift_events == 1 && f.rc.counters.corrections == 1 && f.rc.counters.applied == 3,
              "a reload's pass counts as applied");

        /* observe mode after a restore: the quiet pass finds every setting off target */
        f.rc.observe = true;
        tree_write(&f, path, "128\n");
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_QUIET);
        CHECK(s->state == SETTING_DRIFTED && f.rc.counters.drift_events == 1, "the pass after a restore counts no drift");
        f.rc.observe = false;
        setting_reconcile(&f.rc, s, t += USEC_PER_SEC, RECONCILE_FORCE | RECONCILE_APPLYING);
        CHECK(s->state == SETTING_CORRECTED && f.rc.counters.applied == 4 && f.rc.counters.corrections == 1,
              "enforcing again (a good reload) applies it");

        /* The rewrite above is the first of FIGHT_CORRECTIONS corrections in the window:
         * the fourth one here starts the fight, the fifth rewrite waits for the back-off. */
        uint64_t d0 = f.rc.counters.drift_events, c0 = f.rc.counters.corrections;
        for (unsigned i = 0; i < FIGHT_CORRECTIONS; i++) {
                tree_write(&f, path, i % 2 ? "256\n" : "128\n");
                setting_reconcile(&f.rc, s, t += USEC_PER_SEC, 0);
        }
        (void) events_take(&f);
        CHECK(s->fighting && f.rc.counters.fights == 1, "five corrections within the window: one fight counted");
        CHECK(f.rc.counters.drift_events == d0 + FIGHT_CORRECTIONS && f.rc.counters.corrections == c0 + FIGHT_CORRECTIONS - 1,
              "every rewrite in the fight is drift; the one in the back-off waits for its correction");
out:
        setting_free(s);
        setting_free(irq);
        fixture_done(&f);
}

static void test_no_fight_when_slow(void) {
        Fixture f;
        Setting *s = NULL;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "slow fixture"))
                { fixture_done(&f); return; }
        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &s) == 0, "somaxconn setting");
        for (unsigned i = 0; i < 2 * FIGHT_CORRECTIONS; i++) {
                tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");
                setting_reconcile(&f.rc, s, T0 + i * 20 * USEC_PER_SEC, 0);
        }
        CHECK(!strstr(events_take(&f), "fight") && !s->fighting, "one correction every 20 s is not a fight");
        setting_free(s);
        fixture_done(&f);
}

/* --- the table and reloads --- */

typedef struct HookCounts {
        unsigned added, removed;
} HookCounts;

static void hook_added(void *userdata, Setting *s) {
        ((HookCounts *) userdata)->added++;
}

static void hook_removed(void *userdata, Setting *s) {
        ((HookCounts *) userdata)->removed++;
}

static void test_table_scan(void) {
        Fixture f;
        HookCounts counts = {};
        SettingTableHooks hooks = { hook_added, hook_removed, &counts };
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        tree_add_irq(&f, 0, "0-3\n");
        tree_add_irq(&f, 24, "0-1\n");
        tree_add_irq(&f, 131, "0-3\n");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n[irq]\npin = eth0-TxRx-* 0\n"
                                     "[sysctl]\nnet.core.somaxconn = 4096\n"),
                   "table fixture"))
                { fixture_done(&f); return; }

        table_init(&t, &hooks);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && table_find(&t, SETTING_IRQ_DEFAULT_AFFINITY, "default_smp_affinity") &&
                      table_find(&t, SETTING_SYSCTL, "net.core.somaxconn"),
              "plan: default affinity and one sysctl");
        CHECK(irq_table_scan(&t, f.host, f.posture) == 3, "scan finds three IRQs");
        CHECK(t.n == 5 && counts.added == 5, "five settings");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "131");
        CHECK(s && setting_irq_is_exact(s) && streq_ptr(s->label, "eth0-TxRx-0") && streq(s->desired, "0"),
              "IRQ 131 is named from /proc/interrupts and pinned");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "24");
        CHECK(s && !setting_irq_is_exact(s) && streq_ptr(s->label, "ACPI:Ged") && streq(s->desired, "0-1"), "IRQ 24 unpinned");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "131") && table_find(&t, SETTING_IRQ_AFFINITY, "24") &&
                      table_find(&t, SETTING_IRQ_AFFINITY, "0") && !table_find(&t, SETTING_SYSCTL, "131"),
              "IRQs indexed by kind and number");
        CHECK(t.n == 5 && t.settings[0]->kind != SETTING_IRQ_AFFINITY && t.settings[1]->kind != SETTING_IRQ_AFFINITY &&
                      streq(t.settings[2]->object, "0") && streq(t.settings[3]->object, "24") &&
                      streq(t.settings[4]->object, "131"),
              "static settings first, then IRQs in numeric order");

        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/131/smp_affinity_list"), "0", "the pinned IRQ is moved by a full pass");
        events_take(&f);

        tree_add_irq(&f, 200, "0-3\n");
        tree_remove(&f, "proc/irq/24");
        CHECK(irq_table_scan(&t, f.host, f.posture) == 3, "second scan finds three IRQs");
        CHECK(t.n == 5, "still five settings");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "200") != NULL, "the new IRQ 200 is added");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "24") == NULL, "the removed IRQ 24 is dropped");
        CHECK(table_find(&t, SETTING_IRQ_AFFINITY, "24") == NULL, "and unindexed");
        CHECK(table_find(&t, SETTING_SYSCTL, "net.core.somaxconn") != NULL, "static settings survive a scan");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "131");
        CHECK(s && s->state == SETTING_CORRECTED, "a kept IRQ keeps its setting and state");
        CHECK(counts.added == 6 && counts.removed == 1, "hooks saw one addition and one removal");
        CHECK(streq(t.settings[t.n - 1]->object, "200"), "the new IRQ sorts last");

        table_done(&t);
        CHECK(counts.removed == 6, "table_done() removes every setting through the hook");
        fixture_done(&f);
}

static void test_table_irq_named_later(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        /* IRQ 140 exists (its descriptor is allocated) but no driver has requested it yet:
         * /proc/interrupts has no line for it. */
        tree_add_irq(&f, 140, "0-3\n");
        if (!CHECK(fixture_start(&f, "[irq]\npin = eth0-TxRx-* 1\n"), "named-later fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "scan finds IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        CHECK(s && !setting_irq_is_exact(s), "IRQ 140 without an action has no pin");

        /* the driver requests it as eth0-TxRx-0 */
        {
                _cleanup_free_ char *text = strdup_printf("%s140:          0          0          0          0  "
                                                          "PCI-MSIX-0000:03:00.0   8-edge      eth0-TxRx-0\n",
                                                          interrupts);
                tree_write(&f, "proc/interrupts", text);
        }
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "rescan finds IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        if (!CHECK(s && setting_irq_is_exact(s) && streq(s->desired, "1"), "an IRQ that gains a matching action name gets its pin"))
                printf("#   label '%s', desired '%s'\n", s && s->label ? s->label : "(null)", s ? s->desired : "?");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/140/smp_affinity_list"), "1", "and is moved to it");
        events_take(&f);

        /* the driver frees it: back to the unpinned rule */
        tree_write(&f, "proc/interrupts", interrupts);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1, "scan after the driver freed IRQ 140");
        s = table_find(&t, SETTING_IRQ_AFFINITY, "140");
        CHECK(s && !setting_irq_is_exact(s) && !s->label && streq(s->desired, "0-3"), "an IRQ that loses its name loses its pin");
        table_done(&t);
        fixture_done(&f);
}

static void test_table_without_interrupts_file(void) {
        Fixture f;
        SettingTable t;

        fixture_init(&f);
        tree_add_irq(&f, 7, "0-3\n");
        tree_remove(&f, "proc/interrupts");
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 3\n"), "fixture without /proc/interrupts"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(irq_table_scan(&t, f.host, f.posture) == 1 && t.n == 1, "without pins, /proc/interrupts is not needed");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(tree_read(&f, "proc/irq/7/smp_affinity_list"), "0-2", "the IRQ is still kept off isolated CPUs");
        table_done(&t);
        fixture_done(&f);
}

/* Replanning an interface (a rename, a link coming up) keeps what was learnt about each of
 * its settings, through setting_inherit(): an unsupported one is not reported again, a
 * fight and a failure's retry time go on. */
static void test_nic_replan_keeps_history(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[nic \"eth*\"]\nrx_usecs = 0\n[nic \"eth1\"]\nrx_frames = 1\n"),
                   "NIC fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        /* No ethtool client: the kernel "has no ethtool netlink", so the setting is
         * unsupported, which is what a replan must remember. */
        CHECK(nic_table_plan(&t, NULL, f.host, f.posture, 7, "eth0") == 1 && t.n == 1, "eth0 is planned: one setting");
        table_reconcile_all(&t, &f.rc, T0, 0);
        CHECK_STR(events_take(&f), "unsupported", "without ethtool netlink: unsupported, reported");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth0/rx_usecs");
        if (!CHECK(s && s->state == SETTING_UNSUPPORTED, "eth0/rx_usecs is unsupported"))
                goto out;
        s->fighting = true;
        s->last_drift_usec = T0;
        s->last_correction_usec = T0 + 1;
        s->retry_after_usec = T0 + 42;

        CHECK(nic_table_plan(&t, NULL, f.host, f.posture, 7, "eth1") == 1 && t.n == 2, "renamed to eth1: two settings");
        CHECK(!table_find(&t, SETTING_NIC_COALESCE, "eth0/rx_usecs"), "the old name is gone");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth1/rx_usecs");
        CHECK(s && s->state == SETTING_UNSUPPORTED && s->reason && strstr(s->reason, "ethtool netlink"),
              "the same key under the new name keeps its state and reason");
        CHECK(s && s->fighting && s->last_drift_usec == T0 && s->last_correction_usec == T0 + 1 &&
                      s->retry_after_usec == T0 + 42,
              "and its history: the fight, the last drift and correction, the retry time");
        s = table_find(&t, SETTING_NIC_COALESCE, "eth1/rx_frames");
        CHECK(s && s->state == SETTING_PENDING, "a key only the new name has starts afresh");
        table_reconcile_all(&t, &f.rc, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "unsupported", "only the new key is reported: the kept one is not reported again");

        CHECK(nic_table_drop(&t, f.posture, 7) == 0 && t.n == 0 && !nic_table_has(&t, 7), "dropping eth1 drops both");
out:
        table_done(&t);
        fixture_done(&f);
}

static void test_inherit(void) {
        Fixture f;
        Setting *old = NULL, *same = NULL, *changed = NULL, *sys_old = NULL, *sys_new = NULL;
        int hold;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, ""), "inherit fixture"))
                { fixture_done(&f); return; }

        CHECK(setting_new_cpu_dma_latency(10, &old) == 0, "latency setting");
        setting_reconcile(&f.rc, old, T0, 0);
        events_take(&f);
        hold = setting_dma_hold_fd(old);
        CHECK(fd_is_open(hold), "the old setting holds the latency request");

        CHECK(setting_new_cpu_dma_latency(10, &same) == 0, "same latency after a reload");
        CHECK(setting_same(same, old), "same kind, object and value");
        setting_inherit(same, old);
        CHECK(setting_dma_hold_fd(same) == hold && setting_dma_hold_fd(old) == -1, "unchanged value: the hold_fd moves to the new setting");
        CHECK(fd_is_open(setting_dma_hold_fd(same)), "and stays open");
        CHECK(same->state == SETTING_CORRECTED && streq_ptr(same->observed, "10"), "state and observed are inherited");
        setting_free(old);
        old = NULL;
        CHECK(fd_is_open(hold), "freeing the old setting does not close the inherited hold");
        setting_reconcile(&f.rc, same, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "the inherited setting reports nothing new");

        CHECK(setting_new_cpu_dma_latency(50, &changed) == 0, "new latency value after a reload");
        CHECK(!setting_same(changed, same), "a new value is not the same setting");
        setting_inherit(changed, same);
        CHECK(setting_dma_hold_fd(changed) == hold, "a new latency is written into the same request, without a gap");
        CHECK(changed->state == SETTING_PENDING, "but its state starts afresh");
        tree_write_int32(&f, "dev/cpu_dma_latency", 10);
        setting_reconcile(&f.rc, changed, T0 + 2 * USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "", "10 is stricter than 50, so ok without a write");

        CHECK(setting_new_sysctl("net.core.somaxconn", "4096", &sys_old) == 0, "sysctl setting");
        setting_reconcile(&f.rc, sys_old, T0, 0);
        events_take(&f);
        CHECK(setting_new_sysctl("net.core.somaxconn", "1024", &sys_new) == 0, "sysctl with a new value");
        setting_inherit(sys_new, sys_old);
        CHECK(sys_new->state == SETTING_PENDING && !sys_new->observed, "a changed sysctl does not inherit its state");
        setting_reconcile(&f.rc, sys_new, T0 + USEC_PER_SEC, 0);
        CHECK_STR(events_take(&f), "drift corrected", "the new value is applied");
        CHECK_STR(strstrip((char *) tree_read(&f, "proc/sys/net/core/somaxconn")), "1024", "somaxconn is 1024");

        setting_free(same);
        setting_free(changed);
        setting_free(sys_old);
        setting_free(sys_new);
        fixture_done(&f);
}

/* The registry: every kind has a name that reads back, and the operations the state
 * machine cannot do without. One vocabulary for events too. */
static void test_registry(void) {
        for (SettingKind k = 0; k < _SETTING_KIND_MAX; k++) {
                const SettingVTable *vt = setting_vtables[k];
                const char *name = setting_kind_to_string(k);
                char what[96];

                snprintf(what, sizeof(what), "kind %d (%s): a name that reads back, read, write, a size", (int) k,
                         name ?: "?");
                CHECK(name && setting_kind_from_string(name) == k && vt && vt->read && vt->write &&
                              vt->object_size >= sizeof(Setting),
                      what);
                for (SettingKind j = 0; j < k; j++)
                        if (streq_ptr(setting_kind_to_string(j), name))
                                CHECK(false, "kind names are unique");
        }
        CHECK(setting_kind_to_string(_SETTING_KIND_MAX) == NULL && setting_kind_to_string(_SETTING_KIND_INVALID) == NULL,
              "no name outside the table");
        CHECK(setting_kind_from_string("irq") == _SETTING_KIND_INVALID && setting_kind_from_string(NULL) == _SETTING_KIND_INVALID,
              "an unknown name is -EINVAL");
        for (SettingState st = 0; st < _SETTING_STATE_MAX; st++)
                CHECK(setting_state_to_string(st) && setting_state_from_string(setting_state_to_string(st)) == st,
                      "every state's name reads back");
        for (EventId e = 0; e < _EVENT_ID_MAX; e++)
                CHECK(event_to_string(e) && event_from_string(event_to_string(e)) == e && event_info(e) &&
                              event_info(e)->message_id,
                      "every event has a name that reads back and a MESSAGE_ID");
        CHECK_STR(event_to_string(EVENT_UNMOVABLE), setting_state_to_string(SETTING_UNMOVABLE),
                  "the unmovable event and state have one name");
}

/* table_count() is kept in step with every state change, also after the table moved (a
 * reload builds the new table on the stack and moves it into the manager). */
static bool counts_match(const SettingTable *t) {
        size_t kept[_SETTING_STATE_MAX], counted[_SETTING_STATE_MAX] = {};

        table_count(t, kept);
        for (size_t i = 0; i < t->n; i++)
                counted[t->settings[i]->state]++;
        return memcmp(kept, counted, sizeof(kept)) == 0;
}

static void test_table_counts(void) {
        Fixture f;
        SettingTable t, moved;
        size_t counts[_SETTING_STATE_MAX];

        fixture_init(&f);
        tree_add_irq(&f, 24, "0-3\n");
        tree_add_irq(&f, 25, "0-1\n");
        tree_chmod(&f, "proc/irq/24/smp_affinity_list", 0444);
        if (!CHECK(fixture_start(&f, "[cpus]\nisolated = 2-3\n[sysctl]\nnet.core.somaxconn = 4096\n"), "counts fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && irq_table_scan(&t, f.host, f.posture) == 2, "planned");
        table_count(&t, counts);
        CHECK(counts[SETTING_PENDING] == t.n && counts_match(&t), "all pending at first");
        table_reconcile_all(&t, &f.rc, T0, 0);
        table_count(&t, counts);
        CHECK(counts_match(&t) && counts[SETTING_UNMOVABLE] == 1 && counts[SETTING_PENDING] == 0,
              "after a pass: one unmovable IRQ, nothing pending, counts match the states");
        table_move(&moved, &t);
        CHECK(t.n == 0 && moved.n > 0 && counts_match(&moved), "moved: the counts came along");
        tree_write(&f, "proc/sys/net/core/somaxconn", "128\n");
        f.rc.observe = true;
        table_reconcile_all(&moved, &f.rc, T0 + USEC_PER_SEC, 0);
        table_count(&moved, counts);
        CHECK(counts[SETTING_DRIFTED] == 1 && counts_match(&moved), "a state change after the move is counted there");
        table_remove(&moved, table_find(&moved, SETTING_SYSCTL, "net.core.somaxconn"));
        table_count(&moved, counts);
        CHECK(counts[SETTING_DRIFTED] == 0 && counts_match(&moved), "a removed setting leaves the counts");
        events_take(&f);
        table_done(&moved);
        table_done(&t);
        fixture_done(&f);
}

/* --- slice_cpus: what can be checked without PID 1 (test_slices.py talks to a fake one) --- */

#define SLICES_CONFIG "[cpus]\nisolated = 2-3\nslices = system.slice user.slice init.scope\n"

static void test_slices_plan(void) {
        Fixture f;
        SettingTable t;
        Setting *s;

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_SLICE_CPUS] == 3,
              "one slice_cpus setting per unit in [cpus] slices");
        s = slice_table_find(&t, "user.slice");
        CHECK(s && setting_is_slice(s) && streq_ptr(s->desired, "0-1"), "desired: the housekeeping CPUs");
        CHECK(!slice_table_find(&t, "machine.slice"), "nothing for a unit not listed");
        if (s) {
                char buf[128], path[128];
                CHECK(setting_describe(s, buf, sizeof(buf)) == 0 && streq(buf, "AllowedCPUs= of user.slice"),
                      "messages name it \"AllowedCPUs= of user.slice\"");
                CHECK(setting_watch_path(s, 0, path, sizeof(path)) == 1 &&
                              streq(path, "run/systemd/system.control/user.slice.d"),
                      "watch 0: the unit's runtime drop-in directory, which set-property --runtime writes");
                CHECK(setting_watch_path(s, 1, path, sizeof(path)) == 0,
                      "watch 1 (the cgroup's cpuset.cpus) waits until PID 1 named the cgroup");
        }
        table_done(&t);
        fixture_done(&f);

        fixture_init(&f);
        if (!CHECK(fixture_start(&f, "[cpus]\nslices = system.slice user.slice init.scope\n"), "no isolated CPU"))
                { fixture_done(&f); return; }
        table_init(&t, NULL);
        CHECK(table_plan(&t, f.host, f.posture) == 0 && t.kind_counts[SETTING_SLICE_CPUS] == 0,
              "nothing isolated: no unit is confined (it would only turn the cpuset controller on)");
        table_done(&t);
        fixture_done(&f);

        CHECK_STR(systemd_unit_interface("user.slice"), "org.freedesktop.systemd1.Slice", "a slice's interface");
        CHECK_STR(systemd_unit_interface("init.scope"), "org.freedesktop.systemd1.Scope", "a scope's interface");
        CHECK_STR(systemd_unit_interface("sshd.service"), "org.freedesktop.systemd1.Service", "a service's interface");
        CHECK(!systemd_unit_interface("sshd.socket") && !systemd_unit_interface(".slice"), "no cgroup interface");
}

/* Unsupported once, with the reason, for every way the host lacks what AllowedCPUs= needs;
 * and a system bus that is not there is a failure (PID 1 is, only unreachable). */
static void test_slices_unsupported(void) {
        static const struct {
                bool init;
                const char *controllers; /* NULL: no cgroup.controllers */
                const char *reason;
        } cases[] = {
                { false, "cpuset cpu io memory pids\n", "systemd is not PID 1 here (no " },
                { true, NULL, "no cgroup.controllers: cgroup v1 or hybrid" },
                { true, "cpu io memory pids\n", "has no cpuset controller" },
        };
        const char *old_bus = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        _cleanup_free_ char *saved_bus = old_bus ? strdup(old_bus) : NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
                Setting *s = NULL;
                char what[160];
                Fixture f;

                fixture_init(&f);
                if (cases[i].init)
                        tree_mkdir(&f, "run/systemd/system");
                if (cases[i].controllers)
                        tree_write(&f, "sys/fs/cgroup/cgroup.controllers", cases[i].controllers);
                if (!CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture"))
                        { fixture_done(&f); continue; }
                CHECK(systemd_client_new(f.host, &client) == 0, "a client");
                f.rc.systemd = client;
                CHECK(setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0, "user.slice setting");
                setting_reconcile(&f.rc, s, T0, 0);
                setting_reconcile(&f.rc, s, T0 + 20 * USEC_PER_SEC, 0);
                snprintf(what, sizeof(what), "case %zu: unsupported, reported once: '%s'", i, s->reason ?: "");
                CHECK(streq(events_take(&f), "unsupported") && s->state == SETTING_UNSUPPORTED, what);
                snprintf(what, sizeof(what), "case %zu: the reason says '%s'", i, cases[i].reason);
                CHECK(s->reason && strstr(s->reason, cases[i].reason), what);
                setting_free(s);
                fixture_done(&f);
        }

        {
                _cleanup_(systemd_client_freep) SystemdClient *client = NULL;
                Setting *s = NULL;
                Fixture f;

                fixture_init(&f);
                tree_mkdir(&f, "run/systemd/system");
                tree_write(&f, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n");
                if (CHECK(fixture_start(&f, SLICES_CONFIG), "slices fixture with PID 1 but no bus")) {
                        _cleanup_free_ char *nobus = strdup_printf("unix:path=%s/no-bus", f.root);
                        setenv("DBUS_SYSTEM_BUS_ADDRESS", nobus, 1);
                        CHECK(systemd_client_new(f.host, &client) == 0 &&
                                      setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0,
                              "client and setting");
                        f.rc.systemd = client;
                        setting_reconcile(&f.rc, s, T0, 0);
                        CHECK(streq(events_take(&f), "correction-failed") && s->state == SETTING_FAILED &&
                                      s->reason && strstr(s->reason, "cannot connect to the system bus"),
                              "no system bus: a failure that says so");
                        setting_free(s);
                        s = NULL;
                        f.rc.systemd = NULL;
                        CHECK(setting_new_slice_cpus("user.slice", &f.posture->housekeeping, &s) == 0, "setting");
                        setting_reconcile(&f.rc, s, T0, 0);
                        CHECK(streq(events_take(&f), "unsupported") && s->reason && strstr(s->reason, "no connection to PID 1"),
                              "no client at all (a caller that set none up): unsupported");
                        setting_free(s);
                }
                fixture_done(&f);
        }
        if (saved_bus)
                setenv("DBUS_SYSTEM_BUS_ADDRESS", saved_bus, 1);
        else
                unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
}

int main(void) {
        test_registry();
        test_irq_corrected();
        test_irq_effective_lags();
        test_irq_observe();
        test_irq_unmovable();
        test_restore_only_what_changed();
        test_irq_pin_exact();
        test_default_affinity();
        test_sysctl();
        test_governor();
        test_cpu_dma_latency();
        test_fight();
        test_counters();
        test_no_fight_when_slow();
        test_table_scan();
        test_table_irq_named_later();
        test_table_without_interrupts_file();
        test_inherit();
        test_nic_replan_keeps_history();
        test_table_counts();
        test_slices_plan();
        test_slices_unsupported();
        return tap_finish();
}
