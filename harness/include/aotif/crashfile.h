/* aotif/crashfile.h — a self-describing record of one crash, shared by aoti-fuzz and
 * aoti-minimize.
 *
 * A crash file holds everything needed to run the crashing case again: the package (path
 * as given, absolute path, SHA-256), the model, the device, the case (symbol names with
 * their values, fill, seed) and what it gave (class, signature, message), plus when it was
 * first seen and how often. Symbols are stored by name, never by position, so a reader
 * maps them back onto whatever spec it derives from the package (af_crash_to_case).
 *
 * Format (docs/crash-file.md): a first line "AOTIF-CRASH 1\n", then one JSON object. The
 * "sidecar" next to it (crash-X.bin -> crash-X.json) holds the same object without the
 * header line; the fuzzer rewrites it as the count grows and leaves the .bin alone.
 *
 * af_crash is a plain value (fixed-size fields, no pointers): copy it freely. */
#ifndef AOTIF_CRASHFILE_H
#define AOTIF_CRASHFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/fileio.h"
#include "aotif/json.h"
#include "aotif/package.h"
#include "aotif/result.h"
#include "aotif/spec.h"

#define AF_CRASH_MAGIC "AOTIF-CRASH"
#define AF_CRASH_VERSION 1

typedef struct af_crash {
    int version;                    /* AF_CRASH_VERSION when written by us */
    char package_path[PATH_MAX];    /* as the user gave it */
    char package_abspath[PATH_MAX]; /* realpath at the time of the crash */
    char package_sha256[65];        /* lowercase hex of the whole .pt2 */
    char model[AF_NAME_MAX];        /* model name inside the package */
    char device[32];                /* "cpu", "cuda", "cuda:1" */
    int n_syms;
    char sym_names[AF_MAX_SYMS][AF_NAME_MAX]; /* spec symbol names ("s77") */
    char dim_names[AF_MAX_SYMS][AF_NAME_MAX]; /* user Dim names ("batch"), "" when unknown */
    int64_t values[AF_MAX_SYMS];              /* value of each symbol above */
    af_fill fill;
    uint64_t seed;
    af_class cls;
    char signature[256];
    char message[1024];
    char cuda_error[64];     /* device faults: "CUDA_ERROR_ILLEGAL_ADDRESS"; "" otherwise */
    char kernel[128];        /* the failing kernel, when it could be named; "" otherwise */
    char triage[512];        /* device faults: what the blocking-launch re-run said */
    int below_compiled;      /* some symbol below its compiled lower bound */
    af_ctv contract;         /* where the case lies relative to the declared contract */
    char contract_note[384]; /* one line saying why (af_case_verdict) */
    int beyond_contract;     /* found while exploring beyond the contract (--beyond-contract) */
    char exported[PATH_MAX]; /* the --exported file the contract came from (absolute), or "" */
    char eager[24];          /* eager's verdict: "EAGER_FAILS_TOO", "AOTI_ONLY", "NOT_RUN",
                              * "LOST" (the reference died), "" when never asked */
    char eager_error[640];   /* eager's error ("IndexError: ..."), or why it was not run */
    int have_tol;            /* a MISMATCH found with given tolerances (else assert_close's) */
    double rtol, atol;       /* those tolerances */
    char where_json[8192];   /* "where": where.h's JSON form of where the case failed, from the
                              * package's sources, as compact JSON text; "" when not worked out */
    int flaky;               /* the re-run did not give the same signature */
    int64_t first_seen;      /* Unix time, seconds */
    int64_t last_seen;       /* Unix time, seconds */
    int64_t count;           /* times this signature was seen (all jobs writing the same dir) */
} af_crash;

/* Fill `out` from a run: package identity, the case (by symbol name) and the result.
 * `device` is the device the case ran on (NULL: the package's). Sets count 1 and the
 * first/last-seen times to now. Never fails. */
void af_crash_from_run(af_crash *out, const af_package *pkg, const af_spec *spec, const af_case *c,
                       const af_result *r, const char *device);

/* Work out where the result failed from the package's sources (where.h) and keep it in
 * c->where_json. 1 when it was, 0 when not (a MISMATCH, no kernel named, sources missing or
 * the JSON too large). */
int af_crash_set_where(af_crash *c, const af_package *pkg, const af_spec *spec, const af_result *r);

/* Write the crash file atomically (temp file in the same dir, fsync, rename, fsync dir).
 * Returns 0 or -1 (AF_E_IO). */
int af_crash_write(const char *path, const af_crash *crash, af_error *err);
/* Same, but never replaces: when `path` exists, fails with AF_E_IO and sys_errno EEXIST
 * (two jobs racing on one signature: exactly one wins). */
int af_crash_create(const char *path, const af_crash *crash, af_error *err);
/* Write the sidecar (the JSON object alone) atomically. */
int af_crash_write_sidecar(const char *path, const af_crash *crash, af_error *err);
/* Read a crash file. A truncated, foreign or wrong-version file gives AF_E_INPUT with a
 * one-line message ("crash.bin: not an aoti-fuzz crash file (bad magic)",
 * "crash.bin: truncated JSON", "crash.bin: unsupported version 7"). */
int af_crash_read(const char *path, af_crash *out, af_error *err);
/* Read a sidecar (JSON without the header line). Same errors as af_crash_read. */
int af_crash_read_sidecar(const char *path, af_crash *out, af_error *err);

/* JSON text of the object (malloc'ed, caller frees with free()); NULL on OOM. */
char *af_crash_to_json(const af_crash *crash);
/* Parse the JSON object; `what` names the source in messages (a file name). */
int af_crash_from_json(const char *text, size_t len, const char *what, af_crash *out,
                       af_error *err);

/* Map the crash's symbols onto `spec` by name (falling back to the Dim name) and build a
 * case. A symbol of the crash missing from the spec, a spec symbol the crash does not set,
 * or a value outside the spec's declared range gives AF_E_INPUT. */
int af_crash_to_case(const af_crash *crash, const af_spec *spec, af_case *out, af_error *err);

/* The sidecar path for a crash file path: ".bin" replaced by ".json", else ".json"
 * appended. Returns 0, or -1 when it does not fit. */
int af_crash_sidecar_path(const char *crash_path, char *buf, size_t len);

/* The package a crash file names, as every tool finds it: its real path when recorded
 * (package.abspath) if still readable, else the path as the user gave it (relative to where the
 * fuzzer ran: tried from the cwd, then from the crash file's directory `crash_path`'s dir). */
void af_crash_package_path(const af_crash *cr, const char *crash_path, char *buf, size_t len);

#endif
