/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset_partition: the slice of [cpus] partition, made an isolated cpuset partition. The
 * slice is a transient unit that lowlatd asks PID 1 for (StartTransientUnit, AllowedCPUs=
 * the isolated CPUs), not a unit file it ships: it then exists only where it is configured,
 * goes with a restore, and needs nothing installed beside the daemon. systemd 252 and 257
 * cannot make the partition themselves (no CPUSetPartition=), so lowlatd writes the cgroup's
 * cpuset.cpus.partition; PID 1 rewrites the slice's cpuset.cpus often but never that file.
 *
 * The value is the file's first line: "isolated", "member", "root", "isolated invalid
 * (REASON)" in the kernel's words; "absent" when the slice has no cgroup; and "isolated
 * partial (...)" when the file says isolated but the root's cpuset.cpus.isolated (6.12)
 * lacks some of the slice's online CPUs, as 6.12 leaves it after its CPUs went offline and
 * came back; with " on CPUs FOUND, not ISOLATED" after it when the slice's cgroup holds other
 * CPUs (its AllowedCPUs= changed by someone), which write() puts back through PID 1. */
#include <string.h>
#include <time.h>

#include "setting/partition.h"
#include "host/systemd-client.h"
#include "basic/util.h"

#define PARTITION_WANTED "isolated"
/* PID 1 answers StartTransientUnit once the job is queued, and the cgroup appears when the
 * job runs, its cpuset.cpus written a moment later: write() waits this long for both, in
 * these steps. */
#define PARTITION_APPEAR_USEC (2 * USEC_PER_SEC)
#define PARTITION_APPEAR_STEP_USEC (20 * USEC_PER_MSEC)
#define PARTITION_NO_FILE                                                                                       \
        "the cgroup of %s has no cpuset.cpus.partition: this kernel has no cpuset partitions (5.11 has them, the " \
        "isolated type 6.1), or the cpuset controller is not enabled for the slice"

