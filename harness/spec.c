/* spec.c — the shape spec of a model: the JSON format, its recovery from a generated
 * AOTInductor wrapper .cpp, and the comparison, merging and printing around it.
 *
 * JSON (docs/spec-format.md) is parsed with cJSON; every problem is one AF_E_INPUT line
 * that names the JSON path ("spec: inputs[1].shape[0]: unknown symbol 's9'").
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
 *     an alias of it. Only locals named s<digits> are symbols.
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
#include "aotif/json.h"

#include "aotif/fileio.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- dtypes */

static const struct {
    const char *name;
    size_t size;
    int is_float;
    int64_t lo, hi; /* value range that an int_range must fit */
} dtype_info[AF_DT_COUNT] = {
    [AF_DT_FLOAT32] = {"float32", 4, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_FLOAT16] = {"float16", 2, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_BFLOAT16] = {"bfloat16", 2, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_FLOAT64] = {"float64", 8, 1, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_INT64] = {"int64", 8, 0, -AF_INT_LIMIT, AF_INT_LIMIT},
    [AF_DT_INT32] = {"int32", 4, 0, INT32_MIN, INT32_MAX},
    [AF_DT_INT16] = {"int16", 2, 0, INT16_MIN, INT16_MAX},
    [AF_DT_INT8] = {"int8", 1, 0, INT8_MIN, INT8_MAX},
    [AF_DT_UINT8] = {"uint8", 1, 0, 0, UINT8_MAX},
    [AF_DT_BOOL] = {"bool", 1, 0, 0, 1},
};

/* torch's other spellings of the same dtypes (torch.float is torch.float32, ...). */
static const struct {
    const char *alias;
    af_dtype dt;
} dtype_alias[] = {
    {"float", AF_DT_FLOAT32}, {"half", AF_DT_FLOAT16}, {"double", AF_DT_FLOAT64},
    {"long", AF_DT_INT64},    {"int", AF_DT_INT32},    {"short", AF_DT_INT16},
};

static int dtype_valid(af_dtype dt)
{
    return (int)dt >= 0 && dt < AF_DT_COUNT;
}

const char *af_dtype_name(af_dtype dt)
{
    return dtype_valid(dt) ? dtype_info[dt].name : "?";
}

int af_dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    if (strncmp(name, "torch.", 6) == 0)
        name += 6;
    for (int i = 0; i < AF_DT_COUNT; i++)
        if (strcmp(name, dtype_info[i].name) == 0)
            return i;
    for (size_t i = 0; i < sizeof dtype_alias / sizeof dtype_alias[0]; i++)
        if (strcmp(name, dtype_alias[i].alias) == 0)
            return (int)dtype_alias[i].dt;
    return -1;
}

size_t af_dtype_size(af_dtype dt)
{
    return dtype_valid(dt) ? dtype_info[dt].size : 0;
}

int af_dtype_is_float(af_dtype dt)
{
    return dtype_valid(dt) && dtype_info[dt].is_float;
}

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

static af_origin origin_of_source(af_spec_source s)
{
    switch (s) {
    case AF_SPEC_EMBEDDED:
        return AF_FROM_EMBEDDED;
    case AF_SPEC_WRAPPER:
        return AF_FROM_WRAPPER;
    case AF_SPEC_FILE:
        return AF_FROM_FILE;
    default:
        return AF_FROM_ASSUMED;
    }
}

/* An optional "..._from" member naming an origin; `dflt` when absent. */
static int json_origin(const cJSON *obj, const char *key, af_origin dflt, af_origin *out, char *why,
                       size_t wl)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = dflt;
    if (!v)
        return 0;
    int o = cJSON_IsString(v) ? af_origin_from_name(v->valuestring) : -1;
    if (o < 0) {
        snprintf(why, wl,
                 "\"%s\" must be one of \"exported program\", \"embedded spec\", "
                 "\"wrapper\", \"spec file\", \"assumed\"",
                 key);
        return -1;
    }
    *out = (af_origin)o;
    return 0;
}

/* ---------------------------------------------------------------- small helpers */

static int is_ident_start(int c)
{
    return isalpha(c) || c == '_';
}

static int is_ident_char(int c)
{
    return isalnum(c) || c == '_';
}

