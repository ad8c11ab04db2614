/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The base of the settings that are one text file under the root (sysctl, governor,
 * cpuidle, the default IRQ affinity, [sysfs], ...), and the persistent-fd reading that IRQ
 * affinities share. Each kind is in a file of its own. */
#pragma once

#include "setting/setting.h"

/* One file read through an fd kept open between looks: a pread() at offset 0 sees what
 * the kernel (or a fake tree's writer) has now, at a quarter of the cost of
 * open/read/close on procfs. */
typedef struct SettingFile {
        char *path; /* relative to the root */
        int fd;     /* -1 until the first read */
} SettingFile;

/* Takes path. */
void setting_file_init(SettingFile *f, char *path);
void setting_file_close(SettingFile *f);
void setting_file_done(SettingFile *f);
void setting_file_inherit(SettingFile *f, SettingFile *old);
/* Reads the file into buf, trimmed, invalid UTF-8 escaped (the bus takes only UTF-8).
 * RECONCILE_FORCE opens it afresh (a module reloaded may have replaced it); a persistent
 * fd that fails gets one fresh open; out of fds, it falls back to open/read/close (slower,
 * never wrong). -ENOENT when the file does not exist. */
int setting_file_read(SettingFile *f, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags);

/* A setting that is one file: a kind whose struct starts with this (IRQ affinities) takes
 * its fd handling from here. */
typedef struct FileSetting {
        Setting setting;
        SettingFile file;
} FileSetting;

/* A new setting of a kind whose struct starts with a FileSetting; takes path (relative to
 * the root), also on failure. */
int file_setting_new(SettingKind kind, char *path, const char *object, const char *desired, Setting **ret);
/* A file setting of one CPU: sys/devices/system/cpu/cpuCPU/FILE, its object "cpuCPU"
 * (cpufreq's, cpuidle's and power's per-CPU files). */
int file_setting_new_cpu(SettingKind kind, unsigned cpu, const char *file, const char *desired, Setting **ret);
/* Writes value, unless list (a file beside the setting's: the words the driver offers, such
 * as scaling_available_governors) leaves it out: then the setting is unsupported, not a
 * failure to retry, with "NOUN 'value' is not offered (available: ...)" as the reason. A
 * list that cannot be read lets the write decide. */
int file_setting_write_offered(Setting *s, SettingContext *rc, const char *value, const char *list, const char *noun);
/* The check alone, without writing (a kind's refuses(): observe mode): -EOPNOTSUPP with
 * the reason above when the list leaves value out, else 0. */
int file_setting_check_offered(Setting *s, SettingContext *rc, const char *value, const char *list, const char *noun);
/* Reads the file; missing: why a file that does not exist makes the setting unsupported
 * ("no such sysctl on this kernel"), with the path in s->reason. */
int file_setting_read(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags,
                      const char *missing);
/* The same, for a file that is simply "not present on this host". */
int file_setting_read_present(Setting *s, SettingContext *rc, char *buf, size_t size, ReconcileFlags flags);
/* Writes value to the file; a refused write is a failure to retry (-EIO), never "gone"
 * or "unmovable", with the kernel's words in s->reason. */
int file_setting_write(Setting *s, SettingContext *rc, const char *value);
/* The file itself, for inotify. */
int file_setting_watch_path(const Setting *s, unsigned i, char *buf, size_t size);
void file_setting_inherit(Setting *s, Setting *old, bool same_value);
void file_setting_release(Setting *s);
void file_setting_done(Setting *s);

/* The operations every kind that is one host-wide file takes as they are; a kind's vtable
 * starts with this and adds its size, read, write, done and plan. */
#define FILE_SETTING_OPS                              \
        .group = SETTING_GROUP_HOST,                  \
        .watch_path = file_setting_watch_path,        \
        .inherit = file_setting_inherit,              \
        .release = file_setting_release

/* A file that holds a CPU mask in the kernel's comma-grouped hex format (default IRQ
 * affinity, workqueue masks): the desired value is cpus as a mask mask_bits wide (the
 * possible CPUs), and a value matches when it names the same CPUs, whatever its width. */
typedef struct MaskFileSetting {
        FileSetting file_setting;
        CPUSet cpus;
} MaskFileSetting;

/* Takes path. A kind whose struct starts with a MaskFileSetting uses these for its
 * matches and done operations. */
int mask_file_setting_new(SettingKind kind, char *path, const char *object, const CPUSet *cpus, unsigned mask_bits,
                          Setting **ret);
bool mask_file_setting_matches(Setting *s, SettingContext *rc);
void mask_file_setting_done(Setting *s);

/* Whether the kernel made f read-only (mode without write bits): its way of saying that
 * the object may not be moved, which root's open() would not notice. */
bool setting_file_is_read_only(const SettingFile *f);
/* The kernel answers EINVAL both to a value it refuses and to CPUs none of which is online.
 * Returns true, with the reason set, when none of cpus is online now: a passing state
 * (the write is retried when the online CPUs change), not a refusal. */
bool setting_cpus_offline(Setting *s, SettingContext *rc, const CPUSet *cpus);

/* The file a setting of these kinds reads and writes, relative to the root. */
const char *setting_file_path(const Setting *s);
