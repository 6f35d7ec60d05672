/* test_spec.c — the spec module: JSON format (good, malformed, round trip), recovery from
 * real AOTInductor wrapper sources (tests/fixtures/wrappers, values read by hand from the
 * check_input_N functions and run_impl), the inference rules on small synthetic wrappers,
 * and embedded-vs-wrapper agreement on a package exported with harness/python/aotif_export. */
#include "af_test.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aotif/spec.h"

/* ------------------------------------------------------------------ helpers */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *fixture(const char *name)
{
    const char *root = getenv("AF_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fixtures/wrappers/%s", root ? root : ".", name);
    char *text = slurp(path);
    if (!text)
        fprintf(stderr, "cannot read fixture %s (is AF_SOURCE_DIR set?)\n", path);
    return text;
}

/* Replace every occurrence of `from` by `to` (same length) in text. */
static int replace_all(char *text, const char *from, const char *to)
{
    size_t n = strlen(from);
    int count = 0;
    if (strlen(to) != n)
        return -1;
    for (char *p = strstr(text, from); p; p = strstr(p + n, from)) {
        memcpy(p, to, n);
        count++;
    }
    return count;
}

/* Dim d of input i is a*sym(name)+b. */
#define CHECK_DYN(spec, i, d, symname, a_, b_)                                                     \
    do {                                                                                           \
        const af_dim *dd_ = &(spec).inputs[i].dims[d];                                             \
        CHECK(dd_->sym >= 0 && dd_->sym < (spec).n_syms);                                          \
        if (dd_->sym >= 0 && dd_->sym < (spec).n_syms)                                             \
            CHECK_STR((spec).syms[dd_->sym].name, symname);                                        \
        CHECK_EQ_INT(dd_->a, a_);                                                                  \
        CHECK_EQ_INT(dd_->b, b_);                                                                  \
    } while (0)
#define CHECK_STATIC(spec, i, d, v)                                                                \
    do {                                                                                           \
        CHECK_EQ_INT((spec).inputs[i].dims[d].sym, -1);                                            \
        CHECK_EQ_INT((spec).inputs[i].dims[d].b, v);                                               \
    } while (0)
/* Wrapper symbols: declared range == compiled range, no Dim name. */
#define CHECK_WSYM(spec, k, symname, lo, hi)                                                       \
    do {                                                                                           \
        CHECK_STR((spec).syms[k].name, symname);                                                   \
        CHECK_STR((spec).syms[k].dim_name, "");                                                    \
        CHECK_EQ_INT((spec).syms[k].min, lo);                                                      \
        CHECK_EQ_INT((spec).syms[k].compiled_min, lo);                                             \
        CHECK_EQ_INT((spec).syms[k].max, hi);                                                      \
        CHECK_EQ_INT((spec).syms[k].compiled_max, hi);                                             \
    } while (0)

static void check_round_trip(const af_spec *s, int line)
{
    char *json = af_spec_to_json(s);
    CHECK(json != NULL);
    if (!json)
        return;
    af_spec back;
    af_error err = {0};
    int rc = af_spec_from_json(json, s->source, &back, &err);
    /* compared through the JSON again: a memcmp would also compare padding bytes, which
     * struct assignments leave unspecified (and ASan's stacks make differ) */
    char *again = rc == 0 ? af_spec_to_json(&back) : NULL;
    int same = again && strcmp(again, json) == 0 && back.n_inputs == s->n_inputs &&
               back.n_syms == s->n_syms && back.source == s->source;
    free(again);
    if (rc != 0 || !same) {
        fprintf(stderr, "line %d: round trip differs (rc %d: %s)\n%s\n", line, rc, err.message,
                json);
        af_test_failures++;
    }
    free(json);
}
#define CHECK_ROUND_TRIP(s) check_round_trip(s, __LINE__)

static void expect_json_error(const char *json, const char *message, int line)
{
    af_spec s;
    af_error err = {0};
    int rc = af_spec_from_json(json, AF_SPEC_FILE, &s, &err);
    if (rc != -1 || err.code != AF_E_INPUT || strcmp(err.message, message) != 0) {
        fprintf(stderr, "line %d: expected AF_E_INPUT \"%s\"\n   got rc %d code %d \"%s\"\n", line,
                message, rc, (int)err.code, err.message);
        af_test_failures++;
    }
}
#define EXPECT_JSON_ERR(json, msg) expect_json_error(json, msg, __LINE__)

static void expect_wrapper_error(const char *cpp, const char *message, int line)
{
    af_spec s;
    af_error err = {0};
    int rc = af_spec_from_wrapper(cpp, &s, &err);
    if (rc != -1 || err.code != AF_E_INPUT || strcmp(err.message, message) != 0) {
        fprintf(stderr, "line %d: expected AF_E_INPUT \"%s\"\n   got rc %d code %d \"%s\"\n", line,
                message, rc, (int)err.code, err.message);
        af_test_failures++;
    }
}
#define EXPECT_WRAPPER_ERR(cpp, msg) expect_wrapper_error(cpp, msg, __LINE__)

static int parse_wrapper(const char *cpp, af_spec *s)
{
    af_error err = {0};
    int rc = af_spec_from_wrapper(cpp, s, &err);
    if (rc != 0)
        fprintf(stderr, "af_spec_from_wrapper: %s\n", err.message);
    return rc;
}

/* ------------------------------------------------------------------ dtypes */

static void test_dtypes(void)
{
    CHECK_STR(af_dtype_name(AF_DT_FLOAT32), "float32");
    CHECK_STR(af_dtype_name(AF_DT_BFLOAT16), "bfloat16");
    CHECK_STR(af_dtype_name(AF_DT_BOOL), "bool");
    CHECK_STR(af_dtype_name((af_dtype)99), "?");
    CHECK_EQ_INT(af_dtype_from_name("float16"), AF_DT_FLOAT16);
    CHECK_EQ_INT(af_dtype_from_name("torch.int64"), AF_DT_INT64);
    CHECK_EQ_INT(af_dtype_from_name("torch.float"), AF_DT_FLOAT32);
    CHECK_EQ_INT(af_dtype_from_name("half"), AF_DT_FLOAT16);
    CHECK_EQ_INT(af_dtype_from_name("long"), AF_DT_INT64);
    CHECK_EQ_INT(af_dtype_from_name("uint8"), AF_DT_UINT8);
    CHECK_EQ_INT(af_dtype_from_name("complex64"), -1);
    CHECK_EQ_INT(af_dtype_from_name("torch."), -1);
    CHECK_EQ_INT(af_dtype_from_name(""), -1);
    CHECK_EQ_INT(af_dtype_from_name(NULL), -1);
    for (int i = 0; i < AF_DT_COUNT; i++)
        CHECK_EQ_INT(af_dtype_from_name(af_dtype_name((af_dtype)i)), i);
    CHECK_EQ_INT(af_dtype_size(AF_DT_FLOAT64), 8);
    CHECK_EQ_INT(af_dtype_size(AF_DT_BFLOAT16), 2);
    CHECK_EQ_INT(af_dtype_size(AF_DT_INT32), 4);
    CHECK_EQ_INT(af_dtype_size(AF_DT_BOOL), 1);
    CHECK_EQ_INT(af_dtype_size((af_dtype)-1), 0);
    CHECK(af_dtype_is_float(AF_DT_FLOAT16));
    CHECK(af_dtype_is_float(AF_DT_BFLOAT16));
    CHECK(!af_dtype_is_float(AF_DT_INT8));
    CHECK(!af_dtype_is_float(AF_DT_BOOL));
    CHECK_STR(af_spec_source_name(AF_SPEC_EMBEDDED), "embedded");
    CHECK_STR(af_spec_source_name(AF_SPEC_WRAPPER), "wrapper");
    CHECK_STR(af_spec_source_name(AF_SPEC_FILE), "file");
}

