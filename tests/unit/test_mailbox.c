/* test_mailbox.c — the mailbox's case and result copies: a posted case arrives with the
 * values in use and nothing else written; a posted result reads back as af_result_copy
 * would leave it, through the plain path (OK, no text but the OK signature, the outputs'
 * summaries packed) and through the full one. */
#include <stdlib.h>
#include <string.h>

#include "af_test.h"
#include "ipc.h"

/* post r as case 1's result into a fresh mailbox and read it back into a zeroed result;
 * 1 when that equals a zeroed result after af_result_copy(r), byte for byte */
static int round_trip_equal(const af_result *r, uint32_t *plain)
{
    mailbox *mb = calloc(1, sizeof *mb);
    af_result *got = calloc(1, sizeof *got), *want = calloc(1, sizeof *want);
    mb->case_seq = 1;
    af_mailbox_post_result(mb, 1, r);
    *plain = mb->plain;
    af_mailbox_read_result(mb, got);
    af_result_copy(want, r);
    int eq = mb->result_seq == 1 && memcmp(got, want, sizeof *got) == 0;
    free(mb), free(got), free(want);
    return eq;
}

/* r's outputs: a rank-2 float output with a sum, and a rank-1 one with NaNs */
static void two_outputs(af_result *r)
{
    memset(r->outputs, 0, sizeof r->outputs);
    r->n_outputs = 2;
    r->outputs[0].rank = 2, r->outputs[0].sizes[0] = 4, r->outputs[0].sizes[1] = 8;
    r->outputs[0].numel = 32, r->outputs[0].sum = -1.25;
    r->outputs[1].rank = 1, r->outputs[1].numel = 5, r->outputs[1].n_nan = 2;
}

