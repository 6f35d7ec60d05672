/* test_crashfile.c — crash files: write/read round trip, sidecar, atomic writes, the
 * refusal messages for truncated, foreign and wrong-version files, mapping back onto a
 * spec. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "af_test.h"
#include "aotif/crashfile.h"

static char g_dir[] = "/tmp/af_test_crashfile_XXXXXX";

static void make_spec(af_spec *s)
{
    memset(s, 0, sizeof *s);
    s->source = AF_SPEC_FILE;
    s->n_inputs = 1;
    snprintf(s->inputs[0].name, AF_NAME_MAX, "x");
    s->inputs[0].dtype = AF_DT_FLOAT32;
    s->inputs[0].rank = 2;
    s->inputs[0].dims[0] = (af_dim){.sym = 0, .a = 1, .b = 0};
    s->inputs[0].dims[1] = (af_dim){.sym = 1, .a = 1, .b = 0};
    s->n_syms = 2;
    snprintf(s->syms[0].name, AF_NAME_MAX, "s77");
    snprintf(s->syms[0].dim_name, AF_NAME_MAX, "batch");
    s->syms[0].min = 0, s->syms[0].max = 128, s->syms[0].compiled_min = 2;
    s->syms[0].compiled_max = 128;
    snprintf(s->syms[1].name, AF_NAME_MAX, "s12");
    s->syms[1].min = 1, s->syms[1].max = 4096, s->syms[1].compiled_min = 2;
    s->syms[1].compiled_max = 4096;
}

static void make_crash(af_crash *cr, const af_spec *spec)
{
    af_package pkg;
    af_case c;
    af_result r;
    memset(&pkg, 0, sizeof pkg);
    snprintf(pkg.path, sizeof pkg.path, "models/m.pt2");
    snprintf(pkg.abspath, sizeof pkg.abspath, "/abs/models/m.pt2");
    snprintf(pkg.sha256, sizeof pkg.sha256, "%064d", 7);
    snprintf(pkg.model, sizeof pkg.model, "model");
    snprintf(pkg.device, sizeof pkg.device, "cuda");
    memset(&c, 0, sizeof c);
    c.n_syms = 2;
    c.values[0] = 0;
    c.values[1] = 4095;
    c.fill = AF_FILL_ONES;
    c.seed = UINT64_MAX - 5; /* beyond 2^53: must survive JSON */
    memset(&r, 0, sizeof r);
    r.cls = AF_RES_DEVICE_FAULT;
    snprintf(r.signature, sizeof r.signature, "DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS @ k#");
    snprintf(r.message, sizeof r.message, "an illegal memory access \"quoted\"\nsecond line");
    snprintf(r.cuda_error, sizeof r.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    snprintf(r.kernel, sizeof r.kernel, "triton_poi_fused_0");
    snprintf(r.triage, sizeof r.triage, "DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS @ k");
    af_crash_from_run(cr, &pkg, spec, &c, &r, "cuda:1");
}

