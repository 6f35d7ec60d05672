/* test_explain.c — the explain phase against synthetic oracles: the values tried per
 * symbol, a two-symbol failure at one symbol's edge (one pinned, one free), a failure that
 * needs both at their edge (both pinned), thresholds (roles predicted exactly, questions
 * within the engine's bound plus 5 per symbol), other failures and their signatures, the
 * stop flag, an oracle error, the memo (nothing asked twice), the summary and JSON. */
#include "af_test.h"

#include "ddmin.h"
#include "explain.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void mkspec(af_spec *sp, int k, const int64_t *mins, const int64_t *maxs,
                   const char *const *dims)
{
    memset(sp, 0, sizeof *sp);
    sp->n_syms = k;
    for (int i = 0; i < k; i++) {
        snprintf(sp->syms[i].name, sizeof sp->syms[i].name, "s%d", i);
        if (dims)
            snprintf(sp->syms[i].dim_name, sizeof sp->syms[i].dim_name, "%s", dims[i]);
        sp->syms[i].min = sp->syms[i].decl_min = sp->syms[i].compiled_min = mins[i];
        sp->syms[i].max = sp->syms[i].decl_max = sp->syms[i].compiled_max = maxs[i];
    }
}

static void mkcase(af_case *c, int k, const int64_t *v)
{
    memset(c, 0, sizeof *c);
    c->n_syms = k;
    for (int i = 0; i < k; i++)
        c->values[i] = v[i];
    c->fill = AF_FILL_RANDOM;
}

/* The engine's bound without the explain phase, computed independently. */
static int64_t bound_of(const af_spec *sp)
{
    int64_t b = 0;
    for (int i = 0; i < sp->n_syms; i++) {
        uint64_t r = (uint64_t)(sp->syms[i].max - sp->syms[i].min) + 1, lg = 0;
        while ((1ULL << lg) < r)
            lg++;
        b += (int64_t)lg + 4;
    }
    return b;
}

/* ---- synthetic oracles ---- */

enum kind { K_EDGE_N, K_BOTH_ZERO, K_CONJ, K_OTHER_LOW };

typedef struct orc {
    enum kind kind;
    int k;
    int64_t t[AF_MAX_SYMS];
    int64_t runs;
    int64_t stop_after; /* > 0: set *stop after this many runs */
    volatile int *stop;
    int64_t error_after; /* > 0: answer ERROR from this run on */
    af_case start;       /* run 3 times to reproduce: not a duplicate */
    af_case seen[4096];
    int64_t n_seen;
    int dup; /* another case run twice */
} orc;

static af_verdict pred(const orc *o, const af_case *c)
{
    const int64_t *s = c->values;
    switch (o->kind) {
    case K_EDGE_N: /* crossidx with zero fills: fails whenever n is at its lower edge */
        return s[0] == 0 ? AF_V_SAME : AF_V_PASS;
    case K_BOTH_ZERO: /* twosym: only when both are empty */
        return s[0] == 0 && s[1] == 0 ? AF_V_SAME : AF_V_PASS;
    case K_CONJ: {
        int same = 1;
        for (int i = 0; i < o->k; i++)
            same &= s[i] >= o->t[i];
        return same ? AF_V_SAME : AF_V_PASS;
    }
    case K_OTHER_LOW: /* fails at a == 0 for b >= 3; another bug below b = 3 */
        if (s[1] < 3)
            return AF_V_OTHER;
        return s[0] == 0 ? AF_V_SAME : AF_V_PASS;
    }
    return AF_V_PASS;
}

static af_verdict oracle(void *ctx, const af_case *c, char *sig, size_t len)
{
    orc *o = ctx;
    o->runs++;
    if (o->stop_after > 0 && o->runs >= o->stop_after && o->stop)
        *o->stop = 1;
    if (o->error_after > 0 && o->runs >= o->error_after) {
        snprintf(sig, len, "worker could not start");
        return AF_V_ERROR;
    }
    for (int64_t i = 0; i < o->n_seen; i++)
        if (memcmp(&o->seen[i], c, sizeof *c) == 0 && memcmp(&o->start, c, sizeof *c) != 0)
            o->dup = 1;
    if (o->n_seen < (int64_t)(sizeof o->seen / sizeof o->seen[0]))
        o->seen[o->n_seen++] = *c;
    af_verdict v = pred(o, c);
    if (v == AF_V_OTHER)
        snprintf(sig, len, "SIGNAL: SIGFPE in b<3 <&>");
    return v;
}

