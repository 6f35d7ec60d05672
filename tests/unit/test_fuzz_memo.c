/* test_fuzz_memo.c — the memo of failing cases: exact-case hits, misses on any difference,
 * overwrite when full; the OK cases: hits with the outputs, only OK results, bounded; the
 * shape-class predictions: learnt only from killing failures with one signature, every verify-th
 * run, broken for good by any other outcome. Compiles fuzz/memo.c and fuzz/featmap.c itself (see
 * test_fuzz_encode.c). */
#include "../../fuzz/featmap.c"
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

static void two_syms(af_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->n_syms = 2;
    for (int i = 0; i < 2; i++) {
        spec->syms[i].min = spec->syms[i].decl_min = 0;
        spec->syms[i].max = spec->syms[i].decl_max = 1000;
        spec->syms[i].compiled_min = 0;
        spec->syms[i].compiled_max = 1000;
    }
}

/* A two-symbol spec and a 64-slot memo for it (NULL, a failed check, on OOM). */
static af_memo *two_sym_memo(af_spec *spec)
{
    two_syms(spec);
    af_memo *m = af_memo_new(64);
    CHECK(m != NULL);
    return m;
}

static af_result res(af_class cls, const char *sig)
{
    af_result r;
    memset(&r, 0, sizeof r);
    r.cls = cls;
    snprintf(r.signature, sizeof r.signature, "%s", sig);
    snprintf(r.message, sizeof r.message, "msg of %s", sig);
    return r;
}

/* Predictions: 37, 41, 43, 45 and 53 are in no value class of featmap.h (not 0/1/2, no
 * power of two or its neighbour, no multiple of 16, not min or max): one class. */
static void test_predict(void)
{
    af_spec spec;
    af_memo *m = two_sym_memo(&spec);
    if (!m)
        return;
    af_result segv = res(AF_RES_DEVICE_FAULT, "DEVICE_FAULT: CUDA_ERROR_ASSERT"), out;
    af_case c = mk(0, 37, AF_FILL_RANDOM, 1);

    /* off by default: nothing learnt, nothing predicted */
    for (int i = 0; i < 5; i++) {
        c.seed = (uint64_t)i;
        af_memo_note_run(m, &spec, &c, &segv);
    }
    CHECK_EQ_INT(af_memo_predict(m, &spec, &c, &out), 0);

    af_memo_set_predict(m, 3, 4);
    c = mk(0, 37, AF_FILL_RANDOM, 1);
    af_memo_note_run(m, &spec, &c, &segv);
    c.values[1] = 41;
    af_memo_note_run(m, &spec, &c, &segv);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &c, &out), 0); /* two failures: still learning */
    CHECK_EQ_INT(af_memo_predicted_classes(m), 0);
    c.values[1] = 43;
    af_memo_note_run(m, &spec, &c, &segv);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 1);

    /* a new case of the class: predicted three times, the fourth runs */
    af_case d = mk(0, 45, AF_FILL_RANDOM, 99);
    int predicted = 0;
    for (int i = 0; i < 3; i++)
        predicted += af_memo_predict(m, &spec, &d, &out);
    CHECK_EQ_INT(predicted, 3);
    CHECK_EQ_INT(out.cls, AF_RES_DEVICE_FAULT);
    CHECK_STR(out.signature, segv.signature);
    CHECK_STR(out.message, segv.message);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &d, &out), 0);

    /* other classes are not predicted: another fill, another value class, another symbol */
    af_case e = mk(0, 45, AF_FILL_ZEROS, 99);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 0);
    e = mk(0, 16, AF_FILL_RANDOM, 99);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 0);
    e = mk(37, 45, AF_FILL_RANDOM, 99);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 0);

    /* a timeout or a refusal teaches nothing */
    af_result t = res(AF_RES_TIMEOUT, "TIMEOUT");
    af_memo_note_run(m, &spec, &d, &t);
    t = res(AF_RES_REFUSED, "REFUSED");
    af_memo_note_run(m, &spec, &d, &t);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 1);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &d, &out), 1);

    /* the verifying run comes back OK: the class is mixed for good */
    af_result ok = res(AF_RES_OK, "OK");
    af_memo_note_run(m, &spec, &d, &ok);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 0);
    CHECK_EQ_INT(af_memo_broken_predictions(m), 1);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(af_memo_predict(m, &spec, &d, &out), 0);
    for (int i = 0; i < 5; i++)
        af_memo_note_run(m, &spec, &c, &segv);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &d, &out), 0);

    /* a second signature while learning: mixed; a non-killing failure: mixed */
    af_result other = res(AF_RES_SIGNAL, "SIGNAL: SIGSEGV @ k");
    af_case f = mk(37, 37, AF_FILL_RANDOM, 1);
    af_memo_note_run(m, &spec, &f, &segv);
    af_memo_note_run(m, &spec, &f, &other);
    for (int i = 0; i < 5; i++)
        af_memo_note_run(m, &spec, &f, &segv);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &f, &out), 0);
    af_result rte = res(AF_RES_RUNTIME_ERROR, "RUNTIME_ERROR: index");
    af_case g = mk(53, 53, AF_FILL_ONES, 1);
    for (int i = 0; i < 5; i++)
        af_memo_note_run(m, &spec, &g, &rte);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &g, &out), 0);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 0);

    /* verify = 1: every case runs, however well the class is learnt */
    af_memo_set_predict(m, 1, 1);
    af_case h = mk(53, 37, AF_FILL_WIDE, 1);
    af_memo_note_run(m, &spec, &h, &other);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 1);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(af_memo_predict(m, &spec, &h, &out), 0);
    af_memo_free(m);
}

