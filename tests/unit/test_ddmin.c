/* test_ddmin.c — the minimization engine against synthetic oracles: thresholds (exact
 * minimum, oracle calls within the promised bound), a failure that needs two symbols to
 * move at once, non-monotone predicates (local minimality checked by brute force), other
 * failures on the way, flaky and non-reproducing oracles, stop flag and budget, fill
 * simplification, oracle errors and bad arguments. */
#include "af_test.h"

#include <time.h>

#include "ddmin.h"
#include "explain.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
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

static void mkspec(af_spec *sp, int k, const int64_t *mins, const int64_t *maxs)
{
    memset(sp, 0, sizeof *sp);
    sp->n_syms = k;
    for (int i = 0; i < k; i++) {
        snprintf(sp->syms[i].name, sizeof sp->syms[i].name, "s%d", i);
        sp->syms[i].min = sp->syms[i].compiled_min = mins[i];
        sp->syms[i].max = sp->syms[i].compiled_max = maxs[i];
    }
}

static void mkcase(af_case *c, int k, const int64_t *v)
{
    memset(c, 0, sizeof *c);
    c->n_syms = k;
    for (int i = 0; i < k; i++)
        c->values[i] = v[i];
    c->fill = AF_FILL_RANDOM;
    c->seed = 0;
}

/* The bound the brief asks for, computed independently of the engine. */
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

/* ---- the synthetic oracles ---- */

enum kind { K_CONJ, K_DISJ, K_PROD, K_JOINT, K_EQUAL, K_MOD, K_OTHER, K_NEVER };

typedef struct orc {
    enum kind kind;
    int k;
    int64_t t[AF_MAX_SYMS]; /* thresholds (K_CONJ, K_DISJ: t > max means "not in the bug") */
    int64_t T;              /* K_PROD */
    int64_t runs;           /* calls of the oracle function */
    /* behaviours layered on top */
    int flaky;          /* 3: SAME only 2 of 3 times; 1: only 1 of 3 times */
    int64_t stop_after; /* > 0: set *stop after this many runs */
    volatile int *stop;
    int64_t error_after; /* > 0: answer ERROR from this run on */
    long sleep_ns;       /* per run */
    int fill_rule;       /* 0 none, 1: not ones, 2: only ones, 3: only random, 4: random seed 77 */
    /* every case run, to check nothing is asked twice */
    af_case *seen;
    int64_t n_seen, cap_seen;
} orc;

static af_verdict pred(const orc *o, const af_case *c)
{
    const int64_t *s = c->values;
    int same = 0;
    switch (o->kind) {
    case K_CONJ:
        same = 1;
        for (int i = 0; i < o->k; i++)
            same &= s[i] >= o->t[i];
        break;
    case K_DISJ:
        for (int i = 0; i < o->k; i++)
            same |= s[i] >= o->t[i];
        break;
    case K_PROD:
        same = s[0] * s[1] >= o->T;
        break;
    case K_JOINT: /* needs a and b to reach 0 together */
        same = s[2] >= 7 && ((s[0] == 0 && s[1] == 0) || (s[0] >= 300 && s[1] >= 500));
        break;
    case K_EQUAL:
        same = s[0] == s[1] && s[2] >= 5;
        break;
    case K_MOD: /* symbol 0 non-monotone, the others thresholds */
        same = s[0] % 64 == 1;
        for (int i = 1; i < o->k; i++)
            same &= s[i] >= o->t[i];
        break;
    case K_OTHER:
        if (s[0] < 10)
            return AF_V_OTHER;
        same = s[0] >= 20;
        break;
    case K_NEVER:
        same = 0;
        break;
    }
    switch (o->fill_rule) {
    case 1:
        same &= c->fill != AF_FILL_ONES;
        break;
    case 2:
        same &= c->fill == AF_FILL_ONES;
        break;
    case 3:
        same &= c->fill == AF_FILL_RANDOM;
        break;
    case 4:
        same &= c->fill == AF_FILL_RANDOM && c->seed == 77;
        break;
    default:
        break;
    }
    return same ? AF_V_SAME : AF_V_PASS;
}

