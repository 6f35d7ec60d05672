/* crashmap.c — the crash map: a grid of outcomes over two symbols (crashmap.h).
 *
 * Why a grid and why these values. A report that says "fails at n=0" invites the question
 * "and at n=1? and for large m?"; a 16 x 16 picture answers it at a glance, and shows
 * when a second failure sits next to the first (crossidx with random fills fails wherever
 * argmax(y) >= n, a triangle). Sizes matter on a log scale (0, 1, 2, 4 ... behave
 * differently, 60 and 61 rarely do), so the axes are log-spaced, with the bounds, 0 and 1
 * always in, and the values the explain phase already asked, so that the row and the
 * column through the minimal case come from the memo for free.
 *
 * This file plans the axes, answers the cells and renders the map as text and JSON; the
 * SVG is crashmap_svg.c's. */
#include "crashmap.h"

#include "aotif/strbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- axes -------------------------------------------------------------------------------- */

static int contains(const int64_t *v, int n, int64_t x)
{
    for (int k = 0; k < n; k++)
        if (v[k] == x)
            return 1;
    return 0;
}

/* Append x unless present; the caller makes sure there is room. */
static int add_unique(int64_t *v, int n, int64_t x)
{
    if (contains(v, n, x))
        return n;
    v[n] = x;
    return n + 1;
}

static void sort_i64(int64_t *v, int n)
{
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
            int64_t t = v[b];
            v[b] = v[b - 1];
            v[b - 1] = t;
        }
}

int af_crashmap_values(int64_t lo, int64_t hi, const int64_t *keep, int n_keep, int max,
                       int64_t *out)
{
    if (max > AF_MAP_AXIS_MAX)
        max = AF_MAP_AXIS_MAX;
    if (lo > hi || max < 1)
        return 0;
    if ((uint64_t)hi - (uint64_t)lo < (uint64_t)max) { /* the whole range fits */
        int n = 0;
        for (int64_t x = lo; n < max; x++) {
            out[n++] = x;
            if (x == hi)
                break;
        }
        return n;
    }
    int64_t base[AF_MAP_AXIS_MAX];
    int nb = 0;
    base[nb++] = lo;
    if (max > 1)
        base[nb++] = hi;
    for (int64_t s = 0; s <= 1 && nb < max; s++)
        if (s >= lo && s <= hi)
            nb = add_unique(base, nb, s);
    for (int k = 0; k < n_keep && nb < max - 2; k++)
        if (keep[k] >= lo && keep[k] <= hi)
            nb = add_unique(base, nb, keep[k]);
    /* fill up with log-spaced values between max(lo, 1) and hi: the most points that fit */
    int64_t best[AF_MAP_AXIS_MAX];
    int n_best = nb;
    memcpy(best, base, (size_t)nb * sizeof base[0]);
    double a = lo >= 1 ? (double)lo : 1.0, b = (double)hi;
    for (int m = 3; b > a && m <= 64; m++) {
        int64_t v[AF_MAP_AXIS_MAX];
        int n = nb, over = 0;
        memcpy(v, base, (size_t)nb * sizeof base[0]);
        for (int k = 1; k < m - 1 && !over; k++) {
            double x = floor(a * pow(b / a, (double)k / (m - 1)) + 0.5);
            int64_t xi = x >= b ? hi : (int64_t)x;
            if (contains(v, n, xi))
                continue;
            if (n == max) /* a new value that does not fit */
                over = 1;
            else
                v[n++] = xi;
        }
        if (over)
            break;
        memcpy(best, v, (size_t)n * sizeof v[0]);
        n_best = n;
    }
    sort_i64(best, n_best);
    memcpy(out, best, (size_t)n_best * sizeof best[0]);
    return n_best;
}

static uint64_t range_size(const af_symbol *s)
{
    return (uint64_t)s->max - (uint64_t)s->min;
}

/* Order of importance: pinned first, then undecided, then the rest; wider ranges first. */
static int rank_of(const af_explain *ex, int i)
{
    if (!ex || !ex->ran || i >= ex->n_syms)
        return 1;
    switch (ex->sym[i].role) {
    case AF_ROLE_PINNED:
        return 0;
    case AF_ROLE_UNKNOWN:
        return 1;
    default:
        return 2;
    }
}

static int more_important(const af_spec *spec, const af_explain *ex, int i, int j)
{
    int ri = rank_of(ex, i), rj = rank_of(ex, j);
    if (ri != rj)
        return ri < rj;
    uint64_t si = range_size(&spec->syms[i]), sj = range_size(&spec->syms[j]);
    if (si != sj)
        return si > sj;
    return i < j;
}

