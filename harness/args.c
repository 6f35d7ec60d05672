/* args.c — strict numeric flag values; see aotif/args.h. */
#include "aotif/args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int af_parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int af_parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

int af_parse_nonneg(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* !(v >= 0) also refuses NaN; isfinite refuses "inf" and an overflow like "1e999" */
    if (end == s || *end || !(v >= 0) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int af_parse_bytes(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v <= 0)
        return -1;
    int shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10, end++;
        break;
    case 'm':
    case 'M':
        shift = 20, end++;
        break;
    case 'g':
    case 'G':
        shift = 30, end++;
        break;
    default:
        return -1;
    }
    if (*end || v > (INT64_MAX >> shift))
        return -1;
    *out = (int64_t)v << shift;
    return 0;
}

int af_parse_mem_limit(const char *s, int64_t *out)
{
    if (!strcmp(s, "none")) {
        *out = -1;
        return 0;
    }
    return af_parse_bytes(s, out);
}
