/* ddmin.c — the minimization engine: a failing case in, a locally minimal case out.
 *
 * The goal. A case is a point x (one value per symbol, inside [min_i, max_i]) plus a fill
 * mode and a seed. The oracle says whether a case passes, fails the same way (SAME) or
 * fails differently (OTHER). We want a small SAME case, where small means LOCALLY MINIMAL:
 * for every symbol i above its lower bound, moving x_i alone to min_i, to 0, 1 or 2 (when
 * inside [min_i, x_i)), or to x_i - 1 is not SAME. That set of at most four values (five
 * when min_i < 0) is the certificate of i, C_i(x).
 *
 * The algorithm.
 *  0. Reproduce: run the start case max(runs, 3) times. No SAME run: "not reproduced",
 *     stop. Some but not all: the oracle is flaky, and from then on every question is a
 *     majority vote of max(runs, 3) runs (cut short once decided). A bug that fails less
 *     than half of the time cannot win votes: it is reported flaky with its rate and comes
 *     back mostly unminimized. The start case itself counts as SAME whatever its vote.
 *  Then rounds, until a round changes nothing:
 *  1. ddmin over the symbols above their lower bound, where removing a symbol means setting
 *     it to its lower bound: all of them at once, then chunks of a half, a quarter, ... down
 *     to chunks of two (a single symbol is the first probe of step 2). Complement tests only
 *     (remove a chunk, keep the rest), as in most practical reducers.
 *  2. Search, one symbol at a time with the others held, for the smallest value still SAME:
 *     probes at the lower bound and at 0, 1, 2, then a short gallop down from the current
 *     value (x-1, x-3, x-7, x-15), then bisection of what is left. The search keeps hi (SAME:
 *     the current value) and lo (the highest value known not SAME) and ends at hi = lo + 1,
 *     so the value just below the result has been asked whatever the oracle's shape:
 *     bisection assumes monotonicity only to be fast, not to be right.
 *  3. Check: ask the certificate of every symbol of the current case; a SAME value is taken
 *     (and another round follows). A check that changes nothing proves local minimality.
 *  4. Joint moves. Some failures need two symbols to move at once: SAME iff (a == 0 && b ==
 *     0) || (a >= 300 && b >= 500) is locally minimal at (300, 500), because (0, 500) and
 *     (300, 0) both pass; one-symbol moves never get through. So for each pair of symbols
 *     above their bounds we ask both at their lower bounds; a SAME starts another round.
 *     (On a monotone bug this never succeeds: were the pair move SAME, so would be each
 *     single move, which the check has just refused.)
 *  5. With simplify_fill: fill zeros, then ones, then random with seed 0 (the wide fill,
 *     beyond the contract, ranks above random), each tried only
 *     when simpler than the current fill; a success starts another round.
 *  6. With an explain request (opts.explain), once the case is final: the explain phase
 *     (explain.c) holds all symbols but one at the final case and tries that one at up to
 *     five values of its range (lower bound, +1, a typical value, a power of two, the
 *     upper bound); all SAME: the symbol is free, else pinned. It moves nothing.
 *  Every answer is kept in the memo (memo.h; the caller may pass its own and keep it for
 *  the crash map) under the whole case, so nothing is asked twice. OTHER is never
 *  taken; each signature is kept once as a side finding, with its class (the oracle's)
 *  and the smallest case that gave it. The stop flag and the budget are checked before
 *  every run; the current case is always SAME, so stopping anywhere returns a valid best
 *  case. Each accepted change lowers sum(x_i - min_i) or the fill rank, both bounded below,
 *  and a round without change ends the loop: no oracle, flaky or adversarial, can make it
 *  run forever.
 *
 * The bound. Call a bug monotone when its SAME set is closed upwards: x SAME and y >= x
 * (componentwise, same fill) imply y SAME. A single threshold (fails iff s_i >= t_i),
 * conjunctions and disjunctions of thresholds, a*b >= T are monotone. For those, with a
 * deterministic oracle, every min_i >= 0 and no fill simplification:
 *
 *      oracle_calls <= B = sum_i ceil(log2 R_i) + 4k,    R_i = max_i - min_i + 1,
 *
 * k = the number of symbols (a symbol with min_i < 0 counts 5 instead of 4).
 *  - One round suffices. The search of symbol i runs with the symbols before it at their
 *    final values and those after it at values >= their final ones, and ends at t_i with
 *    t_i - 1 not SAME there (or at t_i = min_i). Lowering other symbols only shrinks the
 *    SAME set, so every certificate value of i (all <= t_i - 1) is not SAME in the final
 *    case: the check changes nothing, and by 4 neither do the joint moves.
 *  - The mandatory questions: the reproduction (1), the bisections (ceil(log2 N_i) for N_i
 *    candidates, N_i <= R_i) and the check (|C_i| <= 4 per symbol). One check question is
 *    always answered already: the last symbol searched was searched in the final case and
 *    its search asked t - 1 (or it ended at its lower bound, where its certificate is
 *    empty). Total 1 + sum ceil(log2 R_i) + 4k - 1 = B.
 *  - Everything else (ddmin, the special values and the gallop before a bisection, the
 *    joint moves) is optional. It pays off handsomely in practice: one question removes an
 *    irrelevant symbol that bisection would walk down in log2 R_i questions, and edge bugs
 *    sit at 0, 1, 2 or one below the start. But on a monotone bug it is extra, and B is
 *    tight: put every symbol at the top of [0, 2^c - 1] with thresholds >= 4 and the
 *    mandatory questions alone cost exactly B. So the engine keeps a ledger. The reserve is
 *    what the mandatory questions still ahead can cost on a monotone bug (bisections of the
 *    symbols not yet searched, unanswered certificate values, minus the one above), and an
 *    optional question is asked only if spent + 1 + (reserve after its worse answer) <= B.
 *    A mandatory question lowers the reserve by at least one (a bisection halves the
 *    candidates, a check question answers a certificate value) and lowering a value never
 *    raises it, so spent + reserve <= B holds throughout: spent <= B at the end. On real
 *    specs (maxima far above the start values) the ledger leaves room for everything. If
 *    the invariant ever breaks, the bug is not monotone, the promise is void, and the
 *    rationing is switched off for the rest of the run.
 *  The bound counts questions; runs are at most max(runs, 3) per question plus the
 *  reproduction's. Fill simplification adds at most 3 questions, and a round if it
 *  succeeds. The explain phase adds at most AF_EXPLAIN_TRIES = 5 questions per symbol,
 *  after everything else and whatever the bug's shape (its values are fixed by the ranges
 *  alone, and explain_ask refuses a question past 5k), so with it
 *
 *      oracle_calls <= B + 5k,
 *
 *  which call_bound then holds; explain_calls counts its share. Questions the crash map
 *  asks afterwards (crashmap.c) are outside both and counted there. */
