/* test_fuzz_memo.c — the memo of failing cases: exact-case hits, misses on any difference,
 * overwrite when full. Compiles fuzz/memo.c itself (see test_fuzz_encode.c). */
#include "../../fuzz/memo.c"

#include "af_test.h"

static af_case mk(int64_t a, int64_t b, af_fill fill, uint64_t seed)
{
    af_case c;
    memset(&c, 0, sizeof c);
    c.n_syms = 2;
    c.values[0] = a;
    c.values[1] = b;
    c.fill = fill;
    c.seed = seed;
    return c;
}

int main(void)
{
    af_memo *m = af_memo_new(100);
    CHECK(m != NULL);
    if (!m)
        return 1;
    af_result r, out;
    memset(&r, 0, sizeof r);
    r.cls = AF_RES_SIGNAL;
    snprintf(r.signature, sizeof r.signature, "SIGNAL: SIGSEGV @ k");
    snprintf(r.message, sizeof r.message, "boom");
    af_case c = mk(0, 16, AF_FILL_RANDOM, 7);
    CHECK_EQ_INT(af_memo_get(m, &c, &out), 0);
    af_memo_put(m, &c, &r);
    CHECK_EQ_INT(af_memo_get(m, &c, &out), 1);
    CHECK_EQ_INT(out.cls, AF_RES_SIGNAL);
    CHECK_STR(out.signature, r.signature);
    CHECK_STR(out.message, "boom");
    CHECK_EQ_INT(out.n_outputs, 0);

    af_case d = mk(0, 17, AF_FILL_RANDOM, 7);
    CHECK_EQ_INT(af_memo_get(m, &d, &out), 0);
    d = mk(0, 16, AF_FILL_ZEROS, 7);
    CHECK_EQ_INT(af_memo_get(m, &d, &out), 0);
    d = mk(0, 16, AF_FILL_RANDOM, 8);
    CHECK_EQ_INT(af_memo_get(m, &d, &out), 0);
    /* values past n_syms are not part of the key */
    d = mk(0, 16, AF_FILL_RANDOM, 7);
    d.values[5] = 99;
    CHECK_EQ_INT(af_memo_get(m, &d, &out), 1);

    /* Updating a key replaces its entry. */
    r.cls = AF_RES_RUNTIME_ERROR;
    af_memo_put(m, &c, &r);
    CHECK_EQ_INT(af_memo_get(m, &c, &out), 1);
    CHECK_EQ_INT(out.cls, AF_RES_RUNTIME_ERROR);

    /* A timeout is not remembered: the case is run again next time. */
    af_result t = r;
    t.cls = AF_RES_TIMEOUT;
    af_case e = mk(3, 4, AF_FILL_RANDOM, 1);
    af_memo_put(m, &e, &t);
    CHECK_EQ_INT(af_memo_get(m, &e, &out), 0);

    /* Far more entries than slots: no false hits, recent entries mostly kept. */
    int false_hits = 0, kept = 0;
    for (int i = 0; i < 5000; i++) {
        af_case k = mk(i, i * 3, AF_FILL_RANDOM, 0);
        af_memo_put(m, &k, &r);
    }
    for (int i = 0; i < 5000; i++) {
        af_case k = mk(i, i * 3 + 1, AF_FILL_RANDOM, 0);
        false_hits += af_memo_get(m, &k, &out);
    }
    for (int i = 4990; i < 5000; i++) {
        af_case k = mk(i, i * 3, AF_FILL_RANDOM, 0);
        kept += af_memo_get(m, &k, &out);
    }
    CHECK_EQ_INT(false_hits, 0);
    CHECK(kept >= 8);
    af_memo_free(m);
    af_memo_free(NULL);
    TEST_MAIN_END();
}
