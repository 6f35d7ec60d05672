/* test_spec_agreement.c — on every example package, the spec our export helper embedded
 * and the spec recovered from the generated wrapper source describe the same shape space
 * (inputs, dtypes, dims, derived dims, compiled bounds). */
#include <dirent.h>

#include "af_test.h"
#include "aotif/package.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_spec_agreement EXAMPLES_DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "no examples dir %s: run corpus/build.py first\n", argv[1]);
        return 1;
    }
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".pt2") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        af_error err = {0};
        af_package *pkg = af_package_open(path, NULL, &err);
        CHECK(pkg != NULL);
        if (!pkg) {
            fprintf(stderr, "%s: %s\n", path, err.message);
            continue;
        }
        static af_spec embedded, wrapper;
        CHECK_EQ_INT(af_package_spec(pkg, NULL, NULL, &embedded, &err), 0);
        CHECK_EQ_INT(embedded.source, AF_SPEC_EMBEDDED);
        CHECK(pkg->wrapper_cpp != NULL);
        int rc = af_spec_from_wrapper(pkg->wrapper_cpp, &wrapper, &err);
        CHECK_EQ_INT(rc, 0);
        if (rc == 0) {
            char why[512];
            int same = af_spec_compare(&embedded, &wrapper, why, sizeof why);
            if (same != 0)
                fprintf(stderr, "%s: embedded and wrapper specs differ: %s\n", path, why);
            CHECK_EQ_INT(same, 0);
            printf("%s: %d inputs, %d symbols: embedded == wrapper\n", e->d_name,
                   embedded.n_inputs, embedded.n_syms);
        }
        af_package_close(pkg);
        seen++;
    }
    closedir(d);
    CHECK(seen >= 5); /* lasttok, twosym, runtime_check, derived, healthy */
    TEST_MAIN_END();
}
