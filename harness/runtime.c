/* runtime.c — libtorch, the model .so and its container, inside the calling process.
 *
 * Everything here goes through libtorch's C ABI: the AOTInductorModelContainer* functions
 * exported by the model .so and the aoti_torch_* shim exported by libtorch. libtorch is
 * dlopen'ed RTLD_GLOBAL first because the model .so has no RPATH and resolves its shim
 * imports from the global scope. libcuda (Driver API) is dlopen'ed only for CUDA models,
 * to check the GPU before loading and to synchronize after each Run: CUDA faults surface
 * only at a sync, and they are sticky, so after one the process is poisoned. */
#include "aotif/runtime.h"
#include "aotif/clock.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_api.h"

typedef int32_t aoti_err;
typedef struct AtenTensorOpaque *tensor_t;
typedef struct ContainerOpaque *container_t;

/* The shim, resolved once from the global scope after af_torch_load. */
static struct shim {
    int loaded;
    aoti_err (*empty_strided)(int64_t, const int64_t *, const int64_t *, int32_t, int32_t, int32_t,
                              tensor_t *);
    aoti_err (*delete_tensor)(tensor_t);
    aoti_err (*get_data_ptr)(tensor_t, void **);
    aoti_err (*get_sizes)(tensor_t, int64_t **);
    aoti_err (*get_strides)(tensor_t, int64_t **);
    aoti_err (*get_dim)(tensor_t, int64_t *);
    aoti_err (*get_numel)(tensor_t, int64_t *);
    aoti_err (*get_dtype)(tensor_t, int32_t *);
    aoti_err (*get_device_type)(tensor_t, int32_t *);
    aoti_err (*copy_)(tensor_t, tensor_t, int32_t);
    aoti_err (*create_from_blob)(void *, int64_t, const int64_t *, const int64_t *, int64_t,
                                 int32_t, int32_t, int32_t, tensor_t *);
    const char *(*exception_what)(void); /* newer torch: the shim's last exception */
    int32_t dev_cpu, dev_cuda;
    int32_t dtype[AF_DT_COUNT]; /* torch's dtype code for each af_dtype */
} S;

static char torch_dir[4096];
static void *torch_handle, *torch_cuda_handle;

int af_torch_load(const char *dir, int want_cuda, af_error *err)
{
    char path[4200];
    if (!torch_handle) {
        snprintf(path, sizeof path, "%s/libtorch.so", dir);
        torch_handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (!torch_handle)
            return af_error_set(err, AF_E_RUNTIME, "cannot load libtorch: %s", dlerror());
        snprintf(torch_dir, sizeof torch_dir, "%s", dir);
    }
    if (want_cuda && !torch_cuda_handle) {
        snprintf(path, sizeof path, "%s/libtorch_cuda.so", dir);
        torch_cuda_handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (!torch_cuda_handle)
            return af_error_set(err, AF_E_RUNTIME,
                                "CUDA package, but this torch has no CUDA support (%s): "
                                "install a CUDA build of torch",
                                dlerror());
    }
    return 0;
}

#define RESOLVE(field, name)                                                                       \
    do {                                                                                           \
        *(void **)&S.field = dlsym(RTLD_DEFAULT, name);                                            \
        if (!S.field)                                                                              \
            return af_error_set(err, AF_E_RUNTIME,                                                 \
                                "libtorch lacks the AOTI C ABI symbol %s: torch too old?", name);  \
    } while (0)

