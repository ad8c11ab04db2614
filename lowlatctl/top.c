/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lowlatctl top: the watched CPUs' noise live, full screen, like top(1). Plain VT100/ANSI
 * escapes and termios, nothing more, so that it works over SSH, in tmux and on a bare
 * console without a terminfo database; with TERM=dumb or stdout not a terminal it prints
 * plain frames one after the other. Rates are computed here from successive Noise()
 * totals (sampled_usec), so they cover exactly the refresh interval. */
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bus-names.h"
#include "basic/cpuset.h"
#include "noise-view.h"
#include "client.h"
#include "basic/macro.h"
#include "basic/util.h"

#define ESC "\033"

typedef struct Terminal {
        bool fancy;        /* escapes: cursor addressing, alternate screen, highlight */
        bool raw;          /* stdin switched to non-canonical, no echo; saved holds the old */
        bool entered;      /* alternate screen entered, cursor hidden */
        struct termios saved;
        unsigned rows, cols;
} Terminal;

static void terminal_size(Terminal *t) {
        struct winsize ws;

        t->rows = 24;
        t->cols = 80;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
                t->rows = ws.ws_row;
                t->cols = ws.ws_col;
        }
}

static void terminal_setup(Terminal *t) {
        const char *term = getenv("TERM");

        *t = (Terminal) {};
        t->fancy = isatty(STDOUT_FILENO) && !isempty(term) && !streq(term, "dumb");
        terminal_size(t);
        if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0) {
                struct termios raw = t->saved;

                /* Keys one at a time, not echoed. ISIG stays: Ctrl-C is SIGINT, which the
                 * loop hears on its signalfd and answers by restoring the terminal. */
                raw.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
                raw.c_cc[VMIN] = 0;
                raw.c_cc[VTIME] = 0;
                if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
                        t->raw = true;
        }
        if (t->fancy) {
                /* Alternate screen (the shell's screen comes back on exit), cursor hidden. */
                fputs(ESC "[?1049h" ESC "[?25l" ESC "[H" ESC "[2J", stdout);
                fflush(stdout);
                t->entered = true;
        }
}

static void terminal_restore(Terminal *t) {
        if (t->entered) {
                fputs(ESC "[0m" ESC "[?25h" ESC "[?1049l", stdout);
                fflush(stdout);
                t->entered = false;
        }
        if (t->raw) {
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
                t->raw = false;
        }
}

/* ---- A frame ------------------------------------------------------------------------------- */

typedef struct Frame {
        const char *host;
        const char *isolated; /* "" when none */
        const CPUSet *cpus;   /* shown: the isolated ones and every one Noise() reports */
        const NoiseView *view;
        uint64_t interval_usec;
        const char *error;    /* the last refresh failed: why */
} Frame;

/* Appends one screen line: cut to the width (a table line wider than the terminal would
 * wrap and scroll the whole screen), highlighted if asked. */
static void emit_line(FILE *f, const Terminal *t, bool highlight, const char *fmt, ...) _printf_(4, 5);
static void emit_line(FILE *f, const Terminal *t, bool highlight, const char *fmt, ...) {
        _cleanup_free_ char *line = NULL;
        va_list ap;

        va_start(ap, fmt);
        line = strdup_vprintf(fmt, ap);
        va_end(ap);
        if (!line)
                return;
        if (t->fancy) {
                size_t width = 0;
                char *p = line;

                /* Cut at cols code points (UTF-8 continuation bytes take no column). */
                for (; *p; p++)
                        if (((unsigned char) *p & 0xc0) != 0x80 && ++width > t->cols)
                                break;
                *p = '\0';
                fprintf(f, "%s%s" ESC "[0m" ESC "[K\r\n", highlight ? ESC "[1;7m" : "", line);
        } else
                fprintf(f, "%s\n", line);
}

