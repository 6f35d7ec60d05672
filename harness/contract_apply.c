/* contract_apply.c — check a contract read from the ExportedProgram (contract.c) against the
 * package's own spec (the wrapper's or an embedded one), and rewrite that spec in the
 * contract's terms, each fact marked as read from the exported program.
 *
 * Matching the package: dims are compared position by position (the structure must agree
 * exactly); each program symbol's compiled range is the intersection, over the dims that
 * use it, of the wrapper's compiled range for that dim mapped back through a*s + b. A
 * wrapper symbol bound to a dim (s<digits>) must stand for one program symbol throughout.
 * A dim the package fixed where the program keeps it dynamic (Inductor specialized it)
 * pins its symbol's compiled range to that one value.
 *
 * Writing: the program's names, dtypes and shapes; its symbols with their declared ranges
 * and the compiled ranges just computed (a compiled range reaching outside the declared one
 * belongs to another program and is refused); Dim names kept from the package's spec; and
 * each integer input's values bounded by its index use, a stated range only narrowing it. */
#include "aotif/contract.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t floor_div(int64_t n, int64_t d)
{
    int64_t q = n / d;
    return (n % d != 0 && ((n < 0) != (d < 0))) ? q - 1 : q;
}

static int is_bound_symbol(const char *name)
{
    /* s<digits>: a symbol the wrapper bound to a dim (not one it made up as <input>_size_<d>) */
    if (name[0] != 's' || !name[1])
        return 0;
    for (const char *p = name + 1; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

/* What matching the program's dims against the package's gathers. */
typedef struct match {
    int64_t lo[AF_MAX_SYMS], hi[AF_MAX_SYMS]; /* program symbol -> its compiled range */
    int wmap[AF_MAX_SYMS];                    /* package symbol -> contract symbol */
    int dim_from[AF_MAX_SYMS]; /* contract symbol -> a package symbol it matched, -1 */
} match;

/* Narrow program symbol k's compiled range to [lo, hi]. */
static void narrow(match *m, int k, int64_t lo, int64_t hi)
{
    if (lo > m->lo[k])
        m->lo[k] = lo;
    if (hi < m->hi[k])
        m->hi[k] = hi;
}

/* The message for a dim static in one and dynamic (or of another size) in the other. */
static int dim_mismatch(const char *src, int i, const char *name, int d, const af_contract_dim *cd,
                        const af_dim *pd, af_error *err)
{
    char a[32], b[32];
    if (cd->sym < 0)
        snprintf(a, sizeof a, "%" PRId64, cd->b);
    else
        snprintf(a, sizeof a, "dynamic");
    if (pd->sym < 0)
        snprintf(b, sizeof b, "%" PRId64, pd->b);
    else
        snprintf(b, sizeof b, "dynamic");
    return af_error_set(err, AF_E_INPUT,
                        "%s does not match the package: input %d (%s) dim %d: %s in "
                        "the exported program, %s in the package",
                        src, i, name, d, a, b);
}

/* Dim d of input i: the same structure in both; a dynamic one maps the package's compiled
 * range for it onto the program's symbol. */
static int match_dim(const af_contract *c, const af_spec *pk, const char *src, int i, int d,
                     match *m, af_error *err)
{
    const af_contract_dim *cd = &c->inputs[i].dims[d];
    const af_dim *pd = &pk->inputs[i].dims[d];
    if (cd->sym >= 0 && pd->sym < 0) {
        /* The package fixed a dim the program keeps dynamic (Inductor specialized it:
         * adaptive pooling): the compiled range of that symbol is the one value. */
        int64_t num = pd->b - cd->b;
        if (num >= 0 && num % cd->a == 0) {
            narrow(m, cd->sym, num / cd->a, num / cd->a);
            return 0;
        }
    }
    if ((cd->sym < 0) != (pd->sym < 0) || (cd->sym < 0 && cd->b != pd->b))
        return dim_mismatch(src, i, c->inputs[i].name, d, cd, pd, err);
    if (cd->sym < 0)
        return 0;
    const af_symbol *ps = &pk->syms[pd->sym];
    if (is_bound_symbol(ps->name)) {
        if (m->wmap[pd->sym] >= 0 && m->wmap[pd->sym] != cd->sym)
            return af_error_set(err, AF_E_INPUT,
                                "%s does not match the package: the package's symbol %s "
                                "stands for both %s and %s of the exported program",
                                src, ps->name, c->syms[m->wmap[pd->sym]].name,
                                c->syms[cd->sym].name);
        m->wmap[pd->sym] = cd->sym;
    }
    if (m->dim_from[cd->sym] < 0 || !strcmp(ps->name, c->syms[cd->sym].name))
        m->dim_from[cd->sym] = pd->sym;
    /* the package's compiled range for this dim, mapped back onto the program's symbol */
    int64_t dlo = pd->a * ps->compiled_min + pd->b;
    int64_t dhi = ps->compiled_max >= AF_INT_LIMIT ? INT64_MAX : pd->a * ps->compiled_max + pd->b;
    int64_t slo = -floor_div(-(dlo - cd->b), cd->a); /* ceil */
    int64_t shi = dhi == INT64_MAX ? INT64_MAX : floor_div(dhi - cd->b, cd->a);
    narrow(m, cd->sym, slo, shi);
    return 0;
}

/* Every input: the same count, dtypes and ranks, and every dim matched. */
static int match_inputs(const af_contract *c, const af_spec *pk, const char *src, match *m,
                        af_error *err)
{
    if (c->n_inputs != pk->n_inputs)
        return af_error_set(err, AF_E_INPUT,
                            "%s does not match the package: the exported program has %d "
                            "input%s, the package %d",
                            src, c->n_inputs, c->n_inputs == 1 ? "" : "s", pk->n_inputs);
    for (int k = 0; k < AF_MAX_SYMS; k++) {
        m->lo[k] = 0;
        m->hi[k] = INT64_MAX;
        m->wmap[k] = -1;
        m->dim_from[k] = -1;
    }
    for (int i = 0; i < c->n_inputs; i++) {
        const af_contract_input *ci = &c->inputs[i];
        const af_input *pi = &pk->inputs[i];
        if (ci->dtype != pi->dtype)
            return af_error_set(err, AF_E_INPUT,
                                "%s does not match the package: input %d (%s): dtype %s in the "
                                "exported program, %s in the package",
                                src, i, ci->name, af_dtype_name(ci->dtype),
                                af_dtype_name(pi->dtype));
        if (ci->rank != pi->rank)
            return af_error_set(err, AF_E_INPUT,
                                "%s does not match the package: input %d (%s): rank %d in the "
                                "exported program, %d in the package",
                                src, i, ci->name, ci->rank, pi->rank);
        for (int d = 0; d < ci->rank; d++)
            if (match_dim(c, pk, src, i, d, m, err) < 0)
                return -1;
    }
    return 0;
}

/* Symbol k of the result: the program's name and declared range, the package's Dim name,
 * the compiled range the match found. */
static int write_symbol(const af_contract *c, const af_spec *pk, const char *src, const match *m,
                        int k, af_symbol *s, af_error *err)
{
    const af_contract_sym *cs = &c->syms[k];
    const int64_t lo = m->lo[k], hi = m->hi[k];
    snprintf(s->name, sizeof s->name, "%s", cs->name);
    if (m->dim_from[k] >= 0)
        snprintf(s->dim_name, sizeof s->dim_name, "%s", pk->syms[m->dim_from[k]].dim_name);
    s->min = s->decl_min = cs->min;
    s->max = s->decl_max = cs->max;
    s->decl_from = AF_FROM_EXPORTED;
    s->max_unbounded = cs->max_unbounded;
    s->compiled_min = lo > cs->min ? lo : cs->min;
    /* no upper check in the package: say so (AF_INT_LIMIT), and there is nothing to match */
    s->compiled_max = hi == INT64_MAX ? AF_INT_LIMIT : hi;
    /* Compiling only narrows a declared range (0/1 specialization below, a backend's
     * guard above: a conv's "batch < 16"); a compiled range reaching outside the
     * declared one belongs to another program. */
    if (!cs->max_unbounded && hi != INT64_MAX && s->compiled_max > cs->max)
        return af_error_set(err, AF_E_INPUT,
                            "%s does not match the package: symbol %s: declared max %" PRId64
                            " in the exported program, but the package runs up to %" PRId64,
                            src, cs->name, cs->max, s->compiled_max);
    if (lo < cs->min && lo < 2)
        ; /* the package checks less than declared: nothing contradicts */
    else if (lo < cs->min)
        return af_error_set(err, AF_E_INPUT,
                            "%s does not match the package: symbol %s: declared min %" PRId64
                            " in the exported program, but the package runs from %" PRId64,
                            src, cs->name, cs->min, lo);
    if (s->compiled_max < s->compiled_min)
        s->compiled_max = s->compiled_min;
    return 0;
}

/* Input i of the result: the program's name, dtype and shape; the value range the program's
 * index use bounds, a stated one (from the package's spec) only narrowing it. */
static void write_input(const af_contract_input *ci, const af_input *pi, af_input *in)
{
    snprintf(in->name, sizeof in->name, "%s", ci->name);
    in->name_from = AF_FROM_EXPORTED;
    in->dtype = ci->dtype;
    in->rank = ci->rank;
    for (int d = 0; d < ci->rank; d++)
        in->dims[d] = (af_dim){.sym = ci->dims[d].sym, .a = ci->dims[d].a, .b = ci->dims[d].b};
    in->int_lo = pi->int_lo;
    in->int_hi = pi->int_hi;
    in->int_from = pi->int_from;
    snprintf(in->int_why, sizeof in->int_why, "%s", pi->int_why);
    if (ci->is_float || ci->dtype == AF_DT_BOOL)
        return;
    if (ci->index_hi >= 0) {
        /* The program's use bounds the values; a stated range may only narrow it. */
        if (in->int_from == AF_FROM_ASSUMED || in->int_hi > ci->index_hi || in->int_lo < 0) {
            in->int_lo = in->int_lo < 0 || in->int_from == AF_FROM_ASSUMED ? 0 : in->int_lo;
            if (in->int_lo > ci->index_hi)
                in->int_lo = 0;
            in->int_hi = ci->index_hi;
            in->int_from = AF_FROM_EXPORTED;
            snprintf(in->int_why, sizeof in->int_why, "%s", ci->index_why);
        }
    } else if (in->int_from == AF_FROM_ASSUMED) {
        in->int_lo = 0;
        in->int_hi = AF_INT_ASSUMED_HI;
        snprintf(in->int_why, sizeof in->int_why, "no index use in the exported program");
    }
}

/* The whole of af_contract_apply into a fresh *out (zeroed), `pk` untouched. */
static int apply(const af_contract *c, const af_spec *pk, const char *src, af_spec *out,
                 af_error *err)
{
    match m;
    if (match_inputs(c, pk, src, &m, err) < 0)
        return -1;
    out->source = pk->source;
    out->beyond_contract = pk->beyond_contract;
    snprintf(out->contract_src, sizeof out->contract_src, "%s", src);
    out->n_syms = c->n_syms;
    for (int k = 0; k < c->n_syms; k++)
        if (write_symbol(c, pk, src, &m, k, &out->syms[k], err) < 0)
            return -1;
    /* Dim names must stay unique; a package symbol that matched two program symbols
     * (possible only for a made-up one) gives its Dim name to the first. */
    for (int k = 0; k < out->n_syms; k++)
        for (int j = 0; j < k; j++)
            if (out->syms[k].dim_name[0] && !strcmp(out->syms[k].dim_name, out->syms[j].dim_name))
                out->syms[k].dim_name[0] = '\0';
    out->n_inputs = c->n_inputs;
    for (int i = 0; i < c->n_inputs; i++)
        write_input(&c->inputs[i], &pk->inputs[i], &out->inputs[i]);
    return 0;
}

int af_contract_apply(const af_contract *c, af_spec *spec, const char *src, af_error *err)
{
    af_spec *out = calloc(1, sizeof *out);
    if (!out)
        return af_error_set(err, AF_E_INTERNAL, "out of memory");
    int rc = apply(c, spec, src, out, err);
    if (rc == 0)
        *spec = *out;
    free(out);
    return rc;
}
