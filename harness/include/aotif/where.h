/* aotif/where.h — where in the model a failure is: kernel → source nodes → input, dim, symbol.
 *
 * The triage PyTorch's aoti-debug guide does by hand for an `index out of bounds` assert,
 * done from the package's own generated sources: find the assert text (or the named
 * kernel) in the wrapper .cpp and the kernel .cpp files; read the kernel's parameters and
 * its index arithmetic; map each size parameter `ksN` to the argument the wrapper launches
 * it with (`sM`), `sM` to the input size it was read from (`argK_1.size(d)`, run_impl's
 * bindings), and `argK_1` to the user's input name (the spec); write the assert in those
 * terms (`0 <= tmp7 < x.size(0)`); list the size checks the wrapper's check_input_N make
 * for those inputs, and whether they run at all (only with AOTI_RUNTIME_CHECK_INPUTS set);
 * and name the model code the kernel came from: the `Topologically Sorted Source Nodes`
 * comment where Inductor wrote one (CUDA wrappers), else the exported program's nodes
 * whose ops the kernel's name lists (`cpp_fused_argmax_index_mul_unsqueeze_0`: argmax,
 * index, mul, unsqueeze), with their stack traces.
 *
 * Everything here reads text; nothing runs. An af_where is a plain value (fixed-size
 * fields, no pointers): copy it freely. Every string in it is NUL-terminated and may hold
 * any bytes the package's sources hold: renderers quote it (af_where_markdown does). */
#ifndef AOTIF_WHERE_H
#define AOTIF_WHERE_H

#include <cjson/cJSON.h>

#include "aotif/error.h"
#include "aotif/package.h"
#include "aotif/result.h"
#include "aotif/spec.h"

#define AF_WHERE_MAX_ARGS 24   /* kernel parameters kept */
#define AF_WHERE_MAX_NODES 16  /* source nodes kept */
#define AF_WHERE_MAX_CODE 4    /* distinct model-code lines kept */
#define AF_WHERE_MAX_INDEX 8   /* index expressions kept */
#define AF_WHERE_MAX_CHECKS 16 /* (input, dim) size checks kept */
#define AF_WHERE_EXCERPT 2048  /* bytes of generated source quoted */

/* What a failure says about its place: a kernel or function name and/or its error text. */
typedef struct af_where_finding {
    char kernel[128]; /* "cpp_fused_argmax_index_mul_unsqueeze_0", "triton_poi_...", or "" */
    char text[256];   /* the error or assert text ("index out of bounds: 0 <= tmp7 < ks1"), or "" */
} af_where_finding;

/* Fill a finding from a run's result: the kernel from r->kernel, else the function torch's
 * exception names ("Exception raised from NAME at"), else the first model frame that names a
 * generated kernel (cpp_* / triton_*), else the kernel after "@ " in the signature; the
 * text is the first line of the message. Returns 1 when anything was found, else 0. */
int af_where_finding_from_result(const af_result *r, af_where_finding *out);

typedef enum af_where_status {
    AF_WHERE_FOUND = 0,  /* the kernel was found in the sources */
    AF_WHERE_NO_SOURCES, /* the package holds no generated source to read */
    AF_WHERE_NOT_FOUND,  /* sources, but neither the kernel nor the assert text is in them */
    AF_WHERE_NO_KERNEL,  /* the finding names no kernel and no text to look for */
} af_where_status;

/* One kernel parameter and what it is launched with. */
typedef struct af_where_arg {
    char param[48];     /* the kernel's parameter: "ks1", "in_ptr0" */
    char value[96];     /* the launch argument, casts dropped: "s77", "arg0_1", "buf0", "16L" */
    char in_terms[160]; /* the value in input terms: "x.size(0)", "x", "" when it says nothing */
    int is_size;        /* an integer size argument (a ksN, or a value with a size symbol) */
    int sym;            /* spec symbol the value is (when it is one symbol), else -1 */
    int input;          /* input the value reads (a size of, or the tensor), else -1 */
    int dim;            /* for a size: the dim of that input it was read from, else -1 */
} af_where_arg;

/* One address computed from sizes: a load or store at ptr + expr with a ksN in expr. */
typedef struct af_where_index {
    char ptr[48];       /* "in_ptr0" */
    char ptr_terms[96]; /* what it points to: "x", "buf0" */
    char expr[192];     /* as written: "(-16L) + x0 + 16L*ks0" */
    char in_terms[256]; /* in input terms: "(-16L) + x0 + 16L*x.size(0)" */
    int line;           /* 1-based line in where.source */
} af_where_index;

