/* aotif/fileio.h — reading a whole small file (spec files, crash files, sidecars), writing
 * all of a buffer to a descriptor, removing a private temp dir. */
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

#endif