static int is_identifier(const char *s)
{
    if (!is_ident_start((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!is_ident_char((unsigned char)*s))
            return 0;
    return 1;
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

/* Render one dim: "16", "s77", "2*s77", "2*s77+1", "s77-1". */
static void dim_expr_str(const af_spec *spec, const af_dim *d, char *buf, size_t len)
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

/* ---------------------------------------------------------------- JSON in */

/* An integer JSON number within +-AF_INT_LIMIT: 0; not a number or not integral: -1;
 * out of range: -2. */
static int json_int(const cJSON *item, int64_t *out)
{
    if (!cJSON_IsNumber(item))
        return -1;
    double v = item->valuedouble;
    if (!isfinite(v) || v != floor(v))
        return -1;
    if (fabs(v) > (double)AF_INT_LIMIT)
        return -2;
    *out = (int64_t)v;
    return 0;
}

/* Strict parser of a dim string: "K", "SYM", "A*SYM", "SYM+B", "SYM-B", "A*SYM+B",
 * "A*SYM-B", spaces allowed around the operators. SYM is a symbol or Dim name. */
static int parse_dim_string(const char *s, const af_spec *spec, af_dim *out, char *why,
                            size_t why_len)
{
    const char *p = s;
    int64_t a = 1, b = 0;
    char name[AF_NAME_MAX];
    size_t n = 0;

#define SKIP_WS()                                                                                  \
    while (*p == ' ')                                                                              \
    p++
#define BAD()                                                                                      \
    do {                                                                                           \
        snprintf(why, why_len,                                                                     \
                 "bad dim expression '%s' (expected an integer, SYM, a*SYM, SYM+b, "               \
                 "SYM-b or a*SYM+b)",                                                              \
                 s);                                                                               \
        return -1;                                                                                 \
    } while (0)

    SKIP_WS();
    if (isdigit((unsigned char)*p)) {
        errno = 0;
        char *e;
        long long v = strtoll(p, &e, 10);
        if (errno == ERANGE || v > AF_INT_LIMIT) {
            snprintf(why, why_len, "number out of range in '%s' (at most 2^53)", s);
            return -1;
        }
        p = e;
        SKIP_WS();
        if (*p == '\0') {
            *out = (af_dim){.sym = -1, .a = 0, .b = v};
            return 0;
        }
        if (*p != '*')
            BAD();
        p++;
        SKIP_WS();
        a = v;
    }
    if (!is_ident_start((unsigned char)*p))
        BAD();
    while (is_ident_char((unsigned char)*p)) {
        if (n + 1 >= sizeof name) {
            snprintf(why, why_len, "symbol name too long in '%s'", s);
            return -1;
        }
        name[n++] = *p++;
    }
    name[n] = '\0';
    SKIP_WS();
    if (*p == '+' || *p == '-') {
        int neg = *p == '-';
        p++;
        SKIP_WS();
        if (!isdigit((unsigned char)*p))
            BAD();
        errno = 0;
        char *e;
        long long v = strtoll(p, &e, 10);
        if (errno == ERANGE || v > AF_INT_LIMIT) {
            snprintf(why, why_len, "number out of range in '%s' (at most 2^53)", s);
            return -1;
        }
        p = e;
        b = neg ? -v : v;
        SKIP_WS();
    }
    if (*p != '\0')
        BAD();
    if (a < 1) {
        snprintf(why, why_len, "coefficient must be >= 1 in '%s'", s);
        return -1;
    }
    int k = af_spec_find_symbol(spec, name);
    if (k < 0) {
        snprintf(why, why_len, "unknown symbol '%s'", name);
        return -1;
    }
    *out = (af_dim){.sym = k, .a = a, .b = b};
    return 0;
#undef SKIP_WS
#undef BAD
}

/* Copy a JSON string member into dst; 0 ok, -1 with why filled. */
static int json_name(const cJSON *obj, const char *key, int required, char *dst, size_t cap,
                     char *why, size_t why_len)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (required) {
            snprintf(why, why_len, "missing \"%s\"", key);
            return -1;
        }
        dst[0] = '\0';
        return 0;
    }
    if (!cJSON_IsString(it) || !it->valuestring) {
        snprintf(why, why_len, "\"%s\" must be a string", key);
        return -1;
    }
    if (strlen(it->valuestring) >= cap) {
        snprintf(why, why_len, "\"%s\" is longer than %zu characters", key, cap - 1);
        return -1;
    }
    strcpy(dst, it->valuestring);
    return 0;
}

/* Read an integer member; 0 ok, 1 absent (when optional), -1 with why. */
static int json_member_int(const cJSON *obj, const char *key, int required, int64_t *out, char *why,
                           size_t why_len)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (!required)
            return 1;
        snprintf(why, why_len, "missing \"%s\"", key);
        return -1;
    }
    int rc = json_int(it, out);
    if (rc == -1) {
        snprintf(why, why_len, "\"%s\" must be an integer", key);
        return -1;
    }
    if (rc == -2) {
        snprintf(why, why_len, "\"%s\" is out of range (|value| <= 2^53)", key);
        return -1;
    }
    return 0;
}

static int parse_symbol(const cJSON *js, af_spec *spec, int k, char *why, size_t wl)
{
    af_symbol *sym = &spec->syms[k];
    if (!cJSON_IsObject(js)) {
        snprintf(why, wl, "must be an object");
        return -1;
    }
    if (json_name(js, "name", 1, sym->name, sizeof sym->name, why, wl) < 0)
        return -1;
    if (!is_identifier(sym->name)) {
        snprintf(why, wl, "name '%s' is not an identifier", sym->name);
        return -1;
    }
    if (json_name(js, "dim", 0, sym->dim_name, sizeof sym->dim_name, why, wl) < 0)
        return -1;
    if (sym->dim_name[0] && !is_identifier(sym->dim_name)) {
        snprintf(why, wl, "dim '%s' is not an identifier", sym->dim_name);
        return -1;
    }
    for (int j = 0; j < k; j++) {
        if (strcmp(spec->syms[j].name, sym->name) == 0) {
            snprintf(why, wl, "duplicate symbol '%s'", sym->name);
            return -1;
        }
        if (sym->dim_name[0] && strcmp(spec->syms[j].dim_name, sym->dim_name) == 0) {
            snprintf(why, wl, "duplicate dim '%s'", sym->dim_name);
            return -1;
        }
    }
    if (json_member_int(js, "min", 1, &sym->min, why, wl) < 0 ||
        json_member_int(js, "max", 1, &sym->max, why, wl) < 0)
        return -1;
    if (sym->min < 0) {
        snprintf(why, wl, "min %" PRId64 " is negative", sym->min);
        return -1;
    }
    if (sym->min > sym->max) {
        snprintf(why, wl, "min %" PRId64 " > max %" PRId64, sym->min, sym->max);
        return -1;
    }
    sym->decl_min = sym->min;
    sym->decl_max = sym->max;
    if (json_origin(js, "declared_from", origin_of_source(spec->source), &sym->decl_from, why, wl) <
        0)
        return -1;
    const cJSON *unb = cJSON_GetObjectItemCaseSensitive(js, "max_unbounded");
    sym->max_unbounded = cJSON_IsTrue(unb);
    int rc = json_member_int(js, "compiled_min", 0, &sym->compiled_min, why, wl);
    if (rc < 0)
        return -1;
    if (rc == 1)
        sym->compiled_min = sym->min;
    rc = json_member_int(js, "compiled_max", 0, &sym->compiled_max, why, wl);
    if (rc < 0)
        return -1;
    if (rc == 1)
        sym->compiled_max = sym->max;
    if (sym->compiled_min < 0) {
        snprintf(why, wl, "compiled_min %" PRId64 " is negative", sym->compiled_min);
        return -1;
    }
    if (sym->compiled_min > sym->compiled_max) {
        snprintf(why, wl, "compiled_min %" PRId64 " > compiled_max %" PRId64, sym->compiled_min,
                 sym->compiled_max);
        return -1;
    }
    return 0;
}