static af_case zcase(int k, const int64_t *v)
{
    af_case c;
    mkcase(&c, k, v);
    memset(&c.values[k], 0, (size_t)(AF_MAX_SYMS - k) * sizeof c.values[0]);
    return c;
}

static int run_min(orc *o, const af_spec *sp, const af_case *start, af_min_opts *mo,
                   af_min_report *rep, af_explain *ex)
{
    af_error err;
    af_error_clear(&err);
    mo->explain = ex;
    o->start = *start;
    int rc = af_minimize(sp, start, oracle, o, mo, rep, &err);
    if (rc != 0)
        fprintf(stderr, "af_minimize: %s\n", err.message);
    return rc;
}

/* ---- tests ---- */

static void check_values(int64_t lo, int64_t hi, const int64_t *want, int n_want)
{
    int64_t v[AF_EXPLAIN_TRIES];
    int n = af_explain_values(lo, hi, v);
    CHECK_EQ_INT(n, n_want);
    for (int k = 0; k < n && k < n_want; k++)
        CHECK_EQ_INT(v[k], want[k]);
}

static void test_values(void)
{
    check_values(0, 64, (const int64_t[]){0, 1, 8, 32, 64}, 5);
    check_values(1, 64, (const int64_t[]){1, 2, 8, 32, 64}, 5);
    check_values(1, 8, (const int64_t[]){1, 2, 3, 4, 8}, 5);
    check_values(0, 128, (const int64_t[]){0, 1, 11, 64, 128}, 5);
    check_values(2, 1024, (const int64_t[]){2, 3, 45, 512, 1024}, 5);
    check_values(0, 1, (const int64_t[]){0, 1}, 2);
    check_values(7, 7, (const int64_t[]){7}, 1);
    check_values(3, 4, (const int64_t[]){3, 4}, 2);
    int64_t v[AF_EXPLAIN_TRIES];
    CHECK_EQ_INT(af_explain_values(5, 4, v), 0);
    /* any range: 1..5 values, ascending, distinct, inside, both bounds present */
    for (int trial = 0; trial < 20000; trial++) {
        int64_t lo = rnd_in(-50, 1000),
                hi = lo + (int64_t)(rnd() % ((trial % 7 == 0) ? (1ULL << 62) - 2000 : 3000));
        int n = af_explain_values(lo, hi, v);
        int ok = n >= 1 && n <= AF_EXPLAIN_TRIES && v[0] == lo && v[n - 1] == hi;
        for (int k = 1; k < n; k++)
            ok &= v[k] > v[k - 1];
        for (int k = 0; k < n; k++)
            ok &= v[k] >= lo && v[k] <= hi;
        if (!ok) {
            fprintf(stderr, "values of [%lld, %lld]: n=%d\n", (long long)lo, (long long)hi, n);
            CHECK(ok);
            break;
        }
    }
}

