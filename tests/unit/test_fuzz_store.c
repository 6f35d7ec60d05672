/* test_fuzz_store.c — the crash store: one file per signature, repeats counted in the
 * sidecar, reload from the dir, two stores (jobs) sharing a dir. Compiles the fuzz sources
 * it tests (see test_fuzz_encode.c). */
#include "../../fuzz/featmap.c"
#include "../../fuzz/store.c"

#include "af_test.h"

static char g_root[] = "/tmp/af_test_store_XXXXXX";

static af_spec g_spec;

static void make_crash(af_crash *cr, const char *sig, af_class cls, int64_t n)
{
    af_package pkg;
    af_case c;
    af_result r;
    memset(&pkg, 0, sizeof pkg);
    snprintf(pkg.path, sizeof pkg.path, "m.pt2");
    snprintf(pkg.model, sizeof pkg.model, "model");
    snprintf(pkg.device, sizeof pkg.device, "cpu");
    memset(&c, 0, sizeof c);
    c.n_syms = 1;
    c.values[0] = n;
    memset(&r, 0, sizeof r);
    r.cls = cls;
    snprintf(r.signature, sizeof r.signature, "%s", sig);
    af_crash_from_run(cr, &pkg, &g_spec, &c, &r, NULL);
}

static int count_files(const char *dir, const char *suffix, const char *contains)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        size_t l = strlen(de->d_name), sl = strlen(suffix);
        if (l >= sl && strcmp(de->d_name + l - sl, suffix) == 0 &&
            (!contains || strstr(de->d_name, contains)))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static int64_t sidecar_count(const af_store_entry *e)
{
    char side[PATH_MAX];
    af_crash c;
    if (!e || af_crash_sidecar_path(e->path, side, sizeof side) < 0 ||
        af_crash_read_sidecar(side, &c, NULL) < 0)
        return -1;
    return c.count;
}

static void test_dedup_and_reload(void)
{
    char dir[PATH_MAX];
    af_error err;
    af_crash a, b;
    snprintf(dir, sizeof dir, "%s/one/crashes", g_root); /* created on open */
    make_crash(&a, "SIGNAL: SIGSEGV @ k", AF_RES_SIGNAL, 0);
    make_crash(&b, "RUNTIME_ERROR: index # is out of bounds", AF_RES_RUNTIME_ERROR, 1);

    af_error_clear(&err);
    af_store *st = af_store_open(dir, &err);
    CHECK(st != NULL);
    if (!st)
        return;
    CHECK_EQ_INT(af_store_n_loaded(st), 0);
    CHECK_EQ_INT(af_store_add(st, &a, &err), AF_STORE_NEW);
    CHECK_EQ_INT(af_store_add(st, &a, &err), AF_STORE_KNOWN);
    CHECK_EQ_INT(count_files(dir, ".bin", NULL), 1);
    CHECK_EQ_INT(count_files(dir, ".bin", "crash-signal-"), 1);
    CHECK_EQ_INT(count_files(dir, ".json", NULL), 1);
    const af_store_entry *e = af_store_find(st, a.signature);
    CHECK(e != NULL);
    CHECK_EQ_INT(e ? e->pending : -1, 1);
    CHECK_EQ_INT(sidecar_count(e), 1); /* not flushed yet */

    /* Rate limit: no write before the interval, unless forced. */
    af_store_set_flush_interval(st, 3600);
    CHECK_EQ_INT(af_store_flush(st, 0, &err), 0);
    CHECK_EQ_INT(sidecar_count(e), 1);
    CHECK_EQ_INT(af_store_flush(st, 1, &err), 0);
    CHECK_EQ_INT(sidecar_count(e), 2);
    CHECK_EQ_INT(e ? e->crash.count : -1, 2);
    CHECK_EQ_INT(e ? e->seen_here : -1, 2);

    /* The crash file itself keeps the first sighting. */
    af_crash onfile;
    CHECK_EQ_INT(af_crash_read(e ? e->path : "", &onfile, &err), 0);
    CHECK_EQ_INT(onfile.count, 1);
    CHECK_STR(onfile.signature, a.signature);

    CHECK_EQ_INT(af_store_add(st, &b, &err), AF_STORE_NEW);
    CHECK_EQ_INT(af_store_size(st), 2);
    CHECK_EQ_INT(count_files(dir, ".bin", NULL), 2);
    af_store_close(st);

    /* Reload: both known, counts from the sidecars; a foreign .bin is skipped. */
    char junk[PATH_MAX + 16];
    snprintf(junk, sizeof junk, "%s/notes.bin", dir);
    FILE *f = fopen(junk, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("hello\n", f);
        fclose(f);
    }
    st = af_store_open(dir, &err);
    CHECK(st != NULL);
    if (!st)
        return;
    CHECK_EQ_INT(af_store_n_loaded(st), 2);
    CHECK_EQ_INT(af_store_n_skipped(st), 1);
    CHECK_STR(af_store_skipped_msg(st), "notes.bin: not an aoti-fuzz crash file (bad magic)");
    e = af_store_find(st, a.signature);
    CHECK(e && e->loaded);
    CHECK_EQ_INT(e ? e->crash.count : -1, 2);
    CHECK_EQ_INT(af_store_add(st, &a, &err), AF_STORE_KNOWN);
    CHECK_EQ_INT(af_store_flush(st, 1, &err), 0);
    CHECK_EQ_INT(sidecar_count(e), 3);
    CHECK_EQ_INT(count_files(dir, ".bin", NULL), 3); /* 2 crash files + notes.bin */
    CHECK_EQ_INT(count_files(dir, ".json", NULL), 2);
    CHECK_EQ_INT(count_files(dir, "", ".tmp-"), 0);
    af_store_close(st);
}

