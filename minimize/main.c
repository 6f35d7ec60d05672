/* aoti-minimize — shrink the case of a crash file to a locally minimal one that fails the
 * same way, and write what a bug report needs.
 *
 *   aoti-minimize crash.bin [--out DIR] [--budget SECONDS] [--runs N] [--json]
 *                 [--torch-lib DIR] [--timeout S] [--no-repro-check] [--no-crash-map] [-v]
 *
 * The crash file is all it needs: it names the package (re-opened, with a warning when its
 * SHA-256 changed), the model, the device and the case. The engine (ddmin.h) asks an oracle
 * about cases; the oracle here runs each case in a worker (worker.h) and compares with the
 * crash: SAME when the class and signature are the crash's, PASS when it ran fine or was not
 * a bug (refused, timeout, OOM: counted), OTHER for any other failure (a different bug, a
 * side finding, never taken). Workers crashing is the normal case here.
 *
 * After the minimal case the engine explains it (explain.h: which symbols are free, which
 * pinned), and then a crash map (crashmap.h) draws the outcomes over the two symbols that
 * matter most. The three share one memo (memo.h): no case is run twice.
 *
 * Outputs, each written atomically, in DIR (default: <crash stem>.min next to the crash):
 * minimal.bin + minimal.json (a crash file of the minimal case and its sidecar), repro.py,
 * repro.sh and report.md (repro.h), crashmap.svg (unless --no-crash-map). After writing, repro.sh
 * (and repro.py when a Python with torch is there) are run again and judged; the answers go into
 * the report and the
 * --json summary.
 *
 * Exit status: 0 minimized (also when --budget cut the search short: the best case so far
 * is written), 1 the crash does not reproduce or the harness failed, 2 bad flags or a bad
 * crash file, 130 interrupted (SIGINT/SIGTERM; the best case so far is still written). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aotif/args.h"
#include "aotif/clock.h"
#include "aotif/crashfile.h"
#include "aotif/interrupt.h"
#include "aotif/json.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/spec.h"
#include "aotif/worker.h"
#include "crashmap.h"
#include "ddmin.h"
#include "explain.h"
#include "memo.h"
#include "repro.h"

/* The engine's stop flag: the first SIGINT/SIGTERM sets it (the search winds down and what it
 * found is written); a second removes the package's temp dir and ends the process. Both are
 * handled by interrupt.h's sigwait thread, not in a signal handler. */
static volatile int g_stop;

static void usage(FILE *f)
{
    fputs("usage: aoti-minimize CRASH.bin [options]\n"
          "Shrink the case of an aoti-fuzz crash file to a locally minimal one that fails the\n"
          "same way; write minimal.bin, repro.py, repro.sh and report.md.\n"
          "  --out DIR          output dir (default: <crash stem>.min next to the crash file)\n"
          "  --budget SECONDS   stop the search after this long, keep the best case so far\n"
          "  --runs N           runs of the crash case before minimizing (at least 3), and\n"
          "                     per question once it proves flaky (majority vote; default 3;\n"
          "                     above 3, every question takes N runs)\n"
          "  --keep-fill        do not try simpler fills (zeros, ones, seed 0)\n"
          "  --json             machine-readable summary on stdout\n"
          "  --spec FILE        shape spec file (when the fuzzer was given one)\n"
          "  --exported FILE    the model's torch.export.save file (default: the one the\n"
          "                     crash file names, else the archive's own exported program)\n"
          "  --no-eager         no eager reference (no verdict; a MISMATCH cannot be minimized)\n"
          "  --rtol X --atol Y  comparison tolerances for a MISMATCH (default: the\n"
          "                     torch.testing.assert_close defaults)\n"
          "  --beyond-contract  search below the declared minimums too (default: only when\n"
          "                     the crash itself lies outside the declared contract)\n"
          "  --torch-lib DIR    directory holding libtorch.so\n"
          "  --timeout SECONDS  per run (default 30)\n"
          "  --no-repro-check   do not run repro.sh / repro.py after writing them\n"
          "  --no-crash-map     do not draw crashmap.svg (its cases are extra runs, up to\n"
          "                     16 x 16, outside the bound on questions)\n"
          "  -v, --verbose      show the workers' stderr\n"
          "Exit status: 0 minimized, 1 does not reproduce (or the harness failed), 2 bad input,\n"
          "130 interrupted (the best case so far is written).\n"
          "A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
          f);
}

/* --- the oracle --------------------------------------------------------------------------- */

typedef struct mctx {
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
} mctx;

static af_verdict judge(mctx *m, const af_case *c, const af_result *r, char *other, size_t olen)
{
    if (r->cls == m->crash->cls &&
        (strcmp(r->signature, m->crash->signature) == 0 ||
         (r->cls == AF_RES_MISMATCH && af_mismatch_same(r->signature, m->crash->signature)))) {
        m->n_same++;
        m->have_same = 1;
        m->same_case = *c;
        m->same_result = *r;
        return AF_V_SAME;
    }
    if (af_case_equal(c, &m->start))
        snprintf(m->start_gave, sizeof m->start_gave, "%s", r->signature);
    switch (r->cls) {
    case AF_RES_OK:
        m->n_pass++;
        return AF_V_PASS;
    /* not a bug, and not this one: minimization treats them as passing, counted apart;
     * the class goes with the answer, for the crash map */
    case AF_RES_REFUSED:
        m->n_refused++;
        break;
    case AF_RES_TIMEOUT:
        m->n_timeout++;
        break;
    case AF_RES_OOM:
        m->n_oom++;
        break;
    default:
        m->n_other++;
        m->other_cls = r->cls;
        snprintf(other, olen, "%s", r->signature);
        return AF_V_OTHER;
    }
    snprintf(other, olen, "%s", af_class_name(r->cls));
    return AF_V_PASS;
}

