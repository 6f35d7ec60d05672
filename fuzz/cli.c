/* cli.c — aoti-fuzz's command line: our options (before "--"), the checks of libFuzzer's
 * part that libFuzzer itself would get wrong or say late, and the argument vector handed to
 * LLVMFuzzerRunDriver.
 *
 * The flags shared with aoti-run and aoti-minimize come from aotif/cli.h; ours are added on
 * top. libFuzzer's -jobs, -workers, -fork and -merge re-run this program with the vector we
 * give it, so that vector carries our options as "--name=value" (libFuzzer ignores flags that
 * start with "--") and the package as --pkg=PATH, then "--" and the libFuzzer part. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aotif/args.h"
#include "aotif/fileio.h"
#include "fuzz.h"

/* The shared flags aoti-fuzz takes: all but --eager (the reference is on unless --no-eager). */
#define FUZZ_SHARED (AF_CLI_ALL & ~AF_CLI_EAGER)
/* Help descriptions start here. */
#define HELP_COL 26

void af_fuzz_usage(FILE *f)
{
    fputs("usage: aoti-fuzz PKG.pt2 [options] [-- libFuzzer flags and corpus dirs]\n"
          "  --artifacts DIR         crash files go here (default ./crashes)\n"
          "  --seed-corpus DIR       write seed inputs for the package's spec to DIR and exit\n"
          "  --summary FILE          write a JSON summary at exit\n"
          "  --check-every N         compare outputs with eager on every Nth exec too (default:\n"
          "                          only on inputs that reach new features, i.e. the corpus)\n"
          "  --timeouts-are-bugs     save timeouts as crashes (default: only counted)\n"
          "  --oom-is-bug            save out-of-memory results as crashes (default: counted)\n"
          "  --warm-spare[=WHEN]     keep a second worker loaded to hide restarts, from the\n"
          "                          start (WHEN=start, the default) or from the first worker\n"
          "                          death on (WHEN=first-death: the CUDA default, as a\n"
          "                          spare's start-up competes with the runs); more spares\n"
          "                          while workers die faster\n"
          "  --no-warm-spare         no spare: a crash waits for a new worker to load\n"
          "  --max-spares N          at most N spares (1-16; default CUDA: one per 4 CPUs)\n"
          "  --predict, --no-predict answer new cases of a shape class that has only ever\n"
          "                          killed its worker, one way, without running them (every\n"
          "                          8th runs to check; default: on for CUDA packages)\n"
          "  --rerun-ok              run every input, even a case (values, fill, seed) that\n"
          "                          already ran OK (default: its repeat is answered from the\n"
          "                          memo with the same class and outputs' features)\n"
          "  --no-run-ahead          post each case only when libFuzzer asks for it (default:\n"
          "                          the next mutation of a case, which libFuzzer takes next\n"
          "                          unless the case found something new, is made and posted\n"
          "                          while libFuzzer does its own work; the same cases either\n"
          "                          way)\n"
          "  --no-warm-up            a loading worker does not run an earlier OK case first\n"
          "                          (default: it does where spares are on, to load CUDA\n"
          "                          kernels before its first case)\n",
          f);
    af_cli_help(f, FUZZ_SHARED, HELP_COL);
    fputs("  -h, --help              this text\n"
          "After --, libFuzzer's own flags keep their meaning: -runs=N, -max_total_time=S,\n"
          "-seed=N, -jobs=N, -workers=N, -merge=1, -print_final_stats=1, corpus dirs, ...\n"
          "(-max_len and -len_control default to the encoding's size and 0).\n"
          "A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
          f);
}

/* ---- our options ------------------------------------------------------------------------ */

enum {
    OPT_ARTIFACTS = 256,
    OPT_SEED_CORPUS,
    OPT_SUMMARY,
    OPT_WARM_SPARE,
    OPT_NO_WARM_SPARE,
    OPT_NO_WARM_UP,
    OPT_PREDICT,
    OPT_NO_PREDICT,
    OPT_TIMEOUT_BUGS,
    OPT_OOM_BUG,
    OPT_PKG,
    OPT_MAX_SPARES,
    OPT_CHECK_EVERY,
    OPT_CASE_TIMEOUT,
    OPT_NO_RUN_AHEAD,
    OPT_RERUN_OK,
};

