/* aoti-run — describe a package, or run one case of it in a worker and say what happened.
 *
 *   aoti-run PKG --describe [--json]
 *   aoti-run PKG --shape n=0 [--shape seq=7] [--seed N] [--fill zeros] [--repeat N] [--json]
 *   aoti-run PKG --case crash.bin
 *
 * Exit status: 0 the case ran fine, 1 the case failed (any class but OK), 2 usage or bad
 * input. With --repeat N the case runs N times in fresh workers and the exit status says
 * whether the first run failed; the output says how many runs gave the same signature.
 *
 * main is the steps in order: parse the options, read the crash file (--case), open the
 * package and its spec, describe it or make the case, start the workers (and the eager
 * reference), run, print. Each step returns 0 to go on or the exit status, with the message
 * in the run's af_error; main prints it. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aotif/args.h"
#include "aotif/cli.h"
#include "aotif/crashfile.h"
#include "aotif/interrupt.h"
#include "aotif/json.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/spec.h"
#include "aotif/where.h"
#include "aotif/worker.h"

/* The shared flags aoti-run takes: all but --no-eager (the reference is off unless --eager). */
#define RUN_SHARED (AF_CLI_ALL & ~AF_CLI_NO_EAGER)
/* Help descriptions start here. */
#define HELP_COL 24

typedef struct run_opts {
    af_cli_opts co;                      /* the shared flags */
    const char *pkg_path;                /* the positional argument; NULL with --case */
    const char *case_file;               /* --case */
    const char *fill;                    /* --fill, or NULL */
    const char *shapes[AF_MAX_SYMS * 2]; /* --shape NAME=VALUE, in order */
    int n_shapes;
    int64_t seed, repeat;
    int seed_given, describe, json, no_triage;
} run_opts;

/* Everything one run opens or computes, released by close_run. Static in main: the spec
 * and the crash are large. */
typedef struct run_state {
    run_opts o;
    af_error err;   /* why a step stopped */
    af_crash crash; /* with --case */
    char crash_pkg[4096];
    af_package *pkg;
    af_spec spec;
    af_case c;
    char cs[512], vwhy[384]; /* the case as text, and its contract note */
    af_ctv verdict;
    int eager;
    af_worker_opts wopts;
    af_ref_opts ropts;
    af_pool *pool;
    af_ref *ref;
    af_result first;  /* the first run's result */
    af_ref_result rr; /* eager's answer on the first run */
    int64_t same;     /* runs that gave the first run's signature */
} run_state;

static void usage(FILE *f)
{
    fputs("usage: aoti-run PKG.pt2 [options]\n"
          "  --describe            print the package's shape spec and exit\n"
          "  --shape NAME=VALUE    set a symbol (Dim name or symbol name); repeatable\n"
          "  --case FILE           run the case of a crash file (aoti-fuzz output)\n"
          "  --fill MODE           random (default), zeros, ones, wide (--beyond-contract)\n"
          "  --seed N              fill seed (default 0)\n"
          "  --repeat N            run N times, each in a fresh worker; report reproducibility\n"
          "  --json                machine-readable output\n"
          "  --no-triage           no CUDA_LAUNCH_BLOCKING re-run after a device fault\n",
          f);
    af_cli_help(f, RUN_SHARED, HELP_COL);
    fputs("A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
          f);
}

/* ---- options --------------------------------------------------------------------------- */

enum {
    O_DESCRIBE = 256,
    O_SHAPE,
    O_CASE,
    O_FILL,
    O_SEED,
    O_REPEAT,
    O_JSON,
    O_NOTRIAGE,
};

/* One of aoti-run's own options; 0, or -1 with err set. */
static int take_own_option(run_opts *o, int opt, const char *arg, af_error *err)
{
    switch (opt) {
    case O_DESCRIBE:
        o->describe = 1;
        break;
    case O_SHAPE:
        if (o->n_shapes == (int)(sizeof o->shapes / sizeof o->shapes[0]))
            return af_error_set(err, AF_E_USAGE, "too many --shape options");
        o->shapes[o->n_shapes++] = arg;
        break;
    case O_CASE:
        o->case_file = arg;
        break;
    case O_FILL:
        o->fill = arg;
        break;
    case O_SEED:
        if (af_parse_i64(arg, &o->seed) || o->seed < 0)
            return af_cli_bad_value(err, "--seed", "a non-negative integer", arg);
        o->seed_given = 1;
        break;
    case O_REPEAT:
        if (af_parse_i64(arg, &o->repeat) || o->repeat < 1 || o->repeat > 100000)
            return af_cli_bad_value(err, "--repeat", "an integer in 1..100000", arg);
        break;
    case O_JSON:
        o->json = 1;
        break;
    case O_NOTRIAGE:
        o->no_triage = 1;
        break;
    }
    return 0;
}

