/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* New kernel threads, from the proc connector. A fork by kthreadd arrives while the new
 * thread is still kthreadd's copy, before its creator has named it, placed it and maybe
 * bound it (PF_NO_SETAFFINITY): it is looked at KTHREAD_RELOOK_USEC later, and again while
 * it still has kthreadd's name (the kernel sends no event when it names a thread: see
 * host/proc-connector.h). Lost events (the socket overflowed) mean a look at every
 * kernel thread. The periodic scan remains the safety net. */
#include <string.h>
#include <time.h>

#include "basic/array.h"
#include "log/log.h"
#include "host/proc-connector.h"
#include "procwatch.h"
#include "setting/kthreads.h"
#include "basic/util.h"

/* A thread reported, not looked at yet. */
typedef struct PendingThread {
        pid_t tid;
        uint64_t reported_usec; /* CLOCK_MONOTONIC */
} PendingThread;

/* More than this many reported before one look (a burst of thousands): the rest wait for
 * a look at every kernel thread. */
#define PENDING_MAX 4096U

typedef struct ProcWatch {
        Source source;
        ProcConnector *connector;
        sd_event_source *io_source;
        sd_event_source *relook_source;
        PendingThread *pending;
        size_t n_pending, allocated_pending;
        bool overflowed;          /* more than PENDING_MAX: look at them all */
        bool unavailable_reported;
} ProcWatch;

typedef struct ThreadStep {
        Source *source;
        pid_t tid;
} ThreadStep;

static int step_scan(SettingTable *t, SettingContext *rc, void *userdata) {
        Source *s = userdata;
        return kthread_table_scan(t, source_host(s), source_posture(s));
}

static int step_add(SettingTable *t, SettingContext *rc, void *userdata) {
        ThreadStep *a = userdata;
        return kthread_table_add(t, source_host(a->source), source_posture(a->source), a->tid);
}

/* Queues every kernel-thread setting, and plans the threads that have none yet. */
static void look_at_all(ProcWatch *w) {
        const SettingTable *t = source_table(&w->source);
        int r = source_request_plan(&w->source, step_scan, &w->source);

        if (r < 0)
                log_warning_errno(r, "Cannot list kernel threads");
        for (size_t i = 0; i < t->n; i++)
                if (setting_is_kthread(t->settings[i], NULL))
                        source_request_setting(&w->source, t->settings[i]);
}

static void queue_thread(ProcWatch *w, pid_t tid) {
        static const SettingKind kinds[] = { SETTING_KTHREAD_AFFINITY, SETTING_KTHREAD_POLICY };
        char object[16];

        snprintf(object, sizeof(object), "%d", (int) tid);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                Setting *s = table_find(source_table(&w->source), kinds[i], object);
                if (s)
                        source_request_setting(&w->source, s);
        }
}

static void arm_relook(ProcWatch *w, uint64_t due) {
        uint64_t armed;

        if (sd_event_source_get_enabled(w->relook_source, NULL) > 0 &&
            sd_event_source_get_time(w->relook_source, &armed) >= 0 && armed <= due)
                return;
        (void) sd_event_source_set_time(w->relook_source, due);
        (void) sd_event_source_set_enabled(w->relook_source, SD_EVENT_ONESHOT);
}

static int on_relook(sd_event_source *source, uint64_t usec, void *userdata) {
        ProcWatch *w = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC), next = UINT64_MAX;
        size_t kept = 0;

        if (w->overflowed) {
                w->overflowed = false;
                look_at_all(w);
        }
        for (size_t i = 0; i < w->n_pending; i++) {
                PendingThread p = w->pending[i];
                ThreadStep a = { &w->source, p.tid };
                int r;

                if (now < p.reported_usec + KTHREAD_RELOOK_USEC) {
                        w->pending[kept++] = p;
                        next = MIN(next, p.reported_usec + KTHREAD_RELOOK_USEC);
                        continue;
                }
                r = source_request_plan(&w->source, step_add, &a);
                if (r == -EAGAIN && now - p.reported_usec < KTHREAD_SETTLE_MAX_USEC) {
                        /* Still kthreadd's copy: its creator has not named it yet. */
                        w->pending[kept++] = p;
                        next = MIN(next, now + KTHREAD_RELOOK_USEC);
                        continue;
                }
                if (r > 0)
                        queue_thread(w, p.tid);
                else if (r < 0 && r != -ENOENT && r != -EAGAIN)
                        log_warning_errno(r, "Cannot look at new kernel thread %d", (int) p.tid);
        }
        w->n_pending = kept;
        if (kept > 0)
                arm_relook(w, next);
        source_flush_requests(&w->source);
        return 0;
}

