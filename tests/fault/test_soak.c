/* test_soak.c — fault.soak: thousands of cases through the worker pool against the
 * fault-injection model (fake_model.c), with workers SIGKILLed from outside while it runs.
 *
 * The case's mode (input 0's dim 0) says what the model does, so each result can be held to
 * what it must be: 7 SIGNAL SIGSEGV, 4 SIGNAL SIGFPE, 2 SIGNAL SIGABRT, 3 WORKER_LOST exit 7,
 * 6 WORKER_LOST SIGKILL (the model kills itself), 1 TIMEOUT, 5 OOM, anything else OK. A killer
 * thread sends SIGKILL to a random child of the zygote (the active worker, a spare, or one
 * still loading) every few tens of milliseconds, in one-second bursts with two-second rests
 * between them; it logs when each kill was sent. A case that comes
 * back WORKER_LOST / SIGKILL although its mode says otherwise is legitimate only when a kill
 * was sent while it was in flight (counted apart); otherwise it is misclassified. An
 * af_pool_run that fails (the pool cannot go on after a kill) is counted as a harness
 * failure and the pool is restarted, so that one bug does not hide the others.
 *
 * Every non-OK result also goes through the fuzzer's crash store (fuzz/store.c), as aoti-fuzz
 * would file it; at the end each signature seen must have its crash file and sidecar, both
 * readable, the sidecar's count equal to the times it was seen, and no temp file left.
 *
 * Phases alternate warm spares on and off. Knobs (environment): AF_SOAK_EXECS (5000),
 * AF_SOAK_SEED (time), AF_SOAK_KILL_MS (mean gap between kills, 50). Asserts misclassified,
 * lost artifacts, harness failures and signature drift are all 0. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../fuzz/featmap.c"
#include "../../fuzz/store.c"

#include "af_pkgmaker.h"
#include "af_test.h"
#include "aotif/package.h"
#include "aotif/worker.h"

enum {
    M_OK = 8,
    M_HANG = 1,
    M_ABORT = 2,
    M_EXIT = 3,
    M_FPE = 4,
    M_OOM = 5,
    M_SELFKILL = 6,
    M_SEGV = 7,
    N_MODES = 17
};

static double now_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the killer -------------------------------------------------------------------------- */

#define MAX_KILLS 65536
typedef struct kill_ev {
    double t0, t1; /* just before kill() and just after it returned */
    pid_t pid;
} kill_ev;

static kill_ev kills[MAX_KILLS];
static atomic_int n_kills;
static atomic_int killer_stop;
static int killer_pause; /* the pool is being stopped or started: no kills (under kill_lock) */
static pthread_mutex_t kill_lock = PTHREAD_MUTEX_INITIALIZER;
static int kill_gap_ms = 50;

/* Children of `pid`, from /proc/PID/task/PID/children, else by scanning /proc for ppid. */
static int children_of(pid_t pid, pid_t *out, int cap)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "re");
    if (f) {
        int c;
        while (n < cap && fscanf(f, "%d", &c) == 1)
            out[n++] = c;
        fclose(f);
        return n;
    }
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *de;
    while (n < cap && (de = readdir(d)) != NULL) {
        int p = atoi(de->d_name);
        if (p <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", p);
        FILE *s = fopen(path, "re");
        if (!s)
            continue;
        char buf[512];
        size_t k = fread(buf, 1, sizeof buf - 1, s);
        fclose(s);
        buf[k] = 0;
        char *rp = strrchr(buf, ')'); /* comm may hold spaces */
        int ppid;
        char st;
        if (rp && sscanf(rp + 1, " %c %d", &st, &ppid) == 2 && ppid == pid)
            out[n++] = p;
    }
    closedir(d);
    return n;
}

/* SIGKILL `pid` only if it is still a child of `parent`: a pidfd pins the process, so a
 * pid reaped and reused between the check and the kill cannot be hit. */