/* The flags that go together or not at all, and the one package. 0, or -1 with err set. */
static int check_options(run_opts *o, int argc, char **argv, af_error *err)
{
    if (optind + 1 != argc && !(o->case_file && optind == argc))
        return af_error_set(err, AF_E_USAGE, "%s",
                            optind >= argc ? "missing the package (aoti-run PKG.pt2 ...)"
                                           : "one package at a time");
    o->pkg_path = optind < argc ? argv[optind] : NULL;
    if (o->case_file && (o->n_shapes || o->fill || o->seed_given))
        return af_error_set(err, AF_E_USAGE, "--case already fixes the shapes, fill and seed");
    return af_cli_check(&o->co, err);
}

/* Parse argv into *o. 0, 1 for --help, or -1 with err set (bad usage: exit 2). */
static int parse_options(int argc, char **argv, run_opts *o, af_error *err)
{
    struct option table[8 + 1 + AF_CLI_N_OPTIONS + 1] = {
        {"describe", no_argument, 0, O_DESCRIBE},
        {"shape", required_argument, 0, O_SHAPE},
        {"case", required_argument, 0, O_CASE},
        {"fill", required_argument, 0, O_FILL},
        {"seed", required_argument, 0, O_SEED},
        {"repeat", required_argument, 0, O_REPEAT},
        {"json", no_argument, 0, O_JSON},
        {"no-triage", no_argument, 0, O_NOTRIAGE},
        {"help", no_argument, 0, 'h'},
    };
    memset(o, 0, sizeof *o);
    o->repeat = 1;
    af_cli_init(&o->co);
    if (af_cli_append_options(table, sizeof table / sizeof table[0], RUN_SHARED, err) != 0)
        return -1;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "vh", table, NULL)) != -1) {
        af_cli_rc k = af_cli_parse(&o->co, opt, optarg, err);
        if (k == AF_CLI_BAD)
            return -1;
        if (k == AF_CLI_HANDLED)
            continue;
        if (opt == 'h')
            return 1;
        if (opt == '?' || opt == ':')
            return af_error_set(err, AF_E_USAGE, "unknown or incomplete option '%s' (see --help)",
                                argv[optind - 1]);
        if (take_own_option(o, opt, optarg, err) != 0)
            return -1;
    }
    return check_options(o, argc, argv, err);
}

/* ---- the package and the case ------------------------------------------------------------ */

/* --case: read the crash file; it names the package, model and device unless told. */
static int read_crash(run_state *s)
{
    if (af_crash_read(s->o.case_file, &s->crash, &s->err) != 0)
        return 2;
    if (!s->o.pkg_path) {
        af_crash_package_path(&s->crash, s->o.case_file, s->crash_pkg, sizeof s->crash_pkg);
        s->o.pkg_path = s->crash_pkg;
    }
    if (!s->o.co.model)
        s->o.co.model = s->crash.model;
    if (!s->o.co.device)
        s->o.co.device = s->crash.device; /* where the case ran */
    if (!s->o.co.exported && !s->o.co.spec_file && s->crash.exported[0])
        s->o.co.exported = s->crash.exported; /* the contract the crash was found under */
    return 0;
}

