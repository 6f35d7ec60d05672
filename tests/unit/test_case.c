/* test_case.c — cases over a spec: initial values, dims, range checks, byte counts,
 * NAME=VALUE assignments, rendering, and the fill function against values computed
 * independently with torch (docs/fill.md). */
#include "af_test.h"

#include <stdint.h>

#include "aotif/case.h"
#include "aotif/spec.h"

/* x: float32 (n, 16); y: float16 (2*n+1, s5); idx: int64 (n-1,) in [-3, 5]; flag: bool (). */
static const char *spec_json =
    "{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":["
    "{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[\"s77\",16]},"
    "{\"name\":\"y\",\"dtype\":\"float16\",\"shape\":[\"2*s77+1\",\"s5\"]},"
    "{\"name\":\"idx\",\"dtype\":\"int64\",\"shape\":[\"s77-1\"],\"int_range\":[-3,5]},"
    "{\"name\":\"flag\",\"dtype\":\"bool\",\"shape\":[]}],"
    "\"symbols\":[{\"name\":\"s77\",\"dim\":\"n\",\"min\":0,\"max\":128,\"compiled_min\":2},"
    "{\"name\":\"s5\",\"min\":1,\"max\":9007199254740992}]}";

static af_spec load_spec(void)
{
    af_spec s;
    af_error err = {0};
    if (af_spec_from_json(spec_json, AF_SPEC_FILE, &s, &err) != 0) {
        fprintf(stderr, "spec: %s\n", err.message);
        exit(1);
    }
    return s;
}

static void test_fill_names(void)
{
    CHECK_STR(af_fill_name(AF_FILL_RANDOM), "random");
    CHECK_STR(af_fill_name(AF_FILL_ZEROS), "zeros");
    CHECK_STR(af_fill_name(AF_FILL_ONES), "ones");
    CHECK_STR(af_fill_name(AF_FILL_COUNT), "?");
    CHECK_EQ_INT(af_fill_from_name("random"), AF_FILL_RANDOM);
    CHECK_EQ_INT(af_fill_from_name("zeros"), AF_FILL_ZEROS);
    CHECK_EQ_INT(af_fill_from_name("ones"), AF_FILL_ONES);
    CHECK_EQ_INT(af_fill_from_name("Ones"), -1);
    CHECK_EQ_INT(af_fill_from_name(""), -1);
    CHECK_EQ_INT(af_fill_from_name(NULL), -1);
}

static void test_init_and_dims(void)
{
    af_spec s = load_spec();
    af_case c;
    memset(&c, 0x5a, sizeof c);
    af_case_init(&c, &s);
    CHECK_EQ_INT(c.n_syms, 2);
    CHECK_EQ_INT(c.values[0], 2); /* compiled_min, not the declared 0 */
    CHECK_EQ_INT(c.values[1], 1);
    CHECK_EQ_INT(c.values[2], 0);
    CHECK_EQ_INT(c.fill, AF_FILL_RANDOM);
    CHECK_EQ_INT(c.seed, 0);

    c.values[0] = 5;
    c.values[1] = 3;
    CHECK_EQ_INT(af_case_dim(&s, &c, 0, 0), 5);
    CHECK_EQ_INT(af_case_dim(&s, &c, 0, 1), 16);
    CHECK_EQ_INT(af_case_dim(&s, &c, 1, 0), 11);
    CHECK_EQ_INT(af_case_dim(&s, &c, 1, 1), 3);
    CHECK_EQ_INT(af_case_dim(&s, &c, 2, 0), 4);
    c.values[0] = 0;
    CHECK_EQ_INT(af_case_dim(&s, &c, 2, 0), -1); /* a bad case shows as negative */
    c.values[0] = INT64_MAX;
    CHECK_EQ_INT(af_case_dim(&s, &c, 1, 0), INT64_MAX); /* saturated, not wrapped */

    CHECK(!af_case_below_compiled(&s, &c));
    c.values[0] = 1;
    CHECK(af_case_below_compiled(&s, &c));
    c.values[0] = 2;
    CHECK(!af_case_below_compiled(&s, &c));
}

static void expect_check_error(const af_spec *s, const af_case *c, const char *msg, int line)
{
    af_error err = {0};
    int rc = af_case_check(s, c, &err);
    if (rc != -1 || err.code != AF_E_USAGE || strcmp(err.message, msg) != 0) {
        fprintf(stderr, "line %d: expected AF_E_USAGE \"%s\"\n   got rc %d code %d \"%s\"\n", line,
                msg, rc, (int)err.code, err.message);
        af_test_failures++;
    }
}

static void test_check(void)
{
    af_spec s = load_spec();
    af_case c;
    af_error err = {0};
    af_case_init(&c, &s);
    CHECK_EQ_INT(af_case_check(&s, &c, &err), 0);
    c.values[0] = 1; /* below compiled, inside declared: a legal case */
    CHECK_EQ_INT(af_case_check(&s, &c, &err), 0);
    c.values[0] = 128;
    CHECK_EQ_INT(af_case_check(&s, &c, &err), 0);
    c.values[0] = 129;
    expect_check_error(&s, &c,
                       "n=129 is outside its declared range [0, 128] (spec file); "
                       "--beyond-contract explores there",
                       __LINE__);
    c.values[0] = 4;
    c.values[1] = 0;
    expect_check_error(&s, &c,
                       "s5=0 is outside its declared range [1, 9007199254740992] (spec file); "
                       "--beyond-contract explores there",
                       __LINE__);
    c.values[1] = 1;
    c.values[0] = 0; /* declared, but idx would be (n-1,) = (-1,) */
    expect_check_error(&s, &c, "input idx: dim 0 would be -1 (negative)", __LINE__);
    c.values[0] = 2;
    c.n_syms = 1;
    expect_check_error(&s, &c, "case has 1 symbol values but the spec has 2 symbols", __LINE__);
}

static void test_input_bytes(void)
{
    af_spec s = load_spec();
    af_case c;
    af_case_init(&c, &s);
    c.values[0] = 5;
    c.values[1] = 3;
    /* x 5*16*4 + y 11*3*2 + idx 4*8 + flag 1 */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), 320 + 66 + 32 + 1);
    c.values[0] = 1; /* idx empty */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), 64 + 18 + 0 + 1);
    c.values[0] = 0; /* x empty, idx negative: counted as empty */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), 0 + 6 + 0 + 1);
    c.values[0] = 0;
    c.values[1] = AF_INT_LIMIT; /* y: (1, 2^53) float16 */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), 0 + 2 * AF_INT_LIMIT + 0 + 1);
    c.values[0] = 128; /* y: 257 * 2^53 * 2 bytes, still below 2^63 */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), 8192 + 514 * AF_INT_LIMIT + 127 * 8 + 1);
    c.values[0] = 1000; /* y: 2001 * 2^53 * 2 bytes overflows int64: saturated */
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), INT64_MAX);
    c.values[0] = INT64_MAX / 2; /* x alone overflows */
    c.values[1] = 1;
    CHECK_EQ_INT(af_case_input_bytes(&s, &c), INT64_MAX);

    /* An empty dim after overflowing ones still makes an empty tensor. */
    af_spec e;
    af_error err = {0};
    CHECK_EQ_INT(
        af_spec_from_json("{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":["
                          "{\"name\":\"z\",\"dtype\":\"float64\",\"shape\":[\"b\",\"b\",\"e\"]}],"
                          "\"symbols\":[{\"name\":\"b\",\"min\":0,\"max\":9007199254740992},"
                          "{\"name\":\"e\",\"min\":0,\"max\":4}]}",
                          AF_SPEC_FILE, &e, &err),
        0);
    af_case_init(&c, &e);
    c.values[0] = AF_INT_LIMIT;
    c.values[1] = 0;
    CHECK_EQ_INT(af_case_input_bytes(&e, &c), 0);
    c.values[1] = 1;
    CHECK_EQ_INT(af_case_input_bytes(&e, &c), INT64_MAX);
}

