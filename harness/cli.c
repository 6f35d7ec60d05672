/* cli.c — the flags the three tools share: one table of them (name, code, getopt_long
 * argument kind, help text), parsed with one wording for a bad value; see aotif/cli.h.
 *
 * The table is the one place a shared flag is described: af_cli_append_options hands its
 * entries to getopt_long, af_cli_help prints its text, and af_cli_parse knows each code. The
 * numbers go through args.h's strict parsers, so "12Q", "nan" or "1e999" are refused the
 * same way whichever tool is given them. */
#include "aotif/cli.h"

#include <string.h>

#include "aotif/args.h"

/* The codes of the shared flags (getopt_long's `val`), --verbose being 'v'. */
enum {
    C_MODEL = AF_CLI_OPT_BASE,
    C_SPEC,
    C_EXPORTED,
    C_BEYOND,
    C_EAGER,
    C_NO_EAGER,
    C_RTOL,
    C_ATOL,
    C_DEVICE,
    C_TORCH_LIB,
    C_TIMEOUT,
    C_MAX_INPUT,
    C_MEM_LIMIT,
    C_MAX_ENTRY,
    C_CHECK_INPUTS,
    C_NO_ZYGOTE,
};

typedef struct shared_flag {
    const char *name; /* long name, without "--" */
    int has_arg;      /* getopt_long's no_argument / required_argument */
    int code;
    unsigned bit;     /* af_cli_flag */
    const char *head; /* the help line's left part; NULL: shown with the flag before it */
    const char *help; /* its description, wrapped by af_cli_help */
} shared_flag;

/* In help order. --rtol and --atol share one help line (the first carries it). */
static const shared_flag g_flags[] = {
    {"model", required_argument, C_MODEL, AF_CLI_MODEL, "--model NAME",
     "model inside the package (default: model)"},
    {"spec", required_argument, C_SPEC, AF_CLI_SPEC, "--spec FILE",
     "shape spec file (overrides the package's)"},
    {"exported", required_argument, C_EXPORTED, AF_CLI_EXPORTED, "--exported FILE",
     "the model's torch.export.save file, the contract: declared ranges, input names, index "
     "value ranges (default: the archive's own exported program)"},
    {"eager", no_argument, C_EAGER, AF_CLI_EAGER, "--eager",
     "also run the exported program eagerly on the case (the reference): eager's verdict on a "
     "failure (AOTI_ONLY or EAGER_FAILS_TOO), output comparison on success (MISMATCH)"},
    {"no-eager", no_argument, C_NO_EAGER, AF_CLI_NO_EAGER, "--no-eager",
     "no eager reference: no eager verdicts, no output comparison"},
    {"rtol", required_argument, C_RTOL, AF_CLI_TOL, "--rtol X --atol Y",
     "comparison tolerances, given together (default: torch.testing.assert_close's)"},
    {"atol", required_argument, C_ATOL, AF_CLI_TOL, NULL, NULL},
    {"beyond-contract", no_argument, C_BEYOND, AF_CLI_BEYOND_CONTRACT, "--beyond-contract",
     "go past the declared contract: sizes below the declared minimums, index values past "
     "their valid range (the wide fill); what fails there is labelled \"outside the declared "
     "contract\""},
    {"device", required_argument, C_DEVICE, AF_CLI_DEVICE, "--device DEV",
     "cpu, cuda, cuda:N (default: the package's device)"},
    {"torch-lib", required_argument, C_TORCH_LIB, AF_CLI_TORCH_LIB, "--torch-lib DIR",
     "directory holding libtorch.so"},
    {"timeout", required_argument, C_TIMEOUT, AF_CLI_TIMEOUT, "--timeout SECONDS",
     "per case (default 30)"},
    {"max-input-bytes", required_argument, C_MAX_INPUT, AF_CLI_MAX_INPUT_BYTES,
     "--max-input-bytes N", "refuse cases with larger inputs; K/M/G suffixes (default 1G)"},
    {"mem-limit", required_argument, C_MEM_LIMIT, AF_CLI_MEM_LIMIT, "--mem-limit BYTES",
     "CPU worker memory headroom (default 8G; 'none': no limit); over it is OOM"},
    {"max-entry-bytes", required_argument, C_MAX_ENTRY, AF_CLI_MAX_ENTRY_BYTES,
     "--max-entry-bytes N", "refuse packages with a larger entry (default 4G)"},
    {"check-inputs", no_argument, C_CHECK_INPUTS, AF_CLI_CHECK_INPUTS, "--check-inputs",
     "set AOTI_RUNTIME_CHECK_INPUTS=1 in the workers"},
    {"no-zygote", no_argument, C_NO_ZYGOTE, AF_CLI_NO_ZYGOTE, "--no-zygote",
     "every worker loads libtorch itself"},
    {"verbose", no_argument, 'v', AF_CLI_VERBOSE, "-v, --verbose", "show the workers' stderr"},
};
#define N_FLAGS (sizeof g_flags / sizeof g_flags[0])
_Static_assert(N_FLAGS == AF_CLI_N_OPTIONS, "AF_CLI_N_OPTIONS counts the shared flags");

/* What each numeric flag wants, in the message of a bad value. */
#define WANT_BYTES "a byte count (K/M/G suffixes)"
#define WANT_NONNEG "a finite number >= 0"

void af_cli_init(af_cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->eager = -1;
}