/* ------------------------------------------------------------------ JSON */

static const char *example_json =
    "{\"format\": \"aoti-fuzz-spec\", \"version\": 1,\n"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"s77\", 16]},\n"
    "            {\"name\": \"y\", \"dtype\": \"torch.float16\", \"shape\": [\"2*s77\", \"s5\", "
    "3]},\n"
    "            {\"name\": \"z\", \"dtype\": \"int64\", \"shape\": [\"2*s77+1\", \"s77-1\", "
    "\"4\"],\n"
    "             \"int_range\": [-3, 5]},\n"
    "            {\"name\": \"w\", \"dtype\": \"bool\", \"shape\": [\" 3 * n - 2 \", \"seq\"]},\n"
    "            {\"name\": \"scalar\", \"dtype\": \"float64\", \"shape\": []}],\n"
    " \"symbols\": [{\"name\": \"s77\", \"dim\": \"n\", \"min\": 0, \"max\": 128,\n"
    "              \"compiled_min\": 2, \"compiled_max\": 128, \"note\": \"ignored\"},\n"
    "             {\"name\": \"s5\", \"dim\": \"seq\", \"min\": 1, \"max\": 512}]}";

static void test_json_parse(void)
{
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_json(example_json, AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(err.code, AF_OK);
    CHECK_EQ_INT(s.source, AF_SPEC_FILE);
    CHECK_EQ_INT(s.n_inputs, 5);
    CHECK_EQ_INT(s.n_syms, 2);

    CHECK_STR(s.syms[0].name, "s77");
    CHECK_STR(s.syms[0].dim_name, "n");
    CHECK_EQ_INT(s.syms[0].min, 0);
    CHECK_EQ_INT(s.syms[0].max, 128);
    CHECK_EQ_INT(s.syms[0].compiled_min, 2);
    CHECK_EQ_INT(s.syms[0].compiled_max, 128);
    CHECK_STR(s.syms[1].name, "s5");
    CHECK_STR(s.syms[1].dim_name, "seq");
    CHECK_EQ_INT(s.syms[1].min, 1); /* compiled bounds default to the declared ones */
    CHECK_EQ_INT(s.syms[1].max, 512);
    CHECK_EQ_INT(s.syms[1].compiled_min, 1);
    CHECK_EQ_INT(s.syms[1].compiled_max, 512);

    CHECK_STR(s.inputs[0].name, "x");
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_FLOAT32);
    CHECK_EQ_INT(s.inputs[0].rank, 2);
    CHECK_DYN(s, 0, 0, "s77", 1, 0);
    CHECK_STATIC(s, 0, 1, 16);
    CHECK_EQ_INT(s.inputs[0].int_lo, 0); /* no int_range: valid for any table, assumed */
    CHECK_EQ_INT(s.inputs[0].int_hi, AF_INT_ASSUMED_HI);
    CHECK_EQ_INT(s.inputs[0].int_from, AF_FROM_ASSUMED);
    CHECK_EQ_INT(s.inputs[0].name_from, AF_FROM_FILE);
    CHECK_EQ_INT(s.inputs[2].int_from, AF_FROM_FILE); /* stated in the file */
    CHECK_EQ_INT(s.syms[0].decl_from, AF_FROM_FILE);
    CHECK_EQ_INT(s.syms[0].decl_min, s.syms[0].min);

    CHECK_EQ_INT(s.inputs[1].dtype, AF_DT_FLOAT16);
    CHECK_EQ_INT(s.inputs[1].rank, 3);
    CHECK_DYN(s, 1, 0, "s77", 2, 0);
    CHECK_DYN(s, 1, 1, "s5", 1, 0);
    CHECK_STATIC(s, 1, 2, 3);

    CHECK_EQ_INT(s.inputs[2].dtype, AF_DT_INT64);
    CHECK_DYN(s, 2, 0, "s77", 2, 1);
    CHECK_DYN(s, 2, 1, "s77", 1, -1);
    CHECK_STATIC(s, 2, 2, 4); /* "4" is a static dim too */
    CHECK_EQ_INT(s.inputs[2].int_lo, -3);
    CHECK_EQ_INT(s.inputs[2].int_hi, 5);

    /* Dim names work in place of symbol names; spaces around operators are fine. */
    CHECK_EQ_INT(s.inputs[3].dtype, AF_DT_BOOL);
    CHECK_DYN(s, 3, 0, "s77", 3, -2);
    CHECK_DYN(s, 3, 1, "s5", 1, 0);

    CHECK_EQ_INT(s.inputs[4].rank, 0);
    CHECK_EQ_INT(s.inputs[4].dtype, AF_DT_FLOAT64);

    /* Symbols are optional when nothing is dynamic; sources are recorded as given. */
    CHECK_EQ_INT(af_spec_from_json("{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":"
                                   "[{\"name\":\"a\",\"dtype\":\"int8\",\"shape\":[2,3]}]}",
                                   AF_SPEC_EMBEDDED, &s, &err),
                 0);
    CHECK_EQ_INT(s.source, AF_SPEC_EMBEDDED);
    CHECK_EQ_INT(s.n_syms, 0);
    CHECK_STATIC(s, 0, 1, 3);
}

/* A spec whose first input's shape is `shape` (a JSON array text), with symbols s77, s5. */
static const char *with_shape(const char *shape)
{
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"format\":\"aoti-fuzz-spec\",\"version\":1,\"inputs\":[{\"name\":\"x\","
             "\"dtype\":\"float32\",\"shape\":%s}],\"symbols\":[{\"name\":\"s77\",\"dim\":\"n\","
             "\"min\":0,\"max\":128},{\"name\":\"s5\",\"min\":1,\"max\":8}]}",
             shape);
    return buf;
}

#define HEAD "{\"format\":\"aoti-fuzz-spec\",\"version\":1,"
#define SYM77 "\"symbols\":[{\"name\":\"s77\",\"min\":0,\"max\":128}]"
#define IN_X "{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[\"s77\"]}"

