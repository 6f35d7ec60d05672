/* repro.h — the reproducers and the bug report for a minimal case, and their re-checks.
 *
 * Given the package, its spec and a minimal failing case, this module writes:
 *   repro.py   standalone Python (torch + the package, nothing else): builds the inputs
 *              with the exact shapes, dtypes, device and values (the fill function of
 *              docs/fill.md in torch int64 ops), loads the package with
 *              torch._inductor.aoti_load_package, calls the model and fails the same way;
 *   repro.sh   the same case through aoti-run, no Python needed; extra arguments ("$@",
 *              e.g. --json or --repeat 5) go to aoti-run;
 *   report.md  a bug report to paste: what happens, the minimal shapes next to the declared
 *              and compiled ranges, which sizes matter (the explain phase, the crash map,
 *              linked), the error, both repros inline, versions.
 * Every path and name from the package, the spec or the file system that lands in a script
 * is quoted for that language (Python: a str literal, or os.fsdecode of a bytes literal for
 * non-ASCII; shell: single quotes); in comments and prose it is reduced to printable ASCII
 * (quote.h).
 *
 * It also runs the written scripts again in subprocesses (af_repro_check_sh/_py) and
 * judges whether they reproduced. These are the only functions here that run anything (with
 * af_repro_find_python and af_repro_host_info); they run in a private TMPDIR, with torch's
 * inductor cache in aoti-fuzz's cache dir (kept between runs), and dump no core.
 *
 * The code: repro_py.c, repro_sh.c and report.c write the texts (sharing repro.c's case
 * texts, repro_internal.h), quote.c quotes, recheck.c runs and judges the scripts through
 * proc.c, and repro.c writes the files.
 *
 * Text functions return malloc'ed strings the caller frees (NULL on OOM). Every pointer in
 * af_repro_info is borrowed for the duration of the call. */
#ifndef AOTIF_MIN_REPRO_H
#define AOTIF_MIN_REPRO_H

#include <signal.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/result.h"
#include "aotif/spec.h"
#include "aotif/where.h"
#include "crashmap.h"
#include "explain.h"

#ifndef AF_VERSION
#define AF_VERSION "0.1.0"
#endif

/* The outcome of re-running one written reproducer. */
typedef struct af_repro_check {
    int ran;                /* 1: the script ran to an end; 0: skipped or could not start */
    int reproduced;         /* 1: it failed the same way as the minimal case */
    int exit_status;        /* its exit code, or -1 when a signal ended it */
    int signo;              /* the signal that ended it, or 0 */
    int timed_out;          /* killed after the time limit */
    double seconds;         /* wall time */
    char detail[512];       /* one line: what happened, or why it did not run */
    char torch_version[64]; /* repro.py: the torch version it printed, "" if none */
    char preload[128];      /* repro.py: the LD_PRELOAD the judged run had, or "" */
    char preload_how[16];   /* ... and why: "retry" (the start without it died), "remembered"
                             * (the loader memory's), "forced" (AOTI_FUZZ_LOADER=preload) */
    int warm;               /* repro.py: the judged run was in the Python started ahead */
    int warm_ready;         /* ... which had finished its warm-up when asked */
    double warm_up_s;       /* ... its warm-up (imports, torch's CPU-ISA probe), seconds */
    double warm_started_s;  /* ... how long before the check it was started, seconds */
} af_repro_check;

/* A different failure met on the way (never taken by the minimizer). */
typedef struct af_repro_finding {
    char case_str[256]; /* "n=0 m=3 fill=zeros seed=0" */
    af_class cls;
    char signature[256];
} af_repro_finding;

