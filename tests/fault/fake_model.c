/* fake_model.c — a stand-in model .so for fault injection only.
 *
 * Real example models (corpus/) cover real bugs. This one exists for the failures a real
 * model cannot be made to produce on demand: hanging, aborting, exiting, SIGFPE, unbounded
 * allocation, being SIGKILLed, plus a plain segfault. It exports the AOTInductor container
 * ABI the harness uses; the behaviour of a Run is chosen by the size of input 0's dim 0:
 *   0 ok (one output of shape (n,) with NaN and Inf in it when n >= 2... see below)
 *   1 hang   2 abort   3 exit(7)   4 SIGFPE (integer division by zero)   5 allocate
 *   without bound   6 SIGKILL itself   7 SIGSEGV (write to NULL)   8+ ok (9 prints an "Error: "
 * line to stderr first, as a model that logs and goes on does) It reaches libtorch's shim through
 * the global scope, like a real model .so. AF_FAKE_CREATE_MS=N in the environment makes creating
 * the container take N ms, so that a test can catch a worker while it loads; with
 * AF_FAKE_FLAKY_FILE=PATH, mode 8 is a SIGSEGV while PATH exists (a case that ran OK and then does
 * not). */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int32_t err_t;
typedef void *tensor_t;

err_t aoti_torch_empty_strided(int64_t, const int64_t *, const int64_t *, int32_t, int32_t, int32_t,
                               tensor_t *);
err_t aoti_torch_delete_tensor_object(tensor_t);
err_t aoti_torch_get_sizes(tensor_t, int64_t **);
err_t aoti_torch_get_data_ptr(tensor_t, void **);
int32_t aoti_torch_dtype_float32(void);
int32_t aoti_torch_device_type_cpu(void);

static int container_token;

err_t AOTInductorModelContainerCreateWithDevice(void **h, size_t n, const char *dev,
                                                const char *dir)
{
    const char *ms = getenv("AF_FAKE_CREATE_MS");
    if (ms && atoi(ms) > 0)
        usleep((useconds_t)atoi(ms) * 1000);
    *h = &container_token;
    return 0;
}

err_t AOTInductorModelContainerDelete(void *h)
{
    return 0;
}

err_t AOTInductorModelContainerGetNumInputs(void *h, size_t *n)
{
    *n = 1;
    return 0;
}

err_t AOTInductorModelContainerGetNumOutputs(void *h, size_t *n)
{
    *n = 1;
    return 0;
}

static volatile int zero = 0;

err_t AOTInductorModelContainerRun(void *h, tensor_t *in, size_t n_in, tensor_t *out, size_t n_out,
                                   void *stream, void *proxy)
{
    int64_t *sizes = NULL;
    aoti_torch_get_sizes(in[0], &sizes);
    int64_t mode = sizes[0];
    aoti_torch_delete_tensor_object(in[0]);
    in[0] = NULL;
    switch (mode) {
    case 1:
        for (;;)
            pause();
    case 2:
        abort();
    case 3:
        exit(7);
    case 4:
        return 100 / zero;
    case 5: {
        /* keep allocating 256 MiB tensors and touching them until the allocator refuses */
        int64_t sz[1] = {64LL << 20}, st[1] = {1};
        for (;;) {
            tensor_t t;
            if (aoti_torch_empty_strided(1, sz, st, aoti_torch_dtype_float32(),
                                         aoti_torch_device_type_cpu(), 0, &t) != 0)
                return 1; /* the shim has logged the allocator's exception */
            void *p;
            aoti_torch_get_data_ptr(t, &p);
            memset(p, 1, (size_t)sz[0] * 4);
        }
    }
    case 6:
        raise(SIGKILL);
        break;
    case 7:
        *(volatile int *)0 = 1;
        break;
    case 8: { /* a flaky OK case: SIGSEGV while the file AF_FAKE_FLAKY_FILE names exists */
        const char *flaky = getenv("AF_FAKE_FLAKY_FILE");
        if (flaky && access(flaky, F_OK) == 0)
            *(volatile int *)0 = 1;
        break;
    }
    case 9: {
        static const char line[] = "Error: fake_model: an OK run that prints an error line\n";
        if (write(2, line, sizeof line - 1) < 0)
            return 1;
        break;
    }
    default:
        break;
    }
    int64_t osz[1] = {mode}, ost[1] = {1};
    if (aoti_torch_empty_strided(1, osz, ost, aoti_torch_dtype_float32(),
                                 aoti_torch_device_type_cpu(), 0, &out[0]) != 0)
        return 1;
    float *p;
    aoti_torch_get_data_ptr(out[0], (void **)&p);
    for (int64_t i = 0; i < mode; i++)
        p[i] = (float)i;
    if (mode >= 10) { /* a NaN and an Inf, for the output summary */
        p[0] = 0.0f / (float)zero;
        p[1] = 1.0f / (float)zero;
    }
    return 0;
}
