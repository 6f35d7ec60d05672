/* worker.c — the zygote, the workers and the pool that drives them; see aotif/worker.h.
 *
 * Processes:   tool ──ctl──► zygote ──fork──► worker (one process group each)
 *                 ◄──── cases / results: shared-memory mailbox (+ socket, stderr pipe) ──┘
 * The pool forks the zygote first, before the tool has touched libtorch or CUDA. The
 * zygote dlopen's libtorch (no CUDA call, so forking stays safe) and then forks a worker
 * per SPAWN request, handing the pool the worker's socket, stderr pipe and mailbox memfd
 * over SCM_RIGHTS. The zygote also reaps its workers and reports each exit status, since
 * only a parent can wait for a child. A worker loads the model, says HELLO on its socket,
 * then answers cases posted in the mailbox (see `mailbox` below): no system call per case
 * while both sides are busy. The socket stays open only to say, by hanging up, that the
 * worker is gone. Fatal signals are caught on an alternate stack: the handler posts a
 * SIGNAL result with the fault address and the raw stack (module + offset, looked up in a
 * module table taken beforehand, see below), then re-raises; the tool names the frames
 * (symbolize.c) and signs the result. Timeouts kill the worker's whole process group.
 * With no_zygote the zygote skips the preload and every worker loads libtorch itself: the
 * cold path, kept for measuring.
 *
 * Between fork and the worker's first real work only the child's own state is touched;
 * the zygote is single-threaded, so the usual fork-in-threads hazards do not apply. */
#include "aotif/worker.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "aotif/runtime.h"
#include "aotif/symbolize.h"
#include "cuda_api.h"

enum msg_type {
    MSG_HELLO = 1,
    MSG_SPAWN,
    MSG_SPAWNED,
    MSG_EXITED,
    MSG_QUIT,
};

typedef struct msg_hello {
    uint32_t type;
    int ok;
    int errcode;
    char error[512];
    char versions[512];
    double t_enter;                /* the worker's first instruction (CLOCK_MONOTONIC) */
    double t_torch;                /* loading libtorch, when the zygote had not */
    double t_load[AF_LOAD_PHASES]; /* af_runtime_open's phases */
    double t_warm;                 /* the warm-up case, when it ran */
} msg_hello;

typedef struct msg_ctl {
    uint32_t type;
    pid_t pid;
    int status;
} msg_ctl;

/* MSG_SPAWN: msg_ctl's fields (status: 1 for a triage worker), then the warm-up case, which
 * the zygote writes into the new worker's mailbox before it forks (opts.warm_up) */
typedef struct msg_spawn {
    msg_ctl h;
    int warm;
    af_case c;
} msg_spawn;

/* The case/result mailbox: a page of shared memory per worker (a memfd the zygote makes
 * and hands to the tool with the worker's socket). A case is posted by bumping case_seq,
 * a result by setting result_seq to it; each side spins briefly on the other's counter and
 * then sleeps on it in a futex, woken only when it said it sleeps (the *_waiting flags,
 * checked after the counter is bumped, with sequentially consistent atomics on both
 * sides, so no wake-up is lost). No system call is made while both sides are busy: a
 * case costs two cache-line transfers instead of two socket round trips and wake-ups. */
typedef struct mailbox {
    uint32_t case_seq;       /* bumped by the tool when c holds a new case */
    uint32_t result_seq;     /* set to case_seq by the worker when r holds its result */
    uint32_t worker_waiting; /* the worker sleeps on case_seq */
    uint32_t tool_waiting;   /* the tool sleeps on result_seq */
    uint32_t dump_outputs;   /* copy this case's outputs into the pool's output arena */
    uint32_t taken_seq;      /* set to case_seq by the worker once it has copied the case */
    uint32_t warm_ready;     /* set by the tool when warm holds a warm-up case */
    uint32_t warm_state;     /* the worker: 1 running the warm-up case, 2 done */
    af_case warm;
    af_case c;
    af_result r;
} mailbox;

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

typedef struct worker {
    pid_t pid;       /* 0 when there is none */
    mailbox *mb;     /* shared with the worker */
    uint32_t seq;    /* last case posted */
    int fd;          /* HELLO and liveness socket */
    int errfd;       /* read end of its stderr */
    int ready;       /* HELLO received */
    int64_t n_cases; /* cases posted to it */
    double t_request;
} worker;

#define ERRBUF_MAX 16384
#define MAX_EXITED 64

