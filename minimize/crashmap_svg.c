/* crashmap_svg.c — the crash map as an SVG document (crashmap.svg next to report.md); see
 * crashmap.h.
 *
 * The SVG is built by hand, as text: a few hundred rectangles need no library. It has four
 * parts, each its own function: the heading (title, axes, what is held fixed), the grid (a
 * cell per case, row 0 at the bottom, the minimal case outlined, each cell's outcome in its
 * tooltip), the axis labels (slanted when long) and the legend. Everything that comes from
 * outside (symbol names, signatures, the title) goes through af_xml_escape, which also
 * replaces what XML 1.0 cannot hold at all (control characters, invalid UTF-8), so a hostile
 * signature cannot break the document or inject markup. */
#include "crashmap.h"

#include "aotif/fileio.h"
#include "aotif/strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Where everything goes, from the map's size and its labels. */
typedef struct svg_layout {
    int nx, ny;        /* columns, rows */
    int label_len;     /* digits of the longest axis value */
    int rotate;        /* long x labels go slanted */
    int left, top;     /* the grid's top left corner */
    int gw, gh;        /* the grid's size */
    int xlab_h;        /* height of the x labels */
    int not_run;       /* some cell was not run (a legend entry for it) */
    int n_legend;      /* legend entries */
    int legend_y;      /* the first entry's top */
    int width, height; /* the document */
} svg_layout;

static void svg_layout_of(const af_crashmap *map, svg_layout *l)
{
    memset(l, 0, sizeof *l);
    l->nx = map->n_vals[0];
    l->ny = map->n_vals[1];
    l->label_len = 1;
    for (int a = 0; a < 2; a++)
        for (int k = 0; k < map->n_vals[a]; k++) {
            char t[32];
            int n = snprintf(t, sizeof t, "%" PRId64, map->vals[a][k]);
            l->label_len = n > l->label_len ? n : l->label_len;
        }
    l->rotate = l->label_len > 3;
    l->left = 40 + 7 * l->label_len;
    l->top = 70;
    l->gw = l->nx * CELL;
    l->gh = l->ny * CELL;
    l->xlab_h = l->rotate ? 12 + 6 * l->label_len : 18;
    for (int r = 0; r < l->ny && !l->not_run; r++)
        for (int c = 0; c < l->nx; c++)
            if (map->cell[r][c] == AF_CELL_NOT_RUN) {
                l->not_run = 1;
                break;
            }
    /* the crash's, "runs fine", the keys, the dropped ones, not run, the outline note */
    l->n_legend = 2 + map->n_keys + (map->keys_dropped > 0) + 1 + l->not_run;
    l->legend_y = l->top + l->gh + l->xlab_h + 34;
    l->width = l->left + l->gw + 40 > 760 ? l->left + l->gw + 40 : 760;
    l->height = l->legend_y + 20 * l->n_legend + 16;
}

/* The document's start, the title, and what the axes are and what is held fixed. */
static void svg_heading(af_sbuf *b, const af_crashmap *map, const af_spec *spec, const char *title,
                        const svg_layout *l)
{
    char e1[1200], e2[1200], e3[700];
    af_sb_add(
        b,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n",
        l->width, l->height, l->width, l->height);
    af_sb_add(b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", l->width,
              l->height);
    af_sb_add(
        b, "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
        af_xml_escape(title && *title ? title : "aoti-minimize crash map", 100, e1, sizeof e1));
    af_sbuf held = {0};
    for (int i = 0; i < spec->n_syms; i++)
        if (i != map->sym[0] && i != map->sym[1])
            af_sb_add(&held, "%s%s=%" PRId64, held.len ? " " : "", sym_label(spec, i),
                      map->base.values[i]);
    af_sb_add(&held, "%sfill %s seed %" PRIu64, held.len ? ", " : "", af_fill_name(map->base.fill),
              map->base.seed);
    af_sb_add(b,
              "<text x=\"12\" y=\"42\" fill=\"#333333\">across: %s%s%s; held at the minimal case: "
              "%s</text>\n",
              af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1),
              map->sym[1] >= 0 ? ", up: " : "",
              map->sym[1] >= 0 ? af_xml_escape(sym_label(spec, map->sym[1]), 40, e2, sizeof e2)
                               : "",
              af_xml_escape(held.s ? held.s : "", 100, e3, sizeof e3));
    free(held.s);
}

/* One cell at (x, y), with its case and outcome as a tooltip. */
static void svg_cell(af_sbuf *b, const af_crashmap *map, const af_spec *spec, int r, int c, int x,
                     int y)
{
    char e1[1200];
    af_cell cell = (af_cell)map->cell[r][c];
    const char *fill = cell == AF_CELL_SAME      ? COLOR_SAME
                       : cell == AF_CELL_OK      ? COLOR_OK
                       : cell == AF_CELL_NOT_RUN ? "#ffffff"
                                                 : key_color(map, map->key[r][c]);
    af_sb_add(b,
              "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\""
              "%s><title>%s=%" PRId64,
              x, y, CELL, CELL, fill, cell == AF_CELL_NOT_RUN ? " stroke-dasharray=\"3,2\"" : "",
              af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1), map->vals[0][c]);
    if (map->sym[1] >= 0)
        af_sb_add(b, " %s=%" PRId64, af_xml_escape(sym_label(spec, map->sym[1]), 40, e1, sizeof e1),
                  map->vals[1][r]);
    af_sb_add(b, ": %s", cell_word(cell));
    if ((cell == AF_CELL_OTHER || cell == AF_CELL_NOT_BUG) && map->key[r][c] >= 0)
        af_sb_add(b, " (%s)", af_xml_escape(map->keys[map->key[r][c]], 200, e1, sizeof e1));
    af_sb_add(b, "</title></rect>\n");
}

