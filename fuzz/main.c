/* aoti-fuzz — libFuzzer over the dynamic-shape space of one AOTInductor package.
 *
 *   aoti-fuzz PKG.pt2 [our options] [-- libFuzzer flags and corpus dirs]
 *
 * libFuzzer drives the search; everything it sees is ours. An input is the byte encoding
 * of a case (encode.h), mutated by a structure-aware mutator that moves shape symbols to
 * the values where bugs live (mutate.h). Each input is decoded and run out of process
 * through the worker pool (never here: a crashing model must not take the fuzzer with
 * it), and the run is reported back as features (featmap.h) in one counter region
 * registered with libFuzzer and sized to the spec, instead of code coverage, which a
 * compiled GPU model does not give. Failing runs go to the crash
 * store (store.h): one crash file per distinct signature, repeats counted. A case that
 * failed reproducibly is answered from a memo (memo.h) when the mutator produces it again:
 * a crash costs a worker restart and a timeout the whole limit, and "execs" counts inputs
 * while "runs" counts what the workers actually ran.
 *
 * libFuzzer exits through exit() (-runs, -max_total_time) or, on SIGINT/SIGTERM, through
 * _Exit() from its own handler. The summary is written from an atexit handler for the
 * first, and for the second we take over the signals once fuzzing started, finish at the
 * next input and hand the signal back to libFuzzer.
 *
 * libFuzzer's -jobs, -workers, -fork and -merge re-run this program with the argument
 * vector we give it, so that vector carries our own options as "--name=value" (libFuzzer
 * ignores flags that start with "--") and the package as --pkg=PATH, then "--" and the
 * libFuzzer part. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
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
#include "aotif/json.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/result.h"
#include "aotif/spec.h"
#include "aotif/worker.h"
#include "encode.h"
#include "featmap.h"
#include "memo.h"
#include "mutate.h"
#include "store.h"

/* libFuzzer's entry point (libclang_rt.fuzzer_no_main). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t));

/* libFuzzer's hook for a module's 8-bit coverage counters. We register one region of our
 * own, sized to the spec's feature layout (featmap.h): libFuzzer clears it before each input
 * and reads every non-zero slot after, so its size is paid on every exec. */
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
static uint8_t *af_counters;

#define MAX_ARGS 256

typedef struct fuzz_opts {
    const char *pkg;
    const char *model;
    const char *spec_file;
    const char *exported;
    const char *torch_lib;
    const char *artifacts;
    const char *seed_corpus;
    const char *summary;
    const char *device;
    double timeout_s;
    int64_t max_input_bytes;
    int64_t max_spares; /* 0: the pool's default */
    int64_t mem_limit;  /* CPU workers' memory headroom; 0: the pool's default, -1: none */
    int64_t max_entry;  /* per package entry; 0: the package reader's default */
    int no_zygote, warm_spare, no_warm_up, check_inputs, verbose;
    int timeouts_are_bugs, oom_is_bug;
    int beyond_contract;
    int no_eager;        /* --no-eager: the reference stays off */
    int64_t check_every; /* compare outputs of every Nth exec too (0: corpus additions only) */
    int n_tol;
    double rtol, atol;
} fuzz_opts;

/* Everything the callback needs lives here: libFuzzer's callback takes no context. */
static struct {
    fuzz_opts o;
    af_package *pkg;
    af_spec spec;
    af_worker_opts wopts;
    af_pool *pool;
    af_store *store;
    af_memo *memo; /* failing cases already run: answered without running again */
    af_ref *ref;   /* the eager reference, or NULL (why_no_ref says why) */
    char why_no_ref[160];
    int64_t checks, mismatches, verdicts;
    int started;        /* the callback ran at least once in this process */
    int finished;       /* finish() ran */
    int made_artifacts; /* the artifact dir did not exist before this run */
    double t0, t_pool_ready, last_status;
    int64_t execs, runs, memo_hits, reruns, crash_runs, timeouts, ooms, refused, flaky;
    int64_t by_class[AF_RES_COUNT];
    int64_t first_crash_exec;
    double first_crash_s;
    int64_t new_crashes;
    int64_t largest_bytes;
    char worst[320];
    af_feat_layout layout;
    uint8_t *seen; /* slots ever set, layout.end of them */
    int64_t n_features;
    FILE *case_log; /* $AOTI_FUZZ_CASE_LOG, or NULL */
    char first_timeout[256], first_oom[256];
    int store_warned;
    volatile sig_atomic_t stop_signal;
    struct sigaction old_int, old_term;
} G;

static void usage(FILE *f)
{
    fputs(
        "usage: aoti-fuzz PKG.pt2 [options] [-- libFuzzer flags and corpus dirs]\n"
        "  --artifacts DIR         crash files go here (default ./crashes)\n"
        "  --seed-corpus DIR       write seed inputs for the package's spec to DIR and exit\n"
        "  --summary FILE          write a JSON summary at exit\n"
        "  --model NAME            model inside the package (default: model)\n"
        "  --spec FILE             shape spec file (overrides the package's)\n"
        "  --exported FILE         the model's torch.export.save file (the contract: declared\n"
        "                          ranges, input names, index value ranges)\n"
        "  --no-eager              no reference: no eager verdicts, no output comparison\n"
        "  --check-every N         compare outputs with eager on every Nth exec too (default:\n"
        "                          only on inputs that reach new features, i.e. the corpus)\n"
        "  --rtol X --atol Y       comparison tolerances (default: torch.testing.assert_close's)\n"
        "  --beyond-contract       also explore sizes below the declared minimums and index\n"
        "                          values past their valid range; findings there are\n"
        "                          labelled \"outside the declared contract\"\n"
        "  --device DEV            cpu, cuda, cuda:N (default: the package's device)\n"
        "  --torch-lib DIR         directory holding libtorch.so\n"
        "  --timeout SECONDS       per case (default 30)\n"
        "  --max-input-bytes N     refuse cases with larger inputs; K/M/G suffixes (default 1G)\n"
        "  --mem-limit BYTES       CPU worker memory headroom (default 8G; 'none': no limit);\n"
        "                          over it is OOM\n"
        "  --max-entry-bytes N     refuse package entries larger than N (default 4G)\n"
        "  --timeouts-are-bugs     save timeouts as crashes (default: only counted)\n"
        "  --oom-is-bug            save out-of-memory results as crashes (default: counted)\n"
        "  --check-inputs          set AOTI_RUNTIME_CHECK_INPUTS=1 in the workers\n"
        "  --no-zygote             every worker loads libtorch itself\n"
        "  --warm-spare            keep a second worker loaded to hide restarts (CUDA:\n"
        "                          default on; more spares while workers die faster)\n"
        "  --max-spares N          at most N spares (1-16; default CUDA: one per 4 CPUs)\n"
        "  --no-warm-up            a loading worker does not run an earlier OK case first\n"
        "                          (default: it does where spares are on, to load CUDA\n"
        "                          kernels before its first case)\n"
        "  -v, --verbose           show the workers' stderr\n"
        "  -h, --help              this text\n"
        "After --, libFuzzer's own flags keep their meaning: -runs=N, -max_total_time=S,\n"
        "-seed=N, -jobs=N, -workers=N, -merge=1, -print_final_stats=1, corpus dirs, ...\n"
        "(-max_len and -len_control default to the encoding's size and 0).\n"
        "A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
        f);
}

