/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The state machine every kind of setting shares: read, compare, correct, read back,
 * report; fights, retries, unmovable and unsupported objects. What a kind does its own
 * way is behind its SettingVTable (a file each in lib/setting/); nothing here looks at the kind. */
#include <stdarg.h>
#include <string.h>

#include "setting/originals.h"
#include "setting/setting.h"
#include "basic/util.h"


#define SETTING_KIND_VTABLE_DECLARE(e, n) extern const SettingVTable n##_vtable;
SETTING_KINDS(SETTING_KIND_VTABLE_DECLARE)
#undef SETTING_KIND_VTABLE_DECLARE

const SettingVTable *const setting_vtables[_SETTING_KIND_MAX] = {
#define SETTING_KIND_VTABLE(e, n) [SETTING_##e] = &n##_vtable,
        SETTING_KINDS(SETTING_KIND_VTABLE)
#undef SETTING_KIND_VTABLE
};

static const char *const setting_state_table[_SETTING_STATE_MAX] = {
        [SETTING_PENDING] = "pending",
        [SETTING_OK] = "ok",
        [SETTING_DRIFTED] = "drifted",
        [SETTING_CORRECTED] = "corrected",
        [SETTING_FAILED] = "failed",
        [SETTING_UNSUPPORTED] = "unsupported",
        [SETTING_UNMOVABLE] = "unmovable",
};
DEFINE_STRING_TABLE_LOOKUP(setting_state, SettingState);

Setting *setting_alloc(SettingKind k, const char *object) {
        const SettingVTable *vt;
        size_t size, len;
        Setting *s;

        if (k < 0 || k >= _SETTING_KIND_MAX)
                return NULL;
        vt = setting_vtables[k];
        /* The object's name lives right after the setting, in the same allocation: it never
         * changes, and a string of its own cost a chunk of malloc's (32 bytes for an IRQ's
         * "42") per setting, 32 kB at 1,000 IRQs. */
        size = MAX(vt->object_size, sizeof(Setting));
        len = object ? strlen(object) + 1 : 0;
        s = calloc(1, size + len);
        if (!s)
                return NULL;
        s->kind = k;
        setting_set_state(s, SETTING_PENDING);
        for (size_t i = 0; i < ELEMENTSOF(s->watches); i++)
                s->watches[i] = -1;
        if (object)
                s->object = memcpy((char *) s + size, object, len);
        return s;
}

void setting_release(Setting *s) {
        if (SETTING_VTABLE(s)->release)
                SETTING_VTABLE(s)->release(s);
}

Setting *setting_free(Setting *s) {
        if (!s)
                return NULL;
        setting_release(s);
        if (SETTING_VTABLE(s)->done)
                SETTING_VTABLE(s)->done(s);
        free(s->label);
        free(s->clamped);
        free(s->desired);
        free(s->observed);
        free(s->reason);
        free(s->corrections_at);
        free(s);
        return NULL;
}

void setting_set_reason(Setting *s, const char *fmt, ...) {
        va_list ap;
        char *r;

        va_start(ap, fmt);
        r = strdup_vprintf(fmt, ap);
        va_end(ap);
        free(s->reason);
        s->reason = r;
}

int setting_set_desired(Setting *s, const char *desired) {
        char *copy = strdup(desired);

        if (!copy)
                return -ENOMEM;
        free(s->desired);
        s->desired = copy;
        return 0;
}

bool setting_affinity_matches(SettingContext *rc, const char *observed, const CPUSet *exact) {
        /* A task or an IRQ always has at least one CPU; an empty list is no affinity. */
        if (!observed || cpuset_parse_list(observed, &rc->scratch) < 0 || cpuset_is_empty(&rc->scratch))
                return false;
        if (exact)
                return cpuset_equal(&rc->scratch, exact);
        return !cpuset_intersects(&rc->scratch, &rc->posture->isolated);
}

/* The CPUs of rc->scratch against the host's possible CPUs (the online ones when the
 * host does not say). */
