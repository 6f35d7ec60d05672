/* quote.h — making foreign text safe for the scripts and the report aoti-minimize writes
 * (private to minimize/; repro_py.c, repro_sh.c, report.c and recheck.c use it).
 *
 * Names and paths come from a package, a spec or a file system we do not control. What
 * lands in code is quoted for that language: af_py_quote (a Python str literal, or
 * os.fsdecode of a bytes literal for non-ASCII) and af_sh_quote (one shell word). What
 * lands in a comment, a docstring or prose is reduced to printable ASCII by the af_text_*
 * functions, each of which also replaces the characters that would end its context (a
 * newline in a name would otherwise end a comment and start code).
 *
 * Ownership: af_py_quote and af_sh_quote return malloc'ed strings the caller frees (NULL on
 * OOM). The af_text_* functions write into the caller's buffer and return it (or "" when
 * len is 0); `s` may be NULL (read as ""). */
#ifndef AOTIF_MIN_QUOTE_H
#define AOTIF_MIN_QUOTE_H

#include <stddef.h>

#include "aotif/strbuf.h"

/* Quote s as a Python expression giving the same str (or os.fsdecode of the same bytes). */
char *af_py_quote(const char *s);
/* Quote s as one shell word: single quotes, with ' as '\''. */
char *af_sh_quote(const char *s);

/* Append the quoted form of s (NULL: "") to b; an allocation failure sets b->oom. */
void af_sb_py_quoted(af_sbuf *b, const char *s);
void af_sb_sh_quoted(af_sbuf *b, const char *s);

/* For Python docstrings: printable ASCII, no backslash (escapes) and no quotes or backticks
 * (the closing triple quote), each replaced by '?'. */
const char *af_text_doc(const char *s, char *buf, size_t len);
/* For comments and code blocks: printable ASCII, every other byte '?'. */
const char *af_text_ascii(const char *s, char *buf, size_t len);
/* For Markdown prose and table cells: printable ASCII, backtick (code spans) as ', bar
 * (cells) as /. */
const char *af_text_md(const char *s, char *buf, size_t len);

#endif
