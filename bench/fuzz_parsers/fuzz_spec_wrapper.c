/* fuzz_spec_wrapper.c — libFuzzer target for the spec recovered from a generated wrapper .cpp
 * (af_spec_from_wrapper: check_input_N bounds, run_impl bindings, assert_size_stride), seeded
 * with the real wrappers of tests/fixtures and the example packages.
 *
 * A recovered spec must survive what the tools do with it: written as JSON (aoti-run prints it,
 * the reference process reads it) and read back with the same structure; merged into itself
 * (af_spec_merge_compiled) every symbol matches; printed. */
#define AF_FUZZ_NO_MAIN_TARGET
#include "fuzz_spec_json.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static af_spec s1, copy;
    af_error err = {0};
    char *text = fz_cstr(data, size);
    if (af_spec_from_wrapper(text, &s1, &err) == 0) {
        check_roundtrip(&s1, "wrapper spec");
        copy = s1;
        FZ_CHECK(af_spec_merge_compiled(&copy, &s1) == s1.n_syms,
                 "a spec merged into itself misses symbols");
        drive_printers(&s1);
    } else {
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    }
    free(text);
    return 0;
}
