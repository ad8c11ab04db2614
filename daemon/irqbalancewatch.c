/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance starting and stopping: two inotify watches and a short timer. */
#include <limits.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>

#include "host/irqbalance.h"
#include "irqbalancewatch.h"
#include "log/log.h"
#include "setting/irqbalance.h"
#include "basic/util.h"

/* irqbalance binds its socket and then listens (init_socket()): a look the moment the
 * socket appears could find it refusing connections. It places its first IRQs one interval
 * (10 s) after it listens, so a look 100 ms later still bans the CPUs before it uses them. */
#define LOOK_DELAY_USEC (100 * USEC_PER_MSEC)
/* A look that finds its socket refusing (bound, not listening yet) or gone looks again
 * after 50 ms, doubling to 1 s, for 10 s at most; then the scan (or the failure's retry)
 * takes over. */
#define RETRY_FIRST_USEC (50 * USEC_PER_MSEC)
#define RETRY_MAX_USEC (1 * USEC_PER_SEC)
#define RETRY_TOTAL_USEC (10 * USEC_PER_SEC)
#define DIR_EVENTS (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR)

typedef struct IrqbalanceWatch {
        Source source;
        int fd; /* inotify, -1 while nothing is watched */
        int run_wd, dir_wd;
        sd_event_source *io;
        sd_event_source *delay; /* NULL: no look timer, nothing is watched */
        uint64_t retry_usec;    /* the next retry's delay; 0: none since the last event */
        uint64_t retried_usec;  /* retry delays so far */
} IrqbalanceWatch;

static void watch_dir(IrqbalanceWatch *w) {
        _cleanup_free_ char *path = NULL;

        if (w->dir_wd >= 0 || !(path = host_path(source_host(&w->source), IRQBALANCE_SOCKET_DIR)))
                return;
        /* ENOENT: not running; its directory appearing in /run says when it is. */
        w->dir_wd = inotify_add_watch(w->fd, path, DIR_EVENTS | IN_DELETE_SELF);
}

static int on_delay(sd_event_source *source, uint64_t usec, void *userdata) {
        IrqbalanceWatch *w = userdata;
        Setting *s = setting_irqbalance_ban_find(source_table(&w->source));

        /* Forced: a new irqbalance is worth a look even if the last one was unsupported. */
        if (s)
                source_request_now(&w->source, s, now_usec(CLOCK_MONOTONIC), RECONCILE_FORCE);
        /* The look may have dropped it: ask the table again. */
        s = setting_irqbalance_ban_find(source_table(&w->source));
        if (s && setting_irqbalance_ban_refused(s) && w->retried_usec < RETRY_TOTAL_USEC) {
                w->retry_usec = w->retry_usec ? MIN(2 * w->retry_usec, RETRY_MAX_USEC) : RETRY_FIRST_USEC;
                w->retried_usec += w->retry_usec;
                (void) sd_event_source_set_time_relative(w->delay, w->retry_usec);
                (void) sd_event_source_set_enabled(w->delay, SD_EVENT_ONESHOT);
        } else
                w->retry_usec = w->retried_usec = 0;
        source_status_changed(&w->source);
        return 0;
}

