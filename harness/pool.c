/* pool.c — the pool, in the tool's process: af_pool_* of aotif/worker.h.
 *
 * The pool keeps one active worker and, with warm_spare, spares loaded and waiting (as many
 * as restarts need lately, up to max_spares); it posts each case to the active worker
 * through its mailbox (ipc.c) and turns what comes back, or what the worker's death says,
 * into a result (outcome.c), naming a crash's frames (symbolize.c). After a fatal result
 * the worker is reaped and the next spare takes over. A zygote that died is started again
 * (zygote.c), and a case that never ran (its worker died before taking it, or the zygote
 * took it along) is run again rather than reported. A device fault can be re-run once with
 * blocking launches (triage), which may name the kernel. */
#include "aotif/worker.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "outcome.h"
#include "zygote.h"

/* What the worker wrote on stderr so far, into pool->errbuf (the tail; copied to our stderr
 * with opts.verbose). Its pipe is non-blocking. */
static void drain_stderr(af_pool *pool, worker *w)
{
    if (w->errfd < 0)
        return;
    char buf[4096];
    for (;;) {
        ssize_t n = read(w->errfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (pool->opts.verbose)
            (void)af_write_all(2, buf, (size_t)n);   /* best effort: our own stderr */
        if (pool->errlen + (size_t)n > ERRBUF_MAX) { /* keep the tail */
            size_t drop = pool->errlen + (size_t)n - ERRBUF_MAX;
            memmove(pool->errbuf, pool->errbuf + drop, pool->errlen - drop);
            pool->errlen -= drop;
        }
        memcpy(pool->errbuf + pool->errlen, buf, (size_t)n);
        pool->errlen += (size_t)n;
    }
    pool->errbuf[pool->errlen] = '\0';
}

static int spawn_request(af_pool *pool, worker *w, af_error *err)
{
    return af_zygote_spawn(pool, w, 0, err);
}

static void kill_worker(af_pool *pool, worker *w)
{
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        drain_stderr(pool, w);
        af_zygote_worker_status(pool, w->pid, 2.0);
    }
    af_worker_close(w);
}

/* A device assert whose text (the worker's stderr: "Assertion `...` failed") has not come
 * in with the report. The worker writes it before the report and flushes its stdio before
 * it posts a sticky fault, so this is the rare case; then the text is waited for until the
 * worker is gone, as the signature names it. */
static int words_to_come(const af_pool *pool, const af_result *r)
{
    return r->cls == AF_RES_DEVICE_FAULT && strstr(r->cuda_error, "ASSERT") &&
           !strstr(pool->errbuf, "Assertion `");
}

/* A worker that reported its own fault: killed, and left to the zygote to reap. Its exit
 * status says nothing the report did not, and on CUDA the wait for it is the driver tearing
 * the context down (about 50 ms on an H200), which the next case need not wait for. The
 * zygote's EXITED message for it lands in the bounded list of exits nobody asked for. */
static void abandon_worker(af_pool *pool, worker *w)
{
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
    }
    af_worker_close(w);
}

static double load_timeout(const af_pool *pool)
{
    double t = pool->opts.load_timeout_s > 0 ? pool->opts.load_timeout_s : pool->opts.timeout_s;
    return t < AF_LOAD_TIMEOUT_MIN_S && pool->opts.load_timeout_s <= 0 ? AF_LOAD_TIMEOUT_MIN_S : t;
}

/* What wait_ready says besides 0 (ready): every failure sets err; the callers that can
 * take another worker tell these apart by the code, never by the message. */
enum { READY_FAILED = -1, READY_DIED_LOADING = -2, READY_DIED_WARMING = -3 };

/* Wait for the worker's HELLO, within the load timeout counted from its spawn request.
 * Load failures become errors with the worker's stderr. A model that never loaded in
 * this pool is bad input (the package cannot be run at all); a load that fails later,
 * after others worked, is the machine's trouble. */
