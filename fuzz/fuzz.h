/* fuzz.h — the parts of aoti-fuzz's main shared between its files (private to aoti-fuzz).
 *
 *   cli.c        our options, the checks of libFuzzer's, the argument vector handed to it
 *   summary.c    the status line, the closing lines and the --summary JSON
 *   callbacks.c  the libFuzzer callbacks and the run's state (fuzz_state): start of the
 *                pool at the first input, one input, a failure, signals, the end of the run
 *   main.c       main: the steps from argv to LLVMFuzzerRunDriver
 *
 * libFuzzer's callback takes no context, so the run's state is one object owned by
 * callbacks.c (af_fuzz_state); the other files get it passed. Strings in fuzz_opts point
 * into argv or are allocated once and kept for the life of the process. */
#ifndef AF_FUZZ_FUZZ_H
#define AF_FUZZ_FUZZ_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "aotif/cli.h"
#include "aotif/crashfile.h"
#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/result.h"
#include "aotif/spec.h"
#include "aotif/worker.h"
#include "featmap.h"
#include "memo.h"
#include "store.h"

/* The most arguments handed to libFuzzer. */
#define AF_FUZZ_MAX_ARGS 256

typedef struct fuzz_opts {
    af_cli_opts co;          /* the flags shared with aoti-run and aoti-minimize */
    const char *pkg;         /* the package (positional, or --pkg=PATH in re-runs) */
    const char *artifacts;   /* --artifacts; "crashes" */
    const char *seed_corpus; /* --seed-corpus DIR: write the seeds and exit */
    const char *summary;     /* --summary FILE, or NULL */
    int64_t max_spares;      /* 0: the pool's default */
    int warm_spare, no_warm_up;
    int predict; /* shape-class predictions: 1 on, -1 off, 0 the default (on for CUDA) */
    int timeouts_are_bugs, oom_is_bug;
    int64_t check_every; /* compare outputs of every Nth exec too (0: corpus additions only) */
    int rerun_ok;        /* --rerun-ok: no memo of OK cases, every repeat runs */
    int no_run_ahead;    /* --no-run-ahead: the next case is made ahead but not posted */
} fuzz_opts;

/* Everything the callback needs: libFuzzer's callback takes no context. */
typedef struct fuzz_state {
    fuzz_opts o;
    af_package *pkg;
    af_spec spec;
    af_worker_opts wopts;
    af_pool *pool;
    af_store *store;
    af_memo *memo; /* cases already run (failing, and OK unless --rerun-ok): not run again */
    af_ref *ref;   /* the eager reference, or NULL (why_no_ref says why) */
    char why_no_ref[160];
    int64_t checks, mismatches, verdicts;
    double check_seconds; /* spent in value checks (a worker re-run and the eager run) */
    int started;          /* the callback ran at least once in this process */
    int finished;         /* af_fuzz_finish ran */
    int made_artifacts;   /* the artifact dir did not exist before this run */
    double t0, t_pool_ready, last_status;
    int64_t execs, runs, memo_hits, reruns, crash_runs, timeouts, ooms, refused, flaky;
    int64_t memo_hits_ok; /* of memo_hits, repeats of a case that ran OK */
    int64_t ahead_made;   /* next mutations made ahead (callbacks.c, "running ahead") */
    int64_t ahead_hits;   /* execs libFuzzer took them for */
    int64_t ahead_missed; /* cases posted ahead that libFuzzer did not take (they ran) */
    int64_t predicted;    /* execs answered by a shape-class prediction (memo.h), not run */
    int predicting;       /* predictions on for this run */
    int64_t by_class[AF_RES_COUNT];
    int64_t first_crash_exec;
    double first_crash_s;
    int64_t new_crashes;
    int64_t largest_bytes;
    char worst[320];
    af_feat_layout layout;
    uint8_t *counters; /* the region registered with libFuzzer, layout.end slots */
    uint8_t *seen;     /* slots ever set, layout.end of them */
    int64_t n_features;
    FILE *case_log; /* $AOTI_FUZZ_CASE_LOG, or NULL */
    char first_timeout[256], first_oom[256];
    int store_warned;
    volatile sig_atomic_t stop_signal;
    struct sigaction old_int, old_term;
} fuzz_state;

/* ---- cli.c ---- */

/* The --help text. */
void af_fuzz_usage(FILE *f);
/* Parse our part of argv (before "--") into *o. 0, 1 for --help, -1 on a bad flag (err holds
 * the one-line message). */
int af_fuzz_parse_args(int argc, char **argv, fuzz_opts *o, af_error *err);
/* The checks said before anything is opened: libFuzzer's numeric flags, its corpus dirs,
 * the --summary path, the --artifacts dir. 0, or -1 with err (bad input: exit 2). */
int af_fuzz_check_args(const fuzz_opts *o, char **lf, int n_lf, af_error *err);
/* With -jobs: every path made absolute and the process moved into the artifact dir (the
 * jobs' logs land in the current dir). *argv0 becomes this program's absolute path. 0, or
 * -1 with err. */
int af_fuzz_jobs_into_artifacts(char **argv0, fuzz_opts *o, char **lf, int n_lf, af_error *err);
/* The argument vector for LLVMFuzzerRunDriver: argv0, our options as --name=value, "--",
 * the libFuzzer part and our defaults for it (enc_size: -max_len). out holds
 * AF_FUZZ_MAX_ARGS + 1 entries; the count, or -1 with err. */
int af_fuzz_lf_argv(char *argv0, const fuzz_opts *o, char **lf, int n_lf, size_t enc_size,
                    char **out, af_error *err);
/* How many mutations libFuzzer makes in a row, each of the one before (-mutate_depth, 5),
 * for the run-ahead, and *cross_over (-cross_over, 1); 0 when the run-ahead cannot know
 * libFuzzer's next input: -reduce_depth=1 (a sequence ends early on features only libFuzzer
 * sees), -only_ascii=1 (libFuzzer rewrites the mutation), or a depth below 2. */
int af_fuzz_run_ahead_depth(char **lf, int n_lf, int *cross_over);
/* callbacks.c: the run-ahead's view of libFuzzer's flags (af_fuzz_run_ahead_depth). */
void af_fuzz_run_ahead_setup(char **lf, int n_lf);
/* 1 when libFuzzer flag -name=... is among args. */
int af_fuzz_has_flag(char **args, int n, const char *name);

/* ---- summary.c ---- */

/* "d0=3 seq=7 fill=zeros": a stored crash's case, by Dim names where known. */
void af_fuzz_crash_case_str(const af_crash *c, char *buf, size_t len);
/* Crash files of this run's dir whose case lies outside the declared contract. */
int af_fuzz_outside_count(const fuzz_state *g);
/* The status line, at most once a second unless force; also flushes the store's counts. */
void af_fuzz_status_line(fuzz_state *g, int force);
/* The closing lines: totals, then one line pair per distinct crash. */
void af_fuzz_print_done(const fuzz_state *g, double elapsed);
/* The --summary document; the caller frees it with cJSON_Delete. */
cJSON *af_fuzz_summary_json(const fuzz_state *g, double elapsed);
/* Write it to path atomically. 0, or -1 with err. */
int af_fuzz_write_summary(const fuzz_state *g, double elapsed, const char *path, af_error *err);

/* ---- callbacks.c ---- */

/* The run's state (one per process). */
fuzz_state *af_fuzz_state(void);
/* libFuzzer's callback: run one input. */
int af_fuzz_one(const uint8_t *data, size_t size);
/* The end of the run (atexit): the store flushed, the summary and the closing lines, every
 * process stopped. Runs once. */
void af_fuzz_finish(void);

#endif
