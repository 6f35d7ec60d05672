/* contract.c — read a model's contract from its serialized ExportedProgram (cJSON), check it
 * against the package's compiled spec, and write it into that spec with its origin.
 *
 * The serialized program (torch/_export/serde/schema.py) is JSON: range_constraints maps a
 * symbol (or a derived expression, skipped here) to {min_val, max_val} (max_val null when
 * unbounded); graph_module.signature.input_specs lists the placeholders in call order,
 * user inputs among parameters and buffers; graph_module.graph.tensor_values gives each
 * tensor's dtype (ScalarType enum) and sizes ({"as_int": 16} or {"as_expr": {"expr_str":
 * sympy srepr}}); graph_module.graph.nodes are the ops in topological order, each with
 * named inputs and outputs.
 *
 * Sizes: a srepr such as "Add(Mul(Integer(2), Symbol('s77', positive=True)), Integer(1))",
 * or in older files plain text "2*s77 + 1", is read by one small recursive parser into
 * a*sym + b; anything else (a product of symbols, FloorDiv, Mod) is refused by name.
 *
 * Index values: origin[t] says which user input a tensor's values come from unchanged
 * (through view-like ops and dtype casts); an index argument whose origin is input i bounds
 * input i's values by the indexed dim's size. A dynamic indexed dim bounds them by its
 * smallest declared size; one that can be empty bounds nothing (no value is valid there).
 *
 * Matching the package: dims are compared position by position (the structure must agree
 * exactly); each program symbol's compiled range is the intersection, over the dims that
 * use it, of the wrapper's compiled range for that dim mapped back through a*s + b. A
 * wrapper symbol bound to a dim (s<digits>) must stand for one program symbol throughout. */
#include "aotif/contract.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- size expressions */

typedef struct affine {
    char sym[AF_NAME_MAX]; /* "" for a constant */
    int64_t a, b;
} affine;

typedef struct xparser {
    const char *p;
    char why[128];
} xparser;

static void x_ws(xparser *x)
{
    while (*x->p == ' ' || *x->p == '\t')
        x->p++;
}

static int x_fail(xparser *x, const char *why)
{
    if (!x->why[0])
        snprintf(x->why, sizeof x->why, "%s", why);
    return -1;
}

static int x_mul(affine *l, const affine *r, xparser *x)
{
    if (l->sym[0] && r->sym[0])
        return x_fail(x, "a product of symbols is not an affine size");
    if (r->sym[0]) {
        affine t = *r;
        t.a = r->a * l->b;
        t.b = r->b * l->b;
        *l = t;
    } else {
        l->a *= r->b;
        l->b *= r->b;
    }
    return 0;
}

static int x_add(affine *l, const affine *r, int sign, xparser *x)
{
    if (l->sym[0] && r->sym[0] && strcmp(l->sym, r->sym) != 0)
        return x_fail(x, "a sum of two symbols is not an affine size in one symbol");
    if (r->sym[0])
        snprintf(l->sym, sizeof l->sym, "%s", r->sym);
    l->a += sign * r->a;
    l->b += sign * r->b;
    return 0;
}

static int x_sum(xparser *x, affine *out);

static int x_ident(xparser *x, char *buf, size_t len)
{
    size_t n = 0;
    x_ws(x);
    if (!(isalpha((unsigned char)*x->p) || *x->p == '_'))
        return -1;
    while (isalnum((unsigned char)*x->p) || *x->p == '_') {
        if (n + 1 < len)
            buf[n++] = *x->p;
        x->p++;
    }
    buf[n] = '\0';
    return 0;
}

static int x_int(xparser *x, int64_t *out)
{
    x_ws(x);
    char *end;
    long long v = strtoll(x->p, &end, 10);
    if (end == x->p)
        return x_fail(x, "expected an integer");
    x->p = end;
    *out = v;
    return 0;
}

/* Skip the rest of a call's arguments up to and including its ')' (keyword arguments of
 * Symbol(...): positive=True, integer=True). */