#include "ddmin.h"

#include "explain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CERT_MAX 5
#define GALLOP_STEPS 4

enum { ASK_ERR = -1, ASK_HALT = -2, ASK_SKIP = -3 };

const char *af_verdict_name(af_verdict v)
{
    switch (v) {
    case AF_V_PASS:
        return "PASS";
    case AF_V_SAME:
        return "SAME";
    case AF_V_OTHER:
        return "OTHER";
    case AF_V_ERROR:
        return "ERROR";
    }
    return "?";
}

/* ---- the engine ---- */

typedef struct engine {
    const af_spec *spec;
    int n;
    af_oracle_fn fn;
    void *ctx;
    af_min_opts o;
    af_min_report *rep;
    af_error *err;
    af_memo *memo; /* the caller's (opts.memo), or own_memo */
    af_memo *own_memo;
    af_case cur;   /* always SAME; mirrored into rep->best */
    int runs;      /* runs per question after the reproduction */
    int rationed;  /* the ledger is enforced (see the essay) */
    int64_t bound; /* B, what the ledger enforces (call_bound less the explain share) */
    int in_repro;  /* the budget does not apply to the reproduction runs */
    struct timespec t0;
    char sig[AF_MIN_SIG_MAX];
} engine;

static int64_t smin(const engine *e, int i)
{
    return e->spec->syms[i].min;
}

/* hi - lo for hi >= lo, without overflow. */
static uint64_t span(int64_t lo, int64_t hi)
{
    return (uint64_t)hi - (uint64_t)lo;
}

/* Number of bits of d: ceil(log2(d + 1)), the bisection cost of d + 1 candidates. */
static int64_t bitlen(uint64_t d)
{
    int64_t b = 0;
    while (d) {
        b++;
        d >>= 1;
    }
    return b;
}

