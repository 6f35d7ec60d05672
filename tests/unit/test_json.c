/* The JSON output rules (aotif/json.h): UTF-8 validation, the U+FFFD replacement in every
 * string and key, and paths with bytes that are not UTF-8 going out as "<key>_hex" and
 * coming back exactly; crash files carry them through a write and a read. */
#include "af_test.h"
#include "aotif/crashfile.h"
#include "aotif/json.h"

static void test_valid(void)
{
    CHECK(af_utf8_valid(""));
    CHECK(af_utf8_valid("plain /tmp/x.pt2"));
    CHECK(af_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")); /* é € 😀 */
    CHECK(!af_utf8_valid("\xff"));
    CHECK(!af_utf8_valid("a\xc3"));            /* cut sequence */
    CHECK(!af_utf8_valid("\xc0\xaf"));         /* overlong '/' */
    CHECK(!af_utf8_valid("\xed\xa0\x80"));     /* a UTF-16 surrogate */
    CHECK(!af_utf8_valid("\xf4\x90\x80\x80")); /* past U+10FFFF */
    CHECK(!af_utf8_valid("\x80"));             /* a lone continuation byte */
}

static void test_lossy(void)
{
    char *s = af_utf8_lossy("a\xffz\xc3\xa9");
    CHECK_STR(s, "a\xef\xbf\xbdz\xc3\xa9");
    free(s);
    s = af_utf8_lossy("\xc0\xaf");
    CHECK_STR(s, "\xef\xbf\xbd\xef\xbf\xbd");
    free(s);
}

static void test_print_fixes_everything(void)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "message", "model said \xfe\xff");
    cJSON *arr = cJSON_AddArrayToObject(o, "list");
    cJSON_AddItemToArray(arr, cJSON_CreateString("\x80x"));
    cJSON *inner = cJSON_AddObjectToObject(o, "inner");
    cJSON_AddStringToObject(inner, "k\xff", "ok");
    char *t = af_json_print(o, 0);
    CHECK(t && af_utf8_valid(t));
    CHECK(t && strstr(t, "\"model said \xef\xbf\xbd\xef\xbf\xbd\""));
    CHECK(t && strstr(t, "\"\xef\xbf\xbdx\""));
    CHECK(t && strstr(t, "\"k\xef\xbf\xbd\":\"ok\""));
    cJSON_free(t);
    cJSON_Delete(o);
}

static void test_path_round_trip(void)
{
    const char *paths[] = {"/tmp/plain.pt2", "/tmp/d\xff\xfe/p\xe9kg.pt2", "rel/\x80\n$(x)'\"",
                           "/tmp/caf\xc3\xa9.pt2"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        cJSON *o = cJSON_CreateObject();
        CHECK_EQ_INT(af_json_add_path(o, "path", paths[i]), 0);
        CHECK_EQ_INT(cJSON_GetObjectItemCaseSensitive(o, "path_hex") != NULL,
                     !af_utf8_valid(paths[i]));
        char *t = af_json_print(o, 1);
        CHECK(t && af_utf8_valid(t));
        cJSON *back = cJSON_Parse(t);
        char got[256];
        CHECK_EQ_INT(af_json_get_path(back, "path", got, sizeof got, 1), 0);
        CHECK_STR(got, paths[i]);
        cJSON_Delete(back);
        cJSON_free(t);
        cJSON_Delete(o);
    }
    /* bad _hex: odd length, not hex, a NUL byte, too long; a missing optional path */
    const char *bad[] = {"{\"p\":\"x\",\"p_hex\":\"abc\"}", "{\"p_hex\":\"zz\"}",
                         "{\"p_hex\":\"4100\"}", "{\"p_hex\":7}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *o = cJSON_Parse(bad[i]);
        char got[8];
        CHECK_EQ_INT(af_json_get_path(o, "p", got, sizeof got, 1), -1);
        cJSON_Delete(o);
    }
    cJSON *o = cJSON_Parse("{\"p_hex\":\"41414141414141414141\"}");
    char small[4];
    CHECK_EQ_INT(af_json_get_path(o, "p", small, sizeof small, 1), -1);
    CHECK_EQ_INT(af_json_get_path(o, "q", small, sizeof small, 0), 1);
    CHECK_EQ_INT(af_json_get_path(o, "q", small, sizeof small, 1), -1);
    cJSON_Delete(o);
}

static void test_crash_file(void)
{
    af_crash c;
    memset(&c, 0, sizeof c);
    snprintf(c.package_path, sizeof c.package_path, "/tmp/d\xff/p.pt2");
    snprintf(c.package_abspath, sizeof c.package_abspath, "/tmp/d\xff/p.pt2");
    snprintf(c.model, sizeof c.model, "model");
    snprintf(c.device, sizeof c.device, "cpu");
    c.cls = AF_RES_SIGNAL;
    snprintf(c.signature, sizeof c.signature, "SIGNAL: SIGSEGV @ f\xfe");
    c.count = 1;
    char *t = af_crash_to_json(&c);
    CHECK(t && af_utf8_valid(t));
    af_crash back;
    af_error err = {0};
    CHECK_EQ_INT(t ? af_crash_from_json(t, strlen(t), "test", &back, &err) : -1, 0);
    if (t && !err.message[0]) {
        CHECK_STR(back.package_path, c.package_path);
        CHECK_STR(back.package_abspath, c.package_abspath);
    } else {
        fprintf(stderr, "crash from json: %s\n", err.message);
    }
    free(t);
}

int main(void)
{
    test_valid();
    test_lossy();
    test_print_fixes_everything();
    test_path_round_trip();
    test_crash_file();
    TEST_MAIN_END();
}
