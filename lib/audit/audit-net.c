/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit's look at packet steering: receive queues whose RPS mask sends the stack's
 * work onto isolated CPUs, and RFS flow tables per queue without the global one. What a
 * [nic] section sets is what lowlatd will hold, so it counts instead of the host's value. */
#include <dirent.h>
#include <string.h>

#include "basic/array.h"
#include "audit/audit-internal.h"
#include "config/nic-posture.h"
#include "basic/util.h"

/* One interface's receive queues as lowlatd will leave them. */
typedef struct RxQueues {
        char **names;         /* "rx-0", ... */
        size_t n, allocated;
        CPUSet rps_spread;    /* the CPUs the queues' RPS masks name, together */
        bool flow_tables;     /* some queue has (or will have) an RFS flow table */
} RxQueues;

static void rx_queues_done(RxQueues *q) {
        for (size_t i = 0; i < q->n; i++)
                free(q->names[i]);
        free(q->names);
        cpuset_done(&q->rps_spread);
}

static void read_rx_queues(Audit *a, const char *ifname, const NicPosture *np, RxQueues *ret) {
        _cleanup_free_ char *dir = audit_check_alloc(a, strdup_printf("sys/class/net/%s/queues", ifname));
        _cleanup_cpuset_ CPUSet mask = CPUSET_EMPTY;
        DIR *d = NULL;
        struct dirent *e;

        if (!dir || host_opendir(a->host, dir, &d) < 0)
                return;
        while ((e = readdir(d)) && !a->error) {
                _cleanup_free_ char *text = NULL, *flow = NULL;
                uint64_t entries;

                if (strncmp(e->d_name, "rx-", 3) != 0)
                        continue;
                if (np && np->rps_cpus)
                        audit_check_errno(a, cpuset_or(&ret->rps_spread, np->rps_cpus));
                else if (audit_read_value(a, &text, "%s/%s/rps_cpus", dir, e->d_name) >= 0 &&
                         cpuset_parse_mask(text, &mask) >= 0)
                        audit_check_errno(a, cpuset_or(&ret->rps_spread, &mask));
                if (np && np->rps_flow_cnt_set)
                        ret->flow_tables = ret->flow_tables || np->rps_flow_cnt > 0;
                else if (audit_read_value(a, &flow, "%s/%s/rps_flow_cnt", dir, e->d_name) >= 0 &&
                         parse_uint64(flow, &entries) >= 0 && entries > 0)
                        ret->flow_tables = true;
                if (audit_check_errno(a, array_grow(&ret->names, &ret->allocated, ret->n + 1)) < 0)
                        break;
                if (!(ret->names[ret->n] = audit_check_alloc(a, strdup(e->d_name))))
                        break;
                ret->n++;
        }
        closedir(d);
}

/* The RPS mask to write: the housekeeping CPUs, as wide as the kernel's masks. */
static char *housekeeping_mask(Audit *a) {
        return audit_check_alloc(a, cpuset_format_mask(&a->posture->housekeeping, a->posture->mask_bits));
}

