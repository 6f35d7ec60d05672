/* bench_harness.c — what running cases through the worker costs, measured in one run.
 *
 *   bench_harness PKG.pt2 CRASH_PKG.pt2 CRASH_SHAPE [N]
 *
 * 1. per-case time through the worker pool (zygote, one worker) over a mix of shapes;
 * 2. the same cases in a plain in-process loop over the same C ABI (af_runtime): the
 *    baseline; reported as the ratio baseline / worker (goal >= 0.8);
 * 3. restart cost: crash → next result latency on CRASH_PKG with the zygote, without it
 *    (each worker loads libtorch), and with a warm spare.
 * --replay CASE_LOG PKG: 1 and 2 on the cases aoti-fuzz ran; --replay-split: see below.
 * The in-process part runs in a forked child, so this process never loads libtorch and
 * forking the pool's zygote stays clean. Prints one JSON object. */
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/package.h"
#include "aotif/runtime.h"
#include "aotif/worker.h"
#include "cuda_api.h"

/* Replay mode: the cases aoti-fuzz ran ($AOTI_FUZZ_CASE_LOG), else NULL. */
static af_case *g_cases;
static int g_n_cases;

/* The shape mix: the replayed cases, or symbol values cycling through a deterministic
 * spread of the range. */
static void mix_case(const af_spec *spec, int k, af_case *c)
{
    if (g_cases) {
        *c = g_cases[k % g_n_cases];
        return;
    }
    af_case_init(c, spec);
    for (int i = 0; i < spec->n_syms; i++) {
        int64_t lo = spec->syms[i].compiled_min, hi = spec->syms[i].compiled_max;
        c->values[i] =
            lo + (int64_t)((k * 7919u + (unsigned)i * 104729u) % (uint64_t)(hi - lo + 1));
    }
}

/* Mean time per case through the worker pool; *run_s: of it, inside the model's Run (the
 * pool's stats, as the worker timed it). */
static double pool_loop(const af_package *pkg, const af_spec *spec, const af_worker_opts *o, int n,
                        double settle_s, double *run_s)
{
    af_error err = {0};
    af_pool *pool = af_pool_start(pkg, spec, o, &err);
    if (!pool) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    af_case c;
    af_result r;
    for (int k = 0; k < 50; k++) { /* warm-up */
        mix_case(spec, k, &c);
        af_pool_run(pool, &c, &r, &err);
    }
    if (settle_s > 0) { /* the spares' start-up done before the timed cases */
        usleep((useconds_t)(settle_s * 1e6));
        for (int k = 0; k < 50; k++) {
            mix_case(spec, k, &c);
            af_pool_run(pool, &c, &r, &err);
        }
    }
    double t0 = af_now_s();
    for (int k = 0; k < n; k++) {
        mix_case(spec, k, &c);
        if (af_pool_run(pool, &c, &r, &err) != 0 || r.cls != AF_RES_OK) {
            fprintf(stderr, "bench: case %d: %s %s\n", k, r.signature, err.message);
            exit(1);
        }
    }
    double per = (af_now_s() - t0) / n;
    af_pool_stats st;
    af_pool_get_stats(pool, &st);
    if (run_s) /* the warm-up's runs are in the sum too: spread over all the cases run */
        *run_s = st.cases ? st.run_seconds / (double)st.cases : 0;
    af_pool_stop(pool);
    return per;
}

