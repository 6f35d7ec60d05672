/* case.c — one point of a model's shape space (a value per size symbol) plus the fill
 * of its inputs; see aotif/case.h. Everything here is pure arithmetic on the spec:
 * sizes are computed with saturating int64 arithmetic so that a bad case (a huge or
 * negative value) is reported by af_case_check instead of overflowing. */
#include "aotif/case.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fill_names[AF_FILL_COUNT] = {
    [AF_FILL_RANDOM] = "random",
    [AF_FILL_ZEROS] = "zeros",
    [AF_FILL_ONES] = "ones",
    [AF_FILL_WIDE] = "wide",
};

const char *af_fill_name(af_fill f)
{
    return (int)f >= 0 && f < AF_FILL_COUNT ? fill_names[f] : "?";
}

int af_fill_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int f = 0; f < AF_FILL_COUNT; f++)
        if (strcmp(name, fill_names[f]) == 0)
            return f;
    return -1;
}

int af_case_equal(const af_case *a, const af_case *b)
{
    return a->n_syms == b->n_syms && a->fill == b->fill && a->seed == b->seed && a->n_syms >= 0 &&
           a->n_syms <= AF_MAX_SYMS &&
           memcmp(a->values, b->values, (size_t)a->n_syms * sizeof a->values[0]) == 0;
}

static uint64_t mix64(uint64_t x) /* splitmix64's finalizer */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void af_case_copy_in_use(af_case *dst, const af_case *src)
{
    int n = src->n_syms < 0 ? 0 : src->n_syms > AF_MAX_SYMS ? AF_MAX_SYMS : src->n_syms;
    memcpy(dst, src, offsetof(af_case, values) + sizeof src->values[0] * (size_t)n);
}

uint64_t af_case_hash(const af_case *c)
{
    uint64_t h = mix64((uint64_t)(uint32_t)c->n_syms ^ ((uint64_t)c->fill << 32));
    h = mix64(h ^ c->seed);
    for (int i = 0; i < c->n_syms && i < AF_MAX_SYMS; i++)
        h = mix64(h ^ (uint64_t)c->values[i]);
    return h;
}

void af_case_init(af_case *c, const af_spec *spec)
{
    memset(c, 0, sizeof *c);
    c->n_syms = spec->n_syms;
    for (int k = 0; k < spec->n_syms; k++)
        c->values[k] = spec->syms[k].compiled_min;
    c->fill = AF_FILL_RANDOM;
    c->seed = 0;
}

int64_t af_case_dim(const af_spec *spec, const af_case *c, int input, int d)
{
    if (input < 0 || input >= spec->n_inputs || d < 0 || d >= spec->inputs[input].rank)
        return -1;
    const af_dim *dim = &spec->inputs[input].dims[d];
    if (dim->sym < 0 || dim->sym >= c->n_syms)
        return dim->b;
    int64_t p, r;
    if (__builtin_mul_overflow(dim->a, c->values[dim->sym], &p))
        return c->values[dim->sym] < 0 ? INT64_MIN : INT64_MAX; /* a >= 1 */
    if (__builtin_add_overflow(p, dim->b, &r))
        return dim->b < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* Dim name where known, else the symbol name. */
static const char *sym_label(const af_symbol *s)
{
    return s->dim_name[0] ? s->dim_name : s->name;
}

int af_case_check(const af_spec *spec, const af_case *c, af_error *err)
{
    if (c->n_syms != spec->n_syms)
        return af_error_set(err, AF_E_USAGE,
                            "case has %d symbol values but the spec has %d symbols", c->n_syms,
                            spec->n_syms);
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        if (c->values[k] < s->min || c->values[k] > s->max) {
            if (!spec->beyond_contract && s->decl_from != AF_FROM_ASSUMED)
                return af_error_set(err, AF_E_USAGE,
                                    "%s=%" PRId64 " is outside its declared range [%" PRId64
                                    ", %" PRId64 "] (%s); --beyond-contract explores there",
                                    sym_label(s), c->values[k], s->min, s->max,
                                    af_origin_name(s->decl_from));
            return af_error_set(err, AF_E_USAGE,
                                "%s=%" PRId64 " is outside the explored range [%" PRId64
                                ", %" PRId64 "]",
                                sym_label(s), c->values[k], s->min, s->max);
        }
    }
    if (c->fill == AF_FILL_WIDE && !spec->beyond_contract)
        return af_error_set(err, AF_E_USAGE,
                            "the wide fill puts index values past their valid range: it needs "
                            "--beyond-contract");
    for (int i = 0; i < spec->n_inputs; i++)
        for (int d = 0; d < spec->inputs[i].rank; d++) {
            int64_t v = af_case_dim(spec, c, i, d);
            if (v < 0)
                return af_error_set(err, AF_E_USAGE,
                                    "input %s: dim %d would be %" PRId64 " (negative)",
                                    spec->inputs[i].name, d, v);
        }
    return 0;
}

