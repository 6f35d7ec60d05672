/* test_fuzz_featmap.c — the libFuzzer features of a run: value classes, pair relations,
 * result class, signature bucket, empty / non-finite outputs. Compiles fuzz/featmap.c
 * itself (see test_fuzz_encode.c). */
#include "../../fuzz/featmap.c"

#include "af_test.h"

static uint8_t ctr[16384];
static af_feat_layout L;

/* libFuzzer clears its counters before each run; so do we */
static int compute(const af_spec *spec, const af_case *c, const af_result *r)
{
    memset(ctr, 0, sizeof ctr);
    af_feat_layout_for(spec, &L);
    return af_features_compute(spec, &L, c, r, ctr);
}

static af_spec make_spec(void)
{
    af_spec s;
    memset(&s, 0, sizeof s);
    s.n_inputs = 1;
    snprintf(s.inputs[0].name, AF_NAME_MAX, "x");
    s.inputs[0].dtype = AF_DT_FLOAT32;
    s.inputs[0].rank = 2;
    s.inputs[0].dims[0] = (af_dim){.sym = 0, .a = 1, .b = 0};
    s.inputs[0].dims[1] = (af_dim){.sym = 1, .a = 1, .b = 0};
    s.n_syms = 2;
    snprintf(s.syms[0].name, AF_NAME_MAX, "s0");
    s.syms[0].min = 0, s.syms[0].max = 128, s.syms[0].compiled_min = 2;
    s.syms[0].compiled_max = 128;
    snprintf(s.syms[1].name, AF_NAME_MAX, "s1");
    s.syms[1].min = 1, s.syms[1].max = 4096, s.syms[1].compiled_min = 2;
    s.syms[1].compiled_max = 4096;
    return s;
}

static int value_slot(int sym, af_vclass vc)
{
    return (int)L.value + sym * AF_VC_COUNT + (int)vc;
}

