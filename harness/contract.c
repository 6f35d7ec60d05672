/* contract.c — read a model's contract from its serialized ExportedProgram (cJSON): the
 * declared symbol ranges, the user inputs' dtypes and symbolic shapes, and the values of
 * the integer inputs the graph uses as an index.
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
 * af_contract_apply (contract_apply.c) then checks what was read against the package. */
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

/* The arguments of Symbol(, up to its ')': 'NAME', then keyword arguments skipped. */
static int x_symbol(xparser *x, affine *out)
{
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

/* The arguments of Mul( or Add(, up to its ')': their product or sum. */
static int x_nary(xparser *x, int is_mul, affine *out)
{
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
    if (!strcmp(name, "Symbol"))
        return x_symbol(x, out);
    if (!strcmp(name, "Integer")) {
        if (x_int(x, &out->b) < 0)
            return -1;
        x_ws(x);
        if (*x->p != ')')
            return x_fail(x, "expected ')' after Integer(");
        x->p++;
        return 0;
    }
    if (!strcmp(name, "Mul") || !strcmp(name, "Add"))
        return x_nary(x, name[0] == 'M', out);
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

/* What reading the program carries from step to step. */
typedef struct reader {
    const char *what;    /* the source, for messages */
    const cJSON *ranges; /* range_constraints */
    cJSON *display;      /* placeholder name -> parameter/buffer FQN, owned (w.display) */
    walk w;              /* the graph walk; w.c is the contract being filled */
} reader;

/* A placeholder that is no user input (a parameter, buffer or constant): remember its FQN
 * for the messages that name an indexed table. */
static void note_display_name(cJSON *display, const cJSON *spec)
{
    const cJSON *kind = spec->child;
    const cJSON *nm = kind ? path_get(kind, "arg", "name", NULL) : NULL;
    const cJSON *fqn = kind ? cJSON_GetObjectItemCaseSensitive(kind, "parameter_name") : NULL;
    if (!fqn && kind)
        fqn = cJSON_GetObjectItemCaseSensitive(kind, "buffer_name");
    if (!fqn && kind)
        fqn = cJSON_GetObjectItemCaseSensitive(kind, "tensor_constant_name");
    if (cJSON_IsString(nm) && cJSON_IsString(fqn))
        cJSON_AddStringToObject(display, nm->valuestring, fqn->valuestring);
}

/* The next dim of input i (tensor `name`), from its size: {"as_int": K} or {"as_expr":
 * {"expr_str": ...}}, whose symbol joins the contract's symbols. */
static int read_dim(reader *r, int i, const char *name, const cJSON *sz, af_error *err)
{
    af_contract_input *in = &r->w.c->inputs[i];
    af_contract_dim *d = &in->dims[in->rank];
    int64_t v;
    const cJSON *e = path_get(sz, "as_expr", "expr_str", NULL);
    if (json_i64(cJSON_GetObjectItemCaseSensitive(sz, "as_int"), &v) == 0) {
        *d = (af_contract_dim){.sym = -1, .a = 0, .b = v};
        return 0;
    }
    if (!cJSON_IsString(e))
        return af_error_set(err, AF_E_INPUT,
                            "%s: input %d (%s) dim %d: neither as_int nor "
                            "as_expr",
                            r->what, i, name, in->rank);
    affine af;
    char why[192];
    if (parse_size_expr(e->valuestring, &af, why, sizeof why) < 0)
        return af_error_set(err, AF_E_INPUT, "%s: input %d (%s) dim %d: %s", r->what, i, name,
                            in->rank, why);
    if (!af.sym[0]) {
        *d = (af_contract_dim){.sym = -1, .a = 0, .b = af.b};
        return 0;
    }
    int k = add_sym(r->w.c, r->ranges, af.sym, err, r->what);
    if (k < 0)
        return -1;
    *d = (af_contract_dim){.sym = k, .a = af.a, .b = af.b};
    return 0;
}

/* One user input: its tensor's name, dtype and dims. An integer input starts a value
 * origin for the graph walk. */
static int read_user_input(reader *r, const cJSON *ui, af_error *err)
{
    af_contract *out = r->w.c;
    const cJSON *arg = cJSON_GetObjectItemCaseSensitive(ui, "arg");
    const char *name = arg_tensor(arg);
    if (!name) {
        const char *kind = arg && arg->child && arg->child->string ? arg->child->string : "?";
        return af_error_set(err, AF_E_INPUT, "%s: user input %d is not a tensor (%s): unsupported",
                            r->what, out->n_inputs, kind);
    }
    if (out->n_inputs >= AF_MAX_INPUTS)
        return af_error_set(err, AF_E_INPUT, "%s: too many inputs (at most %d)", r->what,
                            AF_MAX_INPUTS);
    int i = out->n_inputs;
    af_contract_input *in = &out->inputs[i];
    snprintf(in->name, sizeof in->name, "%s", name);
    in->index_hi = -1;
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(r->w.tensor_values, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(tv, "dtype");
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(tv, "sizes");
    int dtype = cJSON_IsNumber(dt) ? af_dtype_from_serde(dt->valueint) : -1;
    if (dtype < 0)
        return af_error_set(err, AF_E_INPUT,
                            "%s: input %d (%s): dtype %d is not one aoti-fuzz runs", r->what, i,
                            name, cJSON_IsNumber(dt) ? dt->valueint : -1);
    in->dtype = (af_dtype)dtype;
    in->is_float = af_dtype_is_float(in->dtype);
    if (!cJSON_IsArray(sizes) || cJSON_GetArraySize(sizes) > AF_MAX_RANK)
        return af_error_set(err, AF_E_INPUT, "%s: input %d (%s): sizes missing or rank over %d",
                            r->what, i, name, AF_MAX_RANK);
    const cJSON *sz;
    cJSON_ArrayForEach(sz, sizes)
    {
        if (read_dim(r, i, name, sz, err) < 0)
            return -1;
        in->rank++;
    }
    if (!in->is_float)
        cJSON_AddNumberToObject(r->w.origin, name, i);
    out->n_inputs++;
    return 0;
}

/* input_specs in call order: the user inputs, and the other placeholders' FQNs. */
static int read_input_specs(reader *r, const cJSON *specs, af_error *err)
{
    const cJSON *spec;
    cJSON_ArrayForEach(spec, specs)
    {
        const cJSON *ui = cJSON_GetObjectItemCaseSensitive(spec, "user_input");
        if (!ui)
            note_display_name(r->display, spec);
        else if (read_user_input(r, ui, err) < 0)
            return -1;
    }
    return 0;
}

int af_contract_from_json(const char *text, const char *what, af_contract *out, af_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_Parse(text);
    reader r = {.what = what};
    int rc = -1;
    if (!root) {
        af_error_set(err, AF_E_INPUT, "%s: not valid JSON", what);
        goto done;
    }
    const cJSON *gm = cJSON_GetObjectItemCaseSensitive(root, "graph_module");
    const cJSON *specs = path_get(gm, "signature", "input_specs", NULL);
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(gm, "graph");
    r.ranges = cJSON_GetObjectItemCaseSensitive(root, "range_constraints");
    r.w.tensor_values = cJSON_GetObjectItemCaseSensitive(graph, "tensor_values");
    if (!cJSON_IsObject(gm) || !cJSON_IsArray(specs) || !cJSON_IsObject(r.w.tensor_values)) {
        af_error_set(err, AF_E_INPUT,
                     "%s: not a serialized ExportedProgram (no graph_module.signature."
                     "input_specs or graph.tensor_values)",
                     what);
        goto done;
    }
    r.w.c = out;
    r.w.origin = cJSON_CreateObject();
    r.w.display = r.display = cJSON_CreateObject();
    if (!r.w.origin || !r.display) {
        af_error_set(err, AF_E_INTERNAL, "out of memory");
        goto done;
    }
    if (read_input_specs(&r, specs, err) < 0)
        goto done;
    const cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(graph, "nodes"))
        walk_node(&r.w, node);
    rc = 0;
done:
    cJSON_Delete(r.w.origin);
    cJSON_Delete(r.display);
    cJSON_Delete(root);
    return rc;
}
