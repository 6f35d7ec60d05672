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
 * The SVG is built by hand, as text: a few hundred rectangles need no library. Everything
 * that comes from outside (symbol names, signatures, the title) goes through
 * af_xml_escape, which also replaces what XML 1.0 cannot hold at all (control characters,
 * invalid UTF-8), so a hostile signature cannot break the document or inject markup. */
#include "crashmap.h"

#include "aotif/strbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotif/crashfile.h"

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

/* --- XML --------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x3f >> (n - 1));
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

char *af_xml_escape(const char *s, size_t max_chars, char *buf, size_t len)
{
    size_t at = 0, chars = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (!len)
        return buf;
    while (*p) {
        if (max_chars && chars == max_chars) {
            if (at + 4 <= len) {
                memcpy(buf + at, "...", 3);
                at += 3;
            }
            break;
        }
        char one[8];
        const char *put = one;
        size_t pl;
        int n = utf8_len(p);
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
            put = *p == '\t' || *p == '\n' || *p == '\r' ? " " : "?";
            pl = 1;
            n = 1;
        } else if (*p == '&') {
            put = "&amp;", pl = 5;
        } else if (*p == '<') {
            put = "&lt;", pl = 4;
        } else if (*p == '>') {
            put = "&gt;", pl = 4;
        } else if (*p == '"') {
            put = "&quot;", pl = 6;
        } else if (*p == '\'') {
            put = "&apos;", pl = 6;
        } else {
            memcpy(one, p, (size_t)n);
            pl = (size_t)n;
        }
        if (at + pl + 1 > len)
            break;
        memcpy(buf + at, put, pl);
        at += pl;
        p += n;
        chars++;
    }
    buf[at] = '\0';
    return buf;
}

/* --- SVG --------------------------------------------------------------------------------- */

#define CELL 30
#define COLOR_SAME "#d62728"
#define COLOR_OK "#ececec"
#define COLOR_DROPPED "#555555"
static const char *const other_colors[] = {"#1f77b4", "#ff7f0e", "#9467bd", "#2ca02c", "#8c564b",
                                           "#e377c2", "#bcbd22", "#17becf", "#393b79", "#637939"};
static const char *const notbug_colors[] = {"#a8a8a8", "#8f8f8f", "#c4b49a", "#9aa9c4"};

static const char *key_color(const af_crashmap *map, int k)
{
    if (k < 0)
        return COLOR_DROPPED;
    int nth = 0; /* its rank among keys of the same kind */
    for (int j = 0; j < k; j++)
        nth += map->key_cell[j] == map->key_cell[k];
    if (map->key_cell[k] == AF_CELL_NOT_BUG)
        return notbug_colors[nth % (int)(sizeof notbug_colors / sizeof notbug_colors[0])];
    return other_colors[nth % (int)(sizeof other_colors / sizeof other_colors[0])];
}

static const char *sym_label(const af_spec *spec, int i)
{
    const af_symbol *s = &spec->syms[i];
    return s->dim_name[0] ? s->dim_name : s->name;
}

static const char *cell_word(af_cell c)
{
    switch (c) {
    case AF_CELL_OK:
        return "runs fine";
    case AF_CELL_NOT_BUG:
        return "not a bug";
    case AF_CELL_SAME:
        return "fails the same way";
    case AF_CELL_OTHER:
        return "fails differently";
    case AF_CELL_NOT_RUN:
        break;
    }
    return "not run";
}

