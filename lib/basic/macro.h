/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small helpers every file uses: cleanup attributes, array sizes, errno plumbing. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _pure_ __attribute__((pure))
#define _warn_unused_result_ __attribute__((warn_unused_result))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Defines a cleanup function for a pointer type whose free function accepts NULL. */
#define DEFINE_POINTER_CLEANUP(type, func)              \
        static inline void func##p(type **p) {          \
                if (*p)                                 \
                        func(*p);                       \
        }

/* Takes ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _p = (p);         \
                (p) = NULL;                     \
                _p;                             \
        })
#define TAKE_FD(fd)                             \
        ({                                      \
                int _fd = (fd);                 \
                (fd) = -1;                      \
                _fd;                            \
        })

/* errno as a negative return value, never 0 even if errno was clobbered. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* Each argument evaluated once (a call as an argument runs once), as systemd's do; the
 * locals are named by __COUNTER__ so that MIN(MAX(...), ...) nests without shadowing. */
#define LL_CONCAT_(a, b) a##b
#define LL_CONCAT(a, b) LL_CONCAT_(a, b)
#define LL_UNIQ(x, n) LL_CONCAT(ll_uniq_, LL_CONCAT(x, n))
#define LL_PICK_(n, a, b, op)                                                                 \
        ({                                                                                \
                const __typeof__(a) LL_UNIQ(a_, n) = (a);                                 \
                const __typeof__(b) LL_UNIQ(b_, n) = (b);                                 \
                LL_UNIQ(a_, n) op LL_UNIQ(b_, n) ? LL_UNIQ(a_, n) : LL_UNIQ(b_, n);       \
        })
#define MIN(a, b) LL_PICK_(__COUNTER__, a, b, <)
#define MAX(a, b) LL_PICK_(__COUNTER__, a, b, >)

#define USEC_PER_SEC ((uint64_t) 1000000ULL)
#define USEC_PER_MSEC ((uint64_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)
#define NSEC_PER_SEC ((uint64_t) 1000000000ULL)

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

#define _fallthrough_ __attribute__((fallthrough))
