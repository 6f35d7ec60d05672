/* spec.c — the shape spec of a model: the model itself (inputs, dims affine in one
 * symbol, symbols with their declared and compiled ranges, each fact with its origin), and
 * the comparison, merging and printing around it.
 *
 * A spec is read from one of three places, each in its own file: the spec JSON format
 * (spec_json.c: the spec aotif_export embeds in the package, a --spec file), the generated
 * AOTInductor wrapper .cpp (spec_wrapper.c, over the C++ scanner of cpp_scan.c), and the
 * serialized ExportedProgram (contract.c reads it, contract_apply.c rewrites a spec in its
 * terms). The dtypes are in dtype.c.
 *
 * Comparing: two specs from different sources name their symbols differently (s77 in the
 * wrapper, "batch" or s0 in a spec file), so symbols are matched by position of first use:
 * walking the inputs' dims in order, the k-th symbol met in one spec must be the k-th met
 * in the other, with the same coefficient and offset in every dim; then their upper and
 * compiled bounds must agree. Fitting (af_spec_fits_wrapper) is looser: a stated spec may
 * pin a dim the wrapper leaves dynamic, but not make dynamic or resize one it compiled
 * static. Printing names every fact's origin and ends with the contract gaps: declared
 * sizes below (or above) what the compiled checks accept. */
#include <cjson/cJSON.h>

#include "aotif/spec.h"

#include "spec_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- names */

const char *af_spec_source_name(af_spec_source s)
{
    switch (s) {
    case AF_SPEC_EMBEDDED:
        return "embedded";
    case AF_SPEC_WRAPPER:
        return "wrapper";
    case AF_SPEC_FILE:
        return "file";
    default:
        return "none";
    }
}

static const char *const origin_names[AF_FROM_COUNT] = {
    [AF_FROM_ASSUMED] = "assumed",        [AF_FROM_EXPORTED] = "exported program",
    [AF_FROM_EMBEDDED] = "embedded spec", [AF_FROM_WRAPPER] = "wrapper",
    [AF_FROM_FILE] = "spec file",
};

const char *af_origin_name(af_origin o)
{
    return (unsigned)o < AF_FROM_COUNT ? origin_names[o] : "assumed";
}

int af_origin_from_name(const char *name)
{
    for (int o = 0; o < AF_FROM_COUNT; o++)
        if (name && strcmp(name, origin_names[o]) == 0)
            return o;
    return -1;
}

int af_spec_find_symbol(const af_spec *spec, const char *name)
{
    if (!spec || !name || !*name)
        return -1;
    for (int k = 0; k < spec->n_syms; k++)
        if (strcmp(spec->syms[k].name, name) == 0)
            return k;
    for (int k = 0; k < spec->n_syms; k++)
        if (spec->syms[k].dim_name[0] && strcmp(spec->syms[k].dim_name, name) == 0)
            return k;
    return -1;
}

/* a*v + b, saturating at the int64 limits. */
static int64_t affine_sat(int64_t a, int64_t v, int64_t b)
{
    int64_t p, r;
    if (__builtin_mul_overflow(a, v, &p))
        return ((a < 0) != (v < 0)) ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(p, b, &r))
        return b < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

void af_spec_dim_str(const af_spec *spec, const af_dim *d, char *buf, size_t len)
{
    if (d->sym < 0 || d->sym >= spec->n_syms) {
        snprintf(buf, len, "%" PRId64, d->b);
        return;
    }
    const char *name = spec->syms[d->sym].name;
    char coef[32] = "", off[32] = "";
    if (d->a != 1)
        snprintf(coef, sizeof coef, "%" PRId64 "*", d->a);
    if (d->b > 0)
        snprintf(off, sizeof off, "+%" PRId64, d->b);
    else if (d->b < 0)
        snprintf(off, sizeof off, "%" PRId64, d->b);
    snprintf(buf, len, "%s%s%s", coef, name, off);
}

