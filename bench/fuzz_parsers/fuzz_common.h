/* fuzz_common.h — what the parser fuzz targets share: the input as a C string (an exact-size
 * copy, so ASan sees a read one past it), and a property check that aborts, so libFuzzer keeps
 * the input as a crash when a parser accepts what it cannot read back. */
#ifndef AF_FUZZ_COMMON_H
#define AF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry points, defined by each target */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* NUL-terminated copy of the input (the parsers read up to the first NUL); caller frees. */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A broken property: say which and abort (libFuzzer saves the input as crash-<sha1>). */
#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz property failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* FNV-1a of the input: a deterministic source of choices that libFuzzer's mutations reach
 * (a flipped byte flips the choices), without a prefix byte that would break the seeds. */
static inline uint64_t fz_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ull;
    return h;
}

#endif