static void test_json_errors(void)
{
    EXPECT_JSON_ERR("not json", "spec: invalid JSON near line 1, column 1");
    EXPECT_JSON_ERR("{\"format\": \"aoti-fuzz-spec\",\n \"version\": 1,,}",
                    "spec: invalid JSON near line 2, column 16");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[]} trailing", "spec: invalid JSON near line 1, column 53");
    EXPECT_JSON_ERR("[1, 2]", "spec: the top level must be a JSON object");
    EXPECT_JSON_ERR("{\"version\":1,\"inputs\":[]}", "spec: \"format\" must be \"aoti-fuzz-spec\"");
    EXPECT_JSON_ERR("{\"format\":\"onnx\",\"version\":1,\"inputs\":[]}",
                    "spec: \"format\" must be \"aoti-fuzz-spec\"");
    EXPECT_JSON_ERR("{\"format\":\"aoti-fuzz-spec\",\"inputs\":[]}",
                    "spec: \"version\" must be the integer 1");
    EXPECT_JSON_ERR("{\"format\":\"aoti-fuzz-spec\",\"version\":2,\"inputs\":[]}",
                    "spec: unsupported version 2 (this reads 1)");
    EXPECT_JSON_ERR(HEAD SYM77 "}", "spec: missing \"inputs\"");
    EXPECT_JSON_ERR(HEAD "\"inputs\":{}}", "spec: \"inputs\" must be an array");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[5]}", "spec: inputs[0]: must be an object");
    EXPECT_JSON_ERR(HEAD "\"symbols\":{},\"inputs\":[]}", "spec: \"symbols\" must be an array");

    /* inputs */
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"dtype\":\"float32\",\"shape\":[]}]}",
                    "spec: inputs[0]: missing \"name\"");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":7,\"dtype\":\"float32\",\"shape\":[]}]}",
                    "spec: inputs[0]: \"name\" must be a string");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"\",\"dtype\":\"float32\",\"shape\":[]}]}",
                    "spec: inputs[0]: \"name\" is empty");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"float32\",\"shape\":[]},"
                         "{\"name\":\"a\",\"dtype\":\"float32\",\"shape\":[]}]}",
                    "spec: inputs[1]: duplicate input name 'a'");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"complex64\",\"shape\":[]}]}",
                    "spec: inputs[0]: unknown dtype 'complex64'");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"shape\":[]}]}",
                    "spec: inputs[0]: missing \"dtype\"");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"float32\"}]}",
                    "spec: inputs[0]: missing \"shape\"");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"float32\",\"shape\":\"s77\"}]}",
                    "spec: inputs[0]: \"shape\" must be an array");
    EXPECT_JSON_ERR(with_shape("[1,2,3,4,5,6,7,8,9]"),
                    "spec: inputs[0]: rank 9 exceeds the limit of 8");

    /* shape entries */
    EXPECT_JSON_ERR(with_shape("[16, \"s9\"]"), "spec: inputs[0].shape[1]: unknown symbol 's9'");
    EXPECT_JSON_ERR(with_shape("[-1]"), "spec: inputs[0].shape[0]: static size -1 is negative");
    EXPECT_JSON_ERR(with_shape("[1.5]"),
                    "spec: inputs[0].shape[0]: must be an integer or a string like \"2*s77+1\"");
    EXPECT_JSON_ERR(with_shape("[null]"),
                    "spec: inputs[0].shape[0]: must be an integer or a string like \"2*s77+1\"");
    EXPECT_JSON_ERR(with_shape("[1e300]"),
                    "spec: inputs[0].shape[0]: is out of range (at most 2^53)");
    EXPECT_JSON_ERR(with_shape("[\"0*s77\"]"),
                    "spec: inputs[0].shape[0]: coefficient must be >= 1 in '0*s77'");
    EXPECT_JSON_ERR(with_shape("[\"99999999999999999999*s77\"]"),
                    "spec: inputs[0].shape[0]: number out of range in "
                    "'99999999999999999999*s77' (at most 2^53)");
    static const char *bad_exprs[] = {
        "2**s77", "s77+", "s77 1",  "2*",       "*s77",  "s77*2", "-s77",  "s77+s5", "2*s77*3",
        "(s77)",  "",     "s77+-1", "s77 + 1x", "1+s77", "2s77",  "s77/2", "-3",     "3 4",
    };
    for (size_t i = 0; i < sizeof bad_exprs / sizeof bad_exprs[0]; i++) {
        char shape[128], msg[512];
        snprintf(shape, sizeof shape, "[\"%s\"]", bad_exprs[i]);
        snprintf(msg, sizeof msg,
                 "spec: inputs[0].shape[0]: bad dim expression '%s' (expected an integer, "
                 "SYM, a*SYM, SYM+b, SYM-b or a*SYM+b)",
                 bad_exprs[i]);
        expect_json_error(with_shape(shape), msg, __LINE__);
    }

    /* int_range */
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"int32\",\"shape\":[],"
                         "\"int_range\":[5,1]}]}",
                    "spec: inputs[0].int_range: lo 5 > hi 1");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"int32\",\"shape\":[],"
                         "\"int_range\":[1]}]}",
                    "spec: inputs[0].int_range: must be an array [lo, hi]");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"int32\",\"shape\":[],"
                         "\"int_range\":[0,\"9\"]}]}",
                    "spec: inputs[0].int_range: lo and hi must be integers within +-2^53");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"uint8\",\"shape\":[],"
                         "\"int_range\":[0,300]}]}",
                    "spec: inputs[0].int_range: [0, 300] does not fit uint8");
    EXPECT_JSON_ERR(HEAD "\"inputs\":[{\"name\":\"a\",\"dtype\":\"bool\",\"shape\":[],"
                         "\"int_range\":[0,2]}]}",
                    "spec: inputs[0].int_range: [0, 2] does not fit bool");

    /* symbols */
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":5,\"max\":3}],\"inputs\":[]}",
                    "spec: symbols[0]: min 5 > max 3");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":-1,\"max\":3}],\"inputs\":[]}",
                    "spec: symbols[0]: min -1 is negative");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"max\":3}],\"inputs\":[]}",
                    "spec: symbols[0]: missing \"min\"");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":0}],\"inputs\":[]}",
                    "spec: symbols[0]: missing \"max\"");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":0,\"max\":\"8\"}],\"inputs\":[]}",
                    "spec: symbols[0]: \"max\" must be an integer");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":0,\"max\":1e17}],\"inputs\":[]}",
                    "spec: symbols[0]: \"max\" is out of range (|value| <= 2^53)");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":0,\"max\":8,"
                         "\"compiled_min\":9}],\"inputs\":[]}",
                    "spec: symbols[0]: compiled_min 9 > compiled_max 8");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s77\",\"min\":0,\"max\":8,"
                         "\"compiled_min\":-2}],\"inputs\":[]}",
                    "spec: symbols[0]: compiled_min -2 is negative");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s 7\",\"min\":0,\"max\":8}],\"inputs\":[]}",
                    "spec: symbols[0]: name 's 7' is not an identifier");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s7\",\"dim\":\"2n\",\"min\":0,\"max\":8}],"
                         "\"inputs\":[]}",
                    "spec: symbols[0]: dim '2n' is not an identifier");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s7\",\"min\":0,\"max\":8},"
                         "{\"name\":\"s7\",\"min\":0,\"max\":8}],\"inputs\":[]}",
                    "spec: symbols[1]: duplicate symbol 's7'");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":\"s7\",\"dim\":\"n\",\"min\":0,\"max\":8},"
                         "{\"name\":\"s8\",\"dim\":\"n\",\"min\":0,\"max\":8}],\"inputs\":[]}",
                    "spec: symbols[1]: duplicate dim 'n'");
    EXPECT_JSON_ERR(HEAD "\"symbols\":[{\"name\":"
                         "\"s1234567890123456789012345678901234567890123456789012345678901234\","
                         "\"min\":0,\"max\":8}],\"inputs\":[]}",
                    "spec: symbols[0]: \"name\" is longer than 63 characters");

    /* The AF_MAX_* limits. */
    char *big = malloc(64 * 1024);
    size_t off = (size_t)snprintf(big, 64 * 1024, HEAD "\"inputs\":[");
    for (int i = 0; i < AF_MAX_INPUTS + 1; i++)
        off += (size_t)snprintf(big + off, 64 * 1024 - off,
                                "%s{\"name\":\"i%d\",\"dtype\":\"float32\",\"shape\":[]}",
                                i ? "," : "", i);
    snprintf(big + off, 64 * 1024 - off, "]}");
    EXPECT_JSON_ERR(big, "spec: too many inputs (65; at most 64)");
    off = (size_t)snprintf(big, 64 * 1024, HEAD "\"inputs\":[],\"symbols\":[");
    for (int k = 0; k < AF_MAX_SYMS + 1; k++)
        off += (size_t)snprintf(big + off, 64 * 1024 - off,
                                "%s{\"name\":\"s%d\",\"min\":0,\"max\":1}", k ? "," : "", k);
    snprintf(big + off, 64 * 1024 - off, "]}");
    EXPECT_JSON_ERR(big, "spec: too many symbols (33; at most 32)");
    free(big);

    /* Just at the limits is fine. */
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_json(with_shape("[1,2,3,4,5,6,7,\"s77\"]"), AF_SPEC_FILE, &s, &err),
                 0);
    CHECK_EQ_INT(s.inputs[0].rank, 8);
    CHECK_EQ_INT(af_spec_from_json(with_shape("[9007199254740992]"), AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(s.inputs[0].dims[0].b, AF_INT_LIMIT);
}

static void test_json_round_trip(void)
{
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_json(example_json, AF_SPEC_FILE, &s, &err), 0);
    CHECK_ROUND_TRIP(&s);
    char *json = af_spec_to_json(&s);
    CHECK(json && strstr(json, "\"2*s77+1\""));
    CHECK(json && strstr(json, "\"s77-1\""));
    CHECK(json && strstr(json, "\"3*s77-2\"")); /* the Dim name resolved to its symbol */
    free(json);

    /* Unusual but legal values survive too. */
    CHECK_EQ_INT(af_spec_from_json(HEAD
                                   "\"inputs\":[{\"name\":\"f\",\"dtype\":\"float32\",\"shape\":[],"
                                   "\"int_range\":[-9007199254740992,9007199254740992]}],"
                                   "\"symbols\":[{\"name\":\"big\",\"min\":9007199254740991,"
                                   "\"max\":9007199254740992}]}",
                                   AF_SPEC_EMBEDDED, &s, &err),
                 0);
    CHECK_EQ_INT(s.inputs[0].int_lo, -AF_INT_LIMIT);
    CHECK_EQ_INT(s.syms[0].min, AF_INT_LIMIT - 1);
    CHECK_ROUND_TRIP(&s);
}