static int kill_child(pid_t parent, pid_t pid)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return -1;
    pid_t kids[64];
    int n = children_of(parent, kids, 64), still = 0;
    for (int i = 0; i < n; i++)
        still |= kids[i] == pid;
    int rc = still ? (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) : -1;
    close(fd);
    return rc;
#else
    return kill(pid, SIGKILL);
#endif
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void *killer_main(void *arg)
{
    unsigned seed = *(unsigned *)arg;
    pid_t self = getpid();
    double epoch = now_mono_s();
    while (!atomic_load(&killer_stop)) {
        double gap = kill_gap_ms * (0.2 + 1.6 * (double)rand_r(&seed) / RAND_MAX);
        for (; gap > 0 && !atomic_load(&killer_stop); gap -= 10)
            sleep_ms(gap < 10 ? gap : 10);
        pthread_mutex_lock(&kill_lock);
        /* kill for a second, rest for two: with a kill every few tens of ms no hang
         * (0.8 s) or exit (libtorch's exit handlers) would ever finish on its own */
        if (killer_pause || fmod(now_mono_s() - epoch, 3.0) >= 1.0) {
            pthread_mutex_unlock(&kill_lock);
            continue;
        }
        pid_t top[16], kids[64];
        int nt = children_of(self, top, 16), nk = 0;
        for (int i = 0; i < nt && nk < 64; i++) /* the zygote; its children are the workers */
            nk += children_of(top[i], kids + nk, 64 - nk);
        if (nk == 0 || nt == 0) {
            pthread_mutex_unlock(&kill_lock);
            continue;
        }
        pid_t victim = kids[rand_r(&seed) % (unsigned)nk];
        pid_t parent = top[0];
        for (int i = 0; i < nt; i++) { /* the victim's parent */
            pid_t k2[64];
            int n2 = children_of(top[i], k2, 64);
            for (int j = 0; j < n2; j++)
                if (k2[j] == victim)
                    parent = top[i];
        }
        int i = atomic_load(&n_kills);
        if (i >= MAX_KILLS) {
            pthread_mutex_unlock(&kill_lock);
            break;
        }
        double t0 = now_mono_s();
        if (kill_child(parent, victim) == 0) {
            kills[i].t0 = t0;
            kills[i].t1 = now_mono_s();
            kills[i].pid = victim;
            atomic_store(&n_kills, i + 1);
        }
        pthread_mutex_unlock(&kill_lock);
    }
    return NULL;
}

static void set_pause(int on)
{
    pthread_mutex_lock(&kill_lock);
    killer_pause = on;
    pthread_mutex_unlock(&kill_lock);
}

/* ---- the soak ---------------------------------------------------------------------------- */

static af_package *pkg;
static af_spec spec;

typedef struct tally {
    int64_t execs, by_mode[N_MODES], ok_by_mode[N_MODES], killed_by_mode[N_MODES];
    double secs_by_mode[N_MODES], max_by_mode[N_MODES];
    int64_t killed_in_flight; /* WORKER_LOST/SIGKILL with a kill sent during the case */
    int64_t lost_before_post; /* WORKER_LOST/SIGKILL, the kill sent before the case was */
    int64_t misclassified;    /* everything else that is not the mode's class */
    int64_t harness_failures; /* af_pool_run returned -1 */
    int64_t pool_restarts;
    int64_t signature_drift; /* a mode's class right but its signature not the usual one */
    int64_t store_errors;
    char first_mis[512];
    char first_harness[512];
} tally;

static const char *mode_name(int m)
{
    switch (m) {
    case M_HANG:
        return "hang";
    case M_ABORT:
        return "abort";
    case M_EXIT:
        return "exit7";
    case M_FPE:
        return "sigfpe";
    case M_OOM:
        return "oom";
    case M_SELFKILL:
        return "selfkill";
    case M_SEGV:
        return "sigsegv";
    default:
        return "ok";
    }
}

