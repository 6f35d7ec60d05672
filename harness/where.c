/* where.c — triage a failure from the package's generated sources; see aotif/where.h.
 *
 * The generated code is regular enough to read with a handful of string scans, and no
 * more is attempted: a C++ kernel is an `extern "C" void NAME(params) { ... }` in a
 * .kernel.cpp (or the wrapper), a Triton kernel a `def NAME(params):` inside the wrapper's
 * comment that carries its source, and the launch a statement `NAME(args);` (C++) or
 * `call_NAME(args);` (Triton: call_triton_...) in run_impl, whose arguments line up with the
 * parameters by position (for Triton with call_NAME's own parameter list). Sizes
 * reach a launch through run_impl's bindings `int64_t sM = argK_1_size[d];` and tensors as
 * `argK_1` (an input) or `bufN` (an intermediate). Every step that does not match leaves
 * its fields empty instead of guessing; the renderer says what is unknown.
 *
 * The source nodes come from Inductor's `// Topologically Sorted Source Nodes: [...],
 * Original ATen: [...]` comment before a launch where it wrote one. Torch 2.13 writes none
 * for C++ kernels, so there the kernel's name stands in: Inductor names a fused kernel
 * after the ATen ops of its nodes (`cpp_fused_` + sorted op names + `_N`), and the exported
 * program's nodes whose op is one of those names are the candidates, with the stack trace
 * export recorded for each. Those are marked as matched by name, since two nodes of one op
 * in two kernels cannot be told apart this way. */
#include "aotif/where.h"
#include "aotif/strbuf.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define WHERE_MAX_SRC_BYTES (64u << 20) /* a kernel source is KiBs; refuse anything huge */
#define WHERE_MAX_SRCS 32
#define WHERE_MAX_BINDINGS 64

/* ---- small text helpers ------------------------------------------------------------- */

static int is_ident(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static void copy_n(char *dst, size_t len, const char *s, size_t n)
{
    if (!len)
        return;
    if (n >= len)
        n = len - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static void copy(char *dst, size_t len, const char *s)
{
    copy_n(dst, len, s, strlen(s));
}

static int line_of(const char *text, const char *p)
{
    int n = 1;
    for (const char *q = text; q < p && *q; q++)
        n += *q == '\n';
    return n;
}

static const char *line_start(const char *text, const char *p)
{
    while (p > text && p[-1] != '\n')
        p--;
    return p;
}

static const char *line_end(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Next occurrence of `word` in [p, end) with identifier boundaries on both sides. */
static const char *find_word(const char *text, const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    while (p && (p = strstr(p, word)) && (!end || p < end)) {
        if ((p == text || !is_ident(p[-1])) && !is_ident(p[n]))
            return p;
        p += n;
    }
    return NULL;
}

/* p at '(' (or '['): the matching closer, or NULL. */
static const char *match_close(const char *p)
{
    char open = *p, close = open == '(' ? ')' : open == '[' ? ']' : '}';
    int depth = 0;
    for (; *p; p++) {
        if (*p == open)
            depth++;
        else if (*p == close && --depth == 0)
            return p;
    }
    return NULL;
}

/* Split [p, end) at top-level commas; each piece trimmed. Returns the number of pieces. */
static int split_args(const char *p, const char *end, char out[][128], int max)
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

static int is_ptr_param(const char *s, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (!strncmp(s + i, "ptr", 3) && i + 3 < n && isdigit((unsigned char)s[i + 3]))
            return 1;
    return 0;
}

/* ---- what the wrapper says about its inputs ----------------------------------------- */

typedef struct binding {
    char sym[AF_NAME_MAX]; /* "s77" */
    int arg;               /* K of the first argK_1 size it reads */
    int dim;
    int direct;    /* sM = argK_1_size[d] exactly; else derived from it: */
    char expr[96]; /* the right-hand side: "(1.0/2.0)*arg0_1_size_0" */
} binding;

typedef struct wrapper_facts {
    binding b[WHERE_MAX_BINDINGS];
    int n;
    int arg_input[AF_MAX_INPUTS]; /* argK_1 -> input index (std::move(inputs[I])), or -1 */
} wrapper_facts;

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

static void read_wrapper_facts(const char *w, wrapper_facts *wf)
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
static void input_name(const af_spec *spec, int i, int k, char *out, size_t len)
{
    if (spec && i >= 0 && i < spec->n_inputs && spec->inputs[i].name[0])
        copy(out, len, spec->inputs[i].name);
    else
        snprintf(out, len, "arg%d_1", k);
}

/* ---- kernels in the sources ----------------------------------------------------------- */

typedef struct kdef {
    int src;
    const char *name; /* into the text */
    size_t name_len;
    const char *def;                 /* start of the definition's line */
    const char *params, *params_end; /* inside the parentheses */
    const char *body, *body_end;
    int triton;
    int decl; /* a declaration only (the wrapper's, of a kernel whose source is elsewhere) */
} kdef;

/* Every kernel definition in one source: C++ `extern "C" ... NAME(...) {` and Triton
 * `def NAME(...):`. Returns how many were written to out. */
static int scan_kernels(const af_where_src *s, int si, kdef *out, int max)
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
static const char *find_launch(const char *w, const char *name, int triton, const char **line)
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

/* "[a, b, c]" after `key` on the line at p: the items into out. Returns how many. */
static int bracket_list(const char *p, const char *end, const char *key, char out[][AF_NAME_MAX],
                        int max)
{
    const char *k = strstr(p, key);
    if (!k || k >= end)
        return 0;
    const char *o = strchr(k, '[');
    if (!o || o >= end)
        return 0;
    const char *c = match_close(o);
    if (!c || c > end)
        return 0;
    char items[AF_WHERE_MAX_NODES][128];
    int n = split_args(o + 1, c, items, max < AF_WHERE_MAX_NODES ? max : AF_WHERE_MAX_NODES);
    for (int i = 0; i < n; i++)
        copy(out[i], AF_NAME_MAX, items[i]);
    return n;
}

/* A source-node comment within the three lines before `at` (a launch or a definition). */
static int source_node_comment(const char *text, const char *at, af_where *w)
{
    const char *p = line_start(text, at);
    for (int i = 0; i < 3 && p > text; i++) {
        const char *prev = line_start(text, p - 1);
        const char *e = p - 1;
        const char *k = strstr(prev, "Topologically Sorted Source Nodes:");
        if (k && k < e) {
            int n = bracket_list(prev, e, "Source Nodes:", w->nodes, AF_WHERE_MAX_NODES);
            int m = bracket_list(prev, e, "Original ATen:", w->aten, AF_WHERE_MAX_NODES);
            w->n_nodes = n;
            for (int j = m; j < n; j++)
                w->aten[j][0] = '\0';
            copy(w->nodes_from, sizeof w->nodes_from, "source-node comment");
            return n > 0;
        }
        p = prev;
    }
    return 0;
}

/* ---- the exported program: nodes by name or by op ------------------------------------ */

/* "torch.ops.aten.argmax.default" -> "argmax"; "" for anything not aten. */
static void aten_packet(const char *target, char *out, size_t len)
{
    out[0] = '\0';
    const char *a = strstr(target, "aten.");
    if (!a)
        return;
    a += 5;
    const char *dot = strchr(a, '.');
    copy_n(out, len, a, dot ? (size_t)(dot - a) : strlen(a));
}

static const char *node_name(const cJSON *node)
{
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(node, "outputs");
    const cJSON *o0 = cJSON_IsArray(outs) ? cJSON_GetArrayItem(outs, 0) : NULL;
    const cJSON *t = o0 ? cJSON_GetObjectItemCaseSensitive(o0, "as_tensor") : NULL;
    if (!t && o0) { /* a node with several outputs names each; the first stands for it */
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o0, "as_tensors");
        t = cJSON_IsArray(ts) ? cJSON_GetArrayItem(ts, 0) : NULL;
    }
    const cJSON *nm = t ? cJSON_GetObjectItemCaseSensitive(t, "name") : NULL;
    return cJSON_IsString(nm) ? nm->valuestring : NULL;
}

/* The model-code line of a stack trace: its last `File "P", line N, in F` and the line
 * after it, as "base(P):N in F: code". */
static void code_line(const char *trace, char *out, size_t len)
{
    out[0] = '\0';
    const char *last = NULL;
    for (const char *p = trace; (p = strstr(p, "File \"")); p++)
        last = p;
    if (!last)
        return;
    const char *fs = last + 6, *fe = strchr(fs, '"');
    if (!fe)
        return;
    const char *base = fs;
    for (const char *q = fs; q < fe; q++)
        if (*q == '/')
            base = q + 1;
    int lineno = 0;
    char fn[64] = "";
    const char *rest = fe + 1;
    sscanf(rest, ", line %d, in %63[^\n]", &lineno, fn);
    const char *nl = strchr(rest, '\n');
    char code[200] = "";
    if (nl) {
        const char *cs = skip_ws(nl + 1), *ce = line_end(cs);
        copy_n(code, sizeof code, cs, (size_t)(ce - cs));
    }
    int n = snprintf(out, len, "%.*s:%d in %s: %s", (int)(fe - base), base, lineno, fn, code);
    if ((n < 0 || (size_t)n >= len) && len >= 4) /* a long line is cut; mark it */
        memcpy(out + len - 4, "...", 4);
}

static void add_code(af_where *w, const char *trace)
{
    char one[256];
    code_line(trace, one, sizeof one);
    if (!one[0] || w->n_code >= AF_WHERE_MAX_CODE)
        return;
    for (int i = 0; i < w->n_code; i++)
        if (!strcmp(w->code[i], one))
            return;
    copy(w->code[w->n_code++], sizeof w->code[0], one);
}

static const char *node_trace(const cJSON *node)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(node, "metadata");
    const cJSON *st = md ? cJSON_GetObjectItemCaseSensitive(md, "stack_trace") : NULL;
    return cJSON_IsString(st) ? st->valuestring : NULL;
}

/* The fused-op part of a kernel name, framed by '_': "cpp_fused_argmax_mul_0" ->
 * "_argmax_mul_"; "" when the name has no "fused_". */
static void fused_part(const char *kernel, char *out, size_t len)
{
    out[0] = '\0';
    const char *f = strstr(kernel, "fused_");
    if (!f)
        return;
    f += 6;
    const char *e = f + strlen(f);
    const char *u = strrchr(f, '_');
    if (u && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1))
        e = u;
    snprintf(out, len, "_%.*s_", (int)(e - f), f);
}

