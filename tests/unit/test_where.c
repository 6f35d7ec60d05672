/* test_where.c — the triage steps of where.c, each on real generated sources: the CUDA
 * wrappers of tests/fixtures/wrappers (Triton kernels, source-node comments) and the CPU
 * sources of tests/fixtures/sources (crossidx's index assert, lasttok's out-of-bounds read,
 * both with their exported programs). One group of checks per step: source nodes and ATen
 * ops, ksN -> sM, sM -> argK_1.size(d) -> input name and dim, the assert in input terms, the
 * checks the wrapper makes and does not make, missing sources; then the finding taken from
 * a result, the Markdown's quoting and the JSON form. */
#include "af_test.h"

#include "aotif/contract.h"
#include "aotif/package.h"
#include "aotif/where.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *fixture(const char *dir, const char *name)
{
    const char *root = getenv("AF_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/%s/%s", root ? root : ".", dir, name);
    char *text = slurp(path);
    if (!text) {
        fprintf(stderr, "cannot read fixture %s (is AF_SOURCE_DIR set?)\n", path);
        exit(1);
    }
    return text;
}

static const af_where_arg *arg_named(const af_where *w, const char *param)
{
    for (int i = 0; i < w->n_args; i++)
        if (!strcmp(w->args[i].param, param))
            return &w->args[i];
    return NULL;
}

static const af_where_check *check_of(const af_where *w, int input, int dim)
{
    for (int i = 0; i < w->n_checks; i++)
        if (w->checks[i].input == input && w->checks[i].dim == dim)
            return &w->checks[i];
    return NULL;
}

static af_where_finding finding(const char *kernel, const char *text)
{
    af_where_finding f;
    memset(&f, 0, sizeof f);
    snprintf(f.kernel, sizeof f.kernel, "%s", kernel);
    snprintf(f.text, sizeof f.text, "%s", text);
    return f;
}

/* The spec as aoti-run builds it for the example: the wrapper's, then the exported
 * program's names and declared ranges. */
static void spec_with_contract(const char *wrapper, const char *program, af_spec *spec)
{
    af_error err = {0};
    af_contract *c = calloc(1, sizeof *c);
    CHECK(af_spec_from_wrapper(wrapper, spec, &err) == 0);
    CHECK(c && af_contract_from_json(program, "model.json", c, &err) == 0);
    CHECK(c && af_contract_apply(c, spec, "model.json", &err) == 0);
    if (err.message[0])
        fprintf(stderr, "spec: %s\n", err.message);
    free(c);
}

/* Step 6 from a source-node comment, steps 4-5 through call_triton_*'s parameters. */
static void test_cuda_lasttok(void)
{
    char *w = fixture("wrappers", "cuda_lasttok.wrapper.cpp");
    af_where_src src = {"cuda_lasttok.wrapper.cpp", w, 1};
    af_spec spec;
    af_error err = {0};
    CHECK(af_spec_from_wrapper(w, &spec, &err) == 0);
    af_where *wh = calloc(1, sizeof *wh);
    af_where_finding f = finding("triton_red_fused_add_mean_mul_select_0", "");
    CHECK(af_where_find(&src, 1, NULL, &spec, &f, wh, &err) == 0);
    CHECK_EQ_INT(wh->status, AF_WHERE_FOUND);
    CHECK_STR(wh->kind, "triton");
    CHECK_EQ_INT(wh->line, 639);        /* the `def` inside the wrapper's comment */
    CHECK_EQ_INT(wh->launch_line, 818); /* call_triton_red_fused_...(buf1, arg0_1, s77, ...) */
    /* source nodes and ATen ops, as the comment before the launch lists them */
    CHECK_STR(wh->nodes_from, "source-node comment");
    CHECK_EQ_INT(wh->n_nodes, 4);
    CHECK_STR(wh->nodes[0], "select");
    CHECK_STR(wh->nodes[3], "add");
    CHECK_STR(wh->aten[0], "aten.select");
    CHECK_STR(wh->aten[2], "aten.mean");
    /* ksN -> sM: ks0 is the third argument of the launch */
    const af_where_arg *ks0 = arg_named(wh, "ks0");
    CHECK(ks0 != NULL);
    if (ks0) {
        CHECK_STR(ks0->value, "s77");
        CHECK(ks0->is_size);
        /* sM -> argK_1.size(d): run_impl's `int64_t s77 = arg0_1_size[0];` */
        CHECK_EQ_INT(ks0->input, 0);
        CHECK_EQ_INT(ks0->dim, 0);
        CHECK(ks0->sym >= 0 && !strcmp(spec.syms[ks0->sym].name, "s77"));
    }
    const af_where_arg *xn = arg_named(wh, "xnumel");
    CHECK(xn && !strcmp(xn->value, "16L") && !xn->in_terms[0]); /* a constant, no input */
    const af_where_arg *ip = arg_named(wh, "in_ptr0");
    CHECK(ip && !strcmp(ip->value, "arg0_1") && ip->input == 0 && !ip->is_size);
    /* step 3: the load at row ks0 - 1, in input terms (no user names: the wrapper's) */
    CHECK_EQ_INT(wh->n_index, 1);
    CHECK_STR(wh->index[0].expr, "(-16) + x0 + 16*ks0");
    CHECK_STR(wh->index[0].in_terms, "(-16) + x0 + 16*arg0_1.size(0)");
    CHECK_EQ_INT(wh->index[0].line, 661);
    CHECK(!wh->has_assert);
    free(wh);
    free(w);
}