struct af_pool {
    const af_package *pkg;
    const af_spec *spec;
    af_worker_opts opts;
    char torch_lib[4096];
    char device[32];
    int cuda;
    pid_t zygote;
    int ctl;
    worker active;
    worker spares[AF_MAX_SPARES]; /* loaded and waiting, oldest request first */
    int n_spares;
    int spares_max; /* opts.warm_spare: 0 none; else up to this many */
    int have_ok;    /* ok_case holds the first case that ran OK: the warm-up case */
    af_case ok_case;
    int spares_wanted; /* as many as restarts need lately (1..spares_max) */
    double t_replaced; /* when the active worker was last replaced */
    af_pool_stats stats;
    char errbuf[ERRBUF_MAX + 1]; /* the current case's worker stderr (tail) */
    size_t errlen;
    struct {
        pid_t pid;
        int status;
    } exited[MAX_EXITED];
    int n_exited;
    char versions[1024];
    double ema_case_s; /* recent case round-trip time: how long it pays to spin for one */
    int arena_fd;      /* output arena memfd, -1 when none; mapped before the zygote forks,
                        * so every worker shares the mapping */
    void *arena;
    size_t arena_bytes;
    int dump_next;      /* the next case posted asks for its outputs */
    af_symbolizer *sym; /* names crashed workers' frames; made at the first crash */
};

/* ---- fd passing ------------------------------------------------------------------------ */

static int send_fds(int sock, const void *msg, size_t len, const int *fds, int nfds)
{
    struct iovec iov = {(void *)msg, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 3)];
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

static ssize_t recv_fds(int sock, void *msg, size_t len, int *fds, int nfds)
{
    struct iovec iov = {msg, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 3)];
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (int i = 0; i < nfds; i++)
        fds[i] = -1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (n > 0 && cm && cm->cmsg_type == SCM_RIGHTS) {
        int got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)(got < nfds ? got : nfds));
    }
    return n;
}

static ssize_t send_msg(int fd, const void *msg, size_t len)
{
    ssize_t n;
    do
        n = send(fd, msg, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

/* Wait for fd to be readable: 1 readable (or hung up), 0 timeout, -1 error. */
static int wait_readable(int fd, double timeout_s)
{
    double end = af_now_s() + timeout_s;
    for (;;) {
        double left = end - af_now_s();
        if (left < 0)
            left = 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000 + 0.999));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        return 1;
    }
}

/* How long a side spins for the other's message before blocking; $AOTI_FUZZ_SPIN_US. */
static double spin_seconds(void)
{
    static double v = -1;
    if (v < 0) {
        const char *e = getenv("AOTI_FUZZ_SPIN_US");
        v = e && *e ? atof(e) * 1e-6 : 50e-6;
    }
    return v;
}
#define SPIN_S spin_seconds()

/* One step of a spin wait on the other side's counter. Mostly a CPU pause (a few dozen ns):
 * a sched_yield on every step costs a system call, up to a microsecond on a virtual
 * machine, between the message landing and this side seeing it. Every 256th step still
 * yields, so two sides sharing one core (more jobs than cores) do not starve each other;
 * every 32nd step reads the clock (returned in *now), otherwise *now is left as it was. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline void spin_step(unsigned *step, double *now)
{
    unsigned k = ++*step;
    if ((k & 255) == 0)
        sched_yield();
    else
        cpu_relax();
    if ((k & 31) == 0)
        *now = af_now_s();
}

/* ---- the worker process ---------------------------------------------------------------- */

static mailbox *crash_mb; /* the worker's mailbox, for the crash handler */

/* The crash handler's view of the loaded modules. The handler may only do async-signal-safe
 * work (no dladdr, snprintf or malloc: the fault may have struck inside any of them, holding
 * their locks), so the worker takes a snapshot with dl_iterate_phdr before it runs cases,
 * and again whenever the loader's add/remove counters moved (libtorch dlopen's CUDA and
 * other libraries lazily, during a first run). Two tables: the next snapshot is written into
 * the one not in use and then published with one atomic store, so a handler on another
 * thread never reads a half-written table. The handler turns a PC into "<path>+0x<vaddr>"
 * (vaddr = PC - load bias, the address the file's symbols use) by a pure table lookup; the
 * tool names the function later (symbolize.c). */
#define CRASH_MODS 192
#define CRASH_SEGS 8
#define CRASH_PATH (AF_FRAME_LEN - 20) /* room for "+0x" and 16 hex digits */

typedef struct crash_module {
    uintptr_t bias; /* dlpi_addr */
    int n_segs;
    uintptr_t lo[CRASH_SEGS], hi[CRASH_SEGS]; /* PT_LOAD ranges in memory */
    char path[CRASH_PATH];                    /* "" when the path does not fit */
} crash_module;

typedef struct crash_table {
    int n;
    crash_module m[CRASH_MODS];
} crash_table;

static crash_table crash_tables[2];
static crash_table *crash_table_now; /* read by the handler, atomically */
static unsigned long long crash_adds = ~0ULL, crash_subs = ~0ULL; /* at the last snapshot */
static char crash_self[CRASH_PATH]; /* the main program's path (its dlpi_name is "") */

