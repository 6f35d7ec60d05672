/* mutate.h — structure-aware mutation and crossover of encoded cases, and the seed corpus.
 *
 * libFuzzer's byte-level mutators know nothing of shape symbols; these operate on the
 * decoded case and re-encode it, so every output decodes to a case inside the declared
 * ranges and each step is one a human would try at a shape boundary. */
#ifndef AF_FUZZ_MUTATE_H
#define AF_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/spec.h"

/* A small, fast generator (splitmix64): reproducible from the seed libFuzzer hands us. */
typedef struct af_rng {
    uint64_t state;
} af_rng;

void af_rng_seed(af_rng *r, uint64_t seed);
uint64_t af_rng_next(af_rng *r);
uint64_t af_rng_below(af_rng *r, uint64_t n); /* uniform in [0, n); n = 0 means [0, 2^64) */

typedef enum af_mut_op {
    AF_MUT_BOUNDARY = 0, /* min, 0, 1, 2, max, max-1, compiled_min, compiled_min-1, ... */
    AF_MUT_STEP,         /* +1 / -1 */
    AF_MUT_SCALE,        /* x2 / /2 */
    AF_MUT_POW2,         /* 2^k, 2^k - 1, 2^k + 1 */
    AF_MUT_MULTIPLE,     /* a multiple of 16, 32, 64 or 128, maybe +-1 */
    AF_MUT_COPY,         /* one symbol's value copied to another */
    AF_MUT_RANDOM,       /* uniform or log-uniform in range */
    AF_MUT_FILL,         /* another fill mode (rare) */
    AF_MUT_SEED,         /* another fill seed (rare) */
    AF_MUT_COUNT
} af_mut_op;

const char *af_mut_op_name(af_mut_op op);

/* The boundary values of symbol s, clamped into [min, max], duplicates removed, in the
 * order listed above. Returns how many (at most 12). */
int af_mut_boundaries(const af_symbol *s, int64_t out[12]);

/* Apply one operation (AF_MUT_COUNT: a weighted random one) to c. Returns the op used. */
af_mut_op af_mutate_once(const af_spec *spec, af_case *c, af_mut_op op, af_rng *r);
/* Apply 1 to 3 random operations, retrying when the case came out unchanged. */
void af_mutate_case(const af_spec *spec, af_case *c, af_rng *r);

/* The libFuzzer entry points, minus the globals: decode, mutate, re-encode. Return the new
 * size (<= max_size). */
size_t af_mutate(const af_spec *spec, uint8_t *data, size_t size, size_t max_size, uint64_t seed);
size_t af_crossover(const af_spec *spec, const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                    uint8_t *out, size_t max_out, uint64_t seed);

/* ---- seed corpus ---- */

typedef struct af_seed {
    char name[AF_NAME_MAX + 16]; /* "all-min", "s0-at-0", ... */
    af_case c;
} af_seed;

/* The symbol's "typical" value: 8 clamped into its compiled range (within the declared). */
int64_t af_seed_typical(const af_symbol *s);
/* All-min, all-compiled-min, each symbol at 0 and at 1 with the others typical,
 * all-typical, all-max; duplicates removed. Returns how many went into out (<= max). */
int af_seed_cases(const af_spec *spec, af_seed *out, int max);
/* Write the seed cases, encoded, as DIR/seed-NN-NAME (DIR is created). Returns the number
 * of files written, or -1. */
int af_seed_corpus_write(const af_spec *spec, const char *dir, af_error *err);

#endif