/* The grid, row 0 (the smallest y) at the bottom, the minimal case outlined, and its frame. */
static void svg_grid(af_sbuf *b, const af_crashmap *map, const af_spec *spec, const svg_layout *l)
{
    int cx_min = -1, cy_min = -1;
    for (int r = 0; r < l->ny; r++) {
        int y = l->top + (l->ny - 1 - r) * CELL;
        for (int c = 0; c < l->nx; c++) {
            int x = l->left + c * CELL;
            int is_min = map->vals[0][c] == map->base.values[map->sym[0]] &&
                         (map->sym[1] < 0 || map->vals[1][r] == map->base.values[map->sym[1]]);
            if (is_min)
                cx_min = x, cy_min = y;
            svg_cell(b, map, spec, r, c, x, y);
        }
    }
    if (cx_min >= 0)
        af_sb_add(
            b,
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000000\" "
            "stroke-width=\"3\"/>\n",
            cx_min + 1, cy_min + 1, CELL - 2, CELL - 2);
    af_sb_add(
        b,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999999\"/>\n",
        l->left, l->top, l->gw, l->gh);
}

/* The values along each axis and the axes' names. */
static void svg_axes(af_sbuf *b, const af_crashmap *map, const af_spec *spec, const svg_layout *l)
{
    char e1[1200];
    for (int c = 0; c < l->nx; c++) {
        int x = l->left + c * CELL + CELL / 2, y = l->top + l->gh + 14;
        if (l->rotate)
            af_sb_add(b,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" "
                      "transform=\"rotate(-45 %d %d)\">%" PRId64 "</text>\n",
                      x + 4, y, x + 4, y, map->vals[0][c]);
        else
            af_sb_add(b,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%" PRId64
                      "</text>\n",
                      x, y, map->vals[0][c]);
    }
    af_sb_add(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s</text>\n",
              l->left + l->gw / 2, l->top + l->gh + l->xlab_h + 14,
              af_xml_escape(sym_label(spec, map->sym[0]), 40, e1, sizeof e1));
    if (map->sym[1] < 0)
        return;
    for (int r = 0; r < l->ny; r++)
        af_sb_add(
            b, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%" PRId64 "</text>\n",
            l->left - 4, l->top + (l->ny - 1 - r) * CELL + CELL / 2 + 4, map->vals[1][r]);
    int yx = 16, yy = l->top + l->gh / 2;
    af_sb_add(b,
              "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\" "
              "transform=\"rotate(-90 %d %d)\">%s</text>\n",
              yx, yy, yx, yy, af_xml_escape(sym_label(spec, map->sym[1]), 40, e1, sizeof e1));
}

/* One legend entry at height y: a swatch (with `extra` attributes) and its text. Returns
 * the next entry's y. */
static int svg_entry(af_sbuf *b, int y, const char *color, const char *extra, const char *text)
{
    af_sb_add(
        b,
        "<rect x=\"12\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#666666\"%s/>"
        "\n",
        y, color, extra);
    af_sb_add(b, "<text x=\"32\" y=\"%d\">%s</text>\n", y + 12, text);
    return y + 20;
}

/* The legend: the crash, each key, the dropped keys, fine, not run, the outline. */
static void svg_legend(af_sbuf *b, const af_crashmap *map, const svg_layout *l)
{
    char e1[1200], text[1300];
    int ly = l->legend_y;
    af_sb_add(b, "<text x=\"12\" y=\"%d\" font-weight=\"bold\">Legend</text>\n", ly - 8);
    snprintf(text, sizeof text, "fails the same way: %s",
             af_xml_escape(map->same_sig, 95, e1, sizeof e1));
    ly = svg_entry(b, ly, COLOR_SAME, "", text);
    for (int k = 0; k < map->n_keys; k++) {
        snprintf(text, sizeof text, "%s: %s",
                 map->key_cell[k] == AF_CELL_OTHER ? "fails differently" : "not a bug",
                 af_xml_escape(map->keys[k], 95, e1, sizeof e1));
        ly = svg_entry(b, ly, key_color(map, k), "", text);
    }
    if (map->keys_dropped) {
        snprintf(text, sizeof text, "%d further signatures", map->keys_dropped);
        ly = svg_entry(b, ly, COLOR_DROPPED, "", text);
    }
    ly = svg_entry(b, ly, COLOR_OK, "", "runs fine");
    if (l->not_run)
        ly = svg_entry(b, ly, "#ffffff", " stroke-dasharray=\"3,2\"", "not run (stopped early)");
    af_sb_add(b,
              "<rect x=\"12\" y=\"%d\" width=\"14\" height=\"14\" fill=\"none\" stroke=\"#000000\" "
              "stroke-width=\"3\"/>\n",
              ly);
    af_sb_add(b,
              "<text x=\"32\" y=\"%d\">outlined: the minimal case; %" PRId64 " cases, %" PRId64
              " new questions, %" PRId64 " from the memo</text>\n",
              ly + 12, map->cases, map->questions, map->memo_hits);
}

char *af_crashmap_svg(const af_crashmap *map, const af_spec *spec, const char *title)
{
    if (map->n_axes == 0)
        return NULL;
    svg_layout l;
    svg_layout_of(map, &l);
    af_sbuf b = {0};
    svg_heading(&b, map, spec, title, &l);
    svg_grid(&b, map, spec, &l);
    svg_axes(&b, map, spec, &l);
    svg_legend(&b, map, &l);
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