static int wait_ready(af_pool *pool, worker *w, af_error *err)
{
    if (w->ready)
        return 0;
    msg_hello h;
    ssize_t n = -1;
    double left = load_timeout(pool) - (af_now_s() - w->t_request);
    int readable = af_ipc_wait_readable(w->fd, left > 0 ? left : 0);
    if (readable == 1)
        n = recv(w->fd, &h, sizeof h, 0);
    drain_stderr(pool, w);
    af_errcode code = pool->versions[0] ? AF_E_RUNTIME : AF_E_INPUT;
    if (n != sizeof h || h.type != MSG_HELLO) {
        const char *tail = pool->errlen > 300 ? pool->errbuf + pool->errlen - 300 : pool->errbuf;
        char how[96] = "";
        if (readable != 1) {
            kill_worker(pool, w);
            return af_error_set(err, code,
                                "the model did not finish loading within %.0f s (the model "
                                ".so's constructors and the container's create); the worker "
                                "was killed%s%s",
                                load_timeout(pool), tail[0] ? ": " : "", tail);
        }
        pid_t pid = w->pid;
        kill(-pid, SIGKILL);
        int st = af_zygote_worker_status(pool, pid, 2.0);
        if (LOAD(&w->mb->warm_state) == 1) {
            /* the model loaded; the warm-up case failed this time (flaky, or a fault left
             * by another process on the device): not a load failure. Take another worker;
             * after 3 such deaths, warm up no more */
            af_worker_close(w);
            if (++pool->stats.warm_deaths >= 3)
                pool->opts.warm_up = -1;
            af_error_set(err, AF_E_RUNTIME, "the worker died warming up");
            return READY_DIED_WARMING;
        }
        af_outcome_status_text(st, how, sizeof how);
        af_worker_close(w);
        af_error_set(err, code, "the worker died while loading the model%s%s%s", how,
                     tail[0] ? ": " : "", tail);
        return READY_DIED_LOADING;
    }
    if (!h.ok) {
        af_errcode c = h.errcode ? (af_errcode)h.errcode : AF_E_RUNTIME;
        af_error_set(err, c == AF_E_INPUT && pool->versions[0] ? AF_E_RUNTIME : c, "%s", h.error);
        kill_worker(pool, w);
        return -1;
    }
    if (!pool->versions[0])
        snprintf(pool->versions, sizeof pool->versions, "%s", h.versions);
    w->ready = 1;
    pool->stats.last_spawn_seconds = af_now_s() - w->t_request;
    pool->stats.spawn_seconds += pool->stats.last_spawn_seconds;
    /* where a worker's start-up goes (the fork and the zygote's queue, libtorch, the CUDA
     * context, the model .so, the container), and how long the tool waited for it */
    af_pool_stats *st = &pool->stats;
    st->loads++;
    if (h.t_enter >= w->t_request)
        st->load_phase_seconds[AF_PHASE_FORK] += h.t_enter - w->t_request;
    st->load_phase_seconds[AF_PHASE_TORCH] += h.t_torch;
    st->load_phase_seconds[AF_PHASE_CONTEXT] += h.t_load[AF_LOAD_CONTEXT];
    st->load_phase_seconds[AF_PHASE_SO] += h.t_load[AF_LOAD_SO];
    st->load_phase_seconds[AF_PHASE_CREATE] += h.t_load[AF_LOAD_CREATE];
    if (LOAD(&w->mb->warm_state) == 2) {
        st->warm_ups++;
        st->warm_up_seconds += h.t_warm;
    }
    return 0;
}

static int top_up_spares(af_pool *pool, af_error *err);

/* The zygote died (killed from outside, most likely): its workers went with it (their
 * death signal). Drop them and start a new zygote; the next case gets a fresh worker. */
static int zygote_restart(af_pool *pool, af_error *err)
{
    if (pool->active.pid)
        kill(-pool->active.pid, SIGKILL);
    af_worker_close(&pool->active);
    for (int i = 0; i < pool->n_spares; i++) {
        if (pool->spares[i].pid)
            kill(-pool->spares[i].pid, SIGKILL);
        af_worker_close(&pool->spares[i]);
    }
    pool->n_spares = 0;
    if (pool->ctl >= 0)
        close(pool->ctl);
    pool->ctl = -1;
    pool->stats.zygote_restarts++;
    if (pool->opts.verbose)
        fprintf(stderr, "aotif: the zygote process died; starting another\n");
    return af_zygote_start(pool, err);
}