static void nodes_from_program(const char *exported_json, af_where *w)
{
    cJSON *root = exported_json ? cJSON_Parse(exported_json) : NULL;
    const cJSON *gm = root ? cJSON_GetObjectItemCaseSensitive(root, "graph_module") : NULL;
    const cJSON *g = gm ? cJSON_GetObjectItemCaseSensitive(gm, "graph") : NULL;
    const cJSON *nodes = g ? cJSON_GetObjectItemCaseSensitive(g, "nodes") : NULL;
    char fused[160];
    fused_part(w->kernel, fused, sizeof fused);
    if (w->n_nodes > 0) { /* names from the comment: their stack traces */
        const cJSON *node;
        for (int i = 0; i < w->n_nodes; i++)
            cJSON_ArrayForEach(node, nodes)
            {
                const char *nm = node_name(node), *tr = node_trace(node);
                if (nm && tr && !strcmp(nm, w->nodes[i]))
                    add_code(w, tr);
            }
    } else if (cJSON_IsArray(nodes) && fused[0]) {
        const cJSON *node;
        cJSON_ArrayForEach(node, nodes)
        {
            const cJSON *tg = cJSON_GetObjectItemCaseSensitive(node, "target");
            char op[AF_NAME_MAX - 8], framed[AF_NAME_MAX];
            if (!cJSON_IsString(tg))
                continue;
            aten_packet(tg->valuestring, op, sizeof op);
            snprintf(framed, sizeof framed, "_%s_", op);
            if (!op[0] || !strstr(fused, framed) || w->n_nodes >= AF_WHERE_MAX_NODES)
                continue;
            const char *nm = node_name(node), *tr = node_trace(node);
            copy(w->nodes[w->n_nodes], AF_NAME_MAX, nm ? nm : op);
            snprintf(w->aten[w->n_nodes], AF_NAME_MAX, "aten.%s", op);
            w->n_nodes++;
            if (tr)
                add_code(w, tr);
        }
        if (w->n_nodes)
            copy(w->nodes_from, sizeof w->nodes_from, "exported program (kernel name's ops)");
    }
    if (!w->n_nodes && fused[0]) {
        /* no program: the ops as the name spells them; an op whose own name holds '_'
         * (native_layer_norm) comes out in pieces, hence the label */
        char *s = fused + 1;
        while (*s && w->n_nodes < AF_WHERE_MAX_NODES) {
            char *u = strchr(s, '_');
            if (!u)
                break;
            if (u > s) {
                char op[AF_NAME_MAX - 8];
                copy_n(op, sizeof op, s, (size_t)(u - s));
                copy(w->nodes[w->n_nodes], AF_NAME_MAX, op);
                snprintf(w->aten[w->n_nodes], AF_NAME_MAX, "aten.%s", op);
                w->n_nodes++;
            }
            s = u + 1;
        }
        if (w->n_nodes)
            copy(w->nodes_from, sizeof w->nodes_from, "kernel name (split at '_')");
    }
    cJSON_Delete(root);
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
                input_name(spec, input_of_arg(wf, k), k, nm, sizeof nm);
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
static int in_terms(const char *expr, const af_where *w, const wrapper_facts *wf,
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

/* ---- steps -------------------------------------------------------------------------------- */

static void map_args(af_where *w, const kdef *k, const char *wtext, const wrapper_facts *wf,
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
    int np = split_args(ps, pe, params, AF_WHERE_MAX_ARGS);
    const char *ll = NULL, *open = wtext ? find_launch(wtext, w->kernel, k->triton, &ll) : NULL;
    const char *close = open ? match_close(open) : NULL;
    int na = close ? split_args(open + 1, close, args, AF_WHERE_MAX_ARGS) : 0;
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
        if (!in_terms(a->value, w, wf, spec, a->in_terms, sizeof a->in_terms))
            a->in_terms[0] = '\0';
        w->n_args++;
    }
}

/* Loads and stores at ptr + expr where expr holds a size parameter: step 3's arithmetic. */
static void scan_index(af_where *w, const kdef *k, const char *text, const wrapper_facts *wf,
                       const af_spec *spec, char vars[][32], int nvars)
{
    for (const char *p = k->body; p < k->body_end && w->n_index < AF_WHERE_MAX_INDEX; p++) {
        if (!(p[0] == 'p' && p[1] == 't' && p[2] == 'r' && isdigit((unsigned char)p[3])))
            continue;
        const char *ns = p;
        while (ns > k->body && is_ident(ns[-1]))
            ns--;
        const char *ne = p + 3;
        while (is_ident(*ne))
            ne++;
        const char *q = skip_ws(ne), *es = NULL, *ee = NULL;
        if (*q == '[') {
            es = q + 1;
            ee = match_close(q);
        } else if (*q == '+') {
            q = skip_ws(q + 1);
            if (!strncmp(q, "static_cast<int64_t>", 20))
                q += 20;
            if (*q == '(') {
                es = q + 1;
                ee = match_close(q);
            }
        }
        p = ne;
        if (!es || !ee || ee > k->body_end)
            continue;
        char expr[192];
        copy_n(expr, sizeof expr, es, (size_t)(ee - es));
        if (!strncmp(expr, "static_cast<int64_t>(", 21) && expr[strlen(expr) - 1] == ')') {
            memmove(expr, expr + 21, strlen(expr + 21) + 1);
            expr[strlen(expr) - 1] = '\0';
        }
        int sized = 0;
        for (int i = 0; i < w->n_args; i++)
            if (w->args[i].is_size && find_word(expr, expr, NULL, w->args[i].param))
                sized = 1;
        for (int i = 0; i < nvars; i++)
            if (find_word(expr, expr, NULL, vars[i]))
                sized = 1;
        if (!sized)
            continue;
        char ptr[48];
        copy_n(ptr, sizeof ptr, ns, (size_t)(ne - ns));
        int dup = 0;
        for (int i = 0; i < w->n_index; i++)
            if (!strcmp(w->index[i].ptr, ptr) && !strcmp(w->index[i].expr, expr))
                dup = 1;
        if (dup)
            continue;
        af_where_index *ix = &w->index[w->n_index++];
        copy(ix->ptr, sizeof ix->ptr, ptr);
        copy(ix->expr, sizeof ix->expr, expr);
        in_terms(expr, w, wf, spec, ix->in_terms, sizeof ix->in_terms);
        for (int i = 0; i < w->n_args; i++)
            if (!strcmp(w->args[i].param, ptr))
                copy(ix->ptr_terms, sizeof ix->ptr_terms,
                     w->args[i].in_terms[0] ? w->args[i].in_terms : w->args[i].value);
        ix->line = line_of(text, es);
    }
}

/* The definition `[auto ]var = ...` of var last before `before` in [lo, before). */
static const char *find_def(const char *lo, const char *before, const char *var, const char **rhs)
{
    const char *best = NULL;
    for (const char *p = lo; (p = find_word(lo, p, before, var)); p += strlen(var)) {
        const char *ls = line_start(lo, p), *t = skip_ws(ls);
        if (!strncmp(t, "auto ", 5))
            t = skip_ws(t + 5);
        if (t != p)
            continue;
        const char *eq = skip_ws(p + strlen(var));
        if (*eq == '=' && eq[1] != '=') {
            best = p;
            *rhs = eq + 1;
        }
    }
    return best;
}

/* Whether the kernel stores to ptr before `at`: `ptr[...] = ` or `.store(ptr + `. */
static int written_before(const kdef *k, const char *ptr, const char *at)
{
    for (const char *p = k->body; (p = find_word(k->body, p, at, ptr)); p += strlen(ptr)) {
        const char *q = p + strlen(ptr);
        if (*q == '[') {
            const char *c = match_close(q);
            if (c && c < at && (q = skip_ws(c + 1))[0] == '=' && q[1] != '=')
                return 1;
        }
        if (p - k->body >= 7 && !strncmp(p - 7, ".store(", 7))
            return 1;
    }
    return 0;
}

/* Follow the index variable's definitions back to the pointers it is loaded from. */
static int trace_index(af_where *w, const kdef *k, const char *at, char queue[32][32])
{
    const char *qat[32];
    int qn = 0, qi = 0;
    copy(queue[qn], sizeof queue[0], w->index_var);
    qat[qn++] = at;
    size_t o = 0;
    while (qi < qn) {
        const char *rhs = NULL, *d = find_def(k->body, qat[qi], queue[qi], &rhs);
        qi++;
        if (!d)
            continue;
        const char *re = line_end(rhs);
        for (const char *p = rhs; p < re; p++) {
            if (!is_ident(*p) || (p > rhs && is_ident(p[-1])))
                continue;
            const char *e = p;
            while (is_ident(*e) && e < re)
                e++;
            size_t n = (size_t)(e - p);
            if (n > 3 && !strncmp(p, "tmp", 3) && qn < 32) {
                int seen = 0;
                for (int i = 0; i < qn; i++)
                    if (strlen(queue[i]) == n && !strncmp(queue[i], p, n))
                        seen = 1;
                if (!seen) {
                    copy_n(queue[qn], sizeof queue[0], p, n);
                    qat[qn++] = d;
                }
            } else if (is_ptr_param(p, n)) {
                char one[256], ptr[48];
                copy_n(ptr, sizeof ptr, p, n);
                const char *what = "";
                for (int i = 0; i < w->n_args; i++)
                    if (!strcmp(w->args[i].param, ptr))
                        what = w->args[i].in_terms[0] ? w->args[i].in_terms : w->args[i].value;
                int written = !strncmp(ptr, "out_ptr", 7) && written_before(k, ptr, at);
                snprintf(one, sizeof one, "%s%s%s%.96s%s%s", o ? ", " : "", ptr,
                         what[0] ? " (" : "", what,
                         written ? ", written earlier by this kernel" : "", what[0] ? ")" : "");
                if (!strstr(w->index_from, one + (o ? 2 : 0)) &&
                    o + strlen(one) < sizeof w->index_from) {
                    memcpy(w->index_from + o, one, strlen(one) + 1);
                    o += strlen(one);
                }
            }
            p = e - 1;
        }
    }
    return qn;
}

static void read_checks(af_where *w, const char *wtext)
{
    if (!wtext)
        return;
    w->checks_gated = strstr(wtext, "if (!_check_aoti_runtime_check_inputs_env())") != NULL;
    for (const char *p = wtext; (p = strstr(p, "\"input_handles[")); p++) {
        int k, d;
        char kind[16];
        long long v;
        const char *m = p + 15;
        if (sscanf(m, "%d]: dim value is too %15[a-z] at %d", &k, kind, &d) == 3) {
            const char *x = strstr(m, strcmp(kind, "small") ? "<= " : ">= ");
            if (!x || sscanf(x + 3, "%lld", &v) != 1)
                continue;
        } else if (sscanf(m, "%d]: unmatched dim value at %d", &k, &d) == 2) {
            const char *x = strstr(m, "expected: ");
            if (!x || sscanf(x + 10, "%lld", &v) != 1)
                continue;
            copy(kind, sizeof kind, "exact");
        } else {
            continue;
        }
        w->checks_found = 1;
        /* only the dims the kernel's sizes come from */
        int used = 0;
        for (int i = 0; i < w->n_args; i++)
            if (w->args[i].is_size && w->args[i].input == k && w->args[i].dim == d)
                used = 1;
        if (!used)
            continue;
        af_where_check *c = NULL;
        for (int i = 0; i < w->n_checks; i++)
            if (w->checks[i].input == k && w->checks[i].dim == d)
                c = &w->checks[i];
        if (!c) {
            if (w->n_checks >= AF_WHERE_MAX_CHECKS)
                continue;
            c = &w->checks[w->n_checks++];
            memset(c, 0, sizeof *c);
            c->input = k;
            c->dim = d;
        }
        if (!strcmp(kind, "small"))
            c->has_lower = 1, c->lower = v;
        else if (!strcmp(kind, "large"))
            c->has_upper = 1, c->upper = v;
        else
            c->has_exact = 1, c->exact = v;
    }
    /* a size the kernel uses that no check_input_N mentions: a check not made at all */
    for (int i = 0; i < w->n_args; i++) {
        const af_where_arg *a = &w->args[i];
        int have = 0;
        if (!a->is_size || a->input < 0)
            continue;
        for (int j = 0; j < w->n_checks; j++)
            have |= w->checks[j].input == a->input && w->checks[j].dim == a->dim;
        if (!have && w->n_checks < AF_WHERE_MAX_CHECKS) {
            af_where_check *c = &w->checks[w->n_checks++];
            memset(c, 0, sizeof *c);
            c->input = a->input;
            c->dim = a->dim;
        }
    }
}

/* Lines of text (1-based ranges, in order, clamped) after a line-number gutter, each
 * range's common indentation removed, "..." between ranges that do not touch. */
static void set_excerpt(af_where *w, const char *text, const int (*ranges)[2], int nr)
{
    const char *starts[64];
    int nums[64], rng[64], n = 0;
    size_t indent[8];
    const char *p = text;
    int ln = 1;
    for (int r = 0; r < nr && r < 8; r++) {
        indent[r] = (size_t)-1;
        for (; *p && ln < ranges[r][0]; p++)
            ln += *p == '\n';
        while (*p && ln <= ranges[r][1] && n < 64) {
            const char *t = skip_ws(p), *e = line_end(p);
            if (t < e && (size_t)(t - p) < indent[r])
                indent[r] = (size_t)(t - p);
            starts[n] = p;
            rng[n] = r;
            nums[n++] = ln;
            p = *e ? e + 1 : e;
            ln++;
        }
    }
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        char one[240];
        if (i && nums[i] != nums[i - 1] + 1 && o + 6 < sizeof w->excerpt) {
            memcpy(w->excerpt + o, "  ...\n", 7);
            o += 6;
        }
        size_t in = indent[rng[i]] == (size_t)-1 ? 0 : indent[rng[i]];
        const char *s = starts[i], *e = line_end(s);
        s = (size_t)(e - s) > in ? s + in : e;
        size_t l = (size_t)(e - s);
        /* generated C++ lines run long; the arithmetic is near the start */
        int cut = l > 160;
        snprintf(one, sizeof one, "%5d  %.*s%s\n", nums[i], (int)(cut ? 160 : l), s,
                 cut ? " ..." : "");
        if (o + strlen(one) >= sizeof w->excerpt)
            break;
        memcpy(w->excerpt + o, one, strlen(one) + 1);
        o += strlen(one);
    }
    w->excerpt_line = n ? nums[0] : 0;
}