/* The table's columns; the counts right-aligned, as lowlatctl noise shows them. */
enum { TOP_CPU, TOP_NEW, TOP_RATE, TOP_DELTA, TOP_COUNT, TOP_KIND, TOP_SOURCE, TOP_DESCRIPTION, _TOP_COLUMNS };
#define TOP_NUMBERS (1U << TOP_RATE | 1U << TOP_DELTA | 1U << TOP_COUNT)
static const char *const top_headers[_TOP_COLUMNS] = {
        "CPU", " ", "RATE/S", "DELTA", "COUNT", "KIND", "SOURCE", "DESCRIPTION",
};

typedef struct TopCells {
        char cpu[16], rate[64], delta[32], count[32];
        const char *cells[_TOP_COLUMNS];
} TopCells;

static void top_cells(const NoiseViewRow *r, TopCells *c) {
        snprintf(c->cpu, sizeof(c->cpu), "%" PRIu32, r->cpu);
        snprintf(c->rate, sizeof(c->rate), "%.1f", r->rate);
        snprintf(c->delta, sizeof(c->delta), "%" PRIu64, r->delta);
        snprintf(c->count, sizeof(c->count), "%" PRIu64, r->count);
        /* Text from the kernel (IRQ names) is escaped by the cells, as in every table. */
        memcpy(c->cells, (const char *const[_TOP_COLUMNS]) { c->cpu, r->is_new ? "+" : " ", c->rate, c->delta, c->count,
                                                            r->kind, r->source, r->description },
               sizeof(c->cells));
}

/* Every column as wide as its widest cell in the view (the header at least), so a long
 * IRQ name or a count in the billions never pushes the columns apart. */
static void top_widths(const Frame *fr, size_t width[_TOP_COLUMNS]) {
        memset(width, 0, sizeof(size_t) * _TOP_COLUMNS);
        table_measure_row(width, top_headers, _TOP_COLUMNS);
        for (size_t i = 0; fr->view && i < fr->view->n; i++) {
                TopCells c;
                top_cells(&fr->view->rows[i], &c);
                table_measure_row(width, c.cells, _TOP_COLUMNS);
        }
        CPUSET_FOREACH(cpu, fr->cpus) {
                char name[16];
                snprintf(name, sizeof(name), "%d", cpu);
                width[TOP_CPU] = MAX(width[TOP_CPU], strlen(name));
        }
}

/* One line of the table: n cells, the last one not padded. */
static void emit_cells(FILE *f, const Terminal *t, bool highlight, const size_t *width, const char *const *cells,
                       size_t n, unsigned right) {
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        FILE *m = open_memstream(&line, &size);

        if (!m)
                return;
        table_print_row(m, width, cells, n, right);
        if (fclose(m) != 0)
                return;
        line[strcspn(line, "\n")] = '\0';
        emit_line(f, t, highlight, "%s", line);
}

static size_t rows_of_cpu(const NoiseView *v, uint32_t cpu) {
        size_t n = 0;

        for (size_t i = 0; v && i < v->n; i++)
                n += v->rows[i].cpu == cpu;
        return n;
}