int main(void)
{
    af_spec spec = make_spec();
    const af_symbol *s0 = &spec.syms[0];
#define HAS(m, vc) (((m) >> (vc)) & 1u)
    uint32_t m = af_feat_value_classes(s0, 0);
    CHECK(HAS(m, AF_VC_ZERO) && HAS(m, AF_VC_MIN) && HAS(m, AF_VC_BELOW_COMPILED));
    CHECK(!HAS(m, AF_VC_POW2) && !HAS(m, AF_VC_MUL16) && !HAS(m, AF_VC_COMPILED_MIN));
    m = af_feat_value_classes(s0, 1);
    CHECK(HAS(m, AF_VC_ONE) && HAS(m, AF_VC_COMPILED_MIN_MINUS_1) && HAS(m, AF_VC_POW2));
    CHECK(HAS(m, AF_VC_BELOW_COMPILED));
    m = af_feat_value_classes(s0, 2);
    CHECK(HAS(m, AF_VC_TWO) && HAS(m, AF_VC_COMPILED_MIN) && !HAS(m, AF_VC_BELOW_COMPILED));
    m = af_feat_value_classes(s0, 128);
    CHECK(HAS(m, AF_VC_MAX) && HAS(m, AF_VC_POW2) && HAS(m, AF_VC_MUL16) && HAS(m, AF_VC_MUL32) &&
          HAS(m, AF_VC_MUL64) && HAS(m, AF_VC_MUL128));
    m = af_feat_value_classes(s0, 127);
    CHECK(HAS(m, AF_VC_MAX_MINUS_1) && HAS(m, AF_VC_POW2_NEIGHBOUR) && !HAS(m, AF_VC_POW2));
    m = af_feat_value_classes(s0, 65);
    CHECK(HAS(m, AF_VC_POW2_NEIGHBOUR) && !HAS(m, AF_VC_MUL16));
    m = af_feat_value_classes(s0, 96);
    CHECK(HAS(m, AF_VC_MUL16) && HAS(m, AF_VC_MUL32) && !HAS(m, AF_VC_MUL64));
    m = af_feat_value_classes(s0, 37);
    CHECK_EQ_INT(m, 0);

    af_case c;
    memset(&c, 0, sizeof c);
    c.n_syms = 2;
    c.values[0] = 0;
    c.values[1] = 64;
    af_result r;
    memset(&r, 0, sizeof r);
    r.cls = AF_RES_SIGNAL;
    snprintf(r.signature, sizeof r.signature, "SIGNAL: SIGSEGV @ k");

    int n = compute(&spec, &c, &r);
    CHECK(n > 0);
    int nonzero = 0;
    for (size_t i = 0; i < sizeof ctr; i++)
        nonzero += ctr[i] != 0;
    CHECK_EQ_INT(nonzero, n);
    CHECK(ctr[value_slot(0, AF_VC_ZERO)]);
    CHECK(ctr[value_slot(0, AF_VC_BELOW_COMPILED)]);
    CHECK(!ctr[value_slot(0, AF_VC_ONE)]);
    CHECK(ctr[value_slot(1, AF_VC_POW2)]);
    CHECK(ctr[value_slot(1, AF_VC_MUL64)]);
    CHECK(ctr[L.value_res + (0 * AF_VC_COUNT + AF_VC_ZERO) * AF_RES_COUNT + AF_RES_SIGNAL]);
    CHECK(!ctr[L.value_res + (0 * AF_VC_COUNT + AF_VC_ZERO) * AF_RES_COUNT + AF_RES_OK]);
    CHECK(ctr[L.res + AF_RES_SIGNAL]);
    CHECK(!ctr[L.res + AF_RES_OK]);
    CHECK(ctr[L.sig + af_feat_hash(r.signature) % AF_FEAT_SIG_BUCKETS]);
    CHECK(ctr[L.pair + 0]); /* s0 < s1 */
    CHECK(!ctr[L.pair + 1]);
    CHECK(ctr[L.mag + 0 * AF_FEAT_MAG_BUCKETS + 0]); /* 0 has bit length 0 */
    CHECK(ctr[L.mag + 1 * AF_FEAT_MAG_BUCKETS + 7]); /* 64 has bit length 7 */
    CHECK(!ctr[L.out + 2 * AF_RES_SIGNAL]);          /* no outputs, none empty */

    /* Pair relations: equal, double. */
    c.values[0] = 32;
    c.values[1] = 64;
    compute(&spec, &c, NULL);
    CHECK(ctr[L.pair + 0] && ctr[L.pair + 4] && !ctr[L.pair + 3]);
    for (size_t i = L.res; i < L.out + 2 * AF_RES_COUNT; i++)
        CHECK(!ctr[i]); /* no result: no result features */
    c.values[1] = 32;
    compute(&spec, &c, NULL);
    CHECK(ctr[L.pair + 1] && !ctr[L.pair + 0] && !ctr[L.pair + 2]);

    /* Empty and non-finite outputs. */
    memset(&r, 0, sizeof r);
    r.cls = AF_RES_OK;
    snprintf(r.signature, sizeof r.signature, "OK");
    r.n_outputs = 2;
    r.outputs[0].numel = 0;
    r.outputs[1].numel = 4;
    r.outputs[1].n_nan = 1;
    compute(&spec, &c, &r);
    CHECK(ctr[L.out + 2 * AF_RES_OK]);
    CHECK(ctr[L.out + 2 * AF_RES_OK + 1]);
    r.outputs[0].numel = 3;
    r.outputs[1].n_nan = 0;
    compute(&spec, &c, &r);
    CHECK(!ctr[L.out + 2 * AF_RES_OK]);
    CHECK(!ctr[L.out + 2 * AF_RES_OK + 1]);

    /* Distinct signatures usually land in distinct buckets. */
    int same = 0;
    for (int i = 0; i < 100; i++) {
        char a[32], b[32];
        snprintf(a, sizeof a, "SIGNAL: SIGSEGV @ k%d", i);
        snprintf(b, sizeof b, "SIGNAL: SIGSEGV @ k%d", i + 1);
        same += af_feat_hash(a) % AF_FEAT_SIG_BUCKETS == af_feat_hash(b) % AF_FEAT_SIG_BUCKETS;
    }
    CHECK(same < 5);

    /* The layout is sized to the spec: a one-symbol spec needs a few hundred slots, a full
     * 32-symbol spec fits the largest array and uses its last pair slot. */
    af_spec one = spec;
    one.n_syms = 1;
    af_feat_layout L1;
    CHECK(af_feat_layout_for(&one, &L1) < 1024);
    CHECK(af_feat_layout_for(&one, &L1) < af_feat_layout_for(&spec, &L));
    af_spec big;
    memset(&big, 0, sizeof big);
    big.n_syms = AF_MAX_SYMS;
    for (int k = 0; k < AF_MAX_SYMS; k++) {
        big.syms[k].min = 0;
        big.syms[k].max = 1000;
    }
    memset(&c, 0, sizeof c);
    c.n_syms = AF_MAX_SYMS;
    r.cls = AF_RES_REFUSED;
    n = compute(&big, &c, &r);
    CHECK(n > AF_MAX_SYMS);
    CHECK(L.end <= sizeof ctr);
    CHECK(ctr[L.pair + (AF_MAX_SYMS * (AF_MAX_SYMS - 1) / 2 - 1) * AF_FEAT_PAIR_RELS + 1]);
    TEST_MAIN_END();
}
