/* spec_internal.h — private to the harness: what the spec files (spec.c, spec_json.c)
 * share beyond the public aotif/spec.h. */
#ifndef AF_SPEC_INTERNAL_H
#define AF_SPEC_INTERNAL_H

#include <stddef.h>

#include "aotif/spec.h"

/* Render one dim of `spec` into buf: "16", "s77", "2*s77", "2*s77+1", "s77-1". */
void af_spec_dim_str(const af_spec *spec, const af_dim *d, char *buf, size_t len);

#endif
