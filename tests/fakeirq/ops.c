/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The FUSE operations: stat, readdir, open, read, write and the setattr family, with
 * procfs's answers for what procfs refuses. */

#include "fakeirq.h"

#include <errno.h>
#include <fuse.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct fakeirq *fakeirq_from_context(void) {
        return fuse_get_context()->private_data;
}


static void fill_stat(struct fakeirq *st, const struct node_ref *ref, struct stat *s) {
        const struct node_attr *attr = node_attr_of(st, ref);

        memset(s, 0, sizeof(*s));
        s->st_mode = (node_is_dir(ref) ? S_IFDIR : S_IFREG) | attr->mode;
        s->st_nlink = ref->kind == NODE_ROOT ? 2 + st->irqs_present : node_is_dir(ref) ? 2 : 1;
        s->st_uid = attr->uid;
        s->st_gid = attr->gid;
        s->st_size = 0;         /* procfs reports 0; reads go to us regardless (direct_io) */
        s->st_blksize = 1024;
        s->st_atim = s->st_mtim = s->st_ctim = st->start_time;
}

static int op_getattr(const char *path, struct stat *s, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e;

        if (fi && fi->fh)
                e = resolve_open_file(st, (struct open_file *) (uintptr_t) fi->fh, &ref);
        else
                e = resolve_path(st, path, &ref);
        if (e < 0)
                return e;
        fill_stat(st, &ref, s);
        return 0;
}

static void *op_init(struct fuse_conn_info *conn UNUSED, struct fuse_config *cfg) {
        /* Every lookup, stat and read must reach us: values and entries change
         * behind the kernel's back. */
        cfg->entry_timeout = 0;
        cfg->attr_timeout = 0;
        cfg->negative_timeout = 0;
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->auto_cache = 0;
        cfg->use_ino = 0;
        return fakeirq_from_context();
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset UNUSED,
                      struct fuse_file_info *fi UNUSED, enum fuse_readdir_flags flags UNUSED) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_path(st, path, &ref);

        if (e < 0)
                return e;
        if (!node_is_dir(&ref))
                return -ENOTDIR;

        filler(buf, ".", NULL, 0, 0);
        filler(buf, "..", NULL, 0, 0);
        if (ref.kind == NODE_ROOT) {
                /* numbers are shorter than default_smp_affinity, so they come first */
                for (unsigned i = 0; i < st->irq_capacity; i++) {
                        char name[16];

                        if (!st->irqs[i] || !st->irqs[i]->present)
                                continue;
                        snprintf(name, sizeof(name), "%u", i);
                        if (filler(buf, name, NULL, 0, 0))
                                return -ENOMEM;
                }
                filler(buf, "default_smp_affinity", NULL, 0, 0);
        } else
                for (unsigned f = 0; f < IRQ_FILE_COUNT; f++)
                        filler(buf, irq_file_names[f], NULL, 0, 0);
        return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f;
        struct node_ref ref;
        struct counters *counters;
        int e = resolve_path(st, path, &ref);

        if (e < 0)
                return e;
        if (node_is_dir(&ref))
                return -EISDIR;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->kind = ref.kind;
        f->file = ref.file;
        if (ref.irq) {
                f->irq_number = ref.irq->number;
                f->generation = ref.irq->generation;
        }
        counters = open_file_counters(st, f);
        if (counters)
                counters->opens++;

        f->next = st->open_files;
        if (f->next)
                f->next->prev = f;
        st->open_files = f;

        fi->fh = (uint64_t) (uintptr_t) f;
        fi->direct_io = 1;
        fi->keep_cache = 0;
        /* O_TRUNC needs nothing: procfs ignores it, so do we (see op_truncate). */
        return 0;
}

static int op_release(const char *path UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;

        if (!f)
                return 0;
        if (f->prev)
                f->prev->next = f->next;
        else
                st->open_files = f->next;
        if (f->next)
                f->next->prev = f->prev;
        open_file_free(f);
        return 0;
}

static int render_open_file(struct fakeirq *st, const struct open_file *f, struct strbuf *b) {
        switch (f->kind) {
        case NODE_DEFAULT_AFFINITY:
                strbuf_put_mask_hex(b, st->default_affinity, st->nr_cpus);
                strbuf_printf(b, "\n");
                break;
        case NODE_CONTROL:
                render_control(st, b);
                break;
        case NODE_STATS:
                render_stats(st, b);
                break;
        case NODE_IRQ_FILE:
                render_irq_file(st, irq_find(st, f->irq_number), f->file, b);
                break;
        case NODE_ROOT:
        case NODE_IRQ_DIR:
                return -EISDIR;
        }
        return b->failed ? -ENOMEM : 0;
}

static int op_read(const char *path UNUSED, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;
        struct counters *counters;
        size_t n = 0;

        if (open_file_is_stale(st, f))
                return -EIO;    /* proc_reg_read() once the entry is removed */

        counters = open_file_counters(st, f);
        if (counters)
                counters->reads++;

        /* seq_file: offset 0 renders afresh, a read carrying on from the last one
         * serves the same rendering, any other offset renders afresh. */
        if (offset == 0 || !f->has_snapshot || offset != f->read_pos) {
                int e;

                f->snapshot.len = 0;
                f->snapshot.failed = false;
                e = render_open_file(st, f, &f->snapshot);
                if (e < 0)
                        return e;
                f->has_snapshot = true;
        }
        if ((size_t) offset < f->snapshot.len) {
                n = f->snapshot.len - (size_t) offset;
                if (n > size)
                        n = size;
                memcpy(buf, f->snapshot.data + offset, n);
        }
        f->read_pos = offset + (off_t) n;

        if (f->kind == NODE_IRQ_FILE) {
                struct fake_irq *irq = irq_find(st, f->irq_number);

                if (irq->vanish_after_read)
                        irq_vanish(st, irq);
        }
        return (int) n;
}