static void test_str(void)
{
    af_spec s = load_spec();
    af_case c;
    af_case_init(&c, &s);
    char buf[64];
    af_case_str(&s, &c, buf, sizeof buf);
    CHECK_STR(buf, "n=2 s5=1"); /* Dim name where known, else the symbol */
    c.values[0] = 0;
    c.values[1] = 123456;
    af_case_str(&s, &c, buf, sizeof buf);
    CHECK_STR(buf, "n=0 s5=123456");
    char small[6];
    af_case_str(&s, &c, small, sizeof small);
    CHECK_STR(small, "n=0 s");

    af_spec none;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_json("{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":[]}",
                                   AF_SPEC_FILE, &none, &err),
                 0);
    af_case_init(&c, &none);
    af_case_str(&none, &c, buf, sizeof buf);
    CHECK_STR(buf, "");
}

static void expect_assign_error(const af_spec *s, const char *text, const char *msg, int line)
{
    af_case c;
    af_case_init(&c, s);
    af_case before = c;
    af_error err = {0};
    int rc = af_case_assign(s, &c, text, &err);
    if (rc != -1 || err.code != AF_E_USAGE || strcmp(err.message, msg) != 0 ||
        memcmp(&c, &before, sizeof c) != 0) {
        fprintf(stderr, "line %d: '%s': expected AF_E_USAGE \"%s\"\n   got rc %d code %d \"%s\"\n",
                line, text ? text : "(null)", msg, rc, (int)err.code, err.message);
        af_test_failures++;
    }
}
#define EXPECT_ASSIGN_ERR(text, msg) expect_assign_error(&s, text, msg, __LINE__)