/* The device the workers run on (opts.device, else the package's), into pool->device and
 * pool->cuda. */
static int pick_device(af_pool *pool, const af_package *pkg, af_error *err)
{
    const char *dev = pool->opts.device && *pool->opts.device ? pool->opts.device : pkg->device;
    if (!af_device_name_ok(dev))
        return af_error_set(err, AF_E_USAGE, "bad device '%s' (cpu, cuda or cuda:N)", dev);
    if (af_device_is_cuda(dev) != af_device_is_cuda(pkg->device)) {
        /* AOTInductor compiles for one device kind: a CPU package has no GPU kernels, a CUDA
         * package's kernels are Triton's (the container refuses the other kind at load) */
        return af_error_set(err, AF_E_USAGE,
                            "device %s: %s was compiled for %s and runs only there", dev, pkg->path,
                            af_device_is_cuda(pkg->device) ? "cuda" : "cpu");
    }
    snprintf(pool->device, sizeof pool->device, "%s", strcmp(dev, "cuda") == 0 ? "cuda:0" : dev);
    pool->cuda = af_device_is_cuda(pool->device);
    return 0;
}

/* opts.warm_spare and opts.warm_up decided (auto: CUDA from the first death), and how many
 * spares at most. With 1 the first spare starts with the pool; with 2 at the first worker
 * death: a spare's start-up (libtorch, on CUDA a context and the weights, a warm-up run)
 * competes with the active worker's runs while it lasts, and a model that never kills its
 * worker never needs one. */
static void pick_spares(af_pool *pool)
{
    if (pool->opts.warm_spare == 0)
        pool->opts.warm_spare = pool->cuda ? 2 : -1;
    int lazy = pool->opts.warm_spare == 2;
    pool->opts.warm_spare = pool->opts.warm_spare > 0;
    if (pool->opts.warm_up == 0)
        pool->opts.warm_up = pool->opts.warm_spare ? 1 : -1;
    if (pool->opts.warm_spare) {
        /* CUDA: a spare holds a context and a copy of the weights; a few, on a big host */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int m = pool->opts.max_spares > 0 ? pool->opts.max_spares
                : pool->cuda              ? (int)(ncpu / 4 > 1 ? ncpu / 4 : 1)
                                          : 1;
        pool->spares_max = m < AF_MAX_SPARES ? m : AF_MAX_SPARES;
        pool->spares_wanted = lazy ? 0 : 1;
    }
}

af_pool *af_pool_start(const af_package *pkg, const af_spec *spec, const af_worker_opts *opts,
                       af_error *err)
{
    double t0 = af_now_s();
    int worker_cpu;
    double tool_spin_cap;
    if (af_worker_cpu(&worker_cpu, err) != 0 || af_ipc_tool_spin_cap(&tool_spin_cap, err) != 0)
        return NULL;
    af_pool *pool = calloc(1, sizeof *pool);
    if (!pool) {
        af_error_set(err, AF_E_IO, "out of memory");
        return NULL;
    }
    pool->pkg = pkg;
    pool->spec = spec;
    pool->tool_spin_cap_s = tool_spin_cap;
    if (opts)
        pool->opts = *opts;
    if (pool->opts.timeout_s <= 0)
        pool->opts.timeout_s = 30.0;
    if (pool->opts.max_input_bytes <= 0)
        pool->opts.max_input_bytes = 1LL << 30;
    pool->ctl = -1;
    pool->arena_fd = -1;
    if (pool->opts.arena_bytes > 0) {
        pool->arena_bytes = (size_t)pool->opts.arena_bytes;
        pool->arena_fd = memfd_create("aotif-outputs", MFD_CLOEXEC);
        if (pool->arena_fd < 0 || ftruncate(pool->arena_fd, (off_t)pool->arena_bytes) != 0 ||
            (pool->arena = mmap(NULL, pool->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                                pool->arena_fd, 0)) == MAP_FAILED) {
            pool->arena = NULL;
            af_error_sys(err, "output arena of %zu bytes", pool->arena_bytes);
            goto fail;
        }
    }
    af_worker_clear(&pool->active);
    for (int i = 0; i < AF_MAX_SPARES; i++)
        af_worker_clear(&pool->spares[i]);
    if (pick_device(pool, pkg, err) != 0)
        goto fail;
    if (af_find_torch_lib(pool->opts.torch_lib, pool->torch_lib, sizeof pool->torch_lib, err) != 0)
        goto fail;
    pick_spares(pool);

    if (af_zygote_start(pool, err) != 0)
        goto fail;
    if (spawn_request(pool, &pool->active, err) != 0 || wait_ready(pool, &pool->active, err) != 0)
        goto fail;
    if (top_up_spares(pool, err) != 0)
        goto fail;
    pool->stats.setup_seconds = af_now_s() - t0;
    return pool;
fail:
    af_pool_stop(pool);
    return NULL;
}

