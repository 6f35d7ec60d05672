/* recheck.c — running the written reproducers again and judging them (af_repro_check_sh,
 * af_repro_check_py), and the host facts the report names (af_repro_find_python,
 * af_repro_host_info); see repro.h.
 *
 * Every run goes through run_private: proc.c's time-limited child, with a TMPDIR of its own
 * and torch's inductor cache in ours. repro.sh is judged by the JSON aoti-run prints (the
 * same signature, or the same kind of MISMATCH); repro.py by the marker line it prints before
 * re-raising ("repro.py: the model raised T: message"), compared with the worker's message
 * with numbers masked, or by the signal it died of. A Python that dies while loading the
 * package is a loader problem, not the bug: it is started once more the other way (with or
 * without the system's C++ runtime preloaded), and the loader memory (aotif/env.h) learns
 * which way works. */
#include "proc.h"
#include "quote.h"
#include "repro.h"

#include "aotif/clock.h"
#include "aotif/crashfile.h"
#include "aotif/env.h"
#include "aotif/fileio.h"

#include "aotif_warm_py.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

/* --- running a script ----------------------------------------------------------------------- */

/* af_proc_capture with a private TMPDIR, removed after: repro.py's torch leaves files there
 * (aoti_load_package's aotinductor_* with the model .so) that would otherwise pile up in the
 * user's. Torch's inductor cache goes to our cache dir instead, kept between runs
 * (af_env_inductor_cache): in a cache made fresh for each run, loading a package compiled
 * torch's CPU-ISA probes again and loaded each in a child Python, every time: 15 s of a 23 s
 * repro.py on a 2-CPU host (torch 2.13); the same probes held the H200 reference's start for
 * over 40 s (tests/gpu/README.md). envp NULL: our environment. */
/* A child's private temp dir, and the environment entries that point at it and at the kept
 * inductor cache: the environment private_env returns points into this, so it lives as long. */
typedef struct priv_env {
    char tmpdir[PATH_MAX];
    char tmpvar[PATH_MAX + 8];
    char cache[PATH_MAX + 64];
} priv_env;

/* Make p->tmpdir, and return envp with that TMPDIR and the inductor cache set; NULL (why in
 * why) when either cannot be made. Free the array, then af_remove_tree(p->tmpdir). */
static char **private_env(char *const envp[], priv_env *p, char *why, size_t wlen)
{
    const char *base = getenv("TMPDIR");
    snprintf(p->tmpdir, sizeof p->tmpdir, "%s/aotif-repro.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(p->tmpdir)) {
        snprintf(why, wlen, "cannot make a temp dir in %s: %s", base && *base ? base : "/tmp",
                 strerror(errno));
        p->tmpdir[0] = '\0';
        return NULL;
    }
    snprintf(p->tmpvar, sizeof p->tmpvar, "TMPDIR=%s", p->tmpdir);
    const char *sets[] = {p->tmpvar, NULL, NULL};
    if (af_env_inductor_cache(p->cache, sizeof p->cache))
        sets[1] = p->cache;
    char **env = af_env_with(envp, sets);
    if (!env) {
        snprintf(why, wlen, "out of memory");
        af_remove_tree(p->tmpdir);
        p->tmpdir[0] = '\0';
    }
    return env;
}

static void run_private(char *const argv[], char *const envp[], double timeout_s,
                        const volatile int *stop, proc_run *pr)
{
    priv_env p;
    memset(pr, 0, sizeof *pr);
    char **env = private_env(envp, &p, pr->why, sizeof pr->why);
    if (!env)
        return;
    af_proc_capture(argv, env, timeout_s, stop, pr);
    free(env);
    af_remove_tree(p.tmpdir);
}