static int snapshot_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    crash_table *t = arg;
    if (t->n == CRASH_MODS)
        return 1;
    crash_module *m = &t->m[t->n];
    const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
                       : t->n == 0                           ? crash_self
                                                             : "";
    size_t len = strlen(name);
    if (len >= sizeof m->path) /* the tool could not open a cut path; keep the bare module */
        len = 0;
    memcpy(m->path, name, len);
    m->path[len] = '\0';
    m->bias = (uintptr_t)info->dlpi_addr;
    m->n_segs = 0;
    for (int i = 0; i < info->dlpi_phnum && m->n_segs < CRASH_SEGS; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            m->lo[m->n_segs] = m->bias + (uintptr_t)info->dlpi_phdr[i].p_vaddr;
            m->hi[m->n_segs] = m->lo[m->n_segs] + (uintptr_t)info->dlpi_phdr[i].p_memsz;
            m->n_segs++;
        }
    t->n++;
    return 0;
}

static int loader_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1; /* the first module is enough: the counters are global */
}

/* Take a new snapshot if a module was loaded or unloaded since the last one (cheap when not:
 * one dl_iterate_phdr callback). */
static void crash_modules_refresh(void)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(loader_counts, c);
    if (c[0] == crash_adds && c[1] == crash_subs)
        return;
    if (!crash_self[0]) {
        ssize_t n = readlink("/proc/self/exe", crash_self, sizeof crash_self - 1);
        crash_self[n > 0 ? n : 0] = '\0';
    }
    crash_table *next =
        LOAD(&crash_table_now) == &crash_tables[0] ? &crash_tables[1] : &crash_tables[0];
    next->n = 0;
    dl_iterate_phdr(snapshot_module, next);
    STORE(&crash_table_now, next);
    crash_adds = c[0];
    crash_subs = c[1];
}

/* Async-signal-safe: append src to out at *o, within cap (one byte kept for the NUL). */
static void crash_put(char *out, size_t *o, size_t cap, const char *src)
{
    while (*src && *o + 1 < cap)
        out[(*o)++] = *src++;
}

static void crash_put_hex(char *out, size_t *o, size_t cap, uint64_t v)
{
    char digits[17];
    int n = 0;
    do
        digits[n++] = "0123456789abcdef"[v & 15];
    while ((v >>= 4) && n < 16);
    crash_put(out, o, cap, "0x");
    while (n > 0 && *o + 1 < cap)
        out[(*o)++] = digits[--n];
}

/* Async-signal-safe: one raw frame, "<path>+0x<vaddr>" or "0x<pc>". */
static void crash_frame(void *addr, char *out, size_t cap)
{
    uintptr_t pc = (uintptr_t)addr;
    const crash_table *t = LOAD(&crash_table_now);
    size_t o = 0;
    for (int i = 0; t && i < t->n; i++) {
        const crash_module *m = &t->m[i];
        for (int k = 0; k < m->n_segs; k++)
            if (pc >= m->lo[k] && pc < m->hi[k] && m->path[0]) {
                crash_put(out, &o, cap, m->path);
                crash_put(out, &o, cap, "+");
                crash_put_hex(out, &o, cap, (uint64_t)(pc - m->bias));
                out[o] = '\0';
                return;
            }
    }
    crash_put_hex(out, &o, cap, (uint64_t)pc);
    out[o] = '\0';
}

static void crash_handler(int signo, siginfo_t *si, void *uctx)
{
    static af_result crash;
    af_result *r = &crash;
    memset(r, 0, sizeof *r);
    r->cls = AF_RES_SIGNAL;
    r->signo = signo;
    r->fault_addr = (uint64_t)(uintptr_t)si->si_addr;
    void *pc = NULL;
#if defined(__x86_64__)
    pc = (void *)((ucontext_t *)uctx)->uc_mcontext.gregs[REG_RIP];
#endif
    void *trace[64];
    int n = backtrace(trace, 64), start = 0;
    for (int i = 0; i < n; i++)
        if (trace[i] == pc) {
            start = i;
            break;
        }
    if (!start && pc) { /* the PC first, then what follows the signal frame */
        crash_frame(pc, r->frames[r->n_frames++], sizeof r->frames[0]);
        start = n > 2 ? 2 : n;
    }
    for (int i = start; i < n && r->n_frames < AF_MAX_FRAMES; i++)
        crash_frame(trace[i], r->frames[r->n_frames++], sizeof r->frames[0]);
    /* no signature here: the tool symbolizes the frames and signs (af_pool_run) */
    const char *k = af_cuda_faulting_kernel();
    if (k) {
        /* a kernel's launch failed first (triage runs): the signal is torch giving up on the
         * sticky error while unwinding, e.g. a failed free aborting; the fault is the news */
        size_t o = 0;
        r->cls = AF_RES_DEVICE_FAULT;
        crash_put(r->cuda_error, &o, sizeof r->cuda_error, af_cuda_faulting_error());
        r->cuda_error[o] = '\0';
        o = 0;
        crash_put(r->kernel, &o, sizeof r->kernel, k);
        r->kernel[o] = '\0';
        o = 0;
        crash_put(r->message, &o, sizeof r->message, "then the worker died of ");
        crash_put(r->message, &o, sizeof r->message, af_signal_name(signo));
        r->message[o] = '\0';
    }
    if (crash_mb) { /* post it as the case's result, then die */
        af_result_copy(&crash_mb->r, r);
        STORE(&crash_mb->result_seq, LOAD(&crash_mb->case_seq));
        futex(&crash_mb->result_seq, FUTEX_WAKE, 1, NULL);
    }
    raise(signo); /* SA_RESETHAND: the default action now ends the process */
}