static void progress(engine *e, const char *stage)
{
    if (e->o.progress)
        e->o.progress(e->o.progress_ctx, stage, e->rep->oracle_calls, &e->cur);
}

static void set_cur(engine *e, const af_case *c)
{
    e->cur = *c;
    e->rep->best = *c;
    progress(e, "improved");
}

/* The certificate of symbol i at value x: ascending distinct values of
 * {min, 0, 1, 2, x - 1} inside [min, x). Returns how many. */
static int cert_values(const engine *e, int i, int64_t x, int64_t out[CERT_MAX])
{
    int64_t lo = smin(e, i);
    int n = 0;
    if (x <= lo)
        return 0;
    int64_t cand[CERT_MAX] = {lo, 0, 1, 2, x - 1};
    for (int k = 0; k < CERT_MAX; k++) {
        int64_t v = cand[k];
        if (v < lo || v >= x)
            continue;
        int j = n;
        while (j > 0 && out[j - 1] > v)
            j--;
        if (j > 0 && out[j - 1] == v)
            continue;
        memmove(&out[j + 1], &out[j], (size_t)(n - j) * sizeof out[0]);
        out[j] = v;
        n++;
    }
    return n;
}

static double elapsed_s(const engine *e)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - e->t0.tv_sec) + (double)(now.tv_nsec - e->t0.tv_nsec) * 1e-9;
}

/* Whether to stop now (stop flag, or budget outside the reproduction). Sticky. */
static int halted(engine *e)
{
    if (e->rep->stopped)
        return 1;
    if ((e->o.stop && *e->o.stop) ||
        (!e->in_repro && e->o.budget_s > 0 && elapsed_s(e) >= e->o.budget_s))
        e->rep->stopped = 1;
    return e->rep->stopped;
}

/* Sum of (x_i - min_i), saturating: the size used to prefer one side case over another. */
static uint64_t case_weight(const engine *e, const af_case *c)
{
    uint64_t w = 0;
    for (int i = 0; i < e->n; i++) {
        uint64_t d = span(smin(e, i), c->values[i]);
        w = (w + d < w) ? UINT64_MAX : w + d;
    }
    return w;
}

/* Record an OTHER run of c: a new signature, or one more run of a known one (keeping the
 * smaller case). The class is the oracle's, as it left it in opts.other_class. */
static void side_record(engine *e, const af_case *c, const char *sig)
{
    af_min_report *r = e->rep;
    for (int k = 0; k < r->n_side; k++) {
        if (strcmp(r->side[k].signature, sig) == 0) {
            r->side[k].runs++;
            if (case_weight(e, c) < case_weight(e, &r->side[k].c))
                r->side[k].c = *c;
            return;
        }
    }
    if (r->n_side == AF_MIN_SIDE_MAX) {
        r->side_dropped++;
        return;
    }
    af_min_side *s = &r->side[r->n_side++];
    s->c = *c;
    s->cls = e->o.other_class ? *e->o.other_class : AF_RES_WORKER_LOST;
    snprintf(s->signature, sizeof s->signature, "%s", sig);
    s->runs = 1;
}

/* One oracle run: a verdict, or ASK_ERR. */
static int run_once(engine *e, const af_case *c)
{
    memset(e->sig, 0, sizeof e->sig);
    af_verdict v = e->fn(e->ctx, c, e->sig, sizeof e->sig);
    e->sig[sizeof e->sig - 1] = '\0';
    e->rep->oracle_runs++;
    switch (v) {
    case AF_V_PASS:
    case AF_V_SAME:
        return (int)v;
    case AF_V_OTHER:
        side_record(e, c, e->sig);
        return (int)v;
    case AF_V_ERROR:
        return af_error_set(e->err, AF_E_RUNTIME, "oracle could not judge the case: %s",
                            e->sig[0] ? e->sig : "no reason given");
    }
    return af_error_set(e->err, AF_E_INTERNAL, "oracle returned an invalid verdict %d", (int)v);
}

/* One question: the memo's answer, or a (majority of) run(s). Returns AF_V_PASS / SAME /
 * OTHER, ASK_HALT or ASK_ERR. The memo keeps, with the verdict, the signature of an OTHER
 * (the latest run's) or the note of a PASS (a run that was not a bug), for the crash map. */