/* The in-process loop's time per case; *run_s: of it, inside the model's Run. */
static double inproc_loop(const af_package *pkg, const af_spec *spec, int n, double *run_s)
{
    int p[2];
    if (pipe(p) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        af_error err = {0};
        char dir[4096];
        double per[2] = {-1, 0}, *run = per + 1;
        af_pin_worker_cpu(); /* with AOTI_FUZZ_WORKER_CPU: where the workers run */
        if (af_find_torch_lib(NULL, dir, sizeof dir, &err) == 0 &&
            af_torch_load(dir, !strcmp(pkg->device, "cuda"), &err) == 0) {
            af_runtime *rt =
                af_runtime_open(pkg, spec, strcmp(pkg->device, "cuda") ? "cpu" : "cuda:0", &err);
            if (rt) {
                af_case c;
                af_result r;
                for (int k = 0; k < 50; k++) {
                    mix_case(spec, k, &c);
                    af_runtime_run(rt, &c, &r, &err);
                }
                double t0 = af_now_s();
                for (int k = 0; k < n; k++) {
                    mix_case(spec, k, &c);
                    af_runtime_run(rt, &c, &r, &err);
                    run[0] += r.run_seconds;
                }
                per[0] = (af_now_s() - t0) / n;
                run[0] /= n;
            }
        }
        if (per[0] < 0)
            fprintf(stderr, "bench: in-process: %s\n", err.message);
        if (write(p[1], per, sizeof per) != sizeof per)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    double per[2] = {-1, 0};
    if (read(p[0], per, sizeof per) != sizeof per)
        per[0] = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    if (run_s)
        *run_s = per[1];
    return per[0];
}

/* Mean latency from a crashing case's result to the next case's result. */
static double restart_latency(const af_package *pkg, const af_spec *spec, const af_case *crash,
                              int no_zygote, int spare, int rounds)
{
    af_error err = {0};
    af_worker_opts o = {0};
    o.no_zygote = no_zygote;
    o.warm_spare = spare ? 1 : -1;
    af_pool *pool = af_pool_start(pkg, spec, &o, &err);
    if (!pool) {
        fprintf(stderr, "bench: %s\n", err.message);
        exit(1);
    }
    af_case ok;
    mix_case(spec, 1, &ok);
    af_result r;
    double total = 0;
    for (int i = 0; i < rounds; i++) {
        af_pool_run(pool, crash, &r, &err);
        if (r.cls == AF_RES_OK) {
            fprintf(stderr, "bench: the crash case did not crash\n");
            exit(1);
        }
        if (spare) /* crashes rarer than a spare's start-up (CUDA: context + model load) */
            usleep(strcmp(pkg->device, "cuda") ? 300 * 1000 : 1500 * 1000);
        double t0 = af_now_s();
        af_pool_run(pool, &ok, &r, &err);
        total += af_now_s() - t0;
    }
    af_pool_stop(pool);
    return total / rounds;
}

static int load_cases(const char *path, const af_spec *spec)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int cap = 1024;
    g_cases = malloc(sizeof *g_cases * (size_t)cap);
    for (;;) {
        af_case c;
        af_case_init(&c, spec);
        int ok = 1, fill;
        for (int i = 0; i < spec->n_syms && ok; i++)
            ok = fscanf(f, "%" SCNd64, &c.values[i]) == 1;
        if (!ok || fscanf(f, "%d %" SCNu64, &fill, &c.seed) != 2)
            break;
        c.fill = (af_fill)fill;
        if (g_n_cases == cap)
            g_cases = realloc(g_cases, sizeof *g_cases * (size_t)(cap *= 2));
        g_cases[g_n_cases++] = c;
    }
    fclose(f);
    return g_n_cases > 0 ? 0 : -1;
}

