/* store.c — the crash store; see store.h for what it promises.
 *
 * Entries live in a growing array searched linearly by signature hash: a fuzzing run
 * finds tens of distinct signatures, not millions, and a lookup happens only when a run
 * crashed. Counting is split in two so that no write happens per crash: `pending` grows
 * in memory and af_store_flush (at most once a second, and at exit) folds it into the
 * sidecar. The fold is read-add-write under flock() on the dir, so concurrent jobs add
 * rather than overwrite each other's counts.
 *
 * Every write the store makes in the dir happens under that lock: a new signature's crash
 * file and its first sidecar as one step, the count folds, and the repairs at open. So a job
 * that holds the lock sees no write of another job half done, and what it finds half done
 * was left by a process that died in the middle (kill -9 between the temp file and the
 * rename, or between the crash file and its sidecar). af_store_open, under the lock,
 * removes such temp files of ours (".crash-*.tmp-*", af_write_atomic's names) and writes
 * the missing sidecar of a crash file. */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "featmap.h"

struct af_store {
    char dir[PATH_MAX];
    af_store_entry **entries; /* each entry its own allocation: pointers stay valid as it grows */
    int n, cap;
    int n_loaded, n_skipped;
    int n_swept, n_repaired; /* at open: temp files removed, sidecars written */
    char skipped_msg[512];
    double flush_interval;
    double last_flush; /* monotonic seconds */
};

/* Take the dir lock (flock on the dir itself). Returns the locked fd, or -1 with err set. */
static int dir_lock(const af_store *st, af_error *err)
{
    int dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return af_error_sys(err, "%s", st->dir);
    while (flock(dfd, LOCK_EX) < 0)
        if (errno != EINTR) {
            af_error_sys(err, "%s: flock", st->dir);
            close(dfd);
            return -1;
        }
    return dfd;
}

static void dir_unlock(int dfd)
{
    flock(dfd, LOCK_UN);
    close(dfd);
}

static af_store_entry *find_mut(const af_store *st, const char *sig)
{
    uint64_t h = af_feat_hash(sig);
    for (int i = 0; i < st->n; i++)
        if (st->entries[i]->hash == h && strcmp(st->entries[i]->crash.signature, sig) == 0)
            return st->entries[i];
    return NULL;
}

static af_store_entry *append(af_store *st, af_error *err)
{
    if (st->n == st->cap) {
        int cap = st->cap ? st->cap * 2 : 16;
        af_store_entry **v = realloc(st->entries, (size_t)cap * sizeof *v);
        if (!v) {
            af_error_set(err, AF_E_INTERNAL, "crash store: out of memory");
            return NULL;
        }
        st->entries = v;
        st->cap = cap;
    }
    af_store_entry *e = calloc(1, sizeof *e);
    if (!e) {
        af_error_set(err, AF_E_INTERNAL, "crash store: out of memory");
        return NULL;
    }
    st->entries[st->n++] = e;
    return e;
}

/* Read a crash file and, when present and consistent, its sidecar's newer count. */
static int read_with_sidecar(const char *path, af_crash *out, af_error *err)
{
    char side[PATH_MAX];
    af_crash sc;
    if (af_crash_read(path, out, err) < 0)
        return -1;
    if (af_crash_sidecar_path(path, side, sizeof side) == 0 &&
        af_crash_read_sidecar(side, &sc, NULL) == 0 && strcmp(sc.signature, out->signature) == 0) {
        if (sc.count > out->count)
            out->count = sc.count;
        if (sc.last_seen > out->last_seen)
            out->last_seen = sc.last_seen;
        out->flaky |= sc.flaky;
    }
    return 0;
}

/* A temp file af_write_atomic made for one of our files (".crash-X.bin.tmp-XXXXXX",
 * ".crash-X.json.tmp-XXXXXX"). Under the dir lock, one that exists was left by a writer
 * that died before its rename. */
static int is_our_temp(const char *name)
{
    return strncmp(name, ".crash-", 7) == 0 && strstr(name, ".tmp-") != NULL;
}