/* Find the finding's text in [lo, hi) of text (hi NULL: to the end): the first line of it,
 * or from "index out of bounds: " on. */
static const char *find_text(const char *lo, const char *hi, const char *t)
{
    char want[256];
    copy_n(want, sizeof want, t, strcspn(t, "\n"));
    const char *cands[2] = {want, strstr(want, "index out of bounds: ")};
    for (int c = 0; c < 2; c++) {
        if (!cands[c] || !cands[c][0])
            continue;
        const char *p = strstr(lo, cands[c]);
        if (p && (!hi || p < hi))
            return p;
    }
    return NULL;
}

int af_where_find(const af_where_src *srcs, int n_srcs, const char *exported_json,
                  const af_spec *spec, const af_where_finding *f, af_where *out, af_error *err)
{
    if (!out || !f || (n_srcs > 0 && !srcs))
        return af_error_set(err, AF_E_INTERNAL, "af_where_find: bad arguments");
    memset(out, 0, sizeof *out);
    const char *wtext = NULL;
    const char *wname = "";
    int have_text = 0;
    for (int i = 0; i < n_srcs; i++) {
        have_text |= srcs[i].text && srcs[i].text[0];
        if (srcs[i].is_wrapper && srcs[i].text) {
            wtext = srcs[i].text;
            wname = srcs[i].name ? srcs[i].name : "wrapper.cpp";
        }
    }
    if (!have_text) {
        out->status = AF_WHERE_NO_SOURCES;
        copy(out->why, sizeof out->why,
             "sources missing: the package holds no generated wrapper or kernel source");
        return 0;
    }
    if (!f->kernel[0] && !f->text[0]) {
        out->status = AF_WHERE_NO_KERNEL;
        copy(out->why, sizeof out->why, "the failure names no kernel and no assert text");
        return 0;
    }

    /* steps 1-2: the kernel, by name or as the one that holds the assert text */
    kdef *defs = calloc(256, sizeof *defs);
    if (!defs)
        return af_error_set(err, AF_E_INTERNAL, "out of memory");
    int nd = 0;
    for (int i = 0; i < n_srcs && nd < 256; i++)
        if (srcs[i].text)
            nd += scan_kernels(&srcs[i], i, defs + nd, 256 - nd);
    const kdef *k = NULL;
    const char *assert_at = NULL;
    /* a definition first; the wrapper's declaration still gives the parameters */
    for (int pass = 0; pass < 2 && f->kernel[0] && !k; pass++)
        for (int i = 0; i < nd && !k; i++)
            if (defs[i].decl == pass && defs[i].name_len == strlen(f->kernel) &&
                !strncmp(defs[i].name, f->kernel, defs[i].name_len))
                k = &defs[i];
    if (k && f->text[0])
        assert_at = find_text(k->body, k->body_end, f->text);
    for (int i = 0; i < nd && !k && f->text[0]; i++)
        if (!defs[i].decl && (assert_at = find_text(defs[i].body, defs[i].body_end, f->text)))
            k = &defs[i];
    if (!k) {
        out->status = AF_WHERE_NOT_FOUND;
        if (f->kernel[0])
            snprintf(out->why, sizeof out->why, "kernel %.100s is not defined in the %d source(s)",
                     f->kernel, n_srcs);
        else
            snprintf(out->why, sizeof out->why,
                     "no kernel in the %d source(s) holds the error text", n_srcs);
        copy(out->kernel, sizeof out->kernel, f->kernel);
        free(defs);
        return 0;
    }
    const char *text = srcs[k->src].text;
    out->status = AF_WHERE_FOUND;
    copy_n(out->kernel, sizeof out->kernel, k->name, k->name_len);
    copy(out->kind, sizeof out->kind, k->triton ? "triton" : "cpp");
    copy(out->source, sizeof out->source, srcs[k->src].name ? srcs[k->src].name : "");
    out->line = line_of(text, k->name);
    copy(out->launch_source, sizeof out->launch_source, wname);
    out->declared_only = k->decl;
    if (k->decl)
        copy(out->why, sizeof out->why,
             "only the wrapper's declaration: the kernel's source is not in the package");

    /* steps 4-5: parameters, launch arguments, symbols, inputs */
    wrapper_facts wf;
    read_wrapper_facts(wtext, &wf);
    map_args(out, k, wtext, &wf, spec);

    /* step 6: the model's code */
    const char *ll = NULL;
    if (wtext && find_launch(wtext, out->kernel, k->triton, &ll))
        source_node_comment(wtext, ll, out);
    if (!out->n_nodes)
        source_node_comment(text, k->def, out);
    nodes_from_program(exported_json, out);

    /* the assert, in input terms */
    char vars[32][32];
    int nvars = 0;
    if (assert_at) {
        out->has_assert = 1;
        out->assert_line = line_of(text, assert_at);
        const char *q = strchr(assert_at, '"');
        const char *qe = strchr(assert_at, '\'');
        if (!q || (qe && qe < q))
            q = qe;
        const char *le = line_end(assert_at);
        copy_n(out->assert_text, sizeof out->assert_text, assert_at,
               (size_t)((q && q < le ? q : le) - assert_at));
        const char *ex = strstr(out->assert_text, "index out of bounds: ");
        copy(out->assert_expr, sizeof out->assert_expr, ex ? ex + 21 : out->assert_text);
        in_terms(out->assert_expr, out, &wf, spec, out->assert_terms, sizeof out->assert_terms);
        const char *v = strstr(out->assert_expr, "<= ");
        if (v) {
            v += 3;
            size_t n = 0;
            while (is_ident(v[n]))
                n++;
            copy_n(out->index_var, sizeof out->index_var, v, n);
        }
        if (out->index_var[0])
            nvars = trace_index(out, k, line_start(text, assert_at), vars);
    }
    /* step 3: the arithmetic that uses the sizes (or, for an assert, its index) */
    scan_index(out, k, text, &wf, spec, vars, nvars);
    if (assert_at) {
        copy(out->excerpt_source, sizeof out->excerpt_source, out->source);
        int first = out->assert_line - 8, def = line_of(text, k->body);
        int r[1][2] = {{first > def ? first : def + 1, out->assert_line + 1}};
        set_excerpt(out, text, (const int(*)[2])r, 1);
    } else {
        /* no assert: the kernel's head and the lines of its size arithmetic */
        copy(out->excerpt_source, sizeof out->excerpt_source, out->source);
        int r[4][2], nr = 0, head = line_of(text, k->def), last = head;
        r[nr][0] = r[nr][1] = head;
        nr++;
        for (int i = 0; i < out->n_index && nr < 4; i++) {
            int l = out->index[i].line;
            if (l <= last)
                continue;
            r[nr][0] = l > last + 1 ? l - 1 : l;
            r[nr][1] = l;
            nr++;
            last = l;
        }
        set_excerpt(out, text, (const int(*)[2])r, nr);
    }
    read_checks(out, wtext);
    free(defs);
    return 0;
}