static void install_crash_handlers(mailbox *mb)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    void *warm[2];
    backtrace(warm, 2);      /* loads libgcc_s now, not inside the handler */
    crash_modules_refresh(); /* after the model .so and libgcc_s are in */
    crash_mb = mb;
    struct sigaction sa = {0};
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

static void send_hello(int fd, const af_error *e, const char *versions, const msg_hello *times)
{
    msg_hello h = {0};
    if (times) {
        h.t_enter = times->t_enter;
        h.t_torch = times->t_torch;
        h.t_warm = times->t_warm;
        memcpy(h.t_load, times->t_load, sizeof h.t_load);
    }
    h.type = MSG_HELLO;
    h.ok = e == NULL;
    if (e) {
        h.errcode = e->code;
        snprintf(h.error, sizeof h.error, "%s", e->message);
    }
    if (versions)
        snprintf(h.versions, sizeof h.versions, "%s", versions);
    send_msg(fd, &h, sizeof h);
}

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

/* Wait for the next case: spin, then sleep on the counter. Returns the new case_seq. */
static uint32_t worker_wait_case(mailbox *mb, uint32_t last)
{
    double t0 = af_now_s(), now = t0;
    unsigned step = 0;
    uint32_t seq;
    while ((seq = LOAD(&mb->case_seq)) == last) {
        if (now - t0 < SPIN_S) {
            spin_step(&step, &now);
            continue;
        }
        STORE(&mb->worker_waiting, 1);
        if (LOAD(&mb->case_seq) == last)
            futex(&mb->case_seq, FUTEX_WAIT, last, NULL);
        STORE(&mb->worker_waiting, 0);
    }
    return seq;
}

static void worker_main(af_pool *pool, int fd, mailbox *mb, int preloaded, int triage, pid_t zygote)
{
    af_error err = {0};
    msg_hello times = {0};
    times.t_enter = af_now_s();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != zygote) /* it died before the death signal was armed */
        _exit(0);
    if (pool->opts.check_inputs)
        setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 1);
    if (triage) {
        setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
        setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", 1);
        af_cuda_sync_each_launch(1);
    }
    double t = af_now_s();
    if (!preloaded && af_torch_load(pool->torch_lib, pool->cuda, &err) != 0) {
        send_hello(fd, &err, NULL, NULL);
        _exit(0);
    }
    times.t_torch = preloaded ? 0 : af_now_s() - t;
    af_runtime *rt = af_runtime_open(pool->pkg, pool->spec, pool->device, &err);
    if (!rt) {
        send_hello(fd, &err, NULL, NULL);
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
    install_crash_handlers(mb);
    char versions[512];
    af_runtime_versions(rt, versions, sizeof versions);
    uint32_t seq = LOAD(&mb->case_seq); /* before HELLO: a case may follow it at once */
    send_hello(fd, NULL, versions, &times);

    for (;;) {
        seq = worker_wait_case(mb, seq);
        af_case c = mb->c;
        __atomic_store_n(&mb->taken_seq, seq, __ATOMIC_RELEASE); /* read only after a death */
        af_result res;
        af_runtime_dump_to(rt, LOAD(&mb->dump_outputs) ? pool->arena : NULL, pool->arena_bytes);
        if (af_runtime_run(rt, &c, &res, &err) != 0) {
            memset(&res, 0, sizeof res);
            res.cls = AF_RES_WORKER_LOST;
            snprintf(res.message, sizeof res.message, "harness: %s", err.message);
            af_result_sign(&res);
        }
        af_result_copy(&mb->r, &res);
        STORE(&mb->result_seq, seq);
        if (LOAD(&mb->tool_waiting))
            futex(&mb->result_seq, FUTEX_WAKE, 1, NULL);
        if (af_runtime_is_poisoned(rt))
            _exit(0);            /* a sticky CUDA error: this process can run nothing more */
        crash_modules_refresh(); /* a run may have loaded libraries (CUDA's, lazily) */
    }
}

