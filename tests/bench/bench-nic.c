/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drift-to-correction latency on the ethtool path: an external FEATURES_SET flips rx-gro
 * on a veth, lowlatd (told "gro = off") sees the notification and sets it back. Measured
 * from our SET's ACK to the moment a GET reads "off" again, over many flips, beside the
 * floor: a bare FEATURES_GET round trip in the same run. Also lowlatd's CPU time per
 * correction (scheduler time, in ns), beside the CPU of a bare FEATURES_GET and of a bare
 * FEATURES_SET made by this process on a veth lowlatd leaves alone: the kernel charges a
 * SET's work (the feature change, its notifications) to whoever makes it, so GET + SET
 * is the least any correction costs. Runs in its own network namespace with its own
 * veths; needs root.
 *   LOWLATD=build/daemon/lowlatd bench-nic [FLIPS]        (default 1000) */
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "host/ethtool.h"
#include "basic/util.h"

/* Five corrections of one setting within a minute make a fight, which lowlatd answers by
 * slowing down; spreading the flips over many devices keeps every one a plain drift. */
#define DEVICES 250
#define FLIPS_PER_DEVICE_MAX 4

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

static int write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        fputs(text, f);
        return fclose(f) == 0 ? 0 : -errno;
}

/* Time on a CPU in seconds: the scheduler's own account in ns (schedstat), else the
 * clock ticks of stat, 10 ms coarse. */
static double cpu_seconds_of(const char *schedstat) {
        unsigned long long ns;
        FILE *f = fopen(schedstat, "re");
        int k;

        if (!f)
                return -1;
        k = fscanf(f, "%llu", &ns);
        fclose(f);
        return k == 1 ? (double) ns / 1e9 : -1;
}

static double cpu_seconds(pid_t pid) {
        char path[64], buf[1024];
        unsigned long utime, stime;
        int fd;
        ssize_t n;
        char *p;
        double s;

        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pid);
        s = cpu_seconds_of(path);
        if (s >= 0)
                return s;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strrchr(buf, ')');
        /* fields after ")": state is 3rd; utime 14th, stime 15th overall */
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
                return -1;
        return (double) (utime + stime) / (double) sysconf(_SC_CLK_TCK);
}

typedef struct Seen {
        int ifindex;
        bool hit;
} Seen;

static void on_notify(void *userdata, int ifindex, EthtoolGroup group) {
        Seen *s = userdata;
        if (ifindex == s->ifindex && group == ETHTOOL_GROUP_FEATURES)
                s->hit = true;
}

static int wait_gro_off(EthtoolClient *c, int ifindex, uint64_t deadline_ns) {
        for (;;) {
                Seen seen = { ifindex, false };
                struct pollfd pfd = { ethtool_monitor_fd(c), POLLIN, 0 };
                bool active, changeable;
                uint64_t now = now_ns();

                if (now >= deadline_ns)
                        return -ETIMEDOUT;
                if (poll(&pfd, 1, (int) ((deadline_ns - now) / 1000000 + 1)) < 0 && errno != EINTR)
                        return -errno;
                (void) ethtool_monitor_dispatch(c, on_notify, &seen);
                if (!seen.hit)
                        continue;
                if (ethtool_get_feature(c, ifindex, "rx-gro", &active, &changeable, NULL) >= 0 && !active)
                        return 0;
        }
}

/* DEVICES veth pairs named vbN (their indexes into @ifindex) and fl0, in one ip -batch
 * run. */
static int make_veths(const char *tmp, int ifindex[DEVICES]) {
        char batch[4200], cmd[8600];
        FILE *f;

        snprintf(batch, sizeof(batch), "%s/links", tmp);
        f = fopen(batch, "we");
        if (!f)
                return perror(batch), -1;
        for (int i = 0; i < DEVICES; i++)
                fprintf(f, "link add vb%d type veth peer name vp%d\nlink set vb%d up\n", i, i, i);
        /* For the floors: a device the config does not name. */
        fprintf(f, "link add fl0 type veth peer name fl1\nlink set fl0 up\n");
        fclose(f);
        snprintf(cmd, sizeof(cmd), "ip -batch %s", batch);
        if (system(cmd) != 0)
                return fprintf(stderr, "ip -batch failed\n"), -1;
        for (int i = 0; i < DEVICES; i++) {
                char name[IFNAMSIZ];
                snprintf(name, sizeof(name), "vb%d", i);
                ifindex[i] = (int) if_nametoindex(name);
        }
        return 0;
}

