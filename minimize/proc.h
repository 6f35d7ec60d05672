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
#include <sys/types.h>

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

/* The child's ends and ours: stdin from /dev/null, a pipe each for stdout and stderr. */
typedef struct proc_fds {
    int devnull;
    int out[2], err[2];
} proc_fds;

/* Run argv (argv[0] looked up in PATH) with environment envp (NULL: ours), killed with its
 * whole process group after timeout_s or once *stop is set (stop may be NULL). Always fills
 * *pr; call af_proc_free after. */
void af_proc_capture(char *const argv[], char *const envp[], double timeout_s,
                     const volatile int *stop, proc_run *pr);
void af_proc_free(proc_run *pr);

/* A child started now and finished later (aoti-minimize's Python started ahead): its stdin
 * is a pipe the caller writes one line to when it is time; its fd 3 a pipe on which it may
 * say "ready SECONDS" once; its stdout and stderr are captured from the start. The same
 * process group, core limit and kill rules as af_proc_capture. */
typedef struct af_proc_bg {
    pid_t pid;      /* 0: not running (never started, finished or cancelled) */
    proc_fds f;     /* its output pipes (devnull unused) */
    int in_w;       /* our end of its stdin */
    int ready_r;    /* our end of its fd 3 */
    int ready;      /* it said "ready" */
    double ready_s; /* ... the seconds it said */
    double t_start; /* when it was started (af_now_s) */
    proc_run pr;    /* what it printed so far; started, why */
} af_proc_bg;

/* Start argv; 0, or -1 with the reason in bg->pr.why. */
int af_proc_start(char *const argv[], char *const envp[], af_proc_bg *bg);
/* Without blocking: collect its output so far; 1 once it said ready, 0 not yet, -1 it is
 * gone or closed fd 3 without saying so. */
int af_proc_poll_ready(af_proc_bg *bg);
/* Write line and a newline to its stdin and close it, then wait for it as af_proc_capture
 * does, with timeout_s counted from now; *pr gets all its output since the start, seconds
 * counted from now. The child is gone after (bg->pid 0); call af_proc_free(pr) after. */
void af_proc_finish(af_proc_bg *bg, const char *line, double timeout_s, const volatile int *stop,
                    proc_run *pr);
/* Kill its group and reap it, if it runs; release what bg holds. Idempotent. */
void af_proc_cancel(af_proc_bg *bg);

/* The last non-empty line of captured text b, in printable ASCII, into buf ("" if none). */
void af_proc_last_line(const af_sbuf *b, char *buf, size_t len);

#endif
