/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's D-Bus API (org.freedesktop.systemd1 on the system bus, DBUS_SYSTEM_BUS_ADDRESS
 * honoured), the part the slice settings use: a unit's AllowedCPUs= read and set at run
 * time, and the signals that say a unit may have changed. Not /run/systemd/private: systemd(1)
 * calls that socket private to systemd. One connection of its own, opened when first
 * needed and again after it was lost, so the first pass works before the event loop and
 * lowlatd's own bus object exist. */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "basic/cpuset.h"
#include "host/host.h"
#include "basic/macro.h"

typedef struct SystemdClient SystemdClient;

/* A method call PID 1 leaves unanswered this long fails, and the client then makes no call
 * for SYSTEMD_CLIENT_QUIET_USEC: a hung PID 1 must not stall every scan. Long enough for a
 * busy PID 1 (a daemon-reload answers nothing until it is done; in the VM e2e run a 2 s
 * limit was exceeded while systemd-run started a unit), short of WatchdogSec=30s with a
 * scan to spare. */
#define SYSTEMD_CLIENT_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define SYSTEMD_CLIENT_QUIET_USEC (60 * USEC_PER_SEC)

/* unit: a unit whose properties changed; NULL: any unit may have (PID 1 reloaded). */
typedef void (*SystemdUnitHandler)(void *userdata, const char *unit);

/* h must outlive the client. Connects nothing yet. */
int systemd_client_new(const Host *h, SystemdClient **ret);
SystemdClient *systemd_client_free(SystemdClient *c);
DEFINE_POINTER_CLEANUP(SystemdClient, systemd_client_free);

/* From now on the connection (this one and every later one) is dispatched by the loop, and
 * PropertiesChanged of the units asked about, and PID 1's Reloading, go to handler. */
int systemd_client_attach(SystemdClient *c, sd_event *e, SystemdUnitHandler handler, void *userdata);

/* Whether the host under the root can do AllowedCPUs= at all: systemd is its init
 * (host_systemd_is_init()) and its cgroup v2 tree has the cpuset controller. 0, or
 * -EOPNOTSUPP with the reason in *ret_reason. */
int systemd_host_supports_allowed_cpus(const Host *h, char **ret_reason);

/* The D-Bus interface that carries a unit's cgroup properties, by the unit's type:
 * org.freedesktop.systemd1.Slice, .Scope or .Service; NULL for any other unit. */
const char *systemd_unit_interface(const char *unit);

/* ret_error below (may be NULL) is set when a call fails: PID 1's error name and message,
 * or why there is no connection. -EOPNOTSUPP: see systemd_host_supports_allowed_cpus(). */

/* A unit's AllowedCPUs= (the empty set when unset). */
int systemd_client_get_allowed_cpus(SystemdClient *c, const char *unit, CPUSet *ret, char **ret_error);
/* SetUnitProperties(unit, runtime=true, [AllowedCPUs]); the empty set unsets it. */
int systemd_client_set_allowed_cpus(SystemdClient *c, const char *unit, const CPUSet *cpus, char **ret_error);
/* The unit's ControlGroup ("/user.slice"), "" when it has none (not started); -EBADMSG
 * for one that is not a cgroup path (relative, or with an empty, "." or ".." component):
 * it is put after /sys/fs/cgroup. */
int systemd_client_get_control_group(SystemdClient *c, const char *unit, char **ret, char **ret_error);

/* The readers of PID 1's replies, at the message's current position (inside the
 * property's variant): an "ay" of AllowedCPUs (bit n % 8 of byte n / 8), a "s" of
 * ControlGroup checked as above. -EBADMSG when the message holds something else there
 * (or sd-bus's -ENXIO for another type), -ERANGE for a CPU past CPUSET_MAX_CPUS. */
int systemd_allowed_cpus_read(sd_bus_message *m, CPUSet *ret);
int systemd_control_group_read(sd_bus_message *m, char **ret);

/* StartTransientUnit(slice, "fail", [AllowedCPUs=cpus, Description=description]): a slice
 * that lives until it is stopped or the boot ends. A slice PID 1 knows already (a unit file
 * of the admin's, or one still loaded) is started with StartUnit instead. Returns once PID 1
 * queued the job: the cgroup appears when the job runs. */
int systemd_client_start_slice(SystemdClient *c, const char *slice, const CPUSet *cpus, const char *description,
                               char **ret_error);
/* StopUnit(unit, "replace"): a transient unit is gone after it. */
int systemd_client_stop_unit(SystemdClient *c, const char *unit, char **ret_error);
