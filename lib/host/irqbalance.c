/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irqbalance's control socket: finding it, one command with our credentials, its answer,
 * and the parsers for what it says (see irqbalance.h for the protocol). */
#include <dirent.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "host/irqbalance.h"
#include "basic/util.h"

void irqbalance_setup_done(IrqbalanceSetup *s) {
        cpuset_done(&s->banned);
}

/* The next token of *p, which ends at a single space or at end; NULL when there is none or
 * the separator is not one space (irqbalance writes exactly one). */
static const char *next_token(const char **p, const char *end, size_t *ret_len) {
        const char *start = *p, *q = start;

        while (q < end && *q != ' ')
                q++;
        if (q == start)
                return NULL;
        *ret_len = (size_t) (q - start);
        *p = q < end ? q + 1 : q;
        return start;
}

static bool token_is(const char *token, size_t len, const char *word) {
        return token && len == strlen(word) && memcmp(token, word, len) == 0;
}

/* The token as a NUL-terminated string in buf, for the strict number parsers. */
static const char *token_copy(const char *token, size_t len, char *buf, size_t size) {
        if (!token || len >= size)
                return NULL;
        memcpy(buf, token, len);
        buf[len] = '\0';
        return buf;
}

static int token_uint64(const char **p, const char *end, uint64_t *ret) {
        char buf[24];
        size_t len = 0;
        const char *t = next_token(p, end, &len);

        return token_copy(t, len, buf, sizeof(buf)) ? parse_uint64(buf, ret) : -EINVAL;
}

/* "IRQ n LOAD n DIFF n CLASS n": one IRQ banned on irqbalance's command line. */
static int parse_banned_irq(const char **p, const char *end) {
        static const char *const words[] = { "LOAD", "DIFF", "CLASS" };
        char buf[24];
        uint64_t v;
        int32_t class;
        size_t len = 0;
        const char *t;

        if (token_uint64(p, end, &v) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                t = next_token(p, end, &len);
                if (!token_is(t, len, words[i]))
                        return -EBADMSG;
                if (i < 2) {
                        if (token_uint64(p, end, &v) < 0)
                                return -EBADMSG;
                        continue;
                }
                t = next_token(p, end, &len);
                if (!token_copy(t, len, buf, sizeof(buf)) || parse_int32(buf, &class) < 0)
                        return -EBADMSG;
        }
        return 0;
}

int irqbalance_parse_setup(const char *text, size_t len, IrqbalanceSetup *ret) {
        _cleanup_cpuset_ CPUSet banned = CPUSET_EMPTY;
        _cleanup_free_ char *mask = NULL;
        const char *p = text, *end = text + len, *t;
        size_t n_irqs = 0, tlen = 0;
        uint64_t sleep_sec;
        int r;

        if (memchr(text, '\0', len))
                return -EBADMSG;
        /* Nothing follows the mask; tolerate a line end a later version might add. */
        while (end > p && (end[-1] == '\n' || end[-1] == ' '))
                end--;
        t = next_token(&p, end, &tlen);
        if (!token_is(t, tlen, "SLEEP") || token_uint64(&p, end, &sleep_sec) < 0 || sleep_sec > UINT32_MAX)
                return -EBADMSG;
        for (;;) {
                t = next_token(&p, end, &tlen);
                if (token_is(t, tlen, "BANNED"))
                        break;
                if (!token_is(t, tlen, "IRQ") || parse_banned_irq(&p, end) < 0)
                        return -EBADMSG;
                n_irqs++;
        }
        t = next_token(&p, end, &tlen);
        if (!t || p != end)
                return -EBADMSG;
        mask = strndup(t, tlen);
        if (!mask)
                return -ENOMEM;
        r = cpuset_parse_mask(mask, &banned);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -EBADMSG;
        cpuset_done(&ret->banned);
        ret->banned = banned;
        banned = CPUSET_EMPTY;
        ret->sleep_sec = (unsigned) sleep_sec;
        ret->n_banned_irqs = n_irqs;
        return 0;
}

int irqbalance_socket_pid(const char *name, unsigned *ret_pid) {
        static const char prefix[] = "irqbalance", suffix[] = ".sock";
        size_t len = strlen(name), digits;
        char buf[16];

        if (len <= strlen(prefix) + strlen(suffix) || strncmp(name, prefix, strlen(prefix)) != 0 ||
            !streq(name + len - strlen(suffix), suffix))
                return -EINVAL;
        digits = len - strlen(prefix) - strlen(suffix);
        if (digits >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, name + strlen(prefix), digits);
        buf[digits] = '\0';
        /* getpid() never prints a leading zero, and PID 0 is no process. */
        if (buf[0] == '0' || parse_unsigned(buf, ret_pid) < 0)
                return -EINVAL;
        return 0;
}