static int x_skip_args(xparser *x)
{
    int depth = 0;
    while (*x->p) {
        char ch = *x->p++;
        if (ch == '(')
            depth++;
        else if (ch == ')' && depth-- == 0)
            return 0;
    }
    return x_fail(x, "unbalanced parentheses");
}

static int x_factor(xparser *x, affine *out)
{
    x_ws(x);
    memset(out, 0, sizeof *out);
    if (*x->p == '(') {
        x->p++;
        if (x_sum(x, out) < 0)
            return -1;
        x_ws(x);
        if (*x->p != ')')
            return x_fail(x, "expected ')'");
        x->p++;
        return 0;
    }
    if (*x->p == '-' || isdigit((unsigned char)*x->p))
        return x_int(x, &out->b);
    char name[AF_NAME_MAX];
    if (x_ident(x, name, sizeof name) < 0)
        return x_fail(x, "unexpected character");
    x_ws(x);
    if (*x->p != '(') { /* plain text: a symbol name */
        snprintf(out->sym, sizeof out->sym, "%s", name);
        out->a = 1;
        return 0;
    }
    x->p++;
    if (!strcmp(name, "Symbol")) {
        x_ws(x);
        char q = *x->p;
        if (q != '\'' && q != '"')
            return x_fail(x, "Symbol() without a quoted name");
        x->p++;
        size_t n = 0;
        while (*x->p && *x->p != q) {
            if (n + 1 < sizeof out->sym)
                out->sym[n++] = *x->p;
            x->p++;
        }
        out->sym[n] = '\0';
        if (*x->p != q)
            return x_fail(x, "unterminated Symbol() name");
        x->p++;
        out->a = 1;
        return x_skip_args(x);
    }
    if (!strcmp(name, "Integer")) {
        if (x_int(x, &out->b) < 0)
            return -1;
        x_ws(x);
        if (*x->p != ')')
            return x_fail(x, "expected ')' after Integer(");
        x->p++;
        return 0;
    }
    if (!strcmp(name, "Mul") || !strcmp(name, "Add")) {
        int is_mul = name[0] == 'M';
        if (is_mul)
            out->b = 1;
        for (;;) {
            affine t;
            if (x_sum(x, &t) < 0)
                return -1;
            if (is_mul ? x_mul(out, &t, x) < 0 : x_add(out, &t, 1, x) < 0)
                return -1;
            x_ws(x);
            if (*x->p == ',') {
                x->p++;
                continue;
            }
            if (*x->p == ')') {
                x->p++;
                return 0;
            }
            return x_fail(x, "expected ',' or ')'");
        }
    }
    char why[96];
    snprintf(why, sizeof why, "%s(...) is not an affine size", name);
    return x_fail(x, why);
}

static int x_term(xparser *x, affine *out)
{
    if (x_factor(x, out) < 0)
        return -1;
    for (;;) {
        x_ws(x);
        if (*x->p != '*')
            return 0;
        x->p++;
        affine r;
        if (x_factor(x, &r) < 0 || x_mul(out, &r, x) < 0)
            return -1;
    }
}

static int x_sum(xparser *x, affine *out)
{
    if (x_term(x, out) < 0)
        return -1;
    for (;;) {
        x_ws(x);
        int sign = *x->p == '+' ? 1 : *x->p == '-' ? -1 : 0;
        if (!sign)
            return 0;
        x->p++;
        affine r;
        if (x_term(x, &r) < 0 || x_add(out, &r, sign, x) < 0)
            return -1;
    }
}

static int parse_size_expr(const char *text, affine *out, char *why, size_t wl)
{
    xparser x = {.p = text};
    if (x_sum(&x, out) == 0) {
        x_ws(&x);
        if (*x.p == '\0') {
            if (!out->sym[0])
                out->a = 0;
            else if (out->a <= 0)
                x_fail(&x, "the coefficient of the symbol is not positive");
            if (!x.why[0])
                return 0;
        } else {
            x_fail(&x, "trailing text");
        }
    }
    snprintf(why, wl, "size '%.60s' unsupported: %s", text, x.why);
    return -1;
}