/* Name the frames a crash handler posted (raw "<path>+0x<vaddr>"), here in the tool, where
 * reading ELF files and demangling is safe. The model .so is the package's extracted copy,
 * the very file the workers load. Without a symbolizer (out of memory) the frames stay raw
 * and the signature falls back to a module name. */
static void symbolize(af_pool *pool, af_result *r)
{
    if (r->n_frames <= 0 || (r->cls != AF_RES_SIGNAL && r->cls != AF_RES_DEVICE_FAULT))
        return;
    if (!pool->sym) {
        char label[sizeof pool->pkg->model + 4];
        snprintf(label, sizeof label, "%s.so", pool->pkg->model);
        pool->sym = af_symbolizer_new(pool->pkg->so_path, label, NULL);
    }
    if (pool->sym)
        af_symbolize_frames(pool->sym, r);
}

/* Re-run a device fault once with blocking launches: the failing launch then reports
 * itself, which can name the kernel the asynchronous run could not. The signature stays
 * the one of the normal run; the re-run's words go to r->triage (and r->kernel if empty). */
static void triage_rerun(af_pool *pool, const af_case *c, af_result *r)
{
    worker tw;
    af_worker_clear(&tw);
    af_error err = {0};
    char keep_err[ERRBUF_MAX + 1];
    size_t keep_len = pool->errlen;
    memcpy(keep_err, pool->errbuf, keep_len + 1);
    pool->errlen = 0;
    pool->errbuf[0] = '\0';
    if (af_zygote_spawn(pool, &tw, 1, &err) != 0 || wait_ready(pool, &tw, &err) != 0) {
        snprintf(r->triage, sizeof r->triage, "re-run failed: %s", err.message);
        goto done;
    }
    af_result t;
    memset(&t, 0, sizeof t);
    int got = af_mailbox_exchange(&tw, c, pool->dump_next, af_now_s(), 0, pool->opts.timeout_s, &t);
    drain_stderr(pool, &tw);
    if (got == 1) {
        symbolize(pool, &t);
        af_outcome_device_fault_details(&t, pool->errbuf);
        if (!t.message[0])
            af_outcome_message_from_stderr(&t, pool->errbuf);
        af_result_sign(&t);
        if (t.kernel[0]) /* the signature already carries the kernel and the message */
            snprintf(r->triage, sizeof r->triage, "%s", t.signature);
        else
            snprintf(r->triage, sizeof r->triage, "%s%s%s", t.signature, t.message[0] ? ": " : "",
                     t.message);
        if (!r->kernel[0] && t.kernel[0])
            snprintf(r->kernel, sizeof r->kernel, "%s", t.kernel);
    } else {
        snprintf(r->triage, sizeof r->triage, "the re-run's worker %s without a result",
                 got == 0 ? "timed out" : "died");
    }
    kill_worker(pool, &tw);
done:
    memcpy(pool->errbuf, keep_err, keep_len + 1);
    pool->errlen = keep_len;
}

