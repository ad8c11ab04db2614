/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool netlink against the real kernel, in a network namespace of the test's own: a veth
 * pair for features, channels and the unsupported paths, a tap device for coalescing.
 * Needs root; exits 77 (skip) saying why when it cannot set that up. */
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "host/ethtool.h"
#include "tap.h"
#include "basic/util.h"

#define NOTIFICATION_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define MAX_FD_SCANNED 1024

static int skip(const char *format, ...) _printf_(1, 2);
static int skip(const char *format, ...) {
        va_list ap;

        printf("1..0 # SKIP ");
        va_start(ap, format);
        vprintf(format, ap);
        va_end(ap);
        printf("\n");
        return 77;
}

/* Runs a shell command with its output discarded; returns its exit status. */
static int run(const char *command) {
        _cleanup_free_ char *quiet = strdup_printf("%s >/dev/null 2>&1", command);
        int status;

        if (!quiet)
                return -ENOMEM;
        status = system(quiet);
        if (status < 0)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -EIO;
}

static char *command_output(const char *command) {
        char *text = NULL, chunk[4096];
        size_t size = 0, n;
        FILE *pipe, *out;

        pipe = popen(command, "r");
        if (!pipe)
                return NULL;
        out = open_memstream(&text, &size);
        if (!out) {
                pclose(pipe);
                return NULL;
        }
        while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
                fwrite(chunk, 1, n, out);
        pclose(pipe);
        fclose(out);
        return text;
}

/* The first word after "key" on the first line (after any indentation) that starts with
 * it, as in "generic-receive-offload: on" or "rx-frames: 8"; NULL when there is none. */
static char *output_value(const char *output, const char *key) {
        size_t k = strlen(key);

        for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                const char *p = line + strspn(line, " \t");
                if (strncmp(p, key, k) != 0)
                        continue;
                p += k;
                p += strspn(p, " \t");
                return strndup(p, strcspn(p, " \t\n"));
        }
        return NULL;
}

/* ethtool's view, e.g. ethtool_says("ethtool -k veth0", NULL, "generic-receive-offload:"). */
static char *ethtool_says(const char *command, const char *section, const char *key) {
        _cleanup_free_ char *output = command_output(command);
        const char *from = output;

        if (output && section)
                from = strstr(output, section);
        return from ? output_value(from, key) : NULL;
}

static const char *strna(const char *s) {
        return s ? s : "(none)";
}

static uint64_t now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

typedef struct Expected {
        int ifindex;
        EthtoolGroup group;
        bool seen;
        unsigned count;
} Expected;

static void on_notification(void *userdata, int ifindex, EthtoolGroup group) {
        Expected *e = userdata;

        e->count++;
        if (ifindex == e->ifindex && group == e->group)
                e->seen = true;
}

