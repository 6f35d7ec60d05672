/* fileio.c — small files: reading one whole, writing all of a buffer, atomic writes, mkdir -p;
 * see aotif/fileio.h. */
#include "aotif/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *af_read_file(const char *path, size_t limit, size_t *len_out, af_error *err)
{
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        af_error_sys(err, "cannot open %s", path);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        af_error_sys(err, "cannot stat %s", path);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        af_error_set(err, AF_E_INPUT, "%s: not a regular file", path);
        goto fail;
    }
    if ((uint64_t)st.st_size > limit) {
        af_error_set(err, AF_E_INPUT, "%s: too large (%lld bytes; at most %zu)", path,
                     (long long)st.st_size, limit);
        goto fail;
    }
    size_t cap = (size_t)st.st_size, len = 0;
    buf = malloc(cap + 1);
    if (!buf) {
        af_error_set(err, AF_E_INTERNAL, "out of memory reading %s", path);
        goto fail;
    }
    while (len < cap) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            af_error_sys(err, "cannot read %s", path);
            goto fail;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    close(fd);
    return buf;

fail:
    free(buf);
    close(fd);
    return NULL;
}

int af_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

void af_remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 &&
                S_ISDIR(st.st_mode)) /* lstat: a link is removed, not followed */
                af_remove_tree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* ---- atomic write ------------------------------------------------------------------ */

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* Some file systems refuse fsync on a directory; the rename is still done. */
    if (rc < 0 && (errno == EINVAL || errno == EROFS))
        rc = 0;
    close(fd);
    return rc;
}

int af_write_atomic(const char *path, const void *data, size_t len, int no_replace, af_error *err)
{
    char dir[PATH_MAX], tmp[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int fd = -1;

    if (!*base)
        return af_error_set(err, AF_E_USAGE, "%s: not a file name", path);
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) >= sizeof dir)
        return af_error_set(err, AF_E_USAGE, "%s: path too long", path);
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%s.tmp-XXXXXX", dir, base) >= sizeof tmp)
        return af_error_set(err, AF_E_USAGE, "%s: path too long", path);

    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return af_error_sys(err, "%s: cannot create temp file in %s", path, dir);
    if (af_write_all(fd, data, len) < 0) {
        af_error_sys(err, "%s: write", tmp);
        goto fail;
    }
    if (fchmod(fd, 0644) < 0) {
        af_error_sys(err, "%s: chmod", tmp);
        goto fail;
    }
    if (fsync(fd) < 0) {
        af_error_sys(err, "%s: fsync", tmp);
        goto fail;
    }
    if (close(fd) < 0) {
        fd = -1;
        af_error_sys(err, "%s: close", tmp);
        goto fail;
    }
    fd = -1;
    if (no_replace) {
        if (link(tmp, path) < 0) {
            af_error_sys(err, "%s", path);
            goto fail;
        }
        unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        af_error_sys(err, "%s: rename", path);
        goto fail;
    }
    if (fsync_dir(dir) < 0)
        return af_error_sys(err, "%s: fsync", dir);
    return 0;

fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return -1;
}

/* A dir the user named that cannot be made (a file in the way, no permission, a read-only
 * file system, a name too long) is bad input; a full or failing disk is not. */
static int mkdir_error(af_error *err, const char *dir)
{
    int e = errno;
    af_error_sys(err, "mkdir %s", dir);
    if (err && (e == ENOTDIR || e == EACCES || e == EPERM || e == EROFS || e == ENAMETOOLONG ||
                e == ELOOP || e == ENOENT))
        err->code = AF_E_USAGE;
    return -1;
}

int af_mkdir_p(const char *dir, af_error *err)
{
    char buf[PATH_MAX];
    struct stat st;
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return af_error_set(err, AF_E_USAGE, "%s: path too long", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return mkdir_error(err, buf);
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return mkdir_error(err, buf);
    if (stat(buf, &st) < 0)
        return af_error_sys(err, "%s", buf);
    if (!S_ISDIR(st.st_mode))
        return af_error_set(err, AF_E_USAGE, "%s: not a directory", buf);
    return 0;
}

int af_dir_check_creatable(const char *dir, af_error *err)
{
    char buf[PATH_MAX];
    struct stat st;
    size_t n = strlen(dir);
    if (n == 0)
        return af_error_set(err, AF_E_USAGE, "an empty directory name");
    if (n >= sizeof buf)
        return af_error_set(err, AF_E_USAGE, "%s: path too long", dir);
    memcpy(buf, dir, n + 1);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode))
        return af_error_set(err, AF_E_USAGE, "not a directory");
    /* the dir itself if it exists, else its nearest existing ancestor, where it would be made */
    while (stat(buf, &st) != 0) {
        char *slash = strrchr(buf, '/');
        if (!slash)
            snprintf(buf, sizeof buf, ".");
        else if (slash == buf)
            buf[1] = '\0';
        else
            *slash = '\0';
        if ((!strcmp(buf, ".") || !strcmp(buf, "/")) && stat(buf, &st) != 0)
            return af_error_sys(err, "%s", buf);
    }
    if (!S_ISDIR(st.st_mode))
        return af_error_set(err, AF_E_USAGE, "%s is not a directory", buf);
    if (access(buf, W_OK | X_OK) != 0) {
        af_error_sys(err, "cannot write in %s", buf);
        if (err)
            err->code = AF_E_USAGE;
        return -1;
    }
    return 0;
}
