/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's units changing: the slices confined, and the partition's slice. */
#include "log/log.h"
#include "setting/partition.h"
#include "setting/slices.h"
#include "host/systemd-client.h"
#include "unitwatch.h"

typedef struct UnitWatch {
        Source source;
        SystemdClient *client;
} UnitWatch;

/* Only queued: the look runs from the loop, not inside the bus's own dispatch. */
static void on_unit_changed(void *userdata, const char *unit) {
        UnitWatch *w = userdata;
        const SettingTable *t = source_table(&w->source);
        Setting *s;

        if (unit) {
                s = slice_table_find(t, unit) ?: partition_table_find(t, unit);
                if (s)
                        source_request_setting(&w->source, s);
                return;
        }
        for (size_t i = 0; i < t->n; i++)
                if (setting_is_slice(t->settings[i]) || setting_is_partition(t->settings[i]))
                        source_request_setting(&w->source, t->settings[i]);
}

static int unitwatch_open(Source *s) {
        UnitWatch *w = (UnitWatch *) s;
        int r;

        r = systemd_client_new(source_host(s), &w->client);
        if (r < 0)
                return log_warning_errno(r, "AllowedCPUs= of units is not managed");
        source_provide_systemd(s, w->client);
        return 0;
}

static int unitwatch_start(Source *s) {
        UnitWatch *w = (UnitWatch *) s;
        int r;

        if (!w->client)
                return 0;
        r = systemd_client_attach(w->client, source_event(s), on_unit_changed, w);
        if (r < 0)
                log_warning_errno(r, "Cannot watch PID 1's unit signals; inotify and the scan still see changes");
        return 0;
}

static void unitwatch_stop(Source *s) {
        UnitWatch *w = (UnitWatch *) s;

        source_provide_systemd(s, NULL);
        w->client = systemd_client_free(w->client);
}

const SourceVTable unitwatch_vtable = {
        .name = "units",
        .size = sizeof(UnitWatch),
        .open = unitwatch_open,
        .start = unitwatch_start,
        .stop = unitwatch_stop,
};
