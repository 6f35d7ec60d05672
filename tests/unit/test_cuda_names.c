/* Kernel names of device faults: a model's kernel loads and launches, bound by name, pass
 * through the harness (cuda.c), which names the kernel whose launch fails in a triage run.
 * libcuda is a stand-in here (tests/fault/fake_libcuda.c, soname libcuda.so.1): loading it
 * first by path makes the harness's dlopen("libcuda.so.1") find it. */
#include <dlfcn.h>

#include "af_test.h"
#include "cuda_api.h"

/* The CUDA workers' environment: one hardware queue per context unless the user chose. */
static void test_worker_defaults(void)
{
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
    af_cuda_worker_defaults();
    const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    CHECK(v && !strcmp(v, "1"));
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1);
    af_cuda_worker_defaults();
    v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    CHECK(v && !strcmp(v, "8"));
    unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
}

int main(void)
{
    test_worker_defaults();
    void *cuda = dlopen(AF_FAKE_LIBCUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(cuda != NULL);
    if (!cuda) {
        fprintf(stderr, "%s\n", dlerror());
        TEST_MAIN_END();
    }
    /* the executable exports the two entry points, so a model dlopen'ed RTLD_LOCAL binds to
     * the harness's, not to libcuda's */
    void *model = dlopen(AF_FAKE_KERNELS_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(model != NULL);
    if (!model) {
        fprintf(stderr, "%s\n", dlerror());
        TEST_MAIN_END();
    }
    int (*run)(void) = (int (*)(void))dlsym(model, "fake_kernels_run");
    CHECK(run != NULL);
    CHECK(dlsym(RTLD_DEFAULT, "cuLaunchKernel") != dlsym(cuda, "cuLaunchKernel"));

    /* an ordinary run: launches pass through unchanged, nothing is named */
    CHECK_EQ_INT(run(), 700);
    CHECK_EQ_INT(af_cuda_kernels_known(), 2); /* both loads were seen */
    CHECK(af_cuda_faulting_kernel() == NULL);

    /* a triage run: the failing launch is pinned on its kernel, not on the one before */
    af_cuda_sync_each_launch(1);
    CHECK_EQ_INT(run(), 700);
    CHECK_STR(af_cuda_faulting_kernel(), "bad_kernel");
    af_cuda_sync_each_launch(0);
    TEST_MAIN_END();
}