typedef struct af_repro_info {
    const af_package *pkg;
    const af_spec *spec;
    const char *device;        /* device the case ran on: "cpu", "cuda:0" */
    const af_case *start;      /* the crash file's case */
    const af_case *minimal;    /* the minimal case */
    const af_result *result;   /* a run of the minimal case that gave the crash's signature */
    const char *crash_path;    /* the crash file given to aoti-minimize */
    const char *aoti_run;      /* absolute path of aoti-run, embedded in repro.sh */
    const char *torch_lib;     /* libtorch dir the workers used, or NULL */
    const char *spec_file;     /* absolute path of the --spec file, or NULL (the package's) */
    const char *exported_file; /* absolute path of the --exported file, or NULL */
    const char *program;       /* the exported program repro.py runs eagerly first, or NULL */
    const char *eager;         /* eager's verdict on the minimal case (af_crash.eager) */
    const char *eager_error;   /* eager's error, or why eager was not run */
    int have_tol;              /* repro.py's comparison tolerances (else assert_close's) */
    double rtol, atol;
    int with_check_inputs; /* the case was minimized with AOTI_RUNTIME_CHECK_INPUTS=1
                            * (--check-inputs): both scripts set it too */
    /* for report.md only (NULL / 0 where unknown) */
    const char *versions;      /* af_pool_versions text (torch lib, CUDA, driver, GPU) */
    const char *torch_version; /* "2.13.0+cpu" */
    const char *compiler;      /* first line of gcc --version */
    const char *os_name;       /* PRETTY_NAME of /etc/os-release */
    const char *check_inputs;  /* what the minimal case gives with AOTI_RUNTIME_CHECK_INPUTS=1 */
    int64_t oracle_calls;      /* distinct questions the minimizer asked */
    int64_t oracle_runs;       /* worker runs they took (reproduction and votes included) */
    int64_t cache_hits;        /* questions answered from the cache */
    double search_seconds;     /* minimization wall time */
    int runs_per_question;     /* 1, or the majority vote size for a flaky case */
    int repro_runs;            /* initial reproduction check: runs ... */
    int repro_same;            /* ... and how many gave the crash's signature */
    int stopped;               /* budget or Ctrl-C ended the search early */
    int locally_minimal;       /* 1 checked, 0 not (stopped early) */
    const af_repro_finding *findings;
    int n_findings;
    int64_t call_bound;           /* the engine's bound on oracle_calls (explain included) */
    int64_t explain_calls;        /* of oracle_calls, the explain phase's */
    const af_explain *explain;    /* which symbols are free / pinned; NULL: not run */
    const af_crashmap *crash_map; /* NULL: not drawn */
    const char *crash_map_file;   /* its SVG, relative to report.md ("crashmap.svg"), or NULL */
    const char *crash_map_why;    /* why there is no map, or NULL */
    const af_where *where; /* kernel -> source nodes -> inputs (report's "## Where"); NULL: none */
    const af_repro_check *sh_check; /* NULL: not run */
    const af_repro_check *py_check; /* NULL: not run */
} af_repro_info;

/* Script and report texts. */
char *af_repro_py_text(const af_repro_info *info);
char *af_repro_sh_text(const af_repro_info *info);
char *af_repro_report_text(const af_repro_info *info);

/* Write repro.py and repro.sh (made executable) into dir, atomically. */
int af_repro_write_scripts(const char *dir, const af_repro_info *info, af_error *err);
/* Write report.md into dir, atomically. */
int af_repro_write_report(const char *dir, const af_repro_info *info, af_error *err);

/* A Python started ahead for the repro.py check (harness/python/aotif_warm.py): started at
 * aoti-minimize's start with the environment the check gives repro.py (the loader memory's
 * preload, TORCHINDUCTOR_VEC_ISA_OK, a private TMPDIR, the kept inductor cache), it imports
 * torch and runs torch's CPU-ISA probe while the search runs, then runs repro.py when
 * af_repro_check_py hands it the path. With `both`, when the loader memory has no answer
 * for this Python yet and a retry the other way would be allowed (aotif/env.h), a second one
 * is started for that retry, so that a first check on a machine that needs the preload does
 * not pay for a cold start after the dying one. NULL from af_warm_py_start when none can
 * start: the check then starts its own Python, as without it. af_warm_py_free kills them if
 * unused and removes their temp dirs; the caller owns the handle. */
typedef struct af_warm_py af_warm_py;
af_warm_py *af_warm_py_start(const char *python, int both);
void af_warm_py_free(af_warm_py *w);

/* Run `/bin/sh sh_path --json` and judge it: reproduced when it exits 1 and its JSON
 * signature equals expect->signature. `stop` (may be NULL) ends the wait early when set. */
void af_repro_check_sh(const char *sh_path, const af_result *expect, double timeout_s,
                       const volatile int *stop, af_repro_check *out);
/* Run `python py_path` and judge it (a Python that cannot import torch counts as not run).
 * The first start follows the loader memory (aotif/env.h): with the system's libstdc++ in
 * LD_PRELOAD (see repro.py's note) when this Python needed it before. When that start fails
 * in the loader (Python dies of a signal while loading the package, before the model is
 * called; or cannot import torch for its C++ runtime, or at all under a remembered preload),
 * it is run once more the other way and that run is judged; when the second one comes up,
 * the memory learns it. `preload` names the judged run's preload. It runs with
 * TORCHINDUCTOR_VEC_ISA_OK=1 unless that is set (torch's ISA self-test when loading a
 * package feeds only a warning, and costs torch starts of its own; see recheck.c). Then:
 * a SIGNAL (or a worker lost to a signal) reproduces
 * when Python dies of the same signal; RUNTIME_ERROR and DEVICE_FAULT when the script
 * reports a raised exception whose message, numbers masked, holds the expected one. With
 * warm (may be NULL), each start is a Python started ahead with that start's preload when
 * one is still there, else a fresh Python. */
void af_repro_check_py(const char *python, const char *py_path, af_warm_py *warm,
                       const af_result *expect, double timeout_s, const volatile int *stop,
                       af_repro_check *out);

/* Find a Python that imports torch: $AOTI_FUZZ_PYTHON, else python3. Fills python and
 * torch_version and returns 0, or returns -1 (why in `why`). */
int af_repro_find_python(char *python, size_t plen, char *torch_version, size_t vlen, char *why,
                         size_t wlen);
/* The first line of `gcc --version` and /etc/os-release's PRETTY_NAME ("" when unknown). */
void af_repro_host_info(char *compiler, size_t clen, char *os_name, size_t olen);

#endif
