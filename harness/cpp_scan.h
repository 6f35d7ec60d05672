/* cpp_scan.h — private to the harness: reading generated C++ text (the AOTInductor
 * wrapper .cpp) without a compiler. A lexer just good enough to skip literals and comments
 * and match brackets, and a parser of the linear integer expressions torch prints, over
 * exact rationals.
 *
 * Every function reads the half-open range [p, end) of text the caller owns and returns
 * pointers into it (or NULL); nothing here allocates. */
#ifndef AF_CPP_SCAN_H
#define AF_CPP_SCAN_H

#include <ctype.h>
#include <stdint.h>

#include "aotif/spec.h"

static inline int af_is_ident_start(int c)
{
    return isalpha(c) || c == '_';
}

static inline int af_is_ident_char(int c)
{
    return isalnum(c) || c == '_';
}

/* Whether the NUL-terminated s is a C identifier. */
static inline int af_is_identifier(const char *s)
{
    if (!af_is_ident_start((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!af_is_ident_char((unsigned char)*s))
            return 0;
    return 1;
}

/* First occurrence of needle in [p, end), or NULL. */
const char *af_cpp_find(const char *p, const char *end, const char *needle);
/* Skip a C++ string or char literal or a comment starting at p; returns p if none. */
const char *af_cpp_skip_lexical(const char *p, const char *end);
/* p points at open (one of '{', '(', '['); returns the matching closer or NULL. */
const char *af_cpp_match_bracket(const char *p, const char *end);
/* First non-space at or after p (end if none). */
const char *af_cpp_skip_ws(const char *p, const char *end);
/* Signed decimal with an optional C integer suffix (L, LL, U), after optional spaces; on
 * success *pp moves past it. 0 ok, -1 no number, -2 past the int64 range. */
int af_cpp_scan_i64(const char **pp, const char *end, int64_t *out);

/* Exact rationals for the linear forms torch prints (`(1.0/2.0)*x`, `1L + 2L*s77`).
 * Numerators and denominators stay within AF_INT_LIMIT or the operation fails. */
typedef struct af_rat {
    int64_t n, d; /* d > 0, gcd(n, d) == 1 */
} af_rat;

/* *o = x / y; -1 when y is 0 or the result leaves the limits. */
int af_rat_div(af_rat x, af_rat y, af_rat *o);

#define AF_LIN_VAR_MAX 96

/* c1 * var + c0, var empty when constant. is_float: the C++ expression has double type.
 * A var is an identifier, or one indexed by a constant: "arg0_1_size[1]". */
typedef struct af_lin {
    char var[AF_LIN_VAR_MAX];
    af_rat c1, c0;
    int is_float;
} af_lin;

/* A local the expressions may name, with its value as a linear form. */
typedef struct af_lin_local {
    char name[AF_NAME_MAX];
    af_lin value;
} af_lin_local;

/* Parse the whole of [p, end) as a linear expression: + - * / and parentheses over integer
 * and integral double literals and variables. Identifiers found among `locals` (the latest
 * of a name wins) stand for their values; locals may be NULL. 0 ok, -1 when the text is
 * anything else (a call, a cast, a product of variables, an inexact integer division). */
int af_lin_parse(const char *p, const char *end, const af_lin_local *locals, int n_locals,
                 af_lin *out);

#endif