/* ---- the zygote ------------------------------------------------------------------------ */

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
        send_fds(ctl, &m, sizeof m, fds, 3);
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
        send_hello(ctl, &err, NULL, NULL);
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
    if (preload && af_torch_load(pool->torch_lib, pool->cuda, &err) != 0) {
        send_hello(ctl, &err, NULL, NULL);
        _exit(0);
    }
    send_hello(ctl, NULL, NULL, NULL);
    for (;;) {
        int st;
        pid_t dead;
        while ((dead = waitpid(-1, &st, WNOHANG)) > 0) {
            kids_remove(dead);
            msg_ctl m = {MSG_EXITED, dead, st};
            send_msg(ctl, &m, sizeof m);
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
                send_msg(ctl, &fail, sizeof fail);
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

/* ---- the pool (in the tool's process) --------------------------------------------------- */

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
    if (wait_readable(pool->ctl, timeout_s) != 1)
        return -1;
    ssize_t n = recv_fds(pool->ctl, m, sizeof *m, fds, 3);
    if (n != sizeof *m)
        return -1;
    if (m->type == MSG_EXITED)
        note_exit(pool, m->pid, m->status);
    return (int)m->type;
}

/* Exit status of a worker, as reported by the zygote; -1 if unknown within timeout. */
static int worker_status(af_pool *pool, pid_t pid, double timeout_s)
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

/* An empty slot: no process, no descriptors. */
static void worker_clear(worker *w)
{
    memset(w, 0, sizeof *w);
    w->fd = w->errfd = -1;
}

static void worker_close(worker *w)
{
    if (w->mb)
        munmap(w->mb, sizeof(mailbox));
    if (w->fd >= 0)
        close(w->fd);
    if (w->errfd >= 0)
        close(w->errfd);
    worker_clear(w);
}

static int spawn_request_flags(af_pool *pool, worker *w, int flags, af_error *err)
{
    static msg_spawn req; /* large: not on the stack */
    memset(&req, 0, sizeof req);
    req.h = (msg_ctl){MSG_SPAWN, 0, flags};
    if (!(flags & 1) && pool->opts.warm_up > 0 && pool->have_ok) {
        req.warm = 1;
        req.c = pool->ok_case;
    }
    w->t_request = af_now_s();
    if (send_msg(pool->ctl, &req, sizeof req) != sizeof req)
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

static int spawn_request(af_pool *pool, worker *w, af_error *err)
{
    return spawn_request_flags(pool, w, 0, err);
}

static void kill_worker(af_pool *pool, worker *w)
{
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        drain_stderr(pool, w);
        worker_status(pool, w->pid, 2.0);
    }
    worker_close(w);
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
    int readable = wait_readable(w->fd, left > 0 ? left : 0);
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
        int st = worker_status(pool, pid, 2.0);
        if (LOAD(&w->mb->warm_state) == 1) {
            /* the model loaded; the warm-up case failed this time (flaky, or a fault left
             * by another process on the device): not a load failure. Take another worker;
             * after 3 such deaths, warm up no more */
            worker_close(w);
            if (++pool->stats.warm_deaths >= 3)
                pool->opts.warm_up = -1;
            af_error_set(err, AF_E_RUNTIME, "the worker died warming up");
            return READY_DIED_WARMING;
        }
        if (st != -1 && WIFSIGNALED(st))
            snprintf(how, sizeof how, " (killed by %s)", af_signal_name(WTERMSIG(st)));
        else if (st != -1 && WIFEXITED(st))
            snprintf(how, sizeof how, " (exit %d)", WEXITSTATUS(st));
        worker_close(w);
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

int af_find_torch_lib(const char *hint, char *dir, size_t len, af_error *err)
{
    char probe[4300];
    const char *env = getenv("AOTI_FUZZ_TORCH_LIB");
    const char *given = hint && *hint ? hint : (env && *env ? env : NULL);
    if (given) {
        snprintf(probe, sizeof probe, "%s/libtorch.so", given);
        if (access(probe, R_OK) != 0)
            return af_error_set(err, AF_E_USAGE, "no libtorch.so in %s%s", given,
                                hint && *hint ? "" : " (from AOTI_FUZZ_TORCH_LIB)");
        snprintf(dir, len, "%s", given);
        return 0;
    }
    const char *py = getenv("AOTI_FUZZ_PYTHON");
    char cmd[512];
    snprintf(
        cmd, sizeof cmd,
        "'%s' -c 'import os,torch;print(os.path.join(os.path.dirname(torch.__file__),\"lib\"))' "
        "2>/dev/null",
        py && *py && !strchr(py, '\'') ? py : "python3");
    FILE *p = popen(cmd, "r");
    char line[4096] = "";
    if (p) {
        if (!fgets(line, sizeof line, p))
            line[0] = '\0';
        pclose(p);
    }
    line[strcspn(line, "\n")] = '\0';
    snprintf(probe, sizeof probe, "%s/libtorch.so", line);
    if (!line[0] || access(probe, R_OK) != 0)
        return af_error_set(err, AF_E_USAGE,
                            "cannot find libtorch: give --torch-lib DIR, set AOTI_FUZZ_TORCH_LIB, "
                            "or make 'python3 -c \"import torch\"' work");
    snprintf(dir, len, "%s", line);
    return 0;
}

static int top_up_spares(af_pool *pool, af_error *err);

/* Fork the zygote and wait until it has libtorch in. */
static int zygote_start(af_pool *pool, af_error *err)
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
    if (wait_readable(pool->ctl, 120.0) == 1)
        n = recv(pool->ctl, &h, sizeof h, 0);
    if (n != sizeof h || h.type != MSG_HELLO)
        return af_error_set(err, AF_E_RUNTIME, "the zygote process died while loading libtorch");
    if (!h.ok)
        return af_error_set(err, h.errcode ? (af_errcode)h.errcode : AF_E_RUNTIME, "%s", h.error);
    return 0;
}

/* Whether the zygote has died (it is our child: reaped here). */
static int zygote_gone(af_pool *pool)
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

/* The zygote died (killed from outside, most likely): its workers went with it (their
 * death signal). Drop them and start a new zygote; the next case gets a fresh worker. */
static int zygote_restart(af_pool *pool, af_error *err)
{
    if (pool->active.pid)
        kill(-pool->active.pid, SIGKILL);
    worker_close(&pool->active);
    for (int i = 0; i < pool->n_spares; i++) {
        if (pool->spares[i].pid)
            kill(-pool->spares[i].pid, SIGKILL);
        worker_close(&pool->spares[i]);
    }
    pool->n_spares = 0;
    if (pool->ctl >= 0)
        close(pool->ctl);
    pool->ctl = -1;
    pool->stats.zygote_restarts++;
    if (pool->opts.verbose)
        fprintf(stderr, "aotif: the zygote process died; starting another\n");
    return zygote_start(pool, err);
}

af_pool *af_pool_start(const af_package *pkg, const af_spec *spec, const af_worker_opts *opts,
                       af_error *err)
{
    double t0 = af_now_s();
    af_pool *pool = calloc(1, sizeof *pool);
    if (!pool) {
        af_error_set(err, AF_E_IO, "out of memory");
        return NULL;
    }
    pool->pkg = pkg;
    pool->spec = spec;
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
    worker_clear(&pool->active);
    for (int i = 0; i < AF_MAX_SPARES; i++)
        worker_clear(&pool->spares[i]);
    const char *dev = pool->opts.device && *pool->opts.device ? pool->opts.device : pkg->device;
    if (!af_device_name_ok(dev)) {
        af_error_set(err, AF_E_USAGE, "bad device '%s' (cpu, cuda or cuda:N)", dev);
        goto fail;
    }
    if (af_device_is_cuda(dev) != af_device_is_cuda(pkg->device)) {
        /* AOTInductor compiles for one device kind: a CPU package has no GPU kernels, a CUDA
         * package's kernels are Triton's (the container refuses the other kind at load) */
        af_error_set(err, AF_E_USAGE, "device %s: %s was compiled for %s and runs only there", dev,
                     pkg->path, af_device_is_cuda(pkg->device) ? "cuda" : "cpu");
        goto fail;
    }
    snprintf(pool->device, sizeof pool->device, "%s", strcmp(dev, "cuda") == 0 ? "cuda:0" : dev);
    pool->cuda = af_device_is_cuda(pool->device);
    if (af_find_torch_lib(pool->opts.torch_lib, pool->torch_lib, sizeof pool->torch_lib, err) != 0)
        goto fail;
    if (pool->opts.warm_spare == 0)
        pool->opts.warm_spare = pool->cuda;
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
        pool->spares_wanted = 1;
    }

    if (zygote_start(pool, err) != 0)
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

/* Post a case to worker w and wait for its result: spin about as long as cases take
 * lately, then sleep on the result counter in short slices, looking in between whether
 * the worker is still alive (its socket hangs up when it dies). Returns 1 with *out
 * filled, 0 on timeout, -1 when the worker died without posting a result. */
static int exchange(af_pool *pool, worker *w, const af_case *c, double spin, af_result *out)
{
    mailbox *mb = w->mb;
    mb->c = *c;
    STORE(&mb->dump_outputs, (uint32_t)pool->dump_next);
    uint32_t seq = ++w->seq;
    STORE(&mb->case_seq, seq);
    if (LOAD(&mb->worker_waiting))
        futex(&mb->case_seq, FUTEX_WAKE, 1, NULL);
    double t0 = af_now_s(), now = t0;
    unsigned step = 0;
    for (;;) {
        uint32_t got = LOAD(&mb->result_seq);
        if (got == seq) {
            af_result_copy(out, &mb->r);
            return 1;
        }
        if (now - t0 < spin) {
            spin_step(&step, &now);
            continue;
        }
        now = af_now_s();
        double el = now - t0;
        if (el >= pool->opts.timeout_s)
            return 0;
        struct pollfd p = {w->fd, POLLIN, 0};
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN))) {
            /* gone (or going): a crash handler posts before the process ends */
            if (LOAD(&mb->result_seq) == seq) {
                af_result_copy(out, &mb->r);
                return 1;
            }
            return -1;
        }
        double left = pool->opts.timeout_s - el;
        struct timespec ts = {0, (long)((left < 0.005 ? left : 0.005) * 1e9)};
        STORE(&mb->tool_waiting, 1);
        if (LOAD(&mb->result_seq) != seq)
            futex(&mb->result_seq, FUTEX_WAIT, got, &ts);
        STORE(&mb->tool_waiting, 0);
    }
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

