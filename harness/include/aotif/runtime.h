/* aotif/runtime.h — load libtorch and one model INTO THE CALLING PROCESS and run cases.
 *
 * This is what a worker process does; tools never call it themselves (they use worker.h,
 * which keeps crashes out of their process). bench/ uses it for the in-process baseline.
 * A model crash here kills the caller; a sticky CUDA fault leaves the process unusable. */
#ifndef AOTIF_RUNTIME_H
#define AOTIF_RUNTIME_H

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/result.h"
#include "aotif/spec.h"

#include <stddef.h>
#include <stdint.h>

/* dlopen libtorch.so (and libtorch_cuda.so when want_cuda) from dir, RTLD_GLOBAL, so a
 * model .so resolves its aoti_torch_* imports. Idempotent. Makes no CUDA call. */
int af_torch_load(const char *torch_lib_dir, int want_cuda, af_error *err);

typedef struct af_runtime af_runtime;

/* Load the model .so and create its container on `device` ("cpu", "cuda:N"). Checks
 * step 0 of the aoti-debug guide: device matches the package, CPU ISA, GPU present and of
 * the compiled compute capability, ABI symbols present, input count matches the spec.
 * Returns an owned runtime (af_runtime_close) or NULL with AF_E_RUNTIME. */
af_runtime *af_runtime_open(const af_package *pkg, const af_spec *spec, const char *device,
                            af_error *err);
/* Build the case's inputs, run, synchronize, summarize outputs into *out. Returns 0 when
 * the case ran to a result (any class), -1 on harness failure. After a result of class
 * DEVICE_FAULT the process must not run more cases (af_runtime_is_poisoned). */
int af_runtime_run(af_runtime *rt, const af_case *c, af_result *out, af_error *err);
int af_runtime_is_poisoned(const af_runtime *rt);
/* With `on`, af_runtime_run leaves the tensors a run ends with (its outputs, and any input
 * the model did not take) to af_runtime_release instead of freeing them before it returns:
 * a worker frees them after posting its answer, while the tool handles that answer. The
 * next af_runtime_run and af_runtime_close release what is still held. Off by default. */
void af_runtime_hold_tensors(af_runtime *rt, int on);
void af_runtime_release(af_runtime *rt);

/* The output arena: where a worker copies the outputs of an OK run when the tool asks, for
 * the reference process (reference.h) to compare against eager without serializing them.
 * A shared memory region (memfd) laid out as an af_arena_header, then each output's bytes,
 * contiguous, on the CPU, at its entry's offset (64-byte aligned). */
#define AF_ARENA_MAGIC 0x4f464f41u /* "AOFO" little-endian */
typedef struct af_arena_entry {
    int32_t dtype; /* af_dtype, or -1 for a dtype aoti-fuzz does not know (not copied) */
    int32_t rank;
    int64_t sizes[8];
    int64_t offset; /* from the start of the arena */
    int64_t nbytes;
} af_arena_entry;
typedef struct af_arena_header {
    uint32_t magic;
    uint32_t n_outputs; /* the model's output count */
    uint32_t complete;  /* 1: every output fit and was copied */
    uint32_t pad;
    af_arena_entry e[AF_MAX_OUTPUTS];
} af_arena_header;
/* Copy the outputs of the next OK run into `arena` (cap bytes); NULL stops copying. */
void af_runtime_dump_to(af_runtime *rt, void *arena, size_t cap);
/* Elements [from, to) of input `input`'s values under case c (docs/fill.md), in dtype dt,
 * into data (a host buffer of that dtype): the fill every run uses, and the one that
 * tests/unit/test_fill_equiv.c compares with repro.py's. */
void af_runtime_fill(void *data, af_dtype dt, int64_t from, int64_t to, const af_input *in,
                     int input, const af_case *c);

/* Add a float output's values to its summary o: NaNs and infinities counted, the finite
 * values summed (float32, float64, float16, bfloat16; any other dtype adds nothing). */
void af_tensors_count_values(const void *data, af_dtype dt, int64_t numel, af_output_summary *o);

/* How long af_runtime_open took in each phase: the CUDA context (cuInit, the primary
 * context; 0 on the CPU), libtorch's shim and the model .so (dlopen, its constructors), the
 * container (create: weights to the device; a blob of weights). */
enum { AF_LOAD_CONTEXT, AF_LOAD_SO, AF_LOAD_CREATE, AF_LOAD_PHASES };
void af_runtime_load_seconds(const af_runtime *rt, double out[AF_LOAD_PHASES]);
/* "torch lib: ...", "cuda driver: 13000", "gpu: NVIDIA H200 (sm_90)" lines, into buf. */
void af_runtime_versions(const af_runtime *rt, char *buf, size_t len);
void af_runtime_close(af_runtime *rt);

#endif
