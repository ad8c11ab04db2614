/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What lowlatd.service lets the daemon write, as its unit file and drop-ins under the root
 * say: the ReadWritePaths= and ReadOnlyPaths= of its [Service] section (unit-sandbox.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "host/host.h"

/* One path of ReadWritePaths= or ReadOnlyPaths= ('-' and '+' taken off), and the file that
 * named it. */
typedef struct UnitSandboxPath {
        char *path;
        const char *file; /* owned by UnitSandbox.files */
} UnitSandboxPath;

typedef struct UnitSandbox {
        UnitSandboxPath *read_write, *read_only;
        size_t n_read_write, allocated_read_write, n_read_only, allocated_read_only;
        char **files; /* what was read, the unit first: for messages */
        size_t n_files, allocated_files;
        bool installed; /* the unit file was found; else the unit as lowlatd ships it stands in for it */
} UnitSandbox;

#define UNIT_SANDBOX_EMPTY ((UnitSandbox) {})

void unit_sandbox_done(UnitSandbox *s);

/* The [Service] section's paths in text (a unit file or a drop-in, named file), applied on
 * top of what s holds: each line adds its paths, an empty assignment empties the list.
 * 0 or -ENOMEM. */
int unit_sandbox_parse(UnitSandbox *s, const char *file, const char *text);

/* lowlatd.service as systemd would read it under h's root: the unit file from the first
 * directory of etc/systemd/system, run/systemd/system, usr/local/lib/systemd/system,
 * usr/lib/systemd/system, lib/systemd/system that has one, then the drop-ins
 * lowlatd.service.d/ "*.conf" of all of them in the order of their names (one in an
 * earlier directory hides one of the same name in a later one). Where no unit file is
 * there, the unit as lowlatd ships it is read in its place (installed false). A drop-in
 * that leads nowhere (a link to /dev/null, in a tree without one) masks its namesakes.
 * 0, or -errno when a file that is there cannot be read (its name, as the host has it,
 * then in *ret_unreadable when that is not NULL; the caller frees it). */
int unit_sandbox_read(const Host *h, UnitSandbox *ret, char **ret_unreadable);

/* Whether the unit leaves path (absolute, under /sys) writable: the deepest of the paths
 * named that is path or holds it decides; none: writable (ProtectSystem=strict leaves the
 * API file systems alone). The directories of links into /sys/devices (/sys/class,
 * /sys/block, /sys/dev, /sys/bus/NAME/devices) are judged as /sys/devices is. When the
 * read-only path that decides is wanted, *ret_by is set to it (NULL when writable). */
bool unit_sandbox_writable(const UnitSandbox *s, const char *path, const UnitSandboxPath **ret_by);