/* Steps 1-2 from the assert text alone, 3-5 into user names, 6 from the exported program. */
static void test_crossidx_assert(void)
{
    char *w = fixture("sources", "crossidx.wrapper.cpp");
    char *k = fixture("sources", "crossidx.kernel.cpp");
    char *prog = fixture("sources", "crossidx.model.json");
    af_where_src srcs[2] = {{"crossidx.kernel.cpp", k, 0}, {"crossidx.wrapper.cpp", w, 1}};
    af_spec spec;
    spec_with_contract(w, prog, &spec);
    CHECK_STR(spec.inputs[0].name, "x");
    af_where *wh = calloc(1, sizeof *wh);
    af_error err = {0};
    af_where_finding f = finding("", "index out of bounds: 0 <= tmp7 < ks1");
    CHECK(af_where_find(srcs, 2, prog, &spec, &f, wh, &err) == 0);
    CHECK_EQ_INT(wh->status, AF_WHERE_FOUND);
    /* steps 1-2: the text is in the kernel .cpp, inside this kernel (not the wrapper's
     * declaration of it) */
    CHECK_STR(wh->kernel, "cpp_fused_argmax_index_mul_unsqueeze_0");
    CHECK_STR(wh->source, "crossidx.kernel.cpp");
    CHECK_STR(wh->kind, "cpp");
    CHECK(!wh->declared_only);
    CHECK(wh->has_assert);
    CHECK_EQ_INT(wh->assert_line, 50);
    CHECK_STR(wh->assert_expr, "0 <= tmp7 < ks1");
    CHECK_EQ_INT(wh->launch_line, 896);
    /* step 4: ks0 -> s17, ks1 -> s77 (the launch's last two arguments) */
    const af_where_arg *ks0 = arg_named(wh, "ks0"), *ks1 = arg_named(wh, "ks1");
    CHECK(ks0 && !strcmp(ks0->value, "s17"));
    CHECK(ks1 && !strcmp(ks1->value, "s77"));
    /* step 5: s77 = arg0_1_size[0] -> input 0, named x by the exported program; s17 -> y */
    if (ks1) {
        CHECK_EQ_INT(ks1->input, 0);
        CHECK_EQ_INT(ks1->dim, 0);
        CHECK_STR(ks1->in_terms, "x.size(0)");
        CHECK(ks1->sym >= 0 && !strcmp(spec.syms[ks1->sym].name, "s77"));
    }
    if (ks0) {
        CHECK_EQ_INT(ks0->input, 1);
        CHECK_STR(ks0->in_terms, "y.size(0)");
    }
    const af_where_arg *p1 = arg_named(wh, "in_ptr1");
    CHECK(p1 && !strcmp(p1->value, "arg0_1") && !strcmp(p1->in_terms, "x"));
    /* the assert in input terms, and where its index comes from */
    CHECK_STR(wh->assert_terms, "0 <= tmp7 < x.size(0)");
    CHECK_STR(wh->index_var, "tmp7");
    CHECK(strstr(wh->index_from, "out_ptr0 (buf0, written earlier by this kernel)") != NULL);
    /* x is read at the index's row */
    CHECK(wh->n_index >= 1 && !strcmp(wh->index[0].ptr, "in_ptr1") &&
          !strcmp(wh->index[0].ptr_terms, "x") && strstr(wh->index[0].expr, "tmp5"));
    /* step 6: no comment in a 2.13 CPU kernel; the program's nodes of the name's ops */
    CHECK_STR(wh->nodes_from, "exported program (kernel name's ops)");
    CHECK_EQ_INT(wh->n_nodes, 4);
    CHECK_STR(wh->nodes[0], "argmax");
    CHECK_STR(wh->aten[2], "aten.index");
    CHECK_EQ_INT(wh->n_code, 1);
    CHECK(strstr(wh->code[0], "crossidx.py:15 in forward: return x[y.argmax().unsqueeze(0)] * 2"));
    /* the excerpt ends on the line after the assert and holds it */
    CHECK(strstr(wh->excerpt, "   50  AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1)") != NULL);
    CHECK(strstr(wh->excerpt, "   51  ") && !strstr(wh->excerpt, "   52  "));
    /* the checks made: both bounds of both dims, gated by AOTI_RUNTIME_CHECK_INPUTS */
    CHECK(wh->checks_found && wh->checks_gated);
    const af_where_check *cx = check_of(wh, 0, 0);
    CHECK(cx && cx->has_lower && cx->lower == 2 && cx->has_upper && cx->upper == 64);
    CHECK(check_of(wh, 1, 0) != NULL);
    CHECK(check_of(wh, 0, 1) == NULL); /* x's static dim 1: no kernel size comes from it */

    /* the Dim name comes from the embedded spec, which this spec lacks: give it one */
    int s77 = af_spec_find_symbol(&spec, "s77");
    CHECK(s77 >= 0);
    if (s77 >= 0)
        snprintf(spec.syms[s77].dim_name, sizeof spec.syms[s77].dim_name, "n");
    char *md = af_where_markdown(wh, &spec);
    CHECK(md && !strncmp(md, "## Where\n\n", 10));
    CHECK(md && strstr(md, "in input terms `0 <= tmp7 < x.size(0)`"));
    CHECK(md && strstr(md, "| `ks1` | `s77` | `s77 (n)` | `x.size(0)` |"));
    CHECK(md && strstr(md, "`x.size(0)`: lower bound checked (>= 2), upper bound checked (<= 64); "
                           "declared from 0, so the sizes 0..1 are legal but assumed away"));
    CHECK(md && strstr(md, "only when `AOTI_RUNTIME_CHECK_INPUTS` is set"));
    CHECK(md && strstr(md, "```cpp\n"));
    free(md);

    cJSON *o = cJSON_CreateObject();
    CHECK(af_where_add_json(o, "where", wh, &spec) == 0);
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(o, "where");
    const cJSON *ja = jw ? cJSON_GetObjectItemCaseSensitive(jw, "assert") : NULL;
    const cJSON *ji = ja ? cJSON_GetObjectItemCaseSensitive(ja, "in_terms") : NULL;
    CHECK(cJSON_IsString(ji) && !strcmp(ji->valuestring, "0 <= tmp7 < x.size(0)"));
    const cJSON *args = jw ? cJSON_GetObjectItemCaseSensitive(jw, "args") : NULL, *a;
    int saw = 0;
    cJSON_ArrayForEach(a, args)
    {
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(a, "param");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(a, "input");
        const cJSON *dn = cJSON_GetObjectItemCaseSensitive(a, "dim_name");
        if (cJSON_IsString(pn) && !strcmp(pn->valuestring, "ks1"))
            saw = cJSON_IsString(in) && !strcmp(in->valuestring, "x") && cJSON_IsString(dn);
    }
    CHECK(saw);
    const cJSON *ch =
        jw ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(jw, "checks"), 0) : NULL;
    CHECK(ch && cJSON_GetObjectItemCaseSensitive(ch, "lower") &&
          cJSON_GetObjectItemCaseSensitive(ch, "lower")->valuedouble == 2);
    cJSON_Delete(o);

    /* a wrapper without the lower-bound check of x's dim 0: the check not made is named */
    char *cut = strstr(w, "\"input_handles[0]: dim value is too small at 0, ");
    CHECK(cut != NULL);
    if (cut)
        memcpy(cut, "\"input_handles[0]: dim value is tiny!!! at 0, ", 46);
    memset(wh, 0, sizeof *wh);
    f = finding("cpp_fused_argmax_index_mul_unsqueeze_0", "");
    CHECK(af_where_find(srcs, 2, prog, &spec, &f, wh, &err) == 0);
    cx = check_of(wh, 0, 0);
    CHECK(cx && !cx->has_lower && cx->has_upper && cx->upper == 64);
    md = af_where_markdown(wh, &spec);
    CHECK(md && strstr(md, "`x.size(0)`: lower bound not checked, upper bound checked (<= 64)"));
    free(md);
    free(wh);
    free(w);
    free(k);
    free(prog);
}

