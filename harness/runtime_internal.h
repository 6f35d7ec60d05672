/* runtime_internal.h — what runtime.c (libtorch, the model, its container, a run) and
 * tensors.c (the case's input tensors, the run's outputs) share; internal to the harness.
 * Both reach libtorch only through the shim's C ABI, resolved once into af_shim. */
#ifndef AOTIF_RUNTIME_INTERNAL_H
#define AOTIF_RUNTIME_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/runtime.h"
#include "cuda_api.h"

typedef int32_t aoti_err;
typedef struct AtenTensorOpaque *tensor_t;
typedef struct ContainerOpaque *container_t;

/* The shim, resolved once from the global scope after af_torch_load. */
struct af_shim {
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
};
extern struct af_shim af_shim;

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
    int hold;      /* af_runtime_hold_tensors */
    size_t n_held; /* tensors of the last run, not freed yet */
    tensor_t held[AF_MAX_INPUTS + AF_MAX_OUTPUTS * 4];
};

/* Input i of case c as a tensor on the run's device, into *out (owned by the caller,
 * af_shim.delete_tensor): 0, 1 when an allocation failed (the caller reports OOM; *out is
 * NULL), -1 on harness failure (err set). */
int af_tensors_make_input(af_runtime *rt, const af_case *c, int i, tensor_t *out, af_error *err);
/* Rank, sizes and, for a float output, its NaN/Inf counts and finite sum. */
void af_tensors_summarize(af_runtime *rt, tensor_t t, af_output_summary *o);
/* Copy the n outputs into rt's output arena (af_runtime_dump_to), when it has one. */
void af_tensors_dump(af_runtime *rt, tensor_t *outputs, size_t n);

#endif
