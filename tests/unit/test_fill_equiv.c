/* The C fill every run uses (af_runtime_fill, docs/fill.md) against the Python fill that
 * aoti-minimize embeds in every repro.py and the reference imports (the build's copy of
 * harness/python/aotif_fill.py, af_aotif_fill_py): the same values, exactly, on every dtype,
 * every fill mode, several seeds (one past 2^53), input indices and integer ranges. Needs a
 * Python with torch ($AOTI_FUZZ_PYTHON, else python3): exit 77 (skipped) without one. */
#include "af_test.h"
#include "aotif/case.h"
#include "aotif/runtime.h"
#include "aotif/spec.h"
#include "aotif_fill_py.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <unistd.h>

#define N 777

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return sign ? -v : v;
}

static double bf16_to_double(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* element j of a buffer of dtype dt, as a double */
static double elem(const void *buf, af_dtype dt, int64_t j)
{
    switch (dt) {
    case AF_DT_FLOAT32:
        return ((const float *)buf)[j];
    case AF_DT_FLOAT64:
        return ((const double *)buf)[j];
    case AF_DT_FLOAT16:
        return half_to_double(((const uint16_t *)buf)[j]);
    case AF_DT_BFLOAT16:
        return bf16_to_double(((const uint16_t *)buf)[j]);
    case AF_DT_INT64:
        return (double)((const int64_t *)buf)[j];
    case AF_DT_INT32:
        return ((const int32_t *)buf)[j];
    case AF_DT_INT16:
        return ((const int16_t *)buf)[j];
    case AF_DT_INT8:
        return ((const int8_t *)buf)[j];
    case AF_DT_UINT8:
        return ((const uint8_t *)buf)[j];
    case AF_DT_BOOL:
        return ((const uint8_t *)buf)[j];
    default:
        return NAN;
    }
}

typedef struct job {
    af_dtype dt;
    af_fill fill;
    uint64_t seed;
    int input;
    int64_t lo, hi;
} job;

static const char driver[] =
    "import json, sys\n"
    "import torch\n"
    "jobs = json.loads(sys.stdin.read())\n"
    "out = []\n"
    "for j in jobs:\n"
    "    t = fill([j['n']], getattr(torch, j['dtype']), j['i'], int(j['seed']), j['mode'],\n"
    "             (int(j['lo']), int(j['hi'])))\n"
    "    out.append(t.to(torch.float64).tolist())\n"
    "print(json.dumps(out))\n";

int main(void)
{
    const char *py = getenv("AOTI_FUZZ_PYTHON");
    if (!py || !*py)
        py = "python3";
    static job jobs[4096];
    int nj = 0;
    const uint64_t seeds[] = {0, 1, 987654321, (1ULL << 53) + 12345, UINT64_MAX};
    const af_fill fills[] = {AF_FILL_RANDOM, AF_FILL_WIDE, AF_FILL_ZEROS, AF_FILL_ONES};
    for (int dt = 0; dt < AF_DT_COUNT; dt++)
        for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++)
            for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
                for (int i = 0; i < 3; i += 2) {
                    job j = {(af_dtype)dt, fills[f], seeds[s], i, 0, 1};
                    /* integer ranges inside each dtype, the wide fill's doubled span too */
                    if (dt == AF_DT_INT8)
                        j.lo = -60, j.hi = 60;
                    else if (dt == AF_DT_UINT8)
                        j.lo = 0, j.hi = 100;
                    else if (dt == AF_DT_INT16)
                        j.lo = -1000, j.hi = 7000;
                    else if (dt == AF_DT_INT32)
                        j.lo = -100000, j.hi = 1 << 20;
                    else if (dt == AF_DT_INT64)
                        j.lo = -(1LL << 40), j.hi = (1LL << 40) + 17;
                    else if (dt == AF_DT_BOOL)
                        j.lo = 0, j.hi = 1;
                    jobs[nj++] = j;
                }
    /* the jobs as JSON for the Python side (written here: seeds past 2^53 stay exact as text) */
    char tmpl[] = "/tmp/af_fill_equiv_XXXXXX";
    if (!mkdtemp(tmpl))
        return 1;
    char script[256], in_path[256], out_path[256], cmd[1024];
    snprintf(script, sizeof script, "%s/fill_check.py", tmpl);
    snprintf(in_path, sizeof in_path, "%s/jobs.json", tmpl);
    snprintf(out_path, sizeof out_path, "%s/out.json", tmpl);
    FILE *f = fopen(script, "w");
    fputs(af_aotif_fill_py, f);
    fputs("\n", f);
    fputs(driver, f);
    fclose(f);
    f = fopen(in_path, "w");
    fputs("[", f);
    for (int k = 0; k < nj; k++)
        fprintf(f,
                "%s{\"n\": %d, \"dtype\": \"%s\", \"i\": %d, \"seed\": \"%llu\", \"mode\": \"%s\", "
                "\"lo\": \"%lld\", \"hi\": \"%lld\"}",
                k ? ", " : "", N, af_dtype_name(jobs[k].dt), jobs[k].input,
                (unsigned long long)jobs[k].seed, af_fill_name(jobs[k].fill), (long long)jobs[k].lo,
                (long long)jobs[k].hi);
    fputs("]\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' '%s' < '%s' > '%s' 2>/dev/null", py, script, in_path, out_path);
    int rc = system(cmd);
    FILE *o = fopen(out_path, "r");
    static char text[64 << 20];
    size_t len = o ? fread(text, 1, sizeof text - 1, o) : 0;
    if (o)
        fclose(o);
    text[len] = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpl);
    if (rc != 0 || len == 0) {
        printf("skipped: %s could not run the Python fill (no torch?)\n", py);
        return 77;
    }
    cJSON *root = cJSON_Parse(text);
    CHECK(cJSON_IsArray(root) && cJSON_GetArraySize(root) == nj);
    int compared = 0, mismatched_jobs = 0;
    static unsigned char buf[N * 8];
    for (int k = 0; root && k < nj && k < cJSON_GetArraySize(root); k++) {
        af_input in;
        memset(&in, 0, sizeof in);
        in.dtype = jobs[k].dt;
        in.int_lo = jobs[k].lo;
        in.int_hi = jobs[k].hi;
        af_case c;
        memset(&c, 0, sizeof c);
        c.fill = jobs[k].fill;
        c.seed = jobs[k].seed;
        af_runtime_fill(buf, jobs[k].dt, 0, N, &in, jobs[k].input, &c);
        const cJSON *vals = cJSON_GetArrayItem(root, k);
        int bad = cJSON_GetArraySize(vals) != N;
        for (int j = 0; !bad && j < N; j++) {
            double pyv = cJSON_GetArrayItem(vals, j)->valuedouble, cv = elem(buf, jobs[k].dt, j);
            if (pyv != cv) {
                fprintf(stderr,
                        "%s fill=%s seed=%llu input=%d [%lld, %lld] element %d: C %.17g, "
                        "Python %.17g\n",
                        af_dtype_name(jobs[k].dt), af_fill_name(jobs[k].fill),
                        (unsigned long long)jobs[k].seed, jobs[k].input, (long long)jobs[k].lo,
                        (long long)jobs[k].hi, j, cv, pyv);
                bad = 1;
            }
            compared++;
        }
        mismatched_jobs += bad;
    }
    CHECK_EQ_INT(mismatched_jobs, 0);
    CHECK_EQ_INT(compared, nj * N);
    printf("fill equivalence: %d dtype/fill/seed/input combinations, %d values, %d differ\n", nj,
           compared, mismatched_jobs);
    cJSON_Delete(root);
    TEST_MAIN_END();
}
