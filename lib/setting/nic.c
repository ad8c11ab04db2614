/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NIC settings: nic_coalesce, nic_ring, nic_channels, nic_pause and nic_eee (one ethtool
 * parameter each), nic_feature (one feature bit by its kernel name), nic_qdisc (the root
 * qdisc's kind) and nic_txqueuelen (IFLA_TXQLEN). They speak netlink, not files: no fd,
 * no inotify; the ethtool monitor group and rtnetlink's link group say when to look. A
 * NIC's settings are planned per interface (nic_table_*). */
#include <fnmatch.h>
#include <inttypes.h>
#include <string.h>

#include "config/keys.h"
#include "config/nic-posture.h"
#include "setting/originals.h"
#include "host/rtnl.h"
#include "setting/irq.h"
#include "setting/nic.h"
#include "setting/rps.h"
#include "basic/array.h"
#include "basic/util.h"

typedef struct NicSetting {
        NicSettingHead head;
        EthtoolParam param; /* nic_coalesce, nic_ring, nic_channels */
        char *feature;      /* nic_feature: the kernel's name ("rx-gro") */
} NicSetting;

#define NIC(s) ((NicSetting *) (s))
#define NIC_HEAD(s) ((NicSettingHead *) (s))

static const SettingKind kind_of_group[_ETHTOOL_GROUP_MAX] = {
        [ETHTOOL_GROUP_COALESCE] = SETTING_NIC_COALESCE,
        [ETHTOOL_GROUP_RINGS] = SETTING_NIC_RING,
        [ETHTOOL_GROUP_CHANNELS] = SETTING_NIC_CHANNELS,
        [ETHTOOL_GROUP_FEATURES] = SETTING_NIC_FEATURE,
        [ETHTOOL_GROUP_PAUSE] = SETTING_NIC_PAUSE,
        [ETHTOOL_GROUP_EEE] = SETTING_NIC_EEE,
};

bool setting_nic_notified_by(const Setting *s, int ifindex, EthtoolGroup group) {
        return setting_is_nic(s) && NIC_HEAD(s)->ifindex == ifindex && group < _ETHTOOL_GROUP_MAX &&
               s->kind == kind_of_group[group];
}

static const char *param_text(EthtoolParam p, uint32_t v, char buf[static 16]) {
        if (ethtool_param_is_boolean(p))
                return v ? "on" : "off";
        snprintf(buf, 16, "%" PRIu32, v);
        return buf;
}

static Setting *nic_setting_alloc(SettingKind kind, int ifindex, const char *object, const char *desired) {
        _cleanup_(setting_freep) Setting *s = setting_alloc(kind, object);

        if (!s || setting_set_desired(s, desired) < 0)
                return NULL;
        NIC(s)->head.ifindex = ifindex;
        return TAKE_PTR(s);
}

int setting_new_nic_param(int ifindex, const char *ifname, EthtoolParam p, uint32_t value, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("%s/%s", ifname, ethtool_param_to_string(p));
        char buf[16];
        Setting *s;

        if (!object || !(s = nic_setting_alloc(kind_of_group[ethtool_param_group(p)], ifindex, object,
                                               param_text(p, value, buf))))
                return -ENOMEM;
        NIC(s)->param = p;
        *ret = s;
        return 0;
}

int setting_new_nic_feature(int ifindex, const char *ifname, const char *feature, bool on, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("%s/%s", ifname, feature);
        _cleanup_(setting_freep) Setting *s = NULL;

        if (!object || !(s = nic_setting_alloc(SETTING_NIC_FEATURE, ifindex, object, on ? "on" : "off")) ||
            !(NIC(s)->feature = strdup(feature)))
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int setting_new_nic_qdisc(int ifindex, const char *ifname, const char *kind, Setting **ret) {
        Setting *s = nic_setting_alloc(SETTING_NIC_QDISC, ifindex, ifname, kind);

        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int setting_new_nic_txqueuelen(int ifindex, const char *ifname, uint32_t txqueuelen, Setting **ret) {
        _cleanup_free_ char *object = strdup_printf("%s/txqueuelen", ifname);
        char value[16];
        Setting *s;

        snprintf(value, sizeof(value), "%" PRIu32, txqueuelen);
        if (!object || !(s = nic_setting_alloc(SETTING_NIC_TXQUEUELEN, ifindex, object, value)))
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* --- the operations --- */

/* The kernel's own words where it gave some. -ENODEV (the interface is gone) is "gone";
 * EINVAL with an explanation is the driver saying "not this", not a passing fault. */
static int nic_result(Setting *s, int r, const char *error, const char *what) {
        if (r >= 0)
                return r;
        if (r == -ENODEV)
                return -ENOENT;
        if (r == -EINVAL && error)
                r = -EOPNOTSUPP;
        setting_set_reason(s, "%s%s%s", r == -EOPNOTSUPP ? what : strerror(-r), error ? ": " : "", error ?: "");
        return r == -ENOENT || r == -EPERM ? -EIO : r;
}

static bool nic_have_ethtool(Setting *s, SettingContext *rc) {
        if (rc->ethtool)
                return true;
        setting_set_reason(s, "the kernel has no ethtool netlink interface");
        return false;
}

static int nic_param_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_free_ char *error = NULL;
        char text[16];
        uint32_t v;
        int r;

        if (!nic_have_ethtool(s, rc))
                return -EOPNOTSUPP;
        r = ethtool_get_param(rc->ethtool, NIC(s)->head.ifindex, NIC(s)->param, &v, &error);
        if (r >= 0)
                snprintf(buf, size, "%s", param_text(NIC(s)->param, v, text));
        return nic_result(s, r, error, "not supported by the driver");
}

static int nic_param_write(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *error = NULL;
        uint32_t v;
        bool on;
        int r;

        if (ethtool_param_is_boolean(NIC(s)->param)) {
                r = parse_boolean(value, &on);
                v = on;
        } else
                r = parse_uint32(value, &v);
        if (r < 0)
                return r;
        r = ethtool_set_param(rc->ethtool, NIC(s)->head.ifindex, NIC(s)->param, v, &error);
        return nic_result(s, r, error, "not supported");
}

static int nic_feature_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_free_ char *error = NULL;
        bool active, changeable;
        int r;

        if (!nic_have_ethtool(s, rc))
                return -EOPNOTSUPP;
        /* Every change of a device's features is notified with the whole state, and our
         * own SET's reply says what it did: after either, no GET. The scan and forced
         * looks ask the kernel. */
        if (flags & (RECONCILE_HINTED | RECONCILE_READBACK))
                r = ethtool_get_feature_notified(rc->ethtool, NIC(s)->head.ifindex, NIC(s)->feature, &active, &changeable,
                                                 &error);
        else
                r = ethtool_get_feature(rc->ethtool, NIC(s)->head.ifindex, NIC(s)->feature, &active, &changeable, &error);
        if (r == -ENOENT) {
                setting_set_reason(s, "this kernel has no feature called %s", NIC(s)->feature);
                return -EOPNOTSUPP;
        }
        if (r >= 0 && !changeable && active != streq(s->desired, "on")) {
                setting_set_reason(s, "the driver has %s fixed %s", NIC(s)->feature, active ? "on" : "off");
                return -EOPNOTSUPP;
        }
        if (r >= 0)
                snprintf(buf, size, "%s", active ? "on" : "off");
        return nic_result(s, r, error, "not supported by the driver");
}

static int nic_feature_write(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *error = NULL;
        bool on;
        int r;

        r = parse_boolean(value, &on);
        if (r < 0)
                return r;
        r = ethtool_set_feature(rc->ethtool, NIC(s)->head.ifindex, NIC(s)->feature, on, &error);
        return nic_result(s, r, error, "not supported");
}

static int nic_qdisc_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        _cleanup_free_ char *kind = NULL;
        int r;

        r = rtnl_get_root_qdisc(rc->rtnl, NIC(s)->head.ifindex, &kind);
        if (r >= 0)
                snprintf(buf, size, "%s", kind);
        return nic_result(s, r, NULL, "not supported by the driver");
}

static int nic_qdisc_write(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *error = NULL;
        int r;

        r = rtnl_replace_root_qdisc(rc->rtnl, NIC(s)->head.ifindex, value, &error);
        /* A kind this kernel lacks (no sch_fq module): the kernel says so. */
        if (r == -ENOENT || (r == -EINVAL && error))
                r = -EOPNOTSUPP;
        return nic_result(s, r, error, "not supported");
}

/* Every change of a link, its queue length too, is announced on rtnetlink's link group,
 * and the link monitor looks at the interface's settings at once (RECONCILE_HINTED). That
 * look takes the length the notification carries, unless it may be older than our own
 * last write (rtnl_notified_txqlen()): then it asks the kernel. The read-back right after
 * our write takes the length it set. */
static int nic_txqueuelen_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags) {
        uint32_t v;
        int r;

        if ((flags & RECONCILE_HINTED) && rtnl_notified_txqlen(rc->rtnl, NIC(s)->head.ifindex, &v)) {
                snprintf(buf, size, "%" PRIu32, v);
                return 0;
        }
        r = rtnl_get_txqlen(rc->rtnl, NIC(s)->head.ifindex, flags & RECONCILE_READBACK, &v);
        if (r == -EOPNOTSUPP) {
                setting_set_reason(s, "the kernel does not report the interface's txqueuelen");
                return r;
        }
        if (r >= 0)
                snprintf(buf, size, "%" PRIu32, v);
        return nic_result(s, r, NULL, "not supported");
}