/* One of our own options; 0, or -1 with err. */
static int take_own_option(fuzz_opts *o, int c, const char *arg, af_error *err)
{
    switch (c) {
    case OPT_ARTIFACTS:
        o->artifacts = arg;
        break;
    case OPT_SEED_CORPUS:
        o->seed_corpus = arg;
        break;
    case OPT_SUMMARY:
        o->summary = arg;
        break;
    case OPT_WARM_SPARE:
        if (!arg || !strcmp(arg, "start"))
            o->warm_spare = 1;
        else if (!strcmp(arg, "first-death"))
            o->warm_spare = 2;
        else
            return af_cli_bad_value(err, "--warm-spare", "start or first-death", arg);
        break;
    case OPT_NO_WARM_SPARE:
        o->warm_spare = -1;
        break;
    case OPT_NO_WARM_UP:
        o->no_warm_up = 1;
        break;
    case OPT_PREDICT:
        o->predict = 1;
        break;
    case OPT_NO_PREDICT:
        o->predict = -1;
        break;
    case OPT_TIMEOUT_BUGS:
        o->timeouts_are_bugs = 1;
        break;
    case OPT_OOM_BUG:
        o->oom_is_bug = 1;
        break;
    case OPT_RERUN_OK:
        o->rerun_ok = 1;
        break;
    case OPT_NO_RUN_AHEAD:
        o->no_run_ahead = 1;
        break;
    case OPT_PKG:
        if (o->pkg)
            return af_error_set(err, AF_E_USAGE, "more than one package given");
        o->pkg = arg;
        break;
    case OPT_CASE_TIMEOUT: /* --timeout's spelling in re-runs: "--timeout=" makes libFuzzer warn */
        if (af_parse_seconds(arg, &o->co.timeout_s) != 0)
            return af_cli_bad_value(err, "--case-timeout", "seconds > 0", arg);
        break;
    case OPT_MAX_SPARES:
        if (af_parse_i64(arg, &o->max_spares) != 0 || o->max_spares < 1 ||
            o->max_spares > AF_MAX_SPARES) {
            char want[32];
            snprintf(want, sizeof want, "an integer in 1..%d", AF_MAX_SPARES);
            return af_cli_bad_value(err, "--max-spares", want, arg);
        }
        break;
    case OPT_CHECK_EVERY:
        if (af_parse_i64(arg, &o->check_every) != 0 || o->check_every < 0)
            return af_cli_bad_value(err, "--check-every", "an integer >= 0", arg);
        break;
    }
    return 0;
}

/* What getopt_long could not take: a flag without its value, or one we do not know. */
static int bad_option(int c, char **argv, af_error *err)
{
    if (c == ':')
        return af_error_set(err, AF_E_USAGE, "%s needs a value (try -h)", argv[optind - 1]);
    if (optopt)
        return af_error_set(err, AF_E_USAGE,
                            "unknown option -%c (libFuzzer flags go after --; try -h)", optopt);
    return af_error_set(err, AF_E_USAGE, "unknown option %s (libFuzzer flags go after --; try -h)",
                        argv[optind - 1]);
}

/* The package: one positional argument (or --pkg). */
static int take_package(int argc, char **argv, fuzz_opts *o, af_error *err)
{
    for (; optind < argc; optind++) {
        if (o->pkg)
            return af_error_set(err, AF_E_USAGE,
                                "unexpected argument %s (corpus dirs go after --; try -h)",
                                argv[optind]);
        o->pkg = argv[optind];
    }
    if (!o->pkg)
        return af_error_set(err, AF_E_USAGE, "no package given (try -h)");
    return 0;
}