void af_spec_shape_str(const af_spec *spec, int input, const int64_t *values, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    buf[0] = '\0';
    if (!spec || input < 0 || input >= spec->n_inputs)
        return;
    const af_input *in = &spec->inputs[input];
    size_t off = 0;
#define APPEND(...)                                                                                \
    do {                                                                                           \
        if (off < len) {                                                                           \
            int n_ = snprintf(buf + off, len - off, __VA_ARGS__);                                  \
            off = n_ < 0 ? len : off + (size_t)n_;                                                 \
        }                                                                                          \
    } while (0)
    APPEND("(");
    for (int d = 0; d < in->rank; d++) {
        const af_dim *dim = &in->dims[d];
        if (d)
            APPEND(", ");
        if (dim->sym < 0) {
            APPEND("%" PRId64, dim->b);
        } else if (values) {
            APPEND("%" PRId64, affine_sat(dim->a, values[dim->sym], dim->b));
        } else {
            char e[160];
            af_spec_dim_str(spec, dim, e, sizeof e);
            APPEND("%s", e);
        }
    }
    APPEND(in->rank == 1 ? ",)" : ")");
#undef APPEND
}

void af_spec_widen_beyond_contract(af_spec *spec)
{
    spec->beyond_contract = 1;
    for (int k = 0; k < spec->n_syms; k++)
        spec->syms[k].min = 0;
}

int af_spec_contract_known(const af_spec *spec)
{
    for (int k = 0; k < spec->n_syms; k++)
        if (spec->syms[k].decl_from == AF_FROM_ASSUMED)
            return 0;
    return 1;
}

int af_spec_gap(const af_spec *spec, int k)
{
    const af_symbol *s = &spec->syms[k];
    return s->decl_from != AF_FROM_ASSUMED &&
           (s->compiled_min > s->decl_min || s->compiled_max < s->decl_max);
}

/* One symbol's line: its declared range with the origin, the compiled one, the explored one
 * when --beyond-contract widened it. */
static void print_symbol(const af_symbol *s, FILE *f)
{
    fprintf(f, "  symbol %s", s->name);
    if (s->dim_name[0])
        fprintf(f, " (%s)", s->dim_name);
    if (s->decl_from == AF_FROM_ASSUMED)
        fprintf(f, ": declared: unknown (assumed [%" PRId64 ", %" PRId64 "])", s->decl_min,
                s->decl_max);
    else
        fprintf(f, ": declared [%" PRId64 ", %" PRId64 "]%s (%s)", s->decl_min, s->decl_max,
                s->max_unbounded ? ", no upper bound: explored up to the max (assumed)" : "",
                af_origin_name(s->decl_from));
    fprintf(f, ", compiled [%" PRId64 ", %" PRId64 "]", s->compiled_min, s->compiled_max);
    if (s->min != s->decl_min || s->max != s->decl_max)
        fprintf(f, ", explored [%" PRId64 ", %" PRId64 "] (--beyond-contract)", s->min, s->max);
    fputc('\n', f);
}

/* The contract gaps: per symbol, the declared sizes the compiled code assumes away. */
static void print_gaps(const af_spec *spec, FILE *f)
{
    int gaps = 0;
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        if (!af_spec_gap(spec, k))
            continue;
        if (!gaps++)
            fputs("  contract gaps (declared legal, assumed away by the compiled code; "
                  "AOTI_RUNTIME_CHECK_INPUTS=1 rejects them too):\n",
                  f);
        fprintf(f,
                "    %s%s%s%s: declared [%" PRId64 ", %" PRId64 "], compiled [%" PRId64 ", %" PRId64
                "]: sizes",
                s->name, s->dim_name[0] ? " (" : "", s->dim_name, s->dim_name[0] ? ")" : "",
                s->decl_min, s->decl_max, s->compiled_min, s->compiled_max);
        if (s->compiled_min > s->decl_min) {
            fprintf(f, " %" PRId64, s->decl_min);
            if (s->compiled_min - 1 > s->decl_min)
                fprintf(f, "..%" PRId64, s->compiled_min - 1);
        }
        if (s->compiled_max < s->decl_max) {
            fprintf(f, "%s %" PRId64, s->compiled_min > s->decl_min ? " and" : "",
                    s->compiled_max + 1);
            if (s->decl_max > s->compiled_max + 1)
                fprintf(f, "..%" PRId64, s->decl_max);
        }
        fputc('\n', f);
    }
    if (!af_spec_contract_known(spec))
        fputs("  contract gaps: unknown (the declared ranges were not read)\n", f);
    else if (!gaps)
        fputs("  contract gaps: none\n", f);
}