/* Does r have the class mode m must give? And the one signature it must have. */
static int expected(int m, const af_result *r, const char **want_sig)
{
    *want_sig = NULL;
    switch (m) {
    case M_HANG:
        *want_sig = "TIMEOUT";
        return r->cls == AF_RES_TIMEOUT;
    case M_ABORT:
        return r->cls == AF_RES_SIGNAL && r->signo == SIGABRT;
    case M_EXIT:
        *want_sig = "WORKER_LOST: exit 7";
        return r->cls == AF_RES_WORKER_LOST && r->exit_status == 7;
    case M_FPE:
        *want_sig = "SIGNAL: SIGFPE @ AOTInductorModelContainerRun";
        return r->cls == AF_RES_SIGNAL && r->signo == SIGFPE;
    case M_OOM:
        if (AF_UNDER_ASAN) /* ASan's allocator meets the limit first and exits 1 */
            return r->cls == AF_RES_WORKER_LOST && r->exit_status == 1;
        return r->cls == AF_RES_OOM;
    case M_SELFKILL:
        *want_sig = "WORKER_LOST: killed by SIGKILL";
        return r->cls == AF_RES_WORKER_LOST && r->signo == SIGKILL;
    case M_SEGV:
        *want_sig = "SIGNAL: SIGSEGV @ AOTInductorModelContainerRun";
        return r->cls == AF_RES_SIGNAL && r->signo == SIGSEGV;
    default:
        return r->cls == AF_RES_OK && r->n_outputs == 1 && r->outputs[0].sizes[0] == m;
    }
}

/* A mode drawn from the mix: mostly fast faults and OK cases, a few hangs (each costs the
 * timeout), exits (each costs libtorch's exit handlers) and OOMs. */
static int pick_mode(unsigned *seed)
{
    int r = (int)(rand_r(seed) % 1000);
    if (r < 10)
        return M_HANG; /* 1%: each costs the timeout */
    if (r < 45)
        return M_OOM; /* 3.5% */
    if (r < 115)
        return M_SEGV; /* 7% */
    if (r < 175)
        return M_FPE; /* 6% */
    if (r < 235)
        return M_ABORT; /* 6% */
    if (r < 255)
        return M_EXIT; /* 2%: exit() runs libtorch's exit handlers, ~150 ms */
    if (r < 285)
        return M_SELFKILL; /* 3% */
    if (r < 305)
        return 0; /* 2%: an empty output */
    return 8 + (int)(rand_r(seed) % 9);
}

/* Per signature (non-OK): how often this run saw it, for the artifact check. */
#define MAX_SIGS 64
static struct {
    char sig[256];
    int64_t seen;
} sigs[MAX_SIGS];
static int n_sigs;

static void note_sig(const char *s)
{
    for (int i = 0; i < n_sigs; i++)
        if (strcmp(sigs[i].sig, s) == 0) {
            sigs[i].seen++;
            return;
        }
    if (n_sigs < MAX_SIGS) {
        snprintf(sigs[n_sigs].sig, sizeof sigs[n_sigs].sig, "%s", s);
        sigs[n_sigs++].seen = 1;
    }
}

/* What a mode gave when it gave the wrong class: (mode, signature) -> count, for the report. */
static struct {
    int mode;
    char sig[256];
    int64_t n;
} wrong[MAX_SIGS];
static int n_wrong;

static void note_wrong(int m, const af_result *r)
{
    for (int i = 0; i < n_wrong; i++)
        if (wrong[i].mode == m && strcmp(wrong[i].sig, r->signature) == 0) {
            wrong[i].n++;
            return;
        }
    if (n_wrong < MAX_SIGS) {
        wrong[n_wrong].mode = m;
        snprintf(wrong[n_wrong].sig, sizeof wrong[n_wrong].sig, "%s", r->signature);
        wrong[n_wrong++].n = 1;
    }
}

static char torch_lib[4096];