/* Request spares until there are as many as wanted (they load in parallel). */
static int top_up_spares(af_pool *pool, af_error *err)
{
    while (pool->n_spares < pool->spares_wanted) {
        if (spawn_request(pool, &pool->spares[pool->n_spares], err) != 0)
            return -1;
        pool->n_spares++;
        if (pool->n_spares > pool->stats.spares_peak)
            pool->stats.spares_peak = pool->n_spares;
    }
    return 0;
}

/* The active worker is gone and spare `w` takes over: adapt how many spares to keep. One
 * spare hides a restart only while replacements come less often than a worker's start-up
 * (on CUDA: a context, the model, a first run). When the spare taking over is still
 * loading, restarts are outrunning the spares: want one more (several load side by side).
 * When replacements come less often than two start-ups, one fewer will do (an extra spare
 * is not killed; it is just not replaced once used). */
static void note_replacement(af_pool *pool, const worker *w)
{
    double t = af_now_s();
    int loading = !w->ready && af_ipc_wait_readable(w->fd, 0) != 1; /* no HELLO yet */
    if (loading && pool->spares_wanted < pool->spares_max)
        pool->spares_wanted++;
    else if (!loading && pool->t_replaced > 0 && pool->spares_wanted > 1 &&
             t - pool->t_replaced > 2 * pool->stats.last_spawn_seconds)
        pool->spares_wanted--;
    pool->t_replaced = t;
}

/* Make the next spare (or a fresh worker, when none is left) the active one, under a live
 * zygote. `replacing`: it takes over from a worker that died in a case (the spare count
 * adapts to that rate), not from one that died loading. */
static int take_next_worker(af_pool *pool, int replacing, af_error *err)
{
    if (af_zygote_gone(pool) && zygote_restart(pool, err) != 0)
        return -1;
    if (replacing && pool->spares_wanted == 0 && pool->spares_max > 0)
        pool->spares_wanted = 1; /* the first death: from now on, a spare */
    if (pool->n_spares == 0)
        return spawn_request(pool, &pool->active, err);
    if (replacing)
        note_replacement(pool, &pool->spares[0]);
    pool->active = pool->spares[0];
    memmove(&pool->spares[0], &pool->spares[1],
            sizeof pool->spares[0] * (size_t)(pool->n_spares - 1));
    af_worker_clear(&pool->spares[--pool->n_spares]);
    return 0;
}

static int ensure_active(af_pool *pool, af_error *err)
{
    /* only when a worker is needed: a waitpid per case would be the one system call on the
     * hot path. A zygote that dies while the active worker lives takes that worker along,
     * and af_pool_run sees its case lost and asks again. */
    if (!pool->active.pid && take_next_worker(pool, 1, err) != 0)
        return -1;
    /* A worker killed from outside while it loads (an OOM killer, a user) says nothing about
     * the model once others have loaded it: take the next spare or start another, a few
     * times. A model that cannot load at all fails on the first load (no versions yet).
     * Deaths in the warm-up are bounded apart: it is switched off after 3. */
    double t_wait = af_now_s();
    int was_ready = pool->active.ready;
    for (int tries = 0, warm_deaths = 0, rc; (rc = wait_ready(pool, &pool->active, err)) != 0;) {
        if (rc == READY_DIED_WARMING ? ++warm_deaths > 3 + AF_MAX_SPARES : ++tries > 3)
            return -1;
        if (rc == READY_FAILED || (rc == READY_DIED_LOADING && !pool->versions[0]))
            return -1;
        af_error_clear(err);
        if (take_next_worker(pool, 0, err) != 0)
            return -1;
    }
    if (!was_ready)
        pool->stats.wait_worker_seconds += af_now_s() - t_wait;
    return top_up_spares(pool, err);
}

int af_pool_run_outputs(af_pool *pool, const af_case *c, af_result *out, af_error *err)
{
    if (!pool->arena)
        return af_error_set(err, AF_E_INTERNAL, "af_pool_run_outputs: the pool has no arena");
    ((af_arena_header *)pool->arena)->magic = 0;
    pool->dump_next = 1;
    int rc = af_pool_run(pool, c, out, err);
    pool->dump_next = 0;
    return rc;
}