static af_verdict oracle(void *ctx, const af_case *c, char *sig, size_t len)
{
    orc *o = ctx;
    o->runs++;
    if (o->n_seen == o->cap_seen) {
        o->cap_seen = o->cap_seen ? 2 * o->cap_seen : 256;
        o->seen = realloc(o->seen, (size_t)o->cap_seen * sizeof *o->seen);
    }
    o->seen[o->n_seen++] = *c;
    if (o->sleep_ns) {
        struct timespec ts = {0, o->sleep_ns};
        nanosleep(&ts, NULL);
    }
    if (o->stop_after && o->runs >= o->stop_after && o->stop)
        *o->stop = 1;
    if (o->error_after && o->runs >= o->error_after) {
        snprintf(sig, len, "worker died");
        return AF_V_ERROR;
    }
    af_verdict v = pred(o, c);
    if (v == AF_V_OTHER)
        snprintf(sig, len, "RUNTIME_ERROR: small shape");
    if (v == AF_V_SAME && o->flaky == 3 && o->runs % 3 == 0)
        v = AF_V_PASS;
    if (v == AF_V_SAME && o->flaky == 1 && o->runs % 3 != 0)
        v = AF_V_PASS;
    return v;
}

/* How many times some case was run more than once (outside the reproduction). */
static int64_t repeats(const orc *o, const af_case *start)
{
    int64_t rep = 0;
    for (int64_t a = 0; a < o->n_seen; a++) {
        if (o->seen[a].n_syms == start->n_syms && o->seen[a].fill == start->fill &&
            o->seen[a].seed == start->seed &&
            memcmp(o->seen[a].values, start->values,
                   sizeof start->values[0] * (size_t)start->n_syms) == 0)
            continue;
        for (int64_t b = 0; b < a; b++)
            if (o->seen[b].fill == o->seen[a].fill && o->seen[b].seed == o->seen[a].seed &&
                memcmp(o->seen[b].values, o->seen[a].values,
                       sizeof o->seen[a].values[0] * (size_t)o->seen[a].n_syms) == 0) {
                rep++;
                break;
            }
    }
    return rep;
}

static void orc_init(orc *o, enum kind kind, int k)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->k = k;
}

/* Brute-force local minimality: best is SAME and no certificate value is. */
static int brute_locally_minimal(const orc *o, const af_spec *sp, const af_case *best)
{
    if (pred(o, best) != AF_V_SAME)
        return 0;
    for (int i = 0; i < sp->n_syms; i++) {
        int64_t x = best->values[i], mn = sp->syms[i].min;
        int64_t cand[5] = {mn, 0, 1, 2, x - 1};
        for (int k = 0; k < 5; k++) {
            if (cand[k] < mn || cand[k] >= x)
                continue;
            af_case c = *best;
            c.values[i] = cand[k];
            if (pred(o, &c) == AF_V_SAME)
                return 0;
        }
    }
    return 1;
}

static int run_min(orc *o, const af_spec *sp, const af_case *start, const af_min_opts *opts,
                   af_min_report *rep)
{
    af_error err;
    af_error_clear(&err);
    int rc = af_minimize(sp, start, oracle, o, opts, rep, &err);
    if (rc != 0)
        fprintf(stderr, "af_minimize: %s\n", err.message);
    return rc;
}

/* ---- tests ---- */

/* Conjunctions of thresholds over 1..8 symbols, ranges up to 2^20, many shapes: the
 * exact minimum, within the bound, nothing asked twice. */
