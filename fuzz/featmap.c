/* featmap.c — turning one run into libFuzzer features; the layout is in featmap.h.
 *
 * The features are chosen so that libFuzzer keeps, in its corpus, one input per
 * interesting shape class and per outcome: a corpus that holds "batch = 0", "batch just
 * under the compiled minimum", "seq a multiple of 64 plus one" and "two symbols equal",
 * each with the result class it gave. Results weigh in twice: alone (a new class or a new
 * signature is always news) and crossed with each symbol's value class (the same shape
 * class giving a new outcome is news too). */
#include "featmap.h"

#include <string.h>

static const char *const vc_names[AF_VC_COUNT] = {
    "zero",
    "one",
    "two",
    "min",
    "max",
    "max-1",
    "compiled_min",
    "compiled_min-1",
    "below_compiled",
    "above_compiled",
    "pow2",
    "pow2+-1",
    "mul16",
    "mul32",
    "mul64",
    "mul128",
};

const char *af_vclass_name(af_vclass vc)
{
    return (unsigned)vc < AF_VC_COUNT ? vc_names[vc] : "?";
}

static int is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

uint32_t af_feat_value_classes(const af_symbol *s, int64_t v)
{
    uint32_t m = 0;
#define SET(c) (m |= 1u << (c))
    if (v == 0)
        SET(AF_VC_ZERO);
    if (v == 1)
        SET(AF_VC_ONE);
    if (v == 2)
        SET(AF_VC_TWO);
    if (v == s->min)
        SET(AF_VC_MIN);
    if (v == s->max)
        SET(AF_VC_MAX);
    if (s->max > INT64_MIN && v == s->max - 1)
        SET(AF_VC_MAX_MINUS_1);
    if (v == s->compiled_min)
        SET(AF_VC_COMPILED_MIN);
    if (s->compiled_min > INT64_MIN && v == s->compiled_min - 1)
        SET(AF_VC_COMPILED_MIN_MINUS_1);
    if (v < s->compiled_min)
        SET(AF_VC_BELOW_COMPILED);
    if (s->compiled_max >= s->compiled_min && v > s->compiled_max)
        SET(AF_VC_ABOVE_COMPILED);
    if (is_pow2(v))
        SET(AF_VC_POW2);
    else if ((v < INT64_MAX && is_pow2(v + 1)) || (v > INT64_MIN && is_pow2(v - 1)))
        SET(AF_VC_POW2_NEIGHBOUR);
    if (v != 0 && v % 16 == 0)
        SET(AF_VC_MUL16);
    if (v != 0 && v % 32 == 0)
        SET(AF_VC_MUL32);
    if (v != 0 && v % 64 == 0)
        SET(AF_VC_MUL64);
    if (v != 0 && v % 128 == 0)
        SET(AF_VC_MUL128);
#undef SET
    return m;
}

uint64_t af_feat_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static int bitlen(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

size_t af_feat_layout_for(const af_spec *spec, af_feat_layout *L)
{
    size_t ns = (size_t)(spec->n_syms < AF_MAX_SYMS ? spec->n_syms : AF_MAX_SYMS);
    L->ns = (int)ns;
    L->value = 0;
    L->value_res = L->value + ns * AF_VC_COUNT;
    L->mag = L->value_res + ns * AF_VC_COUNT * AF_RES_COUNT;
    L->pair = L->mag + ns * AF_FEAT_MAG_BUCKETS;
    L->res = L->pair + (ns * (ns ? ns - 1 : 0) / 2) * AF_FEAT_PAIR_RELS;
    L->sig = L->res + AF_RES_COUNT;
    L->out = L->sig + AF_FEAT_SIG_BUCKETS;
    L->bytes = L->out + 2 * AF_RES_COUNT;
    L->end = L->bytes + 65;
    return L->end;
}

int af_features_compute(const af_spec *spec, const af_feat_layout *L, const af_case *c,
                        const af_result *r, uint8_t *ctr)
{
    int set = 0;
#define HIT(idx)                                                                                   \
    do {                                                                                           \
        size_t i_ = (size_t)(idx);                                                                 \
        if (i_ < L->end && !ctr[i_]) {                                                             \
            ctr[i_] = 1;                                                                           \
            set++;                                                                                 \
        }                                                                                          \
    } while (0)

    int rc = r ? (int)r->cls : -1;
    if (rc >= AF_RES_COUNT)
        rc = -1;
    int ns = L->ns;

    for (int i = 0; i < ns; i++) {
        int64_t v = c->values[i];
        uint32_t m = af_feat_value_classes(&spec->syms[i], v);
        for (int k = 0; k < AF_VC_COUNT; k++) {
            if (!(m & (1u << k)))
                continue;
            HIT(L->value + i * AF_VC_COUNT + k);
            if (rc >= 0)
                HIT(L->value_res + (i * AF_VC_COUNT + k) * AF_RES_COUNT + rc);
        }
        uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        HIT(L->mag + i * AF_FEAT_MAG_BUCKETS + bitlen(mag));
    }

    int pair = 0;
    for (int i = 0; i < ns; i++)
        for (int j = i + 1; j < ns; j++, pair++) {
            int64_t a = c->values[i], b = c->values[j];
            size_t base = L->pair + (size_t)pair * AF_FEAT_PAIR_RELS;
            HIT(base + (a < b ? 0 : a == b ? 1 : 2));
            if (a != 0 && a / 2 == b && a % 2 == 0)
                HIT(base + 3);
            if (b != 0 && b / 2 == a && b % 2 == 0)
                HIT(base + 4);
        }

    if (rc >= 0) {
        HIT(L->res + rc);
        HIT(L->sig + af_feat_hash(r->signature) % AF_FEAT_SIG_BUCKETS);
        if (af_result_any_empty(r))
            HIT(L->out + 2 * rc);
        if (af_result_any_nonfinite(r))
            HIT(L->out + 2 * rc + 1);
    }
    int64_t bytes = af_case_input_bytes(spec, c);
    HIT(L->bytes + bitlen(bytes > 0 ? (uint64_t)bytes : 0));
#undef HIT
    return set;
}

size_t af_features_note_new(const uint8_t *ctr, uint8_t *seen, size_t n)
{
    /* a run sets a few dozen of the slots: skip zero words eight bytes at a time */
    size_t fresh = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, ctr + i, 8);
        if (!w)
            continue;
        for (size_t k = i; k < i + 8; k++)
            if (ctr[k] && !seen[k]) {
                seen[k] = 1;
                fresh++;
            }
    }
    for (; i < n; i++)
        if (ctr[i] && !seen[i]) {
            seen[i] = 1;
            fresh++;
        }
    return fresh;
}
