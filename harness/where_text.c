/* where_text.c — reading the generated code for where.c: the wrapper's size bindings, kernel
 * definitions and their launches, launch arguments, expressions in input terms.
 *
 * The generated code is regular enough to read with a handful of string scans, and no
 * more is attempted: a C++ kernel is an `extern "C" void NAME(params) { ... }` in a
 * .kernel.cpp (or the wrapper), a Triton kernel a `def NAME(params):` inside the wrapper's
 * comment that carries its source, and the launch a statement `NAME(args);` (C++) or
 * `call_NAME(args);` (Triton: call_triton_...) in run_impl, whose arguments line up with the
 * parameters by position (for Triton with call_NAME's own parameter list). Sizes
 * reach a launch through run_impl's bindings `int64_t sM = argK_1_size[d];` and tensors as
 * `argK_1` (an input) or `bufN` (an intermediate). Every step that does not match leaves
 * its fields empty instead of guessing; the renderer says what is unknown. */
#include "where_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- launch arguments as text ---------------------------------------------------------- */

/* Split [p, end) at top-level commas; each piece trimmed. Returns the number of pieces. */
int af_where_split_args(const char *p, const char *end, char out[][128], int max)
{
    int n = 0, depth = 0;
    const char *s = p;
    for (const char *q = p;; q++) {
        if (q == end || (*q == ',' && depth == 0)) {
            while (s < q && isspace((unsigned char)*s))
                s++;
            const char *e = q;
            while (e > s && isspace((unsigned char)e[-1]))
                e--;
            if (n < max && (e > s || q != end))
                copy_n(out[n++], 128, s, (size_t)(e - s));
            if (q == end)
                break;
            s = q + 1;
            continue;
        }
        if (*q == '(' || *q == '[' || *q == '{' || *q == '<')
            depth++;
        else if ((*q == ')' || *q == ']' || *q == '}' || *q == '>') && depth > 0)
            depth--;
    }
    return n;
}

/* A parameter's name: the last identifier before any default ("= ...") or annotation
 * (": tl.constexpr", Triton), e.g. "const int64_t ks0" -> "ks0". */
static void param_name(const char *decl, char *out, size_t len)
{
    char d[128];
    copy(d, sizeof d, decl);
    char *cut = strchr(d, '=');
    if (cut)
        *cut = '\0';
    if ((cut = strchr(d, ':')) && cut[1] != ':')
        *cut = '\0';
    char *e = d + strlen(d);
    while (e > d && !is_ident(e[-1]))
        e--;
    char *s = e;
    while (s > d && is_ident(s[-1]))
        s--;
    copy_n(out, len, s, (size_t)(e - s));
}

/* A launch argument without its casts: "(const float*)(arg1_1.data_ptr())" -> "arg1_1". */
static void arg_value(const char *a, char *out, size_t len)
{
    const char *dp = strstr(a, ".data_ptr()");
    if (dp) {
        const char *s = dp;
        while (s > a && is_ident(s[-1]))
            s--;
        copy_n(out, len, s, (size_t)(dp - s));
        return;
    }
    copy(out, len, a);
}

