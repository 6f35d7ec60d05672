/* crash_report.c — the fatal-signal handler of a worker and what it needs ready beforehand;
 * the rules that hold here are in crash_report.h (async-signal-safe only: no malloc, no
 * stdio, no locks).
 *
 * Before the first case the worker installs the handlers on an alternate stack (a stack
 * overflow still gets its report) and takes the module table; between cases it refreshes
 * the table when the loader's counters moved. In the handler, each PC of the raw stack
 * becomes "<path>+0x<vaddr>" by a lookup in that table, written byte by byte. */
#include "crash_report.h"

#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "cuda_api.h"

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

void af_crash_modules_refresh(void)
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
        crash_mb->plain = 0;
        STORE(&crash_mb->result_seq, LOAD(&crash_mb->case_seq));
        af_futex(&crash_mb->result_seq, FUTEX_WAKE, 1, NULL);
    }
    raise(signo); /* SA_RESETHAND: the default action now ends the process */
}

void af_crash_install(mailbox *mb)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    void *warm[2];
    backtrace(warm, 2);         /* loads libgcc_s now, not inside the handler */
    af_crash_modules_refresh(); /* after the model .so and libgcc_s are in */
    crash_mb = mb;
    struct sigaction sa = {0};
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}