static int shim_load(af_error *err)
{
    if (S.loaded)
        return 0;
    RESOLVE(empty_strided, "aoti_torch_empty_strided");
    RESOLVE(delete_tensor, "aoti_torch_delete_tensor_object");
    RESOLVE(get_data_ptr, "aoti_torch_get_data_ptr");
    RESOLVE(get_sizes, "aoti_torch_get_sizes");
    RESOLVE(get_strides, "aoti_torch_get_strides");
    RESOLVE(get_dim, "aoti_torch_get_dim");
    RESOLVE(get_numel, "aoti_torch_get_numel");
    RESOLVE(get_dtype, "aoti_torch_get_dtype");
    RESOLVE(get_device_type, "aoti_torch_get_device_type");
    RESOLVE(copy_, "aoti_torch_copy_");
    RESOLVE(create_from_blob, "aoti_torch_create_tensor_from_blob");
    static const char *const dtype_fn[AF_DT_COUNT] = {
        "aoti_torch_dtype_float32", "aoti_torch_dtype_float16", "aoti_torch_dtype_bfloat16",
        "aoti_torch_dtype_float64", "aoti_torch_dtype_int64",   "aoti_torch_dtype_int32",
        "aoti_torch_dtype_int16",   "aoti_torch_dtype_int8",    "aoti_torch_dtype_uint8",
        "aoti_torch_dtype_bool",
    };
    for (int i = 0; i < AF_DT_COUNT; i++) {
        int32_t (*f)(void);
        *(void **)&f = dlsym(RTLD_DEFAULT, dtype_fn[i]);
        if (!f)
            return af_error_set(err, AF_E_RUNTIME, "libtorch lacks %s", dtype_fn[i]);
        S.dtype[i] = f();
    }
    int32_t (*dev)(void);
    *(void **)&dev = dlsym(RTLD_DEFAULT, "aoti_torch_device_type_cpu");
    if (!dev)
        return af_error_set(err, AF_E_RUNTIME, "libtorch lacks aoti_torch_device_type_cpu");
    S.dev_cpu = dev();
    *(void **)&dev = dlsym(RTLD_DEFAULT, "aoti_torch_device_type_cuda");
    S.dev_cuda = dev ? dev() : 1;
    *(void **)&S.exception_what = dlsym(RTLD_DEFAULT, "torch_exception_get_what_without_backtrace");
    S.loaded = 1;
    return 0;
}

/* The random fill of element j does not depend on the tensor's size, so the values for a
 * (seed, input) are a prefix of one endless sequence: keep the longest prefix made so far
 * and copy from it (a memcpy on the host, a device-to-device copy on the GPU) instead of
 * computing the fill function and uploading it for every case. */
typedef struct fill_cache {
    int valid;
    uint64_t seed; /* the seed the values were made for */
    int64_t numel; /* elements made so far */
    void *host;    /* numel elements of the input's dtype */
    tensor_t dev;  /* CUDA: the same values on the device, or NULL */
    int64_t dev_numel;
} fill_cache;

struct af_runtime {
    double load_s[AF_LOAD_PHASES]; /* af_runtime_open's phases, seconds */
    const af_package *pkg;
    const af_spec *spec;
    void *so;
    container_t container;
    size_t n_inputs, n_outputs;
    int cuda; /* running on a GPU */
    int device_idx;
    int poisoned; /* a sticky CUDA error happened */
    void *blob;   /* mmap'ed weights blob */
    size_t blob_len;
    af_cuda *cu;
    char versions[512];
    aoti_err (*create)(container_t *, size_t, const char *, const char *);
    aoti_err (*run)(container_t, tensor_t *, size_t, tensor_t *, size_t, void *, void *);
    aoti_err (*destroy)(container_t);
    aoti_err (*num_inputs)(container_t, size_t *);
    aoti_err (*num_outputs)(container_t, size_t *);
    aoti_err (*last_error)(const char **);
    fill_cache cache[AF_MAX_INPUTS];
    void *dump; /* output arena for the next OK runs, or NULL (af_runtime_dump_to) */
    size_t dump_cap;
};

/* CPU ISA names as AOTInductor writes them into AOTI_CPU_ISA. */
int af_cpu_has_isa(const char *isa_list, char *missing, size_t missing_len)
{
    char list[256];
    int ok = 1;
    snprintf(list, sizeof list, "%s", isa_list ? isa_list : "");
    if (missing_len)
        missing[0] = '\0';
    __builtin_cpu_init();
    for (char *save = NULL, *t = strtok_r(list, " ,", &save); t; t = strtok_r(NULL, " ,", &save)) {
        int have = 1;
#if defined(__x86_64__)
        if (!strcmp(t, "AVX2"))
            have = __builtin_cpu_supports("avx2");
        else if (!strcmp(t, "AVX512"))
            have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
        else if (!strcmp(t, "AVX512_VNNI"))
            have = __builtin_cpu_supports("avx512vnni");
        else if (!strcmp(t, "AMX_TILE")) {
            unsigned a, b, c, d;
            __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
            have = (d >> 24) & 1;
        } else if (!strncmp(t, "NEON", 4) || !strncmp(t, "SVE", 3) || !strcmp(t, "VSX") ||
                   !strcmp(t, "ZVECTOR"))
            have = 0; /* another architecture's vector ISA */
#endif
        if (!have) {
            ok = 0;
            size_t n = strlen(missing);
            if (n + strlen(t) + 2 < missing_len)
                snprintf(missing + n, missing_len - n, "%s%s", n ? " " : "", t);
        }
    }
    return ok;
}

