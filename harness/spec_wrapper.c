/* spec_wrapper.c — recover a model's spec from its generated AOTInductor wrapper .cpp, for
 * packages that carry no embedded spec (and to learn the compiled bounds of those that do).
 *
 * The wrapper has no machine-readable spec, so it is read the way a person reads it:
 *  1. Each `check_input_N` function gives input N: its name (`NAME_expected_dtype`), its
 *     dtype (`aoti_torch_dtype_<dtype>()`), and per dim either a static size (message
 *     "unmatched dim value at d, expected: K") or a compiled range ("too small at d,
 *     expected it to be >= L", "too large at d, expected to be <= U"; either may be
 *     missing: a missing lower bound reads as 0, a missing upper one as AF_INT_LIMIT).
 *     The rank is one past the highest dim any size or stride message names.
 *  2. Explicit relations between dims and symbols, from the body of run_impl:
 *     `int64_t sN = <linear expression>;` bindings, where the expression may go through
 *     locals (`int64_t arg0_1_size_0 = arg0_1_size[0]; int64_t s68 = (1.0/2.0)*arg0_1_size_0;`
 *     says dim 0 of arg0_1 is 2*s68), then `assert_size_stride(arg1_1, {2L*s77, 16L}, ...)`
 *     (newer torch, CPU), which spells out every input's symbolic shape. A symbol is the
 *     first one bound to a dim; a later binding of the same dim with the same relation is
 *     an alias of it. Only locals named s<digits> are symbols. (The expressions are read
 *     by the linear-expression parser of cpp_scan.c.)
 *  3. Every dynamic dim still without a symbol (torch binds a symbol only at its first
 *     use, so a second input sharing it or a derived dim such as 2*n has no binding) is
 *     inferred from the ranges: a symbol with range [L, U], U > L, explains a dim with
 *     range [L', U'] when U'-L' = a*(U-L) for an integer a >= 1 and b = L' - a*L. One such
 *     symbol: take it; several: take the only one with a=1, b=0, if exactly one; else (or
 *     none) the dim gets a new symbol "<input>_size_<d>" with the dim's range. Unbounded
 *     dims and bounded symbols (or the reverse) never match.
 *  4. Each symbol's range is the intersection, over the dims it appears in, of the dim's
 *     compiled range mapped back through a*s+b. Wrapper specs have min = compiled_min and
 *     max = compiled_max, no Dim names, and symbols in order of first use.
 * What this cannot see: dims whose size is a product of symbols (they get their own
 * symbol), and relations torch proved but did not print, when the ranges are ambiguous. */
#include "aotif/spec.h"

#include "cpp_scan.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the model being recovered */

#define W_MAX_SYMS (4 * AF_MAX_SYMS)
#define W_MAX_LOCALS 512

typedef struct wdim {
    int is_static;
    int64_t value; /* static size */
    int has_lo, has_hi;
    int64_t lo, hi; /* compiled range of a dynamic dim */
    int sym;        /* index into wsyms, -1 unset */
    int64_t a, b;
} wdim;

typedef struct winput {
    char name[AF_NAME_MAX];
    int dtype; /* -1 until seen */
    int rank;
    int seen; /* a check_input_N for it was found */
    wdim dims[AF_MAX_RANK];
} winput;

typedef struct wsym {
    char name[AF_NAME_MAX];
    int alias_of;   /* canonical wsym index, or -1 */
    int64_t lo, hi; /* range, from the dims using it */
    int used;
    int out_index; /* index in the final af_spec */
} wsym;

typedef struct wmodel {
    int n_inputs;
    winput inputs[AF_MAX_INPUTS];
    int n_syms;
    wsym syms[W_MAX_SYMS];
    int n_locals;
    af_lin_local locals[W_MAX_LOCALS];
} wmodel;

static int64_t dim_lo(const wdim *d)
{
    return d->has_lo ? d->lo : 0;
}