/* ---------------------------------------------------------------- JSON helpers */

static const cJSON *path_get(const cJSON *o, const char *a, const char *b, const char *c)
{
    const char *keys[3] = {a, b, c};
    for (int i = 0; i < 3 && o && keys[i]; i++)
        o = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    return o;
}

static int json_i64(const cJSON *v, int64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble)
        return -1;
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* serde ScalarType -> af_dtype, -1 when not one we run. */
static int dtype_from_serde(int v)
{
    switch (v) {
    case 1:
        return AF_DT_UINT8;
    case 2:
        return AF_DT_INT8;
    case 3:
        return AF_DT_INT16;
    case 4:
        return AF_DT_INT32;
    case 5:
        return AF_DT_INT64;
    case 6:
        return AF_DT_FLOAT16;
    case 7:
        return AF_DT_FLOAT32;
    case 8:
        return AF_DT_FLOAT64;
    case 12:
        return AF_DT_BOOL;
    case 13:
        return AF_DT_BFLOAT16;
    default:
        return -1;
    }
}

/* The tensor name an argument holds ({"as_tensor": {"name": ...}}), or NULL. */
static const char *arg_tensor(const cJSON *arg)
{
    const cJSON *n = path_get(arg, "as_tensor", "name", NULL);
    return cJSON_IsString(n) ? n->valuestring : NULL;
}

/* A node input by its schema name ("indices"), or the k-th input when absent. */
static const cJSON *node_arg(const cJSON *node, const char *name, int k)
{
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(node, "inputs");
    const cJSON *in;
    int i = 0;
    cJSON_ArrayForEach(in, inputs)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
        if (cJSON_IsString(nm) && name && !strcmp(nm->valuestring, name))
            return cJSON_GetObjectItemCaseSensitive(in, "arg");
    }
    cJSON_ArrayForEach(in, inputs)
    {
        if (i++ == k)
            return cJSON_GetObjectItemCaseSensitive(in, "arg");
    }
    return NULL;
}

/* ---------------------------------------------------------------- the graph walk */

/* Op names whose first tensor argument's values flow unchanged into their first output. */
static const char *const value_keeping_ops[] = {
    "view",
    "reshape",
    "_unsafe_view",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "expand",
    "expand_as",
    "permute",
    "transpose",
    "t",
    "contiguous",
    "clone",
    "alias",
    "detach",
    "lift_fresh_copy",
    "to",
    "_to_copy",
    "type_as",
    "slice",
    "select",
    "narrow",
    "view_as",
    "repeat",
    "movedim",
    "squeeze_copy",
    "unsqueeze_copy",
    "view_copy",
    "_assert_tensor_metadata",
    NULL,
};

/* "torch.ops.aten.embedding.default" -> "embedding" in buf; 0 if not an aten op. */
static int aten_op(const char *target, char *buf, size_t len)
{
    static const char pre[] = "torch.ops.aten.";
    if (strncmp(target, pre, sizeof pre - 1) != 0)
        return 0;
    const char *p = target + sizeof pre - 1;
    size_t n = strcspn(p, ".");
    if (n + 1 > len)
        return 0;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 1;
}

typedef struct walk {
    cJSON *origin; /* tensor name -> user input index (numbers) */
    const cJSON *tensor_values;
    const cJSON *display; /* placeholder name -> parameter/buffer FQN (strings) */
    af_contract *c;
} walk;

