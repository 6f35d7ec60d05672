/* zygote.c — the zygote and the workers it forks, and the tool's side of the zygote's
 * control socket; see zygote.h.
 *
 * The pool forks the zygote first, before the tool has touched libtorch or CUDA. The
 * zygote forgets what the tool installed (as exec would), arms PR_SET_PDEATHSIG and checks
 * that the tool is still its parent, dlopen's libtorch (no CUDA call, so forking stays
 * safe) and then forks a worker per SPAWN request, handing the tool the worker's socket,
 * stderr pipe and mailbox memfd over SCM_RIGHTS. It also reaps its workers and reports each
 * exit status, since only a parent can wait for a child, and kills their process groups
 * when it ends. A worker arms its own death signal, loads the model, runs the warm-up case
 * when it got one, installs the crash handlers (crash_report.c), says HELLO on its socket,
 * then answers cases posted in its mailbox (ipc.c). With no_zygote the zygote skips the
 * preload and every worker loads libtorch itself: the cold path, kept for measuring.
 *
 * Between fork and the worker's first real work only the child's own state is touched;
 * the zygote is single-threaded, so the usual fork-in-threads hazards do not apply. */
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/runtime.h"
#include "crash_report.h"
#include "cuda_api.h"
#include "outcome.h"

/* ---- the worker process ---------------------------------------------------------------- */

/* CPU workers: unbounded allocation becomes an OOM result, not a dead machine (--mem-limit):
 * the address space is capped at what the loaded worker uses plus headroom. */
static void limit_address_space(int64_t headroom)
{
    if (headroom <= 0)
        return;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)headroom;
    setrlimit(RLIMIT_AS, &rl);
}

int af_worker_cpu(int *cpu, af_error *err)
{
    *cpu = -1;
    const char *e = getenv("AOTI_FUZZ_WORKER_CPU");
    if (!e || !*e)
        return 0;
    char *end;
    long n = strtol(e, &end, 10);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (*end || n < 0 || n >= CPU_SETSIZE || (ncpu > 0 && n >= ncpu))
        return af_error_set(err, AF_E_INPUT,
                            "AOTI_FUZZ_WORKER_CPU='%s': not a CPU number of this machine (0-%ld)",
                            e, ncpu > 0 ? ncpu - 1 : (long)CPU_SETSIZE - 1);
    *cpu = (int)n;
    return 0;
}

int af_pin_worker_cpu(void)
{
    af_error err = {0};
    int cpu;
    if (af_worker_cpu(&cpu, &err) != 0 || cpu < 0)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? cpu : -1;
}

/* The worker process, just forked by spawn_worker (its socket fd, its mailbox mb): load,
 * warm up, say HELLO, then answer cases until it is killed or poisoned. Never returns. */
