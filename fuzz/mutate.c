/* mutate.c — the structure-aware mutator, crossover and seed corpus; see mutate.h.
 *
 * Shape bugs in compiled models sit at a handful of values: empty (0) and size-1 dims
 * that the compiler specialized away, the compiled lower bound and the value just under
 * it, the declared maximum, powers of two and their neighbours (kernel block sizes), and
 * multiples of the tile sizes 16..128 plus or minus one (the tail of a tiled loop). A
 * second family is relations between symbols: two symbols equal, one twice the other.
 * Each mutation picks one symbol and moves it to such a value; results are clamped into
 * the declared range, so every output is a legal case. Fill mode and seed change rarely:
 * they seldom decide whether a shape crashes. */
#include "mutate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aotif/crashfile.h"
#include "encode.h"

/* ---- rng ---------------------------------------------------------------------------- */

void af_rng_seed(af_rng *r, uint64_t seed)
{
    r->state = seed ^ 0x9e3779b97f4a7c15ULL;
}

uint64_t af_rng_next(af_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t af_rng_below(af_rng *r, uint64_t n)
{
    if (n == 0)
        return af_rng_next(r);
    /* Rejection keeps it uniform; the loop runs more than once with probability < 1/2. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = af_rng_next(r);
    while (x >= limit);
    return x % n;
}

/* ---- saturating helpers --------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t p;
    if (__builtin_mul_overflow(a, b, &p))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return p;
}

static int64_t uniform_in(const af_symbol *s, af_rng *r)
{
    uint64_t w = af_enc_span(s);
    return (int64_t)((uint64_t)s->min + af_rng_below(r, w + 1));
}

/* ---- operations --------------------------------------------------------------------- */

static const char *const op_names[AF_MUT_COUNT] = {
    "boundary", "step", "scale", "pow2", "multiple", "copy", "random", "fill", "seed",
};

const char *af_mut_op_name(af_mut_op op)
{
    return (unsigned)op < AF_MUT_COUNT ? op_names[op] : "?";
}

int af_mut_boundaries(const af_symbol *s, int64_t out[12])
{
    int64_t cand[] = {
        s->min,
        0,
        1,
        2,
        s->max,
        sat_add(s->max, -1),
        s->compiled_min,
        sat_add(s->compiled_min, -1),
        sat_add(s->compiled_min, 1),
        s->compiled_max,
        sat_add(s->compiled_max, 1),
    };
    int n = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        int64_t v = af_enc_clamp(s, cand[i]);
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j] == v;
        if (!dup)
            out[n++] = v;
    }
    return n;
}

static int64_t op_boundary(const af_symbol *s, af_rng *r)
{
    int64_t b[12];
    int n = af_mut_boundaries(s, b);
    return b[af_rng_below(r, (uint64_t)n)];
}

static int64_t op_pow2(const af_symbol *s, af_rng *r)
{
    if (s->max < 1)
        return op_boundary(s, r);
    int kmax = 63 - __builtin_clzll((uint64_t)s->max); /* largest k with 2^k <= max */
    int kmin = 0;
    if (s->min > 1)
        kmin = 63 - __builtin_clzll((uint64_t)s->min);
    int k = kmin + (int)af_rng_below(r, (uint64_t)(kmax - kmin + 1));
    if (k > 62)
        k = 62;
    int64_t p = (int64_t)1 << k;
    return sat_add(p, (int64_t)af_rng_below(r, 3) - 1);
}

static int64_t op_multiple(const af_symbol *s, int64_t v, af_rng *r)
{
    static const int64_t ms[] = {16, 32, 64, 128};
    int64_t m = ms[af_rng_below(r, 4)];
    int64_t base;
    switch (af_rng_below(r, 3)) {
    case 0: /* the multiple at or below the current value */
        base = (v / m) * m;
        break;
    case 1: /* the multiple above it */
        base = sat_add((v / m) * m, m);
        break;
    default: { /* any multiple inside the range */
        int64_t lo = s->min / m, hi = s->max / m;
        if (hi < lo)
            hi = lo;
        base = sat_mul(lo + (int64_t)af_rng_below(r, (uint64_t)(hi - lo) + 1), m);
        break;
    }
    }
    return sat_add(base, (int64_t)af_rng_below(r, 3) - 1);
}