static void render(FILE *f, const Terminal *t, const Frame *fr) {
        char now[32] = "?";
        struct tm tm;
        time_t sec = time(NULL);
        _cleanup_free_ char *watched = cpuset_format_list(fr->cpus);
        unsigned n_cpus = cpuset_count(fr->cpus), used = 0, per_cpu = UINT32_MAX;
        /* The screen's lines but the last, plain frames have no limit: every line ends in
         * "\r\n", and a newline on the screen's last line scrolls the header off. */
        unsigned max_lines = t->fancy ? (t->rows > 1 ? t->rows - 1 : 1) : UINT32_MAX;
        double total_rate = 0;
        uint64_t total_delta = 0;
        size_t width[_TOP_COLUMNS];
        char name[16];

        if (localtime_r(&sec, &tm))
                strftime(now, sizeof(now), "%H:%M:%S", &tm);
        for (size_t i = 0; fr->view && i < fr->view->n; i++) {
                total_rate += fr->view->rows[i].rate;
                total_delta += fr->view->rows[i].delta;
        }

        emit_line(f, t, false, "lowlatctl top - %s - %s - every %.1f s%s", fr->host, now,
                  (double) fr->interval_usec / (double) USEC_PER_SEC, t->raw ? " - q quits" : "");
        emit_line(f, t, false, "Isolated CPUs: %s   Watched: %s   Noise: %" PRIu64 " events, %.1f/s", 
                  isempty(fr->isolated) ? "none" : fr->isolated, isempty(watched) ? "none" : watched, total_delta,
                  total_rate);
        if (fr->error)
                emit_line(f, t, true, "lowlatd did not answer: %s", fr->error);
        else if (!fr->view || fr->view->elapsed_usec == 0)
                emit_line(f, t, false, "(first sample: rates from the next refresh)");
        else if (t->fancy) /* plain frames have no empty line but the one between them */
                emit_line(f, t, false, "%s", "");
        top_widths(fr, width);
        emit_cells(f, t, false, width, top_headers, _TOP_COLUMNS, TOP_NUMBERS);
        used = t->fancy || fr->error || !fr->view || fr->view->elapsed_usec == 0 ? 4 : 3;

        if (t->fancy) {
                /* Each CPU gets its share of the screen; its noisiest sources first. */
                unsigned budget = max_lines > used ? max_lines - used : 1;
                per_cpu = n_cpus ? MAX(budget / n_cpus, 2U) : budget;
        }
        if (n_cpus == 0)
                emit_line(f, t, false, "No CPU is watched: no isolated CPUs, and no [noise] cpus= in lowlatd.conf.");
        CPUSET_FOREACH(cpu, fr->cpus) {
                size_t total = rows_of_cpu(fr->view, (uint32_t) cpu), shown = 0;
                unsigned lines = 0;

                if (used >= max_lines)
                        break;
                snprintf(name, sizeof(name), "%d", cpu);
                if (total == 0) {
                        emit_cells(f, t, false, width,
                                   (const char *const[]) { name, " ", "-", "-", "-", "quiet: nothing counted" },
                                   TOP_KIND + 1, TOP_NUMBERS);
                        used++;
                        continue;
                }
                for (size_t i = 0; fr->view && i < fr->view->n; i++) {
                        const NoiseViewRow *r = &fr->view->rows[i];
                        TopCells c;

                        if (r->cpu != (uint32_t) cpu)
                                continue;
                        /* The last line of the CPU's share (or of the screen) says what is left. */
                        if ((lines + 1 >= per_cpu || used + 1 >= max_lines) && shown + 1 < total) {
                                _cleanup_free_ char *more = strdup_printf("... %zu more", total - shown);
                                emit_cells(f, t, false, width, (const char *const[]) { name, " ", more ?: "..." },
                                           TOP_NEW + 2, 0);
                                used++;
                                break;
                        }
                        top_cells(r, &c);
                        emit_cells(f, t, r->is_new, width, c.cells, _TOP_COLUMNS, TOP_NUMBERS);
                        shown++;
                        lines++;
                        used++;
                }
        }
        if (t->fancy)
                fputs(ESC "[J", f); /* clear what the previous, longer frame left below */
        else
                fputc('\n', f);
}

/* ---- The loop ----------------------------------------------------------------------------- */

typedef struct TopState {
        sd_bus *bus;
        NoiseSample samples[2];
        NoiseView views[2];
        unsigned cur; /* index of the newest sample/view */
        bool have;    /* samples[cur] and views[cur] are set */
        char *isolated;
        char *error;
} TopState;

static void top_state_done(TopState *s) {
        for (unsigned i = 0; i < 2; i++) {
                noise_sample_done(&s->samples[i]);
                noise_view_done(&s->views[i]);
        }
        s->isolated = mfree(s->isolated);
        s->error = mfree(s->error);
}

