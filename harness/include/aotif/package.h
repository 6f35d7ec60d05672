/* aotif/package.h — open a .pt2 package safely and find one model in it.
 *
 * A .pt2 holds native code: it is trusted input, like a shared library you are about to
 * load. Opening still refuses packages that are malformed or that try to escape the
 * extraction dir: entries with absolute paths, "..", symlinks, or over the size limit are
 * refused with AF_E_INPUT, as are models that cannot run from C (a .wrapper.json needs a
 * C++ proxy executor; a weights_config.json says the model's weights live in data/weights/,
 * which only Python's loader maps in). A unified PT2 archive (PyTorch's format holding the
 * serialized ExportedProgram, models/<model>.json, beside the AOTI model) opens like a plain
 * package: the program's own weights and constants under data/ are not the model's.
 *
 * Only the chosen model's files are extracted, into a private 0700 temp dir that
 * af_package_close removes. */
#ifndef AOTIF_PACKAGE_H
#define AOTIF_PACKAGE_H

#include <limits.h>
#include <stdint.h>

#include "aotif/error.h"
#include "aotif/spec.h"

#define AF_DEFAULT_MAX_ENTRY_BYTES (4LL << 30) /* 4 GiB per extracted entry */
/* Entries read into memory (the metadata and exported-program JSON, the wrapper source):
 * real ones are a few MB; a larger one is refused before it is inflated. */
#define AF_MAX_TEXT_ENTRY_BYTES (256LL << 20)

typedef struct af_package {
    char path[PATH_MAX];         /* as given by the user */
    char abspath[PATH_MAX];      /* realpath of it */
    char sha256[65];             /* hex digest of the whole file */
    char model[AF_NAME_MAX];     /* model name ("model" by default) */
    char tmpdir[PATH_MAX];       /* private 0700 dir, removed by af_package_close */
    char model_dir[PATH_MAX];    /* extracted data/aotinductor/<model>/ (the cubin dir) */
    char so_path[PATH_MAX];      /* extracted <stem>.wrapper.so */
    char blob_path[PATH_MAX];    /* extracted <stem>.wrapper_weights.blob, or "" */
    char device[16];             /* AOTI_DEVICE_KEY: "cpu" or "cuda" */
    char compute_capability[16]; /* AOTI_COMPUTE_CAPABILITY, "" for CPU packages */
    char cpu_isa[128];           /* AOTI_CPU_ISA, "" when absent */
    char *metadata_json;         /* the wrapper metadata JSON text (owned), or NULL */
    char *wrapper_cpp;           /* the wrapper .cpp text (owned), or NULL */
    char *exported_json;         /* models/<model>.json of a unified archive (owned), or NULL */
    char exported_entry[256];    /* its entry name, "" when absent */
    int n_cubins;                /* number of .cubin files extracted */
} af_package;

typedef struct af_package_opts {
    const char *model;       /* NULL = "model" */
    int64_t max_entry_bytes; /* 0 = AF_DEFAULT_MAX_ENTRY_BYTES */
} af_package_opts;

/* Open and extract. Returns a package the caller frees with af_package_close, or NULL. */
af_package *af_package_open(const char *path, const af_package_opts *opts, af_error *err);
/* Remove the temp dir and free. NULL is fine. */
void af_package_close(af_package *pkg);

/* The package's spec: spec_file if given, else the embedded spec, else the wrapper's.
 * Compiled bounds from the wrapper are merged into an embedded or file spec. Then, unless a
 * spec file was given, the contract: from `exported_file` (a torch.export.save file) if
 * given, else from the archive's own exported program; it is checked against the package
 * (a mismatch is AF_E_INPUT) and gives the declared ranges, input names and index value
 * ranges (contract.h). Without one, declared lower bounds are assumed 0 and integer inputs
 * [0, AF_INT_ASSUMED_HI], each marked AF_FROM_ASSUMED. */
int af_package_spec(const af_package *pkg, const char *spec_file, const char *exported_file,
                    af_spec *out, af_error *err);

/* Read the serialized ExportedProgram of `model` ("model" when NULL; the only one when the
 * file holds exactly one) from a torch.export.save file or unified archive: malloc'ed
 * NUL-terminated text the caller frees. Entries are checked like a package's; nothing is
 * extracted. */
char *af_exported_read(const char *path, const char *model, af_error *err);

/* Whether this CPU has every ISA extension in pkg->cpu_isa; fills `missing` if not. */
int af_cpu_has_isa(const char *isa_list, char *missing, size_t missing_len);

/* SHA-256 of a file as lowercase hex. */
int af_sha256_file(const char *path, char hex[65], af_error *err);

/* Whether dev names a device the tools run on: "cpu", "cuda" or "cuda:N" (N at most 3 digits). */
int af_device_name_ok(const char *dev);
/* The one reading of a device string: "cuda" or "cuda:N" is a CUDA device (1), else 0; its
 * index: N, 0 for "cuda", -1 for a non-CUDA device. */
int af_device_is_cuda(const char *dev);
int af_device_index(const char *dev);

#endif
