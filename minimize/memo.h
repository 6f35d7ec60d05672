/* memo.h — the answers aoti-minimize has already paid for, shared by its three phases.
 *
 * Every question (one case, judged PASS / SAME / OTHER) costs a worker run, seconds on a
 * GPU. The minimizer (ddmin.c), the explain phase (explain.c) and the crash map
 * (crashmap.c) ask overlapping questions: the map's grid passes through the minimal case
 * and the explain phase's values, and the explain phase re-visits the lower bounds the
 * minimizer tried. One memo, keyed by the whole case (symbol values, fill, seed), answers
 * each of them once. Besides the verdict it keeps a short text per answer: the signature
 * of an OTHER failure, or the class of a run that passed without being fine (REFUSED,
 * TIMEOUT, OOM); the crash map colours its cells by it.
 *
 * Ownership: af_memo_new's memo belongs to the caller (af_memo_free). Texts are copied in;
 * the pointer af_memo_get hands out is the memo's, valid until af_memo_free. */
#ifndef AOTIF_MIN_MEMO_H
#define AOTIF_MIN_MEMO_H

#include <stddef.h>

#include "aotif/case.h"

typedef struct af_memo af_memo;

/* An empty memo, or NULL when out of memory. */
af_memo *af_memo_new(void);
void af_memo_free(af_memo *m);

/* The stored verdict (an af_verdict of ddmin.h: PASS, SAME or OTHER), or -1 when the case
 * was never answered. `text` (may be NULL) receives the stored text, "" when none. */
int af_memo_get(const af_memo *m, const af_case *c, const char **text);

/* Store (or replace) the answer for `c`; `text` may be NULL or "". 0, or -1 when out of
 * memory (the memo is unchanged). */
int af_memo_put(af_memo *m, const af_case *c, int verdict, const char *text);

/* Answers stored. */
size_t af_memo_count(const af_memo *m);

#endif