static void test_thresholds_random(void)
{
    int64_t worst_gap = INT64_MIN, tight = 0, total = 0;
    int64_t per_k_calls[9] = {0}, per_k_bound[9] = {0}, per_k_n[9] = {0};
    for (int trial = 0; trial < 1500; trial++) {
        int k = 1 + (int)(rnd() % 8);
        int64_t mins[AF_MAX_SYMS], maxs[AF_MAX_SYMS], v[AF_MAX_SYMS];
        orc o;
        orc_init(&o, K_CONJ, k);
        for (int i = 0; i < k; i++) {
            static const int64_t mchoice[6] = {0, 0, 0, 1, 2, 5};
            mins[i] = mchoice[rnd() % 6];
            int64_t r;
            switch (rnd() % 4) {
            case 0:
                r = (int64_t)1 << 20;
                break;
            case 1:
                r = (int64_t)1 << rnd_in(1, 20);
                break;
            case 2:
                r = rnd_in(1, (int64_t)1 << 20);
                break;
            default:
                r = rnd_in(1, 12);
                break;
            }
            maxs[i] = mins[i] + r - 1;
            v[i] = rnd() % 2 ? maxs[i] : rnd_in(mins[i], maxs[i]);
            if (rnd() % 10 < 7) { /* in the bug */
                switch (rnd() % 4) {
                case 0:
                    o.t[i] = rnd_in(mins[i], mins[i] + 3 < v[i] ? mins[i] + 3 : v[i]);
                    break;
                case 1:
                    o.t[i] = rnd_in(v[i] - 3 > mins[i] ? v[i] - 3 : mins[i], v[i]);
                    break;
                default:
                    o.t[i] = rnd_in(mins[i], v[i]);
                    break;
                }
            } else {
                o.t[i] = mins[i]; /* irrelevant */
            }
        }
        af_spec sp;
        af_case start;
        mkspec(&sp, k, mins, maxs);
        mkcase(&start, k, v);
        start.seed = rnd() % 5;
        af_min_report rep;
        CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
        int exact = 1;
        for (int i = 0; i < k; i++)
            exact &= rep.best.values[i] == o.t[i];
        if (!exact)
            fprintf(stderr, "trial %d: not the exact minimum\n", trial);
        CHECK(exact);
        CHECK(rep.reproduced && !rep.flaky && !rep.stopped);
        CHECK(rep.locally_minimal);
        CHECK_EQ_INT(rep.call_bound, bound_of(&sp));
        if (rep.oracle_calls > bound_of(&sp))
            fprintf(stderr, "trial %d: k=%d calls %lld > bound %lld\n", trial, k,
                    (long long)rep.oracle_calls, (long long)bound_of(&sp));
        CHECK(rep.oracle_calls <= bound_of(&sp));
        CHECK_EQ_INT(rep.oracle_runs, rep.oracle_calls + 2); /* 3 repro runs, then 1 each */
        CHECK_EQ_INT(repeats(&o, &start), 0);
        int64_t gap = rep.oracle_calls - bound_of(&sp);
        if (gap > worst_gap)
            worst_gap = gap;
        tight += gap == 0;
        total++;
        per_k_calls[k] += rep.oracle_calls;
        per_k_bound[k] += bound_of(&sp);
        per_k_n[k]++;
        free(o.seen);
    }
    printf("thresholds (random, %lld runs): worst calls - bound = %lld, %lld runs exactly at the "
           "bound\n",
           (long long)total, (long long)worst_gap, (long long)tight);
    for (int k = 1; k <= 8; k++)
        if (per_k_n[k])
            printf("  k=%d: mean calls %.1f, mean bound %.1f (%lld runs)\n", k,
                   (double)per_k_calls[k] / (double)per_k_n[k],
                   (double)per_k_bound[k] / (double)per_k_n[k], (long long)per_k_n[k]);
}

/* The corner where the bound is tight: [0, 2^20 - 1], start at the top, thresholds >= 4. */
static void test_thresholds_tight(void)
{
    for (int k = 1; k <= 8; k++) {
        int64_t mins[AF_MAX_SYMS], maxs[AF_MAX_SYMS], v[AF_MAX_SYMS];
        orc o;
        orc_init(&o, K_CONJ, k);
        for (int i = 0; i < k; i++) {
            mins[i] = 0;
            maxs[i] = v[i] = ((int64_t)1 << 20) - 1;
            o.t[i] = 1000 + 123457 * i;
        }
        af_spec sp;
        af_case start;
        mkspec(&sp, k, mins, maxs);
        mkcase(&start, k, v);
        af_min_report rep;
        CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
        for (int i = 0; i < k; i++)
            CHECK_EQ_INT(rep.best.values[i], o.t[i]);
        CHECK(rep.locally_minimal);
        CHECK(rep.oracle_calls <= bound_of(&sp));
        printf("thresholds (tight corner) k=%d: calls %lld, bound %lld\n", k,
               (long long)rep.oracle_calls, (long long)bound_of(&sp));
        free(o.seen);
    }
}