/* bench_harness --replay LOG PKG: the fuzzer's own shape mix, worker vs in-process. */
static int replay_main(const char *log, const char *path)
{
    af_error err = {0};
    static af_spec spec;
    af_package *pkg = af_package_open(path, NULL, &err);
    if (!pkg || af_package_spec(pkg, NULL, NULL, &spec, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    if (load_cases(log, &spec) != 0) {
        fprintf(stderr, "bench: no cases in %s\n", log);
        return 2;
    }
    double wrun_s = 0, run_s = 0;
    double worker = pool_loop(pkg, &spec, NULL, g_n_cases, 0, &wrun_s);
    double inproc = inproc_loop(pkg, &spec, g_n_cases, &run_s);
    printf("{\"package\": \"%s\", \"replayed_cases\": %d, \"worker_us_per_case\": %.1f, "
           "\"worker_run_us_per_case\": %.2f, \"inprocess_us_per_case\": %.1f, "
           "\"inprocess_run_us_per_case\": %.2f}\n",
           path, g_n_cases, worker * 1e6, wrun_s * 1e6, inproc * 1e6, run_s * 1e6);
    af_package_close(pkg);
    return 0;
}

/* bench_harness --replay-split LOG PKG: where a worker's Run loses to the in-process loop's,
 * on the fuzzer's own cases. In one run, in this order: the in-process loop; the pool with a
 * warm spare asked for from the start, timed at once (the spare loading beside the first
 * cases) and timed after the spare has loaded; the pool without a spare; the pool without a
 * spare with the tool blocking for each answer instead of spinning (AOTI_FUZZ_TOOL_SPIN_US=0:
 * no busy CPU beside the worker's run, a futex wake-up per case); the in-process loop
 * while a pool with its loaded spare sits idle beside it; the in-process loop while another
 * process spins (a pause loop, as the tool's wait); the in-process loop again. The order
 * effect shows between the first and the last in-process loop, a spare's start-up and its
 * idle presence between the pool loops and in the "beside idle pool" loop, a second busy
 * CPU's cost in the "beside spinner" loop and, from the other side, in the "tool blocking"
 * pool loop's Run. */
static int replay_split_main(const char *log, const char *path)
{
    af_error err = {0};
    static af_spec spec;
    af_package *pkg = af_package_open(path, NULL, &err);
    if (!pkg || af_package_spec(pkg, NULL, NULL, &spec, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    if (load_cases(log, &spec) != 0) {
        fprintf(stderr, "bench: no cases in %s\n", log);
        return 2;
    }
    af_worker_opts spare = {0}, nospare = {0};
    spare.warm_spare = 1;
    nospare.warm_spare = -1;
    double settle = strcmp(pkg->device, "cuda") ? 3.0 : 8.0; /* a spare's start-up, and some */
    enum { N_LOOPS = 8 };
    double per[N_LOOPS], run[N_LOOPS];
    per[0] = inproc_loop(pkg, &spec, g_n_cases, &run[0]);
    per[1] = pool_loop(pkg, &spec, &spare, g_n_cases, 0, &run[1]);
    per[2] = pool_loop(pkg, &spec, &spare, g_n_cases, settle, &run[2]);
    per[3] = pool_loop(pkg, &spec, &nospare, g_n_cases, 0, &run[3]);
    char *had = getenv("AOTI_FUZZ_TOOL_SPIN_US");
    char *keep = had ? strdup(had) : NULL;
    setenv("AOTI_FUZZ_TOOL_SPIN_US", "0", 1);
    per[4] = pool_loop(pkg, &spec, &nospare, g_n_cases, 0, &run[4]);
    if (keep)
        setenv("AOTI_FUZZ_TOOL_SPIN_US", keep, 1);
    else
        unsetenv("AOTI_FUZZ_TOOL_SPIN_US");
    free(keep);
    af_pool *idle = af_pool_start(pkg, &spec, &spare, &err);
    if (!idle) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 1;
    }
    af_case c;
    af_result r;
    for (int k = 0; k < 50; k++) { /* the idle pool's worker has run, like a fuzzer's */
        mix_case(&spec, k, &c);
        af_pool_run(idle, &c, &r, &err);
    }
    usleep((useconds_t)(settle * 1e6));
    per[5] = inproc_loop(pkg, &spec, g_n_cases, &run[5]);
    af_pool_stop(idle);
    pid_t spinner = fork(); /* a process busy on another CPU, as the tool is while it waits */
    if (spinner == 0) {
        for (volatile unsigned k = 0;; k++) {
            if ((k & 255) == 0)
                sched_yield();
            else
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause(); /* the tool's spin step (harness/ipc.c) */
#else
                __asm__ __volatile__("" ::: "memory");
#endif
        }
    }
    per[6] = inproc_loop(pkg, &spec, g_n_cases, &run[6]);
    kill(spinner, SIGKILL);
    waitpid(spinner, NULL, 0);
    per[7] = inproc_loop(pkg, &spec, g_n_cases, &run[7]);
    static const char *names[N_LOOPS] = {"inprocess_first",          "pool_spare_loading",
                                         "pool_spare_loaded",        "pool_no_spare",
                                         "pool_tool_blocking",       "inprocess_beside_idle_pool",
                                         "inprocess_beside_spinner", "inprocess_last"};
    printf("{\"package\": \"%s\", \"replayed_cases\": %d", path, g_n_cases);
    for (int i = 0; i < N_LOOPS; i++)
        printf(", \"%s_us_per_case\": %.1f, \"%s_run_us_per_case\": %.2f", names[i], per[i] * 1e6,
               names[i], run[i] * 1e6);
    printf("}\n");
    af_package_close(pkg);
    return 0;
}

int main(int argc, char **argv)
{
    if (!getenv("OMP_NUM_THREADS")) { /* the workers' default, for a like-for-like baseline */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        char v[16];
        snprintf(v, sizeof v, "%ld", ncpu > 2 ? ncpu - 1 : 1);
        setenv("OMP_NUM_THREADS", v, 1);
    }
    af_cuda_worker_defaults(); /* the CUDA workers' environment, for the in-process loop too */
    if (argc == 4 && !strcmp(argv[1], "--replay"))
        return replay_main(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "--replay-split"))
        return replay_split_main(argv[2], argv[3]);
    if (argc < 4) {
        fprintf(stderr, "usage: bench_harness PKG CRASH_PKG NAME=VALUE [N]\n"
                        "       bench_harness --replay CASE_LOG PKG\n"
                        "       bench_harness --replay-split CASE_LOG PKG\n");
        return 2;
    }
    int n = argc > 4 ? atoi(argv[4]) : 2000;

    af_error err = {0};
    static af_spec spec, cspec;
    af_package *pkg = af_package_open(argv[1], NULL, &err);
    af_package *cpkg = pkg ? af_package_open(argv[2], NULL, &err) : NULL;
    if (!cpkg || af_package_spec(pkg, NULL, NULL, &spec, &err) ||
        af_package_spec(cpkg, NULL, NULL, &cspec, &err)) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    af_case crash;
    af_case_init(&crash, &cspec);
    for (int i = 0; i < cspec.n_syms; i++)
        crash.values[i] = cspec.syms[i].compiled_min;
    if (af_case_assign(&cspec, &crash, argv[3], &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    double worker = pool_loop(pkg, &spec, NULL, n, 0, NULL);
    double inproc = inproc_loop(pkg, &spec, n, NULL);
    double with_zygote = restart_latency(cpkg, &cspec, &crash, 0, 0, 10);
    double cold = restart_latency(cpkg, &cspec, &crash, 1, 0, 10);
    double spare = restart_latency(cpkg, &cspec, &crash, 0, 1, 10);
    printf("{\"package\": \"%s\", \"cases\": %d,\n"
           " \"worker_us_per_case\": %.1f, \"inprocess_us_per_case\": %.1f, "
           "\"ratio_inprocess_over_worker\": %.3f,\n"
           " \"restart_ms_zygote\": %.1f, \"restart_ms_no_zygote\": %.1f, "
           "\"restart_ms_warm_spare\": %.1f}\n",
           argv[1], n, worker * 1e6, inproc * 1e6, inproc / worker, with_zygote * 1e3, cold * 1e3,
           spare * 1e3);
    af_package_close(pkg);
    af_package_close(cpkg);
    return 0;
}
