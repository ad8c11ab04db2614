/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host_open_file() through a path with "..", as every /sys/class/net/NAME link is, while
 * another process renames files in a loop: openat2() with RESOLVE_IN_ROOT then says
 * EAGAIN now and then (the kernel could not rule out an escape through the ".."), and
 * host_open_file() must ask again instead of failing. The renames are in this test's own
 * temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/macro.h"
#include "basic/util.h"
#include "host/host.h"
#include "tap.h"

#define RUN_NSEC (3ULL * 1000000000ULL)
#define ENOUGH_RACES 200

static unsigned long long now_nsec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned long long) ts.tv_sec * 1000000000ULL + (unsigned long long) ts.tv_nsec;
}

static __attribute__((noreturn)) void renamer(const char *root) {
        _cleanup_free_ char *a = strdup_printf("%s/r1", root), *b = strdup_printf("%s/r2", root);

        for (;;) {
                (void) rename(a, b);
                (void) rename(b, a);
        }
}

int main(void) {
        char root[] = "/tmp/test-host-open.XXXXXX";
        unsigned long long end;
        unsigned raw_again = 0, raw_tries = 0, failed = 0, tries = 0;
        struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
        Host *h = NULL;
        int root_fd, status;
        pid_t child;

        if (!mkdtemp(root))
                return printf("1..0 # SKIP no temporary directory: %m\n"), 0;
        {
                _cleanup_free_ char *d = strdup_printf("%s/d", root), *f = strdup_printf("%s/f", root),
                                    *r1 = strdup_printf("%s/r1", root);
                int fd = f ? open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;

                CHECK(d && r1 && fd >= 0 && mkdir(d, 0755) == 0 && mkdir(r1, 0755) == 0,
                      "the tree: d/, f, and r1/ to rename");
                if (fd >= 0)
                        close(fd);
        }
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (syscall(SYS_openat2, root_fd, "d/../f", &how, sizeof(how)) < 0 && errno == ENOSYS) {
                printf("1..0 # SKIP no openat2() on this kernel: host_open_file() uses openat()\n");
                return 0;
        }
        CHECK(host_open(root, &h) >= 0, "host_open() on the tree");

        child = fork();
        if (child == 0)
                renamer(root);
        end = now_nsec() + RUN_NSEC;
        while (now_nsec() < end && (raw_again < ENOUGH_RACES || tries < 20000)) {
                int fd = (int) syscall(SYS_openat2, root_fd, "d/../f", &how, sizeof(how));

                raw_tries++;
                if (fd >= 0)
                        close(fd);
                else if (errno == EAGAIN)
                        raw_again++;
                fd = host_open_file(h, "d/../f", O_RDONLY);
                tries++;
                if (fd >= 0)
                        close(fd);
                else
                        failed++;
        }
        kill(child, SIGKILL);
        (void) waitpid(child, &status, 0);

        printf("# bare openat2(): %u EAGAIN in %u tries while another process renamed\n", raw_again, raw_tries);
        if (raw_again == 0)
                printf("ok %u # SKIP the race did not show in %u tries (the renamer got no CPU?)\n", ++tap_count,
                       raw_tries);
        else
                CHECK(raw_again > 0, "the bare openat2() said EAGAIN while renames ran: the race is real here");
        if (!CHECK(failed == 0, "host_open_file() never failed meanwhile"))
                printf("#   %u of %u failed\n", failed, tries);

        host_free(h);
        close(root_fd);
        {
                _cleanup_free_ char *cmd = strdup_printf("rm -rf '%s'", root);
                if (cmd)
                        (void) system(cmd);
        }
        return tap_finish();
}
