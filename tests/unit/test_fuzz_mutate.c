/* test_fuzz_mutate.c — the structure-aware mutator, crossover and seed corpus: outputs
 * stay in range, every boundary value and every operation is reached, seeds are the
 * documented ones. Compiles the fuzz sources it tests (see test_fuzz_encode.c). */
#include "../../fuzz/encode.c"
#include "../../fuzz/mutate.c"

#include <dirent.h>

#include "af_test.h"

static void add_sym(af_spec *s, const char *name, const char *dim, int64_t min, int64_t max,
                    int64_t cmin)
{
    af_symbol *y = &s->syms[s->n_syms++];
    snprintf(y->name, AF_NAME_MAX, "%s", name);
    snprintf(y->dim_name, AF_NAME_MAX, "%s", dim);
    y->min = min;
    y->max = max;
    y->compiled_min = cmin;
    y->compiled_max = max;
}

static int in_range(const af_spec *spec, const af_case *c)
{
    if ((unsigned)c->fill >= AF_FILL_COUNT)
        return 0;
    for (int k = 0; k < spec->n_syms; k++)
        if (c->values[k] < spec->syms[k].min || c->values[k] > spec->syms[k].max)
            return 0;
    return 1;
}

static int is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

static void test_mutator(const af_spec *spec)
{
    uint8_t data[512];
    size_t full = af_enc_size(spec);
    af_case c, start;
    int bad = 0;
    /* per symbol: which of its boundary values were produced */
    int64_t bvals[AF_MAX_SYMS][12];
    int nb[AF_MAX_SYMS], hit[AF_MAX_SYMS][12];
    int pow2 = 0, pow2_nb = 0, mul_pm1 = 0, equal_pair = 0, fill_changed = 0, seed_changed = 0;
    memset(hit, 0, sizeof hit);
    for (int k = 0; k < spec->n_syms; k++)
        nb[k] = af_mut_boundaries(&spec->syms[k], bvals[k]);

    memset(&start, 0, sizeof start);
    start.n_syms = spec->n_syms;
    for (int k = 0; k < spec->n_syms; k++)
        start.values[k] = af_seed_typical(&spec->syms[k]);
    size_t size = af_enc_encode(spec, &start, data, sizeof data);
    for (unsigned it = 0; it < 100000; it++) {
        if (it % 50 == 0) /* restart now and then, like libFuzzer picking a corpus entry */
            size = af_enc_encode(spec, &start, data, sizeof data);
        af_case before;
        af_enc_decode(spec, data, size, &before);
        size = af_mutate(spec, data, size, sizeof data, it * 2654435761u);
        if (size != full)
            bad++;
        af_enc_decode(spec, data, size, &c);
        if (!in_range(spec, &c))
            bad++;
        fill_changed += c.fill != before.fill;
        seed_changed += c.seed != before.seed;
        for (int k = 0; k < spec->n_syms; k++) {
            for (int b = 0; b < nb[k]; b++)
                hit[k][b] |= c.values[k] == bvals[k][b];
            if (c.values[k] != before.values[k]) {
                pow2 += is_pow2(c.values[k]) && c.values[k] > 2;
                pow2_nb += c.values[k] > 3 && !is_pow2(c.values[k]) &&
                           (is_pow2(c.values[k] + 1) || is_pow2(c.values[k] - 1));
                mul_pm1 += c.values[k] > 16 && (c.values[k] % 16 == 1 || c.values[k] % 16 == 15);
            }
        }
        for (int k = 1; k < spec->n_syms; k++)
            equal_pair += c.values[k] == c.values[0] && before.values[k] != before.values[0];
    }
    CHECK_EQ_INT(bad, 0);
    for (int k = 0; k < spec->n_syms; k++)
        for (int b = 0; b < nb[k]; b++)
            if (!hit[k][b]) {
                fprintf(stderr, "symbol %s: boundary %lld never produced\n", spec->syms[k].name,
                        (long long)bvals[k][b]);
                CHECK(hit[k][b]);
            }
    CHECK(pow2 > 100);
    CHECK(pow2_nb > 100);
    CHECK(mul_pm1 > 100);
    CHECK(equal_pair > 100);
    /* fill and seed change, but rarely */
    CHECK(fill_changed > 100 && fill_changed < 15000);
    CHECK(seed_changed > 100 && seed_changed < 15000);

    /* A too-small max_size: the output is cut to fit and still decodes in range. */
    size = af_enc_encode(spec, &start, data, sizeof data);
    size_t cut = af_mutate(spec, data, size, 2, 7);
    CHECK(cut <= 2);
    af_enc_decode(spec, data, cut, &c);
    CHECK(in_range(spec, &c));
}