static af_pool *start_pool(int warm_spare)
{
    af_error err = {0};
    af_worker_opts o = {0};
    /* short, so that hangs are cheap, but well above what exit() costs a worker: libtorch's
     * exit handlers take 150-250 ms, and an exit slower than the timeout is (rightly) a
     * TIMEOUT */
    o.timeout_s = 0.8;
    o.mem_limit_bytes = 192LL << 20; /* the fake model's first 256 MiB tensor is over it */
    o.warm_spare = warm_spare ? 1 : -1;
    o.torch_lib = torch_lib;
    af_pool *p = af_pool_start(pkg, &spec, &o, &err);
    if (!p)
        fprintf(stderr, "af_pool_start: %s\n", err.message);
    return p;
}

static void soak(af_store *store, int64_t n_execs, unsigned seed, tally *t)
{
    static af_crash cr; /* large: keep it off the stack */
    int phase = 0;
    set_pause(1);
    af_pool *pool = start_pool(1);
    set_pause(0);
    if (!pool) {
        t->harness_failures++;
        return;
    }
    for (int64_t i = 0; i < n_execs; i++) {
        if (i > 0 && i % 1000 == 0) { /* a new phase: spares on / off in turn */
            set_pause(1);
            af_pool_stop(pool);
            phase ^= 1;
            pool = start_pool(!phase);
            set_pause(0);
            if (!pool) {
                t->harness_failures++;
                return;
            }
        }
        int m = pick_mode(&seed);
        af_case c;
        af_result r;
        af_error err = {0};
        af_case_init(&c, &spec);
        c.values[0] = m;
        int k_before = atomic_load(&n_kills);
        double t_start = now_mono_s();
        int rc = af_pool_run(pool, &c, &r, &err);
        double t_end = now_mono_s();
        int k_after = atomic_load(&n_kills);
        t->execs++;
        t->by_mode[m]++;
        t->secs_by_mode[m] += t_end - t_start;
        if (t_end - t_start > t->max_by_mode[m])
            t->max_by_mode[m] = t_end - t_start;
        if (rc != 0) {
            if (!t->harness_failures++)
                snprintf(t->first_harness, sizeof t->first_harness, "exec %lld (mode %s): %s",
                         (long long)i, mode_name(m), err.message);
            set_pause(1);
            af_pool_stop(pool);
            pool = start_pool(!phase);
            set_pause(0);
            t->pool_restarts++;
            if (!pool)
                return;
            continue;
        }
        const char *want_sig;
        if (expected(m, &r, &want_sig)) {
            t->ok_by_mode[m]++;
            if (want_sig && strcmp(r.signature, want_sig) != 0) {
                if (!t->signature_drift++)
                    fprintf(stderr, "mode %s: signature \"%s\", want \"%s\"\n", mode_name(m),
                            r.signature, want_sig);
            }
        } else if (r.cls == AF_RES_WORKER_LOST && r.signo == SIGKILL) {
            /* the killer logs a kill under kill_lock right after sending it: taking the
             * lock here waits for a kill sent before t_end but not yet logged */
            pthread_mutex_lock(&kill_lock);
            k_after = atomic_load(&n_kills);
            pthread_mutex_unlock(&kill_lock);
            /* legitimate when a kill was sent while this case ran; one that had returned
             * before the case was posted killed a worker that then got blamed for it. The
             * grace: kill() returns once SIGKILL is queued, and a worker running on another
             * CPU goes on for the microseconds until the IPI lands (long enough to take a
             * case it was spinning for) */
            const double grace = 1e-3;
            int in_flight = 0, before = 0;
            for (int k = k_before > 0 ? k_before - 1 : 0; k < k_after; k++) {
                if (kills[k].t0 <= t_end && kills[k].t1 >= t_start - grace)
                    in_flight = 1;
                else if (kills[k].t1 < t_start - grace)
                    before = 1;
            }
            if (in_flight) {
                t->killed_in_flight++;
                t->killed_by_mode[m]++;
            } else {
                t->lost_before_post++;
                t->misclassified++;
                double gap = k_after > 0 ? t_start - kills[k_after - 1].t1 : -1;
                if (!t->first_mis[0])
                    snprintf(t->first_mis, sizeof t->first_mis,
                             "exec %lld mode %s -> \"%s\" (no kill during the case%s, the "
                             "last one %.1f ms before it)",
                             (long long)i, mode_name(m), r.signature,
                             before ? "; one just before it" : "", gap * 1e3);
            }
        } else {
            note_wrong(m, &r);
            if (!t->misclassified++ || !t->first_mis[0])
                snprintf(t->first_mis, sizeof t->first_mis, "exec %lld mode %s -> %s \"%s\" %s",
                         (long long)i, mode_name(m), af_class_name(r.cls), r.signature, r.message);
        }
        if (r.cls != AF_RES_OK) {
            note_sig(r.signature);
            af_crash_from_run(&cr, pkg, &spec, &c, &r, NULL);
            if (af_store_add(store, &cr, &err) < 0) {
                if (!t->store_errors++)
                    fprintf(stderr, "af_store_add: %s\n", err.message);
            }
            if (af_store_flush(store, 0, &err) < 0 && !t->store_errors++)
                fprintf(stderr, "af_store_flush: %s\n", err.message);
        }
    }
    set_pause(1);
    af_pool_stop(pool);
}

