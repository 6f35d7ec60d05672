/* runtime.c — libtorch, the model .so and its container, inside the calling process.
 *
 * Everything here goes through libtorch's C ABI: the AOTInductorModelContainer* functions
 * exported by the model .so and the aoti_torch_* shim exported by libtorch. libtorch is
 * dlopen'ed RTLD_GLOBAL first because the model .so has no RPATH and resolves its shim
 * imports from the global scope. libcuda (Driver API) is dlopen'ed only for CUDA models,
 * to check the GPU before loading and to synchronize after each Run: CUDA faults surface
 * only at a sync, and they are sticky, so after one the process is poisoned. The case's
 * tensors, in and out, are made and read in tensors.c. */
#include "runtime_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "outcome.h"

/* The shim (runtime_internal.h): filled once by shim_load, read by tensors.c too. */
struct af_shim af_shim;

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
        *(void **)&af_shim.field = dlsym(RTLD_DEFAULT, name);                                      \
        if (!af_shim.field)                                                                        \
            return af_error_set(err, AF_E_RUNTIME,                                                 \
                                "libtorch lacks the AOTI C ABI symbol %s: torch too old?", name);  \
    } while (0)

static int shim_load(af_error *err)
{
    if (af_shim.loaded)
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
        af_shim.dtype[i] = f();
    }
    int32_t (*dev)(void);
    *(void **)&dev = dlsym(RTLD_DEFAULT, "aoti_torch_device_type_cpu");
    if (!dev)
        return af_error_set(err, AF_E_RUNTIME, "libtorch lacks aoti_torch_device_type_cpu");
    af_shim.dev_cpu = dev();
    *(void **)&dev = dlsym(RTLD_DEFAULT, "aoti_torch_device_type_cuda");
    af_shim.dev_cuda = dev ? dev() : 1;
    *(void **)&af_shim.exception_what =
        dlsym(RTLD_DEFAULT, "torch_exception_get_what_without_backtrace");
    af_shim.loaded = 1;
    return 0;
}

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

/* Step 0 of the aoti-debug guide, before anything is loaded: the device kind the package was
 * compiled for and, on the CPU, its ISA. */
static int check_device(const af_package *pkg, int cuda, const char *device, af_error *err)
{
    if (cuda != (strcmp(pkg->device, "cuda") == 0))
        return af_error_set(err, AF_E_RUNTIME,
                            "package '%s' was compiled for %s but asked to run on %s: the load "
                            "device must be the compile device",
                            pkg->path, pkg->device, device);
    if (!cuda && pkg->cpu_isa[0]) {
        char missing[128];
        if (!af_cpu_has_isa(pkg->cpu_isa, missing, sizeof missing))
            return af_error_set(err, AF_E_RUNTIME,
                                "package '%s' was compiled for CPU ISA '%s'; this CPU lacks %s",
                                pkg->path, pkg->cpu_isa, missing);
    }
    return 0;
}

/* libtorch's shim, then the model .so (its constructors run here) and its container ABI. */
static int load_model_so(af_runtime *rt, const af_package *pkg, af_error *err)
{
    if (shim_load(err) != 0)
        return -1;
    rt->so = dlopen(pkg->so_path, RTLD_NOW | RTLD_LOCAL);
    if (!rt->so)
        return af_error_set(err, AF_E_INPUT, "cannot load the model: %s", dlerror());
#define MODEL_SYM(field, name)                                                                     \
    do {                                                                                           \
        *(void **)&rt->field = dlsym(rt->so, name);                                                \
        if (!rt->field)                                                                            \
            return af_error_set(err, AF_E_INPUT, "model .so lacks the AOTI ABI symbol %s", name);  \
    } while (0)
    MODEL_SYM(create, "AOTInductorModelContainerCreateWithDevice");
    MODEL_SYM(run, "AOTInductorModelContainerRun");
    MODEL_SYM(destroy, "AOTInductorModelContainerDelete");
    MODEL_SYM(num_inputs, "AOTInductorModelContainerGetNumInputs");
    MODEL_SYM(num_outputs, "AOTInductorModelContainerGetNumOutputs");
#undef MODEL_SYM
    *(void **)&rt->last_error = dlsym(rt->so, "AOTInductorGetLastError");
    return 0;
}

