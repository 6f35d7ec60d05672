/* test_repro_check.c — how aoti-minimize judges a run of repro.py against the worker's
 * result, on the words torch and the driver really print (seen on an H200, torch 2.11):
 * torch raises "CUDA error: <CUDA's string>" where the worker says "<string> (CUDA error N)",
 * and a Triton device-side assert's own text is printed by the device, not raised.
 * Compiles minimize/repro.c itself to reach its static judge. */
#include "../../minimize/repro.c"

#include "af_test.h"

static proc_run run_with(const char *out, const char *err, int exit_code)
{
    proc_run pr;
    memset(&pr, 0, sizeof pr);
    pr.started = 1;
    pr.status = exit_code << 8; /* as waitpid reports an exit */
    pr.out.s = strdup(out);
    pr.errb.s = strdup(err);
    return pr;
}

static int judged(const af_result *expect, const char *out, const char *err, int code)
{
    proc_run pr = run_with(out, err, code);
    af_repro_check c;
    memset(&c, 0, sizeof c);
    judge_py("python3", &pr, expect, &c);
    free(pr.out.s);
    free(pr.errb.s);
    return c.reproduced;
}

int main(void)
{
    static const char out[] = "torch 2.11.0+cu130\nrunning the model; inputs x (0, 16)\n";
    af_result fault;
    memset(&fault, 0, sizeof fault);
    fault.cls = AF_RES_DEVICE_FAULT;
    snprintf(fault.cuda_error, sizeof fault.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    snprintf(fault.message, sizeof fault.message,
             "an illegal memory access was encountered (CUDA error 700)");
    CHECK(judged(&fault, out,
                 "repro.py: the model raised AcceleratorError: CUDA error: an illegal memory "
                 "access was encountered\n", 1));
    /* another CUDA error is another failure */
    CHECK(!judged(&fault, out,
                  "repro.py: the model raised AcceleratorError: CUDA error: misaligned address\n",
                  1));

    af_result as;
    memset(&as, 0, sizeof as);
    as.cls = AF_RES_DEVICE_FAULT;
    snprintf(as.cuda_error, sizeof as.cuda_error, "CUDA_ERROR_ASSERT");
    snprintf(as.message, sizeof as.message, "index out of bounds: 0 <= tmp5 < ks0");
    static const char raised[] =
        "repro.py: the model raised AcceleratorError: CUDA error: device-side assert triggered\n";
    static const char printed[] =
        "/tmp/torchinductor_root/ab/cabc.py:22: unknown: block: [0,0,0], thread: [0,0,0] "
        "Assertion `index out of bounds: 0 <= tmp5 < ks0` failed.\n";
    char both[1024];
    snprintf(both, sizeof both, "%s%s", printed, raised);
    CHECK(judged(&as, out, both, 1));                 /* the assert text on stderr */
    char out_printed[1024];
    snprintf(out_printed, sizeof out_printed, "%s%s", out, printed);
    CHECK(judged(&as, out_printed, raised, 1));       /* or on stdout */
    CHECK(!judged(&as, out, raised, 1));              /* an assert, but not shown to be this one */
    char other[1024];
    snprintf(other, sizeof other, "%s%s",
             "x.py:1: unknown: block: [0,0,0], thread: [0,0,0] Assertion `other check` failed.\n",
             raised);
    CHECK(!judged(&as, out, other, 1));               /* another assert */

    /* a runtime error still matches on its own words */
    af_result rt;
    memset(&rt, 0, sizeof rt);
    rt.cls = AF_RES_RUNTIME_ERROR;
    snprintf(rt.message, sizeof rt.message, "index out of bounds: 0 <= tmp7 < ks1");
    CHECK(judged(&rt, out,
                 "repro.py: the model raised RuntimeError: index out of bounds: 0 <= tmp7 < ks1\n",
                 1));
    CHECK(!judged(&rt, out, "repro.py: the model raised RuntimeError: something else\n", 1));
    TEST_MAIN_END();
}
