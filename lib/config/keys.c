/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every section and every key of lowlatd.conf, as data. A key's row says how its value is
 * parsed (a parser of values.c, or its section's own), where it goes in the Config, and
 * which names a CPU set takes; its section's entry says what is checked across keys and
 * how the value becomes the posture (section-*.c). The setting kinds keep the posture
 * (lib/setting/, a file each): a row's .kinds names the kinds (kind.h) its value becomes,
 * the kind's file is lib/setting/ with that name's words (fair_server: fair-server.c), and
 * test-config-keys checks that every name is a kind. */
#include <string.h>

#include "config/keys.h"
#include "host/ethtool.h"
#include "host/task.h"
#include "basic/util.h"

/* In the order the posture is resolved: [cpus] makes the sets the others name. */
const ConfigSection config_sections[] = {
        { .name = "daemon" },
        { .name = "cpus", .validate = config_validate_cpus, .resolve = config_resolve_cpus },
        { .name = "irq", .resolve = config_resolve_irq },
        { .name = "pm", .resolve = config_resolve_pm },
        { .name = "sysctl", .assign = config_assign_sysctl, .empty_values = true },
        { .name = "sysfs", .assign = config_assign_sysfs, .keys_are_paths = true, .empty_values = true },
        { .name = "nic",
          .argument_example = "[nic \"PATTERN\"], e.g. [nic \"eth*\"]",
          .open = config_open_nic,
          .assign = config_assign_nic,
          .resolve = config_resolve_nic },
        { .name = "service",
          .argument_example = "[service \"NAME\"], e.g. [service \"trading-engine\"]",
          .open = config_open_service },
        { .name = "process",
          .argument_example = "[process \"COMM\"], e.g. [process \"matcher\"]",
          .open = config_open_process },
        { .name = "kthread",
          .argument_example = "[kthread \"GLOB\"], e.g. [kthread \"ksoftirqd/*\"]",
          .open = config_open_kthread,
          .validate = config_validate_kthread,
          .resolve = config_resolve_kthread },
        { .name = "noise", .resolve = config_resolve_noise },
};
const size_t config_n_sections = ELEMENTSOF(config_sections);

CONFIG_ENUM(daemon_mode_enum, daemon_mode, "enforce", "observe");
CONFIG_ENUM(udev_source_enum, udev_source, "udev", "kernel");
CONFIG_ENUM(irqbalance_mode_enum, irqbalance_mode, "report", "ban");
CONFIG_ENUM(pm_boost_enum, pm_boost, "on", "off", "keep");
CONFIG_ENUM(app_policy_enum, sched_policy, "fifo", "rr");
CONFIG_ENUM(kthread_policy_enum, sched_policy, "fifo", "rr", "other");

static const ConfigRange scan_interval_range = {
        SCAN_INTERVAL_MIN_USEC, SCAN_INTERVAL_MAX_USEC, .what = "a duration (e.g. 500ms, 10s, 2m)" };
static const ConfigRange alert_interval_range = {
        USEC_PER_SEC, 24 * 3600 * USEC_PER_SEC, .what = "a duration (e.g. 10min, 1h)", .off = "off" };
static const ConfigRange dma_latency_range = {
        0, DMA_LATENCY_MAX_USEC, .what = "a number of microseconds", .off = "off" };
static const ConfigRange tick_rate_range = { 0, 100000, .what = "a number of ticks per second" };
static const ConfigRange rt_priority_range = { 1, 99, .what = "a real-time priority (1 to 99)" };
static const ConfigRange flow_cnt_range = {
        0, RPS_FLOW_CNT_MAX, .what = "0 or a power of two (flow table entries per receive queue, e.g. 4096)",
        .power_of_two = true };
static const ConfigRange txqueuelen_range = {
        0, UINT32_MAX, .what = "a number (packets in the device's transmit queue, e.g. 1000)" };

static const ConfigBool kthreads_words = { .on = "housekeeping", .off = "none" };
static const ConfigBool fair_server_words = { .on = "off", .off = "default" };
static const ConfigName governor_name = {
        config_governor_name_is_valid, "a governor name (e.g. performance)", .off = "off" };
static const ConfigName epp_name = {
        config_epp_name_is_valid, "a preference name (e.g. performance, balance_performance)", .off = "off" };
static const ConfigName qdisc_name = { config_qdisc_name_is_valid, "a qdisc kind (e.g. fq, pfifo_fast, mq)" };

#define CPUS_POSTURE_NAMES (CPUS_NAME_HOUSEKEEPING | CPUS_NAME_ISOLATED | CPUS_NAME_NONE)
#define CPUS_PM_NAMES (CPUS_NAME_HOUSEKEEPING | CPUS_NAME_ISOLATED | CPUS_NAME_ALL)

/* Rows of a section's object: C the Config, N a [nic] section, A a [service]/[process]
 * one, K a [kthread] one. */
#define C(member) offsetof(Config, member)
#define N(member) offsetof(NicSection, member)
#define A(member) offsetof(AppSection, member)
#define K(member) offsetof(KthreadSection, member)

const ConfigKey config_keys[] = {
        { "daemon", "mode", config_parse_enum, C(mode), .data = &daemon_mode_enum },
        { "daemon", "scan_interval", config_parse_duration, C(scan_interval_usec), .data = &scan_interval_range },
        { "daemon", "restore_on_exit", config_parse_bool, C(restore_on_exit) },
        { "daemon", "udev_source", config_parse_enum, C(udev_source), .data = &udev_source_enum },
        { "daemon", "profile", config_parse_profiles, C(profiles), .source = CONFIG_FIELD(Config, profiles_source) },

        { "cpus", "isolated", config_parse_cpus, C(isolated), .cpu_names = CPUS_NAME_AUTO },
        { "cpus", "housekeeping", config_parse_cpus, C(housekeeping) },
        { "cpus", "evict_strays", config_parse_bool, C(evict_strays), .kinds = "stray_tasks" },
        { "cpus", "slices", config_parse_slices, C(slices), .source = CONFIG_FIELD(Config, slices_source),
          .kinds = "slice_cpus" },
        { "cpus", "partition", config_parse_partition, C(partition), .source = CONFIG_FIELD(Config, partition_source),
          .kinds = "cpuset_partition slice_cpus" },
        { "cpus", "kthreads", config_parse_bool, C(kthreads_housekeeping), .data = &kthreads_words,
          .kinds = "kthread_affinity" },
        { "cpus", "fair_server", config_parse_bool, C(fair_server_off), .data = &fair_server_words,
          .kinds = "fair_server" },
        { "cpus", "hold_timestamping", config_parse_bool, C(hold_timestamping), .kinds = "timestamping_hold" },
        { "cpus", "workqueues", config_parse_cpus, C(workqueues), .cpu_names = CPUS_POSTURE_NAMES,
          .kinds = "workqueue_cpumask" },
        { "cpus", "rps_default_mask", config_parse_cpus, C(rps_default_mask), .cpu_names = CPUS_POSTURE_NAMES,
          .kinds = "rps_default_mask" },

        { "irq", "default_affinity", config_parse_cpus, C(default_affinity), .cpu_names = CPUS_NAME_HOUSEKEEPING,
          .kinds = "irq_default_affinity" },
        { "irq", "pin", config_parse_pin, C(pins), .repeats = true, .kinds = "irq_affinity" },
        { "irq", "irqbalance", config_parse_enum, C(irqbalance), .data = &irqbalance_mode_enum,
          .kinds = "irqbalance_ban" },

        { "pm", "cpu_dma_latency", config_parse_uint32, C(cpu_dma_latency_usec),
          .set = CONFIG_FIELD(Config, cpu_dma_latency_enabled), .data = &dma_latency_range,
          .kinds = "cpu_dma_latency" },
        { "pm", "governor", config_parse_name, C(governor), .source = CONFIG_FIELD(Config, governor_source),
          .data = &governor_name, .kinds = "governor" },
        { "pm", "resume_latency", config_parse_resume_latency, C(resume_latency),
          .source = CONFIG_FIELD(Config, resume_latency_source), .kinds = "resume_latency" },
        { "pm", "resume_latency_cpus", config_parse_cpus, C(resume_latency_cpus), .cpu_names = CPUS_PM_NAMES,
          .kinds = "resume_latency" },
        { "pm", "min_freq", config_parse_min_freq, C(min_freq_khz), .set = CONFIG_FIELD(Config, min_freq_enabled),
          .source = CONFIG_FIELD(Config, min_freq_source), .kinds = "min_freq" },
        { "pm", "min_freq_cpus", config_parse_cpus, C(min_freq_cpus), .cpu_names = CPUS_PM_NAMES, .kinds = "min_freq" },
        { "pm", "energy_performance_preference", config_parse_name, C(energy_performance_preference),
          .source = CONFIG_FIELD(Config, energy_performance_preference_source), .data = &epp_name,
          .kinds = "energy_performance_preference" },
        { "pm", "energy_performance_preference_cpus", config_parse_cpus, C(energy_performance_preference_cpus),
          .cpu_names = CPUS_PM_NAMES, .kinds = "energy_performance_preference" },
        { "pm", "boost", config_parse_enum, C(boost), .data = &pm_boost_enum, .kinds = "boost" },

        /* [sysctl] NAME = VALUE and [sysfs] PATH = VALUE: their sections' assign. */

        /* [nic "PATTERN"]: an ethtool parameter (lib/host/ethtool.c's table) or feature.NAME is
         * its section's assign; ethtool's shorthands are rows, their data the pattern over
         * the kernel's feature names that ethtool(8) defines them by ("tso" is every bit
         * the running kernel names tx-tcp*-segmentation; 6.18 added one a list missed). */
        { "nic", "gro", config_parse_nic_feature, .data = "rx-gro", .kinds = "nic_feature" },
        { "nic", "lro", config_parse_nic_feature, .data = "rx-lro", .kinds = "nic_feature" },
        { "nic", "gso", config_parse_nic_feature, .data = "tx-generic-segmentation", .kinds = "nic_feature" },
        { "nic", "tso", config_parse_nic_feature, .data = "tx-tcp*-segmentation", .kinds = "nic_feature" },
        { "nic", "qdisc", config_parse_name, N(qdisc), .source = CONFIG_FIELD(NicSection, qdisc_source),
          .data = &qdisc_name, .kinds = "nic_qdisc" },
        { "nic", "irq_cpus", config_parse_cpus, N(irq_cpus), .kinds = "irq_affinity" },
        { "nic", "rps_cpus", config_parse_cpus, N(rps_cpus), .cpu_names = CPUS_POSTURE_NAMES, .kinds = "nic_rps_cpus" },
        { "nic", "xps_cpus", config_parse_cpus, N(xps_cpus), .cpu_names = CPUS_POSTURE_NAMES, .kinds = "nic_xps_cpus" },
        { "nic", "rps_flow_cnt", config_parse_uint32, N(rps_flow_cnt), .set = CONFIG_FIELD(NicSection, rps_flow_cnt_set),
          .source = CONFIG_FIELD(NicSection, rps_flow_cnt_source), .data = &flow_cnt_range,
          .kinds = "nic_rps_flow_cnt" },
        { "nic", "txqueuelen", config_parse_uint32, N(txqueuelen), .set = CONFIG_FIELD(NicSection, txqueuelen_set),
          .source = CONFIG_FIELD(NicSection, txqueuelen_source), .data = &txqueuelen_range, .kinds = "nic_txqueuelen" },

        { "service", "policy", config_parse_enum, A(policy), .data = &app_policy_enum },
        { "service", "priority", config_parse_uint32, A(priority), .data = &rt_priority_range },
        { "service", "hugepages", config_parse_bool, A(hugepages) },
        { "service", "mlock", config_parse_bool, A(mlock) },
        { "process", "policy", config_parse_enum, A(policy), .data = &app_policy_enum },
        { "process", "priority", config_parse_uint32, A(priority), .data = &rt_priority_range },
        { "process", "hugepages", config_parse_bool, A(hugepages) },
        { "process", "mlock", config_parse_bool, A(mlock) },

        { "kthread", "cpus", config_parse_cpus, K(cpus), .cpu_names = CPUS_NAME_HOUSEKEEPING | CPUS_NAME_ISOLATED,
          .kinds = "kthread_affinity" },
        { "kthread", "policy", config_parse_enum, K(policy), .source = CONFIG_FIELD(KthreadSection, policy_source),
          .data = &kthread_policy_enum, .kinds = "kthread_policy" },
        { "kthread", "priority", config_parse_uint32, K(priority),
          .source = CONFIG_FIELD(KthreadSection, priority_source), .data = &rt_priority_range,
          .kinds = "kthread_policy" },

        { "noise", "cpus", config_parse_cpus, C(noise_cpus), .cpu_names = CPUS_POSTURE_NAMES },
        { "noise", "tick_rate_max", config_parse_uint32, C(noise_tick_rate_max), .data = &tick_rate_range },
        { "noise", "alert_interval", config_parse_duration, C(noise_alert_interval_usec), .data = &alert_interval_range },
        { "noise", "gate", config_parse_noise_gate, C(noise_gate) },
};

const size_t config_n_keys = ELEMENTSOF(config_keys);

const ConfigSection *config_section_find(const char *name) {
        for (size_t i = 0; i < config_n_sections; i++)
                if (streq(config_sections[i].name, name))
                        return &config_sections[i];
        return NULL;
}

const ConfigKey *config_key_find(const ConfigSection *section, const char *name) {
        for (size_t i = 0; i < config_n_keys; i++)
                if (streq(config_keys[i].section, section->name) && streq(config_keys[i].name, name))
                        return &config_keys[i];
        return NULL;
}