static void worker_main(af_pool *pool, int fd, mailbox *mb, int preloaded, int triage, pid_t zygote)
{
    af_error err = {0};
    msg_hello times = {0};
    times.t_enter = af_now_s();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != zygote) /* it died before the death signal was armed */
        _exit(0);
    af_pin_worker_cpu();
    if (pool->opts.check_inputs)
        setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
    if (triage) {
        setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
        setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", 1);
        af_cuda_sync_each_launch(1);
    }
    double t = af_now_s();
    if (!preloaded && af_torch_load(pool->torch_lib, pool->cuda, &err) != 0) {
        af_ipc_send_hello(fd, &err, NULL, NULL);
        _exit(0);
    }
    times.t_torch = preloaded ? 0 : af_now_s() - t;
    af_runtime *rt = af_runtime_open(pool->pkg, pool->spec, pool->device, &err);
    if (!rt) {
        af_ipc_send_hello(fd, &err, NULL, NULL);
        _exit(0);
    }
    af_runtime_load_seconds(rt, times.t_load);
    if (LOAD(&mb->warm_ready)) {
        /* before the crash handlers: a warm-up that faults ends this worker with no report,
         * and the tool, seeing warm_state 1, takes another (see opts.warm_up) */
        STORE(&mb->warm_state, 1);
        af_case wc = mb->warm;
        af_result wr;
        t = af_now_s();
        af_runtime_dump_to(rt, NULL, 0);
        if (af_runtime_run(rt, &wc, &wr, &err) != 0 || wr.cls != AF_RES_OK ||
            af_runtime_is_poisoned(rt))
            _exit(0);
        times.t_warm = af_now_s() - t;
        STORE(&mb->warm_state, 2);
    }
    if (!pool->cuda && pool->opts.mem_limit_bytes >= 0)
        limit_address_space(pool->opts.mem_limit_bytes ? pool->opts.mem_limit_bytes : (8LL << 30));
    af_crash_install(mb);
    af_runtime_hold_tensors(rt, 1);
    char versions[512];
    af_runtime_versions(rt, versions, sizeof versions);
    uint32_t seq = LOAD(&mb->case_seq); /* before HELLO: a case may follow it at once */
    af_ipc_send_hello(fd, NULL, versions, &times);

    af_case c;
    memset(&c, 0, sizeof c); /* af_case_copy_in_use writes the values in use */
    for (;;) {
        seq = af_mailbox_wait_case(mb, seq);
        af_case_copy_in_use(&c, &mb->c);
        __atomic_store_n(&mb->taken_seq, seq, __ATOMIC_RELEASE); /* read only after a death */
        af_result res;
        af_runtime_dump_to(rt, LOAD(&mb->dump_outputs) ? pool->arena : NULL, pool->arena_bytes);
        if (af_runtime_run(rt, &c, &res, &err) != 0)
            af_outcome_harness_failed(&res, &err);
        int poisoned = af_runtime_is_poisoned(rt);
        if (poisoned) /* what the driver printed (a device assert's text) before the report */
            fflush(NULL);
        af_mailbox_post_result(mb, seq, &res);
        if (poisoned)
            _exit(0);           /* a sticky CUDA error: this process can run nothing more */
        af_runtime_release(rt); /* the run's tensors, freed while the tool reads the answer */
        /* while the tool handles the result: is anything in the pipe for it to read? (a
         * system call here, not on the tool's side between this result and the next case) */
        int unread = -1;
        if (ioctl(2, FIONREAD, &unread) == 0 && unread == 0)
            STORE(&mb->quiet_seq, seq);
        af_crash_modules_refresh(); /* a run may have loaded libraries (CUDA's, lazily) */
    }
}

/* ---- the zygote ------------------------------------------------------------------------ */

/* In the zygote: fork a worker for a SPAWN request, in a process group of its own, with its
 * mailbox (the warm-up case already in it), socket and stderr pipe, and hand the tool their
 * other ends (SPAWNED over SCM_RIGHTS). Returns the worker's pid, or -1. */
static pid_t spawn_worker(af_pool *pool, int ctl, int preloaded, int triage, const af_case *warm)
{
    pid_t zygote = getpid();
    int sv[2], ep[2];
    int mfd = memfd_create("aotif-mailbox", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, sizeof(mailbox)) != 0) {
        if (mfd >= 0)
            close(mfd);
        return -1;
    }
    mailbox *mb = mmap(NULL, sizeof(mailbox), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (mb == MAP_FAILED) {
        close(mfd);
        return -1;
    }
    if (warm) {
        mb->warm = *warm;
        STORE(&mb->warm_ready, 1);
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        munmap(mb, sizeof(mailbox));
        close(mfd);
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC) != 0) {
        close(sv[0]), close(sv[1]);
        munmap(mb, sizeof(mailbox));
        close(mfd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        close(ctl);
        close(sv[0]);
        close(ep[0]);
        close(mfd);
        /* stdout too: the driver prints device-side assert messages (and a model's own
         * prints) there, and they name the failing kernel */
        dup2(ep[1], 1);
        dup2(ep[1], 2);
        close(ep[1]);
        worker_main(pool, sv[1], mb, preloaded, triage, zygote);
        _exit(0);
    }
    if (pid > 0)
        setpgid(pid, pid);
    munmap(mb, sizeof(mailbox));
    close(sv[1]);
    close(ep[1]);
    if (pid > 0) {
        msg_ctl m = {MSG_SPAWNED, pid, 0};
        int fds[3] = {sv[0], ep[0], mfd};
        af_ipc_send_fds(ctl, &m, sizeof m, fds, 3);
    }
    close(sv[0]);
    close(ep[0]);
    close(mfd);
    return pid;
}

/* The zygote's live workers, so that none outlives it: each has its own process group,
 * which kill(0, ...) would not reach. */
static pid_t zygote_kids[256];
static int n_zygote_kids;

static void kids_add(pid_t pid)
{
    if (n_zygote_kids < (int)(sizeof zygote_kids / sizeof zygote_kids[0]))
        zygote_kids[n_zygote_kids++] = pid;
}

static void kids_remove(pid_t pid)
{
    for (int i = 0; i < n_zygote_kids; i++)
        if (zygote_kids[i] == pid) {
            zygote_kids[i] = zygote_kids[--n_zygote_kids];
            return;
        }
}