char *af_crashmap_svg(const af_crashmap *map, const af_spec *spec, const char *title)
{
    if (map->n_axes == 0)
        return NULL;
    af_sbuf b = {0};
    char e1[1200], e2[1200];
    int nx = map->n_vals[0], ny = map->n_vals[1];
    int label_len = 1;
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < map->n_vals[a]; k++) {
            char t[32];
            int l = snprintf(t, sizeof t, "%" PRId64, map->vals[a][k]);
            label_len = l > label_len ? l : label_len;
        }
    int rotate = label_len > 3; /* long x labels go slanted */
    int left = 40 + 7 * label_len, top = 70;
    int gw = nx * CELL, gh = ny * CELL;
    int xlab_h = rotate ? 12 + 6 * label_len : 18;
    int n_legend = 2 + map->n_keys + (map->keys_dropped > 0) + 1; /* + the outline note */
    for (int r = 0; r < ny; r++)
        for (int c = 0; c < nx; c++)
            if (map->cell[r][c] == AF_CELL_NOT_RUN) {
                n_legend++;
                r = ny;
                break;
            }
    int legend_y = top + gh + xlab_h + 34;
    int width = left + gw + 40 > 760 ? left + gw + 40 : 760;
    int height = legend_y + 20 * n_legend + 16;

    af_sb_add(
        &b,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n",
        width, height, width, height);
    af_sb_add(&b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width,
              height);
    af_sb_add(
        &b, "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
        af_xml_escape(title && *title ? title : "aoti-minimize crash map", 100, e1, sizeof e1));
    /* what is held fixed */
    af_sbuf held = {0};
    for (int i = 0; i < spec->n_syms; i++)
        if (i != map->sym[0] && i != map->sym[1])
            af_sb_add(&held, "%s%s=%" PRId64, held.len ? " " : "", sym_label(spec, i),
                      map->base.values[i]);
    af_sb_add(&held, "%sfill %s seed %" PRIu64, held.len ? ", " : "", af_fill_name(map->base.fill),
              map->base.seed);
    char e3[700];
    af_sb_add(&b,
              "<text x=\"12\" y=\"42\" fill=\"#333333\">across: %s%s%s; held at the minimal case: "
              "%s</text>\n",
              af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1),
              map->sym[1] >= 0 ? ", up: " : "",
              map->sym[1] >= 0 ? af_xml_escape(sym_label(spec, map->sym[1]), 40, e2, sizeof e2)
                               : "",
              af_xml_escape(held.s ? held.s : "", 100, e3, sizeof e3));
    free(held.s);

    /* the grid: row 0 (the smallest y) at the bottom */
    int cx_min = -1, cy_min = -1;
    for (int r = 0; r < ny; r++) {
        int y = top + (ny - 1 - r) * CELL;
        for (int c = 0; c < nx; c++) {
            int x = left + c * CELL;
            af_cell cell = (af_cell)map->cell[r][c];
            const char *fill = cell == AF_CELL_SAME      ? COLOR_SAME
                               : cell == AF_CELL_OK      ? COLOR_OK
                               : cell == AF_CELL_NOT_RUN ? "#ffffff"
                                                         : key_color(map, map->key[r][c]);
            int64_t vx = map->vals[0][c];
            int is_min = vx == map->base.values[map->sym[0]] &&
                         (map->sym[1] < 0 || map->vals[1][r] == map->base.values[map->sym[1]]);
            if (is_min)
                cx_min = x, cy_min = y;
            af_sb_add(
                &b,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\""
                "%s><title>%s=%" PRId64,
                x, y, CELL, CELL, fill, cell == AF_CELL_NOT_RUN ? " stroke-dasharray=\"3,2\"" : "",
                af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1), vx);
            if (map->sym[1] >= 0)
                af_sb_add(&b, " %s=%" PRId64,
                          af_xml_escape(sym_label(spec, map->sym[1]), 40, e1, sizeof e1),
                          map->vals[1][r]);
            af_sb_add(&b, ": %s", cell_word(cell));
            if ((cell == AF_CELL_OTHER || cell == AF_CELL_NOT_BUG) && map->key[r][c] >= 0)
                af_sb_add(&b, " (%s)",
                          af_xml_escape(map->keys[map->key[r][c]], 200, e1, sizeof e1));
            af_sb_add(&b, "</title></rect>\n");
        }
    }
    if (cx_min >= 0)
        af_sb_add(
            &b,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000000\" "
            "stroke-width=\"3\"/>\n",
            cx_min + 1, cy_min + 1, CELL - 2, CELL - 2);
    af_sb_add(
        &b,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999999\"/>\n",
        left, top, gw, gh);

    /* axis labels */
    for (int c = 0; c < nx; c++) {
        int x = left + c * CELL + CELL / 2, y = top + gh + 14;
        if (rotate)
            af_sb_add(&b,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" "
                      "transform=\"rotate(-45 %d %d)\">%" PRId64 "</text>\n",
                      x + 4, y, x + 4, y, map->vals[0][c]);
        else
            af_sb_add(&b,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%" PRId64
                      "</text>\n",
                      x, y, map->vals[0][c]);
    }
    af_sb_add(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n",
              left + gw / 2, top + gh + xlab_h + 14,
              af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1));
    if (map->sym[1] >= 0) {
        for (int r = 0; r < ny; r++)
            af_sb_add(&b,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%" PRId64
                      "</text>\n",
                      left - 4, top + (ny - 1 - r) * CELL + CELL / 2 + 4, map->vals[1][r]);
        int yx = 16, yy = top + gh / 2;
        af_sb_add(&b,
                  "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\" "
                  "transform=\"rotate(-90 %d %d)\">%s</text>\n",
                  yx, yy, yx, yy, af_xml_escape(sym_label(spec, map->sym[1]), 40, e1, sizeof e1));
    }

    /* legend */
    int ly = legend_y;
    af_sb_add(&b, "<text x=\"12\" y=\"%d\" font-weight=\"bold\">Legend</text>\n", ly - 8);
