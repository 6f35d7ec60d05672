/* replay_main.c — a main for the parser fuzz targets without libFuzzer: runs each file given
 * once through LLVMFuzzerTestOneInput (a directory: each regular file in it; "-p PREFIX DIR":
 * those whose names start with PREFIX). Built in every preset, so the targets compile
 * everywhere and ctest replays the saved reproducers (tests/fixtures/parser_crashes) and the
 * seeds: a property the target checks aborts, which fails the test. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aotif/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
    af_error err = {0};
    size_t len = 0;
    char *buf = af_read_file(path, 64u << 20, &len, &err);
    if (!buf) {
        fprintf(stderr, "replay: %s\n", err.message);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
    free(buf);
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of dir whose names start with prefix, in name order. Returns the count run, -1. */
static int run_dir(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                abort();
            names = nn;
        }
        if (!(names[n++] = strdup(e->d_name)))
            abort();
    }
    closedir(d);
    if (n) /* qsort(NULL, 0) is UB */
        qsort(names, n, sizeof *names, name_cmp);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && run_file(path) < 0)
            rc = -1;
        free(names[i]);
    }
    free(names);
    return rc < 0 ? -1 : (int)n;
}

int main(int argc, char **argv)
{
    const char *prefix = "";
    int failed = 0, first = 1;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
            prefix = argv[++i];
            continue;
        }
        first = 0;
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            failed |= run_dir(argv[i], prefix) < 0;
        else
            failed |= run_file(argv[i]) < 0;
        prefix = ""; /* -p holds for the next path only */
    }
    if (first) {
        fprintf(stderr, "usage: %s [[-p PREFIX] FILE|DIR]...\n", argv[0]);
        return 2;
    }
    return failed;
}
