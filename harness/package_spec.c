/* package_spec.c — the spec of an open package: which source of it wins, and the contract.
 *
 * A spec file given by the user wins outright. Else the spec the package embeds in its
 * metadata (aoti_fuzz.spec), with the compiled bounds of the wrapper source merged in after
 * checking that the two agree; else the wrapper's own, whose compiled lower bound 2 is read
 * as an assumed 0 (see package_spec). Then, unless the user gave a spec file, the exported
 * program (a --exported file, or the unified archive's own) states the contract: declared
 * ranges, input names, index value ranges (contract.h). */
#include "aotif/package.h"

#include "aotif/contract.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dim names, and integer ranges stated by the model's author, from an embedded spec:
 * the exported program has neither. */
static void keep_from_embedded(af_spec *spec, const af_spec *emb)
{
    for (int k = 0; k < spec->n_syms; k++)
        for (int j = 0; j < emb->n_syms; j++)
            if (!spec->syms[k].dim_name[0] && !strcmp(spec->syms[k].name, emb->syms[j].name))
                snprintf(spec->syms[k].dim_name, sizeof spec->syms[k].dim_name, "%s",
                         emb->syms[j].dim_name);
}

static int package_spec(const af_package *pkg, const char *spec_file, af_spec *out, af_error *err)
{
    af_spec wrapper;
    af_error werr = {0};
    int have_wrapper =
        pkg->wrapper_cpp && af_spec_from_wrapper(pkg->wrapper_cpp, &wrapper, &werr) == 0;

    if (spec_file) {
        if (af_spec_from_file(spec_file, out, err) != 0) {
            if (err)
                err->code = AF_E_INPUT; /* a missing or unreadable spec file is bad input */
            return -1;
        }
    } else {
        int embedded = 0;
        cJSON *meta = pkg->metadata_json ? cJSON_Parse(pkg->metadata_json) : NULL;
        const cJSON *v = meta ? cJSON_GetObjectItemCaseSensitive(meta, "aoti_fuzz.spec") : NULL;
        if (v && cJSON_IsString(v)) {
            if (af_spec_from_json(v->valuestring, AF_SPEC_EMBEDDED, out, err) != 0) {
                char why[sizeof err->message];
                snprintf(why, sizeof why, "%s", err ? err->message : "");
                cJSON_Delete(meta);
                return af_error_set(err, AF_E_INPUT, "%s: embedded spec: %s", pkg->path, why);
            }
            embedded = 1;
        }
        cJSON_Delete(meta);
        if (!embedded) {
            if (!have_wrapper) {
                if (pkg->wrapper_cpp)
                    return af_error_set(err, AF_E_INPUT,
                                        "%s: no embedded spec and the wrapper source could not "
                                        "be read (%s); give --spec FILE",
                                        pkg->path, werr.message);
                return af_error_set(err, AF_E_INPUT,
                                    "%s: no embedded spec and no wrapper source; give --spec FILE",
                                    pkg->path);
            }
            *out = wrapper;
            /* The wrapper only knows the compiled bounds. A compiled lower bound of 2 is
             * what 0/1 specialization leaves of a Dim declared with min 0 or 1 (torch 2.13
             * compiles >= 2 even for min=0), so the sizes 0 and 1 may well be in the
             * user's contract, and they are where the bugs are: explore them, and say
             * that the lower bound 0 is assumed. The exported program, when there is one,
             * replaces the assumption with the declared range. */
            for (int i = 0; i < out->n_syms; i++)
                if (out->syms[i].compiled_min == 2 && out->syms[i].min == 2)
                    out->syms[i].min = out->syms[i].decl_min = 0;
            return 0;
        }
    }
    if (have_wrapper) {
        char why[256];
        if (af_spec_fits_wrapper(out, &wrapper, why, sizeof why) != 0)
            return af_error_set(err, AF_E_INPUT,
                                "%s contradicts the compiled model (its wrapper source): %s",
                                spec_file ? spec_file : "the package's embedded spec", why);
        af_spec_merge_compiled(out, &wrapper);
    }
    return 0;
}

int af_package_spec(const af_package *pkg, const char *spec_file, const char *exported_file,
                    af_spec *out, af_error *err)
{
    if (package_spec(pkg, spec_file, out, err) != 0)
        return -1;
    if (spec_file)
        return 0; /* the user's statement of the contract wins */
    char *owned = NULL;
    const char *text = pkg->exported_json;
    char src[96];
    if (exported_file) {
        if (!(owned = af_exported_read(exported_file, pkg->model, err)))
            return -1;
        text = owned;
        snprintf(src, sizeof src, "--exported %s", exported_file);
    } else {
        snprintf(src, sizeof src, "the package's exported program (%s)", pkg->exported_entry);
    }
    if (!text)
        return 0;
    af_contract *c = calloc(1, sizeof *c);
    af_spec *emb = malloc(sizeof *emb);
    int rc = -1;
    if (!c || !emb) {
        af_error_set(err, AF_E_INTERNAL, "out of memory");
        goto done;
    }
    *emb = *out;
    if (af_contract_from_json(text, exported_file ? exported_file : pkg->exported_entry, c, err) !=
            0 ||
        af_contract_apply(c, out, src, err) != 0) {
        if (err)
            err->code = AF_E_INPUT;
        goto done;
    }
    if (emb->source == AF_SPEC_EMBEDDED)
        keep_from_embedded(out, emb);
    rc = 0;
done:
    free(c);
    free(emb);
    free(owned);
    return rc;
}
