/* aotif/symbolize.h — naming a crashed worker's frames, in the tool, and the names that go
 * into a SIGNAL signature.
 *
 * The worker's crash handler may only do async-signal-safe work, so it writes each frame as
 * "<module path>+0x<vaddr>" (see af_result.frames). The tool, which has all the time it
 * needs, opens each module's ELF file, finds the function whose symbol covers vaddr (in
 * .symtab where the file has one, which also names local functions such as an OpenMP
 * outlined body `cpp_fused_..._omp_fn.0`, else in .dynsym), demangles it, and rewrites the
 * frame as "module!function+0xoff".
 *
 * A signature key is a function name made stable: demangled, without parameter lists,
 * template arguments, return type, "(anonymous namespace)::", compiler clone suffixes
 * (.cold, .isra.0, ._omp_fn.0, ...) and ATen's per-instruction-set namespaces (AVX2::,
 * AVX512::, DEFAULT::, ...), so that
 * `_ZN5torch12aot_inductor16AOTInductorModel8run_implEPP16AtenTensorOpaqueS4_PvP23AOTIProxyExecutorOpaque`
 * becomes `torch::aot_inductor::AOTInductorModel::run_impl`. */
#ifndef AOTIF_SYMBOLIZE_H
#define AOTIF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "aotif/error.h"
#include "aotif/result.h"

typedef struct af_symbolizer af_symbolizer;

/* A symbolizer with an empty cache. model_path (may be NULL) is the model .so as loaded by
 * the workers; its frames are flagged AF_FRAME_MODEL and named model_label ("model.so").
 * Both strings are copied. Free with af_symbolizer_free. NULL on allocation failure. */
af_symbolizer *af_symbolizer_new(const char *model_path, const char *model_label, af_error *err);
/* Unmap every cached module and free. NULL is fine. */
void af_symbolizer_free(af_symbolizer *s);

/* The function of the ELF file at `path` that covers `vaddr` (a link-time virtual address:
 * a PC minus the module's load bias; for a shared object or PIE that is not the file
 * offset). Only sized STT_FUNC / STT_GNU_IFUNC symbols count. On success *name points at the
 * symbol's raw (mangled) name, valid until af_symbolizer_free, and *func_off (if not NULL)
 * is vaddr minus the symbol's start. Each file is read once and cached, a file that cannot
 * be read or parsed too. Returns 0, or -1 (err filled) when no symbol covers vaddr or the
 * file is unreadable, not a 64-bit ELF, or truncated. */
int af_symbolizer_lookup(af_symbolizer *s, const char *path, uint64_t vaddr, const char **name,
                         uint64_t *func_off, af_error *err);

/* Rewrite r's raw frames (as the crash handler wrote them) into display frames and set
 * r->frame_flags. Frames already symbolized (flags set, or holding '!') are left alone. A
 * return address (every frame but the first, which is the faulting PC) is looked up one
 * byte back, so a call that ends its function is charged to its caller. Never fails: a
 * frame that cannot be named keeps its module and offset. */
void af_symbolize_frames(af_symbolizer *s, af_result *r);

/* Demangle an Itanium C++ ABI name (libstdc++'s __cxa_demangle) into out. Returns 0, or -1
 * with `sym` copied as is when it is not a mangled name. Text longer than len is cut. */
int af_demangle(const char *sym, char *out, size_t len);

/* The signature key of a function name, raw or demangled (see the top of this file). */
void af_symbol_key(const char *name, char *out, size_t len);

/* Whether a frame names no bug: in a module of the C/C++/OpenMP runtime or the loader (by
 * file name: libc, libpthread, ld-linux, libstdc++, libgcc_s, libgomp, ...), or a function
 * that only allocates, frees, dispatches or loops on behalf of the code that went wrong
 * (malloc/free, operator new/delete, c10 allocators, the signal trampoline, c10::function_ref
 * and std::function trampolines, TensorIterator's loop drivers). `key` is af_symbol_key's. */
int af_frame_is_noise(const char *module, const char *key);

/* The frames part of a SIGNAL signature, "f1 / f2 / f3", into out: up to three keys from the
 * top of the stack, skipping unnamed frames, our own executable's frames (AF_FRAME_SELF) and
 * af_frame_is_noise, and folding repeats. The model's topmost frame names the bug best: the
 * list ends with it (its callers are the fixed run_impl / container / harness chain, which
 * an OpenMP worker thread's stack does not even have), and when it lies below the first
 * three, it takes the third place. With no usable name: the module of the model's first frame,
 * else of the top frame, else "". Never an offset or an address. */
void af_signature_frames(const af_result *r, char *out, size_t len);

#endif