af_runtime *af_runtime_open(const af_package *pkg, const af_spec *spec, const char *device,
                            af_error *err)
{
    af_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) {
        af_error_set(err, AF_E_IO, "out of memory");
        return NULL;
    }
    rt->pkg = pkg;
    rt->spec = spec;
    rt->cuda = af_device_is_cuda(device);
    rt->device_idx = rt->cuda ? af_device_index(device) : 0;
    if (rt->cuda != (strcmp(pkg->device, "cuda") == 0)) {
        af_error_set(err, AF_E_RUNTIME,
                     "package '%s' was compiled for %s but asked to run on %s: the load device "
                     "must be the compile device",
                     pkg->path, pkg->device, device);
        goto fail;
    }
    if (!rt->cuda && pkg->cpu_isa[0]) {
        char missing[128];
        if (!af_cpu_has_isa(pkg->cpu_isa, missing, sizeof missing)) {
            af_error_set(err, AF_E_RUNTIME,
                         "package '%s' was compiled for CPU ISA '%s'; this CPU lacks %s", pkg->path,
                         pkg->cpu_isa, missing);
            goto fail;
        }
    }
    double t = af_now_s();
    if (rt->cuda) {
        if (!(rt->cu = af_cuda_open(rt->device_idx, pkg->compute_capability, err)))
            goto fail;
    }
    rt->load_s[AF_LOAD_CONTEXT] = af_now_s() - t;
    t = af_now_s();
    if (shim_load(err) != 0)
        goto fail;

    rt->so = dlopen(pkg->so_path, RTLD_NOW | RTLD_LOCAL);
    if (!rt->so) {
        af_error_set(err, AF_E_INPUT, "cannot load the model: %s", dlerror());
        goto fail;
    }