/* The same tight corner with the explain phase: the search still spends at most B (the
 * explain phase's allowance is not the ledger's), the phase at most 5 per symbol, the
 * whole at most B + 5k, and every symbol (all thresholds above the lower bound) pinned. */
static void test_thresholds_tight_explain(void)
{
    for (int k = 1; k <= 8; k++) {
        int64_t mins[AF_MAX_SYMS], maxs[AF_MAX_SYMS], v[AF_MAX_SYMS];
        orc o;
        orc_init(&o, K_CONJ, k);
        for (int i = 0; i < k; i++) {
            mins[i] = 0;
            maxs[i] = v[i] = ((int64_t)1 << 20) - 1;
            o.t[i] = 1000 + 123457 * i;
        }
        af_spec sp;
        af_case start;
        mkspec(&sp, k, mins, maxs);
        mkcase(&start, k, v);
        static af_min_report rep;
        static af_explain ex;
        af_min_opts mo = {.explain = &ex};
        CHECK_EQ_INT(run_min(&o, &sp, &start, &mo, &rep), 0);
        CHECK_EQ_INT(rep.call_bound, bound_of(&sp) + AF_EXPLAIN_TRIES * k);
        CHECK(rep.oracle_calls - rep.explain_calls <= bound_of(&sp));
        CHECK(rep.explain_calls <= AF_EXPLAIN_TRIES * k);
        CHECK(rep.oracle_calls <= rep.call_bound);
        CHECK_EQ_INT(repeats(&o, &start), 0);
        for (int i = 0; i < k; i++) {
            CHECK_EQ_INT(rep.best.values[i], o.t[i]);
            CHECK_EQ_INT(ex.sym[i].role, AF_ROLE_PINNED);
        }
        free(o.seen);
    }
}