/* ---- from a package ---------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int af_where_from_package(const af_package *pkg, const af_spec *spec, const af_where_finding *f,
                          af_where *out, af_error *err)
{
    af_where_src srcs[WHERE_MAX_SRCS] = {{0}};
    char *owned[WHERE_MAX_SRCS];
    char names[WHERE_MAX_SRCS][160];
    int n = 0, rc = -1, zerr = 0;
    char wname[160] = "wrapper.cpp";
    if (!pkg || !out)
        return af_error_set(err, AF_E_INTERNAL, "af_where_from_package: bad arguments");
    /* Kernel sources are not extracted at open (nothing runs them); read them now, into
     * memory only, from the same zip. Nothing touches the file system but the read. */
    zip_t *za = zip_open(pkg->abspath[0] ? pkg->abspath : pkg->path, ZIP_RDONLY, &zerr);
    if (!za)
        return af_error_set(err, AF_E_INPUT, "%s: cannot reopen the package to read its sources",
                            pkg->path);
    char dir[AF_NAME_MAX + 32];
    snprintf(dir, sizeof dir, "data/aotinductor/%s/", pkg->model);
    zip_int64_t ne = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < ne && n < WHERE_MAX_SRCS - 1; i++) {
        zip_stat_t zs;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME) ||
            !(zs.valid & ZIP_STAT_SIZE))
            continue;
        const char *m = strstr(zs.name, dir);
        if (!m || (m != zs.name && m[-1] != '/'))
            continue;
        const char *base = m + strlen(dir);
        if (strchr(base, '/') || !base[0])
            continue;
        if (ends_with(base, ".wrapper.cpp")) {
            copy(wname, sizeof wname, base);
            continue; /* its text is pkg->wrapper_cpp */
        }
        if (!ends_with(base, ".kernel.cpp") && !ends_with(base, ".py"))
            continue;
        if (zs.size > WHERE_MAX_SRC_BYTES)
            continue;
        zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)i, 0);
        char *buf = zf ? malloc(zs.size + 1) : NULL;
        zip_int64_t got = buf ? zip_fread(zf, buf, zs.size) : -1;
        if (zf)
            zip_fclose(zf);
        if (got < 0 || (zip_uint64_t)got != zs.size) {
            free(buf);
            continue; /* an unreadable kernel source is one source fewer, not a failure */
        }
        buf[zs.size] = '\0';
        owned[n] = buf;
        copy(names[n], sizeof names[n], base);
        srcs[n] = (af_where_src){names[n], buf, 0};
        n++;
    }
    zip_discard(za);
    int nk = n;
    if (pkg->wrapper_cpp) {
        copy(names[n], sizeof names[n], wname);
        srcs[n] = (af_where_src){names[n], pkg->wrapper_cpp, 1};
        n++;
    }
    rc = af_where_find(srcs, n, pkg->exported_json, spec, f, out, err);
    for (int i = 0; i < nk; i++)
        free(owned[i]);
    return rc;
}

