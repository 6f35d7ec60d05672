/* encode.c — bytes <-> case; see encode.h for the layout and its guarantees.
 *
 * Ranges are handled in unsigned arithmetic so that even a range spanning all of int64
 * (max - min overflows a signed subtraction) decodes correctly: the width of the range is
 * (uint64)max - (uint64)min, and when that plus one wraps to 0 every offset is in range. */
#include "encode.h"

#include <string.h>

uint64_t af_enc_span(const af_symbol *s)
{
    return s->max > s->min ? (uint64_t)s->max - (uint64_t)s->min : 0;
}

int af_enc_sym_width(const af_symbol *s)
{
    uint64_t w = af_enc_span(s);
    int n = 1;
    while (n < 8 && (w >> (8 * n)) != 0)
        n++;
    return n;
}

size_t af_enc_size(const af_spec *spec)
{
    size_t n = 0;
    for (int i = 0; i < spec->n_syms; i++)
        n += (size_t)af_enc_sym_width(&spec->syms[i]);
    return n + 1 + 8;
}

int64_t af_enc_clamp(const af_symbol *s, int64_t v)
{
    if (s->max < s->min)
        return s->min;
    return v < s->min ? s->min : v > s->max ? s->max : v;
}

static void put_le(uint8_t *dst, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = (uint8_t)(v >> (8 * i));
}

size_t af_enc_encode(const af_spec *spec, const af_case *c, uint8_t *buf, size_t cap)
{
    uint8_t tmp[AF_ENC_MAX_BYTES];
    size_t n = 0;
    for (int i = 0; i < spec->n_syms; i++) {
        const af_symbol *s = &spec->syms[i];
        int w = af_enc_sym_width(s);
        uint64_t u = (uint64_t)af_enc_clamp(s, c->values[i]) - (uint64_t)s->min;
        put_le(tmp + n, u, w);
        n += (size_t)w;
    }
    tmp[n++] = (uint8_t)((unsigned)c->fill % (unsigned)af_enc_fills(spec));
    put_le(tmp + n, c->seed, 8);
    n += 8;
    if (n > cap)
        n = cap;
    memcpy(buf, tmp, n);
    return n;
}

int af_enc_fills(const af_spec *spec)
{
    return spec->beyond_contract ? AF_FILL_COUNT : AF_FILL_WIDE;
}

void af_enc_decode(const af_spec *spec, const uint8_t *data, size_t size, af_case *out)
{
    size_t pos = 0;
    memset(out, 0, sizeof *out);
    out->n_syms = spec->n_syms;
    for (int i = 0; i < spec->n_syms; i++) {
        const af_symbol *s = &spec->syms[i];
        int w = af_enc_sym_width(s);
        uint64_t u = 0;
        for (int b = 0; b < w; b++, pos++)
            if (pos < size)
                u |= (uint64_t)data[pos] << (8 * b);
        uint64_t range = af_enc_span(s) + 1; /* 0 when the range is all of uint64 */
        if (range != 0)
            u %= range;
        out->values[i] = (int64_t)((uint64_t)s->min + u);
    }
    /* The wide fill exists only beyond the contract; inside it, the same bytes mean random. */
    out->fill = pos < size ? (af_fill)(data[pos] % af_enc_fills(spec)) : AF_FILL_RANDOM;
    pos++;
    uint64_t seed = 0;
    for (int b = 0; b < 8; b++, pos++)
        if (pos < size)
            seed |= (uint64_t)data[pos] << (8 * b);
    out->seed = seed;
}
