/* aoti-minimize — shrink the case of a crash file to a locally minimal one that fails the
 * same way, and write what a bug report needs.
 *
 *   aoti-minimize crash.bin [--out DIR] [--budget SECONDS] [--runs N] [--json]
 *                 [--no-repro-check] [--no-crash-map] [the shared flags of aotif/cli.h]
 *
 * The crash file is all it needs: it names the package (re-opened, with a warning when its
 * SHA-256 changed), the model, the device and the case. The engine (ddmin.h) asks an oracle
 * about cases; the oracle here (oracle.c) runs each case in a worker (worker.h) and compares
 * with the crash: SAME when the class and signature are the crash's, PASS when it ran fine or
 * was not a bug (refused, timeout, OOM: counted), OTHER for any other failure (a different
 * bug, a side finding, never taken). Workers crashing is the normal case here.
 *
 * After the minimal case the engine explains it (explain.h: which symbols are free, which
 * pinned), and then a crash map (crashmap.h) draws the outcomes over the two symbols that
 * matter most. The three share one memo (memo.h): no case is run twice.
 *
 * Outputs, each written atomically, in DIR (default: <crash stem>.min next to the crash):
 * minimal.bin + minimal.json (a crash file of the minimal case and its sidecar), repro.py,
 * repro.sh and report.md (repro.h), crashmap.svg (unless --no-crash-map). After writing,
 * repro.sh (and repro.py when a Python with torch is there) are run again and judged; the
 * answers go into the report and the --json summary.
 *
 * This file reads the command line (its own flags, and the ones the tools share through
 * aotif/cli.h: where the crash file records a setting, a flag given overrides it) and runs
 * the steps (steps.h: steps.c, outputs.c) one after the other, sharing one context;
 * summary.c prints the result.
 *
 * Exit status: 0 minimized (also when --budget cut the search short: the best case so far
 * is written), 1 the crash does not reproduce or the harness failed, 2 bad flags or a bad
 * crash file, 130 interrupted (SIGINT/SIGTERM; the best case so far is still written). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotif/args.h"
#include "aotif/cli.h"
#include "steps.h"

/* The engine's stop flag: the first SIGINT/SIGTERM sets it (the search winds down and what it
 * found is written); a second removes the package's temp dir and ends the process. Both are
 * handled by interrupt.h's sigwait thread, not in a signal handler. */
static volatile int g_stop;

/* The shared flags (aotif/cli.h) aoti-minimize takes: all but --eager (the reference runs
 * unless --no-eager). Those whose meaning here needs its own words get help lines of their
 * own in usage; the rest get cli.h's (HELP_SHARED). */
#define OFFERED (AF_CLI_ALL & ~AF_CLI_EAGER)
#define HELP_SHARED                                                                                \
    (AF_CLI_TORCH_LIB | AF_CLI_TIMEOUT | AF_CLI_MAX_INPUT_BYTES | AF_CLI_MEM_LIMIT |               \
     AF_CLI_MAX_ENTRY_BYTES | AF_CLI_NO_ZYGOTE | AF_CLI_VERBOSE)
#define HELP_COL 21 /* where the descriptions start */

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
          "  --no-repro-check   do not run repro.sh / repro.py after writing them\n"
          "  --no-crash-map     do not draw crashmap.svg (its cases are extra runs, up to\n"
          "                     16 x 16, outside the bound on questions)\n"
          "The crash file names the model, the device and the contract; a flag overrides it:\n"
          "  --model NAME       model inside the package (default: the crash file's)\n"
          "  --device DEV       cpu, cuda, cuda:N (default: the device the crash ran on)\n"
          "  --spec FILE        shape spec file (when the fuzzer was given one)\n"
          "  --exported FILE    the model's torch.export.save file (default: the one the\n"
          "                     crash file names, else the archive's own exported program)\n"
          "  --no-eager         no eager reference (no verdict; a MISMATCH cannot be minimized)\n"
          "  --rtol X --atol Y  comparison tolerances for a MISMATCH (default: the ones it\n"
          "                     was found with, else torch.testing.assert_close's)\n"
          "  --beyond-contract  search below the declared minimums too (default: only when\n"
          "                     the crash itself lies outside the declared contract)\n"
          "The workers:\n",
          f);
    af_cli_help(f, HELP_SHARED, HELP_COL);
    fputs("  --check-inputs     search with AOTI_RUNTIME_CHECK_INPUTS=1 (the wrapper checks\n"
          "                     its inputs); repro.sh and repro.py set it too\n"
          "Exit status: 0 minimized, 1 does not reproduce (or the harness failed), 2 bad input,\n"
          "130 interrupted (the best case so far is written).\n"
          "A .pt2 holds native code that this tool loads and runs: only use trusted packages.\n",
          f);
}

/* getopt_long codes of aoti-minimize's own flags (below AF_CLI_OPT_BASE). */
enum { O_OUT = 256, O_BUDGET, O_RUNS, O_JSON, O_NOCHECK, O_KEEPFILL, O_NO_MAP };