/* Whether s is "s<digits>", a size symbol of the wrapper. */
static int is_size_symbol(const char *s, size_t n)
{
    if (n < 2 || s[0] != 's')
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* Whether s is "arg<digits>_1", an input of the wrapper; its number in *k. */
static int is_input_arg(const char *s, size_t n, int *k)
{
    if (n < 6 || strncmp(s, "arg", 3) != 0 || strncmp(s + n - 2, "_1", 2) != 0)
        return 0;
    int v = 0;
    for (size_t i = 3; i < n - 2; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *k = v;
    return 1;
}

/* ---- what the wrapper says about its inputs ----------------------------------------- */

/* The first input size read in expr, as argK_1_size[d] or argK_1_size_d (a copy of it the
 * wrapper makes for a derived symbol). Returns 1 and fills *k, *d. */
static int size_ref(const char *expr, int *k, int *d, const char **end)
{
    for (const char *p = expr; (p = strstr(p, "arg")); p++) {
        if (p > expr && is_ident(p[-1]))
            continue;
        int n = 0;
        if (sscanf(p, "arg%d_1_size[%d]%n", k, d, &n) == 2 && n > 0) {
            *end = p + n;
            return 1;
        }
        if (sscanf(p, "arg%d_1_size_%d%n", k, d, &n) == 2 && n > 0) {
            *end = p + n;
            return 1;
        }
    }
    return 0;
}

void af_where_read_wrapper(const char *w, wrapper_facts *wf)
{
    memset(wf, 0, sizeof *wf);
    for (int i = 0; i < AF_MAX_INPUTS; i++)
        wf->arg_input[i] = -1;
    if (!w)
        return;
    /* int64_t s77 = arg0_1_size[0];  or, derived: int64_t s68 = (1.0/2.0)*arg0_1_size_0; */
    for (const char *p = w; (p = strstr(p, "int64_t s")); p++) {
        const char *s = p + 8, *e = s + 1;
        while (isdigit((unsigned char)*e))
            e++;
        if (e == s + 1 || is_ident(*e) || wf->n >= WHERE_MAX_BINDINGS)
            continue;
        const char *eq = skip_ws(e);
        if (*eq != '=')
            continue;
        const char *rs = skip_ws(eq + 1), *re = strchr(rs, ';'), *nl = line_end(rs);
        if (!re || re > nl)
            continue;
        char expr[96];
        copy_n(expr, sizeof expr, rs, (size_t)(re - rs));
        int k, d;
        const char *ref_end;
        if (!size_ref(expr, &k, &d, &ref_end))
            continue;
        binding *b = &wf->b[wf->n++];
        copy_n(b->sym, sizeof b->sym, s, (size_t)(e - s));
        b->arg = k;
        b->dim = d;
        b->direct = !strncmp(expr, "arg", 3) && *ref_end == '\0';
        copy(b->expr, sizeof b->expr, expr);
    }
    /* auto arg0_1 = std::move(inputs[0]); */
    for (const char *p = w; (p = strstr(p, "auto arg")); p++) {
        int k, i;
        if (sscanf(p, "auto arg%d_1 = std::move(inputs[%d])", &k, &i) == 2 && k >= 0 &&
            k < AF_MAX_INPUTS)
            wf->arg_input[k] = i;
    }
}

static const binding *find_binding(const wrapper_facts *wf, const char *sym, size_t n)
{
    for (int i = 0; i < wf->n; i++)
        if (strlen(wf->b[i].sym) == n && !strncmp(wf->b[i].sym, sym, n))
            return &wf->b[i];
    return NULL;
}

static int input_of_arg(const wrapper_facts *wf, int k)
{
    return k >= 0 && k < AF_MAX_INPUTS && wf->arg_input[k] >= 0 ? wf->arg_input[k] : k;
}

/* The user's name of input i ("x"), else the wrapper's "argK_1". */
void af_where_input_name(const af_spec *spec, int i, int k, char *out, size_t len)
{
    if (spec && i >= 0 && i < spec->n_inputs && spec->inputs[i].name[0])
        copy(out, len, spec->inputs[i].name);
    else
        snprintf(out, len, "arg%d_1", k);
}

/* ---- kernels in the sources ----------------------------------------------------------- */

/* Every kernel definition in one source: C++ `extern "C" ... NAME(...) {` and Triton
 * `def NAME(...):`. Returns how many were written to out. */
int af_where_scan_kernels(const af_where_src *s, int si, kdef *out, int max)
{
    int n = 0;
    const char *t = s->text;
    for (const char *p = t; n < max && (p = strstr(p, "extern \"C\"")); p++) {
        const char *open = strchr(p, '(');
        const char *semi = strchr(p, ';');
        if (!open || (semi && semi < open))
            continue;
        const char *close = match_close(open);
        if (!close)
            continue;
        const char *q = close + 1;
        while (isspace((unsigned char)*q))
            q++;
        if (*q != '{' && *q != ';')
            continue;
        const char *ne = open;
        while (ne > p && isspace((unsigned char)ne[-1]))
            ne--;
        const char *ns = ne;
        while (ns > p && is_ident(ns[-1]))
            ns--;
        const char *be = *q == '{' ? match_close(q) : q;
        if (ns == ne || !be)
            continue;
        out[n++] =
            (kdef){si, ns, (size_t)(ne - ns), line_start(t, p), open + 1, close, *q == '{' ? q : be,
                   be, 0,  *q == ';'};
        p = be;
    }
    for (const char *p = t; n < max && (p = strstr(p, "def triton_")); p++) {
        const char *ls = line_start(t, p);
        if (skip_ws(ls) != p)
            continue;
        const char *ns = p + 4, *ne = ns;
        while (is_ident(*ne))
            ne++;
        if (*ne != '(')
            continue;
        const char *close = match_close(ne);
        if (!close)
            continue;
        /* the body: lines indented deeper than the def, up to the end of the source string */
        size_t indent = (size_t)(p - ls);
        const char *be = line_end(close);
        while (*be) {
            const char *nl = be + 1, *nt = skip_ws(nl);
            const char *ne2 = line_end(nl);
            if (nt != ne2 && ((size_t)(nt - nl) <= indent || !strncmp(nt, "'''", 3)))
                break;
            be = ne2;
            if (!*be)
                break;
        }
        out[n++] = (kdef){si, ns, (size_t)(ne - ns), ls, ne + 1, close, close, be, 1, 0};
    }
    return n;
}

/* The launch statement of kernel `name` in the wrapper: `NAME(` or (Triton) `call_NAME(` at
 * the start of a line. Returns the '(' or NULL. */
const char *af_where_find_launch(const char *w, const char *name, int triton, const char **line)
{
    char pat[200];
    snprintf(pat, sizeof pat, "%s%s(", triton ? "call_" : "", name);
    for (const char *p = w; (p = strstr(p, pat)); p++) {
        const char *ls = line_start(w, p);
        if (skip_ws(ls) == p && (p == w || !is_ident(p[-1]))) {
            *line = ls;
            return p + strlen(pat) - 1;
        }
    }
    return NULL;
}

/* The parameter list of `static inline void call_NAME(...)`, or NULL. */
static const char *find_call_triton_def(const char *w, const char *name, const char **end)
{
    char pat[200];
    snprintf(pat, sizeof pat, "void call_%s(", name);
    const char *p = strstr(w, pat);
    if (!p)
        return NULL;
    const char *open = p + strlen(pat) - 1, *close = match_close(open);
    if (!close)
        return NULL;
    *end = close;
    return open + 1;
}

/* ---- input terms ------------------------------------------------------------------------ */

/* A binding's right-hand side with each input size read as "name.size(d)". */
static void binding_terms(const binding *b, const wrapper_facts *wf, const af_spec *spec, char *out,
                          size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = b->expr; *p && o + 1 < len;) {
        int k, d;
        const char *end;
        if (!strncmp(p, "arg", 3) && (p == b->expr || !is_ident(p[-1])) &&
            size_ref(p, &k, &d, &end)) {
            /* size_ref finds the first reference at or after p; take it only if it is at p */
            char probe[32];
            int n = snprintf(probe, sizeof probe, "arg%d_1_size", k);
            if (!strncmp(p, probe, (size_t)n)) {
                char nm[AF_NAME_MAX];
                af_where_input_name(spec, input_of_arg(wf, k), k, nm, sizeof nm);
                int w = snprintf(out + o, len - o, "%s.size(%d)", nm, d);
                o += w > 0 && (size_t)w < len - o ? (size_t)w : 0;
                p = end;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

/* Rewrite expr: a size parameter becomes what it is launched with in input terms
 * ("x.size(0)"), a wrapper symbol its input size, an argK_1 its input's name. Returns
 * whether anything was replaced. */
int af_where_in_terms(const char *expr, const af_where *w, const wrapper_facts *wf,
                      const af_spec *spec, char *out, size_t len)
{
    size_t o = 0;
    int changed = 0;
    out[0] = '\0';
    for (const char *p = expr; *p && o + 1 < len;) {
        if (is_ident(*p) && (p == expr || !is_ident(p[-1])) && !isdigit((unsigned char)*p)) {
            const char *e = p;
            while (is_ident(*e))
                e++;
            size_t n = (size_t)(e - p);
            char rep[160] = "";
            const binding *b;
            int k;
            for (int i = 0; i < w->n_args && !rep[0]; i++)
                if (strlen(w->args[i].param) == n && !strncmp(w->args[i].param, p, n) &&
                    w->args[i].is_size && w->args[i].in_terms[0]) {
                    int simple =
                        strspn(w->args[i].in_terms, "abcdefghijklmnopqrstuvwxyz"
                                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.()") ==
                        strlen(w->args[i].in_terms);
                    snprintf(rep, sizeof rep, simple ? "%s" : "(%s)", w->args[i].in_terms);
                }
            if (!rep[0] && is_size_symbol(p, n) && (b = find_binding(wf, p, n)))
                binding_terms(b, wf, spec, rep, sizeof rep);
            if (!rep[0] && is_input_arg(p, n, &k)) {
                int i = input_of_arg(wf, k);
                if (spec && i < spec->n_inputs && spec->inputs[i].name[0])
                    copy(rep, sizeof rep, spec->inputs[i].name);
            }
            if (rep[0]) {
                changed = 1;
                size_t r = strlen(rep);
                if (o + r >= len)
                    break;
                memcpy(out + o, rep, r);
                o += r;
            } else {
                if (o + n >= len)
                    break;
                memcpy(out + o, p, n);
                o += n;
            }
            p = e;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
    return changed;
}

/* ---- steps 4-5: parameters and launch arguments -------------------------------------- */

void af_where_map_args(af_where *w, const kdef *k, const char *wtext, const wrapper_facts *wf,
                       const af_spec *spec)
{
    char params[AF_WHERE_MAX_ARGS][128], args[AF_WHERE_MAX_ARGS][128];
    const char *ps = k->params, *pe = k->params_end;
    const char *ct_end = NULL,
               *ct = k->triton && wtext ? find_call_triton_def(wtext, w->kernel, &ct_end) : NULL;
    if (ct) { /* the launch goes through call_NAME, whose parameters it matches */
        ps = ct;
        pe = ct_end;
    }
    int np = af_where_split_args(ps, pe, params, AF_WHERE_MAX_ARGS);
    const char *ll = NULL,
               *open = wtext ? af_where_find_launch(wtext, w->kernel, k->triton, &ll) : NULL;
    const char *close = open ? match_close(open) : NULL;
    int na = close ? af_where_split_args(open + 1, close, args, AF_WHERE_MAX_ARGS) : 0;
    if (open)
        w->launch_line = line_of(wtext, open);
    w->n_args = 0;
    for (int i = 0; i < np && w->n_args < AF_WHERE_MAX_ARGS; i++) {
        af_where_arg *a = &w->args[w->n_args];
        memset(a, 0, sizeof *a);
        a->sym = a->input = a->dim = -1;
        param_name(params[i], a->param, sizeof a->param);
        /* the launch's trailing device / stream / kernels arguments have no kernel parameter */
        if (!a->param[0] || !strcmp(a->param, "device_idx_") || !strcmp(a->param, "stream_") ||
            !strcmp(a->param, "kernels_") || !strcmp(a->param, "cubin_dir_"))
            continue;
        if (strstr(params[i], "constexpr"))
            continue;
        if (i < na)
            arg_value(args[i], a->value, sizeof a->value);
        size_t vl = strlen(a->value);
        int kk;
        const binding *b = is_size_symbol(a->value, vl) ? find_binding(wf, a->value, vl) : NULL;
        a->is_size =
            !strncmp(a->param, "ks", 2) || b ||
            (strstr(params[i], "int64_t") && !strchr(params[i], '*') && !strchr(params[i], '&'));
        if (b) {
            a->input = input_of_arg(wf, b->arg);
            a->dim = b->dim;
            a->sym = spec ? af_spec_find_symbol(spec, a->value) : -1;
        } else if (is_input_arg(a->value, vl, &kk)) {
            a->input = input_of_arg(wf, kk);
        }
        if (!af_where_in_terms(a->value, w, wf, spec, a->in_terms, sizeof a->in_terms))
            a->in_terms[0] = '\0';
        w->n_args++;
    }
}
