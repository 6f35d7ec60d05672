/* test_spec_agreement.c — on every example package (a unified PT2 archive), three readings
 * of one model agree:
 *   - the contract read in C from the archive's exported program (declared ranges, input
 *     names) and the spec our export helper embedded, read from the same program in Python;
 *   - that contract and the spec recovered from the generated wrapper source (inputs,
 *     dtypes, dims, derived dims, compiled bounds);
 *   - where the corpus has a plain package of the same model: the plain package with
 *     --exported NAME.ep.pt2 gives the same contract as the unified archive. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "af_test.h"
#include "aotif/package.h"

static int ends_with(const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    return n >= m && strcmp(s + n - m, t) == 0;
}

/* The spec as JSON with what legitimately differs between readings cleared. */
static char *canonical(const af_spec *s)
{
    static af_spec c;
    c = *s;
    c.contract_src[0] = '\0';
    for (int k = 0; k < c.n_syms; k++)
        c.syms[k].dim_name[0] = '\0';
    return af_spec_to_json(&c);
}

static void check_one(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.pt2", dir, name);
    af_error err = {0};
    af_package *pkg = af_package_open(path, NULL, &err);
    CHECK(pkg != NULL);
    if (!pkg) {
        fprintf(stderr, "%s: %s\n", path, err.message);
        return;
    }
    static af_spec contract, embedded, wrapper, plain;
    CHECK(pkg->exported_json != NULL); /* a unified archive */
    CHECK_EQ_INT(af_package_spec(pkg, NULL, NULL, &contract, &err), 0);
    CHECK(contract.contract_src[0] != '\0');
    CHECK(af_spec_contract_known(&contract));
    for (int i = 0; i < contract.n_inputs; i++)
        CHECK_EQ_INT(contract.inputs[i].name_from, AF_FROM_EXPORTED);

    /* C's reading of the program == the helper's (Python) reading, embedded at export */
    cJSON *meta = pkg->metadata_json ? cJSON_Parse(pkg->metadata_json) : NULL;
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(meta, "aoti_fuzz.spec");
    CHECK(cJSON_IsString(js));
    if (cJSON_IsString(js) &&
        af_spec_from_json(js->valuestring, AF_SPEC_EMBEDDED, &embedded, &err) == 0) {
        CHECK_EQ_INT(embedded.n_inputs, contract.n_inputs);
        CHECK_EQ_INT(embedded.n_syms, contract.n_syms);
        for (int i = 0; i < embedded.n_inputs && i < contract.n_inputs; i++)
            CHECK_STR(contract.inputs[i].name, embedded.inputs[i].name);
        for (int k = 0; k < embedded.n_syms; k++) {
            int j = af_spec_find_symbol(&contract, embedded.syms[k].name);
            CHECK(j >= 0);
            if (j < 0)
                continue;
            CHECK_EQ_INT(contract.syms[j].decl_min, embedded.syms[k].min);
            CHECK_EQ_INT(contract.syms[j].decl_max, embedded.syms[k].max);
            CHECK_STR(contract.syms[j].dim_name, embedded.syms[k].dim_name);
        }
    }
    cJSON_Delete(meta);

    /* the contract and the wrapper: same structure and compiled bounds */
    CHECK(pkg->wrapper_cpp != NULL);
    if (pkg->wrapper_cpp && af_spec_from_wrapper(pkg->wrapper_cpp, &wrapper, &err) == 0) {
        static af_spec x;
        x = contract;
        for (int k = 0; k < x.n_syms; k++)
            x.syms[k].max = x.syms[k].compiled_max; /* the wrapper's max is its compiled one */
        char why[512];
        int same = af_spec_compare(&x, &wrapper, why, sizeof why);
        if (same != 0)
            fprintf(stderr, "%s: contract and wrapper differ: %s\n", path, why);
        CHECK_EQ_INT(same, 0);
    } else {
        fprintf(stderr, "%s: wrapper: %s\n", path, err.message);
        CHECK(0);
    }

    /* the plain package + --exported == the unified archive */
    char plain_path[4096], ep_path[4096];
    snprintf(plain_path, sizeof plain_path, "%s/%s.plain.pt2", dir, name);
    snprintf(ep_path, sizeof ep_path, "%s/%s.ep.pt2", dir, name);
    int with_plain = access(plain_path, F_OK) == 0;
    if (with_plain) {
        af_package *pp = af_package_open(plain_path, NULL, &err);
        CHECK(pp != NULL);
        if (pp) {
            CHECK(pp->exported_json == NULL);
            CHECK_EQ_INT(af_package_spec(pp, NULL, ep_path, &plain, &err), 0);
            char *a = canonical(&contract), *b = canonical(&plain);
            CHECK(a && b && strcmp(a, b) == 0);
            if (a && b && strcmp(a, b) != 0)
                fprintf(stderr, "%s: unified:\n%s\nplain --exported:\n%s\n", name, a, b);
            free(a);
            free(b);
            af_package_close(pp);
        }
    }
    printf("%s: %d inputs, %d symbols: exported program == embedded spec, == wrapper%s\n", name,
           contract.n_inputs, contract.n_syms,
           with_plain ? ", == plain package with --exported" : "");
    af_package_close(pkg);
}

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
    int seen = 0, plain = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".pt2") || ends_with(e->d_name, ".ep.pt2") ||
            ends_with(e->d_name, ".plain.pt2")) {
            plain += ends_with(e->d_name, ".plain.pt2");
            continue;
        }
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(e->d_name) - 4), e->d_name);
        check_one(argv[1], name);
        seen++;
    }
    closedir(d);
    CHECK(seen >= 7);  /* the corpus: lasttok, twosym, runtime_check, derived, healthy, ... */
    CHECK(plain >= 2); /* bert_encoder, conv_pool */
    TEST_MAIN_END();
}
