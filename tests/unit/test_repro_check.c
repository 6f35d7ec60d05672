/* test_repro_check.c — how aoti-minimize judges a run of repro.py against the worker's
 * result, on the words torch and the driver really print (seen on an H200, torch 2.11):
 * torch raises "CUDA error: <CUDA's string>" where the worker says "<string> (CUDA error N)",
 * and a Triton device-side assert's own text is printed by the device, not raised.
 * Compiles minimize/recheck.c itself to reach its static judge.
 *
 * Then the check itself, on a fake Python (a shell script) whose loader dies as the H200
 * image's does: it prints torch's version, then dies of SIGSEGV while loading the package
 * unless the system libstdc++ is in LD_PRELOAD. The first check retries with the preload
 * and the loader memory learns it; the next check starts once, with the preload; a stale
 * memory (the preload now breaks the import) is forgotten; AOTI_FUZZ_LOADER=off leaves the
 * memory alone; a Python without torch is started once. Each start is logged by the fake,
 * with the environment the check gave it (private TMPDIR, the inductor cache in our cache
 * dir, TORCHINDUCTOR_VEC_ISA_OK).
 *
 * Then the Python started ahead (af_warm_py), on a fake that speaks its protocol (with -c it
 * says "ready" on fd 3 and runs the path it reads on stdin): the check runs in it, once, with
 * the check's environment; a fake that dies before it is ready leaves the check to a Python of
 * its own; one that is never handed a path is killed by af_warm_py_free. */
#include "../../minimize/recheck.c"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af_test.h"

static const char k_fake_python[] =
    "#!/bin/sh\n"
    "case \"${LD_PRELOAD:-}\" in *libstdc++*) pre=1;; *) pre=0;; esac\n"
    "echo \"start pre=$pre isa=${TORCHINDUCTOR_VEC_ISA_OK:-} cache=${TORCHINDUCTOR_CACHE_DIR:-} "
    "tmp=${TMPDIR:-}\" >> \"$FAKE_LOG\"\n"
    "case \"${FAKE_MODE:-needs_preload}\" in\n"
    "no_torch) echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1;;\n"
    "stale) if [ $pre = 1 ]; then\n"
    "  echo \"ImportError: libstdc++.so.6: version \\`GLIBCXX_3.4.32' not found\" >&2; exit 1; "
    "fi;;\n"
    "*) ;;\n"
    "esac\n"
    "echo 'torch 2.11.0+cu130'\n"
    "echo 'loading /x/pkg.pt2 (model model)'\n"
    "if [ \"${FAKE_MODE:-needs_preload}\" = needs_preload ] && [ $pre = 0 ]; then\n"
    "  echo 'Fatal Python error: Segmentation fault' >&2; kill -SEGV $$; fi\n"
    "echo 'running the model; expected: DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS'\n"
    "echo 'repro.py: the model raised AcceleratorError: CUDA error: an illegal memory access "
    "was encountered' >&2\n"
    "exit 1\n";

/* The fake's log: how many starts, and how many of them had the preload. */
static int starts(const char *log, int *with_preload)
{
    FILE *f = fopen(log, "r");
    char line[8192];
    int n = 0;
    *with_preload = 0;
    while (f && fgets(line, sizeof line, f)) {
        n++;
        *with_preload += strstr(line, "start pre=1") != NULL;
        CHECK(strstr(line, " isa=1 ") != NULL); /* the ISA self-test trusts the flags */
        CHECK(strstr(line, "/xdg/aoti-fuzz/torchinductor ") != NULL); /* kept between runs */
        CHECK(strstr(line, "/aotif-repro.") != NULL); /* its temp files in a private dir */
    }
    if (f)
        fclose(f);
    return n;
}

