/* where.c — triage a failure from the package's generated sources; see aotif/where.h.
 *
 * af_where_find runs the steps of the guide in order over the sources: find the kernel (by
 * name, or as the one holding the assert text), map its parameters to launch arguments and
 * inputs (where_text.c), name the model code it came from (where_model.c), rewrite the assert
 * in input terms and trace its index back to the pointers it is loaded from, collect the
 * address arithmetic that uses sizes, quote the lines around it, and list the wrapper's size
 * checks for the inputs involved. af_where_from_package gathers the sources from the zip;
 * where_render.c writes the result. */
#include "where_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#define WHERE_MAX_SRC_BYTES (64u << 20) /* a kernel source is KiBs; refuse anything huge */
#define WHERE_MAX_SRCS 32

/* ---- small text helpers ------------------------------------------------------------- */

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

static int is_ptr_param(const char *s, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (!strncmp(s + i, "ptr", 3) && i + 3 < n && isdigit((unsigned char)s[i + 3]))
            return 1;
    return 0;
}

/* ---- steps -------------------------------------------------------------------------------- */

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
        af_where_in_terms(expr, w, wf, spec, ix->in_terms, sizeof ix->in_terms);
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

/* ---- the search ----------------------------------------------------------------------- */

/* The wrapper among the sources (the last one marked, with text) into *wtext and *wname.
 * Returns whether any source holds text at all. */
static int pick_wrapper(const af_where_src *srcs, int n_srcs, const char **wtext,
                        const char **wname)
{
    int have_text = 0;
    for (int i = 0; i < n_srcs; i++) {
        have_text |= srcs[i].text && srcs[i].text[0];
        if (srcs[i].is_wrapper && srcs[i].text) {
            *wtext = srcs[i].text;
            *wname = srcs[i].name ? srcs[i].name : "wrapper.cpp";
        }
    }
    return have_text;
}

/* Steps 1-2: the kernel, by name or as the one that holds the assert text; the assert's
 * place in it into *assert_at (NULL when the finding has no text, or it is not there). */
static const kdef *locate_kernel(const kdef *defs, int nd, const af_where_finding *f,
                                 const char **assert_at)
{
    const kdef *k = NULL;
    *assert_at = NULL;
    /* a definition first; the wrapper's declaration still gives the parameters */
    for (int pass = 0; pass < 2 && f->kernel[0] && !k; pass++)
        for (int i = 0; i < nd && !k; i++)
            if (defs[i].decl == pass && defs[i].name_len == strlen(f->kernel) &&
                !strncmp(defs[i].name, f->kernel, defs[i].name_len))
                k = &defs[i];
    if (k && f->text[0])
        *assert_at = find_text(k->body, k->body_end, f->text);
    for (int i = 0; i < nd && !k && f->text[0]; i++)
        if (!defs[i].decl && (*assert_at = find_text(defs[i].body, defs[i].body_end, f->text)))
            k = &defs[i];
    return k;
}

static void set_not_found(af_where *out, const af_where_finding *f, int n_srcs)
{
    out->status = AF_WHERE_NOT_FOUND;
    if (f->kernel[0])
        snprintf(out->why, sizeof out->why, "kernel %.100s is not defined in the %d source(s)",
                 f->kernel, n_srcs);
    else
        snprintf(out->why, sizeof out->why, "no kernel in the %d source(s) holds the error text",
                 n_srcs);
    copy(out->kernel, sizeof out->kernel, f->kernel);
}

/* The kernel found: its name, kind and place, and the wrapper that launches it. */
static void describe_kernel(af_where *out, const af_where_src *src, const kdef *k,
                            const char *wname)
{
    out->status = AF_WHERE_FOUND;
    copy_n(out->kernel, sizeof out->kernel, k->name, k->name_len);
    copy(out->kind, sizeof out->kind, k->triton ? "triton" : "cpp");
    copy(out->source, sizeof out->source, src->name ? src->name : "");
    out->line = line_of(src->text, k->name);
    copy(out->launch_source, sizeof out->launch_source, wname);
    out->declared_only = k->decl;
    if (k->decl)
        copy(out->why, sizeof out->why,
             "only the wrapper's declaration: the kernel's source is not in the package");
}