static int nic_txqueuelen_write(Setting *s, SettingContext *rc, const char *value) {
        _cleanup_free_ char *error = NULL;
        uint32_t v;
        int r;

        r = parse_uint32(value, &v);
        if (r < 0)
                return r;
        r = rtnl_set_txqlen(rc->rtnl, NIC(s)->head.ifindex, v, &error);
        return nic_result(s, r, error, "not supported");
}

static void nic_done(Setting *s) {
        free(NIC(s)->feature);
}

/* An original is what the read gave: a number, on or off for a boolean parameter or a
 * feature, a qdisc kind by the rules of the key's names. */
static const char *nic_param_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        static const char *const words[] = { "on", "off", NULL };

        (void) rc;
        if (s->kind == SETTING_NIC_FEATURE || (s->kind != SETTING_NIC_TXQUEUELEN && ethtool_param_is_boolean(NIC(s)->param)))
                return setting_word_problem(value, words);
        return setting_number_problem(value, UINT32_MAX);
}

static const char *nic_qdisc_original_problem(const Setting *s, SettingContext *rc, const char *value) {
        (void) s;
        (void) rc;
        return config_qdisc_name_is_valid(value) ? NULL : "not a qdisc kind";
}

#define NIC_SETTING_OPS                        \
        .object_size = sizeof(NicSetting),     \
        .group = SETTING_GROUP_NIC,            \
        .readback = READBACK_LOOKS_AGAIN,      \
        .sort_key = setting_nic_sort_key,              \
        .done = nic_done

