/* callbacks.c — what libFuzzer calls: one input (af_fuzz_one), the custom mutator and
 * crossover, and the end of the run (af_fuzz_finish, from atexit); and the run's state they
 * share, which libFuzzer's context-free callbacks can only reach as one object here.
 *
 * The worker pool starts at the first input, not before LLVMFuzzerRunDriver: libFuzzer's
 * -jobs / -fork / -merge parents only start children, and must not load a model. Each input
 * is decoded, answered from the memo or run in a worker, reported as features, and a failing
 * run goes to handle_failure: counted, and for a bug re-run once when its signature is new
 * (flaky or not), judged by the eager reference, and stored.
 *
 * libFuzzer exits through exit() (-runs, -max_total_time) or, on SIGINT/SIGTERM, through
 * _Exit() from its own handler. The summary is written from an atexit handler for the first,
 * and for the second we take over the signals once fuzzing started, finish at the next input
 * and hand the signal back to libFuzzer. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "encode.h"
#include "fuzz.h"
#include "mutate.h"

static fuzz_state G;

fuzz_state *af_fuzz_state(void)
{
    return &G;
}

/* ---- stopping ------------------------------------------------------------------------------ */

void af_fuzz_finish(void)
{
    af_error err;
    int summary_failed = 0;
    if (!G.finished && G.started) {
        G.finished = 1;
        double elapsed = af_now_s() - G.t0;
        af_error_clear(&err);
        if (G.store && af_store_flush(G.store, 1, &err) < 0)
            fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        af_error_clear(&err);
        if (G.o.summary && af_fuzz_write_summary(&G, elapsed, G.o.summary, &err) != 0) {
            fprintf(stderr, "aoti-fuzz: summary: %s\n", err.message);
            summary_failed = 1;
        }
        af_fuzz_print_done(&G, elapsed);
    }
    if (G.pool)
        af_pool_stop(G.pool);
    G.pool = NULL;
    af_store_close(G.store);
    G.store = NULL;
    af_memo_free(G.memo);
    G.memo = NULL;
    af_ref_stop(G.ref);
    G.ref = NULL;
    af_package_close(G.pkg);
    G.pkg = NULL;
    if (summary_failed)
        _exit(1); /* a run whose summary was asked for and is missing did not succeed */
}

static void on_stop_signal(int signo)
{
    if (G.stop_signal) { /* a second one: do not wait for the input in flight */
        sigaction(SIGINT, &G.old_int, NULL);
        sigaction(SIGTERM, &G.old_term, NULL);
        raise(signo);
        return;
    }
    G.stop_signal = signo;
}

/* Finish, then give the signal back to libFuzzer, which reports and _Exit()s. */
static void stop_now(void)
{
    int signo = G.stop_signal;
    af_fuzz_finish();
    sigaction(SIGINT, &G.old_int, NULL);
    sigaction(SIGTERM, &G.old_term, NULL);
    raise(signo);
    _Exit(130);
}

static void fatal(const char *what, const af_error *err)
{
    fprintf(stderr, "aoti-fuzz: %s: %s\n", what, err->message);
    G.started = 0; /* no summary of a run that could not go on */
    af_fuzz_finish();
    if (G.made_artifacts)
        rmdir(G.o.artifacts); /* the dir made at the start, if nothing was written there */
    /* not exit(): libFuzzer would report the fuzz target exiting as a crash */
    _Exit(af_error_exit_code(err) == 2 ? 2 : 1);
}

/* ---- the start, at the first input ---------------------------------------------------------- */

/* SIGINT/SIGTERM end the run at the next input (on_stop_signal), and $AOTI_FUZZ_CASE_LOG. */
static void take_signals_and_log(void)
{
    const char *log = getenv("AOTI_FUZZ_CASE_LOG");
    if (log && *log && !(G.case_log = fopen(log, "w")))
        fprintf(stderr, "aoti-fuzz: cannot write AOTI_FUZZ_CASE_LOG %s: %s\n", log,
                strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &G.old_int);
    sigaction(SIGTERM, &sa, &G.old_term);
}

