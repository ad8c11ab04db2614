/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the settings' unit tests share (one test file per lib/setting*.c and lib/setting/table.c):
 * a four-CPU fake tree with IRQs, sysctls, governors and /dev/cpu_dma_latency, and the
 * SettingContext built on it. A header of static functions, as tap.h counts checks per test
 * binary. */
#pragma once

#include <fcntl.h>

#include "faketree.h"
#include "basic/macro.h"
#include "setting/setting.h"
#include "tap.h"
#include "basic/util.h"

#define T0 (1000 * USEC_PER_SEC) /* a "now" far from zero, as CLOCK_MONOTONIC is */

typedef struct Fixture {
        char root[32];
        Host *host;
        Posture *posture;
        SettingContext rc;
        char events[FAKETREE_EVENTS_SIZE]; /* "drift corrected ..." since the last events_take() */
} Fixture;

/* The fake tree: the tree_*() chores and events_take() are faketree.h's. */

_unused_ static void tree_add_irq(Fixture *f, unsigned irq, const char *list) {
        char rel[64];
        snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irq);
        tree_write(f, rel, list);
}

_unused_ static const char interrupts[] = "           CPU0       CPU1       CPU2       CPU3       \n"
                                          "  0:         45          0          0          0   IO-APIC   2-edge      timer\n"
                                          " 18:          7          0          0          0   IO-APIC  18-fasteoi   i8042, rtc0\n"
                                          " 24:          1          0          0          0  IO-APIC   5-edge      ACPI:Ged\n"
                                          "131:     123456          0          0          0  PCI-MSIX-0000:03:00.0   0-edge      eth0-TxRx-0\n"
                                          "132:          0     123456          0          0  PCI-MSIX-0000:03:00.0   1-edge      eth0-TxRx-1\n"
                                          "NMI:          0          0          0          0   Non-maskable interrupts\n";

/* A four-CPU host with nothing isolated by the kernel. */
_unused_ static void fixture_init(Fixture *f) {
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
_unused_ static bool fixture_start(Fixture *f, const char *config_text) {
        return faketree_reconciler(f->root, config_text, &f->host, &f->posture, &f->rc, f->events);
}

_unused_ static void fixture_done(Fixture *f) {
        faketree_reconciler_done(f->root, &f->rc, f->posture, f->host);
}

_unused_ static bool fd_is_open(int fd) {
        return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}
