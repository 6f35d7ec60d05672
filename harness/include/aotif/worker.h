/* aotif/worker.h — run cases out of process and get typed results back.
 *
 * Every case runs in a worker process, never in the caller: a CPU model can SIGSEGV and a
 * CUDA fault is sticky, and the caller must survive both. A zygote process, forked before
 * anything else, dlopen's libtorch (and libtorch_cuda for CUDA packages, with no CUDA call)
 * once; it forks workers on demand, so a restart does not pay for loading libtorch again.
 * Each worker loads the model, creates its container on the device and then runs cases
 * sent over a socket. After any fatal result (signal, device fault, timeout, lost) the
 * worker is replaced before the next case. With warm_spare, a second worker waits with its
 * model loaded and takes over at once.
 *
 * The pool owns its processes; af_pool_stop kills and reaps them. */
#ifndef AOTIF_WORKER_H
#define AOTIF_WORKER_H

#include <stdint.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/result.h"
#include "aotif/runtime.h"
#include "aotif/spec.h"

typedef struct af_worker_opts {
    const char *torch_lib;   /* dir holding libtorch.so; NULL: $AOTI_FUZZ_TORCH_LIB, else python3 */
    const char *device;      /* "cpu", "cuda", "cuda:N"; NULL: the package's device */
    double timeout_s;        /* per case; 0 = 30 s */
    double load_timeout_s;   /* a worker's start (model load, container create); 0 =
                                timeout_s, but at least AF_LOAD_TIMEOUT_MIN_S */
    int64_t max_input_bytes; /* refuse larger cases before allocating; 0 = 1 GiB */
    int64_t mem_limit_bytes; /* CPU workers: address space headroom past load; 0 = 8 GiB, <0 none */
    int no_zygote;           /* fork workers straight from the caller: each loads libtorch */
    int warm_spare;          /* keep workers loaded and waiting to take over from one that
                                dies: 1 on from the start, 2 on from the first worker
                                death (a spare's start-up competes with the active worker's
                                runs while it lasts), -1 off, 0 auto (2 for CUDA, where a
                                restart costs a context; off on the CPU). One spare; more,
                                up to max_spares, while workers die faster than one starts */
    int warm_up;             /* a worker that loads runs a case that ran OK before once, before
                                it says it is ready, so that a CUDA worker's first case (the
                                kernels loaded on their first launch) is paid while it loads,
                                off the cases' path: 1 on, -1 off, 0 auto (on with warm spares,
                                so on CUDA). Off for good after 3 workers died warming up. */
    int max_spares;          /* 0 = auto: CUDA one per 4 CPUs (at least 1), CPU 1; at most
                                AF_MAX_SPARES */
    int check_inputs;        /* set AOTI_RUNTIME_CHECK_INPUTS=1 in workers */
    int triage;              /* CUDA: on a device fault, re-run the case once in a worker with
                                CUDA_LAUNCH_BLOCKING=1 and PYTORCH_NO_CUDA_MEMORY_CACHING=1 and
                                keep what it names (result.triage, result.kernel) */
    int verbose;             /* copy the workers' stderr to ours */
    int64_t arena_bytes;     /* > 0: an output arena of this size (runtime.h) that
                                af_pool_run_outputs fills, for the reference process */
} af_worker_opts;

typedef struct af_pool af_pool;

#define AF_MAX_SPARES 16
/* Loading libtorch's CUDA side and a model's weights takes seconds: a short per-case
 * timeout does not cut a load shorter than this. */
#define AF_LOAD_TIMEOUT_MIN_S 20.0

typedef struct af_pool_stats {
    int64_t cases;        /* cases run */
    int64_t spawns;       /* workers started (first one included) */
    double spawn_seconds; /* total time from spawn request to worker ready */
    double last_spawn_seconds;
    double setup_seconds; /* af_pool_start's time (zygote + first worker) */
    int spares_peak;      /* most spares requested at once */
    int zygote_restarts;  /* zygotes started again after one died */
    int64_t cases_rerun;  /* cases run again: the worker died before taking it, or the
                             zygote died under it */
    /* where workers' start-up time goes, summed over `loads` workers that came up: from the
     * spawn request to the worker's first instruction (the zygote's fork and queue),
     * loading libtorch (when the zygote had not), the CUDA context, libtorch's shim and
     * the model .so, the model container (weights to the device) */
    int64_t loads;
    double load_phase_seconds[5];
    double wait_worker_seconds; /* af_pool_run blocked on a worker still loading */
    int64_t first_cases;        /* fresh workers' first cases, and their time (CUDA */
    double first_case_seconds;  /* loads a kernel on its first launch) */
    int64_t warm_ups;           /* workers that ran the warm-up case, and its time in them */
    double warm_up_seconds;
    int64_t warm_deaths;       /* workers that died in it (not counted as load failures) */
    int64_t faults;            /* cases whose worker reported a crash or device fault: */
    double fault_case_seconds; /* their time from the post to the report, */
    double fault_exit_seconds; /* and from the report until the worker was let go (killed;
                                  waited for only when a device assert's text is missing) */
    /* where a caller's time goes between cases: from each post to its answer (the worker's
     * run and the hand-off both ways), and from one answer to the next post (the caller's own
     * work: for aoti-fuzz, libFuzzer and the per-exec bookkeeping) */
    double exchange_seconds;
    double between_seconds;
    double run_seconds;    /* of exchange_seconds: inside the model's Run (and its device sync),
                              as the worker timed it, summed over the answers */
    int64_t betweens;      /* gaps counted in between_seconds (cases after the first, per worker) */
    int64_t quiet_skips;   /* cases posted without reading the worker's pipe first: it said the
                              pipe was empty after its last result */
    int64_t plain_results; /* answers that came on the mailbox's short path (OK, no text but
                              the OK signature): a few cache lines, not the whole result */
    int64_t ahead_posted;  /* cases posted by af_pool_post_ahead */
    int64_t ahead_taken;   /* of those, taken by the af_pool_run that asked for them */
} af_pool_stats;
enum { AF_PHASE_FORK, AF_PHASE_TORCH, AF_PHASE_CONTEXT, AF_PHASE_SO, AF_PHASE_CREATE };