/* The eager reference, when there is an exported program and --no-eager was not given; the
 * AOTI side can still be fuzzed without it, so a failed start is a warning saying what is
 * missing. */
static void start_reference(const char *program)
{
    af_error err;
    af_error_clear(&err);
    if (program) {
        af_ref_opts ro = {0};
        af_cli_ref_opts(&G.o.co, &ro);
        G.ref = af_ref_start(G.pkg, &G.spec, program, G.pool, &ro, &err);
    }
    if (program && !G.ref) {
        snprintf(G.why_no_ref, sizeof G.why_no_ref, "off: it could not start (%.120s)",
                 err.message);
        fprintf(stderr, "aoti-fuzz: warning: reference %s: no eager verdicts, no value checks\n",
                G.why_no_ref);
    } else if (program) {
        fprintf(stderr,
                "aoti-fuzz: reference ready (eager, torch %s): eager verdict for each new "
                "crash, outputs compared on %s\n",
                af_ref_torch_version(G.ref),
                G.o.check_every ? "corpus additions and a sample" : "corpus additions");
    } else {
        snprintf(G.why_no_ref, sizeof G.why_no_ref, "%s",
                 G.o.co.eager == 0
                     ? "off (--no-eager)"
                     : "off: no exported program (a plain package; give --exported or "
                       "the unified archive): no contract verdict, no value checks");
        fprintf(stderr, "aoti-fuzz: reference %s\n", G.why_no_ref);
    }
}

/* The crash store and the memo; after the pool, so that a package that cannot run leaves no
 * empty artifact dir behind. */
static void open_store(void)
{
    af_error err;
    af_error_clear(&err);
    G.store = af_store_open(G.o.artifacts, &err);
    if (!G.store)
        fatal("artifacts", &err);
    G.memo = af_memo_new(1 << 14);
    if (!G.memo) {
        af_error_set(&err, AF_E_INTERNAL, "out of memory");
        fatal("memo", &err);
    }
    /* A worker killed on CUDA costs a new context (0.3-1 s); on the CPU a fork (ms). */
    const char *dev = G.o.co.device ? G.o.co.device : G.pkg->device;
    G.predicting = G.o.predict > 0 || (G.o.predict == 0 && af_device_is_cuda(dev));
    if (G.predicting)
        af_memo_set_predict(G.memo, 3, 8);
    if (!G.o.rerun_ok && af_memo_ok_enable(G.memo, 1 << 16) != 0)
        fprintf(stderr, "aoti-fuzz: warning: no memory for the memo of OK cases: repeats run\n");
    int loaded = af_store_n_loaded(G.store), skipped = af_store_n_skipped(G.store);
    if (loaded || skipped)
        fprintf(stderr, "aoti-fuzz: %s: %d known crash signature%s loaded\n", G.o.artifacts, loaded,
                loaded == 1 ? "" : "s");
    if (skipped)
        fprintf(stderr, "aoti-fuzz: warning: skipped %d unreadable crash file%s (%s)\n", skipped,
                skipped == 1 ? "" : "s", af_store_skipped_msg(G.store));
}

static void start_pool(void)
{
    af_error err;
    af_error_clear(&err);
    G.started = 1;
    take_signals_and_log();
    G.t0 = af_now_s();
    af_cli_worker_opts(&G.o.co, &G.wopts);
    G.wopts.max_spares = (int)G.o.max_spares;
    G.wopts.warm_spare = G.o.warm_spare;
    G.wopts.warm_up = G.o.no_warm_up ? -1 : 0;
    const char *program = G.o.co.eager == 0 ? NULL : af_ref_program(G.pkg, G.o.co.exported);
    if (program)
        G.wopts.arena_bytes = AF_ARENA_DEFAULT_BYTES;
    G.pool = af_pool_start(G.pkg, &G.spec, &G.wopts, &err);
    if (!G.pool)
        fatal(G.pkg->path, &err);
    start_reference(program);
    open_store();
    G.t_pool_ready = af_now_s();
    fprintf(stderr, "aoti-fuzz: workers ready in %.2f s\n", G.t_pool_ready - G.t0);
    G.t0 = G.t_pool_ready; /* execs/s counts fuzzing, not the one-off start */
}