#define MODEL_SYM(field, name)                                                                     \
    do {                                                                                           \
        *(void **)&rt->field = dlsym(rt->so, name);                                                \
        if (!rt->field) {                                                                          \
            af_error_set(err, AF_E_INPUT, "model .so lacks the AOTI ABI symbol %s", name);         \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)
    MODEL_SYM(create, "AOTInductorModelContainerCreateWithDevice");
    MODEL_SYM(run, "AOTInductorModelContainerRun");
    MODEL_SYM(destroy, "AOTInductorModelContainerDelete");
    MODEL_SYM(num_inputs, "AOTInductorModelContainerGetNumInputs");
    MODEL_SYM(num_outputs, "AOTInductorModelContainerGetNumOutputs");
    *(void **)&rt->last_error = dlsym(rt->so, "AOTInductorGetLastError");
    rt->load_s[AF_LOAD_SO] = af_now_s() - t;
    t = af_now_s();

    if (rt->create(&rt->container, 1, device, pkg->model_dir) != 0 || !rt->container) {
        af_error_set(err, AF_E_RUNTIME, "creating the model container on %s failed%s", device,
                     rt->cuda ? " (is the GPU usable?)" : "");
        goto fail;
    }
    if (rt->num_inputs(rt->container, &rt->n_inputs) != 0 ||
        rt->num_outputs(rt->container, &rt->n_outputs) != 0) {
        af_error_set(err, AF_E_RUNTIME, "cannot query the model's input/output counts");
        goto fail;
    }
    if (rt->n_inputs != (size_t)spec->n_inputs) {
        af_error_set(err, AF_E_INPUT, "the model takes %zu inputs but the spec lists %d",
                     rt->n_inputs, spec->n_inputs);
        goto fail;
    }
    if (pkg->blob_path[0]) {
        aoti_err (*blob_size)(container_t, uint64_t *);
        aoti_err (*from_blob)(container_t, const uint8_t *);
        *(void **)&blob_size = dlsym(rt->so, "AOTInductorModelContainerGetConstantsBlobSize");
        *(void **)&from_blob = dlsym(rt->so, "AOTInductorModelUpdateConstantsFromBlob");
        if (!blob_size || !from_blob) {
            af_error_set(err, AF_E_RUNTIME,
                         "package has a weights blob but the model cannot "
                         "load one (no UpdateConstantsFromBlob)");
            goto fail;
        }
        int fd = open(pkg->blob_path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        uint64_t want = 0;
        if (fd < 0 || fstat(fd, &st) != 0) {
            af_error_sys(err, "%s", pkg->blob_path);
            if (fd >= 0)
                close(fd);
            goto fail;
        }
        rt->blob_len = (size_t)st.st_size;
        rt->blob = rt->blob_len ? mmap(NULL, rt->blob_len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        close(fd);
        if (rt->blob == MAP_FAILED) {
            rt->blob = NULL;
            af_error_sys(err, "mmap %s", pkg->blob_path);
            goto fail;
        }
        if (blob_size(rt->container, &want) != 0 || want > rt->blob_len) {
            af_error_set(err, AF_E_INPUT, "weights blob is %zu bytes, the model wants %llu",
                         rt->blob_len, (unsigned long long)want);
            goto fail;
        }
        if (from_blob(rt->container, rt->blob) != 0) {
            af_error_set(err, AF_E_RUNTIME, "loading the weights blob failed");
            goto fail;
        }
    }
    rt->load_s[AF_LOAD_CREATE] = af_now_s() - t;
    size_t n = (size_t)snprintf(rt->versions, sizeof rt->versions, "torch lib: %s\n", torch_dir);
    if (rt->cu && n < sizeof rt->versions)
        af_cuda_versions(rt->cu, rt->versions + n, sizeof rt->versions - n);
    return rt;
fail:
    af_runtime_close(rt);
    return NULL;
}

void af_runtime_load_seconds(const af_runtime *rt, double out[AF_LOAD_PHASES])
{
    memcpy(out, rt->load_s, sizeof rt->load_s);
}

void af_runtime_versions(const af_runtime *rt, char *buf, size_t len)
{
    snprintf(buf, len, "%s", rt->versions);
}

int af_runtime_is_poisoned(const af_runtime *rt)
{
    return rt->poisoned;
}

void af_runtime_close(af_runtime *rt)
{
    if (!rt)
        return;
    if (rt->container && !rt->poisoned)
        rt->destroy(rt->container);
    if (rt->blob)
        munmap(rt->blob, rt->blob_len);
    for (int i = 0; i < AF_MAX_INPUTS; i++) {
        free(rt->cache[i].host);
        if (rt->cache[i].dev && !rt->poisoned)
            S.delete_tensor(rt->cache[i].dev);
    }
    /* the model .so stays loaded: unloading code with live static state is not worth it */
    af_cuda_close(rt->cu);
    free(rt);
}

/* --- inputs ---------------------------------------------------------------------------- */

static uint16_t f32_to_f16_exact(float f)
{
    /* only called with k/64, |k| <= 128: exactly representable, normal or zero */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    if ((u & 0x7fffffff) == 0)
        return sign;
    int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | (uint16_t)(e << 10) | (uint16_t)((u >> 13) & 0x3ff));
}

void af_runtime_fill(void *data, af_dtype dt, int64_t from, int64_t to, const af_input *in,
                     int input, const af_case *c)
{
    for (int64_t j = from; j < to; j++) {
        int drawn = c->fill == AF_FILL_RANDOM || c->fill == AF_FILL_WIDE;
        int64_t w = drawn ? af_fill_w(c->seed, input, j) : 0;
        double fv;
        int64_t iv;
        if (drawn) {
            fv = af_fill_float(w);
            iv = c->fill == AF_FILL_WIDE ? af_fill_int_wide(in->int_lo, in->int_hi, w)
                                         : af_fill_int(in->int_lo, in->int_hi, w);
        } else {
            fv = c->fill == AF_FILL_ONES ? 1.0 : 0.0;
            iv = c->fill == AF_FILL_ONES ? 1 : 0;
        }
        switch (dt) {
        case AF_DT_FLOAT32:
            ((float *)data)[j] = (float)fv;
            break;
        case AF_DT_FLOAT64:
            ((double *)data)[j] = fv;
            break;
        case AF_DT_FLOAT16:
            ((uint16_t *)data)[j] = f32_to_f16_exact((float)fv);
            break;
        case AF_DT_BFLOAT16: {
            float f = (float)fv;
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)data)[j] = (uint16_t)(u >> 16);
            break;
        }
        case AF_DT_INT64:
            ((int64_t *)data)[j] = iv;
            break;
        case AF_DT_INT32:
            ((int32_t *)data)[j] = (int32_t)iv;
            break;
        case AF_DT_INT16:
            ((int16_t *)data)[j] = (int16_t)iv;
            break;
        case AF_DT_INT8:
            ((int8_t *)data)[j] = (int8_t)iv;
            break;
        case AF_DT_UINT8:
            ((uint8_t *)data)[j] = (uint8_t)iv;
            break;
        case AF_DT_BOOL:
            ((uint8_t *)data)[j] = drawn ? (uint8_t)af_fill_bool(w) : (uint8_t)iv;
            break;
        default:
            break;
        }
    }
}