static const char *scratch_cpus_problem(SettingContext *rc, bool may_be_empty) {
        HostCpus cpus = {};
        bool ok;

        if (cpuset_is_empty(&rc->scratch))
                return may_be_empty ? NULL : "no CPU";
        if (host_read_cpus(rc->host, &cpus) >= 0 && !cpuset_is_empty(&cpus.possible))
                ok = cpuset_is_subset(&rc->scratch, &cpus.possible);
        else
                ok = cpuset_is_subset(&rc->scratch, &rc->posture->online);
        host_cpus_done(&cpus);
        return ok ? NULL : "CPUs this host does not have";
}

const char *setting_cpu_list_problem(SettingContext *rc, const char *value, bool may_be_empty) {
        if (cpuset_parse_list(value, &rc->scratch) < 0)
                return "not a CPU list";
        return scratch_cpus_problem(rc, may_be_empty);
}

const char *setting_cpu_mask_problem(SettingContext *rc, const char *value, bool may_be_empty) {
        if (cpuset_parse_mask(value, &rc->scratch) < 0)
                return "not a CPU mask";
        return scratch_cpus_problem(rc, may_be_empty);
}

const char *setting_number_problem(const char *value, uint64_t max) {
        uint64_t v;

        if (parse_uint64(value, &v) < 0)
                return "not a number";
        return v > max ? "a number out of range" : NULL;
}

const char *setting_word_problem(const char *value, const char *const *words) {
        for (size_t i = 0; words[i]; i++)
                if (streq(value, words[i]))
                        return NULL;
        return "not a value of this kind";
}

bool setting_same(const Setting *a, const Setting *b) {
        const SettingVTable *vt = SETTING_VTABLE(a);

        return a->kind == b->kind && streq(a->object, b->object) && streq(a->desired, b->desired) &&
               (!vt->same || vt->same(a, b));
}

void setting_inherit(Setting *n, Setting *old) {
        const SettingVTable *vt = SETTING_VTABLE(n);
        bool same_value;

        if (n->kind != old->kind)
                return;
        same_value = streq(n->desired, old->desired);
        /* What the kind holds moves in any case: reopening /dev/cpu_dma_latency would drop
         * the constraint for a moment, and the persistent read fds are what makes a scan
         * cheap. */
        if (vt->inherit)
                vt->inherit(n, old, same_value);
        /* A watch moves only to a setting that has none: one added to a table with hooks
         * (a NIC replanned under a new name) was watched on its way in, after the old one
         * left and gave its watch up; overwriting that would orphan the new watch. */
        for (size_t i = 0; i < ELEMENTSOF(n->watches); i++)
                if (n->watches[i] < 0) {
                        n->watches[i] = old->watches[i];
                        old->watches[i] = -1;
                }
        if (!same_value)
                return; /* a new value is looked at afresh */
        setting_set_state(n, old->state);
        free(n->observed);
        n->observed = TAKE_PTR(old->observed);
        free(n->reason);
        n->reason = TAKE_PTR(old->reason);
        free(n->corrections_at);
        n->corrections_at = TAKE_PTR(old->corrections_at);
        n->corrections_pos = old->corrections_pos;
        n->fighting = old->fighting;
        n->last_correction_usec = old->last_correction_usec;
        n->last_drift_usec = old->last_drift_usec;
        n->retry_after_usec = old->retry_after_usec;
}

static void emit(SettingContext *rc, EventId e, const Setting *s, ReconcileFlags flags) {
        if (rc->handler)
                rc->handler(rc->userdata, e, s, flags);
}

static bool setting_matches(SettingContext *rc, Setting *s) {
        const SettingVTable *vt = SETTING_VTABLE(s);

        if (vt->matches)
                return vt->matches(s, rc);
        return streq_ptr(s->observed, s->desired);
}

/* Parts of the setting the host made lowlatd leave alone since the last look (tasks the
 * kernel refuses to move): one failure report naming them, then never again. */
static void report_left_alone(SettingContext *rc, Setting *s, ReconcileFlags flags) {
        _cleanup_free_ char *reason = NULL;

        if (!SETTING_VTABLE(s)->take_left_alone || SETTING_VTABLE(s)->take_left_alone(s, &reason) <= 0)
                return;
        free(s->reason);
        s->reason = TAKE_PTR(reason);
        rc->counters.failures++;
        emit(rc, EVENT_CORRECTION_FAILED, s, flags);
}