void audit_check_rps(Audit *a) {
        const Posture *p = a->posture;
        _cleanup_free_ char *flow_interfaces = NULL, *sock_flow = NULL;
        size_t n_flow = 0;
        DIR *d = NULL;
        struct dirent *e;

        if (host_opendir(a->host, "sys/class/net", &d) < 0)
                return;
        while ((e = readdir(d)) && !a->error) {
                _cleanup_(rx_queues_done) RxQueues q = {};
                NicPosture np;
                bool asked;
                int matched;

                if (e->d_name[0] == '.')
                        continue;
                matched = nic_posture_resolve(a->config, p, e->d_name, &np);
                if (audit_check_errno(a, matched) < 0)
                        break;
                read_rx_queues(a, e->d_name, matched > 0 ? &np : NULL, &q);
                asked = matched > 0 && np.rps_cpus;
                if (matched > 0)
                        nic_posture_done(&np);
                if (q.n == 0)
                        continue;
                if (q.flow_tables) {
                        char *list = audit_check_alloc(a, strdup_printf("%s%s%s", flow_interfaces ?: "",
                                                                        flow_interfaces ? ", " : "", e->d_name));
                        if (!list)
                                break;
                        free(flow_interfaces);
                        flow_interfaces = list;
                        n_flow++;
                }
                if (cpuset_intersects(&q.rps_spread, &p->isolated)) {
                        _cleanup_free_ char *onto = NULL, *mask = housekeeping_mask(a);
                        cpuset_and(&q.rps_spread, &p->isolated);
                        onto = audit_cpus_phrase(a, &q.rps_spread);
                        if (onto && mask)
                                finding_add(a, SEVERITY_WARNING, "net.rps-isolated", e->d_name,
                                            "RPS spreads the packets %s receives (%zu receive queue%s) onto isolated "
                                            "%s%s: the network stack's receive work then runs there as softirqs, "
                                            "between the application's instructions. Keep it on the housekeeping "
                                            "CPUs: add rps_cpus = housekeeping to a [nic \"%s\"] section of "
                                            "lowlatd.conf (lowlatd then keeps every queue, also ones added later), "
                                            "or now: echo %s > /sys/class/net/%s/queues/rx-N/rps_cpus for each queue.",
                                            e->d_name, q.n, q.n == 1 ? "" : "s", onto,
                                            asked ? " (as [nic] rps_cpus asks)" : "", e->d_name,
                                            mask, e->d_name);
                }
        }
        closedir(d);
        if (n_flow == 0 || a->error)
                return;
        /* RFS looks a flow up in the global table first: with none, the queues' tables are
         * allocated and never used. */
        if (audit_read_value(a, &sock_flow, "proc/sys/net/core/rps_sock_flow_entries") < 0)
                return;
        for (size_t i = a->config->n_sysctls; i > 0; i--)
                if (streq(a->config->sysctls[i - 1].key, "net.core.rps_sock_flow_entries")) {
                        free(sock_flow);
                        sock_flow = audit_check_alloc(a, strdup(a->config->sysctls[i - 1].value));
                        break;
                }
        if (sock_flow && streq(sock_flow, "0"))
                finding_add(a, SEVERITY_WARNING, "net.rps-flow-table", "net.core.rps_sock_flow_entries",
                            "rps_flow_cnt gives the receive queues of %s flow tables, but "
                            "net.core.rps_sock_flow_entries is 0: receive flow steering has no global table to "
                            "find a flow's CPU in, so the queues' tables are never used. Size it for the flows "
                            "expected (32768 is usual): add net.core.rps_sock_flow_entries = 32768 to [sysctl] in "
                            "lowlatd.conf (lowlatd then keeps it), or now: sysctl -w "
                            "net.core.rps_sock_flow_entries=32768; or drop rps_flow_cnt.",
                            flow_interfaces);
}

/* The kernel's network timestamping static key: switched by the first socket that asks
 * for receive timestamps and by the last one to close, each switch a text patch that
 * stops every CPU. Whether some other process holds it cannot be seen from /proc, so this
 * says what lowlatd does. */
void audit_check_timestamping(Audit *a) {
        if (cpuset_is_empty(&a->posture->isolated))
                return;
        if (!a->config->hold_timestamping)
                finding_add(a, SEVERITY_INFO, "net.timestamping-unheld", "SO_TIMESTAMP",
                            "lowlatd does not hold the kernel's network timestamping on: whenever the first socket "
                            "asking for receive timestamps opens (ptp4l, chronyd, an application with SO_TIMESTAMP or "
                            "SO_TIMESTAMPING) or the last one closes, the kernel switches a static key and patches "
                            "its text, stopping every CPU with an IPI, the isolated ones included. [cpus] "
                            "hold_timestamping = yes keeps a socket open so that it never switches (every received "
                            "packet is then timestamped).");
        else if (a->config->mode == DAEMON_MODE_OBSERVE)
                finding_add(a, SEVERITY_INFO, "net.timestamping-unheld", "SO_TIMESTAMP",
                            "[cpus] hold_timestamping = yes, but lowlatd observes (mode = observe): it holds no "
                            "socket, so the timestamping static key still switches when other sockets come and go.");
}
