/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the proc connector's message parser (proc-connector.c) on whatever a datagram may
 * hold, message by message as netlink_drain() hands them over, against a reference with the
 * layout written out from <linux/connector.h> and <linux/cn_proc.h> by hand: a fork by
 * kthreadd (parent tgid 2) of a new task (child pid = tgid > 0) reaches the callback, with
 * that pid and the kernel's time; nothing else does; nothing is read past the message. */
#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>

#include "fuzz.h"
#include "basic/macro.h"
#include "host/proc-connector.h"

/* Offsets from the start of the message: nlmsghdr 16, cn_msg 20 (id 8, seq, ack, len,
 * flags), then proc_event: what, cpu, timestamp (8), fork: parent pid, parent tgid, child
 * pid, child tgid. */
enum {
        OFF_IDX = 16, OFF_VAL = 20, OFF_LEN = 32, OFF_EVENT = 36, OFF_WHAT = 36, OFF_TIME = 44,
        OFF_PARENT_TGID = 56, OFF_CHILD_PID = 60, OFF_CHILD_TGID = 64, FORK_END = 68,
};

static uint32_t u32(const uint8_t *p) {
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

typedef struct Seen {
        int calls;
        pid_t tid;
        uint64_t ns;
} Seen;

static void on_fork(void *userdata, pid_t tid, uint64_t ns) {
        Seen *s = userdata;
        s->calls++;
        s->tid = tid;
        s->ns = ns;
}

/* 1 for a kthreadd fork, 0 for another message, -1 when malformed. */
static int reference(const uint8_t *m, uint32_t len, pid_t *ret_tid, uint64_t *ret_ns) {
        uint16_t cn_len;

        if (len < OFF_EVENT)
                return -1;
        if (u32(m + OFF_IDX) != 1 || u32(m + OFF_VAL) != 1)
                return 0;
        memcpy(&cn_len, m + OFF_LEN, sizeof(cn_len));
        if (cn_len > len - OFF_EVENT || cn_len < 16)
                return -1;
        if (u32(m + OFF_WHAT) != 1)
                return 0;
        if (OFF_EVENT + (uint32_t) cn_len < FORK_END)
                return -1;
        if (u32(m + OFF_PARENT_TGID) != 2 || (int32_t) u32(m + OFF_CHILD_PID) <= 0 ||
            u32(m + OFF_CHILD_PID) != u32(m + OFF_CHILD_TGID))
                return 0;
        *ret_tid = (pid_t) u32(m + OFF_CHILD_PID);
        memcpy(ret_ns, m + OFF_TIME, sizeof(*ret_ns));
        return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* As netlink_drain() receives it: an aligned buffer, the exact length. */
        uint8_t *buf = malloc(size ? size : 1);

        FUZZ_CHECK(buf, "out of memory");
        memcpy(buf, data, size);
        /* NLMSG_OK() and NLMSG_NEXT(), spelt out for an unsigned length. */
        for (size_t off = 0; size - off >= NLMSG_HDRLEN;) {
                const struct nlmsghdr *nlh = (const struct nlmsghdr *) (buf + off);

                if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > size - off)
                        break;
                off += MIN((size_t) NLMSG_ALIGN(nlh->nlmsg_len), size - off);
                Seen seen = {};
                pid_t tid = 0;
                uint64_t ns = 0;
                int want = reference((const uint8_t *) nlh, nlh->nlmsg_len, &tid, &ns);
                int r = proc_connector_parse(nlh, on_fork, &seen);

                FUZZ_CHECK(r == (want < 0 ? -EINVAL : want), "parse returned %d, the reference %d", r, want);
                FUZZ_CHECK(seen.calls == (r == 1), "%d callbacks for a result of %d", seen.calls, r);
                if (r == 1)
                        FUZZ_CHECK(seen.tid == tid && seen.ns == ns, "tid %d at %llu, expected %d at %llu", (int) seen.tid,
                                   (unsigned long long) seen.ns, (int) tid, (unsigned long long) ns);
        }
        free(buf);
        return 0;
}
