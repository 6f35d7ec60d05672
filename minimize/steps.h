/* steps.h — aoti-minimize's own parts, private to the tool: the oracle it gives the engine
 * (oracle.c), the steps main runs one after the other (steps.c) and what it prints and
 * writes about them (summary.c).
 *
 * Every step takes the one context, af_mz, which holds the command line, what was read and
 * started, and what each step found, for the steps after it. A step returns 0 to go on, or
 * the exit status to end with (2 bad input, 1 does not reproduce or the harness failed, 130
 * interrupted) after it said why on stderr; whatever it started stays in the context for
 * af_mz_close. The context is large (crash files, specs, the crash map): main keeps it in
 * static storage.
 *
 * Ownership: af_mz owns the package, the pool, the reference, the memo and the Python started
 * ahead (released by af_mz_close); its pointers to strings point into argv, into its own arrays, or
 * to static strings. */
#ifndef AOTIF_MIN_STEPS_H
#define AOTIF_MIN_STEPS_H

#include <limits.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "aotif/cli.h"
#include "aotif/crashfile.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/spec.h"
#include "aotif/where.h"
#include "aotif/worker.h"
#include "crashmap.h"
#include "ddmin.h"
#include "explain.h"
#include "memo.h"
#include "repro.h"

/* --- the oracle (oracle.c) ------------------------------------------------------------------ */

/* What the oracle needs to run and judge a case, what it saw, and the progress display. */
typedef struct af_mz_oracle {
    af_pool *pool;
    af_ref *ref;           /* the eager reference, or NULL */
    af_ref_result last_rr; /* its answer to the latest value check */
    const af_spec *spec;
    const af_crash *crash;
    af_case start;
    int64_t n_pass, n_same, n_other, n_refused, n_timeout, n_oom; /* worker runs by outcome */
    int have_same; /* same_case / same_result hold the latest SAME run */
    af_case same_case;
    af_result same_result;
    char start_gave[300]; /* what the start case gave when it was not SAME */
    af_class other_cls;   /* the class of the latest OTHER run, for the engine's side findings */
    af_error fatal;       /* why the oracle answered ERROR */
    /* progress display */
    int tty;
    double t0, last_draw;
    char stage[32];
    int drawn; /* a progress line is on the terminal, unterminated */
} af_mz_oracle;

/* The af_oracle_fn (ddmin.h) of aoti-minimize: runs case c in a worker (or, for a MISMATCH,
 * against the eager reference) and compares with the crash. ctx is an af_mz_oracle. */
af_verdict af_mz_ask(void *ctx, const af_case *c, char *other, size_t olen);
/* The engine's and the crash map's progress callbacks (ctx: an af_mz_oracle), on stderr. */
void af_mz_progress(void *ctx, const char *stage, int64_t calls, const af_case *best);
void af_mz_map_progress(void *ctx, int64_t done, int64_t total);
/* End a progress line left unterminated on the terminal. */
void af_mz_end_line(af_mz_oracle *o);

/* --- the context ---------------------------------------------------------------------------- */

/* The command line. */
typedef struct af_mz_flags {
    const char *crash_path;
    const char *out; /* --out, or NULL: <crash stem>.min next to the crash file */
    double budget_s; /* --budget, 0: none */
    int64_t runs;    /* --runs */
    int json, no_check, keep_fill, no_map;
    /* The shared flags (aotif/cli.h). Where the crash file records a setting (the model,
     * the device, the --exported file), a flag given here overrides it: af_mz_read_crash
     * fills model and device from the crash file when they were not given, and
     * af_mz_open the exported file when neither --spec nor --exported was. */
    af_cli_opts co;
} af_mz_flags;

/* Where the wall time went, for the JSON summary. */
enum { AF_MZ_PH_POOL, AF_MZ_PH_REF, AF_MZ_PH_CHECK_INPUTS, AF_MZ_PH_CHECKS, AF_MZ_PH_N };

