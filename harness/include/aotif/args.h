/* aotif/args.h — strict parsing of numeric flag values, shared by the tools' mains.
 * Each returns 0 and sets *out, or -1 (leaving *out alone) when the whole string is not
 * a valid value; the caller prints the one-line message and exits 2. */
#ifndef AOTIF_ARGS_H
#define AOTIF_ARGS_H

#include <stdint.h>

/* A decimal int64, nothing after it. */
int af_parse_i64(const char *s, int64_t *out);
/* Seconds: a finite number > 0 and <= 1e9. */
int af_parse_seconds(const char *s, double *out);
/* A finite number >= 0 (a tolerance): not NaN, not inf, not an overflow like 1e999. */
int af_parse_nonneg(const char *s, double *out);
/* A byte count > 0, with an optional K, M or G suffix (powers of 1024). */
int af_parse_bytes(const char *s, int64_t *out);
/* --mem-limit: a byte count as af_parse_bytes, or "none" (-1: no limit). */
int af_parse_mem_limit(const char *s, int64_t *out);

#endif
