/* fuzz_crashfile.c — libFuzzer target for crash files (harness/crashfile.c): the file readers
 * af_crash_read (header line "AOTIF-CRASH 1" + JSON) and af_crash_read_sidecar (JSON alone),
 * through a memfd so the real open/fstat/read path runs, and af_crash_from_json on an
 * exact-size buffer with no NUL after it (the reader takes a length: ASan sees any read past
 * it). Seeded with crash files from real fuzzer runs (seeds/crashfile/).
 *
 * Properties: a crash object the reader accepts is written back (af_crash_to_json) as text it
 * accepts again, and the second writing is the same text (a fixed point); its case maps onto a
 * spec (af_crash_to_case) or is refused with AF_E_INPUT. */
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include "aotif/crashfile.h"

static af_spec spec; /* two symbols, as the crossidx/twosym examples: s77 (n), s17 (m) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char text[] =
        "{\"format\": \"aoti-fuzz-spec\", \"version\": 1,"
        " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"s77\", 16]},"
        "             {\"name\": \"y\", \"dtype\": \"int64\", \"shape\": [\"2*s17+1\"]}],"
        " \"symbols\": [{\"name\": \"s77\", \"dim\": \"n\", \"min\": 0, \"max\": 128},"
        "               {\"name\": \"s17\", \"dim\": \"m\", \"min\": 1, \"max\": 64}]}";
    af_error err = {0};
    if (af_spec_from_json(text, AF_SPEC_FILE, &spec, &err) < 0) {
        fprintf(stderr, "fuzz_crashfile: the built-in spec: %s\n", err.message);
        abort();
    }
    return 0;
}

static void check_parsed(const af_crash *c, const char *what)
{
    static af_crash c2;
    af_error err = {0};
    af_case cs;

    char *j1 = af_crash_to_json(c);
    FZ_CHECK(j1 != NULL, "%s: af_crash_to_json failed", what);
    FZ_CHECK(af_crash_from_json(j1, strlen(j1), "roundtrip.json", &c2, &err) == 0,
             "%s: the writer's JSON is refused: %s\n%s", what, err.message, j1);
    char *j2 = af_crash_to_json(&c2);
    FZ_CHECK(j2 != NULL, "%s: af_crash_to_json failed", what);
    FZ_CHECK(strcmp(j1, j2) == 0, "%s: not a fixed point:\n%s\n---\n%s", what, j1, j2);
    free(j2);
    free(j1);

    af_error_clear(&err);
    if (af_crash_to_case(c, &spec, &cs, &err) < 0)
        FZ_CHECK(err.code == AF_E_INPUT, "%s: to_case refusal with code %d: %s", what, err.code,
                 err.message);
    char side[PATH_MAX];
    (void)af_crash_sidecar_path(c->package_path, side, sizeof side);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static af_crash c;
    af_error err = {0};

    /* the object alone, from a buffer that ends where the input ends */
    char *exact = malloc(size ? size : 1);
    if (!exact)
        abort();
    memcpy(exact, data, size);
    if (af_crash_from_json(exact, size, "fuzz.json", &c, &err) == 0)
        check_parsed(&c, "from_json");
    else
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    free(exact);

    /* the files, through the path the tools use */
    int fd = memfd_create("crash.bin", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0)
            abort();
        off += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    af_error_clear(&err);
    if (af_crash_read(path, &c, &err) == 0)
        check_parsed(&c, "crash_read");
    else
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    af_error_clear(&err);
    if (af_crash_read_sidecar(path, &c, &err) == 0)
        check_parsed(&c, "read_sidecar");
    else
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    close(fd);
    return 0;
}