static void test_assign(void)
{
    af_spec s = load_spec();
    af_case c;
    af_error err = {0};
    af_case_init(&c, &s);
    CHECK_EQ_INT(af_case_assign(&s, &c, "n=0", &err), 0);
    CHECK_EQ_INT(c.values[0], 0);
    CHECK_EQ_INT(af_case_assign(&s, &c, "s77=17", &err), 0); /* symbol name works too */
    CHECK_EQ_INT(c.values[0], 17);
    CHECK_EQ_INT(af_case_assign(&s, &c, "s5=9223372036854775807", &err), 0);
    CHECK_EQ_INT(c.values[1], INT64_MAX); /* parsed; af_case_check judges the range */
    CHECK_EQ_INT(af_case_assign(&s, &c, "s5=007", &err), 0);
    CHECK_EQ_INT(c.values[1], 7);
    CHECK_EQ_INT(c.values[0], 17);

    EXPECT_ASSIGN_ERR("n", "'n': expected NAME=VALUE");
    EXPECT_ASSIGN_ERR("", "'': expected NAME=VALUE");
    EXPECT_ASSIGN_ERR(NULL, "empty shape assignment");
    EXPECT_ASSIGN_ERR("=5", "'=5': missing name before '='");
    EXPECT_ASSIGN_ERR("batch=5", "unknown symbol or Dim 'batch' (known: n, s5)");
    EXPECT_ASSIGN_ERR("N=5", "unknown symbol or Dim 'N' (known: n, s5)");
    EXPECT_ASSIGN_ERR("n =5", "unknown symbol or Dim 'n ' (known: n, s5)");
    EXPECT_ASSIGN_ERR("n=", "'n=': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=-1", "'n=-1': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=+5", "'n=+5': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n= 5", "'n= 5': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=5 ", "'n=5 ': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=5x", "'n=5x': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=0x10", "'n=0x10': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=1.5", "'n=1.5': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=5=6", "'n=5=6': value must be a non-negative integer");
    EXPECT_ASSIGN_ERR("n=9223372036854775808", "'n=9223372036854775808': value out of range");
    EXPECT_ASSIGN_ERR("n=99999999999999999999999",
                      "'n=99999999999999999999999': value out of range");

    char long_name[100];
    memset(long_name, 'a', 80);
    strcpy(long_name + 80, "=1");
    char want[128];
    snprintf(want, sizeof want, "'%.40s...': name too long", long_name);
    EXPECT_ASSIGN_ERR(long_name, want);

    af_spec none;
    CHECK_EQ_INT(af_spec_from_json("{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":[]}",
                                   AF_SPEC_FILE, &none, &err),
                 0);
    expect_assign_error(&none, "n=1", "unknown symbol or Dim 'n' (known: none)", __LINE__);
}