/* ---- the finding from a result ------------------------------------------------------- */

static int kernel_like(const char *s, size_t n)
{
    return (n > 4 && !strncmp(s, "cpp_", 4)) || (n > 7 && !strncmp(s, "triton_", 7));
}

int af_where_finding_from_result(const af_result *r, af_where_finding *out)
{
    memset(out, 0, sizeof *out);
    if (!r)
        return 0;
    const char *e;
    if (r->kernel[0]) {
        copy(out->kernel, sizeof out->kernel, r->kernel);
    } else if ((e = strstr(r->message, "Exception raised from "))) {
        const char *s = e + 22, *t = s;
        while (is_ident(*t))
            t++;
        if (kernel_like(s, (size_t)(t - s)))
            copy_n(out->kernel, sizeof out->kernel, s, (size_t)(t - s));
    }
    for (int i = 0; i < r->n_frames && !out->kernel[0]; i++) {
        const char *b = strchr(r->frames[i], '!');
        if (!b)
            continue;
        const char *s = b + 1, *t = s;
        while (is_ident(*t))
            t++;
        if (kernel_like(s, (size_t)(t - s)))
            copy_n(out->kernel, sizeof out->kernel, s, (size_t)(t - s));
    }
    if (!out->kernel[0] && (e = strstr(r->signature, "@ "))) {
        const char *s = e + 2, *t = s;
        while (is_ident(*t))
            t++;
        if (kernel_like(s, (size_t)(t - s)))
            copy_n(out->kernel, sizeof out->kernel, s, (size_t)(t - s));
    }
    copy_n(out->text, sizeof out->text, r->message, strcspn(r->message, "\n"));
    return out->kernel[0] || out->text[0];
}