static void record_correction(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags) {
        uint64_t oldest;

        s->last_correction_usec = now;
        if (flags & RECONCILE_APPLYING)
                return;
        /* Out of memory, this correction is not counted towards a fight: the next one
         * tries again. */
        if (!s->corrections_at && !(s->corrections_at = calloc(FIGHT_CORRECTIONS, sizeof(uint64_t))))
                return;

        s->corrections_at[s->corrections_pos] = now;
        s->corrections_pos = (s->corrections_pos + 1) % FIGHT_CORRECTIONS;
        oldest = s->corrections_at[s->corrections_pos];
        if (!s->fighting && oldest != 0 && now - oldest < FIGHT_WINDOW_USEC) {
                s->fighting = true;
                rc->counters.fights++;
                emit(rc, EVENT_FIGHT, s, flags);
        }
}

static int set_observed(Setting *s, const char *text) {
        size_t len;
        char *copy;

        /* The usual answer, paid for every setting at every scan: the same text. */
        if (s->observed && streq(s->observed, text))
                return 0;
        len = strlen(text);
        /* A drift and its correction read values of about one length ("2-3", "0-1"): the
         * text goes where the last one was when it fits, with no allocation on the way to
         * the write. */
        if (s->observed && strlen(s->observed) >= len) {
                memcpy(s->observed, text, len + 1);
                return 1;
        }
        copy = malloc(len + 1);
        if (copy)
                memcpy(copy, text, len + 1);
        if (!copy)
                return -ENOMEM;
        free(s->observed);
        s->observed = copy;
        return 1;
}

/* Before the first change, what the host had: restore needs it, and a setting whose
 * original cannot be kept is not changed. */
static int setting_record_original(SettingContext *rc, Setting *s) {
        _cleanup_free_ char *value = NULL;
        int r;

        if (!rc->originals || !s->observed)
                return 0;
        /* Kept already (every correction but a setting's first): no copy to make. */
        if (originals_get(rc->originals, s->kind, s->object))
                return 0;
        if (SETTING_VTABLE(s)->original) {
                r = SETTING_VTABLE(s)->original(s, &value);
                if (r < 0)
                        return r;
                if (!value)
                        return 0; /* this kind keeps nothing to put back */
        } else if (!(value = strdup(s->observed)))
                return -ENOMEM;
        r = originals_record(rc->originals, s->kind, s->object, value);
        if (r < 0)
                setting_set_reason(s, "cannot record its original value, so not changing it: %s", strerror(-r));
        return r;
}

/* Why original cannot be a value s had: NULL when it can. What every kind shares first
 * (every read goes through a buffer of 4096 bytes, tidied kernel text), then the kind's
 * own rules. */