/* Parses input i; on error fills why and sets *where to the sub-path ("shape[0]") if any. */
static int parse_input(const cJSON *js, af_spec *spec, int i, char *where, size_t wherel, char *why,
                       size_t wl)
{
    af_input *in = &spec->inputs[i];
    where[0] = '\0';
    if (!cJSON_IsObject(js)) {
        snprintf(why, wl, "must be an object");
        return -1;
    }
    if (json_name(js, "name", 1, in->name, sizeof in->name, why, wl) < 0)
        return -1;
    if (!in->name[0]) {
        snprintf(why, wl, "\"name\" is empty");
        return -1;
    }
    for (int j = 0; j < i; j++)
        if (strcmp(spec->inputs[j].name, in->name) == 0) {
            snprintf(why, wl, "duplicate input name '%s'", in->name);
            return -1;
        }

    char dtname[32];
    if (json_name(js, "dtype", 1, dtname, sizeof dtname, why, wl) < 0)
        return -1;
    int dt = af_dtype_from_name(dtname);
    if (dt < 0 || dt >= AF_DT_COUNT) {
        snprintf(why, wl, "unknown dtype '%s'", dtname);
        return -1;
    }
    in->dtype = (af_dtype)dt;

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(js, "shape");
    if (!shape) {
        snprintf(why, wl, "missing \"shape\"");
        return -1;
    }
    if (!cJSON_IsArray(shape)) {
        snprintf(why, wl, "\"shape\" must be an array");
        return -1;
    }
    int rank = cJSON_GetArraySize(shape);
    if (rank > AF_MAX_RANK) {
        snprintf(why, wl, "rank %d exceeds the limit of %d", rank, AF_MAX_RANK);
        return -1;
    }
    in->rank = rank;
    int d = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, shape)
    {
        snprintf(where, wherel, ".shape[%d]", d);
        af_dim *dim = &in->dims[d];
        if (cJSON_IsString(e)) {
            if (parse_dim_string(e->valuestring, spec, dim, why, wl) < 0)
                return -1;
        } else {
            int64_t v;
            int rc = json_int(e, &v);
            if (rc == -1) {
                snprintf(why, wl, "must be an integer or a string like \"2*s77+1\"");
                return -1;
            }
            if (rc == -2) {
                snprintf(why, wl, "is out of range (at most 2^53)");
                return -1;
            }
            *dim = (af_dim){.sym = -1, .a = 0, .b = v};
        }
        if (dim->sym < 0 && dim->b < 0) {
            snprintf(why, wl, "static size %" PRId64 " is negative", dim->b);
            return -1;
        }
        d++;
    }
    where[0] = '\0';

    af_origin here = origin_of_source(spec->source);
    if (json_origin(js, "name_from", here, &in->name_from, why, wl) < 0)
        return -1;
    /* Without a stated range, integer inputs get values valid for any table (AF_INT_ASSUMED_HI). */
    in->int_lo = 0;
    in->int_hi = AF_INT_ASSUMED_HI;
    in->int_from = AF_FROM_ASSUMED;
    const cJSON *ir = cJSON_GetObjectItemCaseSensitive(js, "int_range");
    if (ir) {
        if (json_origin(js, "int_range_from", here, &in->int_from, why, wl) < 0)
            return -1;
        const cJSON *iw = cJSON_GetObjectItemCaseSensitive(js, "int_range_why");
        if (cJSON_IsString(iw))
            snprintf(in->int_why, sizeof in->int_why, "%s", iw->valuestring);
        snprintf(where, wherel, ".int_range");
        if (!cJSON_IsArray(ir) || cJSON_GetArraySize(ir) != 2) {
            snprintf(why, wl, "must be an array [lo, hi]");
            return -1;
        }
        if (json_int(cJSON_GetArrayItem(ir, 0), &in->int_lo) < 0 ||
            json_int(cJSON_GetArrayItem(ir, 1), &in->int_hi) < 0) {
            snprintf(why, wl, "lo and hi must be integers within +-2^53");
            return -1;
        }
        if (in->int_lo > in->int_hi) {
            snprintf(why, wl, "lo %" PRId64 " > hi %" PRId64, in->int_lo, in->int_hi);
            return -1;
        }
        if (!af_dtype_is_float(in->dtype) &&
            (in->int_lo < dtype_info[dt].lo || in->int_hi > dtype_info[dt].hi)) {
            snprintf(why, wl, "[%" PRId64 ", %" PRId64 "] does not fit %s", in->int_lo, in->int_hi,
                     af_dtype_name(in->dtype));
            return -1;
        }
        where[0] = '\0';
    }
    return 0;
}

