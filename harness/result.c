/* result.c — result classes, signatures and their text/JSON forms; see aotif/result.h.
 *
 * The signature is what deduplicates bugs, so it keeps only what is stable across runs of
 * the same bug: the class, the error message with every number masked (shapes and
 * addresses change from case to case), the CUDA error name, and for a crash up to three
 * function names from the top of its stack (af_signature_frames: demangled, no offsets, the
 * model's frame preferred). */
#include "aotif/result.h"
#include "aotif/json.h"
#include "aotif/symbolize.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[AF_RES_COUNT] = {
    "OK",  "RUNTIME_ERROR", "SIGNAL",  "DEVICE_FAULT", "TIMEOUT",
    "OOM", "WORKER_LOST",   "REFUSED", "MISMATCH",
};

const char *af_class_name(af_class c)
{
    return (c >= 0 && c < AF_RES_COUNT) ? class_names[c] : "UNKNOWN";
}

int af_class_from_name(const char *name)
{
    for (int i = 0; i < AF_RES_COUNT; i++)
        if (strcmp(name, class_names[i]) == 0)
            return i;
    return -1;
}

int af_class_is_bug(af_class c)
{
    return c == AF_RES_RUNTIME_ERROR || c == AF_RES_SIGNAL || c == AF_RES_DEVICE_FAULT ||
           c == AF_RES_WORKER_LOST || c == AF_RES_MISMATCH;
}

int af_result_any_empty(const af_result *r)
{
    for (int i = 0; i < r->n_outputs; i++)
        if (r->outputs[i].numel == 0)
            return 1;
    return 0;
}

int af_result_any_nonfinite(const af_result *r)
{
    for (int i = 0; i < r->n_outputs; i++)
        if (r->outputs[i].n_nan || r->outputs[i].n_inf)
            return 1;
    return 0;
}

static void copy_str(char *dst, const char *src, size_t cap)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void af_result_reset(af_result *r)
{
    r->cls = AF_RES_OK;
    r->signature[0] = r->message[0] = r->cuda_error[0] = r->kernel[0] = r->triage[0] = '\0';
    r->signo = 0;
    r->fault_addr = 0;
    r->exit_status = 0;
    r->n_frames = 0;
    r->n_outputs = 0;
    r->run_seconds = 0;
}

void af_result_copy(af_result *dst, const af_result *src)
{
    dst->cls = src->cls;
    dst->signo = src->signo;
    dst->fault_addr = src->fault_addr;
    dst->exit_status = src->exit_status;
    dst->run_seconds = src->run_seconds;
    copy_str(dst->signature, src->signature, sizeof dst->signature);
    copy_str(dst->message, src->message, sizeof dst->message);
    copy_str(dst->cuda_error, src->cuda_error, sizeof dst->cuda_error);
    copy_str(dst->kernel, src->kernel, sizeof dst->kernel);
    copy_str(dst->triage, src->triage, sizeof dst->triage);
    dst->n_frames = src->n_frames < 0               ? 0
                    : src->n_frames > AF_MAX_FRAMES ? AF_MAX_FRAMES
                                                    : src->n_frames;
    for (int i = 0; i < dst->n_frames; i++)
        copy_str(dst->frames[i], src->frames[i], sizeof dst->frames[i]);
    memcpy(dst->frame_flags, src->frame_flags, (size_t)dst->n_frames);
    dst->n_outputs = src->n_outputs < 0                ? 0
                     : src->n_outputs > AF_MAX_OUTPUTS ? AF_MAX_OUTPUTS
                                                       : src->n_outputs;
    memcpy(dst->outputs, src->outputs, sizeof dst->outputs[0] * (size_t)dst->n_outputs);
}

void af_mask_numbers(const char *msg, char *dst, size_t len)
{
    size_t o = 0;
    if (!len)
        return;
    for (const char *p = msg; *p && o + 1 < len;) {
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
            p += 2;
            while (isxdigit((unsigned char)*p))
                p++;
            dst[o++] = '#';
        } else if (isdigit((unsigned char)*p) &&
                   (p == msg || !(isalpha((unsigned char)p[-1]) || p[-1] == '_'))) {
            /* a number standing alone; digits inside identifiers (tmp3, ks0, s77) are kept:
             * they are part of a name */
            while (isdigit((unsigned char)*p))
                p++;
            dst[o++] = '#';
        } else {
            dst[o++] = *p++;
        }
    }
    dst[o] = '\0';
}

const char *af_signal_name(int signo)
{
    switch (signo) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    default:
        return "SIG?";
    }
}

