/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of the kinds of setting, apart from the state machine (setting.h) so that
 * what only names kinds (the originals file, the metrics) needs nothing else.
 *
 * A new kind is one file and one line here: lib/setting/NAME.c defines
 * `const SettingVTable NAME_vtable` (setting.h says what a kind provides: read and write,
 * and what the state machine asks of the rest), and X(NAME_IN_CAPS, NAME) below gives it
 * its enum value and its name. Its configuration is rows of lib/config/keys.c (a new
 * key: one row, a parser of values.c or of its section's file) and, where the kind is
 * planned from the posture, the section's resolve; nothing else names the kind. The
 * registry test (tests/unit/test-setting.c) fails for a kind without a name, read or
 * write, and tests/unit/test-lowlatctl-metrics.c for one without its metrics series.
 * Every file a new kind touches: NAME.c and NAME.h here, the line below, its keys.c rows
 * (.kinds names it), its Config field (config/config.h), lib/meson.build, a unit test
 * and its line in tests/unit/meson.build, man/lowlatd.conf.5 and conf/lowlatd.conf. */
#pragma once

#include "basic/string-table.h"

/* The registry: every kind of setting, one line each. X(ENUM, name) gives the enum value
 * SETTING_ENUM, the name "name" that the journal, the bus, the metrics and the originals
 * file use, and the table of operations name_vtable that the kind's file defines. The
 * order is the order of ListSettings within a group; a pass looks at the table from its
 * end, and a restore from its start: cpuset_partition stands before slice_cpus so that
 * the other units keep off the partition's CPUs before it is made, and get them back only
 * once it is a member again. */
#define SETTING_KINDS(X)                                   \
        X(IRQ_AFFINITY, irq_affinity)                      \
        X(IRQ_DEFAULT_AFFINITY, irq_default_affinity)      \
        X(IRQBALANCE_BAN, irqbalance_ban)                  \
        X(SYSCTL, sysctl)                                  \
        X(CPU_DMA_LATENCY, cpu_dma_latency)                \
        X(TIMESTAMPING_HOLD, timestamping_hold)            \
        X(GOVERNOR, governor)                              \
        X(CPUIDLE, cpuidle)                                \
        X(RESUME_LATENCY, resume_latency)                  \
        X(MIN_FREQ, min_freq)                              \
        X(ENERGY_PERFORMANCE_PREFERENCE, energy_performance_preference) \
        X(BOOST, boost)                                    \
        X(STRAY_TASKS, stray_tasks)                        \
        X(CPUSET_PARTITION, cpuset_partition)              \
        X(SLICE_CPUS, slice_cpus)                          \
        X(KTHREAD_AFFINITY, kthread_affinity)              \
        X(KTHREAD_POLICY, kthread_policy)                  \
        X(SYSFS, sysfs)                                    \
        X(WORKQUEUE_CPUMASK, workqueue_cpumask)            \
        X(FAIR_SERVER, fair_server)                        \
        X(NIC_COALESCE, nic_coalesce)                      \
        X(NIC_RING, nic_ring)                              \
        X(NIC_CHANNELS, nic_channels)                      \
        X(NIC_FEATURE, nic_feature)                        \
        X(NIC_QDISC, nic_qdisc)                            \
        X(NIC_PAUSE, nic_pause)                            \
        X(NIC_EEE, nic_eee)                                \
        X(NIC_TXQUEUELEN, nic_txqueuelen)                  \
        X(NIC_RPS_CPUS, nic_rps_cpus)                      \
        X(NIC_RPS_FLOW_CNT, nic_rps_flow_cnt)              \
        X(NIC_XPS_CPUS, nic_xps_cpus)                      \
        X(RPS_DEFAULT_MASK, rps_default_mask)

typedef enum SettingKind {
#define SETTING_KIND_ENUM(e, n) SETTING_##e,
        SETTING_KINDS(SETTING_KIND_ENUM)
#undef SETTING_KIND_ENUM
        _SETTING_KIND_MAX,
        _SETTING_KIND_INVALID = -EINVAL,
} SettingKind;

DECLARE_STRING_TABLE_LOOKUP(setting_kind, SettingKind);