/* Its own flags; af_cli_append_options adds the shared ones after them. */
static const struct option k_own_options[] = {
    {"out", required_argument, 0, O_OUT},          {"budget", required_argument, 0, O_BUDGET},
    {"runs", required_argument, 0, O_RUNS},        {"json", no_argument, 0, O_JSON},
    {"no-repro-check", no_argument, 0, O_NOCHECK}, {"keep-fill", no_argument, 0, O_KEEPFILL},
    {"no-crash-map", no_argument, 0, O_NO_MAP},    {"help", no_argument, 0, 'h'},
};
#define N_OWN (sizeof k_own_options / sizeof k_own_options[0])

/* A bad value of one of our own flags, in cli.h's one wording; exit status 2. */
static int bad_value(const char *flag, const char *want, const char *arg)
{
    af_error err = {0};
    af_cli_bad_value(&err, flag, want, arg);
    return af_mz_fail(2, "%s", err.message);
}

/* One of aoti-minimize's own flags. 0 to go on, -1 for --help, 2 for a bad or unknown one
 * (said why). */
static int parse_own(af_mz_flags *f, int opt, const char *arg, const char *given)
{
    switch (opt) {
    case O_OUT:
        f->out = arg;
        break;
    case O_BUDGET:
        if (af_parse_seconds(arg, &f->budget_s))
            return bad_value("--budget", "seconds > 0", arg);
        break;
    case O_RUNS:
        if (af_parse_i64(arg, &f->runs) || f->runs < 1 || f->runs > 101)
            return bad_value("--runs", "an integer in 1..101", arg);
        break;
    case O_JSON:
        f->json = 1;
        break;
    case O_NOCHECK:
        f->no_check = 1;
        break;
    case O_NO_MAP:
        f->no_map = 1;
        break;
    case O_KEEPFILL:
        f->keep_fill = 1;
        break;
    case 'h':
        return -1;
    default:
        return af_mz_fail(2, "unknown or incomplete option '%s' (see --help)", given);
    }
    return 0;
}

/* The command line into *f. -1 to go on, else the exit status (0 after --help). */
static int parse_options(int argc, char **argv, af_mz_flags *f)
{
    struct option table[N_OWN + AF_CLI_N_OPTIONS + 1] = {0};
    af_error err = {0};
    int opt;
    memcpy(table, k_own_options, sizeof k_own_options);
    if (af_cli_append_options(table, sizeof table / sizeof table[0], OFFERED, &err) != 0)
        return af_mz_fail(1, "%s", err.message);
    af_cli_init(&f->co);
    f->runs = 3;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "vh", table, NULL)) != -1) {
        af_cli_rc k = af_cli_parse(&f->co, opt, optarg, &err);
        if (k == AF_CLI_BAD)
            return af_mz_fail(2, "%s", err.message);
        int rc = k == AF_CLI_HANDLED ? 0 : parse_own(f, opt, optarg, argv[optind - 1]);
        if (rc < 0) {
            usage(stdout);
            return 0;
        }
        if (rc)
            return rc;
    }
    if (optind + 1 != argc)
        return af_mz_fail(2, optind >= argc ? "missing the crash file (aoti-minimize CRASH.bin)"
                                            : "one crash file at a time");
    if (af_cli_check(&f->co, &err) != 0)
        return af_mz_fail(2, "%s", err.message);
    f->crash_path = argv[optind];
    return -1;
}

/* The steps after the crash file is read, in order; each says why when it ends the run. */
static int (*const k_steps[])(af_mz *m) = {
    af_mz_open,           /* the package, its spec, the start case, workers and reference */
    af_mz_search,         /* reproduce, minimize, explain: one engine call */
    af_mz_minimal_result, /* the minimal case's result, triage, eager's verdict */
    af_mz_crash_map,      /* outcomes around the minimal case */
    af_mz_stop_workers,   /* keeping their versions and stats for the report */
    af_mz_write_minimal,  /* minimal.bin, minimal.json, crashmap.svg */
    af_mz_side_findings,  /* other failures met on the way */
    af_mz_write_repro,    /* repro.py, repro.sh */
    af_mz_recheck,        /* run them again, and the case with the input checks on */
    af_mz_write_report,   /* report.md */
};

int main(int argc, char **argv)
{
    static af_mz m; /* large: crash files, specs, the crash map */
    m.stop = &g_stop;
    int rc = parse_options(argc, argv, &m.f);
    if (rc >= 0)
        return rc;
    if ((rc = af_mz_read_crash(&m)) != 0)
        return rc;
    for (size_t i = 0; i < sizeof k_steps / sizeof k_steps[0] && !rc; i++)
        rc = k_steps[i](&m);
    if (!rc) {
        af_mz_print_summary(&m);
        rc = g_stop ? 130 : 0;
    }
    af_mz_close(&m);
    return rc;
}