/* Line and column (1-based) of position pos in text. */
static void text_position(const char *text, const char *pos, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < pos && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int af_spec_from_json(const char *text, af_spec_source source, af_spec *out, af_error *err)
{
    char why[256], where[32];
    cJSON *root = NULL;

    if (!text || !out)
        return af_error_set(err, AF_E_INTERNAL, "spec: NULL argument");
    memset(out, 0, sizeof *out);
    out->source = source;

    const char *end = NULL;
    root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line, col;
        text_position(text, end ? end : text, &line, &col);
        af_error_set(err, AF_E_INPUT, "spec: invalid JSON near line %d, column %d", line, col);
        goto fail;
    }
    if (!cJSON_IsObject(root)) {
        af_error_set(err, AF_E_INPUT, "spec: the top level must be a JSON object");
        goto fail;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "aoti-fuzz-spec") != 0) {
        af_error_set(err, AF_E_INPUT, "spec: \"format\" must be \"aoti-fuzz-spec\"");
        goto fail;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    int64_t version;
    if (!ver || json_int(ver, &version) < 0) {
        af_error_set(err, AF_E_INPUT, "spec: \"version\" must be the integer 1");
        goto fail;
    }
    if (version != 1) {
        af_error_set(err, AF_E_INPUT, "spec: unsupported version %" PRId64 " (this reads 1)",
                     version);
        goto fail;
    }

    /* Symbols first: the shapes refer to them. */
    const cJSON *syms = cJSON_GetObjectItemCaseSensitive(root, "symbols");
    if (syms) {
        if (!cJSON_IsArray(syms)) {
            af_error_set(err, AF_E_INPUT, "spec: \"symbols\" must be an array");
            goto fail;
        }
        int n = cJSON_GetArraySize(syms);
        if (n > AF_MAX_SYMS) {
            af_error_set(err, AF_E_INPUT, "spec: too many symbols (%d; at most %d)", n,
                         AF_MAX_SYMS);
            goto fail;
        }
        int k = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, syms)
        {
            if (parse_symbol(e, out, k, why, sizeof why) < 0) {
                af_error_set(err, AF_E_INPUT, "spec: symbols[%d]: %s", k, why);
                goto fail;
            }
            out->n_syms = ++k;
        }
    }

    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    if (!inputs) {
        af_error_set(err, AF_E_INPUT, "spec: missing \"inputs\"");
        goto fail;
    }
    if (!cJSON_IsArray(inputs)) {
        af_error_set(err, AF_E_INPUT, "spec: \"inputs\" must be an array");
        goto fail;
    }
    int n = cJSON_GetArraySize(inputs);
    if (n > AF_MAX_INPUTS) {
        af_error_set(err, AF_E_INPUT, "spec: too many inputs (%d; at most %d)", n, AF_MAX_INPUTS);
        goto fail;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, inputs)
    {
        if (parse_input(e, out, i, where, sizeof where, why, sizeof why) < 0) {
            af_error_set(err, AF_E_INPUT, "spec: inputs[%d]%s: %s", i, where, why);
            goto fail;
        }
        out->n_inputs = ++i;
    }
    cJSON_Delete(root);
    return 0;

fail:
    cJSON_Delete(root);
    return -1;
}

/* Read a whole file, NUL-terminated; malloc'ed. */
int af_spec_from_file(const char *path, af_spec *out, af_error *err)
{
    af_error e;
    af_error_clear(&e);
    size_t len = 0;
    char *text = af_read_file(path, 16u << 20, &len, &e);
    if (!text) {
        if (err)
            *err = e;
        return -1;
    }
    if (strlen(text) != len) {
        free(text);
        return af_error_set(err, AF_E_INPUT, "%s: contains a NUL byte", path);
    }
    int rc = af_spec_from_json(text, AF_SPEC_FILE, out, &e);
    free(text);
    if (rc < 0)
        return af_error_set(err, e.code, "%s: %s", path, e.message);
    return 0;
}

/* ---------------------------------------------------------------- JSON out, printing */

/* cJSON prints doubles with %.15g and a relative round-trip test, which loses the last
 * digits of integers near 2^53; integers are written as raw decimal text instead. */
static cJSON *json_i64(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_CreateRaw(buf);
}

static int add_i64(cJSON *obj, const char *key, int64_t v)
{
    cJSON *n = json_i64(v);
    if (!n)
        return 0;
    if (!cJSON_AddItemToObject(obj, key, n)) {
        cJSON_Delete(n);
        return 0;
    }
    return 1;
}

