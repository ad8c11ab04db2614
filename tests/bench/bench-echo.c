/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The least any corrector of a file does, as a floor for tests/bench/bench_daemon.py and
 * bench_rps.py: watch each FILE with inotify as lowlatd does (IN_MODIFY | IN_CLOSE_WRITE),
 * and at each event read the file it names through a persistent fd and, when it is
 * neither VALUE nor empty (a writer between its open(O_TRUNC) and its write), write VALUE
 * back with open, write, close. No table, no journal, no bus: the notification's hop, the
 * read and the write only. VALUE is compared as the file reads (rps_cpus: the kernel's
 * own format of the mask). Prints "ready" once the watches are in place; runs until killed.
 *   bench-echo FILE VALUE [FILE...] */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static void trim(char *s) {
        size_t n = strlen(s);

        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
}

static void correct(int fd, const char *file, const char *value) {
        char buf[4096];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        int wfd;

        if (n <= 0)
                return;
        buf[n] = '\0';
        trim(buf);
        if (buf[0] == '\0' || strcmp(buf, value) == 0)
                return;
        wfd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (wfd < 0)
                return;
        if (write(wfd, value, strlen(value)) < 0)
                perror("write");
        close(wfd);
}

int main(int argc, char **argv) {
        union {
                struct inotify_event ev;
                char raw[4096];
        } buf;
        const char *value = argc >= 3 ? argv[2] : NULL;
        int ino, nfiles = argc - 2, *fds, *files, *batch, gen = 0;

        if (argc < 3) {
                fprintf(stderr, "usage: %s FILE VALUE [FILE...]\n", argv[0]);
                return 2;
        }
        /* Watch descriptors count up from 1 in one inotify instance: fds[wd], files[wd]. */
        fds = calloc((size_t) nfiles + 2, sizeof(int));
        files = calloc((size_t) nfiles + 2, sizeof(int));
        batch = calloc((size_t) nfiles + 2, sizeof(int));
        ino = inotify_init1(IN_CLOEXEC);
        if (!fds || !files || !batch || ino < 0) {
                perror("bench-echo");
                return 1;
        }
        for (int i = 1; i < argc; i++) {
                int wd, fd;

                if (i == 2)
                        continue;
                fd = open(argv[i], O_RDONLY | O_CLOEXEC);
                wd = fd < 0 ? -1 : inotify_add_watch(ino, argv[i], IN_MODIFY | IN_CLOSE_WRITE);
                if (wd <= 0 || wd > nfiles) {
                        perror(argv[i]);
                        return 1;
                }
                fds[wd] = fd;
                files[wd] = i;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                ssize_t n = read(ino, &buf, sizeof(buf));
                if (n < 0 && errno != EINTR) {
                        perror("inotify read");
                        return 1;
                }
                /* One look per file named in what was read (a write's IN_MODIFY and
                 * IN_CLOSE_WRITE usually come together). */
                gen++;
                for (ssize_t off = 0; off + (ssize_t) sizeof(struct inotify_event) <= n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) (buf.raw + off);
                        if (ev->wd > 0 && ev->wd <= nfiles && files[ev->wd] > 0 && batch[ev->wd] != gen) {
                                batch[ev->wd] = gen;
                                correct(fds[ev->wd], argv[files[ev->wd]], value);
                        }
                        off += (ssize_t) (sizeof(struct inotify_event) + ev->len);
                }
        }
}
