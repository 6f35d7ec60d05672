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
 * main is the steps from argv to LLVMFuzzerRunDriver: parse and check the command line
 * (cli.c), open the package and its spec, (--seed-corpus: write the seeds and exit), say
 * what will be explored, make the artifact dir, seed an empty corpus dir, build libFuzzer's
 * argument vector, register the feature counters and hand over. What runs per input, and
 * at the end, is in callbacks.c; what is said about the run, in summary.c. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aotif/fileio.h"
#include "encode.h"
#include "fuzz.h"
#include "mutate.h"

/* libFuzzer's entry point (libclang_rt.fuzzer_no_main). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t));

/* libFuzzer's hook for a module's 8-bit coverage counters. We register one region of our
 * own, sized to the spec's feature layout (featmap.h): libFuzzer clears it before each input
 * and reads every non-zero slot after, so its size is paid on every exec. */
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);

/* The exit status of a failed step from its error: 2 for bad input, else 1. */
static int say_error(const af_error *err)
{
    fprintf(stderr, "aoti-fuzz: %s\n", err->message);
    return af_error_exit_code(err) == 2 ? 2 : 1;
}

/* Open the package and derive its spec (and contract). 0, or the exit status. */
static int open_package(fuzz_state *g)
{
    af_error err;
    af_error_clear(&err);
    af_package_opts popts = {0};
    af_cli_package_opts(&g->o.co, &popts);
    g->pkg = af_package_open(g->o.pkg, &popts, &err);
    if (!g->pkg)
        return say_error(&err);
    if (af_package_spec(g->pkg, g->o.co.spec_file, g->o.co.exported, &g->spec, &err) < 0)
        return say_error(&err);
    if (g->o.co.beyond_contract)
        af_spec_widen_beyond_contract(&g->spec);
    return 0;
}

/* --seed-corpus DIR: the seeds for the spec, and nothing else. The exit status. */
static int write_seed_corpus(const fuzz_state *g)
{
    af_error err;
    af_error_clear(&err);
    int n = af_seed_corpus_write(&g->spec, g->o.seed_corpus, &err);
    if (n < 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return af_error_exit_code(&err);
    }
    fprintf(stderr, "aoti-fuzz: wrote %d seed input%s to %s\n", n, n == 1 ? "" : "s",
            g->o.seed_corpus);
    return 0;
}

/* What will be fuzzed: the package, its spec and which part of the shape space. */
static void print_start(const fuzz_state *g)
{
    const af_spec *spec = &g->spec;
    fprintf(stderr,
            "aoti-fuzz: %s: model %s, device %s, spec from %s, %d symbol%s, %zu-byte "
            "inputs\n",
            g->pkg->path, g->pkg->model, g->o.co.device ? g->o.co.device : g->pkg->device,
            af_spec_source_name(spec->source), spec->n_syms, spec->n_syms == 1 ? "" : "s",
            af_enc_size(spec));
    af_spec_print(spec, stderr);
    fprintf(stderr, "aoti-fuzz: exploring %s\n",
            spec->beyond_contract ? "beyond the declared contract (--beyond-contract): sizes "
                                    "from 0, index values past their range"
            : af_spec_contract_known(spec) ? "inside the declared contract"
                                           : "the assumed ranges (declared ranges unknown)");
}

/* An empty first corpus dir gets the seed cases, so the boundary cases (all-min, each
 * symbol at 0 and 1, all-max) run first whatever the mutator draws. Not for the modes
 * where the first dir is an output (-merge) or corpus dirs are not corpora. */
static int auto_seed(const af_spec *spec, char **lf, int n_lf)
{
    static const char *const skip[] = {"merge",         "set_cover_merge", "minimize_crash",
                                       "cleanse_crash", "analyze_dict",    "minimize_corpus"};
    const char *dir = NULL;
    for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++)
        if (af_fuzz_has_flag(lf, n_lf, skip[k]))
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
    int n = af_seed_corpus_write(spec, dir, &err);
    if (n < 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return -1;
    }
    fprintf(stderr, "aoti-fuzz: %s was empty: wrote %d seed input%s\n", dir, n, n == 1 ? "" : "s");
    return 0;
}

