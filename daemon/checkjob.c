/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Check() off the event loop. The audit walks /proc (every task's status, stat and
 * environ, every fd of the configured applications): tens of milliseconds on a busy
 * host, and the caller may be any unprivileged user. Run on the loop, each call would
 * hold every correction back by that long. Instead a forked child runs the audit on a
 * copy-on-write snapshot of the daemon's state and streams the findings back through a
 * pipe; the loop only reads. Callers that arrive while a child runs share its result,
 * so a flood of Check() calls costs one audit at a time, never loop time. A child that
 * takes longer than CHECK_TIMEOUT_USEC (a read stuck on a task in D state) is killed
 * and its callers get an error. If fork() fails, the audit runs in line as before. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/finding-stream.h"
#include "basic/array.h"
#include "basic/macro.h"
#include "checkjob.h"
#include "log/log.h"
#include "basic/util.h"

#define CHECK_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define CHECK_OUTPUT_MAX (16U << 20)

struct CheckJob {
        Manager *manager;
        CheckJob **slot; /* where the running job is kept; cleared when it ends */
        pid_t pid;
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
        char *buf;
        size_t n, allocated;
        bool truncated;
        sd_bus_message **callers;
        size_t n_callers, allocated_callers;
};

/* One finding as (ssssas), escaped for the bus (findings quote host text). */
static int append_finding(sd_bus_message *reply, const Finding *f) {
        _cleanup_free_ char *subject = utf8_escape(f->subject), *text = utf8_escape(f->message);
        int r;

        if (!subject || !text)
                return -ENOMEM;
        r = sd_bus_message_open_container(reply, 'r', "ssssas");
        if (r >= 0)
                r = sd_bus_message_append(reply, "ssss", severity_to_string(f->severity), f->id, subject, text);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < f->n_details; i++) {
                _cleanup_free_ char *line = utf8_escape(f->details[i]);
                r = line ? sd_bus_message_append_basic(reply, 's', line) : -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* The reply for one list of findings. */
static int reply_findings(sd_bus_message *call, const FindingList *findings) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssssas)");
        for (size_t i = 0; r >= 0 && i < findings->n; i++)
                r = append_finding(reply, &findings->items[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static void reply_error(sd_bus_message *call, int error, const char *why) {
        (void) sd_bus_reply_method_errorf(call, SD_BUS_ERROR_FAILED, "The audit failed: %s", why ?: strerror(error));
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* The child writes its findings as one stream (audit/finding-stream.h) and exits. */
static __attribute__((noreturn)) void child_run(Manager *m, int fd) {
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        _cleanup_free_ char *stream = NULL;
        char failed[FINDING_STREAM_ERROR_MAX];
        size_t n;
        int r;

        /* Never outlive the daemon; yield the CPU to it. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) setpriority(PRIO_PROCESS, 0, 10);
        r = audit_run(m->host, m->posture, &m->table, &findings);
        if (r >= 0)
                r = finding_list_to_stream(&findings, &stream, &n);
        if (r < 0) {
                (void) write_all(fd, failed, finding_stream_error(-r, failed));
                _exit(EXIT_FAILURE);
        }
        _exit(write_all(fd, stream, n) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static void job_free(CheckJob *j) {
        if (!j)
                return;
        sd_event_source_disable_unref(j->io);
        sd_event_source_disable_unref(j->timer);
        safe_close(j->fd);
        if (j->pid > 0) {
                (void) kill(j->pid, SIGKILL);
                (void) waitpid(j->pid, NULL, 0);
        }
        for (size_t i = 0; i < j->n_callers; i++)
                sd_bus_message_unref(j->callers[i]);
        free(j->callers);
        free(j->buf);
        free(j);
}

/* Ends the job: reaps the child, answers every caller, frees it. error: 0, or why the
 * child's output is not to be used. */
static void job_finish(CheckJob *j, int error, const char *why) {
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        int status = 0, audit_error = 0, r = -error;

        *j->slot = NULL;
        if (j->pid > 0) {
                if (error != 0)
                        (void) kill(j->pid, SIGKILL);
                /* EOF means the child is exiting: this wait is short. */
                if (waitpid(j->pid, &status, 0) == j->pid && error == 0 &&
                    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                        r = -EIO;
                        why = "the audit process failed";
                }
                j->pid = 0;
        }
        if (r == 0 && j->truncated) {
                r = -E2BIG;
                why = "the findings are too large";
        }
        if (r == 0) {
                r = finding_list_from_stream(j->buf, j->n, &findings, &audit_error);
                if (r < 0)
                        why = "the audit process sent malformed output";
                else if (audit_error > 0)
                        r = -audit_error;
        }
        if (r < 0 && !why)
                log_warning_errno(r, "Check() failed");
        else if (r < 0)
                log_warning("Check() failed: %s", why);
        for (size_t i = 0; i < j->n_callers; i++) {
                if (r < 0)
                        reply_error(j->callers[i], -r, why);
                else if (reply_findings(j->callers[i], &findings) < 0)
                        reply_error(j->callers[i], ENOMEM, NULL);
        }
        job_free(j);
}

static int on_child_output(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        CheckJob *j = userdata;

        for (;;) {
                char chunk[16384];
                ssize_t k = read(fd, chunk, sizeof(chunk));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return 0;
                if (k < 0) {
                        job_finish(j, errno, NULL);
                        return 0;
                }
                if (k == 0) {
                        job_finish(j, 0, NULL);
                        return 0;
                }
                if (j->n + (size_t) k > CHECK_OUTPUT_MAX) {
                        j->truncated = true;
                        continue; /* drain, so the child can exit */
                }
                if (array_grow(&j->buf, &j->allocated, j->n + (size_t) k) < 0) {
                        job_finish(j, ENOMEM, NULL);
                        return 0;
                }
                memcpy(j->buf + j->n, chunk, (size_t) k);
                j->n += (size_t) k;
        }
}

static int on_child_timeout(sd_event_source *source, uint64_t usec, void *userdata) {
        job_finish(userdata, ETIMEDOUT, "the audit took longer than 10 s (a task stuck in D state?); try again");
        return 0;
}

/* The old way, for when fork() fails. */
static int check_in_line(Manager *m, sd_bus_message *call) {
        _cleanup_finding_list_ FindingList findings = FINDING_LIST_EMPTY;
        int r = audit_run(m->host, m->posture, &m->table, &findings);

        if (r < 0) {
                reply_error(call, -r, NULL);
                return 1;
        }
        r = reply_findings(call, &findings);
        return r < 0 ? r : 1;
}

int check_job_submit(CheckJob **slot, Manager *m, sd_bus_message *call) {
        CheckJob *j = *slot;
        int fds[2], r;

        if (!j) {
                j = calloc(1, sizeof(*j));
                if (!j)
                        return -ENOMEM;
                j->manager = m;
                j->slot = slot;
                j->fd = -1;
                if (pipe2(fds, O_CLOEXEC) < 0) {
                        free(j);
                        return check_in_line(m, call);
                }
                j->pid = fork();
                if (j->pid < 0) {
                        log_warning_errno(errno, "Cannot fork the audit, running it on the event loop");
                        safe_close(fds[0]);
                        safe_close(fds[1]);
                        free(j);
                        return check_in_line(m, call);
                }
                if (j->pid == 0) {
                        safe_close(fds[0]);
                        child_run(m, fds[1]);
                }
                safe_close(fds[1]);
                j->fd = fds[0];
                (void) fcntl(j->fd, F_SETFL, fcntl(j->fd, F_GETFL) | O_NONBLOCK);
                r = sd_event_add_io(m->event, &j->io, j->fd, EPOLLIN, on_child_output, j);
                if (r >= 0)
                        r = sd_event_add_time_relative(m->event, &j->timer, CLOCK_MONOTONIC, CHECK_TIMEOUT_USEC, 0,
                                                       on_child_timeout, j);
                if (r < 0) {
                        job_free(j);
                        return check_in_line(m, call);
                }
                *slot = j;
        }
        if (array_grow(&j->callers, &j->allocated_callers, j->n_callers + 1) < 0)
                return -ENOMEM;
        j->callers[j->n_callers++] = sd_bus_message_ref(call);
        return 1; /* answered later */
}

void check_job_abandon(CheckJob **slot) {
        job_free(TAKE_PTR(*slot));
}
