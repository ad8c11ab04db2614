/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging to the journal or stderr. The only process-wide state in the library: where
 * logs go is a property of the process, like the stderr it replaces. */
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <endian.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log/log.h"
#include "basic/util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static const EventInfo events[_EVENT_ID_MAX] = {
        [EVENT_DRIFT] = { "f04069d9094949389d6cd603580a168f", "drift", LOG_WARNING },
        [EVENT_CORRECTED] = { "fabaec5540894c8f892a78f8fcca5b77", "corrected", LOG_NOTICE },
        [EVENT_CORRECTION_FAILED] = { "961a95a2e0124643a8f5d7412069c374", "correction-failed", LOG_ERR },
        [EVENT_UNSUPPORTED] = { "ef3e9aebf3a741b495409f9a30a18179", "unsupported", LOG_WARNING },
        [EVENT_UNMOVABLE] = { "47ac721808a54ca4862384a8de3d47ed", "unmovable", LOG_WARNING },
        [EVENT_FIGHT] = { "7c8f13bfd92945dca46d033877c5c682", "fight", LOG_WARNING },
        [EVENT_FIGHT_ENDED] = { "d671d95df5e847409958b0185874a8d6", "fight-ended", LOG_INFO },
        [EVENT_RECOVERED] = { "eceb09c4bbb8407ca69360df3363c275", "recovered", LOG_INFO },
        [EVENT_CLAMPED] = { "603e6472caf34ceaaddaaa3df218cd3a", "clamped", LOG_NOTICE },
        [EVENT_STARTED] = { "be656bd3ee70446a8fe73981a0733db1", "started", LOG_INFO },
        [EVENT_RELOADED] = { "5e183a2eaaac40d6b6fc3c19b6e5d7bd", "reloaded", LOG_INFO },
        [EVENT_RELOAD_FAILED] = { "07d08d0b39ac4007b501c84afc780328", "reload-failed", LOG_ERR },
        [EVENT_STOPPING] = { "325120340cd6432d9d6865d7704385de", "stopping", LOG_INFO },
        [EVENT_RESTORED] = { "cf6e9f4ca18d4057b7e64fc4d170dd0d", "restored", LOG_NOTICE },
        [EVENT_IRQ_WRITER] = { "9d0feb6bc8ff47ad85b710377c55b0f8", "irq-writer", LOG_WARNING },
        [EVENT_NOISE_IRQ] = { "91c147c8955f4a67a47d5e7c8e5fc632", "noise-irq", LOG_WARNING },
        [EVENT_NOISE_TICK] = { "ba958e4e951048c783f38bb1eea43507", "noise-tick", LOG_WARNING },
        [EVENT_NOISE_UNREADABLE] = { "94c70c596c98481898e685c43c91bdfe", "noise-unreadable", LOG_WARNING },
};

static struct {
        bool journal;
        int max_level;
        int journal_fd;
        uint64_t dropped;
        bool in_drop_report;
} log_state = { false, LOG_INFO, -1, 0, false };

DEFINE_STRING_TABLE_LOOKUP_IN(event, EventId, events, .name);

const EventInfo *event_info(EventId id) {
        return (size_t) id < ELEMENTSOF(events) ? &events[id] : NULL;
}

void log_open(LogTarget target) {
        struct stat st;

        if (target == LOG_TARGET_AUTO)
                log_state.journal = stat(JOURNAL_SOCKET, &st) >= 0 && S_ISSOCK(st.st_mode);
        else
                log_state.journal = target == LOG_TARGET_JOURNAL;
}

void log_set_max_level(int level) {
        log_state.max_level = level;
}

bool log_to_journal(void) {
        return log_state.journal;
}

/* One entry in the journal's native protocol: "KEY=value\n" per field, or, for a value
 * holding a newline, "KEY\n" + little-endian 64-bit length + value + "\n". */