const af_arena_header *af_pool_arena(const af_pool *pool, int *fd, size_t *bytes)
{
    if (fd)
        *fd = pool->arena_fd;
    if (bytes)
        *bytes = pool->arena_bytes;
    return pool->arena;
}

static int run_once(af_pool *pool, const af_case *c, af_result *out, int *never_ran, af_error *err);

static void note_between(af_pool *pool, const worker *w, double t_send);
static int refuse(const af_pool *pool, const af_case *c, af_result *out);
static int worker_quiet(const worker *w);
static void take_stderr(af_pool *pool, worker *w);

int af_pool_post_ahead(af_pool *pool, const af_case *c)
{
    worker *w = &pool->active;
    if (pool->ahead || pool->dump_next || !w->pid || !w->mb || !worker_quiet(w) ||
        refuse(pool, c, NULL)) /* refused: af_pool_run answers it without a worker */
        return 0;
    take_stderr(pool, w);
    pool->ahead_case = *c;
    pool->ahead_t_send = af_now_s();
    note_between(pool, w, pool->ahead_t_send);
    af_mailbox_post_case(w, c, 0);
    pool->ahead = 1;
    pool->stats.ahead_posted++;
    return 1;
}

static int run_retrying(af_pool *pool, const af_case *c, af_result *out, af_error *err);

int af_pool_finish_ahead(af_pool *pool, af_case *c, af_result *out, af_error *err)
{
    if (!pool->ahead)
        return 0;
    *c = pool->ahead_case;
    return run_retrying(pool, c, out, err) < 0 ? -1 : 1;
}

int af_pool_run(af_pool *pool, const af_case *c, af_result *out, af_error *err)
{
    if (pool->ahead && !af_case_equal(&pool->ahead_case, c)) {
        af_case other;
        if (af_pool_finish_ahead(pool, &other, out, err) < 0)
            return -1; /* its result is dropped: the caller asked for another case */
    }
    return run_retrying(pool, c, out, err);
}

static int run_retrying(af_pool *pool, const af_case *c, af_result *out, af_error *err)
{
    /* Two deaths say nothing about the case, and it runs again (twice at most: a worker or
     * zygote that keeps dying is a problem of its own, reported as the case's lost worker):
     * - the worker died before it took the case (killed while idle between cases, or as a
     *   warm spare): the case never ran;
     * - the zygote died and took the worker along (their death signal). */
    for (int attempt = 0;; attempt++) {
        int never_ran = 0;
        int rc = run_once(pool, c, out, &never_ran, err);
        if (rc != 0 || attempt == 2)
            return rc;
        if (!never_ran && ((out->cls != AF_RES_WORKER_LOST && out->cls != AF_RES_TIMEOUT) ||
                           !af_zygote_gone(pool)))
            return rc;
        pool->stats.cases--; /* it is counted once, by the run that answers */
        pool->stats.cases_rerun++;
    }
}

/* A case the pool does not run: it breaks the spec or the input budget. Returns 1 with *out
 * filled (REFUSED, signed; out NULL: the answer only), else 0. */
static int refuse(const af_pool *pool, const af_case *c, af_result *out)
{
    af_error cerr; /* cleared, not zeroed: this is once per exec */
    af_error_clear(&cerr);
    if (af_case_check(pool->spec, c, &cerr) != 0) {
        if (!out)
            return 1;
        out->cls = AF_RES_REFUSED;
        snprintf(out->message, sizeof out->message, "%s", cerr.message);
        af_result_sign(out);
        return 1;
    }
    int64_t bytes = af_case_input_bytes(pool->spec, c);
    if (bytes > pool->opts.max_input_bytes) {
        if (!out)
            return 1;
        out->cls = AF_RES_REFUSED;
        snprintf(out->message, sizeof out->message,
                 "inputs need %lld bytes, over the budget of %lld (--max-input-bytes)",
                 (long long)bytes, (long long)pool->opts.max_input_bytes);
        af_result_sign(out);
        return 1;
    }
    return 0;
}