int af_fuzz_parse_args(int argc, char **argv, fuzz_opts *o, af_error *err)
{
    static const struct option own[] = {
        {"artifacts", required_argument, NULL, OPT_ARTIFACTS},
        {"seed-corpus", required_argument, NULL, OPT_SEED_CORPUS},
        {"summary", required_argument, NULL, OPT_SUMMARY},
        {"warm-spare", optional_argument, NULL, OPT_WARM_SPARE},
        {"no-warm-spare", no_argument, NULL, OPT_NO_WARM_SPARE},
        {"no-warm-up", no_argument, NULL, OPT_NO_WARM_UP},
        {"predict", no_argument, NULL, OPT_PREDICT},
        {"no-predict", no_argument, NULL, OPT_NO_PREDICT},
        {"max-spares", required_argument, NULL, OPT_MAX_SPARES},
        {"timeouts-are-bugs", no_argument, NULL, OPT_TIMEOUT_BUGS},
        {"oom-is-bug", no_argument, NULL, OPT_OOM_BUG},
        {"check-every", required_argument, NULL, OPT_CHECK_EVERY},
        {"rerun-ok", no_argument, NULL, OPT_RERUN_OK},
        {"no-run-ahead", no_argument, NULL, OPT_NO_RUN_AHEAD},
        {"case-timeout", required_argument, NULL, OPT_CASE_TIMEOUT},
        {"pkg", required_argument, NULL, OPT_PKG},
        {"help", no_argument, NULL, 'h'},
    };
    /* ours, then the shared ones (af_cli_append_options fills from the first empty entry) */
    struct option table[sizeof own / sizeof own[0] + AF_CLI_N_OPTIONS + 1];
    memset(table, 0, sizeof table);
    memcpy(table, own, sizeof own);
    int c;
    memset(o, 0, sizeof *o);
    af_cli_init(&o->co);
    o->artifacts = "crashes";
    if (af_cli_append_options(table, sizeof table / sizeof table[0], FUZZ_SHARED, err) != 0)
        return -1;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":hv", table, NULL)) != -1) {
        af_cli_rc k = af_cli_parse(&o->co, c, optarg, err);
        if (k == AF_CLI_BAD)
            return -1;
        if (k == AF_CLI_HANDLED)
            continue;
        if (c == 'h')
            return 1;
        if (c == ':' || c == '?')
            return bad_option(c, argv, err);
        if (take_own_option(o, c, optarg, err) != 0)
            return -1;
    }
    if (o->warm_spare < 0 && o->max_spares > 0)
        return af_error_set(err, AF_E_USAGE, "--no-warm-spare and --max-spares contradict");
    if (take_package(argc, argv, o, err) != 0 || af_cli_check(&o->co, err) != 0)
        return -1;
    return 0;
}

/* ---- libFuzzer's part, checked ---------------------------------------------------------- */

int af_fuzz_has_flag(char **args, int n, const char *name)
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

int af_fuzz_run_ahead_depth(char **lf, int n_lf, int *cross_over)
{
    const char *v;
    int depth = (v = flag_value(lf, n_lf, "mutate_depth")) ? atoi(v) : 5;
    *cross_over = !((v = flag_value(lf, n_lf, "cross_over")) && atoi(v) == 0);
    if (((v = flag_value(lf, n_lf, "reduce_depth")) && atoi(v) != 0) ||
        ((v = flag_value(lf, n_lf, "only_ascii")) && atoi(v) != 0))
        return 0;
    return depth > 1 ? depth : 0;
}

/* libFuzzer reads its numeric flags with atol: "-runs=abc" would run with 0. Check the ones
 * a user sets, "-name=value", as integers in range; 0 or -1 with a message naming the flag. */
static int check_lf_numbers(char **lf, int n_lf, af_error *err)
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
            if (af_parse_i64(lf[i] + 2 + len, &v) != 0 || v < nums[k].lo || v > nums[k].hi)
                return af_error_set(err, AF_E_USAGE,
                                    "libFuzzer flag -%s wants an integer in [%lld, %lld], got "
                                    "'%.200s'",
                                    nums[k].name, nums[k].lo, nums[k].hi, lf[i] + 2 + len);
        }
    }
    return 0;
}

/* --summary is written at exit: say at the start when it cannot be (a directory, a missing
 * or unwritable parent), not after the run. */