static size_t journal_append_field(char *buf, size_t size, size_t len, const char *field, size_t field_len) {
        const char *eq = memchr(field, '=', field_len);

        if (!eq)
                return len;
        if (!memchr(eq + 1, '\n', field_len - (size_t) (eq + 1 - field))) {
                if (len + field_len + 1 > size)
                        return len;
                memcpy(buf + len, field, field_len);
                buf[len + field_len] = '\n';
                return len + field_len + 1;
        }
        size_t key = (size_t) (eq - field), value = field_len - key - 1;
        uint64_t le = htole64(value);
        if (len + key + 1 + 8 + value + 1 > size)
                return len;
        memcpy(buf + len, field, key);
        buf[len + key] = '\n';
        memcpy(buf + len + key + 1, &le, 8);
        memcpy(buf + len + key + 9, eq + 1, value);
        buf[len + key + 9 + value] = '\n';
        return len + key + 10 + value;
}

/* Sends without blocking: a journal that is stuck or gone must not stall the daemon
 * that holds the host's posture (sd_journal_send() would block on a full socket). What
 * cannot be sent is counted and said once it can be again. */
static void journal_send(const struct iovec *iov, size_t n) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET };
        char buf[16384];
        size_t len = 0;

        if (log_state.journal_fd < 0) {
                log_state.journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (log_state.journal_fd < 0) {
                        log_state.dropped++;
                        return;
                }
        }
        if (log_state.dropped > 0 && !log_state.in_drop_report) {
                char note[128];
                struct iovec d[3];
                int k = snprintf(note, sizeof(note), "MESSAGE=%" PRIu64 " log messages were dropped: the journal was not accepting them",
                                 log_state.dropped);
                uint64_t was = log_state.dropped;
                d[0] = (struct iovec) { note, (size_t) k };
                d[1] = (struct iovec) { (char *) "PRIORITY=4", strlen("PRIORITY=4") };
                d[2] = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=lowlatd", strlen("SYSLOG_IDENTIFIER=lowlatd") };
                log_state.dropped = 0;
                log_state.in_drop_report = true;
                journal_send(d, 3);
                log_state.in_drop_report = false;
                if (log_state.dropped > 0) {
                        /* Still not accepting: keep counting, the entry below is dropped too. */
                        log_state.dropped = was + 1;
                        return;
                }
        }
        for (size_t i = 0; i < n; i++)
                len = journal_append_field(buf, sizeof(buf), len, iov[i].iov_base, iov[i].iov_len);
        if (sendto(log_state.journal_fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                log_state.dropped++;
}

static void log_send(int level, const char *message, const struct iovec *extra, size_t n_extra) {
        /* A name from the host may hold any byte: ESC, C1 controls, bidi overrides, bytes
         * that are not UTF-8. The lines of a message of several stay lines. */
        _cleanup_free_ char *text = text_escape_lines(message);

        if (!text)
                return;
        if (!log_state.journal) {
                fprintf(stderr, "lowlatd: %s\n", text);
                return;
        }

        struct iovec iov[16];
        char priority[] = "PRIORITY=0";
        _cleanup_free_ char *msg = strdup_printf("MESSAGE=%s", text);
        size_t n = 0;

        if (!msg)
                return;
        priority[strlen(priority) - 1] = (char) ('0' + (level & 7));
        iov[n++] = (struct iovec) { msg, strlen(msg) };
        iov[n++] = (struct iovec) { priority, strlen(priority) };
        iov[n++] = (struct iovec) { (char *) "SYSLOG_IDENTIFIER=lowlatd", strlen("SYSLOG_IDENTIFIER=lowlatd") };
        for (size_t i = 0; i < n_extra && n < ELEMENTSOF(iov); i++)
                iov[n++] = extra[i];
        journal_send(iov, n);
}

int log_internal(int level, int error, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int saved = errno;

        if (error < 0)
                error = -error;
        if (level > log_state.max_level)
                return -error;
        va_start(ap, fmt);
        text = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!text)
                return -error;
        if (error > 0) {
                char *with = strdup_printf("%s: %s", text, strerror(error));
                if (with) {
                        free(text);
                        text = with;
                }
        }
        log_send(level, text, NULL, 0);
        errno = saved;
        return -error;
}

