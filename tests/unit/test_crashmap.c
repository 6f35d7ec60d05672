/* test_crashmap.c — the crash map without a model: axis values (bounds, 0 and 1, the
 * explain values kept, log-spaced, at most 16), the choice of axes (pinned first, then by
 * range; a strip for one symbol; nothing for none), the cells against a synthetic oracle,
 * the memo shared with the minimizer and the explain phase (nothing asked twice), legend
 * keys for other signatures and not-bug notes, the stop flag, an oracle error, and the SVG:
 * hostile names and signatures escaped, invalid UTF-8 and control characters replaced.
 * (tests/e2e/test_explain.py renders real maps with rsvg-convert.) */
#include "af_test.h"

#include "crashmap.h"
#include "ddmin.h"
#include "explain.h"
#include "memo.h"

static void mkspec(af_spec *sp, int k, const int64_t *mins, const int64_t *maxs,
                   const char *const *dims)
{
    memset(sp, 0, sizeof *sp);
    sp->n_syms = k;
    for (int i = 0; i < k; i++) {
        snprintf(sp->syms[i].name, sizeof sp->syms[i].name, "s%d", i);
        snprintf(sp->syms[i].dim_name, sizeof sp->syms[i].dim_name, "%s", dims[i]);
        sp->syms[i].min = sp->syms[i].decl_min = mins[i];
        sp->syms[i].max = sp->syms[i].decl_max = maxs[i];
    }
}

static af_case mkcase(int k, const int64_t *v)
{
    af_case c;
    memset(&c, 0, sizeof c);
    c.n_syms = k;
    for (int i = 0; i < k; i++)
        c.values[i] = v[i];
    c.fill = AF_FILL_ZEROS;
    return c;
}

static int has(const int64_t *v, int n, int64_t x)
{
    for (int k = 0; k < n; k++)
        if (v[k] == x)
            return 1;
    return 0;
}

static int ascending(const int64_t *v, int n)
{
    for (int k = 1; k < n; k++)
        if (v[k] <= v[k - 1])
            return 0;
    return 1;
}

static void test_values(void)
{
    int64_t v[AF_MAP_AXIS_MAX];
    /* small ranges: all of them */
    int n = af_crashmap_values(1, 8, NULL, 0, 16, v);
    CHECK_EQ_INT(n, 8);
    CHECK(v[0] == 1 && v[7] == 8 && ascending(v, n));
    n = af_crashmap_values(0, 15, NULL, 0, 16, v);
    CHECK_EQ_INT(n, 16);
    CHECK_EQ_INT(af_crashmap_values(4, 4, NULL, 0, 16, v), 1);
    CHECK_EQ_INT(af_crashmap_values(5, 4, NULL, 0, 16, v), 0);
    /* [0, 64] with the explain values kept */
    const int64_t keep[] = {0, 1, 8, 32, 64, 37};
    n = af_crashmap_values(0, 64, keep, 6, 16, v);
    CHECK(n >= 12 && n <= 16);
    CHECK(ascending(v, n));
    for (int k = 0; k < 6; k++)
        CHECK(has(v, n, keep[k]));
    CHECK(has(v, n, 2) && has(v, n, 4)); /* log-spaced: dense at the small end */
    /* a huge range */
    n = af_crashmap_values(0, (int64_t)1 << 40, NULL, 0, 16, v);
    CHECK(n >= 14 && n <= 16);
    CHECK(ascending(v, n) && v[0] == 0 && v[1] == 1 && v[n - 1] == (int64_t)1 << 40);
    /* a lower bound above 1 has neither 0 nor 1 */
    n = af_crashmap_values(2, 1000, NULL, 0, 16, v);
    CHECK(v[0] == 2 && v[n - 1] == 1000 && !has(v, n, 0) && !has(v, n, 1) && ascending(v, n));
    /* keep values outside the range are ignored */
    const int64_t out_of_range[] = {-5, 5000};
    n = af_crashmap_values(2, 1000, out_of_range, 2, 16, v);
    CHECK(!has(v, n, -5) && !has(v, n, 5000));
    /* any range: inside, ascending, bounds present, at most 16 */
    uint64_t st = 88172645463325252ULL;
    for (int trial = 0; trial < 5000; trial++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        int64_t lo = (int64_t)(st % 200) - 20,
                hi = lo + (int64_t)((st >> 20) % (trial % 5 ? 5000 : (1ULL << 50)));
        int64_t kp[3] = {lo + (int64_t)(st % 7), (lo + hi) / 2, hi - 1};
        n = af_crashmap_values(lo, hi, kp, 3, 16, v);
        int ok = n >= 1 && n <= 16 && v[0] == lo && v[n - 1] == hi && ascending(v, n);
        for (int k = 0; k < n; k++)
            ok &= v[k] >= lo && v[k] <= hi;
        if (!ok) {
            fprintf(stderr, "axis values of [%lld, %lld]: n %d\n", (long long)lo, (long long)hi, n);
            CHECK(ok);
            break;
        }
    }
}