static int64_t op_random(const af_symbol *s, af_rng *r)
{
    if (af_rng_below(r, 2) == 0)
        return uniform_in(s, r);
    /* Log-uniform: small values as likely as large ones. */
    int bits = (int)af_rng_below(r, 64);
    uint64_t x = bits ? af_rng_next(r) >> (64 - bits) : 0;
    uint64_t w = af_enc_span(s);
    return (int64_t)((uint64_t)s->min + (w == UINT64_MAX ? x : x % (w + 1)));
}

static af_mut_op pick_op(const af_spec *spec, af_rng *r)
{
    /* Weights out of 200. */
    static const struct {
        af_mut_op op;
        int w;
    } table[] = {
        {AF_MUT_BOUNDARY, 50}, {AF_MUT_STEP, 30},     {AF_MUT_SCALE, 20},
        {AF_MUT_POW2, 28},     {AF_MUT_MULTIPLE, 20}, {AF_MUT_COPY, 16},
        {AF_MUT_RANDOM, 26},   {AF_MUT_FILL, 5},      {AF_MUT_SEED, 5},
    };
    if (spec->n_syms == 0)
        return af_rng_below(r, 2) ? AF_MUT_FILL : AF_MUT_SEED;
    for (;;) {
        int x = (int)af_rng_below(r, 200);
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            if (x < table[i].w) {
                if (table[i].op == AF_MUT_COPY && spec->n_syms < 2)
                    break; /* draw again */
                return table[i].op;
            }
            x -= table[i].w;
        }
    }
}

af_mut_op af_mutate_once(const af_spec *spec, af_case *c, af_mut_op op, af_rng *r)
{
    if (op >= AF_MUT_COUNT || (op == AF_MUT_COPY && spec->n_syms < 2) ||
        (op < AF_MUT_FILL && spec->n_syms == 0))
        op = pick_op(spec, r);
    c->n_syms = spec->n_syms;
    if (op == AF_MUT_FILL) {
        int n = af_enc_fills(spec);
        c->fill = (af_fill)((c->fill + 1 + af_rng_below(r, (uint64_t)(n - 1))) % n);
        return op;
    }
    if (op == AF_MUT_SEED) {
        c->seed = af_rng_next(r);
        return op;
    }
    int i = (int)af_rng_below(r, (uint64_t)spec->n_syms);
    const af_symbol *s = &spec->syms[i];
    int64_t v = af_enc_clamp(s, c->values[i]), nv = v;
    switch (op) {
    case AF_MUT_BOUNDARY:
        nv = op_boundary(s, r);
        break;
    case AF_MUT_STEP:
        nv = sat_add(v, af_rng_below(r, 2) ? 1 : -1);
        break;
    case AF_MUT_SCALE:
        nv = af_rng_below(r, 2) ? sat_mul(v, 2) : v / 2;
        break;
    case AF_MUT_POW2:
        nv = op_pow2(s, r);
        break;
    case AF_MUT_MULTIPLE:
        nv = op_multiple(s, v, r);
        break;
    case AF_MUT_COPY: {
        int j = (int)af_rng_below(r, (uint64_t)spec->n_syms - 1);
        if (j >= i)
            j++;
        nv = c->values[j];
        break;
    }
    case AF_MUT_RANDOM:
    default:
        nv = op_random(s, r);
        break;
    }
    c->values[i] = af_enc_clamp(s, nv);
    return op;
}

void af_mutate_case(const af_spec *spec, af_case *c, af_rng *r)
{
    af_case orig = *c;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t x = af_rng_below(r, 4);
        int n = x < 2 ? 1 : x == 2 ? 2 : 3;
        for (int k = 0; k < n; k++)
            af_mutate_once(spec, c, AF_MUT_COUNT, r);
        if (!af_case_equal(c, &orig))
            return;
    }
}

size_t af_mutate(const af_spec *spec, uint8_t *data, size_t size, size_t max_size, uint64_t seed)
{
    af_case c;
    af_rng r;
    af_rng_seed(&r, seed);
    af_enc_decode(spec, data, size, &c);
    af_mutate_case(spec, &c, &r);
    return af_enc_encode(spec, &c, data, max_size);
}