/* ---- a failing run ------------------------------------------------------------------------ */

/* A failing result whose case should be answered from the memo from now on. */
static void remember(const af_case *c, const af_result *r, int from_memo)
{
    if (!from_memo && r->cls != AF_RES_REFUSED)
        af_memo_put(G.memo, c, r);
}

/* Count a failure by kind; 1 when it is a bug to store (a crash), 0 when only counted. */
static int count_failure(const af_result *r, const char *cs)
{
    int bug = af_class_is_bug(r->cls) || (r->cls == AF_RES_TIMEOUT && G.o.timeouts_are_bugs) ||
              (r->cls == AF_RES_OOM && G.o.oom_is_bug);
    if (r->cls == AF_RES_TIMEOUT && !G.timeouts++)
        snprintf(G.first_timeout, sizeof G.first_timeout, "%s", cs);
    if (r->cls == AF_RES_OOM && !G.ooms++)
        snprintf(G.first_oom, sizeof G.first_oom, "%s", cs);
    if (r->cls == AF_RES_REFUSED)
        G.refused++;
    if (bug) {
        G.crash_runs++;
        if (!G.first_crash_exec) {
            G.first_crash_exec = G.execs;
            G.first_crash_s = af_now_s() - G.t0;
        }
    }
    return bug;
}

/* The crash file's record of this run, before the checks of a new signature. */
static void crash_record(const af_case *c, const af_result *r, af_crash *cr)
{
    af_crash_from_run(cr, G.pkg, &G.spec, c, r, G.o.co.device);
    if (!G.ref) {
        char why[200];
        snprintf(why, sizeof why, "the reference was %s", G.why_no_ref);
        af_ref_to_crash(NULL, why, cr);
    }
    if (r->cls == AF_RES_MISMATCH && G.o.co.n_tol == 2) {
        cr->have_tol = 1;
        cr->rtol = G.o.co.rtol;
        cr->atol = G.o.co.atol;
    }
    if (G.o.co.exported && !realpath(G.o.co.exported, cr->exported))
        snprintf(cr->exported, sizeof cr->exported, "%s", G.o.co.exported);
}

/* A new signature: where it failed, whether it reproduces (run once more), eager's verdict,
 * and for a device fault the kernel. Returns -1 when a stop signal came meanwhile. */
static int check_new_signature(const af_case *c, const af_result *r, af_crash *cr)
{
    af_error err;
    af_result r2;
    af_ref_result rr;
    af_crash_set_where(cr, G.pkg, &G.spec, r); /* from the package's sources */
    af_error_clear(&err);
    if (r->cls == AF_RES_MISMATCH) { /* seen only against the reference */
        if (af_ref_check(G.pool, G.ref, &G.spec, c, &r2, &rr, &err) < 0)
            fatal("reference", &err);
    } else if (af_pool_run(G.pool, c, &r2, &err) < 0) {
        fatal("worker pool", &err);
    }
    G.reruns++;
    if (G.stop_signal)
        return -1;
    if (strcmp(r2.signature, r->signature) != 0) {
        cr->flaky = 1;
        G.flaky++;
    }
    if (G.ref && r->cls == AF_RES_MISMATCH) {
        af_ref_to_crash(&rr, NULL, cr); /* eager ran: AOTI_ONLY */
        G.verdicts++;
    } else if (G.ref) { /* the contract verdict: does eager fail too? */
        af_error_clear(&err);
        if (af_ref_run(G.ref, c, 0, &rr, &err) < 0)
            fatal("reference", &err);
        af_ref_to_crash(&rr, NULL, cr);
        G.verdicts++;
    }
    if (r->cls == AF_RES_DEVICE_FAULT) { /* name the kernel for the crash file */
        af_result t = *r;
        af_pool_triage(G.pool, c, &t);
        snprintf(cr->kernel, sizeof cr->kernel, "%s", t.kernel);
        snprintf(cr->triage, sizeof cr->triage, "%s", t.triage);
    }
    return 0;
}

