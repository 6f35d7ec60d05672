/* test_worker.c — the worker pool against the fault-injection model: every failure class
 * comes back typed, with a stable signature, and the next case runs in a fresh worker. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "af_pkgmaker.h"
#include "af_test.h"
#include "aotif/package.h"
#include "aotif/worker.h"

static af_package *pkg;
static af_spec spec;

static af_result run_mode(af_pool *pool, int64_t mode)
{
    af_case c;
    af_result r;
    af_error err = {0};
    af_case_init(&c, &spec);
    c.values[0] = mode;
    memset(&r, 0, sizeof r);
    if (af_pool_run(pool, &c, &r, &err) != 0) {
        fprintf(stderr, "af_pool_run: %s\n", err.message);
        r.cls = AF_RES_COUNT;
    }
    return r;
}

static void test_classes(int no_zygote, int warm_spare)
{
    af_error err = {0};
    af_worker_opts o = {0};
    o.timeout_s = 2.0;
    o.mem_limit_bytes = 512LL << 20;
    o.no_zygote = no_zygote;
    o.warm_spare = warm_spare;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    if (!pool) {
        fprintf(stderr, "af_pool_start: %s\n", err.message);
        CHECK(pool != NULL);
        return;
    }
    af_pool_stats st;
    af_result r = run_mode(pool, 8);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK_EQ_INT(r.n_outputs, 1);
    CHECK_EQ_INT(r.outputs[0].sizes[0], 8);
    CHECK_EQ_INT(r.outputs[0].n_nan, 0);

    r = run_mode(pool, 12);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK_EQ_INT(r.outputs[0].n_nan, 1);
    CHECK_EQ_INT(r.outputs[0].n_inf, 1);
    CHECK(af_result_any_nonfinite(&r));

    r = run_mode(pool, 0);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK(af_result_any_empty(&r));

    af_pool_get_stats(pool, &st);
    int64_t spawns = st.spawns;

    r = run_mode(pool, 7);
    CHECK_EQ_INT(r.cls, AF_RES_SIGNAL);
    CHECK_EQ_INT(r.signo, SIGSEGV);
    CHECK(r.n_frames > 0);
    CHECK(strncmp(r.frames[0], "model.so!AOTInductorModelContainerRun", 37) == 0);
    CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    CHECK(r.fault_addr == 0);

    r = run_mode(pool, 8); /* a fresh worker takes the next case */
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    af_pool_get_stats(pool, &st);
    CHECK(st.spawns > spawns);

    r = run_mode(pool, 4);
    CHECK_EQ_INT(r.cls, AF_RES_SIGNAL);
    CHECK_EQ_INT(r.signo, SIGFPE);
    CHECK(strstr(r.signature, "SIGFPE") != NULL);

    r = run_mode(pool, 2);
    CHECK_EQ_INT(r.cls, AF_RES_SIGNAL);
    CHECK_EQ_INT(r.signo, SIGABRT);

    r = run_mode(pool, 3);
    CHECK_EQ_INT(r.cls, AF_RES_WORKER_LOST);
    CHECK_EQ_INT(r.exit_status, 7);
    CHECK_STR(r.signature, "WORKER_LOST: exit 7");

    r = run_mode(pool, 6);
    CHECK_EQ_INT(r.cls, AF_RES_WORKER_LOST);
    CHECK_EQ_INT(r.signo, SIGKILL);
    CHECK_STR(r.signature, "WORKER_LOST: killed by SIGKILL");

    r = run_mode(pool, 1);
    CHECK_EQ_INT(r.cls, AF_RES_TIMEOUT);
    CHECK_STR(r.signature, "TIMEOUT");

    r = run_mode(pool, 5);
#if AF_UNDER_ASAN
    /* under ASan the address-space limit meets ASan's own allocator first: it reports the
     * failed allocation and exits 1, before the model can see an OOM */
    CHECK_EQ_INT(r.cls, AF_RES_WORKER_LOST);
    CHECK_EQ_INT(r.exit_status, 1);