static void test_fill(void)
{
    /* Expected values computed once with torch 2.13 (docs/fill.md):
     *   MOD = 1000003
     *   def fill_w(seed, i, numel):
     *       s = seed % MOD
     *       j = torch.arange(numel, dtype=torch.int64)
     *       v = ((j % MOD) * 40503 + i * 9973 + s) % MOD
     *       return (v * v + 12345) % MOD
     *   w = fill_w(12345678901, 2, 6)   # [821710, 891838, 938141, 960619, 959272, 934100]
     *   (((w % 257) - 128).to(torch.float64) / 64).to(torch.float16)
     *                  # [-0.734375, -1.25, -0.578125, 1.28125, 0.3125, 0.53125]
     *   -3 + w % (5 - -3 + 1)             # [-2, -2, 5, 1, 4, 5]
     *   (w % 2).to(torch.bool)            # [F, F, T, T, F, F]
     *   fill_w(0, 0, 4)                   # [12345, 500434, 964698, 405134]
     *   j = [1000003, 2000009, 123456789], seed 7, i 1: v as above -> [612448, 317599, 101639]
     */
    static const int64_t w_expect[6] = {821710, 891838, 938141, 960619, 959272, 934100};
    static const double f_expect[6] = {-0.734375, -1.25, -0.578125, 1.28125, 0.3125, 0.53125};
    static const int64_t i_expect[6] = {-2, -2, 5, 1, 4, 5};
    static const int b_expect[6] = {0, 0, 1, 1, 0, 0};
    for (int j = 0; j < 6; j++) {
        int64_t w = af_fill_w(12345678901ULL, 2, j);
        CHECK_EQ_INT(w, w_expect[j]);
        CHECK(af_fill_float(w) == f_expect[j]);
        CHECK_EQ_INT(af_fill_int(-3, 5, w), i_expect[j]);
        CHECK_EQ_INT(af_fill_bool(w), b_expect[j]);
    }
    static const int64_t w0[4] = {12345, 500434, 964698, 405134};
    for (int j = 0; j < 4; j++)
        CHECK_EQ_INT(af_fill_w(0, 0, j), w0[j]);
    CHECK_EQ_INT(af_fill_w(7, 1, 1000003), 612448);
    CHECK_EQ_INT(af_fill_w(7, 1, 2000009), 317599);
    CHECK_EQ_INT(af_fill_w(7, 1, 123456789), 101639);
    /* The seed enters only mod 1000003, and the extremes of the mappings. */
    CHECK_EQ_INT(af_fill_w(1000003 + 5, 3, 10), af_fill_w(5, 3, 10));
    CHECK_EQ_INT(af_fill_w(UINT64_MAX, 63, INT64_MAX),
                 af_fill_w(UINT64_MAX % 1000003, 63, INT64_MAX % 1000003));
    CHECK(af_fill_float(128) == 0.0);
    CHECK(af_fill_float(0) == -2.0);
    CHECK(af_fill_float(256) == 2.0);
    CHECK(af_fill_float(127) == -1.0 / 64.0);
    CHECK_EQ_INT(af_fill_int(-AF_INT_LIMIT, AF_INT_LIMIT, 1000002), -AF_INT_LIMIT + 1000002);
    CHECK_EQ_INT(af_fill_int(7, 7, 123), 7);
}

/* af_case_equal / af_case_hash: every field counts, values past n_syms do not */
static void test_equal_hash(void)
{
    af_case a, b;
    memset(&a, 0, sizeof a);
    a.n_syms = 2;
    a.values[0] = 3, a.values[1] = -7;
    a.fill = AF_FILL_RANDOM;
    a.seed = (1ULL << 60) + 5;
    b = a;
    b.values[5] = 99; /* beyond n_syms */
    CHECK(af_case_equal(&a, &b));
    CHECK(af_case_hash(&a) == af_case_hash(&b));
    b = a, b.values[1] = -6;
    CHECK(!af_case_equal(&a, &b));
    CHECK(af_case_hash(&a) != af_case_hash(&b));
    b = a, b.fill = AF_FILL_ZEROS;
    CHECK(!af_case_equal(&a, &b));
    b = a, b.seed ^= 1ULL << 63;
    CHECK(!af_case_equal(&a, &b));
    CHECK(af_case_hash(&a) != af_case_hash(&b));
    b = a, b.n_syms = 1;
    CHECK(!af_case_equal(&a, &b));
}

int main(void)
{
    test_equal_hash();
    test_fill_names();
    test_init_and_dims();
    test_check();
    test_input_bytes();
    test_str();
    test_assign();
    test_fill();
    TEST_MAIN_END();
}