/* The brief's example: two symbols, fails whenever n is at its edge: one pinned, one free. */
static void test_edge_one_pinned_one_free(void)
{
    static orc o;
    af_spec sp;
    const char *const dims[] = {"n", "m"};
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, dims);
    for (int trial = 0; trial < 50; trial++) {
        memset(&o, 0, sizeof o);
        o.kind = K_EDGE_N;
        o.k = 2;
        af_case start = zcase(2, (const int64_t[]){0, rnd_in(1, 64)});
        if (trial > 0)
            start.values[0] = 0;
        af_min_opts mo = {0};
        static af_min_report rep;
        static af_explain ex;
        CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
        CHECK_EQ_INT(rep.best.values[0], 0);
        CHECK_EQ_INT(rep.best.values[1], 1);
        CHECK(ex.ran && ex.complete);
        CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_PINNED);
        CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_FREE);
        /* n: 0 fails, 1 8 32 64 pass; m: every tried value fails */
        CHECK_EQ_INT(ex.sym[0].n_tried, 5);
        CHECK_EQ_INT(ex.sym[0].tried[0].verdict, AF_V_SAME);
        for (int k = 1; k < 5; k++)
            CHECK_EQ_INT(ex.sym[0].tried[k].verdict, AF_V_PASS);
        for (int k = 0; k < ex.sym[1].n_tried; k++)
            CHECK_EQ_INT(ex.sym[1].tried[k].verdict, AF_V_SAME);
        CHECK_EQ_INT(ex.smallest.values[0], 0);
        CHECK_EQ_INT(ex.smallest.values[1], 1);
        char s[512];
        af_explain_summary(&sp, &ex, s, sizeof s);
        CHECK_STR(s, "fails when n=0, for every m tried (1, 2, 8, 32, 64)");
        /* the bound: B + 5 per symbol, declared and kept; nothing asked twice */
        CHECK_EQ_INT(rep.call_bound, bound_of(&sp) + AF_EXPLAIN_TRIES * 2);
        CHECK(rep.oracle_calls <= rep.call_bound);
        CHECK(rep.explain_calls <= AF_EXPLAIN_TRIES * 2);
        CHECK_EQ_INT(rep.explain_calls, ex.questions);
        /* the minimal case and the lower bound of n the search asked come from the memo:
         * 8 new questions, 2 known */
        CHECK_EQ_INT(ex.questions + ex.memo_hits, 10);
        CHECK(ex.memo_hits >= 2);
        CHECK(!o.dup);
    }
}

/* twosym: fails only when both are 0: both pinned, the summary says so. */
static void test_both_pinned(void)
{
    static orc o;
    memset(&o, 0, sizeof o);
    o.kind = K_BOTH_ZERO;
    o.k = 2;
    af_spec sp;
    const char *const dims[] = {"n", "m"};
    mkspec(&sp, 2, (const int64_t[]){0, 0}, (const int64_t[]){128, 128}, dims);
    af_case start = zcase(2, (const int64_t[]){0, 0});
    af_min_opts mo = {0};
    static af_min_report rep;
    static af_explain ex;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
    CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_PINNED);
    CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_PINNED);
    char s[512];
    af_explain_summary(&sp, &ex, s, sizeof s);
    CHECK_STR(s, "fails only when n=0 and m=0 (every symbol tried is pinned)");
    CHECK(rep.oracle_calls <= rep.call_bound);
    CHECK(!o.dup);
    cJSON *j = af_explain_json(&sp, &ex);
    char *t = cJSON_PrintUnformatted(j);
    CHECK(t && strstr(t, "\"pinned\":[\"n\",\"m\"]") && strstr(t, "\"free\":[]"));
    free(t);
    cJSON_Delete(j);
}

/* Conjunctions of thresholds: a symbol is free exactly when its threshold is at or below
 * its lower bound; the questions stay within B + 5k. */