/* The first numel random-fill values of input i for the case's seed, on the host. */
static const void *cached_fill(af_runtime *rt, const af_case *c, int i, int64_t numel)
{
    fill_cache *fc = &rt->cache[i];
    const af_input *in = &rt->spec->inputs[i];
    size_t esz = af_dtype_size(in->dtype);
    if (!fc->valid || fc->seed != c->seed) {
        fc->valid = 1;
        fc->seed = c->seed;
        fc->numel = 0;
        fc->dev_numel = 0;
    }
    if (numel > fc->numel) {
        int64_t cap = fc->numel ? fc->numel : 1024;
        while (cap < numel)
            cap *= 2;
        void *p = realloc(fc->host, (size_t)cap * esz);
        if (!p)
            return NULL;
        fc->host = p;
        af_runtime_fill(p, in->dtype, fc->numel, cap, in, i, c);
        fc->numel = cap;
    }
    return fc->host;
}

/* The same values on the device: uploaded when the cached prefix grows, else reused. */
static void *cached_fill_device(af_runtime *rt, const af_case *c, int i, int64_t numel)
{
    fill_cache *fc = &rt->cache[i];
    const af_input *in = &rt->spec->inputs[i];
    const void *host = cached_fill(rt, c, i, numel);
    if (!host)
        return NULL;
    if (fc->dev_numel < numel || !fc->dev) {
        if (fc->dev)
            S.delete_tensor(fc->dev);
        fc->dev = NULL;
        int64_t sz[1] = {fc->numel}, st[1] = {1};
        if (S.empty_strided(1, sz, st, S.dtype[in->dtype], S.dev_cuda, rt->device_idx, &fc->dev))
            return fc->dev = NULL, NULL;
        void *d = NULL;
        S.get_data_ptr(fc->dev, &d);
        if (af_cuda_copy(rt->cu, d, host, (size_t)fc->numel * af_dtype_size(in->dtype), 1) != 0)
            return NULL;
        fc->dev_numel = fc->numel;
    }
    void *d = NULL;
    S.get_data_ptr(fc->dev, &d);
    return d;
}

static int make_input(af_runtime *rt, const af_case *c, int i, tensor_t *out, af_error *err)
{
    const af_input *in = &rt->spec->inputs[i];
    int64_t sizes[AF_MAX_RANK], strides[AF_MAX_RANK], numel = 1;
    for (int d = 0; d < in->rank; d++)
        sizes[d] = af_case_dim(rt->spec, c, i, d);
    for (int d = in->rank - 1; d >= 0; d--) {
        strides[d] = numel;
        numel *= sizes[d] > 0 ? sizes[d] : 1;
    }
    for (int d = 0; d < in->rank; d++)
        if (sizes[d] == 0)
            numel = 0;
    int32_t dt = S.dtype[in->dtype];
    tensor_t host = NULL;
    if (rt->cuda && (c->fill == AF_FILL_ZEROS || c->fill == AF_FILL_ONES)) {
        /* constant fills straight on the device, no host round trip */
        if (S.empty_strided(in->rank, sizes, strides, dt, S.dev_cuda, rt->device_idx, out) != 0)
            goto oom;
        void *dptr = NULL;
        S.get_data_ptr(*out, &dptr);
        if (numel == 0 ||
            af_cuda_memset_value(rt->cu, dptr, in->dtype, numel, c->fill == AF_FILL_ONES) == 0)
            return 0;
        S.delete_tensor(*out);
        *out = NULL;
    }
    size_t bytes = (size_t)numel * af_dtype_size(in->dtype);
    if (rt->cuda && c->fill == AF_FILL_RANDOM && numel) {
        void *src = cached_fill_device(rt, c, i, numel);
        if (src) {
            if (S.empty_strided(in->rank, sizes, strides, dt, S.dev_cuda, rt->device_idx, out) != 0)
                goto oom;
            void *dptr = NULL;
            S.get_data_ptr(*out, &dptr);
            if (af_cuda_copy(rt->cu, dptr, src, bytes, 0) == 0)
                return 0;
            S.delete_tensor(*out);
            *out = NULL;
        }
    }
    if (S.empty_strided(in->rank, sizes, strides, dt, S.dev_cpu, 0, &host) != 0)
        goto oom;
    void *data = NULL;
    S.get_data_ptr(host, &data);
    if (numel) {
        const void *src = c->fill == AF_FILL_RANDOM ? cached_fill(rt, c, i, numel) : NULL;
        if (src)
            memcpy(data, src, bytes);
        else
            af_runtime_fill(data, in->dtype, 0, numel, in, i, c);
    }
    if (!rt->cuda) {
        *out = host;
        return 0;
    }
    if (S.empty_strided(in->rank, sizes, strides, dt, S.dev_cuda, rt->device_idx, out) != 0) {
        S.delete_tensor(host);
        goto oom;
    }
    int rc = S.copy_(*out, host, 0);
    S.delete_tensor(host);
    if (rc != 0)
        return af_error_set(err, AF_E_RUNTIME, "copying input %d to the device failed", i);
    return 0;
oom:
    *out = NULL;
    return 1; /* caller reports OOM */
}