void af_crashmap_plan(const af_spec *spec, const af_case *minimal, const af_explain *ex,
                      af_crashmap *out)
{
    memset(out, 0, sizeof *out);
    memset(out->key, -1, sizeof out->key);
    out->base = *minimal;
    int pick[2] = {-1, -1};
    for (int i = 0; i < spec->n_syms; i++) {
        if (spec->syms[i].min >= spec->syms[i].max)
            continue; /* one value: nothing to draw */
        if (pick[0] < 0 || more_important(spec, ex, i, pick[0])) {
            pick[1] = pick[0];
            pick[0] = i;
        } else if (pick[1] < 0 || more_important(spec, ex, i, pick[1])) {
            pick[1] = i;
        }
    }
    out->n_axes = (pick[0] >= 0) + (pick[1] >= 0);
    for (int a = 0; a < 2; a++) {
        int i = pick[a];
        out->sym[a] = i;
        if (i < 0) {
            out->n_vals[a] = 1; /* a strip: one row at the minimal case */
            out->vals[a][0] = 0;
            continue;
        }
        int64_t keep[1 + AF_EXPLAIN_TRIES];
        int nk = 0;
        keep[nk++] = minimal->values[i];
        if (ex && ex->ran && i < ex->n_syms)
            for (int k = 0; k < ex->sym[i].n_tried; k++)
                keep[nk++] = ex->sym[i].tried[k].value;
        out->n_vals[a] = af_crashmap_values(spec->syms[i].min, spec->syms[i].max, keep, nk,
                                            AF_MAP_AXIS_MAX, out->vals[a]);
    }
}

/* --- running ----------------------------------------------------------------------------- */

/* The legend key for `text` of kind `cell`, added when new; -1 when the legend is full. */
static int key_for(af_crashmap *map, const char *text, af_cell cell)
{
    for (int k = 0; k < map->n_keys; k++)
        if (map->key_cell[k] == cell && strcmp(map->keys[k], text) == 0)
            return k;
    if (map->n_keys == AF_MAP_KEYS_MAX) {
        map->keys_dropped++;
        return -1;
    }
    snprintf(map->keys[map->n_keys], sizeof map->keys[0], "%s", text);
    map->key_cell[map->n_keys] = (uint8_t)cell;
    return map->n_keys++;
}

/* One new question: a majority of `runs` runs, as the engine votes. Returns the verdict,
 * -2 when stopped, -1 on AF_V_ERROR (err filled). */
static int ask_new(af_crashmap *map, const af_case *c, af_oracle_fn fn, void *ctx, int runs,
                   const volatile int *stop, char *text, size_t len, af_error *err)
{
    int same = 0, other = 0;
    char sig[AF_MIN_SIG_MAX], other_sig[AF_MIN_SIG_MAX] = "", note[AF_MIN_SIG_MAX] = "";
    for (int r = 0; r < runs; r++) {
        if (stop && *stop)
            return -2;
        sig[0] = '\0';
        af_verdict v = fn(ctx, c, sig, sizeof sig);
        sig[sizeof sig - 1] = '\0';
        map->runs++;
        if (v == AF_V_ERROR)
            return af_error_set(err, AF_E_RUNTIME,
                                "crash map: the oracle could not judge a case: %s",
                                sig[0] ? sig : "no reason given");
        same += v == AF_V_SAME;
        other += v == AF_V_OTHER;
        if (v == AF_V_OTHER)
            memcpy(other_sig, sig, sizeof sig);
        else if (v == AF_V_PASS && sig[0])
            memcpy(note, sig, sizeof sig);
        int left = runs - r - 1;
        if (2 * same > runs || 2 * (same + left) <= runs)
            break;
    }
    int v = 2 * same > runs ? AF_V_SAME : other ? AF_V_OTHER : AF_V_PASS;
    snprintf(text, len, "%s", v == AF_V_OTHER ? other_sig : v == AF_V_PASS ? note : "");
    return v;
}