size_t af_crossover(const af_spec *spec, const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                    uint8_t *out, size_t max_out, uint64_t seed)
{
    af_case a, b;
    af_rng r;
    af_rng_seed(&r, seed);
    af_enc_decode(spec, d1, s1, &a);
    af_enc_decode(spec, d2, s2, &b);
    /* Uniform crossover per symbol: combines, say, the empty batch of one input with the
     * odd sequence length of another. */
    for (int i = 0; i < spec->n_syms; i++)
        if (af_rng_below(&r, 2))
            a.values[i] = b.values[i];
    if (af_rng_below(&r, 2)) {
        a.fill = b.fill;
        a.seed = b.seed;
    }
    return af_enc_encode(spec, &a, out, max_out);
}

/* ---- seed corpus -------------------------------------------------------------------- */

int64_t af_seed_typical(const af_symbol *s)
{
    int64_t lo = s->compiled_min > s->min ? s->compiled_min : s->min;
    int64_t hi = s->max;
    if (s->compiled_max >= lo && s->compiled_max < hi)
        hi = s->compiled_max;
    int64_t v = 8;
    if (v > hi)
        v = hi;
    if (v < lo)
        v = lo;
    return af_enc_clamp(s, v);
}

static void push(const af_spec *spec, af_seed *out, int *n, int max, const char *name,
                 const af_case *c)
{
    for (int k = 0; k < *n; k++)
        if (af_case_equal(&out[k].c, c))
            return;
    if (*n >= max)
        return;
    snprintf(out[*n].name, sizeof out[*n].name, "%s", name);
    out[*n].c = *c;
    (*n)++;
}

int af_seed_cases(const af_spec *spec, af_seed *out, int max)
{
    af_case c;
    int n = 0;
    char name[AF_NAME_MAX + 16];

    memset(&c, 0, sizeof c);
    c.n_syms = spec->n_syms;
    c.fill = AF_FILL_RANDOM;
    for (int i = 0; i < spec->n_syms; i++)
        c.values[i] = af_enc_clamp(&spec->syms[i], spec->syms[i].min);
    push(spec, out, &n, max, "all-min", &c);
    for (int i = 0; i < spec->n_syms; i++)
        c.values[i] = af_enc_clamp(&spec->syms[i], spec->syms[i].compiled_min);
    push(spec, out, &n, max, "all-compiled-min", &c);
    for (int i = 0; i < spec->n_syms; i++) {
        const char *label = spec->syms[i].dim_name[0] ? spec->syms[i].dim_name : spec->syms[i].name;
        for (int64_t v = 0; v <= 1; v++) {
            for (int j = 0; j < spec->n_syms; j++)
                c.values[j] = af_seed_typical(&spec->syms[j]);
            c.values[i] = af_enc_clamp(&spec->syms[i], v); /* 0 or 1 may be out of range */
            snprintf(name, sizeof name, "%s-at-%lld", label, (long long)c.values[i]);
            push(spec, out, &n, max, name, &c);
        }
    }
    for (int i = 0; i < spec->n_syms; i++)
        c.values[i] = af_seed_typical(&spec->syms[i]);
    push(spec, out, &n, max, "all-typical", &c);
    for (int i = 0; i < spec->n_syms; i++)
        c.values[i] = af_enc_clamp(&spec->syms[i], spec->syms[i].max);
    push(spec, out, &n, max, "all-max", &c);
    return n;
}

int af_seed_corpus_write(const af_spec *spec, const char *dir, af_error *err)
{
    af_seed seeds[2 * AF_MAX_SYMS + 4];
    uint8_t buf[AF_ENC_MAX_BYTES];
    char path[PATH_MAX];

    if (af_mkdir_p(dir, err) < 0)
        return -1;
    int n = af_seed_cases(spec, seeds, (int)(sizeof seeds / sizeof seeds[0]));
    for (int k = 0; k < n; k++) {
        size_t len = af_enc_encode(spec, &seeds[k].c, buf, sizeof buf);
        /* Names come from Dim names; keep them to a safe alphabet in file names. */
        for (char *p = seeds[k].name; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
                *p = '_';
        if (snprintf(path, sizeof path, "%s/seed-%02d-%s", dir, k, seeds[k].name) >=
            (int)sizeof path)
            return af_error_set(err, AF_E_USAGE, "%s: path too long", dir);
        if (af_write_atomic(path, buf, len, 0, err) < 0)
            return -1;
    }
    return n;
}