int setting_new_cpuset_partition(const char *slice, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(SETTING_CPUSET_PARTITION, slice);

        if (!s || setting_set_desired(s, PARTITION_WANTED) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

bool setting_is_partition(const Setting *s) {
        return s->kind == SETTING_CPUSET_PARTITION;
}

Setting *partition_table_find(const SettingTable *t, const char *slice) {
        return table_find(t, SETTING_CPUSET_PARTITION, slice);
}

static int partition_read_file(const Setting *s, SettingContext *rc, const char *name, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r = host_read_filef(rc->host, &text, "sys/fs/cgroup/%s/%s", s->object, name);

        if (r < 0)
                return r;
        *ret = strdup(strstrip(text));
        return *ret ? 0 : -ENOMEM;
}

static bool slice_cgroup_exists(const Setting *s, SettingContext *rc) {
        _cleanup_free_ char *dir = strdup_printf("sys/fs/cgroup/%s", s->object);
        return dir && host_path_exists(rc->host, dir);
}

/* "isolated", or "isolated partial (...)" when the kernel isolates fewer of the slice's
 * online CPUs than it has. Only 6.12 and later say what they isolate (the root's
 * cpuset.cpus.isolated); 6.1 has no such file, and comes back whole after hotplug. */
static void partition_describe_isolated(const Setting *s, SettingContext *rc, char *buf, size_t size) {
        _cleanup_free_ char *isolated_text = NULL, *slice_text = NULL, *online_text = NULL, *have = NULL,
                           *want = NULL;
        _cleanup_cpuset_ CPUSet isolated = CPUSET_EMPTY, slice = CPUSET_EMPTY, online = CPUSET_EMPTY;

        snprintf(buf, size, "%s", PARTITION_WANTED);
        if (host_read_file(rc->host, "sys/fs/cgroup/cpuset.cpus.isolated", &isolated_text) < 0 ||
            partition_read_file(s, rc, "cpuset.cpus", &slice_text) < 0 ||
            host_read_file(rc->host, "sys/devices/system/cpu/online", &online_text) < 0 ||
            cpuset_parse_list(strstrip(isolated_text), &isolated) < 0 || cpuset_parse_list(slice_text, &slice) < 0 ||
            cpuset_parse_list(strstrip(online_text), &online) < 0)
                return;
        cpuset_and(&slice, &online);
        if (cpuset_is_subset(&slice, &isolated))
                return;
        cpuset_and(&isolated, &slice);
        have = cpuset_format_list(&isolated);
        want = cpuset_format_list(&slice);
        snprintf(buf, size, "%s partial (the kernel isolates %s of %s)", PARTITION_WANTED, have && *have ? have : "none",
                 want ?: "?");
}

/* The slice's CPUs as its cgroup has them (PID 1 writes AllowedCPUs= into cpuset.cpus): 1
 * when they are the isolated CPUs, 0 when they are others (listed in *ret_have), -ENODATA
 * while the file is empty (a cgroup PID 1 has not yet given its CPUs), or an error. */
static int partition_slice_cpus(const Setting *s, SettingContext *rc, char **ret_have) {
        _cleanup_free_ char *text = NULL;
        _cleanup_cpuset_ CPUSet cpus = CPUSET_EMPTY;
        int r;

        r = partition_read_file(s, rc, "cpuset.cpus", &text);
        if (r < 0)
                return r;
        if (isempty(text))
                return -ENODATA;
        r = cpuset_parse_list(text, &cpus);
        if (r < 0)
                return r;
        if (cpuset_equal(&cpus, &rc->posture->isolated))
                return 1;
        if (ret_have) {
                *ret_have = cpuset_format_list(&cpus);
                if (!*ret_have)
                        return -ENOMEM;
        }
        return 0;
}

/* " on CPUs X, not Y" after the partition's state when someone gave the slice other CPUs
 * (systemctl set-property isolated.slice AllowedCPUs=...): drift like any other, though the
 * partition file may still read "isolated" (fewer CPUs) or the kernel's "invalid" (CPUs of
 * a sibling). An empty cpuset.cpus is PID 1 not there yet, which write() waits for. */
static void partition_describe_cpus(const Setting *s, SettingContext *rc, char *buf, size_t size) {
        _cleanup_free_ char *have = NULL, *want = NULL;
        size_t len = strlen(buf);

        if (partition_slice_cpus(s, rc, &have) != 0 || !have)
                return;
        want = cpuset_format_list(&rc->posture->isolated);
        snprintf(buf + len, size - len, " on CPUs %s, not %s", have, want ?: "?");
}

static int partition_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_free_ char *reason = NULL, *text = NULL;
        int r;

        /* The partition needs the cpuset controller, and the slice PID 1. */
        r = systemd_host_supports_allowed_cpus(rc->host, &reason);
        if (r < 0) {
                if (reason)
                        setting_set_reason(s, "%s", reason);
                return r;
        }
        r = partition_read_file(s, rc, "cpuset.cpus.partition", &text);
        if (r == -ENOENT && !slice_cgroup_exists(s, rc)) {
                snprintf(buf, size, "%s", PARTITION_ABSENT);
                return 0;
        }
        if (r == -ENOENT) {
                setting_set_reason(s, PARTITION_NO_FILE, s->object);
                return -EOPNOTSUPP;
        }
        if (r < 0) {
                setting_set_reason(s, "reading the cpuset.cpus.partition of %s failed: %s", s->object, strerror(-r));
                return r == -EPERM ? -EIO : r;
        }
        if (streq(text, PARTITION_WANTED))
                partition_describe_isolated(s, rc, buf, size);
        else
                snprintf(buf, size, "%s", text);
        partition_describe_cpus(s, rc, buf, size);
        return 0;
}

/* A failed write, with what the file says now: the kernel puts its reason there
 * ("isolated invalid (Cpu list in cpuset.cpus not exclusive)"). */
static int partition_write_file(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *path = strdup_printf("sys/fs/cgroup/%s/cpuset.cpus.partition", s->object), *now = NULL;
        int r;

        if (!path)
                return -ENOMEM;
        r = host_write_file(rc->host, path, value);
        if (r >= 0)
                return 0;
        (void) partition_read_file(s, rc, "cpuset.cpus.partition", &now);
        setting_set_reason(s, "writing %s to /%s failed: %s%s; the file reads: %s", value, path, strerror(-r),
                           r == -EROFS ? " (a sandbox without /sys/fs/cgroup in ReadWritePaths=)" : "",
                           now ?: "nothing");
        /* Not "gone" nor "unmovable": a failure, tried again. */
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

static bool have_client(Setting *s, SettingContext *rc) {
        if (rc->systemd)
                return true;
        setting_set_reason(s, "lowlatd has no connection to PID 1 set up here");
        return false;
}

/* The slice's cgroup is ready for the partition: its partition file is there and PID 1 has
 * written its cpuset.cpus. A cgroup is made with an empty cpuset.cpus and PID 1 writes
 * AllowedCPUs= into it a moment later; "isolated" written in between is "isolated invalid
 * (cpuset.cpus and cpuset.cpus.exclusive are empty)" (6.12, a real guest). */
static bool partition_ready(const Setting *s, SettingContext *rc) {
        _cleanup_free_ char *file = strdup_printf("sys/fs/cgroup/%s/cpuset.cpus.partition", s->object), *cpus = NULL;

        return file && host_path_exists(rc->host, file) && partition_read_file(s, rc, "cpuset.cpus", &cpus) >= 0 &&
               !isempty(cpus);
}

/* The slice is there, and its cgroup not ready in time: a cgroup without a partition file
 * is a kernel without partitions; one without CPUs, or no cgroup at all, PID 1 still busy
 * (tried again later). */
static int partition_never_ready(Setting *s, SettingContext *rc) {
        _cleanup_free_ char *file = strdup_printf("sys/fs/cgroup/%s/cpuset.cpus.partition", s->object);
        unsigned ms = (unsigned) (PARTITION_APPEAR_USEC / USEC_PER_MSEC);

        if (!file)
                return -ENOMEM;
        if (!slice_cgroup_exists(s, rc)) {
                setting_set_reason(s, "PID 1 started %s, but it has no cgroup after %u ms", s->object, ms);
                return -EIO;
        }
        if (!host_path_exists(rc->host, file)) {
                setting_set_reason(s, PARTITION_NO_FILE, s->object);
                return -EOPNOTSUPP;
        }
        setting_set_reason(s, "the cpuset.cpus of %s is still empty after %u ms (PID 1 writes AllowedCPUs= there)",
                           s->object, ms);
        return -EIO;
}

static int partition_wait_ready(Setting *s, SettingContext *rc) {
        for (uint64_t waited = 0; !partition_ready(s, rc); waited += PARTITION_APPEAR_STEP_USEC) {
                if (waited >= PARTITION_APPEAR_USEC)
                        return partition_never_ready(s, rc);
                (void) nanosleep(&(struct timespec) { .tv_nsec = PARTITION_APPEAR_STEP_USEC * 1000 }, NULL);
        }
        return 0;
}

/* A slice stopped is gone (a transient one) and one started again comes back "member":
 * the partition is written after every start, once the cgroup is ready (also when someone
 * else started it just now). */
static int partition_start_slice(Setting *s, SettingContext *rc) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (slice_cgroup_exists(s, rc))
                return partition_wait_ready(s, rc);
        r = systemd_client_start_slice(rc->systemd, s->object, &rc->posture->isolated,
                                       "The isolated CPUs, a cpuset partition kept by lowlatd", &error);
        if (r < 0) {
                setting_set_reason(s, "starting %s failed: %s", s->object, error ?: strerror(-r));
                return r == -EOPNOTSUPP ? r : -EIO;
        }
        return partition_wait_ready(s, rc);
}

/* The slice given other CPUs than the isolated ones: AllowedCPUs= put back through PID 1
 * (a write of cpuset.cpus would be undone by PID 1's next one), then waited for in the
 * cgroup, which PID 1 writes once the change is applied. */
static int partition_put_cpus_back(Setting *s, SettingContext *rc) {
        _cleanup_free_ char *error = NULL, *have = NULL;
        int r = partition_slice_cpus(s, rc, NULL);

        if (r != 0)
                return r == -ENODATA ? 0 : r; /* the right CPUs, or none yet (waited for before) */
        r = systemd_client_set_allowed_cpus(rc->systemd, s->object, &rc->posture->isolated, &error);
        if (r < 0) {
                setting_set_reason(s, "setting AllowedCPUs= of %s failed: %s", s->object, error ?: strerror(-r));
                return r == -EOPNOTSUPP ? r : -EIO;
        }
        for (uint64_t waited = 0; (r = partition_slice_cpus(s, rc, &have)) != 1; waited += PARTITION_APPEAR_STEP_USEC) {
                if (r < 0 && r != -ENODATA)
                        return r;
                if (waited >= PARTITION_APPEAR_USEC) {
                        setting_set_reason(s, "PID 1 took AllowedCPUs= for %s, but its cpuset.cpus reads %s after %u ms",
                                           s->object, have ?: "nothing", (unsigned) (PARTITION_APPEAR_USEC / USEC_PER_MSEC));
                        return -EIO;
                }
                have = mfree(have);
                (void) nanosleep(&(struct timespec) { .tv_nsec = PARTITION_APPEAR_STEP_USEC * 1000 }, NULL);
        }
        return 0;
}

/* A partition the kernel made invalid (a sibling took its CPUs) is not repaired by fixing
 * the sibling, nor one 6.12 left partial after hotplug: 6.1 takes it back only through
 * "member", and 6.12 takes that too. So anything but "member" goes through it first,
 * unless giving the slice its CPUs back was all it needed (the kernel takes CPUs into a
 * valid partition, or out of it, as the slice's cpuset.cpus changes). */
static int partition_write_value(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *now = NULL;
        char state[256];
        int r;

        r = partition_start_slice(s, rc);
        if (r >= 0)
                r = partition_put_cpus_back(s, rc);
        if (r < 0)
                return r;
        if (partition_read(s, rc, state, sizeof(state), 0) >= 0 && streq(state, value))
                return 0;
        if (partition_read_file(s, rc, "cpuset.cpus.partition", &now) >= 0 && !streq(now, "member")) {
                r = partition_write_file(s, rc, "member");
                if (r < 0)
                        return r;
        }
        return partition_write_file(s, rc, value);
}

/* A cgroup being removed stays a moment, and refuses writes with ENODEV. */
static int partition_wait_gone(Setting *s, SettingContext *rc) {
        for (uint64_t waited = 0; slice_cgroup_exists(s, rc); waited += PARTITION_APPEAR_STEP_USEC) {
                if (waited >= PARTITION_APPEAR_USEC) {
                        setting_set_reason(s, "the cgroup of %s is being removed (ENODEV), and is still there after %u ms",
                                           s->object, (unsigned) (PARTITION_APPEAR_USEC / USEC_PER_MSEC));
                        return -EIO;
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = PARTITION_APPEAR_STEP_USEC * 1000 }, NULL);
        }
        return 0;
}

