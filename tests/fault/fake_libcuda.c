/* fake_libcuda.c — a stand-in for libcuda.so.1 (same soname) for the kernel-naming test on
 * machines without a GPU: cuModuleGetFunction hands out one handle per name, and launching
 * the kernel named "bad_kernel" fails the way an illegal address does (error 700). */
#include <string.h>

typedef int CUresult;
static char names[8][64];
static int n_names;

CUresult cuModuleGetFunction(void **hfunc, void *hmod, const char *name)
{
    (void)hmod;
    if (n_names == 8)
        return 2;
    strncpy(names[n_names], name, sizeof names[0] - 1);
    *hfunc = names[n_names++];
    return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream,
        (void)params, (void)extra;
    return strcmp((const char *)f, "bad_kernel") == 0 ? 700 : 0;
}

CUresult cuCtxSynchronize(void)
{
    return 0;
}
