/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An event source of the daemon (inotify, rtnetlink, udev, PID 1's signals, the proc
 * connector, ...): one table of operations per source, each in its own file, and the one
 * narrow interface through which a source sees the daemon's state and asks for work. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "setting/table.h"

typedef struct Source Source;
/* Whoever runs the sources (the manager), opaque to them: they reach it only through the
 * source_…() functions below. */
typedef struct SourceHost SourceHost;

/* Every operation may be NULL: nothing to do then. Called in registry order. */
typedef struct SourceVTable {
        const char *name;
        size_t size; /* of the source's own struct, which starts with a Source */
        /* At allocation, no I/O: what is not zero (fds at -1). */
        void (*init)(Source *s);
        /* Before the first pass, with no event loop yet (also for --once): open what the
         * first pass needs (the clients settings are read through) or must not miss. A
         * failure is logged and is not fatal. */
        int (*open)(Source *s);
        /* The event loop exists: add the event sources. A negative errno is fatal. */
        int (*start)(Source *s);
        /* A reload builds a new table beside the old one: add what only this source knows
         * (the links it has seen). */
        int (*plan)(Source *s, SettingTable *t, const Posture *p);
        /* A reload put a new posture (and its table) in force, before its first pass. */
        void (*posture_changed)(Source *s);
        /* Around every pass over the whole table (the first, each scan, Reapply(), a
         * reload; not the quiet look after a restore). */
        void (*pass_begin)(Source *s, ReconcileFlags flags);
        void (*pass_end)(Source *s, ReconcileFlags flags);
        /* The online CPUs changed (after the posture was rebuilt for them, if it was). */
        void (*online_cpus_changed)(Source *s);
        /* The table gained a setting, a setting is about to leave it, or one was corrected
         * (which may have created what it watches: a unit's runtime drop-in directory). */
        void (*setting_added)(Source *s, Setting *setting);
        void (*setting_removed)(Source *s, Setting *setting);
        void (*setting_corrected)(Source *s, Setting *setting);
        /* Releases everything the source holds (its struct is freed after). */
        void (*stop)(Source *s);
} SourceVTable;

struct Source {
        const SourceVTable *vtable;
        SourceHost *host;
};

/* The sources, in the order their operations are called. */
typedef struct SourceRegistry {
        Source **sources;
        size_t n;
} SourceRegistry;

/* Allocates one source per table, zeroed but for its Source part, and init()s it. */
int source_registry_new(SourceRegistry *r, const SourceVTable *const *vtables, size_t n, SourceHost *host);
/* Stops and frees every source. */
void source_registry_done(SourceRegistry *r);
/* The source made from vtable, or NULL. */
Source *source_registry_find(const SourceRegistry *r, const SourceVTable *vtable);

void source_registry_open(SourceRegistry *r);
/* Returns the first source's error; the sources after it are not started. */
int source_registry_start(SourceRegistry *r);
int source_registry_plan(SourceRegistry *r, SettingTable *t, const Posture *p);
void source_registry_posture_changed(SourceRegistry *r);
void source_registry_pass_begin(SourceRegistry *r, ReconcileFlags flags);
void source_registry_pass_end(SourceRegistry *r, ReconcileFlags flags);
void source_registry_online_cpus_changed(SourceRegistry *r);
void source_registry_setting_added(SourceRegistry *r, Setting *setting);
void source_registry_setting_removed(SourceRegistry *r, Setting *setting);
void source_registry_setting_corrected(SourceRegistry *r, Setting *setting);

/* What a source sees, read-only (the host implements these). The table and the posture
 * change with a reload: ask again each time rather than keep them. */
const SettingTable *source_table(const Source *s);
const Host *source_host(const Source *s);
const Posture *source_posture(const Source *s);
/* NULL before start(). */
sd_event *source_event(const Source *s);
/* The first pass has not finished: it looks at every setting anyway. */
bool source_starting(const Source *s);

/* Work a source asks for. Queued: looked at in the loop's next turn, or at
 * source_flush_requests(), whichever comes first; a setting queued twice is looked at
 * once. */
void source_request_setting(Source *s, Setting *setting);
/* Every setting, queued (lost events). */
void source_request_all(Source *s);
/* The source has read all its events: look at what it queued now, not in another turn. */
void source_flush_requests(Source *s);
/* Looked at now, before this returns: for a source whose event may be the only notice of
 * drift that must be put back at once, and which needs the result (a setting may vanish
 * from the table; walk it backwards). flags as for table_reconcile_one(). */
void source_request_now(Source *s, Setting *setting, uint64_t now, ReconcileFlags flags);
/* A planning step run on the table in force (lib's *_table_plan/scan/add/drop): only the
 * host writes its table, and hands it out for the length of one call. rc: for a replan
 * that puts back what is no longer asked for. Returns what step returns. */
typedef int (*SourcePlanStep)(SettingTable *t, SettingContext *rc, void *userdata);
int source_request_plan(Source *s, SourcePlanStep step, void *userdata);
/* Something a status line or a property shows may have changed. */
void source_status_changed(Source *s);
/* One line for what putting a posture in place changed (a new NIC, new devices). */
void source_log_applied(Source *s, const char *what);

/* The clients a source owns and the settings are read and written through; NULL when it
 * closes them. */
void source_provide_netlink(Source *s, Rtnl *rtnl, EthtoolClient *ethtool);
void source_provide_systemd(Source *s, SystemdClient *client);