static void test_find_shape_print(void)
{
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_json(example_json, AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(af_spec_find_symbol(&s, "s77"), 0);
    CHECK_EQ_INT(af_spec_find_symbol(&s, "n"), 0);
    CHECK_EQ_INT(af_spec_find_symbol(&s, "seq"), 1);
    CHECK_EQ_INT(af_spec_find_symbol(&s, "s5"), 1);
    CHECK_EQ_INT(af_spec_find_symbol(&s, "batch"), -1);
    CHECK_EQ_INT(af_spec_find_symbol(&s, ""), -1);
    CHECK_EQ_INT(af_spec_find_symbol(&s, NULL), -1);

    char buf[128];
    af_spec_shape_str(&s, 0, NULL, buf, sizeof buf);
    CHECK_STR(buf, "(s77, 16)");
    af_spec_shape_str(&s, 2, NULL, buf, sizeof buf);
    CHECK_STR(buf, "(2*s77+1, s77-1, 4)");
    int64_t v[AF_MAX_SYMS] = {0, 7};
    af_spec_shape_str(&s, 0, v, buf, sizeof buf);
    CHECK_STR(buf, "(0, 16)");
    af_spec_shape_str(&s, 2, v, buf, sizeof buf);
    CHECK_STR(buf, "(1, -1, 4)");
    v[0] = 3;
    af_spec_shape_str(&s, 1, v, buf, sizeof buf);
    CHECK_STR(buf, "(6, 7, 3)");
    af_spec_shape_str(&s, 4, v, buf, sizeof buf);
    CHECK_STR(buf, "()");
    af_spec_shape_str(&s, 5, v, buf, sizeof buf);
    CHECK_STR(buf, "");
    char tiny[6];
    af_spec_shape_str(&s, 2, NULL, tiny, sizeof tiny);
    CHECK_STR(tiny, "(2*s7"); /* truncated, still terminated */

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    af_spec_print(&s, f);
    fclose(f);
    CHECK_STR(
        text,
        "spec (file): 5 inputs, 2 symbols\n"
        "  contract: spec file\n"
        "  input 0 x (name: spec file): float32 (s77, 16)\n"
        "  input 1 y (name: spec file): float16 (2*s77, s5, 3)\n"
        "  input 2 z (name: spec file): int64 (2*s77+1, s77-1, 4) values [-3, 5] (spec file)\n"
        "  input 3 w (name: spec file): bool (3*s77-2, s5)\n"
        "  input 4 scalar (name: spec file): float64 ()\n"
        "  symbol s77 (n): declared [0, 128] (spec file), compiled [2, 128]\n"
        "  symbol s5 (seq): declared [1, 512] (spec file), compiled [1, 512]\n"
        "  contract gaps (declared legal, assumed away by the compiled code; "
        "AOTI_RUNTIME_CHECK_INPUTS=1 rejects them too):\n"
        "    s77 (n): declared [0, 128], compiled [2, 128]: sizes 0..1\n");
    free(text);
}

static void test_from_file(void)
{
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_file("/nonexistent/aotif/spec.json", &s, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_IO);
    CHECK_EQ_INT(err.sys_errno, ENOENT);
    CHECK(strstr(err.message, "/nonexistent/aotif/spec.json") != NULL);

    char path[] = "/tmp/aotif_test_spec_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const char *bad = with_shape("[\"s9\"]");
    CHECK(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    CHECK_EQ_INT(af_spec_from_file(path, &s, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    char want[512];
    snprintf(want, sizeof want, "%s: spec: inputs[0].shape[0]: unknown symbol 's9'", path);
    CHECK_STR(err.message, want);

    FILE *f = fopen(path, "w");
    fputs(example_json, f);
    fclose(f);
    CHECK_EQ_INT(af_spec_from_file(path, &s, &err), 0);
    CHECK_EQ_INT(s.source, AF_SPEC_FILE);
    CHECK_EQ_INT(s.n_inputs, 5);
    unlink(path);

    CHECK_EQ_INT(af_spec_from_file("/tmp", &s, &err), -1);
    CHECK_EQ_INT(err.code, AF_E_INPUT);
    CHECK_STR(err.message, "/tmp: not a regular file");
}

/* ------------------------------------------------------------------ real wrappers */

/* Every value below was read by hand from the fixture's check_input_N functions (the
 * "too small"/"too large"/"unmatched dim value" messages) and run_impl's bindings. */

static void test_wrapper_cuda_lasttok(void)
{
    /* x: (s, 16), s in [0, 128] at export; compiled checks >= 2, <= 128 (line 715, 723),
     * dim 1 == 16; run_impl: int64_t s77 = arg0_1_size[0]. */
    char *cpp = fixture("cuda_lasttok.wrapper.cpp");
    af_spec s;
    CHECK(cpp && parse_wrapper(cpp, &s) == 0);
    if (!cpp)
        return;
    CHECK_EQ_INT(s.source, AF_SPEC_WRAPPER);
    CHECK_EQ_INT(s.n_inputs, 1);
    CHECK_STR(s.inputs[0].name, "arg0_1");
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_FLOAT32);
    CHECK_EQ_INT(s.inputs[0].rank, 2);
    CHECK_DYN(s, 0, 0, "s77", 1, 0);
    CHECK_STATIC(s, 0, 1, 16);
    CHECK_EQ_INT(s.inputs[0].int_lo, 0);
    CHECK_EQ_INT(s.inputs[0].int_hi, AF_INT_ASSUMED_HI);
    CHECK_EQ_INT(s.inputs[0].name_from, AF_FROM_WRAPPER);
    CHECK_EQ_INT(s.n_syms, 1);
    CHECK_WSYM(s, 0, "s77", 2, 128);
    CHECK_EQ_INT(s.syms[0].decl_from, AF_FROM_ASSUMED); /* the wrapper knows no declared range */
    CHECK_ROUND_TRIP(&s);
    free(cpp);
}

static void test_wrapper_cuda_healthy(void)
{
    /* relu(Linear(16, 8)(x)): the input is arg2_1 (the weights took arg0/arg1), (b, 16),
     * b >= 2 and <= 256; int64_t s77 = arg2_1_size[0]. */
    char *cpp = fixture("cuda_healthy.wrapper.cpp");
    af_spec s;
    CHECK(cpp && parse_wrapper(cpp, &s) == 0);
    if (!cpp)
        return;
    CHECK_EQ_INT(s.n_inputs, 1);
    CHECK_STR(s.inputs[0].name, "arg2_1");
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_FLOAT32);
    CHECK_EQ_INT(s.inputs[0].rank, 2);
    CHECK_DYN(s, 0, 0, "s77", 1, 0);
    CHECK_STATIC(s, 0, 1, 16);
    CHECK_EQ_INT(s.n_syms, 1);
    CHECK_WSYM(s, 0, "s77", 2, 256);
    CHECK_ROUND_TRIP(&s);
    free(cpp);
}

static void test_wrapper_cuda_derived(void)
{
    /* x: (n, 16) checks >= 2, <= 64; y: (2n, 16) checks >= 4, <= 128; only
     * `int64_t s77 = arg0_1_size[0];` in run_impl, so y's dim 0 is inferred: 2*s77. */
    char *cpp = fixture("cuda_derived.wrapper.cpp");
    af_spec s;
    CHECK(cpp && parse_wrapper(cpp, &s) == 0);
    if (!cpp)
        return;
    CHECK_EQ_INT(s.n_inputs, 2);
    CHECK_STR(s.inputs[0].name, "arg0_1");
    CHECK_STR(s.inputs[1].name, "arg1_1");
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(s.inputs[i].dtype, AF_DT_FLOAT32);
        CHECK_EQ_INT(s.inputs[i].rank, 2);
        CHECK_STATIC(s, i, 1, 16);
    }
    CHECK_DYN(s, 0, 0, "s77", 1, 0);
    CHECK_DYN(s, 1, 0, "s77", 2, 0);
    CHECK_EQ_INT(s.n_syms, 1);
    CHECK_WSYM(s, 0, "s77", 2, 64);
    CHECK_ROUND_TRIP(&s);

    /* Without the binding (renamed so it is not a symbol), both dims come from the
     * ranges alone: x's dim gets a symbol of its own and y's is derived from it. */
    CHECK_EQ_INT(replace_all(cpp, "int64_t s77 = arg0_1_size[0];", "int64_t q77 = arg0_1_size[0];"),
                 1);
    CHECK(parse_wrapper(cpp, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 1);
    CHECK_DYN(s, 0, 0, "arg0_1_size_0", 1, 0);
    CHECK_DYN(s, 1, 0, "arg0_1_size_0", 2, 0);
    CHECK_WSYM(s, 0, "arg0_1_size_0", 2, 64);
    free(cpp);
}

static void test_wrapper_cpu_derived(void)
{
    /* torch 2.13 CPU: x: (n, 16) [2, 64]; y: (2n, 16) [4, 128]; idx: int64 (m, 5) with
     * Dim m min=0 compiled to >= 2, <= 32. Bindings s77 = arg0_1_size[0],
     * s95 = arg2_1_size[0]; assert_size_stride(arg1_1, {2L*s77, 16L}, ...). */
    char *cpp = fixture("cpu_derived.wrapper.cpp");
    af_spec s;
    CHECK(cpp && parse_wrapper(cpp, &s) == 0);
    if (!cpp)
        return;
    CHECK_EQ_INT(s.n_inputs, 3);
    CHECK_STR(s.inputs[2].name, "arg2_1");
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_FLOAT32);
    CHECK_EQ_INT(s.inputs[1].dtype, AF_DT_FLOAT32);
    CHECK_EQ_INT(s.inputs[2].dtype, AF_DT_INT64);
    CHECK_EQ_INT(s.inputs[0].rank, 2);
    CHECK_EQ_INT(s.inputs[1].rank, 2);
    CHECK_EQ_INT(s.inputs[2].rank, 2);
    CHECK_DYN(s, 0, 0, "s77", 1, 0);
    CHECK_STATIC(s, 0, 1, 16);
    CHECK_DYN(s, 1, 0, "s77", 2, 0);
    CHECK_STATIC(s, 1, 1, 16);
    CHECK_DYN(s, 2, 0, "s95", 1, 0);
    CHECK_STATIC(s, 2, 1, 5);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_WSYM(s, 0, "s77", 2, 64);
    CHECK_WSYM(s, 1, "s95", 2, 32);
    CHECK_ROUND_TRIP(&s);
    free(cpp);
}

static void check_cpu_multi(const af_spec *sp)
{
    const af_spec s = *sp;
    CHECK_EQ_INT(s.n_inputs, 5);
    static const char *names[] = {"arg0_1", "arg1_1", "arg2_1", "arg3_1", "arg4_1"};
    static const int dts[] = {AF_DT_FLOAT32, AF_DT_FLOAT32, AF_DT_BFLOAT16, AF_DT_INT32,
                              AF_DT_FLOAT32};
    static const int ranks[] = {2, 2, 3, 1, 1};
    for (int i = 0; i < 5; i++) {
        CHECK_STR(s.inputs[i].name, names[i]);
        CHECK_EQ_INT(s.inputs[i].dtype, dts[i]);
        CHECK_EQ_INT(s.inputs[i].rank, ranks[i]);
    }
    CHECK_DYN(s, 0, 0, "s68", 2, 0); /* y: >= 4, <= 128 */
    CHECK_STATIC(s, 0, 1, 4);
    CHECK_DYN(s, 1, 0, "s68", 1, 0); /* x: >= 2, <= 64 */
    CHECK_STATIC(s, 1, 1, 4);
    CHECK_DYN(s, 2, 0, "s68", 1, 0); /* z: >= 2, <= 64; >= 2, <= 8; 3 */
    CHECK_DYN(s, 2, 1, "s32", 1, 0);
    CHECK_STATIC(s, 2, 2, 3);
    CHECK_STATIC(s, 3, 0, 7);        /* w */
    CHECK_DYN(s, 4, 0, "s68", 1, 1); /* v: >= 3, <= 65 */
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_WSYM(s, 0, "s68", 2, 64);
    CHECK_WSYM(s, 1, "s32", 2, 8);
}

static void test_wrapper_cpu_multi(void)
{
    /* y: (2n, 4) comes first, so run_impl solves n from it:
     *   int64_t arg0_1_size_0 = arg0_1_size[0]; int64_t s68 = (1.0/2.0)*arg0_1_size_0;
     * and spells out the rest: assert_size_stride(arg4_1, {1L + s68, }, ...). */
    char *cpp = fixture("cpu_multi.wrapper.cpp");
    af_spec s;
    CHECK(cpp && parse_wrapper(cpp, &s) == 0);
    if (!cpp)
        return;
    check_cpu_multi(&s);
    CHECK_ROUND_TRIP(&s);

    /* The same answer from the bindings and the ranges alone... */
    CHECK_EQ_INT(replace_all(cpp, "assert_size_stride(", "assert_xxxx_xxxxxx("), 5);
    CHECK(parse_wrapper(cpp, &s) == 0);
    check_cpu_multi(&s);
    /* With the solved binding hidden too, n is first met as y's [4, 128]: that gets a
     * symbol of its own, and x's [2, 64] cannot be a*[4, 128]+b with a >= 1, so it gets
     * another; z and v then follow x. This is what the ranges alone can say. */
    CHECK_EQ_INT(replace_all(cpp, "int64_t s68 =", "int64_t q68 ="), 1);
    CHECK(parse_wrapper(cpp, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 3);
    CHECK_DYN(s, 0, 0, "arg0_1_size_0", 1, 0);
    CHECK_DYN(s, 1, 0, "arg1_1_size_0", 1, 0);
    CHECK_DYN(s, 2, 0, "arg1_1_size_0", 1, 0);
    CHECK_DYN(s, 2, 1, "s32", 1, 0);
    CHECK_DYN(s, 4, 0, "arg1_1_size_0", 1, 1);
    CHECK_WSYM(s, 0, "arg0_1_size_0", 4, 128);
    CHECK_WSYM(s, 1, "arg1_1_size_0", 2, 64);
    CHECK_WSYM(s, 2, "s32", 2, 8);
    free(cpp);
}

static void test_embedded_vs_wrapper(void)
{
    /* cpu_multi.wrapper_metadata.json is the metadata of the same package as
     * cpu_multi.wrapper.cpp, exported by harness/python/aotif_export.py. */
    char *meta = fixture("cpu_multi.wrapper_metadata.json");
    char *cpp = fixture("cpu_multi.wrapper.cpp");
    CHECK(meta && cpp);
    if (!meta || !cpp)
        goto done;
    cJSON *root = cJSON_Parse(meta);
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(root, "aoti_fuzz.spec");
    CHECK(cJSON_IsString(js));
    af_spec emb, wrap;
    af_error err = {0};
    CHECK_EQ_INT(
        af_spec_from_json(cJSON_IsString(js) ? js->valuestring : "", AF_SPEC_EMBEDDED, &emb, &err),
        0);
    cJSON_Delete(root);
    CHECK_EQ_INT(parse_wrapper(cpp, &wrap), 0);

    CHECK_STR(emb.inputs[0].name, "y");
    CHECK_STR(emb.inputs[4].name, "v");
    CHECK_STR(emb.syms[0].dim_name, "n");
    CHECK_STR(emb.syms[1].dim_name, "k");
    CHECK_EQ_INT(emb.syms[0].min, 1); /* as declared: Dim("n", min=1, max=64) */
    CHECK_EQ_INT(emb.syms[1].min, 0); /* Dim("k", min=0, max=8) */
    CHECK_EQ_INT(emb.inputs[3].int_lo, -5);
    CHECK_EQ_INT(emb.inputs[3].int_hi, 5);

    /* The compiled lower bounds (2, 2) are only in the wrapper. */
    char why[256];
    CHECK_EQ_INT(af_spec_compare(&emb, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "symbol s68/s68: max 64 vs 64, compiled [1, 64] vs [2, 64]");
    CHECK_EQ_INT(af_spec_merge_compiled(&emb, &wrap), 2);
    CHECK_EQ_INT(emb.syms[0].compiled_min, 2);
    CHECK_EQ_INT(emb.syms[1].compiled_min, 2);
    CHECK_EQ_INT(emb.syms[0].min, 1); /* the declared range is untouched */
    CHECK_EQ_INT(emb.syms[1].min, 0);
    CHECK_EQ_INT(af_spec_compare(&emb, &wrap, why, sizeof why), 0);
    CHECK_STR(why, "");
    CHECK_EQ_INT(af_spec_compare(&wrap, &emb, NULL, 0), 0);

    /* Each kind of difference is found and named. */
    af_spec x = emb;
    x.inputs[2].dtype = AF_DT_FLOAT32;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "input 2 (z/arg2_1): dtype float32 vs bfloat16");
    x = emb;
    x.inputs[4].dims[0].b = 2;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "input 4 (v/arg4_1): dim 0: s68+2 vs s68+1");
    x = emb;
    x.inputs[2].dims[1].sym = 0; /* z: (n, n, 3) instead of (n, k, 3) */
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "input 2 (z/arg2_1): dim 1: s68 vs s32");
    x = emb;
    x.inputs[3].dims[0].b = 8;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "input 3 (w/arg3_1): dim 0: 8 vs 7");
    x = emb;
    x.inputs[3].rank = 2;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "input 3 (w/arg3_1): rank 2 vs 1");
    x = emb;
    x.n_inputs = 4;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "4 inputs vs 5");
    x = emb;
    x.syms[1].max = 9;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), -1);
    CHECK_STR(why, "symbol s32/s32: max 9 vs 8, compiled [2, 8] vs [2, 8]");

    /* Symbols match by first use, not by index or name. */
    x = wrap;
    af_symbol t = x.syms[0];
    x.syms[0] = x.syms[1];
    x.syms[1] = t;
    strcpy(x.syms[0].name, "other");
    for (int i = 0; i < x.n_inputs; i++)
        for (int d = 0; d < x.inputs[i].rank; d++)
            if (x.inputs[i].dims[d].sym >= 0)
                x.inputs[i].dims[d].sym = 1 - x.inputs[i].dims[d].sym;
    CHECK_EQ_INT(af_spec_compare(&x, &wrap, why, sizeof why), 0);
    /* merge matches by name: the renamed symbol is left alone. */
    CHECK_EQ_INT(af_spec_merge_compiled(&x, &emb), 1);
