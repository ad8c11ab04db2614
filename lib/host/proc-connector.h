/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's proc connector (netlink NETLINK_CONNECTOR, group CN_IDX_PROC): a message
 * for every fork, exec and exit on the host. lowlatd listens for one kind only, a fork by
 * kthreadd (pid 2), which is a new kernel thread; a socket filter in the kernel drops every
 * other message, so other processes' forks never wake lowlatd. Needs CAP_NET_ADMIN, and
 * lowlatd in the initial PID and network namespaces (elsewhere the kernel sends nothing).
 * The naming of a new kernel thread is not on the connector: PROC_EVENT_COMM comes only from
 * prctl(PR_SET_NAME) and a write to /proc/PID/comm by the task's own process, while a kernel
 * thread's creator names it with set_task_comm(), which sends nothing (0 of ~200 new threads
 * on 6.18: tests/bench/bench_kthreads.py counts them). Letting COMM through would wake
 * lowlatd for every thread a program names and never for a kernel thread. */
#pragma once

#include <linux/netlink.h>
#include <stdint.h>
#include <sys/types.h>

/* kthreadd's pid in the initial PID namespace, which the connector reports pids in. */
#define KTHREADD_PID 2

typedef struct ProcConnector ProcConnector;

/* A new kernel thread: its thread id, and when the kernel forked it (CLOCK_MONOTONIC ns). */
typedef void (*KthreadForkHandler)(void *userdata, pid_t tid, uint64_t forked_ns);

/* Opens the socket, attaches the filter, joins the group and asks the kernel to send.
 * -errno when any of that fails (EPERM without CAP_NET_ADMIN, EPROTONOSUPPORT without
 * CONFIG_PROC_EVENTS, ECONNREFUSED in a network namespace of its own). */
int proc_connector_open(ProcConnector **ret);
/* Asks the kernel to stop sending (it counts listeners) and closes. NULL is fine. */
ProcConnector *proc_connector_free(ProcConnector *c);
int proc_connector_fd(const ProcConnector *c);

/* Reads every queued message and calls cb for each kthreadd fork. -ENOBUFS when messages
 * were lost (the socket overflowed): the caller looks at every kernel thread again. */
int proc_connector_dispatch(ProcConnector *c, KthreadForkHandler cb, void *userdata);

/* One netlink message (nlh->nlmsg_len bytes, checked by the caller to be in the buffer):
 * calls cb and returns 1 when it is a fork by kthreadd of a new task; 0 for any other
 * connector message; -EINVAL when it is too short for what it says it is. Pure. */
int proc_connector_parse(const struct nlmsghdr *nlh, KthreadForkHandler cb, void *userdata);
