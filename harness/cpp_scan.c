/* cpp_scan.c — reading generated C++ (the AOTInductor wrapper .cpp) without a compiler.
 *
 * The lexer knows only what it must to move through the text safely: string and char
 * literals and comments are skipped whole (their brackets and keywords do not count),
 * brackets are matched by depth, integers are read with their C suffixes.
 *
 * The linear-expression parser reads the size arithmetic torch prints into run_impl:
 * `int64_t s68 = (1.0/2.0)*arg0_1_size_0;`, `{2L*s77, 16L}`. It is a recursive descent over
 * + - * / and parentheses into c1*var + c0 with exact rational coefficients (af_rat, kept
 * within AF_INT_LIMIT), so (1.0/2.0)*x is exactly x/2 and its inverse 2*s68 is exact too.
 * It refuses what is not linear in one variable: a product of variables, a sum of two, a
 * call, a cast, a member access, and C++ integer division unless it is exact on constants
 * (the C++ would truncate). Identifiers may stand for earlier locals, so a binding can go
 * through `int64_t arg0_1_size_0 = arg0_1_size[0];` and still name the input's dim. */
#include "cpp_scan.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- text scanning */

const char *af_cpp_find(const char *p, const char *end, const char *needle)
{
    if (!p || p >= end)
        return NULL;
    return memmem(p, (size_t)(end - p), needle, strlen(needle));
}

const char *af_cpp_skip_lexical(const char *p, const char *end)
{
    if (*p == '"' || *p == '\'') {
        char q = *p++;
        while (p < end && *p != q) {
            if (*p == '\\' && p + 1 < end)
                p++;
            p++;
        }
        return p < end ? p + 1 : end;
    }
    if (*p == '/' && p + 1 < end && p[1] == '/') {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl + 1 : end;
    }
    if (*p == '/' && p + 1 < end && p[1] == '*') {
        const char *c = af_cpp_find(p + 2, end, "*/");
        return c ? c + 2 : end;
    }
    return p;
}

const char *af_cpp_match_bracket(const char *p, const char *end)
{
    int depth = 0;
    while (p < end) {
        const char *s = af_cpp_skip_lexical(p, end);
        if (s != p) {
            p = s;
            continue;
        }
        if (*p == '{' || *p == '(' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ')' || *p == ']') {
            if (--depth == 0)
                return p;
        }
        p++;
    }
    return NULL;
}

const char *af_cpp_skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

int af_cpp_scan_i64(const char **pp, const char *end, int64_t *out)
{
    const char *p = af_cpp_skip_ws(*pp, end);
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    if (p >= end || !isdigit((unsigned char)*p))
        return -1;
    int64_t v = 0;
    while (p < end && isdigit((unsigned char)*p)) {
        /* INT64_MAX itself is what an unbounded dim's check says (callers clamp it to
         * AF_INT_LIMIT); past it the text is no int64 literal the compiler wrote */
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
            return -2;
        p++;
    }
    while (p < end && (*p == 'L' || *p == 'l' || *p == 'U' || *p == 'u'))
        p++;
    *pp = p;
    *out = neg ? -v : v;
    return 0;
}

/* ---------------------------------------------------------------- linear expressions */

static int rat_norm(__int128 n, __int128 d, af_rat *out)
{
    if (d == 0)
        return -1;
    if (d < 0) {
        n = -n;
        d = -d;
    }
    __int128 a = n < 0 ? -n : n, b = d;
    while (b) {
        __int128 t = a % b;
        a = b;
        b = t;
    }
    if (a == 0)
        a = 1;
    n /= a;
    d /= a;
    if (n > AF_INT_LIMIT || n < -AF_INT_LIMIT || d > AF_INT_LIMIT)
        return -1;
    out->n = (int64_t)n;
    out->d = (int64_t)d;
    return 0;
}

static int rat_add(af_rat x, af_rat y, af_rat *o)
{
    return rat_norm((__int128)x.n * y.d + (__int128)y.n * x.d, (__int128)x.d * y.d, o);
}
static int rat_mul(af_rat x, af_rat y, af_rat *o)
{
    return rat_norm((__int128)x.n * y.n, (__int128)x.d * y.d, o);
}
int af_rat_div(af_rat x, af_rat y, af_rat *o)
{
    return rat_norm((__int128)x.n * y.d, (__int128)x.d * y.n, o);
}