/* Reads Noise() and the isolated CPUs; a failure is kept to be shown, not fatal (lowlatd
 * restarting while top runs). -errno only when even that cannot be done. */
static int top_refresh(TopState *s) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        unsigned next = s->have ? 1 - s->cur : s->cur;
        NoiseSample *sample = &s->samples[next];
        char *isolated = NULL;
        int r;

        noise_sample_done(sample);
        noise_view_done(&s->views[next]);
        s->error = mfree(s->error);

        r = sd_bus_get_property_string(s->bus, BUS_NAME, BUS_PATH, BUS_INTERFACE, "IsolatedCPUs", &error, &isolated);
        if (r >= 0) {
                free(s->isolated);
                s->isolated = isolated;
        }
        sd_bus_error_free(&error);
        r = ctl_call_method(s->bus, "Noise", &error, &reply);
        if (r < 0) {
                s->error = ctl_call_failure(s->bus, "Noise", "Noise", &error, r);
                return s->error ? 0 : -ENOMEM;
        }
        /* The same reader as lowlatctl noise, but quiet: the screen shows the error. */
        r = noise_sample_from_reply(reply, sample);
        if (r < 0) {
                s->error = strdup(strerror(-r));
                return s->error ? 0 : -ENOMEM;
        }
        r = noise_view_compute(s->have ? &s->samples[s->cur] : NULL, s->have ? &s->views[s->cur] : NULL, sample,
                               &s->views[next]);
        if (r < 0)
                return r;
        /* The same cached read twice (within lowlatd's 100 ms): keep the older, so the
         * next rate spans the whole interval. */
        if (s->have && s->views[next].elapsed_usec == 0 && sample->sampled_usec == s->samples[s->cur].sampled_usec)
                return 0;
        s->cur = next;
        s->have = true;
        return 0;
}

static int draw(const Terminal *t, const TopState *s, uint64_t interval_usec, const char *host) {
        _cleanup_cpuset_ CPUSet cpus = {};
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        const NoiseView *view = s->have ? &s->views[s->cur] : NULL;
        FILE *f;

        if (!isempty(s->isolated))
                (void) cpuset_parse_list(s->isolated, &cpus);
        for (size_t i = 0; view && i < view->n; i++)
                if (cpuset_add(&cpus, view->rows[i].cpu) < 0)
                        return -ENOMEM;

        /* One write per frame: no flicker, and a frame is never half on the screen. */
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        if (t->fancy)
                fputs(ESC "[H", f);
        render(f, t,
               &(Frame) {
                       .host = host,
                       .isolated = s->isolated ?: "",
                       .cpus = &cpus,
                       .view = view,
                       .interval_usec = interval_usec,
                       .error = s->error,
               });
        if (fclose(f) != 0)
                return -ENOMEM;
        if (fwrite(buf, 1, size, stdout) != size || fflush(stdout) != 0)
                return -EIO;
        return 0;
}

/* INT, TERM, HUP and WINCH as reads of the returned signalfd, the mask before them in
 * *ret_old_mask; -errno. */
static int signals_block(sigset_t *ret_old_mask) {
        sigset_t mask, old_mask;
        int fd, r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGWINCH);
        if (sigprocmask(SIG_BLOCK, &mask, &old_mask) < 0)
                return negative_errno();
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0) {
                r = negative_errno();
                (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
                return r;
        }
        *ret_old_mask = old_mask;
        return fd;
}

