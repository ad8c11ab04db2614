/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PID 1's units changing. */
#include "log/log.h"
#include "setting/slices.h"
#include "host/systemd-client.h"
#include "unitwatch.h"

struct UnitWatch {
        Manager *manager;
        SystemdClient *client;
};

/* Only queued: the look runs from the loop, not inside the bus's own dispatch. */
static void on_unit_changed(void *userdata, const char *unit) {
        Manager *m = userdata;
        Setting *s;

        if (unit) {
                s = slice_table_find(&m->table, unit);
                if (s)
                        manager_queue_dirty(m, s);
                return;
        }
        for (size_t i = 0; i < m->table.n; i++)
                if (setting_is_slice(m->table.settings[i]))
                        manager_queue_dirty(m, m->table.settings[i]);
}

int unitwatch_new(Manager *m, UnitWatch **ret) {
        UnitWatch *w = calloc(1, sizeof(UnitWatch));
        int r;

        if (!w)
                return log_warning_errno(ENOMEM, "AllowedCPUs= of units is not managed");
        w->manager = m;
        *ret = w;
        r = systemd_client_new(m->host, &w->client);
        if (r < 0)
                return log_warning_errno(r, "AllowedCPUs= of units is not managed");
        m->rc.systemd = w->client;
        return 0;
}

int unitwatch_start(UnitWatch *w) {
        int r;

        if (!w || !w->client)
                return 0;
        r = systemd_client_attach(w->client, w->manager->event, on_unit_changed, w->manager);
        if (r < 0)
                log_warning_errno(r, "Cannot watch PID 1's unit signals; inotify and the scan still see changes");
        return 0;
}

UnitWatch *unitwatch_free(UnitWatch *w) {
        if (!w)
                return NULL;
        w->manager->rc.systemd = NULL;
        systemd_client_free(w->client);
        free(w);
        return NULL;
}
