/* aotif/cli.h — the command-line flags the tools share, parsed in one place.
 *
 * aoti-run, aoti-fuzz and aoti-minimize all open a package, run cases in workers and may
 * compare with the eager reference, so they take the same flags for that: --model --spec
 * --exported --beyond-contract --eager/--no-eager --rtol --atol --device --torch-lib
 * --timeout --max-input-bytes --mem-limit --max-entry-bytes --check-inputs --no-zygote
 * -v/--verbose. This layer owns them: one struct of settings with one set of defaults, one
 * getopt_long table, one parser with one wording for a bad value ("--timeout wants seconds
 * > 0, got 'abc'"), one help text. A tool picks which of them it offers (a mask of
 * af_cli_flag) and adds its own flags on top; parsing stays getopt_long's.
 *
 * How a tool uses it:
 *
 *   enum { O_OUT = 256, O_JSON };            // its own codes: below AF_CLI_OPT_BASE, not 'v'
 *   unsigned offered = AF_CLI_ALL & ~AF_CLI_EAGER;
 *   struct option table[2 + AF_CLI_N_OPTIONS + 2] = {   // the rest zero: the terminator
 *       {"out", required_argument, 0, O_OUT}, {"json", no_argument, 0, O_JSON},
 *       {"help", no_argument, 0, 'h'}};
 *   af_cli_opts co;
 *   af_cli_init(&co);
 *   af_cli_append_options(table, sizeof table / sizeof table[0], offered, &err);
 *   while ((c = getopt_long(argc, argv, "vh", table, NULL)) != -1) {  // "v": -v, if offered
 *       int k = af_cli_parse(&co, c, optarg, &err);
 *       if (k == AF_CLI_BAD)      -> print "tool: <err.message>", exit 2
 *       if (k == AF_CLI_HANDLED)  continue;
 *       switch (c) { ... the tool's own flags (af_cli_bad_value for their bad values) ... }
 *   }
 *   af_cli_check(&co, &err)                 -> the cross-flag rules; -1: exit 2
 *   af_cli_worker_opts(&co, &wopts); af_cli_package_opts(&co, &popts);
 *   af_cli_ref_opts(&co, &ropts);           // then whatever the tool sets over them
 *   usage: the tool's own lines, then af_cli_help(f, offered, column).
 *
 * Pointers in af_cli_opts point into argv (optarg): they live as long as argv does. Nothing
 * here allocates, prints (but af_cli_help, to the FILE it is given) or exits. */
#ifndef AOTIF_CLI_H
#define AOTIF_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/reference.h"
#include "aotif/worker.h"

/* The shared flags, one bit each, for the mask of those a tool offers. */
typedef enum af_cli_flag {
    AF_CLI_MODEL = 1u << 0,            /* --model NAME */
    AF_CLI_SPEC = 1u << 1,             /* --spec FILE */
    AF_CLI_EXPORTED = 1u << 2,         /* --exported FILE */
    AF_CLI_BEYOND_CONTRACT = 1u << 3,  /* --beyond-contract */
    AF_CLI_EAGER = 1u << 4,            /* --eager (for a tool where the reference is off) */
    AF_CLI_NO_EAGER = 1u << 5,         /* --no-eager (for a tool where it is on) */
    AF_CLI_TOL = 1u << 6,              /* --rtol X and --atol Y */
    AF_CLI_DEVICE = 1u << 7,           /* --device DEV */
    AF_CLI_TORCH_LIB = 1u << 8,        /* --torch-lib DIR */
    AF_CLI_TIMEOUT = 1u << 9,          /* --timeout SECONDS */
    AF_CLI_MAX_INPUT_BYTES = 1u << 10, /* --max-input-bytes N */
    AF_CLI_MEM_LIMIT = 1u << 11,       /* --mem-limit BYTES|none */
    AF_CLI_MAX_ENTRY_BYTES = 1u << 12, /* --max-entry-bytes N */
    AF_CLI_CHECK_INPUTS = 1u << 13,    /* --check-inputs */
    AF_CLI_NO_ZYGOTE = 1u << 14,       /* --no-zygote */
    AF_CLI_VERBOSE = 1u << 15,         /* -v, --verbose (the tool puts "v" in its optstring) */
    AF_CLI_ALL = (1u << 16) - 1,
} af_cli_flag;

/* getopt_long codes of the shared flags are AF_CLI_OPT_BASE and up (and 'v' for --verbose):
 * a tool's own codes stay below AF_CLI_OPT_BASE. */
#define AF_CLI_OPT_BASE 0x1000
/* How many struct option entries af_cli_append_options may add (every flag offered). */
#define AF_CLI_N_OPTIONS 17