static void test_plan(void)
{
    af_spec sp;
    const char *const dims[] = {"a", "b", "c"};
    mkspec(&sp, 3, (const int64_t[]){0, 1, 7}, (const int64_t[]){1000, 10, 7}, dims);
    af_case m = mkcase(3, (const int64_t[]){0, 3, 7});
    static af_crashmap map;
    /* without explain: by range, the fixed symbol never */
    af_crashmap_plan(&sp, &m, NULL, &map);
    CHECK_EQ_INT(map.n_axes, 2);
    CHECK_EQ_INT(map.sym[0], 0);
    CHECK_EQ_INT(map.sym[1], 1);
    CHECK_EQ_INT(map.n_vals[1], 10);
    CHECK(map.n_vals[0] <= 16);
    /* b pinned, a free: b first */
    static af_explain ex;
    memset(&ex, 0, sizeof ex);
    ex.ran = 1;
    ex.n_syms = 3;
    ex.sym[0].role = AF_ROLE_FREE;
    ex.sym[1].role = AF_ROLE_PINNED;
    ex.sym[2].role = AF_ROLE_FIXED;
    af_crashmap_plan(&sp, &m, &ex, &map);
    CHECK_EQ_INT(map.sym[0], 1);
    CHECK_EQ_INT(map.sym[1], 0);
    /* one variable symbol: a strip */
    mkspec(&sp, 2, (const int64_t[]){0, 4}, (const int64_t[]){64, 4}, dims);
    m = mkcase(2, (const int64_t[]){0, 4});
    af_crashmap_plan(&sp, &m, NULL, &map);
    CHECK_EQ_INT(map.n_axes, 1);
    CHECK_EQ_INT(map.sym[1], -1);
    CHECK_EQ_INT(map.n_vals[1], 1);
    /* none */
    mkspec(&sp, 1, (const int64_t[]){4}, (const int64_t[]){4}, dims);
    m = mkcase(1, (const int64_t[]){4});
    af_crashmap_plan(&sp, &m, NULL, &map);
    CHECK_EQ_INT(map.n_axes, 0);
    CHECK(af_crashmap_svg(&map, &sp, NULL) == NULL);
}

/* ---- a synthetic model: crossidx with random fills. SAME at n == 0; another failure
 * (an index past the end) where m > n + 20; a refusal at n == 64 ---- */

typedef struct orc {
    int64_t runs;
    af_case seen[2048];
    int n_seen, dup;
    af_case start;
    int64_t error_after;
    volatile int *stop;
    int64_t stop_after;
} orc;

static af_verdict oracle(void *ctx, const af_case *c, char *sig, size_t len)
{
    orc *o = ctx;
    o->runs++;
    if (o->stop && o->stop_after && o->runs >= o->stop_after)
        *o->stop = 1;
    if (o->error_after && o->runs >= o->error_after) {
        snprintf(sig, len, "pool died");
        return AF_V_ERROR;
    }
    for (int i = 0; i < o->n_seen; i++)
        if (memcmp(&o->seen[i], c, sizeof *c) == 0 && memcmp(&o->start, c, sizeof *c) != 0)
            o->dup = 1;
    if (o->n_seen < 2048)
        o->seen[o->n_seen++] = *c;
    int64_t n = c->values[0], m = c->values[1];
    if (n == 0)
        return AF_V_SAME;
    if (m > n + 20) {
        snprintf(sig, len,
                 "RUNTIME_ERROR: index </text><script>alert(1)</script> & \"m\" \x01\xff past n");
        return AF_V_OTHER;
    }
    if (n == 64) {
        snprintf(sig, len, "REFUSED");
        return AF_V_PASS;
    }
    return AF_V_PASS;
}

/* What the cell for (n, m) must show. */
static af_cell want_cell(int64_t n, int64_t m)
{
    return n == 0       ? AF_CELL_SAME
           : m > n + 20 ? AF_CELL_OTHER
           : n == 64    ? AF_CELL_NOT_BUG
                        : AF_CELL_OK;
}

