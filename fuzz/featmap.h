/* featmap.h — what libFuzzer is told about a run, through a counter region. (Not named
 * features.h: that is a glibc header, and this dir is on the include path.)
 *
 * Code coverage of a compiled GPU model is invisible to libFuzzer, so the fuzzer reports
 * features of its own: each is one slot of a uint8_t array that fuzz/main.c registers
 * with libFuzzer as a module's 8-bit counters, sized to the spec (af_feat_layout_for); a
 * non-zero slot is a feature, and an input that sets a slot never set before joins the
 * corpus. Slots, by region:
 *   VALUE     symbol x value class (0, 1, 2, min, max, ..., multiple of 128)
 *   VALUE_RES symbol x value class x result class
 *   MAG       symbol x bit length of the value (0..64)
 *   PAIR      symbol pair x relation (<, =, >, one twice the other)
 *   RES       result class
 *   SIG       hash bucket of the result signature
 *   OUT       any output empty / any NaN or Inf, per result class
 *   BYTES     bit length of the total input bytes */
#ifndef AF_FUZZ_FEATMAP_H
#define AF_FUZZ_FEATMAP_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/result.h"
#include "aotif/spec.h"

typedef enum af_vclass {
    AF_VC_ZERO = 0,
    AF_VC_ONE,
    AF_VC_TWO,
    AF_VC_MIN,
    AF_VC_MAX,
    AF_VC_MAX_MINUS_1,
    AF_VC_COMPILED_MIN,
    AF_VC_COMPILED_MIN_MINUS_1, /* the value just under the compiled contract */
    AF_VC_BELOW_COMPILED,       /* anywhere under compiled_min */
    AF_VC_ABOVE_COMPILED,       /* over compiled_max */
    AF_VC_POW2,
    AF_VC_POW2_NEIGHBOUR, /* 2^k - 1 or 2^k + 1 */
    AF_VC_MUL16,
    AF_VC_MUL32,
    AF_VC_MUL64,
    AF_VC_MUL128,
    AF_VC_COUNT
} af_vclass;

#define AF_FEAT_PAIR_RELS 5 /* a<b, a==b, a>b, a==2b, b==2a */
#define AF_FEAT_SIG_BUCKETS 256
#define AF_FEAT_MAG_BUCKETS 65

/* Where each region starts for a spec with ns symbols: sized to the spec, so that the
 * per-exec clear and scan cost what the model's symbols need and no more. */
typedef struct af_feat_layout {
    int ns; /* symbols with features: n_syms, at most AF_MAX_SYMS */
    size_t value, value_res, mag, pair, res, sig, out, bytes, end;
} af_feat_layout;

/* The layout for this spec; returns its size in slots (layout->end). */
size_t af_feat_layout_for(const af_spec *spec, af_feat_layout *layout);

const char *af_vclass_name(af_vclass vc);
/* Bit mask (1 << af_vclass) of the classes value v of symbol s falls in. */
uint32_t af_feat_value_classes(const af_symbol *s, int64_t v);
/* FNV-1a of a string: the signature hash (also names crash files). */
uint64_t af_feat_hash(const char *s);

/* Set the features of this run in ctr[0..layout->end), which the caller has cleared (libFuzzer
 * clears its counters before each run). r may be NULL (not run). Returns the number of
 * slots set. */
int af_features_compute(const af_spec *spec, const af_feat_layout *layout, const af_case *c,
                        const af_result *r, uint8_t *ctr);
/* Mark in seen[] every slot of ctr[] that is set, and return how many were new (the
 * features count on the status line). */
size_t af_features_note_new(const uint8_t *ctr, uint8_t *seen, size_t n);

#endif