enum {
    OPT_MODEL = 256,
    OPT_SPEC,
    OPT_TORCH_LIB,
    OPT_ARTIFACTS,
    OPT_TIMEOUT,
    OPT_MAX_BYTES,
    OPT_SEED_CORPUS,
    OPT_SUMMARY,
    OPT_DEVICE,
    OPT_NO_ZYGOTE,
    OPT_WARM_SPARE,
    OPT_NO_WARM_UP,
    OPT_TIMEOUT_BUGS,
    OPT_OOM_BUG,
    OPT_CHECK_INPUTS,
    OPT_PKG,
    OPT_MAX_SPARES,
    OPT_EXPORTED,
    OPT_BEYOND,
    OPT_NO_EAGER,
    OPT_CHECK_EVERY,
    OPT_RTOL,
    OPT_ATOL,
    OPT_MEM_LIMIT,
    OPT_MAX_ENTRY,
};

static const struct option long_opts[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"spec", required_argument, NULL, OPT_SPEC},
    {"exported", required_argument, NULL, OPT_EXPORTED},
    {"beyond-contract", no_argument, NULL, OPT_BEYOND},
    {"no-eager", no_argument, NULL, OPT_NO_EAGER},
    {"check-every", required_argument, NULL, OPT_CHECK_EVERY},
    {"rtol", required_argument, NULL, OPT_RTOL},
    {"atol", required_argument, NULL, OPT_ATOL},
    {"torch-lib", required_argument, NULL, OPT_TORCH_LIB},
    {"artifacts", required_argument, NULL, OPT_ARTIFACTS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    /* the spelling handed to libFuzzer re-runs: "--timeout=" makes libFuzzer warn */
    {"case-timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-input-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"mem-limit", required_argument, NULL, OPT_MEM_LIMIT},
    {"max-entry-bytes", required_argument, NULL, OPT_MAX_ENTRY},
    {"seed-corpus", required_argument, NULL, OPT_SEED_CORPUS},
    {"summary", required_argument, NULL, OPT_SUMMARY},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"no-zygote", no_argument, NULL, OPT_NO_ZYGOTE},
    {"warm-spare", no_argument, NULL, OPT_WARM_SPARE},
    {"no-warm-up", no_argument, NULL, OPT_NO_WARM_UP},
    {"max-spares", required_argument, NULL, OPT_MAX_SPARES},
    {"timeouts-are-bugs", no_argument, NULL, OPT_TIMEOUT_BUGS},
    {"oom-is-bug", no_argument, NULL, OPT_OOM_BUG},
    {"check-inputs", no_argument, NULL, OPT_CHECK_INPUTS},
    {"pkg", required_argument, NULL, OPT_PKG},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parse our part of argv (before "--"). Returns 0, 1 for --help, -1 on a bad flag (the
 * message is printed). */
static int parse_args(int argc, char **argv, fuzz_opts *o)
{
    int c;
    memset(o, 0, sizeof *o);
    o->artifacts = "crashes";
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hv", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_MODEL:
            o->model = optarg;
            break;
        case OPT_SPEC:
            o->spec_file = optarg;
            break;
        case OPT_EXPORTED:
            o->exported = optarg;
            break;
        case OPT_BEYOND:
            o->beyond_contract = 1;
            break;
        case OPT_NO_EAGER:
            o->no_eager = 1;
            break;
        case OPT_CHECK_EVERY:
            if (af_parse_i64(optarg, &o->check_every) || o->check_every < 0) {
                fprintf(stderr, "aoti-fuzz: --check-every: not a number >= 0: %s\n", optarg);
                return -1;
            }
            break;
        case OPT_RTOL:
        case OPT_ATOL: {
            double v;
            if (af_parse_nonneg(optarg, &v) != 0) {
                fprintf(stderr, "aoti-fuzz: %s: not a number >= 0: %s\n",
                        c == OPT_RTOL ? "--rtol" : "--atol", optarg);
                return -1;
            }
            *(c == OPT_RTOL ? &o->rtol : &o->atol) = v;
            o->n_tol++;
            break;
        }
        case OPT_TORCH_LIB:
            o->torch_lib = optarg;
            break;
        case OPT_ARTIFACTS:
            o->artifacts = optarg;
            break;
        case OPT_SEED_CORPUS:
            o->seed_corpus = optarg;
            break;
        case OPT_SUMMARY:
            o->summary = optarg;
            break;
        case OPT_DEVICE:
            o->device = optarg;
            break;
        case OPT_NO_ZYGOTE:
            o->no_zygote = 1;
            break;
        case OPT_WARM_SPARE:
            o->warm_spare = 1;
            break;
        case OPT_NO_WARM_UP:
            o->no_warm_up = 1;
            break;
        case OPT_TIMEOUT_BUGS:
            o->timeouts_are_bugs = 1;
            break;
        case OPT_OOM_BUG:
            o->oom_is_bug = 1;
            break;
        case OPT_CHECK_INPUTS:
            o->check_inputs = 1;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            return 1;
        case OPT_PKG:
            if (o->pkg) {
                fprintf(stderr, "aoti-fuzz: more than one package given\n");
                return -1;
            }
            o->pkg = optarg;
            break;
        case OPT_TIMEOUT:
            if (af_parse_seconds(optarg, &o->timeout_s) < 0) {
                fprintf(stderr, "aoti-fuzz: --timeout: not a positive number of seconds: %s\n",
                        optarg);
                return -1;
            }
            break;
        case OPT_MAX_SPARES:
            if (af_parse_i64(optarg, &o->max_spares) < 0 || o->max_spares < 1 ||
                o->max_spares > AF_MAX_SPARES) {
                fprintf(stderr, "aoti-fuzz: --max-spares: not a number from 1 to %d: %s\n",
                        AF_MAX_SPARES, optarg);
                return -1;
            }
            break;
        case OPT_MAX_BYTES:
            if (af_parse_bytes(optarg, &o->max_input_bytes) < 0) {
                fprintf(stderr, "aoti-fuzz: --max-input-bytes: not a positive size: %s\n", optarg);
                return -1;
            }
            break;
        case OPT_MEM_LIMIT:
            if (af_parse_mem_limit(optarg, &o->mem_limit) < 0) {
                fprintf(stderr, "aoti-fuzz: --mem-limit: not a positive size or 'none': %s\n",
                        optarg);
                return -1;
            }
            break;
        case OPT_MAX_ENTRY:
            if (af_parse_bytes(optarg, &o->max_entry) < 0) {
                fprintf(stderr, "aoti-fuzz: --max-entry-bytes: not a positive size: %s\n", optarg);
                return -1;
            }
            break;
        case ':':
            fprintf(stderr, "aoti-fuzz: %s needs a value (try -h)\n", argv[optind - 1]);
            return -1;
        default:
            if (optopt)
                fprintf(stderr,
                        "aoti-fuzz: unknown option -%c (libFuzzer flags go after --; try -h)\n",
                        optopt);
            else
                fprintf(stderr,
                        "aoti-fuzz: unknown option %s (libFuzzer flags go after --; try -h)\n",
                        argv[optind - 1]);
            return -1;
        }
    }
    for (; optind < argc; optind++) {
        if (o->pkg) {
            fprintf(stderr, "aoti-fuzz: unexpected argument %s (corpus dirs go after --; try -h)\n",
                    argv[optind]);
            return -1;
        }
        o->pkg = argv[optind];
    }
    if (!o->pkg) {
        fprintf(stderr, "aoti-fuzz: no package given (try -h)\n");
        return -1;
    }
    return 0;
}

