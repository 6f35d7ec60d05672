/* strbuf.c — a growing string (strbuf.h): doubling capacity, a sticky out-of-memory flag so
 * that writers append without checking each call and learn of a failure once, at the end. */
#include "aotif/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void af_sb_addn(af_sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void af_sb_puts(af_sbuf *b, const char *s)
{
    af_sb_addn(b, s, strlen(s));
}

void af_sb_add(af_sbuf *b, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        af_sb_addn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    af_sb_addn(b, big, (size_t)n);
    free(big);
}

void af_sb_fence(af_sbuf *b, const char *lang, const char *text)
{
    size_t run = 0, best = 0;
    for (const char *p = text; p && *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    char fence[64];
    size_t n = best < 3 ? 3 : best + 1;
    if (n >= sizeof fence)
        n = sizeof fence - 1;
    memset(fence, '`', n);
    fence[n] = '\0';
    af_sb_add(b, "%s%s\n", fence, lang);
    af_sb_puts(b, text ? text : "");
    if (text && *text && text[strlen(text) - 1] != '\n')
        af_sb_puts(b, "\n");
    af_sb_add(b, "%s\n", fence);
}

char *af_sb_take(af_sbuf *b)
{
    char *s = b->s;
    if (b->oom || !s) {
        free(s);
        s = b->oom ? NULL : strdup("");
    }
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}