/* The artifact dir now (libFuzzer checks its -artifact_prefix dir at start), and the first
 * corpus dir seeded when empty. 0, or the exit status. */
static int prepare_dirs(fuzz_state *g, char **lf, int n_lf)
{
    af_error err;
    af_error_clear(&err);
    struct stat ast;
    g->made_artifacts = stat(g->o.artifacts, &ast) != 0;
    if (af_mkdir_p(g->o.artifacts, &err) != 0) {
        fprintf(stderr, "aoti-fuzz: --artifacts %s: %s\n", g->o.artifacts, err.message);
        return af_error_exit_code(&err) == 2 ? 2 : 1;
    }
    return auto_seed(&g->spec, lf, n_lf) < 0 ? 1 : 0;
}

/* The feature counters, sized to the spec's layout and registered with libFuzzer. */
static int register_counters(fuzz_state *g)
{
    size_t nfeat = af_feat_layout_for(&g->spec, &g->layout);
    g->counters = aligned_alloc(64, (nfeat + 63) / 64 * 64);
    g->seen = calloc(nfeat, 1);
    if (!g->counters || !g->seen) {
        fprintf(stderr, "aoti-fuzz: out of memory\n");
        return 1;
    }
    memset(g->counters, 0, nfeat);
    __sanitizer_cov_8bit_counters_init(g->counters, g->counters + nfeat);
    return 0;
}

/* Everything from the artifact dir to libFuzzer's argument vector (*n_out entries in
 * lf_argv) and the feature counters. 0, or the exit status. */
static int prepare_run(fuzz_state *g, char *argv0, char **lf, int n_lf, char **lf_argv, int *n_out)
{
    af_error err;
    af_error_clear(&err);
    int rc = prepare_dirs(g, lf, n_lf);
    if (rc != 0)
        return rc;
    size_t enc_size = af_enc_size(&g->spec);
    if (af_fuzz_jobs_into_artifacts(&argv0, &g->o, lf, n_lf, &err) != 0 ||
        (*n_out = af_fuzz_lf_argv(argv0, &g->o, lf, n_lf, enc_size, lf_argv, &err)) < 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return 2; /* a command line that cannot be handed on */
    }
    return register_counters(g);
}

int main(int argc, char **argv)
{
    static char *lf_argv[AF_FUZZ_MAX_ARGS + 1];
    fuzz_state *g = af_fuzz_state();
    af_error err;
    af_error_clear(&err);
    int dd = argc; /* where "--" is: our options before it, libFuzzer's after */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            dd = i;
            break;
        }
    char **lf = argv + dd + (dd < argc);
    int n_lf = argc - dd - (dd < argc);
    int prc = af_fuzz_parse_args(dd, argv, &g->o, &err);
    if (prc == 1) {
        af_fuzz_usage(stdout);
        return 0;
    }
    if (prc < 0 || af_fuzz_check_args(&g->o, lf, n_lf, &err) != 0) {
        fprintf(stderr, "aoti-fuzz: %s\n", err.message);
        return 2;
    }
    int n = 0;
    int rc = open_package(g);
    if (rc == 0 && g->o.seed_corpus) {
        rc = write_seed_corpus(g);
    } else if (rc == 0) {
        print_start(g);
        rc = prepare_run(g, argv[0], lf, n_lf, lf_argv, &n);
    }
    if (rc != 0 || g->o.seed_corpus) {
        af_package_close(g->pkg);
        return rc;
    }
    af_fuzz_run_ahead_setup(lf, n_lf);
    atexit(af_fuzz_finish);
    char **lfv = lf_argv;
    return LLVMFuzzerRunDriver(&n, &lfv, af_fuzz_one);
}