void af_spec_print(const af_spec *spec, FILE *f)
{
    char shape[512];
    fprintf(f, "spec (%s): %d input%s, %d symbol%s\n", af_spec_source_name(spec->source),
            spec->n_inputs, spec->n_inputs == 1 ? "" : "s", spec->n_syms,
            spec->n_syms == 1 ? "" : "s");
    fprintf(f, "  contract: %s\n",
            spec->contract_src[0] ? spec->contract_src
            : af_spec_contract_known(spec)
                ? af_origin_name(spec->n_syms ? spec->syms[0].decl_from : AF_FROM_ASSUMED)
                : "not read (declared ranges unknown; give the unified archive, --exported or "
                  "--spec)");
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        af_spec_shape_str(spec, i, NULL, shape, sizeof shape);
        fprintf(f, "  input %d %s (name: %s): %s %s", i, in->name, af_origin_name(in->name_from),
                af_dtype_name(in->dtype), shape);
        if (!af_dtype_is_float(in->dtype) && in->dtype != AF_DT_BOOL) {
            fprintf(f, " values [%" PRId64 ", %" PRId64 "] (%s", in->int_lo, in->int_hi,
                    af_origin_name(in->int_from));
            if (in->int_why[0])
                fprintf(f, ": %s", in->int_why);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    for (int k = 0; k < spec->n_syms; k++)
        print_symbol(&spec->syms[k], f);
    print_gaps(spec, f);
}

/* ---------------------------------------------------------------- compare, merge */

/* rank_of[k]: the order in which symbol k is first used by a dim (-1: unused). */
static int first_use_order(const af_spec *s, int rank_of[AF_MAX_SYMS], int sym_at[AF_MAX_SYMS])
{
    int n = 0;
    for (int k = 0; k < AF_MAX_SYMS; k++)
        rank_of[k] = -1;
    for (int i = 0; i < s->n_inputs; i++)
        for (int d = 0; d < s->inputs[i].rank; d++) {
            int k = s->inputs[i].dims[d].sym;
            if (k >= 0 && k < s->n_syms && rank_of[k] < 0) {
                rank_of[k] = n;
                sym_at[n++] = k;
            }
        }
    return n;
}

int af_spec_compare(const af_spec *a, const af_spec *b, char *why, size_t why_len)
{
    int ra[AF_MAX_SYMS], rb[AF_MAX_SYMS], sa[AF_MAX_SYMS], sb[AF_MAX_SYMS];
    char ea[160], eb[160];
    char dummy[1];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (a->n_inputs != b->n_inputs) {
        snprintf(why, why_len, "%d inputs vs %d", a->n_inputs, b->n_inputs);
        return -1;
    }
    first_use_order(a, ra, sa);
    first_use_order(b, rb, sb);
    for (int i = 0; i < a->n_inputs; i++) {
        const af_input *x = &a->inputs[i], *y = &b->inputs[i];
        if (x->dtype != y->dtype) {
            snprintf(why, why_len, "input %d (%s/%s): dtype %s vs %s", i, x->name, y->name,
                     af_dtype_name(x->dtype), af_dtype_name(y->dtype));
            return -1;
        }
        if (x->rank != y->rank) {
            snprintf(why, why_len, "input %d (%s/%s): rank %d vs %d", i, x->name, y->name, x->rank,
                     y->rank);
            return -1;
        }
        for (int d = 0; d < x->rank; d++) {
            const af_dim *p = &x->dims[d], *q = &y->dims[d];
            int same = (p->sym < 0) == (q->sym < 0) && p->b == q->b &&
                       (p->sym < 0 || (p->sym < a->n_syms && q->sym < b->n_syms && p->a == q->a &&
                                       ra[p->sym] == rb[q->sym]));
            if (!same) {
                af_spec_dim_str(a, p, ea, sizeof ea);
                af_spec_dim_str(b, q, eb, sizeof eb);
                snprintf(why, why_len, "input %d (%s/%s): dim %d: %s vs %s", i, x->name, y->name, d,
                         ea, eb);
                return -1;
            }
        }
    }
    /* Same first-use structure, so both use the same number of symbols. */
    int n = first_use_order(a, ra, sa);
    for (int r = 0; r < n; r++) {
        const af_symbol *p = &a->syms[sa[r]], *q = &b->syms[sb[r]];
        if (p->max != q->max || p->compiled_min != q->compiled_min ||
            p->compiled_max != q->compiled_max) {
            snprintf(why, why_len,
                     "symbol %s/%s: max %" PRId64 " vs %" PRId64 ", compiled [%" PRId64 ", %" PRId64
                     "] vs [%" PRId64 ", %" PRId64 "]",
                     p->name, q->name, p->max, q->max, p->compiled_min, p->compiled_max,
                     q->compiled_min, q->compiled_max);
            return -1;
        }
    }
    return 0;
}

int af_spec_fits_wrapper(const af_spec *spec, const af_spec *wrapper, char *why, size_t why_len)
{
    char ea[160], eb[160];
    if (spec->n_inputs != wrapper->n_inputs) {
        snprintf(why, why_len, "it lists %d input%s, the model takes %d", spec->n_inputs,
                 spec->n_inputs == 1 ? "" : "s", wrapper->n_inputs);
        return -1;
    }
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *x = &spec->inputs[i], *y = &wrapper->inputs[i];
        if (x->dtype != y->dtype) {
            snprintf(why, why_len, "input %d (%s): dtype %s, the model reads %s", i, x->name,
                     af_dtype_name(x->dtype), af_dtype_name(y->dtype));
            return -1;
        }
        if (x->rank != y->rank) {
            snprintf(why, why_len, "input %d (%s): rank %d, the model reads rank %d", i, x->name,
                     x->rank, y->rank);
            return -1;
        }
        for (int d = 0; d < x->rank; d++) {
            const af_dim *p = &x->dims[d], *q = &y->dims[d];
            if (q->sym >= 0 || (p->sym < 0 && p->b == q->b))
                continue;
            af_spec_dim_str(spec, p, ea, sizeof ea);
            af_spec_dim_str(wrapper, q, eb, sizeof eb);
            snprintf(why, why_len, "input %d (%s) dim %d: %s, the model was compiled for %s", i,
                     x->name, d, ea, eb);
            return -1;
        }
    }
    return 0;
}

