/* crashmap.h — a picture of where a failure lives: the outcomes over a grid of two
 * symbols' declared ranges, written as an SVG (crashmap.svg next to report.md).
 *
 * The two symbols that matter most are drawn: pinned ones first (explain.h), then by the
 * size of their range; with a single variable symbol the map is a strip. Each axis takes
 * at most AF_MAP_AXIS_MAX values: the whole range when it is that small, else the bounds,
 * 0 and 1 where in range, the minimal case's value and the explain phase's values (so the
 * map passes through cases already answered), filled up with log-spaced values. Every
 * other symbol stays at the minimal case. Cells are coloured by result: the crash's
 * signature in red, each other signature its own colour (a legend maps colours to
 * signatures), runs that passed neutral, runs that were not bugs (refused, timeout, OOM)
 * grey. Answers come from the shared memo (memo.h) when known; the rest are new
 * questions, outside the minimizer's bound and counted here.
 *
 * Ownership: af_crashmap is a plain value owned by the caller; texts returned are
 * malloc'ed (caller frees); every pointer argument is borrowed for the call. */
#ifndef AOTIF_MIN_CRASHMAP_H
#define AOTIF_MIN_CRASHMAP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/spec.h"
#include "ddmin.h"
#include "explain.h"
#include "memo.h"

#define AF_MAP_AXIS_MAX 16 /* values per axis: at most 16 x 16 cases */
#define AF_MAP_KEYS_MAX 10 /* legend entries besides the crash's and "runs fine" */

typedef enum af_cell {
    AF_CELL_NOT_RUN = 0, /* stopped before it was asked */
    AF_CELL_OK,          /* ran fine */
    AF_CELL_NOT_BUG,     /* passed without being fine: refused, timeout, OOM (its key) */
    AF_CELL_SAME,        /* the crash's signature */
    AF_CELL_OTHER,       /* another failure (its key) */
} af_cell;

typedef struct af_crashmap {
    int n_axes;                       /* 0: nothing to vary; 1: a strip; 2: a grid */
    int sym[2];                       /* spec symbol of the columns (x) and rows (y) */
    int n_vals[2];                    /* values per axis (n_vals[1] == 1 for a strip) */
    int64_t vals[2][AF_MAP_AXIS_MAX]; /* ascending */
    af_case base;                     /* the minimal case; the map varies sym[] only */
    uint8_t cell[AF_MAP_AXIS_MAX][AF_MAP_AXIS_MAX]; /* af_cell, [row][column] */
    int8_t key[AF_MAP_AXIS_MAX][AF_MAP_AXIS_MAX];   /* index in keys[], -1: none or the
                                                       "further failures" key */
    char same_sig[AF_MIN_SIG_MAX];                  /* the crash's signature */
    int n_keys;
    char keys[AF_MAP_KEYS_MAX][AF_MIN_SIG_MAX]; /* other signatures and not-bug notes */
    uint8_t key_cell[AF_MAP_KEYS_MAX];          /* AF_CELL_OTHER or AF_CELL_NOT_BUG */
    int keys_dropped;                           /* further distinct texts, drawn in one colour */
    int64_t cases;                              /* cells answered */
    int64_t questions;                          /* of them, new questions (outside ddmin's bound) */
    int64_t memo_hits;                          /* of them, answered by the memo */
    int64_t runs;                               /* oracle runs the new questions took */
    int complete;                               /* every cell answered */
} af_crashmap;

typedef struct af_crashmap_opts {
    int runs;                 /* runs per question, majority wins (<= 1: one) */
    const volatile int *stop; /* may be NULL: stops before the next run when set */
    /* called after each cell, may be NULL */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
} af_crashmap_opts;

/* Up to `max` (<= AF_MAP_AXIS_MAX) ascending, distinct values of [lo, hi] for an axis:
 * all of them when they fit, else lo, hi, 0 and 1 when in range and the `n_keep` values
 * of `keep` inside the range (at most max - 4 of them), filled up with log-spaced ones.
 * Returns how many. */
int af_crashmap_values(int64_t lo, int64_t hi, const int64_t *keep, int n_keep, int max,
                       int64_t *out);

/* Choose the axes and their values (no questions): fills out->n_axes, sym, n_vals, vals,
 * base; cells NOT_RUN. `ex` may be NULL (no explain result: by range size alone). */
void af_crashmap_plan(const af_spec *spec, const af_case *minimal, const af_explain *ex,
                      af_crashmap *out);

/* Plan (as above), then answer every cell from `memo` or the oracle, storing new answers
 * in the memo (memo may be NULL: no sharing). `crash_sig` names the crash for the legend.
 * Returns 0 (also when stopped: out->complete == 0), or -1 with err when the oracle
 * answered AF_V_ERROR (AF_E_RUNTIME) or memory ran out (AF_E_IO); *out then holds what
 * was answered. */
int af_crashmap_run(const af_spec *spec, const af_case *minimal, const af_explain *ex,
                    af_memo *memo, af_oracle_fn fn, void *ctx, const af_crashmap_opts *opts,
                    const char *crash_sig, af_crashmap *out, af_error *err);

/* The map as a standalone SVG document; `title` may be NULL. Every string from the spec,
 * the signatures or the title is XML-escaped (and invalid UTF-8 or control characters
 * replaced). NULL on OOM or when out->n_axes == 0. */
char *af_crashmap_svg(const af_crashmap *map, const af_spec *spec, const char *title);
/* Write af_crashmap_svg's text to `path` atomically (temp file, fsync, rename). */
int af_crashmap_write_svg(const char *path, const af_crashmap *map, const af_spec *spec,
                          const char *title, af_error *err);

/* A small text rendering, one line per row, top row = largest y: 'X' the crash, '.' fine,
 * 'a'.. the keys in order, '*' a dropped key, '-' not a bug without key, ' ' not run;
 * lines end with '\n'. Malloc'ed; NULL on OOM or with no axes. */
char *af_crashmap_text(const af_crashmap *map);

/* The map as JSON (axes, cells as key letters per row, legend, counts); NULL on OOM. */
cJSON *af_crashmap_json(const af_crashmap *map, const af_spec *spec);

/* XML-escape s into buf (len bytes, always NUL-terminated): & < > " ' as entities, control
 * characters and invalid UTF-8 as '?', cut at a character boundary after `max_chars`
 * characters (0: no limit) with "..." appended. Returns buf. */
char *af_xml_escape(const char *s, size_t max_chars, char *buf, size_t len);

#endif