/* A CPU kernel with no assert (lasttok's SIGSEGV): the arithmetic that reads before x. */
static void test_lasttok_cpu(void)
{
    char *w = fixture("sources", "lasttok.wrapper.cpp");
    char *k = fixture("sources", "lasttok.kernel.cpp");
    char *prog = fixture("sources", "lasttok.model.json");
    af_where_src srcs[2] = {{"lasttok.wrapper.cpp", w, 1}, {"lasttok.kernel.cpp", k, 0}};
    af_spec spec;
    spec_with_contract(w, prog, &spec);
    af_where *wh = calloc(1, sizeof *wh);
    af_error err = {0};
    af_where_finding f = finding("cpp_fused_add_mean_mul_select_0", "");
    CHECK(af_where_find(srcs, 2, prog, &spec, &f, wh, &err) == 0);
    CHECK_EQ_INT(wh->status, AF_WHERE_FOUND);
    CHECK_STR(wh->source, "lasttok.kernel.cpp"); /* the definition, not the declaration */
    CHECK_EQ_INT(wh->n_args, 3);
    const af_where_arg *ks0 = arg_named(wh, "ks0");
    CHECK(ks0 && !strcmp(ks0->value, "s77") && !strcmp(ks0->in_terms, "x.size(0)"));
    CHECK_EQ_INT(wh->n_index, 1);
    CHECK_STR(wh->index[0].in_terms, "(-16L) + x0 + 16L*x.size(0)");
    CHECK_STR(wh->index[0].ptr_terms, "x");
    CHECK_STR(wh->nodes[0], "select"); /* graph order of the program */
    CHECK(wh->n_code == 1 &&
          strstr(wh->code[0], "lasttok.py:13 in forward: return x[x.shape[0] - 1]"));
    CHECK(strstr(wh->excerpt, "extern \"C\"  void  cpp_fused_add_mean_mul_select_0(") != NULL);
    CHECK(strstr(wh->excerpt, "16L*ks0") != NULL);

    /* without the program: the ops as the name spells them, labelled so */
    memset(wh, 0, sizeof *wh);
    CHECK(af_where_find(srcs, 2, NULL, &spec, &f, wh, &err) == 0);
    CHECK_STR(wh->nodes_from, "kernel name (split at '_')");
    CHECK_EQ_INT(wh->n_nodes, 4);
    CHECK_STR(wh->nodes[0], "add");
    CHECK_EQ_INT(wh->n_code, 0);

    /* without the kernel .cpp: the wrapper's declaration still maps the launch */
    memset(wh, 0, sizeof *wh);
    CHECK(af_where_find(srcs, 1, NULL, &spec, &f, wh, &err) == 0);
    CHECK_EQ_INT(wh->status, AF_WHERE_FOUND);
    CHECK(wh->declared_only);
    ks0 = arg_named(wh, "ks0");
    CHECK(ks0 && !strcmp(ks0->in_terms, "x.size(0)"));
    CHECK_EQ_INT(wh->n_index, 0);
    free(wh);
    free(w);
    free(k);
    free(prog);
}