static int64_t dim_hi(const wdim *d)
{
    return d->has_hi ? d->hi : AF_INT_LIMIT;
}

static int64_t clamp_limit(int64_t v)
{
    return v > AF_INT_LIMIT ? AF_INT_LIMIT : v < -AF_INT_LIMIT ? -AF_INT_LIMIT : v;
}

static int wsym_find(const wmodel *m, const char *name)
{
    for (int k = 0; k < m->n_syms; k++)
        if (strcmp(m->syms[k].name, name) == 0)
            return m->syms[k].alias_of >= 0 ? m->syms[k].alias_of : k;
    return -1;
}

static int wsym_add(wmodel *m, const char *name, int alias_of, af_error *err)
{
    if (m->n_syms >= W_MAX_SYMS)
        return af_error_set(err, AF_E_INPUT, "wrapper: too many size symbols (more than %d)",
                            W_MAX_SYMS);
    if (strlen(name) >= AF_NAME_MAX)
        return af_error_set(err, AF_E_INPUT, "wrapper: symbol name '%.40s...' too long", name);
    wsym *s = &m->syms[m->n_syms];
    memset(s, 0, sizeof *s);
    strcpy(s->name, name);
    s->alias_of = alias_of;
    return m->n_syms++;
}

static int input_by_name(const wmodel *m, const char *name, size_t len)
{
    for (int i = 0; i < m->n_inputs; i++)
        if (strlen(m->inputs[i].name) == len && strncmp(m->inputs[i].name, name, len) == 0)
            return i;
    return -1;
}

/* "arg0_1_size[1]" -> input, dim. */
static int size_var_dim(const wmodel *m, const char *var, int *input, int *dim)
{
    const char *br = strchr(var, '[');
    if (!br || br - var < 5 || strncmp(br - 5, "_size", 5) != 0)
        return -1;
    int i = input_by_name(m, var, (size_t)(br - 5 - var));
    if (i < 0)
        return -1;
    int d = atoi(br + 1);
    if (d < 0 || d >= m->inputs[i].rank)
        return -1;
    *input = i;
    *dim = d;
    return 0;
}

static int is_symbol_name(const char *s)
{
    if (s[0] != 's' || !isdigit((unsigned char)s[1]))
        return 0;
    for (s++; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* Parse the int after `key` that follows `from` (within the same throw statement). */
static int message_int(const char *from, const char *end, const char *key, int64_t *out)
{
    const char *stop = af_cpp_find(from, end, "throw");
    const char *k = af_cpp_find(from, stop ? stop : end, key);
    if (!k)
        return -1;
    const char *p = k + strlen(key);
    return af_cpp_scan_i64(&p, end, out);
}

/* The input's name and dtype, from `NAME_expected_dtype = aoti_torch_dtype_DTYPE()`. */
static int check_name_dtype(winput *in, int idx, const char *body, const char *end, af_error *err)
{
    const char *key = "_expected_dtype = aoti_torch_dtype_";
    const char *k = af_cpp_find(body, end, key);
    if (!k)
        return af_error_set(err, AF_E_INPUT,
                            "wrapper: check_input_%d: no expected dtype "
                            "(NAME_expected_dtype = aoti_torch_dtype_...())",
                            idx);
    const char *s = k;
    while (s > body && af_is_ident_char((unsigned char)s[-1]))
        s--;
    if (s == k || (size_t)(k - s) >= sizeof in->name)
        return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: bad input name", idx);
    memcpy(in->name, s, (size_t)(k - s));
    in->name[k - s] = '\0';
    if (!af_is_identifier(in->name))
        return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: bad input name '%s'", idx,
                            in->name);
    char dt[32];
    const char *p = k + strlen(key);
    size_t n = 0;
    while (p < end && af_is_ident_char((unsigned char)*p) && n + 1 < sizeof dt)
        dt[n++] = *p++;
    dt[n] = '\0';
    in->dtype = af_dtype_from_name(dt);
    if (in->dtype < 0)
        return af_error_set(err, AF_E_INPUT, "wrapper: input %d (%s): unsupported dtype '%s'", idx,
                            in->name, dt);
    return 0;
}

/* The messages of a check_input_N that name a dim, and the value each one states. */
typedef enum dim_fact { DIM_STATIC, DIM_LOWER, DIM_UPPER, DIM_STRIDE /* rank only */ } dim_fact;

static const struct dim_message {
    const char *msg, *key;
    dim_fact what;
} dim_messages[] = {
    {"unmatched dim value at ", "expected: ", DIM_STATIC},
    {"dim value is too small at ", "expected it to be >= ", DIM_LOWER},
    {"dim value is too large at ", "expected to be <= ", DIM_UPPER},
    {"unmatched stride value at ", "expected: ", DIM_STRIDE},
};

/* Record value v that a message of kind `what` states for dim d. */
static int record_dim_fact(winput *in, int idx, dim_fact what, int d, int64_t v, af_error *err)
{
    wdim *wd = &in->dims[d];
    if (what == DIM_STATIC) {
        if (v < 0 || v > AF_INT_LIMIT)
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: input %d (%s): dim %d: static size %" PRId64
                                " out of range",
                                idx, in->name, d, v);
        wd->is_static = 1;
        wd->value = v;
    } else if (what == DIM_LOWER) {
        wd->has_lo = 1;
        wd->lo = v < 0 ? 0 : clamp_limit(v);
    } else {
        wd->has_hi = 1;
        wd->hi = clamp_limit(v);
    }
    return 0;
}

