/* test_package.c — opening packages: the good path on the fault-injection package and on
 * the real CUDA fixtures, and every refusal on a crafted package, each with its message. */
#include <dlfcn.h>
#include <math.h>
#include <unistd.h>

#include "af_pkgmaker.h"
#include "af_test.h"
#include "aotif/package.h"
#include "aotif/worker.h"

static char tmp[64];

static void expect_refusal(const char *what, const pm_entry *e, int n, const af_package_opts *o,
                           const char *needle)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s.pt2", tmp, what);
    CHECK_EQ_INT(pm_write(path, e, n), 0);
    af_error err = {0};
    af_package *p = af_package_open(path, o, &err);
    if (p) {
        fprintf(stderr, "%s: opened, expected a refusal\n", what);
        CHECK(p == NULL);
        af_package_close(p);
        return;
    }
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK_EQ_INT(af_error_exit_code(&err), 2);
    if (!strstr(err.message, needle)) {
        fprintf(stderr, "%s: message '%s' lacks '%s'\n", what, err.message, needle);
        CHECK(strstr(err.message, needle) != NULL);
    }
    CHECK(strchr(err.message, '\n') == NULL); /* one line */
}

static void test_refusals(void)
{
    const char *so = AF_FAKE_MODEL_PATH;
    pm_entry abs[] = {{"/etc/evil", "x", NULL, 0}, {PM_DIR "c.wrapper.so", NULL, so, 0}};
    expect_refusal("abs", abs, 2, NULL, "absolute path");
    pm_entry dots[] = {{"p/data/aotinductor/model/../../../../evil", "x", NULL, 0},
                       {PM_DIR "c.wrapper.so", NULL, so, 0}};
    expect_refusal("dots", dots, 2, NULL, "'..'");
    pm_entry link[] = {{PM_DIR "c.wrapper.so", "/etc/passwd", NULL, 1}};
    expect_refusal("symlink", link, 1, NULL, "symlink");
    pm_entry big[] = {{PM_DIR "c.wrapper.so", NULL, so, 0}};
    af_package_opts small = {.max_entry_bytes = 1000};
    expect_refusal("big", big, 1, &small, "size limit");
    pm_entry proxy[] = {{PM_DIR "c.wrapper.so", NULL, so, 0},
                        {PM_DIR "c.wrapper.json", "{}", NULL, 0}};
    expect_refusal("proxy", proxy, 2, NULL, "proxy executor");
    /* weights the AOTI model itself keeps in data/weights/ (its weights_config.json) */
    pm_entry pickled[] = {{PM_DIR "c.wrapper.so", NULL, so, 0},
                          {PM_DIR "weights_config.json", "{}", NULL, 0},
                          {"fake/data/weights/w0", "x", NULL, 0}};
    expect_refusal("pickled", pickled, 3, NULL, "keeps its weights outside the .so");
    pm_entry noso[] = {{PM_DIR "c.wrapper.cpp", "int x;", NULL, 0}};
    expect_refusal("noso", noso, 1, NULL, "no compiled model .so");
    pm_entry cpponly[] = {{PM_DIR "c.wrapper.cpp", "int x;", NULL, 0},
                          {PM_DIR "CMakeLists.txt", "project(x)", NULL, 0}};
    expect_refusal("cpponly", cpponly, 2, NULL, "package_cpp_only");
    pm_entry other[] = {{PM_DIR "c.wrapper.so", NULL, so, 0}};
    af_package_opts named = {.model = "other"};
    expect_refusal("othermodel", other, 1, &named, "no model 'other' (models in package: model)");

    /* A unified archive: the exported program's own weights and constants beside the model
     * are not the model's, and the program's JSON is read. */
    {
        char upath[128];
        snprintf(upath, sizeof upath, "%s/unified.pt2", tmp);
        pm_entry unified[] = {{PM_DIR "c.wrapper.so", NULL, so, 0},
                              {"fake/data/weights/weight_0", "x", NULL, 0},
                              {"fake/data/weights/model_weights_config.json", "{}", NULL, 0},
                              {"fake/data/constants/model_constants_config.json", "{}", NULL, 0},
                              {"fake/models/model.json", "{\"graph_module\": {}}", NULL, 0}};
        CHECK_EQ_INT(pm_write(upath, unified, 5), 0);
        af_error uerr = {0};
        af_package *u = af_package_open(upath, NULL, &uerr);
        CHECK(u != NULL);
        if (u) {
            CHECK(u->exported_json && strstr(u->exported_json, "graph_module"));
            CHECK_STR(u->exported_entry, "fake/models/model.json");
            af_package_close(u);
        }
    }

    char path[128];
    snprintf(path, sizeof path, "%s/notzip.pt2", tmp);
    FILE *f = fopen(path, "w");
    fputs("this is not a zip file\n", f);
    fclose(f);
    af_error err = {0};
    CHECK(af_package_open(path, NULL, &err) == NULL);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK(strstr(err.message, "not a valid .pt2 package") != NULL);
    CHECK(af_package_open("/nonexistent/x.pt2", NULL, &err) == NULL);
    CHECK_EQ_INT(af_error_exit_code(&err), 2);
}

