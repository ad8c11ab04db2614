/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Packet steering. nic_rps_cpus, nic_xps_cpus and nic_rps_flow_cnt: one setting per queue
 * file of an interface a [nic] section matches (sys/class/net/IF/queues/rx-N/rps_cpus,
 * rx-N/rps_flow_cnt, tx-N/xps_cpus), kept through inotify and the scan like any file, and
 * planned per interface with its other NIC settings; queues that come later (a channel
 * change, a driver reset) are added when their uevent arrives (daemon/netwatch.c), or by
 * the scan. rps_default_mask: net.core.rps_default_mask, the mask new receive queues start
 * with (kernel 6.3 and later; per network namespace). Masks compare by their CPUs, not by
 * their text ("3" is "00000003"). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "host/rtnl.h"
#include "setting/file.h"
#include "setting/nic-head.h"
#include "setting/rps.h"
#include "basic/util.h"

typedef struct QueueSetting {
        NicSettingHead head;
        SettingFile file; /* sys/class/net/IF/queues/rx-N/rps_cpus */
        char *ifname;     /* as planned: the rescan lists its queues */
        char *queue;      /* "rx-0": what names the queue across a rename */
        CPUSet cpus;      /* the mask kinds */
} QueueSetting;

#define QUEUE(s) ((QueueSetting *) (s))

static const char *queue_file_name(SettingKind kind) {
        switch (kind) {
        case SETTING_NIC_RPS_CPUS:
                return "rps_cpus";
        case SETTING_NIC_XPS_CPUS:
                return "xps_cpus";
        case SETTING_NIC_RPS_FLOW_CNT:
                return "rps_flow_cnt";
        default:
                return NULL;
        }
}

bool setting_is_nic_queue(const Setting *s) {
        return queue_file_name(s->kind) != NULL;
}

bool nic_queue_same_key(const Setting *a, const Setting *b) {
        return a->kind == b->kind && setting_is_nic_queue(a) && QUEUE(a)->head.ifindex == QUEUE(b)->head.ifindex &&
               streq(QUEUE(a)->queue, QUEUE(b)->queue);
}

