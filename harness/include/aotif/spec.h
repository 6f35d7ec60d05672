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
 * An af_spec is a plain value (fixed-size arrays, no pointers): copy it freely. The dtypes
 * are in aotif/dtype.h (included here). */
#ifndef AOTIF_SPEC_H
#define AOTIF_SPEC_H

#include <stdint.h>
#include <stdio.h>

#include "aotif/dtype.h"
#include "aotif/error.h"

#define AF_MAX_INPUTS 64
#define AF_MAX_RANK 8
#define AF_MAX_SYMS 32
#define AF_NAME_MAX 64
/* Largest magnitude of any integer in a spec (sizes, bounds, int ranges): 2^53, the
 * largest range JSON numbers (doubles) hold exactly. A wrapper dim with no upper bound
 * gets this as its max. */
#define AF_INT_LIMIT ((int64_t)1 << 53)

typedef struct af_dim {
    int sym;   /* index into af_spec.syms, or -1 for a static dim */
    int64_t a; /* size = a * value(sym) + b; a is 0 when sym == -1 */
    int64_t b;
} af_dim;

/* Where a fact of the spec came from. Reports name it next to the fact, so a reader can
 * tell a bound that was read from one that was assumed. */
typedef enum af_origin {
    AF_FROM_ASSUMED = 0, /* nothing said it: a default of ours */
    AF_FROM_EXPORTED,    /* the serialized ExportedProgram (unified archive or --exported) */
    AF_FROM_EMBEDDED,    /* the spec aotif_export embedded in the package metadata */
    AF_FROM_WRAPPER,     /* the generated wrapper .cpp */
    AF_FROM_FILE,        /* a --spec file */
    AF_FROM_COUNT
} af_origin;

/* "exported program", "embedded spec", "wrapper", "spec file", "assumed" */
const char *af_origin_name(af_origin o);
/* Inverse of af_origin_name; -1 if unknown. */
int af_origin_from_name(const char *name);

/* Integer inputs whose valid values nothing states get [0, AF_INT_ASSUMED_HI]: valid as an
 * index into any table with at least two rows. */
#define AF_INT_ASSUMED_HI 1

typedef struct af_input {
    char name[AF_NAME_MAX];
    af_dtype dtype;
    int rank;
    af_dim dims[AF_MAX_RANK];
    int64_t int_lo, int_hi; /* value range for integer inputs (inclusive) */
    af_origin name_from;    /* where the name came from (the wrapper only knows argN_1) */
    af_origin int_from;     /* where int_lo/int_hi came from */
    char int_why[160];      /* for int_from == exported: the use that bounds it, else "" */
} af_input;

typedef struct af_symbol {
    char name[AF_NAME_MAX];     /* symbol as in the graph and the wrapper, e.g. "s77" */
    char dim_name[AF_NAME_MAX]; /* the user's Dim name ("batch"), "" when unknown */
    int64_t min, max;           /* the range the tools explore (inclusive): the declared
                                 * range, or wider with --beyond-contract */
    int64_t decl_min, decl_max; /* the declared range (the contract) */
    af_origin decl_from;        /* where decl_min/decl_max came from (assumed: unknown) */
    int max_unbounded;          /* declared without an upper bound; decl_max is our clamp */
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
    int beyond_contract;   /* explore below declared minimums and out-of-range index values */
    char contract_src[96]; /* where the contract was read: "models/model.json in the package",
                            * "--exported FILE", "" when none was read */
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
/* The same as a cJSON object, and the contract gaps (af_spec_gap) as a cJSON array of
 * {symbol, dim, declared_min, compiled_min, declared_max, compiled_max}: for a caller
 * building a larger document, which owns what they return. NULL when out of memory. */
struct cJSON *af_spec_json(const af_spec *spec);
struct cJSON *af_spec_gaps_json(const af_spec *spec);
/* Explore beyond the declared contract: every symbol from 0 (the max stays), and the
 * "wide" fill becomes legal. Sets spec->beyond_contract; decl_min/decl_max are kept. */
void af_spec_widen_beyond_contract(af_spec *spec);
/* Whether every symbol's declared range was read (not assumed). */
int af_spec_contract_known(const af_spec *spec);
/* Whether symbol k has a contract gap: its declared range (read, not assumed) admits sizes
 * below the compiled lower bound (0/1 specialization: declared min=1, compiled >= 2). */
int af_spec_gap(const af_spec *spec, int k);
/* Human description, one input and one symbol per line, each fact with its origin, then
 * the contract gaps. */
void af_spec_print(const af_spec *spec, FILE *f);
/* Render one input's shape for a symbol assignment, e.g. "(0, 16)", into buf. */
void af_spec_shape_str(const af_spec *spec, int input, const int64_t *values, char *buf,
                       size_t len);
/* Find a symbol by its name or its Dim name; -1 if none. */
int af_spec_find_symbol(const af_spec *spec, const char *name);
/* Compare two specs structurally (inputs, dtypes, dims, upper and compiled lower bounds).
 * Symbols are matched by position of first use. Returns 0 when they agree, else -1 with a
 * message naming the first difference. */
int af_spec_compare(const af_spec *a, const af_spec *b, char *why, size_t why_len);
/* Whether a stated spec (embedded or a spec file) can describe the compiled model whose
 * wrapper gave `wrapper`: the same number of inputs, each with the wrapper's dtype and rank,
 * and every size the model was compiled static at that size. A stated spec may pin a dim the
 * wrapper leaves dynamic (it narrows the contract) and may name symbols differently. 0 when
 * it fits, else -1 with the first contradiction in `why`: cases built from it would hand the
 * model buffers of another size or type than it reads. */
int af_spec_fits_wrapper(const af_spec *spec, const af_spec *wrapper, char *why, size_t why_len);

#endif
