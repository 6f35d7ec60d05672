/* outcome.c — every rule that decides a result's class from what a run left behind; see
 * outcome.h.
 *
 * In the worker, a Run that failed is classified by its message (the shim keeps torch's
 * exception text). In the tool, a worker that answered may still have said more on stderr
 * (the model's own error line, a device-side assert, the Triton kernel's name), and one that
 * did not answer is classified by how it ended: a timeout, or the wait status the zygote
 * reported. */
#include "outcome.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* ---- in the worker --------------------------------------------------------------------- */

static int contains_any(const char *msg, const char *const *needles)
{
    for (; *needles; needles++)
        if (strstr(msg, *needles))
            return 1;
    return 0;
}

af_class af_outcome_of_run_error(const char *message, int cuda)
{
    static const char *const oom_words[] = {"out of memory", "can't allocate memory", "bad_alloc",
                                            "CUDA_ERROR_OUT_OF_MEMORY", NULL};
    static const char *const device_words[] = {"illegal memory access", "device-side assert",
                                               "CUDA error", "unspecified launch failure", NULL};
    if (contains_any(message, oom_words))
        return AF_RES_OOM;
    if (cuda && contains_any(message, device_words))
        return AF_RES_DEVICE_FAULT;
    return AF_RES_RUNTIME_ERROR;
}

void af_outcome_harness_failed(af_result *r, const af_error *err)
{
    memset(r, 0, sizeof *r);
    r->cls = AF_RES_WORKER_LOST;
    snprintf(r->message, sizeof r->message, "harness: %s", err->message);
    af_result_sign(r);
}

/* ---- in the tool ----------------------------------------------------------------------- */

void af_outcome_timeout(af_result *r, double timeout_s)
{
    r->cls = AF_RES_TIMEOUT;
    snprintf(r->message, sizeof r->message, "no result within %.1f s; worker killed", timeout_s);
}

void af_outcome_lost(af_result *r, int st)
{
    r->exit_status = -1;
    if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
        r->cls = AF_RES_SIGNAL;
        r->signo = WTERMSIG(st);
    } else {
        r->cls = AF_RES_WORKER_LOST;
        if (st != -1 && WIFSIGNALED(st))
            r->signo = WTERMSIG(st);
        else if (st != -1 && WIFEXITED(st))
            r->exit_status = WEXITSTATUS(st);
    }
}

void af_outcome_status_text(int st, char *buf, size_t len)
{
    buf[0] = '\0';
    if (st != -1 && WIFSIGNALED(st))
        snprintf(buf, len, " (killed by %s)", af_signal_name(WTERMSIG(st)));
    else if (st != -1 && WIFEXITED(st))
        snprintf(buf, len, " (exit %d)", WEXITSTATUS(st));
}

/* Pull the model's own error text out of the worker's stderr. */
void af_outcome_message_from_stderr(af_result *r, const char *errbuf)
{
    const char *best = NULL;
    for (const char *p = errbuf; (p = strstr(p, "Error: ")); p++)
        if (p == errbuf || p[-1] == '\n')
            best = p + 7;
    if (!best) {
        const char *e = strstr(errbuf, "Exception in aoti_torch: ");
        if (e)
            best = e + 25;
    }
    if (best && !r->message[0]) {
        size_t len = strcspn(best, "\n");
        snprintf(r->message, sizeof r->message, "%.*s", (int)len, best);
    }
}

/* Device-side asserts: keep the assert text and name the Triton kernel when stderr does. */
void af_outcome_device_fault_details(af_result *r, const char *errbuf)
{
    const char *a = strstr(errbuf, "Assertion `");
    if (a) {
        a += 11;
        size_t len = strcspn(a, "`'\n");
        snprintf(r->message, sizeof r->message, "%.*s", (int)len, a);
    }
    const char *k = strstr(errbuf, "triton_");
    if (k && !r->kernel[0]) { /* a name the launch itself gave (triage runs) is exact */
        size_t len = strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_");
        snprintf(r->kernel, sizeof r->kernel, "%.*s", (int)len, k);
    }
}

void af_outcome_from_stderr(af_result *r, const char *errbuf)
{
    if (r->cls == AF_RES_RUNTIME_ERROR || r->cls == AF_RES_OOM || r->cls == AF_RES_WORKER_LOST)
        af_outcome_message_from_stderr(r, errbuf);
    if (r->cls == AF_RES_RUNTIME_ERROR &&
        (strstr(r->message, "can't allocate memory") || strstr(r->message, "out of memory")))
        r->cls = AF_RES_OOM;
    if (r->cls == AF_RES_DEVICE_FAULT)
        af_outcome_device_fault_details(r, errbuf);
}
