/* aotif/result.h — what running one case gave: a class, a signature and the details.
 *
 * The signature is the deduplication key: class + normalized message (numbers masked as
 * '#') + for a SIGNAL up to three function names from the top of the stack (see
 * aotif/symbolize.h), never an offset or an address. Two runs of the same bug give the same
 * signature. af_result is a plain value with fixed-size fields, sent as-is through the
 * worker's shared-memory mailbox. */
#ifndef AOTIF_RESULT_H
#define AOTIF_RESULT_H

#include <stdint.h>
#include <stdio.h>

#define AF_MAX_OUTPUTS 16
#define AF_MAX_FRAMES 24 /* deep enough to reach the model's frame under libtorch's op layers */
#define AF_FRAME_LEN 256 /* a raw frame holds a module path */

/* af_result.frame_flags: what the tool's symbolizer learned about a frame's module. */
#define AF_FRAME_MODEL 1u      /* in the model .so */
#define AF_FRAME_SELF 2u       /* in our own executable: the harness, never the bug */
#define AF_FRAME_SYMBOLIZED 4u /* rewritten from raw to display form */

typedef enum af_class {
    AF_RES_OK = 0,        /* ran; outputs summarized */
    AF_RES_RUNTIME_ERROR, /* Run returned an error (C++ exception in the model) */
    AF_RES_SIGNAL,        /* the worker died of a signal (SIGSEGV, SIGFPE, SIGABRT, ...) */
    AF_RES_DEVICE_FAULT,  /* sticky CUDA error (illegal address, device assert, launch failure) */
    AF_RES_TIMEOUT,       /* no answer within the time limit; the worker's group was killed */
    AF_RES_OOM,           /* host or device allocation failed, or the memory limit was hit */
    AF_RES_WORKER_LOST,   /* the worker exited or was killed without telling why */
    AF_RES_REFUSED,       /* not run: the case breaks the input budget or the spec */
    AF_RES_MISMATCH,      /* ran, but the outputs differ from eager's (the reference) */
    AF_RES_COUNT
} af_class;

typedef struct af_output_summary {
    int rank;
    int64_t sizes[8];
    int64_t numel;
    int64_t n_nan, n_inf;
    double sum; /* sum of the finite values of a float output, 0 otherwise */
} af_output_summary;

typedef struct af_result {
    af_class cls;
    char signature[256];
    char message[1024];  /* first error line(s), or the CUDA error string */
    int signo;           /* AF_RES_SIGNAL: the signal number */
    uint64_t fault_addr; /* AF_RES_SIGNAL: si_addr */
    int exit_status;     /* AF_RES_WORKER_LOST: exit code, -1 if none */
    char cuda_error[64]; /* AF_RES_DEVICE_FAULT / OOM on CUDA: e.g. CUDA_ERROR_ILLEGAL_ADDRESS */
    char kernel[128];    /* failing kernel, when it could be named */
    char triage[512];    /* DEVICE_FAULT: what the blocking-launch re-run said, "" if none */
    int n_frames;
    /* top first. As the worker's crash handler writes them (raw): "<module path>+0x<vaddr>"
     * (vaddr = PC - the module's load bias, the address the ELF file's symbols use) or "0x<PC>"
     * outside every known module. After af_symbolize_frames (display): "libfoo.so!function+0x1c"
     * (demangled, parameters kept, cut to fit) or "libfoo.so+0x<vaddr>" when no symbol covers it;
     * the model .so is named "<model>.so" (its file name is a hash). */
    char frames[AF_MAX_FRAMES][AF_FRAME_LEN];
    unsigned char frame_flags[AF_MAX_FRAMES]; /* AF_FRAME_* per frame, 0 before symbolizing */
    int n_outputs;
    af_output_summary outputs[AF_MAX_OUTPUTS];
    double run_seconds; /* time inside Run (+ sync) */
} af_result;

const char *af_class_name(af_class c);
const char *af_signal_name(int signo);
/* "SIGSEGV", ...; "SIG?" for others */   /* "OK", "RUNTIME_ERROR", ... */
int af_class_from_name(const char *name); /* -1 if unknown */
/* Whether this class is a bug by default (not OK, TIMEOUT, OOM or REFUSED). */
int af_class_is_bug(af_class c);
/* Whether any output is empty / has NaN or Inf. */
int af_result_any_empty(const af_result *r);
int af_result_any_nonfinite(const af_result *r);

/* Copy what src holds (strings up to their ends, the frames and outputs in use) into dst,
 * leaving the rest of dst alone: a few cache lines instead of the whole struct, which
 * matters when the copy crosses cores through shared memory once per case. */
void af_result_copy(af_result *dst, const af_result *src);
/* An empty result (class OK, no text, no frames, no outputs) as memset would leave it for
 * every field a reader looks at: the scalars, each string's first byte, the counts. The
 * frames and outputs past the counts are left as they were (a 10 KB clear per case). */
void af_result_reset(af_result *r);

/* Compute r->signature from the class, message, signal, CUDA error and frames. A SIGNAL's
 * is "SIGNAL: SIGSEGV @ f1 / f2 / f3" (af_signature_frames), or "SIGNAL: SIGSEGV @ module"
 * when no frame has a usable name, or "SIGNAL: SIGSEGV" with no frames at all. */
void af_result_sign(af_result *r);
/* Whether two MISMATCH signatures or messages ("output N KIND (shape class)...") name the same
 * finding: the same output, and the same kind, with "value" and "nonfinite" one kind (a package
 * that reads past its input gives a wrong value or a NaN depending on the garbage it reads, which
 * depends on the process's heap, not on the case). The shape class is not compared: it is a
 * bucket for deduplication while fuzzing, and a minimization moves a case across them. */
int af_mismatch_same(const char *a, const char *b);
/* Copy `msg` into dst, masking every run of digits (and hex addresses) as '#'. */
void af_mask_numbers(const char *msg, char *dst, size_t len);

/* One human-readable paragraph. */
void af_result_print(const af_result *r, FILE *f);
/* JSON object text; malloc'ed, caller frees. */
char *af_result_to_json(const af_result *r);
/* The same as a cJSON object, for a caller building a larger document (it owns it:
 * cJSON_Delete, or add it to a tree). NULL when out of memory. */
struct cJSON *af_result_json(const af_result *r);

#endif
