/* fuzz_contract.c — libFuzzer target for the contract reader (harness/contract.c): a serialized
 * ExportedProgram (models/<name>.json of a unified archive) through af_contract_from_json, then
 * af_contract_apply onto a package spec made from the contract itself, as a wrapper would give
 * it (names s<digits>, compiled bounds = declared ones), with some dynamic dims fixed to a
 * value, as Inductor does when it specializes one (adaptive pooling). Seeded with the exported
 * programs of tests/fixtures/sources and of the example packages.
 *
 * Only memory and UB errors are findings here: the apply may refuse the made-up spec, but only
 * with AF_E_INPUT. */
#include "fuzz_common.h"

#include "aotif/contract.h"

static af_spec from_contract(const af_contract *c, uint64_t choice)
{
    af_spec s;
    memset(&s, 0, sizeof s);
    s.source = AF_SPEC_WRAPPER;
    s.n_syms = c->n_syms;
    for (int k = 0; k < c->n_syms; k++) {
        af_symbol *y = &s.syms[k];
        snprintf(y->name, sizeof y->name, "s%d", k);
        y->min = y->decl_min = y->compiled_min = c->syms[k].min;
        y->max = y->decl_max = y->compiled_max = c->syms[k].max;
        y->decl_from = AF_FROM_WRAPPER;
    }
    s.n_inputs = c->n_inputs;
    for (int i = 0; i < c->n_inputs; i++) {
        const af_contract_input *ci = &c->inputs[i];
        af_input *in = &s.inputs[i];
        snprintf(in->name, sizeof in->name, "arg%d_1", i);
        in->dtype = ci->dtype;
        in->rank = ci->rank;
        for (int d = 0; d < ci->rank && d < AF_MAX_RANK; d++) {
            const af_contract_dim *cd = &ci->dims[d];
            int fix = (choice >> ((i * AF_MAX_RANK + d) % 64)) & 1;
            if (cd->sym >= 0 && !fix) {
                in->dims[d] = (af_dim){.sym = cd->sym, .a = cd->a, .b = cd->b};
            } else if (cd->sym >= 0 && cd->sym < c->n_syms) {
                /* fixed at the symbol's min, wrapping as the parsed numbers may be huge */
                uint64_t v = (uint64_t)cd->a * (uint64_t)c->syms[cd->sym].min + (uint64_t)cd->b;
                in->dims[d] = (af_dim){.sym = -1, .a = 0, .b = (int64_t)v};
            } else {
                in->dims[d] = (af_dim){.sym = -1, .a = 0, .b = cd->b};
            }
        }
        in->int_lo = 0;
        in->int_hi = 1;
    }
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static af_contract c;
    static af_spec s;
    af_error err = {0};
    char *text = fz_cstr(data, size);
    if (af_contract_from_json(text, "model.json", &c, &err) == 0) {
        FZ_CHECK(c.n_inputs >= 0 && c.n_inputs <= AF_MAX_INPUTS, "n_inputs %d", c.n_inputs);
        FZ_CHECK(c.n_syms >= 0 && c.n_syms <= AF_MAX_SYMS, "n_syms %d", c.n_syms);
        for (int i = 0; i < c.n_inputs; i++) {
            FZ_CHECK(c.inputs[i].rank >= 0 && c.inputs[i].rank <= AF_MAX_RANK, "rank %d",
                     c.inputs[i].rank);
            for (int d = 0; d < c.inputs[i].rank; d++)
                FZ_CHECK(c.inputs[i].dims[d].sym < c.n_syms, "input %d dim %d: symbol %d of %d", i,
                         d, c.inputs[i].dims[d].sym, c.n_syms);
        }
        s = from_contract(&c, fz_hash(data, size));
        af_error_clear(&err);
        if (af_contract_apply(&c, &s, "fuzz", &err) < 0)
            FZ_CHECK(err.code == AF_E_INPUT, "apply refusal with code %d: %s", err.code,
                     err.message);
    } else {
        FZ_CHECK(err.code == AF_E_INPUT, "refusal with code %d: %s", err.code, err.message);
    }
    free(text);
    return 0;
}