/* Every occurrence of one message in the body: the dim it names (the rank is one past the
 * highest) and, but for strides, the value it states. */
static int check_dim_messages(winput *in, int idx, const struct dim_message *pat, const char *body,
                              const char *end, af_error *err)
{
    const char *q = body;
    while ((q = af_cpp_find(q, end, pat->msg))) {
        q += strlen(pat->msg);
        int64_t d, v;
        if (af_cpp_scan_i64(&q, end, &d) < 0 || d < 0)
            return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: unreadable dim in '%s'",
                                idx, pat->msg);
        if (d >= AF_MAX_RANK)
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: input %d (%s): rank above the limit of %d", idx, in->name,
                                AF_MAX_RANK);
        if (d + 1 > in->rank)
            in->rank = (int)d + 1;
        if (pat->what == DIM_STRIDE)
            continue;
        int got = message_int(q, end, pat->key, &v);
        if (got == -2)
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: check_input_%d: dim %d: the '%s' value is out of "
                                "the int64 range",
                                idx, (int)d, pat->key);
        if (got < 0)
            return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: dim %d: no '%s' value",
                                idx, (int)d, pat->key);
        if (record_dim_fact(in, idx, pat->what, (int)d, v, err) < 0)
            return -1;
    }
    return 0;
}

/* A dim is static or has a range, and the range is not empty. */
static int check_dims_consistent(const winput *in, int idx, af_error *err)
{
    for (int d = 0; d < in->rank; d++) {
        const wdim *wd = &in->dims[d];
        if (wd->is_static && (wd->has_lo || wd->has_hi))
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: input %d (%s): dim %d is both static and dynamic", idx,
                                in->name, d);
        if (!wd->is_static && dim_lo(wd) > dim_hi(wd))
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: input %d (%s): dim %d: empty range [%" PRId64 ", %" PRId64
                                "]",
                                idx, in->name, d, dim_lo(wd), dim_hi(wd));
    }
    return 0;
}

/* One check_input_N body: name, dtype, and each dim's static size or compiled range. */
static int parse_check_body(wmodel *m, int idx, const char *body, const char *end, af_error *err)
{
    winput *in = &m->inputs[idx];
    if (check_name_dtype(in, idx, body, end, err) < 0)
        return -1;
    for (size_t t = 0; t < sizeof dim_messages / sizeof dim_messages[0]; t++)
        if (check_dim_messages(in, idx, &dim_messages[t], body, end, err) < 0)
            return -1;
    if (check_dims_consistent(in, idx, err) < 0)
        return -1;
    in->seen = 1;
    return 0;
}