/* Real-looking specs: maxima far above the start, few symbols matter. */
static void test_thresholds_wide(void)
{
    int64_t mins[6] = {0, 1, 2, 0, 1, 0}, maxs[6], v[6] = {4096, 700, 3000, 64, 9000, 128};
    for (int i = 0; i < 6; i++)
        maxs[i] = (int64_t)1 << 40;
    orc o;
    orc_init(&o, K_CONJ, 6);
    for (int i = 0; i < 6; i++)
        o.t[i] = mins[i];
    o.t[2] = 513; /* only s2 and s4 matter */
    o.t[4] = 1;
    af_spec sp;
    af_case start;
    mkspec(&sp, 6, mins, maxs);
    mkcase(&start, 6, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(rep.best.values[i], o.t[i]);
    CHECK(rep.locally_minimal);
    CHECK(rep.oracle_calls <= bound_of(&sp));
    CHECK(rep.oracle_calls <= 40); /* ddmin and the special values do the work */
    printf("thresholds (6 wide symbols, 2 matter): calls %lld, bound %lld\n",
           (long long)rep.oracle_calls, (long long)bound_of(&sp));
    free(o.seen);
}

/* Disjunctions and a product: monotone too, so the bound holds; the local minimum is not
 * unique, so it is checked by brute force. */
static void test_other_monotone(void)
{
    int64_t worst_gap = INT64_MIN;
    for (int trial = 0; trial < 300; trial++) {
        int k = 1 + (int)(rnd() % 6);
        int64_t mins[AF_MAX_SYMS], maxs[AF_MAX_SYMS], v[AF_MAX_SYMS];
        orc o;
        orc_init(&o, K_DISJ, k);
        for (int i = 0; i < k; i++) {
            mins[i] = (int64_t)(rnd() % 3);
            maxs[i] = mins[i] + rnd_in(0, (int64_t)1 << 18);
            v[i] = rnd_in(mins[i], maxs[i]);
            o.t[i] = rnd() % 3 ? rnd_in(mins[i], v[i]) : maxs[i] + 1;
        }
        o.t[0] = rnd_in(mins[0], v[0]); /* the start fails */
        af_spec sp;
        af_case start;
        mkspec(&sp, k, mins, maxs);
        mkcase(&start, k, v);
        af_min_report rep;
        CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
        CHECK(rep.locally_minimal);
        CHECK(brute_locally_minimal(&o, &sp, &rep.best));
        int above = 0; /* a local minimum of a disjunction: one symbol at its threshold */
        for (int i = 0; i < k; i++)
            above += rep.best.values[i] > mins[i];
        CHECK(above <= 1);
        CHECK(rep.oracle_calls <= bound_of(&sp));
        if (rep.oracle_calls - bound_of(&sp) > worst_gap)
            worst_gap = rep.oracle_calls - bound_of(&sp);
        free(o.seen);
    }
    printf("disjunctions (300 runs): worst calls - bound = %lld\n", (long long)worst_gap);

    int64_t mins[2] = {1, 1}, maxs[2] = {1 << 16, 1 << 16}, v[2] = {60000, 50000};
    orc o;
    orc_init(&o, K_PROD, 2);
    o.T = 1000003;
    af_spec sp;
    af_case start;
    mkspec(&sp, 2, mins, maxs);
    mkcase(&start, 2, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK(rep.locally_minimal);
    CHECK(brute_locally_minimal(&o, &sp, &rep.best));
    CHECK(rep.oracle_calls <= bound_of(&sp));
    printf("product a*b >= 1000003: (%lld, %lld), calls %lld, bound %lld\n",
           (long long)rep.best.values[0], (long long)rep.best.values[1],
           (long long)rep.oracle_calls, (long long)bound_of(&sp));
    free(o.seen);
}

/* SAME iff c >= 7 && ((a == 0 && b == 0) || (a >= 300 && b >= 500)): (300, 500, 7) is
 * locally minimal, only a joint move reaches (0, 0, 7). Also a == b && c >= 5. */
static void test_joint(void)
{
    int64_t mins[3] = {0, 0, 0}, maxs[3] = {1 << 20, 1 << 20, 1 << 20}, v[3] = {1000, 1000, 500};
    orc o;
    orc_init(&o, K_JOINT, 3);
    af_spec sp;
    af_case start;
    mkspec(&sp, 3, mins, maxs);
    mkcase(&start, 3, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK_EQ_INT(rep.best.values[0], 0);
    CHECK_EQ_INT(rep.best.values[1], 0);
    CHECK_EQ_INT(rep.best.values[2], 7);
    CHECK(rep.locally_minimal);
    CHECK(brute_locally_minimal(&o, &sp, &rep.best));
    printf("joint (a==0&&b==0 || a>=300&&b>=500) && c>=7: calls %lld (bound %lld, not promised)\n",
           (long long)rep.oracle_calls, (long long)bound_of(&sp));
    free(o.seen);

    int64_t v2[3] = {777, 777, 40};
    orc_init(&o, K_EQUAL, 3);
    mkcase(&start, 3, v2);
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK_EQ_INT(rep.best.values[0], 0);
    CHECK_EQ_INT(rep.best.values[1], 0);
    CHECK_EQ_INT(rep.best.values[2], 5);
    CHECK(rep.locally_minimal);
    printf("joint a==b && c>=5: calls %lld\n", (long long)rep.oracle_calls);
    free(o.seen);
}

/* s % 64 == 1 is nowhere monotone: the result must still be locally minimal. */
static void test_nonmonotone(void)
{
    static const int64_t lower[4] = {0, 2, 10, 100};
    for (int m = 0; m < 4; m++) {
        for (int k = 1; k <= 3; k++) {
            int64_t mins[3], maxs[3], v[3];
            orc o;
            orc_init(&o, K_MOD, k);
            for (int i = 0; i < k; i++) {
                mins[i] = i == 0 ? lower[m] : 0;
                maxs[i] = (int64_t)1 << 20;
                v[i] = i == 0 ? 64 * 9000 + 1 : 5000 + i;
                o.t[i] = 17 * i;
            }
            af_spec sp;
            af_case start;
            mkspec(&sp, k, mins, maxs);
            mkcase(&start, k, v);
            af_min_report rep;
            CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
            CHECK(rep.locally_minimal);
            CHECK(brute_locally_minimal(&o, &sp, &rep.best));
            CHECK_EQ_INT(rep.best.values[0] % 64, 1);
            printf("s %% 64 == 1, min %lld, k=%d: s = %lld, calls %lld\n", (long long)lower[m], k,
                   (long long)rep.best.values[0], (long long)rep.oracle_calls);
            free(o.seen);
        }
    }
}

/* OTHER below 10, PASS in [10, 20), SAME from 20: the result is 20, the other failure a
 * side finding with its smallest case. */
static void test_other_failure(void)
{
    int64_t mins[1] = {0}, maxs[1] = {1000}, v[1] = {500};
    orc o;
    orc_init(&o, K_OTHER, 1);
    af_spec sp;
    af_case start;
    mkspec(&sp, 1, mins, maxs);
    mkcase(&start, 1, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK_EQ_INT(rep.best.values[0], 20);
    CHECK(rep.locally_minimal);
    CHECK_EQ_INT(rep.n_side, 1);
    CHECK_STR(rep.side[0].signature, "RUNTIME_ERROR: small shape");
    CHECK(rep.side[0].c.values[0] < 10);
    CHECK_EQ_INT(rep.side[0].c.values[0], 0); /* the smallest case that gave it */
    CHECK(rep.side[0].runs >= 1);
    CHECK(rep.oracle_calls <= bound_of(&sp));
    printf("other failure below 10, same from 20: s = %lld, side \"%s\" at %lld, calls %lld, bound "
           "%lld\n",
           (long long)rep.best.values[0], rep.side[0].signature, (long long)rep.side[0].c.values[0],
           (long long)rep.oracle_calls, (long long)bound_of(&sp));
    free(o.seen);
}

/* Extreme ranges: a symbol spanning all of int64 above 0 and one with a negative lower
 * bound (five certificate values: min, 0, 1, 2, x - 1). */
static void test_extreme_ranges(void)
{
    int64_t mins[3] = {0, -5, INT64_MIN / 2}, maxs[3] = {INT64_MAX, 100, INT64_MAX / 2};
    int64_t v[3] = {INT64_MAX, 90, INT64_MAX / 4};
    orc o;
    orc_init(&o, K_CONJ, 3);
    o.t[0] = 12345;
    o.t[1] = -3;
    o.t[2] = -77;
    af_spec sp;
    af_case start;
    mkspec(&sp, 3, mins, maxs);
    mkcase(&start, 3, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK_EQ_INT(rep.best.values[0], 12345);
    CHECK_EQ_INT(rep.best.values[1], -3);
    CHECK_EQ_INT(rep.best.values[2], -77);
    CHECK(rep.locally_minimal);
    /* ceil(log2 R) = 63, 7 and 63; the negative lower bounds count 5 each */
    CHECK_EQ_INT(rep.call_bound, 63 + 7 + 63 + 4 + 5 + 5);
    CHECK(rep.oracle_calls <= rep.call_bound);
    printf("extreme ranges: calls %lld, bound %lld\n", (long long)rep.oracle_calls,
           (long long)rep.call_bound);
    free(o.seen);
}

static void test_flaky(void)
{
    int64_t mins[2] = {0, 1}, maxs[2] = {1023, 4000}, v[2] = {900, 3000};
    orc o;
    orc_init(&o, K_CONJ, 2);
    o.t[0] = 100;
    o.t[1] = 1;
    o.flaky = 3; /* SAME 2 runs of 3 */
    af_spec sp;
    af_case start;
    mkspec(&sp, 2, mins, maxs);
    mkcase(&start, 2, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK(rep.reproduced);
    CHECK(rep.flaky);
    CHECK(rep.repro_rate > 0.66 && rep.repro_rate < 0.67);
    CHECK_EQ_INT(rep.runs_per_question, 3);
    CHECK_EQ_INT(rep.best.values[0], 100);
    CHECK_EQ_INT(rep.best.values[1], 1);
    CHECK(rep.locally_minimal);
    CHECK(rep.oracle_runs <= 3 * rep.oracle_calls);
    printf("flaky 2/3: rate %.3f, s = (%lld, %lld), calls %lld, runs %lld\n", rep.repro_rate,
           (long long)rep.best.values[0], (long long)rep.best.values[1],
           (long long)rep.oracle_calls, (long long)rep.oracle_runs);
    free(o.seen);

    orc_init(&o, K_CONJ, 2); /* fails 1 run of 3: cannot win a vote, must still finish */
    o.t[0] = 100;
    o.t[1] = 1;
    o.flaky = 1;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK(rep.reproduced && rep.flaky);
    CHECK(rep.repro_rate > 0.33 && rep.repro_rate < 0.34);
    CHECK(!rep.stopped);
    CHECK(pred(&o, &rep.best) == AF_V_SAME);
    printf("flaky 1/3: rate %.3f, finished after %lld calls, %lld runs\n", rep.repro_rate,
           (long long)rep.oracle_calls, (long long)rep.oracle_runs);
    free(o.seen);
}

static void test_never(void)
{
    int64_t mins[2] = {0, 0}, maxs[2] = {100, 100}, v[2] = {50, 60};
    orc o;
    orc_init(&o, K_NEVER, 2);
    af_spec sp;
    af_case start;
    mkspec(&sp, 2, mins, maxs);
    mkcase(&start, 2, v);
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK(!rep.reproduced);
    CHECK(rep.repro_rate == 0.0);
    CHECK_EQ_INT(rep.oracle_calls, 1);
    CHECK_EQ_INT(rep.oracle_runs, 3);
    CHECK_EQ_INT(rep.best.values[0], 50);
    CHECK_EQ_INT(rep.best.values[1], 60);
    CHECK(!rep.locally_minimal);
    free(o.seen);
}

static void test_stop_and_budget(void)
{
    int64_t mins[3] = {0, 0, 0}, maxs[3] = {1 << 20, 1 << 20, 1 << 20},
            v[3] = {900000, 800000, 700000};
    volatile int stop = 0;
    orc o;
    orc_init(&o, K_CONJ, 3);
    o.t[0] = 1000;
    o.t[1] = 2000;
    o.t[2] = 3000;
    o.stop = &stop;
    o.stop_after = 15;
    af_spec sp;
    af_case start;
    mkspec(&sp, 3, mins, maxs);
    mkcase(&start, 3, v);
    af_min_opts opts = {0};
    opts.stop = &stop;
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &opts, &rep), 0);
    CHECK(rep.stopped);
    CHECK_EQ_INT(o.runs, 15); /* not one run after the flag */
    CHECK(pred(&o, &rep.best) == AF_V_SAME);
    CHECK(rep.best.values[0] < 900000); /* some progress was kept */
    free(o.seen);

    stop = 0; /* wall-clock budget: 5 ms per run, 50 ms budget */
    orc_init(&o, K_CONJ, 3);
    o.t[0] = 1000;
    o.t[1] = 2000;
    o.t[2] = 3000;
    o.sleep_ns = 5000000;
    opts.budget_s = 0.05;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &opts, &rep), 0);
    CHECK(rep.stopped);
    CHECK(o.runs <= 3 + 11);
    CHECK(pred(&o, &rep.best) == AF_V_SAME);
    free(o.seen);

    stop = 1; /* set before anything ran: nothing runs */
    orc_init(&o, K_CONJ, 3);
    opts.budget_s = 0;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &opts, &rep), 0);
    CHECK(rep.stopped && !rep.reproduced);
    CHECK_EQ_INT(o.runs, 0);
    free(o.seen);
}