typedef struct lin_parser {
    const char *p, *end;
    const af_lin_local *locals; /* substituted for identifiers; NULL: identifiers are variables */
    int n_locals;
    int depth;
} lin_parser;

static int lin_expr(lin_parser *ps, af_lin *out);

static const af_lin_local *find_local(const af_lin_local *locals, int n, const char *name)
{
    for (int i = n - 1; i >= 0; i--) /* the latest definition wins */
        if (strcmp(locals[i].name, name) == 0)
            return &locals[i];
    return NULL;
}

/* A parenthesized expression; p is at its '('. */
static int lin_paren(lin_parser *ps, const char *p, af_lin *out)
{
    if (++ps->depth > 32)
        return -1;
    ps->p = p + 1;
    if (lin_expr(ps, out) < 0)
        return -1;
    ps->p = af_cpp_skip_ws(ps->p, ps->end);
    if (ps->p >= ps->end || *ps->p != ')')
        return -1;
    ps->p++;
    ps->depth--;
    return 0;
}

/* An integer literal with an optional C suffix, or an integral double ("2.0"). */
static int lin_number(lin_parser *ps, const char *p, af_lin *out)
{
    int64_t v = 0;
    while (p < ps->end && isdigit((unsigned char)*p)) {
        if (v > AF_INT_LIMIT)
            return -1;
        v = v * 10 + (*p++ - '0');
    }
    if (p < ps->end && *p == '.') { /* only integral doubles: "2.0" */
        out->is_float = 1;
        p++;
        while (p < ps->end && isdigit((unsigned char)*p))
            if (*p++ != '0')
                return -1;
    }
    while (p < ps->end && (*p == 'L' || *p == 'l' || *p == 'U' || *p == 'u'))
        p++;
    if (p < ps->end && af_is_ident_char((unsigned char)*p))
        return -1;
    out->c0 = (af_rat){v, 1};
    ps->p = p;
    return 0;
}

/* A constant index after the variable name[0..n): "[K]" at q is appended to name and *pp
 * moves past it. */
static int lin_index(lin_parser *ps, const char *q, const char **pp, char *name, size_t n,
                     size_t cap)
{
    int64_t idx;
    q++;
    if (af_cpp_scan_i64(&q, ps->end, &idx) < 0 || idx < 0 || idx >= AF_MAX_RANK)
        return -1;
    q = af_cpp_skip_ws(q, ps->end);
    if (q >= ps->end || *q != ']')
        return -1;
    *pp = q + 1;
    if (n + 8 >= cap)
        return -1;
    snprintf(name + n, cap - n, "[%d]", (int)idx);
    return 0;
}

/* An identifier: a local's value when the parser has one of that name, else a variable
 * (an indexed one, "arg0_1_size[1]", is always a variable). */
static int lin_variable(lin_parser *ps, const char *p, af_lin *out)
{
    char name[AF_LIN_VAR_MAX];
    size_t n = 0;
    while (p < ps->end && af_is_ident_char((unsigned char)*p)) {
        if (n + 1 >= sizeof name)
            return -1;
        name[n++] = *p++;
    }
    name[n] = '\0';
    const char *q = af_cpp_skip_ws(p, ps->end);
    if (q < ps->end && (*q == '(' || *q == '<' || *q == ':' || *q == '.'))
        return -1; /* a call, a cast, a member: not linear arithmetic we read */
    if (q < ps->end && *q == '[') {
        if (lin_index(ps, q, &p, name, n, sizeof name) < 0)
            return -1;
    } else if (ps->locals) {
        const af_lin_local *l = find_local(ps->locals, ps->n_locals, name);
        if (l) {
            *out = l->value;
            ps->p = p;
            return 0;
        }
    }
    strcpy(out->var, name);
    out->c1 = (af_rat){1, 1};
    ps->p = p;
    return 0;
}

