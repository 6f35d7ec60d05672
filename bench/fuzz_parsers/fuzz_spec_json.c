/* fuzz_spec_json.c — libFuzzer target for the spec JSON reader (af_spec_from_json, the format
 * of --spec files, embedded specs and the reference's input).
 *
 * Beyond memory and UB errors (ASan/UBSan), it checks the one property the format promises:
 * what the reader accepts, the writer writes back in a form the reader accepts again, with the
 * same structure (af_spec_compare) and the same text on a second round (a fixed point). Then it
 * drives the printers over the parsed spec, as aoti-run's describe does. */
#include "fuzz_common.h"

#include "aotif/spec.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    devnull = fopen("/dev/null", "w");
    return 0;
}

/* The reader's reply to the writer's text of s; the checks shared with the wrapper target. */
static void check_roundtrip(const af_spec *s1, const char *what)
{
    static af_spec s2;
    af_error err = {0};
    char why[512];

    char *j1 = af_spec_to_json(s1);
    FZ_CHECK(j1 != NULL, "%s: af_spec_to_json failed", what);
    FZ_CHECK(af_spec_from_json(j1, AF_SPEC_FILE, &s2, &err) == 0,
             "%s: the writer's JSON is refused: %s\n%s", what, err.message, j1);
    FZ_CHECK(af_spec_compare(s1, &s2, why, sizeof why) == 0, "%s: round trip differs: %s\n%s", what,
             why, j1);
    char *j2 = af_spec_to_json(&s2);
    FZ_CHECK(j2 != NULL, "%s: af_spec_to_json failed", what);
    FZ_CHECK(strcmp(j1, j2) == 0, "%s: not a fixed point:\n%s\n---\n%s", what, j1, j2);
    free(j2);
    free(j1);
}

static void drive_printers(af_spec *s)
{
    int64_t lo[AF_MAX_SYMS], hi[AF_MAX_SYMS];
    char buf[256];
    for (int k = 0; k < s->n_syms; k++) {
        lo[k] = s->syms[k].min;
        hi[k] = s->syms[k].max;
        (void)af_spec_gap(s, k);
        FZ_CHECK(af_spec_find_symbol(s, s->syms[k].name) >= 0, "symbol %s not found",
                 s->syms[k].name);
        if (s->syms[k].dim_name[0])
            (void)af_spec_find_symbol(s, s->syms[k].dim_name);
    }
    for (int i = 0; i < s->n_inputs; i++) {
        af_spec_shape_str(s, i, NULL, buf, sizeof buf);
        af_spec_shape_str(s, i, lo, buf, sizeof buf);
        af_spec_shape_str(s, i, hi, buf, 8); /* a short buffer: truncation, no overflow */
    }
    (void)af_spec_contract_known(s);
    af_spec_print(s, devnull);
    af_spec_widen_beyond_contract(s);
    af_spec_print(s, devnull);
}

#ifndef AF_FUZZ_NO_MAIN_TARGET
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static af_spec s1;
    af_error err = {0};
    char *text = fz_cstr(data, size);
    if (af_spec_from_json(text, AF_SPEC_FILE, &s1, &err) == 0) {
        check_roundtrip(&s1, "spec JSON");
        drive_printers(&s1);
    } else {
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    }
    free(text);
    return 0;
}
#endif