static void test_ops(const af_spec *spec)
{
    af_rng r;
    af_rng_seed(&r, 1);
    af_case c;
    int used[AF_MUT_COUNT] = {0};
    memset(&c, 0, sizeof c);
    c.n_syms = spec->n_syms;
    for (int it = 0; it < 20000; it++) {
        af_mut_op op = af_mutate_once(spec, &c, AF_MUT_COUNT, &r);
        CHECK((unsigned)op < AF_MUT_COUNT);
        if ((unsigned)op < AF_MUT_COUNT)
            used[op]++;
    }
    for (int op = 0; op < AF_MUT_COUNT; op++) {
        if (!used[op])
            fprintf(stderr, "operation %s never picked\n", af_mut_op_name((af_mut_op)op));
        CHECK(used[op] > 0);
    }

    /* Single operations do what they say (symbol 1: seq, [1, 4096]). */
    af_spec one;
    memset(&one, 0, sizeof one);
    one.n_syms = 1;
    one.syms[0] = spec->syms[1];
    int saw_up = 0, saw_down = 0, saw_x2 = 0, saw_half = 0;
    for (int it = 0; it < 200; it++) {
        c.values[0] = 10;
        af_mutate_once(&one, &c, AF_MUT_STEP, &r);
        CHECK(c.values[0] == 9 || c.values[0] == 11);
        saw_up |= c.values[0] == 11;
        saw_down |= c.values[0] == 9;
        c.values[0] = 10;
        af_mutate_once(&one, &c, AF_MUT_SCALE, &r);
        CHECK(c.values[0] == 20 || c.values[0] == 5);
        saw_x2 |= c.values[0] == 20;
        saw_half |= c.values[0] == 5;
        c.values[0] = 100;
        af_mutate_once(&one, &c, AF_MUT_MULTIPLE, &r);
        int64_t v = c.values[0];
        CHECK(v % 16 == 0 || v % 16 == 1 || v % 16 == 15);
        af_mutate_once(&one, &c, AF_MUT_POW2, &r);
        v = c.values[0];
        CHECK(is_pow2(v) || is_pow2(v + 1) || is_pow2(v - 1));
        CHECK(v >= 1 && v <= 4096);
    }
    CHECK(saw_up && saw_down && saw_x2 && saw_half);
    /* Scaling at the top of the range clamps. */
    c.values[0] = 4000;
    for (int it = 0; it < 50; it++) {
        af_mutate_once(&one, &c, AF_MUT_SCALE, &r);
        CHECK(c.values[0] >= 1 && c.values[0] <= 4096);
    }
}