/* The slice stopped by someone: as its cgroup goes the kernel makes the partition a member
 * (the IN_MODIFY that brings lowlatd here before PID 1's signal), and a write then fails
 * with ENODEV (6.12, a real guest). Once the cgroup is gone the slice is started again. */
static int partition_write(Setting *s, SettingContext *rc, const char *value) {
        int r;

        if (!have_client(s, rc))
                return -EOPNOTSUPP;
        r = partition_write_value(s, rc, value);
        if (r != -ENODEV)
                return r;
        r = partition_wait_gone(s, rc);
        return r < 0 ? r : partition_write_value(s, rc, value);
}

/* The first word: "absent", or the type the file had ("isolated invalid (...)" was an
 * isolated partition someone else made). */
static int partition_original(const Setting *s, char **ret) {
        *ret = strndup(s->observed, strcspn(s->observed, " "));
        return *ret ? 0 : -ENOMEM;
}

static const char *partition_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        static const char *const words[] = { PARTITION_ABSENT, "member", "root", PARTITION_WANTED };

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (streq(value, words[i]))
                        return NULL;
        return "not absent, member, root or isolated";
}

/* The cgroup a member again, and the slice stopped when lowlatd started it: the units
 * confined for the partition get their CPUs back through their own restore. */
static int partition_restore(Setting *s, SettingContext *rc, const char *original) {
        _cleanup_free_ char *error = NULL;
        bool started = streq(original, PARTITION_ABSENT);
        int r;

        if (slice_cgroup_exists(s, rc)) {
                r = partition_write_file(s, rc, started ? "member" : original);
                if (r < 0)
                        return r;
        }
        if (!started)
                return 0;
        if (!have_client(s, rc))
                return -EOPNOTSUPP;
        r = systemd_client_stop_unit(rc->systemd, s->object, &error);
        if (r < 0)
                setting_set_reason(s, "stopping %s failed: %s", s->object, error ?: strerror(-r));
        return r;
}