/* ---- the argument vector handed to libFuzzer ------------------------------------------ */

static char *xasprintf(const char *fmt, ...) AF_PRINTF(1, 2);
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s) {
        fprintf(stderr, "aoti-fuzz: out of memory\n");
        exit(1);
    }
    return s;
}

static int has_flag(char **args, int n, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < n; i++)
        if (args[i][0] == '-' && strncmp(args[i] + 1, name, len) == 0 && args[i][1 + len] == '=')
            return 1;
    return 0;
}

/* The value of libFuzzer flag -name=value in args, or NULL. */
static const char *flag_value(char **args, int n, const char *name)
{
    size_t len = strlen(name);
    for (int i = n - 1; i >= 0; i--) /* libFuzzer takes the last one */
        if (args[i][0] == '-' && strncmp(args[i] + 1, name, len) == 0 && args[i][1 + len] == '=')
            return args[i] + 2 + len;
    return NULL;
}

/* p made absolute against the current directory (the string itself when it already is) */
static char *abs_path(const char *p)
{
    static char cwd[PATH_MAX];
    if (!p || p[0] == '/' || !*p)
        return (char *)p;
    if (!cwd[0] && !getcwd(cwd, sizeof cwd))
        return (char *)p;
    return xasprintf("%s/%s", cwd, p);
}

/* libFuzzer's -jobs writes each job's output to fuzz-<N>.log in the current directory, and
 * has no flag for another place. So with -jobs, this process and the jobs it starts run in
 * the artifact dir: every path of the command line, ours and libFuzzer's, is made absolute
 * first, argv[0] included (the jobs are this program run again through the shell).
 * Returns 0, or -1 with a message. */
static int jobs_into_artifacts(char **argv0, fuzz_opts *o, char **lf, int n_lf)
{
    const char *jobs = flag_value(lf, n_lf, "jobs");
    if (!jobs || atoll(jobs) <= 0)
        return 0;
    static char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) {
        fprintf(stderr, "aoti-fuzz: -jobs: cannot find this program (/proc/self/exe): %s\n",
                strerror(errno));
        return -1;
    }
    self[k] = '\0';
    *argv0 = self;
    o->pkg = abs_path(o->pkg);
    o->spec_file = abs_path(o->spec_file);
    o->exported = abs_path(o->exported);
    o->torch_lib = abs_path(o->torch_lib);
    o->summary = abs_path(o->summary);
    o->artifacts = abs_path(o->artifacts);
    static const char *const path_flags[] = {
        "artifact_prefix", "exact_artifact_path", "dict", "merge_control_file", "features_dir",
        "data_flow_trace", "mutation_graph_file"};
    for (int i = 0; i < n_lf; i++) {
        if (lf[i][0] != '-') {
            lf[i] = abs_path(lf[i]); /* a corpus dir */
            continue;
        }
        for (size_t f = 0; f < sizeof path_flags / sizeof path_flags[0]; f++) {
            size_t len = strlen(path_flags[f]);
            if (strncmp(lf[i] + 1, path_flags[f], len) == 0 && lf[i][1 + len] == '=' &&
                lf[i][2 + len] != '/')
                lf[i] = xasprintf("-%s=%s", path_flags[f], abs_path(lf[i] + 2 + len));
        }
    }
    if (chdir(o->artifacts) != 0) {
        fprintf(stderr, "aoti-fuzz: -jobs: cannot enter --artifacts %s: %s\n", o->artifacts,
                strerror(errno));
        return -1;
    }
    fprintf(stderr, "aoti-fuzz: -jobs=%s: the jobs' logs (fuzz-<N>.log) go to %s\n", jobs,
            o->artifacts);
    return 0;
}

static int build_lf_argv(char *argv0, const fuzz_opts *o, char **lf, int n_lf, char **out)
{
    int n = 0;
    out[n++] = argv0;
    out[n++] = xasprintf("--pkg=%s", o->pkg);
    if (o->model)
        out[n++] = xasprintf("--model=%s", o->model);
    if (o->spec_file)
        out[n++] = xasprintf("--spec=%s", o->spec_file);
    if (o->exported)
        out[n++] = xasprintf("--exported=%s", o->exported);
    if (o->beyond_contract)
        out[n++] = "--beyond-contract";
    if (o->no_eager)
        out[n++] = "--no-eager";
    if (o->check_every)
        out[n++] = xasprintf("--check-every=%" PRId64, o->check_every);
    if (o->n_tol == 2) {
        out[n++] = xasprintf("--rtol=%.17g", o->rtol);
        out[n++] = xasprintf("--atol=%.17g", o->atol);
    }
    if (o->torch_lib)
        out[n++] = xasprintf("--torch-lib=%s", o->torch_lib);
    out[n++] = xasprintf("--artifacts=%s", o->artifacts);
    if (o->summary)
        out[n++] = xasprintf("--summary=%s", o->summary);
    if (o->device)
        out[n++] = xasprintf("--device=%s", o->device);
    if (o->timeout_s > 0)
        out[n++] = xasprintf("--case-timeout=%.17g", o->timeout_s);
    if (o->max_input_bytes > 0)
        out[n++] = xasprintf("--max-input-bytes=%" PRId64, o->max_input_bytes);
    if (o->mem_limit)
        out[n++] =
            o->mem_limit < 0 ? "--mem-limit=none" : xasprintf("--mem-limit=%" PRId64, o->mem_limit);
    if (o->max_entry > 0)
        out[n++] = xasprintf("--max-entry-bytes=%" PRId64, o->max_entry);
    if (o->no_zygote)
        out[n++] = "--no-zygote";
    if (o->warm_spare)
        out[n++] = "--warm-spare";
    if (o->no_warm_up)
        out[n++] = "--no-warm-up";
    if (o->max_spares > 0)
        out[n++] = xasprintf("--max-spares=%" PRId64, o->max_spares);
    if (o->timeouts_are_bugs)
        out[n++] = "--timeouts-are-bugs";
    if (o->oom_is_bug)
        out[n++] = "--oom-is-bug";
    if (o->check_inputs)
        out[n++] = "--check-inputs";
    if (o->verbose)
        out[n++] = "--verbose";
    out[n++] = "--";
    if (n + n_lf + 3 > MAX_ARGS) {
        fprintf(stderr, "aoti-fuzz: too many arguments\n");
        return -1;
    }
    for (int i = 0; i < n_lf; i++)
        out[n++] = lf[i];
    /* libFuzzer starts with tiny inputs and grows them slowly (-len_control); a case has
     * one natural size, so offer it from the start. */
    if (!has_flag(lf, n_lf, "max_len"))
        out[n++] = xasprintf("-max_len=%zu", af_enc_size(&G.spec));
    if (!has_flag(lf, n_lf, "len_control"))
        out[n++] = "-len_control=0";
    /* libFuzzer's own files (crash-<sha1>, oom-<sha1>, for a failure of this process rather
     * than of a case) go with ours, not into the current directory */
    if (!has_flag(lf, n_lf, "artifact_prefix"))
        out[n++] = xasprintf("-artifact_prefix=%s/", o->artifacts);
    /* libFuzzer's RSS and malloc limits measure this process, not the model's: the models run
     * in workers, under --mem-limit. Its default 2 GiB would end a long run on this process's
     * own growth (corpus, memo) with a report that reads like a finding. */
    if (!has_flag(lf, n_lf, "rss_limit_mb"))
        out[n++] = "-rss_limit_mb=0";
    out[n] = NULL;
    return n;
}