void af_result_sign(af_result *r)
{
    char masked[256], frames[200];
    const char *cls = af_class_name(r->cls);
    if (r->cls == AF_RES_OK) { /* every case that runs clean: its class alone, no message
                                  (a copy, not a format: this is once per exec) */
        memcpy(r->signature, cls, strlen(cls) + 1);
        return;
    }
    /* first line of the message only: later lines carry stack dumps and shapes */
    char first[512];
    snprintf(first, sizeof first, "%s", r->message);
    first[strcspn(first, "\n")] = '\0';
    af_mask_numbers(first, masked, sizeof masked);

    switch (r->cls) {
    case AF_RES_SIGNAL:
        af_signature_frames(r, frames, sizeof frames);
        if (frames[0]) {
            snprintf(r->signature, sizeof r->signature, "%s: %s @ %s", cls,
                     af_signal_name(r->signo), frames);
        } else {
            snprintf(r->signature, sizeof r->signature, "%s: %s", cls, af_signal_name(r->signo));
        }
        break;
    case AF_RES_DEVICE_FAULT:
        if (r->kernel[0])
            snprintf(r->signature, sizeof r->signature, "%s: %s @ %s: %s", cls, r->cuda_error,
                     r->kernel, masked);
        else if (strcmp(r->cuda_error, "CUDA_ERROR_ASSERT") == 0 && masked[0])
            /* a device-side assert's own text tells one assert (one kernel) from another */
            snprintf(r->signature, sizeof r->signature, "%s: %s: %s", cls, r->cuda_error, masked);
        else
            snprintf(r->signature, sizeof r->signature, "%s: %s", cls, r->cuda_error);
        break;
    case AF_RES_RUNTIME_ERROR:
        snprintf(r->signature, sizeof r->signature, "%s: %s", cls, masked);
        break;
    case AF_RES_MISMATCH: /* the message's first line is the key: output, kind, shape class */
        snprintf(r->signature, sizeof r->signature, "%s: %s", cls, first);
        break;
    case AF_RES_WORKER_LOST:
        if (r->signo)
            snprintf(r->signature, sizeof r->signature, "%s: killed by %s", cls,
                     af_signal_name(r->signo));
        else
            snprintf(r->signature, sizeof r->signature, "%s: exit %d", cls, r->exit_status);
        break;
    default:
        snprintf(r->signature, sizeof r->signature, "%s", cls);
        break;
    }
}

static void shape_text(const af_output_summary *o, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < o->rank && d < 8 && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, d ? ", %lld" : "%lld", (long long)o->sizes[d]);
    if (n < len)
        snprintf(buf + n, len - n, o->rank == 1 ? ",)" : ")");
}

void af_result_print(const af_result *r, FILE *f)
{
    fprintf(f, "result: %s\n", af_class_name(r->cls));
    fprintf(f, "signature: %s\n", r->signature);
    if (r->message[0])
        fprintf(f, "message: %s\n", r->message);
    if (r->cls == AF_RES_SIGNAL)
        fprintf(f, "signal: %s (%d) at address 0x%llx\n", af_signal_name(r->signo), r->signo,
                (unsigned long long)r->fault_addr);
    if (r->cuda_error[0])
        fprintf(f, "cuda error: %s\n", r->cuda_error);
    if (r->kernel[0])
        fprintf(f, "kernel: %s\n", r->kernel);
    if (r->triage[0])
        fprintf(f, "triage (CUDA_LAUNCH_BLOCKING=1): %s\n", r->triage);
    for (int i = 0; i < r->n_frames; i++)
        fprintf(f, "  #%d %s\n", i, r->frames[i]);
    for (int i = 0; i < r->n_outputs; i++) {
        char shape[160];
        shape_text(&r->outputs[i], shape, sizeof shape);
        fprintf(f, "output %d: shape %s, %lld NaN, %lld Inf, sum %.9g\n", i, shape,
                (long long)r->outputs[i].n_nan, (long long)r->outputs[i].n_inf, r->outputs[i].sum);
    }
}

cJSON *af_result_json(const af_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "class", af_class_name(r->cls));
    cJSON_AddStringToObject(o, "signature", r->signature);
    cJSON_AddStringToObject(o, "message", r->message);
    if (r->cls == AF_RES_SIGNAL || r->signo) {
        cJSON_AddStringToObject(o, "signal", af_signal_name(r->signo));
        char addr[32];
        snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)r->fault_addr);
        cJSON_AddStringToObject(o, "fault_addr", addr);
    }
    if (r->cls == AF_RES_WORKER_LOST)
        cJSON_AddNumberToObject(o, "exit_status", r->exit_status);
    if (r->cuda_error[0])
        cJSON_AddStringToObject(o, "cuda_error", r->cuda_error);
    if (r->kernel[0])
        cJSON_AddStringToObject(o, "kernel", r->kernel);
    if (r->triage[0])
        cJSON_AddStringToObject(o, "triage", r->triage);
    cJSON *frames = cJSON_AddArrayToObject(o, "frames");
    for (int i = 0; i < r->n_frames; i++)
        cJSON_AddItemToArray(frames, cJSON_CreateString(r->frames[i]));
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    for (int i = 0; i < r->n_outputs; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON *shape = cJSON_AddArrayToObject(e, "shape");
        for (int d = 0; d < r->outputs[i].rank && d < 8; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)r->outputs[i].sizes[d]));
        cJSON_AddNumberToObject(e, "nan", (double)r->outputs[i].n_nan);
        cJSON_AddNumberToObject(e, "inf", (double)r->outputs[i].n_inf);
        cJSON_AddNumberToObject(e, "sum", r->outputs[i].sum);
        cJSON_AddItemToArray(outs, e);
    }
    cJSON_AddNumberToObject(o, "run_seconds", r->run_seconds);
    return o;
}

char *af_result_to_json(const af_result *r)
{
    cJSON *o = af_result_json(r);
    char *s = o ? af_json_print(o, 0) : NULL;
    cJSON_Delete(o);
    return s;
}

/* "output N KIND" anywhere in text: N and the kind's family (value and nonfinite are one). */
static int mismatch_key(const char *text, int *out, char *kind, size_t klen)
{
    const char *g = text ? strstr(text, "output ") : NULL;
    char k[32];
    if (!g || sscanf(g, "output %d %31[a-z]", out, k) != 2)
        return -1;
    snprintf(kind, klen, "%s", strcmp(k, "nonfinite") == 0 ? "value" : k);
    return 0;
}

int af_mismatch_same(const char *a, const char *b)
{
    int na, nb;
    char ka[32], kb[32];
    return mismatch_key(a, &na, ka, sizeof ka) == 0 && mismatch_key(b, &nb, kb, sizeof kb) == 0 &&
           na == nb && strcmp(ka, kb) == 0;
}