/* --- outputs --------------------------------------------------------------------------- */

static void count_nonfinite(const void *data, int32_t dt, int64_t numel, af_output_summary *o)
{
    for (int64_t j = 0; j < numel; j++) {
        double v;
        if (dt == S.dtype[AF_DT_FLOAT32])
            v = ((const float *)data)[j];
        else if (dt == S.dtype[AF_DT_FLOAT64])
            v = ((const double *)data)[j];
        else {
            uint16_t h = ((const uint16_t *)data)[j];
            int bf = dt == S.dtype[AF_DT_BFLOAT16];
            uint16_t emask = bf ? 0x7f80 : 0x7c00, mmask = bf ? 0x007f : 0x03ff;
            if ((h & emask) == emask) {
                if (h & mmask)
                    o->n_nan++;
                else
                    o->n_inf++;
                continue;
            }
            uint32_t f32 = bf ? (uint32_t)h << 16 : 0;
            if (!bf) { /* fp16 -> fp32, normal and subnormal */
                uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
                if (e)
                    f32 = sign | ((e + 112) << 23) | (m << 13);
                else {
                    float sub = (float)m / 16777216.0f; /* m * 2^-24 */
                    memcpy(&f32, &sub, 4);
                    f32 |= sign;
                }
            }
            float fv;
            memcpy(&fv, &f32, 4);
            o->sum += fv;
            continue;
        }
        if (isnan(v))
            o->n_nan++;
        else if (isinf(v))
            o->n_inf++;
        else
            o->sum += v;
    }
}

static void summarize_output(af_runtime *rt, tensor_t t, af_output_summary *o)
{
    int64_t dim = 0, *sizes = NULL, *strides = NULL, numel = 0;
    int32_t dt = -1, devt = -1;
    S.get_dim(t, &dim);
    S.get_sizes(t, &sizes);
    S.get_strides(t, &strides);
    S.get_numel(t, &numel);
    S.get_dtype(t, &dt);
    S.get_device_type(t, &devt);
    o->rank = (int)dim;
    for (int d = 0; d < dim && d < 8; d++)
        o->sizes[d] = sizes[d];
    o->numel = numel;
    int is_float = dt == S.dtype[AF_DT_FLOAT32] || dt == S.dtype[AF_DT_FLOAT64] ||
                   dt == S.dtype[AF_DT_FLOAT16] || dt == S.dtype[AF_DT_BFLOAT16];
    if (!is_float || numel == 0)
        return;
    int contiguous = 1;
    int64_t expect = 1;
    for (int64_t d = dim - 1; d >= 0; d--) {
        if (sizes[d] != 1 && strides[d] != expect)
            contiguous = 0;
        expect *= sizes[d];
    }
    tensor_t view = t, copy = NULL;
    if (devt != S.dev_cpu || !contiguous) {
        int64_t cs[8], n = 1;
        if (dim > 8) /* before cs[] is written: output rank is bounded nowhere else */
            return;
        for (int64_t d = dim - 1; d >= 0; d--) {
            cs[d] = n;
            n *= sizes[d];
        }
        if (S.empty_strided(dim, sizes, cs, dt, S.dev_cpu, 0, &copy) != 0)
            return;
        if (S.copy_(copy, t, 0) != 0) {
            S.delete_tensor(copy);
            return;
        }
        view = copy;
    }
    void *data = NULL;
    S.get_data_ptr(view, &data);
    if (data)
        count_nonfinite(data, dt, numel, o);
    if (copy)
        S.delete_tensor(copy);
}

void af_runtime_dump_to(af_runtime *rt, void *arena, size_t cap)
{
    rt->dump = arena;
    rt->dump_cap = cap;
}

