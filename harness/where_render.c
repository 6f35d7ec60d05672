/* where_render.c — an af_where as a "## Where" Markdown section and as JSON; see aotif/where.h.
 *
 * Everything in an af_where came from the package's generated sources and may hold any
 * bytes: the Markdown shows it as printable ASCII only, inline names in code spans whose
 * backtick runs are longer than any inside them, plain text with Markdown's punctuation
 * escaped, and source lines in fences longer than any backtick run they hold. */
#include "where_internal.h"

#include "aotif/strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    af_where_input_name(spec, input, input, nm, sizeof nm);
    snprintf(out, len, "%s.size(%d)", nm, dim);
}

/* ---- Markdown ------------------------------------------------------------------------- */

/* "C++ kernel `k`, defined in `src` line N, launched from `wrapper` line M." */
static void md_kernel(af_sbuf *b, const af_where *w)
{
    af_sb_puts(b, w->kind[0] == 't' ? "Triton kernel " : "C++ kernel ");
    wb_code(b, w->kernel, 0);
    af_sb_puts(b, w->declared_only ? ", declared (its source is not in the package) in "
                                   : ", defined in ");
    wb_code(b, w->source, 0);
    af_sb_add(b, " line %d", w->line);
    if (w->launch_line) {
        af_sb_puts(b, ", launched from ");
        wb_code(b, w->launch_source, 0);
        af_sb_add(b, " line %d", w->launch_line);
    }
    af_sb_puts(b, ".\n\n");
}

/* The source nodes (with where they were matched from), their ATen ops, the model code. */
static void md_nodes(af_sbuf *b, const af_where *w)
{
    if (w->n_nodes) {
        af_sb_puts(b, "- Source nodes");
        if (!strncmp(w->nodes_from, "exported", 8))
            af_sb_puts(b, " (the exported program's nodes of the ops the kernel's name lists)");
        else if (!strncmp(w->nodes_from, "kernel", 6))
            af_sb_puts(b, " (as the kernel's name spells them; no exported program to match)");
        af_sb_puts(b, ": ");
        for (int i = 0; i < w->n_nodes; i++) {
            af_sb_puts(b, i ? ", " : "");
            wb_code(b, w->nodes[i], 0);
        }
        int any = 0;
        for (int i = 0; i < w->n_nodes; i++)
            any |= w->aten[i][0] != '\0';
        if (any) {
            af_sb_puts(b, "; ATen: ");
            for (int i = 0, j = 0; i < w->n_nodes; i++)
                if (w->aten[i][0]) {
                    af_sb_puts(b, j++ ? ", " : "");
                    wb_code(b, w->aten[i], 0);
                }
        }
        af_sb_puts(b, "\n");
    } else {
        af_sb_puts(b, "- Source nodes: unknown (no source-node comment, no exported program)\n");
    }
    for (int i = 0; i < w->n_code; i++) {
        af_sb_puts(b, "- Model code: ");
        wb_code(b, w->code[i], 0);
        af_sb_puts(b, "\n");
    }
}

/* The assert in input terms, then each address computed from sizes. */
static void md_assert_and_index(af_sbuf *b, const af_where *w)
{
    if (w->has_assert) {
        af_sb_puts(b, "- Assert: ");
        wb_code(b, w->assert_text, 0);
        af_sb_add(b, " (line %d); in input terms ", w->assert_line);
        wb_code(b, w->assert_terms[0] ? w->assert_terms : w->assert_expr, 0);
        if (w->index_var[0] && w->index_from[0]) {
            af_sb_puts(b, ", the index ");
            wb_code(b, w->index_var, 0);
            af_sb_puts(b, " read from ");
            wb_code(b, w->index_from, 0);
        }
        af_sb_puts(b, "\n");
    }
    for (int i = 0; i < w->n_index; i++) {
        const af_where_index *ix = &w->index[i];
        af_sb_puts(b, "- Address: ");
        wb_code(b, ix->ptr, 0);
        if (ix->ptr_terms[0]) {
            af_sb_puts(b, " (");
            wb_code(b, ix->ptr_terms, 0);
            af_sb_puts(b, ")");
        }
        af_sb_puts(b, " + ");
        wb_code(b, ix->in_terms[0] ? ix->in_terms : ix->expr, 0);
        af_sb_add(b, " (line %d)\n", ix->line);
    }
    af_sb_puts(b, "\n");
}

/* The table of kernel parameters, launch arguments, symbols and input sizes. */
static void md_args(af_sbuf *b, const af_where *w, const af_spec *spec)
{
    char t[320];
    if (!w->n_args)
        return;
    af_sb_puts(b,
               "| kernel parameter | launch argument | symbol | input size |\n|---|---|---|---|\n");
    for (int i = 0; i < w->n_args; i++) {
        const af_where_arg *a = &w->args[i];
        af_sb_puts(b, "| ");
        wb_code(b, a->param, 1);
        af_sb_puts(b, " | ");
        if (a->value[0])
            wb_code(b, a->value, 1);
        else
            af_sb_puts(b, "?");
        af_sb_puts(b, " | ");
        sym_label(spec, a->sym, t, sizeof t);
        if (t[0])
            wb_code(b, t, 1);
        af_sb_puts(b, " | ");
        if (a->in_terms[0])
            wb_code(b, a->in_terms, 1);
        else if (!a->is_size)
            af_sb_puts(b, "(tensor)");
        af_sb_puts(b, " |\n");
    }
    af_sb_puts(b, "\n");
}

