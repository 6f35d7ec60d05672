/* aotif/fileio.h — reading a whole small file (spec files, crash files, sidecars), writing
 * all of a buffer to a descriptor, atomic writes, mkdir -p, removing a private temp dir. */
#ifndef AOTIF_FILEIO_H
#define AOTIF_FILEIO_H

#include <stddef.h>

#include "aotif/error.h"

/* Read the regular file at path into a NUL-terminated malloc'ed buffer (caller frees) and
 * set *len (may be NULL). A file over `limit` bytes or not a regular file is AF_E_INPUT;
 * a system call failing is AF_E_IO. EINTR-safe. */
char *af_read_file(const char *path, size_t limit, size_t *len, af_error *err);

/* Write all len bytes to fd, looping over short writes and EINTR. 0, or -1 with errno. */
int af_write_all(int fd, const void *data, size_t len);

/* Remove dir and everything under it, best effort; symbolic links are removed, never
 * followed. Not async-signal-safe (opendir, readdir). */
void af_remove_tree(const char *dir);

/* Write `len` bytes to `path` atomically: a temp file in the same dir, fsync, then rename
 * over `path` (no_replace = 0) or link to it (no_replace = 1: fails with EEXIST, reported
 * as AF_E_IO with sys_errno EEXIST, when `path` exists), then fsync of the dir. No temp
 * file is left behind on any path. The file gets mode 0644. */
int af_write_atomic(const char *path, const void *data, size_t len, int no_replace, af_error *err);

/* mkdir -p with mode 0755; an existing directory is fine. An existing non-directory, or a
 * dir that cannot be made for a reason the user can fix (a file in the way, no permission, a
 * read-only file system) is AF_E_USAGE; other failures AF_E_IO. */
int af_mkdir_p(const char *dir, af_error *err);

/* Whether af_mkdir_p(dir) could succeed, without making anything: dir is a writable
 * directory, or its nearest existing ancestor is. Else -1 with AF_E_USAGE ("not a directory",
 * "<ancestor> is not a directory", "cannot write in <ancestor>: ..."). For a tool that writes
 * its outputs at the end and should refuse a bad output dir at the start. */
int af_dir_check_creatable(const char *dir, af_error *err);

#endif