static void test_crossover(const af_spec *spec)
{
    uint8_t a[256], b[256], out[256];
    af_case ca, cb, co;
    af_rng r;
    af_rng_seed(&r, 9);
    int bad = 0, mixed = 0;
    for (int it = 0; it < 20000; it++) {
        memset(&ca, 0, sizeof ca);
        memset(&cb, 0, sizeof cb);
        ca.n_syms = cb.n_syms = spec->n_syms;
        for (int m = 0; m < 3; m++) {
            af_mutate_once(spec, &ca, AF_MUT_RANDOM, &r);
            af_mutate_once(spec, &cb, AF_MUT_RANDOM, &r);
        }
        size_t sa = af_enc_encode(spec, &ca, a, sizeof a);
        size_t sb = af_enc_encode(spec, &cb, b, sizeof b);
        af_enc_decode(spec, a, sa, &ca); /* the parents as the fuzzer sees them */
        af_enc_decode(spec, b, sb, &cb);
        size_t so = af_crossover(spec, a, sa, b, sb, out, sizeof out, (uint64_t)it);
        af_enc_decode(spec, out, so, &co);
        if (!in_range(spec, &co))
            bad++;
        int from_a = 0, from_b = 0;
        for (int k = 0; k < spec->n_syms; k++) {
            if (co.values[k] != ca.values[k] && co.values[k] != cb.values[k])
                bad++;
            from_a += co.values[k] == ca.values[k] && ca.values[k] != cb.values[k];
            from_b += co.values[k] == cb.values[k] && ca.values[k] != cb.values[k];
        }
        mixed += from_a && from_b;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(mixed > 1000);
}

static void test_seeds(const af_spec *spec)
{
    af_seed seeds[2 * AF_MAX_SYMS + 4];
    int n = af_seed_cases(spec, seeds, (int)(sizeof seeds / sizeof seeds[0]));
    CHECK(n >= 4);
    CHECK_STR(seeds[0].name, "all-min");
    for (int k = 0; k < spec->n_syms; k++)
        CHECK_EQ_INT(seeds[0].c.values[k], spec->syms[k].min);
    CHECK_STR(seeds[n - 1].name, "all-max");
    for (int k = 0; k < spec->n_syms; k++)
        CHECK_EQ_INT(seeds[n - 1].c.values[k], spec->syms[k].max);
    int found_n0 = 0, found_seq1 = 0;
    for (int i = 0; i < n; i++) {
        CHECK(in_range(spec, &seeds[i].c));
        for (int j = 0; j < i; j++)
            CHECK(memcmp(seeds[i].c.values, seeds[j].c.values, sizeof seeds[i].c.values) != 0);
        if (strcmp(seeds[i].name, "n-at-0") == 0) {
            found_n0 = 1;
            CHECK_EQ_INT(seeds[i].c.values[0], 0);
            CHECK_EQ_INT(seeds[i].c.values[1], 8); /* typical */
        }
        if (strcmp(seeds[i].name, "seq-at-1") == 0) {
            found_seq1 = 1;
            CHECK_EQ_INT(seeds[i].c.values[1], 1);
            CHECK_EQ_INT(seeds[i].c.values[0], 8);
        }
    }
    if (!(found_n0 && found_seq1))
        for (int i = 0; i < n; i++)
            fprintf(stderr, "seed %d: %s\n", i, seeds[i].name);
    CHECK(found_n0 && found_seq1);
    /* typical: 8 clamped into the compiled range */
    af_symbol s = spec->syms[0];
    s.compiled_min = 20;
    CHECK_EQ_INT(af_seed_typical(&s), 20);
    s.compiled_min = 0;
    s.max = 4;
    s.compiled_max = 4;
    CHECK_EQ_INT(af_seed_typical(&s), 4);

    char dir[] = "/tmp/af_test_seeds_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/corpus/a", dir);
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_seed_corpus_write(spec, sub, &err), n);
    DIR *d = opendir(sub);
    int files = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        files++;
        CHECK(strncmp(de->d_name, "seed-", 5) == 0);
    }
    if (d)
        closedir(d);
    CHECK_EQ_INT(files, n);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    af_spec spec;
    memset(&spec, 0, sizeof spec);
    add_sym(&spec, "s0", "n", 0, 128, 2);
    add_sym(&spec, "s1", "seq", 1, 4096, 2);
    add_sym(&spec, "s2", "", 0, (int64_t)1 << 53, 1);
    add_sym(&spec, "s3", "", 3, 9, 4);
    test_mutator(&spec);
    test_ops(&spec);
    test_crossover(&spec);
    test_seeds(&spec);

    /* A spec without symbols: only fill and seed can change. */
    af_spec none;
    memset(&none, 0, sizeof none);
    uint8_t buf[16] = {0};
    size_t sz = af_mutate(&none, buf, 9, sizeof buf, 5);
    CHECK_EQ_INT(sz, 9);
    TEST_MAIN_END();
}
