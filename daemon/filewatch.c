/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inotify on the files the settings read. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "basic/array.h"
#include "filewatch.h"
#include "log/log.h"
#include "basic/util.h"

typedef struct FileWatch {
        Source source;
        int fd; /* inotify, -1 before start() or without inotify */
        sd_event_source *io;
        bool full_reported;
        bool rewatch; /* a watched file went away: re-add missing watches at the next scan */
        Setting **by_watch; /* inotify wd -> setting */
        size_t n_by_watch;
} FileWatch;

/* by_watch is indexed by watch descriptor, every slot NULL or a setting: its length is its
 * capacity, and the slots a growth adds start empty. */
static void watch_index_set(FileWatch *w, int wd, Setting *s) {
        size_t before = w->n_by_watch;

        if (wd < 0)
                return;
        if (array_grow(&w->by_watch, &w->n_by_watch, (size_t) wd + 1) < 0)
                return; /* the scan still catches drift on this one */
        memset(w->by_watch + before, 0, (w->n_by_watch - before) * sizeof(Setting *));
        w->by_watch[wd] = s;
}

static void watch_setting(FileWatch *w, Setting *s) {
        if (w->fd < 0)
                return;
        for (unsigned i = 0; i < ELEMENTSOF(s->watches); i++) {
                _cleanup_free_ char *full = NULL;
                char path[PATH_MAX];
                int wd;

                if (s->watches[i] >= 0 || setting_watch_path(s, i, path, sizeof(path)) <= 0)
                        continue;
                full = host_path(source_host(&w->source), path);
                if (!full)
                        return;
                wd = inotify_add_watch(w->fd, full, IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW);
                if (wd < 0) {
                        if (errno == ENOSPC && !w->full_reported) {
                                log_warning("inotify watch limit reached (fs.inotify.max_user_watches); "
                                            "drift on the remaining files is found by the periodic scan only");
                                w->full_reported = true;
                        }
                        continue;
                }
                s->watches[i] = wd;
                watch_index_set(w, wd, s);
        }
}

/* Adds the watches still missing: a file that did not exist (a unit's runtime drop-in
 * directory appears with the first SetUnitProperties) or a path learnt by a read (a
 * unit's cgroup). Watches already there cost nothing. */
static void watch_all(FileWatch *w) {
        const SettingTable *t = source_table(&w->source);

        for (size_t i = 0; i < t->n; i++)
                watch_setting(w, t->settings[i]);
}

static void unwatch_setting(FileWatch *w, Setting *s) {
        for (size_t i = 0; i < ELEMENTSOF(s->watches); i++) {
                int wd = s->watches[i];
                if (wd < 0)
                        continue;
                if ((size_t) wd < w->n_by_watch && w->by_watch[wd] == s) {
                        w->by_watch[wd] = NULL;
                        (void) inotify_rm_watch(w->fd, wd);
                }
                s->watches[i] = -1;
        }
}

static void on_event(FileWatch *w, const struct inotify_event *e) {
        Setting *s;

        if (e->mask & IN_Q_OVERFLOW) {
                /* Lost hints: look at everything. */
                source_request_all(&w->source);
                return;
        }
        if (e->wd < 0 || (size_t) e->wd >= w->n_by_watch || !w->by_watch[e->wd])
                return;
        s = w->by_watch[e->wd];
        if (e->mask & IN_IGNORED) {
                /* The file was replaced or removed: watch its successor from the next scan on. */
                for (size_t i = 0; i < ELEMENTSOF(s->watches); i++)
                        if (s->watches[i] == e->wd)
                                s->watches[i] = -1;
                w->by_watch[e->wd] = NULL;
                w->rewatch = true;
        }
        source_request_setting(&w->source, s);
}

static int on_inotify(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        FileWatch *w = userdata;
        union {
                struct inotify_event ev;
                char raw[64 * (sizeof(struct inotify_event) + 16)];
        } buf;
        ssize_t n;

        for (;;) {
                n = read(fd, &buf, sizeof(buf));
                if (n < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                log_warning_errno(errno, "inotify read failed");
                        break;
                }
                for (char *p = buf.raw; p < buf.raw + n;) {
                        struct inotify_event *e = (struct inotify_event *) p;
                        on_event(w, e);
                        p += sizeof(struct inotify_event) + e->len;
                }
                /* A read returns every queued event that fits: with room left for the
                 * longest one, the queue was empty, and the read that would say EAGAIN is
                 * a syscall before the correction for nothing. What arrives since wakes
                 * the loop again (the fd is level-triggered). */
                if ((size_t) n + sizeof(struct inotify_event) + NAME_MAX + 1 <= sizeof(buf))
                        break;
        }
        /* Now, not in another turn of the loop: the events are all read. */
        source_flush_requests(&w->source);
        return 0;
}

static int filewatch_start(Source *s) {
        FileWatch *w = (FileWatch *) s;
        int r;

        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                log_warning_errno(errno, "inotify unavailable; drift is found by the periodic scan only");
                return 0;
        }
        r = sd_event_add_io(source_event(s), &w->io, w->fd, EPOLLIN, on_inotify, w);
        if (r < 0)
                return log_error_errno(r, "Cannot watch inotify");
        watch_all(w);
        return 0;
}

/* A reload's table inherited the watches of the settings it kept: index them under their
 * new settings. The pass that follows adds the missing ones. */
static void filewatch_posture_changed(Source *s) {
        FileWatch *w = (FileWatch *) s;
        const SettingTable *t = source_table(s);

        for (size_t i = 0; i < t->n; i++)
                for (size_t k = 0; k < ELEMENTSOF(t->settings[i]->watches); k++)
                        watch_index_set(w, t->settings[i]->watches[k], t->settings[i]);
}

static void filewatch_pass_begin(Source *s, ReconcileFlags flags) {
        FileWatch *w = (FileWatch *) s;

        if (w->rewatch || (flags & RECONCILE_FORCE)) {
                w->rewatch = false;
                watch_all(w);
        }
}

/* Putting a posture in place creates files and learns paths (a unit's cgroup): watch
 * them now, not at the next scan. */
static void filewatch_pass_end(Source *s, ReconcileFlags flags) {
        if (flags & RECONCILE_APPLYING)
                watch_all((FileWatch *) s);
}

static void filewatch_setting_added(Source *s, Setting *setting) {
        watch_setting((FileWatch *) s, setting);
}

static void filewatch_setting_removed(Source *s, Setting *setting) {
        unwatch_setting((FileWatch *) s, setting);
}

static void filewatch_init(Source *s) {
        ((FileWatch *) s)->fd = -1;
}

static void filewatch_stop(Source *s) {
        FileWatch *w = (FileWatch *) s;

        w->io = sd_event_source_disable_unref(w->io);
        w->fd = safe_close(w->fd);
        w->by_watch = mfree(w->by_watch);
        w->n_by_watch = 0;
}

const SourceVTable filewatch_vtable = {
        .name = "inotify",
        .size = sizeof(FileWatch),
        .init = filewatch_init,
        .start = filewatch_start,
        .posture_changed = filewatch_posture_changed,
        .pass_begin = filewatch_pass_begin,
        .pass_end = filewatch_pass_end,
        .setting_added = filewatch_setting_added,
        .setting_removed = filewatch_setting_removed,
        .setting_corrected = filewatch_setting_added,
        .stop = filewatch_stop,
};