/* A new size is a redraw; any other of signals_block()'s signals quits. */
static void signals_read(int fd, Terminal *t, bool *quit, bool *redraw) {
        struct signalfd_siginfo si;

        while (read(fd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                if (si.ssi_signo == SIGWINCH) {
                        terminal_size(t);
                        *redraw = true;
                } else
                        *quit = true;
        }
}

/* The keys typed since the last read: q quits, Ctrl-L redraws; true when space asked for a
 * refresh now. */
static bool keys_read(bool *quit, bool *redraw) {
        char keys[64];
        ssize_t n = read(STDIN_FILENO, keys, sizeof(keys));
        bool refresh = false;

        if (n == 0) /* the terminal went away */
                *quit = true;
        for (ssize_t i = 0; i < n; i++)
                if (keys[i] == 'q' || keys[i] == 'Q')
                        *quit = true;
                else if (keys[i] == ' ')
                        refresh = true;
                else if (keys[i] == '\f') /* Ctrl-L */
                        *redraw = true;
        return refresh;
}

int top_parse_interval(const char *value, TopArguments *args) {
        /* Seconds, as top(1) takes them ("1.5"), or a duration with its unit. */
        return parse_duration_option("--interval", value, USEC_PER_SEC / 10, 3600 * USEC_PER_SEC,
                                     &args->interval_usec);
}

int top_parse_iterations(const char *value, TopArguments *args) {
        if (parse_unsigned(value, &args->iterations) < 0 || args->iterations == 0) {
                fprintf(stderr, "lowlatctl: --iterations: '%s' is not a positive number\n", value);
                return -EINVAL;
        }
        return 1;
}

int verb_top(sd_bus *bus, const TopArguments *args) {
        _cleanup_(top_state_done) TopState s = { .bus = bus };
        _cleanup_close_ int sfd = -EBADF;
        Terminal t = {};
        sigset_t old_mask;
        char host[256] = "localhost";
        unsigned frames = 0;
        uint64_t next;
        int r, status = EXIT_OK;

        /* The first read before the screen changes: if lowlatd is not there, say so on a
         * normal terminal and exit 3. */
        {
                _cleanup_(noise_sample_done) NoiseSample probe = {};
                r = ctl_read_noise(bus, &probe);
                if (r < 0)
                        return r;
        }
        (void) gethostname(host, sizeof(host) - 1);

        sfd = signals_block(&old_mask);
        if (sfd < 0)
                return sfd;

        terminal_setup(&t);
        next = now_usec(CLOCK_MONOTONIC);
        for (;;) {
                struct pollfd fds[2] = {
                        { .fd = sfd, .events = POLLIN },
                        { .fd = t.raw ? STDIN_FILENO : -1, .events = POLLIN },
                };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                bool quit = false, redraw = false;

                if (now >= next) {
                        r = top_refresh(&s);
                        if (r >= 0)
                                r = draw(&t, &s, args->interval_usec, host);
                        if (r < 0) {
                                status = r;
                                break;
                        }
                        frames++;
                        if (args->iterations > 0 && frames >= args->iterations)
                                break;
                        /* Fixed steps, not "now + interval": the refreshes do not drift. */
                        next += args->interval_usec;
                        if (next <= now)
                                next = now + args->interval_usec;
                }
                now = now_usec(CLOCK_MONOTONIC);
                r = poll(fds, 2, next > now ? (int) MIN((next - now + 999) / 1000, (uint64_t) INT32_MAX) : 0);
                if (r < 0 && errno != EINTR) {
                        status = negative_errno();
                        break;
                }
                if (r > 0 && (fds[0].revents & POLLIN))
                        signals_read(sfd, &t, &quit, &redraw);
                if (r > 0 && (fds[1].revents & (POLLIN | POLLHUP)) && keys_read(&quit, &redraw))
                        next = now; /* refresh now, as top(1) does */
                if (quit)
                        break;
                if (redraw && t.fancy) {
                        fputs(ESC "[2J", stdout);
                        r = draw(&t, &s, args->interval_usec, host);
                        if (r < 0) {
                                status = r;
                                break;
                        }
                }
        }
        terminal_restore(&t);
        (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
        if (status == -EIO) {
                fprintf(stderr, "lowlatctl: cannot write to standard output: %s\n", strerror(errno));
                return EXIT_OUTPUT;
        }
        return status;
}