/* Store the crash (a new file, or a repeat counted) and say so when it is new. */
static void store_crash(const af_result *r, const af_crash *cr, const char *cs)
{
    af_error err;
    af_error_clear(&err);
    int rc = af_store_add(G.store, cr, &err);
    if (rc < 0) {
        fprintf(stderr, "aoti-fuzz: warning: crash not saved: %s\n", err.message);
        return;
    }
    const af_store_entry *e = af_store_find(G.store, r->signature);
    if (e && e->seen_here == 1) /* first time in this process, new to the dir or not */
        snprintf(G.worst, sizeof G.worst, "%s (%s)", cs, af_class_name(r->cls));
    if (rc == AF_STORE_NEW) {
        G.new_crashes++;
        fprintf(stderr,
                "aoti-fuzz: NEW %s at exec %" PRId64 ": %s%s -> %s\n  signature: %s\n"
                "  contract: %s\n  eager: %s%s%s\n",
                af_class_name(r->cls), G.execs, cs, cr->flaky ? " (flaky)" : "", e ? e->path : "?",
                r->signature, cr->contract_note, cr->eager, cr->eager_error[0] ? ": " : "",
                cr->eager_error);
    }
}

static void handle_failure(const af_case *c, const af_result *r, int from_memo)
{
    char cs[256];
    af_case_str(&G.spec, c, cs, sizeof cs);
    if (!count_failure(r, cs)) {
        remember(c, r, from_memo); /* a timeout costs the whole limit: never twice */
        return;
    }
    af_crash cr;
    crash_record(c, r, &cr);
    if (!af_store_find(G.store, r->signature) && check_new_signature(c, r, &cr) != 0)
        return;
    const af_store_entry *known = af_store_find(G.store, r->signature);
    if (!cr.flaky && !(known && known->crash.flaky))
        remember(c, r, from_memo);
    store_crash(r, &cr, cs);
}

/* ---- one input ------------------------------------------------------------------------------ */

/* Decimal digits of u at p, then `end`; returns the position after them. */
static char *put_u64(char *p, uint64_t u, char end)
{
    char digits[20];
    int n = 0;
    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    while (n)
        *p++ = digits[--n];
    *p++ = end;
    return p;
}

/* $AOTI_FUZZ_CASE_LOG: one line per case run ("v0 v1 ... fill seed"), so bench/ can
 * replay the fuzzer's own shape mix in an in-process loop. Formatted by hand: fprintf's
 * 0.2 µs per case would be counted in the very execs/s the log is there to compare. */
static void log_case(const af_case *c)
{
    char line[AF_MAX_SYMS * 21 + 48], *p = line;
    for (int i = 0; i < c->n_syms; i++) {
        int64_t v = c->values[i];
        if (v < 0)
            *p++ = '-';
        p = put_u64(p, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, ' ');
    }
    p = put_u64(p, (uint64_t)c->fill, ' ');
    p = put_u64(p, c->seed, '\n');
    fwrite(line, 1, (size_t)(p - line), G.case_log);
}

/* This exec is one of --check-every's: its values are compared with eager whatever its
 * features (G.execs counts it already when check_values asks, not yet when the memo does). */
static int check_due_at(int64_t exec)
{
    return G.ref && G.o.check_every && exec % G.o.check_every == 0;
}

static int check_due(void)
{
    return check_due_at(G.execs + 1);
}

/* Values: an input that joins the corpus (new features) is checked against eager, and every
 * Nth exec when asked. A mismatch is a failure of its own, and a feature. */