char *af_spec_to_json(const af_spec *spec)
{
    char buf[160];
    char *text = NULL;
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    if (!cJSON_AddStringToObject(root, "format", "aoti-fuzz-spec") ||
        !cJSON_AddNumberToObject(root, "version", 1))
        goto done;
    cJSON *inputs = cJSON_AddArrayToObject(root, "inputs");
    if (!inputs)
        goto done;
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(inputs, o))
            goto done;
        cJSON *shape;
        if (!cJSON_AddStringToObject(o, "name", in->name) ||
            !cJSON_AddStringToObject(o, "dtype", af_dtype_name(in->dtype)) ||
            !(shape = cJSON_AddArrayToObject(o, "shape")))
            goto done;
        for (int d = 0; d < in->rank; d++) {
            cJSON *v;
            if (in->dims[d].sym < 0) {
                v = json_i64(in->dims[d].b);
            } else {
                dim_expr_str(spec, &in->dims[d], buf, sizeof buf);
                v = cJSON_CreateString(buf);
            }
            if (!v || !cJSON_AddItemToArray(shape, v))
                goto done;
        }
        if (!cJSON_AddStringToObject(o, "name_from", af_origin_name(in->name_from)))
            goto done;
        /* int_range matters for integer dtypes only; an assumed one is written too, with
         * its origin, so a reader sees what values the tools use. */
        if (!af_dtype_is_float(in->dtype)) {
            cJSON *r = cJSON_AddArrayToObject(o, "int_range");
            if (!r || !cJSON_AddItemToArray(r, json_i64(in->int_lo)) ||
                !cJSON_AddItemToArray(r, json_i64(in->int_hi)) ||
                !cJSON_AddStringToObject(o, "int_range_from", af_origin_name(in->int_from)))
                goto done;
            if (in->int_why[0] && !cJSON_AddStringToObject(o, "int_range_why", in->int_why))
                goto done;
        }
    }
    cJSON *syms = cJSON_AddArrayToObject(root, "symbols");
    if (!syms)
        goto done;
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(syms, o))
            goto done;
        if (!cJSON_AddStringToObject(o, "name", s->name) ||
            !cJSON_AddStringToObject(o, "dim", s->dim_name) || !add_i64(o, "min", s->decl_min) ||
            !add_i64(o, "max", s->decl_max) ||
            !cJSON_AddStringToObject(o, "declared_from", af_origin_name(s->decl_from)) ||
            !add_i64(o, "compiled_min", s->compiled_min) ||
            !add_i64(o, "compiled_max", s->compiled_max))
            goto done;
        if (s->max_unbounded && !cJSON_AddTrueToObject(o, "max_unbounded"))
            goto done;
    }
    text = af_json_print(root, 1);
done:
    cJSON_Delete(root);
    return text;
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
            dim_expr_str(spec, dim, e, sizeof e);
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
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
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
                dim_expr_str(a, p, ea, sizeof ea);
                dim_expr_str(b, q, eb, sizeof eb);
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
            dim_expr_str(spec, p, ea, sizeof ea);
            dim_expr_str(wrapper, q, eb, sizeof eb);
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

/* ---------------------------------------------------------------- wrapper: text scanning */

/* First occurrence of needle in [p, end), or NULL. */
static const char *find_in(const char *p, const char *end, const char *needle)
{
    if (!p || p >= end)
        return NULL;
    return memmem(p, (size_t)(end - p), needle, strlen(needle));
}

/* Skip a C++ string or char literal or a comment starting at p; returns p if none. */
static const char *skip_lexical(const char *p, const char *end)
{
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        while (p < end && *p != q) {
            if (*p == '\\' && p + 1 < end)
                p++;
            p++;
        }
        return p < end ? p + 1 : end;
    }
    if (*p == '/' && p + 1 < end && p[1] == '/') {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl + 1 : end;
    }
    if (*p == '/' && p + 1 < end && p[1] == '*') {
        const char *c = find_in(p + 2, end, "*/");
        return c ? c + 2 : end;
    }
    return p;
}

/* p points at open (one of '{', '(', '['); returns the matching closer or NULL. */
static const char *match_bracket(const char *p, const char *end)
{
    int depth = 0;
    while (p < end) {
        const char *s = skip_lexical(p, end);
        if (s != p) {
            p = s;
            continue;
        }
        if (*p == '{' || *p == '(' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ')' || *p == ']') {
            if (--depth == 0)
                return p;
        }
        p++;
    }
    return NULL;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Signed decimal with an optional C integer suffix (L, LL, U). */
static int scan_i64(const char **pp, const char *end, int64_t *out)
{
    const char *p = skip_ws(*pp, end);
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (p >= end || !isdigit((unsigned char)*p))
        return -1;
    int64_t v = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        /* INT64_MAX itself is what an unbounded dim's check says (callers clamp it to
         * AF_INT_LIMIT); past it the text is no int64 literal the compiler wrote */
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
            return -2;
        p++;
    }
    while (p < end && (*p == 'L' || *p == 'l' || *p == 'U' || *p == 'u'))
        p++;
    *pp = p;
    *out = neg ? -v : v;
    return 0;
}

/* ---------------------------------------------------------------- wrapper: linear expressions */

/* Exact rationals for the linear forms torch prints (`(1.0/2.0)*x`, `1L + 2L*s77`).
 * Numerators and denominators stay within AF_INT_LIMIT or the operation fails. */
typedef struct rat {
    int64_t n, d; /* d > 0, gcd(n, d) == 1 */
} rat;

static int rat_norm(__int128 n, __int128 d, rat *out)
{
    if (d == 0)
        return -1;
    if (d < 0) {
        n = -n;
        d = -d;
    }
    __int128 a = n < 0 ? -n : n, b = d;
    while (b) {
        __int128 t = a % b;
        a = b;
        b = t;
    }
    if (a == 0)
        a = 1;
    n /= a;
    d /= a;
    if (n > AF_INT_LIMIT || n < -AF_INT_LIMIT || d > AF_INT_LIMIT)
        return -1;
    out->n = (int64_t)n;
    out->d = (int64_t)d;
    return 0;
}

