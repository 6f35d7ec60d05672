/* The per-element work of every run that does not need torch: the constant fills of
 * af_runtime_fill (zeros and ones, written as whole blocks) and the output summary's
 * counts (af_tensors_count_values: NaNs, infinities and the sum of the finite values, by
 * the values' bits). Each is checked against values worked out here one element at a
 * time, on every dtype, on lengths that end inside and outside the unrolled part, and at
 * offsets, with the bytes around the range left as they were. */
#include "af_test.h"
#include "aotif/case.h"
#include "aotif/dtype.h"
#include "aotif/runtime.h"

#include <math.h>

/* the bytes of value 1 in dt, as the element-by-element fill writes it (the bit pattern,
 * little-endian: float32 1.0f, float16 0x3c00, bfloat16 0x3f80, float64 1.0, the integers
 * and bool 1) */
static void one_bytes(af_dtype dt, unsigned char out[8])
{
    static const uint64_t one[AF_DT_COUNT] = {[AF_DT_FLOAT32] = 0x3f800000u,
                                              [AF_DT_FLOAT16] = 0x3c00u,
                                              [AF_DT_BFLOAT16] = 0x3f80u,
                                              [AF_DT_FLOAT64] = 0x3ff0000000000000ull,
                                              [AF_DT_INT64] = 1,
                                              [AF_DT_INT32] = 1,
                                              [AF_DT_INT16] = 1,
                                              [AF_DT_INT8] = 1,
                                              [AF_DT_UINT8] = 1,
                                              [AF_DT_BOOL] = 1};
    uint64_t v = one[dt];
    for (int k = 0; k < 8; k++, v >>= 8)
        out[k] = (unsigned char)(v & 0xff);
}

static void check_constant_fills(void)
{
    static const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 1000, 4097};
    static const int64_t froms[] = {0, 1, 3, 1024};
    static unsigned char buf[(1024 + 4097 + 16) * 8];
    int checked = 0;
    for (int dt = 0; dt < AF_DT_COUNT; dt++) {
        size_t esz = af_dtype_size((af_dtype)dt);
        unsigned char one[8];
        CHECK(esz > 0);
        one_bytes((af_dtype)dt, one);
        for (int fill = AF_FILL_ZEROS; fill <= AF_FILL_ONES; fill++)
            for (size_t a = 0; a < sizeof froms / sizeof froms[0]; a++)
                for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++) {
                    int64_t from = froms[a], to = from + lens[b];
                    af_input in;
                    memset(&in, 0, sizeof in);
                    in.dtype = (af_dtype)dt;
                    in.int_lo = -5, in.int_hi = 5;
                    af_case c;
                    memset(&c, 0, sizeof c);
                    c.fill = (af_fill)fill;
                    c.seed = 12345;
                    memset(buf, 0xa5, sizeof buf);
                    af_runtime_fill(buf, (af_dtype)dt, from, to, &in, 0, &c);
                    int bad = 0;
                    for (size_t k = 0; k < (size_t)from * esz; k++)
                        bad |= buf[k] != 0xa5;
                    for (int64_t j = from; j < to; j++)
                        for (size_t k = 0; k < esz; k++)
                            bad |= buf[(size_t)j * esz + k] != (fill == AF_FILL_ONES ? one[k] : 0);
                    for (size_t k = (size_t)to * esz; k < (size_t)to * esz + 16; k++)
                        bad |= buf[k] != 0xa5;
                    if (bad)
                        fprintf(stderr, "%s fill=%s [%lld, %lld): wrong bytes\n",
                                af_dtype_name((af_dtype)dt), af_fill_name((af_fill)fill),
                                (long long)from, (long long)to);
                    CHECK(!bad);
                    checked++;
                }
    }
    /* an empty range writes nothing */
    af_input in;
    memset(&in, 0, sizeof in);
    af_case c;
    memset(&c, 0, sizeof c);
    c.fill = AF_FILL_ONES;
    memset(buf, 0xa5, 64);
    af_runtime_fill(buf, AF_DT_FLOAT32, 4, 4, &in, 0, &c);
    for (int k = 0; k < 64; k++)
        CHECK(buf[k] == 0xa5);
    printf("constant fills: %d dtype/fill/offset/length combinations\n", checked);
}

/* the 16-bit floats as doubles, for the expected counts */
static double half_value(uint16_t h, int bf)
{
    if (bf) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return sign ? -v : v;
}

