/* proc.h — run a program with a time limit and capture its output (private to minimize/;
 * recheck.c runs the written reproducers, Python and gcc with it).
 *
 * The program runs in its own process group, stdin from /dev/null, stdout and stderr
 * captured (each up to AF_PROC_CAPTURE_MAX bytes), without a core dump; at the time limit,
 * or when the caller's stop flag is set, the whole group is killed. The outcome is a
 * proc_run: whether it started, its wait status, what it printed.
 *
 * Ownership: af_proc_capture fills a proc_run the caller owns; its two buffers are malloc'ed
 * and released by af_proc_free. argv and envp are borrowed for the call. */
#ifndef AOTIF_MIN_PROC_H
#define AOTIF_MIN_PROC_H

#include <stddef.h>

#include "aotif/strbuf.h"

#define AF_PROC_CAPTURE_MAX (256 * 1024)

typedef struct proc_run {
    af_sbuf out, errb; /* captured stdout / stderr, each cut at AF_PROC_CAPTURE_MAX */
    int status;        /* waitpid status (valid when started) */
    int started;       /* the child was created (an exec failure is exit 127) */
    int timed_out;     /* killed at the time limit */
    int stopped;       /* killed because the stop flag was set */
    double seconds;    /* wall time */
    char why[256];     /* why it did not start */
} proc_run;

/* Run argv (argv[0] looked up in PATH) with environment envp (NULL: ours), killed with its
 * whole process group after timeout_s or once *stop is set (stop may be NULL). Always fills
 * *pr; call af_proc_free after. */
void af_proc_capture(char *const argv[], char *const envp[], double timeout_s,
                     const volatile int *stop, proc_run *pr);
void af_proc_free(proc_run *pr);

/* The last non-empty line of captured text b, in printable ASCII, into buf ("" if none). */
void af_proc_last_line(const af_sbuf *b, char *buf, size_t len);

#endif