/* Start the zygote and the first worker (which loads the model). A model that cannot be
 * loaded at all (not loadable by dlopen, missing ABI symbols, a wrong input count, a load
 * that dies or does not finish within the load timeout) is bad input, AF_E_INPUT; a
 * machine that cannot run it (no usable GPU, ISA mismatch) is AF_E_RUNTIME. A zygote that
 * dies later is started again (stats.zygote_restarts), and a case whose worker it took
 * along is run again, not reported. */
af_pool *af_pool_start(const af_package *pkg, const af_spec *spec, const af_worker_opts *opts,
                       af_error *err);
/* Run one case. Fills *out for every outcome of the case, including crashes and refusals;
 * returns -1 only when the harness itself cannot go on (e.g. no worker can be started). */
int af_pool_run(af_pool *pool, const af_case *c, af_result *out, af_error *err);
/* A hint that a case comes soon, for a caller with work of its own before it (libFuzzer's
 * mutation, the decode): start fetching the shared cache line that af_pool_run reads first
 * (whether the active worker's stderr pipe was left empty), which the worker wrote after its
 * last answer, so that the fetch overlaps that work instead of waiting for it. Changes
 * nothing; a pool with no active worker ignores it. */
void af_pool_prefetch(const af_pool *pool);
/* Post case c to the active worker now, for the caller's next af_pool_run, so that the
 * worker runs it while the caller does other work first. Returns 1 when posted; 0 when it
 * was not (a case already ahead, no active worker that has answered before, a worker with
 * stderr not yet read, a case the pool refuses): then nothing changed. The af_pool_run for
 * an equal case takes the run in flight, with all of af_pool_run's handling (deaths,
 * timeouts counted from this post). Any other af_pool_run or af_pool_recycle first finishes
 * the case ahead and drops its result; af_pool_finish_ahead hands it to the caller instead. */
int af_pool_post_ahead(af_pool *pool, const af_case *c);
/* The case posted ahead and not yet taken: its run finished as af_pool_run's, into *c and
 * *out. Returns 1 then, 0 when no case is ahead, -1 as af_pool_run. */
int af_pool_finish_ahead(af_pool *pool, af_case *c, af_result *out, af_error *err);
/* A device fault's triage, on request (opts.triage does it after every device fault): run
 * case c once more in a fresh worker with blocking launches, each synchronized, and add what
 * it names to r (r->triage; r->kernel if empty). The signature stays. No-op for other
 * classes and for a result that already has its triage. */
void af_pool_triage(af_pool *pool, const af_case *c, af_result *r);
/* As af_pool_run, and an OK run's outputs are copied into the output arena (opts.arena_bytes
 * must be > 0): read them with af_pool_arena. */
int af_pool_run_outputs(af_pool *pool, const af_case *c, af_result *out, af_error *err);
/* The output arena (a MAP_SHARED memfd mapping) and its fd, for a child process to map;
 * NULL / -1 when the pool has none. */
const af_arena_header *af_pool_arena(const af_pool *pool, int *fd, size_t *bytes);
void af_pool_get_stats(const af_pool *pool, af_pool_stats *out);
/* Versions the worker saw: "torch 2.13.0", CUDA driver, GPU name... into buf, one per line. */
void af_pool_versions(const af_pool *pool, char *buf, size_t len);
/* The libtorch dir the pool's workers load (af_find_torch_lib's answer). */
const char *af_pool_torch_lib(const af_pool *pool);
/* End the active worker now, so that the next case runs in a fresh one (one that has run
 * nothing: no fill cache, no state left by earlier cases). */
void af_pool_recycle(af_pool *pool);
void af_pool_stop(af_pool *pool);
/* Placement for measurements: with AOTI_FUZZ_WORKER_CPU=N in the environment, each worker
 * binds itself to CPU N as it starts (the tool stays where it was started), so that a
 * benchmark can run the model on a known CPU. af_worker_cpu reads it: 0 with *cpu = N, or
 * -1 when unset; -1 (AF_E_INPUT) when it is not a CPU number of this machine (af_pool_start
 * checks it). af_pin_worker_cpu binds the calling process to N and returns N; -1 when the
 * variable is unset or bad or the bind failed. */
int af_worker_cpu(int *cpu, af_error *err);
int af_pin_worker_cpu(void);

/* Locate libtorch's lib dir (see torch_lib above). Returns 0 and fills dir, or -1. */
int af_find_torch_lib(const char *hint, char *dir, size_t len, af_error *err);

#endif
