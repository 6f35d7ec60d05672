/* test_fuzz_encode.c — any bytes decode to a case inside the declared ranges; in-range
 * cases survive encode + decode. Compiles fuzz/encode.c itself so that it builds in every
 * preset (the fuzz/ directory is only added with AF_FUZZER=ON). */
#include "../../fuzz/encode.c"

#include "af_test.h"

static uint64_t rng = 0x12345678abcdefULL;
static uint64_t next(void) /* xorshift64 */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void add_sym(af_spec *s, const char *name, int64_t min, int64_t max, int64_t cmin)
{
    af_symbol *y = &s->syms[s->n_syms++];
    snprintf(y->name, AF_NAME_MAX, "%s", name);
    y->min = min;
    y->max = max;
    y->compiled_min = cmin;
    y->compiled_max = max;
}

int main(void)
{
    af_spec spec;
    memset(&spec, 0, sizeof spec);
    add_sym(&spec, "n", 0, 128, 2);                 /* 1 byte */
    add_sym(&spec, "seq", 1, 4096, 2);              /* 2 bytes */
    add_sym(&spec, "big", 0, (int64_t)1 << 53, 2);  /* 7 bytes */
    add_sym(&spec, "neg", -5, 5, -5);               /* 1 byte */
    add_sym(&spec, "fixed", 7, 7, 7);               /* 1 byte, one value */
    add_sym(&spec, "all", INT64_MIN, INT64_MAX, 0); /* 8 bytes, whole int64 */
    add_sym(&spec, "b256", 0, 255, 0);              /* exactly 1 byte */
    add_sym(&spec, "b257", 0, 256, 0);              /* 2 bytes */

    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[0]), 1);
    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[1]), 2);
    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[2]), 7);
    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[5]), 8);
    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[6]), 1);
    CHECK_EQ_INT(af_enc_sym_width(&spec.syms[7]), 2);
    CHECK_EQ_INT(af_enc_size(&spec), 1 + 2 + 7 + 1 + 1 + 8 + 1 + 2 + 1 + 8);

    /* 10^5 random strings of random length (0 to 2x the encoding) stay in range. */
    uint8_t buf[128];
    af_case c, d;
    int out_of_range = 0, fills[AF_FILL_COUNT] = {0};
    size_t full = af_enc_size(&spec);
    for (int it = 0; it < 100000; it++) {
        size_t len = next() % (2 * full + 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)next();
        af_enc_decode(&spec, buf, len, &c);
        if (c.n_syms != spec.n_syms || (unsigned)c.fill >= AF_FILL_COUNT)
            out_of_range++;
        else
            fills[c.fill]++;
        for (int k = 0; k < spec.n_syms; k++)
            if (c.values[k] < spec.syms[k].min || c.values[k] > spec.syms[k].max)
                out_of_range++;
    }
    CHECK_EQ_INT(out_of_range, 0);
    /* Inside the contract every fill but wide appears; beyond it, wide too. */
    for (int f = 0; f < AF_FILL_COUNT; f++)
        CHECK(f == AF_FILL_WIDE ? fills[f] == 0 : fills[f] > 0);
    {
        af_spec wide = spec;
        af_spec_widen_beyond_contract(&wide);
        int n_wide = 0;
        for (int it = 0; it < 2000; it++) {
            for (size_t i = 0; i < full; i++)
                buf[i] = (uint8_t)next();
            af_enc_decode(&wide, buf, full, &c);
            n_wide += c.fill == AF_FILL_WIDE;
            for (int k = 0; k < wide.n_syms; k++)
                if (c.values[k] < 0 || c.values[k] > wide.syms[k].max)
                    out_of_range++;
        }
        CHECK(n_wide > 0);
        CHECK_EQ_INT(out_of_range, 0);
    }

    /* The empty input is all-min, random fill, seed 0. */
    af_enc_decode(&spec, NULL, 0, &c);
    for (int k = 0; k < spec.n_syms; k++)
        CHECK_EQ_INT(c.values[k], spec.syms[k].min);
    CHECK_EQ_INT(c.fill, AF_FILL_RANDOM);
    CHECK(c.seed == 0);

    /* Round trip of in-range cases, including the extremes. */
    int mismatches = 0;
    for (int it = 0; it < 100000; it++) {
        memset(&c, 0, sizeof c);
        c.n_syms = spec.n_syms;
        for (int k = 0; k < spec.n_syms; k++) {
            const af_symbol *s = &spec.syms[k];
            uint64_t w = (uint64_t)s->max - (uint64_t)s->min;
            uint64_t r = next();
            int pick = (int)(next() % 4);
            uint64_t off = w == UINT64_MAX ? r : r % (w + 1);
            c.values[k] = pick == 0   ? s->min
                          : pick == 1 ? s->max
                                      : (int64_t)((uint64_t)s->min + off);
        }
        c.fill = (af_fill)(next() % (uint64_t)af_enc_fills(&spec));
        c.seed = next();
        size_t n = af_enc_encode(&spec, &c, buf, sizeof buf);
        if (n != full)
            mismatches++;
        af_enc_decode(&spec, buf, n, &d);
        if (memcmp(c.values, d.values, sizeof c.values) != 0 || c.fill != d.fill ||
            c.seed != d.seed)
            mismatches++;
    }
    CHECK_EQ_INT(mismatches, 0);

    /* A cut encoding: what fits is kept, the rest decodes as zeros (min). */
    memset(&c, 0, sizeof c);
    c.n_syms = spec.n_syms;
    for (int k = 0; k < spec.n_syms; k++)
        c.values[k] = spec.syms[k].max;
    c.seed = 99;
    CHECK_EQ_INT(af_enc_encode(&spec, &c, buf, 3), 3);
    af_enc_decode(&spec, buf, 3, &d);
    CHECK_EQ_INT(d.values[0], 128);
    CHECK_EQ_INT(d.values[1], 4096);
    CHECK_EQ_INT(d.values[2], 0);

    /* Out-of-range values are clamped on encode. */
    c.values[0] = -3;
    c.values[1] = 1 << 20;
    af_enc_encode(&spec, &c, buf, sizeof buf);
    af_enc_decode(&spec, buf, full, &d);
    CHECK_EQ_INT(d.values[0], 0);
    CHECK_EQ_INT(d.values[1], 4096);

    /* No symbols at all: still fill and seed. */
    af_spec empty;
    memset(&empty, 0, sizeof empty);
    CHECK_EQ_INT(af_enc_size(&empty), 9);
    memset(&c, 0, sizeof c);
    c.fill = AF_FILL_ZEROS;
    c.seed = 123456789;
    CHECK_EQ_INT(af_enc_encode(&empty, &c, buf, sizeof buf), 9);
    af_enc_decode(&empty, buf, 9, &d);
    CHECK_EQ_INT(d.fill, AF_FILL_ZEROS);
    CHECK(d.seed == 123456789);
    TEST_MAIN_END();
}
