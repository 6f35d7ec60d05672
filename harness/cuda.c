/* cuda.c — CUDA Driver API through dlopen; see cuda_api.h.
 *
 * torch creates and binds the device's primary context when the container is created; we
 * retain the same primary context so cuCtxSynchronize waits for the model's kernels. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76

struct af_cuda {
    void *lib;
    CUdevice dev;
    CUcontext ctx;
    int cc_major, cc_minor, driver_version;
    char name[128];
    CUresult (*init)(unsigned);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_name)(char *, int, CUdevice);
    CUresult (*device_attr)(int *, int, CUdevice);
    CUresult (*driver_version_fn)(int *);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*primary_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_sync)(void);
    CUresult (*error_name)(CUresult, const char **);
    CUresult (*error_string)(CUresult, const char **);
    CUresult (*mem_get_info)(size_t *, size_t *);
    CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*memset_d16)(CUdeviceptr, unsigned short, size_t);
    CUresult (*memset_d32)(CUdeviceptr, unsigned int, size_t);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t);
};

int af_cuda_driver_present(char *why, size_t len)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, len, "%s", dlerror());
        return 0;
    }
    dlclose(lib);
    return 1;
}

static const char *err_name(af_cuda *cu, CUresult r)
{
    const char *s = NULL;
    if (cu->error_name && cu->error_name(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_UNKNOWN";
}

af_cuda *af_cuda_open(int idx, const char *want_cc, af_error *err)
{
    af_cuda *cu = calloc(1, sizeof *cu);
    if (!cu) {
        af_error_set(err, AF_E_IO, "out of memory");
        return NULL;
    }
    cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        af_error_set(err, AF_E_RUNTIME,
                     "CUDA package, but no usable GPU: the NVIDIA driver (libcuda.so.1) is not "
                     "installed here");
        goto fail;
    }
#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&cu->field = dlsym(cu->lib, name);                                               \
        if (!cu->field) {                                                                          \
            af_error_set(err, AF_E_RUNTIME, "libcuda.so.1 lacks %s", name);                        \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
    SYM(init, "cuInit");
    SYM(device_count, "cuDeviceGetCount");
    SYM(device_get, "cuDeviceGet");
    SYM(device_name, "cuDeviceGetName");
    SYM(device_attr, "cuDeviceGetAttribute");
    SYM(driver_version_fn, "cuDriverGetVersion");
    SYM(primary_retain, "cuDevicePrimaryCtxRetain");
    SYM(primary_release, "cuDevicePrimaryCtxRelease_v2");
    SYM(ctx_set_current, "cuCtxSetCurrent");
    SYM(ctx_sync, "cuCtxSynchronize");
    SYM(error_name, "cuGetErrorName");
    SYM(error_string, "cuGetErrorString");
    SYM(mem_get_info, "cuMemGetInfo_v2");
    SYM(memset_d8, "cuMemsetD8_v2");
    SYM(memset_d16, "cuMemsetD16_v2");
    SYM(memset_d32, "cuMemsetD32_v2");
    SYM(memcpy_htod, "cuMemcpyHtoD_v2");
    SYM(memcpy_dtod, "cuMemcpyDtoD_v2");
    CUresult r = cu->init(0);
    if (r != CUDA_SUCCESS) {
        af_error_set(err, AF_E_RUNTIME, "CUDA package, but no usable GPU: cuInit: %s",
                     err_name(cu, r));
        goto fail;
    }
    int count = 0;
    cu->device_count(&count);
    if (idx < 0 || idx >= count) {
        af_error_set(err, AF_E_RUNTIME,
                     "CUDA package, but device cuda:%d does not exist (%d GPU%s)", idx, count,
                     count == 1 ? "" : "s");
        goto fail;
    }
    cu->device_get(&cu->dev, idx);
    cu->device_name(cu->name, sizeof cu->name, cu->dev);
    cu->device_attr(&cu->cc_major, CU_ATTR_CC_MAJOR, cu->dev);
    cu->device_attr(&cu->cc_minor, CU_ATTR_CC_MINOR, cu->dev);
    cu->driver_version_fn(&cu->driver_version);
    if (want_cc && want_cc[0]) {
        char have[16];
        snprintf(have, sizeof have, "%d%d", cu->cc_major, cu->cc_minor);
        if (strcmp(have, want_cc) != 0) {
            af_error_set(err, AF_E_RUNTIME,
                         "package was compiled for compute capability %s but cuda:%d (%s) has %s",
                         want_cc, idx, cu->name, have);
            goto fail;
        }
    }
    if ((r = cu->primary_retain(&cu->ctx, cu->dev)) != CUDA_SUCCESS ||
        (r = cu->ctx_set_current(cu->ctx)) != CUDA_SUCCESS) {
        af_error_set(err, AF_E_RUNTIME, "cannot use cuda:%d: %s", idx, err_name(cu, r));
        goto fail;
    }
    return cu;
fail:
    af_cuda_close(cu);
    return NULL;
}

int af_cuda_sync(af_cuda *cu, char *name, size_t name_len, char *msg, size_t msg_len)
{
    CUresult r = cu->ctx_sync();
    if (r == CUDA_SUCCESS)
        return 0;
    const char *s = NULL;
    snprintf(name, name_len, "%s", err_name(cu, r));
    if (cu->error_string(r, &s) == CUDA_SUCCESS && s && !msg[0])
        snprintf(msg, msg_len, "%s (CUDA error %d)", s, r);
    return r == CUDA_ERROR_OUT_OF_MEMORY ? 2 : 1;
}

int af_cuda_memset_value(af_cuda *cu, void *dptr, af_dtype dt, int64_t numel, int ones)
{
    CUdeviceptr p = (CUdeviceptr)(uintptr_t)dptr;
    size_t n = (size_t)numel;
    if (!ones)
        return cu->memset_d8(p, 0, n * af_dtype_size(dt)) == CUDA_SUCCESS ? 0 : -1;
    switch (dt) {
    case AF_DT_FLOAT32:
        return cu->memset_d32(p, 0x3f800000u, n) == CUDA_SUCCESS ? 0 : -1;
    case AF_DT_INT32:
        return cu->memset_d32(p, 1u, n) == CUDA_SUCCESS ? 0 : -1;
    case AF_DT_FLOAT16:
        return cu->memset_d16(p, 0x3c00, n) == CUDA_SUCCESS ? 0 : -1;
    case AF_DT_BFLOAT16:
        return cu->memset_d16(p, 0x3f80, n) == CUDA_SUCCESS ? 0 : -1;
    case AF_DT_INT16:
        return cu->memset_d16(p, 1, n) == CUDA_SUCCESS ? 0 : -1;
    case AF_DT_INT8:
    case AF_DT_UINT8:
    case AF_DT_BOOL:
        return cu->memset_d8(p, 1, n) == CUDA_SUCCESS ? 0 : -1;
    default:
        return -1; /* 64-bit patterns: no cuMemsetD64 */
    }
}