/* "NAME=value", the value escaped as MESSAGE is, line feeds too. */
static char *field(const char *name, const char *value) {
        _cleanup_free_ char *text = text_escape(value ?: "");

        return text ? strdup_printf("%s=%s", name, text) : NULL;
}

/* "NAME_RAW=" and value's bytes in hex, when field() had to escape it; NULL when value is
 * shown as it is (or out of memory). */
static char *field_raw(const char *name, const char *value) {
        _cleanup_free_ char *text = text_escape(value);
        size_t prefix = strlen(name) + strlen("_RAW="), len = strlen(value);
        char *raw;

        if (!text || streq(text, value) || !(raw = malloc(prefix + 2 * len + 1)))
                return NULL;
        sprintf(raw, "%s_RAW=", name);
        for (size_t i = 0; i < len; i++)
                sprintf(raw + prefix + 2 * i, "%02x", (unsigned char) value[i]);
        return raw;
}

static void log_event_fields(EventId id, const char *message, const Setting *s, const char *observed) {
        const EventInfo *e = event_info(id);
        _cleanup_free_ char *mid = field("MESSAGE_ID", e->message_id);
        _cleanup_free_ char *kind = NULL, *object = NULL, *expected = NULL, *obs = NULL, *error = NULL,
                            *label = NULL, *label_raw = NULL;
        const char *label_field = s ? SETTING_VTABLE(s)->label_field : NULL;
        struct iovec iov[9];
        size_t n = 0;

        if (!mid)
                return;
        iov[n++] = (struct iovec) { mid, strlen(mid) };
        if (s) {
                kind = field("LOWLATD_KIND", setting_kind_to_string(s->kind));
                object = field("LOWLATD_OBJECT", s->object);
                expected = field("LOWLATD_EXPECTED", s->desired);
                obs = field("LOWLATD_OBSERVED", observed);
                if (!kind || !object || !expected || !obs)
                        return;
                iov[n++] = (struct iovec) { kind, strlen(kind) };
                iov[n++] = (struct iovec) { object, strlen(object) };
                iov[n++] = (struct iovec) { expected, strlen(expected) };
                iov[n++] = (struct iovec) { obs, strlen(obs) };
                if (s->reason && (error = field("LOWLATD_ERROR", s->reason)))
                        iov[n++] = (struct iovec) { error, strlen(error) };
                if (s->label && label_field && (label = field(label_field, s->label)))
                        iov[n++] = (struct iovec) { label, strlen(label) };
                if (s->label && label_field && (label_raw = field_raw(label_field, s->label)))
                        iov[n++] = (struct iovec) { label_raw, strlen(label_raw) };
        }
        if (e->priority <= log_state.max_level)
                log_send(e->priority, message, iov, n);
}

void log_setting_event(EventId id, const Setting *s, const char *observed_text) {
        _cleanup_free_ char *message = NULL;
        const char *observed = observed_text ?: "(unreadable)";
        char what[512];

        if (setting_describe(s, what, sizeof(what)) < 0 && what[0] == '\0')
                return;

        switch (id) {
        case EVENT_DRIFT:
                message = strdup_printf("%s drifted: expected %s, found %s", what, s->desired, observed);
                break;
        case EVENT_CORRECTED:
                message = strdup_printf("%s corrected to %s", what, s->desired);
                break;
        case EVENT_CORRECTION_FAILED:
                message = strdup_printf("%s: could not set %s: %s", what, s->desired, s->reason ?: "unknown error");
                break;
        case EVENT_UNSUPPORTED:
                message = strdup_printf("%s unsupported: %s", what, s->reason ?: "not available on this host");
                break;
        case EVENT_UNMOVABLE:
                message = strdup_printf("%s is unmovable, leaving it at %s: %s", what, observed, s->reason ?: "");
                break;
        case EVENT_FIGHT:
                message = strdup_printf("%s keeps being changed back to %s by another writer; correcting at most every %us",
                                        what, observed, (unsigned) (FIGHT_BACKOFF_USEC / USEC_PER_SEC));
                break;
        case EVENT_FIGHT_ENDED:
                message = strdup_printf("%s: the other writer stopped; holding %s", what, s->desired);
                break;
        case EVENT_RECOVERED:
                message = strdup_printf("%s is back at %s", what, observed);
                break;
        case EVENT_CLAMPED:
                message = strdup_printf("%s clamped to %s (%s)", what, s->desired, s->clamped ?: "what the host offers");
                break;
        default:
                message = strdup_printf("%s: %s", what, event_to_string(id) ?: "?");
                break;
        }
        if (message)
                log_event_fields(id, message, s, observed_text);
}

