/* A stand-in for a model .so whose constructor goes wrong, a fault no real exported model
 * gives on purpose: built twice, AF_CTOR_MODE 1 (fake_ctor_segv.so: the constructor writes
 * through NULL) and 2 (fake_ctor_hang.so: the constructor never returns). dlopen runs it
 * before any symbol is looked up, so the tool must load models only in its workers and
 * bound the load by a timeout. tests/cli/test_bad_input.py puts it in a real package in
 * place of the model .so. */
#include <signal.h>
#include <unistd.h>

#ifndef AF_CTOR_MODE
#error "AF_CTOR_MODE must be 1 (segv) or 2 (hang)"
#endif

__attribute__((constructor)) static void bad_constructor(void)
{
#if AF_CTOR_MODE == 1
    *(volatile int *)0 = 1;
#else
    for (;;)
        pause();
#endif
}

/* the container's entry points exist, so only the constructor is at fault */
int AOTInductorModelContainerCreateWithDevice(void);
int AOTInductorModelContainerCreateWithDevice(void)
{
    return 1;
}