/* Step 6: the model's code, from a source-node comment before the launch or the
 * definition, then the exported program. */
static void model_code(af_where *out, const kdef *k, const char *text, const char *wtext,
                       const char *exported_json)
{
    const char *ll = NULL;
    if (wtext && af_where_find_launch(wtext, out->kernel, k->triton, &ll))
        af_where_source_nodes(wtext, ll, out);
    if (!out->n_nodes)
        af_where_source_nodes(text, k->def, out);
    af_where_program_nodes(exported_json, out);
}

/* The assert at assert_at, in input terms, and the variables its index is computed from
 * (into vars). Returns how many variables. */
static int read_assert(af_where *out, const kdef *k, const char *text, const char *assert_at,
                       const wrapper_facts *wf, const af_spec *spec, char vars[32][32])
{
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
    af_where_in_terms(out->assert_expr, out, wf, spec, out->assert_terms, sizeof out->assert_terms);
    const char *v = strstr(out->assert_expr, "<= ");
    if (v) {
        v += 3;
        size_t n = 0;
        while (is_ident(v[n]))
            n++;
        copy_n(out->index_var, sizeof out->index_var, v, n);
    }
    return out->index_var[0] ? trace_index(out, k, line_start(text, assert_at), vars) : 0;
}

/* The excerpt: the lines before the assert, or without one the kernel's head and the lines
 * of its size arithmetic. */
static void excerpt_of(af_where *out, const kdef *k, const char *text)
{
    copy(out->excerpt_source, sizeof out->excerpt_source, out->source);
    if (out->has_assert) {
        int first = out->assert_line - 8, def = line_of(text, k->body);
        int r[1][2] = {{first > def ? first : def + 1, out->assert_line + 1}};
        set_excerpt(out, text, (const int(*)[2])r, 1);
        return;
    }
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

int af_where_find(const af_where_src *srcs, int n_srcs, const char *exported_json,
                  const af_spec *spec, const af_where_finding *f, af_where *out, af_error *err)
{
    if (!out || !f || (n_srcs > 0 && !srcs))
        return af_error_set(err, AF_E_INTERNAL, "af_where_find: bad arguments");
    memset(out, 0, sizeof *out);
    const char *wtext = NULL;
    const char *wname = "";
    if (!pick_wrapper(srcs, n_srcs, &wtext, &wname)) {
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
    kdef *defs = calloc(256, sizeof *defs);
    if (!defs)
        return af_error_set(err, AF_E_INTERNAL, "out of memory");
    int nd = 0;
    for (int i = 0; i < n_srcs && nd < 256; i++)
        if (srcs[i].text)
            nd += af_where_scan_kernels(&srcs[i], i, defs + nd, 256 - nd);
    const char *assert_at;
    const kdef *k = locate_kernel(defs, nd, f, &assert_at);
    if (!k) {
        set_not_found(out, f, n_srcs);
        free(defs);
        return 0;
    }
    const char *text = srcs[k->src].text;
    describe_kernel(out, &srcs[k->src], k, wname);
    /* steps 4-5: parameters, launch arguments, symbols, inputs */
    wrapper_facts wf;
    af_where_read_wrapper(wtext, &wf);
    af_where_map_args(out, k, wtext, &wf, spec);
    model_code(out, k, text, wtext, exported_json);
    char vars[32][32];
    int nvars = assert_at ? read_assert(out, k, text, assert_at, &wf, spec, vars) : 0;
    /* step 3: the arithmetic that uses the sizes (or, for an assert, its index) */
    scan_index(out, k, text, &wf, spec, vars, nvars);
    excerpt_of(out, k, text);
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