static int origin_of(const walk *w, const char *tensor)
{
    const cJSON *v = tensor ? cJSON_GetObjectItemCaseSensitive(w->origin, tensor) : NULL;
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* Size of dim d of a tensor, as its smallest value over the declared ranges; -1 unknown. */
static int64_t tensor_dim_min(const walk *w, const char *tensor, int64_t d, int *rank_out)
{
    const cJSON *sizes = path_get(w->tensor_values, tensor, "sizes", NULL);
    int rank = cJSON_GetArraySize(sizes);
    if (rank_out)
        *rank_out = rank;
    if (!sizes || d < 0 || d >= rank)
        return -1;
    const cJSON *s = cJSON_GetArrayItem(sizes, (int)d);
    int64_t v;
    if (json_i64(cJSON_GetObjectItemCaseSensitive(s, "as_int"), &v) == 0)
        return v;
    const cJSON *e = path_get(s, "as_expr", "expr_str", NULL);
    affine af;
    char why[160];
    if (!cJSON_IsString(e) || parse_size_expr(e->valuestring, &af, why, sizeof why) < 0)
        return -1;
    if (!af.sym[0])
        return af.b;
    for (int k = 0; k < w->c->n_syms; k++)
        if (!strcmp(w->c->syms[k].name, af.sym))
            return af.a * w->c->syms[k].min + af.b;
    return -1;
}

static void bound_input(walk *w, int input, int64_t size, const char *op, const char *table,
                        int dynamic)
{
    af_contract_input *in = &w->c->inputs[input];
    w->c->n_index_uses++;
    if (size < 1)
        return; /* an empty table: no value is valid, nothing to fuzz inside */
    if (in->index_hi >= 0 && in->index_hi <= size - 1)
        return;
    in->index_hi = size - 1;
    const cJSON *disp = cJSON_GetObjectItemCaseSensitive(w->display, table);
    snprintf(in->index_why, sizeof in->index_why, "index of aten.%s into %s (%" PRId64 " %s%s)", op,
             cJSON_IsString(disp) ? disp->valuestring : table, size,
             !strcmp(op, "one_hot") ? "classes" : "rows",
             dynamic ? ", the smallest declared size" : "");
}

static int tensor_is_dynamic_dim(const walk *w, const char *tensor, int64_t d)
{
    const cJSON *s = cJSON_GetArrayItem(path_get(w->tensor_values, tensor, "sizes", NULL), (int)d);
    return s && !cJSON_GetObjectItemCaseSensitive(s, "as_int");
}

static void walk_node(walk *w, const cJSON *node)
{
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(node, "target");
    char op[64];
    if (!cJSON_IsString(target) || !aten_op(target->valuestring, op, sizeof op))
        return;
    /* Values flowing through. */
    for (int i = 0; value_keeping_ops[i]; i++) {
        if (strcmp(op, value_keeping_ops[i]) != 0)
            continue;
        int from = origin_of(w, arg_tensor(node_arg(node, "self", 0)));
        if (from < 0)
            from = origin_of(w, arg_tensor(node_arg(node, "a", 0)));
        const cJSON *outs = cJSON_GetObjectItemCaseSensitive(node, "outputs");
        const char *out = arg_tensor(cJSON_GetArrayItem(outs, 0));
        if (from >= 0 && out && !cJSON_GetObjectItemCaseSensitive(w->origin, out))
            cJSON_AddNumberToObject(w->origin, out, from);
        return;
    }
    /* Index uses. */
    if (!strcmp(op, "embedding") || !strcmp(op, "embedding_bag") || !strcmp(op, "_embedding_bag")) {
        int from = origin_of(w, arg_tensor(node_arg(node, "indices", 1)));
        const char *weight = arg_tensor(node_arg(node, "weight", 0));
        if (from >= 0 && weight)
            bound_input(w, from, tensor_dim_min(w, weight, 0, NULL), op, weight,
                        tensor_is_dynamic_dim(w, weight, 0));
    } else if (!strcmp(op, "index_select") || !strcmp(op, "gather")) {
        int from = origin_of(w, arg_tensor(node_arg(node, "index", 2)));
        const char *self = arg_tensor(node_arg(node, "self", 0));
        int64_t d;
        const cJSON *dim = node_arg(node, "dim", 1);
        if (from < 0 || !self || json_i64(cJSON_GetObjectItemCaseSensitive(dim, "as_int"), &d) < 0)
            return;
        int rank = 0;
        tensor_dim_min(w, self, 0, &rank);
        if (d < 0)
            d += rank;
        bound_input(w, from, tensor_dim_min(w, self, d, NULL), op, self,
                    tensor_is_dynamic_dim(w, self, d));
    } else if (!strcmp(op, "index")) {
        const char *self = arg_tensor(node_arg(node, "self", 0));
        const cJSON *idx =
            cJSON_GetObjectItemCaseSensitive(node_arg(node, "indices", 1), "as_optional_tensors");
        const cJSON *e;
        int64_t d = 0;
        cJSON_ArrayForEach(e, idx)
        {
            int from = origin_of(w, arg_tensor(e));
            if (from >= 0 && self)
                bound_input(w, from, tensor_dim_min(w, self, d, NULL), op, self,
                            tensor_is_dynamic_dim(w, self, d));
            d++;
        }
    } else if (!strcmp(op, "one_hot")) {
        int from = origin_of(w, arg_tensor(node_arg(node, "self", 0)));
        int64_t k;
        if (from >= 0 &&
            json_i64(cJSON_GetObjectItemCaseSensitive(node_arg(node, "num_classes", 1), "as_int"),
                     &k) == 0 &&
            k > 0)
            bound_input(w, from, k, op, "num_classes", 0);
    }
}

/* ---------------------------------------------------------------- reading the program */

static int find_sym(const af_contract *c, const char *name)
{
    for (int k = 0; k < c->n_syms; k++)
        if (!strcmp(c->syms[k].name, name))
            return k;
    return -1;
}

static int add_sym(af_contract *c, const cJSON *ranges, const char *name, af_error *err,
                   const char *what)
{
    int k = find_sym(c, name);
    if (k >= 0)
        return k;
    if (c->n_syms >= AF_MAX_SYMS)
        return af_error_set(err, AF_E_INPUT, "%s: too many size symbols (at most %d)", what,
                            AF_MAX_SYMS);
    af_contract_sym *s = &c->syms[c->n_syms];
    snprintf(s->name, sizeof s->name, "%s", name);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(ranges, name);
    if (!cJSON_IsObject(r))
        return af_error_set(err, AF_E_INPUT, "%s: symbol %s has no range_constraints entry", what,
                            name);
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(r, "min_val");
    const cJSON *hi = cJSON_GetObjectItemCaseSensitive(r, "max_val");
    if (cJSON_IsNull(lo) || !lo)
        s->min = 0;
    else if (json_i64(lo, &s->min) < 0)
        return af_error_set(err, AF_E_INPUT, "%s: symbol %s: min_val is not an integer", what,
                            name);
    if (s->min < 0)
        s->min = 0; /* sizes are never negative */
    if (cJSON_IsNull(hi) || !hi || (cJSON_IsNumber(hi) && hi->valuedouble >= 9.0e15)) {
        s->max_unbounded = 1;
        s->max = s->min > AF_UNBOUNDED_MAX ? s->min : AF_UNBOUNDED_MAX;
    } else if (json_i64(hi, &s->max) < 0) {
        return af_error_set(err, AF_E_INPUT, "%s: symbol %s: max_val is not an integer", what,
                            name);
    }
    if (s->max < s->min)
        return af_error_set(err, AF_E_INPUT,
                            "%s: symbol %s: range [%" PRId64 ", %" PRId64 "] is empty", what, name,
                            s->min, s->max);
    return c->n_syms++;
}

int af_contract_from_json(const char *text, const char *what, af_contract *out, af_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_Parse(text);
    walk w = {0};
    int rc = -1;
    if (!root) {
        af_error_set(err, AF_E_INPUT, "%s: not valid JSON", what);
        goto done;
    }
    const cJSON *gm = cJSON_GetObjectItemCaseSensitive(root, "graph_module");
    const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(root, "range_constraints");
    const cJSON *specs = path_get(gm, "signature", "input_specs", NULL);
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(gm, "graph");
    w.tensor_values = cJSON_GetObjectItemCaseSensitive(graph, "tensor_values");
    if (!cJSON_IsObject(gm) || !cJSON_IsArray(specs) || !cJSON_IsObject(w.tensor_values)) {
        af_error_set(err, AF_E_INPUT,
                     "%s: not a serialized ExportedProgram (no graph_module.signature."
                     "input_specs or graph.tensor_values)",
                     what);
        goto done;
    }
    w.c = out;
    w.origin = cJSON_CreateObject();
    cJSON *display = cJSON_CreateObject();
    w.display = display;
    if (!w.origin || !display) {
        cJSON_Delete(display);
        af_error_set(err, AF_E_INTERNAL, "out of memory");
        goto done;
    }
    char why[192];
    const cJSON *spec;
    int pos = 0;
    cJSON_ArrayForEach(spec, specs)
    {
        pos++;
        const cJSON *ui = cJSON_GetObjectItemCaseSensitive(spec, "user_input");
        if (!ui) {
            /* parameters, buffers, constants: remember their FQNs for messages */
            const cJSON *kind = spec->child;
            const cJSON *nm = kind ? path_get(kind, "arg", "name", NULL) : NULL;
            const cJSON *fqn =
                kind ? cJSON_GetObjectItemCaseSensitive(kind, "parameter_name") : NULL;
            if (!fqn && kind)
                fqn = cJSON_GetObjectItemCaseSensitive(kind, "buffer_name");
            if (!fqn && kind)
                fqn = cJSON_GetObjectItemCaseSensitive(kind, "tensor_constant_name");
            if (cJSON_IsString(nm) && cJSON_IsString(fqn))
                cJSON_AddStringToObject(display, nm->valuestring, fqn->valuestring);
            continue;
        }
        const cJSON *arg = cJSON_GetObjectItemCaseSensitive(ui, "arg");
        const char *name = arg_tensor(arg);
        if (!name) {
            const char *kind = arg && arg->child && arg->child->string ? arg->child->string : "?";
            af_error_set(err, AF_E_INPUT, "%s: user input %d is not a tensor (%s): unsupported",
                         what, out->n_inputs, kind);
            goto done;
        }
        if (out->n_inputs >= AF_MAX_INPUTS) {
            af_error_set(err, AF_E_INPUT, "%s: too many inputs (at most %d)", what, AF_MAX_INPUTS);
            goto done;
        }
        int i = out->n_inputs;
        af_contract_input *in = &out->inputs[i];
        snprintf(in->name, sizeof in->name, "%s", name);
        in->index_hi = -1;
        const cJSON *tv = cJSON_GetObjectItemCaseSensitive(w.tensor_values, name);
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(tv, "dtype");
        const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(tv, "sizes");
        int dtype = cJSON_IsNumber(dt) ? dtype_from_serde(dt->valueint) : -1;
        if (dtype < 0) {
            af_error_set(err, AF_E_INPUT, "%s: input %d (%s): dtype %d is not one aoti-fuzz runs",
                         what, i, name, cJSON_IsNumber(dt) ? dt->valueint : -1);
            goto done;
        }
        in->dtype = (af_dtype)dtype;
        in->is_float = af_dtype_is_float(in->dtype);
        if (!cJSON_IsArray(sizes) || cJSON_GetArraySize(sizes) > AF_MAX_RANK) {
            af_error_set(err, AF_E_INPUT, "%s: input %d (%s): sizes missing or rank over %d", what,
                         i, name, AF_MAX_RANK);
            goto done;
        }
        const cJSON *sz;
        cJSON_ArrayForEach(sz, sizes)
        {
            af_contract_dim *d = &in->dims[in->rank];
            int64_t v;
            const cJSON *e = path_get(sz, "as_expr", "expr_str", NULL);
            if (json_i64(cJSON_GetObjectItemCaseSensitive(sz, "as_int"), &v) == 0) {
                *d = (af_contract_dim){.sym = -1, .a = 0, .b = v};
            } else if (cJSON_IsString(e)) {
                affine af;
                if (parse_size_expr(e->valuestring, &af, why, sizeof why) < 0) {
                    af_error_set(err, AF_E_INPUT, "%s: input %d (%s) dim %d: %s", what, i, name,
                                 in->rank, why);
                    goto done;
                }
                if (af.sym[0]) {
                    int k = add_sym(out, ranges, af.sym, err, what);
                    if (k < 0)
                        goto done;
                    *d = (af_contract_dim){.sym = k, .a = af.a, .b = af.b};
                } else {
                    *d = (af_contract_dim){.sym = -1, .a = 0, .b = af.b};
                }
            } else {
                af_error_set(err, AF_E_INPUT,
                             "%s: input %d (%s) dim %d: neither as_int nor "
                             "as_expr",
                             what, i, name, in->rank);
                goto done;
            }
            in->rank++;
        }
        if (!in->is_float)
            cJSON_AddNumberToObject(w.origin, name, i);
        out->n_inputs++;
    }
    (void)pos;
    const cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(graph, "nodes")) walk_node(&w, node);
    rc = 0;
done:
    cJSON_Delete(w.origin);
    cJSON_Delete((cJSON *)w.display);
    cJSON_Delete(root);
    return rc;
}

