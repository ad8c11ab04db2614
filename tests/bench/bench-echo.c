/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The least any corrector of a file does, as a floor for tests/bench/bench_daemon.py:
 * watch FILE with inotify as lowlatd does (IN_MODIFY | IN_CLOSE_WRITE), and at each event
 * read it through a persistent fd and, when it is neither VALUE nor empty (a writer
 * between its open(O_TRUNC) and its write), write VALUE back with open, write, close.
 * No table, no journal, no bus: the notification's hop, the read and the write only.
 * Prints "ready" once the watch is in place; runs until killed.
 *   bench-echo FILE VALUE */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
        int ino, fd;

        if (argc != 3) {
                fprintf(stderr, "usage: %s FILE VALUE\n", argv[0]);
                return 2;
        }
        ino = inotify_init1(IN_CLOEXEC);
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (ino < 0 || fd < 0 || inotify_add_watch(ino, argv[1], IN_MODIFY | IN_CLOSE_WRITE) < 0) {
                perror(argv[1]);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                ssize_t n = read(ino, &buf, sizeof(buf));
                if (n < 0 && errno != EINTR) {
                        perror("inotify read");
                        return 1;
                }
                if (n > 0)
                        correct(fd, argv[1], argv[2]);
        }
}