static int parse_check_inputs(wmodel *m, const char *text, const char *end, af_error *err)
{
    const char *p = text;
    int found = 0;
    while ((p = af_cpp_find(p, end, "check_input_"))) {
        const char *q = p + strlen("check_input_");
        p = q;
        if (q - 13 >= text && af_is_ident_char((unsigned char)q[-13]))
            continue; /* part of a longer name */
        int64_t idx;
        if (!isdigit((unsigned char)*q) || af_cpp_scan_i64(&q, end, &idx) < 0)
            continue;
        q = af_cpp_skip_ws(q, end);
        if (q >= end || *q != '(')
            continue;
        const char *args = af_cpp_skip_ws(q + 1, end);
        if (!af_cpp_find(args, args + 16 < end ? args + 16 : end, "AtenTensorHandle"))
            continue; /* a call, not the definition */
        const char *close = af_cpp_match_bracket(q, end);
        const char *open = close ? af_cpp_skip_ws(close + 1, end) : NULL;
        if (!open || open >= end || *open != '{')
            continue;
        const char *body_end = af_cpp_match_bracket(open, end);
        if (!body_end)
            return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: unbalanced braces",
                                (int)idx);
        if (idx >= AF_MAX_INPUTS)
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: too many inputs (check_input_%d; at most %d)", (int)idx,
                                AF_MAX_INPUTS);
        if (m->inputs[idx].seen)
            return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d defined twice", (int)idx);
        if (parse_check_body(m, (int)idx, open, body_end, err) < 0)
            return -1;
        if (idx + 1 > m->n_inputs)
            m->n_inputs = (int)idx + 1;
        found++;
        p = body_end;
    }
    if (!found)
        return af_error_set(err, AF_E_INPUT,
                            "wrapper: no check_input_N functions found (not an AOTInductor "
                            "wrapper .cpp, or one generated without input checks)");
    for (int i = 0; i < m->n_inputs; i++)
        if (!m->inputs[i].seen)
            return af_error_set(err, AF_E_INPUT,
                                "wrapper: check_input_%d is missing (inputs 0..%d expected)", i,
                                m->n_inputs - 1);
    for (int i = 0; i < m->n_inputs; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(m->inputs[i].name, m->inputs[j].name) == 0)
                return af_error_set(err, AF_E_INPUT,
                                    "wrapper: inputs %d and %d are both named '%s'", j, i,
                                    m->inputs[i].name);
    return 0;
}

/* Body of run_impl, or NULL (then only range inference ties dims to symbols). */
static const char *find_run_impl(const char *text, const char *end, const char **body_end)
{
    const char *p = text;
    while ((p = af_cpp_find(p, end, "::run_impl("))) {
        const char *paren = p + strlen("::run_impl");
        p = paren;
        const char *close = af_cpp_match_bracket(paren, end);
        if (!close)
            return NULL;
        const char *open = close + 1;
        for (;;) { /* skip blanks and comments up to '{' */
            open = af_cpp_skip_ws(open, end);
            const char *s = open < end && *open == '/' ? af_cpp_skip_lexical(open, end) : open;
            if (s == open)
                break;
            open = s;
        }
        if (open < end && *open == '{') {
            *body_end = af_cpp_match_bracket(open, end);
            if (*body_end)
                return open + 1;
        }
    }
    return NULL;
}

/* Tie dim (i, d) to symbol k as a*k + b, unless it is static or already tied. */
static void tie_dim(wmodel *m, int i, int d, int k, int64_t a, int64_t b)
{
    wdim *wd = &m->inputs[i].dims[d];
    if (wd->is_static || wd->sym >= 0)
        return;
    wd->sym = k;
    wd->a = a;
    wd->b = b;
}