/* Open the package and derive its spec (and contract). */
static int open_package(run_state *s)
{
    af_package_opts popts = {0};
    af_cli_package_opts(&s->o.co, &popts);
    s->pkg = af_package_open(s->o.pkg_path, &popts, &s->err);
    af_interrupt_set_package(s->pkg);
    if (!s->pkg)
        return af_error_exit_code(&s->err);
    if (af_package_spec(s->pkg, s->o.co.spec_file, s->o.co.exported, &s->spec, &s->err) != 0)
        return af_error_exit_code(&s->err);
    if (s->o.co.beyond_contract || (s->o.case_file && s->crash.beyond_contract))
        af_spec_widen_beyond_contract(&s->spec);
    if (s->o.case_file && strcmp(s->crash.package_sha256, s->pkg->sha256) != 0)
        fprintf(stderr,
                "aoti-run: warning: %s changed since the crash was recorded (sha256 %.12s, "
                "was %.12s)\n",
                s->pkg->path, s->pkg->sha256, s->crash.package_sha256);
    return 0;
}

/* The case from --shape, --fill and --seed: each symbol at a typical size unless told. 0, or
 * -1 with s->err set. */
static int case_from_flags(run_state *s)
{
    const af_spec *spec = &s->spec;
    for (int i = 0; i < spec->n_syms; i++) {
        int64_t v = 8;
        if (v < spec->syms[i].compiled_min)
            v = spec->syms[i].compiled_min;
        if (v > spec->syms[i].compiled_max)
            v = spec->syms[i].compiled_max;
        s->c.values[i] = v;
    }
    for (int i = 0; i < s->o.n_shapes; i++)
        if (af_case_assign(spec, &s->c, s->o.shapes[i], &s->err) != 0) {
            char why[sizeof s->err.message];
            snprintf(why, sizeof why, "%s", s->err.message);
            return af_error_set(&s->err, AF_E_USAGE, "--shape %s: %s", s->o.shapes[i], why);
        }
    if (s->o.fill) {
        int f = af_fill_from_name(s->o.fill);
        if (f < 0)
            return af_cli_bad_value(&s->err, "--fill", "random, zeros or ones", s->o.fill);
        s->c.fill = (af_fill)f;
    }
    s->c.seed = (uint64_t)s->o.seed;
    return 0;
}

/* The case to run, checked against the spec, with its text and contract verdict. */
static int make_case(run_state *s)
{
    af_case_init(&s->c, &s->spec);
    if (s->o.case_file) {
        if (af_crash_to_case(&s->crash, &s->spec, &s->c, &s->err) != 0)
            return 2;
    } else if (case_from_flags(s) != 0) {
        return 2;
    }
    if (af_case_check(&s->spec, &s->c, &s->err) != 0)
        return 2;
    af_case_str(&s->spec, &s->c, s->cs, sizeof s->cs);
    s->verdict = af_case_verdict(&s->spec, &s->c, s->vwhy, sizeof s->vwhy);
    return 0;
}

/* ---- running ------------------------------------------------------------------------------ */

/* The worker pool, and the eager reference when asked (or when the crash is a MISMATCH,
 * which only the reference sees). */
static int start_workers(run_state *s)
{
    af_cli_worker_opts(&s->o.co, &s->wopts);
    s->wopts.triage = !s->o.no_triage; /* a device fault gets a blocking-launch re-run */
    af_cli_ref_opts(&s->o.co, &s->ropts);
    s->eager = s->o.co.eager == 1;
    if (s->o.case_file && s->crash.cls == AF_RES_MISMATCH) {
        s->eager = 1;
        if (!s->ropts.have_tol && s->crash.have_tol) { /* compare as it was found */
            s->ropts.have_tol = 1;
            s->ropts.rtol = s->crash.rtol;
            s->ropts.atol = s->crash.atol;
        }
    }
    const char *program = af_ref_program(s->pkg, s->o.co.exported);
    if (s->eager && !program) {
        af_error_set(&s->err, AF_E_USAGE,
                     "--eager needs the exported program: a unified archive, or --exported FILE");
        return 2;
    }
    if (s->eager)
        s->wopts.arena_bytes = AF_ARENA_DEFAULT_BYTES;
    s->pool = af_pool_start(s->pkg, &s->spec, &s->wopts, &s->err);
    if (!s->pool)
        return af_error_exit_code(&s->err);
    if (s->eager) {
        s->ref = af_ref_start(s->pkg, &s->spec, program, s->pool, &s->ropts, &s->err);
        if (!s->ref)
            return 1;
    }
    return 0;
}