static void test_run_shared_memo(void)
{
    static orc o;
    memset(&o, 0, sizeof o);
    af_spec sp;
    const char *const dims[] = {"n<&>", "m\"'"};
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, dims);
    af_case start = mkcase(2, (const int64_t[]){0, 17});
    o.start = start;
    af_memo *memo = af_memo_new();
    CHECK(memo != NULL);
    static af_explain ex;
    static af_min_report rep;
    af_min_opts mo = {.memo = memo, .explain = &ex};
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_minimize(&sp, &start, oracle, &o, &mo, &rep, &err), 0);
    CHECK_EQ_INT(rep.best.values[0], 0);
    CHECK_EQ_INT(rep.best.values[1], 1);
    CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_PINNED);
    CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_FREE);
    size_t known = af_memo_count(memo);
    int64_t runs_before = o.runs;

    static af_crashmap map;
    af_crashmap_opts co = {.runs = 1};
    CHECK_EQ_INT(af_crashmap_run(&sp, &rep.best, &ex, memo, oracle, &o, &co, "RUNTIME_ERROR: boom",
                                 &map, &err),
                 0);
    CHECK(map.complete);
    CHECK_EQ_INT(map.sym[0], 0); /* the pinned n across */
    CHECK_EQ_INT(map.sym[1], 1);
    CHECK_EQ_INT(map.cases, (int64_t)map.n_vals[0] * map.n_vals[1]);
    CHECK(map.cases <= 256);
    CHECK_EQ_INT(map.questions + map.memo_hits, map.cases);
    CHECK_EQ_INT(map.questions, o.runs - runs_before);
    CHECK_EQ_INT(map.runs, map.questions);
    /* the explain row and column lie on the grid: all 9 explain cases, the minimal one
     * among them, come from the memo */
    CHECK(map.memo_hits >= ex.questions + ex.memo_hits - 1);
    CHECK_EQ_INT(af_memo_count(memo), known + (size_t)map.questions);
    CHECK(!o.dup); /* search, explain and map never asked the same case twice */
    int others = 0, notbug = 0, same = 0;
    for (int r = 0; r < map.n_vals[1]; r++)
        for (int c = 0; c < map.n_vals[0]; c++) {
            af_cell w = want_cell(map.vals[0][c], map.vals[1][r]);
            if (map.cell[r][c] != w) {
                fprintf(stderr, "cell n=%lld m=%lld: %d, want %d\n", (long long)map.vals[0][c],
                        (long long)map.vals[1][r], map.cell[r][c], w);
                CHECK(0);
            }
            others += w == AF_CELL_OTHER;
            notbug += w == AF_CELL_NOT_BUG;
            same += w == AF_CELL_SAME;
        }
    CHECK(others > 0 && notbug > 0 && same == map.n_vals[1]);
    CHECK_EQ_INT(map.n_keys, 2);
    int ko = map.key_cell[0] == AF_CELL_OTHER ? 0 : 1; /* keys come in cell order */
    CHECK_EQ_INT(map.key_cell[ko], AF_CELL_OTHER);
    CHECK_EQ_INT(map.key_cell[1 - ko], AF_CELL_NOT_BUG);
    CHECK_STR(map.keys[1 - ko], "REFUSED");
    CHECK(strncmp(map.keys[ko], "RUNTIME_ERROR: index", 20) == 0);

    /* the text rendering: the left column is the crash */
    char *txt = af_crashmap_text(&map);
    CHECK(txt && txt[0] == 'X' && strchr(txt, 'a') && strchr(txt, 'b') && strchr(txt, '.'));
    free(txt);

    /* the SVG: names and signatures escaped, nothing raw */
    char *svg = af_crashmap_svg(&map, &sp, "title <with> & \"quotes\"");
    CHECK(svg != NULL);
    if (svg) {
        CHECK(strncmp(svg, "<?xml", 5) == 0);
        CHECK(strstr(svg, "<script") == NULL);
        CHECK(strstr(svg, "&lt;script&gt;") != NULL);
        CHECK(strstr(svg, "</text><script") == NULL);
        CHECK(strstr(svg, "n&lt;&amp;&gt;") != NULL);
        CHECK(strstr(svg, "m&quot;&apos;") != NULL);
        CHECK(strstr(svg, "title &lt;with&gt; &amp; &quot;quotes&quot;") != NULL);
        CHECK(strchr(svg, '\x01') == NULL && strchr(svg, '\xff') == NULL);
        CHECK(strstr(svg, "fails the same way: RUNTIME_ERROR: boom") != NULL);
        CHECK(strstr(svg, "#d62728") != NULL); /* the crash's colour is used */
        CHECK(strstr(svg, "</svg>\n") != NULL);
        /* every '<' opens markup we wrote: a tag, a closing tag, or the declaration */
        int bad = 0;
        for (const char *p = svg; (p = strchr(p, '<')); p++)
            bad += !(p[1] == '/' || p[1] == '?' || (p[1] >= 'a' && p[1] <= 'z'));
        CHECK_EQ_INT(bad, 0);
        int opens = 0, closes = 0;
        for (const char *p = svg; (p = strstr(p, "<text")); p++)
            opens++;
        for (const char *p = svg; (p = strstr(p, "</text>")); p++)
            closes++;
        CHECK_EQ_INT(opens, closes);
        free(svg);
    }
    /* a second map over the same memo asks nothing */
    int64_t r0 = o.runs;
    CHECK_EQ_INT(af_crashmap_run(&sp, &rep.best, &ex, memo, oracle, &o, &co, "x", &map, &err), 0);
    CHECK_EQ_INT(map.questions, 0);
    CHECK_EQ_INT(o.runs, r0);
    cJSON *j = af_crashmap_json(&map, &sp);
    char *t = cJSON_PrintUnformatted(j);
    CHECK(t && strstr(t, "\"questions\":0") && strstr(t, "\"rows\":[\"X"));
    free(t);
    cJSON_Delete(j);
    af_memo_free(memo);
}