/* The gap since this worker's last answer, when it answered before (the round-trip split). */
static void note_between(af_pool *pool, const worker *w, double t_send)
{
    if (w->n_cases > 0) {
        pool->stats.between_seconds += t_send - pool->t_answer;
        pool->stats.betweens++;
    }
}

/* Post c to the active worker w and wait for its answer: af_mailbox_exchange's 1 (*out
 * filled), 0 (timeout) or -1 (died). Keeps the round-trip average and the first cases' time;
 * *t_send is when the case was posted. posted: c is in the mailbox already, since *t_send
 * (af_pool_post_ahead). */
static int post_case(af_pool *pool, worker *w, const af_case *c, af_result *out, double *t_send,
                     int posted)
{
    pool->stats.cases++;
    /* spin about as long as cases take lately (a blocked wait costs a wake-up that can be
     * longer than a small model's whole run), within [SPIN_S, 2 ms] */
    double spin = 1.5 * pool->ema_case_s + SPIN_S;
    if (spin > 2e-3)
        spin = 2e-3;
    if (pool->tool_spin_cap_s >= 0 && spin > pool->tool_spin_cap_s)
        spin = pool->tool_spin_cap_s;
    if (!posted) {
        *t_send = af_now_s();
        note_between(pool, w, *t_send);
        af_mailbox_post_case(w, c, pool->dump_next);
    }
    int got = af_mailbox_await(w, *t_send, spin, pool->opts.timeout_s, out);
    pool->t_answer = af_now_s();
    double dt = pool->t_answer - *t_send;
    pool->stats.exchange_seconds += dt;
    if (got == 1) {
        pool->stats.run_seconds += out->run_seconds;
        pool->stats.plain_results += w->mb->plain != 0;
    }
    pool->ema_case_s = 0.9 * pool->ema_case_s + 0.1 * dt;
    if (w->n_cases++ == 0) { /* a fresh worker's first case: CUDA loads kernels lazily */
        pool->stats.first_cases++;
        pool->stats.first_case_seconds += dt;
    }
    /* An OK result takes nothing from stderr (af_outcome_from_stderr): what the case printed
     * is read, and dropped, before the next case; a read here would be a system call per case
     * between the result and the next case. */
    if (got != 1 || out->cls != AF_RES_OK)
        drain_stderr(pool, w);
    return got;
}

/* After the exchange (got: post_case's answer): end the worker when the case ended it, and
 * classify a case that got no report. *never_ran: the worker died before it took the case. */
static void settle_worker(af_pool *pool, worker *w, int got, double t_send, af_result *out,
                          int *never_ran)
{
    if (got == 0) {
        af_outcome_timeout(out, pool->opts.timeout_s);
        kill_worker(pool, w);
    } else if (got == 1) {
        symbolize(pool, out);
        if (out->cls == AF_RES_SIGNAL || out->cls == AF_RES_DEVICE_FAULT ||
            out->cls == AF_RES_WORKER_LOST) {
            /* the worker is dying or done: start afresh next time */
            double t_dying = af_now_s();
            pool->stats.faults++;
            pool->stats.fault_case_seconds += t_dying - t_send;
            drain_stderr(pool, w);
            if (words_to_come(pool, out)) {
                af_ipc_wait_readable(w->fd, 5.0); /* its socket hangs up when it is gone */
                drain_stderr(pool, w);
            }
            pool->stats.fault_exit_seconds += af_now_s() - t_dying;
            abandon_worker(pool, w);
        }
    } else {
        /* the worker died without a report (killed, exited, or crashed before it could) */
        *never_ran = LOAD(&w->mb->taken_seq) != w->seq;
        pid_t pid = w->pid;
        kill(-pid, SIGKILL);
        drain_stderr(pool, w);
        int st = af_zygote_worker_status(pool, pid, 5.0);
        af_worker_close(w);
        af_outcome_lost(out, st);
    }
}

/* The worker said its stderr pipe was empty after its last result (then a read would find
 * nothing). */