static int check_summary_path(const char *path, af_error *err)
{
    struct stat st;
    char dir[PATH_MAX];
    if (!path)
        return 0;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return af_error_set(err, AF_E_USAGE, "--summary %s: not a regular file", path);
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    /* the summary is written as a temp file in its dir, then renamed: try exactly that
     * (access() says yes to root for /proc, where no file can be made) */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.aotif-summary-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0)
        return af_error_set(err, AF_E_USAGE, "--summary %s: cannot write in %s: %s", path, dir,
                            strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

/* libFuzzer's corpus dirs (and input files) are its plain arguments: one that does not
 * exist is bad input said now, not libFuzzer's exit 1 after the package is unpacked. The
 * first may be missing when it is the output of -merge (libFuzzer makes none, though). */
static int check_lf_paths(char **lf, int n_lf, af_error *err)
{
    for (int i = 0; i < n_lf; i++) {
        struct stat st;
        if (lf[i][0] == '-')
            continue;
        if (stat(lf[i], &st) != 0)
            return af_error_set(err, AF_E_USAGE, "corpus dir %s: %s", lf[i], strerror(errno));
    }
    return 0;
}

int af_fuzz_check_args(const fuzz_opts *o, char **lf, int n_lf, af_error *err)
{
    if (check_summary_path(o->summary, err) != 0 || check_lf_numbers(lf, n_lf, err) != 0 ||
        check_lf_paths(lf, n_lf, err) != 0)
        return -1;
    /* an artifact dir that cannot be made is bad input said before the run; it is made
     * once the package and its contract are read, so an early refusal leaves nothing */
    if (af_dir_check_creatable(o->artifacts, err) != 0) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        return af_error_set(err, AF_E_USAGE, "--artifacts %s: %s", o->artifacts, why);
    }
    return 0;
}

/* ---- the argument vector handed to libFuzzer --------------------------------------------- */

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

/* libFuzzer's flags that name a path, and its corpus dirs, made absolute. */
static void lf_paths_absolute(char **lf, int n_lf)
{
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
}

/* libFuzzer's -jobs writes each job's output to fuzz-<N>.log in the current directory, and
 * has no flag for another place. So with -jobs, this process and the jobs it starts run in
 * the artifact dir: every path of the command line, ours and libFuzzer's, is made absolute
 * first, argv[0] included (the jobs are this program run again through the shell). */
int af_fuzz_jobs_into_artifacts(char **argv0, fuzz_opts *o, char **lf, int n_lf, af_error *err)
{
    const char *jobs = flag_value(lf, n_lf, "jobs");
    if (!jobs || atoll(jobs) <= 0)
        return 0;
    static char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0)
        return af_error_sys(err, "-jobs: cannot find this program (/proc/self/exe)");
    self[k] = '\0';
    *argv0 = self;
    o->pkg = abs_path(o->pkg);
    o->co.spec_file = abs_path(o->co.spec_file);
    o->co.exported = abs_path(o->co.exported);
    o->co.torch_lib = abs_path(o->co.torch_lib);
    o->summary = abs_path(o->summary);
    o->artifacts = abs_path(o->artifacts);
    lf_paths_absolute(lf, n_lf);
    if (chdir(o->artifacts) != 0)
        return af_error_sys(err, "-jobs: cannot enter --artifacts %s", o->artifacts);
    fprintf(stderr, "aoti-fuzz: -jobs=%s: the jobs' logs (fuzz-<N>.log) go to %s\n", jobs,
            o->artifacts);
    return 0;
}