static void test_thresholds(void)
{
    static orc o;
    int64_t worst = INT64_MIN;
    for (int trial = 0; trial < 600; trial++) {
        int k = (int)rnd_in(1, 6);
        int64_t mins[AF_MAX_SYMS], maxs[AF_MAX_SYMS], v[AF_MAX_SYMS];
        memset(&o, 0, sizeof o);
        o.kind = K_CONJ;
        o.k = k;
        for (int i = 0; i < k; i++) {
            mins[i] = rnd_in(0, 3);
            maxs[i] = mins[i] + rnd_in(1, trial % 3 ? 200 : (1 << 20));
            o.t[i] = rnd() % 3 == 0 ? rnd_in(0, mins[i]) : rnd_in(mins[i], maxs[i]);
            v[i] = rnd_in(o.t[i] > mins[i] ? o.t[i] : mins[i], maxs[i]);
        }
        af_spec sp;
        mkspec(&sp, k, mins, maxs, NULL);
        af_case start = zcase(k, v);
        af_min_opts mo = {0};
        static af_min_report rep;
        static af_explain ex;
        if (run_min(&o, &sp, &start, &mo, &rep, &ex) != 0) {
            CHECK(0);
            break;
        }
        int ok = ex.complete && !o.dup &&
                 rep.oracle_calls <= bound_of(&sp) + AF_EXPLAIN_TRIES * k &&
                 rep.call_bound == bound_of(&sp) + AF_EXPLAIN_TRIES * k &&
                 rep.explain_calls <= AF_EXPLAIN_TRIES * k;
        for (int i = 0; i < k; i++) {
            af_role want = o.t[i] <= mins[i] ? AF_ROLE_FREE : AF_ROLE_PINNED;
            ok &= ex.sym[i].role == want;
            ok &= rep.best.values[i] == (o.t[i] > mins[i] ? o.t[i] : mins[i]);
        }
        if (rep.oracle_calls - rep.call_bound > worst)
            worst = rep.oracle_calls - rep.call_bound;
        if (!ok) {
            fprintf(stderr,
                    "thresholds trial %d (k=%d): calls %lld bound %lld explain %lld dup %d\n",
                    trial, k, (long long)rep.oracle_calls, (long long)rep.call_bound,
                    (long long)rep.explain_calls, o.dup);
            for (int i = 0; i < k; i++)
                fprintf(stderr, "  s%d [%lld, %lld] t %lld start %lld best %lld role %s\n", i,
                        (long long)mins[i], (long long)maxs[i], (long long)o.t[i], (long long)v[i],
                        (long long)rep.best.values[i], af_role_name(ex.sym[i].role));
            CHECK(ok);
            break;
        }
    }
    printf("thresholds: worst oracle_calls - (B + 5k) = %lld\n", (long long)worst);
}

/* Another failure at some tried values: pinned, with the other signature recorded. */
static void test_other(void)
{
    static orc o;
    memset(&o, 0, sizeof o);
    o.kind = K_OTHER_LOW;
    o.k = 2;
    af_spec sp;
    const char *const dims[] = {"a", "b"};
    mkspec(&sp, 2, (const int64_t[]){0, 0}, (const int64_t[]){16, 16}, dims);
    af_case start = zcase(2, (const int64_t[]){0, 12});
    af_min_opts mo = {0};
    static af_min_report rep;
    static af_explain ex;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
    CHECK_EQ_INT(rep.best.values[0], 0);
    CHECK_EQ_INT(rep.best.values[1], 3);
    CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_PINNED);
    int others = 0;
    for (int k = 0; k < ex.sym[1].n_tried; k++)
        if (ex.sym[1].tried[k].verdict == AF_V_OTHER) {
            others++;
            CHECK_STR(ex.sym[1].tried[k].text, "SIGNAL: SIGFPE in b<3 <&>");
        } else {
            CHECK_STR(ex.sym[1].tried[k].text, "");
        }
    CHECK_EQ_INT(others, 2); /* b = 0 and 1 (values 0 1 4 8 16) */
    CHECK(rep.n_side >= 1);
    CHECK(!o.dup);
}

/* Stop flag during the phase: it ends with undecided symbols, still within the bound. */
static void test_stop(void)
{
    static orc o;
    volatile int stop = 0;
    af_spec sp;
    const char *const dims[] = {"n", "m"};
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, dims);
    af_case start = zcase(2, (const int64_t[]){0, 1});
    /* find how many runs the search takes, then stop in the middle of the explain phase */
    memset(&o, 0, sizeof o);
    o.kind = K_EDGE_N;
    o.k = 2;
    af_min_opts mo = {0};
    static af_min_report rep;
    static af_explain ex;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
    int64_t total = o.runs, before = total - rep.explain_calls;
    memset(&o, 0, sizeof o);
    o.kind = K_EDGE_N;
    o.k = 2;
    o.stop = &stop;
    o.stop_after = before + 6; /* the 6th explain question: m's values are the next ones */
    mo.stop = &stop;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
    CHECK(ex.ran && !ex.complete);
    CHECK(rep.stopped);
    CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_PINNED); /* n was done */
    CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_UNKNOWN);
    char s[512];
    af_explain_summary(&sp, &ex, s, sizeof s);
    CHECK(strstr(s, "undecided (stopped early): m") != NULL);
}