/* One-symbol classes: n = 0 kills whatever m is. 37/41/43 are in no value class (one class
 * of m), 16 and 64 are (multiples of 16, powers of two): other classes of m. */
static void test_predict_one_symbol(void)
{
    af_spec spec;
    af_memo *m = two_sym_memo(&spec);
    if (!m)
        return;
    af_memo_set_predict(m, 3, 4);
    af_result fault = res(AF_RES_DEVICE_FAULT, "DEVICE_FAULT: CUDA_ERROR_ASSERT"), out;
    af_result ok = res(AF_RES_OK, "OK");

    /* three failures at n = 0, m always in one class: the whole class is learnt, the
     * one-symbol class of n is not (nothing says m does not matter) */
    af_case c = mk(0, 37, AF_FILL_RANDOM, 1);
    af_memo_note_run(m, &spec, &c, &fault);
    c.values[1] = 41;
    af_memo_note_run(m, &spec, &c, &fault);
    c.values[1] = 43;
    af_memo_note_run(m, &spec, &c, &fault);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 1);
    CHECK_EQ_INT(af_memo_pinned_classes(m), 0);
    af_case d = mk(0, 16, AF_FILL_RANDOM, 5); /* n = 0, m in another class: not predicted */
    CHECK_EQ_INT(af_memo_predict(m, &spec, &d, &out), 0);

    /* a failure at n = 0 with m in another class: n's one-symbol class is learnt (3 + 1
     * failures, m in two classes); m = 16's own whole class has one failure only */
    af_memo_note_run(m, &spec, &d, &fault);
    CHECK_EQ_INT(af_memo_pinned_classes(m), 1);
    af_case e = mk(0, 64, AF_FILL_RANDOM, 9); /* n = 0, m in a third class: predicted */
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 1);
    CHECK_EQ_INT(out.cls, AF_RES_DEVICE_FAULT);
    CHECK_STR(out.signature, fault.signature);
    CHECK_EQ_INT((int)af_memo_pinned_predictions(m), 1);
    /* another fill, or n in another class: not predicted */
    af_case f = mk(0, 64, AF_FILL_ZEROS, 9);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &f, &out), 0);
    f = mk(37, 64, AF_FILL_RANDOM, 9);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &f, &out), 0);
    /* m's one-symbol classes learnt nothing: their failures all had n in one class */
    f = mk(41, 37, AF_FILL_RANDOM, 9);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &f, &out), 0);

    /* every verify-th prediction runs: two more predicted, then one that runs */
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 1);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 1);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 0);

    /* it comes back OK: n's one-symbol class is mixed for good, and so is the whole class of
     * (0, 64); the whole class of (0, 37..43) still predicts on its own */
    af_memo_note_run(m, &spec, &e, &ok);
    CHECK_EQ_INT(af_memo_pinned_classes(m), 0);
    CHECK_EQ_INT(af_memo_broken_predictions(m), 1);
    for (int i = 0; i < 8; i++) {
        e.seed = (uint64_t)(100 + i);
        CHECK_EQ_INT(af_memo_predict(m, &spec, &e, &out), 0);
    }
    af_case g = mk(0, 53, AF_FILL_RANDOM, 3);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &g, &out), 1);
    CHECK_EQ_INT(af_memo_predicted_classes(m), 1);

    /* with the ones fill, n = 0 is learnt apart (m in two classes: 37/41 and 64); a case in a
     * class of m never run is predicted, and an OK there breaks n's class */
    af_case h = mk(0, 37, AF_FILL_ONES, 1);
    af_memo_note_run(m, &spec, &h, &fault);
    h.values[1] = 41;
    af_memo_note_run(m, &spec, &h, &fault);
    h.values[1] = 64;
    af_memo_note_run(m, &spec, &h, &fault);
    CHECK_EQ_INT(af_memo_pinned_classes(m), 1);
    af_case k = mk(0, 16, AF_FILL_ONES, 2);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &k, &out), 1);
    af_memo_note_run(m, &spec, &k, &ok);
    CHECK_EQ_INT(af_memo_pinned_classes(m), 0);
    CHECK_EQ_INT(af_memo_predict(m, &spec, &k, &out), 0);

    /* one symbol: no one-symbol classes (the whole class is that symbol already) */
    af_spec one;
    two_syms(&one);
    one.n_syms = 1;
    af_memo *m1 = af_memo_new(64);
    CHECK(m1 != NULL);
    if (m1) {
        af_memo_set_predict(m1, 2, 4);
        af_case u = mk(0, 0, AF_FILL_RANDOM, 1);
        u.n_syms = 1;
        af_memo_note_run(m1, &one, &u, &fault);
        u.seed = 2;
        af_memo_note_run(m1, &one, &u, &fault);
        CHECK_EQ_INT(af_memo_predicted_classes(m1), 1);
        CHECK_EQ_INT(af_memo_pinned_classes(m1), 0);
        af_memo_free(m1);
    }
    af_memo_free(m);
}

