/* where_model.c — the model code a kernel came from, for where.c (step 6).
 *
 * The source nodes come from Inductor's `// Topologically Sorted Source Nodes: [...],
 * Original ATen: [...]` comment before a launch where it wrote one. Torch 2.13 writes none
 * for C++ kernels, so there the kernel's name stands in: Inductor names a fused kernel
 * after the ATen ops of its nodes (`cpp_fused_` + sorted op names + `_N`), and the exported
 * program's nodes whose op is one of those names are the candidates, with the stack trace
 * export recorded for each. Those are marked as matched by name, since two nodes of one op
 * in two kernels cannot be told apart this way. */
#include "where_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* ---- source-node comments ------------------------------------------------------------ */

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
    int n =
        af_where_split_args(o + 1, c, items, max < AF_WHERE_MAX_NODES ? max : AF_WHERE_MAX_NODES);
    for (int i = 0; i < n; i++)
        copy(out[i], AF_NAME_MAX, items[i]);
    return n;
}

/* A source-node comment within the three lines before `at` (a launch or a definition). */
int af_where_source_nodes(const char *text, const char *at, af_where *w)
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

void af_where_program_nodes(const char *exported_json, af_where *w)
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