/* A derived symbol: cpu_multi binds s68 = (1.0/2.0)*arg0_1_size_0, y's dim 0 halved. */
static void test_derived_binding(void)
{
    char *w = fixture("wrappers", "cpu_multi.wrapper.cpp");
    af_where_src src = {"cpu_multi.wrapper.cpp", w, 1};
    af_spec spec;
    af_error err = {0};
    CHECK(af_spec_from_wrapper(w, &spec, &err) == 0);
    snprintf(spec.inputs[0].name, sizeof spec.inputs[0].name, "y");
    af_where *wh = calloc(1, sizeof *wh);
    af_where_finding f = finding("cpp_fused__to_copy_add_slice_sum_0", "");
    CHECK(af_where_find(&src, 1, NULL, &spec, &f, wh, &err) == 0);
    CHECK(wh->declared_only);
    const af_where_arg *a = NULL;
    for (int i = 0; i < wh->n_args; i++)
        if (!strcmp(wh->args[i].value, "s68"))
            a = &wh->args[i];
    CHECK(a && a->input == 0 && a->dim == 0);
    CHECK(a && !strcmp(a->in_terms, "(1.0/2.0)*y.size(0)"));
    CHECK(check_of(wh, 0, 0) != NULL);
    free(wh);
    free(w);
}