/* libFuzzer reads its numeric flags with atol: "-runs=abc" would run with 0. Check the ones
 * a user sets, "-name=value", as integers in range; 0 or a message naming the flag. */
static int check_lf_numbers(char **lf, int n_lf)
{
    static const struct {
        const char *name;
        long long lo, hi;
    } nums[] = {
        {"runs", -1, LLONG_MAX},
        {"max_len", 1, 1 << 30},
        {"seed", 0, UINT32_MAX},
        {"max_total_time", 0, LLONG_MAX},
        {"timeout", 0, LLONG_MAX},
        {"jobs", 0, 4096},
        {"workers", 0, 4096},
        {"rss_limit_mb", 0, LLONG_MAX},
        {"malloc_limit_mb", 0, LLONG_MAX},
        {"len_control", 0, LLONG_MAX},
        {"verbosity", 0, 100},
        {"print_final_stats", 0, 1},
    };
    for (int i = 0; i < n_lf; i++) {
        if (lf[i][0] != '-')
            continue;
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            size_t len = strlen(nums[k].name);
            if (strncmp(lf[i] + 1, nums[k].name, len) != 0 || lf[i][1 + len] != '=')
                continue;
            int64_t v;
            if (af_parse_i64(lf[i] + 2 + len, &v) != 0 || v < nums[k].lo || v > nums[k].hi) {
                fprintf(
                    stderr,
                    "aoti-fuzz: libFuzzer flag -%s wants an integer in [%lld, %lld], got '%s'\n",
                    nums[k].name, nums[k].lo, nums[k].hi, lf[i] + 2 + len);
                return -1;
            }
        }
    }
    return 0;
}

/* --summary is written at exit: say at the start when it cannot be (a directory, a missing
 * or unwritable parent), not after the run. */