/* value j of a test array: mostly ordinary numbers, with NaNs (both signs, several
 * payloads), both infinities, zeros of both signs and subnormals at scattered places */
static double pick(int64_t j, int *kind)
{
    *kind = 0;
    switch ((j * 7 + 3) % 23) {
    case 0:
        *kind = 1;
        return NAN;
    case 5:
        *kind = 1;
        return -NAN;
    case 9:
        *kind = 2;
        return INFINITY;
    case 13:
        *kind = 2;
        return -INFINITY;
    case 17:
        return -0.0;
    default:
        return ((double)((j * 40503) % 257) - 128) / 64;
    }
}

static void check_counts(void)
{
    static const int64_t lens[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 23, 24, 25, 1001};
    static float f32[1001];
    static double f64[1001];
    static uint16_t f16[1001], b16[1001];
    int checked = 0;
    for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++) {
        int64_t n = lens[b], want_nan = 0, want_inf = 0;
        double want_sum = 0, want_sumb = 0;
        for (int64_t j = 0; j < n; j++) {
            int kind;
            double v = pick(j, &kind);
            f32[j] = (float)v;
            f64[j] = v;
            want_nan += kind == 1, want_inf += kind == 2;
            if (kind == 0)
                want_sum += v;
            /* 16-bit: the same kinds; ordinary values k/64 are exact in both */
            uint32_t u;
            float fv = (float)v;
            memcpy(&u, &fv, 4);
            b16[j] = (uint16_t)(u >> 16);
            if (kind == 1)
                f16[j] = (uint16_t)(0x7c00 | (j % 2 ? 0x8000 : 0) | (1 + j % 0x3ff));
            else if (kind == 2)
                f16[j] = v > 0 ? 0x7c00 : 0xfc00;
            else if (v == 0)
                f16[j] = signbit(v) ? 0x8000 : 0;
            else {
                int e;
                double m = frexp(fabs(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
                f16[j] = (uint16_t)((v < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) |
                                    ((uint16_t)ldexp(m * 2 - 1, 10) & 0x3ff));
            }
            if (kind == 0)
                want_sumb += half_value(b16[j], 1);
        }
        if (n > 3) /* a subnormal float16 (3 * 2^-24) in place of an ordinary value */
            f16[1] = 0x0003;
        struct {
            const void *data;
            af_dtype dt;
            double sum;
        } runs[] = {{f32, AF_DT_FLOAT32, want_sum},
                    {f64, AF_DT_FLOAT64, want_sum},
                    {f16, AF_DT_FLOAT16, 0}, /* below, after the subnormal */
                    {b16, AF_DT_BFLOAT16, want_sumb}};
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            af_output_summary o;
            memset(&o, 0, sizeof o);
            af_tensors_count_values(runs[r].data, runs[r].dt, n, &o);
            if (runs[r].dt == AF_DT_FLOAT16) /* the expected sum, element by element */
                for (int64_t j = 0; j < n; j++) {
                    double v = half_value(f16[j], 0);
                    if (!isnan(v) && !isinf(v))
                        runs[r].sum += v;
                }
            CHECK_EQ_INT(o.n_nan, want_nan);
            CHECK_EQ_INT(o.n_inf, want_inf);
            double tol = 1e-9 * (1 + fabs(runs[r].sum));
            if (!(fabs(o.sum - runs[r].sum) <= tol))
                fprintf(stderr, "%s n=%lld: sum %.17g, want %.17g\n", af_dtype_name(runs[r].dt),
                        (long long)n, o.sum, runs[r].sum);
            CHECK(fabs(o.sum - runs[r].sum) <= tol);
            checked++;
        }
    }
    /* a summary adds to what it holds; other dtypes add nothing */
    af_output_summary o;
    memset(&o, 0, sizeof o);
    o.n_nan = 2, o.n_inf = 3, o.sum = 1.5;
    float two[2] = {NAN, 2.0f};
    af_tensors_count_values(two, AF_DT_FLOAT32, 2, &o);
    CHECK_EQ_INT(o.n_nan, 3);
    CHECK_EQ_INT(o.n_inf, 3);
    CHECK(o.sum == 3.5);
    int32_t ints[2] = {0x7f800001, 7};
    af_tensors_count_values(ints, AF_DT_INT32, 2, &o);
    CHECK_EQ_INT(o.n_nan, 3);
    CHECK(o.sum == 3.5);
    printf("value counts: %d dtype/length combinations\n", checked);
}

int main(void)
{
    check_constant_fills();
    check_counts();
    TEST_MAIN_END();
}