/* ---- rendering ------------------------------------------------------------------------- */

/* An inline code span of s: printable ASCII only (other bytes as '?'), delimited by a
 * backtick run longer than any inside it; in a table cell '|' is escaped as well. */
static void wb_code(af_sbuf *b, const char *s, int in_table)
{
    size_t run = 0, best = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    char ticks[16];
    size_t nt = best + 1 < sizeof ticks ? best + 1 : sizeof ticks - 1;
    memset(ticks, '`', nt);
    ticks[nt] = '\0';
    int pad = s[0] == '`' || (s[0] && s[strlen(s) - 1] == '`');
    af_sb_puts(b, ticks);
    if (pad)
        af_sb_puts(b, " ");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char c = (*p >= 0x20 && *p < 0x7f) ? (char)*p : '?';
        if (c == '|' && in_table)
            af_sb_puts(b, "\\|");
        else
            af_sb_addn(b, &c, 1);
    }
    if (pad)
        af_sb_puts(b, " ");
    af_sb_puts(b, ticks);
}

/* Plain text from the package: printable ASCII with Markdown's punctuation escaped. */
static void wb_text(af_sbuf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char c = (*p >= 0x20 && *p < 0x7f) ? (char)*p : '?';
        if (strchr("\\`*_[]{}()<>#+-.!|~", c) && c != '\0') {
            char e[2] = {'\\', c};
            af_sb_addn(b, e, 2);
        } else {
            af_sb_addn(b, &c, 1);
        }
    }
}

/* Generated source, printable ASCII (tabs and newlines kept, other bytes as '?'), fenced. */
static void wb_fence(af_sbuf *b, const char *lang, const char *text)
{
    char *clean = strdup(text);
    if (!clean) {
        b->oom = 1;
        return;
    }
    for (unsigned char *p = (unsigned char *)clean; *p; p++)
        if (!((*p >= 0x20 && *p < 0x7f) || *p == '\n' || *p == '\t'))
            *p = '?';
    af_sb_fence(b, lang, clean);
    free(clean);
}

static void sym_label(const af_spec *spec, int sym, char *out, size_t len)
{
    out[0] = '\0';
    if (!spec || sym < 0 || sym >= spec->n_syms)
        return;
    const af_symbol *s = &spec->syms[sym];
    if (s->dim_name[0])
        snprintf(out, len, "%s (%s)", s->name, s->dim_name);
    else
        snprintf(out, len, "%s", s->name);
}

/* The spec symbol behind (input, dim), or -1. */
static int sym_of(const af_spec *spec, int input, int dim)
{
    if (!spec || input < 0 || input >= spec->n_inputs || dim < 0 || dim >= spec->inputs[input].rank)
        return -1;
    const af_dim *d = &spec->inputs[input].dims[dim];
    return d->sym;
}