static void on_kthread_fork(void *userdata, pid_t tid, uint64_t forked_ns) {
        ProcWatch *w = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = 0; i < w->n_pending; i++)
                if (w->pending[i].tid == tid)
                        return;
        if (w->n_pending == PENDING_MAX ||
            array_grow(&w->pending, &w->allocated_pending, w->n_pending + 1) < 0) {
                w->overflowed = true;
                arm_relook(w, now + KTHREAD_RELOOK_USEC);
                return;
        }
        w->pending[w->n_pending++] = (PendingThread) { tid, now };
        arm_relook(w, now + KTHREAD_RELOOK_USEC);
}

static int on_connector(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        ProcWatch *w = userdata;
        int r = proc_connector_dispatch(w->connector, on_kthread_fork, w);

        if (r == -ENOBUFS) {
                /* The threads created meanwhile are unknown; the look is cheap next to a
                 * kernel that created enough of them to fill the socket. */
                log_notice("Kernel thread creations were lost (the proc connector socket overflowed); "
                           "looking at every kernel thread again");
                w->overflowed = true;
                arm_relook(w, now_usec(CLOCK_MONOTONIC) + KTHREAD_RELOOK_USEC);
        } else if (r < 0)
                log_warning_errno(r, "Reading the proc connector failed");
        return 0;
}

static void connector_close(ProcWatch *w) {
        w->io_source = sd_event_source_disable_unref(w->io_source);
        w->connector = proc_connector_free(w->connector);
        w->n_pending = 0;
        w->overflowed = false;
}

static void connector_open(ProcWatch *w) {
        int r;

        if (w->connector)
                return;
        r = proc_connector_open(&w->connector);
        if (r < 0 && !w->unavailable_reported) {
                log_warning_errno(r, "The proc connector is unavailable; new kernel threads are found by the periodic "
                                     "scan only");
                w->unavailable_reported = true;
        }
}

static int procwatch_open(Source *s) {
        if (posture_manages_kthreads(source_posture(s)))
                connector_open((ProcWatch *) s);
        return 0;
}

static int procwatch_start(Source *s) {
        ProcWatch *w = (ProcWatch *) s;
        int r;

        if (!w->relook_source) {
                /* 0.5 ms accuracy: sd-event's default (250 ms) would defeat the point. */
                r = sd_event_add_time(source_event(s), &w->relook_source, CLOCK_MONOTONIC, UINT64_MAX, 500, on_relook, w);
                if (r < 0)
                        return log_error_errno(r, "Cannot create the kernel thread timer");
                (void) sd_event_source_set_enabled(w->relook_source, SD_EVENT_OFF);
        }
        if (w->connector && !w->io_source) {
                r = sd_event_add_io(source_event(s), &w->io_source, proc_connector_fd(w->connector), EPOLLIN,
                                    on_connector, w);
                if (r < 0) {
                        log_warning_errno(r, "Cannot watch the proc connector");
                        connector_close(w);
                }
        }
        return 0;
}

/* Opens or closes the connector as the new posture wants. */
static void procwatch_posture_changed(Source *s) {
        ProcWatch *w = (ProcWatch *) s;

        if (!posture_manages_kthreads(source_posture(s))) {
                connector_close(w);
                return;
        }
        connector_open(w);
        if (source_event(s))
                (void) procwatch_start(s);
}

static void procwatch_stop(Source *s) {
        ProcWatch *w = (ProcWatch *) s;

        connector_close(w);
        w->relook_source = sd_event_source_disable_unref(w->relook_source);
        w->pending = mfree(w->pending);
        w->allocated_pending = 0;
}

const SourceVTable procwatch_vtable = {
        .name = "proc-connector",
        .size = sizeof(ProcWatch),
        .open = procwatch_open,
        .start = procwatch_start,
        .posture_changed = procwatch_posture_changed,
        .stop = procwatch_stop,
};