/* One size check: its bounds, and the declared sizes below its lower bound (legal by the
 * contract, yet assumed away by the compiled code). */
static void md_check(af_sbuf *b, const af_where_check *c, const af_spec *spec)
{
    char t[320];
    size_name(spec, c->input, c->dim, t, sizeof t);
    af_sb_puts(b, "- ");
    wb_code(b, t, 0);
    if (c->has_exact) {
        af_sb_add(b, ": must equal %" PRId64 "\n", c->exact);
        return;
    }
    af_sb_puts(b, ": ");
    if (c->has_lower)
        af_sb_add(b, "lower bound checked (>= %" PRId64 ")", c->lower);
    else
        af_sb_puts(b, "lower bound not checked");
    af_sb_puts(b, ", ");
    if (c->has_upper)
        af_sb_add(b, "upper bound checked (<= %" PRId64 ")", c->upper);
    else
        af_sb_puts(b, "upper bound not checked");
    int k = sym_of(spec, c->input, c->dim);
    if (k >= 0 && spec->syms[k].decl_from != AF_FROM_ASSUMED && c->has_lower &&
        spec->syms[k].decl_min < c->lower) {
        if (c->lower - 1 == spec->syms[k].decl_min)
            af_sb_add(
                b, "; declared from %" PRId64 ", so the size %" PRId64 " is legal but assumed away",
                spec->syms[k].decl_min, spec->syms[k].decl_min);
        else
            af_sb_add(b,
                      "; declared from %" PRId64 ", so the sizes %" PRId64 "..%" PRId64
                      " are legal but assumed away",
                      spec->syms[k].decl_min, spec->syms[k].decl_min, c->lower - 1);
    }
    af_sb_puts(b, "\n");
}

/* The wrapper's size checks of the dims the kernel's sizes come from, or their absence. */
static void md_checks(af_sbuf *b, const af_where *w, const af_spec *spec)
{
    int n_sizes = 0;
    for (int i = 0; i < w->n_args; i++)
        n_sizes += w->args[i].is_size;
    if (!n_sizes)
        return;
    if (!w->checks_found) {
        af_sb_puts(b, "The wrapper has no `check_input_N` size checks.\n\n");
        return;
    }
    af_sb_puts(b, "Size checks in the wrapper (`check_input_N`)");
    if (w->checks_gated)
        af_sb_puts(b, ", which run only when `AOTI_RUNTIME_CHECK_INPUTS` is set (off by default: "
                      "then none of them is made)");
    af_sb_puts(b, ":\n\n");
    for (int i = 0; i < w->n_checks; i++)
        md_check(b, &w->checks[i], spec);
    af_sb_puts(b, "\n");
}

char *af_where_markdown(const af_where *w, const af_spec *spec)
{
    af_sbuf b = {0};
    af_sb_puts(&b, "## Where\n\n");
    if (w->status != AF_WHERE_FOUND) {
        af_sb_puts(&b, w->status == AF_WHERE_NO_SOURCES ? "Sources missing: " : "Not located: ");
        wb_text(&b, w->why);
        af_sb_puts(&b, ".\n\n");
        return b.oom ? (free(b.s), NULL) : b.s;
    }
    md_kernel(&b, w);
    md_nodes(&b, w);
    md_assert_and_index(&b, w);
    md_args(&b, w, spec);
    md_checks(&b, w, spec);
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

/* ---- JSON --------------------------------------------------------------------------------- */

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

/* The kernel's place, its source nodes and model code. */
static void json_kernel(cJSON *o, const af_where *w)
{
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
}

static void json_args(cJSON *o, const af_where *w, const af_spec *spec)
{
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
            char t[320];
            af_where_input_name(spec, a->input, a->input, t, sizeof t);
            cJSON_AddStringToObject(x, "input", t);
            cJSON_AddNumberToObject(x, "input_index", a->input);
        }
        if (a->dim >= 0)
            cJSON_AddNumberToObject(x, "dim", a->dim);
        cJSON_AddItemToArray(args, x);
    }
}

/* The addresses computed from sizes, and the assert (null when there is none). */
static void json_index_and_assert(cJSON *o, const af_where *w)
{
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
}

static void json_checks(cJSON *o, const af_where *w, const af_spec *spec)
{
    char t[320];
    cJSON *checks = cJSON_AddArrayToObject(o, "checks");
    for (int i = 0; i < w->n_checks; i++) {
        const af_where_check *c = &w->checks[i];
        cJSON *x = cJSON_CreateObject();
        af_where_input_name(spec, c->input, c->input, t, sizeof t);
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
}

int af_where_add_json(cJSON *obj, const char *key, const af_where *w, const af_spec *spec)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return -1;
    cJSON_AddStringToObject(o, "status", status_name(w->status));
    if (w->status != AF_WHERE_FOUND) {
        cJSON_AddStringToObject(o, "why", w->why);
        if (w->kernel[0])
            cJSON_AddStringToObject(o, "kernel", w->kernel);
    } else {
        json_kernel(o, w);
        json_args(o, w, spec);
        json_index_and_assert(o, w);
        json_checks(o, w, spec);
        cJSON *ex = cJSON_AddObjectToObject(o, "excerpt");
        cJSON_AddStringToObject(ex, "source", w->excerpt_source);
        cJSON_AddNumberToObject(ex, "line", w->excerpt_line);
        cJSON_AddStringToObject(ex, "text", w->excerpt);
    }
    if (!cJSON_AddItemToObject(obj, key, o)) {
        cJSON_Delete(o);
        return -1;
    }
    return 0;
}