static void test_good_package(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/good.pt2", tmp);
    CHECK_EQ_INT(pm_fake_package(path, AF_FAKE_MODEL_PATH, PM_FAKE_META("")), 0);
    af_error err = {0};
    af_package *p = af_package_open(path, NULL, &err);
    CHECK(p != NULL);
    if (!p)
        return;
    struct stat st;
    CHECK_EQ_INT(stat(p->tmpdir, &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0700);
    CHECK_EQ_INT(stat(p->so_path, &st), 0);
    CHECK_STR(p->device, "cpu");
    CHECK(p->metadata_json != NULL);
    /* the digest matches sha256sum's */
    char cmd[256], line[128] = "";
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    FILE *pp = popen(cmd, "r");
    if (pp) {
        if (!fgets(line, sizeof line, pp))
            line[0] = 0;
        pclose(pp);
    }
    CHECK(strncmp(line, p->sha256, 64) == 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", p->tmpdir);
    af_package_close(p);
    CHECK(access(dir, F_OK) != 0); /* removed */
}

/* Step 0 of the aoti-debug guide as errors: wrong ISA, missing ABI, CUDA without a GPU. */
static void test_load_refusals(void)
{
    af_error err = {0};
    char path[128];
    af_spec spec;
    snprintf(path, sizeof path, "%s/neon.pt2", tmp);
    CHECK_EQ_INT(pm_fake_package(path, AF_FAKE_MODEL_PATH, PM_FAKE_META("NEON")), 0);
    af_package *p = af_package_open(path, NULL, &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_EQ_INT(af_package_spec(p, NULL, NULL, &spec, &err), 0);
        af_pool *pool = af_pool_start(p, &spec, NULL, &err);
        CHECK(pool == NULL);
        CHECK_EQ_INT(err.code, AF_E_RUNTIME);
        CHECK(strstr(err.message, "this CPU lacks NEON") != NULL);
        af_pool_stop(pool);
        af_package_close(p);
    }

    /* a .so without the AOTInductor ABI: libm */
    Dl_info info;
    CHECK(dladdr((void *)&cos, &info) != 0);
    snprintf(path, sizeof path, "%s/noabi.pt2", tmp);
    pm_entry noabi[] = {{PM_DIR "c.wrapper.so", NULL, info.dli_fname, 0},
                        {PM_DIR "c.wrapper_metadata.json", PM_FAKE_META(""), NULL, 0}};
    CHECK_EQ_INT(pm_write(path, noabi, 2), 0);
    p = af_package_open(path, NULL, &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_EQ_INT(af_package_spec(p, NULL, NULL, &spec, &err), 0);
        af_pool *pool = af_pool_start(p, &spec, NULL, &err);
        CHECK(pool == NULL);
        CHECK(strstr(err.message,
                     "lacks the AOTI ABI symbol AOTInductorModelContainerCreateWithDevice") !=
              NULL);
        af_pool_stop(pool);
        af_package_close(p);
    }

    /* a real CUDA package, here where no GPU is usable */
    const char *fx = getenv("AF_FIXTURES");
    snprintf(path, sizeof path, "%s/cuda_lasttok.pt2", fx ? fx : "tests/fixtures");
    p = af_package_open(path, NULL, &err);
    CHECK(p != NULL);
    if (p) {
        CHECK_STR(p->device, "cuda");
        CHECK_STR(p->compute_capability, "90");
        CHECK_EQ_INT(p->n_cubins, 1);
        CHECK(p->wrapper_cpp != NULL);
        CHECK_EQ_INT(af_package_spec(p, NULL, NULL, &spec, &err), 0);
        CHECK_EQ_INT(spec.source, AF_SPEC_WRAPPER);
        af_worker_opts o = {0};
        af_pool *pool = af_pool_start(p, &spec, &o, &err);
        if (pool) { /* a GPU machine: nothing to refuse */
            af_pool_stop(pool);
        } else {
            CHECK_EQ_INT(err.code, AF_E_RUNTIME);
            CHECK(strstr(err.message, "CUDA package") != NULL);
        }
        o.device = "cpu";
        pool = af_pool_start(p, &spec, &o, &err);
        CHECK(pool == NULL); /* refused before anything loads: bad input, not a runtime failure */
        CHECK_EQ_INT(err.code, AF_E_USAGE);
        CHECK(strstr(err.message, "was compiled for cuda and runs only there") != NULL);
        af_package_close(p);
    }
}

/* the one reading of device strings */
static void test_device_strings(void)
{
    CHECK(af_device_name_ok("cpu") && af_device_name_ok("cuda") && af_device_name_ok("cuda:3"));
    CHECK(!af_device_name_ok("tpu") && !af_device_name_ok("cuda:") && !af_device_name_ok("cuda:x"));
    CHECK(!af_device_name_ok("cudax") && !af_device_name_ok("cuda:12345") &&
          !af_device_name_ok(NULL));
    CHECK(af_device_is_cuda("cuda") && af_device_is_cuda("cuda:1"));
    CHECK(!af_device_is_cuda("cpu") && !af_device_is_cuda("cudax") && !af_device_is_cuda(NULL));
    CHECK_EQ_INT(af_device_index("cpu"), -1);
    CHECK_EQ_INT(af_device_index("cuda"), 0);
    CHECK_EQ_INT(af_device_index("cuda:0"), 0);
    CHECK_EQ_INT(af_device_index("cuda:7"), 7);
}

int main(void)
{
    test_device_strings();
    snprintf(tmp, sizeof tmp, "/tmp/af_test_pkg_XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    test_refusals();
    test_good_package();
    test_load_refusals();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    TEST_MAIN_END();
}