static int ask(engine *e, const af_case *c)
{
    int v = af_memo_get(e->memo, c, NULL);
    if (v >= 0) {
        e->rep->cache_hits++;
        return v;
    }
    int same = 0, other = 0;
    char other_sig[AF_MIN_SIG_MAX] = "", pass_note[AF_MIN_SIG_MAX] = "";
    for (int r = 0; r < e->runs; r++) {
        if (halted(e))
            return ASK_HALT;
        int one = run_once(e, c);
        if (one < 0)
            return ASK_ERR;
        same += one == AF_V_SAME;
        other += one == AF_V_OTHER;
        if (one == AF_V_OTHER)
            memcpy(other_sig, e->sig, sizeof other_sig);
        else if (one == AF_V_PASS && e->sig[0])
            memcpy(pass_note, e->sig, sizeof pass_note);
        int left = e->runs - r - 1;
        if (2 * same > e->runs || 2 * (same + left) <= e->runs)
            break; /* the vote is decided */
    }
    v = 2 * same > e->runs ? AF_V_SAME : other ? AF_V_OTHER : AF_V_PASS;
    e->rep->oracle_calls++;
    if (af_memo_put(e->memo, c, v,
                    v == AF_V_OTHER  ? other_sig
                    : v == AF_V_PASS ? pass_note
                                     : NULL) < 0) {
        errno = ENOMEM;
        af_error_sys(e->err, "minimizer answer memo");
        return ASK_ERR;
    }
    return v;
}

/* ---- the ledger (see "The bound" above) ---- */

/* Mandatory cost still ahead on a monotone bug, counting bisections only for symbols
 * from index `from` on; `pending` says the symbol being searched can still end above its
 * lower bound (so one of its certificate values will be answered by its own search). */
static int64_t reserve_rest(const engine *e, int from, int pending)
{
    int64_t r = 0, cert[CERT_MAX];
    for (int j = 0; j < e->n; j++) {
        int64_t x = e->cur.values[j];
        r += cert_values(e, j, x, cert);
        if (j >= from && x > smin(e, j)) {
            r += bitlen(span(smin(e, j), x));
            pending = 1;
        }
    }
    return pending ? r - 1 : r;
}

/* Outside a search pass: the certificate values of the current case not yet answered. */
static int64_t reserve_check(const engine *e)
{
    int64_t r = 0, cert[CERT_MAX];
    for (int i = 0; i < e->n; i++) {
        int nc = cert_values(e, i, e->cur.values[i], cert);
        for (int k = 0; k < nc; k++) {
            af_case c = e->cur;
            c.values[i] = cert[k];
            r += af_memo_get(e->memo, &c, NULL) < 0;
        }
    }
    return r;
}

/* May an optional question be asked, given the reserve now and after its worse answer? */
static int affordable(engine *e, int64_t reserve_now, int64_t reserve_after)
{
    int64_t spent = e->rep->oracle_calls;
    if (e->rationed && spent + reserve_now > e->bound)
        e->rationed = 0; /* the bug is not monotone: the promise is void */
    return !e->rationed || spent + 1 + reserve_after <= e->bound;
}

/* ---- step 1: ddmin ---- */

static int ddmin_pass(engine *e)
{
    int act[AF_MAX_SYMS], na;
    progress(e, "ddmin");
    for (int chunks = 1;;) {
        na = 0;
        for (int i = 0; i < e->n; i++)
            if (e->cur.values[i] > smin(e, i))
                act[na++] = i;
        if (na < 2 || chunks >= na)
            return 0; /* single symbols are the search's business */
        int removed = 0;
        for (int k = 0; k < chunks; k++) {
            af_case c = e->cur;
            int b = na * k / chunks, end = na * (k + 1) / chunks, moved = 0;
            for (int j = b; j < end; j++) {
                moved += c.values[act[j]] != smin(e, act[j]);
                c.values[act[j]] = smin(e, act[j]);
            }
            if (moved < 2)
                continue;
            int64_t now = reserve_rest(e, 0, 0);
            if (af_memo_get(e->memo, &c, NULL) < 0 && !affordable(e, now, now))
                return 0;
            int v = ask(e, &c);
            if (v < 0)
                return v;
            if (v == AF_V_SAME) {
                set_cur(e, &c);
                removed = 1;
            }
        }
        if (!removed)
            chunks *= 2;
    }
}

/* ---- step 2: search one symbol ---- */

typedef struct search_state {
    int i;
    int have_lo;
    int64_t lo, hi; /* lo: highest value asked and not SAME; hi: the current value */
} search_state;