void log_irq_writer(const char *writer, const char *irqs, unsigned n, unsigned window_sec, const char *isolated) {
        const EventInfo *e = event_info(EVENT_IRQ_WRITER);
        _cleanup_free_ char *message = NULL, *mid = field("MESSAGE_ID", e->message_id),
                            *kind = field("LOWLATD_KIND", "irq_affinity"), *list = field("LOWLATD_IRQS", irqs),
                            *who = writer ? field("LOWLATD_WRITER", writer) : NULL,
                            *cpus = field("LOWLATD_ISOLATED", isolated);
        struct iovec iov[5];
        size_t k = 0;

        if (writer)
                message = strdup_printf("Another program is rewriting IRQ affinities: %u IRQs (%s) moved "
                                        "within %us, and %s is running; ban CPUs %s in it "
                                        "(IRQBALANCE_BANNED_CPULIST=%s) or stop it",
                                        n, irqs, window_sec, writer, isolated, isolated);
        else
                message = strdup_printf("Another program is rewriting IRQ affinities: %u IRQs (%s) moved "
                                        "within %us; no known IRQ balancer is running, look for a script or a tool "
                                        "writing /proc/irq/*/smp_affinity",
                                        n, irqs, window_sec);
        if (!message || !mid || !kind || !list || !cpus || (writer && !who))
                return;
        iov[k++] = (struct iovec) { mid, strlen(mid) };
        iov[k++] = (struct iovec) { kind, strlen(kind) };
        iov[k++] = (struct iovec) { list, strlen(list) };
        iov[k++] = (struct iovec) { cpus, strlen(cpus) };
        if (who)
                iov[k++] = (struct iovec) { who, strlen(who) };
        if (e->priority <= log_state.max_level)
                log_send(e->priority, message, iov, k);
}

/* Sends message with the fields given (each "NAME=value", NULL when it could not be
 * made: then nothing is sent), and frees them. */
static void log_send_fields(int priority, const char *message, char **fields, size_t n) {
        struct iovec iov[13];
        bool complete = message && n <= ELEMENTSOF(iov);

        for (size_t i = 0; i < n && complete; i++) {
                complete = fields[i] != NULL;
                if (complete)
                        iov[i] = (struct iovec) { fields[i], strlen(fields[i]) };
        }
        if (complete && priority <= log_state.max_level)
                log_send(priority, message, iov, n);
        for (size_t i = 0; i < n; i++)
                free(fields[i]);
}

/* "; 3 more like it (40 interrupts) held back since the last report, ...", or "". */
static char *noise_held_back(const NoiseAlert *a, const char *unit, uint64_t alert_interval_usec) {
        _cleanup_free_ char *every = format_duration_usec(alert_interval_usec);

        if (a->suppressed == 0)
                return strdup("");
        return strdup_printf("; %" PRIu64 " more like it (%" PRIu64 " %s) held back since the last report, which is "
                             "repeated at most every %s",
                             a->suppressed, a->suppressed_count, unit, every ?: "?");
}

/* The numbers an alert carries, as field values. */
typedef struct NoiseNumbers {
        char cpu[16], count[24], rate[32], interval[24], suppressed[24], suppressed_count[24], expected[16];
} NoiseNumbers;

