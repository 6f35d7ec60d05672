/* aotif/spec.h — the declared shape space of a model: its inputs and their symbols.
 *
 * A spec lists each input (name, dtype, rank, dims) and each size symbol (name, the
 * user's Dim name when known, the declared range and the compiled lower bound). A dim is
 * either static (sym == -1, size b) or affine in one symbol: a*sym + b.
 *
 * Sources, best first: the spec our export helper embeds in the package's metadata JSON
 * under "aoti_fuzz.spec" (AF_SPEC_EMBEDDED), one recovered from the generated wrapper .cpp
 * (AF_SPEC_WRAPPER), or a JSON file given by the user (AF_SPEC_FILE). All share one JSON
 * format, documented in docs/spec-format.md.
 *
 * An af_spec is a plain value (fixed-size arrays, no pointers): copy it freely. */
#ifndef AOTIF_SPEC_H
#define AOTIF_SPEC_H

#include <stdint.h>
#include <stdio.h>

#include "aotif/error.h"

#define AF_MAX_INPUTS 64
#define AF_MAX_RANK 8
#define AF_MAX_SYMS 32
#define AF_NAME_MAX 64
/* Largest magnitude of any integer in a spec (sizes, bounds, int ranges): 2^53, the
 * largest range JSON numbers (doubles) hold exactly. A wrapper dim with no upper bound
 * gets this as its max. */
#define AF_INT_LIMIT ((int64_t)1 << 53)

typedef enum af_dtype {
    AF_DT_FLOAT32 = 0,
    AF_DT_FLOAT16,
    AF_DT_BFLOAT16,
    AF_DT_FLOAT64,
    AF_DT_INT64,
    AF_DT_INT32,
    AF_DT_INT16,
    AF_DT_INT8,
    AF_DT_UINT8,
    AF_DT_BOOL,
    AF_DT_COUNT
} af_dtype;

const char *af_dtype_name(af_dtype dt);          /* "float32", ... */
int af_dtype_from_name(const char *name);        /* -1 if unknown; accepts "torch.float32" too */
size_t af_dtype_size(af_dtype dt);
int af_dtype_is_float(af_dtype dt);

typedef struct af_dim {
    int sym;   /* index into af_spec.syms, or -1 for a static dim */
    int64_t a; /* size = a * value(sym) + b; a is 0 when sym == -1 */
    int64_t b;
} af_dim;

typedef struct af_input {
    char name[AF_NAME_MAX];
    af_dtype dtype;
    int rank;
    af_dim dims[AF_MAX_RANK];
    int64_t int_lo, int_hi; /* value range for integer inputs (inclusive); default 0..16 */
} af_input;

typedef struct af_symbol {
    char name[AF_NAME_MAX];     /* symbol as in the graph and the wrapper, e.g. "s77" */
    char dim_name[AF_NAME_MAX]; /* the user's Dim name ("batch"), "" when unknown */
    int64_t min, max;           /* declared range (inclusive) */
    int64_t compiled_min;       /* lower bound the compiled checks enforce (>= min) */
    int64_t compiled_max;       /* upper bound the compiled checks enforce */
} af_symbol;

typedef enum af_spec_source {
    AF_SPEC_NONE = 0,
    AF_SPEC_EMBEDDED,
    AF_SPEC_WRAPPER,
    AF_SPEC_FILE,
} af_spec_source;

typedef struct af_spec {
    af_spec_source source;
    int n_inputs;
    af_input inputs[AF_MAX_INPUTS];
    int n_syms;
    af_symbol syms[AF_MAX_SYMS];
} af_spec;

const char *af_spec_source_name(af_spec_source s); /* "embedded", "wrapper", "file" */

/* Parse the spec JSON format (text, NUL-terminated). */
int af_spec_from_json(const char *text, af_spec_source source, af_spec *out, af_error *err);
/* Recover a spec from generated wrapper source (check_input_N bounds, run_impl bindings). */
int af_spec_from_wrapper(const char *cpp_text, af_spec *out, af_error *err);
/* Read and parse a spec file. */
int af_spec_from_file(const char *path, af_spec *out, af_error *err);
/* Take compiled bounds (and nothing else) from a wrapper-derived spec into `spec`, matching
 * symbols by name. Returns the number of symbols updated. */
int af_spec_merge_compiled(af_spec *spec, const af_spec *wrapper);

/* Serialize to the JSON format; malloc'ed string, caller frees. NULL on OOM. */
char *af_spec_to_json(const af_spec *spec);
/* Human description, one input and one symbol per line. */
void af_spec_print(const af_spec *spec, FILE *f);
/* Render one input's shape for a symbol assignment, e.g. "(0, 16)", into buf. */
void af_spec_shape_str(const af_spec *spec, int input, const int64_t *values, char *buf, size_t len);
/* Find a symbol by its name or its Dim name; -1 if none. */
int af_spec_find_symbol(const af_spec *spec, const char *name);
/* Compare two specs structurally (inputs, dtypes, dims, upper and compiled lower bounds).
 * Symbols are matched by position of first use. Returns 0 when they agree, else -1 with a
 * message naming the first difference. */
int af_spec_compare(const af_spec *a, const af_spec *b, char *why, size_t why_len);

#endif
