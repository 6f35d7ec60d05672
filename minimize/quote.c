/* quote.c — quoting for Python and the shell, and printable text for comments and prose;
 * see quote.h.
 *
 * Python: a str literal in single quotes when s is printable ASCII; otherwise
 * os.fsdecode(b'...') of the exact bytes, which is the str Python's os functions map back to
 * those bytes (a path with invalid UTF-8 still opens). Shell: one single-quoted word, the
 * only character needing care being ' itself. The af_text_* functions are one filter
 * (clean) with a different set of characters to replace for each context. */
#include "quote.h"

#include <stdlib.h>
#include <string.h>

static int printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

char *af_py_quote(const char *s)
{
    int ascii = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (!printable(*p))
            ascii = 0;
    af_sbuf b = {0};
    /* non-ASCII or control bytes: a bytes literal turned into the str that Python's os
     * functions map back to exactly these bytes */
    af_sb_puts(&b, ascii ? "'" : "os.fsdecode(b'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == '\'')
            af_sb_add(&b, "\\%c", *p);
        else if (printable(*p))
            af_sb_addn(&b, (const char *)p, 1);
        else
            af_sb_add(&b, "\\x%02x", *p);
    }
    af_sb_puts(&b, ascii ? "'" : "')");
    return af_sb_take(&b);
}

char *af_sh_quote(const char *s)
{
    af_sbuf b = {0};
    af_sb_puts(&b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            af_sb_puts(&b, "'\\''");
        else
            af_sb_addn(&b, p, 1);
    }
    af_sb_puts(&b, "'");
    return af_sb_take(&b);
}

/* Append q (a quoted string, taken) to b. */
static void sb_take_quoted(af_sbuf *b, char *q)
{
    if (!q) {
        b->oom = 1;
        return;
    }
    af_sb_puts(b, q);
    free(q);
}

void af_sb_py_quoted(af_sbuf *b, const char *s)
{
    sb_take_quoted(b, af_py_quote(s ? s : ""));
}

void af_sb_sh_quoted(af_sbuf *b, const char *s)
{
    sb_take_quoted(b, af_sh_quote(s ? s : ""));
}

/* Printable ASCII only: every other byte, and each byte of `bad`, becomes '?' (or the
 * replacement at the same position in `with`). */
static const char *clean(const char *s, char *buf, size_t len, const char *bad, const char *with)
{
    size_t o = 0;
    if (!len)
        return "";
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 1 < len; p++) {
        const char *hit = *p ? strchr(bad, *p) : NULL;
        buf[o++] = !printable(*p) ? '?' : hit ? with[hit - bad] : (char)*p;
    }
    buf[o] = '\0';
    return buf;
}

const char *af_text_doc(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "\\'\"`", "????");
}

const char *af_text_ascii(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "", "");
}

const char *af_text_md(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "`|", "'/");
}