/* Polls the monitor fd, as the event loop would, until the expected notification came. */
static int wait_for_notification(EthtoolClient *c, Expected *e) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + NOTIFICATION_TIMEOUT_USEC;

        while (!e->seen) {
                struct pollfd p = { .fd = ethtool_monitor_fd(c), .events = POLLIN };
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                int r;

                if (now >= deadline)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) ((deadline - now) / USEC_PER_MSEC) + 1);
                if (r < 0 && errno != EINTR)
                        return -errno;
                r = ethtool_monitor_dispatch(c, on_notification, e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void drain(EthtoolClient *c) {
        (void) ethtool_monitor_dispatch(c, NULL, NULL);
}

static void test_names(void) {
        bool round_trip = true;

        for (EthtoolParam p = 0; p < _ETHTOOL_PARAM_MAX; p++)
                if (ethtool_param_from_string(ethtool_param_to_string(p)) != p)
                        round_trip = false;
        CHECK(round_trip, "every parameter's name reads back as that parameter");
        CHECK(ethtool_param_from_string("rx_frames") == ETHTOOL_PARAM_RX_FRAMES, "rx_frames");
        CHECK(ethtool_param_from_string("rx-frames") == _ETHTOOL_PARAM_INVALID, "ethtool(8)'s spelling is not a key");
        CHECK(ethtool_param_from_string(NULL) == _ETHTOOL_PARAM_INVALID, "NULL is no parameter");
        CHECK(ethtool_param_to_string(_ETHTOOL_PARAM_MAX) == NULL, "past the end has no name");
        CHECK(ethtool_param_group(ETHTOOL_PARAM_TX_RING) == ETHTOOL_GROUP_RINGS, "tx_ring is a ring");
        CHECK(ethtool_param_group(ETHTOOL_PARAM_COMBINED_CHANNELS) == ETHTOOL_GROUP_CHANNELS,
              "combined_channels is a channel count");
        CHECK(ethtool_param_is_boolean(ETHTOOL_PARAM_ADAPTIVE_TX) && !ethtool_param_is_boolean(ETHTOOL_PARAM_RX_USECS),
              "adaptive_tx is on/off, rx_usecs a number");
}

static void test_client(EthtoolClient **ret) {
        bool open_before[MAX_FD_SCANNED], all_cloexec = true;
        unsigned new_fds = 0;
        int fd, flags, size = 0;
        socklen_t length = sizeof(size);

        CHECK(ethtool_client_free(NULL) == NULL, "ethtool_client_free(NULL) is a no-op");
        for (fd = 0; fd < MAX_FD_SCANNED; fd++)
                open_before[fd] = fcntl(fd, F_GETFD) >= 0;
        CHECK(ethtool_client_new(ret) == 0, "a client opens (family and monitor group resolved)");
        if (!*ret)
                return;
        for (fd = 0; fd < MAX_FD_SCANNED; fd++) {
                flags = fcntl(fd, F_GETFD);
                if (flags < 0 || open_before[fd])
                        continue;
                new_fds++;
                if (!(flags & FD_CLOEXEC))
                        all_cloexec = false;
        }
        CHECK(new_fds == 2 && all_cloexec, "two sockets, both O_CLOEXEC");
        fd = ethtool_monitor_fd(*ret);
        CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK, "the monitor socket does not block");
        /* The kernel reports twice what was set (the bookkeeping overhead). */
        CHECK(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &length) == 0 && size >= 1024 * 1024,
              "the monitor socket has a receive buffer of at least 1 MiB");
}

static void test_features(EthtoolClient *c, int veth) {
        _cleanup_free_ char *off = NULL, *on = NULL, *error = NULL, *fixed = NULL, *unknown = NULL;
        bool active = true, changeable = false;
        int r;

        CHECK(ethtool_get_feature(c, veth, "rx-gro", &active, &changeable, NULL) == 0 && changeable,
              "veth: rx-gro reads back and can be changed");
        CHECK(ethtool_set_feature(c, veth, "rx-gro", false, NULL) == 0, "veth: rx-gro off");
        CHECK(ethtool_get_feature(c, veth, "rx-gro", &active, NULL, NULL) == 0 && !active, "veth: rx-gro reads off");
        off = ethtool_says("ethtool -k veth0", NULL, "generic-receive-offload:");
        CHECK_STR(off, "off", "ethtool -k veth0 agrees: generic-receive-offload off");
        CHECK(ethtool_set_feature(c, veth, "rx-gro", true, NULL) == 0, "veth: rx-gro on");
        CHECK(ethtool_get_feature(c, veth, "rx-gro", &active, NULL, NULL) == 0 && active, "veth: rx-gro reads on");
        on = ethtool_says("ethtool -k veth0", NULL, "generic-receive-offload:");
        CHECK_STR(on, "on", "ethtool -k veth0 agrees: generic-receive-offload on");

        /* rx-gro-hw is outside veth's hw_features: the kernel drops the request with
         * success and says so only in the SET reply. */
        CHECK(ethtool_get_feature(c, veth, "rx-gro-hw", &active, &changeable, NULL) == 0 && !changeable && !active,
              "veth: rx-gro-hw is fixed off");
        r = ethtool_set_feature(c, veth, "rx-gro-hw", true, &fixed);
        CHECK(r == -EOPNOTSUPP && fixed && strstr(fixed, "fixed"),
              "veth: turning rx-gro-hw on is unsupported, saying why");
        printf("#   reason: %s\n", strna(fixed));
        CHECK(ethtool_set_feature(c, veth, "rx-gro-hw", false, NULL) == 0,
              "veth: asking a fixed feature for what it already is succeeds");

        r = ethtool_get_feature(c, veth, "rx-no-such-feature", &active, &changeable, &unknown);
        CHECK(r == -ENOENT && !unknown, "an unknown feature name is -ENOENT (no kernel message)");
        CHECK(ethtool_set_feature(c, veth, "rx-no-such-feature", true, &error) == -ENOENT && !error,
              "setting an unknown feature is -ENOENT");
}

