/* cuda_start_probe.c — how fast can worker processes get a CUDA context, and what bounds it.
 *
 *     cuda_start_probe [SECONDS [PAR...]]      (defaults: 3 s, parallelism 1 2 3 4 8)
 *
 * On a model where most inputs hit a sticky CUDA fault (a device-side assert, an illegal
 * address), every fault costs aoti-fuzz a worker process and a new CUDA context, so the
 * fuzzer's rate is bounded by how many contexts per second the machine can create. This
 * probe measures that bound without libtorch or a model: for each parallelism P it keeps P
 * child processes in flight for SECONDS, each doing what a worker's start does in the
 * driver (cuInit, cuDevicePrimaryCtxRetain + cuCtxSetCurrent, one cuMemAlloc and a
 * synchronize, as the first case's upload would) and then exiting, so the context's teardown
 * overlaps the next ones' creation as a faulted worker's does. It prints one JSON object per
 * P: contexts per second, and the mean seconds of each phase. Run it under different
 * environments (CUDA_DEVICE_MAX_CONNECTIONS, CUDA_MODULE_LOADING, ...) to compare them.
 * libcuda.so.1 is dlopen'ed, as in the harness; with PROBE_DLOPEN=LIB (libtorch_cuda.so's
 * path) that library is dlopen'ed first, so the children fork from a process as large as
 * the zygote. Exit 2 when there is no usable GPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

typedef struct probe_api {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*ctx_sync)(void);
} probe_api;

typedef struct phases {
    double init, context, alloc, total; /* seconds, from the child's start */
    int rc;                             /* 0, or the first failing CUresult */
} phases;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* In the child: the worker's driver calls, timed; the result goes up the pipe. */
static void child(const probe_api *cu, int fd)
{
    phases p = {0};
    double t0 = now_s();
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr ptr;
    p.rc = cu->init(0);
    p.init = now_s() - t0;
    if (!p.rc)
        p.rc = cu->device_get(&dev, 0);
    if (!p.rc)
        p.rc = cu->primary_retain(&ctx, dev);
    if (!p.rc)
        p.rc = cu->ctx_set_current(ctx);
    p.context = now_s() - t0 - p.init;
    if (!p.rc)
        p.rc = cu->mem_alloc(&ptr, 1 << 20);
    if (!p.rc)
        p.rc = cu->ctx_sync();
    p.total = now_s() - t0;
    p.alloc = p.total - p.init - p.context;
    ssize_t w = write(fd, &p, sizeof p);
    _exit(w == (ssize_t)sizeof p ? 0 : 1);
}

typedef struct slot {
    pid_t pid;
    int fd;
} slot;

static int start_child(const probe_api *cu, slot *s)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        child(cu, pfd[1]);
    }
    close(pfd[1]);
    s->pid = pid;
    s->fd = pfd[0];
    return 0;
}

/* Wait for any child, read its phases; returns its slot index or -1. */
static int reap_one(slot *slots, int n, phases *out)
{
    int st;
    pid_t pid;
    do
        pid = wait(&st);
    while (pid < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        if (slots[i].pid != pid)
            continue;
        memset(out, 0, sizeof *out);
        if (read(slots[i].fd, out, sizeof *out) != (ssize_t)sizeof *out)
            out->rc = -1;
        close(slots[i].fd);
        slots[i].pid = 0;
        return i;
    }
    return -1;
}

static void run_par(const probe_api *cu, int par, double seconds)
{
    slot slots[64] = {{0}};
    double t0 = now_s(), sum_init = 0, sum_ctx = 0, sum_alloc = 0, sum_total = 0;
    int done = 0, failed = 0, live = 0;
    for (int i = 0; i < par; i++)
        live += start_child(cu, &slots[i]) == 0;
    while (live > 0) {
        phases p;
        int i = reap_one(slots, par, &p);
        if (i < 0)
            break;
        live--;
        if (p.rc) {
            failed++;
        } else {
            done++;
            sum_init += p.init;
            sum_ctx += p.context;
            sum_alloc += p.alloc;
            sum_total += p.total;
        }
        if (now_s() - t0 < seconds && failed < 3)
            live += start_child(cu, &slots[i]) == 0;
    }
    double el = now_s() - t0, d = done ? done : 1;
    printf("{\"parallel\": %d, \"seconds\": %.3f, \"contexts\": %d, \"failed\": %d, "
           "\"contexts_per_second\": %.2f, \"mean_seconds\": {\"cuInit\": %.4f, \"context\": %.4f, "
           "\"alloc_sync\": %.4f, \"total\": %.4f}}\n",
           par, el, done, failed, done / el, sum_init / d, sum_ctx / d, sum_alloc / d,
           sum_total / d);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    int pars[16] = {1, 2, 3, 4, 8}, n_pars = 5;
    if (argc > 2) {
        n_pars = 0;
        for (int i = 2; i < argc && n_pars < 16; i++) {
            int p = atoi(argv[i]);
            if (p < 1 || p > 64) {
                fprintf(stderr, "cuda_start_probe: parallelism wants 1..64, got '%s'\n", argv[i]);
                return 2;
            }
            pars[n_pars++] = p;
        }
    }
    if (!(seconds > 0 && seconds < 3600)) {
        fprintf(stderr, "cuda_start_probe: SECONDS wants a number in (0, 3600)\n");
        return 2;
    }
    /* dlopen only: no CUDA call in this process, so the children may still use CUDA */
    const char *pre = getenv("PROBE_DLOPEN");
    if (pre && pre[0] && !dlopen(pre, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "cuda_start_probe: PROBE_DLOPEN: %s\n", dlerror());
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cuda_start_probe: no usable GPU: %s\n", dlerror());
        return 2;
    }
    probe_api cu;
    *(void **)&cu.init = dlsym(h, "cuInit");
    *(void **)&cu.device_get = dlsym(h, "cuDeviceGet");
    *(void **)&cu.primary_retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.ctx_set_current = dlsym(h, "cuCtxSetCurrent");
    *(void **)&cu.mem_alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&cu.ctx_sync = dlsym(h, "cuCtxSynchronize");
    if (!cu.init || !cu.device_get || !cu.primary_retain || !cu.ctx_set_current || !cu.mem_alloc ||
        !cu.ctx_sync) {
        fprintf(stderr, "cuda_start_probe: libcuda.so.1 lacks a driver entry point\n");
        return 2;
    }
    for (int i = 0; i < n_pars; i++)
        run_par(&cu, pars[i], seconds);
    return 0;
}