#else
    if (r.cls != AF_RES_OOM)
        fprintf(stderr, "oom case gave %s: %s\n", r.signature, r.message);
    CHECK_EQ_INT(r.cls, AF_RES_OOM);
    CHECK(strstr(r.message, "alloc") != NULL);
#endif

    r = run_mode(pool, 9);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK_EQ_INT(r.outputs[0].sizes[0], 9);

    /* What an OK case printed is not charged to the next case: after mode 9 the worker's pipe
     * holds text, and the pool reads it before posting the exit (whose message comes from
     * stderr). After a quiet OK case the read is skipped. */
    r = run_mode(pool, 3);
    CHECK_EQ_INT(r.cls, AF_RES_WORKER_LOST);
    CHECK(strstr(r.message, "an OK run that prints") == NULL);
    /* The worker says its pipe is empty after it posts a result (off the tool's path), so a
     * case posted at once may find the word not yet written and read the pipe anyway: the
     * skip is a saving, never a must. The test waits before each case whose skip it counts. */
    run_mode(pool, 8);
    af_pool_get_stats(pool, &st);
    int64_t skipped = st.quiet_skips;
    usleep(50 * 1000);
    r = run_mode(pool, 8);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    af_pool_get_stats(pool, &st);
    CHECK(st.quiet_skips == skipped + 1);
    usleep(50 * 1000);
    af_pool_prefetch(pool); /* the hint before a case (as the mutator gives it) changes nothing */
    r = run_mode(pool, 9);  /* posted after a quiet case: skipped */
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    usleep(50 * 1000);
    af_pool_prefetch(pool);
    r = run_mode(pool, 8); /* the pipe held mode 9's line: read, not skipped */
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    af_pool_get_stats(pool, &st);
    CHECK(st.quiet_skips == skipped + 2);
    /* an OK run's answer, signed "OK" by the worker's runtime, comes on the mailbox's short
     * path, and reads back signed */
    int64_t plain = st.plain_results;
    r = run_mode(pool, 8);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK_STR(r.signature, "OK");
    af_pool_get_stats(pool, &st);
    CHECK(st.plain_results == plain + 1);

    /* the same crash five times: five fresh workers, one signature */
    for (int i = 0; i < 5; i++) {
        r = run_mode(pool, 7);
        CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    }
    af_pool_recycle(pool);
    af_pool_prefetch(pool); /* no active worker: ignored */
    af_pool_stop(pool);
}

static void test_refused(void)
{
    af_error err = {0};
    af_worker_opts o = {0};
    o.max_input_bytes = 16;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool)
        return;
    af_result r = run_mode(pool, 16); /* 64 bytes of input */
    CHECK_EQ_INT(r.cls, AF_RES_REFUSED);
    CHECK(strstr(r.message, "--max-input-bytes") != NULL);
    r = run_mode(pool, 17); /* outside the declared range */
    CHECK_EQ_INT(r.cls, AF_RES_REFUSED);
    af_pool_stats st;
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.cases, 0);
    af_pool_stop(pool);
}

/* Workers that die faster than a spare loads: the pool keeps more spares, up to the limit,
 * and every crash still comes back as itself. Without the zygote each worker loads libtorch
 * (a quarter second here), far longer than a crash takes, so the first spare taking over
 * is still loading. */