/* Copy the outputs into the arena (see runtime.h): contiguous CPU bytes per output. */
static void dump_outputs(af_runtime *rt, tensor_t *outputs, size_t n)
{
    af_arena_header *h = rt->dump;
    if (!h || rt->dump_cap < sizeof *h)
        return;
    h->magic = 0;
    h->n_outputs = (uint32_t)n;
    h->complete = n <= AF_MAX_OUTPUTS;
    size_t off = (sizeof *h + 63) & ~(size_t)63;
    for (size_t i = 0; i < n && i < AF_MAX_OUTPUTS; i++) {
        af_arena_entry *e = &h->e[i];
        memset(e, 0, sizeof *e);
        e->dtype = -1;
        int64_t dim = 0, *sizes = NULL, numel = 0;
        int32_t dt = -1;
        S.get_dim(outputs[i], &dim);
        S.get_sizes(outputs[i], &sizes);
        S.get_numel(outputs[i], &numel);
        S.get_dtype(outputs[i], &dt);
        if (dim > 8 || dim < 0) { /* checked before any use of the 8-slot arrays */
            h->complete = 0;
            continue;
        }
        e->rank = (int32_t)dim;
        for (int d = 0; d < dim; d++)
            e->sizes[d] = sizes[d];
        for (int k = 0; k < AF_DT_COUNT; k++)
            if (S.dtype[k] == dt)
                e->dtype = k;
        if (e->dtype < 0) {
            h->complete = 0;
            continue;
        }
        size_t bytes = (size_t)numel * af_dtype_size((af_dtype)e->dtype);
        if (off + bytes > rt->dump_cap) {
            h->complete = 0;
            continue;
        }
        e->offset = (int64_t)off;
        e->nbytes = (int64_t)bytes;
        if (bytes) {
            int64_t cs[8], m = 1;
            for (int64_t d = dim - 1; d >= 0; d--) {
                cs[d] = m;
                m *= sizes[d];
            }
            tensor_t dst = NULL;
            if (S.create_from_blob((char *)h + off, dim, sizes, cs, 0, dt, S.dev_cpu, 0, &dst) !=
                    0 ||
                S.copy_(dst, outputs[i], 0) != 0)
                h->complete = 0;
            if (dst)
                S.delete_tensor(dst);
        }
        off = (off + bytes + 63) & ~(size_t)63;
    }
    __atomic_store_n(&h->magic, AF_ARENA_MAGIC, __ATOMIC_RELEASE);
}

/* torch's exception text first (its first line is what the signature keys on), then the
 * wrapper's failing call, shortened to the shim function's name and the wrapper's line:
 * "Kernel size can't be greater than actual input size\n(in aoti_torch_cpu_convolution,
 * wrapper.cpp line 886)". */
static void shim_failure_message(const char *what, const char *wrapper_msg, char *dst, size_t len)
{
    size_t wl = strlen(what);
    while (wl && (what[wl - 1] == '\n' || what[wl - 1] == ' '))
        wl--;
    size_t fn = strcspn(wrapper_msg, "(");
    const char *line = strstr(wrapper_msg, ", line ");
    const char *file = strstr(wrapper_msg, " API call failed at ");
    const char *base = NULL;
    if (file) {
        file += strlen(" API call failed at ");
        for (const char *p = file; *p && *p != ','; p++)
            if (*p == '/')
                base = p + 1;
        if (!base)
            base = file;
    }
    if (base && line)
        snprintf(dst, len, "%.*s\n(in %.*s, %.*s line %lld)", (int)wl, what, (int)fn, wrapper_msg,
                 (int)strcspn(base, ","), base, atoll(line + 7));
    else
        snprintf(dst, len, "%.*s\n(in %.*s)", (int)wl, what, (int)fn, wrapper_msg);
}

static int contains_any(const char *msg, const char *const *needles)
{
    for (; *needles; needles++)
        if (strstr(msg, *needles))
            return 1;
    return 0;
}

