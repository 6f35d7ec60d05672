/* explain.h — the explain phase of aoti-minimize: which symbols of a minimal failing case
 * matter, and which do not.
 *
 * A locally minimal case says where the failure is smallest, not which sizes cause it:
 * crossidx fails at n=0 m=1, but it fails at n=0 for every m. So, after the minimizer (as
 * Hypothesis does after shrinking), each symbol is tried alone across its range while the
 * others stay at the minimal case, at up to AF_EXPLAIN_TRIES values: its lower bound, the
 * lower bound + 1, a typical value (the geometric middle of the range), a power of two
 * (the largest below the upper bound) and the upper bound, deduplicated and clamped to the
 * range the minimizer explored (the declared contract, or wider with --beyond-contract).
 * A symbol for which every tried value still fails the same way (SAME) is FREE; one for
 * which some value passes or fails differently is PINNED. A symbol whose range holds one
 * value is FIXED (nothing to try). Freedom is per symbol: two free symbols were not moved
 * together.
 *
 * Cost: at most AF_EXPLAIN_TRIES questions per symbol, fewer when the memo already knows
 * an answer (the minimal case itself, the lower bounds the minimizer asked). The engine
 * adds AF_EXPLAIN_TRIES * k to its bound on questions and refuses any question past it
 * (ddmin.c).
 *
 * Ownership: af_explain is a plain value (fixed-size fields) owned by the caller; every
 * pointer given to these functions is borrowed for the call. */
#ifndef AOTIF_MIN_EXPLAIN_H
#define AOTIF_MIN_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "aotif/case.h"
#include "aotif/spec.h"
#include "ddmin.h"

#define AF_EXPLAIN_TRIES 5 /* values tried per symbol, at most: the per-symbol bound */

typedef enum af_role {
    AF_ROLE_UNKNOWN = 0, /* not decided: stopped before every value was asked */
    AF_ROLE_FREE,        /* every tried value failed the same way */
    AF_ROLE_PINNED,      /* some tried value passed or failed differently */
    AF_ROLE_FIXED,       /* the range holds one value */
} af_role;

typedef struct af_explain_try {
    int64_t value;
    int verdict;               /* AF_V_PASS / SAME / OTHER; -1: not asked (stopped) */
    int asked;                 /* 1: a new question; 0: the memo knew the answer */
    char text[AF_MIN_SIG_MAX]; /* OTHER: its signature; PASS: the class of a run that was
                                  not a bug (REFUSED, TIMEOUT, OOM), else "" */
} af_explain_try;

typedef struct af_explain_sym {
    af_role role;
    int64_t minimal; /* the symbol's value in the minimal case */
    int64_t lo, hi;  /* the range tried over */
    int n_tried;
    af_explain_try tried[AF_EXPLAIN_TRIES]; /* ascending values */
} af_explain_sym;

typedef struct af_explain {
    int ran;      /* the phase ran (the crash reproduced and it was asked for) */
    int complete; /* every value of every symbol was answered */
    int n_syms;
    af_explain_sym sym[AF_MAX_SYMS];
    af_case smallest;  /* the minimal failing shape set's smallest member: pinned symbols
                          at their minimal values, free ones at their lower bound */
    int64_t questions; /* new questions the phase asked (<= bound) */
    int64_t memo_hits; /* values the memo answered */
    int64_t bound;     /* AF_EXPLAIN_TRIES * n_syms */
} af_explain;

/* The values tried for a symbol of range [lo, hi], ascending and distinct, into
 * out[AF_EXPLAIN_TRIES]; returns how many (1 when lo == hi, 0 when lo > hi). */
int af_explain_values(int64_t lo, int64_t hi, int64_t *out);

/* One question: the answer for case `c` (AF_V_PASS / SAME / OTHER), or a negative value to
 * end the phase (an error, or the stop flag / budget). `text` (len bytes, "" on entry)
 * receives what af_explain_try.text holds; *fresh is set to 1 when the answer needed a new
 * question, 0 when it was known. */
typedef int (*af_explain_ask_fn)(void *ctx, const af_case *c, char *text, size_t len, int *fresh);

/* Run the phase on `minimal` (inside the spec's [min, max] ranges). Fills *out whatever
 * happens. Returns 0, or the first negative value `ask` returned (the phase then ends
 * with out->complete == 0 and the undecided symbols AF_ROLE_UNKNOWN). */
int af_explain_run(const af_spec *spec, const af_case *minimal, af_explain_ask_fn ask, void *ctx,
                   af_explain *out);

/* One line for a human, e.g. "fails when n=0, for every m tried (1, 2, 8, 32, 64)"; with
 * nothing free: "fails only at n=0 m=0: every symbol is pinned". Plain ASCII-safe text
 * (names reduced to printable ASCII); into buf, always NUL-terminated. */
void af_explain_summary(const af_spec *spec, const af_explain *ex, char *buf, size_t len);

/* "free", "pinned", "fixed", "unknown". */
const char *af_role_name(af_role r);

/* The result as a JSON object (caller frees with cJSON_Delete); NULL on OOM. */
cJSON *af_explain_json(const af_spec *spec, const af_explain *ex);

#endif