static int rat_add(rat x, rat y, rat *o)
{
    return rat_norm((__int128)x.n * y.d + (__int128)y.n * x.d, (__int128)x.d * y.d, o);
}
static int rat_mul(rat x, rat y, rat *o)
{
    return rat_norm((__int128)x.n * y.n, (__int128)x.d * y.d, o);
}
static int rat_div(rat x, rat y, rat *o)
{
    return rat_norm((__int128)x.n * y.d, (__int128)x.d * y.n, o);
}

#define LIN_VAR_MAX 96

/* c1 * var + c0, var empty when constant. is_float: the C++ expression has double type. */
typedef struct lin {
    char var[LIN_VAR_MAX];
    rat c1, c0;
    int is_float;
} lin;

typedef struct local {
    char name[AF_NAME_MAX];
    lin value;
} local;

typedef struct lin_parser {
    const char *p, *end;
    const local *locals; /* substituted for identifiers; NULL: identifiers are variables */
    int n_locals;
    int depth;
} lin_parser;

static int lin_expr(lin_parser *ps, lin *out);

static const local *find_local(const local *locals, int n, const char *name)
{
    for (int i = n - 1; i >= 0; i--) /* the latest definition wins */
        if (strcmp(locals[i].name, name) == 0)
            return &locals[i];
    return NULL;
}

static int lin_primary(lin_parser *ps, lin *out)
{
    const char *p = ps->p = skip_ws(ps->p, ps->end);
    memset(out, 0, sizeof *out);
    out->c1 = (rat){0, 1};
    out->c0 = (rat){0, 1};
    if (p >= ps->end)
        return -1;
    if (*p == '(') {
        if (++ps->depth > 32)
            return -1;
        ps->p = p + 1;
        if (lin_expr(ps, out) < 0)
            return -1;
        ps->p = skip_ws(ps->p, ps->end);
        if (ps->p >= ps->end || *ps->p != ')')
            return -1;
        ps->p++;
        ps->depth--;
        return 0;
    }
    if (isdigit((unsigned char)*p)) {
        int64_t v = 0;
        while (p < ps->end && isdigit((unsigned char)*p)) {
            if (v > AF_INT_LIMIT)
                return -1;
            v = v * 10 + (*p++ - '0');
        }
        if (p < ps->end && *p == '.') { /* only integral doubles: "2.0" */
            out->is_float = 1;
            p++;
            while (p < ps->end && isdigit((unsigned char)*p))
                if (*p++ != '0')
                    return -1;
        }
        while (p < ps->end && (*p == 'L' || *p == 'l' || *p == 'U' || *p == 'u'))
            p++;
        if (p < ps->end && is_ident_char((unsigned char)*p))
            return -1;
        out->c0 = (rat){v, 1};
        ps->p = p;
        return 0;
    }
    if (is_ident_start((unsigned char)*p)) {
        char name[LIN_VAR_MAX];
        size_t n = 0;
        while (p < ps->end && is_ident_char((unsigned char)*p)) {
            if (n + 1 >= sizeof name)
                return -1;
            name[n++] = *p++;
        }
        name[n] = '\0';
        const char *q = skip_ws(p, ps->end);
        if (q < ps->end && (*q == '(' || *q == '<' || *q == ':' || *q == '.'))
            return -1; /* a call, a cast, a member: not linear arithmetic we read */
        if (q < ps->end && *q == '[') {
            int64_t idx;
            q++;
            if (scan_i64(&q, ps->end, &idx) < 0 || idx < 0 || idx >= AF_MAX_RANK)
                return -1;
            q = skip_ws(q, ps->end);
            if (q >= ps->end || *q != ']')
                return -1;
            p = q + 1;
            if (n + 8 >= sizeof name)
                return -1;
            snprintf(name + n, sizeof name - n, "[%d]", (int)idx);
        } else if (ps->locals) {
            const local *l = find_local(ps->locals, ps->n_locals, name);
            if (l) {
                *out = l->value;
                ps->p = p;
                return 0;
            }
        }
        strcpy(out->var, name);
        out->c1 = (rat){1, 1};
        ps->p = p;
        return 0;
    }
    return -1;
}

static int lin_unary(lin_parser *ps, lin *out)
{
    ps->p = skip_ws(ps->p, ps->end);
    if (ps->p < ps->end && (*ps->p == '-' || *ps->p == '+')) {
        int neg = *ps->p == '-';
        if (++ps->depth > 32)
            return -1;
        ps->p++;
        if (lin_unary(ps, out) < 0)
            return -1;
        ps->depth--;
        if (neg) {
            out->c1.n = -out->c1.n;
            out->c0.n = -out->c0.n;
        }
        return 0;
    }
    return lin_primary(ps, out);
}

