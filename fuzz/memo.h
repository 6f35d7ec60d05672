/* memo.h — remember the outcome of cases that failed, so the fuzzer does not pay again.
 *
 * A failing case costs far more than a healthy one: a crash or device fault kills the
 * worker (the next case waits for a fresh one), a timeout costs the whole time limit.
 * The mutator keeps coming back to the values that crash (that is its job), so the same
 * failing case recurs often. The memo maps an exact case (every symbol value, fill, seed)
 * to the class and signature it gave; a hit is reported to libFuzzer without running the
 * model. Only reproducible outcomes should go in (the caller re-runs a new signature once
 * and leaves flaky ones out). A fixed-size table; a full slot is overwritten. */
#ifndef AF_FUZZ_MEMO_H
#define AF_FUZZ_MEMO_H

#include <stdint.h>

#include "aotif/case.h"
#include "aotif/result.h"

typedef struct af_memo af_memo;

/* A table of `slots` entries (rounded up to a power of two). NULL on OOM. */
af_memo *af_memo_new(int slots);
void af_memo_free(af_memo *m);
/* Remember c -> r's class and signature. Timeouts are not remembered: they are re-run. */
void af_memo_put(af_memo *m, const af_case *c, const af_result *r);
/* On a hit, fill out (class, signature, message; no outputs) and return 1; else 0. */
int af_memo_get(const af_memo *m, const af_case *c, af_result *out);

#endif