static void test_loader_retry(void)
{
    const char *lib = af_env_system_libstdcxx();
    if (!lib) {
        printf(
            "note: no system libstdc++ at the usual paths; the LD_PRELOAD retry is not checked\n");
        return;
    }
    char tmp[] = "/tmp/aotif-test-repro.XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    char fake[PATH_MAX], log[PATH_MAX], xdg[PATH_MAX], mem[PATH_MAX];
    snprintf(fake, sizeof fake, "%s/python3", tmp);
    snprintf(log, sizeof log, "%s/starts.log", tmp);
    snprintf(xdg, sizeof xdg, "%s/xdg", tmp);
    FILE *f = fopen(fake, "w");
    if (f) {
        fputs(k_fake_python, f);
        fclose(f);
    }
    chmod(fake, 0755);
    setenv("FAKE_LOG", log, 1);
    setenv("XDG_CACHE_HOME", xdg, 1);
    unsetenv("FAKE_MODE");
    unsetenv("AOTI_FUZZ_LOADER");
    unsetenv("TORCHINDUCTOR_VEC_ISA_OK");
    unsetenv("TORCHINDUCTOR_CACHE_DIR");
    CHECK(af_loader_file(mem, sizeof mem) == 0);

    af_result fault;
    memset(&fault, 0, sizeof fault);
    fault.cls = AF_RES_DEVICE_FAULT;
    snprintf(fault.cuda_error, sizeof fault.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    snprintf(fault.message, sizeof fault.message,
             "an illegal memory access was encountered (CUDA error 700)");
    af_repro_check c;
    int n, pre;

    /* the memory off: the start without dies, the retry with the preload reproduces */
    setenv("AOTI_FUZZ_LOADER", "off", 1);
    af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c);
    CHECK(c.ran && c.reproduced);
    CHECK_STR(c.preload, lib);
    CHECK_STR(c.preload_how, "retry");
    CHECK(strstr(c.detail, "without it: died of SIGSEGV before running the model") != NULL);
    n = starts(log, &pre);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(pre, 1);
    CHECK(access(mem, F_OK) != 0); /* off: nothing written */
    unsetenv("AOTI_FUZZ_LOADER");

    /* first check with the memory: the same two starts, and the memory learns it */
    unlink(log);
    af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c);
    CHECK(c.ran && c.reproduced);
    CHECK_STR(c.preload_how, "retry");
    CHECK_EQ_INT(starts(log, &pre), 2);
    CHECK(access(mem, R_OK) == 0);

    /* every later check: one start, with the preload, and the same verdict */
    for (int i = 0; i < 2; i++) {
        unlink(log);
        af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c);
        CHECK(c.ran && c.reproduced);
        CHECK_STR(c.preload, lib);
        CHECK_STR(c.preload_how, "remembered");
        CHECK(strstr(c.detail, "remembered for this Python") != NULL);
        n = starts(log, &pre);
        CHECK_EQ_INT(n, 1);
        CHECK_EQ_INT(pre, 1);
    }

    /* a memory gone stale (with the preload torch no longer imports): one start with it,
     * one without that reproduces, and the memory forgets */
    setenv("FAKE_MODE", "stale", 1);
    unlink(log);
    af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c);
    CHECK(c.ran && c.reproduced);
    CHECK_STR(c.preload, "");
    CHECK(strstr(c.detail, "without LD_PRELOAD: ") != NULL);
    n = starts(log, &pre);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(pre, 1);
    af_loader_plan plan;
    af_loader_plan_for(fake, &plan);
    CHECK(!plan.remembered);
    unlink(log);
    af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c); /* and starts once, plain */
    CHECK(c.reproduced && !c.preload[0]);
    CHECK_EQ_INT(starts(log, &pre), 1);
    CHECK_EQ_INT(pre, 0);

    /* a Python without torch is not started twice */
    setenv("FAKE_MODE", "no_torch", 1);
    unlink(log);
    af_repro_check_py(fake, "/x/repro.py", NULL, &fault, 60, NULL, &c);
    CHECK(!c.ran && !c.reproduced);
    CHECK(strstr(c.detail, "could not import torch") != NULL);
    CHECK_EQ_INT(starts(log, &pre), 1);

    unsetenv("FAKE_MODE");
    unsetenv("FAKE_LOG");
    unsetenv("XDG_CACHE_HOME");
    af_remove_tree(tmp);
}

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

