/* memo.h — remember the outcome of cases that failed (and of those that ran OK, below), so the
 * fuzzer does not pay again.
 *
 * A failing case costs far more than a healthy one: a crash or device fault kills the
 * worker (the next case waits for a fresh one), a timeout costs the whole time limit.
 * The mutator keeps coming back to the values that crash (that is its job), so the same
 * failing case recurs often. The memo maps an exact case (every symbol value, fill, seed)
 * to the class and signature it gave; a hit is reported to libFuzzer without running the
 * model. Only reproducible outcomes should go in (the caller re-runs a new signature once
 * and leaves flaky ones out). A fixed-size table; a full slot is overwritten.
 *
 * Shape classes. A failure that kills the worker (a signal, a sticky CUDA fault) costs a
 * fresh worker, on CUDA a new context (0.3-1 s). Where a model fails at a shape whatever
 * the input values (every n=0 input of an index kernel), the mutator keeps drawing new
 * seeds and neighbouring values there, each a new exact case and a new dead worker. The
 * memo also learns per shape class: the fill and, per symbol, the value classes of
 * featmap.h (0, 1, min, max, power of two, ...), the seed and the exact values left out.
 * Once `learn` distinct cases of a class have all failed with one signature of a killing
 * class, and no case of it has done anything else, a new case of that class is predicted
 * to fail the same way and is not run, except every `verify`-th one, which runs to check
 * the prediction. A run of the class that ends otherwise (OK, another class or signature)
 * marks the class mixed for good: it is never predicted again. A prediction is reported
 * as such (the caller keeps it apart from real runs); it never makes a crash file.
 *
 * One-symbol classes. Where one symbol's value alone decides the failure (n = 0 faults
 * whatever m is), every new value class of the other symbols is a new whole class that
 * would have to be learnt again, a dead worker each time. So with two symbols or more the
 * memo also learns, per symbol, the class made of the fill and that symbol's value class
 * alone, the others left out. It is predicted under the same rules (`learn` failures, one
 * signature, nothing else ever; every `verify`-th case runs) and one more: the failures
 * must have come with the other symbols in at least two different value classes. A case
 * whose whole class is mixed is never predicted from a one-symbol class. */
#ifndef AF_FUZZ_MEMO_H
#define AF_FUZZ_MEMO_H

#include <stdint.h>

#include "aotif/case.h"
#include "aotif/result.h"
#include "aotif/spec.h"

typedef struct af_memo af_memo;

/* A table of `slots` entries (rounded up to a power of two). NULL on OOM. */
af_memo *af_memo_new(int slots);
void af_memo_free(af_memo *m);
/* Remember c -> r's class and signature. Timeouts are not remembered: they are re-run. */
void af_memo_put(af_memo *m, const af_case *c, const af_result *r);
/* On a hit, fill out (class, signature, message; no outputs) and return 1; else 0. */
int af_memo_get(const af_memo *m, const af_case *c, af_result *out);

/* Cases that ran OK. A healthy model's shape space is often small, and libFuzzer's mutations
 * come back to the same bytes: on healthy, 93 % of 30,000 execs repeated a case already run
 * (bench/README.md). A repeat of a case that ran OK is answered from here with the class, the
 * signature and the output summaries the features read (empty outputs, NaN/Inf), so
 * libFuzzer sees the same features as from a run. Every exact case is remembered as a record of its
 * own, the table holds `slots` of them (rounded up to a power of two, 0: off) and a full probe
 * sequence overwrites. A case that later fails is answered by the failing cases above: the
 * caller looks there first. */
int af_memo_ok_enable(af_memo *m, int slots); /* 0, or -1 on OOM (the table stays off) */
/* Remember that c ran OK with r's outputs (r's class must be OK; anything else is ignored). */
void af_memo_put_ok(af_memo *m, const af_case *c, const af_result *r);
/* On a hit, fill out (class OK, the outputs as they were; nothing run) and return 1; else 0. */
int af_memo_get_ok(const af_memo *m, const af_case *c, af_result *out);
/* OK cases held now. */
int af_memo_ok_size(const af_memo *m);

/* Shape-class prediction (see the top): learn = failures that make a class predicted
 * (0 turns prediction off: the default of af_memo_new), verify = every verify-th
 * prediction is run instead (>= 1; 1 runs them all). */
void af_memo_set_predict(af_memo *m, int learn, int verify);
/* After every case that really ran (not a memo hit, not a prediction): what its shape
 * class learns from r. Timeouts and refusals teach nothing. */
void af_memo_note_run(af_memo *m, const af_spec *spec, const af_case *c, const af_result *r);
/* A case of a class predicted to fail: fill out as af_memo_get does and return 1; else 0
 * (not predicted, or this is a verifying run). */
int af_memo_predict(af_memo *m, const af_spec *spec, const af_case *c, af_result *out);
/* Classes predicted now, and classes seen mixed after being predicted (for the summary). */
int af_memo_predicted_classes(const af_memo *m);
int af_memo_broken_predictions(const af_memo *m);
/* Of af_memo_predicted_classes, the one-symbol classes; predictions made from them. */
int af_memo_pinned_classes(const af_memo *m);
int64_t af_memo_pinned_predictions(const af_memo *m);

#endif