static void test_coalesce_veth(EthtoolClient *c, int veth) {
        _cleanup_free_ char *get_error = NULL, *set_error = NULL;
        uint32_t v = 12345;

        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_RX_USECS, &v, &get_error) == -EOPNOTSUPP && v == 12345,
              "veth: reading rx_usecs is -EOPNOTSUPP, nothing written");
        CHECK(!isempty(get_error), "... with a reason");
        printf("#   reason: %s\n", strna(get_error));
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_RX_USECS, 0, &set_error) == -EOPNOTSUPP,
              "veth: setting rx_usecs is -EOPNOTSUPP");
        CHECK(!isempty(set_error), "... with a reason");
        printf("#   reason: %s\n", strna(set_error));
}

static void test_coalesce_tap(EthtoolClient *c, int tap) {
        _cleanup_free_ char *frames = NULL, *einval = NULL, *absent = NULL;
        uint32_t v = 0;

        CHECK(ethtool_set_param(c, tap, ETHTOOL_PARAM_RX_FRAMES, 8, NULL) == 0, "tap: rx_frames 8");
        CHECK(ethtool_get_param(c, tap, ETHTOOL_PARAM_RX_FRAMES, &v, NULL) == 0 && v == 8, "tap: rx_frames reads 8");
        frames = ethtool_says("ethtool -c tap0", NULL, "rx-frames:");
        CHECK_STR(frames, "8", "ethtool -c tap0 agrees: rx-frames 8");

        /* tun supports rx-frames only; the kernel refuses the rest with a message. */
        CHECK(ethtool_set_param(c, tap, ETHTOOL_PARAM_RX_USECS, 5, &einval) == -EINVAL && einval &&
                      strstr(einval, "unsupported parameter"),
              "tap: rx_usecs is -EINVAL with the kernel's message");
        printf("#   kernel: %s\n", strna(einval));
        CHECK(ethtool_get_param(c, tap, ETHTOOL_PARAM_RX_USECS, &v, &absent) == -EOPNOTSUPP && !isempty(absent),
              "tap: rx_usecs is absent from the reply: -EOPNOTSUPP with a reason");
        printf("#   reason: %s\n", strna(absent));
        CHECK(ethtool_set_param(c, tap, ETHTOOL_PARAM_ADAPTIVE_RX, 2, NULL) == -EINVAL,
              "adaptive_rx takes 0 or 1 only");
}

static void test_channels_veth(EthtoolClient *c, int veth) {
        _cleanup_free_ char *rx = NULL, *too_many = NULL, *combined = NULL, *no_combined = NULL;
        uint32_t v = 0;

        /* The pair was made with 4 queues each way; veth reports rx and tx, no combined. */
        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_RX_CHANNELS, &v, NULL) == 0 && v == 4, "veth: 4 rx channels");
        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_TX_CHANNELS, &v, NULL) == 0 && v == 4, "veth: 4 tx channels");
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_RX_CHANNELS, 2, NULL) == 0, "veth: rx channels 2");
        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_RX_CHANNELS, &v, NULL) == 0 && v == 2,
              "veth: rx channels read 2");
        rx = ethtool_says("ethtool -l veth0", "Current hardware settings:", "RX:");
        CHECK_STR(rx, "2", "ethtool -l veth0 agrees: RX 2");
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_RX_CHANNELS, 8, &too_many) == -EINVAL && !isempty(too_many),
              "veth: 8 rx channels (max 4) is -EINVAL with the kernel's message");
        printf("#   kernel: %s\n", strna(too_many));
        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_COMBINED_CHANNELS, &v, &no_combined) == -EOPNOTSUPP,
              "veth: no combined channels reported: -EOPNOTSUPP");
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_COMBINED_CHANNELS, 1, &combined) == -EINVAL &&
                      !isempty(combined),
              "veth: combined channels 1 is -EINVAL with the kernel's message");
        printf("#   kernel: %s\n", strna(combined));
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_RX_CHANNELS, 4, NULL) == 0, "veth: rx channels back to 4");
}