static af_verdict oracle(void *ctx, const af_case *c, char *other, size_t olen)
{
    mctx *m = ctx;
    af_result r;
    if (m->crash->cls == AF_RES_MISMATCH && m->ref) { /* a mismatch is seen only against eager */
        if (af_ref_check(m->pool, m->ref, m->spec, c, &r, &m->last_rr, &m->fatal) != 0) {
            snprintf(other, olen, "%s", m->fatal.message);
            return AF_V_ERROR;
        }
        return judge(m, c, &r, other, olen);
    }
    if (af_pool_run(m->pool, c, &r, &m->fatal) != 0) {
        snprintf(other, olen, "%s", m->fatal.message);
        return AF_V_ERROR;
    }
    return judge(m, c, &r, other, olen);
}

/* --- progress ----------------------------------------------------------------------------- */

static void end_line(mctx *m)
{
    if (m->drawn) {
        fputc('\n', stderr);
        m->drawn = 0;
    }
}

/* On a terminal: one line redrawn in place. Otherwise: a line per stage and improvement. */
static void on_progress(void *ctx, const char *stage, int64_t calls, const af_case *best)
{
    mctx *m = ctx;
    char cs[512];
    double now = af_now_s();
    int improved = strcmp(stage, "improved") == 0;
    int new_stage = !improved && strcmp(stage, m->stage) != 0;
    if (!improved)
        snprintf(m->stage, sizeof m->stage, "%s", stage);
    af_case_str(m->spec, best, cs, sizeof cs);
    if (m->tty) {
        if (!new_stage && !improved && now - m->last_draw < 0.1)
            return;
        fprintf(stderr,
                "\r\033[Kaoti-minimize: %-9s %5" PRId64 " questions  best %s fill %s seed %" PRIu64
                "  %.1f s",
                m->stage, calls, cs, af_fill_name(best->fill), best->seed, now - m->t0);
        fflush(stderr);
        m->drawn = 1;
        m->last_draw = now;
    } else if (improved || (new_stage && (!strcmp(stage, "reproduce") || !strcmp(stage, "done")))) {
        fprintf(stderr,
                "aoti-minimize: %s %s: %" PRId64 " questions, best %s fill %s seed %" PRIu64
                " (%.1f s)\n",
                m->stage, improved ? "improved" : "stage", calls, cs, af_fill_name(best->fill),
                best->seed, now - m->t0);
    }
}

/* The crash map's cases: redrawn in place on a terminal, else a line every 64 cases. */
static void on_map_progress(void *ctx, int64_t done, int64_t total)
{
    mctx *m = ctx;
    if (m->tty) {
        fprintf(stderr, "\r\033[Kaoti-minimize: crash map %" PRId64 "/%" PRId64 " cases  %.1f s",
                done, total, af_now_s() - m->t0);
        fflush(stderr);
        m->drawn = 1;
    } else if (done % 64 == 0 || done == total) {
        fprintf(stderr, "aoti-minimize: crash map: %" PRId64 " of %" PRId64 " cases (%.1f s)\n",
                done, total, af_now_s() - m->t0);
    }
}

/* --- helpers ------------------------------------------------------------------------------- */

/* "<dir of crash>/<crash stem>.min" */
static void default_out_dir(const char *crash_path, char *buf, size_t len)
{
    const char *slash = strrchr(crash_path, '/');
    const char *base = slash ? slash + 1 : crash_path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(buf, len, "%.*s%.*s.min", (int)(base - crash_path), crash_path, (int)stem, base);
}

/* aoti-run for repro.sh: $AOTI_RUN, else next to us, else ../harness/ (the build tree),
 * else on PATH. "" when none is found. */
static void find_aoti_run(char *buf, size_t len)
{
    char self[PATH_MAX], cand[PATH_MAX + 32];
    const char *env = getenv("AOTI_RUN");
    buf[0] = '\0';
    if (env && *env) {
        if (!realpath(env, buf))
            snprintf(buf, len, "%s", env);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            const char *rel[] = {"/aoti-run", "/../harness/aoti-run"};
            for (int i = 0; i < 2; i++) {
                snprintf(cand, sizeof cand, "%s%s", self, rel[i]);
                if (access(cand, X_OK) == 0 && realpath(cand, buf))
                    return;
            }
        }
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t l = strcspn(path, ":");
        snprintf(cand, sizeof cand, "%.*s/aoti-run", (int)l, path);
        if (l && cand[0] == '/' && access(cand, X_OK) == 0) {
            snprintf(buf, len, "%s", cand);
            return;
        }
        path += l + (path[l] == ':');
    }
    buf[0] = '\0';
}

static cJSON *case_json(const af_spec *spec, const af_case *c)
{
    cJSON *o = cJSON_CreateObject();
    char cs[1024];
    af_case_str(spec, c, cs, sizeof cs);
    cJSON_AddStringToObject(o, "case", cs);
    cJSON *sy = cJSON_AddObjectToObject(o, "symbols");
    for (int k = 0; k < spec->n_syms; k++)
        cJSON_AddNumberToObject(
            sy, spec->syms[k].dim_name[0] ? spec->syms[k].dim_name : spec->syms[k].name,
            (double)c->values[k]);
    cJSON *sh = cJSON_AddArrayToObject(o, "shapes");
    for (int i = 0; i < spec->n_inputs; i++) {
        cJSON *one = cJSON_CreateArray();
        for (int d = 0; d < spec->inputs[i].rank; d++)
            cJSON_AddItemToArray(one, cJSON_CreateNumber((double)af_case_dim(spec, c, i, d)));
        cJSON_AddItemToArray(sh, one);
    }
    cJSON_AddStringToObject(o, "fill", af_fill_name(c->fill));
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, c->seed);
    if (c->seed <= (1ULL << 53))
        cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    else
        cJSON_AddStringToObject(o, "seed", seed);
    cJSON_AddBoolToObject(o, "below_compiled_lower_bound", af_case_below_compiled(spec, c));
    char why[384];
    cJSON_AddStringToObject(o, "contract", af_ctv_name(af_case_verdict(spec, c, why, sizeof why)));
    cJSON_AddStringToObject(o, "contract_note", why);
    return o;
}