static void test_fill(void)
{
    int64_t mins[1] = {0}, maxs[1] = {1000}, v[1] = {600};
    af_spec sp;
    af_case start;
    mkspec(&sp, 1, mins, maxs);
    mkcase(&start, 1, v);
    start.seed = 77;
    struct {
        int rule;
        af_fill fill;
        uint64_t seed;
    } want[4] = {{1, AF_FILL_ZEROS, 0},
                 {2, AF_FILL_ONES, 0},
                 {3, AF_FILL_RANDOM, 0},
                 {4, AF_FILL_RANDOM, 77}};
    af_min_opts opts = {0};
    opts.simplify_fill = 1;
    for (int k = 0; k < 4; k++) {
        orc o;
        orc_init(&o, K_CONJ, 1);
        o.t[0] = 50;
        o.fill_rule = want[k].rule;
        af_case s = start;
        if (want[k].rule == 2)
            s.fill = AF_FILL_ONES;
        af_min_report rep;
        CHECK_EQ_INT(run_min(&o, &sp, &s, &opts, &rep), 0);
        CHECK_EQ_INT(rep.best.values[0], 50);
        CHECK_EQ_INT(rep.best.fill, want[k].fill);
        CHECK_EQ_INT(rep.best.seed, want[k].seed);
        CHECK(rep.locally_minimal);
        free(o.seen);
    }
    orc o; /* without simplify_fill the fill is left alone */
    orc_init(&o, K_CONJ, 1);
    o.t[0] = 50;
    o.fill_rule = 1;
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, NULL, &rep), 0);
    CHECK_EQ_INT(rep.best.fill, AF_FILL_RANDOM);
    CHECK_EQ_INT(rep.best.seed, 77);
    free(o.seen);
}