/* Fill the common part of a check from a finished run; returns 1 if it ended normally. */
static int check_common(const proc_run *pr, af_repro_check *out)
{
    out->seconds = pr->seconds;
    out->exit_status = -1;
    if (!pr->started) {
        snprintf(out->detail, sizeof out->detail, "could not start: %s", pr->why);
        return 0;
    }
    if (pr->timed_out || pr->stopped) {
        out->timed_out = pr->timed_out;
        snprintf(out->detail, sizeof out->detail, "%s after %.0f s",
                 pr->timed_out ? "timed out" : "stopped", pr->seconds);
        return 0;
    }
    out->ran = 1;
    if (WIFEXITED(pr->status))
        out->exit_status = WEXITSTATUS(pr->status);
    if (WIFSIGNALED(pr->status))
        out->signo = WTERMSIG(pr->status);
    if (WIFEXITED(pr->status) && WEXITSTATUS(pr->status) == 127) {
        out->ran = 0;
        char ll[400];
        af_proc_last_line(&pr->errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "could not run (exit 127)%s%s", ll[0] ? ": " : "",
                 ll);
        return 0;
    }
    return 1;
}

/* A MISMATCH on the output `expect` names, of the same kind (see af_mismatch_same). */
static int same_mismatch(const af_result *expect, const char *text)
{
    return expect->cls == AF_RES_MISMATCH && af_mismatch_same(expect->message, text);
}

void af_repro_check_sh(const char *sh_path, const af_result *expect, double timeout_s,
                       const volatile int *stop, af_repro_check *out)
{
    memset(out, 0, sizeof *out);
    char *argv[] = {"/bin/sh", (char *)sh_path, "--json", NULL};
    proc_run pr;
    run_private(argv, NULL, timeout_s, stop, &pr);
    if (!check_common(&pr, out))
        goto done;
    if (out->signo) {
        snprintf(out->detail, sizeof out->detail, "aoti-run died of %s",
                 af_signal_name(out->signo));
        goto done;
    }
    cJSON *j = pr.out.s ? cJSON_Parse(pr.out.s) : NULL;
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "signature");
    char t[300];
    if (!cJSON_IsString(sig)) {
        char ll[400];
        af_proc_last_line(&pr.errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "exit %d, no JSON result%s%s", out->exit_status,
                 ll[0] ? ": " : "", ll);
    } else {
        int same = strcmp(sig->valuestring, expect->signature) == 0;
        out->reproduced =
            out->exit_status == 1 && (same || same_mismatch(expect, sig->valuestring));
        snprintf(out->detail, sizeof out->detail, "exit %d, %s%s", out->exit_status,
                 same ? "same signature" : "signature ",
                 same ? "" : af_text_ascii(sig->valuestring, t, sizeof t));
    }
    cJSON_Delete(j);
done:
    af_proc_free(&pr);
}

/* The exception line repro.py prints before re-raising: "T: message" after the marker. */
static const char *raised_line(const af_sbuf *b, char *buf, size_t len)
{
    static const char marker[] = "repro.py: the model raised ";
    static const char differ[] = "repro.py: outputs differ: "; /* a MISMATCH reproduced */
    const char *p = b->s ? strstr(b->s, marker) : NULL;
    if (p) {
        p += sizeof marker - 1;
    } else {
        p = b->s ? strstr(b->s, differ) : NULL;
        if (!p)
            return NULL;
        p += sizeof differ - 1;
    }
    size_t l = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), p);
    return buf;
}

/* How CUDA words the errors a kernel leaves behind (cuGetErrorString, which torch quotes in
 * "CUDA error: ..."), by name; NULL for others. */
