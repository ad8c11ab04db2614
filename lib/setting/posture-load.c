/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* posture_load(): config_load(), the host's CPUs, posture_build(), and the [sysfs] paths
 * against the host and the other kinds (posture-load.h). */
#include <dirent.h>
#include <fnmatch.h>
#include <string.h>

#include "setting/posture-load.h"
#include "setting/irq.h"
#include "setting/sysfs.h"
#include "config/nic-posture.h"
#include "host/interrupts.h"
#include "host/unit-sandbox.h"
#include "basic/util.h"

/* [pm] governor against what this host's CPUs offer: a warning, as the same value may be
 * right on the host the file is also for. Where no CPU has cpufreq, that is said. */
static void warn_governor(Config *c, const Host *h, const CPUSet *online) {
        _cleanup_free_ char *offered = NULL;
        unsigned with_cpufreq = 0;
        int missing = -1;

        if (!c->governor)
                return;
        CPUSET_FOREACH(cpu, online) {
                _cleanup_free_ char *list = NULL;

                if (host_read_filef(h, &list, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors",
                                    cpu) < 0)
                        continue;
                with_cpufreq++;
                if (!word_list_contains(list, c->governor) && missing < 0) {
                        missing = cpu;
                        offered = normalize_whitespace(list);
                }
        }
        if (with_cpufreq == 0)
                config_warn(c, &c->governor_source,
                            "governor = %s cannot be checked here: no CPU of this host has cpufreq "
                            "(scaling_available_governors); here it will be unsupported",
                            c->governor);
        else if (missing >= 0)
                config_warn(c, &c->governor_source, "governor '%s' is not offered by CPU %d of this host (available: %s)",
                            c->governor, missing, offered ?: "?");
}

/* The last [nic] section matching ifname that sets irq_cpus: where it was written. */
static const ConfigSource *irq_cpus_source(const Config *c, const char *ifname) {
        for (size_t i = c->n_nics; i > 0; i--)
                if (c->nics[i - 1].irq_cpus.kind == CPUS_LIST && fnmatch(c->nics[i - 1].glob, ifname, 0) == 0)
                        return &c->nics[i - 1].irq_cpus.source;
        return NULL;
}

/* One interface: each [irq] pin that names one of its IRQs and asks for other CPUs than
 * its irq_cpus, once per pin. */
static void warn_nic_pins_one(const Posture *p, const Host *h, const IrqNames *names, const char *ifname) {
        _cleanup_(nic_posture_done) NicPosture np = {};
        _cleanup_free_ unsigned *irqs = NULL;
        _cleanup_free_ bool *said = NULL;
        Config *c = p->config;
        size_t n = 0;

        if (nic_posture_resolve(c, p, ifname, &np) <= 0 || !np.irq_cpus)
                return;
        if (irq_nic_irqs(h, names, ifname, &irqs, &n) < 0 || n == 0)
                return;
        said = calloc(c->n_pins, sizeof(bool));
        if (!said)
                return;
        for (size_t i = 0; i < n; i++) {
                const char *name = irq_names_lookup(names, irqs[i]);
                const IrqPin *pin = posture_irq_pin(p, name);
                const ConfigSource *nic_source = irq_cpus_source(c, ifname);
                char pin_cpus[64], nic_cpus[64];

                if (!pin || cpuset_equal(&pin->cpus, np.irq_cpus) || said[pin - c->pins])
                        continue;
                said[pin - c->pins] = true;
                (void) cpuset_format_list_buf(&pin->cpus, pin_cpus, sizeof(pin_cpus));
                (void) cpuset_format_list_buf(np.irq_cpus, nic_cpus, sizeof(nic_cpus));
                config_warn(c, &pin->source,
                            "pin: '%s' puts IRQ %u (%s) on CPUs %s, but it is an IRQ of %s, whose irq_cpus = %s "
                            "(%s:%u) wins: this pin has no effect on %s's IRQs on this host",
                            pin->glob, irqs[i], name, pin_cpus, ifname, nic_cpus,
                            nic_source && nic_source->file ? nic_source->file : "?", nic_source ? nic_source->line : 0,
                            ifname);
        }
}

/* The host's IRQ names as /proc/interrupts lists them now: 0, or -errno. */
static int read_irq_names(const Host *h, IrqNames *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = host_read_file_max(h, "proc/interrupts", PROC_INTERRUPTS_MAX, &text, NULL);
        return r < 0 ? r : irq_names_parse(text, ret);
}

/* A [nic] irq_cpus against the [irq] pins: the NIC's setting wins for its own IRQs, so a pin
 * that names one of them with other CPUs is a contradiction, found on the host's interfaces
 * (sys/class/net) and IRQ names (/proc/interrupts) as they are now. Where those cannot be
 * read, that is said. */