static int lin_term(lin_parser *ps, lin *out)
{
    if (lin_unary(ps, out) < 0)
        return -1;
    for (;;) {
        ps->p = skip_ws(ps->p, ps->end);
        if (ps->p >= ps->end || (*ps->p != '*' && *ps->p != '/'))
            return 0;
        char op = *ps->p++;
        lin r;
        if (lin_unary(ps, &r) < 0)
            return -1;
        int fl = out->is_float || r.is_float;
        if (op == '*') {
            if (out->var[0] && r.var[0])
                return -1;                      /* product of variables: not linear */
            const lin *k = r.var[0] ? out : &r; /* the constant factor */
            const lin *v = r.var[0] ? &r : out; /* the other one */
            lin t = {.is_float = fl};
            strcpy(t.var, v->var);
            if (rat_mul(v->c1, k->c0, &t.c1) < 0 || rat_mul(v->c0, k->c0, &t.c0) < 0)
                return -1;
            if (!t.var[0] || t.c1.n == 0) {
                t.var[0] = '\0';
                t.c1 = (rat){0, 1};
            }
            *out = t;
        } else {
            if (r.var[0] || r.c0.n == 0)
                return -1;
            /* C++ integer division truncates: read it only when exact on constants. */
            if (!fl && (out->var[0] || out->c0.d != 1 || r.c0.d != 1 || out->c0.n % r.c0.n))
                return -1;
            if (rat_div(out->c1, r.c0, &out->c1) < 0 || rat_div(out->c0, r.c0, &out->c0) < 0)
                return -1;
            out->is_float = fl;
        }
    }
}

static int lin_expr(lin_parser *ps, lin *out)
{
    if (lin_term(ps, out) < 0)
        return -1;
    for (;;) {
        ps->p = skip_ws(ps->p, ps->end);
        if (ps->p >= ps->end || (*ps->p != '+' && *ps->p != '-'))
            return 0;
        int neg = *ps->p++ == '-';
        lin r;
        if (lin_term(ps, &r) < 0)
            return -1;
        if (neg) {
            r.c1.n = -r.c1.n;
            r.c0.n = -r.c0.n;
        }
        if (out->var[0] && r.var[0] && strcmp(out->var, r.var) != 0)
            return -1; /* two variables */
        if (!out->var[0])
            strcpy(out->var, r.var);
        if (rat_add(out->c1, r.c1, &out->c1) < 0 || rat_add(out->c0, r.c0, &out->c0) < 0)
            return -1;
        if (out->c1.n == 0)
            out->var[0] = '\0';
        out->is_float |= r.is_float;
    }
}

/* Parse the whole of [p, end) as a linear expression. */
static int lin_parse(const char *p, const char *end, const local *locals, int n_locals, lin *out)
{
    lin_parser ps = {.p = p, .end = end, .locals = locals, .n_locals = n_locals};
    if (lin_expr(&ps, out) < 0)
        return -1;
    return skip_ws(ps.p, end) == end ? 0 : -1;
}

/* ---------------------------------------------------------------- wrapper: the model */

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
    local locals[W_MAX_LOCALS];
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
    const char *stop = find_in(from, end, "throw");
    const char *k = find_in(from, stop ? stop : end, key);
    if (!k)
        return -1;
    const char *p = k + strlen(key);
    return scan_i64(&p, end, out);
}