int af_cli_append_options(struct option *table, size_t cap, unsigned offered, af_error *err)
{
    size_t n = 0, need = 1; /* the terminator */
    while (n < cap && table[n].name)
        n++;
    for (size_t i = 0; i < N_FLAGS; i++)
        need += (g_flags[i].bit & offered) != 0;
    if (n + need > cap)
        return af_error_set(err, AF_E_INTERNAL, "option table too small (%zu entries)", cap);
    for (size_t i = 0; i < N_FLAGS; i++)
        if (g_flags[i].bit & offered)
            table[n++] =
                (struct option){g_flags[i].name, g_flags[i].has_arg, NULL, g_flags[i].code};
    table[n] = (struct option){0};
    return 0;
}

int af_cli_bad_value(af_error *err, const char *flag, const char *want, const char *value)
{
    af_error_set(err, AF_E_USAGE, "%s wants %s, got '%.300s'", flag, want, value ? value : "");
    return AF_CLI_BAD;
}

/* The flags that take a number. */
static af_cli_rc parse_number(af_cli_opts *o, int opt, const char *arg, af_error *err)
{
    switch (opt) {
    case C_RTOL:
    case C_ATOL:
        if (af_parse_nonneg(arg, opt == C_RTOL ? &o->rtol : &o->atol) != 0)
            return af_cli_bad_value(err, opt == C_RTOL ? "--rtol" : "--atol", WANT_NONNEG, arg);
        o->n_tol++;
        return AF_CLI_HANDLED;
    case C_TIMEOUT:
        if (af_parse_seconds(arg, &o->timeout_s) != 0)
            return af_cli_bad_value(err, "--timeout", "seconds > 0", arg);
        return AF_CLI_HANDLED;
    case C_MAX_INPUT:
        if (af_parse_bytes(arg, &o->max_input_bytes) != 0)
            return af_cli_bad_value(err, "--max-input-bytes", WANT_BYTES, arg);
        return AF_CLI_HANDLED;
    case C_MEM_LIMIT:
        if (af_parse_mem_limit(arg, &o->mem_limit_bytes) != 0)
            return af_cli_bad_value(err, "--mem-limit", WANT_BYTES " or 'none'", arg);
        return AF_CLI_HANDLED;
    case C_MAX_ENTRY:
        if (af_parse_bytes(arg, &o->max_entry_bytes) != 0)
            return af_cli_bad_value(err, "--max-entry-bytes", WANT_BYTES, arg);
        return AF_CLI_HANDLED;
    }
    return AF_CLI_NOT_MINE;
}

af_cli_rc af_cli_parse(af_cli_opts *o, int opt, const char *arg, af_error *err)
{
    switch (opt) {
    case C_MODEL:
        o->model = arg;
        break;
    case C_SPEC:
        o->spec_file = arg;
        break;
    case C_EXPORTED:
        o->exported = arg;
        break;
    case C_BEYOND:
        o->beyond_contract = 1;
        break;
    case C_EAGER:
    case C_NO_EAGER:
        o->eager = opt == C_EAGER;
        break;
    case C_DEVICE:
        o->device = arg;
        break;
    case C_TORCH_LIB:
        o->torch_lib = arg;
        break;
    case C_CHECK_INPUTS:
        o->check_inputs = 1;
        break;
    case C_NO_ZYGOTE:
        o->no_zygote = 1;
        break;
    case 'v':
        o->verbose = 1;
        break;
    default:
        return parse_number(o, opt, arg, err);
    }
    return AF_CLI_HANDLED;
}

int af_cli_check(const af_cli_opts *o, af_error *err)
{
    if (o->n_tol == 1)
        return af_error_set(err, AF_E_USAGE, "give --rtol and --atol together");
    if (o->spec_file && o->exported)
        return af_error_set(err, AF_E_USAGE,
                            "--spec and --exported both state the contract: give one");
    return 0;
}

void af_cli_worker_opts(const af_cli_opts *o, af_worker_opts *w)
{
    w->torch_lib = o->torch_lib;
    w->device = o->device;
    w->timeout_s = o->timeout_s;
    w->max_input_bytes = o->max_input_bytes;
    w->mem_limit_bytes = o->mem_limit_bytes;
    w->check_inputs = o->check_inputs;
    w->no_zygote = o->no_zygote;
    w->verbose = o->verbose;
}

void af_cli_package_opts(const af_cli_opts *o, af_package_opts *p)
{
    p->model = o->model;
    p->max_entry_bytes = o->max_entry_bytes;
}

void af_cli_ref_opts(const af_cli_opts *o, af_ref_opts *r)
{
    r->device = o->device;
    r->have_tol = o->n_tol == 2;
    r->rtol = o->rtol;
    r->atol = o->atol;
}

/* One help entry: head padded to col (or on a line of its own when longer), then the text
 * in words, wrapped at column 80 and indented to col. */
static void help_entry(FILE *f, const char *head, const char *text, int col)
{
    int at = fprintf(f, "  %s", head);
    if (at >= col - 1) {
        fputc('\n', f);
        at = 0;
    }
    fprintf(f, "%*s", col - at, "");
    at = col;
    int first = 1;
    while (*text) {
        size_t w = strcspn(text, " ");
        if (!first && at + 1 + (int)w > 80) {
            fprintf(f, "\n%*s", col, "");
            at = col;
            first = 1;
        }
        at += fprintf(f, "%s%.*s", first ? "" : " ", (int)w, text);
        first = 0;
        text += w;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

void af_cli_help(FILE *f, unsigned offered, int col)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if ((g_flags[i].bit & offered) && g_flags[i].head)
            help_entry(f, g_flags[i].head, g_flags[i].help, col);
}
