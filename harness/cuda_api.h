/* cuda_api.h — the slice of the CUDA Driver API aoti-fuzz uses, through dlopen(libcuda.so.1)
 * so the same binary runs where there is no GPU. Internal to the harness. */
#ifndef AOTIF_CUDA_API_H
#define AOTIF_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/error.h"
#include "aotif/spec.h"

typedef struct af_cuda af_cuda;

/* Whether libcuda.so.1 can be dlopen'ed at all (no CUDA call is made). */
int af_cuda_driver_present(char *why, size_t len);
/* cuInit, pick device `idx`, check its compute capability against `want_cc` ("90"; "" =
 * any). Errors are AF_E_RUNTIME with the CUDA error name. Owned; af_cuda_close. */
af_cuda *af_cuda_open(int idx, const char *want_cc, af_error *err);
/* Synchronize the current context: 0 fine, 1 a (sticky) fault, 2 out of memory; fills the
 * error name ("CUDA_ERROR_ILLEGAL_ADDRESS") and its string. */
int af_cuda_sync(af_cuda *cu, char *name, size_t name_len, char *msg, size_t msg_len);
/* Fill numel elements at dptr with 0 or 1 of dtype on the device; -1 if this dtype's 1 has
 * no memset width (the caller falls back to a host upload). */
int af_cuda_memset_value(af_cuda *cu, void *dptr, af_dtype dt, int64_t numel, int ones);
/* Copy bytes to device memory dst from host memory (from_host) or device memory. */
int af_cuda_copy(af_cuda *cu, void *dst, const void *src, size_t bytes, int from_host);
/* Free device memory in bytes, or -1. */
int64_t af_cuda_free_bytes(af_cuda *cu);
void af_cuda_versions(const af_cuda *cu, char *buf, size_t len);
void af_cuda_close(af_cuda *cu);

/* The environment every CUDA worker starts with, set in the zygote before any worker exists
 * (a user's own value is kept): CUDA_DEVICE_MAX_CONNECTIONS=1. A sticky fault costs a new
 * process and context, and on an H200 a context with the driver's default 8 hardware queues
 * took 0.21 s to create two at a time, with one queue 0.09 s (bench/cuda_start_probe). The
 * queues only let kernels of different streams overlap; a model's run, one stream then a
 * synchronize, computes the same either way. */
void af_cuda_worker_defaults(void);

/* Kernel names. cuda.c defines cuModuleGetFunction and cuLaunchKernel; the tools export them,
 * so a model's kernel loads and launches pass through the harness on their way to libcuda.
 * With sync_each_launch on (triage runs), each launch is followed by a synchronize and the
 * kernel whose launch or synchronize fails is remembered: af_cuda_faulting_kernel names it
 * (NULL until then). Both stay readable from a signal handler (static buffers).
 * af_cuda_kernels_known counts the kernels loaded so far. */
void af_cuda_sync_each_launch(int on);
const char *af_cuda_faulting_kernel(void);
const char *af_cuda_faulting_error(void); /* its error name ("CUDA_ERROR_ASSERT"), or NULL */
int af_cuda_kernels_known(void);

#endif