/* Read the dir's crash files; the caller holds the dir lock. */
static int load_dir(af_store *st, af_error *err)
{
    DIR *d = opendir(st->dir);
    if (!d)
        return af_error_sys(err, "%s", st->dir);
    struct dirent *de;
    char path[PATH_MAX];
    af_error e;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (is_our_temp(de->d_name) &&
            snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name) < (int)sizeof path) {
            if (unlink(path) == 0)
                st->n_swept++;
            continue;
        }
        if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".bin") != 0)
            continue;
        if (snprintf(path, sizeof path, "%s/%s", st->dir, de->d_name) >= (int)sizeof path)
            continue;
        af_crash c;
        af_error_clear(&e);
        if (read_with_sidecar(path, &c, &e) < 0) {
            if (!st->n_skipped)
                snprintf(st->skipped_msg, sizeof st->skipped_msg, "%s", e.message);
            st->n_skipped++;
            continue;
        }
        af_store_entry *ent = find_mut(st, c.signature);
        if (ent) { /* two files, one signature (older runs raced): merge the counts */
            ent->crash.count += c.count;
            continue;
        }
        if (!(ent = append(st, err))) {
            closedir(d);
            return -1;
        }
        ent->crash = c;
        snprintf(ent->path, sizeof ent->path, "%s", path);
        ent->loaded = 1;
        ent->hash = af_feat_hash(c.signature);
        st->n_loaded++;
    }
    closedir(d);
    return 0;
}

/* Write the sidecar of every loaded crash file that has none (its writer died between the
 * two files); the caller holds the dir lock. */
static int repair_sidecars(af_store *st, af_error *err)
{
    char side[PATH_MAX];
    struct stat sb;
    for (int i = 0; i < st->n; i++) {
        af_store_entry *e = st->entries[i];
        if (af_crash_sidecar_path(e->path, side, sizeof side) < 0 || lstat(side, &sb) == 0 ||
            errno != ENOENT)
            continue;
        if (af_crash_write_sidecar(side, &e->crash, err) < 0)
            return -1;
        st->n_repaired++;
    }
    return 0;
}

af_store *af_store_open(const char *dir, af_error *err)
{
    int dfd = -1;
    af_store *st = calloc(1, sizeof *st);
    if (!st) {
        af_error_set(err, AF_E_INTERNAL, "crash store: out of memory");
        return NULL;
    }
    if (snprintf(st->dir, sizeof st->dir, "%s", dir) >= (int)sizeof st->dir) {
        af_error_set(err, AF_E_USAGE, "%s: path too long", dir);
        goto fail;
    }
    st->flush_interval = 1.0;
    st->last_flush = af_now_s();
    if (af_mkdir_p(dir, err) < 0 || (dfd = dir_lock(st, err)) < 0)
        goto fail;
    if (load_dir(st, err) < 0 || repair_sidecars(st, err) < 0)
        goto fail;
    dir_unlock(dfd);
    return st;
fail:
    if (dfd >= 0)
        dir_unlock(dfd);
    af_store_close(st);
    return NULL;
}

/* The class name in lower case, for file names. */
static void class_slug(af_class c, char *buf, size_t len)
{
    const char *n = af_class_name(c);
    size_t i = 0;
    for (; n && n[i] && i + 1 < len; i++)
        buf[i] = (n[i] >= 'A' && n[i] <= 'Z') ? (char)(n[i] - 'A' + 'a') : n[i];
    buf[i] = '\0';
}

/* A signature this store has not seen: its crash file, then its sidecar; the caller holds
 * the dir lock, so no other job sees the crash file without its sidecar. */