#define SWATCH(color, extra)                                                                       \
    af_sb_add(                                                                                     \
        &b,                                                                                        \
        "<rect x=\"12\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#666666\"%s/>\n", \
        ly, color, extra)
    SWATCH(COLOR_SAME, "");
    af_sb_add(&b, "<text x=\"32\" y=\"%d\">fails the same way: %s</text>\n", ly + 12,
              af_xml_escape(map->same_sig, 95, e1, sizeof e1));
    ly += 20;
    for (int k = 0; k < map->n_keys; k++) {
        SWATCH(key_color(map, k), "");
        af_sb_add(&b, "<text x=\"32\" y=\"%d\">%s: %s</text>\n", ly + 12,
                  map->key_cell[k] == AF_CELL_OTHER ? "fails differently" : "not a bug",
                  af_xml_escape(map->keys[k], 95, e1, sizeof e1));
        ly += 20;
    }
    if (map->keys_dropped) {
        SWATCH(COLOR_DROPPED, "");
        af_sb_add(&b, "<text x=\"32\" y=\"%d\">%d further signatures</text>\n", ly + 12,
                  map->keys_dropped);
        ly += 20;
    }
    SWATCH(COLOR_OK, "");
    af_sb_add(&b, "<text x=\"32\" y=\"%d\">runs fine</text>\n", ly + 12);
    ly += 20;
    if (n_legend > 3 + map->n_keys + (map->keys_dropped > 0)) {
        SWATCH("#ffffff", " stroke-dasharray=\"3,2\"");
        af_sb_add(&b, "<text x=\"32\" y=\"%d\">not run (stopped early)</text>\n", ly + 12);
        ly += 20;
    }
    af_sb_add(&b,
              "<rect x=\"12\" y=\"%d\" width=\"14\" height=\"14\" fill=\"none\" stroke=\"#000000\" "
              "stroke-width=\"3\"/>\n",
              ly);
    af_sb_add(&b,
              "<text x=\"32\" y=\"%d\">outlined: the minimal case; %" PRId64 " cases, %" PRId64
              " new questions, %" PRId64 " from the memo</text>\n",
              ly + 12, map->cases, map->questions, map->memo_hits);
#undef SWATCH
    af_sb_add(&b, "</svg>\n");
    return af_sb_take(&b);
}

int af_crashmap_write_svg(const char *path, const af_crashmap *map, const af_spec *spec,
                          const char *title, af_error *err)
{
    char *svg = af_crashmap_svg(map, spec, title);
    if (!svg)
        return af_error_set(err, map->n_axes ? AF_E_IO : AF_E_USAGE, "%s: %s", path,
                            map->n_axes ? "out of memory" : "no symbol to map");
    int rc = af_write_atomic(path, svg, strlen(svg), 0, err);
    free(svg);
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
