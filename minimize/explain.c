/* explain.c — the explain phase: free and pinned symbols of a minimal case (explain.h).
 *
 * The algorithm is a sweep, not a search: for each symbol i, with every other symbol held
 * at the minimal case, ask the case at each of the values af_explain_values gives for
 * [min_i, max_i]. The values are chosen to span what users send, from the edges (the
 * lower bound and one above it, where empty and size-1 bugs live) through the middle of
 * the range on a log scale (a "typical" size) and a large power of two (the sizes models
 * are tuned for) to the upper bound. All of them SAME: the symbol is free, the failure
 * does not depend on it over that range. Any PASS or OTHER: pinned, and the report lists
 * what each value gave. All values are asked even after the first non-SAME one: at most
 * AF_EXPLAIN_TRIES questions, and the full row is what a reader of the report wants.
 *
 * The phase asks through a callback, so the engine can route it through its memo, its
 * majority votes, its stop flag and its budget (ddmin.c), and a test can route it
 * anywhere. */
#include "explain.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *af_role_name(af_role r)
{
    switch (r) {
    case AF_ROLE_FREE:
        return "free";
    case AF_ROLE_PINNED:
        return "pinned";
    case AF_ROLE_FIXED:
        return "fixed";
    case AF_ROLE_UNKNOWN:
        break;
    }
    return "unknown";
}

/* The geometric middle of [lo, hi] (for ranges above 1), the arithmetic one otherwise. */
static int64_t typical(int64_t lo, int64_t hi)
{
    if (hi <= 1)
        return lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
    double a = lo >= 1 ? (double)lo : 1.0;
    double g = floor(sqrt(a) * sqrt((double)hi) + 0.5);
    if (g >= (double)hi)
        return hi;
    int64_t v = (int64_t)g;
    return v < lo ? lo : v;
}

int af_explain_values(int64_t lo, int64_t hi, int64_t *out)
{
    if (lo > hi)
        return 0;
    int64_t cand[AF_EXPLAIN_TRIES];
    int n = 0;
    cand[n++] = lo;
    if (lo < hi)
        cand[n++] = lo + 1;
    cand[n++] = typical(lo, hi);
    /* the largest power of two below hi, when it lies in the range */
    if (hi >= 2) {
        int64_t p = 1;
        while (p <= (hi - 1) / 2)
            p *= 2;
        if (p >= lo)
            cand[n++] = p;
    }
    cand[n++] = hi;
    /* sort (insertion; at most five) and drop duplicates */
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && cand[b] < cand[b - 1]; b--) {
            int64_t t = cand[b];
            cand[b] = cand[b - 1];
            cand[b - 1] = t;
        }
    int m = 0;
    for (int k = 0; k < n; k++)
        if (m == 0 || cand[k] != out[m - 1])
            out[m++] = cand[k];
    return m;
}

/* The role a symbol's answers so far give it; `all` says every value was answered. */
static af_role role_of(const af_explain_sym *s, int all)
{
    if (s->lo == s->hi)
        return AF_ROLE_FIXED;
    for (int k = 0; k < s->n_tried; k++)
        if (s->tried[k].verdict == AF_V_PASS || s->tried[k].verdict == AF_V_OTHER)
            return AF_ROLE_PINNED; /* one counterexample settles it, asked or not */
    return all ? AF_ROLE_FREE : AF_ROLE_UNKNOWN;
}

