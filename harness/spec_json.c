/* spec_json.c — the spec JSON format (docs/spec-format.md): reading it (embedded specs,
 * --spec files) and writing it (aoti-run --describe --json, the reference process's spec).
 *
 * Reading uses cJSON and is strict: every problem is one AF_E_INPUT line that names the
 * JSON path ("spec: inputs[1].shape[0]: unknown symbol 's9'"). Symbols are read before
 * inputs because a dim string ("2*s77+1") names a symbol or its Dim name. Facts without an
 * "..._from" member take the origin of the spec's source (embedded spec, spec file).
 *
 * Writing keeps every integer exact: they go out as raw decimal text, since cJSON's double
 * printing loses the last digits near 2^53. A spec written and read back is the same spec. */
#include "aotif/spec.h"

#include "aotif/fileio.h"
#include "aotif/json.h"
#include "cpp_scan.h"
#include "spec_internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- JSON in */

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

static const char *skip_spaces(const char *p)
{
    while (*p == ' ')
        p++;
    return p;
}

/* The message for a dim string that is no dim expression; returns -1. */
static int bad_dim(const char *s, char *why, size_t why_len)
{
    snprintf(why, why_len,
             "bad dim expression '%s' (expected an integer, SYM, a*SYM, SYM+b, "
             "SYM-b or a*SYM+b)",
             s);
    return -1;
}

/* The decimal number at *pp (which starts with a digit), at most AF_INT_LIMIT; *pp moves
 * past it. s is the whole dim string, for the message. */
static int dim_number(const char **pp, const char *s, int64_t *v, char *why, size_t why_len)
{
    errno = 0;
    char *e;
    long long n = strtoll(*pp, &e, 10);
    if (errno == ERANGE || n > AF_INT_LIMIT) {
        snprintf(why, why_len, "number out of range in '%s' (at most 2^53)", s);
        return -1;
    }
    *pp = e;
    *v = n;
    return 0;
}

/* The symbol name at *pp into name[AF_NAME_MAX]; *pp moves past it. */
static int dim_symbol(const char **pp, const char *s, char *name, char *why, size_t why_len)
{
    const char *p = *pp;
    size_t n = 0;
    if (!af_is_ident_start((unsigned char)*p))
        return bad_dim(s, why, why_len);
    while (af_is_ident_char((unsigned char)*p)) {
        if (n + 1 >= AF_NAME_MAX) {
            snprintf(why, why_len, "symbol name too long in '%s'", s);
            return -1;
        }
        name[n++] = *p++;
    }
    name[n] = '\0';
    *pp = p;
    return 0;
}

/* An optional offset "+ B" or "- B" at *pp into *b; *pp moves past it and the spaces after. */
static int dim_offset(const char **pp, const char *s, int64_t *b, char *why, size_t why_len)
{
    const char *p = *pp;
    if (*p != '+' && *p != '-')
        return 0;
    int neg = *p == '-';
    p = skip_spaces(p + 1);
    if (!isdigit((unsigned char)*p))
        return bad_dim(s, why, why_len);
    int64_t v;
    if (dim_number(&p, s, &v, why, why_len) < 0)
        return -1;
    *b = neg ? -v : v;
    *pp = skip_spaces(p);
    return 0;
}

/* Strict parser of a dim string: "K", "SYM", "A*SYM", "SYM+B", "SYM-B", "A*SYM+B",
 * "A*SYM-B", spaces allowed around the operators. SYM is a symbol or Dim name. */
