/* aotif/case.h — a case: one point in a model's shape space, plus how to fill the inputs.
 *
 * The case is the one currency of aoti-fuzz: the fuzzer produces cases, the worker runs
 * them, the minimizer edits them, crash files and repro scripts serialize them.
 *
 * Fill function (documented in docs/fill.md, mirrored by repro.py). For input i, element j
 * (row-major, contiguous), with s = seed mod 1000003:
 *     v  = (j * 40503 + i * 9973 + s) mod 1000003
 *     w  = (v * v + 12345) mod 1000003
 *     float types:   ((w mod 257) - 128) / 64     (exact in fp16, bf16, fp32, fp64)
 *     integer types: int_lo + w mod (int_hi - int_lo + 1)
 *     bool:          w mod 2
 * zeros / ones fill every element with 0 / 1 (true).
 * wide (only beyond the declared contract) is random, except that integer inputs take
 *     int_lo + w mod (2 * (int_hi - int_lo + 1))
 * so about half the values lie above the input's valid range (an index past its table).
 * All integer arithmetic fits in int64, so torch int64 ops reproduce it exactly. */
#ifndef AOTIF_CASE_H
#define AOTIF_CASE_H

#include <stdint.h>

#include "aotif/error.h"
#include "aotif/spec.h"

typedef enum af_fill {
    AF_FILL_RANDOM = 0,
    AF_FILL_ZEROS,
    AF_FILL_ONES,
    AF_FILL_WIDE,
    AF_FILL_COUNT
} af_fill;

typedef struct af_case { /* the values last: af_case_copy_in_use copies n_syms of them */
    int n_syms;          /* equals the spec's n_syms */
    af_fill fill;
    uint64_t seed;
    int64_t values[AF_MAX_SYMS]; /* one value per spec symbol */
} af_case;

#define AF_FILL_MOD 1000003
#define AF_FILL_A 40503
#define AF_FILL_B 9973
#define AF_FILL_C 12345

const char *af_fill_name(af_fill f);     /* "random", "zeros", "ones", "wide" */
int af_fill_from_name(const char *name); /* -1 if unknown */

/* Copy into dst what src holds in use (the count, the fill, the seed and n_syms values; a
 * bad count copies no more than the array holds); dst's values past them are left alone.
 * The mailbox's copy, where every cache line crosses cores. */
void af_case_copy_in_use(af_case *dst, const af_case *src);

/* Cases as keys (the memos, the mutator): equal when the symbols' values, the fill and the
 * seed are; the hash agrees with that equality. */
int af_case_equal(const af_case *a, const af_case *b);
uint64_t af_case_hash(const af_case *c);

/* A case with every symbol at its compiled lower bound, random fill, seed 0. */
void af_case_init(af_case *c, const af_spec *spec);
/* Size of dim d of input i under this case (may be negative for a bad case). */
int64_t af_case_dim(const af_spec *spec, const af_case *c, int input, int d);
/* Check every dim >= 0 and every symbol inside [min, max] (declared range).
 * Returns 0 or -1 with AF_E_USAGE. */
int af_case_check(const af_spec *spec, const af_case *c, af_error *err);
/* Total bytes of all inputs; saturates at INT64_MAX. */
int64_t af_case_input_bytes(const af_spec *spec, const af_case *c);
/* Whether any symbol is below its compiled lower bound (outside the compiled contract). */
int af_case_below_compiled(const af_spec *spec, const af_case *c);

/* Where a case lies relative to the model's contract. */
typedef enum af_ctv {
    AF_CT_INSIDE = 0, /* inside the declared contract (read, not assumed) */
    AF_CT_GAP,        /* inside it, but below a compiled lower bound (a contract gap) */
    AF_CT_OUTSIDE,    /* outside it: a size below/above a declared bound, or index values
                       * past their valid range (wide fill) */
    AF_CT_UNKNOWN,    /* the declared contract was not read (assumed) */
    AF_CT_COUNT
} af_ctv;
/* "inside", "gap", "outside", "unknown" */
const char *af_ctv_name(af_ctv v);
int af_ctv_from_name(const char *name);
/* The verdict, and one line saying why in `why` ("outside the declared contract: batch=0 is
 * below its declared min 1 (exported program)"). */
af_ctv af_case_verdict(const af_spec *spec, const af_case *c, char *why, size_t len);
/* The case's shape class, one word per symbol: "n=0 seq=gap" with 0, 1, gap (below the
 * compiled lower bound), max, mid. What a mismatch signature keys on. */
void af_case_shape_class(const af_spec *spec, const af_case *c, char *buf, size_t len);
/* "n=0 seq=7" (Dim names where known, else symbol names). */
void af_case_str(const af_spec *spec, const af_case *c, char *buf, size_t len);
/* Parse one "NAME=VALUE" assignment into c. */
int af_case_assign(const af_spec *spec, af_case *c, const char *assignment, af_error *err);

/* Fill value w(i, j) as defined above, before the dtype mapping. */
static inline int64_t af_fill_w(uint64_t seed, int64_t input, int64_t j)
{
    int64_t s = (int64_t)(seed % AF_FILL_MOD);
    int64_t v = ((j % AF_FILL_MOD) * AF_FILL_A + input * AF_FILL_B + s) % AF_FILL_MOD;
    return (v * v + AF_FILL_C) % AF_FILL_MOD;
}

/* The dtype mappings of w defined above: float types (exact in every float dtype)... */
static inline double af_fill_float(int64_t w)
{
    return (double)((w % 257) - 128) / 64.0;
}

/* ...integer types, for an input's inclusive [lo, hi] (|lo|, |hi| <= AF_INT_LIMIT)... */
static inline int64_t af_fill_int(int64_t lo, int64_t hi, int64_t w)
{
    return lo + w % (hi - lo + 1);
}

/* ...integer types under the wide fill... */
static inline int64_t af_fill_int_wide(int64_t lo, int64_t hi, int64_t w)
{
    return lo + w % (2 * (hi - lo + 1));
}

/* ...and bool. */
static inline int af_fill_bool(int64_t w)
{
    return (int)(w % 2);
}

#endif