static void warn_nic_pins(const Posture *p, const Host *h, const IrqNames *names, int names_r) {
        Config *c = p->config;
        const ConfigSource *first = NULL;
        struct dirent *de;
        DIR *dir;
        int r = names_r;

        for (size_t i = 0; i < c->n_nics && !first; i++)
                if (c->nics[i].irq_cpus.kind == CPUS_LIST)
                        first = &c->nics[i].irq_cpus.source;
        if (!first || c->n_pins == 0)
                return;
        const char *what = "proc/interrupts";
        if (r >= 0) {
                what = "sys/class/net";
                r = host_opendir(h, what, &dir);
        }
        if (r < 0) {
                size_t len = strlen(h->root_path);
                config_warn(c, first, "irq_cpus against the [irq] pins cannot be checked here: %s%s%s: %s",
                            h->root_path, len > 0 && h->root_path[len - 1] == '/' ? "" : "/", what, strerror(-r));
                return;
        }
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.')
                        warn_nic_pins_one(p, h, names, de->d_name);
        closedir(dir);
}

/* Two [irq] pin patterns that take in the same IRQ of this host (/proc/interrupts as it is
 * now) with other CPUs: the later wins, and the earlier has no effect on that IRQ. Said once
 * per later pin, at its line. Where the IRQs cannot be read, nothing is said. */
static void warn_pin_overlaps(const Posture *p, const IrqNames *names, int names_r) {
        _cleanup_free_ bool *said = NULL;
        Config *c = p->config;

        if (c->n_pins < 2 || names_r < 0)
                return;
        said = calloc(c->n_pins, sizeof(bool));
        if (!said)
                return;
        for (size_t i = 0; i < names->n; i++) {
                const IrqPin *pin = posture_irq_pin(p, names->names[i]), *earlier;
                char pin_cpus[64], earlier_cpus[64];

                if (!pin || said[pin - c->pins])
                        continue;
                earlier = posture_irq_pin_before(p, names->names[i], (size_t) (pin - c->pins));
                /* the same pattern again is said as it is read */
                while (earlier && streq(earlier->glob, pin->glob))
                        earlier = posture_irq_pin_before(p, names->names[i], (size_t) (earlier - c->pins));
                if (!earlier || cpuset_equal(&earlier->cpus, &pin->cpus))
                        continue;
                said[pin - c->pins] = true;
                (void) cpuset_format_list_buf(&pin->cpus, pin_cpus, sizeof(pin_cpus));
                (void) cpuset_format_list_buf(&earlier->cpus, earlier_cpus, sizeof(earlier_cpus));
                config_warn(c, &pin->source,
                            "pin: '%s' (CPUs %s) overrides line %u's '%s' (CPUs %s) for IRQ %u (%s): the earlier pin "
                            "has no effect on it on this host",
                            pin->glob, pin_cpus, earlier->source.line, earlier->glob, earlier_cpus, names->irqs[i],
                            names->names[i]);
        }
}

/* The [sysfs] paths against what lowlatd.service under the root leaves writable, its
 * drop-ins (systemctl edit lowlatd) included, so that the ReadWritePaths= the warning
 * advises silences it. Where the unit cannot be read, that is said. */
static void warn_sysfs_sandbox(Config *c, const Host *h) {
        _cleanup_(unit_sandbox_done) UnitSandbox sandbox = UNIT_SANDBOX_EMPTY;
        _cleanup_free_ char *unreadable = NULL;
        int r;

        if (c->n_sysfs == 0)
                return;
        r = unit_sandbox_read(h, &sandbox, &unreadable);
        if (r < 0)
                config_warn(c, &c->sysfs[0].source, "what lowlatd.service may write cannot be checked here: %s: %s",
                            unreadable ?: h->root_path, strerror(-r));
        else
                config_warn_sysfs_sandbox(c, &sandbox);
}

int posture_load(const char *config_path, const Host *h, Posture **ret, ErrorList *errors) {
        return posture_load_with(config_path, NULL, h, ret, errors);
}

int posture_load_with(const char *config_path, const ConfigMainText *main, const Host *h, Posture **ret,
                      ErrorList *errors) {
        _cleanup_config_ Config *config = NULL;
        _cleanup_(posture_freep) Posture *p = NULL;
        _cleanup_(irq_names_done) IrqNames names = IRQ_NAMES_EMPTY;
        HostCpus cpus = {};
        int names_r = -ENODATA;
        size_t errors_before;
        int r;

        r = config_load_with(config_path, main, &config, errors);
        if (r < 0)
                return r;
        r = host_read_cpus(h, &cpus);
        if (r < 0) {
                error_list_add(errors, "cannot read the CPUs under %s: %s", h->root_path, strerror(-r));
                return -ENODEV;
        }
        /* What the [sysfs] paths lead to on this host (a link out of /sys, a file another
         * setting keeps) is reported beside what posture_build() finds. */
        errors_before = errors->n;
        sysfs_config_check(config, h, errors);
        r = posture_build(&config, &cpus, &p, errors);
        host_cpus_done(&cpus);
        if (r < 0)
                return r;
        if (errors->n > errors_before)
                return -EINVAL;
        config_warn_pins_isolated(p->config, &p->isolated);
        warn_governor(p->config, h, &p->online);
        warn_sysfs_sandbox(p->config, h);
        /* /proc/interrupts read once for the two checks that match pins against it (it
         * runs to megabytes on a large host), and only when there are pins to match. */
        if (p->config->n_pins > 0)
                names_r = read_irq_names(h, &names);
        warn_nic_pins(p, h, &names, names_r);
        warn_pin_overlaps(p, &names, names_r);
        *ret = TAKE_PTR(p);
        return 0;
}