#define NIC_PARAM_OPS NIC_SETTING_OPS, .original_problem = nic_param_original_problem

const SettingVTable nic_coalesce_vtable = { NIC_PARAM_OPS, .read = nic_param_read, .write = nic_param_write };
const SettingVTable nic_ring_vtable = { NIC_PARAM_OPS, .read = nic_param_read, .write = nic_param_write };
const SettingVTable nic_channels_vtable = { NIC_PARAM_OPS, .read = nic_param_read, .write = nic_param_write };
const SettingVTable nic_feature_vtable = { NIC_PARAM_OPS, .read = nic_feature_read, .write = nic_feature_write };
const SettingVTable nic_qdisc_vtable = { NIC_SETTING_OPS, .read = nic_qdisc_read, .write = nic_qdisc_write,
                                         .original_problem = nic_qdisc_original_problem };
const SettingVTable nic_pause_vtable = { NIC_PARAM_OPS, .read = nic_param_read, .write = nic_param_write };
const SettingVTable nic_eee_vtable = { NIC_PARAM_OPS, .read = nic_param_read, .write = nic_param_write };
const SettingVTable nic_txqueuelen_vtable = { NIC_PARAM_OPS, .read = nic_txqueuelen_read,
                                              .write = nic_txqueuelen_write };

/* --- planning, per interface --- */

/* The same NIC setting under another name (a rename): same interface, kind and key. */
static bool same_key(const Setting *a, const Setting *b) {
        if (a->kind != b->kind || NIC_HEAD(a)->ifindex != NIC_HEAD(b)->ifindex)
                return false;
        if (setting_is_nic_queue(a))
                return nic_queue_same_key(a, b);
        return NIC(a)->param == NIC(b)->param && streq_ptr(NIC(a)->feature, NIC(b)->feature);
}

typedef struct FeatureWant {
        const char *name;
        bool on;
} FeatureWant;