int64_t af_case_input_bytes(const af_spec *spec, const af_case *c)
{
    int64_t total = 0;
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        int64_t bytes = (int64_t)af_dtype_size(in->dtype);
        int saturated = 0;
        for (int d = 0; d < in->rank; d++) {
            int64_t v = af_case_dim(spec, c, i, d);
            if (v <= 0) { /* an empty input; a negative dim is af_case_check's business */
                bytes = 0;
                saturated = 0;
                break;
            }
            if (!saturated && __builtin_mul_overflow(bytes, v, &bytes))
                saturated = 1;
        }
        if (saturated || __builtin_add_overflow(total, bytes, &total))
            return INT64_MAX;
    }
    return total;
}

int af_case_below_compiled(const af_spec *spec, const af_case *c)
{
    for (int k = 0; k < spec->n_syms && k < c->n_syms; k++)
        if (c->values[k] < spec->syms[k].compiled_min)
            return 1;
    return 0;
}

static const char *const verdict_names[AF_CT_COUNT] = {
    [AF_CT_INSIDE] = "inside",
    [AF_CT_GAP] = "gap",
    [AF_CT_OUTSIDE] = "outside",
    [AF_CT_UNKNOWN] = "unknown",
};

const char *af_ctv_name(af_ctv v)
{
    return (unsigned)v < AF_CT_COUNT ? verdict_names[v] : "unknown";
}

int af_ctv_from_name(const char *name)
{
    for (int v = 0; v < AF_CT_COUNT; v++)
        if (name && !strcmp(name, verdict_names[v]))
            return v;
    return -1;
}

static int input_numel_nonzero(const af_spec *spec, const af_case *c, int i)
{
    for (int d = 0; d < spec->inputs[i].rank; d++)
        if (af_case_dim(spec, c, i, d) <= 0)
            return 0;
    return 1;
}

/* Outside: a declared bound broken. 1 when a symbol's value is past its declared range (why
 * names the first such), else 0. */
static int outside_declared(const af_spec *spec, const af_case *c, char *why, size_t len)
{
    for (int k = 0; k < spec->n_syms && k < c->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        if (s->decl_from == AF_FROM_ASSUMED)
            continue;
        if (c->values[k] < s->decl_min || c->values[k] > s->decl_max) {
            snprintf(why, len,
                     "outside the declared contract: %s=%" PRId64 " is %s its declared "
                     "%s %" PRId64 " (%s)",
                     sym_label(s), c->values[k], c->values[k] < s->decl_min ? "below" : "above",
                     c->values[k] < s->decl_min ? "min" : "max",
                     c->values[k] < s->decl_min ? s->decl_min : s->decl_max,
                     af_origin_name(s->decl_from));
            return 1;
        }
    }
    return 0;
}

/* Outside by the wide fill: every integer input with a read range gets values past it. 1
 * when there is one (why names them all), else 0 with why empty. */
static int outside_wide_fill(const af_spec *spec, const af_case *c, char *why, size_t len)
{
    size_t off = 0;
    int n = 0;
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        if (af_dtype_is_float(in->dtype) || in->dtype == AF_DT_BOOL ||
            in->int_from == AF_FROM_ASSUMED || !input_numel_nonzero(spec, c, i))
            continue;
        int w =
            snprintf(why + off, off < len ? len - off : 0, "%s%s [%" PRId64 ", %" PRId64 "] (%s)",
                     n++ ? ", "
                         : "outside the declared contract (wide fill): "
                           "values past their valid range in ",
                     in->name, in->int_lo, in->int_hi, af_origin_name(in->int_from));
        if (w > 0)
            off = off + (size_t)w < len ? off + (size_t)w : len - 1;
    }
    if (n)
        return 1;
    why[0] = '\0';
    return 0;
}

/* A value past the compiled bounds: in a contract gap when its declared range allows it,
 * unknown when it is below them and the declared range was assumed. The verdict, or -1
 * when every value is inside the compiled bounds (or above them, assumed). */