int af_explain_run(const af_spec *spec, const af_case *minimal, af_explain_ask_fn ask, void *ctx,
                   af_explain *out)
{
    memset(out, 0, sizeof *out);
    out->ran = 1;
    out->n_syms = spec->n_syms;
    out->bound = (int64_t)AF_EXPLAIN_TRIES * spec->n_syms;
    out->smallest = *minimal;
    int rc = 0;
    for (int i = 0; i < spec->n_syms; i++) {
        af_explain_sym *s = &out->sym[i];
        s->minimal = minimal->values[i];
        s->lo = spec->syms[i].min;
        s->hi = spec->syms[i].max;
        int64_t vals[AF_EXPLAIN_TRIES];
        s->n_tried = af_explain_values(s->lo, s->hi, vals);
        int all = 1;
        for (int k = 0; k < s->n_tried; k++) {
            af_explain_try *t = &s->tried[k];
            t->value = vals[k];
            t->verdict = -1;
            if (rc < 0) {
                all = 0;
                continue;
            }
            af_case c = *minimal;
            c.values[i] = vals[k];
            int fresh = 0;
            int v = ask(ctx, &c, t->text, sizeof t->text, &fresh);
            t->text[sizeof t->text - 1] = '\0';
            if (v < 0) {
                rc = v;
                t->text[0] = '\0';
                all = 0;
                continue;
            }
            t->verdict = v;
            t->asked = fresh;
            out->questions += fresh;
            out->memo_hits += !fresh;
        }
        s->role = role_of(s, all);
        if (s->role == AF_ROLE_FREE)
            out->smallest.values[i] = s->lo;
    }
    out->complete = rc == 0;
    return rc;
}

/* --- text ------------------------------------------------------------------------------ */

typedef struct tbuf {
    char *p;
    size_t len, at;
} tbuf;

static void tb_add(tbuf *b, const char *fmt, ...) AF_PRINTF(2, 3);
static void tb_add(tbuf *b, const char *fmt, ...)
{
    if (b->at >= b->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->at, b->len - b->at, fmt, ap);
    va_end(ap);
    if (n > 0)
        b->at = b->at + (size_t)n < b->len ? b->at + (size_t)n : b->len - 1;
}

/* The symbol's Dim name (else its own), reduced to printable ASCII. */
static const char *label(const af_spec *spec, int i, char *buf, size_t len)
{
    const af_symbol *s = &spec->syms[i];
    const char *src = s->dim_name[0] ? s->dim_name : s->name;
    size_t k = 0;
    for (; src[k] && k + 1 < len; k++)
        buf[k] = src[k] > 0x20 && src[k] < 0x7f ? src[k] : '?';
    buf[k] = '\0';
    return buf;
}

static void tried_list(tbuf *b, const af_explain_sym *s)
{
    tb_add(b, "(");
    int first = 1;
    for (int k = 0; k < s->n_tried; k++) {
        if (s->tried[k].verdict < 0)
            continue;
        tb_add(b, "%s%" PRId64, first ? "" : ", ", s->tried[k].value);
        first = 0;
    }
    tb_add(b, ")");
}

void af_explain_summary(const af_spec *spec, const af_explain *ex, char *buf, size_t len)
{
    tbuf b = {buf, len, 0};
    char name[AF_NAME_MAX];
    int n_pinned = 0, n_free = 0, n_unknown = 0;
    if (!len)
        return;
    buf[0] = '\0';
    if (!ex->ran) {
        tb_add(&b, "not explained");
        return;
    }
    for (int i = 0; i < ex->n_syms; i++) {
        n_pinned += ex->sym[i].role == AF_ROLE_PINNED;
        n_free += ex->sym[i].role == AF_ROLE_FREE;
        n_unknown += ex->sym[i].role == AF_ROLE_UNKNOWN;
    }
    if (n_pinned) {
        tb_add(&b, n_free ? "fails when " : "fails only when ");
        int k = 0;
        for (int i = 0; i < ex->n_syms; i++)
            if (ex->sym[i].role == AF_ROLE_PINNED)
                tb_add(&b, "%s%s=%" PRId64, k++ ? (k == n_pinned ? " and " : ", ") : "",
                       label(spec, i, name, sizeof name), ex->sym[i].minimal);
    } else {
        tb_add(&b, "fails");
    }
    if (n_free) {
        int k = 0;
        tb_add(&b, n_pinned ? ", for " : " for ");
        for (int i = 0; i < ex->n_syms; i++) {
            if (ex->sym[i].role != AF_ROLE_FREE)
                continue;
            tb_add(&b, "%severy %s tried ", k++ ? (k == n_free ? " and " : ", ") : "",
                   label(spec, i, name, sizeof name));
            tried_list(&b, &ex->sym[i]);
        }
    } else if (n_pinned) {
        tb_add(&b, " (every symbol tried is pinned)");
    }
    for (int i = 0, k = 0; i < ex->n_syms; i++)
        if (ex->sym[i].role == AF_ROLE_FIXED)
            tb_add(&b, "%s%s=%" PRId64,
                   k++ ? ", " : "; fixed by its range: ", label(spec, i, name, sizeof name),
                   ex->sym[i].minimal);
    if (n_unknown) {
        tb_add(&b, "; undecided (stopped early): ");
        for (int i = 0, k = 0; i < ex->n_syms; i++)
            if (ex->sym[i].role == AF_ROLE_UNKNOWN)
                tb_add(&b, "%s%s", k++ ? ", " : "", label(spec, i, name, sizeof name));
    }
}

