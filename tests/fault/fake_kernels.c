/* fake_kernels.c — loads and launches kernels by name through libcuda's entry points, the
 * way a model's generated code does (undefined symbols, bound when it is dlopen'ed). */
typedef int CUresult;
CUresult cuModuleGetFunction(void **hfunc, void *hmod, const char *name);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra);

/* Launch "good_kernel" then "bad_kernel"; returns the first failing launch's error, or 0. */
int fake_kernels_run(void)
{
    void *good, *bad;
    CUresult r;
    if ((r = cuModuleGetFunction(&good, 0, "good_kernel")) != 0 ||
        (r = cuModuleGetFunction(&bad, 0, "bad_kernel")) != 0)
        return r;
    if ((r = cuLaunchKernel(good, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0)) != 0)
        return r;
    return cuLaunchKernel(bad, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0);
}