/* `int64_t NAME = EXPR;` statements of run_impl, in order. */
static int parse_bindings(wmodel *m, const char *body, const char *end, af_error *err)
{
    const char *p = body;
    while ((p = af_cpp_find(p, end, "int64_t"))) {
        const char *q = p + 7;
        int word = (p == body || !af_is_ident_char((unsigned char)p[-1])) && q < end &&
                   isspace((unsigned char)*q);
        p = q;
        if (!word)
            continue;
        q = af_cpp_skip_ws(q, end);
        char name[AF_NAME_MAX];
        size_t n = 0;
        while (q < end && af_is_ident_char((unsigned char)*q) && n + 1 < sizeof name)
            name[n++] = *q++;
        name[n] = '\0';
        if (!n || (q < end && af_is_ident_char((unsigned char)*q)))
            continue;
        q = af_cpp_skip_ws(q, end);
        if (q >= end || *q != '=' || (q + 1 < end && q[1] == '='))
            continue;
        const char *stmt_end = memchr(q, ';', (size_t)(end - q));
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!stmt_end || (nl && nl < stmt_end))
            continue;
        af_lin v;
        if (af_lin_parse(q + 1, stmt_end, m->locals, m->n_locals, &v) < 0)
            continue;
        if (m->n_locals < W_MAX_LOCALS) {
            strcpy(m->locals[m->n_locals].name, name);
            m->locals[m->n_locals++].value = v;
        }
        int i, d;
        if (!is_symbol_name(name) || !v.var[0] || size_var_dim(m, v.var, &i, &d) < 0)
            continue;
        /* name = c1*size + c0, so size = (1/c1)*name - c0/c1. */
        af_rat a, b;
        if (af_rat_div((af_rat){1, 1}, v.c1, &a) < 0 || af_rat_div(v.c0, v.c1, &b) < 0)
            continue;
        if (a.d != 1 || b.d != 1 || a.n < 1)
            continue;
        wdim *wd = &m->inputs[i].dims[d];
        if (wd->is_static || wsym_find(m, name) >= 0)
            continue;
        if (wd->sym >= 0) {
            if (wd->a == a.n && wd->b == -b.n && wsym_add(m, name, wd->sym, err) < 0)
                return -1;
            continue;
        }
        int k = wsym_add(m, name, -1, err);
        if (k < 0)
            return -1;
        tie_dim(m, i, d, k, a.n, -b.n);
    }
    return 0;
}

/* assert_size_stride(NAME, {e0, e1, ...}, {...}, ...): the symbolic shape of NAME. */
static int parse_assert_size_stride(wmodel *m, const char *body, const char *end, af_error *err)
{
    const char *p = body;
    const char *key = "assert_size_stride(";
    while ((p = af_cpp_find(p, end, key))) {
        const char *q = af_cpp_skip_ws(p + strlen(key), end);
        p += strlen(key);
        const char *s = q;
        while (q < end && af_is_ident_char((unsigned char)*q))
            q++;
        int i = input_by_name(m, s, (size_t)(q - s));
        if (i < 0)
            continue;
        q = af_cpp_skip_ws(q, end);
        if (q >= end || *q != ',')
            continue;
        q = af_cpp_skip_ws(q + 1, end);
        if (q >= end || *q != '{')
            continue;
        const char *close = af_cpp_match_bracket(q, end);
        if (!close)
            continue;
        int d = 0;
        for (const char *e = q + 1; e < close && d < m->inputs[i].rank; d++) {
            const char *c = e;
            while (c < close && *c != ',') { /* entries hold no nested commas we read */
                if (*c == '(' || *c == '{' || *c == '[') {
                    const char *mb = af_cpp_match_bracket(c, close);
                    c = mb ? mb : close;
                }
                c++;
            }
            if (c > close)
                c = close;
            af_lin v;
            if (af_lin_parse(e, c, NULL, 0, &v) == 0 && v.var[0] && !strchr(v.var, '[') &&
                v.c1.d == 1 && v.c0.d == 1 && v.c1.n >= 1) {
                int k = wsym_find(m, v.var);
                if (k < 0 && !m->inputs[i].dims[d].is_static && m->inputs[i].dims[d].sym < 0)
                    k = wsym_add(m, v.var, -1, err);
                if (k < 0 && err && err->code != AF_OK)
                    return -1;
                if (k >= 0)
                    tie_dim(m, i, d, k, v.c1.n, v.c0.n);
            }
            e = c < close ? c + 1 : close;
        }
    }
    return 0;
}