static void test_rings_veth(EthtoolClient *c, int veth) {
        _cleanup_free_ char *get_error = NULL, *set_error = NULL;
        uint32_t v;

        CHECK(ethtool_get_param(c, veth, ETHTOOL_PARAM_RX_RING, &v, &get_error) == -EOPNOTSUPP && !isempty(get_error),
              "veth: reading rings is -EOPNOTSUPP with a reason");
        CHECK(ethtool_set_param(c, veth, ETHTOOL_PARAM_RX_RING, 256, &set_error) == -EOPNOTSUPP && !isempty(set_error),
              "veth: setting rings is -EOPNOTSUPP with a reason");
        printf("#   reason: %s\n", strna(set_error));
}

static void test_gone(EthtoolClient *c) {
        _cleanup_free_ char *get_error = NULL, *set_error = NULL;
        bool active;
        int gone;

        if (run("ip link add vgone0 type veth peer name vgone1") != 0) {
                CHECK(false, "ip link add vgone0");
                return;
        }
        gone = (int) if_nametoindex("vgone0");
        CHECK(gone > 0 && run("ip link del vgone0") == 0, "a veth made and deleted again");
        CHECK(ethtool_get_feature(c, gone, "rx-gro", &active, NULL, &get_error) == -ENODEV && !isempty(get_error),
              "a deleted ifindex is -ENODEV with the kernel's message");
        printf("#   kernel: %s\n", strna(get_error));
        CHECK(ethtool_set_param(c, gone, ETHTOOL_PARAM_RX_FRAMES, 1, &set_error) == -ENODEV,
              "setting on a deleted ifindex is -ENODEV");
}

/* If a SET left its ACK queued, the next GET would take that ACK for its own answer (or
 * read the previous reply); values that differ from one pair to the next make any such
 * mix-up show. (tun caps rx-frames at NAPI_POLL_WEIGHT, 64.) */
static void test_no_queued_ack(EthtoolClient *c, int veth, int tap) {
        unsigned wrong = 0, failed = 0;

        for (uint32_t i = 0; i < 100; i++) {
                uint32_t v = 0, frames = i % 60 + 1;
                bool active = false, want = i % 2;

                if (ethtool_set_param(c, tap, ETHTOOL_PARAM_RX_FRAMES, frames, NULL) < 0 ||
                    ethtool_get_param(c, tap, ETHTOOL_PARAM_RX_FRAMES, &v, NULL) < 0 ||
                    ethtool_set_feature(c, veth, "rx-gro", want, NULL) < 0 ||
                    ethtool_get_feature(c, veth, "rx-gro", &active, NULL, NULL) < 0)
                        failed++;
                else if (v != frames || active != want)
                        wrong++;
        }
        CHECK(failed == 0 && wrong == 0, "100 SET/GET pairs each get their own answer");
        if (failed || wrong)
                printf("#   %u failed, %u read something else\n", failed, wrong);
}

static void test_monitor(EthtoolClient *c, int veth, int tap) {
        Expected features = { .ifindex = veth, .group = ETHTOOL_GROUP_FEATURES };
        Expected coalesce = { .ifindex = tap, .group = ETHTOOL_GROUP_COALESCE };
        Expected channels = { .ifindex = veth, .group = ETHTOOL_GROUP_CHANNELS };

        /* The kernel notifies changes only: start from values the commands below change. */
        CHECK(ethtool_set_feature(c, veth, "rx-gro", false, NULL) == 0 &&
                      ethtool_set_param(c, tap, ETHTOOL_PARAM_RX_FRAMES, 8, NULL) == 0,
              "starting point: rx-gro off, rx_frames 8");
        drain(c);

        CHECK(run("ethtool -K veth0 rx-gro on") == 0, "ethtool -K veth0 rx-gro on");
        CHECK(wait_for_notification(c, &features) == 0, "... arrives as FEATURES_NTF for veth0");
        CHECK(run("ethtool -C tap0 rx-frames 4") == 0, "ethtool -C tap0 rx-frames 4");
        CHECK(wait_for_notification(c, &coalesce) == 0, "... arrives as COALESCE_NTF for tap0");
        CHECK(run("ethtool -L veth0 rx 3") == 0, "ethtool -L veth0 rx 3");
        CHECK(wait_for_notification(c, &channels) == 0, "... arrives as CHANNELS_NTF for veth0");
}