/* store.h's promise: an entry pointer lives until close, however many entries come after. */
static void test_stable_pointers(void)
{
    char dir[PATH_MAX];
    af_error err;
    af_crash a, more;
    snprintf(dir, sizeof dir, "%s/stable/crashes", g_root);
    af_error_clear(&err);
    af_store *st = af_store_open(dir, &err);
    CHECK(st != NULL);
    if (!st)
        return;
    make_crash(&a, "SIGNAL: SIGSEGV @ first", AF_RES_SIGNAL, 0);
    CHECK_EQ_INT(af_store_add(st, &a, &err), AF_STORE_NEW);
    const af_store_entry *e = af_store_find(st, a.signature);
    CHECK(e == af_store_entry_at(st, 0));
    for (int i = 0; i < 200; i++) { /* past every doubling of the index from 16 to 256 */
        char sig[64];
        snprintf(sig, sizeof sig, "RUNTIME_ERROR: bug %d", i);
        make_crash(&more, sig, AF_RES_RUNTIME_ERROR, i % 8);
        CHECK_EQ_INT(af_store_add(st, &more, &err), AF_STORE_NEW);
    }
    CHECK_EQ_INT(af_store_size(st), 201);
    CHECK(af_store_find(st, a.signature) == e);
    CHECK(af_store_entry_at(st, 0) == e);
    CHECK_STR(e->crash.signature, "SIGNAL: SIGSEGV @ first");
    af_store_close(st);
}

static void test_two_jobs(void)
{
    char dir[PATH_MAX];
    af_error err;
    af_crash c;
    snprintf(dir, sizeof dir, "%s/shared", g_root);
    make_crash(&c, "DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS", AF_RES_DEVICE_FAULT, 0);
    af_error_clear(&err);
    af_store *s1 = af_store_open(dir, &err);
    af_store *s2 = af_store_open(dir, &err);
    CHECK(s1 && s2);
    if (!s1 || !s2)
        return;
    /* Both find the same new signature; only the first writes a file. */
    CHECK_EQ_INT(af_store_add(s1, &c, &err), AF_STORE_NEW);
    CHECK_EQ_INT(af_store_add(s2, &c, &err), AF_STORE_KNOWN);
    CHECK_EQ_INT(count_files(dir, ".bin", NULL), 1);
    CHECK_EQ_INT(af_store_add(s1, &c, &err), AF_STORE_KNOWN);
    CHECK_EQ_INT(af_store_add(s2, &c, &err), AF_STORE_KNOWN);
    /* Counts add up across the two: 1 (file) + 1 (s1) + 2 (s2). */
    CHECK_EQ_INT(af_store_flush(s1, 1, &err), 0);
    CHECK_EQ_INT(af_store_flush(s2, 1, &err), 0);
    CHECK_EQ_INT(sidecar_count(af_store_find(s1, c.signature)), 4);
    CHECK_EQ_INT(af_store_find(s2, c.signature)->crash.count, 4);
    af_store_close(s1);
    af_store_close(s2);

    /* A plain file where the dir should be. */
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/shared/crash-device_fault-0.json", g_root);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    af_error_clear(&err);
    CHECK(af_store_open(file, &err) == NULL);
    CHECK_EQ_INT(err.code, AF_E_USAGE);
}

int main(void)
{
    if (!mkdtemp(g_root)) {
        perror("mkdtemp");
        return 1;
    }
    memset(&g_spec, 0, sizeof g_spec);
    g_spec.n_syms = 1;
    snprintf(g_spec.syms[0].name, AF_NAME_MAX, "s0");
    snprintf(g_spec.syms[0].dim_name, AF_NAME_MAX, "n");
    g_spec.syms[0].max = 128;
    g_spec.syms[0].compiled_min = 2;
    g_spec.syms[0].compiled_max = 128;
    test_dedup_and_reload();
    test_two_jobs();
    test_stable_pointers();
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_root);
    TEST_MAIN_END();
}