static int worker_quiet(const worker *w)
{
    return w->seq && LOAD(&w->mb->quiet_seq) == w->seq;
}

/* Before a case is posted: what an OK case printed is dropped here, not charged to this one,
 * and the case's stderr starts empty. */
static void take_stderr(af_pool *pool, worker *w)
{
    if (!worker_quiet(w))
        drain_stderr(pool, w);
    else
        pool->stats.quiet_skips++;
    pool->errlen = 0;
    pool->errbuf[0] = '\0';
}

static int run_once(af_pool *pool, const af_case *c, af_result *out, int *never_ran, af_error *err)
{
    af_result_reset(out);
    worker *w = &pool->active;
    double t_send = 0;
    /* af_pool_run settled any other case ahead: one still here is this one, posted already
     * with the checks below made then */
    int posted = pool->ahead;
    if (posted) {
        pool->ahead = 0;
        pool->stats.ahead_taken++;
        t_send = pool->ahead_t_send;
    } else {
        if (refuse(pool, c, out))
            return 0;
        if (ensure_active(pool, err) != 0)
            return -1;
        take_stderr(pool, w);
    }

    int got = post_case(pool, w, c, out, &t_send, posted);
    settle_worker(pool, w, got, t_send, out, never_ran);
    af_outcome_from_stderr(out, pool->errbuf);
    if (out->cls == AF_RES_DEVICE_FAULT && pool->opts.triage) {
        af_result_sign(out);
        af_pool_triage(pool, c, out); /* adds words, not a new bug: the signature stays */
        return 0;
    }
    if (out->cls == AF_RES_OK && !pool->have_ok) {
        pool->ok_case = *c;
        pool->have_ok = 1;
    }
    af_result_sign(out);
    return 0;
}

void af_pool_prefetch(const af_pool *pool)
{
    if (pool->active.pid && pool->active.mb)
        __builtin_prefetch(&pool->active.mb->quiet_seq, 0, 3);
}

void af_pool_recycle(af_pool *pool)
{
    af_case c;
    af_result r;
    af_error err;
    af_error_clear(&err);
    if (af_pool_finish_ahead(pool, &c, &r, &err) < 0) /* dropped, as af_pool_run drops it */
        pool->ahead = 0;
    if (pool->active.pid) /* the next case takes a spare, or a worker forked fresh */
        kill_worker(pool, &pool->active);
}

void af_pool_triage(af_pool *pool, const af_case *c, af_result *r)
{
    if (r->cls != AF_RES_DEVICE_FAULT || r->triage[0])
        return;
    char sig[sizeof r->signature];
    memcpy(sig, r->signature, sizeof sig);
    triage_rerun(pool, c, r);
    memcpy(r->signature, sig, sizeof sig);
}

void af_pool_get_stats(const af_pool *pool, af_pool_stats *out)
{
    *out = pool->stats;
}

const char *af_pool_torch_lib(const af_pool *pool)
{
    return pool->torch_lib;
}

void af_pool_versions(const af_pool *pool, char *buf, size_t len)
{
    snprintf(buf, len, "%s", pool->versions);
}

void af_pool_stop(af_pool *pool)
{
    if (!pool)
        return;
    if (pool->active.pid)
        kill(-pool->active.pid, SIGKILL);
    for (int i = 0; i < pool->n_spares; i++)
        if (pool->spares[i].pid)
            kill(-pool->spares[i].pid, SIGKILL);
    af_worker_close(&pool->active);
    for (int i = 0; i < pool->n_spares; i++)
        af_worker_close(&pool->spares[i]);
    if (pool->ctl >= 0) {
        msg_ctl q = {MSG_QUIT, 0, 0};
        af_ipc_send(pool->ctl, &q, sizeof q);
        close(pool->ctl);
    }
    if (pool->zygote > 0) {
        int st;
        waitpid(pool->zygote, &st, 0);
    }
    if (pool->arena)
        munmap(pool->arena, pool->arena_bytes);
    if (pool->arena_fd >= 0)
        close(pool->arena_fd);
    af_symbolizer_free(pool->sym);
    free(pool);
}