static int n_progress, n_improved;
static char last_stage[32];
static void on_progress(void *ctx, const char *stage, int64_t calls, const af_case *best)
{
    (void)ctx;
    (void)calls;
    (void)best;
    n_progress++;
    n_improved += strcmp(stage, "improved") == 0;
    snprintf(last_stage, sizeof last_stage, "%s", stage);
}

static void test_runs_and_progress(void)
{
    int64_t mins[2] = {0, 0}, maxs[2] = {4095, 4095}, v[2] = {3000, 2000};
    orc o;
    orc_init(&o, K_CONJ, 2);
    o.t[0] = 33;
    o.t[1] = 0;
    af_spec sp;
    af_case start;
    mkspec(&sp, 2, mins, maxs);
    mkcase(&start, 2, v);
    af_min_opts opts = {0};
    opts.runs = 3;
    opts.progress = on_progress;
    af_min_report rep;
    CHECK_EQ_INT(run_min(&o, &sp, &start, &opts, &rep), 0);
    CHECK_EQ_INT(rep.best.values[0], 33);
    CHECK_EQ_INT(rep.best.values[1], 0);
    CHECK_EQ_INT(rep.runs_per_question, 3);
    /* deterministic: every vote is decided after two runs */
    CHECK_EQ_INT(rep.oracle_runs, 3 + 2 * (rep.oracle_calls - 1));
    CHECK(n_improved >= 2);
    CHECK_STR(last_stage, "done");
    free(o.seen);
}