/* Thousands of changes while nobody reads the monitor overflow even 1 MiB: the caller
 * must hear it (-ENOBUFS, resync), and the socket must keep working afterwards. */
static void test_monitor_overrun(EthtoolClient *c, int veth) {
        Expected after = { .ifindex = veth, .group = ETHTOOL_GROUP_FEATURES };
        unsigned failed = 0;
        int r;

        drain(c);
        for (unsigned i = 0; i < 3000; i++)
                if (ethtool_set_feature(c, veth, "rx-gro", i % 2, NULL) < 0)
                        failed++;
        CHECK(failed == 0, "3000 rx-gro flips");
        r = ethtool_monitor_dispatch(c, NULL, NULL);
        CHECK(r == -ENOBUFS, "the overrun is reported as -ENOBUFS");
        CHECK(ethtool_monitor_dispatch(c, NULL, NULL) == 0, "... once");
        /* The last flip left rx-gro on. */
        CHECK(ethtool_set_feature(c, veth, "rx-gro", false, NULL) == 0 && wait_for_notification(c, &after) == 0,
              "notifications flow again after the overrun");
}

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

/* The floor for drift correction: one FEATURES_GET request, reply and ACK. */
static void bench_features_get(EthtoolClient *c, int veth) {
        enum { N = 1000 };
        uint64_t t[N];
        unsigned failed = 0;
        bool active;

        for (unsigned i = 0; i < N; i++) {
                uint64_t start = now_nsec();
                if (ethtool_get_feature(c, veth, "rx-gro", &active, NULL, NULL) < 0)
                        failed++;
                t[i] = now_nsec() - start;
        }
        qsort(t, N, sizeof(t[0]), compare_u64);
        CHECK(failed == 0, "benchmark: 1000 FEATURES_GET round trips");
        printf("# FEATURES_GET round trip over %d requests: median %.1f us, p99 %.1f us, min %.1f us\n", N,
               (double) t[N / 2] / 1000.0, (double) t[N * 99 / 100 - 1] / 1000.0, (double) t[0] / 1000.0);
}

int main(void) {
        _cleanup_(ethtool_client_freep) EthtoolClient *c = NULL;
        int veth, tap;

        if (geteuid() != 0)
                return skip("needs root (a network namespace, veth and tap devices)");
        if (unshare(CLONE_NEWNET) < 0)
                return skip("unshare(CLONE_NEWNET) failed: %s", strerror(errno));
        if (run("command -v ip") != 0 || run("command -v ethtool") != 0)
                return skip("the ip and ethtool commands are needed");
        if (run("ip link add veth0 numtxqueues 4 numrxqueues 4 type veth peer name veth1 numtxqueues 4 "
                "numrxqueues 4") != 0)
                return skip("cannot create a veth pair (no veth driver?)");
        if (run("ip tuntap add dev tap0 mode tap") != 0)
                return skip("cannot create a tap device (no /dev/net/tun?)");
        if (run("ip link set veth0 up") != 0 || run("ip link set veth1 up") != 0 || run("ip link set tap0 up") != 0)
                return skip("cannot bring the test links up");
        veth = (int) if_nametoindex("veth0");
        tap = (int) if_nametoindex("tap0");
        if (veth <= 0 || tap <= 0)
                return skip("the test links have no ifindex");

        test_names();
        test_client(&c);
        if (!c)
                return tap_finish();
        test_features(c, veth);
        test_coalesce_veth(c, veth);
        test_coalesce_tap(c, tap);
        test_channels_veth(c, veth);
        test_rings_veth(c, veth);
        test_gone(c);
        test_no_queued_ack(c, veth, tap);
        test_monitor(c, veth, tap);
        test_monitor_overrun(c, veth);
        if (streq_ptr(getenv("LOWLATD_BENCH"), "1"))
                bench_features_get(c, veth);
        return tap_finish();
}