/* The settings of the shared flags. After af_cli_init every field holds its default; 0 for
 * a number means "the engine's default" (named in the help text), so the engines keep the
 * one definition of each. */
typedef struct af_cli_opts {
    const char *model;       /* --model; NULL: "model" */
    const char *spec_file;   /* --spec; NULL: the package's own spec */
    const char *exported;    /* --exported; NULL: the archive's own exported program */
    int beyond_contract;     /* --beyond-contract */
    int eager;               /* --eager 1, --no-eager 0; -1: neither given (the tool's default) */
    int n_tol;               /* how many of --rtol, --atol were given (af_cli_check wants 0 or 2) */
    double rtol, atol;       /* with n_tol == 2 */
    const char *device;      /* --device; NULL: the package's device */
    const char *torch_lib;   /* --torch-lib; NULL: $AOTI_FUZZ_TORCH_LIB, else python3's torch */
    double timeout_s;        /* --timeout; 0: the pool's 30 s */
    int64_t max_input_bytes; /* --max-input-bytes; 0: the pool's 1 GiB */
    int64_t mem_limit_bytes; /* --mem-limit; 0: the pool's 8 GiB, -1: none ('none') */
    int64_t max_entry_bytes; /* --max-entry-bytes; 0: AF_DEFAULT_MAX_ENTRY_BYTES (4 GiB) */
    int check_inputs;        /* --check-inputs */
    int no_zygote;           /* --no-zygote */
    int verbose;             /* -v, --verbose */
} af_cli_opts;

/* What af_cli_parse made of one option. */
typedef enum af_cli_rc {
    AF_CLI_BAD = -1,     /* a shared flag with a bad value: err says which and why */
    AF_CLI_HANDLED = 0,  /* a shared flag, stored in the af_cli_opts */
    AF_CLI_NOT_MINE = 1, /* not a shared flag: the tool's own (or getopt's '?' / ':') */
} af_cli_rc;

/* Every field to its default. */
void af_cli_init(af_cli_opts *o);

/* Append the getopt_long entries of the offered flags to a tool's table. `table` has `cap`
 * entries: the tool's own first, ended by an all-zero entry (a zero-filled tail does it);
 * the shared ones go there and the table stays ended by a zero entry. The entries' names
 * are static strings. 0, or -1 (AF_E_INTERNAL) when cap is too small: size tables as
 * own + AF_CLI_N_OPTIONS + 1. */
int af_cli_append_options(struct option *table, size_t cap, unsigned offered, af_error *err);

/* Take one option getopt_long returned: `opt` its code, `arg` its optarg (NULL for a flag
 * without a value). A shared flag is stored in *o (AF_CLI_HANDLED) or refused with a
 * one-line message naming the flag, what it wants and the value given (AF_CLI_BAD,
 * AF_E_USAGE: the tool exits 2). Anything else is AF_CLI_NOT_MINE and leaves *o alone.
 * `arg` is kept (not copied) for the string flags. */
af_cli_rc af_cli_parse(af_cli_opts *o, int opt, const char *arg, af_error *err);

/* After parsing: the rules between shared flags (--rtol and --atol together; --spec and
 * --exported not both). 0, or -1 with AF_E_USAGE and the one-line message. */
int af_cli_check(const af_cli_opts *o, af_error *err);

/* The one wording for a bad flag value, for the tools' own flags too: sets err to
 * "FLAG wants WANT, got 'VALUE'" (AF_E_USAGE) and returns AF_CLI_BAD. */
int af_cli_bad_value(af_error *err, const char *flag, const char *want, const char *value);

/* Copy the shared settings into the engines' options; fields they do not cover are left as
 * they are. af_cli_worker_opts: torch_lib, device, timeout_s, max_input_bytes,
 * mem_limit_bytes, check_inputs, no_zygote, verbose. af_cli_package_opts: model,
 * max_entry_bytes. af_cli_ref_opts: device, have_tol / rtol / atol (n_tol == 2). */
void af_cli_worker_opts(const af_cli_opts *o, af_worker_opts *w);
void af_cli_package_opts(const af_cli_opts *o, af_package_opts *p);
void af_cli_ref_opts(const af_cli_opts *o, af_ref_opts *r);

/* The help lines of the offered shared flags, descriptions starting at column `col` (the
 * tool's own lines use the same, so the help reads as one table), wrapped into lines of at
 * most 80 characters. A tool that wants its own wording for one flag leaves it out of the
 * mask here and writes its line itself. */
void af_cli_help(FILE *f, unsigned offered, int col);

#endif