int main(void)
{
    /* the hot lines: the tool's counter and the case's head share one cache line, the
     * worker's counter, the plain result and 40 bytes of packed outputs the next, and
     * neither holds the other's */
    CHECK(offsetof(mailbox, case_seq) / AF_MB_LINE == offsetof(mailbox, c.values[3]) / AF_MB_LINE);
    CHECK(offsetof(mailbox, result_seq) / AF_MB_LINE ==
          (offsetof(mailbox, plain_bytes) + 40 - 1) / AF_MB_LINE);
    CHECK(offsetof(mailbox, case_seq) / AF_MB_LINE != offsetof(mailbox, result_seq) / AF_MB_LINE);
    CHECK(offsetof(mailbox, taken_seq) / AF_MB_LINE >
          (offsetof(mailbox, plain_bytes) + AF_MB_PLAIN_BYTES - 1) / AF_MB_LINE);

    /* packed summaries: a rank-2 float output with finite values is 26 bytes (rank, flags,
     * two sizes, the sum), on result_seq's line; each field the sizes do not say is kept */
    {
        af_output_summary o[3], back[3];
        unsigned char buf[AF_MB_PLAIN_BYTES];
        memset(o, 0, sizeof o);
        o[0].rank = 2, o[0].sizes[0] = 3, o[0].sizes[1] = 7, o[0].numel = 21, o[0].sum = 0.5;
        CHECK_EQ_INT(af_mailbox_pack_outputs(o, 1, buf, sizeof buf), 26);
        o[1].rank = 0, o[1].numel = 1, o[1].sum = -0.0; /* a scalar; -0.0's bits are kept */
        o[2].rank = 8;
        for (int d = 0; d < 8; d++)
            o[2].sizes[d] = d + 2;
        o[2].numel = 5; /* not the product: kept as it was */
        o[2].n_nan = 1, o[2].n_inf = 1LL << 40;
        int len = af_mailbox_pack_outputs(o, 3, buf, sizeof buf);
        CHECK_EQ_INT(len, 26 + (2 + 8) + (2 + 64 + 8 + 16));
        memset(back, 0x55, sizeof back);
        CHECK_EQ_INT(af_mailbox_unpack_outputs(buf, (size_t)len, 3, back), 0);
        CHECK(memcmp(back, o, sizeof o) == 0);
        CHECK(af_mailbox_unpack_outputs(buf, (size_t)len - 1, 3, back) < 0); /* cut short */
        CHECK(af_mailbox_unpack_outputs(buf, (size_t)len, 2, back) < 0);     /* bytes left */
        CHECK(af_mailbox_pack_outputs(o, 3, buf, (size_t)len - 1) < 0);      /* no room */
        o[0].sizes[2] = 4; /* a size past the rank: not what a summary holds; no packing */
        CHECK(af_mailbox_pack_outputs(o, 1, buf, sizeof buf) < 0);
        o[0].sizes[2] = 0, o[0].rank = 9;
        CHECK(af_mailbox_pack_outputs(o, 1, buf, sizeof buf) < 0);
    }

    /* a case: the values in use, the fill and the seed arrive; the rest of c is untouched */
    mailbox *mb = calloc(1, sizeof *mb);
    af_case in, out;
    memset(&in, 0, sizeof in);
    in.n_syms = 3;
    in.values[0] = 7, in.values[1] = -1, in.values[2] = 1LL << 40, in.values[3] = 99;
    in.fill = AF_FILL_WIDE;
    in.seed = 123456789012345ULL;
    /* the tool's post (af_mailbox_exchange) and the worker's take make the same copy */
    memset(&mb->c, 0x44, sizeof mb->c);
    af_case_copy_in_use(&mb->c, &in);
    CHECK(mb->c.values[3] == 0x4444444444444444LL); /* the post, too, copies no more */
    memset(&out, 0x33, sizeof out);
    af_case_copy_in_use(&out, &mb->c);
    CHECK_EQ_INT(out.n_syms, 3);
    CHECK(out.fill == AF_FILL_WIDE && out.seed == in.seed);
    CHECK(out.values[0] == 7 && out.values[1] == -1 && out.values[2] == (1LL << 40));
    CHECK(out.values[3] == 0x3333333333333333LL); /* past n_syms: not copied */
    CHECK(af_case_equal(&in, &out));
    mb->c.n_syms = AF_MAX_SYMS + 5; /* a bad count copies no more than the array holds */
    af_case_copy_in_use(&out, &mb->c);
    free(mb);

    af_result *r = calloc(1, sizeof *r);
    uint32_t plain = 9;
    /* a plain answer written over in the worker's memory: not trusted, and said so */
    {
        mailbox *bad = calloc(1, sizeof *bad);
        af_result *got = calloc(1, sizeof *got);
        af_result_reset(r);
        r->n_outputs = 1;
        r->outputs[0].rank = 2, r->outputs[0].sizes[0] = 4, r->outputs[0].sizes[1] = 8;
        r->outputs[0].numel = 32;
        af_mailbox_post_result(bad, 1, r);
        CHECK_EQ_INT(bad->plain, 1);
        af_mailbox_read_result(bad, got);
        CHECK_EQ_INT(got->cls, AF_RES_OK);
        CHECK_EQ_INT(got->n_outputs, 1);
        bad->plain_len = 65535; /* past the buffer */
        af_mailbox_read_result(bad, got);
        CHECK_EQ_INT(got->cls, AF_RES_WORKER_LOST);
        CHECK(strstr(got->message, "wrote over its mailbox") != NULL);
        CHECK_EQ_INT(got->n_outputs, 0);
        bad->plain_len = 18, bad->plain_n_outputs = 200; /* more outputs than a result holds */
        af_mailbox_read_result(bad, got);
        CHECK_EQ_INT(got->cls, AF_RES_WORKER_LOST);
        bad->plain_n_outputs = 1, bad->plain_bytes[0] = 9; /* a rank no summary has */
        af_mailbox_read_result(bad, got);
        CHECK_EQ_INT(got->cls, AF_RES_WORKER_LOST);
        free(bad), free(got);
    }
    /* OK with outputs: the plain path */
    af_result_reset(r);
    r->exit_status = -1;
    r->run_seconds = 3.5e-6;
    two_outputs(r);
    CHECK(af_mailbox_result_is_plain(r));
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 1);
    /* outputs that do not fit the packed bytes: still OK and exact, through the full copy */
    r->n_outputs = AF_MAX_OUTPUTS;
    for (int i = 0; i < AF_MAX_OUTPUTS; i++) {
        r->outputs[i].rank = 8;
        for (int d = 0; d < 8; d++)
            r->outputs[i].sizes[d] = 1000 + d;
        r->outputs[i].numel = i, r->outputs[i].n_nan = i, r->outputs[i].sum = i + 0.5;
    }
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 0);
    /* a rank the summary could not hold all of: the full copy */
    r->n_outputs = 1;
    r->outputs[0].rank = 12;
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 0);
    two_outputs(r);
    /* the same signed as every OK run is (af_runtime_run signs it): still the plain path,
     * and the signature reads back */
    af_result_sign(r);
    CHECK(strcmp(r->signature, "OK") == 0);
    CHECK_EQ_INT(af_mailbox_result_is_plain(r), 2);
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 2);
    /* any other signature on an OK result is text: the full path */
    snprintf(r->signature, sizeof r->signature, "OK but not only");
    CHECK(!af_mailbox_result_is_plain(r));
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 0);
    r->signature[0] = '\0';
    /* OK with a message (it printed an error line and ran on): the full path */
    snprintf(r->message, sizeof r->message, "Error: printed, and the run went on");
    CHECK(!af_mailbox_result_is_plain(r));
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 0);
    /* a crash with frames and a signal */
    af_result_reset(r);
    r->cls = AF_RES_SIGNAL;
    r->signo = 11;
    r->fault_addr = 0x10;
    snprintf(r->signature, sizeof r->signature, "SIGNAL: SIGSEGV");
    r->n_frames = 2;
    snprintf(r->frames[0], sizeof r->frames[0], "/tmp/model.so+0x1234");
    snprintf(r->frames[1], sizeof r->frames[1], "0x7f0000001000");
    CHECK(!af_mailbox_result_is_plain(r));
    CHECK(round_trip_equal(r, &plain));
    CHECK_EQ_INT(plain, 0);
    /* each text alone keeps a result off the plain path */
    char *texts[] = {r->signature, r->message, r->cuda_error, r->kernel, r->triage};
    for (int i = 0; i < 5; i++) {
        af_result_reset(r);
        texts[i][0] = 'x', texts[i][1] = '\0';
        CHECK(!af_mailbox_result_is_plain(r));
        CHECK(round_trip_equal(r, &plain));
    }
    free(r);
    TEST_MAIN_END();
}
