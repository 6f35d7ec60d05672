/* aotif/error.h — how every aoti-fuzz library function reports failure.
 *
 * Functions that can fail take an `af_error *` as their last argument and return
 * -1 or NULL on failure, having filled it. The library never prints and never exits;
 * only a tool's main turns an af_error into a message and an exit status.
 * `err` may be NULL when the caller does not care. */
#ifndef AOTIF_ERROR_H
#define AOTIF_ERROR_H

#include <stddef.h>

typedef enum af_errcode {
    AF_OK = 0,
    AF_E_USAGE,    /* bad flag, bad shape assignment, case outside the spec */
    AF_E_INPUT,    /* malformed or refused input file (package, spec, crash file) */
    AF_E_IO,       /* a system call failed; sys_errno says which */
    AF_E_RUNTIME,  /* libtorch / model / CUDA could not be loaded or used */
    AF_E_INTERNAL, /* a bug in aoti-fuzz */
} af_errcode;

typedef struct af_error {
    af_errcode code; /* AF_OK when nothing went wrong */
    int sys_errno;   /* errno at the failing system call, else 0 */
    char message[512];
} af_error;

#if defined(__GNUC__)
#define AF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define AF_PRINTF(f, a)
#endif

/* Fill err (if not NULL). Returns -1 so callers can `return af_error_set(...)`. */
int af_error_set(af_error *err, af_errcode code, const char *fmt, ...) AF_PRINTF(3, 4);
/* Same, appending ": strerror(errno)" and recording errno. */
int af_error_sys(af_error *err, const char *fmt, ...) AF_PRINTF(2, 3);
void af_error_clear(af_error *err);
/* Exit status a tool should use for this error: 2 for usage/input, 1 otherwise. */
int af_error_exit_code(const af_error *err);

#endif