static int parse_dim_string(const char *s, const af_spec *spec, af_dim *out, char *why,
                            size_t why_len)
{
    const char *p = skip_spaces(s);
    int64_t a = 1, b = 0;
    char name[AF_NAME_MAX];

    if (isdigit((unsigned char)*p)) {
        int64_t v;
        if (dim_number(&p, s, &v, why, why_len) < 0)
            return -1;
        p = skip_spaces(p);
        if (*p == '\0') {
            *out = (af_dim){.sym = -1, .a = 0, .b = v};
            return 0;
        }
        if (*p != '*')
            return bad_dim(s, why, why_len);
        p = skip_spaces(p + 1);
        a = v;
    }
    if (dim_symbol(&p, s, name, why, why_len) < 0)
        return -1;
    p = skip_spaces(p);
    if (dim_offset(&p, s, &b, why, why_len) < 0)
        return -1;
    if (*p != '\0')
        return bad_dim(s, why, why_len);
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
    if (!af_is_identifier(sym->name)) {
        snprintf(why, wl, "name '%s' is not an identifier", sym->name);
        return -1;
    }
    if (json_name(js, "dim", 0, sym->dim_name, sizeof sym->dim_name, why, wl) < 0)
        return -1;
    if (sym->dim_name[0] && !af_is_identifier(sym->dim_name)) {
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

/* The input's name: present, not empty, not one an earlier input has. */
static int parse_input_name(const cJSON *js, af_spec *spec, int i, char *why, size_t wl)
{
    af_input *in = &spec->inputs[i];
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
    return 0;
}

static int parse_input_dtype(const cJSON *js, af_input *in, char *why, size_t wl)
{
    char dtname[32];
    if (json_name(js, "dtype", 1, dtname, sizeof dtname, why, wl) < 0)
        return -1;
    int dt = af_dtype_from_name(dtname);
    if (dt < 0 || dt >= AF_DT_COUNT) {
        snprintf(why, wl, "unknown dtype '%s'", dtname);
        return -1;
    }
    in->dtype = (af_dtype)dt;
    return 0;
}

/* One entry of "shape": an integer (a static size) or a dim string. */
static int parse_shape_dim(const cJSON *e, const af_spec *spec, af_dim *dim, char *why, size_t wl)
{
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
    return 0;
}

/* "shape": the rank and each dim; on error *where names the entry (".shape[0]"). */
static int parse_shape(const cJSON *js, const af_spec *spec, af_input *in, char *where,
                       size_t wherel, char *why, size_t wl)
{
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
        if (parse_shape_dim(e, spec, &in->dims[d], why, wl) < 0)
            return -1;
        d++;
    }
    where[0] = '\0';
    return 0;
}

/* "int_range" [lo, hi] with its origin and why; without one, integer inputs get values
 * valid for any table (AF_INT_ASSUMED_HI). On error *where is ".int_range". */
static int parse_int_range(const cJSON *js, af_input *in, af_origin here, char *where,
                           size_t wherel, char *why, size_t wl)
{
    in->int_lo = 0;
    in->int_hi = AF_INT_ASSUMED_HI;
    in->int_from = AF_FROM_ASSUMED;
    const cJSON *ir = cJSON_GetObjectItemCaseSensitive(js, "int_range");
    if (!ir)
        return 0;
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
    int64_t lo, hi;
    if (!af_dtype_is_float(in->dtype) && af_dtype_value_range(in->dtype, &lo, &hi) == 0 &&
        (in->int_lo < lo || in->int_hi > hi)) {
        snprintf(why, wl, "[%" PRId64 ", %" PRId64 "] does not fit %s", in->int_lo, in->int_hi,
                 af_dtype_name(in->dtype));
        return -1;
    }
    where[0] = '\0';
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
    if (parse_input_name(js, spec, i, why, wl) < 0 || parse_input_dtype(js, in, why, wl) < 0 ||
        parse_shape(js, spec, in, where, wherel, why, wl) < 0)
        return -1;
    af_origin here = origin_of_source(spec->source);
    if (json_origin(js, "name_from", here, &in->name_from, why, wl) < 0)
        return -1;
    return parse_int_range(js, in, here, where, wherel, why, wl);
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

/* "format": "aoti-fuzz-spec" and "version": 1. */
static int check_header(const cJSON *root, af_error *err)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "aoti-fuzz-spec") != 0)
        return af_error_set(err, AF_E_INPUT, "spec: \"format\" must be \"aoti-fuzz-spec\"");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    int64_t version;
    if (!ver || json_int(ver, &version) < 0)
        return af_error_set(err, AF_E_INPUT, "spec: \"version\" must be the integer 1");
    if (version != 1)
        return af_error_set(err, AF_E_INPUT, "spec: unsupported version %" PRId64 " (this reads 1)",
                            version);
    return 0;
}

/* Member `key` of root: absent (*list NULL) or an array of at most `max` entries; -1 when
 * it is something else. */
static int json_list(const cJSON *root, const char *key, int max, const cJSON **list, af_error *err)
{
    *list = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!*list)
        return 0;
    if (!cJSON_IsArray(*list))
        return af_error_set(err, AF_E_INPUT, "spec: \"%s\" must be an array", key);
    int n = cJSON_GetArraySize(*list);
    if (n > max)
        return af_error_set(err, AF_E_INPUT, "spec: too many %s (%d; at most %d)", key, n, max);
    return 0;
}

/* "symbols" (optional): read before the inputs, whose shapes refer to them. */
static int parse_symbols(const cJSON *root, af_spec *out, af_error *err)
{
    char why[256];
    const cJSON *syms, *e;
    if (json_list(root, "symbols", AF_MAX_SYMS, &syms, err) < 0)
        return -1;
    cJSON_ArrayForEach(e, syms)
    {
        if (parse_symbol(e, out, out->n_syms, why, sizeof why) < 0)
            return af_error_set(err, AF_E_INPUT, "spec: symbols[%d]: %s", out->n_syms, why);
        out->n_syms++;
    }
    return 0;
}

