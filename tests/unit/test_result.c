/* test_result.c — result classes, number masking and signatures. */
#include <signal.h>

#include "af_test.h"
#include "aotif/result.h"

int main(void)
{
    char buf[256];
    af_mask_numbers("index 5 is out of bounds for dimension 0 with size 5", buf, sizeof buf);
    CHECK_STR(buf, "index # is out of bounds for dimension # with size #");
    af_mask_numbers("at 0x7ffd1234abcd: 0 <= tmp3 < ks0", buf, sizeof buf);
    CHECK_STR(buf, "at #: # <= tmp3 < ks0");
    af_mask_numbers("Expected u0 >= 2 but received 1", buf, sizeof buf);
    CHECK_STR(buf, "Expected u0 >= # but received #");

    af_result r = {0};
    r.cls = AF_RES_RUNTIME_ERROR;
    snprintf(r.message, sizeof r.message, "Expected u0 >= 2 but received 1\nmore lines 77");
    af_result_sign(&r);
    CHECK_STR(r.signature, "RUNTIME_ERROR: Expected u0 >= # but received #");
    af_result r2 = r;
    snprintf(r2.message, sizeof r2.message, "Expected u0 >= 2 but received 0");
    af_result_sign(&r2);
    CHECK_STR(r.signature, r2.signature); /* same bug at another shape: same signature */

    /* a reset result reads as a zeroed one in every field a reader looks at, and an OK
     * result signs as its class alone, whatever text it carries */
    memset(&r, 0x5a, sizeof r);
    af_result_reset(&r);
    CHECK_EQ_INT(r.cls, AF_RES_OK);
    CHECK(!r.signature[0] && !r.message[0] && !r.cuda_error[0] && !r.kernel[0] && !r.triage[0]);
    CHECK(r.signo == 0 && r.fault_addr == 0 && r.exit_status == 0 && r.run_seconds == 0);
    CHECK(r.n_frames == 0 && r.n_outputs == 0);
    snprintf(r.message, sizeof r.message, "Error: printed, and the run went on");
    af_result_sign(&r);
    CHECK_STR(r.signature, "OK");

    memset(&r, 0, sizeof r);
    r.cls = AF_RES_SIGNAL;
    r.signo = SIGSEGV;
    r.n_frames = 2;
    snprintf(r.frames[0], sizeof r.frames[0], "model.so!cpp_fused_add_0+0x71");
    snprintf(r.frames[1], sizeof r.frames[1], "model.so!run_impl+0x29c");
    r.frame_flags[0] = r.frame_flags[1] = AF_FRAME_MODEL | AF_FRAME_SYMBOLIZED;
    af_result_sign(&r);
    /* no offset; the model's top frame ends the list (more in test_symbolize.c) */
    CHECK_STR(r.signature, "SIGNAL: SIGSEGV @ cpp_fused_add_0");

    memset(&r, 0, sizeof r);
    r.cls = AF_RES_DEVICE_FAULT;
    snprintf(r.cuda_error, sizeof r.cuda_error, "CUDA_ERROR_ILLEGAL_ADDRESS");
    af_result_sign(&r);
    CHECK_STR(r.signature, "DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS");
    snprintf(r.kernel, sizeof r.kernel, "triton_poi_fused_0");
    snprintf(r.message, sizeof r.message, "index out of bounds: 0 <= tmp3 < ks0");
    af_result_sign(&r);
    CHECK_STR(r.signature, "DEVICE_FAULT: CUDA_ERROR_ILLEGAL_ADDRESS @ triton_poi_fused_0: index "
                           "out of bounds: # <= tmp3 < ks0");

    /* an assert without a kernel name: its text still parts one assert from another */
    memset(&r, 0, sizeof r);
    r.cls = AF_RES_DEVICE_FAULT;
    snprintf(r.cuda_error, sizeof r.cuda_error, "CUDA_ERROR_ASSERT");
    snprintf(r.message, sizeof r.message, "index out of bounds: 0 <= tmp5 < ks0");
    af_result_sign(&r);
    CHECK_STR(r.signature, "DEVICE_FAULT: CUDA_ERROR_ASSERT: index out of bounds: # <= tmp5 < ks0");
    snprintf(r.message, sizeof r.message, "index out of bounds: 0 <= tmp2 < ks1");
    char other[sizeof r.signature];
    snprintf(other, sizeof other, "%s", r.signature);
    af_result_sign(&r);
    CHECK(strcmp(r.signature, other) != 0);

    memset(&r, 0, sizeof r);
    r.cls = AF_RES_WORKER_LOST;
    r.exit_status = 7;
    af_result_sign(&r);
    CHECK_STR(r.signature, "WORKER_LOST: exit 7");

    for (int c = 0; c < AF_RES_COUNT; c++)
        CHECK_EQ_INT(af_class_from_name(af_class_name((af_class)c)), c);
    CHECK_EQ_INT(af_class_from_name("NOPE"), -1);
    CHECK(af_class_is_bug(AF_RES_SIGNAL) && af_class_is_bug(AF_RES_RUNTIME_ERROR));
    CHECK(!af_class_is_bug(AF_RES_OK) && !af_class_is_bug(AF_RES_TIMEOUT) &&
          !af_class_is_bug(AF_RES_OOM) && !af_class_is_bug(AF_RES_REFUSED));

    memset(&r, 0, sizeof r);
    r.cls = AF_RES_OK;
    r.n_outputs = 1;
    r.outputs[0].rank = 1;
    r.outputs[0].sizes[0] = 0;
    r.outputs[0].numel = 0;
    CHECK(af_result_any_empty(&r));
    CHECK(!af_result_any_nonfinite(&r));
    char *j = af_result_to_json(&r);
    CHECK(j && strstr(j, "\"class\":\"OK\""));
    free(j);

    /* mismatch identity: same output and kind family; the shape class is not compared */
    CHECK(af_mismatch_same("MISMATCH: output 0 value (h=mid w=1)",
                           "MISMATCH: output 0 value (h=1 w=1)"));
    CHECK(af_mismatch_same("MISMATCH: output 0 nonfinite (h=mid w=1)",
                           "output 0 value (h=mid w=1)\nmax abs error 0.5"));
    CHECK(!af_mismatch_same("MISMATCH: output 0 value (h=1)", "MISMATCH: output 1 value (h=1)"));
    CHECK(!af_mismatch_same("MISMATCH: output 0 value (h=1)", "MISMATCH: output 0 shape (h=1)"));
    CHECK(!af_mismatch_same("MISMATCH: output 0 dtype (h=1)", "MISMATCH: output 0 shape (h=1)"));
    CHECK(!af_mismatch_same("SIGNAL: SIGSEGV @ f", "SIGNAL: SIGSEGV @ f"));
    CHECK(!af_mismatch_same(NULL, "MISMATCH: output 0 value (h=1)"));
    TEST_MAIN_END();
}