static void noise_numbers(const NoiseAlert *a, const NoiseAlertPolicy *p, uint64_t interval_usec, NoiseNumbers *ret) {
        snprintf(ret->cpu, sizeof(ret->cpu), "%u", a->cpu);
        snprintf(ret->count, sizeof(ret->count), "%" PRIu64, a->count);
        snprintf(ret->rate, sizeof(ret->rate), "%.3f", a->rate);
        snprintf(ret->interval, sizeof(ret->interval), "%" PRIu64, interval_usec);
        snprintf(ret->suppressed, sizeof(ret->suppressed), "%" PRIu64, a->suppressed);
        snprintf(ret->suppressed_count, sizeof(ret->suppressed_count), "%" PRIu64, a->suppressed_count);
        snprintf(ret->expected, sizeof(ret->expected), "%" PRIu32, p->tick_rate_max);
}

static void log_noise_irq(const NoiseAlert *a, const NoiseAlertPolicy *p, uint64_t interval_usec, bool isolated) {
        const EventInfo *e = event_info(EVENT_NOISE_IRQ);
        _cleanup_free_ char *held = noise_held_back(a, "interrupts", p->interval_usec), *message = NULL;
        const char *d = a->row->description;
        NoiseNumbers v;

        noise_numbers(a, p, interval_usec, &v);
        /* The raw field last: there only when the name had to be escaped. */
        char *raw = field_raw("LOWLATD_DESCRIPTION", d);
        char *f[] = {
                field("MESSAGE_ID", e->message_id),
                field("LOWLATD_KIND", "noise"),
                field("LOWLATD_CPU", v.cpu),
                field("LOWLATD_SOURCE", a->row->source),
                field("LOWLATD_DESCRIPTION", d),
                field("LOWLATD_COUNT", v.count),
                field("LOWLATD_RATE", v.rate),
                field("LOWLATD_INTERVAL_USEC", v.interval),
                field("LOWLATD_SUPPRESSED", v.suppressed),
                field("LOWLATD_SUPPRESSED_COUNT", v.suppressed_count),
                raw,
        };
        message = strdup_printf("IRQ %s%s%s%s was serviced %" PRIu64 " times on %s CPU %u in the last %.1fs%s",
                                a->row->source, *d ? " (" : "", d, *d ? ")" : "", a->count,
                                isolated ? "isolated" : "watched", a->cpu, (double) interval_usec / 1e6, held ?: "");
        log_send_fields(e->priority, held ? message : NULL, f, ELEMENTSOF(f) - !raw);
}

static void log_noise_tick(const NoiseAlert *a, const NoiseAlertPolicy *p, uint64_t interval_usec) {
        const EventInfo *e = event_info(EVENT_NOISE_TICK);
        _cleanup_free_ char *held = noise_held_back(a, "ticks", p->interval_usec), *message = NULL;
        NoiseNumbers v;

        noise_numbers(a, p, interval_usec, &v);
        char *f[] = {
                field("MESSAGE_ID", e->message_id),
                field("LOWLATD_KIND", "noise"),
                field("LOWLATD_CPU", v.cpu),
                field("LOWLATD_SOURCE", a->row->source),
                field("LOWLATD_COUNT", v.count),
                field("LOWLATD_RATE", v.rate),
                field("LOWLATD_EXPECTED", v.expected),
                field("LOWLATD_INTERVAL_USEC", v.interval),
                field("LOWLATD_SUPPRESSED", v.suppressed),
                field("LOWLATD_SUPPRESSED_COUNT", v.suppressed_count),
        };
        message = strdup_printf("CPU %u (nohz_full, running a single task) took %.1f timer ticks/s over the last %.1fs, "
                                "more than the expected %" PRIu32 "/s: its tick did not stop%s",
                                a->cpu, a->rate, (double) interval_usec / 1e6, p->tick_rate_max, held ?: "");
        log_send_fields(e->priority, held ? message : NULL, f, ELEMENTSOF(f));
}

void log_noise_alert(const NoiseAlert *a, const NoiseAlertPolicy *p, uint64_t interval_usec, bool isolated) {
        if (a->kind == NOISE_ALERT_TICK)
                log_noise_tick(a, p, interval_usec);
        else
                log_noise_irq(a, p, interval_usec, isolated);
}

void log_event(EventId id, const char *fmt, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;

        va_start(ap, fmt);
        message = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (message)
                log_event_fields(id, message, NULL, NULL);
}