/* Pull the model's own error text out of the worker's stderr. */
static void message_from_stderr(af_pool *pool, af_result *r)
{
    const char *best = NULL;
    for (const char *p = pool->errbuf; (p = strstr(p, "Error: ")); p++)
        if (p == pool->errbuf || p[-1] == '\n')
            best = p + 7;
    if (!best) {
        const char *e = strstr(pool->errbuf, "Exception in aoti_torch: ");
        if (e)
            best = e + 25;
    }
    if (best && !r->message[0]) {
        size_t len = strcspn(best, "\n");
        snprintf(r->message, sizeof r->message, "%.*s", (int)len, best);
    }
}

/* Device-side asserts: keep the assert text and name the Triton kernel when stderr does. */
static void device_fault_details(af_pool *pool, af_result *r)
{
    const char *a = strstr(pool->errbuf, "Assertion `");
    if (a) {
        a += 11;
        size_t len = strcspn(a, "`'\n");
        snprintf(r->message, sizeof r->message, "%.*s", (int)len, a);
    }
    const char *k = strstr(pool->errbuf, "triton_");
    if (k && !r->kernel[0]) { /* a name the launch itself gave (triage runs) is exact */
        size_t len = strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_");
        snprintf(r->kernel, sizeof r->kernel, "%.*s", (int)len, k);
    }
}