static void size_name(const af_spec *spec, int input, int dim, char *out, size_t len)
{
    char nm[AF_NAME_MAX];
    input_name(spec, input, input, nm, sizeof nm);
    snprintf(out, len, "%s.size(%d)", nm, dim);
}

char *af_where_markdown(const af_where *w, const af_spec *spec)
{
    af_sbuf b = {0};
    char t[320];
    af_sb_puts(&b, "## Where\n\n");
    if (w->status != AF_WHERE_FOUND) {
        af_sb_puts(&b, w->status == AF_WHERE_NO_SOURCES ? "Sources missing: " : "Not located: ");
        wb_text(&b, w->why);
        af_sb_puts(&b, ".\n\n");
        return b.oom ? (free(b.s), NULL) : b.s;
    }
    af_sb_puts(&b, w->kind[0] == 't' ? "Triton kernel " : "C++ kernel ");
    wb_code(&b, w->kernel, 0);
    af_sb_puts(&b, w->declared_only ? ", declared (its source is not in the package) in "
                                    : ", defined in ");
    wb_code(&b, w->source, 0);
    af_sb_add(&b, " line %d", w->line);
    if (w->launch_line) {
        af_sb_puts(&b, ", launched from ");
        wb_code(&b, w->launch_source, 0);
        af_sb_add(&b, " line %d", w->launch_line);
    }
    af_sb_puts(&b, ".\n\n");

    if (w->n_nodes) {
        af_sb_puts(&b, "- Source nodes");
        if (!strncmp(w->nodes_from, "exported", 8))
            af_sb_puts(&b, " (the exported program's nodes of the ops the kernel's name lists)");
        else if (!strncmp(w->nodes_from, "kernel", 6))
            af_sb_puts(&b, " (as the kernel's name spells them; no exported program to match)");
        af_sb_puts(&b, ": ");
        for (int i = 0; i < w->n_nodes; i++) {
            af_sb_puts(&b, i ? ", " : "");
            wb_code(&b, w->nodes[i], 0);
        }
        int any = 0;
        for (int i = 0; i < w->n_nodes; i++)
            any |= w->aten[i][0] != '\0';
        if (any) {
            af_sb_puts(&b, "; ATen: ");
            for (int i = 0, j = 0; i < w->n_nodes; i++)
                if (w->aten[i][0]) {
                    af_sb_puts(&b, j++ ? ", " : "");
                    wb_code(&b, w->aten[i], 0);
                }
        }
        af_sb_puts(&b, "\n");
    } else {
        af_sb_puts(&b, "- Source nodes: unknown (no source-node comment, no exported program)\n");
    }
    for (int i = 0; i < w->n_code; i++) {
        af_sb_puts(&b, "- Model code: ");
        wb_code(&b, w->code[i], 0);
        af_sb_puts(&b, "\n");
    }
    if (w->has_assert) {
        af_sb_puts(&b, "- Assert: ");
        wb_code(&b, w->assert_text, 0);
        af_sb_add(&b, " (line %d); in input terms ", w->assert_line);
        wb_code(&b, w->assert_terms[0] ? w->assert_terms : w->assert_expr, 0);
        if (w->index_var[0] && w->index_from[0]) {
            af_sb_puts(&b, ", the index ");
            wb_code(&b, w->index_var, 0);
            af_sb_puts(&b, " read from ");
            wb_code(&b, w->index_from, 0);
        }
        af_sb_puts(&b, "\n");
    }
    for (int i = 0; i < w->n_index; i++) {
        const af_where_index *ix = &w->index[i];
        af_sb_puts(&b, "- Address: ");
        wb_code(&b, ix->ptr, 0);
        if (ix->ptr_terms[0]) {
            af_sb_puts(&b, " (");
            wb_code(&b, ix->ptr_terms, 0);
            af_sb_puts(&b, ")");
        }
        af_sb_puts(&b, " + ");
        wb_code(&b, ix->in_terms[0] ? ix->in_terms : ix->expr, 0);
        af_sb_add(&b, " (line %d)\n", ix->line);
    }
    af_sb_puts(&b, "\n");

    int n_sizes = 0;
    for (int i = 0; i < w->n_args; i++)
        n_sizes += w->args[i].is_size;
    if (w->n_args) {
        af_sb_puts(
            &b,
            "| kernel parameter | launch argument | symbol | input size |\n|---|---|---|---|\n");
        for (int i = 0; i < w->n_args; i++) {
            const af_where_arg *a = &w->args[i];
            af_sb_puts(&b, "| ");
            wb_code(&b, a->param, 1);
            af_sb_puts(&b, " | ");
            if (a->value[0])
                wb_code(&b, a->value, 1);
            else
                af_sb_puts(&b, "?");
            af_sb_puts(&b, " | ");
            sym_label(spec, a->sym, t, sizeof t);
            if (t[0])
                wb_code(&b, t, 1);
            af_sb_puts(&b, " | ");
            if (a->in_terms[0])
                wb_code(&b, a->in_terms, 1);
            else if (!a->is_size)
                af_sb_puts(&b, "(tensor)");
            af_sb_puts(&b, " |\n");
        }
        af_sb_puts(&b, "\n");
    }
    if (n_sizes && w->checks_found) {
        af_sb_puts(&b, "Size checks in the wrapper (`check_input_N`)");
        if (w->checks_gated)
            af_sb_puts(&b,
                       ", which run only when `AOTI_RUNTIME_CHECK_INPUTS` is set (off by default: "
                       "then none of them is made)");
        af_sb_puts(&b, ":\n\n");
        for (int i = 0; i < w->n_checks; i++) {
            const af_where_check *c = &w->checks[i];
            size_name(spec, c->input, c->dim, t, sizeof t);
            af_sb_puts(&b, "- ");
            wb_code(&b, t, 0);
            if (c->has_exact) {
                af_sb_add(&b, ": must equal %" PRId64 "\n", c->exact);
                continue;
            }
            af_sb_puts(&b, ": ");
            if (c->has_lower)
                af_sb_add(&b, "lower bound checked (>= %" PRId64 ")", c->lower);
            else
                af_sb_puts(&b, "lower bound not checked");
            af_sb_puts(&b, ", ");
            if (c->has_upper)
                af_sb_add(&b, "upper bound checked (<= %" PRId64 ")", c->upper);
            else
                af_sb_puts(&b, "upper bound not checked");
            int k = sym_of(spec, c->input, c->dim);
            if (k >= 0 && spec->syms[k].decl_from != AF_FROM_ASSUMED && c->has_lower &&
                spec->syms[k].decl_min < c->lower) {
                if (c->lower - 1 == spec->syms[k].decl_min)
                    af_sb_add(&b,
                              "; declared from %" PRId64 ", so the size %" PRId64
                              " is legal but assumed away",
                              spec->syms[k].decl_min, spec->syms[k].decl_min);
                else
                    af_sb_add(&b,
                              "; declared from %" PRId64 ", so the sizes %" PRId64 "..%" PRId64
                              " are legal but assumed away",
                              spec->syms[k].decl_min, spec->syms[k].decl_min, c->lower - 1);
            }
            af_sb_puts(&b, "\n");
        }
        af_sb_puts(&b, "\n");
    } else if (n_sizes) {
        af_sb_puts(&b, "The wrapper has no `check_input_N` size checks.\n\n");
    }
    if (w->excerpt[0]) {
        af_sb_puts(&b, "From ");
        wb_code(&b, w->excerpt_source, 0);
        af_sb_puts(&b, ":\n\n");
        wb_fence(&b, w->kind[0] == 't' ? "python" : "cpp", w->excerpt);
        af_sb_puts(&b, "\n");
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static const char *status_name(af_where_status s)
{
    switch (s) {
    case AF_WHERE_FOUND:
        return "found";
    case AF_WHERE_NO_SOURCES:
        return "sources missing";
    case AF_WHERE_NOT_FOUND:
        return "not found";
    case AF_WHERE_NO_KERNEL:
        return "no kernel named";
    }
    return "?";
}

int af_where_add_json(cJSON *obj, const char *key, const af_where *w, const af_spec *spec)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return -1;
    char t[320];
    cJSON_AddStringToObject(o, "status", status_name(w->status));
    if (w->status != AF_WHERE_FOUND) {
        cJSON_AddStringToObject(o, "why", w->why);
        if (w->kernel[0])
            cJSON_AddStringToObject(o, "kernel", w->kernel);
        goto done;
    }
    cJSON_AddStringToObject(o, "kernel", w->kernel);
    cJSON_AddStringToObject(o, "kind", w->kind);
    cJSON_AddStringToObject(o, "source", w->source);
    cJSON_AddNumberToObject(o, "line", w->line);
    cJSON_AddStringToObject(o, "launch_source", w->launch_source);
    cJSON_AddNumberToObject(o, "launch_line", w->launch_line);
    cJSON *nodes = cJSON_AddArrayToObject(o, "source_nodes");
    cJSON *aten = cJSON_AddArrayToObject(o, "aten");
    for (int i = 0; i < w->n_nodes; i++) {
        cJSON_AddItemToArray(nodes, cJSON_CreateString(w->nodes[i]));
        if (w->aten[i][0])
            cJSON_AddItemToArray(aten, cJSON_CreateString(w->aten[i]));
    }
    cJSON_AddStringToObject(o, "nodes_from", w->nodes_from);
    cJSON *code = cJSON_AddArrayToObject(o, "model_code");
    for (int i = 0; i < w->n_code; i++)
        cJSON_AddItemToArray(code, cJSON_CreateString(w->code[i]));
    cJSON *args = cJSON_AddArrayToObject(o, "args");
    for (int i = 0; i < w->n_args; i++) {
        const af_where_arg *a = &w->args[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "param", a->param);
        cJSON_AddStringToObject(x, "value", a->value);
        cJSON_AddStringToObject(x, "in_terms", a->in_terms);
        cJSON_AddBoolToObject(x, "size", a->is_size);
        if (spec && a->sym >= 0 && a->sym < spec->n_syms) {
            cJSON_AddStringToObject(x, "symbol", spec->syms[a->sym].name);
            cJSON_AddStringToObject(x, "dim_name", spec->syms[a->sym].dim_name);
        }
        if (a->input >= 0) {
            input_name(spec, a->input, a->input, t, sizeof t);
            cJSON_AddStringToObject(x, "input", t);
            cJSON_AddNumberToObject(x, "input_index", a->input);
        }
        if (a->dim >= 0)
            cJSON_AddNumberToObject(x, "dim", a->dim);
        cJSON_AddItemToArray(args, x);
    }
    cJSON *index = cJSON_AddArrayToObject(o, "index");
    for (int i = 0; i < w->n_index; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "ptr", w->index[i].ptr);
        cJSON_AddStringToObject(x, "ptr_terms", w->index[i].ptr_terms);
        cJSON_AddStringToObject(x, "expr", w->index[i].expr);
        cJSON_AddStringToObject(x, "in_terms", w->index[i].in_terms);
        cJSON_AddNumberToObject(x, "line", w->index[i].line);
        cJSON_AddItemToArray(index, x);
    }
    if (w->has_assert) {
        cJSON *a = cJSON_AddObjectToObject(o, "assert");
        cJSON_AddStringToObject(a, "text", w->assert_text);
        cJSON_AddStringToObject(a, "expr", w->assert_expr);
        cJSON_AddStringToObject(a, "in_terms", w->assert_terms);
        cJSON_AddNumberToObject(a, "line", w->assert_line);
        cJSON_AddStringToObject(a, "index_var", w->index_var);
        cJSON_AddStringToObject(a, "index_from", w->index_from);
    } else {
        cJSON_AddNullToObject(o, "assert");
    }
    cJSON *checks = cJSON_AddArrayToObject(o, "checks");
    for (int i = 0; i < w->n_checks; i++) {
        const af_where_check *c = &w->checks[i];
        cJSON *x = cJSON_CreateObject();
        input_name(spec, c->input, c->input, t, sizeof t);
        cJSON_AddStringToObject(x, "input", t);
        cJSON_AddNumberToObject(x, "input_index", c->input);
        cJSON_AddNumberToObject(x, "dim", c->dim);
        if (c->has_lower)
            cJSON_AddNumberToObject(x, "lower", (double)c->lower);
        else
            cJSON_AddNullToObject(x, "lower");
        if (c->has_upper)
            cJSON_AddNumberToObject(x, "upper", (double)c->upper);
        else
            cJSON_AddNullToObject(x, "upper");
        if (c->has_exact)
            cJSON_AddNumberToObject(x, "exact", (double)c->exact);
        cJSON_AddItemToArray(checks, x);
    }
    cJSON_AddBoolToObject(o, "checks_gated", w->checks_gated);
    cJSON *ex = cJSON_AddObjectToObject(o, "excerpt");
    cJSON_AddStringToObject(ex, "source", w->excerpt_source);
    cJSON_AddNumberToObject(ex, "line", w->excerpt_line);
    cJSON_AddStringToObject(ex, "text", w->excerpt);
done:
    if (!cJSON_AddItemToObject(obj, key, o)) {
        cJSON_Delete(o);
        return -1;
    }
    return 0;
}