static void look_soon(IrqbalanceWatch *w) {
        int enabled = SD_EVENT_OFF;

        if (sd_event_source_get_enabled(w->delay, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return; /* one look for a burst of events */
        w->retry_usec = w->retried_usec = 0; /* a new socket: retried afresh */
        (void) sd_event_source_set_time_relative(w->delay, LOOK_DELAY_USEC);
        (void) sd_event_source_set_enabled(w->delay, SD_EVENT_ONESHOT);
}

static int on_inotify(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        IrqbalanceWatch *w = userdata;
        union {
                struct inotify_event ev;
                char raw[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)];
        } buf;
        bool look = false;
        ssize_t n;

        while ((n = read(fd, &buf, sizeof(buf))) > 0)
                for (char *p = buf.raw; p < buf.raw + n;) {
                        struct inotify_event *e = (struct inotify_event *) p;
                        unsigned pid;

                        p += sizeof(struct inotify_event) + e->len;
                        if (e->mask & IN_Q_OVERFLOW) {
                                watch_dir(w);
                                look = true;
                        } else if (e->wd == w->run_wd && e->len > 0 && streq(e->name, "irqbalance")) {
                                /* systemd makes the directory before irqbalance starts, which
                                 * takes a while to bind its socket: a look waits for the socket,
                                 * unless it is there before the watch was. Its removal means
                                 * irqbalance stopped. */
                                if (e->mask & (IN_CREATE | IN_MOVED_TO)) {
                                        watch_dir(w);
                                        look = look || irqbalance_find(source_host(&w->source), &pid) < 0 || pid > 0;
                                } else
                                        look = true;
                        } else if (e->wd == w->dir_wd && e->wd >= 0) {
                                if (e->mask & IN_IGNORED)
                                        w->dir_wd = -1; /* removed with the service: /run says when it is back */
                                look = look || (e->len > 0 && irqbalance_socket_pid(e->name, &pid) >= 0);
                        }
                }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
                log_warning_errno(errno, "Reading inotify events for %s failed", IRQBALANCE_SOCKET_DIR);
        if (look)
                look_soon(w);
        return 0;
}

static void watch_start(IrqbalanceWatch *w) {
        _cleanup_free_ char *run = host_path(source_host(&w->source), "run");
        int r;

        if (!run)
                return;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                log_warning_errno(errno, "inotify unavailable; an irqbalance restart is seen by the scan only");
                return;
        }
        w->run_wd = inotify_add_watch(w->fd, run, DIR_EVENTS);
        if (w->run_wd < 0)
                log_warning_errno(errno, "Cannot watch %s; an irqbalance restart is seen by the scan only", run);
        watch_dir(w);
        r = sd_event_add_io(source_event(&w->source), &w->io, w->fd, EPOLLIN, on_inotify, w);
        if (r < 0) {
                log_warning_errno(r, "Cannot watch inotify for irqbalance");
                w->fd = safe_close(w->fd);
        }
}

static void watch_stop(IrqbalanceWatch *w) {
        w->io = sd_event_source_disable_unref(w->io);
        w->fd = safe_close(w->fd);
        w->run_wd = w->dir_wd = -1;
        if (w->delay)
                (void) sd_event_source_set_enabled(w->delay, SD_EVENT_OFF);
}

/* Watches while the table has an irqbalance_ban setting, and stops when it has none. */
static void watch_sync(IrqbalanceWatch *w) {
        bool wanted;

        if (!w->delay)
                return;
        wanted = setting_irqbalance_ban_find(source_table(&w->source)) != NULL;
        if (wanted && w->fd < 0)
                watch_start(w);
        else if (!wanted && w->fd >= 0)
                watch_stop(w);
}

static void irqbalancewatch_init(Source *s) {
        IrqbalanceWatch *w = (IrqbalanceWatch *) s;

        w->fd = w->run_wd = w->dir_wd = -1;
}

/* Never fatal: without inotify the scan sees a restart. */
static int irqbalancewatch_start(Source *s) {
        IrqbalanceWatch *w = (IrqbalanceWatch *) s;
        int r;

        r = sd_event_add_time_relative(source_event(s), &w->delay, CLOCK_MONOTONIC, LOOK_DELAY_USEC, 0, on_delay, w);
        if (r < 0) {
                w->delay = NULL;
                log_warning_errno(r, "Cannot arm the irqbalance look timer");
                return 0;
        }
        (void) sd_event_source_set_enabled(w->delay, SD_EVENT_OFF);
        watch_sync(w);
        return 0;
}

static void irqbalancewatch_posture_changed(Source *s) {
        watch_sync((IrqbalanceWatch *) s);
}

static void irqbalancewatch_stop(Source *s) {
        IrqbalanceWatch *w = (IrqbalanceWatch *) s;

        watch_stop(w);
        w->delay = sd_event_source_disable_unref(w->delay);
}

const SourceVTable irqbalancewatch_vtable = {
        .name = "irqbalance",
        .size = sizeof(IrqbalanceWatch),
        .init = irqbalancewatch_init,
        .start = irqbalancewatch_start,
        .posture_changed = irqbalancewatch_posture_changed,
        .stop = irqbalancewatch_stop,
};