static cJSON *check_json(const af_repro_check *c)
{
    if (!c)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ran", c->ran);
    cJSON_AddBoolToObject(o, "reproduced", c->reproduced);
    cJSON_AddNumberToObject(o, "exit_status", c->exit_status);
    cJSON_AddNumberToObject(o, "signal", c->signo);
    cJSON_AddBoolToObject(o, "timed_out", c->timed_out);
    cJSON_AddNumberToObject(o, "seconds", c->seconds);
    cJSON_AddStringToObject(o, "detail", c->detail);
    if (c->preload[0])
        cJSON_AddStringToObject(o, "ld_preload", c->preload);
    return o;
}

/* What the minimal case gives with AOTI_RUNTIME_CHECK_INPUTS=1, in a pool of its own. */
static void check_inputs_run(const af_package *pkg, const af_spec *spec, const af_case *c,
                             af_worker_opts wopts, char *buf, size_t len)
{
    af_error err = {0};
    af_result r;
    wopts.check_inputs = 1;
    wopts.warm_spare = 0;
    buf[0] = '\0';
    af_pool *pool = af_pool_start(pkg, spec, &wopts, &err);
    if (!pool)
        return;
    if (af_pool_run(pool, c, &r, &err) == 0) {
        char first[512];
        snprintf(first, sizeof first, "%s", r.message);
        first[strcspn(first, "\n")] = '\0';
        if (r.cls == AF_RES_OK)
            snprintf(buf, len, "it runs fine (OK)");
        else if (r.cls == AF_RES_RUNTIME_ERROR)
            snprintf(buf, len, "%s, \"%s\"", af_class_name(r.cls), first);
        else
            snprintf(buf, len, "%s", r.signature);
    }
    af_pool_stop(pool);
}

/* minimal.json: the crash file's sidecar (af_crash_to_json) plus what only the minimizer
 * knows, the explain result and the crash map. Readers of sidecars look keys up by name,
 * so the extra keys leave it a valid sidecar. */
static int write_minimal_json(const char *path, const af_crash *mc, const af_spec *spec,
                              const af_explain *ex, const af_crashmap *map, const char *map_why,
                              af_error *err)
{
    char *text = af_crash_to_json(mc);
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!o)
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    cJSON_AddItemToObject(o, "explain", af_explain_json(spec, ex));
    if (map)
        cJSON_AddItemToObject(o, "crash_map", af_crashmap_json(map, spec));
    else
        cJSON_AddStringToObject(o, "crash_map", map_why);
    char *out = af_json_print(o, 1);
    cJSON_Delete(o);
    if (!out)
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    size_t n = strlen(out);
    char *buf = realloc(out, n + 2);
    if (!buf) {
        free(out);
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    }
    buf[n] = '\n';
    buf[n + 1] = '\0';
    int rc = af_write_atomic(path, buf, n + 1, 0, err);
    free(buf);
    return rc;
}

/* --- main ---------------------------------------------------------------------------------- */

/* The repro.py check, for a thread of its own. */
typedef struct py_job {
    const char *python;
    char path[PATH_MAX + 32];
    const af_result *expect;
    double timeout_s;
    af_repro_check *out;
} py_job;

static void *py_check_thread(void *arg)
{
    py_job *j = arg;
    af_repro_check_py(j->python, j->path, j->expect, j->timeout_s, (volatile int *)&g_stop, j->out);
    return NULL;
}