static int add_new(af_store *st, const af_crash *crash, af_error *err)
{
    af_store_entry *e;
    uint64_t h = af_feat_hash(crash->signature);
    char slug[32], path[PATH_MAX], side[PATH_MAX];
    af_crash c = *crash;
    c.count = 1;
    class_slug(crash->cls, slug, sizeof slug);
    for (int k = 0;; k++) {
        af_error e2;
        af_error_clear(&e2);
        int w = k == 0 ? snprintf(path, sizeof path, "%s/crash-%s-%016llx.bin", st->dir, slug,
                                  (unsigned long long)h)
                       : snprintf(path, sizeof path, "%s/crash-%s-%016llx-%d.bin", st->dir, slug,
                                  (unsigned long long)h, k);
        if (w < 0 || (size_t)w >= sizeof path || af_crash_sidecar_path(path, side, sizeof side))
            return af_error_set(err, AF_E_USAGE, "%s: path too long", st->dir);
        if (af_crash_create(path, &c, &e2) == 0)
            break;
        if (e2.sys_errno != EEXIST) {
            if (err)
                *err = e2;
            return -1;
        }
        /* The name is taken: another job found the same signature since we loaded the
         * dir (adopt its file and count this one as a repeat), or, for a hash collision
         * or an unreadable file, try the next name. */
        af_crash other;
        if (k < 100 && read_with_sidecar(path, &other, NULL) == 0 &&
            strcmp(other.signature, crash->signature) == 0) {
            if (!(e = append(st, err)))
                return -1;
            e->crash = other;
            snprintf(e->path, sizeof e->path, "%s", path);
            e->loaded = 1;
            e->hash = h;
            e->pending = 1;
            e->seen_here = 1;
            return AF_STORE_KNOWN;
        }
        if (k >= 100)
            return af_error_set(err, AF_E_IO, "%s: no free crash file name", path);
    }
    if (af_crash_write_sidecar(side, &c, err) < 0)
        return -1;
    if (!(e = append(st, err)))
        return -1;
    e->crash = c;
    snprintf(e->path, sizeof e->path, "%s", path);
    e->hash = h;
    e->seen_here = 1;
    return AF_STORE_NEW;
}

int af_store_add(af_store *st, const af_crash *crash, af_error *err)
{
    af_store_entry *e = find_mut(st, crash->signature);
    if (e) {
        e->pending++;
        e->seen_here++;
        if (crash->last_seen > e->crash.last_seen)
            e->crash.last_seen = crash->last_seen;
        return AF_STORE_KNOWN;
    }
    int dfd = dir_lock(st, err);
    if (dfd < 0)
        return -1;
    int rc = add_new(st, crash, err);
    dir_unlock(dfd);
    return rc;
}

/* Fold one entry's pending count into its sidecar; the caller holds the dir lock. */
static int flush_entry(af_store_entry *e, af_error *err)
{
    char side[PATH_MAX];
    af_crash disk, out = e->crash;
    if (af_crash_sidecar_path(e->path, side, sizeof side) < 0)
        return af_error_set(err, AF_E_USAGE, "%s: path too long", e->path);
    /* Another job may have added to the count since we last synced: start from the file. */
    if (af_crash_read_sidecar(side, &disk, NULL) == 0 &&
        strcmp(disk.signature, e->crash.signature) == 0) {
        if (disk.count > out.count)
            out.count = disk.count;
        if (disk.last_seen > out.last_seen)
            out.last_seen = disk.last_seen;
        out.flaky |= disk.flaky;
    }
    out.count += e->pending;
    if (af_crash_write_sidecar(side, &out, err) < 0)
        return -1;
    e->crash = out;
    e->pending = 0;
    return 0;
}

int af_store_flush(af_store *st, int force, af_error *err)
{
    int dirty = 0, rc = 0;
    for (int i = 0; i < st->n; i++)
        dirty |= st->entries[i]->pending > 0;
    if (!dirty)
        return 0;
    double now = af_now_s();
    if (!force && now - st->last_flush < st->flush_interval)
        return 0;
    st->last_flush = now;
    int dfd = dir_lock(st, err);
    if (dfd < 0)
        return -1;
    for (int i = 0; i < st->n && rc == 0; i++)
        if (st->entries[i]->pending > 0)
            rc = flush_entry(st->entries[i], err);
    dir_unlock(dfd);
    return rc;
}

void af_store_set_flush_interval(af_store *st, double seconds)
{
    st->flush_interval = seconds;
}

const af_store_entry *af_store_find(const af_store *st, const char *signature)
{
    return find_mut(st, signature);
}

int af_store_size(const af_store *st)
{
    return st->n;
}

const af_store_entry *af_store_entry_at(const af_store *st, int i)
{
    return i >= 0 && i < st->n ? st->entries[i] : NULL;
}

int af_store_n_loaded(const af_store *st)
{
    return st->n_loaded;
}

int af_store_n_skipped(const af_store *st)
{
    return st->n_skipped;
}

int af_store_n_swept(const af_store *st)
{
    return st->n_swept;
}

int af_store_n_repaired(const af_store *st)
{
    return st->n_repaired;
}

const char *af_store_skipped_msg(const af_store *st)
{
    return st->skipped_msg;
}

const char *af_store_dir(const af_store *st)
{
    return st->dir;
}

void af_store_close(af_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->n; i++)
        free(st->entries[i]);
    free(st->entries);
    free(st);
}