/* Recompute every canonical symbol's range from the dims tied to it. */
static void compute_ranges(wmodel *m)
{
    for (int k = 0; k < m->n_syms; k++) {
        m->syms[k].lo = 0;
        m->syms[k].hi = AF_INT_LIMIT;
        m->syms[k].used = 0;
    }
    for (int i = 0; i < m->n_inputs; i++)
        for (int d = 0; d < m->inputs[i].rank; d++) {
            const wdim *wd = &m->inputs[i].dims[d];
            if (wd->is_static || wd->sym < 0)
                continue;
            wsym *s = &m->syms[wd->sym];
            /* lo' <= a*s + b <= hi'  =>  ceil((lo'-b)/a) <= s <= floor((hi'-b)/a) */
            int64_t lo = dim_lo(wd) - wd->b, hi = dim_hi(wd) - wd->b;
            int64_t slo = lo >= 0 ? (lo + wd->a - 1) / wd->a : -((-lo) / wd->a);
            int64_t shi = hi >= 0 ? hi / wd->a : -((-hi + wd->a - 1) / wd->a);
            if (slo > s->lo)
                s->lo = slo;
            if (shi < s->hi)
                s->hi = shi;
            s->used = 1;
        }
}

/* Step 3 of the file comment: tie each remaining dynamic dim by its range. */
static int infer_dims(wmodel *m, af_error *err)
{
    compute_ranges(m);
    for (int i = 0; i < m->n_inputs; i++)
        for (int d = 0; d < m->inputs[i].rank; d++) {
            wdim *wd = &m->inputs[i].dims[d];
            if (wd->is_static || wd->sym >= 0)
                continue;
            int64_t L2 = dim_lo(wd), U2 = dim_hi(wd);
            int n_match = 0, n_ident = 0, match = -1, ident = -1;
            int64_t ma = 0, mb = 0;
            for (int k = 0; k < m->n_syms; k++) {
                const wsym *s = &m->syms[k];
                if (s->alias_of >= 0 || !s->used || s->hi <= s->lo)
                    continue;
                /* An unbounded dim is no multiple of a bounded symbol, nor the reverse. */
                if ((U2 >= AF_INT_LIMIT) != (s->hi >= AF_INT_LIMIT))
                    continue;
                int64_t span = s->hi - s->lo, span2 = U2 - L2;
                if (span2 <= 0 || span2 % span != 0)
                    continue;
                int64_t a = span2 / span, b;
                if (__builtin_mul_overflow(a, s->lo, &b) || __builtin_sub_overflow(L2, b, &b))
                    continue; /* no linear tie that int64 holds */
                n_match++;
                match = k;
                ma = a;
                mb = b;
                if (a == 1 && b == 0) {
                    n_ident++;
                    ident = k;
                }
            }
            if (n_match == 1) {
                tie_dim(m, i, d, match, ma, mb);
            } else if (n_ident == 1) {
                tie_dim(m, i, d, ident, 1, 0);
            } else {
                char name[AF_NAME_MAX];
                int len = snprintf(name, sizeof name, "%s_size_%d", m->inputs[i].name, d);
                if (len < 0 || (size_t)len >= sizeof name || wsym_find(m, name) >= 0)
                    snprintf(name, sizeof name, "in%d_size_%d", i, d);
                int k = wsym_add(m, name, -1, err);
                if (k < 0)
                    return -1;
                tie_dim(m, i, d, k, 1, 0);
                m->syms[k].lo = L2;
                m->syms[k].hi = U2;
                m->syms[k].used = 1;
            }
        }
    compute_ranges(m);
    return 0;
}