static int lin_primary(lin_parser *ps, af_lin *out)
{
    const char *p = ps->p = af_cpp_skip_ws(ps->p, ps->end);
    memset(out, 0, sizeof *out);
    out->c1 = (af_rat){0, 1};
    out->c0 = (af_rat){0, 1};
    if (p >= ps->end)
        return -1;
    if (*p == '(')
        return lin_paren(ps, p, out);
    if (isdigit((unsigned char)*p))
        return lin_number(ps, p, out);
    if (af_is_ident_start((unsigned char)*p))
        return lin_variable(ps, p, out);
    return -1;
}

static int lin_unary(lin_parser *ps, af_lin *out)
{
    ps->p = af_cpp_skip_ws(ps->p, ps->end);
    if (ps->p < ps->end && (*ps->p == '-' || *ps->p == '+')) {
        int neg = *ps->p == '-';
        if (++ps->depth > 32)
            return -1;
        ps->p++;
        if (lin_unary(ps, out) < 0)
            return -1;
        ps->depth--;
        if (neg) {
            out->c1.n = -out->c1.n;
            out->c0.n = -out->c0.n;
        }
        return 0;
    }
    return lin_primary(ps, out);
}

static int lin_term(lin_parser *ps, af_lin *out)
{
    if (lin_unary(ps, out) < 0)
        return -1;
    for (;;) {
        ps->p = af_cpp_skip_ws(ps->p, ps->end);
        if (ps->p >= ps->end || (*ps->p != '*' && *ps->p != '/'))
            return 0;
        char op = *ps->p++;
        af_lin r;
        if (lin_unary(ps, &r) < 0)
            return -1;
        int fl = out->is_float || r.is_float;
        if (op == '*') {
            if (out->var[0] && r.var[0])
                return -1;                         /* product of variables: not linear */
            const af_lin *k = r.var[0] ? out : &r; /* the constant factor */
            const af_lin *v = r.var[0] ? &r : out; /* the other one */
            af_lin t = {.is_float = fl};
            strcpy(t.var, v->var);
            if (rat_mul(v->c1, k->c0, &t.c1) < 0 || rat_mul(v->c0, k->c0, &t.c0) < 0)
                return -1;
            if (!t.var[0] || t.c1.n == 0) {
                t.var[0] = '\0';
                t.c1 = (af_rat){0, 1};
            }
            *out = t;
        } else {
            if (r.var[0] || r.c0.n == 0)
                return -1;
            /* C++ integer division truncates: read it only when exact on constants. */
            if (!fl && (out->var[0] || out->c0.d != 1 || r.c0.d != 1 || out->c0.n % r.c0.n))
                return -1;
            if (af_rat_div(out->c1, r.c0, &out->c1) < 0 || af_rat_div(out->c0, r.c0, &out->c0) < 0)
                return -1;
            out->is_float = fl;
        }
    }
}

static int lin_expr(lin_parser *ps, af_lin *out)
{
    if (lin_term(ps, out) < 0)
        return -1;
    for (;;) {
        ps->p = af_cpp_skip_ws(ps->p, ps->end);
        if (ps->p >= ps->end || (*ps->p != '+' && *ps->p != '-'))
            return 0;
        int neg = *ps->p++ == '-';
        af_lin r;
        if (lin_term(ps, &r) < 0)
            return -1;
        if (neg) {
            r.c1.n = -r.c1.n;
            r.c0.n = -r.c0.n;
        }
        if (out->var[0] && r.var[0] && strcmp(out->var, r.var) != 0)
            return -1; /* two variables */
        if (!out->var[0])
            strcpy(out->var, r.var);
        if (rat_add(out->c1, r.c1, &out->c1) < 0 || rat_add(out->c0, r.c0, &out->c0) < 0)
            return -1;
        if (out->c1.n == 0)
            out->var[0] = '\0';
        out->is_float |= r.is_float;
    }
}

int af_lin_parse(const char *p, const char *end, const af_lin_local *locals, int n_locals,
                 af_lin *out)
{
    lin_parser ps = {.p = p, .end = end, .locals = locals, .n_locals = n_locals};
    if (lin_expr(&ps, out) < 0)
        return -1;
    return af_cpp_skip_ws(ps.p, end) == end ? 0 : -1;
}