static int past_compiled(const af_spec *spec, const af_case *c, char *why, size_t len)
{
    for (int k = 0; k < spec->n_syms && k < c->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        int below = c->values[k] < s->compiled_min;
        if (!below && c->values[k] <= s->compiled_max)
            continue;
        if (s->decl_from != AF_FROM_ASSUMED) {
            snprintf(why, len,
                     "inside the declared contract, in a contract gap: %s=%" PRId64
                     " is declared legal ([%" PRId64 ", %" PRId64 "], %s) but the compiled code "
                     "assumes %s %" PRId64,
                     sym_label(s), c->values[k], s->decl_min, s->decl_max,
                     af_origin_name(s->decl_from),
                     below ? ">=" : "<=", below ? s->compiled_min : s->compiled_max);
            return AF_CT_GAP;
        }
        if (!below)
            continue;
        snprintf(why, len,
                 "declared range unknown (assumed [%" PRId64 ", %" PRId64 "]): %s=%" PRId64
                 " is below the compiled lower bound %" PRId64,
                 s->decl_min, s->decl_max, sym_label(s), c->values[k], s->compiled_min);
        return AF_CT_UNKNOWN;
    }
    return -1;
}

af_ctv af_case_verdict(const af_spec *spec, const af_case *c, char *why, size_t len)
{
    char dummy[1];
    if (!why || !len) {
        why = dummy;
        len = sizeof dummy;
    }
    why[0] = '\0';
    if (outside_declared(spec, c, why, len))
        return AF_CT_OUTSIDE;
    if (c->fill == AF_FILL_WIDE && outside_wide_fill(spec, c, why, len))
        return AF_CT_OUTSIDE;
    int known = af_spec_contract_known(spec);
    int past = past_compiled(spec, c, why, len);
    if (past >= 0)
        return (af_ctv)past;
    if (!known) {
        snprintf(why, len,
                 "declared ranges unknown (assumed [0, max]); inside the compiled "
                 "bounds");
        return AF_CT_UNKNOWN;
    }
    snprintf(why, len, "inside the declared contract (%s)",
             spec->contract_src[0]
                 ? "exported program"
                 : af_origin_name(spec->n_syms ? spec->syms[0].decl_from : AF_FROM_EXPORTED));
    return AF_CT_INSIDE;
}

void af_case_shape_class(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    size_t off = 0;
    if (len)
        buf[0] = '\0';
    for (int k = 0; k < spec->n_syms && k < c->n_syms && off < len; k++) {
        const af_symbol *s = &spec->syms[k];
        int64_t v = c->values[k];
        const char *cls = v == 0                ? "0"
                          : v == 1              ? "1"
                          : v < s->compiled_min ? "gap"
                          : v >= s->max         ? "max"
                                                : "mid";
        int n = snprintf(buf + off, len - off, "%s%s=%s", k ? " " : "", sym_label(s), cls);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

void af_case_str(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    size_t off = 0;
    for (int k = 0; k < spec->n_syms && k < c->n_syms && off < len; k++) {
        int n = snprintf(buf + off, len - off, "%s%s=%" PRId64, k ? " " : "",
                         sym_label(&spec->syms[k]), c->values[k]);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

int af_case_assign(const af_spec *spec, af_case *c, const char *assignment, af_error *err)
{
    if (!assignment)
        return af_error_set(err, AF_E_USAGE, "empty shape assignment");
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return af_error_set(err, AF_E_USAGE, "'%s': expected NAME=VALUE", assignment);
    size_t n = (size_t)(eq - assignment);
    if (n == 0)
        return af_error_set(err, AF_E_USAGE, "'%s': missing name before '='", assignment);
    char name[AF_NAME_MAX];
    if (n >= sizeof name)
        return af_error_set(err, AF_E_USAGE, "'%.40s...': name too long", assignment);
    memcpy(name, assignment, n);
    name[n] = '\0';
    int k = af_spec_find_symbol(spec, name);
    if (k < 0) {
        char known[256] = "";
        size_t off = 0;
        for (int j = 0; j < spec->n_syms && off < sizeof known; j++) {
            int w = snprintf(known + off, sizeof known - off, "%s%s", j ? ", " : "",
                             sym_label(&spec->syms[j]));
            if (w < 0)
                break;
            off += (size_t)w;
        }
        return af_error_set(err, AF_E_USAGE, "unknown symbol or Dim '%s' (known: %s)", name,
                            spec->n_syms ? known : "none");
    }
    const char *val = eq + 1;
    /* strtoll alone would accept " 5", "+5", "-0" and "5abc"; take digits only. */
    if (*val < '0' || *val > '9')
        return af_error_set(err, AF_E_USAGE, "'%s': value must be a non-negative integer",
                            assignment);
    errno = 0;
    char *end;
    long long v = strtoll(val, &end, 10);
    if (errno == ERANGE)
        return af_error_set(err, AF_E_USAGE, "'%s': value out of range", assignment);
    if (*end != '\0')
        return af_error_set(err, AF_E_USAGE, "'%s': value must be a non-negative integer",
                            assignment);
    c->values[k] = (int64_t)v;
    return 0;
}