typedef struct af_mz {
    af_mz_flags f;
    volatile int *stop; /* set by the first SIGINT/SIGTERM (interrupt.h) */
    af_error err;
    /* read and opened (af_mz_read_crash, af_mz_open) */
    af_crash crash;
    char out_dir[PATH_MAX], pkg_path[PATH_MAX];
    af_package *pkg;
    af_spec spec;
    char start_str[1024]; /* the crash file's case, as text */
    const char *program;  /* the exported program for the eager reference, or NULL */
    char why_no_ref[160]; /* why there is no reference, or "" */
    af_worker_opts wopts; /* the workers' options: the shared flags, then ours */
    af_ref_opts ropts;    /* the reference's: the shared flags, then the crash file's */
    af_mz_oracle o;       /* the oracle: pool, reference, counts, progress */
    af_memo *memo;        /* every answer, shared by the search, explain and the crash map */
    double phase_s[AF_MZ_PH_N];
    /* the search (af_mz_search) */
    af_min_report rep;
    af_explain ex;
    int erc;         /* af_minimize's return: -1 when the search ended early on an error */
    double search_s; /* its wall time */
    /* the minimal case (af_mz_minimal_result) */
    af_case best;
    af_result res; /* a run of it with the crash's signature (or the crash file's words) */
    af_ref_result eager_rr;
    int have_eager; /* eager_rr holds eager's answer on the minimal case */
    /* the crash map (af_mz_crash_map) */
    af_crashmap cmap;
    int have_map;
    char map_why[200];    /* why there is none */
    const char *map_file; /* "crashmap.svg" once written, else NULL */
    /* the workers' facts (af_mz_stop_workers) */
    char versions[1024], torch_lib[PATH_MAX];
    af_pool_stats pst;
    /* what is written (af_mz_write_minimal, af_mz_side_findings, af_mz_write_repro) */
    af_crash mc; /* minimal.bin */
    af_repro_finding findings[AF_MIN_SIDE_MAX];
    char aoti_run[PATH_MAX], spec_abs[PATH_MAX], exported_abs[PATH_MAX];
    char compiler[256], os_name[256];
    af_where where;
    int have_where;
    af_repro_info info; /* what repro.h writes from */
    /* the re-checks (af_mz_recheck) */
    af_warm_py *warm; /* the Python started ahead for the repro.py check, or NULL */
    af_repro_check shc, pyc;
    char torch_version[64], check_inputs[600];
    char python[PATH_MAX], python_why[512];
} af_mz;

/* --- the steps (steps.c, then outputs.c), in the order main runs them ----------------------- */

/* Read the crash file; name the output dir and check it could be made; take the model and
 * the device from the crash file unless the command line named them. */
int af_mz_read_crash(af_mz *m);
/* Open the package and its spec, the case to start from, the workers and the reference. */
int af_mz_open(af_mz *m);
/* Reproduce, minimize and explain (one engine call); a crash that does not reproduce ends
 * here (the JSON summary of it included). */
int af_mz_search(af_mz *m);
/* A full result for the minimal case, its device-fault triage, and eager's verdict on it. */
int af_mz_minimal_result(af_mz *m);
/* The crash map, unless told not to or cut short. */
int af_mz_crash_map(af_mz *m);
/* Stop the reference and the workers, keeping what the report says of them. */
int af_mz_stop_workers(af_mz *m);
/* The output dir, minimal.bin, minimal.json and crashmap.svg. */
int af_mz_write_minimal(af_mz *m);
/* The other failures met on the way, for the report and the summaries. */
int af_mz_side_findings(af_mz *m);
/* repro.py and repro.sh. */
int af_mz_write_repro(af_mz *m);
/* Run the minimal case with the input checks on, and repro.sh and repro.py again. */
int af_mz_recheck(af_mz *m);
/* report.md. */
int af_mz_write_report(af_mz *m);
/* Release what the steps started; safe at any point. */
void af_mz_close(af_mz *m);
/* "aoti-minimize: <message>" on stderr; returns rc (a step's exit status). */
int af_mz_fail(int rc, const char *fmt, ...) AF_PRINTF(2, 3);

/* --- what is printed and written about it (summary.c) --------------------------------------- */

/* A case as JSON: its text, symbols, shapes, fill, seed and contract verdict. */
cJSON *af_mz_case_json(const af_spec *spec, const af_case *c);
/* minimal.json: the crash file's sidecar plus the explain result and the crash map. */
int af_mz_write_minimal_json(const af_mz *m, const char *path, af_error *err);
/* The JSON summary of a crash that did not reproduce (--json), on stdout. */
void af_mz_print_not_reproduced(const af_mz *m);
/* The summary on stdout: JSON with --json, else a few lines of text. */
void af_mz_print_summary(const af_mz *m);

#endif
