/* repro_sh.c — repro.sh: the minimal case through aoti-run, no Python needed; see repro.h.
 *
 * The script is a comment block (package, inputs, failure, usage), the paths it needs as
 * shell variables, and one exec of aoti-run with the package, the model, the device, the
 * contract it was minimized under (--spec / --exported / --beyond-contract), the eager
 * comparison a MISMATCH needs, and every symbol as --shape NAME=VALUE. Every path and name
 * is one single-quoted shell word (af_sh_quote); "$@" passes the user's extra flags
 * (--json, --repeat 5) on to aoti-run. */
#include "repro_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

/* After TORCH_LIB_SEEN=DIR: the libtorch the minimizer used, unless the user's environment
 * names one (or a Python to take it from), and only while it is still there. */
static const char k_torch_lib_seen[] =
    "\n# the libtorch the minimizer used, unless told otherwise\n"
    "if [ -z \"${AOTI_FUZZ_TORCH_LIB:-}\" ] && [ -z \"${AOTI_FUZZ_PYTHON:-}\" ] &&\n"
    "   [ -e \"$TORCH_LIB_SEEN/libtorch.so\" ]; then\n"
    "    AOTI_FUZZ_TORCH_LIB=$TORCH_LIB_SEEN\n"
    "    export AOTI_FUZZ_TORCH_LIB\nfi\n";

/* The name to give aoti-run --shape for symbol k: the Dim name when it finds k. */
static const char *sym_arg(const af_spec *spec, int k)
{
    const af_symbol *s = &spec->syms[k];
    if (s->dim_name[0] && af_spec_find_symbol(spec, s->dim_name) == k)
        return s->dim_name;
    return s->name;
}

/* The exec of aoti-run: the package, how to run it, and the case. */
static void sh_exec(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_case *c = info->minimal;
    af_sb_puts(b, "exec \"${AOTI_RUN:-$AOTI_RUN_BUILT}\" \"$PACKAGE\" --model ");
    af_sb_sh_quoted(b, info->pkg->model);
    af_sb_puts(b, " --device ");
    af_sb_sh_quoted(b, af_repro_device(info));
    if (info->spec_file && *info->spec_file) {
        af_sb_puts(b, " --spec ");
        af_sb_sh_quoted(b, info->spec_file);
    }
    if (info->exported_file && *info->exported_file) {
        af_sb_puts(b, " --exported ");
        af_sb_sh_quoted(b, info->exported_file);
    }
    if (spec->beyond_contract)
        af_sb_puts(b, " --beyond-contract");
    if (info->with_check_inputs)
        af_sb_puts(b, " --check-inputs");
    if (info->result->cls == AF_RES_MISMATCH) { /* a wrong value is seen only against eager */
        af_sb_puts(b, " --eager");
        if (info->have_tol)
            af_sb_add(b, " --rtol %.17g --atol %.17g", info->rtol, info->atol);
    }
    af_sb_puts(b, " \\\n   ");
    for (int k = 0; k < spec->n_syms; k++) {
        char assign[AF_NAME_MAX + 32];
        snprintf(assign, sizeof assign, "%s=%" PRId64, sym_arg(spec, k), c->values[k]);
        af_sb_puts(b, " --shape ");
        af_sb_sh_quoted(b, assign);
    }
    /* aoti-run takes a non-negative int64 seed; the fill only depends on seed mod 1000003 */
    uint64_t seed = c->seed <= (uint64_t)INT64_MAX ? c->seed : c->seed % AF_FILL_MOD;
    af_sb_add(b, " --fill %s --seed %" PRIu64 " \"$@\"\n", af_fill_name(c->fill), seed);
}

/* The comment block, and the variables sh_exec uses. */
static void sh_head(af_sbuf *b, const af_repro_info *info)
{
    char t[PATH_MAX], line[4096];
    af_sb_puts(b, "#!/bin/sh\n# The minimal case of an AOTInductor failure, run by aoti-run (no "
                  "Python needed).\n# Written by aoti-minimize (aoti-fuzz " AF_VERSION ").\n");
    af_sb_add(b, "#   package: %s\n", af_text_ascii(info->pkg->abspath, t, sizeof t));
    af_repro_inputs_line(info->spec, info->minimal, line, sizeof line);
    af_sb_add(b, "#   inputs:  %s\n", line);
    af_sb_add(b, "#   failure: %s\n", af_text_ascii(info->result->signature, line, sizeof line));
    af_sb_puts(b,
               "# Usage: sh repro.sh [aoti-run options: --json, --repeat 5, --check-inputs, -v]\n"
               "# Exit status (aoti-run's): 1 the case failed (compare the signature), 0 it ran "
               "fine, 2 bad input.\n"
               "# $AOTI_RUN overrides the aoti-run binary; $AOTI_FUZZ_TORCH_LIB the libtorch "
               "directory.\nset -u\n");
    af_sb_puts(b, "AOTI_RUN_BUILT=");
    af_sb_sh_quoted(b, info->aoti_run ? info->aoti_run : "aoti-run");
    af_sb_puts(b, "\nPACKAGE=");
    af_sb_sh_quoted(b, info->pkg->abspath);
    af_sb_puts(b, "\n");
    if (info->torch_lib && *info->torch_lib) {
        af_sb_puts(b, "TORCH_LIB_SEEN=");
        af_sb_sh_quoted(b, info->torch_lib);
        af_sb_puts(b, k_torch_lib_seen);
    }
}

char *af_repro_sh_text(const af_repro_info *info)
{
    af_sbuf b = {0};
    sh_head(&b, info);
    sh_exec(&b, info);
    return af_sb_take(&b);
}
