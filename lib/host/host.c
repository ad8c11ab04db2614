/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host-access layer: opening paths relative to the root fd. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>

#include "basic/array.h"
#include "host/host.h"
#include "basic/util.h"

int host_open(const char *root, Host **ret) {
        _cleanup_(host_freep) Host *h = NULL;

        h = calloc(1, sizeof(Host));
        if (!h)
                return -ENOMEM;
        h->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (h->root_fd < 0)
                return negative_errno();
        h->root_path = strdup(root);
        if (!h->root_path)
                return -ENOMEM;
        /* "/" + "proc/..." must not become "//proc/..." in messages. */
        size_t n = strlen(h->root_path);
        while (n > 1 && h->root_path[n - 1] == '/')
                h->root_path[--n] = '\0';
        *ret = TAKE_PTR(h);
        return 0;
}

Host *host_free(Host *h) {
        if (!h)
                return NULL;
        safe_close(h->root_fd);
        free(h->root_path);
        free(h);
        return NULL;
}

/* How many times openat2() is asked again when it says EAGAIN. With RESOLVE_IN_ROOT the
 * kernel gives up on a path whose ".." it walked while anything on the system was renamed
 * (the rename_lock sequence moved), and asks the caller to try again (openat2(2)). Every
 * /sys/class/net/NAME is a link through "../../devices", so a host renaming network
 * interfaces anywhere made lowlatd's opens under it fail now and then (integration-
 * nic_faults' churn: "Cannot plan interface ...: Resource temporarily unavailable"). A
 * try takes microseconds and fails only if a rename lands inside it. */
#define OPENAT2_TRIES 64

/* flags go to the kernel as they are (openat2() refuses O_NOCTTY beside O_PATH). */
static int host_openat2(const Host *h, const char *relpath, int flags) {
        struct open_how how = {
                .flags = (uint64_t) flags,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        while (*relpath == '/')
                relpath++;
        for (unsigned i = 0; i < OPENAT2_TRIES; i++) {
                fd = (int) syscall(SYS_openat2, h->root_fd, relpath, &how, sizeof(how));
                if (fd >= 0 || errno != EAGAIN)
                        break;
        }
        if (fd >= 0)
                return fd;
        if (errno != ENOSYS)
                return negative_errno();
        /* Kernels before 5.6: plain openat(); callers only pass validated relative paths. */
        fd = openat(h->root_fd, relpath, flags);
        return fd >= 0 ? fd : negative_errno();
}

int host_open_file(const Host *h, const char *relpath, int flags) {
        /* openat2() refuses O_PATH with any flag beyond O_DIRECTORY and O_NOFOLLOW. */
        return host_openat2(h, relpath, flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NOCTTY));
}

/* The path the kernel has for an open fd (its name in /proc/self/fd). */
static int fd_path(int fd, char **ret) {
        char link[64], *target;
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        target = malloc(PATH_MAX);
        if (!target)
                return -ENOMEM;
        n = readlink(link, target, PATH_MAX - 1);
        if (n < 0 || n >= PATH_MAX - 1) {
                int r = n < 0 ? negative_errno() : -ENAMETOOLONG;
                free(target);
                return r;
        }
        target[n] = '\0';
        *ret = target;
        return 0;
}