static const char *write_target_name(const struct open_file *f) {
        switch (f->kind) {
        case NODE_DEFAULT_AFFINITY:
                return "default_smp_affinity";
        case NODE_CONTROL:
                return ".control";
        case NODE_STATS:
                return ".stats";
        case NODE_IRQ_FILE:
                return irq_file_names[f->file];
        case NODE_ROOT:
        case NODE_IRQ_DIR:
                break;
        }
        return "?";
}

static int op_write(const char *path UNUSED, const char *buf, size_t size, off_t offset UNUSED,
                    struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct open_file *f = (struct open_file *) (uintptr_t) fi->fh;
        struct counters *counters;
        char *text;
        int r;

        if (size > INT_MAX)
                return -EINVAL;
        if (f->kind == NODE_CONTROL) {
                r = control_write(st, buf, size);
                return r < 0 ? r : (int) size;
        }
        if (open_file_is_stale(st, f))
                return -EIO;    /* proc_reg_write() once the entry is removed */

        text = copy_user_buffer(buf, size);
        if (!text)
                return -ENOMEM;

        /* Offsets are ignored, as every proc write handler here does. */
        if (f->kind == NODE_DEFAULT_AFFINITY)
                r = default_affinity_write(st, text);
        else if (f->kind == NODE_IRQ_FILE &&
                 (f->file == IRQ_FILE_SMP_AFFINITY || f->file == IRQ_FILE_SMP_AFFINITY_LIST))
                r = irq_write_affinity(st, irq_find(st, f->irq_number),
                                       f->file == IRQ_FILE_SMP_AFFINITY_LIST, text);
        else
                r = -EIO;       /* pde_write() without a write op */

        counters = open_file_counters(st, f);
        if (counters) {
                counters->writes++;
                if (r < 0)
                        counters->failed++;
        }
        if (f->kind == NODE_IRQ_FILE)
                log_verbose(st, "write %u/%s \"%.*s\": %s", f->irq_number, write_target_name(f),
                            (int) strcspn(text, "\n"), text, r < 0 ? strerror(-r) : "ok");
        else
                log_verbose(st, "write %s \"%.*s\": %s", write_target_name(f),
                            (int) strcspn(text, "\n"), text, r < 0 ? strerror(-r) : "ok");
        free(text);
        return r < 0 ? r : (int) size;
}

static int resolve_for_setattr(struct fakeirq *st, const char *path, struct fuse_file_info *fi,
                               struct node_ref *ret) {
        if (fi && fi->fh)
                return resolve_open_file(st, (struct open_file *) (uintptr_t) fi->fh, ret);
        return resolve_path(st, path, ret);
}

/* O_TRUNC opens and ftruncate() succeed and change nothing, as on procfs. */
static int op_truncate(const char *path, off_t size UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        return node_is_dir(&ref) ? -EISDIR : 0;
}

/* proc_notify_change() keeps mode and owner per entry. */
static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        node_attr_of(st, &ref)->mode = mode & 07777;
        return 0;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_attr *attr;
        struct node_ref ref;
        int e = resolve_for_setattr(st, path, fi, &ref);

        if (e < 0)
                return e;
        attr = node_attr_of(st, &ref);
        if (uid != (uid_t) -1)
                attr->uid = uid;
        if (gid != (gid_t) -1)
                attr->gid = gid;
        return 0;
}

static int op_utimens(const char *path, const struct timespec tv[2] UNUSED, struct fuse_file_info *fi) {
        struct fakeirq *st = fakeirq_from_context();
        struct node_ref ref;

        return resolve_for_setattr(st, path, fi, &ref);
}

/* procfs directories have no create/mkdir/unlink/...: the VFS answers EACCES for
 * O_CREAT of a new name and EPERM for the rest. */
static int op_create(const char *path UNUSED, mode_t mode UNUSED, struct fuse_file_info *fi UNUSED) {
        return -EACCES;
}

static int op_mknod(const char *path UNUSED, mode_t mode UNUSED, dev_t dev UNUSED) {
        return -EPERM;
}

static int op_mkdir(const char *path UNUSED, mode_t mode UNUSED) {
        return -EPERM;
}

static int op_unlink(const char *path UNUSED) {
        return -EPERM;
}

static int op_rmdir(const char *path UNUSED) {
        return -EPERM;
}

static int op_symlink(const char *target UNUSED, const char *path UNUSED) {
        return -EPERM;
}

static int op_link(const char *from UNUSED, const char *to UNUSED) {
        return -EPERM;
}

static int op_rename(const char *from UNUSED, const char *to UNUSED, unsigned int flags UNUSED) {
        return -EPERM;
}

const struct fuse_operations fakeirq_operations = {
        .init = op_init,
        .getattr = op_getattr,
        .readdir = op_readdir,
        .open = op_open,
        .read = op_read,
        .write = op_write,
        .release = op_release,
        .truncate = op_truncate,
        .chmod = op_chmod,
        .chown = op_chown,
        .utimens = op_utimens,
        .create = op_create,
        .mknod = op_mknod,
        .mkdir = op_mkdir,
        .unlink = op_unlink,
        .rmdir = op_rmdir,
        .symlink = op_symlink,
        .link = op_link,
        .rename = op_rename,
};