static const char k_fake_warm[] =
    "#!/bin/sh\n"
    "case \"${LD_PRELOAD:-}\" in *libstdc++*) pre=1;; *) pre=0;; esac\n"
    "echo \"start $1 pre=$pre isa=${TORCHINDUCTOR_VEC_ISA_OK:-} tmp=${TMPDIR:-}\" >> "
    "\"$FAKE_LOG\"\n"
    "if [ \"$1\" = -c ]; then\n"
    "  [ \"${FAKE_MODE:-}\" = dies ] && exit 1\n"
    "  echo 'ready 0.25' >&3; exec 3>&-\n"
    "  read -r path || exit 0\n"
    "  echo \"ran $path\" >> \"$FAKE_LOG\"\n"
    "  exec /bin/sh \"$path\" </dev/null\n"
    "fi\n"
    "exec /bin/sh \"$1\"\n";

static const char k_fake_repro[] =
    "echo 'torch 2.11.0+cu130'\n"
    "echo 'loading /x/pkg.pt2 (model model)'\n"
    "case \"${LD_PRELOAD:-}\" in *libstdc++*) ;; *) [ \"${FAKE_MODE:-}\" = needs_preload ] && "
    "kill -SEGV $$;; esac\n"
    "echo 'repro.py: the model raised AcceleratorError: CUDA error: an illegal memory access "
    "was encountered' >&2\n"
    "exit 1\n";

static int count_lines(const char *log, const char *needle)
{
    FILE *f = fopen(log, "r");
    char line[8192];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        n += strstr(line, needle) != NULL;
        if (strstr(line, "start "))
            CHECK(strstr(line, " isa=1 ") && strstr(line, "/aotif-repro."));
    }
    if (f)
        fclose(f);
    return n;
}

static void write_exec(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, 0755);
}