/* The wrapper's check_input_N size checks for one dim of one input. */
typedef struct af_where_check {
    int input; /* spec input index (K of input_handles[K]) */
    int dim;
    int has_lower; /* "dim value is too small at d, expected it to be >= L" */
    int64_t lower;
    int has_upper; /* "dim value is too large at d, expected to be <= U" */
    int64_t upper;
    int has_exact; /* "unmatched dim value at d, expected: N" */
    int64_t exact;
} af_where_check;

typedef struct af_where {
    af_where_status status;
    char why[256];           /* for a status other than FOUND: what was looked for, where */
    char kernel[128];        /* the kernel found */
    char kind[16];           /* "cpp" (C++ kernel) or "triton" */
    char source[160];        /* file (package entry's base name) holding its definition */
    int line;                /* 1-based line of the definition in source */
    int declared_only;       /* source holds only a declaration (kernel source missing) */
    char launch_source[160]; /* file holding the launch (the wrapper) */
    int launch_line;         /* 1-based line of the launch call, 0 when not found */
    /* step 6: the model's code */
    int n_nodes;
    char nodes[AF_WHERE_MAX_NODES][AF_NAME_MAX]; /* source node names: "argmax", "select" */
    char aten[AF_WHERE_MAX_NODES][AF_NAME_MAX];  /* their ATen ops: "aten.argmax" */
    char nodes_from[64]; /* "source-node comment", "exported program (kernel name)",
                          * "kernel name" (no program: ops split from the name) */
    int n_code;
    char code[AF_WHERE_MAX_CODE][256]; /* "crossidx.py:15 in forward: return x[y.argmax()...]" */
    /* steps 3-5: parameters, launch arguments, inputs */
    int n_args;
    af_where_arg args[AF_WHERE_MAX_ARGS];
    int n_index;
    af_where_index index[AF_WHERE_MAX_INDEX];
    /* the assert, when the finding's text is one in the sources */
    int has_assert;
    int assert_line;        /* 1-based line in source */
    char assert_text[256];  /* "index out of bounds: 0 <= tmp7 < ks1" */
    char assert_expr[192];  /* "0 <= tmp7 < ks1" */
    char assert_terms[256]; /* "0 <= tmp7 < x.size(0)" */
    char index_var[32];     /* "tmp7" */
    char index_from[160];   /* pointers the index is loaded from: "out_ptr0 (buf0)" */
    /* the wrapper's checks of the inputs the kernel's sizes come from */
    int n_checks;
    af_where_check checks[AF_WHERE_MAX_CHECKS];
    int checks_found; /* the wrapper has check_input_N functions at all */
    int checks_gated; /* they run only when AOTI_RUNTIME_CHECK_INPUTS is set */
    /* a few lines of generated source around the assert (or the kernel's index arithmetic) */
    char excerpt_source[160];
    int excerpt_line; /* 1-based line of the excerpt's first line */
    char excerpt[AF_WHERE_EXCERPT];
} af_where;

/* One generated source: a package entry's base name and its text (borrowed). */
typedef struct af_where_src {
    const char *name;
    const char *text;
    int is_wrapper; /* the wrapper .cpp (check_input_N, run_impl, the launches) */
} af_where_src;

/* Triage a finding over the given sources. `exported_json` (a serialized ExportedProgram,
 * may be NULL) names the source nodes where no comment does; `spec` (may be NULL) names
 * inputs and symbols. Always fills `out` (status says how far it got) and returns 0; -1
 * only for bad arguments. */
int af_where_find(const af_where_src *srcs, int n_srcs, const char *exported_json,
                  const af_spec *spec, const af_where_finding *f, af_where *out, af_error *err);

/* The same over an open package: its wrapper text (pkg->wrapper_cpp), its kernel sources
 * (the .kernel.cpp and .py files under data/aotinductor/<model>/, read from the zip into memory,
 * nothing extracted) and its exported program. -1 when the package file cannot be read again. */
int af_where_from_package(const af_package *pkg, const af_spec *spec, const af_where_finding *f,
                          af_where *out, af_error *err);

/* A "## Where" Markdown section (ending in a blank line): generated source in fences longer
 * than any backtick run it holds, names from the package escaped for inline Markdown.
 * malloc'ed; the caller frees. NULL on OOM. `spec` may be NULL. */
char *af_where_markdown(const af_where *w, const af_spec *spec);

/* Add w as an object under `key` to `obj`. Returns 0, or -1 on OOM. `spec` may be NULL. */
int af_where_add_json(cJSON *obj, const char *key, const af_where *w, const af_spec *spec);

#endif
