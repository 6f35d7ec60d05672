/* aotif/strbuf.h — a growing string, for the texts the tools write (report.md, repro scripts,
 * SVG, the Where section): append, and take the result once.
 *
 * Ownership: the buffer owns b->s until af_sb_take hands it to the caller (who frees it). A
 * failed allocation sets b->oom; every later append is a no-op and af_sb_take returns NULL. */
#ifndef AOTIF_STRBUF_H
#define AOTIF_STRBUF_H

#include <stddef.h>

#include "aotif/error.h" /* AF_PRINTF */

typedef struct af_sbuf {
    char *s;         /* NUL-terminated once anything is appended */
    size_t len, cap; /* bytes used (without the NUL), bytes allocated */
    int oom;         /* an allocation failed */
} af_sbuf;

void af_sb_addn(af_sbuf *b, const char *s, size_t n);
void af_sb_puts(af_sbuf *b, const char *s);
/* printf-style, any length */
void af_sb_add(af_sbuf *b, const char *fmt, ...) AF_PRINTF(2, 3);
/* A Markdown fenced block: text as is, between backtick fences longer than any backtick run in
 * it (at least three), `lang` after the opening one; a final newline added when missing. */
void af_sb_fence(af_sbuf *b, const char *lang, const char *text);
/* The finished string ("" when nothing was appended; caller frees), or NULL after an
 * allocation failure (the buffer is freed either way). */
char *af_sb_take(af_sbuf *b);

#endif