/* One check_input_N body: name, dtype, and each dim's static size or compiled range. */
static int parse_check_body(wmodel *m, int idx, const char *body, const char *end, af_error *err)
{
    winput *in = &m->inputs[idx];
    const char *key = "_expected_dtype = aoti_torch_dtype_";
    const char *k = find_in(body, end, key);
    if (!k)
        return af_error_set(err, AF_E_INPUT,
                            "wrapper: check_input_%d: no expected dtype "
                            "(NAME_expected_dtype = aoti_torch_dtype_...())",
                            idx);
    const char *s = k;
    while (s > body && is_ident_char((unsigned char)s[-1]))
        s--;
    if (s == k || (size_t)(k - s) >= sizeof in->name)
        return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: bad input name", idx);
    memcpy(in->name, s, (size_t)(k - s));
    in->name[k - s] = '\0';
    if (!is_identifier(in->name))
        return af_error_set(err, AF_E_INPUT, "wrapper: check_input_%d: bad input name '%s'", idx,
                            in->name);
    char dt[32];
    const char *p = k + strlen(key);
    size_t n = 0;
    while (p < end && is_ident_char((unsigned char)*p) && n + 1 < sizeof dt)
        dt[n++] = *p++;
    dt[n] = '\0';
    in->dtype = af_dtype_from_name(dt);
    if (in->dtype < 0)
        return af_error_set(err, AF_E_INPUT, "wrapper: input %d (%s): unsupported dtype '%s'", idx,
                            in->name, dt);

    static const struct {
        const char *msg, *key;
        int what; /* 0 static, 1 lower, 2 upper, 3 stride (rank only) */
    } pat[] = {
        {"unmatched dim value at ", "expected: ", 0},
        {"dim value is too small at ", "expected it to be >= ", 1},
        {"dim value is too large at ", "expected to be <= ", 2},
        {"unmatched stride value at ", "expected: ", 3},
    };
    for (size_t t = 0; t < sizeof pat / sizeof pat[0]; t++) {
        const char *q = body;
        while ((q = find_in(q, end, pat[t].msg))) {
            q += strlen(pat[t].msg);
            int64_t d, v;
            if (scan_i64(&q, end, &d) < 0 || d < 0)
                return af_error_set(err, AF_E_INPUT,
                                    "wrapper: check_input_%d: unreadable dim in '%s'", idx,
                                    pat[t].msg);
            if (d >= AF_MAX_RANK)
                return af_error_set(err, AF_E_INPUT,
                                    "wrapper: input %d (%s): rank above the limit of %d", idx,
                                    in->name, AF_MAX_RANK);
            if (d + 1 > in->rank)
                in->rank = (int)d + 1;
            if (pat[t].what == 3)
                continue;
            int got = message_int(q, end, pat[t].key, &v);
            if (got == -2)
                return af_error_set(err, AF_E_INPUT,
                                    "wrapper: check_input_%d: dim %d: the '%s' value is out of "
                                    "the int64 range",
                                    idx, (int)d, pat[t].key);
            if (got < 0)
                return af_error_set(err, AF_E_INPUT,
                                    "wrapper: check_input_%d: dim %d: no '%s' value", idx, (int)d,
                                    pat[t].key);
            wdim *wd = &in->dims[d];
            if (pat[t].what == 0) {
                if (v < 0 || v > AF_INT_LIMIT)
                    return af_error_set(err, AF_E_INPUT,
                                        "wrapper: input %d (%s): dim %d: static size %" PRId64
                                        " out of range",
                                        idx, in->name, (int)d, v);
                wd->is_static = 1;
                wd->value = v;
            } else if (pat[t].what == 1) {
                wd->has_lo = 1;
                wd->lo = v < 0 ? 0 : clamp_limit(v);
            } else {
                wd->has_hi = 1;
                wd->hi = clamp_limit(v);
            }
        }
    }
    for (int d = 0; d < in->rank; d++) {
        wdim *wd = &in->dims[d];
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
    in->seen = 1;
    return 0;
}

static int parse_check_inputs(wmodel *m, const char *text, const char *end, af_error *err)
{
    const char *p = text;
    int found = 0;
    while ((p = find_in(p, end, "check_input_"))) {
        const char *q = p + strlen("check_input_");
        p = q;
        if (q - 13 >= text && is_ident_char((unsigned char)q[-13]))
            continue; /* part of a longer name */
        int64_t idx;
        if (!isdigit((unsigned char)*q) || scan_i64(&q, end, &idx) < 0)
            continue;
        q = skip_ws(q, end);
        if (q >= end || *q != '(')
            continue;
        const char *args = skip_ws(q + 1, end);
        if (!find_in(args, args + 16 < end ? args + 16 : end, "AtenTensorHandle"))
            continue; /* a call, not the definition */
        const char *close = match_bracket(q, end);
        const char *open = close ? skip_ws(close + 1, end) : NULL;
        if (!open || open >= end || *open != '{')
            continue;
        const char *body_end = match_bracket(open, end);
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
    while ((p = find_in(p, end, "::run_impl("))) {
        const char *paren = p + strlen("::run_impl");
        p = paren;
        const char *close = match_bracket(paren, end);
        if (!close)
            return NULL;
        const char *open = close + 1;
        for (;;) { /* skip blanks and comments up to '{' */
            open = skip_ws(open, end);
            const char *s = open < end && *open == '/' ? skip_lexical(open, end) : open;
            if (s == open)
                break;
            open = s;
        }
        if (open < end && *open == '{') {
            *body_end = match_bracket(open, end);
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
    while ((p = find_in(p, end, "int64_t"))) {
        const char *q = p + 7;
        int word = (p == body || !is_ident_char((unsigned char)p[-1])) && q < end &&
                   isspace((unsigned char)*q);
        p = q;
        if (!word)
            continue;
        q = skip_ws(q, end);
        char name[AF_NAME_MAX];
        size_t n = 0;
        while (q < end && is_ident_char((unsigned char)*q) && n + 1 < sizeof name)
            name[n++] = *q++;
        name[n] = '\0';
        if (!n || (q < end && is_ident_char((unsigned char)*q)))
            continue;
        q = skip_ws(q, end);
        if (q >= end || *q != '=' || (q + 1 < end && q[1] == '='))
            continue;
        const char *stmt_end = memchr(q, ';', (size_t)(end - q));
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!stmt_end || (nl && nl < stmt_end))
            continue;
        lin v;
        if (lin_parse(q + 1, stmt_end, m->locals, m->n_locals, &v) < 0)
            continue;
        if (m->n_locals < W_MAX_LOCALS) {
            strcpy(m->locals[m->n_locals].name, name);
            m->locals[m->n_locals++].value = v;
        }
        int i, d;
        if (!is_symbol_name(name) || !v.var[0] || size_var_dim(m, v.var, &i, &d) < 0)
            continue;
        /* name = c1*size + c0, so size = (1/c1)*name - c0/c1. */
        rat a, b;
        if (rat_div((rat){1, 1}, v.c1, &a) < 0 || rat_div(v.c0, v.c1, &b) < 0)
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
    while ((p = find_in(p, end, key))) {
        const char *q = skip_ws(p + strlen(key), end);
        p += strlen(key);
        const char *s = q;
        while (q < end && is_ident_char((unsigned char)*q))
            q++;
        int i = input_by_name(m, s, (size_t)(q - s));
        if (i < 0)
            continue;
        q = skip_ws(q, end);
        if (q >= end || *q != ',')
            continue;
        q = skip_ws(q + 1, end);
        if (q >= end || *q != '{')
            continue;
        const char *close = match_bracket(q, end);
        if (!close)
            continue;
        int d = 0;
        for (const char *e = q + 1; e < close && d < m->inputs[i].rank; d++) {
            const char *c = e;
            while (c < close && *c != ',') { /* entries hold no nested commas we read */
                if (*c == '(' || *c == '{' || *c == '[') {
                    const char *mb = match_bracket(c, close);
                    c = mb ? mb : close;
                }
                c++;
            }
            if (c > close)
                c = close;
            lin v;
            if (lin_parse(e, c, NULL, 0, &v) == 0 && v.var[0] && !strchr(v.var, '[') &&
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