static void test_spares(void)
{
    af_error err = {0};
    af_worker_opts o = {0};
    o.timeout_s = 10.0;
    o.mem_limit_bytes = 512LL << 20;
    o.no_zygote = 1;
    o.warm_spare = 1;
    o.max_spares = 3;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool) {
        fprintf(stderr, "af_pool_start: %s\n", err.message);
        return;
    }
    for (int i = 0; i < 8; i++) {
        af_result r = run_mode(pool, 7);
        CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    }
    af_result r = run_mode(pool, 8);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    af_pool_stats st;
    af_pool_get_stats(pool, &st);
    CHECK(st.spares_peak >= 2);
    CHECK(st.spares_peak <= 3);
    CHECK(st.spawns >= 9); /* the first worker, one per crash */
    af_pool_stop(pool);

    /* one spare by default on the CPU, however fast workers die */
    o.max_spares = 0;
    pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool)
        return;
    for (int i = 0; i < 3; i++)
        run_mode(pool, 7);
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.spares_peak, 1);
    af_pool_stop(pool);

    /* from the first death (CUDA's default): no spare while cases run OK, one after a crash */
    o.no_zygote = 0;
    o.warm_spare = 2;
    pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool)
        return;
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(run_mode(pool, 8).cls, AF_RES_OK);
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.spares_peak, 0);
    CHECK_EQ_INT(st.spawns, 1);
    CHECK_STR(run_mode(pool, 7).signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    CHECK_EQ_INT(run_mode(pool, 8).cls, AF_RES_OK);
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.spares_peak, 1);
    CHECK_EQ_INT(st.spawns, 3); /* the first worker, its replacement, the spare */
    af_pool_stop(pool);
}

/* Warm-up: with spares, a loading worker first runs the first case that ran OK, so that
 * its first real case finds the model warm. A warm-up that dies is not a load failure: the
 * pool takes another worker, and after 3 such deaths stops warming up. */
static void test_warm_up(void)
{
    char flaky[] = "/tmp/af_test_flaky_XXXXXX";
    int fd = mkstemp(flaky);
    CHECK(fd >= 0);
    close(fd);
    unlink(flaky); /* absent: mode 8 is OK */
    setenv("AF_FAKE_FLAKY_FILE", flaky, 1);
    af_error err = {0};
    af_worker_opts o = {0};
    o.timeout_s = 10.0;
    o.mem_limit_bytes = 512LL << 20;
    o.warm_spare = 1;
    o.max_spares = 2;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool) {
        fprintf(stderr, "af_pool_start: %s\n", err.message);
        unsetenv("AF_FAKE_FLAKY_FILE");
        return;
    }
    CHECK_EQ_INT(run_mode(pool, 8).cls, AF_RES_OK); /* the warm-up case from now on */
    for (int i = 0; i < 4; i++)
        CHECK_STR(run_mode(pool, 7).signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    CHECK_EQ_INT(run_mode(pool, 8).cls, AF_RES_OK);
    af_pool_stats st;
    af_pool_get_stats(pool, &st);
    if (st.warm_ups < 2)
        fprintf(stderr, "warm_ups %lld, spawns %lld\n", (long long)st.warm_ups,
                (long long)st.spawns);
    CHECK(st.warm_ups >= 2); /* the workers spawned after the OK case, which took over */
    CHECK_EQ_INT(st.warm_deaths, 0);

    /* the warm-up case now crashes: every worker that loads dies in it, three times, then
     * the pool loads without it; no case is lost or misreported meanwhile */
    fd = open(flaky, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0);
    close(fd);
    for (int i = 0; i < 30 && st.warm_deaths < 3; i++) {
        af_result r = run_mode(pool, 7);
        CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
        af_pool_get_stats(pool, &st);
        if (st.warm_deaths < 3)
            usleep(20 * 1000); /* let the spares reach their warm-up */
    }
    CHECK_EQ_INT(st.warm_deaths, 3);
    for (int i = 0; i < 4; i++) /* warm-up is off now: workers load and crash in their case */
        CHECK_STR(run_mode(pool, 7).signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    int64_t ups = st.warm_ups;
    af_pool_get_stats(pool, &st);
    CHECK(st.warm_deaths <= 3 + 2); /* at most the spares that were warming when it stopped */
    CHECK(st.warm_ups == ups);
    unlink(flaky);
    CHECK_EQ_INT(run_mode(pool, 8).cls, AF_RES_OK);
    af_pool_stop(pool);

    /* off by request */
    o.warm_up = -1;
    pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (pool) {
        run_mode(pool, 8);
        for (int i = 0; i < 3; i++)
            run_mode(pool, 7);
        af_pool_get_stats(pool, &st);
        CHECK_EQ_INT(st.warm_ups, 0);
        af_pool_stop(pool);
    }
    unsetenv("AF_FAKE_FLAKY_FILE");
}

/* The pool's zygote: the one child of this process (workers are its children). */
static pid_t find_zygote(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)syscall(SYS_gettid));
    FILE *f = fopen(path, "r");
    long pid = -1;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = -1;
        fclose(f);
    }
    return (pid_t)pid;
}