static void test_stop_and_error(void)
{
    static orc o;
    memset(&o, 0, sizeof o);
    af_spec sp;
    const char *const dims[] = {"n", "m"};
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, dims);
    af_case minimal = mkcase(2, (const int64_t[]){0, 1});
    volatile int stop = 0;
    o.stop = &stop;
    o.stop_after = 20;
    static af_crashmap map;
    af_crashmap_opts co = {.runs = 1, .stop = &stop};
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_crashmap_run(&sp, &minimal, NULL, NULL, oracle, &o, &co, "S", &map, &err), 0);
    CHECK(!map.complete);
    CHECK_EQ_INT(map.cases, 20);
    CHECK_EQ_INT(map.cell[map.n_vals[1] - 1][map.n_vals[0] - 1], AF_CELL_NOT_RUN);
    char *svg = af_crashmap_svg(&map, &sp, NULL);
    CHECK(svg && strstr(svg, "not run (stopped early)"));
    free(svg);

    memset(&o, 0, sizeof o);
    o.error_after = 5;
    co.stop = NULL;
    CHECK_EQ_INT(af_crashmap_run(&sp, &minimal, NULL, NULL, oracle, &o, &co, "S", &map, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_RUNTIME);
    CHECK(strstr(err.message, "pool died") != NULL);
    CHECK_EQ_INT(map.cases, 4);
}

static void test_escape(void)
{
    char b[64];
    CHECK_STR(af_xml_escape("a<b&c>\"d'", 0, b, sizeof b), "a&lt;b&amp;c&gt;&quot;d&apos;");
    CHECK_STR(af_xml_escape("tab\there\nnl", 0, b, sizeof b), "tab here nl");
    CHECK_STR(af_xml_escape("bad \xff\xfe \x01 \xc3", 0, b, sizeof b), "bad ?? ? ?");
    CHECK_STR(af_xml_escape("caf\xc3\xa9 ok", 0, b, sizeof b), "caf\xc3\xa9 ok");
    CHECK_STR(af_xml_escape("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 2, b, sizeof b),
              "\xe2\x82\xac\xe2\x82\xac...");
    CHECK_STR(af_xml_escape("\xed\xa0\x80 surrogate", 0, b, sizeof b), "??? surrogate");
    CHECK_STR(af_xml_escape("overlong \xc0\xaf", 0, b, sizeof b), "overlong ??");
    /* a small buffer: never a cut entity or character */
    char s[8];
    CHECK_STR(af_xml_escape("ab&cd", 0, s, sizeof s), "ab&amp;");
    CHECK_STR(af_xml_escape("abcdef\xc3\xa9", 0, s, sizeof s), "abcdef");
    CHECK_STR(af_xml_escape(NULL, 0, s, sizeof s), "");
}

int main(void)
{
    test_values();
    test_plan();
    test_run_shared_memo();
    test_stop_and_error();
    test_escape();
    TEST_MAIN_END();
}