static int64_t ss_base(const engine *e, const search_state *s)
{
    return s->have_lo ? s->lo + 1 : smin(e, s->i);
}

/* Ask symbol s->i at p (base <= p < hi). Optional probes may be skipped (ASK_SKIP) when the
 * ledger cannot afford them; answers already cached are always used. */
static int ss_try(engine *e, search_state *s, int64_t p, int optional)
{
    af_case c = e->cur;
    c.values[s->i] = p;
    if (optional && af_memo_get(e->memo, &c, NULL) < 0) {
        int64_t base = ss_base(e, s);
        int64_t rest = reserve_rest(e, s->i + 1, 1);
        int64_t now = bitlen(span(base, s->hi)) + reserve_rest(e, s->i + 1, s->hi > smin(e, s->i));
        int64_t if_same = bitlen(span(base, p)), if_not = bitlen(span(p, s->hi) - 1);
        if (!affordable(e, now, (if_same > if_not ? if_same : if_not) + rest))
            return ASK_SKIP;
    }
    int v = ask(e, &c);
    if (v < 0)
        return v;
    if (v == AF_V_SAME) {
        s->hi = p;
        set_cur(e, &c);
    } else {
        s->lo = p;
        s->have_lo = 1;
    }
    return v;
}

static int search_symbol(engine *e, int i)
{
    search_state s = {i, 0, 0, e->cur.values[i]};
    int64_t special[4] = {smin(e, i), 0, 1, 2};
    int v;

    /* the lower bound and 0, 1, 2, ascending: the first SAME ends this part */
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++)
            if (special[b] < special[a]) {
                int64_t t = special[a];
                special[a] = special[b];
                special[b] = t;
            }
    for (int k = 0; k < 4; k++) {
        if (k > 0 && special[k] == special[k - 1])
            continue;
        if (special[k] < ss_base(e, &s) || special[k] >= s.hi)
            continue;
        v = ss_try(e, &s, special[k], 1);
        if (v == AF_V_SAME)
            break;
        if (v == ASK_ERR || v == ASK_HALT)
            return v;
    }

    /* gallop down from the current value: hi-1, then steps of 2, 4, 8 while SAME */
    uint64_t step = 1;
    for (int g = 0; g < GALLOP_STEPS && span(ss_base(e, &s), s.hi) >= step; g++, step *= 2) {
        v = ss_try(e, &s, s.hi - (int64_t)step, 1);
        if (v == ASK_ERR || v == ASK_HALT)
            return v;
        if (v != AF_V_SAME)
            break;
    }

    /* bisect [base, hi]: SAME keeps the lower half, anything else the upper */
    for (uint64_t d; (d = span(ss_base(e, &s), s.hi)) > 0;) {
        uint64_t half = d / 2 + (d & 1); /* ceil((d + 1) / 2) without overflow */
        v = ss_try(e, &s, (int64_t)((uint64_t)ss_base(e, &s) + half - 1), 0);
        if (v < 0)
            return v;
    }
    return 0;
}

static int search_pass(engine *e)
{
    progress(e, "search");
    for (int i = 0; i < e->n; i++) {
        if (e->cur.values[i] == smin(e, i))
            continue;
        int v = search_symbol(e, i);
        if (v < 0)
            return v;
    }
    return 0;
}

/* ---- step 3: the certificate check ---- */

static int check_pass(engine *e, int *changed)
{
    int64_t cert[CERT_MAX];
    progress(e, "check");
    for (int i = 0; i < e->n; i++) {
        int nc = cert_values(e, i, e->cur.values[i], cert);
        for (int k = 0; k < nc; k++) {
            af_case c = e->cur;
            c.values[i] = cert[k];
            int v = ask(e, &c);
            if (v < 0)
                return v;
            if (v == AF_V_SAME) {
                set_cur(e, &c);
                *changed = 1;
                break;
            }
        }
    }
    return 0;
}

/* ---- step 4: joint moves ---- */