/* The zygote process: load libtorch (unless no_zygote), say HELLO on ctl, then serve SPAWN
 * requests and report its workers' exits until QUIT or the tool's hang-up. Never returns. */
static void zygote_main(af_pool *pool, int ctl, pid_t tool)
{
    af_error err = {0};
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != tool) /* the tool died before the death signal was armed */
        _exit(0);
    signal(SIGINT, SIG_IGN); /* the tool decides when we stop */
    int preload = !pool->opts.no_zygote;
    char why[256];
    if (pool->cuda && !af_cuda_driver_present(why, sizeof why)) {
        af_error_set(&err, AF_E_RUNTIME,
                     "CUDA package, but no usable GPU: the NVIDIA driver (libcuda.so.1) is not "
                     "installed here");
        af_ipc_send_hello(ctl, &err, NULL, NULL);
        _exit(0);
    }
    /* OpenMP threads spin after each parallel region; leave the driving process a core so
     * the spinning does not stand between a result and the next case. libgomp reads this
     * when it is loaded, so it must be set before libtorch comes in. */
    if (!getenv("OMP_NUM_THREADS")) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        char v[16];
        snprintf(v, sizeof v, "%ld", ncpu > 2 ? ncpu - 1 : 1);
        setenv("OMP_NUM_THREADS", v, 1);
    }
    if (pool->cuda)
        af_cuda_worker_defaults();
    if (preload && af_torch_load(pool->torch_lib, pool->cuda, &err) != 0) {
        af_ipc_send_hello(ctl, &err, NULL, NULL);
        _exit(0);
    }
    af_ipc_send_hello(ctl, NULL, NULL, NULL);
    for (;;) {
        int st;
        pid_t dead;
        while ((dead = waitpid(-1, &st, WNOHANG)) > 0) {
            kids_remove(dead);
            msg_ctl m = {MSG_EXITED, dead, st};
            af_ipc_send(ctl, &m, sizeof m);
        }
        struct pollfd p = {ctl, POLLIN, 0};
        int r = poll(&p, 1, 20);
        if (r <= 0)
            continue;
        msg_spawn sm;
        ssize_t n = recv(ctl, &sm, sizeof sm, 0);
        if (n < 0 && errno == EINTR)
            continue;
        msg_ctl m = sm.h;
        if (n < (ssize_t)sizeof m || m.type == MSG_QUIT)
            break;
        if (m.type == MSG_SPAWN) {
            int warm = n == (ssize_t)sizeof sm && sm.warm;
            pid_t kid = spawn_worker(pool, ctl, preload, m.status & 1, warm ? &sm.c : NULL);
            if (kid > 0) {
                kids_add(kid);
            } else {
                msg_ctl fail = {MSG_SPAWNED, -1, errno};
                af_ipc_send(ctl, &fail, sizeof fail);
            }
        }
    }
    for (int i = 0; i < n_zygote_kids; i++) /* each worker is a group of its own */
        kill(-zygote_kids[i], SIGKILL);
    _exit(0);
}

/* exit() in a worker or the zygote, e.g. a model's own exit(7): end with that status at
 * once. The exit hooks registered before (the tool's, libFuzzer's "fuzz target exited",
 * which would turn it into exit 77 and write a crash file) belong to the tool's process. */
static void exit_now(int status, void *arg)
{
    (void)arg;
    fflush(NULL);
    _exit(status);
}

/* In the zygote, just forked from the tool: forget what the tool installed, as exec
 * would. Signal handlers go back to their default (ignored signals stay ignored), no
 * signal is blocked, and exit() skips the tool's exit hooks. The tool may be running
 * under libFuzzer, whose crash and exit handlers would otherwise run in the workers. */