int main(int argc, char **argv)
{
    enum {
        O_OUT = 256,
        O_BUDGET,
        O_RUNS,
        O_JSON,
        O_TORCH,
        O_TIMEOUT,
        O_NOCHECK,
        O_KEEPFILL,
        O_SPEC,
        O_EXPORTED,
        O_BEYOND,
        O_NO_EAGER,
        O_RTOL,
        O_ATOL,
        O_NO_MAP
    };
    static const struct option longopts[] = {
        {"out", required_argument, 0, O_OUT},
        {"budget", required_argument, 0, O_BUDGET},
        {"runs", required_argument, 0, O_RUNS},
        {"json", no_argument, 0, O_JSON},
        {"torch-lib", required_argument, 0, O_TORCH},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"no-repro-check", no_argument, 0, O_NOCHECK},
        {"keep-fill", no_argument, 0, O_KEEPFILL},
        {"spec", required_argument, 0, O_SPEC},
        {"exported", required_argument, 0, O_EXPORTED},
        {"beyond-contract", no_argument, 0, O_BEYOND},
        {"no-eager", no_argument, 0, O_NO_EAGER},
        {"rtol", required_argument, 0, O_RTOL},
        {"atol", required_argument, 0, O_ATOL},
        {"no-crash-map", no_argument, 0, O_NO_MAP},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out_opt = NULL, *spec_file = NULL, *exported = NULL;
    int beyond = 0, no_eager = 0, n_tol = 0;
    af_ref_opts ropts = {0};
    double budget = 0;
    int64_t runs = 3;
    int json = 0, no_check = 0, keep_fill = 0, no_map = 0;
    af_worker_opts wopts = {0};
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        switch (opt) {
        case O_OUT:
            out_opt = optarg;
            break;
        case O_BUDGET:
            if (af_parse_seconds(optarg, &budget)) {
                fprintf(stderr, "aoti-minimize: --budget wants seconds > 0, got '%s'\n", optarg);
                return 2;
            }
            break;
        case O_RUNS:
            if (af_parse_i64(optarg, &runs) || runs < 1 || runs > 101) {
                fprintf(stderr, "aoti-minimize: --runs wants an integer in 1..101, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_JSON:
            json = 1;
            break;
        case O_TORCH:
            wopts.torch_lib = optarg;
            break;
        case O_TIMEOUT:
            if (af_parse_seconds(optarg, &wopts.timeout_s)) {
                fprintf(stderr, "aoti-minimize: --timeout wants seconds > 0, got '%s'\n", optarg);
                return 2;
            }
            break;
        case O_NOCHECK:
            no_check = 1;
            break;
        case O_NO_MAP:
            no_map = 1;
            break;
        case O_KEEPFILL:
            keep_fill = 1;
            break;
        case O_SPEC:
            spec_file = optarg;
            break;
        case O_EXPORTED:
            exported = optarg;
            break;
        case O_BEYOND:
            beyond = 1;
            break;
        case O_NO_EAGER:
            no_eager = 1;
            break;
        case O_RTOL:
        case O_ATOL:
            if (af_parse_nonneg(optarg, opt == O_RTOL ? &ropts.rtol : &ropts.atol)) {
                fprintf(stderr, "aoti-minimize: %s wants a finite number >= 0, got '%s'\n",
                        opt == O_RTOL ? "--rtol" : "--atol", optarg);
                return 2;
            }
            n_tol++;
            break;
        case 'v':
            wopts.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            fprintf(stderr, "aoti-minimize: unknown or incomplete option '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, optind >= argc
                            ? "aoti-minimize: missing the crash file (aoti-minimize CRASH.bin)\n"
                            : "aoti-minimize: one crash file at a time\n");
        return 2;
    }
    if (n_tol == 1) {
        fprintf(stderr, "aoti-minimize: give --rtol and --atol together\n");
        return 2;
    }
    const char *crash_path = argv[optind];
    if (!wopts.timeout_s)
        wopts.timeout_s = 30;

    static af_crash crash;
    static af_spec spec;
    static mctx m;
    af_error err = {0};
    if (af_crash_read(crash_path, &crash, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        return 2;
    }
    char out_dir[PATH_MAX], pkg_path[PATH_MAX];
    if (out_opt)
        snprintf(out_dir, sizeof out_dir, "%s", out_opt);
    else
        default_out_dir(crash_path, out_dir, sizeof out_dir);
    af_crash_package_path(&crash, crash_path, pkg_path, sizeof pkg_path);
    /* the outputs are written at the end, into a dir made only then: one that cannot be
     * made is bad input, said now rather than after the whole search */
    if (af_dir_check_creatable(out_dir, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s %s: %s\n", out_opt ? "--out" : "output dir", out_dir,
                err.message);
        return 2;
    }

    int rc = 1;
    af_pool *pool = NULL;
    af_memo *memo = NULL; /* every answer, shared by the search, explain and the crash map */
    af_package_opts popts = {.model = crash.model};
    if (af_interrupt_start(&g_stop) != 0) {
        fprintf(stderr, "aoti-minimize: cannot start the signal thread\n");
        return 1;
    }
    af_package *pkg = af_package_open(pkg_path, &popts, &err);
    af_interrupt_set_package(pkg);
    if (!pkg) { /* the crash file names a package we cannot use: bad input either way */
        fprintf(stderr, "aoti-minimize: %s (the package of %s)\n", err.message, crash_path);
        return 2;
    }
    if (crash.package_sha256[0] && strcmp(crash.package_sha256, pkg->sha256) != 0)
        fprintf(stderr,
                "aoti-minimize: warning: %s changed since the crash was recorded (sha256 %.12s, "
                "was %.12s)\n",
                pkg->path, pkg->sha256, crash.package_sha256);
    if (!exported && !spec_file && crash.exported[0])
        exported = crash.exported;
    if (spec_file && exported) {
        fprintf(stderr, "aoti-minimize: --spec and --exported both state the contract: give one\n");
        rc = 2;
        goto out;
    }
    if (af_package_spec(pkg, spec_file, exported, &spec, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        rc = af_error_exit_code(&err);
        goto out;
    }
    /* A crash inside the contract is minimized inside it, so the minimal case keeps its
     * standing; one found outside is searched where it was found. */
    if (beyond || crash.fill == AF_FILL_WIDE ||
        (crash.beyond_contract && af_crash_to_case(&crash, &spec, &m.start, NULL) != 0))
        af_spec_widen_beyond_contract(&spec);
    m.spec = &spec;
    m.crash = &crash;
    if (af_crash_to_case(&crash, &spec, &m.start, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s: %s\n", crash_path, err.message);
        rc = 2;
        goto out;
    }

    char start_str[1024];
    af_case_str(&spec, &m.start, start_str, sizeof start_str);
    m.tty = isatty(2);
    m.t0 = af_now_s();
    enum { PH_POOL, PH_REF, PH_CHECK_INPUTS, PH_CHECKS, PH_N };
    double phase_s[PH_N] = {0};
    fprintf(stderr, "aoti-minimize: %s: %s, case %s fill %s seed %" PRIu64 " (%s, %s)\n",
            crash_path, crash.signature, start_str, af_fill_name(m.start.fill), m.start.seed,
            pkg->path, crash.device);
    wopts.device = crash.device;
    wopts.warm_spare = 1; /* most cases crash their worker: have the next one ready */
    ropts.have_tol = n_tol == 2;
    if (!ropts.have_tol && crash.cls == AF_RES_MISMATCH && crash.have_tol) {
        ropts.have_tol = 1; /* compare as the mismatch was found */
        ropts.rtol = crash.rtol;
        ropts.atol = crash.atol;
    }
    const char *program = no_eager ? NULL : af_ref_program(pkg, exported);
    char why_no_ref[160] = "";
    if (!program)
        snprintf(why_no_ref, sizeof why_no_ref, "%s",
                 no_eager ? "not run (--no-eager)"
                          : "not run: no exported program (a plain package; give --exported or "
                            "the unified archive)");
    if (crash.cls == AF_RES_MISMATCH && !program) {
        fprintf(stderr,
                "aoti-minimize: %s is a MISMATCH, which only the eager reference sees: "
                "it needs the exported program (%s)\n",
                crash_path, why_no_ref);
        rc = 2;
        goto out;
    }
    if (program)
        wopts.arena_bytes = AF_ARENA_DEFAULT_BYTES;
    double t_phase = af_now_s();
    pool = m.pool = af_pool_start(pkg, &spec, &wopts, &err);
    phase_s[PH_POOL] = af_now_s() - t_phase;
    if (!pool) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        rc = af_error_exit_code(&err);
        goto out;
    }
    if (program) {
        ropts.device = crash.device;
        t_phase = af_now_s();
        m.ref = af_ref_start(pkg, &spec, program, pool, &ropts, &err);
        phase_s[PH_REF] = af_now_s() - t_phase;
        if (!m.ref && crash.cls == AF_RES_MISMATCH) {
            fprintf(stderr, "aoti-minimize: %s\n", err.message);
            goto out;
        }
        if (!m.ref) { /* the crash itself can still be minimized: say what is missing */
            snprintf(why_no_ref, sizeof why_no_ref,
                     "not run: the reference could not start (%.100s)", err.message);
            fprintf(stderr, "aoti-minimize: warning: eager reference %s\n", why_no_ref);
            af_error_clear(&err);
        }
    }

    /* The engine reproduces with max(runs, 3) runs and then asks `runs` per question, a
     * majority of 3 once flaky. --runs N means N reproduction runs, one run per question
     * while the crash is stable: so 1 up to N = 3, and N beyond. */
    af_min_opts mo = {
        .runs = runs <= 3 ? 1 : (int)runs,
        .budget_s = budget,
        .stop = (volatile int *)&g_stop,
        .progress = on_progress,
        .progress_ctx = &m,
        .simplify_fill = !keep_fill,
        .other_class = &m.other_cls,
    };
    static af_min_report rep;
    static af_explain ex;
    if (!(memo = af_memo_new())) {
        fprintf(stderr, "aoti-minimize: out of memory\n");
        goto out;
    }
    mo.memo = memo;
    mo.explain = &ex;
    double t_search = af_now_s();
    int erc = af_minimize(&spec, &m.start, oracle, &m, &mo, &rep, &err);
    double search_s = af_now_s() - t_search;
    end_line(&m);
    if (erc != 0 && !m.have_same) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        goto out;
    }
    if (!rep.reproduced) {
        if (g_stop) {
            fprintf(stderr, "aoti-minimize: interrupted before the crash was reproduced\n");
            rc = 130;
        } else {
            fprintf(stderr,
                    "aoti-minimize: the crash does not reproduce: %d runs of %s gave %s, "
                    "not %s\n",
                    (int)(runs > 3 ? runs : 3), start_str,
                    m.start_gave[0] ? m.start_gave : "no failure", crash.signature);
        }
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "crash", crash_path);
            cJSON_AddBoolToObject(o, "reproduced", 0);
            cJSON_AddStringToObject(o, "signature", crash.signature);
            cJSON_AddStringToObject(o, "start_gave", m.start_gave[0] ? m.start_gave : "OK");
            cJSON_AddItemToObject(o, "start", case_json(&spec, &m.start));
            char *t = af_json_print(o, 1);
            if (t)
                puts(t);
            free(t);
            cJSON_Delete(o);
        }
        goto out;
    }
    if (erc != 0)
        fprintf(stderr, "aoti-minimize: the search ended early: %s\n", err.message);

    /* A full result for the minimal case: the latest SAME run of it, else a fresh one. */
    af_case best = rep.best;
    af_result res;
    int have_res = m.have_same && af_case_equal(&m.same_case, &best);
    for (int k = 0; !have_res && k < 3 && erc == 0; k++) {
        char other[AF_MIN_SIG_MAX] = "";
        if (oracle(&m, &best, other, sizeof other) == AF_V_SAME)
            have_res = 1;
    }
    if (have_res) {
        res = m.same_result;
    } else { /* flaky and unlucky: what the crash file says */
        memset(&res, 0, sizeof res);
        res.cls = crash.cls;
        snprintf(res.signature, sizeof res.signature, "%s", crash.signature);
        snprintf(res.message, sizeof res.message, "%s", crash.message);
    }
    if (have_res && !g_stop) /* a device fault: one blocking-launch re-run names the kernel */
        af_pool_triage(pool, &best, &res);
    /* The contract verdict of the minimal case: does eager fail too? A mismatch's eager ran. */
    af_ref_result eager_rr;
    memset(&eager_rr, 0, sizeof eager_rr);
    int have_eager = 0;
    if (m.ref && res.cls == AF_RES_MISMATCH) {
        af_result again;
        have_eager = af_ref_check(pool, m.ref, &spec, &best, &again, &eager_rr, &err) == 0;
    } else if (m.ref) {
        have_eager = af_ref_run(m.ref, &best, 0, &eager_rr, &err) == 0;
    }
    /* The crash map: extra questions, outside the engine's bound, through the same memo. */
    static af_crashmap cmap;
    char map_why[200] = "";
    int have_map = 0;
    if (no_map)
        snprintf(map_why, sizeof map_why, "not drawn (--no-crash-map)");
    else if (g_stop || rep.stopped)
        snprintf(map_why, sizeof map_why, "not drawn: the search was stopped early");
    else if (erc != 0)
        snprintf(map_why, sizeof map_why, "not drawn: the search ended with an error");
    if (!map_why[0]) {
        af_crashmap_plan(&spec, &best, &ex, &cmap);
        if (cmap.n_axes == 0) {
            snprintf(map_why, sizeof map_why, "not drawn: no symbol has more than one value");
        } else {
            af_crashmap_opts co = {.runs = rep.runs_per_question,
                                   .stop = (volatile int *)&g_stop,
                                   .progress = on_map_progress,
                                   .progress_ctx = &m};
            fprintf(stderr, "aoti-minimize: crash map: %d x %d cases over %s%s%s\n", cmap.n_vals[0],
                    cmap.n_vals[1],
                    spec.syms[cmap.sym[0]].dim_name[0] ? spec.syms[cmap.sym[0]].dim_name
                                                       : spec.syms[cmap.sym[0]].name,
                    cmap.sym[1] >= 0 ? " and " : "",
                    cmap.sym[1] < 0                      ? ""
                    : spec.syms[cmap.sym[1]].dim_name[0] ? spec.syms[cmap.sym[1]].dim_name
                                                         : spec.syms[cmap.sym[1]].name);
            af_error merr = {0};
            int mrc = af_crashmap_run(&spec, &best, &ex, memo, oracle, &m, &co, res.signature,
                                      &cmap, &merr);
            end_line(&m);
            if (mrc != 0)
                fprintf(stderr, "aoti-minimize: warning: crash map cut short: %s\n", merr.message);
            have_map = cmap.cases > 0;
            if (!have_map)
                snprintf(map_why, sizeof map_why, "not drawn: no case was answered");
        }
    }
    af_ref_stop(m.ref);
    m.ref = NULL;
    char versions[1024], torch_lib[PATH_MAX] = "";
    af_pool_versions(pool, versions, sizeof versions);
    if (!realpath(af_pool_torch_lib(pool), torch_lib)) /* the libtorch the workers loaded */
        snprintf(torch_lib, sizeof torch_lib, "%s", af_pool_torch_lib(pool));
    af_pool_stats pst;
    af_pool_get_stats(pool, &pst);
    af_pool_stop(pool);
    pool = m.pool = NULL;

    /* minimal.bin + minimal.json, in a dir made only now: a crash that does not reproduce
     * leaves nothing behind */
    if (af_mkdir_p(out_dir, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        rc = af_error_exit_code(&err);
        goto out;
    }
    static af_crash mc;
    char path[PATH_MAX + 32];
    af_crash_from_run(&mc, pkg, &spec, &best, &res, crash.device);
    af_crash_set_where(&mc, pkg, &spec, &res);
    mc.flaky = rep.flaky;
    if (res.cls == AF_RES_MISMATCH && ropts.have_tol) {
        mc.have_tol = 1;
        mc.rtol = ropts.rtol;
        mc.atol = ropts.atol;
    }
    af_ref_to_crash(have_eager ? &eager_rr : NULL,
                    why_no_ref[0] ? why_no_ref : "the reference gave no answer", &mc);
    if (exported && !realpath(exported, mc.exported))
        snprintf(mc.exported, sizeof mc.exported, "%s", exported);
    snprintf(path, sizeof path, "%s/minimal.bin", out_dir);
    if (af_crash_write(path, &mc, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        goto out;
    }
    snprintf(path, sizeof path, "%s/minimal.json", out_dir);
    if (write_minimal_json(path, &mc, &spec, &ex, have_map ? &cmap : NULL, map_why, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        goto out;
    }
    const char *map_file = NULL;
    if (have_map) {
        char title[300];
        const char *slash = strrchr(pkg->path, '/');
        int named = pkg->model[0] && strcmp(pkg->model, "model") != 0; /* not the default */
        snprintf(title, sizeof title, "crash map: %.80s%s%.40s (%s)", slash ? slash + 1 : pkg->path,
                 named ? ", model " : "", named ? pkg->model : "", af_class_name(res.cls));
        snprintf(path, sizeof path, "%s/crashmap.svg", out_dir);
        if (af_crashmap_write_svg(path, &cmap, &spec, title, &err) != 0) {
            fprintf(stderr, "aoti-minimize: %s\n", err.message);
            goto out;
        }
        map_file = "crashmap.svg";
    }

    /* repro.py + repro.sh */
    char aoti_run[PATH_MAX];
    find_aoti_run(aoti_run, sizeof aoti_run);
    static af_repro_finding findings[AF_MIN_SIDE_MAX];
    for (int i = 0; i < rep.n_side; i++) {
        af_case_str(&spec, &rep.side[i].c, findings[i].case_str, sizeof findings[i].case_str);
        size_t l = strlen(findings[i].case_str);
        snprintf(findings[i].case_str + l, sizeof findings[i].case_str - l,
                 " fill=%s seed=%" PRIu64, af_fill_name(rep.side[i].c.fill), rep.side[i].c.seed);
        snprintf(findings[i].signature, sizeof findings[i].signature, "%s", rep.side[i].signature);
        findings[i].cls = rep.side[i].cls;
    }
    char spec_abs[PATH_MAX] = "";
    if (spec_file && !realpath(spec_file, spec_abs))
        snprintf(spec_abs, sizeof spec_abs, "%s", spec_file);
    char exported_abs[PATH_MAX] = "";
    if (exported && !realpath(exported, exported_abs))
        snprintf(exported_abs, sizeof exported_abs, "%s", exported);
    char compiler[256], os_name[256];
    af_repro_host_info(compiler, sizeof compiler, os_name, sizeof os_name);
    /* where the minimal case fails, from the package's own sources (a MISMATCH names no
     * kernel); a package that cannot be read again only loses the section */
    static af_where where;
    af_where_finding wfind;
    int have_where = res.cls != AF_RES_MISMATCH && af_where_finding_from_result(&res, &wfind) &&
                     af_where_from_package(pkg, &spec, &wfind, &where, NULL) == 0;
    af_repro_info info = {
        .pkg = pkg,
        .spec = &spec,
        .device = crash.device,
        .start = &m.start,
        .minimal = &best,
        .result = &res,
        .crash_path = crash_path,
        .aoti_run = aoti_run[0] ? aoti_run : NULL,
        .torch_lib = torch_lib[0] ? torch_lib : NULL,
        .spec_file = spec_abs[0] ? spec_abs : NULL,
        .exported_file = exported_abs[0] ? exported_abs : NULL,
        .eager = mc.eager,
        .eager_error = mc.eager_error,
        .program = program,
        .have_tol = ropts.have_tol,
        .rtol = ropts.rtol,
        .atol = ropts.atol,
        .versions = versions,
        .compiler = compiler,
        .os_name = os_name,
        .oracle_calls = rep.oracle_calls,
        .cache_hits = rep.cache_hits,
        .oracle_runs = rep.oracle_runs,
        .search_seconds = search_s,
        .runs_per_question = rep.runs_per_question,
        .repro_runs = (int)(runs > 3 ? runs : 3),
        .repro_same = (int)(rep.repro_rate * (runs > 3 ? runs : 3) + 0.5),
        .stopped = rep.stopped,
        .locally_minimal = rep.locally_minimal,
        .findings = findings,
        .n_findings = rep.n_side,
        .call_bound = rep.call_bound,
        .explain_calls = rep.explain_calls,
        .explain = ex.ran ? &ex : NULL,
        .crash_map = have_map ? &cmap : NULL,
        .crash_map_file = map_file,
        .crash_map_why = map_why,
        .where = have_where ? &where : NULL,
    };
    if (af_repro_write_scripts(out_dir, &info, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        goto out;
    }

    /* re-run what was written, unless told not to or interrupted */
    af_repro_check shc = {0}, pyc = {0};
    char torch_version[64] = "", check_inputs[600] = "";
    char python[PATH_MAX] = "", why[512] = "";
    const char *pyenv = getenv("AOTI_FUZZ_PYTHON");
    snprintf(python, sizeof python, "%s", pyenv && *pyenv ? pyenv : "python3");
    if (!no_check && !g_stop) {
        char f[PATH_MAX + 32];
        fprintf(stderr, "aoti-minimize: checking the repros\n");
        t_phase = af_now_s();
        check_inputs_run(pkg, &spec, &best, wopts, check_inputs, sizeof check_inputs);
        phase_s[PH_CHECK_INPUTS] = af_now_s() - t_phase;
        t_phase = af_now_s();
        info.check_inputs = check_inputs;
        /* repro.py (a Python start with torch, the longer one) runs beside repro.sh */
        py_job pj = {
            .python = python, .expect = &res, .timeout_s = 2 * wopts.timeout_s + 300, .out = &pyc};
        snprintf(pj.path, sizeof pj.path, "%s/repro.py", out_dir);
        pthread_t pt;
        int threaded = pthread_create(&pt, NULL, py_check_thread, &pj) == 0;
        snprintf(f, sizeof f, "%s/repro.sh", out_dir);
        af_repro_check_sh(f, &res, 2 * wopts.timeout_s + 120, (volatile int *)&g_stop, &shc);
        info.sh_check = &shc;
        fprintf(stderr, "aoti-minimize: repro.sh: %s (%s)\n",
                shc.reproduced ? "reproduced"
                : shc.ran      ? "did not reproduce"
                               : "not run",
                shc.detail);
        if (threaded)
            pthread_join(pt, NULL);
        else
            py_check_thread(&pj);
        info.py_check = &pyc;
        phase_s[PH_CHECKS] = af_now_s() - t_phase;
        snprintf(torch_version, sizeof torch_version, "%s", pyc.torch_version);
        fprintf(stderr, "aoti-minimize: repro.py: %s (%s)\n",
                pyc.reproduced ? "reproduced"
                : pyc.ran      ? "did not reproduce"
                               : "not run",
                pyc.detail);
    }
    if (!torch_version[0] && !g_stop)
        af_repro_find_python(python, sizeof python, torch_version, sizeof torch_version, why,
                             sizeof why);
    info.torch_version = torch_version;
    if (af_repro_write_report(out_dir, &info, &err) != 0) {
        fprintf(stderr, "aoti-minimize: %s\n", err.message);
        goto out;
    }

    char best_str[1024];
    af_case_str(&spec, &best, best_str, sizeof best_str);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "crash", crash_path);
        cJSON_AddBoolToObject(o, "reproduced", 1);
        af_json_add_path(o, "package", pkg->path);
        cJSON_AddStringToObject(o, "device", crash.device);
        cJSON_AddStringToObject(o, "class", af_class_name(res.cls));
        cJSON_AddStringToObject(o, "signature", res.signature);
        cJSON_AddStringToObject(o, "message", res.message);
        if (res.kernel[0])
            cJSON_AddStringToObject(o, "kernel", res.kernel);
        if (res.triage[0])
            cJSON_AddStringToObject(o, "triage", res.triage);
        if (have_where)
            af_where_add_json(o, "where", &where, &spec);
        cJSON_AddItemToObject(o, "start", case_json(&spec, &m.start));
        cJSON_AddItemToObject(o, "minimal", case_json(&spec, &best));
        cJSON_AddNumberToObject(o, "oracle_calls", (double)rep.oracle_calls);
        cJSON_AddNumberToObject(o, "oracle_runs", (double)rep.oracle_runs);
        cJSON_AddNumberToObject(o, "cache_hits", (double)rep.cache_hits);
        cJSON_AddNumberToObject(o, "call_bound", (double)rep.call_bound);
        cJSON_AddNumberToObject(o, "explain_calls", (double)rep.explain_calls);
        cJSON_AddItemToObject(o, "explain", af_explain_json(&spec, &ex));
        if (have_map) {
            cJSON *cm = af_crashmap_json(&cmap, &spec);
            if (cm && map_file) {
                char f[PATH_MAX + 32];
                snprintf(f, sizeof f, "%s/%s", out_dir, map_file);
                cJSON_AddStringToObject(cm, "file", f);
            }
            cJSON_AddItemToObject(o, "crash_map", cm);
        } else {
            cJSON_AddStringToObject(o, "crash_map", map_why);
        }
        cJSON_AddNumberToObject(o, "rounds", rep.rounds);
        cJSON_AddNumberToObject(o, "search_seconds", search_s);
        cJSON_AddNumberToObject(o, "wall_seconds", af_now_s() - m.t0);
        /* where the wall time went: workers up, the eager reference up, the search, the
         * run with the input checks on, repro.sh and repro.py side by side (and each) */
        cJSON *ph = cJSON_AddObjectToObject(o, "phase_seconds");
        cJSON_AddNumberToObject(ph, "workers_start", phase_s[PH_POOL]);
        cJSON_AddNumberToObject(ph, "reference_start", phase_s[PH_REF]);
        cJSON_AddNumberToObject(ph, "search", search_s);
        cJSON_AddNumberToObject(ph, "check_inputs_run", phase_s[PH_CHECK_INPUTS]);
        cJSON_AddNumberToObject(ph, "repro_checks", phase_s[PH_CHECKS]);
        cJSON_AddNumberToObject(ph, "repro_sh", shc.seconds);
        cJSON_AddNumberToObject(ph, "repro_py", pyc.seconds);
        cJSON_AddNumberToObject(o, "worker_spawns", (double)pst.spawns);
        cJSON_AddBoolToObject(o, "flaky", rep.flaky);
        cJSON_AddNumberToObject(o, "reproduce_rate", rep.repro_rate);
        cJSON_AddNumberToObject(o, "runs_per_question", rep.runs_per_question);
        cJSON_AddBoolToObject(o, "stopped", rep.stopped);
        cJSON_AddBoolToObject(o, "interrupted", g_stop != 0);
        cJSON_AddBoolToObject(o, "locally_minimal", rep.locally_minimal);
        cJSON *nb = cJSON_AddObjectToObject(o, "not_bugs");
        cJSON_AddNumberToObject(nb, "refused", (double)m.n_refused);
        cJSON_AddNumberToObject(nb, "timeout", (double)m.n_timeout);
        cJSON_AddNumberToObject(nb, "oom", (double)m.n_oom);
        cJSON *sf = cJSON_AddArrayToObject(o, "side_findings");
        for (int i = 0; i < rep.n_side; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToObject(e, "case", case_json(&spec, &rep.side[i].c));
            cJSON_AddStringToObject(e, "class", af_class_name(findings[i].cls));
            cJSON_AddStringToObject(e, "signature", rep.side[i].signature);
            cJSON_AddNumberToObject(e, "runs", (double)rep.side[i].runs);
            cJSON_AddItemToArray(sf, e);
        }
        if (rep.side_dropped)
            cJSON_AddNumberToObject(o, "side_findings_dropped", rep.side_dropped);
        cJSON *rp = cJSON_AddObjectToObject(o, "repro");
        cJSON_AddItemToObject(rp, "sh", check_json(info.sh_check));
        cJSON_AddItemToObject(rp, "py", check_json(info.py_check));
        cJSON_AddStringToObject(o, "check_inputs", check_inputs);
        cJSON *ej = cJSON_AddObjectToObject(o, "eager");
        cJSON_AddStringToObject(ej, "verdict", mc.eager);
        cJSON_AddStringToObject(ej, "error", mc.eager_error);
        cJSON_AddStringToObject(o, "torch_version", torch_version);
        af_json_add_path(o, "out_dir", out_dir);
        char *t = af_json_print(o, 1);
        if (t)
            puts(t);
        free(t);
        cJSON_Delete(o);
    } else {
        char vwhy[384];
        af_case_verdict(&spec, &best, vwhy, sizeof vwhy);
        printf("minimal case: %s fill %s seed %" PRIu64 "\ncontract:     %s\n", best_str,
               af_fill_name(best.fill), best.seed, vwhy);
        printf("signature:    %s\n", res.signature);
        printf("eager:        %s%s%s\n", mc.eager, mc.eager_error[0] ? ": " : "", mc.eager_error);
        printf("from:         %s fill %s seed %" PRIu64 "\n", start_str, af_fill_name(m.start.fill),
               m.start.seed);
        printf("search:       %" PRId64 " questions (%" PRId64 " runs, %" PRId64
               " cache hits), %.1f s%s%s\n",
               rep.oracle_calls, rep.oracle_runs, rep.cache_hits, search_s,
               rep.locally_minimal ? ", locally minimal" : "",
               rep.stopped ? ", stopped early" : "");
        if (ex.ran) {
            char es[1024];
            af_explain_summary(&spec, &ex, es, sizeof es);
            printf("explain:      %s (%" PRId64 " questions)\n", es, rep.explain_calls);
        }
        if (have_map)
            printf("crash map:    %s/%s: %" PRId64 " cases, %" PRId64 " new questions, %" PRId64
                   " from the memo\n",
                   out_dir, map_file ? map_file : "-", cmap.cases, cmap.questions, cmap.memo_hits);
        else
            printf("crash map:    %s\n", map_why);
        if (rep.flaky)
            printf(
                "flaky:        reproduced in %.0f%% of runs; questions were majority votes of %d\n",
                100 * rep.repro_rate, rep.runs_per_question);
        for (int i = 0; i < rep.n_side; i++)
            printf("other bug:    %s: %s\n", findings[i].case_str, findings[i].signature);
        if (info.sh_check)
            printf("repro.sh:     %s\n", shc.reproduced ? "reproduced" : shc.detail);
        if (info.py_check)
            printf("repro.py:     %s\n", pyc.reproduced ? "reproduced" : pyc.detail);
        printf("written:      %s/{minimal.bin,minimal.json,repro.py,repro.sh,report.md%s}\n",
               out_dir, map_file ? ",crashmap.svg" : "");
    }
    rc = g_stop ? 130 : 0;
out:
    end_line(&m);
    af_ref_stop(m.ref);
    af_pool_stop(pool);
    af_interrupt_set_package(NULL);
    af_package_close(pkg);
    af_memo_free(memo);
    return rc;
}
