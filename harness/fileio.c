/* fileio.c — reading a whole small file; see aotif/fileio.h. */
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
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) /* lstat: a link is removed, not followed */
                af_remove_tree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}