/* The container on `device` (the weights go there), and its input count against the spec. */
static int create_container(af_runtime *rt, const char *device, af_error *err)
{
    if (rt->create(&rt->container, 1, device, rt->pkg->model_dir) != 0 || !rt->container)
        return af_error_set(err, AF_E_RUNTIME, "creating the model container on %s failed%s",
                            device, rt->cuda ? " (is the GPU usable?)" : "");
    if (rt->num_inputs(rt->container, &rt->n_inputs) != 0 ||
        rt->num_outputs(rt->container, &rt->n_outputs) != 0)
        return af_error_set(err, AF_E_RUNTIME, "cannot query the model's input/output counts");
    if (rt->n_inputs != (size_t)rt->spec->n_inputs)
        return af_error_set(err, AF_E_INPUT, "the model takes %zu inputs but the spec lists %d",
                            rt->n_inputs, rt->spec->n_inputs);
    return 0;
}

/* A package whose weights come as a separate blob: map it (rt->blob, unmapped by
 * af_runtime_close) and hand it to the container. */
static int load_blob(af_runtime *rt, const af_package *pkg, af_error *err)
{
    aoti_err (*blob_size)(container_t, uint64_t *);
    aoti_err (*from_blob)(container_t, const uint8_t *);
    *(void **)&blob_size = dlsym(rt->so, "AOTInductorModelContainerGetConstantsBlobSize");
    *(void **)&from_blob = dlsym(rt->so, "AOTInductorModelUpdateConstantsFromBlob");
    if (!blob_size || !from_blob)
        return af_error_set(err, AF_E_RUNTIME,
                            "package has a weights blob but the model cannot "
                            "load one (no UpdateConstantsFromBlob)");
    int fd = open(pkg->blob_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    uint64_t want = 0;
    if (fd < 0 || fstat(fd, &st) != 0) {
        af_error_sys(err, "%s", pkg->blob_path);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    rt->blob_len = (size_t)st.st_size;
    rt->blob = rt->blob_len ? mmap(NULL, rt->blob_len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (rt->blob == MAP_FAILED) {
        rt->blob = NULL;
        return af_error_sys(err, "mmap %s", pkg->blob_path);
    }
    if (blob_size(rt->container, &want) != 0 || want > rt->blob_len)
        return af_error_set(err, AF_E_INPUT, "weights blob is %zu bytes, the model wants %llu",
                            rt->blob_len, (unsigned long long)want);
    if (from_blob(rt->container, rt->blob) != 0)
        return af_error_set(err, AF_E_RUNTIME, "loading the weights blob failed");
    return 0;
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
    if (check_device(pkg, rt->cuda, device, err) != 0)
        goto fail;
    double t = af_now_s();
    if (rt->cuda) {
        if (!(rt->cu = af_cuda_open(rt->device_idx, pkg->compute_capability, err)))
            goto fail;
    }
    rt->load_s[AF_LOAD_CONTEXT] = af_now_s() - t;
    t = af_now_s();
    if (load_model_so(rt, pkg, err) != 0)
        goto fail;
    rt->load_s[AF_LOAD_SO] = af_now_s() - t;
    t = af_now_s();
    if (create_container(rt, device, err) != 0)
        goto fail;
    if (pkg->blob_path[0] && load_blob(rt, pkg, err) != 0)
        goto fail;
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
    af_runtime_release(rt);
    if (rt->container && !rt->poisoned)
        rt->destroy(rt->container);
    if (rt->blob)
        munmap(rt->blob, rt->blob_len);
    for (int i = 0; i < AF_MAX_INPUTS; i++) {
        free(rt->cache[i].host);
        if (rt->cache[i].dev && !rt->poisoned)
            af_shim.delete_tensor(rt->cache[i].dev);
    }
    /* the model .so stays loaded: unloading code with live static state is not worth it */
    af_cuda_close(rt->cu);
    free(rt);
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

/* Refuse what cannot fit on the GPU before allocating: an OOM, not a bug. Returns 1 with *out
 * filled (signed), else 0. */
static int no_room_on_device(af_runtime *rt, const af_case *c, af_result *out)
{
    if (!rt->cu)
        return 0;
    int64_t need = af_case_input_bytes(rt->spec, c), free_b = af_cuda_free_bytes(rt->cu);
    if (free_b >= 0 && need > free_b) {
        out->cls = AF_RES_OOM;
        snprintf(out->message, sizeof out->message, "inputs need %lld bytes, the GPU has %lld free",
                 (long long)need, (long long)free_b);
        af_result_sign(out);
        return 1;
    }
    return 0;
}

/* Every input of case c into inputs[]: 0; 1 when an allocation failed (*out is then that
 * OOM, signed, and the inputs made so far are freed); -1 on harness failure. */
static int make_inputs(af_runtime *rt, const af_case *c, tensor_t *inputs, af_result *out,
                       af_error *err)
{
    for (int i = 0; i < rt->spec->n_inputs; i++) {
        int rc = af_tensors_make_input(rt, c, i, &inputs[i], err);
        if (rc != 0) {
            for (int k = 0; k < i; k++)
                af_shim.delete_tensor(inputs[k]);
            if (rc < 0)
                return -1;
            out->cls = AF_RES_OOM;
            snprintf(out->message, sizeof out->message, "allocating input %d failed", i);
            af_result_sign(out);
            return 1;
        }
    }
    return 0;
}

/* Run returned an error: its message, and its class from that (outcome.c). */
static void run_failed(af_runtime *rt, af_result *out)
{
    const char *msg = NULL, *what = NULL;
    if (rt->last_error && rt->last_error(&msg) == 0 && msg && *msg) {
        /* "aoti_torch_cpu_convolution(...) API call failed at wrapper.cpp, line 886": a shim
         * call threw, and the shim kept torch's own text. That text is the cause; the
         * wrapper's line says only where. (The shim sets it on every exception it catches,
         * so after an "API call failed" it is this run's.) */
        if (strstr(msg, " API call failed at ") && af_shim.exception_what &&
            (what = af_shim.exception_what()) && *what)
            shim_failure_message(what, msg, out->message, sizeof out->message);
        else
            snprintf(out->message, sizeof out->message, "%s", msg);
    } else if (af_shim.exception_what && (msg = af_shim.exception_what()) && *msg) {
        snprintf(out->message, sizeof out->message, "%s", msg); /* failed inside the shim */
    }
    out->cls = af_outcome_of_run_error(out->message, rt->cuda);
    if (out->cls == AF_RES_DEVICE_FAULT)
        rt->poisoned = 1;
}

int af_runtime_run(af_runtime *rt, const af_case *c, af_result *out, af_error *err)
{
    tensor_t inputs[AF_MAX_INPUTS] = {0};
    tensor_t outputs[AF_MAX_OUTPUTS * 4] = {0};
    af_result_reset(out); /* a 10 KB clear per case in the worker otherwise */
    af_runtime_release(rt);
    if (rt->poisoned)
        return af_error_set(err, AF_E_INTERNAL, "run after a sticky device fault");
    if (rt->n_outputs > sizeof outputs / sizeof outputs[0])
        return af_error_set(err, AF_E_RUNTIME, "model has too many outputs (%zu)", rt->n_outputs);
    if (no_room_on_device(rt, c, out))
        return 0;
    int made = make_inputs(rt, c, inputs, out, err);
    if (made != 0)
        return made < 0 ? -1 : 0;
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
        run_failed(rt, out);
    } else {
        out->cls = AF_RES_OK;
        out->n_outputs = (int)(rt->n_outputs < AF_MAX_OUTPUTS ? rt->n_outputs : AF_MAX_OUTPUTS);
        for (int i = 0; i < out->n_outputs; i++)
            af_tensors_summarize(rt, outputs[i], &out->outputs[i]);
        if (rt->dump)
            af_tensors_dump(rt, outputs, rt->n_outputs);
    }
    if (out->cls == AF_RES_DEVICE_FAULT && !out->kernel[0] && af_cuda_faulting_kernel())
        snprintf(out->kernel, sizeof out->kernel, "%s", af_cuda_faulting_kernel());
    /* After a sticky fault nothing on the device can be freed: without the caching allocator
     * (triage runs) the free itself fails and torch aborts the process before the result is
     * out. The process ends right after this result, taking the tensors with it. */
    if (!rt->poisoned) {
        for (size_t i = 0; i < rt->n_inputs; i++)
            if (inputs[i])
                rt->held[rt->n_held++] = inputs[i];
        for (size_t i = 0; i < rt->n_outputs; i++)
            if (outputs[i])
                rt->held[rt->n_held++] = outputs[i];
        if (!rt->hold)
            af_runtime_release(rt);
    }
    af_result_sign(out);
    return 0;
}

void af_runtime_hold_tensors(af_runtime *rt, int on)
{
    rt->hold = on;
}

void af_runtime_release(af_runtime *rt)
{
    /* after a sticky fault nothing on the device can be freed (see af_runtime_run) */
    for (size_t i = 0; i < rt->n_held && !rt->poisoned; i++)
        af_shim.delete_tensor(rt->held[i]);
    rt->n_held = 0;
}