static void check_values(const af_case *c, af_result *r, size_t fresh)
{
    af_error err;
    af_ref_result rr;
    if (!(fresh || check_due_at(G.execs)))
        return;
    af_error_clear(&err);
    double t0 = af_now_s();
    if (af_ref_check(G.pool, G.ref, &G.spec, c, r, &rr, &err) < 0)
        fatal("reference", &err);
    G.check_seconds += af_now_s() - t0;
    G.checks++;
    if (r->cls != AF_RES_OK) {
        G.mismatches += r->cls == AF_RES_MISMATCH;
        af_features_compute(&G.spec, &G.layout, c, r, G.counters);
        G.n_features += (int64_t)af_features_note_new(G.counters, G.seen, G.layout.end);
    }
}

/* Until the first crash, the status line's "worst" is the largest case run. */
static void note_largest(const af_case *c, const af_result *r)
{
    int64_t b = af_case_input_bytes(&G.spec, c);
    if (b > G.largest_bytes && r->cls != AF_RES_REFUSED) {
        char cs[256];
        G.largest_bytes = b;
        af_case_str(&G.spec, c, cs, sizeof cs);
        snprintf(G.worst, sizeof G.worst, "%s (largest, %" PRId64 " bytes)", cs, b);
    }
}

/* ---- running ahead -------------------------------------------------------------------------
 *
 * libFuzzer mutates one input -mutate_depth times in a row (5), each mutation of the one just
 * run, unless a run finds something new (then it moves on to another input). So at the end
 * of one exec the next input is known, given the mutation's seed: the run-ahead makes that
 * mutation itself, with seeds of its own, decides it as the callback would (memo, prediction)
 * and posts it to the worker, which runs it while libFuzzer does its own work. The mutator
 * hook hands libFuzzer the mutation made ahead when it is asked for one of the same input,
 * and the callback, given those bytes, takes the decision and the run already in flight.
 * With --no-run-ahead everything is made and decided ahead the same way, but not posted:
 * the same cases run, in the same order, either way. The crossover hook declines an input
 * whose mutation was made ahead; the run-ahead makes a crossover itself half of the time, as
 * libFuzzer picks between its two hooks, with a partner from the inputs libFuzzer gave the
 * crossover hook or took into its corpus lately. */

/* The longest encoding: every mutation and crossover fits, whatever libFuzzer's -max_len. */
#define RA_MAX_BYTES AF_ENC_MAX_BYTES
#define RA_PARTNERS 16

typedef struct ra_input {
    size_t size;
    uint8_t b[RA_MAX_BYTES];
} ra_input;

static struct {
    int depth;      /* af_fuzz_run_ahead_depth; 0: off */
    int cross_over; /* libFuzzer's -cross_over */
    af_rng rng;     /* the run-ahead's mutation seeds, from libFuzzer's first one */
    int seeded;
    ra_input last;   /* the bytes of the last exec */
    int hooked;      /* a mutator hook ran since the last exec */
    int continued;   /* and was given last's bytes */
    int pos;         /* the last exec's place in libFuzzer's mutation sequence */
    size_t max_size; /* libFuzzer's bound on the last mutation */
    size_t next_max; /* the bound next was made within */
    int ready;       /* next holds a mutation of base, made ahead */
    ra_input base, next;
    af_case c; /* next, decoded and decided: */
    af_result r;
    int from_memo, ok_repeat, predicted, posted;
    ra_input partners[RA_PARTNERS];
    int n_partners, partner_at;
} RA;

void af_fuzz_run_ahead_setup(char **lf, int n_lf)
{
    RA.depth = af_fuzz_run_ahead_depth(lf, n_lf, &RA.cross_over);
}

static int same_input(const ra_input *in, const uint8_t *data, size_t size)
{
    return in->size == size && memcmp(in->b, data, size) == 0;
}

static void keep_partner(const uint8_t *data, size_t size)
{
    if (size > RA_MAX_BYTES)
        return;
    ra_input *p = &RA.partners[RA.partner_at];
    RA.partner_at = (RA.partner_at + 1) % RA_PARTNERS;
    RA.n_partners += RA.n_partners < RA_PARTNERS;
    p->size = size;
    memcpy(p->b, data, size);
}