/* The OK cases: off until enabled; a hit gives back class OK, the run's signature and its
 * outputs' summaries; misses on any difference of the key; only OK results go in; a full
 * table overwrites, bounded, with no false hits. */
static void test_ok_cases(void)
{
    af_memo *m = af_memo_new(64);
    CHECK(m != NULL);
    if (!m)
        return;
    af_result r, out;
    memset(&r, 0, sizeof r);
    memset(&out, 0, sizeof out);
    r.cls = AF_RES_OK;
    snprintf(r.signature, sizeof r.signature, "OK");
    r.n_outputs = 2;
    r.outputs[0].rank = 2;
    r.outputs[0].sizes[0] = 0;
    r.outputs[0].sizes[1] = 5;
    r.outputs[0].numel = 0;
    r.outputs[1].rank = 1;
    r.outputs[1].sizes[0] = 3;
    r.outputs[1].numel = 3;
    r.outputs[1].n_nan = 1;
    r.outputs[1].sum = 2.5;
    r.run_seconds = 0.25;
    af_case c = mk(4, 9, AF_FILL_ONES, 11);

    af_memo_put_ok(m, &c, &r); /* off: nothing kept */
    CHECK_EQ_INT(af_memo_get_ok(m, &c, &out), 0);
    CHECK_EQ_INT(af_memo_ok_size(m), 0);

    CHECK_EQ_INT(af_memo_ok_enable(m, 100), 0);
    CHECK_EQ_INT(af_memo_get_ok(m, &c, &out), 0);
    af_memo_put_ok(m, &c, &r);
    CHECK_EQ_INT(af_memo_ok_size(m), 1);
    out.cls = AF_RES_SIGNAL;
    out.n_frames = 3;
    CHECK_EQ_INT(af_memo_get_ok(m, &c, &out), 1);
    CHECK_EQ_INT(out.cls, AF_RES_OK);
    CHECK_STR(out.signature, "OK");
    CHECK_EQ_INT(out.n_frames, 0);
    CHECK(out.run_seconds == 0); /* nothing ran */
    CHECK_EQ_INT(out.n_outputs, 2);
    CHECK(memcmp(out.outputs, r.outputs, 2 * sizeof r.outputs[0]) == 0);
    CHECK_EQ_INT(af_result_any_empty(&out), af_result_any_empty(&r));
    CHECK_EQ_INT(af_result_any_nonfinite(&out), af_result_any_nonfinite(&r));
    /* not a failing case: the failing memo knows nothing of it */
    CHECK_EQ_INT(af_memo_get(m, &c, &out), 0);

    af_case d = mk(4, 10, AF_FILL_ONES, 11);
    CHECK_EQ_INT(af_memo_get_ok(m, &d, &out), 0);
    d = mk(4, 9, AF_FILL_ZEROS, 11);
    CHECK_EQ_INT(af_memo_get_ok(m, &d, &out), 0);
    d = mk(4, 9, AF_FILL_ONES, 12);
    CHECK_EQ_INT(af_memo_get_ok(m, &d, &out), 0);
    d = mk(4, 9, AF_FILL_ONES, 11);
    d.values[7] = 5; /* past n_syms: not in the key */
    CHECK_EQ_INT(af_memo_get_ok(m, &d, &out), 1);

    /* Only OK results: a failure or a timeout is not an OK case. */
    af_result f = r;
    f.cls = AF_RES_SIGNAL;
    af_case e = mk(1, 2, AF_FILL_RANDOM, 3);
    af_memo_put_ok(m, &e, &f);
    f.cls = AF_RES_TIMEOUT;
    af_memo_put_ok(m, &e, &f);
    CHECK_EQ_INT(af_memo_get_ok(m, &e, &out), 0);
    CHECK_EQ_INT(af_memo_ok_size(m), 1);

    /* The same key again: replaced, not counted twice. */
    r.n_outputs = 1;
    af_memo_put_ok(m, &c, &r);
    CHECK_EQ_INT(af_memo_ok_size(m), 1);
    CHECK_EQ_INT(af_memo_get_ok(m, &c, &out), 1);
    CHECK_EQ_INT(out.n_outputs, 1);

    /* Far more cases than the 128 slots: bounded, no false hits, the latest kept. */
    int false_hits = 0;
    for (int i = 0; i < 5000; i++) {
        af_case k = mk(i, -i, AF_FILL_RANDOM, (uint64_t)i);
        af_memo_put_ok(m, &k, &r);
    }
    CHECK(af_memo_ok_size(m) <= 128);
    for (int i = 0; i < 5000; i++) {
        af_case k = mk(i, -i, AF_FILL_RANDOM, (uint64_t)i + 1);
        false_hits += af_memo_get_ok(m, &k, &out);
    }
    CHECK_EQ_INT(false_hits, 0);
    af_case last = mk(4999, -4999, AF_FILL_RANDOM, 4999);
    CHECK_EQ_INT(af_memo_get_ok(m, &last, &out), 1);
    af_memo_free(m);
}

int main(void)
{
    test_predict();
    test_predict_one_symbol();
    test_ok_cases();
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