done:
    free(meta);
    free(cpp);
}

/* ------------------------------------------------------------------ synthetic wrappers */

/* The pieces of a check_input_N as torch writes them, reduced to what the parser reads. */
#define CHK_BEGIN(i, name, dt)                                                                     \
    "AOTI_NOINLINE static void check_input_" #i "(\n    AtenTensorHandle* input_handles\n) {\n"    \
    "    ConstantHandle " name " = ConstantHandle(input_handles[" #i "]);\n"                       \
    "    int32_t " name "_expected_dtype = aoti_torch_dtype_" dt "();\n"
#define CHK_LO(i, d, v)                                                                            \
    "    if (x_size[" #d "] < " #v ") { std::stringstream ss;\n"                                   \
    "        ss << \"input_handles[" #i "]: dim value is too small at " #d ", \"\n"                \
    "           << \"expected it to be >= " #v ", \" << \"but got: \" << x;\n"                     \
    "        throw std::runtime_error(ss.str()); }\n"
#define CHK_HI(i, d, v)                                                                            \
    "    if (x_size[" #d "] > " #v ") { std::stringstream ss;\n"                                   \
    "        ss << \"input_handles[" #i "]: dim value is too large at " #d ", \"\n"                \
    "           << \"expected to be <= " #v ", \" << \"but got: \" << x;\n"                        \
    "        throw std::runtime_error(ss.str()); }\n"