int host_resolve(const Host *h, const char *relpath, char **ret, mode_t *ret_mode) {
        _cleanup_free_ char *root = NULL, *target = NULL;
        _cleanup_close_ int fd = -1;
        const char *rest;
        char *relative;
        struct stat st;
        size_t n;
        int r;

        fd = host_openat2(h, relpath, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        r = fd_path(h->root_fd, &root);
        if (r >= 0)
                r = fd_path(fd, &target);
        if (r < 0)
                return r;
        /* Both names as this mount namespace sees them, so a root reached through a
         * symlink (or "/") compares by what it is. */
        n = streq(root, "/") ? 0 : strlen(root);
        if (strncmp(target, root, n) != 0 || (target[n] != '/' && target[n] != '\0'))
                return -EXDEV; /* only without openat2(), which keeps resolution in the root */
        rest = target + n;
        while (*rest == '/')
                rest++;
        relative = strdup(rest);
        if (!relative)
                return -ENOMEM;
        *ret = relative;
        if (ret_mode)
                *ret_mode = st.st_mode;
        return 0;
}

bool host_systemd_is_init(const Host *h) {
        _cleanup_close_ int fd = host_open_file(h, "run/systemd/system", O_RDONLY | O_DIRECTORY);

        return fd >= 0;
}

bool host_path_exists(const Host *h, const char *relpath) {
        /* O_PATH opens the name only (no driver's open() runs); openat2() refuses it with
         * any flag but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC, so not through host_open_file(). */
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        struct stat st;
        int fd;

        while (*relpath == '/')
                relpath++;
        fd = (int) syscall(SYS_openat2, h->root_fd, relpath, &how, sizeof(how));
        if (fd >= 0) {
                safe_close(fd);
                return true;
        }
        if (errno != ENOSYS)
                return false;
        return fstatat(h->root_fd, relpath, &st, 0) >= 0;
}

int host_read_file(const Host *h, const char *relpath, char **ret) {
        return host_read_file_len(h, relpath, ret, NULL);
}

int host_read_file_len(const Host *h, const char *relpath, char **ret, size_t *ret_len) {
        return host_read_file_max(h, relpath, HOST_FILE_MAX, ret, ret_len);
}

int host_read_file_max(const Host *h, const char *relpath, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        fd = host_open_file(h, relpath, O_RDONLY);
        if (fd < 0)
                return fd;
        if (array_grow(&buf, &size, 4096) < 0)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                /* Room for one byte more and the NUL; it doubles from 4096. No read goes
                 * past max + 1 bytes: the buffer may have grown beyond max, and a file
                 * that ended there would otherwise be read whole (264 MiB at a max of
                 * 256 MiB). */
                if (len + 1 >= size && array_grow(&buf, &size, len + 2) < 0)
                        return -ENOMEM;
                n = read(fd, buf + len, MIN(size - len - 1, max + 1 - len));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int host_write_file(const Host *h, const char *relpath, const char *value) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        fd = host_open_file(h, relpath, O_WRONLY | O_TRUNC);
        if (fd < 0)
                return fd;
        n = write(fd, value, len);
        if (n < 0)
                return negative_errno();
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int host_write_file_of_fd(int fd, const char *value) {
        _cleanup_close_ int wfd = -1;
        char link[64];
        size_t len = strlen(value);
        struct stat st;
        ssize_t n;

        if (fd < 0)
                return -EBADF;
        /* A file unlinked since (a plain file) is gone, not renamed; kernfs refuses to open
         * a removed node by itself. */
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_nlink == 0)
                return -ENOENT;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        wfd = open(link, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
        if (wfd < 0)
                return negative_errno();
        n = write(wfd, value, len);
        if (n < 0)
                return negative_errno();
        return (size_t) n == len ? 0 : -EIO;
}

int host_connect_unix(const Host *h, const char *relpath, uint64_t timeout_usec) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dir_fd = -1, fd = -1;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *name = strrchr(relpath, '/');
        struct stat st;
        int n;

        dir = name ? strndup(relpath, (size_t) (name - relpath)) : strdup(".");
        name = name ? name + 1 : relpath;
        if (!dir)
                return -ENOMEM;
        if (isempty(name))
                return -EINVAL;
        dir_fd = host_open_file(h, dir, O_PATH | O_DIRECTORY);
        if (dir_fd < 0)
                return dir_fd;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir_fd, name);
        if (n < 0 || (size_t) n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        /* A blocking connect() waits for room in the backlog for at most SO_SNDTIMEO. */
        struct timeval tv = { .tv_sec = (time_t) (timeout_usec / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (timeout_usec % USEC_PER_SEC) };
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (timeout_usec ? 0 : SOCK_NONBLOCK), 0);
        if (fd < 0)
                return negative_errno();
        if (timeout_usec && setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return errno == EINPROGRESS ? -EAGAIN : negative_errno();
        if (timeout_usec && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

char *host_path(const Host *h, const char *relpath) {
        while (*relpath == '/')
                relpath++;
        return strdup_printf("%s/%s", streq(h->root_path, "/") ? "" : h->root_path, relpath);
}

bool host_is_live(const Host *h) {
        struct stat root, real;
        char link[32], self[32];
        ssize_t n;

        if (fstat(h->root_fd, &root) < 0 || stat("/", &real) < 0 || root.st_dev != real.st_dev ||
            root.st_ino != real.st_ino)
                return false;
        /* The root is "/", so this resolves within it. */
        n = readlinkat(h->root_fd, "proc/self", link, sizeof(link) - 1);
        if (n <= 0)
                return false;
        link[n] = '\0';
        snprintf(self, sizeof(self), "%d", (int) getpid());
        return streq(link, self);
}

void host_cpus_done(HostCpus *c) {
        cpuset_done(&c->online);
        cpuset_done(&c->possible);
        cpuset_done(&c->isolated);
        cpuset_done(&c->nohz_full);
}

static int read_cpu_list(const Host *h, const char *relpath, bool optional, CPUSet *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = host_read_file(h, relpath, &text);
        if (r == -ENOENT && optional)
                return 0;
        if (r < 0)
                return r;
        /* nohz_full reads "(null)" when the kernel was booted without it. */
        if (strncmp(strstrip(text), "(null)", 6) == 0)
                return 0;
        return cpuset_parse_list(text, ret);
}

int host_read_cpus(const Host *h, HostCpus *ret) {
        HostCpus c = {};
        int r;

        r = read_cpu_list(h, "sys/devices/system/cpu/online", false, &c.online);
        if (r >= 0)
                r = read_cpu_list(h, "sys/devices/system/cpu/possible", true, &c.possible);
        if (r >= 0 && cpuset_is_empty(&c.possible))
                r = cpuset_copy(&c.possible, &c.online);
        if (r >= 0)
                r = read_cpu_list(h, "sys/devices/system/cpu/isolated", true, &c.isolated);
        if (r >= 0)
                r = read_cpu_list(h, "sys/devices/system/cpu/nohz_full", true, &c.nohz_full);
        if (r >= 0 && cpuset_is_empty(&c.online))
                r = -ENODATA;
        if (r < 0) {
                host_cpus_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}

int host_opendir(const Host *h, const char *relpath, DIR **ret) {
        int fd = host_open_file(h, relpath, O_RDONLY | O_DIRECTORY);
        DIR *d;

        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        *ret = d;
        return 0;
}

int host_read_filev(const Host *h, char **ret, const char *fmt, va_list ap) {
        _cleanup_free_ char *path = strdup_vprintf(fmt, ap);

        if (!path)
                return -ENOMEM;
        return host_read_file(h, path, ret);
}

int host_read_filef(const Host *h, char **ret, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = host_read_filev(h, ret, fmt, ap);
        va_end(ap);
        return r;
}

static int compare_unsigned(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return x < y ? -1 : x > y;
}

/* Restores the max-heap property below position i. */
static void heap_sift_down(unsigned *heap, size_t n, size_t i) {
        for (;;) {
                size_t largest = i, l = 2 * i + 1, r = 2 * i + 2;
                unsigned t;
                if (l < n && heap[l] > heap[largest])
                        largest = l;
                if (r < n && heap[r] > heap[largest])
                        largest = r;
                if (largest == i)
                        return;
                t = heap[i];
                heap[i] = heap[largest];
                heap[largest] = t;
                i = largest;
        }
}

static void heap_push(unsigned *heap, size_t *n, unsigned v) {
        size_t i = (*n)++;
        heap[i] = v;
        while (i > 0 && heap[(i - 1) / 2] < heap[i]) {
                unsigned t = heap[i];
                heap[i] = heap[(i - 1) / 2];
                heap[(i - 1) / 2] = t;
                i = (i - 1) / 2;
        }
}

int host_list_numbers(const Host *h, const char *relpath, size_t max, unsigned **ret, size_t *ret_n,
                      size_t *ret_total) {
        _cleanup_free_ unsigned *heap = NULL; /* a max-heap of the lowest seen so far */
        size_t n = 0, allocated = 0, total = 0;
        struct dirent *de;
        DIR *d;
        int r;

        if (max == 0)
                return -EINVAL;
        r = host_opendir(h, relpath, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                unsigned v;

                if (parse_unsigned(de->d_name, &v) < 0)
                        continue;
                total++;
                if (n == max) {
                        if (v < heap[0]) {
                                heap[0] = v;
                                heap_sift_down(heap, n, 0);
                        }
                        continue;
                }
                if (array_grow(&heap, &allocated, n + 1) < 0) {
                        closedir(d);
                        return -ENOMEM;
                }
                heap_push(heap, &n, v);
        }
        closedir(d);
        /* Sorted, so the output is the same from one run to the next. */
        if (n > 1)
                qsort(heap, n, sizeof(unsigned), compare_unsigned);
        *ret = TAKE_PTR(heap);
        *ret_n = n;
        if (ret_total)
                *ret_total = total;
        return 0;
}
