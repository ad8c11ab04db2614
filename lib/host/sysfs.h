/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Files under /sys as [sysfs] names them: the paths and patterns a config may hold, their
 * expansion under the root, and the kernel's bracketed choice lists ("always madvise
 * [never]"). What makes lowlatd refuse a file is lib/setting/sysfs.h's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "host/host.h"

/* Why path cannot be a [sysfs] key, or NULL when it can: an absolute path under /sys of
 * printable characters, its components names or fnmatch() patterns (no empty, "." or ".."
 * component, every '[' closed in its own component, no backslash), no '/' at the end. */
const char *sysfs_path_problem(const char *path);
/* Whether the last component of path names a file that acts when written rather than
 * holds a value (remove, rescan, reset, unbind, bind, new_id, remove_id, trigger_now,
 * uevent, delete, delete_device, new_device, drivers_probe, eject, scan): [sysfs] refuses
 * those, named in the config or matched by a pattern. An LED's "trigger" is not one: it
 * holds a choice ("[none] kbd-capslock ..."). */
bool sysfs_path_acts(const char *path);
#define SYSFS_ACTS_PROBLEM "is a file that acts when written (remove, rescan, reset, unbind, ...), not one that " \
                           "holds a value: [sysfs] refuses it"
/* The longest value [sysfs] writes (a config line's other limits are in config/config.h). */
#define SYSFS_VALUE_MAX 255

/* Why value cannot be written by [sysfs], or NULL: 1 to SYSFS_VALUE_MAX printable
 * characters, no brackets (a choice is written as the bare word: never, not [never]). */
const char *sysfs_value_problem(const char *value);
/* Whether path holds a glob character (* ? [) and so may match many files, or none. */
bool sysfs_path_is_pattern(const char *path);

/* A choice list is white-space separated words of which exactly one is in brackets, the
 * one in force: "always madvise [never]", "[none] mq-deadline". Replaces text with the
 * selected word and returns true; false (text unchanged) when text is no choice list. */
bool sysfs_choice_select(char *text);
/* Whether text, a choice list, offers word. */
bool sysfs_choice_offers(const char *text, const char *word);
/* The words a choice list offers, without the brackets, separated by single spaces; newly
 * allocated. */
char *sysfs_choice_words(const char *text);

/* Called with each file a pattern matches, relative to the root ("sys/..."); a negative
 * return stops the expansion and is returned. */
typedef int (*SysfsMatchFn)(void *userdata, const char *relpath);
/* The files path (a [sysfs] key: "/sys/...") matches under the root, in name order. A
 * directory that cannot be listed matches nothing. A literal last component is handed to
 * fn without looking whether it exists. Returns 0 or fn's error. */
int sysfs_expand(const Host *h, const char *path, SysfsMatchFn fn, void *userdata);
