/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host-access layer: every /proc, /sys and /dev path is opened relative to one root
 * directory fd (the HWLOC_FSROOT pattern), so tests and containers can point lowlatd at
 * another tree with --root. Nothing outside this file opens a host path. */
#pragma once

#include <dirent.h>
#include <stdarg.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/cpuset.h"
#include "basic/macro.h"

typedef struct Host {
        int root_fd;
        char *root_path; /* for messages and inotify, which has no *at() form */
} Host;

int host_open(const char *root, Host **ret);
Host *host_free(Host *h);
DEFINE_POINTER_CLEANUP(Host, host_free);

/* relpath has no leading '/', e.g. "proc/irq/42/smp_affinity_list". Resolution stays
 * inside the root, even through absolute symlinks and "..". Returns an fd or -errno. */
int host_open_file(const Host *h, const char *relpath, int flags);
/* Where relpath leads, following links inside the root as host_open_file() does: the
 * path relative to the root ("sys/devices/system/machinecheck/machinecheck0/ignore_ce"; ""
 * for the root itself), newly allocated, and the file's type and mode in *ret_mode (may be
 * NULL). -ENOENT when nothing is there. */
int host_resolve(const Host *h, const char *relpath, char **ret, mode_t *ret_mode);
/* Whether relpath exists under the root, without opening what it names. */
bool host_path_exists(const Host *h, const char *relpath);
/* Reads a file whole (at most HOST_FILE_MAX, 16 MiB: -EFBIG beyond); newly allocated,
 * NUL-terminated. */
#define HOST_FILE_MAX ((size_t) 16 * 1024 * 1024)
int host_read_file(const Host *h, const char *relpath, char **ret);
/* The same, with the length (for contents that hold NULs, like /proc/PID/environ). */
int host_read_file_len(const Host *h, const char *relpath, char **ret, size_t *ret_len);
/* The same for a file that may be larger (/proc/interrupts: PROC_INTERRUPTS_MAX): at most
 * max bytes, -EFBIG beyond. ret_len may be NULL. */
int host_read_file_max(const Host *h, const char *relpath, size_t max, char **ret, size_t *ret_len);
/* One write() of value into a freshly opened O_WRONLY|O_TRUNC fd: procfs ignores
 * O_TRUNC, a plain file in a fake tree needs it. */
int host_write_file(const Host *h, const char *relpath, const char *value);
/* Writes value to the file an fd of ours has open, whatever its name now (a sysfs file of
 * a renamed interface): opened afresh for writing through /proc/self/fd/N, as
 * host_write_file() does by path. */
int host_write_file_of_fd(int fd, const char *value);
/* A new AF_UNIX stream socket (non-blocking, close-on-exec) connected to the socket at
 * relpath, waiting at most timeout_usec for room in the listener's backlog. connect() has no
 * *at() form, so the directory is opened inside the root and the socket named through
 * /proc/self/fd/N/NAME, which also lifts sun_path's 108-byte limit on a long --root. Returns
 * the fd, or -errno: -ENOENT (nothing there), -ENOTSOCK (not a socket), -ECONNREFUSED
 * (nobody listens), -EAGAIN (the backlog stayed full). */
int host_connect_unix(const Host *h, const char *relpath, uint64_t timeout_usec);
/* The absolute path (root prefix + relpath); newly allocated. */
char *host_path(const Host *h, const char *relpath);
/* Whether the root is this system's own "/" and its /proc is that of lowlatd's PID
 * namespace (proc/self is our pid): only then are the PIDs under it tasks that may be
 * acted on (sched_setaffinity). A fake tree under --root never is. */
bool host_is_live(const Host *h);

/* Whether systemd is the init system of the host under the root: it creates
 * run/systemd/system early at boot, the directory sd_booted(3) looks at. */
bool host_systemd_is_init(const Host *h);

typedef struct HostCpus {
        CPUSet online;
        CPUSet possible;
        CPUSet isolated;  /* what the kernel isolated (isolcpus=) */
        CPUSet nohz_full; /* empty when "(null)" or missing */
} HostCpus;

void host_cpus_done(HostCpus *c);
int host_read_cpus(const Host *h, HostCpus *ret);

/* The numeric entries of a directory under the root (pids, tids): the max lowest ones,
 * sorted, in memory bounded by max whatever the directory holds. *ret_total (may be NULL)
 * counts them all. */
/* Opens a directory under the root for readdir(); 0 or -errno. */
int host_opendir(const Host *h, const char *relpath, DIR **ret);
/* host_read_file() with the path built from a format. */
int host_read_filef(const Host *h, char **ret, const char *fmt, ...) _printf_(3, 4);
int host_read_filev(const Host *h, char **ret, const char *fmt, va_list ap) _printf_(3, 0);

int host_list_numbers(const Host *h, const char *relpath, size_t max, unsigned **ret, size_t *ret_n,
                      size_t *ret_total);
