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
/* "torch lib: ...", "cuda driver: 13000", "gpu: NVIDIA H200 (sm_90)" lines. */
void af_runtime_versions(const af_runtime *rt, char *buf, size_t len);
void af_runtime_close(af_runtime *rt);

#endif