/* --- JSON ------------------------------------------------------------------------------ */

cJSON *af_explain_json(const af_spec *spec, const af_explain *ex)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char summary[1024];
    af_explain_summary(spec, ex, summary, sizeof summary);
    cJSON_AddBoolToObject(o, "ran", ex->ran);
    cJSON_AddBoolToObject(o, "complete", ex->complete);
    cJSON_AddStringToObject(o, "summary", summary);
    cJSON_AddNumberToObject(o, "questions", (double)ex->questions);
    cJSON_AddNumberToObject(o, "memo_hits", (double)ex->memo_hits);
    cJSON_AddNumberToObject(o, "bound", (double)ex->bound);
    cJSON *pinned = cJSON_AddArrayToObject(o, "pinned");
    cJSON *freed = cJSON_AddArrayToObject(o, "free");
    cJSON *set = cJSON_AddObjectToObject(o, "minimal_failing_set");
    cJSON *syms = cJSON_AddArrayToObject(o, "symbols");
    for (int i = 0; ex->ran && i < ex->n_syms; i++) {
        const af_symbol *sy = &spec->syms[i];
        const af_explain_sym *s = &ex->sym[i];
        const char *nm = sy->dim_name[0] ? sy->dim_name : sy->name;
        if (s->role == AF_ROLE_PINNED)
            cJSON_AddItemToArray(pinned, cJSON_CreateString(nm));
        else if (s->role == AF_ROLE_FREE)
            cJSON_AddItemToArray(freed, cJSON_CreateString(nm));
        cJSON_AddNumberToObject(set, nm, (double)ex->smallest.values[i]);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", sy->name);
        cJSON_AddStringToObject(e, "dim", sy->dim_name);
        cJSON_AddStringToObject(e, "role", af_role_name(s->role));
        cJSON_AddNumberToObject(e, "minimal", (double)s->minimal);
        cJSON *r = cJSON_AddArrayToObject(e, "range");
        cJSON_AddItemToArray(r, cJSON_CreateNumber((double)s->lo));
        cJSON_AddItemToArray(r, cJSON_CreateNumber((double)s->hi));
        cJSON *tr = cJSON_AddArrayToObject(e, "tried");
        for (int k = 0; k < s->n_tried; k++) {
            const af_explain_try *t = &s->tried[k];
            cJSON *one = cJSON_CreateObject();
            cJSON_AddNumberToObject(one, "value", (double)t->value);
            cJSON_AddStringToObject(one, "verdict",
                                    t->verdict < 0 ? "NOT_ASKED"
                                                   : af_verdict_name((af_verdict)t->verdict));
            if (t->text[0])
                cJSON_AddStringToObject(one, t->verdict == AF_V_OTHER ? "signature" : "note",
                                        t->text);
            cJSON_AddBoolToObject(one, "asked", t->asked);
            cJSON_AddItemToArray(tr, one);
        }
        cJSON_AddItemToArray(syms, e);
    }
    return o;
}