static int joint_pass(engine *e, int *changed)
{
    progress(e, "joint");
    for (int i = 0; i < e->n; i++) {
        for (int j = i + 1; j < e->n; j++) {
            if (e->cur.values[i] == smin(e, i) || e->cur.values[j] == smin(e, j))
                continue;
            af_case c = e->cur;
            c.values[i] = smin(e, i);
            c.values[j] = smin(e, j);
            int64_t now = reserve_check(e);
            if (af_memo_get(e->memo, &c, NULL) < 0 && !affordable(e, now, now))
                return 0;
            int v = ask(e, &c);
            if (v < 0)
                return v;
            if (v == AF_V_SAME) {
                set_cur(e, &c);
                *changed = 1;
                return 0;
            }
        }
    }
    return 0;
}

/* ---- step 5: fill ---- */

static int fill_rank(const af_case *c)
{
    int f = c->fill == AF_FILL_ZEROS    ? 0
            : c->fill == AF_FILL_ONES   ? 1
            : c->fill == AF_FILL_RANDOM ? 2
                                        : 3;
    return 2 * f + (c->seed != 0);
}

static int fill_pass(engine *e, int *changed)
{
    static const af_fill order[3] = {AF_FILL_ZEROS, AF_FILL_ONES, AF_FILL_RANDOM};
    progress(e, "fill");
    for (int k = 0; k < 3; k++) {
        af_case c = e->cur;
        c.fill = order[k];
        c.seed = 0;
        if (fill_rank(&c) >= fill_rank(&e->cur))
            continue;
        int v = ask(e, &c);
        if (v < 0)
            return v;
        if (v == AF_V_SAME) {
            set_cur(e, &c);
            *changed = 1;
            return 0;
        }
    }
    return 0;
}

/* ---- step 6: explain (explain.c) ---- */

/* The phase's questions go through ask(): the memo, the votes, the stop flag and the
 * budget. The phase never needs more than AF_EXPLAIN_TRIES new questions per symbol; the
 * count is checked here all the same, so the bound holds whatever explain.c does. */
static int explain_ask(void *ctx, const af_case *c, char *text, size_t len, int *fresh)
{
    engine *e = ctx;
    const char *t = "";
    int known = af_memo_get(e->memo, c, &t);
    if (known < 0 && e->rep->explain_calls >= (int64_t)AF_EXPLAIN_TRIES * e->n)
        return ASK_SKIP;
    int64_t before = e->rep->oracle_calls;
    int v = ask(e, c);
    if (v < 0)
        return v;
    *fresh = e->rep->oracle_calls > before;
    e->rep->explain_calls += *fresh;
    af_memo_get(e->memo, c, &t);
    snprintf(text, len, "%s", v == AF_V_SAME ? "" : t);
    return v;
}

static int explain_pass(engine *e)
{
    progress(e, "explain");
    int v = af_explain_run(e->spec, &e->cur, explain_ask, e, e->o.explain);
    return v == ASK_ERR ? ASK_ERR : 0;
}

/* ---- the whole ---- */

/* Returns 1 when the bug reproduced (go on), 0 when not or stopped, ASK_ERR on error. */
static int reproduce(engine *e, const af_case *start)
{
    int n = e->o.runs > 3 ? e->o.runs : 3, same = 0, done = 0;
    progress(e, "reproduce");
    e->in_repro = 1;
    for (; done < n && !halted(e); done++) {
        int v = run_once(e, start);
        if (v < 0)
            return ASK_ERR;
        same += v == AF_V_SAME;
    }
    e->in_repro = 0;
    af_min_report *r = e->rep;
    r->repro_rate = done ? (double)same / done : 0.0;
    r->reproduced = same > 0;
    r->oracle_calls = done > 0;
    if (!same)
        return 0;
    r->flaky = same < done;
    e->runs = r->flaky ? n : (e->o.runs > 1 ? e->o.runs : 1);
    r->runs_per_question = e->runs;
    if (af_memo_put(e->memo, start, AF_V_SAME, NULL) < 0) { /* the anchor, whatever its vote */
        errno = ENOMEM;
        af_error_sys(e->err, "minimizer answer memo");
        return ASK_ERR;
    }
    return !r->stopped;
}

/* Set locally_minimal from the certificates of the final case; asks only what the cache
 * does not know, and nothing once stopped. */
static int verify(engine *e)
{
    int64_t cert[CERT_MAX];
    progress(e, "verify");
    e->rep->locally_minimal = 1;
    for (int i = 0; i < e->n; i++) {
        int nc = cert_values(e, i, e->cur.values[i], cert);
        for (int k = 0; k < nc; k++) {
            af_case c = e->cur;
            c.values[i] = cert[k];
            int v = af_memo_get(e->memo, &c, NULL);
            if (v < 0 && !e->rep->stopped) {
                v = ask(e, &c);
                if (v == ASK_ERR)
                    return v;
            }
            if (v < 0 || v == AF_V_SAME) {
                e->rep->locally_minimal = 0;
                return 0;
            }
        }
    }
    return 0;
}

