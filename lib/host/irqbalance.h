/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance's control socket, as irqbalance.c's sock_handle() speaks it (1.7 and later):
 * one command per connection, sent with the sender's SCM_CREDENTIALS (only uid 0 is
 * obeyed; anyone else is closed on without an answer). "setup" is answered with
 * "SLEEP n [IRQ n LOAD n DIFF n CLASS n ]...BANNED MASK" and a close; "settings cpus LIST"
 * makes LIST its banned CPUs from its next rescan on (replacing IRQBALANCE_BANNED_CPULIST
 * and its own isolcpus=/nohz_full= reading), "settings cpus NULL" drops that again; neither
 * is answered. The socket is /run/irqbalance/irqbalance<PID>.sock. The parsers here are
 * pure (and fuzzed); the exchange goes through the host layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "basic/cpuset.h"
#include "host/host.h"

/* Where irqbalance binds its socket, under the root; its unit's RuntimeDirectory=, so the
 * directory itself comes and goes with the service. */
#define IRQBALANCE_SOCKET_DIR "run/irqbalance"
/* The longest answer read: "setup" lists every IRQ banned on irqbalance's command line
 * (about 50 bytes each) before BANNED. */
#define IRQBALANCE_ANSWER_MAX (256U * 1024U)
/* How long a look waits for an answer. irqbalance answers from its main loop at once,
 * except while it sleeps through a topology rescan (sleep_approx() in scan(): one whole
 * interval, 10 s by default); a look never blocks lowlatd for that. */
#define IRQBALANCE_ANSWER_TIMEOUT_USEC (250 * USEC_PER_MSEC)

typedef struct IrqbalanceSetup {
        unsigned sleep_sec; /* its rebalancing interval (-t, "settings sleep") */
        size_t n_banned_irqs;
        CPUSet banned; /* the CPUs it places no IRQ on */
} IrqbalanceSetup;

void irqbalance_setup_done(IrqbalanceSetup *s);

/* The answer to "setup", len bytes (a NUL inside is garbage): 0 with *ret filled (its
 * banned set replaced), -EBADMSG when it is not one, -ENOMEM. */
int irqbalance_parse_setup(const char *text, size_t len, IrqbalanceSetup *ret);
/* The PID in a socket's name, "irqbalance812.sock": 0, or -EINVAL for any other name. */
int irqbalance_socket_pid(const char *name, unsigned *ret_pid);
/* "settings cpus LIST", or "settings cpus NULL" for an empty or NULL set (irqbalance 1.9
 * crashes on an empty list). Newly allocated. */
char *irqbalance_ban_command(const CPUSet *cpus);

/* The irqbalance to talk to: the lowest PID among the sockets in IRQBALANCE_SOCKET_DIR whose
 * process (proc/PID/comm) is irqbalance; a socket left by one that died is skipped. 0 with
 * *ret_pid (0 when no running irqbalance has a socket there), or -errno when the directory
 * cannot be listed (-ENOENT is "no socket": 0). */
int irqbalance_find(const Host *h, unsigned *ret_pid);
/* The socket's path under the root, newly allocated. */
char *irqbalance_socket_path(unsigned pid);

/* Whether the process listening on irqbalance pid's socket (its SO_PEERCRED) is that
 * irqbalance: the PID the socket's name claims, and uid 0 or, for a unit that runs it as
 * another user, in_unit (irqbalance_in_unit() of that PID). */
bool irqbalance_peer_trusted(const struct ucred *peer, unsigned pid, bool in_unit);
/* Whether process pid runs in irqbalance's own unit: its systemd cgroup (proc/PID/cgroup,
 * the unified "0::" line or the v1 "name=systemd" one) is IRQBALANCE_UNIT_CGROUP or below
 * it. Only root can move a process there; a user's own units live under user.slice. */
#define IRQBALANCE_UNIT_CGROUP "/system.slice/irqbalance.service"
bool irqbalance_in_unit(const Host *h, unsigned pid);
/* Connects to irqbalance pid's socket (waiting IRQBALANCE_ANSWER_TIMEOUT_USEC at most for
 * room in its backlog of one), checks who listens on it and sends command with this
 * process's credentials. Returns the connected (non-blocking) fd, from which an answer is
 * read, or -errno (see host_connect_unix()): -EPERM when the listener is not trusted
 * (irqbalance_peer_trusted(), irqbalance_in_unit() where it is not root), nothing sent. *ret_peer (may be NULL): the listener's
 * credentials, once connected. */
int irqbalance_send(const Host *h, unsigned pid, const char *command, struct ucred *ret_peer);
/* Reads the answer on fd up to irqbalance's close, waiting at most timeout_usec (0: only
 * what is there now). 0 with the text (NUL-terminated, *ret_len bytes), -ETIMEDOUT when
 * irqbalance has not closed by then (what was read is dropped), -EMSGSIZE past
 * IRQBALANCE_ANSWER_MAX, or another -errno. */
int irqbalance_receive(int fd, uint64_t timeout_usec, char **ret, size_t *ret_len);