static void test_warm(void)
{
    char tmp[] = "/tmp/aotif-test-warm.XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    char fake[PATH_MAX], log[PATH_MAX], xdg[PATH_MAX], repro[PATH_MAX];
    snprintf(fake, sizeof fake, "%s/python3", tmp);
    snprintf(log, sizeof log, "%s/starts.log", tmp);
    snprintf(xdg, sizeof xdg, "%s/xdg", tmp);
    snprintf(repro, sizeof repro, "%s/repro.py", tmp);
    write_exec(fake, k_fake_warm);
    write_exec(repro, k_fake_repro);
    setenv("FAKE_LOG", log, 1);
    setenv("XDG_CACHE_HOME", xdg, 1);
    unsetenv("FAKE_MODE");
    unsetenv("AOTI_FUZZ_LOADER");
    unsetenv("TORCHINDUCTOR_VEC_ISA_OK");
    af_result fault;
    memset(&fault, 0, sizeof fault);
    fault.cls = AF_RES_DEVICE_FAULT;
    snprintf(fault.cuda_error, sizeof fault.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    snprintf(fault.message, sizeof fault.message,
             "an illegal memory access was encountered (CUDA error 700)");
    af_repro_check c;

    /* started ahead, then handed the path: one start, the check in it */
    af_warm_py *w = af_warm_py_start(fake, 0);
    CHECK(w != NULL);
    usleep(300 * 1000);
    af_repro_check_py(fake, repro, w, &fault, 60, NULL, &c);
    CHECK_EQ_INT(c.reproduced, 1);
    CHECK_EQ_INT(c.warm, 1);
    CHECK_EQ_INT(c.warm_ready, 1);
    CHECK(c.warm_up_s > 0.24 && c.warm_up_s < 0.26);
    CHECK(c.warm_started_s >= 0.3);
    CHECK_STR(c.torch_version, "2.11.0+cu130");
    CHECK_EQ_INT(count_lines(log, "start -c"), 1);
    CHECK_EQ_INT(count_lines(log, "ran "), 1);
    CHECK_EQ_INT(count_lines(log, "start "), 1);
    /* used once: a second check starts a Python of its own */
    af_repro_check_py(fake, repro, w, &fault, 60, NULL, &c);
    CHECK_EQ_INT(c.reproduced, 1);
    CHECK_EQ_INT(c.warm, 0);
    CHECK_EQ_INT(count_lines(log, "start "), 2);
    af_warm_py_free(w);

    /* dies before it is ready: the check starts its own Python, and still judges */
    unlink(log);
    setenv("FAKE_MODE", "dies", 1);
    w = af_warm_py_start(fake, 0);
    CHECK(w != NULL);
    usleep(300 * 1000);
    af_repro_check_py(fake, repro, w, &fault, 60, NULL, &c);
    CHECK_EQ_INT(c.reproduced, 1);
    CHECK_EQ_INT(c.warm, 0);
    CHECK_EQ_INT(count_lines(log, "start -c"), 1);
    CHECK_EQ_INT(count_lines(log, "ran "), 0);
    af_warm_py_free(w);

    /* never handed a path: freed, it is gone and its temp dir with it */
    unsetenv("FAKE_MODE");
    unlink(log);
    w = af_warm_py_start(fake, 0);
    CHECK(w != NULL);
    usleep(200 * 1000);
    pid_t pid = w ? w->one[0].bg.pid : 0;
    char wtmp[PATH_MAX];
    snprintf(wtmp, sizeof wtmp, "%s", w ? w->one[0].p.tmpdir : "");
    CHECK(pid > 0 && wtmp[0]);
    af_warm_py_free(w);
    CHECK(pid > 0 && kill(pid, 0) != 0);
    struct stat st;
    CHECK(stat(wtmp, &st) != 0);
    CHECK_EQ_INT(count_lines(log, "ran "), 0);
    af_warm_py_free(NULL);

    /* a Python that needs the preload, nothing remembered: with `both`, the retry the other
     * way runs in the second Python started ahead, and no Python is started cold */
    if (af_env_system_libstdcxx()) {
        unlink(log);
        setenv("FAKE_MODE", "needs_preload", 1);
        w = af_warm_py_start(fake, 1);
        CHECK(w != NULL);
        usleep(300 * 1000);
        af_repro_check_py(fake, repro, w, &fault, 60, NULL, &c);
        CHECK_EQ_INT(c.reproduced, 1);
        CHECK_EQ_INT(c.warm, 1);
        CHECK_STR(c.preload_how, "retry");
        CHECK_EQ_INT(count_lines(log, "start -c pre=0"), 1);
        CHECK_EQ_INT(count_lines(log, "start -c pre=1"), 1);
        CHECK_EQ_INT(count_lines(log, "start "), 2);
        CHECK_EQ_INT(count_lines(log, "ran "), 2);
        af_warm_py_free(w);
        /* learnt: the next start has the preload, and one Python is started ahead */
        unlink(log);
        w = af_warm_py_start(fake, 1);
        usleep(300 * 1000);
        af_repro_check_py(fake, repro, w, &fault, 60, NULL, &c);
        CHECK_EQ_INT(c.reproduced, 1);
        CHECK_EQ_INT(c.warm, 1);
        CHECK_STR(c.preload_how, "remembered");
        CHECK_EQ_INT(count_lines(log, "start -c pre=1"), 1);
        CHECK_EQ_INT(count_lines(log, "start "), 1);
        af_warm_py_free(w);
        unsetenv("FAKE_MODE");
    }

    unsetenv("FAKE_LOG");
    unsetenv("XDG_CACHE_HOME");
    af_remove_tree(tmp);
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
                 "access was encountered\n",
                 1));
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
    CHECK(judged(&as, out, both, 1)); /* the assert text on stderr */
    char out_printed[1024];
    snprintf(out_printed, sizeof out_printed, "%s%s", out, printed);
    CHECK(judged(&as, out_printed, raised, 1)); /* or on stdout */
    CHECK(!judged(&as, out, raised, 1));        /* an assert, but not shown to be this one */
    char other[1024];
    snprintf(other, sizeof other, "%s%s",
             "x.py:1: unknown: block: [0,0,0], thread: [0,0,0] Assertion `other check` failed.\n",
             raised);
    CHECK(!judged(&as, out, other, 1)); /* another assert */

    /* a runtime error still matches on its own words */
    af_result rt;
    memset(&rt, 0, sizeof rt);
    rt.cls = AF_RES_RUNTIME_ERROR;
    snprintf(rt.message, sizeof rt.message, "index out of bounds: 0 <= tmp7 < ks1");
    CHECK(judged(&rt, out,
                 "repro.py: the model raised RuntimeError: index out of bounds: 0 <= tmp7 < ks1\n",
                 1));
    CHECK(!judged(&rt, out, "repro.py: the model raised RuntimeError: something else\n", 1));

    test_loader_retry();
    test_warm();
    TEST_MAIN_END();
}