static void test_errors(void)
{
    int64_t mins[2] = {0, 0}, maxs[2] = {1000, 1000}, v[2] = {900, 900};
    orc o;
    orc_init(&o, K_CONJ, 2);
    o.t[0] = 10;
    o.t[1] = 10;
    o.error_after = 8;
    af_spec sp;
    af_case start;
    mkspec(&sp, 2, mins, maxs);
    mkcase(&start, 2, v);
    af_min_report rep;
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_minimize(&sp, &start, oracle, &o, NULL, &rep, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_RUNTIME);
    CHECK(strstr(err.message, "worker died") != NULL);
    CHECK(pred(&o, &rep.best) == AF_V_SAME);
    free(o.seen);

    orc_init(&o, K_CONJ, 2);
    af_case bad = start;
    bad.values[1] = 1001;
    af_error_clear(&err);
    CHECK_EQ_INT(af_minimize(&sp, &bad, oracle, &o, NULL, &rep, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_USAGE);
    CHECK(strstr(err.message, "s1") != NULL);
    bad = start;
    bad.n_syms = 1;
    CHECK_EQ_INT(af_minimize(&sp, &bad, oracle, &o, NULL, &rep, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_USAGE);
    CHECK_EQ_INT(af_minimize(&sp, &start, NULL, &o, NULL, &rep, &err), -1);
    CHECK_EQ_INT(o.runs, 0);
    free(o.seen);
}

int main(void)
{
    test_thresholds_random();
    test_thresholds_tight();
    test_thresholds_tight_explain();
    test_thresholds_wide();
    test_other_monotone();
    test_joint();
    test_nonmonotone();
    test_other_failure();
    test_extreme_ranges();
    test_flaky();
    test_never();
    test_stop_and_budget();
    test_fill();
    test_runs_and_progress();
    test_errors();
    TEST_MAIN_END();
}