char *irqbalance_ban_command(const CPUSet *cpus) {
        _cleanup_free_ char *list = NULL;

        if (!cpus || cpuset_is_empty(cpus))
                return strdup("settings cpus NULL");
        list = cpuset_format_list(cpus);
        return list ? strdup_printf("settings cpus %s", list) : NULL;
}

char *irqbalance_socket_path(unsigned pid) {
        return strdup_printf("%s/irqbalance%u.sock", IRQBALANCE_SOCKET_DIR, pid);
}

int irqbalance_find(const Host *h, unsigned *ret_pid) {
        unsigned found = 0;
        struct dirent *de;
        DIR *d;
        int r;

        r = host_opendir(h, IRQBALANCE_SOCKET_DIR, &d);
        if (r == -ENOENT) {
                *ret_pid = 0;
                return 0;
        }
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_free_ char *comm = NULL;
                unsigned pid;

                if (irqbalance_socket_pid(de->d_name, &pid) < 0 || (found != 0 && pid > found))
                        continue;
                /* A socket outlives an irqbalance that was killed; its PID may be reused. */
                if (host_read_filef(h, &comm, "proc/%u/comm", pid) < 0 || !streq(strstrip(comm), "irqbalance"))
                        continue;
                found = pid;
        }
        closedir(d);
        *ret_pid = found;
        return 0;
}

bool irqbalance_peer_trusted(const struct ucred *peer, unsigned pid, bool in_unit) {
        return (peer->uid == 0 || in_unit) && peer->pid > 0 && (unsigned) peer->pid == pid;
}

bool irqbalance_in_unit(const Host *h, unsigned pid) {
        _cleanup_free_ char *text = NULL;
        size_t len = strlen(IRQBALANCE_UNIT_CGROUP);

        if (pid == 0 || host_read_filef(h, &text, "proc/%u/cgroup", pid) < 0)
                return false;
        for (char *line = text, *next; line && *line; line = next) {
                const char *path;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (strncmp(line, "0::", 3) == 0)
                        path = line + 3;
                else {
                        const char *controllers = strchr(line, ':');
                        if (!controllers || strncmp(controllers + 1, "name=systemd:", 13) != 0)
                                continue;
                        path = controllers + 14;
                }
                if (strncmp(path, IRQBALANCE_UNIT_CGROUP, len) == 0 && (path[len] == '\0' || path[len] == '/'))
                        return true;
        }
        return false;
}

int irqbalance_send(const Host *h, unsigned pid, const char *command, struct ucred *ret_peer) {
        _cleanup_free_ char *path = irqbalance_socket_path(pid);
        _cleanup_close_ int fd = -1;
        struct ucred peer = { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        socklen_t peer_len = sizeof(peer);
        union {
                struct cmsghdr header;
                char raw[CMSG_SPACE(sizeof(struct ucred))];
        } control = {};
        struct iovec iov = { (void *) command, strlen(command) };
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
        struct ucred cred = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };
        ssize_t n;

        if (!path)
                return -ENOMEM;
        fd = host_connect_unix(h, path, IRQBALANCE_ANSWER_TIMEOUT_USEC);
        if (fd < 0)
                return fd;
        /* Whoever can create a file in its directory can name a socket after irqbalance's
         * PID; the kernel says who listens on it. Nothing, not even our credentials, goes to
         * anyone else. */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) < 0)
                return negative_errno();
        if (ret_peer)
                *ret_peer = peer;
        if (!irqbalance_peer_trusted(&peer, pid, peer.uid != 0 && irqbalance_in_unit(h, pid)))
                return -EPERM;
        /* irqbalance reads one message and takes the first control message as the
         * sender's credentials: the command and the credentials go in one sendmsg(). */
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_CREDENTIALS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(cred));
        memcpy(CMSG_DATA(cmsg), &cred, sizeof(cred));
        n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != iov.iov_len)
                return -EIO;
        return TAKE_FD(fd);
}

int irqbalance_receive(int fd, uint64_t timeout_usec, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout_usec;

        for (;;) {
                ssize_t n;

                if (len + 1 >= size) {
                        /* Room for one byte past the limit, to tell "too long" from "at it". */
                        size_t bigger = MIN(size ? size * 2 : 4096, (size_t) IRQBALANCE_ANSWER_MAX + 2);
                        char *b;
                        if (size >= bigger)
                                return -EMSGSIZE;
                        b = realloc(buf, bigger);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        size = bigger;
                }
                n = recv(fd, buf + len, size - len - 1, MSG_DONTWAIT);
                if (n == 0)
                        break;
                if (n > 0) {
                        len += (size_t) n;
                        continue;
                }
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return negative_errno();
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int wait_ms = (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
                if (poll(&p, 1, wait_ms) < 0 && errno != EINTR)
                        return negative_errno();
        }
        if (len > IRQBALANCE_ANSWER_MAX)
                return -EMSGSIZE;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}