static void test_missing(void)
{
    af_where w;
    af_error err = {0};
    af_where_finding f = finding("cpp_fused_x_0", "");
    CHECK(af_where_find(NULL, 0, NULL, NULL, &f, &w, &err) == 0);
    CHECK_EQ_INT(w.status, AF_WHERE_NO_SOURCES);
    char *md = af_where_markdown(&w, NULL);
    CHECK(md && strstr(md, "## Where\n\nSources missing: "));
    free(md);
    cJSON *o = cJSON_CreateObject();
    CHECK(af_where_add_json(o, "where", &w, NULL) == 0);
    const cJSON *st =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "where"), "status");
    CHECK(cJSON_IsString(st) && !strcmp(st->valuestring, "sources missing"));
    cJSON_Delete(o);

    af_where_src empty = {"x.wrapper.cpp", "", 1};
    CHECK(af_where_find(&empty, 1, NULL, NULL, &f, &w, &err) == 0);
    CHECK_EQ_INT(w.status, AF_WHERE_NO_SOURCES);

    char *cw = fixture("wrappers", "cuda_healthy.wrapper.cpp");
    af_where_src src = {"cuda_healthy.wrapper.cpp", cw, 1};
    CHECK(af_where_find(&src, 1, NULL, NULL, &f, &w, &err) == 0);
    CHECK_EQ_INT(w.status, AF_WHERE_NOT_FOUND);
    CHECK(strstr(w.why, "cpp_fused_x_0") != NULL);
    af_where_finding none = finding("", "");
    CHECK(af_where_find(&src, 1, NULL, NULL, &none, &w, &err) == 0);
    CHECK_EQ_INT(w.status, AF_WHERE_NO_KERNEL);
    free(cw);
}

/* The real package file: kernel sources read from the zip, nothing extracted for them. */
static void test_package(void)
{
    const char *root = getenv("AF_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/cuda_lasttok.pt2", root ? root : ".");
    af_error err = {0};
    af_package *pkg = af_package_open(path, NULL, &err);
    CHECK(pkg != NULL);
    if (!pkg) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    af_where *wh = calloc(1, sizeof *wh);
    af_where_finding f = finding("triton_red_fused_add_mean_mul_select_0", "");
    CHECK(af_where_from_package(pkg, NULL, &f, wh, &err) == 0);
    CHECK_EQ_INT(wh->status, AF_WHERE_FOUND);
    CHECK(strstr(wh->source, ".wrapper.cpp") != NULL);
    CHECK_EQ_INT(wh->n_nodes, 4);
    free(wh);
    af_package_close(pkg);
}