/* An oracle error in the phase makes af_minimize fail as any other oracle error. */
static void test_error(void)
{
    static orc o;
    af_spec sp;
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, NULL);
    af_case start = zcase(2, (const int64_t[]){0, 1});
    memset(&o, 0, sizeof o);
    o.kind = K_EDGE_N;
    o.k = 2;
    af_min_opts mo = {0};
    static af_min_report rep;
    static af_explain ex;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep, &ex), 0);
    int64_t before = o.runs - rep.explain_calls;
    memset(&o, 0, sizeof o);
    o.kind = K_EDGE_N;
    o.k = 2;
    o.error_after = before + 2;
    af_error err;
    af_error_clear(&err);
    mo.explain = &ex;
    CHECK_EQ_INT(af_minimize(&sp, &start, oracle, &o, &mo, &rep, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_RUNTIME);
    CHECK(!ex.complete);
}

/* af_explain_run alone, through a caller's ask function: fresh flags, fixed symbols,
 * an early negative answer. */
typedef struct direct {
    int calls;
    int fail_at;
} direct;

static int direct_ask(void *ctx, const af_case *c, char *text, size_t len, int *fresh)
{
    direct *d = ctx;
    if (++d->calls == d->fail_at)
        return -7;
    *fresh = c->values[0] != 3; /* the minimal value is "known" */
    if (c->values[0] > 3) {
        snprintf(text, len, "TIMEOUT");
        return AF_V_PASS;
    }
    return AF_V_SAME;
}

static void test_direct(void)
{
    af_spec sp;
    const char *const dims[] = {"x", "one"};
    mkspec(&sp, 2, (const int64_t[]){0, 5}, (const int64_t[]){100, 5}, dims);
    af_case minimal = zcase(2, (const int64_t[]){3, 5});
    direct d = {0, 0};
    static af_explain ex;
    CHECK_EQ_INT(af_explain_run(&sp, &minimal, direct_ask, &d, &ex), 0);
    CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_PINNED); /* 0 1 10 64 100: 10.. time out */
    CHECK_EQ_INT(ex.sym[1].role, AF_ROLE_FIXED);
    CHECK_EQ_INT(ex.sym[0].n_tried, 5);
    CHECK_STR(ex.sym[0].tried[2].text, "TIMEOUT");
    CHECK_EQ_INT(ex.questions + ex.memo_hits, 6);
    CHECK_EQ_INT(ex.bound, 10);
    char s[512];
    af_explain_summary(&sp, &ex, s, sizeof s);
    CHECK_STR(s, "fails only when x=3 (every symbol tried is pinned); fixed by its range: one=5");
    d = (direct){0, 2};
    CHECK_EQ_INT(af_explain_run(&sp, &minimal, direct_ask, &d, &ex), -7);
    CHECK(!ex.complete);
    CHECK_EQ_INT(ex.sym[0].role, AF_ROLE_UNKNOWN); /* 0 was SAME, then the ask failed */
    CHECK_EQ_INT(ex.sym[0].tried[1].verdict, -1);
}

/* Without an explain request nothing changes: the old bound, no explain questions. */
static void test_off(void)
{
    static orc o;
    memset(&o, 0, sizeof o);
    o.kind = K_EDGE_N;
    o.k = 2;
    af_spec sp;
    mkspec(&sp, 2, (const int64_t[]){0, 1}, (const int64_t[]){64, 64}, NULL);
    af_case start = zcase(2, (const int64_t[]){40, 30});
    af_min_opts mo = {0};
    static af_min_report rep;
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_minimize(&sp, &start, oracle, &o, &mo, &rep, &err), 0);
    CHECK_EQ_INT(rep.call_bound, bound_of(&sp));
    CHECK_EQ_INT(rep.explain_calls, 0);
}

int main(void)
{
    test_values();
    test_edge_one_pinned_one_free();
    test_both_pinned();
    test_thresholds();
    test_other();
    test_stop();
    test_error();
    test_direct();
    test_off();
    TEST_MAIN_END();
}