/* Re-run a device fault once with blocking launches: the failing launch then reports
 * itself, which can name the kernel the asynchronous run could not. The signature stays
 * the one of the normal run; the re-run's words go to r->triage (and r->kernel if empty). */
static void triage_rerun(af_pool *pool, const af_case *c, af_result *r)
{
    worker tw;
    worker_clear(&tw);
    af_error err = {0};
    char keep_err[ERRBUF_MAX + 1];
    size_t keep_len = pool->errlen;
    memcpy(keep_err, pool->errbuf, keep_len + 1);
    pool->errlen = 0;
    pool->errbuf[0] = '\0';
    if (spawn_request_flags(pool, &tw, 1, &err) != 0 || wait_ready(pool, &tw, &err) != 0) {
        snprintf(r->triage, sizeof r->triage, "re-run failed: %s", err.message);
        goto done;
    }
    af_result t;
    memset(&t, 0, sizeof t);
    int got = exchange(pool, &tw, c, 0, &t);
    drain_stderr(pool, &tw);
    if (got == 1) {
        symbolize(pool, &t);
        device_fault_details(pool, &t);
        if (!t.message[0])
            message_from_stderr(pool, &t);
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
    int loading = !w->ready && wait_readable(w->fd, 0) != 1; /* no HELLO yet */
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
    if (zygote_gone(pool) && zygote_restart(pool, err) != 0)
        return -1;
    if (pool->n_spares == 0)
        return spawn_request(pool, &pool->active, err);
    if (replacing)
        note_replacement(pool, &pool->spares[0]);
    pool->active = pool->spares[0];
    memmove(&pool->spares[0], &pool->spares[1],
            sizeof pool->spares[0] * (size_t)(pool->n_spares - 1));
    worker_clear(&pool->spares[--pool->n_spares]);
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

int af_pool_run(af_pool *pool, const af_case *c, af_result *out, af_error *err)
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
        if (!never_ran &&
            ((out->cls != AF_RES_WORKER_LOST && out->cls != AF_RES_TIMEOUT) || !zygote_gone(pool)))
            return rc;
        pool->stats.cases--; /* it is counted once, by the run that answers */
        pool->stats.cases_rerun++;
    }
}