int af_spec_merge_compiled(af_spec *spec, const af_spec *wrapper)
{
    int n = 0;
    for (int k = 0; k < spec->n_syms; k++)
        for (int w = 0; w < wrapper->n_syms; w++)
            if (strcmp(spec->syms[k].name, wrapper->syms[w].name) == 0) {
                spec->syms[k].compiled_min = wrapper->syms[w].compiled_min;
                spec->syms[k].compiled_max = wrapper->syms[w].compiled_max;
                n++;
                break;
            }
    return n;
}

/* The contract gaps as JSON (spec.h). */
cJSON *af_spec_gaps_json(const af_spec *spec)
{
    cJSON *gaps = cJSON_CreateArray();
    for (int k = 0; gaps && k < spec->n_syms; k++) {
        if (!af_spec_gap(spec, k))
            continue;
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "symbol", spec->syms[k].name);
        cJSON_AddStringToObject(g, "dim", spec->syms[k].dim_name);
        cJSON_AddNumberToObject(g, "declared_min", (double)spec->syms[k].decl_min);
        cJSON_AddNumberToObject(g, "compiled_min", (double)spec->syms[k].compiled_min);
        cJSON_AddNumberToObject(g, "declared_max", (double)spec->syms[k].decl_max);
        cJSON_AddNumberToObject(g, "compiled_max", (double)spec->syms[k].compiled_max);
        cJSON_AddItemToArray(gaps, g);
    }
    return gaps;
}