static pid_t kill_later_pid;
static void *kill_later(void *arg)
{
    (void)arg;
    usleep(300 * 1000);
    kill(kill_later_pid, SIGKILL);
    return NULL;
}

/* The zygote killed from outside: between cases, the next case still runs (a new zygote);
 * during a case, the case's lost worker is not reported: the case runs again and gives
 * its own result (here: a hang, so a timeout). */
static void test_zygote_restart(void)
{
    af_error err = {0};
    af_worker_opts o = {0};
    o.timeout_s = 2.0;
    o.mem_limit_bytes = 512LL << 20;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (!pool)
        return;
    pid_t z = find_zygote();
    CHECK(z > 0);
    if (z <= 0) {
        af_pool_stop(pool);
        return;
    }
    kill(z, SIGKILL);
    usleep(100 * 1000);
    af_result r = run_mode(pool, 8);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    af_pool_stats st;
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.zygote_restarts, 1);
    CHECK_EQ_INT(st.cases_rerun, 1); /* its worker died with it, before taking the case */
    pid_t z2 = find_zygote();
    CHECK(z2 > 0 && z2 != z);

    /* mid-case: a hanging case; the zygote dies 0.3 s in and takes the worker along */
    kill_later_pid = z2;
    pthread_t t;
    pthread_create(&t, NULL, kill_later, NULL);
    r = run_mode(pool, 1);
    pthread_join(t, NULL);
    CHECK_EQ_INT(r.cls, AF_RES_TIMEOUT);
    af_pool_get_stats(pool, &st);
    CHECK_EQ_INT(st.zygote_restarts, 2);
    CHECK_EQ_INT(st.cases_rerun, 2);
    r = run_mode(pool, 7);
    CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun");
    af_pool_stop(pool);
}

/* Exit hooks of the tool's process do not run in workers: libFuzzer's, registered before
 * the pool starts, turns any exit() during a fuzz callback into _Exit(77). A model's own
 * exit(7) must still come back as exit 7. */
static volatile int in_callback;
static void tool_exit_hook(void)
{
    if (in_callback)
        _exit(77);
}

static void test_tool_exit_hook(void)
{
    atexit(tool_exit_hook);
    in_callback = 1;
    af_error err = {0};
    af_worker_opts o = {0};
    o.timeout_s = 2.0;
    af_pool *pool = af_pool_start(pkg, &spec, &o, &err);
    CHECK(pool != NULL);
    if (pool) {
        af_result r = run_mode(pool, 3);
        CHECK_EQ_INT(r.cls, AF_RES_WORKER_LOST);
        CHECK_EQ_INT(r.exit_status, 7);
        af_pool_stop(pool);
    }
    in_callback = 0;
}

int main(void)
{
    char path[] = "/tmp/af_test_worker_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK_EQ_INT(pm_fake_package(path, AF_FAKE_MODEL_PATH, PM_FAKE_META("")), 0);
    af_error err = {0};
    pkg = af_package_open(path, NULL, &err);
    if (!pkg) {
        fprintf(stderr, "open: %s\n", err.message);
        return 1;
    }
    CHECK_EQ_INT(af_package_spec(pkg, NULL, NULL, &spec, &err), 0);
    CHECK_EQ_INT(spec.source, AF_SPEC_EMBEDDED);
    test_classes(0, 0);
    test_classes(0, 1);
    test_classes(1, 0);
    test_refused();
    test_spares();
    test_zygote_restart();
    test_warm_up();
    test_tool_exit_hook();
    af_package_close(pkg);
    unlink(path);
    TEST_MAIN_END();
}