static int build_spec(wmodel *m, af_spec *out, af_error *err)
{
    memset(out, 0, sizeof *out);
    out->source = AF_SPEC_WRAPPER;
    out->n_inputs = m->n_inputs;
    for (int k = 0; k < m->n_syms; k++)
        m->syms[k].out_index = -1;
    for (int i = 0; i < m->n_inputs; i++) {
        const winput *wi = &m->inputs[i];
        af_input *in = &out->inputs[i];
        strcpy(in->name, wi->name);
        in->dtype = (af_dtype)wi->dtype;
        in->rank = wi->rank;
        in->int_lo = 0;
        in->int_hi = AF_INT_ASSUMED_HI;
        in->int_from = AF_FROM_ASSUMED;
        in->name_from = AF_FROM_WRAPPER;
        for (int d = 0; d < wi->rank; d++) {
            const wdim *wd = &wi->dims[d];
            if (wd->is_static) {
                in->dims[d] = (af_dim){.sym = -1, .a = 0, .b = wd->value};
                continue;
            }
            wsym *s = &m->syms[wd->sym];
            if (s->out_index < 0) {
                if (out->n_syms >= AF_MAX_SYMS)
                    return af_error_set(err, AF_E_INPUT,
                                        "wrapper: too many size symbols (at most %d)", AF_MAX_SYMS);
                if (s->lo > s->hi)
                    return af_error_set(err, AF_E_INPUT,
                                        "wrapper: symbol %s: the dims using it have no common "
                                        "value (range [%" PRId64 ", %" PRId64 "])",
                                        s->name, s->lo, s->hi);
                s->out_index = out->n_syms++;
                af_symbol *as = &out->syms[s->out_index];
                strcpy(as->name, s->name);
                as->min = as->compiled_min = s->lo;
                as->max = as->compiled_max = s->hi;
                /* The wrapper knows only the compiled bounds: the declared ones are unknown. */
                as->decl_min = as->min;
                as->decl_max = as->max;
                as->decl_from = AF_FROM_ASSUMED;
            }
            in->dims[d] = (af_dim){.sym = s->out_index, .a = wd->a, .b = wd->b};
        }
    }
    return 0;
}

int af_spec_from_wrapper(const char *cpp_text, af_spec *out, af_error *err)
{
    if (!cpp_text || !out)
        return af_error_set(err, AF_E_INTERNAL, "wrapper: NULL argument");
    int rc = -1;
    wmodel *m = calloc(1, sizeof *m);
    if (!m)
        return af_error_set(err, AF_E_INTERNAL, "wrapper: out of memory");
    af_error e;
    af_error_clear(&e);
    const char *end = cpp_text + strlen(cpp_text);
    for (int i = 0; i < AF_MAX_INPUTS; i++) {
        m->inputs[i].dtype = -1;
        for (int d = 0; d < AF_MAX_RANK; d++)
            m->inputs[i].dims[d].sym = -1;
    }
    if (parse_check_inputs(m, cpp_text, end, &e) < 0)
        goto fail;
    const char *body_end = NULL;
    const char *body = find_run_impl(cpp_text, end, &body_end);
    if (body) {
        if (parse_bindings(m, body, body_end, &e) < 0 ||
            parse_assert_size_stride(m, body, body_end, &e) < 0)
            goto fail;
    }
    if (infer_dims(m, &e) < 0 || build_spec(m, out, &e) < 0)
        goto fail;
    rc = 0;
fail:
    if (rc < 0 && err)
        *err = e;
    free(m);
    return rc;
}