int af_crashmap_run(const af_spec *spec, const af_case *minimal, const af_explain *ex,
                    af_memo *memo, af_oracle_fn fn, void *ctx, const af_crashmap_opts *opts,
                    const char *crash_sig, af_crashmap *out, af_error *err)
{
    af_crashmap_opts o = {0};
    if (opts)
        o = *opts;
    if (o.runs < 1)
        o.runs = 1;
    af_crashmap_plan(spec, minimal, ex, out);
    snprintf(out->same_sig, sizeof out->same_sig, "%s", crash_sig ? crash_sig : "");
    if (out->n_axes == 0) {
        out->complete = 1;
        return 0;
    }
    int64_t total = (int64_t)out->n_vals[0] * out->n_vals[1], done = 0;
    int rc = 0, stopped = 0;
    for (int r = 0; r < out->n_vals[1] && !rc && !stopped; r++) {
        for (int col = 0; col < out->n_vals[0]; col++) {
            af_case c = out->base;
            c.values[out->sym[0]] = out->vals[0][col];
            if (out->sym[1] >= 0)
                c.values[out->sym[1]] = out->vals[1][r];
            const char *known = "";
            char text[AF_MIN_SIG_MAX];
            int v = memo ? af_memo_get(memo, &c, &known) : -1;
            if (v >= 0) {
                snprintf(text, sizeof text, "%s", known);
                out->memo_hits++;
            } else {
                v = ask_new(out, &c, fn, ctx, o.runs, o.stop, text, sizeof text, err);
                if (v == -2) {
                    stopped = 1;
                    break;
                }
                if (v < 0) {
                    rc = -1;
                    break;
                }
                out->questions++;
                if (memo && af_memo_put(memo, &c, v, text) < 0) {
                    errno = ENOMEM;
                    rc = af_error_sys(err, "crash map: answer memo");
                    break;
                }
            }
            out->cases++;
            af_cell cell = v == AF_V_SAME    ? AF_CELL_SAME
                           : v == AF_V_OTHER ? AF_CELL_OTHER
                           : text[0]         ? AF_CELL_NOT_BUG
                                             : AF_CELL_OK;
            out->cell[r][col] = (uint8_t)cell;
            if (cell == AF_CELL_OTHER || cell == AF_CELL_NOT_BUG)
                out->key[r][col] = (int8_t)key_for(out, text, cell);
            done++;
            if (o.progress)
                o.progress(o.progress_ctx, done, total);
        }
    }
    out->complete = done == total;
    return rc;
}

static char cell_char(const af_crashmap *map, int r, int c)
{
    switch ((af_cell)map->cell[r][c]) {
    case AF_CELL_SAME:
        return 'X';
    case AF_CELL_OK:
        return '.';
    case AF_CELL_OTHER:
    case AF_CELL_NOT_BUG:
        return map->key[r][c] >= 0 ? (char)('a' + map->key[r][c]) : '*';
    case AF_CELL_NOT_RUN:
        break;
    }
    return ' ';
}

char *af_crashmap_text(const af_crashmap *map)
{
    if (map->n_axes == 0)
        return NULL;
    af_sbuf b = {0};
    for (int r = map->n_vals[1] - 1; r >= 0; r--) {
        char line[AF_MAP_AXIS_MAX + 1];
        for (int c = 0; c < map->n_vals[0]; c++)
            line[c] = cell_char(map, r, c);
        line[map->n_vals[0]] = '\0';
        af_sb_add(&b, "%s\n", line);
    }
    return af_sb_take(&b);
}

cJSON *af_crashmap_json(const af_crashmap *map, const af_spec *spec)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "axes", map->n_axes);
    cJSON_AddBoolToObject(o, "complete", map->complete);
    cJSON_AddNumberToObject(o, "cases", (double)map->cases);
    cJSON_AddNumberToObject(o, "questions", (double)map->questions);
    cJSON_AddNumberToObject(o, "memo_hits", (double)map->memo_hits);
    cJSON_AddNumberToObject(o, "runs", (double)map->runs);
    static const char *const axis_name[2] = {"x", "y"};
    for (int a = 0; a < map->n_axes; a++) {
        cJSON *ax = cJSON_AddObjectToObject(o, axis_name[a]);
        cJSON_AddStringToObject(ax, "symbol", spec->syms[map->sym[a]].name);
        cJSON_AddStringToObject(ax, "dim", spec->syms[map->sym[a]].dim_name);
        cJSON *v = cJSON_AddArrayToObject(ax, "values");
        for (int k = 0; k < map->n_vals[a]; k++)
            cJSON_AddItemToArray(v, cJSON_CreateNumber((double)map->vals[a][k]));
    }
    if (map->n_axes) {
        cJSON *rows = cJSON_AddArrayToObject(o, "rows"); /* rows[0]: the smallest y */
        for (int r = 0; r < map->n_vals[1]; r++) {
            char line[AF_MAP_AXIS_MAX + 1];
            for (int c = 0; c < map->n_vals[0]; c++)
                line[c] = cell_char(map, r, c);
            line[map->n_vals[0]] = '\0';
            cJSON_AddItemToArray(rows, cJSON_CreateString(line));
        }
    }
    cJSON *lg = cJSON_AddObjectToObject(o, "legend");
    cJSON_AddStringToObject(lg, "X", map->same_sig);
    cJSON_AddStringToObject(lg, ".", "runs fine");
    for (int k = 0; k < map->n_keys; k++) {
        char key[2] = {(char)('a' + k), '\0'};
        char v[AF_MIN_SIG_MAX + 32];
        snprintf(v, sizeof v, "%s: %s", map->key_cell[k] == AF_CELL_OTHER ? "other" : "not a bug",
                 map->keys[k]);
        cJSON_AddStringToObject(lg, key, v);
    }
    if (map->keys_dropped)
        cJSON_AddNumberToObject(o, "keys_dropped", map->keys_dropped);
    return o;
}