static const char *setting_original_problem(SettingContext *rc, const Setting *s, const char *original) {
        if (strlen(original) >= 4096)
                return "longer than any value read";
        for (const char *p = original; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return "holds a control character";
        return SETTING_VTABLE(s)->original_problem ? SETTING_VTABLE(s)->original_problem(s, rc, original) : NULL;
}

int setting_restore(SettingContext *rc, Setting *s) {
        const SettingVTable *vt = SETTING_VTABLE(s);
        const char *original, *problem;
        char buf[4096];
        int r;

        if (!rc->originals || !(original = originals_get(rc->originals, s->kind, s->object)))
                return 0;
        problem = setting_original_problem(rc, s, original);
        if (problem) {
                /* Said once: the entry goes, so no later restore finds it again. */
                setting_set_reason(s, "the original on file (%.40s%s, %zu bytes) is not a value it could have had: %s",
                                   original, strlen(original) > 40 ? "..." : "", strlen(original), problem);
                originals_forget(rc->originals, s->kind, s->object);
                return -EBADMSG;
        }

        if (vt->restore)
                r = vt->restore(s, rc, original);
        else {
                /* The original is written down before the first write, so an IRQ the kernel
                 * then refused (the VM e2e run: the timer, the cascade, managed virtio
                 * queues) has one although lowlatd never changed it, and writing it back
                 * fails the same way. Put back only what differs from the original now. */
                bool same = (s->state == SETTING_UNMOVABLE && s->last_correction_usec == 0) ||
                            (vt->read(s, rc, buf, sizeof(buf), 0) >= 0 && streq(buf, original));
                if (same) {
                        originals_forget(rc->originals, s->kind, s->object);
                        return 0;
                }
                /* Through the same path as a correction. */
                r = vt->write(s, rc, original);
        }
        if (r < 0)
                return r;
        s->observed = mfree(s->observed);
        setting_set_state(s, SETTING_PENDING);
        originals_forget(rc->originals, s->kind, s->object);
        return 1;
}

/* A read that failed: unsupported (once for each reason: was is the reason it had), or a
 * failure (once). Returns what the caller returns: -ENOENT when the object is gone, else 0. */
static int setting_read_failed(SettingContext *rc, Setting *s, int r, ReconcileFlags flags, const char *was) {
        if (r == -ENOENT)
                return -ENOENT;
        if (r == -EOPNOTSUPP) {
                if (s->state != SETTING_UNSUPPORTED || !streq_ptr(was, s->reason)) {
                        setting_set_state(s, SETTING_UNSUPPORTED);
                        emit(rc, EVENT_UNSUPPORTED, s, flags);
                }
                return 0;
        }
        if (s->state != SETTING_FAILED) {
                setting_set_state(s, SETTING_FAILED);
                rc->counters.failures++;
                emit(rc, EVENT_CORRECTION_FAILED, s, flags);
        }
        return 0;
}

/* The host refuses the value for good (-EPERM: unmovable, never written again) or cannot
 * do it (-EOPNOTSUPP: unsupported, looked at again when forced): the state says so, and it
 * is reported once. Returns whether r was one of the two. */
static bool setting_refused(SettingContext *rc, Setting *s, int r, ReconcileFlags flags) {
        if (r == -EPERM) {
                setting_set_state(s, SETTING_UNMOVABLE);
                emit(rc, EVENT_UNMOVABLE, s, flags);
                return true;
        }
        if (r == -EOPNOTSUPP) {
                setting_set_state(s, SETTING_UNSUPPORTED);
                emit(rc, EVENT_UNSUPPORTED, s, flags);
                return true;
        }
        return false;
}

/* A drift, counted and reported. A correction's is reported once the write is done: the
 * journal entry and the bus signal cost more than the write itself, and nothing in them is
 * needed to correct. What the kind describes (an IRQ's effective CPUs) is read before the
 * write, which may change it; described is that text, NULL to describe it now. */
static void report_drift(SettingContext *rc, Setting *s, ReconcileFlags flags, const char *described) {
        if (!(flags & (RECONCILE_APPLYING | RECONCILE_QUIET)))
                rc->counters.drift_events++;
        rc->drift_described = described;
        emit(rc, EVENT_DRIFT, s, flags);
        rc->drift_described = NULL;
}

/* Writes the desired value and reads it back. Returns -ENOENT when the object vanished,
 * else 0 with the state set. drift_due: the drift this look found is not reported yet; it
 * is, after the write and before whatever follows, unless the host refuses the very first
 * write to a setting never seen as desired (a kernel thread that gains PF_NO_SETAFFINITY
 * between its name and the write, as every new bound kworker does): that one is
 * unmovable, never a drift. */
static int setting_correct(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags, SettingState before,
                           bool drift_due) {
        const SettingVTable *vt = SETTING_VTABLE(s);
        char buf[4096], described[4096];
        const char *desc = NULL;
        int r;

        /* Applying a posture, or a quiet look, reports no drift one by one: nothing to describe. */
        if (drift_due && vt->describe_observed && rc->handler && !(flags & (RECONCILE_APPLYING | RECONCILE_QUIET)))
                desc = setting_describe_observed(s, rc, described, sizeof(described));
        r = setting_record_original(rc, s);
        if (r < 0) {
                if (drift_due)
                        report_drift(rc, s, flags, desc);
                goto failed;
        }
        r = vt->write(s, rc, s->desired);
        if (drift_due && !(r == -EPERM && before == SETTING_PENDING))
                report_drift(rc, s, flags, desc);
        if (r == -ENOENT)
                return -ENOENT;
        if (setting_refused(rc, s, r, flags))
                return 0;
        if (r < 0)
                goto failed;

        /* Trust the host, not the write: read it back. */
        r = vt->read(s, rc, buf, sizeof(buf), RECONCILE_READBACK);
        report_left_alone(rc, s, flags);
        if (r >= 0 && set_observed(s, buf) < 0)
                r = -ENOMEM;
        if (r >= 0 && setting_matches(rc, s)) {
                s->readback_retry = false;
                s->reason = mfree(s->reason);
                if (vt->changed_anything && !vt->changed_anything(s)) {
                        /* Nothing was changed after all (the strays exited, or are left
                         * alone now and were reported so): not a correction. */
                        setting_set_state(s, SETTING_OK);
                        emit(rc, EVENT_RECOVERED, s, flags);
                        return 0;
                }
                setting_set_state(s, SETTING_CORRECTED);
                if (flags & RECONCILE_APPLYING)
                        rc->counters.applied++;
                else
                        rc->counters.corrections++;
                emit(rc, EVENT_CORRECTED, s, flags);
                record_correction(rc, s, now, flags);
                return 0;
        }
        /* A set that grows by itself (tasks fork all the time): what differs now appeared
         * since the look; still drift, corrected at the next one. */
        if (r >= 0 && vt->readback == READBACK_IS_DRIFT)
                return 0;
        setting_set_reason(s, "wrote %s but read back %s", s->desired, r >= 0 ? s->observed : "nothing");
        if (vt->readback == READBACK_LOOKS_AGAIN && !s->readback_retry) {
                s->readback_retry = true;
                return 0;
        }
failed:
        s->retry_after_usec = now + FAILED_RETRY_USEC;
        if (before != SETTING_FAILED || (flags & RECONCILE_FORCE)) {
                rc->counters.failures++;
                emit(rc, EVENT_CORRECTION_FAILED, s, flags);
        }
        setting_set_state(s, SETTING_FAILED);
        return 0;
}

int setting_reconcile(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags) {
        const SettingVTable *vt = SETTING_VTABLE(s);
        bool force = flags & RECONCILE_FORCE, changed, drift_due;
        SettingState before = s->state;
        char buf[4096];
        int r;

        /* What the host cannot do is looked at again only when asked (reload, Reapply), and
         * reported again only for another reason (irqbalance not running, then one that
         * answers in a way lowlatd does not know). */
        if (!force && s->state == SETTING_UNSUPPORTED)
                return 0;
        _cleanup_free_ char *unsupported_reason =
                s->state == SETTING_UNSUPPORTED && s->reason ? strdup(s->reason) : NULL;

        r = vt->read(s, rc, buf, sizeof(buf), flags);
        if (r < 0)
                return setting_read_failed(rc, s, r, flags, unsupported_reason);

        /* A writer's open(O_TRUNC) and its write() are two steps: a look in between reads
         * "". After an inotify hint that is always a file caught mid-write (its write and
         * close send more hints); from the scan, an empty value is believed only when two
         * scans in a row see it. A first read ever is always judged. */
        if (buf[0] == '\0' && !isempty(s->observed)) {
                if (flags & RECONCILE_HINTED)
                        return 0;
                if (!s->empty_seen) {
                        s->empty_seen = true;
                        return 0;
                }
        }
        if (!(flags & RECONCILE_HINTED))
                s->empty_seen = buf[0] == '\0';

        r = set_observed(s, buf);
        if (r < 0)
                return r;
        changed = r > 0;

        if (!changed && !force) {
                /* Same text as last time: nothing new, unless a deferred correction is due. */
                if (setting_state_is_good(s->state) || rc->observe)
                        return 0;
                if (s->state == SETTING_FAILED && now < s->retry_after_usec)
                        return 0;
                if (s->state == SETTING_DRIFTED && s->fighting && now - s->last_correction_usec < FIGHT_BACKOFF_USEC)
                        return 0;
        }

        if (!rc->observe && vt->prepare)
                vt->prepare(s, rc);

        if (setting_matches(rc, s)) {
                /* Already as desired at the first look: that is the value from before
                 * lowlatd, so it goes on file now. Left for the first correction, the
                 * original would be whatever someone else had drifted it to by then. A
                 * setting whose original cannot be kept is still left as it is: fine. */
                if (!rc->observe && before == SETTING_PENDING)
                        (void) setting_record_original(rc, s);
                if (!rc->observe)
                        report_left_alone(rc, s, flags);
                if (s->state == SETTING_DRIFTED || s->state == SETTING_FAILED || s->state == SETTING_UNSUPPORTED ||
                    s->state == SETTING_UNMOVABLE)
                        emit(rc, EVENT_RECOVERED, s, flags);
                if (!setting_state_is_good(s->state))
                        setting_set_state(s, SETTING_OK);
                s->reason = mfree(s->reason);
                return 0;
        }

        if (s->state == SETTING_UNMOVABLE)
                return 0; /* still off target; watched, never written again */

        /* What the host refuses, as far as it is known without a write, is that and not
         * drift, in both modes: a kernel thread born with PF_NO_SETAFFINITY is reported
         * unmovable once, never first as a drift (an alert on the drift id would fire for
         * every thread the kernel creates). */
        if (vt->refuses && setting_refused(rc, s, vt->refuses(s, rc), flags))
                return 0;

        s->last_drift_usec = now;
        if (before != SETTING_DRIFTED)
                s->rewritten = setting_state_is_good(before);
        drift_due = before != SETTING_DRIFTED && before != SETTING_FAILED;
        setting_set_state(s, SETTING_DRIFTED);
        /* A drift to correct is reported after the write (setting_correct()). */
        if (rc->observe || (s->fighting && now - s->last_correction_usec < FIGHT_BACKOFF_USEC)) {
                if (drift_due)
                        report_drift(rc, s, flags, NULL);
                return 0;
        }
        return setting_correct(rc, s, now, flags, before, drift_due);
}

int setting_probe(SettingContext *rc, Setting *s) {
        const SettingVTable *vt = SETTING_VTABLE(s);
        char buf[4096];
        int r;

        r = vt->read(s, rc, buf, sizeof(buf), RECONCILE_FORCE);
        if (r < 0)
                return r;
        r = set_observed(s, buf);
        if (r < 0)
                return r;
        if (setting_matches(rc, s))
                return SETTING_OK;
        r = vt->refuses ? vt->refuses(s, rc) : 0;
        return r == -EPERM ? SETTING_UNMOVABLE : r == -EOPNOTSUPP ? SETTING_UNSUPPORTED : SETTING_DRIFTED;
}

void setting_tick(SettingContext *rc, Setting *s, uint64_t now, ReconcileFlags flags) {
        if (s->fighting && now - s->last_drift_usec >= FIGHT_QUIET_USEC) {
                s->fighting = false;
                s->corrections_at = mfree(s->corrections_at);
                emit(rc, EVENT_FIGHT_ENDED, s, flags);
        }
}

const char *setting_describe_observed(Setting *s, SettingContext *rc, char *buf, size_t size) {
        if (!s->observed)
                return NULL;
        if (SETTING_VTABLE(s)->describe_observed && SETTING_VTABLE(s)->describe_observed(s, rc, buf, size) >= 0)
                return buf;
        return s->observed;
}

int setting_describe(const Setting *s, char *buf, size_t size) {
        const char *noun = SETTING_VTABLE(s)->noun ?: setting_kind_to_string(s->kind);
        int n;

        if (s->label)
                n = snprintf(buf, size, "%s %s (%s)", noun, s->object, s->label);
        else
                n = snprintf(buf, size, "%s %s", noun, s->object);
        return n < 0 ? -EIO : (size_t) n >= size ? -ENOBUFS : 0;
}

int setting_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        if (!SETTING_VTABLE(s)->watch_path)
                return 0;
        return SETTING_VTABLE(s)->watch_path(s, i, buf, size);
}

static uint64_t setting_sort_key(const Setting *s) {
        return SETTING_VTABLE(s)->sort_key ? SETTING_VTABLE(s)->sort_key(s) : 0;
}

int setting_compare(const Setting *a, const Setting *b) {
        SettingGroup ga = SETTING_VTABLE(a)->group, gb = SETTING_VTABLE(b)->group;
        uint64_t ka, kb;

        if (ga != gb)
                return ga < gb ? -1 : 1;
        ka = setting_sort_key(a);
        kb = setting_sort_key(b);
        if (ka != kb)
                return ka < kb ? -1 : 1;
        if (a->kind != b->kind)
                return a->kind < b->kind ? -1 : 1;
        return strcmp(a->object, b->object);
}