int setting_new_nic_queue(SettingKind kind, int ifindex, const char *ifname, const char *queue, const CPUSet *cpus,
                          unsigned mask_bits, uint32_t flow_cnt, Setting **ret) {
        _cleanup_(setting_freep) Setting *s = NULL;
        _cleanup_free_ char *object = strdup_printf("%s/%s", ifname, queue), *desired = NULL;
        const char *file = queue_file_name(kind);
        QueueSetting *q;

        if (!file)
                return -EINVAL;
        if (!object || !(s = setting_alloc(kind, object)))
                return -ENOMEM;
        q = QUEUE(s);
        q->head.ifindex = ifindex;
        setting_file_init(&q->file, strdup_printf("sys/class/net/%s/queues/%s/%s", ifname, queue, file));
        q->ifname = strdup(ifname);
        q->queue = strdup(queue);
        if (!q->file.path || !q->ifname || !q->queue)
                return -ENOMEM;
        if (kind == SETTING_NIC_RPS_FLOW_CNT)
                desired = strdup_printf("%" PRIu32, flow_cnt);
        else if (cpuset_copy(&q->cpus, cpus) >= 0)
                desired = cpuset_format_mask(cpus, mask_bits);
        if (!desired || setting_set_desired(s, desired) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

/* The queue's directory: whether the queue is still there when its file is not. */
static bool queue_exists(const Setting *s, SettingContext *rc) {
        _cleanup_free_ char *dir = strdup_printf("sys/class/net/%s/queues/%s", QUEUE(s)->ifname, QUEUE(s)->queue);

        return dir && host_path_exists(rc->host, dir);
}

/* Whether rx-0 (tx-0 for xps_cpus) of the same interface, when that is another queue, has
 * the file this setting keeps. */
static bool queue_first_has_file(const Setting *s, SettingContext *rc) {
        const QueueSetting *q = QUEUE(s);
        const char *first = s->kind == SETTING_NIC_XPS_CPUS ? "tx-0" : "rx-0";
        _cleanup_free_ char *path = NULL;

        if (streq(q->queue, first))
                return false;
        path = strdup_printf("sys/class/net/%s/queues/%s/%s", q->ifname, first, queue_file_name(s->kind));
        return path && host_path_exists(rc->host, path);
}

/* Renames in a storm (out of the glob and back, faster than lowlatd follows) change the
 * interface's name between a look-up by its index and an open by that name. A queue's
 * put-back under a name looked up once failed so with ENOENT: the original stayed on file
 * under a name no setting would have again, and `lowlatctl restore` left lowlatd's mask
 * (test_nic_faults' restore after the churn). So the name is looked up, the interface's
 * directory under it opened and its ifindex checked, and the queue's file opened relative
 * to that directory: a rename moves the directory, not what the fd holds. A name taken
 * away (or given to another interface) between the look-up and the open is looked up
 * again, a bounded number of times. */
#define QUEUE_RENAME_TRIES 16

/* An O_PATH fd of the interface's directory; -EAGAIN: renamed under the look-up, try
 * again; -ENODEV: the interface is gone. */
static int interface_dir_now(const Setting *s, SettingContext *rc) {
        const QueueSetting *q = QUEUE(s);
        _cleanup_close_ int dir_fd = -1, index_fd = -1;
        _cleanup_free_ char *dir = NULL;
        char text[32];
        unsigned v;
        LinkInfo l;
        int r;

        r = rtnl_get_link(rc->rtnl, q->head.ifindex, &l);
        if (r < 0)
                return r;
        dir = strdup_printf("sys/class/net/%s", l.name);
        if (!dir)
                return -ENOMEM;
        dir_fd = host_open_file(rc->host, dir, O_PATH | O_DIRECTORY);
        if (dir_fd == -ENOENT || dir_fd == -ENOTDIR)
                return -EAGAIN;
        if (dir_fd < 0)
                return dir_fd;
        index_fd = openat(dir_fd, "ifindex", O_RDONLY | O_CLOEXEC);
        if (index_fd < 0 || pread_string(index_fd, text, sizeof(text)) < 0 || parse_unsigned(strstrip(text), &v) < 0 ||
            (int) v != q->head.ifindex)
                return -EAGAIN; /* the name is another interface's now */
        return TAKE_FD(dir_fd);
}

/* Its interface is gone (unlisted first when it is deleted: its queue files then answer
 * EAGAIN for a while), or its directory is; a queue renamed with its interface is not. */
static bool queue_gone(const Setting *s, SettingContext *rc) {
        if (!rc->rtnl)
                return !queue_exists(s, rc);
        for (unsigned i = 0; i < QUEUE_RENAME_TRIES; i++) {
                _cleanup_free_ char *rel = strdup_printf("queues/%s", QUEUE(s)->queue);
                _cleanup_close_ int dir_fd = interface_dir_now(s, rc);

                if (dir_fd == -EAGAIN) {
                        sched_yield();
                        continue;
                }
                if (dir_fd == -ENODEV)
                        return true;
                if (dir_fd < 0 || !rel)
                        return !queue_exists(s, rc);
                return faccessat(dir_fd, rel, F_OK, 0) < 0;
        }
        return false; /* renamed all along: there */
}

bool nic_queue_exists_now(const Setting *s, SettingContext *rc) {
        return setting_is_nic_queue(s) && !queue_gone(s, rc);
}

/* The queue's file under its interface as it is named now: read into *ret_text, or value
 * written. -ENOENT when the interface is gone, or the queue (its file) is not there; the
 * kernel's own errors from the read or write as they are. */
static int queue_at_name_now(Setting *s, SettingContext *rc, const char *value, char **ret_text) {
        const QueueSetting *q = QUEUE(s);
        _cleanup_free_ char *rel = strdup_printf("queues/%s/%s", q->queue, queue_file_name(s->kind));

        if (!rel)
                return -ENOMEM;
        for (unsigned i = 0; i < QUEUE_RENAME_TRIES && rc->rtnl; i++) {
                _cleanup_close_ int dir_fd = interface_dir_now(s, rc), fd = -1;
                char text[4096];
                ssize_t n;

                if (dir_fd == -EAGAIN) {
                        sched_yield();
                        continue;
                }
                if (dir_fd < 0)
                        return dir_fd == -ENODEV ? -ENOENT : dir_fd;
                fd = openat(dir_fd, rel, (value ? O_WRONLY | O_TRUNC : O_RDONLY) | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return negative_errno();
                if (value) {
                        n = write(fd, value, strlen(value));
                        return n < 0 ? negative_errno() : (size_t) n == strlen(value) ? 0 : -EIO;
                }
                n = pread_string(fd, text, sizeof(text));
                if (n < 0)
                        return (int) n;
                *ret_text = strdup(text);
                return *ret_text ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

/* EAGAIN from the file of a queue that is still there (its interface not being deleted):
 * the kernel's "busy", seen now and then on a veth whose peer was renamed a moment before,
 * once as `lowlatctl restore` ran seconds after the churn (test_nic_faults, one run in 40);
 * asked again a few times before it counts as a failure. */
#define QUEUE_BUSY_TRIES 8

static bool queue_busy(int r, unsigned *tries, const Setting *s, SettingContext *rc) {
        if (r != -EAGAIN || *tries >= QUEUE_BUSY_TRIES || queue_gone(s, rc))
                return false;
        (*tries)++;
        sched_yield();
        return true;
}

static int queue_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        QueueSetting *q = QUEUE(s);
        unsigned tries = 0;
        int r;

        do
                r = setting_file_read(&q->file, rc, buf, size, flags);
        while (queue_busy(r, &tries, s, rc));

        /* Renamed before the link monitor replanned it (the rename is still queued): the
         * same queue under its name now, kept until then, so that the replan finds it and
         * a restore can put back its original. Dropping it would make the value lowlatd
         * wrote the "original" of the setting planned under the new name. */
        if (r == -ENOENT || r == -ENODEV) {
                _cleanup_free_ char *text = NULL;
                if (queue_at_name_now(s, rc, NULL, &text) >= 0) {
                        snprintf(buf, size, "%s", strstrip(text));
                        return 0;
                }
        }

        /* No file: the queue went (channels reduced, the link deleted or renamed, which the
         * link monitor replans), unless its directory is still there, which is a kernel
         * built without the file (CONFIG_RPS, CONFIG_XPS). */
        /* A queue directory without the file while the first queue of its kind has it: the
         * kernel is still creating (or removing) it, and its uevent, sent once it is whole,
         * replans the interface. Taken for a kernel without the file, it would stay
         * unsupported (test_nic_faults, channels flapping under ASan). */
        if (r == -ENOENT && queue_exists(s, rc) && queue_first_has_file(s, rc))
                return -ENOENT;
        /* The file is there but its read fails: the kernel keeps XPS for devices with more
         * than one transmit queue. A queue beside tx-0 says the device has more: its count
         * is changing (ethtool -L 1 -> 8: tx-6 is there before the device is multi-queue),
         * and the uevents that follow replan it. Taken for unsupported, tx-6 kept that
         * state through the replan and its mask was never written (test_nic_faults'
         * [queues] check, one ASan run in 17). */
        if (r == -ENOENT && s->kind == SETTING_NIC_XPS_CPUS && !streq(q->queue, "tx-0") && queue_exists(s, rc) &&
            host_path_exists(rc->host, q->file.path))
                return -ENOENT;
        if (r == -ENOENT && queue_exists(s, rc)) {
                if (s->kind == SETTING_NIC_XPS_CPUS && host_path_exists(rc->host, q->file.path))
                        setting_set_reason(s, "%s has a single transmit queue, and the kernel offers XPS only on "
                                           "multi-queue devices (reading /%s: %s)", q->ifname, q->file.path,
                                           strerror(-r));
                else
                        setting_set_reason(s, "this kernel has no %s (/%s)", queue_file_name(s->kind), q->file.path);
                return -EOPNOTSUPP;
        }
        if (r == -ENOENT || r == -ENODEV || (r == -EAGAIN && queue_gone(s, rc)))
                return -ENOENT;
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", q->file.path, strerror(-r));
        return r;
}

static int queue_write_once(Setting *s, SettingContext *rc, const char *value) {
        QueueSetting *q = QUEUE(s);
        int r = host_write_file(rc->host, q->file.path, value);

        /* Renamed since it was planned (a restore as it leaves the glob, a write before the
         * link monitor replans): an open fd still names the same queue, and without one
         * the interface's index gives its name now. */
        if ((r == -ENOENT || r == -ENODEV) && q->file.fd >= 0)
                r = host_write_file_of_fd(q->file.fd, value);
        if (r == -ENOENT || r == -ENODEV)
                r = queue_at_name_now(s, rc, value, NULL);
        return r;
}

static int queue_write(Setting *s, SettingContext *rc, const char *value) {
        QueueSetting *q = QUEUE(s);
        unsigned tries = 0;
        int r;

        do
                r = queue_write_once(s, rc, value);
        while (queue_busy(r, &tries, s, rc));
        if (r >= 0)
                return 0;
        /* The queue went between the look and the write (channels reduced, the link
         * deleted: a queue being torn down answers EAGAIN). */
        if ((r == -ENOENT || r == -ENODEV || r == -EAGAIN) && queue_gone(s, rc))
                return -ENOENT;
        if (r == -EINVAL && s->kind != SETTING_NIC_RPS_FLOW_CNT && setting_cpus_offline(s, rc, &q->cpus))
                return r;
        if (r == -EINVAL && s->kind == SETTING_NIC_RPS_CPUS)
                /* The kernel drops the CPUs isolcpus=domain isolated from an RPS mask, and
                 * refuses a mask that had nothing else. */
                setting_set_reason(s, "writing /%s failed: %s (the kernel refuses an RPS mask of only CPUs isolated "
                                   "with isolcpus=domain)", q->file.path, strerror(-r));
        else
                setting_set_reason(s, "writing /%s failed: %s", q->file.path, strerror(-r));
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

static bool queue_mask_matches(Setting *s, SettingContext *rc) {
        return cpuset_parse_mask(s->observed, &rc->scratch) >= 0 && cpuset_equal(&rc->scratch, &QUEUE(s)->cpus);
}

static int queue_watch_path(const Setting *s, unsigned i, char *buf, size_t size) {
        if (i > 0)
                return 0;
        snprintf(buf, size, "%s", QUEUE(s)->file.path);
        return 1;
}

static void queue_inherit(Setting *s, Setting *old, bool same_value) {
        /* A renamed interface's queue: the fd still reads the same kernel object. */
        setting_file_inherit(&QUEUE(s)->file, &QUEUE(old)->file);
}

static void queue_release(Setting *s) {
        setting_file_close(&QUEUE(s)->file);
}

static void queue_done(Setting *s) {
        QueueSetting *q = QUEUE(s);

        setting_file_done(&q->file);
        free(q->ifname);
        free(q->queue);
        cpuset_done(&q->cpus);
}

/* --- planning --- */

/* "rx-12" -> true for prefix "rx-". */
static bool queue_name_is(const char *name, const char *prefix) {
        unsigned n;

        return strncmp(name, prefix, strlen(prefix)) == 0 && parse_unsigned(name + strlen(prefix), &n) >= 0;
}

static int add_queue(SettingTable *t, SettingKind kind, int ifindex, const char *ifname, const char *queue,
                     const CPUSet *cpus, unsigned mask_bits, uint32_t flow_cnt) {
        _cleanup_free_ char *object = strdup_printf("%s/%s", ifname, queue);
        Setting *s = NULL;
        int r;

        if (!object)
                return -ENOMEM;
        if (table_find(t, kind, object))
                return 0;
        r = setting_new_nic_queue(kind, ifindex, ifname, queue, cpus, mask_bits, flow_cnt, &s);
        if (r < 0)
                return r;
        r = table_add(t, s);
        return r < 0 ? r : 1;
}

int nic_queue_add_settings(SettingTable *t, const Host *h, unsigned mask_bits, const NicPosture *np, int ifindex,
                           const char *ifname) {
        _cleanup_free_ char *dir = NULL;
        DIR *d = NULL;
        struct dirent *e;
        int r, added = 0;

        if (!np->rps_cpus && !np->xps_cpus && !np->rps_flow_cnt_set)
                return 0;
        dir = strdup_printf("sys/class/net/%s/queues", ifname);
        if (!dir)
                return -ENOMEM;
        r = host_opendir(h, dir, &d);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0; /* gone meanwhile; the link monitor hears of it */
        if (r < 0)
                return r;
        while ((e = readdir(d))) {
                if (queue_name_is(e->d_name, "rx-")) {
                        if (np->rps_cpus) {
                                r = add_queue(t, SETTING_NIC_RPS_CPUS, ifindex, ifname, e->d_name, np->rps_cpus,
                                              mask_bits, 0);
                                if (r < 0)
                                        break;
                                added += r;
                        }
                        if (np->rps_flow_cnt_set) {
                                r = add_queue(t, SETTING_NIC_RPS_FLOW_CNT, ifindex, ifname, e->d_name, NULL, 0,
                                              np->rps_flow_cnt);
                                if (r < 0)
                                        break;
                                added += r;
                        }
                } else if (np->xps_cpus && queue_name_is(e->d_name, "tx-")) {
                        r = add_queue(t, SETTING_NIC_XPS_CPUS, ifindex, ifname, e->d_name, np->xps_cpus, mask_bits, 0);
                        if (r < 0)
                                break;
                        added += r;
                }
                r = 0;
        }
        closedir(d);
        return r < 0 ? r : added;
}

/* Counts the queue settings np asks for on this listing that the table lacks (missing),
 * and those it asks for at all (wanted). */
static int count_queue_files(const SettingTable *t, const Host *h, const NicPosture *np, const char *ifname,
                             size_t *ret_wanted, size_t *ret_missing) {
        _cleanup_free_ char *dir = strdup_printf("sys/class/net/%s/queues", ifname);
        size_t wanted = 0, missing = 0;
        DIR *d = NULL;
        struct dirent *e;
        int r;

        if (!dir)
                return -ENOMEM;
        r = host_opendir(h, dir, &d);
        if (r < 0)
                return r;
        while ((e = readdir(d))) {
                const struct {
                        bool asked;
                        SettingKind kind;
                        const char *prefix;
                } files[] = {
                        { np->rps_cpus != NULL, SETTING_NIC_RPS_CPUS, "rx-" },
                        { np->rps_flow_cnt_set, SETTING_NIC_RPS_FLOW_CNT, "rx-" },
                        { np->xps_cpus != NULL, SETTING_NIC_XPS_CPUS, "tx-" },
                };
                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        _cleanup_free_ char *object = NULL;
                        if (!files[i].asked || !queue_name_is(e->d_name, files[i].prefix))
                                continue;
                        object = strdup_printf("%s/%s", ifname, e->d_name);
                        if (!object) {
                                closedir(d);
                                return -ENOMEM;
                        }
                        wanted++;
                        missing += !table_find(t, files[i].kind, object);
                }
        }
        closedir(d);
        *ret_wanted = wanted;
        *ret_missing = missing;
        return 0;
}

int nic_queue_table_in_step(const SettingTable *t, const Host *h, const Posture *p, int ifindex, const char *ifname) {
        size_t wanted = 0, missing = 0, held = 0;
        NicPosture np;
        int r;

        r = nic_posture_resolve(p->config, p, ifname, &np);
        if (r <= 0)
                return r < 0 ? r : 1; /* no section: nothing to hold */
        r = count_queue_files(t, h, &np, ifname, &wanted, &missing);
        nic_posture_done(&np);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n; i++)
                held += setting_is_nic_queue(t->settings[i]) && QUEUE(t->settings[i])->head.ifindex == ifindex;
        return missing == 0 && held == wanted;
}

/* Whether sys/class/net/IFNAME is still the interface ifindex (not renamed or replaced). */
static bool interface_is(const Host *h, const char *ifname, int ifindex) {
        _cleanup_free_ char *text = NULL;
        unsigned v;

        return host_read_filef(h, &text, "sys/class/net/%s/ifindex", ifname) >= 0 &&
               parse_unsigned(strstrip(text), &v) >= 0 && (int) v == ifindex;
}

int nic_queue_table_rescan(SettingTable *t, const Host *h, const Posture *p) {
        _cleanup_free_ int *done = NULL;
        size_t n_done = 0, n_queue = 0;
        int added = 0;

        n_queue = t->kind_counts[SETTING_NIC_RPS_CPUS] + t->kind_counts[SETTING_NIC_RPS_FLOW_CNT] +
                  t->kind_counts[SETTING_NIC_XPS_CPUS];
        if (n_queue == 0)
                return 0;
        done = calloc(n_queue, sizeof(int));
        if (!done)
                return -ENOMEM;
        /* Added settings go to the end of the table: the loop's bound stays as it was. */
        for (size_t i = 0, n = t->n; i < n; i++) {
                const Setting *s = t->settings[i];
                _cleanup_free_ char *ifname = NULL;
                bool seen = false;
                NicPosture np;
                int r;

                if (!setting_is_nic_queue(s))
                        continue;
                for (size_t j = 0; j < n_done && !seen; j++)
                        seen = done[j] == QUEUE(s)->head.ifindex;
                if (seen || n_done == n_queue)
                        continue;
                done[n_done++] = QUEUE(s)->head.ifindex;
                if (!interface_is(h, QUEUE(s)->ifname, QUEUE(s)->head.ifindex))
                        continue; /* renamed or gone: the link monitor replans it */
                ifname = strdup(QUEUE(s)->ifname);
                if (!ifname)
                        return -ENOMEM;
                r = nic_posture_resolve(p->config, p, ifname, &np);
                if (r > 0) {
                        r = nic_queue_add_settings(t, h, p->mask_bits, &np, QUEUE(s)->head.ifindex, ifname);
                        nic_posture_done(&np);
                }
                if (r < 0)
                        return r;
                added += r;
        }
        if (added > 0)
                table_sort(t);
        return added;
}

static int queue_rescan(SettingTable *t, const Host *h, const Posture *p) {
        int r = nic_queue_table_rescan(t, h, p);
        return r < 0 ? r : 0;
}

/* [sysfs] does not keep these: through /sys/class/net, or the device's own path, at any
 * depth a NIC sits in the device tree. */
#define QUEUE_FILES(file)                                               \
        "sys/class/net/*/queues/" file,                                 \
        "sys/devices/*/net/*/queues/" file,                             \
        "sys/devices/*/*/net/*/queues/" file,                           \
        "sys/devices/*/*/*/net/*/queues/" file,                         \
        "sys/devices/*/*/*/*/net/*/queues/" file,                       \
        "sys/devices/*/*/*/*/*/net/*/queues/" file,                     \
        "sys/devices/*/*/*/*/*/*/net/*/queues/" file,                   \
        "sys/devices/*/*/*/*/*/*/*/net/*/queues/" file

static const char *const rps_cpus_files[] = { QUEUE_FILES("rx-*/rps_cpus"), NULL };
static const char *const rps_flow_cnt_files[] = { QUEUE_FILES("rx-*/rps_flow_cnt"), NULL };
static const char *const xps_cpus_files[] = { QUEUE_FILES("tx-*/xps_cpus"), NULL };

/* An original is what the queue's file read: a mask, all zeros when steering was off (the
 * kernel's default), or rps_flow_cnt's number. */
static const char *queue_mask_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        return setting_cpu_mask_problem(rc, value, true);
}

static const char *queue_number_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        uint32_t v;

        (void) s;
        (void) rc;
        return parse_uint32(value, &v) < 0 ? "not a number of flows" : NULL;
}

#define QUEUE_SETTING_OPS                          \
        .object_size = sizeof(QueueSetting),       \
        .group = SETTING_GROUP_NIC,                \
        .readback = READBACK_LOOKS_AGAIN,          \
        .read = queue_read,                        \
        .write = queue_write,                      \
        .watch_path = queue_watch_path,            \
        .sort_key = setting_nic_sort_key,          \
        .inherit = queue_inherit,                  \
        .release = queue_release,                  \
        .done = queue_done

/* The rescan for all three kinds runs once, from the first. */
const SettingVTable nic_rps_cpus_vtable = {
        QUEUE_SETTING_OPS,
        .matches = queue_mask_matches,
        .original_problem = queue_mask_original_problem,
        .owns = rps_cpus_files,
        .rescan = queue_rescan,
};

const SettingVTable nic_rps_flow_cnt_vtable = {
        QUEUE_SETTING_OPS,
        .original_problem = queue_number_original_problem,
        .owns = rps_flow_cnt_files,
};

const SettingVTable nic_xps_cpus_vtable = {
        QUEUE_SETTING_OPS,
        .matches = queue_mask_matches,
        .original_problem = queue_mask_original_problem,
        .owns = xps_cpus_files,
};

/* --- rps_default_mask --- */

#define RPS_DEFAULT_MASK_PATH "proc/sys/net/core/rps_default_mask"

static int rps_default_mask_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        int r = setting_file_read(&((FileSetting *) s)->file, rc, buf, size, flags);

        if (r == -ENOENT) {
                setting_set_reason(s, "this kernel has no net.core.rps_default_mask (Linux 6.3 and later have it)");
                return -EOPNOTSUPP;
        }
        if (r < 0)
                setting_set_reason(s, "reading /%s failed: %s", RPS_DEFAULT_MASK_PATH, strerror(-r));
        return r;
}

static int rps_default_mask_plan(SettingTable *t, const Host *h, const Posture *p) {
        Setting *s = NULL;
        int r;

        if (p->config->rps_default_mask.kind == CPUS_UNSET)
                return 0;
        r = mask_file_setting_new(SETTING_RPS_DEFAULT_MASK, strdup(RPS_DEFAULT_MASK_PATH), "net.core.rps_default_mask",
                                  &p->rps_default_mask, p->mask_bits, &s);
        return r < 0 ? r : table_add(t, s);
}

const SettingVTable rps_default_mask_vtable = {
        .object_size = sizeof(MaskFileSetting),
        .group = SETTING_GROUP_HOST,
        .noun = "sysctl",
        .read = rps_default_mask_read,
        .write = file_setting_write,
        .matches = mask_file_setting_matches,
        .original_problem = queue_mask_original_problem, /* the mask new queues start with */
        .watch_path = file_setting_watch_path,
        .inherit = file_setting_inherit,
        .release = file_setting_release,
        .done = mask_file_setting_done,
        .plan = rps_default_mask_plan,
};
