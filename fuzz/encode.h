/* encode.h — the byte encoding of a case that libFuzzer sees.
 *
 * Layout, in order (all little-endian):
 *     for each spec symbol i: w_i bytes, an offset u from the symbol's declared min
 *     1 byte:  fill (mod AF_FILL_COUNT)
 *     8 bytes: seed
 * w_i is the fewest bytes that hold (max_i - min_i), 1 to 8. A symbol decodes to
 * min_i + (u mod (max_i - min_i + 1)), so ANY byte string decodes to a case inside the
 * declared ranges: missing bytes read as 0 (short inputs give min values, random fill,
 * seed 0), extra bytes are ignored. Values below compiled_min but >= min are legal here:
 * that is where the bugs are. Encoding then decoding an in-range case gives it back. */
#ifndef AF_FUZZ_ENCODE_H
#define AF_FUZZ_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/case.h"
#include "aotif/spec.h"

/* The longest encoding of any spec: AF_MAX_SYMS symbols of 8 bytes, the fill and the seed. */
#define AF_ENC_MAX_BYTES (AF_MAX_SYMS * 8 + 1 + 8)

/* Bytes of the full encoding for this spec (at most AF_ENC_MAX_BYTES). */
size_t af_enc_size(const af_spec *spec);
/* Bytes used by symbol i. */
int af_enc_sym_width(const af_symbol *s);
/* Encode c into buf (cap bytes). Symbols outside their range are clamped first. Writes
 * min(cap, af_enc_size) bytes (a cut encoding decodes the missing tail as zeros) and
 * returns that count. */
size_t af_enc_encode(const af_spec *spec, const af_case *c, uint8_t *buf, size_t cap);
/* How many fill modes the spec admits: the wide fill only with spec->beyond_contract. */
int af_enc_fills(const af_spec *spec);
/* Decode any bytes into a case inside the declared ranges. Never fails. */
void af_enc_decode(const af_spec *spec, const uint8_t *data, size_t size, af_case *out);
/* max - min of the declared range as unsigned (0 when max <= min); the range holds
 * span + 1 values, all of uint64 when that wraps to 0. */
uint64_t af_enc_span(const af_symbol *s);
/* Clamp v into the symbol's declared range. */
int64_t af_enc_clamp(const af_symbol *s, int64_t v);

#endif