static int run_once(af_pool *pool, const af_case *c, af_result *out, int *never_ran, af_error *err)
{
    memset(out, 0, sizeof *out);
    af_error cerr = {0};
    if (af_case_check(pool->spec, c, &cerr) != 0) {
        out->cls = AF_RES_REFUSED;
        snprintf(out->message, sizeof out->message, "%s", cerr.message);
        af_result_sign(out);
        return 0;
    }
    int64_t bytes = af_case_input_bytes(pool->spec, c);
    if (bytes > pool->opts.max_input_bytes) {
        out->cls = AF_RES_REFUSED;
        snprintf(out->message, sizeof out->message,
                 "inputs need %lld bytes, over the budget of %lld (--max-input-bytes)",
                 (long long)bytes, (long long)pool->opts.max_input_bytes);
        af_result_sign(out);
        return 0;
    }
    if (ensure_active(pool, err) != 0)
        return -1;
    worker *w = &pool->active;
    drain_stderr(pool, w);
    pool->errlen = 0;
    pool->errbuf[0] = '\0';

    pool->stats.cases++;
    /* spin about as long as cases take lately (a blocked wait costs a wake-up that can be
     * longer than a small model's whole run), within [SPIN_S, 2 ms] */
    double spin = 1.5 * pool->ema_case_s + SPIN_S;
    if (spin > 2e-3)
        spin = 2e-3;
    double t_send = af_now_s();
    int got = exchange(pool, w, c, spin, out);
    double dt = af_now_s() - t_send;
    pool->ema_case_s = 0.9 * pool->ema_case_s + 0.1 * dt;
    if (w->n_cases++ == 0) { /* a fresh worker's first case: CUDA loads kernels lazily */
        pool->stats.first_cases++;
        pool->stats.first_case_seconds += dt;
    }
    int ready = got != 0;
    drain_stderr(pool, w);

    if (ready == 0) {
        out->cls = AF_RES_TIMEOUT;
        snprintf(out->message, sizeof out->message, "no result within %.1f s; worker killed",
                 pool->opts.timeout_s);
        kill_worker(pool, w);
    } else if (got == 1) {
        symbolize(pool, out);
        if (out->cls == AF_RES_SIGNAL || out->cls == AF_RES_DEVICE_FAULT ||
            out->cls == AF_RES_WORKER_LOST) {
            /* the worker is dying or done: reap it and start afresh next time */
            double t_dying = af_now_s();
            pool->stats.faults++;
            pool->stats.fault_case_seconds += t_dying - t_send;
            wait_readable(w->fd, 5.0); /* its socket hangs up when it is gone */
            pool->stats.fault_exit_seconds += af_now_s() - t_dying;
            drain_stderr(pool, w);
            kill_worker(pool, w);
        }
    } else {
        /* the worker died without a report (killed, exited, or crashed before it could) */
        *never_ran = LOAD(&w->mb->taken_seq) != w->seq;
        pid_t pid = w->pid;
        kill(-pid, SIGKILL);
        drain_stderr(pool, w);
        int st = worker_status(pool, pid, 5.0);
        worker_close(w);
        out->exit_status = -1;
        if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
            out->cls = AF_RES_SIGNAL;
            out->signo = WTERMSIG(st);
        } else {
            out->cls = AF_RES_WORKER_LOST;
            if (st != -1 && WIFSIGNALED(st))
                out->signo = WTERMSIG(st);
            else if (st != -1 && WIFEXITED(st))
                out->exit_status = WEXITSTATUS(st);
        }
    }
    if (out->cls == AF_RES_RUNTIME_ERROR || out->cls == AF_RES_OOM ||
        out->cls == AF_RES_WORKER_LOST)
        message_from_stderr(pool, out);
    if (out->cls == AF_RES_RUNTIME_ERROR &&
        (strstr(out->message, "can't allocate memory") || strstr(out->message, "out of memory")))
        out->cls = AF_RES_OOM;
    if (out->cls == AF_RES_DEVICE_FAULT) {
        device_fault_details(pool, out);
        if (pool->opts.triage) {
            af_result_sign(out);
            af_pool_triage(pool, c, out); /* adds words, not a new bug: the signature stays */
            return 0;
        }
    }
    if (out->cls == AF_RES_OK && !pool->have_ok) {
        pool->ok_case = *c;
        pool->have_ok = 1;
    }
    af_result_sign(out);
    return 0;
}

void af_pool_recycle(af_pool *pool)
{
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
    worker_close(&pool->active);
    for (int i = 0; i < pool->n_spares; i++)
        worker_close(&pool->spares[i]);
    if (pool->ctl >= 0) {
        msg_ctl q = {MSG_QUIT, 0, 0};
        send_msg(pool->ctl, &q, sizeof q);
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