int af_runtime_run(af_runtime *rt, const af_case *c, af_result *out, af_error *err)
{
    static const char *const oom_words[] = {"out of memory", "can't allocate memory", "bad_alloc",
                                            "CUDA_ERROR_OUT_OF_MEMORY", NULL};
    static const char *const device_words[] = {"illegal memory access", "device-side assert",
                                               "CUDA error", "unspecified launch failure", NULL};
    tensor_t inputs[AF_MAX_INPUTS] = {0};
    tensor_t outputs[AF_MAX_OUTPUTS * 4] = {0};
    memset(out, 0, sizeof *out);
    if (rt->poisoned)
        return af_error_set(err, AF_E_INTERNAL, "run after a sticky device fault");
    if (rt->n_outputs > sizeof outputs / sizeof outputs[0])
        return af_error_set(err, AF_E_RUNTIME, "model has too many outputs (%zu)", rt->n_outputs);
    if (rt->cu) { /* refuse what cannot fit before allocating: an OOM, not a bug */
        int64_t need = af_case_input_bytes(rt->spec, c), free_b = af_cuda_free_bytes(rt->cu);
        if (free_b >= 0 && need > free_b) {
            out->cls = AF_RES_OOM;
            snprintf(out->message, sizeof out->message,
                     "inputs need %lld bytes, the GPU has %lld free", (long long)need,
                     (long long)free_b);
            af_result_sign(out);
            return 0;
        }
    }
    for (int i = 0; i < rt->spec->n_inputs; i++) {
        int rc = make_input(rt, c, i, &inputs[i], err);
        if (rc != 0) {
            for (int k = 0; k < i; k++)
                S.delete_tensor(inputs[k]);
            if (rc < 0)
                return -1;
            out->cls = AF_RES_OOM;
            snprintf(out->message, sizeof out->message, "allocating input %d failed", i);
            af_result_sign(out);
            return 0;
        }
    }
    double t0 = af_now_s();
    aoti_err rc = rt->run(rt->container, inputs, rt->n_inputs, outputs, rt->n_outputs, NULL, NULL);
    int cu_rc = 0;
    if (rt->cu)
        cu_rc = af_cuda_sync(rt->cu, out->cuda_error, sizeof out->cuda_error, out->message,
                             sizeof out->message);
    out->run_seconds = af_now_s() - t0;

    if (cu_rc != 0) {
        out->cls = cu_rc == 2 ? AF_RES_OOM : AF_RES_DEVICE_FAULT;
        rt->poisoned = cu_rc != 2;
    } else if (rc != 0) {
        const char *msg = NULL, *what = NULL;
        if (rt->last_error && rt->last_error(&msg) == 0 && msg && *msg) {
            /* "aoti_torch_cpu_convolution(...) API call failed at wrapper.cpp, line 886": a shim
             * call threw, and the shim kept torch's own text. That text is the cause; the
             * wrapper's line says only where. (The shim sets it on every exception it catches,
             * so after an "API call failed" it is this run's.) */
            if (strstr(msg, " API call failed at ") && S.exception_what &&
                (what = S.exception_what()) && *what)
                shim_failure_message(what, msg, out->message, sizeof out->message);
            else
                snprintf(out->message, sizeof out->message, "%s", msg);
        } else if (S.exception_what && (msg = S.exception_what()) && *msg) {
            snprintf(out->message, sizeof out->message, "%s", msg); /* failed inside the shim */
        }
        out->cls = AF_RES_RUNTIME_ERROR;
        if (contains_any(out->message, oom_words))
            out->cls = AF_RES_OOM;
        else if (rt->cuda && contains_any(out->message, device_words)) {
            out->cls = AF_RES_DEVICE_FAULT;
            rt->poisoned = 1;
        }
    } else {
        out->cls = AF_RES_OK;
        out->n_outputs = (int)(rt->n_outputs < AF_MAX_OUTPUTS ? rt->n_outputs : AF_MAX_OUTPUTS);
        for (int i = 0; i < out->n_outputs; i++)
            summarize_output(rt, outputs[i], &out->outputs[i]);
        if (rt->dump)
            dump_outputs(rt, outputs, rt->n_outputs);
    }
    if (out->cls == AF_RES_DEVICE_FAULT && !out->kernel[0] && af_cuda_faulting_kernel())
        snprintf(out->kernel, sizeof out->kernel, "%s", af_cuda_faulting_kernel());
    /* After a sticky fault nothing on the device can be freed: without the caching allocator
     * (triage runs) the free itself fails and torch aborts the process before the result is
     * out. The process ends right after this result, taking the tensors with it. */
    if (!rt->poisoned) {
        for (size_t i = 0; i < rt->n_inputs; i++)
            if (inputs[i])
                S.delete_tensor(inputs[i]);
        for (size_t i = 0; i < rt->n_outputs; i++)
            if (outputs[i])
                S.delete_tensor(outputs[i]);
    }
    af_result_sign(out);
    return 0;
}