/* ---------------------------------------------------------------- applying it */

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

static int apply(const af_contract *c, const af_spec *pk, const char *src, af_spec *outp,
                 af_error *err);

int af_contract_apply(const af_contract *c, af_spec *spec, const char *src, af_error *err)
{
    const af_spec *pk = spec;
    af_spec *outp = calloc(1, sizeof *outp);
    if (!outp)
        return af_error_set(err, AF_E_INTERNAL, "out of memory");
    int rc = apply(c, pk, src, outp, err);
    if (rc == 0)
        *spec = *outp;
    free(outp);
    return rc;
}

static int apply(const af_contract *c, const af_spec *pk, const char *src, af_spec *outp,
                 af_error *err)
{
#define out (*outp)
    if (c->n_inputs != pk->n_inputs)
        return af_error_set(err, AF_E_INPUT,
                            "%s does not match the package: the exported program has %d "
                            "input%s, the package %d",
                            src, c->n_inputs, c->n_inputs == 1 ? "" : "s", pk->n_inputs);
    int64_t lo[AF_MAX_SYMS], hi[AF_MAX_SYMS];
    int wmap[AF_MAX_SYMS];     /* package symbol -> contract symbol */
    int dim_from[AF_MAX_SYMS]; /* contract symbol -> a package symbol it matched, -1 */
    for (int k = 0; k < AF_MAX_SYMS; k++) {
        lo[k] = 0;
        hi[k] = INT64_MAX;
        wmap[k] = -1;
        dim_from[k] = -1;
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
        for (int d = 0; d < ci->rank; d++) {
            const af_contract_dim *cd = &ci->dims[d];
            const af_dim *pd = &pi->dims[d];
            if (cd->sym >= 0 && pd->sym < 0) {
                /* The package fixed a dim the program keeps dynamic (Inductor specialized it:
                 * adaptive pooling): the compiled range of that symbol is the one value. */
                int64_t num = pd->b - cd->b;
                if (num >= 0 && num % cd->a == 0) {
                    int64_t v = num / cd->a;
                    if (v > lo[cd->sym])
                        lo[cd->sym] = v;
                    if (v < hi[cd->sym])
                        hi[cd->sym] = v;
                    continue;
                }
            }
            if ((cd->sym < 0) != (pd->sym < 0) || (cd->sym < 0 && cd->b != pd->b)) {
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
                                    src, i, ci->name, d, a, b);
            }
            if (cd->sym < 0)
                continue;
            const af_symbol *ps = &pk->syms[pd->sym];
            if (is_bound_symbol(ps->name)) {
                if (wmap[pd->sym] >= 0 && wmap[pd->sym] != cd->sym)
                    return af_error_set(err, AF_E_INPUT,
                                        "%s does not match the package: the package's symbol %s "
                                        "stands for both %s and %s of the exported program",
                                        src, ps->name, c->syms[wmap[pd->sym]].name,
                                        c->syms[cd->sym].name);
                wmap[pd->sym] = cd->sym;
            }
            if (dim_from[cd->sym] < 0 || !strcmp(ps->name, c->syms[cd->sym].name))
                dim_from[cd->sym] = pd->sym;
            /* the package's compiled range for this dim, mapped back onto the program's symbol */
            int64_t dlo = pd->a * ps->compiled_min + pd->b;
            int64_t dhi =
                ps->compiled_max >= AF_INT_LIMIT ? INT64_MAX : pd->a * ps->compiled_max + pd->b;
            int64_t slo = -floor_div(-(dlo - cd->b), cd->a); /* ceil */
            int64_t shi = dhi == INT64_MAX ? INT64_MAX : floor_div(dhi - cd->b, cd->a);
            if (slo > lo[cd->sym])
                lo[cd->sym] = slo;
            if (shi < hi[cd->sym])
                hi[cd->sym] = shi;
        }
    }
    out.source = pk->source;
    out.beyond_contract = pk->beyond_contract;
    snprintf(out.contract_src, sizeof out.contract_src, "%s", src);
    out.n_syms = c->n_syms;
    for (int k = 0; k < c->n_syms; k++) {
        const af_contract_sym *cs = &c->syms[k];
        af_symbol *s = &out.syms[k];
        snprintf(s->name, sizeof s->name, "%s", cs->name);
        if (dim_from[k] >= 0)
            snprintf(s->dim_name, sizeof s->dim_name, "%s", pk->syms[dim_from[k]].dim_name);
        s->min = s->decl_min = cs->min;
        s->max = s->decl_max = cs->max;
        s->decl_from = AF_FROM_EXPORTED;
        s->max_unbounded = cs->max_unbounded;
        s->compiled_min = lo[k] > cs->min ? lo[k] : cs->min;
        /* no upper check in the package: say so (AF_INT_LIMIT), and there is nothing to match */
        s->compiled_max = hi[k] == INT64_MAX ? AF_INT_LIMIT : hi[k];
        /* Compiling only narrows a declared range (0/1 specialization below, a backend's
         * guard above: a conv's "batch < 16"); a compiled range reaching outside the
         * declared one belongs to another program. */
        if (!cs->max_unbounded && hi[k] != INT64_MAX && s->compiled_max > cs->max)
            return af_error_set(err, AF_E_INPUT,
                                "%s does not match the package: symbol %s: declared max %" PRId64
                                " in the exported program, but the package runs up to %" PRId64,
                                src, cs->name, cs->max, s->compiled_max);
        if (lo[k] < cs->min && lo[k] < 2)
            ; /* the package checks less than declared: nothing contradicts */
        else if (lo[k] < cs->min)
            return af_error_set(err, AF_E_INPUT,
                                "%s does not match the package: symbol %s: declared min %" PRId64
                                " in the exported program, but the package runs from %" PRId64,
                                src, cs->name, cs->min, lo[k]);
        if (s->compiled_max < s->compiled_min)
            s->compiled_max = s->compiled_min;
    }
    /* Dim names must stay unique; a package symbol that matched two program symbols
     * (possible only for a made-up one) gives its Dim name to the first. */
    for (int k = 0; k < out.n_syms; k++)
        for (int j = 0; j < k; j++)
            if (out.syms[k].dim_name[0] && !strcmp(out.syms[k].dim_name, out.syms[j].dim_name))
                out.syms[k].dim_name[0] = '\0';
    out.n_inputs = c->n_inputs;
    for (int i = 0; i < c->n_inputs; i++) {
        const af_contract_input *ci = &c->inputs[i];
        const af_input *pi = &pk->inputs[i];
        af_input *in = &out.inputs[i];
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
            continue;
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
    return 0;
#undef out
}
