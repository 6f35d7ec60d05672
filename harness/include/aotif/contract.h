/* aotif/contract.h — a model's contract, read from its serialized ExportedProgram.
 *
 * torch.export writes the program as JSON (models/<name>.json inside a unified PT2 archive
 * or a torch.export.save file). From it this module reads, with cJSON and no Python:
 *   - each symbol's declared range (range_constraints: what the user's Dim said, before
 *     the compiler's 0/1 specialization);
 *   - the user inputs in order: their names (input_ids, not arg0_1), dtypes and symbolic
 *     shapes (sizes are sympy reprs such as "Mul(Integer(2), Symbol('s77', ...))");
 *   - integer inputs used as an index: walking the graph from each user input through
 *     view-like ops and dtype casts to the index argument of embedding, embedding_bag,
 *     index_select, gather, index.Tensor or one_hot; their valid values are
 *     [0, size of the indexed dim), the minimum over all uses.
 * af_contract_apply then checks the contract against the package's own spec (the wrapper's)
 * and writes the contract's facts into the spec with their origin (AF_FROM_EXPORTED).
 *
 * af_contract is a plain value (fixed-size arrays, no pointers). */
#ifndef AOTIF_CONTRACT_H
#define AOTIF_CONTRACT_H

#include <stdint.h>

#include "aotif/error.h"
#include "aotif/spec.h"

/* Symbols declared without an upper bound are explored up to this (an assumption). */
#define AF_UNBOUNDED_MAX 4096

typedef struct af_contract_dim {
    int sym;   /* index into af_contract.syms, -1 for a static dim */
    int64_t a; /* size = a * sym + b */
    int64_t b;
} af_contract_dim;

typedef struct af_contract_input {
    char name[AF_NAME_MAX];
    af_dtype dtype;
    int is_float;
    int rank;
    af_contract_dim dims[AF_MAX_RANK];
    int64_t index_hi; /* largest valid value when used as an index, -1 when not */
    char
        index_why[160]; /* the use that sets index_hi: "aten.embedding into emb.weight (10 rows)" */
} af_contract_input;

typedef struct af_contract_sym {
    char name[AF_NAME_MAX];
    int64_t min, max; /* declared, inclusive; max is AF_UNBOUNDED_MAX when unbounded */
    int max_unbounded;
} af_contract_sym;

typedef struct af_contract {
    int n_inputs;
    af_contract_input inputs[AF_MAX_INPUTS];
    int n_syms;
    af_contract_sym syms[AF_MAX_SYMS];
    int n_index_uses; /* index uses found in the graph (all inputs) */
} af_contract;

/* Parse a serialized ExportedProgram (the text of models/<name>.json). `what` names the
 * source in messages. Every problem is one AF_E_INPUT line. */
int af_contract_from_json(const char *text, const char *what, af_contract *out, af_error *err);

/* Check `c` against `spec` (the package's own spec, from the wrapper or an embedded spec):
 * input count, dtypes, ranks, static sizes, dynamic dims, the wrapper's symbols and upper
 * bounds. A mismatch is one AF_E_INPUT line naming the first difference ("input 1 (x):
 * dtype float64 in the exported program, float32 in the package"). On success `spec` is
 * rewritten in the contract's terms: its inputs' names, symbols (the program's names, the
 * wrapper's compiled bounds mapped onto them, Dim names kept from `spec` where it had them),
 * declared ranges and index value ranges, each marked AF_FROM_EXPORTED; `src` goes to
 * spec->contract_src. */
int af_contract_apply(const af_contract *c, af_spec *spec, const char *src, af_error *err);

#endif