/* Run the case --repeat times, each in a fresh worker; the reference judges the first run:
 * eager's verdict on a failure, a value check on success. */
static int run_case(run_state *s)
{
    af_result r;
    for (int64_t k = 0; k < s->o.repeat; k++) {
        if (k > 0)
            af_pool_recycle(s->pool); /* every run in a fresh worker, as --repeat promises */
        af_result *cur = k == 0 ? &s->first : &r;
        if (af_pool_run(s->pool, &s->c, cur, &s->err) != 0)
            return 1;
        if (k == 0 && s->ref) {
            int ok = s->first.cls == AF_RES_OK;
            if ((ok ? af_ref_check(s->pool, s->ref, &s->spec, &s->c, &s->first, &s->rr, &s->err)
                    : af_ref_run(s->ref, &s->c, 0, &s->rr, &s->err)) != 0) {
                char why[sizeof s->err.message];
                snprintf(why, sizeof why, "%s", s->err.message);
                af_error_set(&s->err, AF_E_RUNTIME, "reference: %s", why);
                return 1;
            }
        }
        if (k == 0 || strcmp(cur->signature, s->first.signature) == 0)
            s->same++;
    }
    return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

/* Print o (formatted) on stdout and free it. */
static void put_json(cJSON *o)
{
    char *txt = af_json_print(o, 1);
    if (txt)
        puts(txt);
    free(txt);
    cJSON_Delete(o);
}

static void print_describe_json(const af_package *pkg, const af_spec *spec)
{
    cJSON *o = cJSON_CreateObject();
    af_json_add_path(o, "package", pkg->path);
    cJSON_AddStringToObject(o, "sha256", pkg->sha256);
    cJSON_AddStringToObject(o, "model", pkg->model);
    cJSON_AddStringToObject(o, "device", pkg->device);
    cJSON_AddStringToObject(o, "compute_capability", pkg->compute_capability);
    cJSON_AddStringToObject(o, "cpu_isa", pkg->cpu_isa);
    cJSON_AddStringToObject(o, "spec_source", af_spec_source_name(spec->source));
    cJSON_AddStringToObject(o, "contract_source", spec->contract_src);
    cJSON_AddBoolToObject(o, "contract_known", af_spec_contract_known(spec));
    cJSON_AddItemToObject(o, "contract_gaps", af_spec_gaps_json(spec));
    cJSON *sj = af_spec_json(spec);
    if (sj)
        cJSON_AddItemToObject(o, "spec", sj);
    put_json(o);
}

static void print_describe(const run_state *s)
{
    const af_package *pkg = s->pkg;
    if (s->o.json) {
        print_describe_json(pkg, &s->spec);
        return;
    }
    printf("package: %s\nsha256:  %s\nmodel:   %s\ndevice:  %s%s%s\n", pkg->path, pkg->sha256,
           pkg->model, pkg->device, pkg->compute_capability[0] ? ", compute capability " : "",
           pkg->compute_capability);
    if (pkg->cpu_isa[0])
        printf("cpu isa: %s\n", pkg->cpu_isa);
    printf("spec:    from %s\n", af_spec_source_name(s->spec.source));
    af_spec_print(&s->spec, stdout);
}

/* "eager": the reference's answer on the first run. */
static cJSON *eager_json(const af_ref_result *rr, const af_result *first)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "result",
                            rr->eager == AF_EAGER_OK      ? "ok"
                            : rr->eager == AF_EAGER_FAILS ? "error"
                                                          : "lost");
    cJSON_AddStringToObject(e, "error_type", rr->error_type);
    cJSON_AddStringToObject(e, "error", rr->error);
    cJSON_AddStringToObject(e, "verdict", first->cls == AF_RES_OK ? "" : af_ref_verdict(rr));
    cJSON_AddStringToObject(e, "compare",
                            !rr->compared  ? "skipped"
                            : rr->mismatch ? "mismatch"
                                           : "match");
    cJSON_AddStringToObject(e, "detail", rr->detail);
    cJSON_AddNumberToObject(e, "max_abs", rr->max_abs);
    cJSON_AddNumberToObject(e, "max_rel", rr->max_rel);
    return e;
}