static void write_raw(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

static void expect_input_error(const char *path, const char *msg)
{
    af_crash cr;
    af_error err;
    af_error_clear(&err);
    CHECK_EQ_INT(af_crash_read(path, &cr, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK_STR(err.message, msg);
    CHECK(strchr(err.message, '\n') == NULL);
}

static int count_temp_files(void)
{
    int n = 0;
    DIR *d = opendir(g_dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strstr(de->d_name, ".tmp-"))
            n++;
    if (d)
        closedir(d);
    return n;
}

static void test_round_trip(const af_spec *spec)
{
    af_crash a, b;
    af_error err;
    char path[512], side[512];
    make_crash(&a, spec);
    CHECK_EQ_INT(a.below_compiled, 1);
    CHECK_EQ_INT(a.count, 1);
    CHECK_STR(a.device, "cuda:1");
    a.flaky = 1;
    a.count = 42;
    snprintf(path, sizeof path, "%s/crash.bin", g_dir);
    af_error_clear(&err);
    CHECK_EQ_INT(af_crash_write(path, &a, &err), 0);
    CHECK_EQ_INT(count_temp_files(), 0);

    FILE *f = fopen(path, "rb");
    char line[64] = "";
    CHECK(f && fgets(line, sizeof line, f));
    if (f)
        fclose(f);
    CHECK_STR(line, "AOTIF-CRASH 1\n");

    CHECK_EQ_INT(af_crash_read(path, &b, &err), 0);
    CHECK_STR(b.package_path, "models/m.pt2");
    CHECK_STR(b.package_abspath, "/abs/models/m.pt2");
    CHECK_STR(b.package_sha256, a.package_sha256);
    CHECK_STR(b.model, "model");
    CHECK_STR(b.device, "cuda:1");
    CHECK_EQ_INT(b.n_syms, 2);
    CHECK_STR(b.sym_names[0], "s77");
    CHECK_STR(b.dim_names[0], "batch");
    CHECK_STR(b.sym_names[1], "s12");
    CHECK_STR(b.dim_names[1], "");
    CHECK_EQ_INT(b.values[0], 0);
    CHECK_EQ_INT(b.values[1], 4095);
    CHECK_EQ_INT(b.fill, AF_FILL_ONES);
    CHECK(b.seed == UINT64_MAX - 5);
    CHECK_EQ_INT(b.cls, AF_RES_DEVICE_FAULT);
    CHECK_STR(b.signature, a.signature);
    CHECK_STR(b.message, a.message);
    CHECK_EQ_INT(b.below_compiled, 1);
    CHECK_EQ_INT(b.flaky, 1);
    CHECK_EQ_INT(b.first_seen, a.first_seen);
    CHECK_EQ_INT(b.count, 42);
    CHECK_STR(b.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK_STR(b.kernel, "triton_poi_fused_0");
    CHECK_STR(b.triage, a.triage);

    /* A crash with no device words has none of those keys, and reads back empty. */
    af_crash cpu = a;
    cpu.cuda_error[0] = cpu.kernel[0] = cpu.triage[0] = '\0';
    char *cj = af_crash_to_json(&cpu);
    CHECK(cj && !strstr(cj, "cuda_error") && !strstr(cj, "kernel") && !strstr(cj, "triage"));
    af_crash back;
    CHECK(cj && af_crash_from_json(cj, strlen(cj), "cpu", &back, &err) == 0 &&
          !back.cuda_error[0] && !back.kernel[0] && !back.triage[0]);
    free(cj);

    /* The sidecar: same object, no header line. */
    CHECK_EQ_INT(af_crash_sidecar_path(path, side, sizeof side), 0);
    CHECK(strstr(side, "/crash.json") != NULL);
    CHECK_EQ_INT(af_crash_write_sidecar(side, &a, &err), 0);
    memset(&b, 0, sizeof b);
    CHECK_EQ_INT(af_crash_read_sidecar(side, &b, &err), 0);
    CHECK_STR(b.signature, a.signature);
    CHECK_EQ_INT(b.count, 42);
    f = fopen(side, "rb");
    CHECK(f && fgetc(f) == '{');
    if (f)
        fclose(f);
    /* A sidecar is not a crash file. */
    expect_input_error(side, "crash.json: not an aoti-fuzz crash file (bad magic)");
    CHECK_EQ_INT(count_temp_files(), 0);

    /* Replace vs no-replace. */
    CHECK_EQ_INT(af_crash_write(path, &a, &err), 0);
    CHECK_EQ_INT(af_crash_create(path, &a, &err), -1);
    CHECK_EQ_INT(err.sys_errno, EEXIST);
    CHECK_EQ_INT(count_temp_files(), 0);
    /* Unwritable destination: fails and leaves nothing behind. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/crash.bin", g_dir);
    CHECK_EQ_INT(af_crash_write(bad, &a, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_IO);

    char other[600];
    snprintf(other, sizeof other, "%s/x", g_dir);
    CHECK_EQ_INT(af_crash_sidecar_path(other, side, sizeof side), 0);
    CHECK(strstr(side, "/x.json") != NULL);
}

static void test_bad_files(const af_spec *spec)
{
    af_crash a;
    char path[512];
    make_crash(&a, spec);
    char *json = af_crash_to_json(&a);
    CHECK(json != NULL);
    if (!json)
        return;
    size_t jl = strlen(json);
    snprintf(path, sizeof path, "%s/crash.bin", g_dir);

    /* Foreign files. */
    write_raw(path, "PK\3\4\0\0garbage", 12);
    expect_input_error(path, "crash.bin: not an aoti-fuzz crash file (bad magic)");
    write_raw(path, "AOTIF-CRASHX 1\n{}", 17);
    expect_input_error(path, "crash.bin: not an aoti-fuzz crash file (bad magic)");
    write_raw(path, "", 0);
    expect_input_error(path, "crash.bin: empty file");

    /* Wrong version, in the header and in the JSON. */
    char *buf = malloc(jl + 64);
    int hl = snprintf(buf, 64, "AOTIF-CRASH 7\n");
    memcpy(buf + hl, json, jl);
    write_raw(path, buf, (size_t)hl + jl);
    expect_input_error(path, "crash.bin: unsupported version 7");
    char *v = strstr(json, "\"version\":\t1");
    CHECK(v != NULL);
    if (v) {
        hl = snprintf(buf, 64, "AOTIF-CRASH 1\n");
        memcpy(buf + hl, json, jl);
        buf[hl + (v - json) + 11] = '3';
        write_raw(path, buf, (size_t)hl + jl);
        expect_input_error(path, "crash.bin: unsupported version 3");
    }

    /* Every cut inside the JSON object is "truncated JSON"; inside the header line,
     * "truncated header line". */
    hl = snprintf(buf, 64, "AOTIF-CRASH 1\n");
    memcpy(buf + hl, json, jl);
    int wrong = 0;
    for (size_t cut = 1; cut < (size_t)hl + jl; cut++) {
        af_crash cr;
        af_error err;
        write_raw(path, buf, cut);
        af_error_clear(&err);
        int rc = af_crash_read(path, &cr, &err);
        const char *want =
            cut < (size_t)hl ? "crash.bin: truncated header line" : "crash.bin: truncated JSON";
        if (cut == (size_t)hl) /* header complete, nothing after it */
            want = "crash.bin: truncated JSON";
        if (rc != -1 || err.code != AF_E_INPUT || strcmp(err.message, want) != 0) {
            if (wrong++ < 5)
                fprintf(stderr, "cut %zu: rc %d, \"%s\", want \"%s\"\n", cut, rc, err.message,
                        want);
        }
    }
    CHECK_EQ_INT(wrong, 0);

    /* Complete file plus garbage; missing field. */
    memcpy(buf + hl + jl, "xx", 2);
    write_raw(path, buf, (size_t)hl + jl + 2);
    expect_input_error(path, "crash.bin: trailing data after the JSON object");
    write_raw(path, "AOTIF-CRASH 1\n{\"format\": \"aoti-fuzz crash\", \"version\": 1}", 57);
    expect_input_error(path, "crash.bin: missing or bad field \"package\"");
    write_raw(path, "AOTIF-CRASH 1\n{\"a\": ]}", 22);
    expect_input_error(path, "crash.bin: malformed JSON at byte 6");

    /* The optional device-fault words, when present, must be strings. */
    char *k = strstr(json, "\"kernel\":");
    CHECK(k != NULL);
    if (k) {
        char *q = strchr(k + 9, '"'), *e = q ? strchr(q + 1, '"') : NULL;
        CHECK(q && e);
        if (q && e) {
            /* "kernel": "triton_poi_fused_0" -> "kernel": 5 (padded with spaces) */
            size_t off = (size_t)(q - json), n = (size_t)(e - q) + 1;
            hl = snprintf(buf, 64, "AOTIF-CRASH 1\n");
            memcpy(buf + hl, json, jl);
            memset(buf + hl + off, ' ', n);
            buf[hl + off] = '5';
            write_raw(path, buf, (size_t)hl + jl);
            expect_input_error(path, "crash.bin: missing or bad field \"kernel\"");
        }
    }
    free(buf);
    free(json);
}

static void test_to_case(const af_spec *spec)
{
    af_crash cr;
    af_case c;
    af_error err;
    af_spec s2;
    make_crash(&cr, spec);

    af_error_clear(&err);
    CHECK_EQ_INT(af_crash_to_case(&cr, spec, &c, &err), 0);
    CHECK_EQ_INT(c.n_syms, 2);
    CHECK_EQ_INT(c.values[0], 0);
    CHECK_EQ_INT(c.values[1], 4095);
    CHECK_EQ_INT(c.fill, AF_FILL_ONES);
    CHECK(c.seed == UINT64_MAX - 5);

    /* Symbols in another order, and renamed but with the same Dim name. */
    s2 = *spec;
    s2.syms[0] = spec->syms[1];
    s2.syms[1] = spec->syms[0];
    snprintf(s2.syms[1].name, AF_NAME_MAX, "s99");
    CHECK_EQ_INT(af_crash_to_case(&cr, &s2, &c, &err), 0);
    CHECK_EQ_INT(c.values[0], 4095);
    CHECK_EQ_INT(c.values[1], 0);

    /* The spec has a symbol the crash does not set. */
    s2 = *spec;
    s2.n_syms = 3;
    snprintf(s2.syms[2].name, AF_NAME_MAX, "s5");
    s2.syms[2].max = 10;
    CHECK_EQ_INT(af_crash_to_case(&cr, &s2, &c, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK_STR(err.message, "the crash file does not set symbol s5 of the spec");

    /* The crash has a symbol the spec lacks. */
    s2 = *spec;
    s2.n_syms = 1;
    CHECK_EQ_INT(af_crash_to_case(&cr, &s2, &c, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK_STR(err.message, "symbol s12 of the crash file is not in the spec");

    /* A value outside the spec's declared range. */
    s2 = *spec;
    s2.syms[1].max = 100;
    CHECK_EQ_INT(af_crash_to_case(&cr, &s2, &c, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
}

int main(void)
{
    af_spec spec;
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    make_spec(&spec);
    test_round_trip(&spec);
    test_bad_files(&spec);
    test_to_case(&spec);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    TEST_MAIN_END();
}