/* ---- probes: one external kill at a chosen moment, deterministic --------------------------- */

/* The workers now (children of our one child, the zygote), oldest first (pids ascend). */
static int workers_now(pid_t *out, int cap)
{
    pid_t top[4];
    int nt = children_of(getpid(), top, 4);
    if (nt != 1)
        return 0;
    int n = children_of(top[0], out, cap);
    for (int i = 1; i < n; i++) /* insertion sort: a handful */
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            pid_t x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

static int probe_run(af_pool *pool, int m, const char *probe, int *bad)
{
    af_case c;
    af_result r;
    af_error err = {0};
    const char *want;
    af_case_init(&c, &spec);
    c.values[0] = m;
    if (af_pool_run(pool, &c, &r, &err) != 0) {
        printf("  probe %s: mode %s: af_pool_run failed: %s\n", probe, mode_name(m), err.message);
        (*bad)++;
        return -1;
    }
    if (!expected(m, &r, &want)) {
        printf("  probe %s: mode %s gave \"%s\"\n", probe, mode_name(m), r.signature);
        (*bad)++;
        return 1;
    }
    return 0;
}

/* Returns the number of probes that failed. */
static int probes(void)
{
    int failed = 0;
    pid_t w[16];
    printf("probes (one external SIGKILL each):\n");

    /* idle active worker killed between two cases: the next case must run (fresh worker) */
    {
        int bad = 0;
        af_pool *p = start_pool(0);
        if (!p)
            return 1;
        probe_run(p, 8, "idle-active", &bad);
        int n = workers_now(w, 16);
        if (n == 1)
            kill(w[0], SIGKILL);
        sleep_ms(50);
        probe_run(p, 9, "idle-active", &bad);
        af_pool_stop(p);
        printf("  %-4s idle active worker killed, next case runs (%d worker(s) seen)\n",
               bad ? "FAIL" : "ok", n);
        failed += bad > 0;
    }
    /* a loaded warm spare killed: the crash that makes it take over, then an OK case */
    {
        int bad = 0;
        af_pool *p = start_pool(1);
        if (!p)
            return failed + 1;
        probe_run(p, 8, "loaded-spare", &bad);
        sleep_ms(500); /* the spare has loaded and said HELLO */
        int n = workers_now(w, 16);
        if (n == 2)
            kill(w[1], SIGKILL);
        sleep_ms(50);
        probe_run(p, 7, "loaded-spare", &bad);
        probe_run(p, 9, "loaded-spare", &bad);
        af_pool_stop(p);
        printf("  %-4s loaded spare killed, then a crash and an OK case (%d worker(s) seen)\n",
               bad ? "FAIL" : "ok", n);
        failed += bad > 0;
    }
    /* a spare killed while it loads (the fake model's container takes 300 ms to create):
     * af_pool_run must not give up */
    {
        int bad = 0;
        setenv("AF_FAKE_CREATE_MS", "300", 1);
        af_pool *p = start_pool(1);
        unsetenv("AF_FAKE_CREATE_MS");
        if (!p)
            return failed + 1;
        probe_run(p, 8, "loading-spare", &bad); /* the spare is still loading */
        int n = workers_now(w, 16);
        if (n == 2)
            kill(w[1], SIGKILL);
        probe_run(p, 7, "loading-spare", &bad); /* the active dies */
        probe_run(p, 9, "loading-spare", &bad); /* the spare would take over */
        af_pool_stop(p);
        printf(
            "  %-4s spare killed while loading, then a crash and an OK case (%d worker(s) seen)\n",
            bad ? "FAIL" : "ok", n);
        failed += bad > 0;
    }
    fflush(stdout);
    return failed;
}

/* Every signature seen has a readable crash file and sidecar with the full count; no temp
 * files. Returns the number of lost artifacts (missing files, or counts short). */
static int64_t check_artifacts(const char *dir, af_store *store, int64_t *n_files, int64_t *n_tmp)
{
    int64_t lost = 0;
    af_error err = {0};
    if (af_store_flush(store, 1, &err) < 0)
        fprintf(stderr, "final flush: %s\n", err.message);
    /* before the reopen below, which would remove them */
    *n_tmp = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".tmp") ||
            (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))) {
            fprintf(stderr, "temp file left: %s/%s\n", dir, de->d_name);
            (*n_tmp)++;
        }
    if (d)
        closedir(d);
    /* a fresh store reads the dir back as the next aoti-fuzz run would */
    af_store *back = af_store_open(dir, &err);
    if (!back) {
        fprintf(stderr, "reopen %s: %s\n", dir, err.message);
        return n_sigs ? n_sigs : 1;
    }
    if (af_store_n_skipped(back)) {
        fprintf(stderr, "%d unreadable crash file(s): %s\n", af_store_n_skipped(back),
                af_store_skipped_msg(back));
        lost += af_store_n_skipped(back);
    }
    static af_crash sc;
    for (int i = 0; i < n_sigs; i++) {
        const af_store_entry *e = af_store_find(back, sigs[i].sig);
        if (!e) {
            fprintf(stderr, "lost: no crash file for \"%s\" (seen %lld times)\n", sigs[i].sig,
                    (long long)sigs[i].seen);
            lost++;
            continue;
        }
        char side[PATH_MAX];
        af_crash_sidecar_path(e->path, side, sizeof side);
        if (af_crash_read_sidecar(side, &sc, &err) < 0) {
            fprintf(stderr, "lost: sidecar %s: %s\n", side, err.message);
            lost++;
        } else if (sc.count != sigs[i].seen) {
            fprintf(stderr, "lost: \"%s\": sidecar count %lld, seen %lld\n", sigs[i].sig,
                    (long long)sc.count, (long long)sigs[i].seen);
            lost++;
        }
    }
    *n_files = af_store_size(back);
    if (af_store_n_swept(back) || af_store_n_repaired(back)) { /* nothing died mid-write */
        fprintf(stderr, "reopen swept %d temp file(s), wrote %d sidecar(s)\n",
                af_store_n_swept(back), af_store_n_repaired(back));
        lost++;
    }
    af_store_close(back);
    return lost;
}