#define CHK_EQ(i, d, v)                                                                            \
    "    if (" #v " != x_size[" #d "]) { std::stringstream ss;\n"                                  \
    "        ss << \"input_handles[" #i "]: unmatched dim value at " #d ", \"\n"                   \
    "           << \"expected: " #v ", \" << \"but got: \" << x;\n"                                \
    "        throw std::runtime_error(ss.str()); }\n"
#define CHK_STRIDE(i, d, v)                                                                        \
    "    if (" #v " != x_stride[" #d "]) { std::stringstream ss;\n"                                \
    "        ss << \"input_handles[" #i "]: unmatched stride value at " #d ", \"\n"                \
    "           << \"expected: " #v ", \" << \"but got: \" << x;\n"                                \
    "        throw std::runtime_error(ss.str()); }\n"
#define CHK_END "}\n"
#define RUN_BEGIN                                                                                  \
    "void AOTInductorModel::run_impl(\n    AtenTensorHandle*\n        input_handles, // "          \
    "array of input AtenTensorHandle; handles {\n    DeviceStreamType stream\n) {\n"
#define RUN_END "} // AOTInductorModel::run_impl\n"

/* Three inputs a, b, c; c: [2, 64] with no binding. */
#define THREE_INPUTS(b_lo, b_hi, c_lo, c_hi)                                                       \
    CHK_BEGIN(0, "a", "float32")                                                                   \
    CHK_LO(0, 0, 2)                                                                                \
    CHK_HI(0, 0, 64)                                                                               \
    CHK_END CHK_BEGIN(1, "b", "float32") CHK_LO(1, 0, b_lo) CHK_HI(1, 0, b_hi)                     \
        CHK_END CHK_BEGIN(2, "c", "float32") CHK_LO(2, 0, c_lo) CHK_HI(2, 0, c_hi) CHK_END

