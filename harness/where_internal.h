/* where_internal.h — what the where*.c files share; not public API (see aotif/where.h).
 *
 * where_text.c reads the generated code (the wrapper's bindings, kernel definitions, their
 * launches and arguments, expressions in input terms); where_model.c names the model code a
 * kernel came from (source-node comments, the exported program's nodes); where.c runs the
 * search step by step over both and reads the package; where_render.c writes the result as
 * Markdown and JSON. The small text helpers below are static inline: each file that
 * includes this header gets its own copy, and none is exported.
 *
 * Every pointer in a kdef points into the source text it was scanned from (borrowed, valid
 * while that text is); a wrapper_facts holds no pointers. */
#ifndef AOTIF_WHERE_INTERNAL_H
#define AOTIF_WHERE_INTERNAL_H

#include "aotif/where.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#define WHERE_MAX_BINDINGS 64

/* ---- small text helpers ------------------------------------------------------------- */

static inline int is_ident(int c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static inline void copy_n(char *dst, size_t len, const char *s, size_t n)
{
    if (!len)
        return;
    if (n >= len)
        n = len - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static inline void copy(char *dst, size_t len, const char *s)
{
    copy_n(dst, len, s, strlen(s));
}

static inline int line_of(const char *text, const char *p)
{
    int n = 1;
    for (const char *q = text; q < p && *q; q++)
        n += *q == '\n';
    return n;
}

static inline const char *line_start(const char *text, const char *p)
{
    while (p > text && p[-1] != '\n')
        p--;
    return p;
}

static inline const char *line_end(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

static inline const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* p at '(' (or '['): the matching closer, or NULL. */
static inline const char *match_close(const char *p)
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

/* ---- where_text.c: the generated code ----------------------------------------------- */

/* Split [p, end) at top-level commas; each piece trimmed. Returns the number of pieces. */
int af_where_split_args(const char *p, const char *end, char out[][128], int max);

/* The wrapper's size bindings (`int64_t sM = argK_1_size[d];`) and which input each argK_1
 * is (`auto argK_1 = std::move(inputs[I]);`). w may be NULL (no wrapper): wf comes out empty. */
void af_where_read_wrapper(const char *w, wrapper_facts *wf);

/* The user's name of input i ("x"), else the wrapper's "argK_1". */
void af_where_input_name(const af_spec *spec, int i, int k, char *out, size_t len);

/* Every kernel definition in one source (s, the si-th): C++ `extern "C" ... NAME(...) {`
 * and Triton `def NAME(...):`. Returns how many were written to out. */
int af_where_scan_kernels(const af_where_src *s, int si, kdef *out, int max);

/* The launch statement of kernel `name` in the wrapper: `NAME(` or (Triton) `call_NAME(` at
 * the start of a line, whose start goes to *line. Returns the '(' or NULL. */
const char *af_where_find_launch(const char *w, const char *name, int triton, const char **line);

/* Rewrite expr: a size parameter becomes what it is launched with in input terms
 * ("x.size(0)"), a wrapper symbol its input size, an argK_1 its input's name. Returns
 * whether anything was replaced. */
int af_where_in_terms(const char *expr, const af_where *w, const wrapper_facts *wf,
                      const af_spec *spec, char *out, size_t len);

/* Steps 4-5: kernel k's parameters, what the wrapper (wtext, may be NULL) launches it with,
 * and the symbols and input sizes behind those, into w->args and w->launch_line. */
void af_where_map_args(af_where *w, const kdef *k, const char *wtext, const wrapper_facts *wf,
                       const af_spec *spec);

/* ---- where_model.c: the model's code ------------------------------------------------ */

/* A source-node comment within the three lines before `at` (a launch or a definition) into
 * w's nodes. Returns 1 when it named any. */
int af_where_source_nodes(const char *text, const char *at, af_where *w);

/* The model code of w's nodes from the exported program (may be NULL): the stack traces of
 * the nodes a comment named, else the nodes whose ops w->kernel's name lists, else those ops
 * as the name spells them. */
void af_where_program_nodes(const char *exported_json, af_where *w);

#endif