static void test_finding_from_result(void)
{
    af_result r;
    af_where_finding f;
    memset(&r, 0, sizeof r);
    snprintf(
        r.message, sizeof r.message,
        "index out of bounds: 0 <= tmp7 < ks1\nException raised from "
        "cpp_fused_argmax_index_mul_unsqueeze_0 at /tmp/x.kernel.cpp:50 (most recent call first):");
    CHECK(af_where_finding_from_result(&r, &f));
    CHECK_STR(f.kernel, "cpp_fused_argmax_index_mul_unsqueeze_0");
    CHECK_STR(f.text, "index out of bounds: 0 <= tmp7 < ks1");

    memset(&r, 0, sizeof r);
    r.cls = AF_RES_SIGNAL;
    r.n_frames = 2;
    snprintf(r.frames[0], sizeof r.frames[0], "libc.so.6!memcpy+0x10");
    snprintf(r.frames[1], sizeof r.frames[1], "model.so!cpp_fused_add_mean_mul_select_0+0x6a");
    CHECK(af_where_finding_from_result(&r, &f));
    CHECK_STR(f.kernel, "cpp_fused_add_mean_mul_select_0");
    CHECK_STR(f.text, "");

    memset(&r, 0, sizeof r);
    snprintf(r.signature, sizeof r.signature, "SIGNAL: SIGSEGV @ cpp_fused_a_0 / run_impl");
    CHECK(af_where_finding_from_result(&r, &f));
    CHECK_STR(f.kernel, "cpp_fused_a_0");

    memset(&r, 0, sizeof r);
    snprintf(r.kernel, sizeof r.kernel, "triton_poi_fused_index_1");
    snprintf(r.signature, sizeof r.signature, "SIGNAL: SIGSEGV @ addmm_impl_cpu_");
    CHECK(af_where_finding_from_result(&r, &f));
    CHECK_STR(f.kernel, "triton_poi_fused_index_1");

    memset(&r, 0, sizeof r);
    snprintf(r.signature, sizeof r.signature, "SIGNAL: SIGSEGV @ addmm_impl_cpu_");
    CHECK(!af_where_finding_from_result(&r, &f)); /* not a generated kernel: nothing to find */
}

/* Source text with backticks and Markdown in names is quoted, never interpreted. */
static void test_markdown_quoting(void)
{
    const char *src =
        "// Topologically Sorted Source Nodes: [a*b_`c`], Original ATen: [aten.mul]\n"
        "extern \"C\"  void  cpp_fused_mul_0(const float* in_ptr0, const int64_t ks0)\n"
        "{\n"
        "    // ```` four backticks\n"
        "    auto tmp0 = in_ptr0[static_cast<int64_t>(ks0 + (-1L))];\n"
        "    AOTI_TORCH_CHECK((0 <= tmp0) & (tmp0 < ks0), \"index out of bounds: 0 <= tmp0 < "
        "ks0\");\n"
        "}\n";
    af_where_src s = {"k|`x`.kernel.cpp", src, 0};
    af_where *w = calloc(1, sizeof *w);
    af_error err = {0};
    af_where_finding f = finding("", "index out of bounds: 0 <= tmp0 < ks0");
    CHECK(af_where_find(&s, 1, NULL, NULL, &f, w, &err) == 0);
    CHECK_EQ_INT(w->status, AF_WHERE_FOUND);
    CHECK_STR(w->nodes[0], "a*b_`c`");
    CHECK(w->has_assert && w->assert_line == 6);
    char *md = af_where_markdown(w, NULL);
    CHECK(md && strstr(md, "``a*b_`c` ``") == NULL);  /* no pad needed: ends in a backtick */
    CHECK(md && strstr(md, "`` a*b_`c` ``") != NULL); /* a longer delimiter, padded */
    CHECK(md && strstr(md, "`````cpp\n") != NULL);    /* fence longer than the four inside */
    CHECK(md && strstr(md, "\n`````\n") != NULL);
    free(md);
    memset(w, 0, sizeof *w);
    w->status = AF_WHERE_NOT_FOUND;
    snprintf(w->why, sizeof w->why, "kernel *evil*_[x](y) <b>");
    md = af_where_markdown(w, NULL);
    CHECK(md && strstr(md, "kernel \\*evil\\*\\_\\[x\\]\\(y\\) \\<b\\>") != NULL);
    free(md);
    free(w);
}

int main(void)
{
    test_cuda_lasttok();
    test_crossidx_assert();
    test_lasttok_cpu();
    test_derived_binding();
    test_missing();
    test_package();
    test_finding_from_result();
    test_markdown_quoting();
    TEST_MAIN_END();
}