static void test_wrapper_inference_rules(void)
{
    af_spec s;

    /* Two symbols explain c equally well: c gets a symbol of its own... */
    const char *ambiguous = THREE_INPUTS(2, 64, 2, 64) RUN_BEGIN
        "    int64_t s1 = a_size[0];\n    int64_t s2 = b_size[0];\n" RUN_END;
    CHECK(parse_wrapper(ambiguous, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 3);
    CHECK_DYN(s, 0, 0, "s1", 1, 0);
    CHECK_DYN(s, 1, 0, "s2", 1, 0);
    CHECK_DYN(s, 2, 0, "c_size_0", 1, 0);
    CHECK_WSYM(s, 2, "c_size_0", 2, 64);
    /* ...unless the wrapper says which one. */
    const char *asserted = THREE_INPUTS(2, 64, 2, 64) RUN_BEGIN
        "    int64_t s1 = a_size[0];\n    int64_t s2 = b_size[0];\n"
        "    if (_check_aoti_runtime_check_inputs_env()) { assert_size_stride(c, {s2, }, {1L, }, "
        "\"input\"); }\n" RUN_END;
    CHECK(parse_wrapper(asserted, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_DYN(s, 2, 0, "s2", 1, 0);

    /* An alias (`int64_t s9 = s2;`, torch's replacement aliases) names the same symbol. */
    const char *alias = THREE_INPUTS(2, 64, 2, 64) RUN_BEGIN
        "    int64_t s1 = a_size[0];\n    int64_t s2 = b_size[0];\n    int64_t s9 = s2;\n"
        "    assert_size_stride(c, {s9, }, {1L, }, \"input\");\n" RUN_END;
    CHECK(parse_wrapper(alias, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_DYN(s, 2, 0, "s2", 1, 0);

    /* Several candidates, one of them the identity: sharing a symbol is the usual case. */
    const char *ident = THREE_INPUTS(4, 128, 4, 128) RUN_BEGIN
        "    int64_t s1 = a_size[0];\n    int64_t s2 = b_size[0];\n" RUN_END;
    CHECK(parse_wrapper(ident, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_DYN(s, 2, 0, "s2", 1, 0); /* not 2*s1 */

    /* A unique affine match: [5, 129] = 2*[2, 64]+1. */
    const char *affine = THREE_INPUTS(0, 8, 5, 129) RUN_BEGIN
        "    int64_t s1 = a_size[0];\n    int64_t s2 = b_size[0];\n" RUN_END;
    CHECK(parse_wrapper(affine, &s) == 0);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_DYN(s, 2, 0, "s1", 2, 1);
    CHECK_WSYM(s, 1, "s2", 0, 8);

    /* Solved bindings: dim = s5 - 1 and dim = 3*s6 + 2, through a size local. */
    const char *solved = CHK_BEGIN(0, "a", "int16") CHK_LO(0, 0, 1) CHK_HI(0, 0, 63)
        CHK_END CHK_BEGIN(1, "b", "uint8") CHK_LO(1, 0, 8) CHK_HI(1, 0, 29) CHK_EQ(1, 1, 3)
            CHK_END RUN_BEGIN "    auto a_size = a.sizes();\n"
                              "    int64_t a_size_0 = a_size[0];\n"
                              "    int64_t s5 = 1L + a_size_0;\n"
                              "    int64_t b_size_0 = b_size[0];\n"
                              "    int64_t s6 = (-2.0/3.0) + (1.0/3.0)*b_size_0;\n"
                              "    int64_t xnumel = 32L*s5;\n" RUN_END;
    CHECK(parse_wrapper(solved, &s) == 0);
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_INT16);
    CHECK_EQ_INT(s.inputs[1].dtype, AF_DT_UINT8);
    CHECK_EQ_INT(s.n_syms, 2);
    CHECK_DYN(s, 0, 0, "s5", 1, -1);
    CHECK_WSYM(s, 0, "s5", 2, 64);
    CHECK_DYN(s, 1, 0, "s6", 3, 2);
    CHECK_STATIC(s, 1, 1, 3);
    CHECK_WSYM(s, 1, "s6", 2, 9);
    CHECK_ROUND_TRIP(&s);

    /* One-sided checks (aot_inductor.check_lowerbound off, or no upper bound) and a
     * dim seen only through a stride message. */
    const char *one_sided =
        CHK_BEGIN(0, "a", "bool") CHK_HI(0, 0, 32) CHK_LO(0, 1, 3) CHK_STRIDE(0, 2, 1)
            CHK_END RUN_BEGIN "    int64_t s1 = a_size[0];\n    int64_t s2 = a_size[1];\n" RUN_END;
    CHECK(parse_wrapper(one_sided, &s) == 0);
    CHECK_EQ_INT(s.inputs[0].rank, 3);
    CHECK_EQ_INT(s.n_syms, 3);
    CHECK_WSYM(s, 0, "s1", 0, 32);
    CHECK_WSYM(s, 1, "s2", 3, AF_INT_LIMIT);
    CHECK_DYN(s, 0, 2, "a_size_2", 1, 0);
    CHECK_WSYM(s, 2, "a_size_2", 0, AF_INT_LIMIT);

    /* No run_impl at all: every dim from the ranges. Bounds beyond 2^53 are clamped. */
    const char *no_run =
        CHK_BEGIN(0, "p", "float64") CHK_LO(0, 0, 2) CHK_HI(0, 0, 9223372036854775807) CHK_END;
    CHECK(parse_wrapper(no_run, &s) == 0);
    CHECK_WSYM(s, 0, "p_size_0", 2, AF_INT_LIMIT);
    CHECK_EQ_INT(s.inputs[0].dtype, AF_DT_FLOAT64);
}

static void test_wrapper_errors(void)
{
    const char *no_checks_msg = "wrapper: no check_input_N functions found (not an AOTInductor "
                                "wrapper .cpp, or one generated without input checks)";
    EXPECT_WRAPPER_ERR("", no_checks_msg);
    EXPECT_WRAPPER_ERR("int main(void) { return 0; }\n", no_checks_msg);
    EXPECT_WRAPPER_ERR("    check_input_0(input_handles);\n", no_checks_msg); /* a call only */
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_END CHK_BEGIN(2, "c", "float32") CHK_END,
                       "wrapper: check_input_1 is missing (inputs 0..2 expected)");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_END CHK_BEGIN(0, "b", "float32") CHK_END,
                       "wrapper: check_input_0 defined twice");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "complex64") CHK_END,
                       "wrapper: input 0 (a): unsupported dtype 'complex64'");
    EXPECT_WRAPPER_ERR("static void check_input_0(\n AtenTensorHandle* input_handles) {\n}\n",
                       "wrapper: check_input_0: no expected dtype "
                       "(NAME_expected_dtype = aoti_torch_dtype_...())");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_END CHK_BEGIN(1, "a", "float32") CHK_END,
                       "wrapper: inputs 0 and 1 are both named 'a'");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "2_1", "float32") CHK_END,
                       "wrapper: check_input_0: bad input name '2_1'");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_EQ(0, 0, 4) CHK_LO(0, 0, 2) CHK_END,
                       "wrapper: input 0 (a): dim 0 is both static and dynamic");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_LO(0, 0, 9) CHK_HI(0, 0, 4) CHK_END,
                       "wrapper: input 0 (a): dim 0: empty range [9, 4]");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(0, "a", "float32") CHK_EQ(0, 8, 4) CHK_END,
                       "wrapper: input 0 (a): rank above the limit of 8");
    EXPECT_WRAPPER_ERR(CHK_BEGIN(64, "a", "float32") CHK_END,
                       "wrapper: too many inputs (check_input_64; at most 64)");
    EXPECT_WRAPPER_ERR("static void check_input_0(\n AtenTensorHandle* input_handles) {\n"
                       "  int32_t a_expected_dtype = aoti_torch_dtype_float32();\n",
                       "wrapper: check_input_0: unbalanced braces");

    /* A CUDA wrapper cut before its checks is refused, not half-read. */
    char *cpp = fixture("cuda_lasttok.wrapper.cpp");
    if (cpp) {
        char *cut = strstr(cpp, "AOTI_NOINLINE static void check_input_0");
        CHECK(cut != NULL);
        if (cut)
            *cut = '\0';
        EXPECT_WRAPPER_ERR(cpp, no_checks_msg);
        free(cpp);
    }
}

