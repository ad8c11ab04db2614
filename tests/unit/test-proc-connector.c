/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proc connector's message decoding (lib/host/proc-connector.c): which messages are a
 * new kernel thread, and that a message shorter than it says is refused. The messages are
 * built with the kernel's own structs, laid out as the kernel sends them (packed: the event
 * follows the 20-byte cn_msg). */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <string.h>

#include "tap.h"
#include "host/proc-connector.h"

typedef struct Message {
        struct nlmsghdr nlh;
        struct cn_msg cn;
        struct proc_event ev;
} __attribute__((packed)) Message;

typedef struct Seen {
        int calls;
        pid_t tid;
        uint64_t ns;
} Seen;

static void on_fork(void *userdata, pid_t tid, uint64_t forked_ns) {
        Seen *s = userdata;
        s->calls++;
        s->tid = tid;
        s->ns = forked_ns;
}

static Message event(enum what what) {
        Message m;

        memset(&m, 0, sizeof(m));
        m.nlh.nlmsg_len = sizeof(m);
        m.nlh.nlmsg_type = NLMSG_DONE;
        m.cn.id.idx = CN_IDX_PROC;
        m.cn.id.val = CN_VAL_PROC;
        m.cn.len = sizeof(struct proc_event);
        m.ev.what = what;
        m.ev.timestamp_ns = 123456789012ULL;
        return m;
}

static Message fork_event(pid_t parent_tgid, pid_t child_pid, pid_t child_tgid) {
        Message m = event(PROC_EVENT_FORK);

        m.ev.event_data.fork.parent_pid = parent_tgid;
        m.ev.event_data.fork.parent_tgid = parent_tgid;
        m.ev.event_data.fork.child_pid = child_pid;
        m.ev.event_data.fork.child_tgid = child_tgid;
        return m;
}

/* In an aligned buffer, as netlink_drain() hands a message over. */
static int parse(const Message *m, Seen *ret) {
        union {
                struct nlmsghdr nlh;
                uint8_t bytes[sizeof(Message)];
        } buffer;

        memcpy(buffer.bytes, m, sizeof(Message));
        memset(ret, 0, sizeof(*ret));
        return proc_connector_parse(&buffer.nlh, on_fork, ret);
}

static void test_kthreadd_fork(void) {
        Message m = fork_event(KTHREADD_PID, 4242, 4242);
        Seen seen;

        CHECK(parse(&m, &seen) == 1, "a fork by kthreadd of a new task is a new kernel thread");
        CHECK(seen.calls == 1 && seen.tid == 4242, "the callback gets the new thread's id");
        CHECK(seen.ns == 123456789012ULL, "and the kernel's fork time");
}

static void test_not_kthreads(void) {
        Message user = fork_event(1, 4242, 4242), thread = fork_event(KTHREADD_PID, 4243, KTHREADD_PID),
                zero = fork_event(KTHREADD_PID, 0, 0), other = fork_event(KTHREADD_PID, 4242, 4242);
        Seen seen;

        CHECK(parse(&user, &seen) == 0 && seen.calls == 0, "a fork by another process is none");
        CHECK(parse(&thread, &seen) == 0 && seen.calls == 0, "a thread of kthreadd itself is none");
        CHECK(parse(&zero, &seen) == 0 && seen.calls == 0, "a fork of pid 0 is none");
        other.cn.id.idx = CN_IDX_PROC + 1;
        CHECK(parse(&other, &seen) == 0 && seen.calls == 0, "another connector's message is none");
}

/* The kernel sends PROC_EVENT_COMM only for prctl(PR_SET_NAME) and a write to a thread's
 * /proc comm by its own process, never when a creator names a new kernel thread; one that
 * arrives (a task renaming itself) says nothing about a new kernel thread. */
static void test_comm_is_no_fork(void) {
        Message m = event(PROC_EVENT_COMM), exec = event(PROC_EVENT_EXEC);
        Seen seen;

        m.ev.event_data.comm.process_pid = 4242;
        m.ev.event_data.comm.process_tgid = 4242;
        strncpy(m.ev.event_data.comm.comm, "jbd2/loop0-8", sizeof(m.ev.event_data.comm.comm) - 1);
        CHECK(parse(&m, &seen) == 0 && seen.calls == 0, "PROC_EVENT_COMM is no new kernel thread");
        /* Its fields overlay the fork's: its tgid where a fork has the parent's tgid, its name
         * where a fork has the child's pid and tgid. Kthreadd's tgid and a name whose first
         * eight bytes repeat read as a fork by kthreadd: only the event's kind tells. */
        m.ev.event_data.comm.process_pid = KTHREADD_PID;
        m.ev.event_data.comm.process_tgid = KTHREADD_PID;
        memcpy(m.ev.event_data.comm.comm, "abcdabcd", 8);
        CHECK(parse(&m, &seen) == 0 && seen.calls == 0, "nor kthreadd renaming itself");
        exec.ev.event_data.exec.process_pid = 4242;
        exec.ev.event_data.exec.process_tgid = 4242;
        CHECK(parse(&exec, &seen) == 0 && seen.calls == 0, "PROC_EVENT_EXEC is none either");
}

static void test_malformed(void) {
        Message m = fork_event(KTHREADD_PID, 4242, 4242);
        Seen seen;

        m.nlh.nlmsg_len = NLMSG_HDRLEN + offsetof(struct cn_msg, data) - 1;
        CHECK(parse(&m, &seen) == -EINVAL && seen.calls == 0, "a message too short for its cn_msg is refused");
        m = fork_event(KTHREADD_PID, 4242, 4242);
        m.cn.len = sizeof(struct proc_event) + 1;
        CHECK(parse(&m, &seen) == -EINVAL && seen.calls == 0, "an event longer than the message is refused");
        m.cn.len = offsetof(struct proc_event, event_data) - 1;
        CHECK(parse(&m, &seen) == -EINVAL && seen.calls == 0, "an event too short for its header is refused");
        m.cn.len = offsetof(struct proc_event, event_data) + sizeof(struct fork_proc_event) - 1;
        CHECK(parse(&m, &seen) == -EINVAL && seen.calls == 0, "a fork too short for the child's ids is refused");
        m.cn.len = offsetof(struct proc_event, event_data) + sizeof(struct fork_proc_event);
        CHECK(parse(&m, &seen) == 1 && seen.tid == 4242, "a fork exactly as long as its fields is one");
        m = event(PROC_EVENT_COMM);
        m.cn.len = offsetof(struct proc_event, event_data);
        CHECK(parse(&m, &seen) == 0 && seen.calls == 0, "a short event of another kind is ignored, not refused");
}

int main(void) {
        test_kthreadd_fork();
        test_not_kthreads();
        test_comm_is_no_fork();
        test_malformed();
        return tap_finish();
}