/* How the callback answers case c without the pool: from the memo (a failure, or an OK
 * repeat unless this exec's value check is due), or by a prediction. */
static void decide(const af_case *c, af_result *r, int *from_memo, int *ok_repeat, int *predicted)
{
    *from_memo = af_memo_get(G.memo, c, r);
    *ok_repeat = !*from_memo && !check_due() && af_memo_get_ok(G.memo, c, r);
    *from_memo |= *ok_repeat;
    *predicted = !*from_memo && af_memo_predict(G.memo, &G.spec, c, r);
}

/* A case posted ahead that libFuzzer did not take: it ran, so what it found is kept (the memo,
 * a crash file), but it is no exec of libFuzzer's and has no features. */
static void settle_miss(void)
{
    af_case c;
    af_result *r = &RA.r;
    af_error err;
    af_error_clear(&err);
    int got = af_pool_finish_ahead(G.pool, &c, r, &err);
    if (got < 0)
        fatal("worker pool", &err);
    if (got == 0)
        return;
    G.ahead_missed++; /* not in G.runs: those are execs' runs */
    af_memo_note_run(G.memo, &G.spec, &c, r);
    if (G.case_log)
        log_case(&c);
    if (r->cls != AF_RES_OK && r->cls != AF_RES_REFUSED)
        handle_failure(&c, r, 0);
}

/* After an exec of data/size: the next mutation, made, decided and posted ahead when
 * libFuzzer will ask for a mutation of these bytes next. */
static void run_ahead(const uint8_t *data, size_t size, int found_new)
{
    RA.ready = 0;
    if (!RA.depth || !RA.seeded || found_new || RA.pos + 1 >= RA.depth || G.stop_signal ||
        size > RA_MAX_BYTES || RA.max_size < size)
        return;
    RA.base = RA.last;
    /* libFuzzer's bound, or the buffer's where that is larger: the same bytes either way, as
     * an encoding is never longer than the buffer */
    size_t n, cap = RA.max_size < RA_MAX_BYTES ? RA.max_size : RA_MAX_BYTES;
    uint64_t seed = af_rng_next(&RA.rng);
    if (RA.cross_over && RA.n_partners && af_rng_below(&RA.rng, 2)) {
        const ra_input *p = &RA.partners[af_rng_below(&RA.rng, (uint64_t)RA.n_partners)];
        n = af_crossover(&G.spec, data, size, p->b, p->size, RA.next.b, cap, seed);
    } else {
        memcpy(RA.next.b, data, size);
        n = af_mutate(&G.spec, RA.next.b, size, cap, seed);
    }
    if (!n)
        return;
    RA.next.size = n;
    RA.next_max = RA.max_size;
    RA.ready = 1;
    G.ahead_made++;
    af_enc_decode(&G.spec, RA.next.b, n, &RA.c);
    decide(&RA.c, &RA.r, &RA.from_memo, &RA.ok_repeat, &RA.predicted);
    RA.posted =
        !RA.from_memo && !RA.predicted && !G.o.no_run_ahead && af_pool_post_ahead(G.pool, &RA.c);
}

/* The hooks: the mutation made ahead, when libFuzzer asks for one of its base. */
static size_t take_ahead(uint8_t *data, size_t size, size_t max_size)
{
    if (!RA.ready || max_size != RA.next_max || !same_input(&RA.base, data, size))
        return 0;
    memcpy(data, RA.next.b, RA.next.size);
    return RA.next.size;
}