/* A minimal fake host for --root: lowlatd only needs its CPUs there. Writes the
 * config's path to @config. */
static void make_fake_host(const char *tmp, char config[4200]) {
        static const char *const dirs[] = { "root", "root/proc", "root/proc/irq", "root/sys", "root/sys/devices",
                                            "root/sys/devices/system", "root/sys/devices/system/cpu" };
        char path[4200];

        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
                mkdir(path, 0755);
        }
        snprintf(path, sizeof(path), "%s/root/sys/devices/system/cpu/online", tmp);
        write_file(path, "0-1\n");
        snprintf(config, 4200, "%s/lowlatd.conf", tmp);
        write_file(config, "[daemon]\nscan_interval = 1min\n[nic \"vb*\"]\ngro = off\n");
}

static pid_t start_daemon(const char *lowlatd, const char *tmp, const char *config) {
        pid_t daemon = fork();

        if (daemon == 0) {
                char root[4200];
                snprintf(root, sizeof(root), "%s/root", tmp);
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                /* Its 2 log lines per correction are not what is measured here. */
                if (null >= 0)
                        dup2(null, STDERR_FILENO);
                setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus", 1);
                snprintf(root, sizeof(root), "%s/run", tmp);
                setenv("RUNTIME_DIRECTORY", root, 1);
                snprintf(root, sizeof(root), "%s/root", tmp);
                execl(lowlatd, "lowlatd", "--root", root, "--config", config, (char *) NULL);
                _exit(127);
        }
        return daemon;
}

/* Ready when the last device has gro off. */
static int wait_posture_applied(EthtoolClient *c, int last_ifindex) {
        for (uint64_t deadline = now_ns() + 30000000000ULL;;) {
                bool active = true, changeable;
                if (ethtool_get_feature(c, last_ifindex, "rx-gro", &active, &changeable, NULL) >= 0 && !active)
                        break;
                if (now_ns() > deadline)
                        return fprintf(stderr, "lowlatd did not apply the posture\n"), -1;
                usleep(10000);
        }
        usleep(200000); /* let the first pass and its own notifications settle */
        (void) ethtool_monitor_dispatch(c, NULL, NULL);
        return 0;
}

/* The latency floor: a bare FEATURES_GET round trip on the measured devices. */
static int measure_get_floor(EthtoolClient *c, const int ifindex[DEVICES], unsigned flips, uint64_t *floor_ns) {
        for (unsigned i = 0; i < flips; i++) {
                bool active, changeable;
                uint64_t t0 = now_ns();
                if (ethtool_get_feature(c, ifindex[i % DEVICES], "rx-gro", &active, &changeable, NULL) < 0)
                        return fprintf(stderr, "GET failed\n"), -1;
                floor_ns[i] = now_ns() - t0;
        }
        return 0;
}

/* The CPU floors, in this process: a bare GET, and a bare SET (rx-gro toggled). */
static int measure_cpu_floors(EthtoolClient *c, unsigned flips, double *ret_get_cpu, double *ret_set_cpu) {
        int floor_dev = (int) if_nametoindex("fl0");
        double c0 = cpu_seconds_of("/proc/thread-self/schedstat");
        for (unsigned i = 0; i < flips; i++) {
                bool active, changeable;
                if (ethtool_get_feature(c, floor_dev, "rx-gro", &active, &changeable, NULL) < 0)
                        return fprintf(stderr, "GET failed\n"), -1;
        }
        double c1 = cpu_seconds_of("/proc/thread-self/schedstat");
        for (unsigned i = 0; i < flips; i++)
                if (ethtool_set_feature(c, floor_dev, "rx-gro", i % 2 == 0, NULL) < 0)
                        return fprintf(stderr, "SET failed\n"), -1;
        double c2 = cpu_seconds_of("/proc/thread-self/schedstat");
        (void) ethtool_monitor_dispatch(c, NULL, NULL);
        *ret_get_cpu = (c1 - c0) / flips;
        *ret_set_cpu = (c2 - c1) / flips;
        return 0;
}