/* What a kill -9 in the middle of a store write leaves (a temp file before its rename, a
 * crash file whose sidecar was not yet written), repaired by the next open: the temp file
 * removed, the sidecar written with the crash file's count. Returns the failures. */
static int check_store_repair(const char *dir)
{
    int bad = 0;
    af_error err = {0};
    af_store *st = af_store_open(dir, &err);
    const af_store_entry *e = st ? af_store_entry_at(st, 0) : NULL;
    if (!e) {
        fprintf(stderr, "repair: %s: no crash file to work on\n", dir);
        af_store_close(st);
        return 1;
    }
    char side[PATH_MAX], tmp[PATH_MAX], sig[256];
    af_crash_sidecar_path(e->path, side, sizeof side);
    /* the sidecar a dead writer never wrote holds what its crash file holds (count 1) */
    static af_crash bin;
    if (af_crash_read(e->path, &bin, &err) != 0) {
        fprintf(stderr, "repair: %s\n", err.message);
        af_store_close(st);
        return 1;
    }
    int64_t count = bin.count;
    snprintf(sig, sizeof sig, "%s", e->crash.signature);
    const char *base = strrchr(side, '/') + 1;
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp-Dead01", dir, base);
    af_store_close(st);
    FILE *f = fopen(tmp, "we");
    if (f) {
        fputs("{\"version\": 1, \"sig", f); /* half a sidecar */
        fclose(f);
    }
    unlink(side);
    st = af_store_open(dir, &err);
    if (!st) {
        fprintf(stderr, "repair: reopen: %s\n", err.message);
        return 1;
    }
    static af_crash sc;
    struct stat sb;
    bad += af_store_n_swept(st) != 1 || stat(tmp, &sb) == 0;
    bad += af_store_n_repaired(st) != 1;
    bad += af_crash_read_sidecar(side, &sc, &err) != 0 || sc.count != count ||
           strcmp(sc.signature, sig) != 0;
    printf("store repair at open: swept %d temp file(s), wrote %d sidecar(s) (count %lld)%s\n",
           af_store_n_swept(st), af_store_n_repaired(st), (long long)sc.count, bad ? " FAIL" : "");
    af_store_close(st);
    return bad;
}