/* The shared flags as "--name=value", in out from n on; the new count. */
static int lf_shared_flags(const af_cli_opts *co, char **out, int n)
{
    if (co->model)
        out[n++] = xasprintf("--model=%s", co->model);
    if (co->spec_file)
        out[n++] = xasprintf("--spec=%s", co->spec_file);
    if (co->exported)
        out[n++] = xasprintf("--exported=%s", co->exported);
    if (co->beyond_contract)
        out[n++] = "--beyond-contract";
    if (co->eager == 0)
        out[n++] = "--no-eager";
    if (co->n_tol == 2) {
        out[n++] = xasprintf("--rtol=%.17g", co->rtol);
        out[n++] = xasprintf("--atol=%.17g", co->atol);
    }
    if (co->torch_lib)
        out[n++] = xasprintf("--torch-lib=%s", co->torch_lib);
    if (co->device)
        out[n++] = xasprintf("--device=%s", co->device);
    if (co->timeout_s > 0)
        out[n++] = xasprintf("--case-timeout=%.17g", co->timeout_s);
    if (co->max_input_bytes > 0)
        out[n++] = xasprintf("--max-input-bytes=%" PRId64, co->max_input_bytes);
    if (co->mem_limit_bytes)
        out[n++] = co->mem_limit_bytes < 0 ? "--mem-limit=none"
                                           : xasprintf("--mem-limit=%" PRId64, co->mem_limit_bytes);
    if (co->max_entry_bytes > 0)
        out[n++] = xasprintf("--max-entry-bytes=%" PRId64, co->max_entry_bytes);
    if (co->no_zygote)
        out[n++] = "--no-zygote";
    if (co->check_inputs)
        out[n++] = "--check-inputs";
    if (co->verbose)
        out[n++] = "--verbose";
    return n;
}

/* Our own flags as "--name=value", in out from n on; the new count. */
static int lf_own_flags(const fuzz_opts *o, char **out, int n)
{
    out[n++] = xasprintf("--pkg=%s", o->pkg);
    out[n++] = xasprintf("--artifacts=%s", o->artifacts);
    if (o->check_every)
        out[n++] = xasprintf("--check-every=%" PRId64, o->check_every);
    if (o->summary)
        out[n++] = xasprintf("--summary=%s", o->summary);
    if (o->warm_spare)
        out[n++] = o->warm_spare == 2  ? "--warm-spare=first-death"
                   : o->warm_spare > 0 ? "--warm-spare"
                                       : "--no-warm-spare";
    if (o->no_warm_up)
        out[n++] = "--no-warm-up";
    if (o->predict)
        out[n++] = o->predict > 0 ? "--predict" : "--no-predict";
    if (o->max_spares > 0)
        out[n++] = xasprintf("--max-spares=%" PRId64, o->max_spares);
    if (o->timeouts_are_bugs)
        out[n++] = "--timeouts-are-bugs";
    if (o->oom_is_bug)
        out[n++] = "--oom-is-bug";
    if (o->rerun_ok)
        out[n++] = "--rerun-ok";
    if (o->no_run_ahead)
        out[n++] = "--no-run-ahead";
    return n;
}

int af_fuzz_lf_argv(char *argv0, const fuzz_opts *o, char **lf, int n_lf, size_t enc_size,
                    char **out, af_error *err)
{
    int n = 0;
    out[n++] = argv0;
    n = lf_own_flags(o, out, n);
    n = lf_shared_flags(&o->co, out, n);
    out[n++] = "--";
    if (n + n_lf + 4 > AF_FUZZ_MAX_ARGS)
        return af_error_set(err, AF_E_USAGE, "too many arguments");
    for (int i = 0; i < n_lf; i++)
        out[n++] = lf[i];
    /* libFuzzer starts with tiny inputs and grows them slowly (-len_control); a case has
     * one natural size, so offer it from the start. */
    if (!af_fuzz_has_flag(lf, n_lf, "max_len"))
        out[n++] = xasprintf("-max_len=%zu", enc_size);
    if (!af_fuzz_has_flag(lf, n_lf, "len_control"))
        out[n++] = "-len_control=0";
    /* libFuzzer's own files (crash-<sha1>, oom-<sha1>, for a failure of this process rather
     * than of a case) go with ours, not into the current directory */
    if (!af_fuzz_has_flag(lf, n_lf, "artifact_prefix"))
        out[n++] = xasprintf("-artifact_prefix=%s/", o->artifacts);
    /* libFuzzer's RSS and malloc limits measure this process, not the model's: the models run
     * in workers, under --mem-limit. Its default 2 GiB would end a long run on this process's
     * own growth (corpus, memo) with a report that reads like a finding. */
    if (!af_fuzz_has_flag(lf, n_lf, "rss_limit_mb"))
        out[n++] = "-rss_limit_mb=0";
    out[n] = NULL;
    return n;
}
