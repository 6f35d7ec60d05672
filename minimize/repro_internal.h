/* repro_internal.h — what the writers of repro.py (repro_py.c), repro.sh (repro_sh.c) and
 * report.md (report.c) share: the case and its inputs as text, in the same words in all
 * three. Private to minimize/; implemented in repro.c.
 *
 * Every function writes into the caller's buffer (always NUL-terminated) or returns a
 * pointer into its arguments; names are reduced to printable ASCII (quote.h's
 * af_text_doc) where they land in text. */
#ifndef AOTIF_MIN_REPRO_INTERNAL_H
#define AOTIF_MIN_REPRO_INTERNAL_H

#include <stddef.h>

#include "quote.h"
#include "repro.h"

/* The symbol's Dim name, else its own (e.g. "s77"); a pointer into s. */
const char *af_repro_sym_label(const af_symbol *s);
/* "(0, 16)" / "(0,)" / "()": a Python tuple of input i's sizes under case c. */
void af_repro_shape_tuple(const af_spec *spec, const af_case *c, int i, char *buf, size_t len);
/* "(n, 16)" / "(2*n + 1, 4)": input i's declared shape, with Dim names where known. */
void af_repro_shape_symbolic(const af_spec *spec, int i, char *buf, size_t len);
/* "x (0, 16), y (0, 16)": every input's name and shape under case c. */
void af_repro_inputs_line(const af_spec *spec, const af_case *c, char *buf, size_t len);
/* "n=0 m=0": the symbol values of case c. */
void af_repro_case_line(const af_spec *spec, const af_case *c, char *buf, size_t len);
/* The device the case ran on: info->device, else the package's. */
const char *af_repro_device(const af_repro_info *info);

#endif