static void forget_tool_state(void)
{
    for (int s = 1; s < NSIG; s++) {
        struct sigaction old;
        if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &old) != 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue;
        signal(s, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    on_exit(exit_now, NULL);
}

/* ---- in the tool: the control socket --------------------------------------------------- */

static void note_exit(af_pool *pool, pid_t pid, int status)
{
    if (pool->n_exited == MAX_EXITED)
        memmove(pool->exited, pool->exited + 1, sizeof pool->exited[0] * (MAX_EXITED - 1)),
            pool->n_exited--;
    pool->exited[pool->n_exited].pid = pid;
    pool->exited[pool->n_exited].status = status;
    pool->n_exited++;
}

/* Read one control message, recording EXITED notes; returns the message type or -1. */
static int ctl_read(af_pool *pool, double timeout_s, msg_ctl *m, int *fds)
{
    if (af_ipc_wait_readable(pool->ctl, timeout_s) != 1)
        return -1;
    ssize_t n = af_ipc_recv_fds(pool->ctl, m, sizeof *m, fds, 3);
    if (n != sizeof *m)
        return -1;
    if (m->type == MSG_EXITED)
        note_exit(pool, m->pid, m->status);
    return (int)m->type;
}

int af_zygote_worker_status(af_pool *pool, pid_t pid, double timeout_s)
{
    double end = af_now_s() + timeout_s;
    for (;;) {
        for (int i = 0; i < pool->n_exited; i++)
            if (pool->exited[i].pid == pid) {
                int st = pool->exited[i].status;
                pool->exited[i] = pool->exited[--pool->n_exited];
                return st;
            }
        double left = end - af_now_s();
        msg_ctl m;
        int fds[3];
        if (left <= 0 || ctl_read(pool, left, &m, fds) < 0)
            return -1;
        if (m.type == MSG_SPAWNED)
            for (int i = 0; i < 3; i++)
                if (fds[i] >= 0)
                    close(fds[i]);
    }
}

int af_zygote_spawn(af_pool *pool, worker *w, int flags, af_error *err)
{
    static msg_spawn req; /* large: not on the stack */
    memset(&req, 0, sizeof req);
    req.h = (msg_ctl){MSG_SPAWN, 0, flags};
    if (!(flags & 1) && pool->opts.warm_up > 0 && pool->have_ok) {
        req.warm = 1;
        req.c = pool->ok_case;
    }
    w->t_request = af_now_s();
    if (af_ipc_send(pool->ctl, &req, sizeof req) != sizeof req)
        return af_error_set(err, AF_E_RUNTIME, "the zygote process is gone");
    for (;;) {
        msg_ctl m;
        int fds[3];
        int t = ctl_read(pool, 30.0, &m, fds);
        if (t < 0)
            return af_error_set(err, AF_E_RUNTIME, "the zygote process did not answer");
        if (t != MSG_SPAWNED) {
            for (int i = 0; i < 3; i++)
                if (fds[i] >= 0)
                    close(fds[i]);
            continue;
        }
        mailbox *mb =
            fds[2] >= 0 ? mmap(NULL, sizeof(mailbox), PROT_READ | PROT_WRITE, MAP_SHARED, fds[2], 0)
                        : MAP_FAILED;
        if (fds[2] >= 0)
            close(fds[2]);
        if (m.pid < 0 || fds[0] < 0 || fds[1] < 0 || mb == MAP_FAILED) {
            if (fds[0] >= 0)
                close(fds[0]);
            if (fds[1] >= 0)
                close(fds[1]);
            if (mb != MAP_FAILED)
                munmap(mb, sizeof(mailbox));
            return af_error_set(err, AF_E_RUNTIME, "the zygote could not fork a worker");
        }
        w->pid = m.pid;
        w->fd = fds[0];
        w->errfd = fds[1];
        w->mb = mb;
        w->seq = LOAD(&mb->case_seq);
        fcntl(w->errfd, F_SETFL, O_NONBLOCK);
        w->ready = 0;
        pool->stats.spawns++;
        return 0;
    }
}

int af_zygote_start(af_pool *pool, af_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return af_error_sys(err, "socketpair");
    pid_t tool = getpid();
    fflush(NULL);
    pool->zygote = fork();
    if (pool->zygote < 0) {
        close(sv[0]), close(sv[1]);
        return af_error_sys(err, "fork");
    }
    if (pool->zygote == 0) {
        forget_tool_state();
        close(sv[0]);
        setpgid(0, 0);
        zygote_main(pool, sv[1], tool);
    }
    close(sv[1]);
    pool->ctl = sv[0];
    pool->n_exited = 0;
    msg_hello h;
    ssize_t n = -1;
    if (af_ipc_wait_readable(pool->ctl, 120.0) == 1)
        n = recv(pool->ctl, &h, sizeof h, 0);
    if (n != sizeof h || h.type != MSG_HELLO)
        return af_error_set(err, AF_E_RUNTIME, "the zygote process died while loading libtorch");
    if (!h.ok)
        return af_error_set(err, h.errcode ? (af_errcode)h.errcode : AF_E_RUNTIME, "%s", h.error);
    return 0;
}

int af_zygote_gone(af_pool *pool)
{
    if (pool->zygote <= 0)
        return 1;
    int st;
    pid_t r = waitpid(pool->zygote, &st, WNOHANG);
    if (r == pool->zygote || (r < 0 && errno == ECHILD)) {
        pool->zygote = -1;
        return 1;
    }
    return 0;
}