/* "where": where the first run failed, from the package's sources (where.h). */
static void add_where_json(cJSON *o, const run_state *s)
{
    af_where_finding wfind;
    if (s->first.cls == AF_RES_OK || s->first.cls == AF_RES_MISMATCH ||
        !af_where_finding_from_result(&s->first, &wfind))
        return;
    af_where *w = calloc(1, sizeof *w); /* large: kept off the stack */
    if (w && af_where_from_package(s->pkg, &s->spec, &wfind, w, NULL) == 0)
        af_where_add_json(o, "where", w, &s->spec);
    free(w);
}

static void print_result_json(const run_state *s)
{
    cJSON *o = af_result_json(&s->first);
    if (!o)
        o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "case", s->cs);
    cJSON_AddStringToObject(o, "fill", af_fill_name(s->c.fill));
    cJSON_AddItemToObject(o, "seed", af_json_uint(s->c.seed)); /* exact beyond 2^53 */
    cJSON_AddBoolToObject(o, "below_compiled_lower_bound", af_case_below_compiled(&s->spec, &s->c));
    cJSON_AddStringToObject(o, "contract", af_ctv_name(s->verdict));
    cJSON_AddStringToObject(o, "contract_note", s->vwhy);
    if (s->ref)
        cJSON_AddItemToObject(o, "eager", eager_json(&s->rr, &s->first));
    add_where_json(o, s);
    cJSON_AddNumberToObject(o, "runs", (double)s->o.repeat);
    af_pool_stats ps;
    af_pool_get_stats(s->pool, &ps);
    cJSON_AddNumberToObject(o, "workers_started", (double)ps.spawns);
    cJSON_AddNumberToObject(o, "same_signature", (double)s->same);
    put_json(o);
}

static void print_result_text(const run_state *s)
{
    const af_ref_result *rr = &s->rr;
    printf("case: %s (fill %s, seed %" PRIu64 ")\ncontract: %s\n", s->cs, af_fill_name(s->c.fill),
           s->c.seed, s->vwhy);
    af_result_print(&s->first, stdout);
    if (s->ref) {
        if (rr->eager == AF_EAGER_LOST)
            printf("eager: no answer (%s)\n", rr->detail);
        else if (rr->eager == AF_EAGER_FAILS)
            printf("eager: fails too: %s: %s\n", rr->error_type, rr->error);
        else
            printf("eager: runs%s\n",
                   rr->compared ? (rr->mismatch ? "; outputs differ" : "; outputs match") : "");
        if (s->first.cls != AF_RES_OK && rr->eager != AF_EAGER_LOST)
            printf("verdict: %s\n", af_ref_verdict(rr));
    }
    if (s->o.repeat > 1)
        printf("reproduced: %lld/%lld runs gave this signature\n", (long long)s->same,
               (long long)s->o.repeat);
}

/* ---- main --------------------------------------------------------------------------------- */

static void close_run(run_state *s)
{
    af_ref_stop(s->ref);
    af_pool_stop(s->pool);
    af_interrupt_set_package(NULL);
    af_package_close(s->pkg);
}

int main(int argc, char **argv)
{
    static run_state s;
    int rc = parse_options(argc, argv, &s.o, &s.err);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    rc = rc < 0 ? 2 : 0; /* bad usage */
    if (rc == 0 && s.o.case_file)
        rc = read_crash(&s);
    if (rc != 0) {
        fprintf(stderr, "aoti-run: %s\n", s.err.message);
        return rc;
    }
    /* SIGINT/SIGTERM remove the package's temp dir, outside any signal handler */
    if (af_interrupt_start(NULL) != 0) {
        fprintf(stderr, "aoti-run: cannot start the signal thread\n");
        return 1;
    }
    rc = open_package(&s);
    if (rc == 0 && !s.o.describe && (rc = make_case(&s)) == 0 && (rc = start_workers(&s)) == 0)
        rc = run_case(&s);
    if (rc != 0) {
        fprintf(stderr, "aoti-run: %s\n", s.err.message);
    } else if (s.o.describe) {
        print_describe(&s);
    } else {
        if (s.o.json)
            print_result_json(&s);
        else
            print_result_text(&s);
        rc = s.first.cls == AF_RES_OK ? 0 : 1;
    }
    close_run(&s);
    return rc;
}