int af_cuda_copy(af_cuda *cu, void *dst, const void *src, size_t bytes, int from_host)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst;
    CUresult r = from_host ? cu->memcpy_htod(d, src, bytes)
                           : cu->memcpy_dtod(d, (CUdeviceptr)(uintptr_t)src, bytes);
    return r == CUDA_SUCCESS ? 0 : -1;
}

int64_t af_cuda_free_bytes(af_cuda *cu)
{
    size_t free_b = 0, total = 0;
    if (!cu || cu->mem_get_info(&free_b, &total) != CUDA_SUCCESS)
        return -1;
    return (int64_t)free_b;
}

void af_cuda_versions(const af_cuda *cu, char *buf, size_t len)
{
    snprintf(buf, len, "cuda driver: %d.%d\ngpu: %s (compute capability %d.%d)\n",
             cu->driver_version / 1000, (cu->driver_version % 1000) / 10, cu->name, cu->cc_major,
             cu->cc_minor);
}

void af_cuda_worker_defaults(void)
{
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 0);
}

void af_cuda_close(af_cuda *cu)
{
    if (!cu)
        return;
    /* the primary context is left retained: torch shares it and may still need it */
    if (cu->lib)
        dlclose(cu->lib);
    free(cu);
}

/* ---- kernel names ------------------------------------------------------------------------
 * A model's code loads its Triton kernels with cuModuleGetFunction and starts them with
 * cuLaunchKernel, both bound by name. The tools export these two symbols (harness/
 * CMakeLists.txt), so the model binds to the functions below: they remember each kernel's
 * name, pass the call on to libcuda unchanged and, in a triage run, synchronize after each
 * launch so that a fault is pinned on the kernel that caused it. */