/* The features as the running kernel names them: a pattern (from a shorthand, "tso" is
 * tx-tcp*-segmentation) becomes every name it matches, so that ethtool -k agrees with
 * the configuration on every kernel; a pattern that matches nothing (or with no ethtool
 * netlink to ask) stays, and is reported unsupported. A later entry for a name wins (a
 * feature.X after a tso, a later section). */
static int nic_add_features(SettingTable *t, EthtoolClient *ethtool, const NicPosture *np, int ifindex,
                            const char *ifname) {
        _cleanup_free_ FeatureWant *want = NULL;
        char *const *names = NULL;
        size_t n_names = 0, n = 0, cap = 0;
        int r;

        if (ethtool && ethtool_feature_names(ethtool, &names, &n_names) < 0)
                n_names = 0;
        for (size_t f = 0; f < np->n_features; f++) {
                const NicFeature *nf = np->features[f];
                bool pattern = strpbrk(nf->name, "*?[") != NULL;
                size_t matched = 0;

                for (size_t i = 0; i <= n_names; i++) {
                        const char *name = i < n_names ? names[i] : nf->name;
                        if (i < n_names && (!pattern || !name || fnmatch(nf->name, name, 0) != 0))
                                continue;
                        if (i == n_names && pattern && matched > 0)
                                break;
                        if (array_grow(&want, &cap, n + 1) < 0)
                                return -ENOMEM;
                        want[n++] = (FeatureWant) { name, nf->on };
                        matched++;
                }
        }
        for (size_t i = 0; i < n; i++) {
                bool overridden = false;
                Setting *s = NULL;

                for (size_t j = i + 1; j < n && !overridden; j++)
                        overridden = streq(want[i].name, want[j].name);
                if (overridden)
                        continue;
                r = setting_new_nic_feature(ifindex, ifname, want[i].name, want[i].on, &s);
                if (r < 0 || (r = table_add(t, s)) < 0)
                        return r;
        }
        return 0;
}

static int nic_add_settings(SettingTable *t, EthtoolClient *ethtool, const Host *h, const Posture *p,
                            const NicPosture *np, int ifindex, const char *ifname) {
        Setting *s = NULL;
        int r;

        for (int k = 0; k < _ETHTOOL_PARAM_MAX; k++)
                if (np->param_set[k]) {
                        r = setting_new_nic_param(ifindex, ifname, (EthtoolParam) k, np->param[k], &s);
                        if (r < 0 || (r = table_add(t, s)) < 0)
                                return r;
                }
        r = nic_add_features(t, ethtool, np, ifindex, ifname);
        if (r < 0)
                return r;
        if (np->qdisc) {
                r = setting_new_nic_qdisc(ifindex, ifname, np->qdisc, &s);
                if (r < 0 || (r = table_add(t, s)) < 0)
                        return r;
        }
        if (np->txqueuelen_set) {
                r = setting_new_nic_txqueuelen(ifindex, ifname, np->txqueuelen, &s);
                if (r < 0 || (r = table_add(t, s)) < 0)
                        return r;
        }
        r = nic_queue_add_settings(t, h, p->mask_bits, np, ifindex, ifname);
        return r < 0 ? r : 0;
}

/* Whether a NIC setting's object ("eth0/rx_usecs", "eth0/rx-3", "eth0") is under ifname. */
static bool object_is_under(const char *object, const char *ifname) {
        size_t n = strlen(ifname);

        return strncmp(object, ifname, n) == 0 && (object[n] == '\0' || object[n] == '/');
}

static bool renamed_since(SettingContext *rc, int ifindex, const char *ifname) {
        LinkInfo l;

        return rc->rtnl && rtnl_get_link(rc->rtnl, ifindex, &l) >= 0 && !streq(l.name, ifname);
}