static const char *cuda_error_words(const char *name)
{
    static const char *const table[][2] = {
        {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
        {"CUDA_ERROR_ASSERT", "device-side assert triggered"},
        {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
        {"CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
        {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
        {"CUDA_ERROR_INVALID_PC", "invalid program counter"},
        {"CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
        {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i][0]) == 0)
            return table[i][1];
    return NULL;
}

/* Whether masked `want` occurs in buffer b once masked. */
static int masked_in(const af_sbuf *b, const char *want)
{
    if (!b->s || !want[0])
        return 0;
    size_t n = strlen(b->s) + 1;
    char *m = malloc(n);
    if (!m)
        return 0;
    af_mask_numbers(b->s, m, n);
    int hit = strstr(m, want) != NULL;
    free(m);
    return hit;
}

/* Judge one run of repro.py. Returns 1 when Python died of a signal before it got to the
 * model (a loader crash, not the bug). */
static int judge_py(const char *python, const proc_run *pr, const af_result *expect,
                    af_repro_check *out)
{
    char raised[1024], t[600];
    if (!check_common(pr, out))
        return 0;
    if (pr->out.s && strncmp(pr->out.s, "torch ", 6) == 0) {
        char v[64];
        snprintf(v, sizeof v, "%.*s", (int)strcspn(pr->out.s + 6, "\r\n"), pr->out.s + 6);
        af_text_ascii(v, out->torch_version, sizeof out->torch_version);
    } else if (!out->signo) { /* it never got as far as printing torch's version */
        char ll[400];
        af_proc_last_line(&pr->errb, ll, sizeof ll);
        out->ran = 0;
        snprintf(out->detail, sizeof out->detail, "%s could not import torch%s%s",
                 af_text_ascii(python, t, sizeof t), ll[0] ? ": " : "", ll);
        return 0;
    }
    /* the script prints this line right before it calls the model */
    int reached = pr->out.s && strstr(pr->out.s, "\nrunning the model; ") != NULL;
    const char *exc = raised_line(&pr->errb, raised, sizeof raised);
    int want_signal =
        expect->cls == AF_RES_SIGNAL || (expect->cls == AF_RES_WORKER_LOST && expect->signo);
    int want_raise = expect->cls == AF_RES_RUNTIME_ERROR || expect->cls == AF_RES_DEVICE_FAULT ||
                     expect->cls == AF_RES_MISMATCH;
    if (out->signo && !reached) {
        snprintf(out->detail, sizeof out->detail,
                 "died of %s before running the model (loading it)", af_signal_name(out->signo));
        return 1;
    }
    if (out->signo) {
        out->reproduced = want_signal && out->signo == expect->signo;
        snprintf(out->detail, sizeof out->detail, "died of %s", af_signal_name(out->signo));
    } else if (exc) {
        /* masked, the exception text must hold the worker's masked first message line */
        char want[1024], got[1024], fl[1024];
        snprintf(fl, sizeof fl, "%s", expect->message);
        fl[strcspn(fl, "\n")] = '\0';
        /* the worker words a device fault "<CUDA's string> (CUDA error 700)", torch words it
         * "CUDA error: <CUDA's string>": CUDA's string is what both share */
        char *code = expect->cls == AF_RES_DEVICE_FAULT ? strstr(fl, " (CUDA error") : NULL;
        if (code)
            *code = '\0';
        const char *colon = strstr(exc, ": ");
        af_mask_numbers(fl, want, sizeof want);
        af_mask_numbers(colon ? colon + 2 : exc, got, sizeof got);
        out->reproduced = want_raise && out->exit_status != 0 && strstr(got, want) != NULL;
        if (!out->reproduced && out->exit_status != 0 && pr->errb.s &&
            strstr(pr->errb.s, "repro.py: outputs differ: ") && same_mismatch(expect, exc))
            out->reproduced = 1;
        /* A device-side assert: torch raises "CUDA error: device-side assert triggered" and the
         * assert's own text ("index out of bounds: ...") is what the device printed, on the
         * script's stdout or stderr; the same CUDA error plus that text is the same failure. */
        const char *words =
            expect->cls == AF_RES_DEVICE_FAULT ? cuda_error_words(expect->cuda_error) : NULL;
        if (!out->reproduced && words && out->exit_status != 0 && strstr(exc, words))
            out->reproduced = strcmp(expect->cuda_error, "CUDA_ERROR_ASSERT") != 0 ||
                              masked_in(&pr->errb, want) || masked_in(&pr->out, want);
        snprintf(out->detail, sizeof out->detail, "exit %d, raised %s%s", out->exit_status,
                 af_text_ascii(exc, t, sizeof t),
                 out->reproduced || !want_raise ? "" : " (another message)");
    } else if (out->exit_status == 0) {
        snprintf(out->detail, sizeof out->detail, "exit 0: the model ran without error");
    } else {
        char ll[400];
        af_proc_last_line(&pr->errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "exit %d%s%s%s", out->exit_status,
                 reached ? "" : " before running the model", ll[0] ? ": " : "", ll);
    }
    return 0;
}

/* Whether a start of repro.py failed in the loader, so that the other loader environment
 * may do better: it died of a signal before it called the model (judge_py's 1), or it could
 * not import torch where the C++ runtime is to blame (a GLIBCXX / CXXABI version not found),
 * or at all while it had a preload (a remembered preload gone stale). */
static int loader_failed(const proc_run *pr, const af_repro_check *c, int died_loading,
                         int had_preload)
{
    if (died_loading)
        return 1;
    if (c->ran || !pr->started || pr->timed_out || pr->stopped)
        return 0;
    const char *e = pr->errb.s ? pr->errb.s : "";
    return had_preload || strstr(e, "GLIBCXX_") || strstr(e, "CXXABI_") || strstr(e, "libstdc++");
}

/* One start of repro.py, with `lib` in LD_PRELOAD ("" : none); 1 when it failed in the
 * loader (loader_failed).
 *
 * TORCHINDUCTOR_VEC_ISA_OK=1 (unless ours sets it): loading a package makes torch check the
 * CPU's vector ISAs (_load_aoti -> get_device_information -> pick_vec_isa) only to warn when
 * they differ from the package's metadata; each check builds a probe and loads it in a child
 * Python, which before torch 2.13 (pytorch#183515) imports torch: on the H200 image (torch
 * 2.11, AMX) about six torch starts inside every repro.py start, cache or not. The setting
 * trusts the CPU's flags for the base check of each ISA (about half of those children; the
 * bf16 and AMX checks still run); the outcome is the same warning or none, and the model,
 * its inputs and the verdict are untouched. */
/* The environment repro.py runs in: ours, with TORCHINDUCTOR_VEC_ISA_OK=1 unless set, and
 * lib preloaded when it is not "" (its LD_PRELOAD= entry written in the caller's preload,
 * which the environment points into: keep it as long as the environment). NULL (why in why)
 * on failure; free it after. */
#define PRELOAD_MAX (PATH_MAX + 600)
static char **py_env(const char *lib, char preload[PRELOAD_MAX], char *why, size_t wlen)
{
    const char *sets[3] = {NULL, NULL, NULL};
    int ns = 0;
    if (!getenv("TORCHINDUCTOR_VEC_ISA_OK"))
        sets[ns++] = "TORCHINDUCTOR_VEC_ISA_OK=1";
    if (lib[0] && af_env_preload(lib, preload, PRELOAD_MAX) != 0) {
        snprintf(why, wlen, "LD_PRELOAD too long");
        return NULL;
    }
    if (lib[0])
        sets[ns++] = preload;
    char **env = af_env_with(NULL, sets);
    if (!env)
        snprintf(why, wlen, "out of memory");
    return env;
}

/* --- the Python started ahead ---------------------------------------------------------------- */

/* One Python started ahead, for one preload. */
typedef struct warm_one {
    af_proc_bg bg;
    char lib[PATH_MAX]; /* the LD_PRELOAD it runs with ("": none) */
    priv_env p;         /* its private TMPDIR */
    int started, used;  /* it runs; a check took it */
} warm_one;

struct af_warm_py {
    warm_one one[2]; /* the loader plan's first start, and its retry when asked for */
};

static void warm_start_one(warm_one *w, const char *python, const char *lib)
{
    snprintf(w->lib, sizeof w->lib, "%s", lib);
    char why[256], preload[PRELOAD_MAX];
    char **env = py_env(w->lib, preload, why, sizeof why);
    char **penv = env ? private_env(env, &w->p, why, sizeof why) : NULL;
    char *argv[] = {(char *)python, "-c", (char *)af_aotif_warm_py, NULL};
    w->started = penv && af_proc_start(argv, penv, &w->bg) == 0;
    free(penv);
    free(env);
}

af_warm_py *af_warm_py_start(const char *python, int both)
{
    af_warm_py *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    af_loader_plan plan;
    af_loader_plan_for(python, &plan);
    warm_start_one(&w->one[0], python, plan.first);
    if (both && plan.can_retry && !plan.remembered)
        warm_start_one(&w->one[1], python, plan.retry);
    if (!w->one[0].started && !w->one[1].started) {
        af_warm_py_free(w);
        return NULL;
    }
    return w;
}

void af_warm_py_free(af_warm_py *w)
{
    if (!w)
        return;
    for (int i = 0; i < 2; i++) {
        af_proc_cancel(&w->one[i].bg);
        if (w->one[i].p.tmpdir[0])
            af_remove_tree(w->one[i].p.tmpdir);
    }
    free(w);
}

/* Run py_path in a Python started ahead for this preload, when one is still there; 0 when
 * none could take the run (then a Python is started for it as usual). */
static int run_warm(af_warm_py *ws, const char *lib, const char *py_path, double timeout_s,
                    const volatile int *stop, proc_run *pr, af_repro_check *out)
{
    warm_one *w = NULL;
    for (int i = 0; ws && i < 2 && !w; i++)
        if (ws->one[i].started && !ws->one[i].used && strcmp(ws->one[i].lib, lib) == 0)
            w = &ws->one[i];
    if (!w || strchr(py_path, '\n') || af_proc_poll_ready(&w->bg) < 0)
        return 0;
    w->used = 1;
    double started_s = af_now_s() - w->bg.t_start;
    af_proc_finish(&w->bg, py_path, timeout_s, stop, pr);
    out->warm = 1;
    out->warm_ready = w->bg.ready;
    out->warm_up_s = w->bg.ready ? w->bg.ready_s : 0;
    out->warm_started_s = started_s;
    return 1;
}

static int check_py_once(const char *python, char *const argv[], const char *lib, af_warm_py *warm,
                         const af_result *expect, double timeout_s, const volatile int *stop,
                         af_repro_check *out)
{
    char why[256], preload[PRELOAD_MAX];
    char **env = NULL;
    proc_run pr;
    memset(out, 0, sizeof *out);
    if (!run_warm(warm, lib, argv[1], timeout_s, stop, &pr, out)) {
        if (!(env = py_env(lib, preload, why, sizeof why))) {
            snprintf(out->detail, sizeof out->detail, "could not start: %s", why);
            return 0;
        }
        run_private(argv, env, timeout_s, stop, &pr);
    }
    int died_loading = judge_py(python, &pr, expect, out);
    int failed = loader_failed(&pr, out, died_loading, lib[0] != '\0');
    af_proc_free(&pr);
    free(env);
    snprintf(out->preload, sizeof out->preload, "%s", lib);
    return failed;
}

void af_repro_check_py(const char *python, const char *py_path, af_warm_py *warm,
                       const af_result *expect, double timeout_s, const volatile int *stop,
                       af_repro_check *out)
{
    char *argv[] = {(char *)python, (char *)py_path, NULL};
    char t[PATH_MAX];
    /* Seen with CUDA packages: the model .so, built by a newer system gcc than torch, crashes
     * in the C++ runtime torch brought along, and the system's runtime, preloaded, fixes it.
     * The loader memory says whether this Python needed that before: then the first start
     * has it, and no start dies first. */
    af_loader_plan plan;
    af_loader_plan_for(python, &plan);
    int failed = check_py_once(python, argv, plan.first, warm, expect, timeout_s, stop, out);
    if (plan.first[0])
        snprintf(out->preload_how, sizeof out->preload_how, "%s",
                 plan.remembered ? "remembered" : "forced");
    if (!failed || !plan.can_retry || (stop && *stop)) {
        if (plan.remembered) {
            size_t l = strlen(out->detail);
            snprintf(out->detail + l, sizeof out->detail - l,
                     " (with LD_PRELOAD=%s, remembered for this Python)",
                     af_text_ascii(plan.first, t, sizeof t));
        }
        return;
    }
    af_repro_check again;
    int failed_again =
        check_py_once(python, argv, plan.retry, warm, expect, timeout_s, stop, &again);
    if (!failed_again && again.ran) /* it came up the other way: the answer from now on */
        af_loader_remember(&plan, plan.retry, again.torch_version, out->detail, NULL);
    char first[sizeof out->detail];
    snprintf(first, sizeof first, "%s", out->detail);
    again.seconds += out->seconds;
    *out = again;
    if (plan.retry[0]) {
        snprintf(out->preload_how, sizeof out->preload_how, "retry");
        snprintf(out->detail, sizeof out->detail, "with LD_PRELOAD=%s: %s (without it: %s)",
                 af_text_ascii(plan.retry, t, sizeof t), again.detail, first);
    } else {
        snprintf(out->detail, sizeof out->detail,
                 "without LD_PRELOAD: %s (with the remembered LD_PRELOAD=%s: %s)", again.detail,
                 af_text_ascii(plan.first, t, sizeof t), first);
    }
}

/* --- the host ------------------------------------------------------------------------------ */

int af_repro_find_python(char *python, size_t plen, char *torch_version, size_t vlen, char *why,
                         size_t wlen)
{
    const char *env = getenv("AOTI_FUZZ_PYTHON");
    const char *py = env && *env ? env : "python3";
    char *argv[] = {(char *)py, "-c", "import torch; print(torch.__version__)", NULL};
    proc_run pr;
    run_private(argv, NULL, 180.0, NULL, &pr);
    int ok = pr.started && !pr.timed_out && WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0 &&
             pr.out.s && pr.out.len;
    if (ok) {
        snprintf(python, plen, "%s", py);
        char v[128];
        snprintf(v, sizeof v, "%s", pr.out.s);
        v[strcspn(v, "\r\n")] = '\0';
        af_text_ascii(v, torch_version, vlen);
    } else {
        char ll[400];
        af_proc_last_line(&pr.errb, ll, sizeof ll);
        snprintf(why, wlen, "%s cannot import torch%s%s", py, ll[0] ? ": " : "", ll);
    }
    af_proc_free(&pr);
    return ok ? 0 : -1;
}

void af_repro_host_info(char *compiler, size_t clen, char *os_name, size_t olen)
{
    compiler[0] = os_name[0] = '\0';
    char *argv[] = {"gcc", "--version", NULL};
    proc_run pr;
    run_private(argv, NULL, 20.0, NULL, &pr);
    if (pr.started && WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0 && pr.out.s) {
        char l[256];
        snprintf(l, sizeof l, "%s", pr.out.s);
        l[strcspn(l, "\r\n")] = '\0';
        af_text_ascii(l, compiler, clen);
    }
    af_proc_free(&pr);
    FILE *f = fopen("/etc/os-release", "re");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) != 0)
            continue;
        char *v = line + 12;
        v[strcspn(v, "\r\n")] = '\0';
        size_t n = strlen(v);
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v[n - 1] = '\0';
            v++;
        }
        af_text_ascii(v, os_name, olen);
        break;
    }
    if (f)
        fclose(f);
}