/* IN_MODIFY on the partition file comes for the kernel's own changes too (a sibling
 * overlapping, all its CPUs offline and back, the cgroup removed), but not when one CPU
 * goes offline, and the root's cpuset.cpus.isolated sends none: the full pass that finds
 * the online CPUs changed (daemon/manager.c) reads the partition in the same pass, and
 * read() compares what the kernel isolates with the slice's CPUs. PID 1's signals for the
 * slice (stopped by someone) come through daemon/unitwatch.c. */
static int partition_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        int n;

        /* The slice's cpuset.cpus: PID 1 writes it for every AllowedCPUs= change (systemd
         * 252 sends no PropertiesChanged for a set-property), and often with the same
         * CPUs, which costs a read and nothing more. */
        if (i == 0)
                n = snprintf(buf, size, "sys/fs/cgroup/%s/cpuset.cpus.partition", s->object);
        else if (i == 1)
                n = snprintf(buf, size, "sys/fs/cgroup/%s/cpuset.cpus", s->object);
        else
                return 0;
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 1;
}

static int partition_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (!p->config->partition || cpuset_is_empty(&p->isolated))
                return 0;
        r = setting_new_cpuset_partition(p->config->partition, &s);
        return r < 0 ? r : table_add(t, s);
}

static const char *const partition_files[] = {
        "sys/fs/cgroup/*/cpuset.cpus.partition",
        NULL,
};

const SettingVTable cpuset_partition_vtable = {
        .object_size = sizeof(Setting),
        .group = SETTING_GROUP_HOST,
        .noun = "cpuset partition of",
        .read = partition_read,
        .write = partition_write,
        .original = partition_original,
        .original_problem = partition_original_problem,
        .restore = partition_restore,
        .watch_path = partition_watch_path,
        .owns = partition_files,
        .plan = partition_plan,
};