static void note_hook(const uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (!RA.seeded) {
        af_rng_seed(&RA.rng, (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1);
        RA.seeded = 1;
    }
    if (!RA.hooked) {
        RA.continued = same_input(&RA.last, data, size);
        RA.max_size = max_size;
    }
    RA.hooked = 1;
}

int af_fuzz_one(const uint8_t *data, size_t size)
{
    af_case c;
    af_result local, *r = &local;
    af_error err;
    int from_memo, ok_repeat, predicted;

    if (!G.started)
        start_pool();
    if (G.stop_signal)
        stop_now();
    /* this exec's place in libFuzzer's sequence: after a hook given the last exec's bytes,
     * the next; after another hook, the first; with no hook (libFuzzer's seed inputs and
     * corpus reloads), none the run-ahead follows */
    RA.pos = !RA.hooked ? RA.depth : RA.continued ? RA.pos + 1 : 0;
    RA.hooked = 0;
    if (RA.ready && same_input(&RA.next, data, size)) {
        /* made and decided ahead, from the same memo as now: nothing ran in between */
        c = RA.c;
        r = &RA.r;
        from_memo = RA.from_memo;
        ok_repeat = RA.ok_repeat;
        predicted = RA.predicted;
        G.ahead_hits++;
    } else {
        if (RA.ready && RA.posted)
            settle_miss();
        af_enc_decode(&G.spec, data, size, &c);
        af_error_clear(&err); /* r is filled whole by the memo, the prediction or the pool */
        decide(&c, r, &from_memo, &ok_repeat, &predicted);
    }
    RA.ready = 0;
    if (size <= RA_MAX_BYTES) {
        RA.last.size = size;
        memcpy(RA.last.b, data, size);
    } else {
        RA.last.size = (size_t)-1;
    }
    af_error_clear(&err);
    int64_t features_before = G.n_features;
    if (from_memo) {
        G.memo_hits++;
        G.memo_hits_ok += ok_repeat;
    } else if (predicted) {
        G.predicted++;
    } else {
        if (af_pool_run(G.pool, &c, r, &err) < 0)
            fatal("worker pool", &err);
        G.runs++;
        af_memo_note_run(G.memo, &G.spec, &c, r);
        if (G.case_log) /* for bench/: the exact shape mix this run drew */
            log_case(&c);
    }
    if (G.stop_signal) /* the run may have been cut short by the signal: do not judge it */
        stop_now();
    G.execs++;
    if ((unsigned)r->cls < AF_RES_COUNT && !predicted) /* classes of what ran or had run */
        G.by_class[r->cls]++;

    af_features_compute(&G.spec, &G.layout, &c, r, G.counters);
    size_t fresh = af_features_note_new(G.counters, G.seen, G.layout.end);
    G.n_features += (int64_t)fresh;
    if (G.ref && r->cls == AF_RES_OK && !from_memo)
        check_values(&c, r, fresh);
    if (r->cls == AF_RES_OK && !from_memo && !predicted) /* ran OK, value check included */
        af_memo_put_ok(G.memo, &c, r);
    /* A prediction is not a finding: no crash file, no count, no verdict (features only). */
    if (r->cls != AF_RES_OK && !predicted)
        handle_failure(&c, r, from_memo);
    if (!G.crash_runs)
        note_largest(&c, r);
    int found_new = G.n_features != features_before;
    if (found_new) /* libFuzzer takes it into its corpus: a crossover partner */
        keep_partner(data, size);
    run_ahead(data, size, found_new);
    af_fuzz_status_line(&G, 0);
    return 0;
}

/* ---- libFuzzer's mutator hooks ------------------------------------------------------------- */

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed);

/* Each mutation is followed by a run (unless the memo answers it): the pool starts fetching
 * what its next post reads while the mutation and libFuzzer's own work go on. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (G.pool)
        af_pool_prefetch(G.pool);
    int first = !RA.hooked; /* the crossover hook may have declined this input */
    note_hook(data, size, max_size, seed);
    size_t n = first ? take_ahead(data, size, max_size) : 0;
    return n ? n : af_mutate(&G.spec, data, size, max_size, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    if (G.pool)
        af_pool_prefetch(G.pool);
    /* declined for an input whose mutation was made ahead: libFuzzer then asks the mutator */
    if (RA.ready && !RA.hooked && same_input(&RA.base, d1, s1))
        return 0;
    keep_partner(d2, s2);
    note_hook(d1, s1, max_out, seed);
    return af_crossover(&G.spec, d1, s1, d2, s2, out, max_out, seed);
}
