/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of event sources: made from their tables, told of the daemon's moments in
 * registry order, stopped together. It never knows which source is which. */
#include <errno.h>
#include <stdlib.h>

#include "source.h"

int source_registry_new(SourceRegistry *r, const SourceVTable *const *vtables, size_t n, SourceHost *host) {
        *r = (SourceRegistry) {};
        r->sources = calloc(n, sizeof(Source *));
        if (n > 0 && !r->sources)
                return -ENOMEM;
        for (; r->n < n; r->n++) {
                Source *s = calloc(1, vtables[r->n]->size);
                if (!s) {
                        source_registry_done(r);
                        return -ENOMEM;
                }
                *s = (Source) { .vtable = vtables[r->n], .host = host };
                r->sources[r->n] = s;
                if (s->vtable->init)
                        s->vtable->init(s);
        }
        return 0;
}

void source_registry_done(SourceRegistry *r) {
        for (size_t i = 0; i < r->n; i++) {
                Source *s = r->sources[i];
                if (s->vtable->stop)
                        s->vtable->stop(s);
                free(s);
        }
        free(r->sources);
        *r = (SourceRegistry) {};
}

Source *source_registry_find(const SourceRegistry *r, const SourceVTable *vtable) {
        for (size_t i = 0; i < r->n; i++)
                if (r->sources[i]->vtable == vtable)
                        return r->sources[i];
        return NULL;
}

/* Calls op on every source that has it, with the arguments that follow. */
#define REGISTRY_CALL(r, op, ...)                                              \
        do {                                                                    \
                for (size_t _i = 0; _i < (r)->n; _i++) {                        \
                        Source *_s = (r)->sources[_i];                          \
                        if (_s->vtable->op)                                     \
                                _s->vtable->op(_s, ##__VA_ARGS__);             \
                }                                                               \
        } while (0)

void source_registry_open(SourceRegistry *r) {
        REGISTRY_CALL(r, open);
}

int source_registry_start(SourceRegistry *r) {
        for (size_t i = 0; i < r->n; i++) {
                Source *s = r->sources[i];
                int k = s->vtable->start ? s->vtable->start(s) : 0;
                if (k < 0)
                        return k;
        }
        return 0;
}

int source_registry_plan(SourceRegistry *r, SettingTable *t, const Posture *p) {
        for (size_t i = 0; i < r->n; i++) {
                Source *s = r->sources[i];
                int k = s->vtable->plan ? s->vtable->plan(s, t, p) : 0;
                if (k < 0)
                        return k;
        }
        return 0;
}

void source_registry_posture_changed(SourceRegistry *r) {
        REGISTRY_CALL(r, posture_changed);
}

void source_registry_pass_begin(SourceRegistry *r, ReconcileFlags flags) {
        REGISTRY_CALL(r, pass_begin, flags);
}

void source_registry_pass_end(SourceRegistry *r, ReconcileFlags flags) {
        REGISTRY_CALL(r, pass_end, flags);
}

void source_registry_online_cpus_changed(SourceRegistry *r) {
        REGISTRY_CALL(r, online_cpus_changed);
}

void source_registry_setting_added(SourceRegistry *r, Setting *setting) {
        REGISTRY_CALL(r, setting_added, setting);
}

void source_registry_setting_removed(SourceRegistry *r, Setting *setting) {
        REGISTRY_CALL(r, setting_removed, setting);
}

void source_registry_setting_corrected(SourceRegistry *r, Setting *setting) {
        REGISTRY_CALL(r, setting_corrected, setting);
}