typedef struct CUfunc_st *CUfunction;
typedef struct CUmod_st *CUmodule;
typedef struct CUstream_st *CUstream;

#define KNAMES_MAX 1024

static struct {
    CUfunction f;
    char name[128];
} knames[KNAMES_MAX];
static int n_knames;
static pthread_mutex_t knames_lock = PTHREAD_MUTEX_INITIALIZER;
static int sync_each_launch;
static char faulted[128];      /* kernel whose launch, or the synchronize after it, failed */
static char faulted_error[64]; /* and the CUDA error it failed with */

static void *real_driver_sym(const char *name)
{
    static void *lib;
    if (!lib)
        lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return lib ? dlsym(lib, name) : NULL;
}

#define CUDA_ERROR_NOT_FOUND 500

/* exported for the model's kernel loads and launches (see above) */
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream stream, void **params,
                        void **extra);

__attribute__((visibility("default"))) CUresult cuModuleGetFunction(CUfunction *hfunc,
                                                                    CUmodule hmod, const char *name)
{
    static CUresult (*real)(CUfunction *, CUmodule, const char *);
    if (!real && !(*(void **)&real = real_driver_sym("cuModuleGetFunction")))
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = real(hfunc, hmod, name);
    if (r == CUDA_SUCCESS && name) {
        pthread_mutex_lock(&knames_lock);
        if (n_knames < KNAMES_MAX) {
            knames[n_knames].f = *hfunc;
            snprintf(knames[n_knames].name, sizeof knames[n_knames].name, "%s", name);
            n_knames++;
        }
        pthread_mutex_unlock(&knames_lock);
    }
    return r;
}

static void note_fault(CUfunction f, CUresult r)
{
    pthread_mutex_lock(&knames_lock);
    for (int i = 0; i < n_knames && !faulted[0]; i++)
        if (knames[i].f == f) {
            CUresult (*name_of)(CUresult, const char **);
            const char *e = NULL;
            *(void **)&name_of = real_driver_sym("cuGetErrorName");
            if (!name_of || name_of(r, &e) != CUDA_SUCCESS || !e)
                e = "CUDA_ERROR_UNKNOWN";
            snprintf(faulted_error, sizeof faulted_error, "%s", e);
            snprintf(faulted, sizeof faulted, "%s", knames[i].name);
        }
    pthread_mutex_unlock(&knames_lock);
}

__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shared, CUstream stream, void **params, void **extra)
{
    static CUresult (*real)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **, void **);
    static CUresult (*sync)(void);
    if (!real && !(*(void **)&real = real_driver_sym("cuLaunchKernel")))
        return CUDA_ERROR_NOT_FOUND;
    if (sync_each_launch && !sync)
        *(void **)&sync = real_driver_sym("cuCtxSynchronize");
    /* a fault already pending belongs to whatever ran before: not to this kernel */
    if (sync_each_launch && sync && sync() != CUDA_SUCCESS)
        return real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
    CUresult r = real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
    if (sync_each_launch && sync && r == CUDA_SUCCESS)
        r = sync();
    if (sync_each_launch && r != CUDA_SUCCESS)
        note_fault(f, r);
    return r;
}

void af_cuda_sync_each_launch(int on)
{
    sync_each_launch = on;
}

const char *af_cuda_faulting_kernel(void)
{
    return faulted[0] ? faulted : NULL;
}

const char *af_cuda_faulting_error(void)
{
    return faulted[0] ? faulted_error : NULL;
}

int af_cuda_kernels_known(void)
{
    return n_knames;
}