int nic_table_replan(SettingTable *t, SettingContext *rc, EthtoolClient *ethtool, const Host *h, const Posture *p,
                     int ifindex, const char *ifname, unsigned *ret_restored, unsigned *ret_failed) {
        _cleanup_free_ Setting **old = NULL;
        _cleanup_free_ bool *matched = NULL;
        Originals *originals = rc ? rc->originals : NULL;
        size_t n_old = 0, first_new;
        unsigned restored = 0, failed = 0;
        int renamed = -1; /* renamed_since(), asked once and only when needed */
        NicPosture np;
        int r, unpinned;

        /* Replanning an interface (renamed, up again) keeps what was learnt about each of
         * its settings: an unsupported one is not reported again, a fight goes on. The old
         * ones leave the table first (their names may be the new ones' too). */
        for (size_t i = 0; i < t->n; i++)
                n_old += setting_nic_ifindex(t->settings[i]) == ifindex;
        if (n_old > 0) {
                old = malloc(n_old * sizeof(Setting *));
                matched = calloc(n_old, sizeof(bool));
                if (!old || !matched)
                        return -ENOMEM;
                n_old = 0;
                for (size_t i = t->n; i > 0; i--)
                        if (setting_nic_ifindex(t->settings[i - 1]) == ifindex)
                                old[n_old++] = table_detach(t, t->settings[i - 1]);
        }
        first_new = t->n;
        unpinned = irq_table_unpin_nic(t, ifindex);

        r = nic_posture_resolve(p->config, p, ifname, &np);
        if (r > 0) {
                r = nic_add_settings(t, ethtool, h, p, &np, ifindex, ifname);
                if (r >= 0 && np.irq_cpus)
                        r = irq_table_pin_nic(t, h, p, ifindex, ifname, np.irq_cpus);
                nic_posture_done(&np);
                if (r >= 0)
                        r = 1;
        }
        for (size_t i = first_new; i < t->n; i++)
                for (size_t j = 0; j < n_old; j++)
                        if (!matched[j] && same_key(t->settings[i], old[j])) {
                                /* Renamed: the value lowlatd found stays the one restore
                                 * puts back, under the new name. */
                                if (originals)
                                        (void) originals_rename(originals, old[j]->kind, old[j]->object,
                                                                t->settings[i]->object);
                                setting_inherit(t->settings[i], old[j]);
                                matched[j] = true;
                                break;
                        }
        /* Renamed so that the posture no longer asks for a key (out of the glob): like a
         * reload that drops it, it goes back to how lowlatd found it. So does a key that
         * was not found because the interface was renamed again while it was being planned
         * (its queues listed under a name it no longer has): otherwise what lowlatd set
         * would be taken for the original under the next name. A key gone for another
         * reason (a queue removed with its channel) has nothing left to put back; a queue
         * the listing missed while its directory is there (under the name the interface
         * has now) is put back too, not dropped with lowlatd's value on it and its original
         * on file for no setting: the plan that lists it next finds its true value. */
        for (size_t j = 0; j < n_old; j++) {
                bool put_back = false;

                if (rc && originals && !matched[j]) {
                        if (renamed < 0 && object_is_under(old[j]->object, ifname))
                                renamed = renamed_since(rc, ifindex, ifname);
                        put_back = !object_is_under(old[j]->object, ifname) || renamed > 0 ||
                                   nic_queue_exists_now(old[j], rc);
                }
                if (put_back) {
                        int k = setting_restore(rc, old[j]);
                        if (k > 0)
                                restored++;
                        else if (k < 0 && k != -ENOENT)
                                failed++; /* -ENOENT: gone meanwhile (deleted, channels reduced) */
                }
                setting_free(old[j]);
        }
        if (originals)
                (void) originals_commit(originals);
        if (r >= 0 && unpinned > 0 && irq_table_retarget(t, p) < 0)
                r = -ENOMEM;
        if (r >= 0)
                table_sort(t);
        if (r >= 0 && ret_restored)
                *ret_restored = restored;
        if (r >= 0 && ret_failed)
                *ret_failed = failed;
        return r;
}

int nic_table_plan(SettingTable *t, EthtoolClient *ethtool, const Host *h, const Posture *p, int ifindex,
                   const char *ifname) {
        return nic_table_replan(t, NULL, ethtool, h, p, ifindex, ifname, NULL, NULL);
}

int nic_table_drop(SettingTable *t, const Posture *p, int ifindex) {
        for (size_t i = t->n; i > 0; i--)
                if (setting_nic_ifindex(t->settings[i - 1]) == ifindex)
                        table_remove(t, t->settings[i - 1]);
        return irq_table_unpin_nic(t, ifindex) > 0 ? irq_table_retarget(t, p) : 0;
}

bool nic_table_has(const SettingTable *t, int ifindex) {
        for (size_t i = 0; i < t->n; i++)
                if (setting_nic_ifindex(t->settings[i]) == ifindex)
                        return true;
        return irq_table_has_nic_pin(t, ifindex);
}