static int check_summary_path(const char *path)
{
    struct stat st;
    char dir[PATH_MAX];
    if (!path)
        return 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "aoti-fuzz: --summary %s: not a regular file\n", path);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    /* the summary is written as a temp file in its dir, then renamed: try exactly that
     * (access() says yes to root for /proc, where no file can be made) */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.aotif-summary-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        fprintf(stderr, "aoti-fuzz: --summary %s: cannot write in %s: %s\n", path, dir,
                strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* libFuzzer's corpus dirs (and input files) are its plain arguments: one that does not
 * exist is bad input said now, not libFuzzer's exit 1 after the package is unpacked. The
 * first may be missing when it is the output of -merge (libFuzzer makes none, though). */
static int check_lf_paths(char **lf, int n_lf)
{
    for (int i = 0; i < n_lf; i++) {
        struct stat st;
        if (lf[i][0] == '-')
            continue;
        if (stat(lf[i], &st) != 0) {
            fprintf(stderr, "aoti-fuzz: corpus dir %s: %s\n", lf[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* An empty first corpus dir gets the seed cases, so the boundary cases (all-min, each
 * symbol at 0 and 1, all-max) run first whatever the mutator draws. Not for the modes
 * where the first dir is an output (-merge) or corpus dirs are not corpora. */
static int auto_seed(char **lf, int n_lf)
{
    static const char *const skip[] = {"merge",         "set_cover_merge", "minimize_crash",
                                       "cleanse_crash", "analyze_dict",    "minimize_corpus"};
    const char *dir = NULL;
    for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
        if (has_flag(lf, n_lf, skip[k]))
            return 0;
    for (int i = 0; i < n_lf && !dir; i++)
        if (lf[i][0] != '-')
            dir = lf[i];
    if (!dir)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* not a dir (a file to run), or missing: libFuzzer says what is wrong */
    struct dirent *de;
    int empty = 1;
    while (empty && (de = readdir(d)))
        empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
    closedir(d);
    if (!empty)
        return 0;
    af_error err;
    af_error_clear(&err);
    int n = af_seed_corpus_write(&G.spec, dir, &err);
    if (n < 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return -1;
    }
    fprintf(stderr, "aoti-fuzz: %s was empty: wrote %d seed input%s\n", dir, n, n == 1 ? "" : "s");
    return 0;
}

/* ---- summary -------------------------------------------------------------------------- */

static void crash_case_str(const af_crash *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_syms && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s=%" PRId64, i ? " " : "",
                         c->dim_names[i][0] ? c->dim_names[i] : c->sym_names[i], c->values[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (n < len && c->fill != AF_FILL_RANDOM)
        snprintf(buf + n, len - n, " fill=%s", af_fill_name(c->fill));
}

/* Crash files of this run's dir whose case lies outside the declared contract. */
static int outside_count(void)
{
    int n = 0;
    for (int i = 0; G.store && i < af_store_size(G.store); i++)
        n += af_store_entry_at(G.store, i)->crash.contract == AF_CT_OUTSIDE;
    return n;
}

static cJSON *summary_json(double elapsed)
{
    cJSON *o = cJSON_CreateObject(), *arr, *cls;
    char buf[512], when[32];
    cJSON_AddStringToObject(o, "tool", "aoti-fuzz");
    af_json_add_path(o, "package", G.pkg->path);
    cJSON_AddStringToObject(o, "sha256", G.pkg->sha256);
    cJSON_AddStringToObject(o, "model", G.pkg->model);
    cJSON_AddStringToObject(o, "device", G.o.device ? G.o.device : G.pkg->device);
    af_json_add_path(o, "artifacts", G.o.artifacts);
    cJSON_AddNumberToObject(o, "execs", (double)G.execs);
    cJSON_AddNumberToObject(o, "runs", (double)G.runs);
    cJSON_AddNumberToObject(o, "memo_hits", (double)G.memo_hits);
    cJSON_AddNumberToObject(o, "reruns", (double)G.reruns);
    cJSON_AddNumberToObject(o, "seconds", elapsed);
    cJSON_AddNumberToObject(o, "execs_per_second", elapsed > 0 ? (double)G.execs / elapsed : 0);
    if (G.pool) {
        af_pool_stats ps;
        af_pool_get_stats(G.pool, &ps);
        cJSON *p = cJSON_AddObjectToObject(o, "pool");
        cJSON_AddNumberToObject(p, "setup_seconds", ps.setup_seconds);
        cJSON_AddNumberToObject(p, "spawns", (double)ps.spawns);
        cJSON_AddNumberToObject(p, "spawn_seconds", ps.spawn_seconds);
        cJSON_AddNumberToObject(p, "spares_peak", ps.spares_peak);
        cJSON_AddNumberToObject(p, "zygote_restarts", ps.zygote_restarts);
        cJSON_AddNumberToObject(p, "cases_rerun", (double)ps.cases_rerun);
        /* per worker that came up, in seconds: where start-up goes */
        cJSON *lp = cJSON_AddObjectToObject(p, "load_phases_mean_seconds");
        static const char *const phase[] = {"fork", "libtorch", "cuda_context", "model_so",
                                            "container"};
        for (int k = 0; k < 5; k++)
            cJSON_AddNumberToObject(lp, phase[k],
                                    ps.loads ? ps.load_phase_seconds[k] / (double)ps.loads : 0);
        cJSON_AddNumberToObject(p, "loads", (double)ps.loads);
        cJSON_AddNumberToObject(p, "wait_worker_seconds", ps.wait_worker_seconds);
        cJSON_AddNumberToObject(p, "warm_ups", (double)ps.warm_ups);
        cJSON_AddNumberToObject(p, "warm_up_mean_seconds",
                                ps.warm_ups ? ps.warm_up_seconds / (double)ps.warm_ups : 0);
        cJSON_AddNumberToObject(p, "warm_deaths", (double)ps.warm_deaths);
        cJSON_AddNumberToObject(p, "faults", (double)ps.faults);
        cJSON_AddNumberToObject(p, "fault_case_seconds", ps.fault_case_seconds);
        cJSON_AddNumberToObject(p, "fault_exit_seconds", ps.fault_exit_seconds);
        cJSON_AddNumberToObject(p, "first_case_mean_seconds",
                                ps.first_cases ? ps.first_case_seconds / (double)ps.first_cases
                                               : 0);
    }
    if (G.first_crash_exec) {
        cJSON_AddNumberToObject(o, "first_crash_exec", (double)G.first_crash_exec);
        cJSON_AddNumberToObject(o, "first_crash_seconds", G.first_crash_s);
    } else {
        cJSON_AddNullToObject(o, "first_crash_exec");
        cJSON_AddNullToObject(o, "first_crash_seconds");
    }
    cJSON_AddNumberToObject(o, "crash_runs", (double)G.crash_runs);
    cJSON_AddNumberToObject(o, "new_crashes", (double)G.new_crashes);
    cJSON_AddNumberToObject(o, "distinct_crashes", G.store ? af_store_size(G.store) : 0);
    arr = cJSON_AddArrayToObject(o, "crashes");
    for (int i = 0; G.store && i < af_store_size(G.store); i++) {
        const af_store_entry *e = af_store_entry_at(G.store, i);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, x);
        cJSON_AddStringToObject(x, "signature", e->crash.signature);
        cJSON_AddStringToObject(x, "class", af_class_name(e->crash.cls));
        af_json_add_path(x, "file", e->path);
        crash_case_str(&e->crash, buf, sizeof buf);
        cJSON_AddStringToObject(x, "case", buf);
        cJSON_AddNumberToObject(x, "first_seen", (double)e->crash.first_seen);
        time_t t = (time_t)e->crash.first_seen;
        struct tm tm;
        if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
            cJSON_AddStringToObject(x, "first_seen_utc", when);
        cJSON_AddNumberToObject(x, "count", (double)(e->crash.count + e->pending));
        cJSON_AddNumberToObject(x, "seen_this_run", (double)e->seen_here);
        cJSON_AddBoolToObject(x, "from_earlier_run", e->loaded);
        cJSON_AddBoolToObject(x, "flaky", e->crash.flaky);
        cJSON_AddBoolToObject(x, "below_compiled", e->crash.below_compiled);
        cJSON_AddStringToObject(x, "contract", af_ctv_name(e->crash.contract));
        cJSON_AddStringToObject(x, "contract_note", e->crash.contract_note);
        cJSON_AddStringToObject(x, "eager", e->crash.eager);
        cJSON_AddStringToObject(x, "eager_error", e->crash.eager_error);
        cJSON_AddStringToObject(x, "message", e->crash.message);
    }
    cJSON_AddNumberToObject(o, "timeouts", (double)G.timeouts);
    cJSON_AddNumberToObject(o, "ooms", (double)G.ooms);
    cJSON_AddNumberToObject(o, "refused", (double)G.refused);
    cJSON_AddNumberToObject(o, "flaky", (double)G.flaky);
    if (G.first_timeout[0])
        cJSON_AddStringToObject(o, "first_timeout_case", G.first_timeout);
    if (G.first_oom[0])
        cJSON_AddStringToObject(o, "first_oom_case", G.first_oom);
    cls = cJSON_AddObjectToObject(o, "results_by_class");
    for (int c = 0; c < AF_RES_COUNT; c++)
        cJSON_AddNumberToObject(cls, af_class_name((af_class)c), (double)G.by_class[c]);
    cJSON_AddNumberToObject(o, "features", (double)G.n_features);
    cJSON *orc = cJSON_AddObjectToObject(o, "reference");
    cJSON_AddBoolToObject(orc, "on", G.ref != NULL);
    cJSON_AddStringToObject(orc, "why_off", G.why_no_ref);
    cJSON_AddNumberToObject(orc, "value_checks", (double)G.checks);
    cJSON_AddNumberToObject(orc, "mismatches", (double)G.mismatches);
    cJSON_AddNumberToObject(orc, "eager_verdicts", (double)G.verdicts);
    cJSON_AddNumberToObject(orc, "check_every", (double)G.o.check_every);
    cJSON_AddNumberToObject(orc, "restarts", af_ref_restarts(G.ref));
    cJSON_AddStringToObject(o, "contract_source", G.spec.contract_src);
    cJSON_AddBoolToObject(o, "contract_known", af_spec_contract_known(&G.spec));
    cJSON_AddBoolToObject(o, "beyond_contract", G.spec.beyond_contract);
    cJSON_AddNumberToObject(o, "crashes_outside_contract", (double)outside_count());
    cJSON *gaps = cJSON_AddArrayToObject(o, "contract_gaps");
    for (int k = 0; k < G.spec.n_syms; k++) {
        if (!af_spec_gap(&G.spec, k))
            continue;
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "symbol", G.spec.syms[k].name);
        cJSON_AddStringToObject(g, "dim", G.spec.syms[k].dim_name);
        cJSON_AddNumberToObject(g, "declared_min", (double)G.spec.syms[k].decl_min);
        cJSON_AddNumberToObject(g, "compiled_min", (double)G.spec.syms[k].compiled_min);
        cJSON_AddNumberToObject(g, "declared_max", (double)G.spec.syms[k].decl_max);
        cJSON_AddNumberToObject(g, "compiled_max", (double)G.spec.syms[k].compiled_max);
        cJSON_AddItemToArray(gaps, g);
    }
    cJSON_AddBoolToObject(o, "timeouts_are_bugs", G.o.timeouts_are_bugs);
    cJSON_AddBoolToObject(o, "oom_is_bug", G.o.oom_is_bug);
    return o;
}

static void finish(void)
{
    af_error err;
    int summary_failed = 0;
    if (G.finished || !G.started)
        goto cleanup;
    G.finished = 1;
    double elapsed = af_now_s() - G.t0;
    af_error_clear(&err);
    if (G.store && af_store_flush(G.store, 1, &err) < 0)
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
    if (G.o.summary) {
        cJSON *o = summary_json(elapsed);
        char *text = o ? af_json_print(o, 1) : NULL;
        cJSON_Delete(o);
        af_error_clear(&err);
        if (!text)
            fprintf(stderr, "aoti-fuzz: summary: out of memory\n");
        else if (af_write_atomic(G.o.summary, text, strlen(text), 0, &err) < 0)
            fprintf(stderr, "aoti-fuzz: summary: %s\n", err.message);
        summary_failed = !text || err.code != 0;
        free(text);
    }
    fprintf(stderr,
            "aoti-fuzz: done: %" PRId64 " execs (%" PRId64 " runs, %" PRId64 " from the memo) in"
            " %.1f s (%.0f/s), %d distinct crash%s (%" PRId64 " new, %" PRId64
            " failing inputs), %" PRId64 " timeouts, %" PRId64 " ooms, %" PRId64 " refused\n",
            G.execs, G.runs, G.memo_hits, elapsed, elapsed > 0 ? (double)G.execs / elapsed : 0.0,
            G.store ? af_store_size(G.store) : 0,
            G.store && af_store_size(G.store) == 1 ? "" : "es", G.new_crashes, G.crash_runs,
            G.timeouts, G.ooms, G.refused);
    for (int i = 0; G.store && i < af_store_size(G.store); i++) {
        const af_store_entry *e = af_store_entry_at(G.store, i);
        char cs[256];
        crash_case_str(&e->crash, cs, sizeof cs);
        fprintf(stderr, "  %-14s x%-6" PRId64 " %-24s %s%s\n    %s\n    eager: %s%s%s\n",
                af_class_name(e->crash.cls), e->crash.count + e->pending, cs, e->path,
                e->crash.flaky ? " (flaky)" : "",
                e->crash.contract_note[0] ? e->crash.contract_note : "contract: not recorded",
                e->crash.eager[0] ? e->crash.eager : "not recorded",
                e->crash.eager_error[0] ? ": " : "", e->crash.eager_error);
    }
cleanup:
    if (G.pool)
        af_pool_stop(G.pool);
    G.pool = NULL;
    af_store_close(G.store);
    G.store = NULL;
    af_memo_free(G.memo);
    G.memo = NULL;
    af_ref_stop(G.ref);
    G.ref = NULL;
    af_package_close(G.pkg);
    G.pkg = NULL;
    if (summary_failed)
        _exit(1); /* a run whose summary was asked for and is missing did not succeed */
}

/* ---- the callback --------------------------------------------------------------------- */

static void on_stop_signal(int signo)
{
    if (G.stop_signal) { /* a second one: do not wait for the input in flight */
        sigaction(SIGINT, &G.old_int, NULL);
        sigaction(SIGTERM, &G.old_term, NULL);
        raise(signo);
        return;
    }
    G.stop_signal = signo;
}

/* Finish, then give the signal back to libFuzzer, which reports and _Exit()s. */
static void stop_now(void)
{
    int signo = G.stop_signal;
    finish();
    sigaction(SIGINT, &G.old_int, NULL);
    sigaction(SIGTERM, &G.old_term, NULL);
    raise(signo);
    _Exit(130);
}

static void fatal(const char *what, const af_error *err)
{
    fprintf(stderr, "aoti-fuzz: %s: %s\n", what, err->message);
    G.started = 0; /* no summary of a run that could not go on */
    finish();
    if (G.made_artifacts)
        rmdir(G.o.artifacts); /* the dir made at the start, if nothing was written there */
    /* not exit(): libFuzzer would report the fuzz target exiting as a crash */
    _Exit(af_error_exit_code(err) == 2 ? 2 : 1);
}

static void start_pool(void)
{
    af_error err;
    af_error_clear(&err);
    G.started = 1;
    const char *log = getenv("AOTI_FUZZ_CASE_LOG");
    if (log && *log && !(G.case_log = fopen(log, "w")))
        fprintf(stderr, "aoti-fuzz: cannot write AOTI_FUZZ_CASE_LOG %s: %s\n", log,
                strerror(errno));
    G.t0 = af_now_s();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &G.old_int);
    sigaction(SIGTERM, &sa, &G.old_term);

    G.wopts.torch_lib = G.o.torch_lib;
    G.wopts.device = G.o.device;
    G.wopts.timeout_s = G.o.timeout_s;
    G.wopts.max_input_bytes = G.o.max_input_bytes;
    G.wopts.mem_limit_bytes = G.o.mem_limit;
    G.wopts.max_spares = (int)G.o.max_spares;
    G.wopts.no_zygote = G.o.no_zygote;
    G.wopts.warm_spare = G.o.warm_spare;
    G.wopts.warm_up = G.o.no_warm_up ? -1 : 0;
    G.wopts.check_inputs = G.o.check_inputs;
    G.wopts.verbose = G.o.verbose;
    const char *program = af_ref_program(G.pkg, G.o.exported);
    int want_ref = !G.o.no_eager && program;
    if (want_ref)
        G.wopts.arena_bytes = AF_ARENA_DEFAULT_BYTES;
    G.pool = af_pool_start(G.pkg, &G.spec, &G.wopts, &err);
    if (!G.pool)
        fatal(G.pkg->path, &err);
    if (want_ref) {
        af_ref_opts ro = {
            .device = G.o.device, .have_tol = G.o.n_tol == 2, .rtol = G.o.rtol, .atol = G.o.atol};
        G.ref = af_ref_start(G.pkg, &G.spec, program, G.pool, &ro, &err);
    }
    if (want_ref && !G.ref) { /* the AOTI side can still be fuzzed: say what is missing */
        snprintf(G.why_no_ref, sizeof G.why_no_ref, "off: it could not start (%.120s)",
                 err.message);
        fprintf(stderr, "aoti-fuzz: warning: reference %s: no eager verdicts, no value checks\n",
                G.why_no_ref);
    } else if (want_ref) {
        fprintf(stderr,
                "aoti-fuzz: reference ready (eager, torch %s): eager verdict for each new "
                "crash, outputs compared on %s\n",
                af_ref_torch_version(G.ref),
                G.o.check_every ? "corpus additions and a sample" : "corpus additions");
    } else {
        snprintf(G.why_no_ref, sizeof G.why_no_ref, "%s",
                 G.o.no_eager ? "off (--no-eager)"
                              : "off: no exported program (a plain package; give --exported or "
                                "the unified archive): no contract verdict, no value checks");
        fprintf(stderr, "aoti-fuzz: reference %s\n", G.why_no_ref);
    }
    /* after the pool: a package that cannot run leaves no empty artifact dir behind */
    G.store = af_store_open(G.o.artifacts, &err);
    if (!G.store)
        fatal("artifacts", &err);
    G.memo = af_memo_new(1 << 14);
    if (!G.memo) {
        af_error_set(&err, AF_E_INTERNAL, "out of memory");
        fatal("memo", &err);
    }
    if (af_store_n_loaded(G.store) || af_store_n_skipped(G.store))
        fprintf(stderr, "aoti-fuzz: %s: %d known crash signature%s loaded\n", G.o.artifacts,
                af_store_n_loaded(G.store), af_store_n_loaded(G.store) == 1 ? "" : "s");
    if (af_store_n_skipped(G.store))
        fprintf(stderr, "aoti-fuzz: warning: skipped %d unreadable crash file%s (%s)\n",
                af_store_n_skipped(G.store), af_store_n_skipped(G.store) == 1 ? "" : "s",
                af_store_skipped_msg(G.store));

    G.t_pool_ready = af_now_s();
    fprintf(stderr, "aoti-fuzz: workers ready in %.2f s\n", G.t_pool_ready - G.t0);
    G.t0 = G.t_pool_ready; /* execs/s counts fuzzing, not the one-off start */
}

static void status_line(int force)
{
    double t = af_now_s();
    if (!force && t - G.last_status < 1.0)
        return;
    G.last_status = t;
    double el = t - G.t0;
    fprintf(stderr,
            "aoti-fuzz: %" PRId64 " execs  %.0f/s  (%" PRId64 " runs, %" PRId64 " memo)  crashes %d"
            " (%" PRId64 " inputs, %d outside the contract)  timeouts %" PRId64 "  ooms %" PRId64
            "  refused %" PRId64 "  features %" PRId64 "  eager checks %" PRId64 "  worst: %s\n",
            G.execs, el > 0 ? (double)G.execs / el : 0.0, G.runs, G.memo_hits,
            af_store_size(G.store), G.crash_runs, outside_count(), G.timeouts, G.ooms, G.refused,
            G.n_features, G.checks, G.worst[0] ? G.worst : "-");
    af_error err;
    af_error_clear(&err);
    if (af_store_flush(G.store, 0, &err) < 0 && !G.store_warned++)
        fprintf(stderr, "aoti-fuzz: warning: %s\n", err.message);
}

/* A failing result whose case should be answered from the memo from now on. */
static void remember(const af_case *c, const af_result *r, int from_memo)
{
    if (!from_memo && r->cls != AF_RES_REFUSED)
        af_memo_put(G.memo, c, r);
}

static void handle_failure(const af_case *c, const af_result *r, int from_memo)
{
    af_error err;
    char cs[256];
    int bug = af_class_is_bug(r->cls) || (r->cls == AF_RES_TIMEOUT && G.o.timeouts_are_bugs) ||
              (r->cls == AF_RES_OOM && G.o.oom_is_bug);
    af_case_str(&G.spec, c, cs, sizeof cs);
    if (r->cls == AF_RES_TIMEOUT && !G.timeouts++)
        snprintf(G.first_timeout, sizeof G.first_timeout, "%s", cs);
    if (r->cls == AF_RES_OOM && !G.ooms++)
        snprintf(G.first_oom, sizeof G.first_oom, "%s", cs);
    if (r->cls == AF_RES_REFUSED)
        G.refused++;
    if (!bug) {
        remember(c, r, from_memo); /* a timeout costs the whole limit: never twice */
        return;
    }

    G.crash_runs++;
    if (!G.first_crash_exec) {
        G.first_crash_exec = G.execs;
        G.first_crash_s = af_now_s() - G.t0;
    }
    af_crash cr;
    af_crash_from_run(&cr, G.pkg, &G.spec, c, r, G.o.device);
    if (!G.ref) {
        char why[200];
        snprintf(why, sizeof why, "the reference was %s", G.why_no_ref);
        af_ref_to_crash(NULL, why, &cr);
    }
    if (r->cls == AF_RES_MISMATCH && G.o.n_tol == 2) {
        cr.have_tol = 1;
        cr.rtol = G.o.rtol;
        cr.atol = G.o.atol;
    }
    if (G.o.exported && !realpath(G.o.exported, cr.exported))
        snprintf(cr.exported, sizeof cr.exported, "%s", G.o.exported);
    if (!af_store_find(G.store, r->signature)) {
        af_crash_set_where(&cr, G.pkg, &G.spec, r); /* from the package's sources */
        /* A new signature: run it once more to see whether it reproduces. */
        af_result r2;
        af_ref_result rr;
        af_error_clear(&err);
        if (r->cls == AF_RES_MISMATCH) { /* seen only against the reference */
            if (af_ref_check(G.pool, G.ref, &G.spec, c, &r2, &rr, &err) < 0)
                fatal("reference", &err);
        } else if (af_pool_run(G.pool, c, &r2, &err) < 0) {
            fatal("worker pool", &err);
        }
        G.reruns++;
        if (G.stop_signal)
            return;
        if (strcmp(r2.signature, r->signature) != 0) {
            cr.flaky = 1;
            G.flaky++;
        }
        if (G.ref && r->cls == AF_RES_MISMATCH) {
            af_ref_to_crash(&rr, NULL, &cr); /* eager ran: AOTI_ONLY */
            G.verdicts++;
        } else if (G.ref) { /* the contract verdict: does eager fail too? */
            af_error_clear(&err);
            if (af_ref_run(G.ref, c, 0, &rr, &err) < 0)
                fatal("reference", &err);
            af_ref_to_crash(&rr, NULL, &cr);
            G.verdicts++;
        }
        if (r->cls == AF_RES_DEVICE_FAULT) { /* name the kernel for the crash file */
            af_result t = *r;
            af_pool_triage(G.pool, c, &t);
            snprintf(cr.kernel, sizeof cr.kernel, "%s", t.kernel);
            snprintf(cr.triage, sizeof cr.triage, "%s", t.triage);
        }
    }
    const af_store_entry *known = af_store_find(G.store, r->signature);
    if (!cr.flaky && !(known && known->crash.flaky))
        remember(c, r, from_memo);
    af_error_clear(&err);
    int rc = af_store_add(G.store, &cr, &err);
    if (rc < 0) {
        fprintf(stderr, "aoti-fuzz: warning: crash not saved: %s\n", err.message);
        return;
    }
    const af_store_entry *e = af_store_find(G.store, r->signature);
    if (e && e->seen_here == 1) /* first time in this process, new to the dir or not */
        snprintf(G.worst, sizeof G.worst, "%s (%s)", cs, af_class_name(r->cls));
    if (rc == AF_STORE_NEW) {
        G.new_crashes++;
        fprintf(stderr,
                "aoti-fuzz: NEW %s at exec %" PRId64 ": %s%s -> %s\n  signature: %s\n"
                "  contract: %s\n  eager: %s%s%s\n",
                af_class_name(r->cls), G.execs, cs, cr.flaky ? " (flaky)" : "", e ? e->path : "?",
                r->signature, cr.contract_note, cr.eager, cr.eager_error[0] ? ": " : "",
                cr.eager_error);
    }
}

/* $AOTI_FUZZ_CASE_LOG: one line per case run ("v0 v1 ... fill seed"), so bench/ can
 * replay the fuzzer's own shape mix in an in-process loop. */
static void log_case(const af_case *c)
{
    for (int i = 0; i < c->n_syms; i++)
        fprintf(G.case_log, "%" PRId64 " ", c->values[i]);
    fprintf(G.case_log, "%d %" PRIu64 "\n", (int)c->fill, c->seed);
}

static int fuzz_one(const uint8_t *data, size_t size)
{
    af_case c;
    af_result r;
    af_error err;

    if (!G.started)
        start_pool();
    if (G.stop_signal)
        stop_now();
    af_enc_decode(&G.spec, data, size, &c);
    memset(&r, 0, sizeof r);
    af_error_clear(&err);
    int from_memo = af_memo_get(G.memo, &c, &r);
    if (from_memo) {
        G.memo_hits++;
    } else {
        if (af_pool_run(G.pool, &c, &r, &err) < 0)
            fatal("worker pool", &err);
        G.runs++;
        if (G.case_log) /* for bench/: the exact shape mix this run drew */
            log_case(&c);
    }
    if (G.stop_signal) /* the run may have been cut short by the signal: do not judge it */
        stop_now();
    G.execs++;
    if ((unsigned)r.cls < AF_RES_COUNT)
        G.by_class[r.cls]++;

    af_features_compute(&G.spec, &G.layout, &c, &r, af_counters);
    size_t fresh = af_features_note_new(af_counters, G.seen, G.layout.end);
    G.n_features += (int64_t)fresh;
    /* Values: an input that joins the corpus (new features) is checked against eager, and
     * every Nth exec when asked. A mismatch is a failure of its own, and a feature. */
    if (G.ref && r.cls == AF_RES_OK && !from_memo &&
        (fresh || (G.o.check_every && G.execs % G.o.check_every == 0))) {
        af_ref_result rr;
        af_error_clear(&err);
        if (af_ref_check(G.pool, G.ref, &G.spec, &c, &r, &rr, &err) < 0)
            fatal("reference", &err);
        G.checks++;
        if (r.cls != AF_RES_OK) {
            G.mismatches += r.cls == AF_RES_MISMATCH;
            af_features_compute(&G.spec, &G.layout, &c, &r, af_counters);
            G.n_features += (int64_t)af_features_note_new(af_counters, G.seen, G.layout.end);
        }
    }

    if (r.cls != AF_RES_OK)
        handle_failure(&c, &r, from_memo);
    if (!G.crash_runs) {
        int64_t b = af_case_input_bytes(&G.spec, &c);
        if (b > G.largest_bytes && r.cls != AF_RES_REFUSED) {
            char cs[256];
            G.largest_bytes = b;
            af_case_str(&G.spec, &c, cs, sizeof cs);
            snprintf(G.worst, sizeof G.worst, "%s (largest, %" PRId64 " bytes)", cs, b);
        }
    }
    status_line(0);
    return 0;
}

/* ---- libFuzzer hooks ------------------------------------------------------------------ */

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return af_mutate(&G.spec, data, size, max_size, seed);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    return af_crossover(&G.spec, d1, s1, d2, s2, out, max_out, seed);
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static char *lf_argv[MAX_ARGS + 1];
    af_error err;
    int dd = argc;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            dd = i;
            break;
        }
    int prc = parse_args(dd, argv, &G.o);
    if (prc == 1) {
        usage(stdout);
        return 0;
    }
    if (prc < 0)
        return 2;
    if (G.o.n_tol == 1) {
        fprintf(stderr, "aoti-fuzz: give --rtol and --atol together\n");
        return 2;
    }
    if (check_summary_path(G.o.summary) < 0 ||
        check_lf_numbers(argv + dd + (dd < argc), argc - dd - (dd < argc)) < 0 ||
        check_lf_paths(argv + dd + (dd < argc), argc - dd - (dd < argc)) < 0)
        return 2;
    /* an artifact dir that cannot be made is bad input said before the run; it is made
     * once the package and its contract are read, so an early refusal leaves nothing */
    af_error_clear(&err);
    if (af_dir_check_creatable(G.o.artifacts, &err) != 0) {
        fprintf(stderr, "aoti-fuzz: --artifacts %s: %s\n", G.o.artifacts, err.message);
        return 2;
    }

    af_error_clear(&err);
    af_package_opts popts = {.model = G.o.model, .max_entry_bytes = G.o.max_entry};
    G.pkg = af_package_open(G.o.pkg, &popts, &err);
    if (!G.pkg) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return af_error_exit_code(&err) == 2 ? 2 : 1;
    }
    if (G.o.spec_file && G.o.exported) {
        fprintf(stderr, "aoti-fuzz: --spec and --exported both state the contract: give one\n");
        af_package_close(G.pkg);
        return 2;
    }
    if (af_package_spec(G.pkg, G.o.spec_file, G.o.exported, &G.spec, &err) < 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        af_package_close(G.pkg);
        return af_error_exit_code(&err) == 2 ? 2 : 1;
    }
    if (G.o.beyond_contract)
        af_spec_widen_beyond_contract(&G.spec);

    if (G.o.seed_corpus) {
        int n = af_seed_corpus_write(&G.spec, G.o.seed_corpus, &err);
        af_package_close(G.pkg);
        if (n < 0) {
            fprintf(stderr, "aoti-fuzz: %s\n", err.message);
            return af_error_exit_code(&err);
        }
        fprintf(stderr, "aoti-fuzz: wrote %d seed input%s to %s\n", n, n == 1 ? "" : "s",
                G.o.seed_corpus);
        return 0;
    }

    fprintf(stderr,
            "aoti-fuzz: %s: model %s, device %s, spec from %s, %d symbol%s, %zu-byte "
            "inputs\n",
            G.pkg->path, G.pkg->model, G.o.device ? G.o.device : G.pkg->device,
            af_spec_source_name(G.spec.source), G.spec.n_syms, G.spec.n_syms == 1 ? "" : "s",
            af_enc_size(&G.spec));
    af_spec_print(&G.spec, stderr);
    fprintf(stderr, "aoti-fuzz: exploring %s\n",
            G.spec.beyond_contract ? "beyond the declared contract (--beyond-contract): sizes "
                                     "from 0, index values past their range"
            : af_spec_contract_known(&G.spec) ? "inside the declared contract"
                                              : "the assumed ranges (declared ranges unknown)");

    /* the artifact dir now: libFuzzer checks its -artifact_prefix dir at start */
    struct stat ast;
    G.made_artifacts = stat(G.o.artifacts, &ast) != 0;
    if (af_mkdir_p(G.o.artifacts, &err) != 0) {
        fprintf(stderr, "aoti-fuzz: --artifacts %s: %s\n", G.o.artifacts, err.message);
        af_package_close(G.pkg);
        return af_error_exit_code(&err) == 2 ? 2 : 1;
    }
    char **lf = argv + dd + (dd < argc);
    int n_lf = argc - dd - (dd < argc);
    if (auto_seed(lf, n_lf) < 0) {
        af_package_close(G.pkg);
        return 1;
    }
    char *argv0 = argv[0];
    if (jobs_into_artifacts(&argv0, &G.o, lf, n_lf) != 0) {
        af_package_close(G.pkg);
        return 2;
    }
    int n = build_lf_argv(argv0, &G.o, lf, n_lf, lf_argv);
    if (n < 0) {
        af_package_close(G.pkg);
        return 2;
    }
    size_t nfeat = af_feat_layout_for(&G.spec, &G.layout);
    af_counters = aligned_alloc(64, (nfeat + 63) / 64 * 64);
    G.seen = calloc(nfeat, 1);
    if (!af_counters || !G.seen) {
        fprintf(stderr, "aoti-fuzz: out of memory\n");
        af_package_close(G.pkg);
        return 1;
    }
    memset(af_counters, 0, nfeat);
    __sanitizer_cov_8bit_counters_init(af_counters, af_counters + nfeat);
    atexit(finish);
    char **lfv = lf_argv;
    return LLVMFuzzerRunDriver(&n, &lfv, fuzz_one);
}