/* A stated spec against the compiled model: the right one fits, one that pins a dynamic dim
 * fits (it narrows), and each kind of contradiction is refused with the input named. */
static void test_fits_wrapper(void)
{
    char *cpp = fixture("cpu_derived.wrapper.cpp");
    af_spec w, s;
    af_error err = {0};
    char why[256];
    CHECK(cpp && parse_wrapper(cpp, &w) == 0);
    if (!cpp)
        return;
#define SPEC3(x0, x1, y1, idxt, idx1)                                                              \
    HEAD "\"inputs\":[{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[" x0 "," x1 "]},"           \
         "{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[\"2*n\"," y1                            \
         "]},{\"name\":\"idx\",\"dtype\":\"" idxt "\",\"shape\":[\"m\"," idx1 "]}],"               \
         "\"symbols\":[{\"name\":\"n\",\"min\":2,\"max\":64},{\"name\":\"m\",\"min\":0,"           \
         "\"max\":32}]}"
    CHECK_EQ_INT(
        af_spec_from_json(SPEC3("\"n\"", "16", "16", "int64", "5"), AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), 0);
    /* x's first dim pinned to 4: narrower than compiled, fine */
    CHECK_EQ_INT(af_spec_from_json(SPEC3("4", "16", "16", "int64", "5"), AF_SPEC_FILE, &s, &err),
                 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), 0);
    /* a static size other than the compiled one */
    CHECK_EQ_INT(
        af_spec_from_json(SPEC3("\"n\"", "17", "16", "int64", "5"), AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), -1);
    CHECK(strstr(why, "input 0 (x) dim 1: 17, the model was compiled for 16") != NULL);
    /* a dynamic dim where the model was compiled static */
    CHECK_EQ_INT(
        af_spec_from_json(SPEC3("\"n\"", "16", "16", "int64", "\"m\""), AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), -1);
    CHECK(strstr(why, "input 2 (idx) dim 1") != NULL);
    /* another dtype */
    CHECK_EQ_INT(
        af_spec_from_json(SPEC3("\"n\"", "16", "16", "float32", "5"), AF_SPEC_FILE, &s, &err), 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), -1);
    CHECK(strstr(why, "input 2 (idx): dtype float32, the model reads int64") != NULL);
#undef SPEC3
    /* another rank, another input count */
    CHECK_EQ_INT(af_spec_from_json(HEAD "\"inputs\":[{\"name\":\"x\",\"dtype\":\"float32\","
                                        "\"shape\":[\"n\"]}],\"symbols\":[{\"name\":\"n\","
                                        "\"min\":2,\"max\":64}]}",
                                   AF_SPEC_FILE, &s, &err),
                 0);
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), -1);
    CHECK(strstr(why, "it lists 1 input, the model takes 3") != NULL);
    s = w;
    s.inputs[1].rank = 1;
    CHECK_EQ_INT(af_spec_fits_wrapper(&s, &w, why, sizeof why), -1);
    CHECK(strstr(why, "rank 1, the model reads rank 2") != NULL);
    free(cpp);
}

/* Numbers in the wrapper past int64 are refused, not saturated into some bound; INT64_MAX
 * itself (what an unbounded dim's check prints) still reads as "no upper bound". */
static void test_wrapper_huge_bound(void)
{
    char *cpp = fixture("cpu_derived.wrapper.cpp");
    if (!cpp) {
        CHECK(cpp != NULL);
        return;
    }
    const char *key = "expected to be <= 64, ";
    char *at = strstr(cpp, key);
    CHECK(at != NULL);
    if (!at) {
        free(cpp);
        return;
    }
    size_t n = strlen(cpp), pre = (size_t)(at - cpp) + strlen("expected to be <= ");
    char *big = malloc(n + 64);
    char *max = malloc(n + 64);
    snprintf(big, n + 64, "%.*s100000000000000000000000%s", (int)pre, cpp, at + strlen(key) - 2);
    snprintf(max, n + 64, "%.*s9223372036854775807%s", (int)pre, cpp, at + strlen(key) - 2);
    af_spec s;
    af_error err = {0};
    CHECK_EQ_INT(af_spec_from_wrapper(big, &s, &err), -1);
    CHECK(strstr(err.message, "out of the int64 range") != NULL);
    CHECK_EQ_INT(af_spec_from_wrapper(max, &s, &err), 0);
    free(big);
    free(max);
    free(cpp);
}

int main(void)
{
    test_dtypes();
    test_json_parse();
    test_json_errors();
    test_json_round_trip();
    test_find_shape_print();
    test_from_file();
    test_wrapper_cuda_lasttok();
    test_wrapper_cuda_healthy();
    test_wrapper_cuda_derived();
    test_wrapper_cpu_derived();
    test_fits_wrapper();
    test_wrapper_huge_bound();
    test_wrapper_cpu_multi();
    test_embedded_vs_wrapper();
    test_wrapper_inference_rules();
    test_wrapper_errors();
    TEST_MAIN_END();
}