static int check_args(const af_spec *spec, const af_case *start, af_oracle_fn fn,
                      af_min_report *rep, af_error *err)
{
    if (!spec || !start || !fn || !rep)
        return af_error_set(err, AF_E_USAGE,
                            "af_minimize: spec, start, oracle and report are required");
    if (spec->n_syms < 0 || spec->n_syms > AF_MAX_SYMS)
        return af_error_set(err, AF_E_USAGE, "spec has %d symbols (at most %d)", spec->n_syms,
                            AF_MAX_SYMS);
    if (start->n_syms != spec->n_syms)
        return af_error_set(err, AF_E_USAGE, "case has %d symbols, spec has %d", start->n_syms,
                            spec->n_syms);
    if ((int)start->fill < 0 || start->fill >= AF_FILL_COUNT)
        return af_error_set(err, AF_E_USAGE, "case has an unknown fill mode %d", (int)start->fill);
    for (int i = 0; i < spec->n_syms; i++) {
        const af_symbol *s = &spec->syms[i];
        if (s->min > s->max)
            return af_error_set(err, AF_E_USAGE, "symbol %s has an empty range [%lld, %lld]",
                                s->name, (long long)s->min, (long long)s->max);
        if (start->values[i] < s->min || start->values[i] > s->max)
            return af_error_set(
                err, AF_E_USAGE, "symbol %s = %lld is outside its declared range [%lld, %lld]",
                s->name, (long long)start->values[i], (long long)s->min, (long long)s->max);
    }
    return 0;
}

int af_minimize(const af_spec *spec, const af_case *start, af_oracle_fn fn, void *ctx,
                const af_min_opts *opts, af_min_report *rep, af_error *err)
{
    if (check_args(spec, start, fn, rep, err) < 0)
        return -1;

    engine e;
    memset(&e, 0, sizeof e);
    memset(rep, 0, sizeof *rep);
    e.spec = spec;
    e.n = spec->n_syms;
    e.fn = fn;
    e.ctx = ctx;
    if (opts)
        e.o = *opts;
    e.rep = rep;
    e.err = err;
    e.cur = *start;
    memset(&e.cur.values[e.n], 0, (size_t)(AF_MAX_SYMS - e.n) * sizeof e.cur.values[0]);
    rep->best = e.cur;
    e.rationed = 1;
    clock_gettime(CLOCK_MONOTONIC, &e.t0);
    for (int i = 0; i < e.n; i++) {
        int64_t cert[CERT_MAX];
        int c = cert_values(&e, i, spec->syms[i].max, cert);
        e.bound += bitlen(span(spec->syms[i].min, spec->syms[i].max)) + (c > 4 ? c : 4);
    }
    /* the explain phase's share is its own: the ledger rations the search against B alone */
    rep->call_bound = e.bound + (e.o.explain ? (int64_t)AF_EXPLAIN_TRIES * e.n : 0);
    if (e.o.explain)
        memset(e.o.explain, 0, sizeof *e.o.explain);
    e.memo = e.o.memo;
    if (!e.memo && !(e.memo = e.own_memo = af_memo_new())) {
        errno = ENOMEM;
        return af_error_sys(err, "minimizer answer memo");
    }

    int rc = reproduce(&e, &e.cur);
    if (rc == 1) {
        for (int changed = 1; changed && rc >= 0;) {
            changed = 0;
            rep->rounds++;
            if ((rc = ddmin_pass(&e)) < 0 || (rc = search_pass(&e)) < 0 ||
                (rc = check_pass(&e, &changed)) < 0 || changed)
                continue;
            if ((rc = joint_pass(&e, &changed)) < 0 || changed)
                continue;
            if (e.o.simplify_fill)
                rc = fill_pass(&e, &changed);
        }
        if (rc != ASK_ERR)
            rc = verify(&e);
        if (rc != ASK_ERR && e.o.explain)
            rc = explain_pass(&e);
    }
    progress(&e, "done");
    af_memo_free(e.own_memo);
    return rc == ASK_ERR ? -1 : 0;
}