static int parse_inputs(const cJSON *root, af_spec *out, af_error *err)
{
    char why[256], where[32];
    const cJSON *inputs, *e;
    if (json_list(root, "inputs", AF_MAX_INPUTS, &inputs, err) < 0)
        return -1;
    if (!inputs)
        return af_error_set(err, AF_E_INPUT, "spec: missing \"inputs\"");
    cJSON_ArrayForEach(e, inputs)
    {
        int i = out->n_inputs;
        if (parse_input(e, out, i, where, sizeof where, why, sizeof why) < 0)
            return af_error_set(err, AF_E_INPUT, "spec: inputs[%d]%s: %s", i, where, why);
        out->n_inputs++;
    }
    return 0;
}

int af_spec_from_json(const char *text, af_spec_source source, af_spec *out, af_error *err)
{
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
    if (check_header(root, err) < 0 || parse_symbols(root, out, err) < 0 ||
        parse_inputs(root, out, err) < 0)
        goto fail;
    cJSON_Delete(root);
    return 0;

fail:
    cJSON_Delete(root);
    return -1;
}

/* A spec file: read whole (at most 16 MiB, no NUL bytes) and parsed; messages start with
 * the path. */
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

/* ---------------------------------------------------------------- JSON out */

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

/* One input as a JSON object appended to `inputs`; -1 on OOM. */
static int input_to_json(const af_spec *spec, const af_input *in, cJSON *inputs)
{
    char buf[160];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(inputs, o))
        return -1;
    cJSON *shape;
    if (!cJSON_AddStringToObject(o, "name", in->name) ||
        !cJSON_AddStringToObject(o, "dtype", af_dtype_name(in->dtype)) ||
        !(shape = cJSON_AddArrayToObject(o, "shape")))
        return -1;
    for (int d = 0; d < in->rank; d++) {
        cJSON *v;
        if (in->dims[d].sym < 0) {
            v = json_i64(in->dims[d].b);
        } else {
            af_spec_dim_str(spec, &in->dims[d], buf, sizeof buf);
            v = cJSON_CreateString(buf);
        }
        if (!v || !cJSON_AddItemToArray(shape, v))
            return -1;
    }
    if (!cJSON_AddStringToObject(o, "name_from", af_origin_name(in->name_from)))
        return -1;
    /* int_range matters for integer dtypes only; an assumed one is written too, with
     * its origin, so a reader sees what values the tools use. */
    if (!af_dtype_is_float(in->dtype)) {
        cJSON *r = cJSON_AddArrayToObject(o, "int_range");
        if (!r || !cJSON_AddItemToArray(r, json_i64(in->int_lo)) ||
            !cJSON_AddItemToArray(r, json_i64(in->int_hi)) ||
            !cJSON_AddStringToObject(o, "int_range_from", af_origin_name(in->int_from)))
            return -1;
        if (in->int_why[0] && !cJSON_AddStringToObject(o, "int_range_why", in->int_why))
            return -1;
    }
    return 0;
}

/* One symbol as a JSON object appended to `syms`; -1 on OOM. */
static int symbol_to_json(const af_symbol *s, cJSON *syms)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(syms, o))
        return -1;
    if (!cJSON_AddStringToObject(o, "name", s->name) ||
        !cJSON_AddStringToObject(o, "dim", s->dim_name) || !add_i64(o, "min", s->decl_min) ||
        !add_i64(o, "max", s->decl_max) ||
        !cJSON_AddStringToObject(o, "declared_from", af_origin_name(s->decl_from)) ||
        !add_i64(o, "compiled_min", s->compiled_min) ||
        !add_i64(o, "compiled_max", s->compiled_max))
        return -1;
    if (s->max_unbounded && !cJSON_AddTrueToObject(o, "max_unbounded"))
        return -1;
    return 0;
}

cJSON *af_spec_json(const af_spec *spec)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    if (!cJSON_AddStringToObject(root, "format", "aoti-fuzz-spec") ||
        !cJSON_AddNumberToObject(root, "version", 1))
        goto done;
    cJSON *inputs = cJSON_AddArrayToObject(root, "inputs");
    if (!inputs)
        goto done;
    for (int i = 0; i < spec->n_inputs; i++)
        if (input_to_json(spec, &spec->inputs[i], inputs) < 0)
            goto done;
    cJSON *syms = cJSON_AddArrayToObject(root, "symbols");
    if (!syms)
        goto done;
    for (int k = 0; k < spec->n_syms; k++)
        if (symbol_to_json(&spec->syms[k], syms) < 0)
            goto done;
    return root;
done:
    cJSON_Delete(root);
    return NULL;
}

char *af_spec_to_json(const af_spec *spec)
{
    cJSON *root = af_spec_json(spec);
    char *text = root ? af_json_print(root, 1) : NULL;
    cJSON_Delete(root);
    return text;
}
