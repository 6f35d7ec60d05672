/* ddmin.h — the minimization engine of aoti-minimize: from a failing case to a locally
 * minimal one that still fails the same way.
 *
 * The engine knows nothing of models, workers or processes. It edits cases (aotif/case.h)
 * inside the declared ranges of a spec (it reads only spec->n_syms and syms[i].min/max) and
 * asks an oracle, supplied by the caller, one question per case: does this case pass, fail
 * the same way, or fail differently? The algorithm and its bound on oracle calls are
 * explained at the top of ddmin.c.
 *
 * Ownership: every pointer given to af_minimize is borrowed for the duration of the call
 * and never kept. af_min_report is a plain value (fixed-size fields, no pointers) filled by
 * the call and owned by the caller. The case and buffer an oracle or progress callback
 * receives are the engine's, valid only during that callback. */
#ifndef AOTIF_MIN_DDMIN_H
#define AOTIF_MIN_DDMIN_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/result.h"
#include "aotif/spec.h"
#include "memo.h"

struct af_explain; /* explain.h */

/* One run of a case, as the oracle judges it against the failure being minimized. */
typedef enum af_verdict {
    AF_V_PASS = 0, /* ran and did not fail */
    AF_V_SAME,     /* failed with the signature being minimized */
    AF_V_OTHER,    /* failed with another signature: a different bug, recorded, never taken */
    AF_V_ERROR,    /* could not be judged at all (the worker could not start, ...): the
                      engine stops and af_minimize returns -1 with AF_E_RUNTIME */
} af_verdict;

/* "PASS", "SAME", "OTHER", "ERROR". */
const char *af_verdict_name(af_verdict v);

/* Run case `c` once and judge it. `other_sig` (other_len bytes, an empty string on entry)
 * may receive a NUL-terminated signature on AF_V_OTHER, the reason on AF_V_ERROR, or on
 * AF_V_PASS the class of a run that passed without being fine ("REFUSED", "TIMEOUT",
 * "OOM"; kept in the memo for the crash map).
 * The engine calls it again for the same case only to vote (opts.runs, flaky oracles). */
typedef af_verdict (*af_oracle_fn)(void *ctx, const af_case *c, char *other_sig, size_t other_len);

typedef struct af_min_opts {
    int runs;           /* runs per question, majority wins; <= 1: one run (3 once flaky) */
    double budget_s;    /* wall-clock budget after the reproduction check; <= 0: none */
    volatile int *stop; /* may be NULL; set (e.g. from a SIGINT handler) to stop cleanly */
    /* Called at each stage ("reproduce", "ddmin", "search", "check", "joint", "fill",
     * "verify", "explain", "done") and after each improvement ("improved"), with the number of
     * questions asked so far and the best case so far. May be NULL. */
    void (*progress)(void *ctx, const char *stage, int64_t calls, const af_case *best);
    void *progress_ctx;
    int simplify_fill; /* also try fill zeros, then ones, then seed 0 */
    /* The answer memo to use and fill (memo.h), kept by the caller after the call so that
     * later questions (the crash map) reuse the answers; NULL: the engine's own. */
    af_memo *memo;
    /* Run the explain phase on the minimal case (explain.h) into *explain, within the
     * bound (+ AF_EXPLAIN_TRIES per symbol); NULL: no explain phase. */
    struct af_explain *explain;
    /* Where the oracle leaves the result class (aotif/result.h) of a run it answers
     * AF_V_OTHER, before it returns; the engine reads it then and records it with the side
     * finding. NULL: side findings are recorded as AF_RES_WORKER_LOST (a failure of
     * unknown kind). */
    const af_class *other_class;
} af_min_opts;

#define AF_MIN_SIDE_MAX 16
#define AF_MIN_SIG_MAX 256

/* A different failure met on the way: the smallest case seen with that signature. */
typedef struct af_min_side {
    af_case c;
    af_class cls; /* the class of the runs that gave it (opts.other_class) */
    char signature[AF_MIN_SIG_MAX];
    int64_t runs; /* oracle runs that gave this signature */
} af_min_side;

typedef struct af_min_report {
    af_case best;          /* smallest case found failing the same way (the start if none) */
    int64_t oracle_calls;  /* distinct questions asked (cache misses), the reproduction
                              question included */
    int64_t oracle_runs;   /* calls of the oracle function (repro repeats and votes) */
    int64_t cache_hits;    /* questions answered from the cache */
    int64_t call_bound;    /* B = sum_i ceil(log2 R_i) + 4 (5 when min_i < 0), R_i =
                              max_i - min_i + 1, plus AF_EXPLAIN_TRIES = 5 per symbol with
                              the explain phase: the bound on oracle_calls the engine keeps
                              for monotone bugs, e.g. thresholds (see ddmin.c) */
    int64_t explain_calls; /* of oracle_calls, those the explain phase asked (<= 5 k) */
    int runs_per_question; /* after the reproduction check */
    int rounds;            /* passes of the fixpoint loop */
    int reproduced;        /* the start case failed the same way at least once */
    double repro_rate;     /* SAME runs / runs of the start case */
    int flaky;             /* 0 < repro_rate < 1: answers were majority votes of >= 3 runs */
    int stopped;           /* the budget ran out or *stop was set: best is the best so far */
    int locally_minimal;   /* verified: lowering any one symbol to its lower bound, to 0, 1
                              or 2, or by one no longer fails the same way (by majority
                              vote when flaky) */
    int n_side;            /* entries used in side[] */
    int side_dropped;      /* further signatures that did not fit */
    af_min_side side[AF_MIN_SIDE_MAX];
} af_min_report;

/* Minimize `start` (which must lie inside the spec's declared ranges) against the oracle.
 * opts may be NULL (defaults: one run, no budget, no stop flag, no fill simplification).
 *
 * Returns 0 when the search ended normally, stopped, or found that the start case does not
 * reproduce (rep->reproduced == 0, rep->best == *start). Returns -1 with err filled on bad
 * arguments (AF_E_USAGE), an oracle that answered AF_V_ERROR (AF_E_RUNTIME) or out of memory
 * (AF_E_IO); rep then still holds the best case found so far, when arguments were valid. */
int af_minimize(const af_spec *spec, const af_case *start, af_oracle_fn fn, void *ctx,
                const af_min_opts *opts, af_min_report *rep, af_error *err);

#endif
