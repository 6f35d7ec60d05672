/* aotif/reference.h — the reference: the model's exported program run eagerly, on the same
 * cases as the AOTI package, in a Python process of its own.
 *
 * What the worker is to the AOTI model, the reference is to eager PyTorch: the same case
 * currency, the same fill function (harness/python/aotif_fill.py, carried inside the tools
 * and written into the package's private temp dir with aotif_ref.py), a process that may
 * die. It is started once and restarted when it dies; a death is the reference's problem
 * (AF_EAGER_LOST), never a finding. It answers, for a case, whether eager runs (or eager's
 * error, type and message), and with `compare` whether its outputs agree with the AOTI
 * outputs the pool's worker left in the output arena (af_pool_run_outputs) — handed over
 * through shared memory, not serialized.
 *
 * Every pointer given to af_ref_start is borrowed until af_ref_stop. */
#ifndef AOTIF_REFERENCE_H
#define AOTIF_REFERENCE_H

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/spec.h"
#include "aotif/worker.h"

/* The output arena the tools give a pool when the reference compares outputs: a sparse
 * memfd, so only what outputs use is ever touched. */
#define AF_ARENA_DEFAULT_BYTES ((int64_t)256 << 20)

typedef struct af_ref_opts {
    const char *python; /* NULL: $AOTI_FUZZ_PYTHON, else python3 */
    const char *device; /* "cpu", "cuda:0"; NULL: the package's */
    double timeout_s;   /* per case; 0 = 120 (eager on a cold start is slow) */
    int have_tol;       /* 0: torch.testing.assert_close's dtype defaults */
    double rtol, atol;
} af_ref_opts;

typedef enum af_eager {
    AF_EAGER_NOT_RUN = 0,
    AF_EAGER_OK,    /* eager ran */
    AF_EAGER_FAILS, /* eager raised: error_type, error */
    AF_EAGER_LOST,  /* the reference died or timed out on this case (restarted) */
} af_eager;

typedef struct af_ref_result {
    af_eager eager;
    char error_type[64];
    char error[640];
    int compared;            /* the outputs were compared */
    int mismatch;            /* ... and differ */
    int output;              /* the first output that differs */
    char kind[16];           /* "value", "shape", "dtype", "nonfinite", "count" */
    double max_abs, max_rel; /* kind "value" */
    char detail[400];        /* one line: how they differ, or why nothing was compared */
    double seconds;          /* eager's own time */
} af_ref_result;

typedef struct af_ref af_ref;

/* The exported program a reference can run: `exported` (a --exported file) if given, else
 * the package itself when it is a unified archive; NULL when there is none. */
const char *af_ref_program(const af_package *pkg, const char *exported);

/* Start the reference on `program` for `spec`; `pool` (may be NULL) gives the output arena
 * to compare against. Returns NULL with AF_E_RUNTIME when Python, torch or the program
 * cannot be loaded (the message says which). */
af_ref *af_ref_start(const af_package *pkg, const af_spec *spec, const char *program,
                     const af_pool *pool, const af_ref_opts *opts, af_error *err);
/* Run one case eagerly; with `compare`, against the arena's outputs of the same case (the
 * caller ran af_pool_run_outputs on it just before, with an OK result). Returns 0 with *out
 * filled (eager LOST included), -1 only when the reference cannot be started again. */
int af_ref_run(af_ref *ref, const af_case *c, int compare, af_ref_result *out, af_error *err);
/* Restarts so far (deaths of the reference process). */
int af_ref_restarts(const af_ref *ref);
/* The LD_PRELOAD the reference needed to start ("" when none): after a first start that
 * died, one retry preloads the system libstdc++. */
const char *af_ref_preload(const af_ref *ref);
/* torch version the reference imported. */
const char *af_ref_torch_version(const af_ref *ref);
void af_ref_stop(af_ref *ref);

/* Check an OK case's values: run it again in the pool with its outputs in the arena, then
 * eagerly, and compare. When they differ, *r becomes a MISMATCH (message: "output 0 value
 * (n=mid): max abs 0.41, max rel 1; ...", signature keyed on output, kind and shape class).
 * *r is what the re-run gave otherwise (normally OK again). Returns 0, -1 on harness
 * failure. */
int af_ref_check(af_pool *pool, af_ref *ref, const af_spec *spec, const af_case *c, af_result *r,
                 af_ref_result *rr, af_error *err);

/* "EAGER_FAILS_TOO", "AOTI_ONLY", "" (not run / lost): the contract verdict of a failure. */
const char *af_ref_verdict(const af_ref_result *r);

/* Fill a crash record's eager fields from a reference answer (NULL ref result with `why`:
 * "NOT_RUN" and the reason). */
struct af_crash;
void af_ref_to_crash(const af_ref_result *r, const char *why, struct af_crash *cr);

#endif