static void rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[PATH_MAX];
    while (d && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int64_t env_int(const char *name, int64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 10) : dflt;
}

int main(void)
{
    int64_t n_execs = env_int("AF_SOAK_EXECS", 5000);
    unsigned seed = (unsigned)env_int("AF_SOAK_SEED", (int64_t)time(NULL));
    kill_gap_ms = (int)env_int("AF_SOAK_KILL_MS", 50);
    printf("fault.soak: %lld execs, seed %u (AF_SOAK_SEED), a kill every ~%d ms\n",
           (long long)n_execs, seed, kill_gap_ms);
    fflush(stdout);

    /* found once (python3 -c 'import torch' costs seconds), for every pool started here;
     * no libtorch: nothing to soak (exit 77, a skip) */
    af_error e2 = {0};
    if (af_find_torch_lib(NULL, torch_lib, sizeof torch_lib, &e2) != 0) {
        printf("skip: %s\n", e2.message);
        return 77;
    }
    char root[] = "/tmp/af_soak_XXXXXX";
    if (!mkdtemp(root))
        return 1;
    char path[PATH_MAX], art[PATH_MAX];
    snprintf(path, sizeof path, "%s/fault.pt2", root);
    snprintf(art, sizeof art, "%s/crashes", root);
    CHECK_EQ_INT(pm_fake_package(path, AF_FAKE_MODEL_PATH, PM_FAKE_META("")), 0);
    af_error err = {0};
    pkg = af_package_open(path, NULL, &err);
    if (!pkg) {
        fprintf(stderr, "open: %s\n", err.message);
        return 1;
    }
    CHECK_EQ_INT(af_package_spec(pkg, NULL, NULL, &spec, &err), 0);
    af_store *store = af_store_open(art, &err);
    if (!store) {
        fprintf(stderr, "store: %s\n", err.message);
        return 1;
    }

    int probes_failed = probes();
    static tally t;
    double t0 = now_mono_s();
    pthread_t killer;
    unsigned kseed = seed ^ 0x9e3779b9u;
    set_pause(1);
    pthread_create(&killer, NULL, killer_main, &kseed);
    soak(store, n_execs, seed, &t);
    atomic_store(&killer_stop, 1);
    pthread_join(killer, NULL);
    double wall = now_mono_s() - t0;

    int64_t n_files = 0, n_tmp = 0;
    int64_t lost = check_artifacts(art, store, &n_files, &n_tmp);
    af_store_close(store);
    int repair_bad = check_store_repair(art);

    int64_t faults = 0;
    printf("execs %lld in %.1f s, external SIGKILLs sent %d\n", (long long)t.execs, wall,
           atomic_load(&n_kills));
    printf("per mode: ran / right class / killed in flight, mean and max ms per case\n");
    static const int order[] = {M_SEGV, M_FPE, M_ABORT, M_EXIT, M_SELFKILL, M_HANG, M_OOM};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        int m = order[i];
        printf("  %-9s %6lld / %6lld / %5lld  %7.2f %7.1f ms\n", mode_name(m),
               (long long)t.by_mode[m], (long long)t.ok_by_mode[m], (long long)t.killed_by_mode[m],
               t.by_mode[m] ? 1e3 * t.secs_by_mode[m] / (double)t.by_mode[m] : 0.0,
               1e3 * t.max_by_mode[m]);
        faults += t.ok_by_mode[m];
    }
    int64_t ok_ran = 0, ok_right = 0, ok_killed = 0;
    double ok_secs = 0, ok_max = 0;
    for (int m = 0; m < N_MODES; m++)
        if (!strcmp(mode_name(m), "ok")) {
            ok_ran += t.by_mode[m];
            ok_right += t.ok_by_mode[m];
            ok_killed += t.killed_by_mode[m];
            ok_secs += t.secs_by_mode[m];
            if (t.max_by_mode[m] > ok_max)
                ok_max = t.max_by_mode[m];
        }
    printf("  %-9s %6lld / %6lld / %5lld  %7.2f %7.1f ms\n", "ok", (long long)ok_ran,
           (long long)ok_right, (long long)ok_killed, ok_ran ? 1e3 * ok_secs / (double)ok_ran : 0.0,
           1e3 * ok_max);
    printf("faults survived %lld; killed in flight (WORKER_LOST SIGKILL, legitimate) %lld\n",
           (long long)faults, (long long)t.killed_in_flight);
    printf("misclassified %lld (of which lost before the case was posted %lld)\n",
           (long long)t.misclassified, (long long)t.lost_before_post);
    if (t.first_mis[0])
        printf("  first: %s\n", t.first_mis);
    for (int i = 0; i < n_wrong; i++)
        printf("  mode %s gave \"%s\" %lld times\n", mode_name(wrong[i].mode), wrong[i].sig,
               (long long)wrong[i].n);
    printf("harness failures %lld (pool restarted %lld times)\n", (long long)t.harness_failures,
           (long long)t.pool_restarts);
    if (t.first_harness[0])
        printf("  first: %s\n", t.first_harness);
    printf("signature drift %lld, store errors %lld\n", (long long)t.signature_drift,
           (long long)t.store_errors);
    printf("artifacts: %d signatures seen, %lld crash files, lost %lld, temp files %lld\n", n_sigs,
           (long long)n_files, (long long)lost, (long long)n_tmp);
    fflush(stdout);

    CHECK_EQ_INT(probes_failed, 0);
    CHECK(t.execs >= n_execs);
    CHECK(faults > 0);
    CHECK(atomic_load(&n_kills) > 0);
    CHECK_EQ_INT(t.misclassified, 0);
    CHECK_EQ_INT(t.harness_failures, 0);
    CHECK_EQ_INT(t.signature_drift, 0);
    CHECK_EQ_INT(t.store_errors, 0);
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT(n_tmp, 0);
    CHECK_EQ_INT(n_files, n_sigs);
    CHECK_EQ_INT(repair_bad, 0);

    af_package_close(pkg);
    unlink(path);
    rm_rf(art);
    rmdir(root);
    TEST_MAIN_END();
}