/* Flips rx-gro on and times lowlatd turning it off again, one device after another. */
static int measure_corrections(EthtoolClient *c, const int ifindex[DEVICES], unsigned flips, uint64_t *lat) {
        for (unsigned i = 0; i < flips; i++) {
                int dev = ifindex[i % DEVICES];
                uint64_t t1;
                int r;

                r = ethtool_set_feature(c, dev, "rx-gro", true, NULL);
                t1 = now_ns();
                if (r < 0)
                        return fprintf(stderr, "flip %u: SET failed: %s\n", i, strerror(-r)), -1;
                r = wait_gro_off(c, dev, t1 + 5000000000ULL);
                if (r < 0)
                        return fprintf(stderr, "flip %u: not corrected within 5 s\n", i), -1;
                lat[i] = now_ns() - t1;
        }
        return 0;
}

/* @lat and @floor_ns sorted; @cpu0 and @cpu1 lowlatd's CPU before and after the flips,
 * negative when it could not be read. */
static void print_results(unsigned flips, const uint64_t *lat, const uint64_t *floor_ns, double cpu0,
                          double cpu1, double get_cpu, double set_cpu) {
        printf("ethtool drift->corrected over %u flips (%d veths): p50 %.1f us, p99 %.1f us\n", flips, DEVICES,
               (double) lat[flips / 2] / 1000, (double) lat[flips * 99 / 100] / 1000);
        printf("floor, bare FEATURES_GET round trip:           p50 %.1f us, p99 %.1f us; p50 ratio %.1fx\n",
               (double) floor_ns[flips / 2] / 1000, (double) floor_ns[flips * 99 / 100] / 1000,
               (double) lat[flips / 2] / (double) floor_ns[flips / 2]);
        if (cpu0 >= 0 && cpu1 >= 0) {
                double per = (cpu1 - cpu0) / flips;
                printf("lowlatd CPU time per correction: %.1f us = %.1fx a bare FEATURES_GET's CPU (%.1f us), "
                       "%.2fx a GET's plus a SET's (%.1f + %.1f us: the least a correction costs)\n",
                       per * 1e6, per / get_cpu, get_cpu * 1e6, per / (get_cpu + set_cpu), get_cpu * 1e6,
                       set_cpu * 1e6);
        }
}

int main(int argc, char *argv[]) {
        const char *lowlatd = getenv("LOWLATD");
        unsigned flips = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 1000;
        char tmp[] = "/tmp/lowlatd-bench-nic-XXXXXX", config[4200], cmd[8600];
        uint64_t *lat, *floor_ns;
        int ifindex[DEVICES];
        EthtoolClient *c = NULL;
        pid_t daemon;
        double cpu0, cpu1, get_cpu, set_cpu;
        int r;

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root (own network namespace)\n");
                return 77;
        }
        if (!lowlatd) {
                printf("1..0 # SKIP LOWLATD is not set\n");
                return 77;
        }
        if (flips > DEVICES * FLIPS_PER_DEVICE_MAX)
                flips = DEVICES * FLIPS_PER_DEVICE_MAX;
        if (unshare(CLONE_NEWNET) < 0) {
                printf("1..0 # SKIP cannot create a network namespace: %s\n", strerror(errno));
                return 77;
        }
        if (!mkdtemp(tmp))
                return perror("mkdtemp"), 1;
        if (make_veths(tmp, ifindex) < 0)
                return 1;
        make_fake_host(tmp, config);

        r = ethtool_client_new(&c);
        if (r < 0)
                return fprintf(stderr, "ethtool netlink: %s\n", strerror(-r)), 1;
        daemon = start_daemon(lowlatd, tmp, config);
        if (wait_posture_applied(c, ifindex[DEVICES - 1]) < 0)
                return 1;

        floor_ns = calloc(flips, sizeof(uint64_t));
        lat = calloc(flips, sizeof(uint64_t));
        if (measure_get_floor(c, ifindex, flips, floor_ns) < 0 ||
            measure_cpu_floors(c, flips, &get_cpu, &set_cpu) < 0)
                return 1;
        cpu0 = cpu_seconds(daemon);
        if (measure_corrections(c, ifindex, flips, lat) < 0)
                return 1;
        cpu1 = cpu_seconds(daemon);

        kill(daemon, SIGTERM);
        waitpid(daemon, NULL, 0);
        ethtool_client_free(c);
        qsort(lat, flips, sizeof(uint64_t), compare_u64);
        qsort(floor_ns, flips, sizeof(uint64_t), compare_u64);
        print_results(flips, lat, floor_ns, cpu0, cpu1, get_cpu, set_cpu);

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmp);
        free(lat);
        free(floor_ns);
        return 0;
}
