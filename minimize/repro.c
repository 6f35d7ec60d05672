/* repro.c — repro.py, repro.sh and report.md for a minimal case; see repro.h.
 *
 * The scripts are generated text, so the one thing that matters most is quoting: names and
 * paths come from a package, a spec or a file system we do not control. Anything that
 * lands in code goes through af_py_quote / af_sh_quote; anything in a comment, docstring
 * or prose goes through safe_text, which keeps printable ASCII only (a newline in a name
 * would otherwise end a comment and start code).
 *
 * repro.py rebuilds the inputs with the fill function of docs/fill.md in torch int64 ops,
 * so its tensors equal the worker's bit for bit; it prints a marker line
 * ("repro.py: the model raised T: message") before re-raising, which is what the re-check
 * reads. The re-checks run each script in its own process group with a time limit, capture
 * its output, and kill the whole group on timeout or when asked to stop. */
#include "repro.h"

#include "aotif/clock.h"
#include "aotif/env.h"
#include "aotif/fileio.h"
#include "aotif/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aotif/crashfile.h"

/* --- quoting ------------------------------------------------------------------------------ */

static int printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

char *af_py_quote(const char *s)
{
    int ascii = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (!printable(*p))
            ascii = 0;
    af_sbuf b = {0};
    /* non-ASCII or control bytes: a bytes literal turned into the str that Python's os
     * functions map back to exactly these bytes */
    af_sb_puts(&b, ascii ? "'" : "os.fsdecode(b'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\' || *p == '\'')
            af_sb_add(&b, "\\%c", *p);
        else if (printable(*p))
            af_sb_addn(&b, (const char *)p, 1);
        else
            af_sb_add(&b, "\\x%02x", *p);
    }
    af_sb_puts(&b, ascii ? "'" : "')");
    return af_sb_take(&b);
}

char *af_sh_quote(const char *s)
{
    af_sbuf b = {0};
    af_sb_puts(&b, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            af_sb_puts(&b, "'\\''");
        else
            af_sb_addn(&b, p, 1);
    }
    af_sb_puts(&b, "'");
    return af_sb_take(&b);
}

/* Printable ASCII only: every other byte, and each byte of `bad`, becomes '?' (or the
 * replacement at the same position in `with`). */
static const char *clean(const char *s, char *buf, size_t len, const char *bad, const char *with)
{
    size_t o = 0;
    if (!len)
        return "";
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 1 < len; p++) {
        const char *hit = *p ? strchr(bad, *p) : NULL;
        buf[o++] = !printable(*p) ? '?' : hit ? with[hit - bad] : (char)*p;
    }
    buf[o] = '\0';
    return buf;
}

/* For Python docstrings: no backslash (escapes) and no quotes (the closing triple quote). */
static const char *safe_text(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "\\'\"`", "????");
}

/* For comments and code blocks: printable ASCII. */
static const char *ptext(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "", "");
}

/* For Markdown prose and table cells: no backtick (code spans), no bar (cells). */
static const char *mdtext(const char *s, char *buf, size_t len)
{
    return clean(s, buf, len, "`|", "'/");
}

/* Add the quoted form of s to b. */
static void sb_py(af_sbuf *b, const char *s)
{
    char *q = af_py_quote(s ? s : "");
    if (!q) {
        b->oom = 1;
        return;
    }
    af_sb_puts(b, q);
    free(q);
}

static void sb_sh(af_sbuf *b, const char *s)
{
    char *q = af_sh_quote(s ? s : "");
    if (!q) {
        b->oom = 1;
        return;
    }
    af_sb_puts(b, q);
    free(q);
}

/* --- what the case looks like --------------------------------------------------------- */

/* The name to give aoti-run --shape for symbol k: the Dim name when it finds k. */
static const char *sym_arg(const af_spec *spec, int k)
{
    const af_symbol *s = &spec->syms[k];
    if (s->dim_name[0] && af_spec_find_symbol(spec, s->dim_name) == k)
        return s->dim_name;
    return s->name;
}

static const char *sym_label(const af_symbol *s)
{
    return s->dim_name[0] ? s->dim_name : s->name;
}

/* "(0, 16)" / "(0,)" / "()": a Python tuple of the input's sizes under case c. */
static void shape_tuple(const af_spec *spec, const af_case *c, int i, char *buf, size_t len)
{
    size_t o = 0;
    const af_input *in = &spec->inputs[i];
    o += (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < in->rank && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, d ? ", " : "",
                              af_case_dim(spec, c, i, d));
    if (o < len)
        snprintf(buf + o, len - o, in->rank == 1 ? ",)" : ")");
}

/* "(n, 16)" / "(2*n + 1, 4)": the declared shape, with Dim names where known. */
static void shape_symbolic(const af_spec *spec, int i, char *buf, size_t len)
{
    size_t o = 0;
    const af_input *in = &spec->inputs[i];
    char name[AF_NAME_MAX];
    o += (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < in->rank && o < len; d++) {
        const af_dim *dim = &in->dims[d];
        const char *sep = d ? ", " : "";
        if (dim->sym < 0) {
            o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, sep, dim->b);
            continue;
        }
        safe_text(sym_label(&spec->syms[dim->sym]), name, sizeof name);
        if (dim->a == 1)
            o += (size_t)snprintf(buf + o, len - o, "%s%s", sep, name);
        else
            o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64 "*%s", sep, dim->a, name);
        if (o < len && dim->b)
            o += (size_t)snprintf(buf + o, len - o, " %c %" PRId64, dim->b < 0 ? '-' : '+',
                                  dim->b < 0 ? -dim->b : dim->b);
    }
    if (o < len)
        snprintf(buf + o, len - o, in->rank == 1 ? ",)" : ")");
}

/* "x (0, 16), y (0, 16)" in printable ASCII. */
static void inputs_line(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < spec->n_inputs && o < len; i++) {
        char name[AF_NAME_MAX], shape[256];
        shape_tuple(spec, c, i, shape, sizeof shape);
        o += (size_t)snprintf(buf + o, len - o, "%s%s %s", i ? ", " : "",
                              safe_text(spec->inputs[i].name, name, sizeof name), shape);
    }
}

/* "n=0 m=0" in printable ASCII. */
static void case_line(const af_spec *spec, const af_case *c, char *buf, size_t len)
{
    char raw[1024];
    af_case_str(spec, c, raw, sizeof raw);
    safe_text(raw, buf, len);
}

static const char *dev_of(const af_repro_info *info)
{
    return info->device && *info->device ? info->device : info->pkg->device;
}

/* A message's first line, in printable ASCII. */
static void first_line(const char *msg, char *buf, size_t len)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", msg ? msg : "");
    tmp[strcspn(tmp, "\r\n")] = '\0';
    mdtext(tmp, buf, len);
}

/* --- repro.py ----------------------------------------------------------------------------- */

/* Debug switches that fit the failure, as commented lines (set before torch is imported). */
static void py_switches(af_sbuf *b, const af_repro_info *info)
{
    af_class cls = info->result->cls;
    int cuda = af_device_is_cuda(dev_of(info));
    af_sb_puts(b, "# Debug switches for this failure: uncomment (they must be set before torch is "
                  "imported).\n");
    af_sb_puts(
        b, "# os.environ[\"AOTI_RUNTIME_CHECK_INPUTS\"] = \"1\"  # the wrapper checks every input "
           "against its compiled shape contract\n");
    af_sb_puts(b,
               "# os.environ[\"TORCH_SHOW_CPP_STACKTRACES\"] = \"1\"  # C++ stack in torch error "
               "messages\n");
    if (cuda || cls == AF_RES_DEVICE_FAULT) {
        af_sb_puts(b, "# os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\"  # the fault surfaces at the "
                      "failing kernel, not a later sync\n");
        af_sb_puts(b, "# os.environ[\"PYTORCH_NO_CUDA_MEMORY_CACHING\"] = \"1\"  # no caching "
                      "allocator: out-of-bounds accesses fault reliably\n");
        af_sb_puts(b, "# Outside Python: compute-sanitizer --tool memcheck python3 repro.py\n");
    }
    if (cls == AF_RES_SIGNAL && !cuda)
        af_sb_puts(b, "# Native stack: gdb -batch -ex run -ex bt --args python3 repro.py\n");
    af_sb_puts(b,
               "# Compile time (re-export the model with them set): TORCHINDUCTOR_NAN_ASSERTS=1,\n"
               "#   AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER=2, "
               "TORCH_LOGS=\"+inductor,output_code\"\n");
    if (cuda)
        af_sb_puts(
            b, "# If loading the package segfaults inside the model .so (it was built by a newer\n"
               "# system gcc than torch was), preload the system C++ runtime:\n"
               "#   LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libstdc++.so.6 python3 repro.py\n");
}

/* The fill function: harness/python/aotif_fill.py, embedded at build time (embed.cmake). */
#include "aotif_fill_py.h"

char *af_repro_py_text(const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_case *c = info->minimal;
    const af_result *r = info->result;
    const char *dev = dev_of(info);
    char t1[PATH_MAX], t2[1024], line[4096];
    af_sbuf b = {0};

    af_sb_puts(&b, "#!/usr/bin/env python3\n\"\"\"Reproducer of an AOTInductor failure, written by "
                   "aoti-minimize (aoti-fuzz " AF_VERSION ").\n\n");
    af_sb_add(&b, "Package: %s (sha256 %s)\n", safe_text(info->pkg->abspath, t1, sizeof t1),
              info->pkg->sha256);
    af_sb_add(&b, "Model:   %s on %s\n", safe_text(info->pkg->model, t2, sizeof t2),
              safe_text(dev, line, sizeof line));
    inputs_line(spec, c, line, sizeof line);
    af_sb_add(&b, "Inputs:  %s\n", line);
    case_line(spec, c, line, sizeof line);
    af_sb_add(&b, "Case:    %s, fill %s, seed %" PRIu64 "\n", line, af_fill_name(c->fill), c->seed);
    af_sb_add(&b, "Failure: %s\n\n", safe_text(r->signature, line, sizeof line));
    af_sb_puts(&b, "Needs only torch and the package:  python3 repro.py [PACKAGE.pt2]\n");
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(&b, "Reproduces when the process dies of %s; exits 0 when the model runs fine.\n",
                  af_signal_name(r->signo));
    else
        af_sb_puts(
            &b, "Reproduces when the model raises (exit 1); exits 0 when the model runs fine.\n");
    af_sb_puts(&b, "\"\"\"\nimport faulthandler\nimport os\nimport sys\n\n");
    py_switches(&b, info);
    af_sb_puts(&b, "\nimport torch  # noqa: E402\n\n");

    af_sb_puts(&b, "PACKAGE = ");
    sb_py(&b, info->pkg->abspath);
    af_sb_puts(&b, "\nMODEL = ");
    sb_py(&b, info->pkg->model);
    af_sb_puts(&b, "\nDEVICE = ");
    sb_py(&b, strcmp(dev, "cuda") == 0 ? "cuda:0" : dev);
    af_sb_add(&b, "\nFILL = '%s'\nSEED = %" PRIu64 "\n", af_fill_name(c->fill), c->seed);
    af_sb_puts(&b, "PROGRAM = ");
    if (info->program && *info->program)
        sb_py(&b, info->program);
    else
        af_sb_puts(&b, "None");
    af_sb_puts(&b, "  # the exported program, run eagerly first (None: not available)\n");
    char sc[256];
    af_case_shape_class(spec, c, sc, sizeof sc);
    af_sb_puts(&b, "SHAPE_CLASS = ");
    sb_py(&b, sc);
    if (info->have_tol)
        af_sb_add(&b, "\nTOL = {\"rtol\": %.17g, \"atol\": %.17g}\n", info->rtol, info->atol);
    else
        af_sb_puts(&b, "\nTOL = {}  # torch.testing.assert_close's dtype defaults\n");
    af_sb_puts(&b, "EXPECTED = ");
    sb_py(&b, r->signature);
    af_sb_puts(&b, "  # aoti-fuzz's signature of the failure\n");
    af_sb_puts(&b,
               "# (name, shape, dtype, value range of integer inputs), in the model's input order\n"
               "INPUTS = [\n");
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        char shape[512];
        shape_tuple(spec, c, i, shape, sizeof shape);
        af_sb_puts(&b, "    (");
        sb_py(&b, in->name);
        af_sb_add(&b, ", %s, torch.%s, (%" PRId64 ", %" PRId64 ")),\n", shape,
                  af_dtype_name(in->dtype), in->int_lo, in->int_hi);
    }
    af_sb_puts(&b, "]\n\n");
    af_sb_puts(&b, af_aotif_fill_py);
    af_sb_puts(
        &b, "\n\ndef main():\n"
            "    path = sys.argv[1] if len(sys.argv) > 1 else PACKAGE\n"
            "    faulthandler.enable()  # a crash prints the Python stack, then still kills "
            "the process\n"
            "    print(f\"torch {torch.__version__}\")\n"
            "    inputs = []\n"
            "    for i, (name, shape, dtype, int_range) in enumerate(INPUTS):\n"
            "        t = fill(shape, dtype, i, SEED, FILL, int_range).to(DEVICE)\n"
            "        print(f\"input {i} {name}: shape {tuple(t.shape)}, {t.dtype}, {t.device}\")\n"
            "        inputs.append(t)\n"
            "    eager_out = None\n"
            "    if PROGRAM:\n"
            "        print(f\"running the exported program eagerly: {PROGRAM}\", flush=True)\n"
            "        ep = load_program(PROGRAM)  # the program alone (see load_program)\n"
            "        try:\n"
            "            ref = ep.module(check_guards=False)\n"
            "        except TypeError:\n"
            "            ref = ep.module()\n"
            "        try:\n"
            "            with torch.no_grad():\n"
            "                eager_out = ref(*[t.clone() for t in inputs])\n"
            "            print(\"eager: runs\", flush=True)\n"
            "        except Exception as e:  # noqa: BLE001\n"
            "            print(f\"eager: fails too ({type(e).__name__}: {e}): the model does \"\n"
            "                  \"not support these inputs either\", flush=True)\n"
            "    print(f\"loading {path} (model {MODEL})\", flush=True)\n");
    int idx = af_device_index(dev); /* > 0: a device_index to pass */
    if (strcmp(info->pkg->model, "model") == 0 && idx <= 0) {
        af_sb_puts(&b, "    model = torch._inductor.aoti_load_package(path)\n");
    } else {
        af_sb_puts(&b, "    from torch._inductor.package import load_package\n");
        if (idx > 0)
            af_sb_add(&b, "    model = load_package(path, MODEL, device_index=%d)\n", idx);
        else
            af_sb_puts(&b, "    model = load_package(path, MODEL)\n");
    }
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(&b,
                  "    print(\"running the model; expected: the process dies of %s (\" + "
                  "EXPECTED + \")\", flush=True)\n",
                  af_signal_name(r->signo));
    else
        af_sb_puts(&b, "    print(\"running the model; expected: \" + EXPECTED, flush=True)\n");
    af_sb_puts(&b, "    try:\n"
                   "        outputs = model(*inputs)\n");
    if (af_device_is_cuda(dev))
        af_sb_puts(&b,
                   "        torch.cuda.synchronize()  # CUDA faults surface at the next sync\n");
    af_sb_puts(
        &b,
        "    except Exception as e:\n"
        "        print(f\"repro.py: the model raised {type(e).__name__}: {e}\", "
        "file=sys.stderr, flush=True)\n"
        "        if PROGRAM:\n"
        "            print(\"repro.py: the AOTI package failed, and eager \" +\n"
        "                  (\"ran\" if eager_out is not None else \"failed too\"), "
        "file=sys.stderr, flush=True)\n"
        "        raise\n"
        "    if eager_out is not None:\n"
        "        try:\n"
        "            compare(outputs, eager_out)\n"
        "        except AssertionError as e:\n"
        "            print(f\"repro.py: outputs differ: AssertionError: {e}\", file=sys.stderr, "
        "flush=True)\n"
        "            raise\n"
        "    print(f\"repro.py: the model ran without error ({len(outputs)} outputs): \"\n"
        "          \"the failure did not reproduce\")\n"
        "    return 0\n"
        "\n\ndef compare(outputs, eager_out):\n"
        "    \"\"\"AOTI against eager: max abs and rel error per output; AssertionError when they "
        "differ.\"\"\"\n"
        "    from torch.utils import _pytree as pytree\n"
        "    aoti = [t.detach().cpu() for t in (outputs if isinstance(outputs, (list, tuple)) "
        "else [outputs])]\n"
        "    ref = [t.detach().cpu() for t in pytree.tree_leaves(eager_out) "
        "if isinstance(t, torch.Tensor)]\n"
        "    if len(aoti) != len(ref):\n"
        "        raise AssertionError(f\"output 0 count ({SHAPE_CLASS}): AOTI {len(aoti)}, \"\n"
        "                             f\"eager {len(ref)}\")\n"
        "    for i, (a, e) in enumerate(zip(aoti, ref)):\n"
        "        if a.dtype != e.dtype:\n"
        "            raise AssertionError(f\"output {i} dtype ({SHAPE_CLASS}): AOTI {a.dtype}, "
        "eager {e.dtype}\")\n"
        "        if a.shape != e.shape:\n"
        "            raise AssertionError(f\"output {i} shape ({SHAPE_CLASS}): AOTI "
        "{tuple(a.shape)}, \"\n"
        "                                 f\"eager {tuple(e.shape)}\")\n"
        "        if a.numel() == 0:\n"
        "            continue\n"
        "        d = (a.double() - e.double()).abs()\n"
        "        rel = d / e.double().abs().clamp_min(torch.finfo(torch.float64).tiny)\n"
        "        print(f\"output {i}: max abs error {float(d.max()):.4g}, max rel error \"\n"
        "              f\"{float(rel.max()):.4g}\")\n"
        "        if a.dtype.is_floating_point and bool(((~torch.isfinite(a)) & "
        "torch.isfinite(e)).any()):\n"
        "            raise AssertionError(f\"output {i} nonfinite ({SHAPE_CLASS}): NaN/Inf in AOTI "
        "\"\n"
        "                                 \"where eager is finite\")\n"
        "        try:\n"
        "            torch.testing.assert_close(a, e, equal_nan=True, **TOL)\n"
        "        except AssertionError as ex:\n"
        "            raise AssertionError(f\"output {i} value ({SHAPE_CLASS}): {ex}\") from None\n"
        "    print(\"repro.py: AOTI and eager agree\")\n"
        "\n\nif __name__ == \"__main__\":\n"
        "    sys.exit(main())\n");
    return af_sb_take(&b);
}

/* --- repro.sh ----------------------------------------------------------------------------- */

char *af_repro_sh_text(const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_case *c = info->minimal;
    char t[PATH_MAX], line[4096];
    af_sbuf b = {0};
    af_sb_puts(
        &b, "#!/bin/sh\n# The minimal case of an AOTInductor failure, run by aoti-run (no Python "
            "needed).\n# Written by aoti-minimize (aoti-fuzz " AF_VERSION ").\n");
    af_sb_add(&b, "#   package: %s\n", ptext(info->pkg->abspath, t, sizeof t));
    inputs_line(spec, c, line, sizeof line);
    af_sb_add(&b, "#   inputs:  %s\n", line);
    af_sb_add(&b, "#   failure: %s\n", ptext(info->result->signature, line, sizeof line));
    af_sb_puts(&b,
               "# Usage: sh repro.sh [aoti-run options: --json, --repeat 5, --check-inputs, -v]\n"
               "# Exit status (aoti-run's): 1 the case failed (compare the signature), 0 it ran "
               "fine, 2 bad input.\n"
               "# $AOTI_RUN overrides the aoti-run binary; $AOTI_FUZZ_TORCH_LIB the libtorch "
               "directory.\nset -u\n");
    af_sb_puts(&b, "AOTI_RUN_BUILT=");
    sb_sh(&b, info->aoti_run ? info->aoti_run : "aoti-run");
    af_sb_puts(&b, "\nPACKAGE=");
    sb_sh(&b, info->pkg->abspath);
    af_sb_puts(&b, "\n");
    if (info->torch_lib && *info->torch_lib) {
        af_sb_puts(&b, "TORCH_LIB_SEEN=");
        sb_sh(&b, info->torch_lib);
        af_sb_puts(&b,
                   "\n# the libtorch the minimizer used, unless told otherwise\n"
                   "if [ -z \"${AOTI_FUZZ_TORCH_LIB:-}\" ] && [ -z \"${AOTI_FUZZ_PYTHON:-}\" ] &&\n"
                   "   [ -e \"$TORCH_LIB_SEEN/libtorch.so\" ]; then\n"
                   "    AOTI_FUZZ_TORCH_LIB=$TORCH_LIB_SEEN\n"
                   "    export AOTI_FUZZ_TORCH_LIB\nfi\n");
    }
    af_sb_puts(&b, "exec \"${AOTI_RUN:-$AOTI_RUN_BUILT}\" \"$PACKAGE\" --model ");
    sb_sh(&b, info->pkg->model);
    af_sb_puts(&b, " --device ");
    sb_sh(&b, dev_of(info));
    if (info->spec_file && *info->spec_file) {
        af_sb_puts(&b, " --spec ");
        sb_sh(&b, info->spec_file);
    }
    if (info->exported_file && *info->exported_file) {
        af_sb_puts(&b, " --exported ");
        sb_sh(&b, info->exported_file);
    }
    if (spec->beyond_contract)
        af_sb_puts(&b, " --beyond-contract");
    if (info->result->cls == AF_RES_MISMATCH) { /* a wrong value is seen only against eager */
        af_sb_puts(&b, " --eager");
        if (info->have_tol)
            af_sb_add(&b, " --rtol %.17g --atol %.17g", info->rtol, info->atol);
    }
    af_sb_puts(&b, " \\\n   ");
    for (int k = 0; k < spec->n_syms; k++) {
        char assign[AF_NAME_MAX + 32];
        snprintf(assign, sizeof assign, "%s=%" PRId64, sym_arg(spec, k), c->values[k]);
        af_sb_puts(&b, " --shape ");
        sb_sh(&b, assign);
    }
    /* aoti-run takes a non-negative int64 seed; the fill only depends on seed mod 1000003 */
    uint64_t seed = c->seed <= (uint64_t)INT64_MAX ? c->seed : c->seed % AF_FILL_MOD;
    af_sb_add(&b, " --fill %s --seed %" PRIu64 " \"$@\"\n", af_fill_name(c->fill), seed);
    return af_sb_take(&b);
}

/* --- report.md ---------------------------------------------------------------------------- */

/* A code fence longer than any run of backticks in text. */

/* Where a crash happened, as its signature names it: the function names after " @ " (the
 * model's own frame last, demangled, no offsets), else the top frame without its offset. */
static void top_symbol(const af_result *r, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *at = r->cls == AF_RES_SIGNAL ? strstr(r->signature, " @ ") : NULL;
    if (at) {
        mdtext(at + 3, buf, len);
        return;
    }
    if (r->n_frames <= 0)
        return;
    const char *bang = strchr(r->frames[0], '!');
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", bang ? bang + 1 : r->frames[0]);
    char *plus = strrchr(tmp, '+');
    if (plus && bang)
        *plus = '\0';
    mdtext(tmp, buf, len);
}

static void report_title(const af_repro_info *info, char *buf, size_t len)
{
    const af_result *r = info->result;
    char where[200] = "", what[600], ins[2048], fl[512];
    top_symbol(r, where, sizeof where);
    inputs_line(info->spec, info->minimal, ins, sizeof ins);
    switch (r->cls) {
    case AF_RES_SIGNAL:
        snprintf(what, sizeof what, "%s%s%s", af_signal_name(r->signo), where[0] ? " in " : "",
                 where);
        break;
    case AF_RES_RUNTIME_ERROR:
        first_line(r->message, fl, sizeof fl);
        snprintf(what, sizeof what, "run fails with \"%s\"", fl);
        break;
    case AF_RES_DEVICE_FAULT:
        mdtext(r->kernel, fl, sizeof fl);
        snprintf(what, sizeof what, "%s%s%s",
                 r->cuda_error[0] ? mdtext(r->cuda_error, where, sizeof where) : "CUDA fault",
                 fl[0] ? " in " : "", fl);
        break;
    default:
        snprintf(what, sizeof what, "%s", af_class_name(r->cls));
        break;
    }
    static const char *const label[AF_CT_COUNT] = {
        [AF_CT_INSIDE] = " (inside the declared contract)",
        [AF_CT_GAP] = " (declared legal, below the compiled lower bound)",
        [AF_CT_OUTSIDE] = " (outside the declared contract)",
        [AF_CT_UNKNOWN] = " (declared contract unknown)",
    };
    af_ctv v = af_case_verdict(info->spec, info->minimal, NULL, 0);
    snprintf(buf, len, "AOTInductor: %s for inputs of shape %s%s", what, ins, label[v]);
}

static void report_what(af_sbuf *b, const af_repro_info *info)
{
    const af_result *r = info->result;
    const af_spec *spec = info->spec;
    char name[PATH_MAX], ins[2048], fl[1024], where[200], dev[64];
    const char *base = strrchr(info->pkg->abspath, '/');
    mdtext(base ? base + 1 : info->pkg->abspath, name, sizeof name);
    inputs_line(spec, info->minimal, ins, sizeof ins);
    top_symbol(r, where, sizeof where);
    af_sb_add(b, "Running the AOTInductor package `%s` (model `%s`, %s) on inputs of shape %s ",
              name, mdtext(info->pkg->model, fl, sizeof fl), mdtext(dev_of(info), dev, sizeof dev),
              ins);
    switch (r->cls) {
    case AF_RES_SIGNAL:
        af_sb_add(b, "kills the process with %s (fault address 0x%" PRIx64 ")%s%s%s.",
                  af_signal_name(r->signo), r->fault_addr, where[0] ? " inside `" : "", where,
                  where[0] ? "`" : "");
        break;
    case AF_RES_RUNTIME_ERROR:
        first_line(r->message, fl, sizeof fl);
        af_sb_add(b, "fails: the run raises `%s`.", fl);
        break;
    case AF_RES_DEVICE_FAULT:
        af_sb_add(b, "leaves the CUDA context dead with %s%s%s%s.",
                  r->cuda_error[0] ? mdtext(r->cuda_error, dev, sizeof dev) : "a sticky CUDA error",
                  r->kernel[0] ? " in `" : "", mdtext(r->kernel, fl, sizeof fl),
                  r->kernel[0] ? "`" : "");
        break;
    default:
        af_sb_add(b, "gives %s.", af_class_name(r->cls));
        break;
    }
    char why[512];
    af_ctv v = af_case_verdict(spec, info->minimal, why, sizeof why);
    af_sb_add(b, "\n\nContract: this case is %s.", mdtext(why, fl, sizeof fl));
    switch (v) {
    case AF_CT_INSIDE:
        af_sb_puts(b, " The declared ranges and value ranges were read from the exported program "
                      "(see Contract below), so this is a failure on inputs the model promises to "
                      "accept.");
        break;
    case AF_CT_GAP:
        af_sb_puts(b,
                   " The declared range (read from the exported program) admits it, but the "
                   "compiled wrapper assumed it away (0/1 specialization): by default the wrapper "
                   "does not check its inputs, and the generated code runs with shapes it was not "
                   "compiled for. Users serving this package can send such inputs.");
        break;
    case AF_CT_OUTSIDE:
        af_sb_puts(b,
                   " It was found with `--beyond-contract`: the model does not promise to accept "
                   "these inputs, so this is not by itself a compiler defect. Narrow the Dim or "
                   "guard the path if such inputs can reach the model.");
        break;
    default:
        af_sb_puts(b, " No exported program was read, so the declared lower bounds (taken as 0) "
                      "and the integer value ranges are assumptions (marked assumed below): the "
                      "case may lie outside what the model was exported for. Give the real "
                      "contract with the unified PT2 archive (aotif_export.py writes one), "
                      "`--exported FILE` (a `torch.export.save` file), or `--spec FILE`.");
        break;
    }
    const char *ev = info->eager ? info->eager : "";
    char ee[700];
    mdtext(info->eager_error ? info->eager_error : "", ee, sizeof ee);
    if (!strcmp(ev, "EAGER_FAILS_TOO"))
        af_sb_add(
            b,
            "\n\nEager reference: **EAGER_FAILS_TOO**. The exported program, run eagerly on "
            "the same inputs, fails too: `%s`. The model itself does not support these "
            "inputs, so this is not an AOTI defect on its own; per aoti-debug, narrow the Dim "
            "so the contract excludes them, or guard the path (for example for empty "
            "inputs) in the model.",
            ee);
    else if (!strcmp(ev, "AOTI_ONLY"))
        af_sb_puts(b,
                   "\n\nEager reference: **AOTI_ONLY**. The exported program, run eagerly on the "
                   "same inputs, runs fine: only the compiled package fails, a compiler or "
                   "runtime defect worth reporting upstream.");
    else if (!strcmp(ev, "LOST"))
        af_sb_add(b, "\n\nEager reference: no verdict (%s).", ee);
    else
        af_sb_add(b,
                  "\n\nEager reference: %s; the contract verdict (does eager fail too?) and the "
                  "value checks were not possible.",
                  ee[0] ? ee : "not run");
    af_sb_puts(b, "\n\n");
    if (info->check_inputs && *info->check_inputs)
        af_sb_add(b,
                  "With `AOTI_RUNTIME_CHECK_INPUTS=1` the same case gives: %s (that check "
                  "enforces the compiled bounds, which are narrower than the declared ones after "
                  "0/1 specialization: its rejection is not a contract verdict).",
                  mdtext(info->check_inputs, fl, sizeof fl));
    af_sb_puts(b, "\n");
}

static void report_contract(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    char t1[512], t2[AF_NAME_MAX];
    af_sb_add(b, "Source: %s.\n\n",
              spec->contract_src[0]          ? mdtext(spec->contract_src, t1, sizeof t1)
              : af_spec_contract_known(spec) ? af_origin_name(spec->syms[0].decl_from)
                                             : "none read (the package's wrapper only; see below)");
    af_sb_puts(b, "| fact | value | from |\n|---|---|---|\n");
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        af_sb_add(b, "| input %d name | %s | %s |\n", i, mdtext(in->name, t2, sizeof t2),
                  af_origin_name(in->name_from));
        if (af_dtype_is_float(in->dtype) || in->dtype == AF_DT_BOOL)
            continue;
        af_sb_add(b, "| %s values | [%" PRId64 ", %" PRId64 "] | %s%s%s |\n",
                  mdtext(in->name, t2, sizeof t2), in->int_lo, in->int_hi,
                  af_origin_name(in->int_from), in->int_why[0] ? ": " : "",
                  mdtext(in->int_why, t1, sizeof t1));
    }
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        af_sb_add(b, "| %s declared range | [%" PRId64 ", %" PRId64 "]%s | %s |\n",
                  mdtext(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2), s->decl_min,
                  s->decl_max, s->max_unbounded ? " (no upper bound; explored up to here)" : "",
                  s->decl_from == AF_FROM_ASSUMED ? "assumed (unknown)"
                                                  : af_origin_name(s->decl_from));
        af_sb_add(b, "| %s compiled range | [%" PRId64 ", %" PRId64 "] | wrapper |\n",
                  mdtext(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2), s->compiled_min,
                  s->compiled_max);
    }
    int gaps = 0;
    for (int k = 0; k < spec->n_syms; k++)
        if (af_spec_gap(spec, k)) {
            const af_symbol *s = &spec->syms[k];
            af_sb_add(
                b,
                "%s`%s`: declared [%" PRId64 ", %" PRId64 "], compiled [%" PRId64 ", %" PRId64 "]",
                gaps++ ? "; "
                       : "\nContract gaps (declared legal, assumed away by the compiled code): ",
                mdtext(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2), s->decl_min,
                s->decl_max, s->compiled_min, s->compiled_max);
        }
    if (gaps)
        af_sb_puts(b, ".\n");
    if (spec->beyond_contract)
        af_sb_puts(b, "\nThe search ran with `--beyond-contract`: below the declared minimums, and "
                      "(fill `wide`) with integer values past their valid range.\n");
}

static void report_shapes(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    char t1[AF_NAME_MAX], t2[AF_NAME_MAX], s1[512], s2[512], s3[512];
    af_sb_puts(b, "| input | dtype | declared shape | minimal shape | crash file's shape |\n"
                  "|---|---|---|---|---|\n");
    for (int i = 0; i < spec->n_inputs; i++) {
        shape_symbolic(spec, i, s1, sizeof s1);
        shape_tuple(spec, info->minimal, i, s2, sizeof s2);
        shape_tuple(spec, info->start, i, s3, sizeof s3);
        af_sb_add(b, "| %s | %s | %s | **%s** | %s |\n",
                  mdtext(spec->inputs[i].name, t1, sizeof t1), af_dtype_name(spec->inputs[i].dtype),
                  s1, s2, s3);
    }
    af_sb_puts(b, "\n| symbol | Dim | minimal | crash file | declared range (Dim) | compiled range "
                  "(wrapper) | |\n|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        int64_t v = info->minimal->values[k];
        char note[160] = "";
        if (v < s->compiled_min)
            snprintf(note, sizeof note, "**below the compiled lower bound %" PRId64 "**",
                     s->compiled_min);
        else if (v > s->compiled_max)
            snprintf(note, sizeof note, "**above the compiled upper bound %" PRId64 "**",
                     s->compiled_max);
        af_sb_add(b,
                  "| %s | %s | **%" PRId64 "** | %" PRId64 " | [%" PRId64 ", %" PRId64
                  "] | [%" PRId64 ", %" PRId64 "] | %s |\n",
                  mdtext(s->name, t1, sizeof t1),
                  s->dim_name[0] ? mdtext(s->dim_name, t2, sizeof t2) : "-", v,
                  info->start->values[k], s->decl_min, s->decl_max, s->compiled_min,
                  s->compiled_max, note);
    }
    af_sb_add(b,
              "\nInput values: fill `%s`, seed %" PRIu64 " (aoti-fuzz's deterministic fill, "
              "rebuilt exactly by repro.py).\n",
              af_fill_name(info->minimal->fill), info->minimal->seed);
}

/* What one tried value gave, for the explain table. */
static void explain_outcome(af_sbuf *b, const af_explain_try *t)
{
    char sig[300];
    switch (t->verdict) {
    case AF_V_SAME:
        af_sb_add(b, "%" PRId64 " fails the same way", t->value);
        break;
    case AF_V_PASS:
        if (t->text[0] && strcmp(t->text, "OK") != 0)
            af_sb_add(b, "%" PRId64 " passes (%s)", t->value, mdtext(t->text, sig, sizeof sig));
        else
            af_sb_add(b, "%" PRId64 " passes", t->value);
        break;
    case AF_V_OTHER:
        af_sb_add(b, "%" PRId64 " fails differently (`%s`)", t->value,
                  mdtext(t->text, sig, sizeof sig));
        break;
    default:
        af_sb_add(b, "%" PRId64 " not asked", t->value);
        break;
    }
}

static void report_crash_map(af_sbuf *b, const af_repro_info *info)
{
    const af_crashmap *map = info->crash_map;
    const af_spec *spec = info->spec;
    char t1[AF_NAME_MAX], t2[AF_NAME_MAX], sig[300];
    if (!map) {
        af_sb_add(b, "No crash map: %s.\n",
                  info->crash_map_why && *info->crash_map_why
                      ? mdtext(info->crash_map_why, sig, sizeof sig)
                      : "not drawn");
        return;
    }
    const char *xn = mdtext(sym_label(&spec->syms[map->sym[0]]), t1, sizeof t1);
    const char *yn =
        map->sym[1] >= 0 ? mdtext(sym_label(&spec->syms[map->sym[1]]), t2, sizeof t2) : NULL;
    if (info->crash_map_file)
        af_sb_add(b, "![crash map](%s)\n\n[%s](%s): ", info->crash_map_file, info->crash_map_file,
                  info->crash_map_file);
    af_sb_add(b,
              "the outcome for each %s%s%s, every other symbol at the minimal case; the minimal "
              "case is outlined. %" PRId64 " cases: %" PRId64 " new questions (extra, outside the "
              "bound below), %" PRId64 " answered from the memo%s.\n\n",
              xn, yn ? " (across) and " : " (a strip)", yn ? yn : "", map->cases, map->questions,
              map->memo_hits, map->complete ? "" : "; stopped before every case was run");
    af_sbuf g = {0};
    int w = 1;
    for (int r = 0; r < map->n_vals[1]; r++) {
        char v[32];
        int l = snprintf(v, sizeof v, "%" PRId64, map->vals[1][r]);
        w = l > w ? l : w;
    }
    if (yn)
        af_sb_add(&g, "%s (up) by %s (across); X fails the same way, . runs fine\n", yn, xn);
    char *txt = af_crashmap_text(map);
    const char *line = txt ? txt : "";
    for (int r = map->n_vals[1] - 1; r >= 0 && *line; r--) {
        size_t l = strcspn(line, "\n");
        if (yn)
            af_sb_add(&g, "%*" PRId64 " | %.*s\n", w, map->vals[1][r], (int)l, line);
        else
            af_sb_add(&g, "%.*s\n", (int)l, line);
        line += l + (line[l] == '\n');
    }
    free(txt);
    af_sb_add(&g, "%s = ", xn);
    for (int c = 0; c < map->n_vals[0]; c++)
        af_sb_add(&g, "%s%" PRId64, c ? ", " : "", map->vals[0][c]);
    af_sb_puts(&g, " (columns, left to right)\n");
    for (int k = 0; k < map->n_keys; k++)
        af_sb_add(&g, "%c: %s %s\n", 'a' + k,
                  map->key_cell[k] == AF_CELL_OTHER ? "fails differently:" : "not a bug:",
                  ptext(map->keys[k], sig, sizeof sig));
    if (map->keys_dropped)
        af_sb_add(&g, "*: %d further signatures\n", map->keys_dropped);
    if (g.oom) {
        b->oom = 1;
        free(g.s);
        return;
    }
    af_sb_fence(b, "text", g.s);
    free(g.s);
}

/* Which sizes matter: the explain phase (free and pinned symbols), then the crash map. */
static void report_explain(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_explain *ex = info->explain;
    char t1[1200], t2[AF_NAME_MAX];
    if (!ex) {
        af_sb_puts(b, "Not explained (the explain phase did not run).\n\n");
    } else {
        af_explain_summary(spec, ex, t1, sizeof t1);
        af_sb_add(b, "It **%s**.\n\n", mdtext(t1, t1, sizeof t1));
        af_sb_puts(
            b, "Each symbol was tried alone across its range, the others held at the minimal "
               "case, at its lower bound, one above it, a typical value, a power of two and its "
               "upper bound: *free* when every tried value still fails the same way, *pinned* "
               "otherwise. Freedom is per symbol (two free symbols were not moved together).\n\n");
        af_sb_puts(b, "Minimal failing shape set: ");
        for (int i = 0; i < ex->n_syms; i++) {
            const af_explain_sym *s = &ex->sym[i];
            af_sb_add(b, "%s`%s=%" PRId64 "`", i ? ", " : "",
                      mdtext(sym_label(&spec->syms[i]), t2, sizeof t2), ex->smallest.values[i]);
            if (s->role == AF_ROLE_FREE)
                af_sb_add(
                    b, " (free: any value tried in [%" PRId64 ", %" PRId64 "] fails the same way)",
                    s->lo, s->hi);
            else
                af_sb_add(b, " (%s)", af_role_name(s->role));
        }
        af_sb_puts(b,
                   ".\n\n| symbol | role | minimal | range tried | what each tried value gave |\n"
                   "|---|---|---|---|---|\n");
        for (int i = 0; i < ex->n_syms; i++) {
            const af_explain_sym *s = &ex->sym[i];
            af_sb_add(b, "| %s | %s%s%s | %" PRId64 " | [%" PRId64 ", %" PRId64 "] | ",
                      mdtext(sym_label(&spec->syms[i]), t2, sizeof t2),
                      s->role == AF_ROLE_PINNED ? "**" : "", af_role_name(s->role),
                      s->role == AF_ROLE_PINNED ? "**" : "", s->minimal, s->lo, s->hi);
            for (int k = 0; k < s->n_tried; k++) {
                if (k)
                    af_sb_puts(b, "; ");
                explain_outcome(b, &s->tried[k]);
            }
            af_sb_puts(b, " |\n");
        }
        af_sb_add(b,
                  "\n%" PRId64 " questions (%" PRId64
                  " more answered from the memo), at most %d per "
                  "symbol: %" PRId64 " for these %d symbols%s.\n\n",
                  ex->questions, ex->memo_hits, AF_EXPLAIN_TRIES, ex->bound, ex->n_syms,
                  ex->complete ? "" : "; stopped before every value was asked");
    }
    af_sb_puts(b, "### Crash map\n\n");
    report_crash_map(b, info);
}

static void report_error(af_sbuf *b, const af_repro_info *info)
{
    const af_result *r = info->result;
    char t[1024];
    af_sbuf e = {0};
    af_sb_add(&e, "class:     %s\nsignature: %s\n", af_class_name(r->cls),
              ptext(r->signature, t, sizeof t));
    if (r->message[0]) {
        /* the message may span lines; keep them, made printable one by one */
        af_sb_puts(&e, "message:   ");
        const char *p = r->message;
        for (int n = 0; *p && n < 12; n++) {
            size_t l = strcspn(p, "\n");
            char one[1024];
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
            af_sb_add(&e, "%s%s\n", n ? "           " : "", ptext(one, t, sizeof t));
            p += l;
            if (*p == '\n')
                p++;
        }
    }
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(&e, "signal:    %s (%d), fault address 0x%" PRIx64 "\n", af_signal_name(r->signo),
                  r->signo, r->fault_addr);
    if (r->cuda_error[0])
        af_sb_add(&e, "cuda:      %s\n", ptext(r->cuda_error, t, sizeof t));
    if (r->kernel[0])
        af_sb_add(&e, "kernel:    %s\n", ptext(r->kernel, t, sizeof t));
    if (r->triage[0]) /* the re-run with blocking launches */
        af_sb_add(&e, "triage:    %s\n", ptext(r->triage, t, sizeof t));
    if (r->n_frames) {
        af_sb_puts(&e, "top frames:\n");
        for (int i = 0; i < r->n_frames; i++)
            af_sb_add(&e, "  #%d %s\n", i, ptext(r->frames[i], t, sizeof t));
    }
    if (e.oom) {
        b->oom = 1;
        free(e.s);
        return;
    }
    af_sb_fence(b, "text", e.s);
    free(e.s);
}

static void report_check(af_sbuf *b, const char *what, const af_repro_check *c)
{
    char t[600];
    if (!c) {
        af_sb_add(b, "- %s: not run\n", what);
        return;
    }
    af_sb_add(b, "- %s: %s (%s, %.1f s)\n", what,
              !c->ran         ? "not run"
              : c->reproduced ? "**reproduced**"
                              : "did not reproduce",
              mdtext(c->detail, t, sizeof t), c->seconds);
}

static void report_versions(af_sbuf *b, const af_repro_info *info)
{
    char t[1024];
    af_sb_add(b, "- torch: %s\n",
              info->torch_version && *info->torch_version
                  ? mdtext(info->torch_version, t, sizeof t)
                  : "unknown (no Python importing torch was found)");
    if (info->versions && *info->versions) {
        const char *p = info->versions;
        while (*p) {
            size_t l = strcspn(p, "\n");
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
            if (one[0])
                af_sb_add(b, "- %s\n", mdtext(one, t, sizeof t));
            p += l;
            if (*p)
                p++;
        }
    }
    af_sb_add(b, "- package: sha256 %s, device %s", info->pkg->sha256, info->pkg->device);
    if (info->pkg->compute_capability[0])
        af_sb_add(b, ", compute capability %s", mdtext(info->pkg->compute_capability, t, sizeof t));
    if (info->pkg->cpu_isa[0])
        af_sb_add(b, ", CPU ISA %s", mdtext(info->pkg->cpu_isa, t, sizeof t));
    af_sb_puts(b, "\n");
    af_sb_add(b, "- compiler: %s\n",
              info->compiler && *info->compiler ? mdtext(info->compiler, t, sizeof t) : "unknown");
    af_sb_add(b, "- OS: %s\n",
              info->os_name && *info->os_name ? mdtext(info->os_name, t, sizeof t) : "unknown");
    af_sb_puts(b, "- aoti-fuzz: " AF_VERSION "\n");
}

static void report_search(af_sbuf *b, const af_repro_info *info)
{
    char s1[1024], s2[1024];
    case_line(info->spec, info->start, s1, sizeof s1);
    case_line(info->spec, info->minimal, s2, sizeof s2);
    af_sb_add(b, "- from `%s` (fill %s, seed %" PRIu64 ") to `%s` (fill %s, seed %" PRIu64 ")\n",
              s1, af_fill_name(info->start->fill), info->start->seed, s2,
              af_fill_name(info->minimal->fill), info->minimal->seed);
    af_sb_add(b,
              "- %" PRId64 " questions (%" PRId64 " runs in workers, %" PRId64
              " answered from the cache) "
              "in %.1f s%s\n",
              info->oracle_calls, info->oracle_runs, info->cache_hits, info->search_seconds,
              info->stopped ? "; stopped early (budget or interrupt): the best case so far" : "");
    if (info->call_bound > 0)
        af_sb_add(b,
                  "- of them %" PRId64 " in the explain phase; the bound on questions is %" PRId64
                  " (the sum over symbols of ceil(log2 R) + 4, + %d per symbol for the explain "
                  "phase; see minimize/ddmin.c)\n",
                  info->explain_calls, info->call_bound, AF_EXPLAIN_TRIES);
    if (info->crash_map)
        af_sb_add(b,
                  "- crash map: %" PRId64 " cases, %" PRId64 " new questions outside that bound "
                  "(%" PRId64 " runs), %" PRId64 " from the memo\n",
                  info->crash_map->cases, info->crash_map->questions, info->crash_map->runs,
                  info->crash_map->memo_hits);
    if (info->repro_runs > 0)
        af_sb_add(b, "- the crash reproduced in %d of %d runs%s\n", info->repro_same,
                  info->repro_runs, info->repro_same < info->repro_runs ? " (flaky)" : "");
    if (info->runs_per_question > 1)
        af_sb_add(b, "- each question was decided by a majority of %d runs\n",
                  info->runs_per_question);
    af_sb_add(b, "- locally minimal: %s\n",
              info->locally_minimal ? "yes (no single step smaller fails the same way)"
                                    : "not checked");
    if (info->n_findings) {
        af_sb_add(b, "- %d other failure%s met on the way (not followed):\n", info->n_findings,
                  info->n_findings == 1 ? "" : "s");
        for (int i = 0; i < info->n_findings; i++) {
            char sig[300];
            mdtext(info->findings[i].case_str, s1, sizeof s1);
            af_sb_add(b, "  - `%s`: %s\n", s1,
                      mdtext(info->findings[i].signature, sig, sizeof sig));
        }
    }
}

/* What each re-run of the minimal case changed, as aoti-debug asks: the same case again (is it
 * deterministic?), with blocking launches and no caching allocator (CUDA: the same fault, another
 * kernel, or none), and with the wrapper's input checks on (the same failure, or a rejection,
 * which is about the compiled bounds, not a contract verdict). Every line is from a run. */
static void report_reruns(af_sbuf *b, const af_repro_info *info)
{
    const af_result *r = info->result;
    char t[1200], k[300], tk[700]; /* tk and t: two texts in one call, two buffers */
    int any = info->repro_runs > 0 || r->triage[0] || (info->check_inputs && *info->check_inputs);
    if (!any)
        return;
    af_sb_puts(
        b,
        "\n## Re-runs\n\nWhat running again changed (each line from runs made by this tool):\n\n");
    if (info->repro_runs > 0)
        af_sb_add(b,
                  "- The crash file's case as is, %d times before the search: %d gave this "
                  "signature: %s.\n",
                  info->repro_runs, info->repro_same,
                  info->repro_same == info->repro_runs ? "deterministic" : "**not deterministic**");
    if (r->triage[0]) {
        /* "DEVICE_FAULT: CUDA_ERROR_ASSERT @ kernel: text", or another class from the re-run */
        const char *at = strstr(r->triage, " @ ");
        size_t kl = at ? strcspn(at + 3, ":") : 0;
        snprintf(k, sizeof k, "%.*s", (int)kl, at ? at + 3 : "");
        int fault = strncmp(r->triage, "DEVICE_FAULT: ", 14) == 0;
        int same_err = fault && r->cuda_error[0] &&
                       strncmp(r->triage + 14, r->cuda_error, strlen(r->cuda_error)) == 0;
        const char *what = !fault      ? "**no device fault** with launches synchronized: the "
                                         "fault depends on timing or on the caching allocator"
                           : !same_err ? "**another fault**"
                           : k[0] && r->kernel[0] && strcmp(k, r->kernel) != 0
                               ? "the same fault, in **another kernel**"
                               : "the same fault";
        af_sb_add(b,
                  "- A case with this signature with `CUDA_LAUNCH_BLOCKING=1 "
                  "PYTORCH_NO_CUDA_MEMORY_CACHING=1` (each launch synchronized): %s%s%s%s: `%s`.\n",
                  what, k[0] ? "; the failing launch is `" : "",
                  k[0] ? mdtext(k, tk, sizeof tk) : "", k[0] ? "`" : "",
                  mdtext(r->triage, t, sizeof t));
    }
    if (info->check_inputs && *info->check_inputs) {
        const char *ci = info->check_inputs;
        int ok = strstr(ci, "runs fine") != NULL;
        int same = !ok && strstr(ci, r->signature) != NULL;
        int rejected =
            !ok && !same && (strstr(ci, "dim value is too") || strstr(ci, "expected to be"));
        af_sb_add(b,
                  "- The minimal case with `AOTI_RUNTIME_CHECK_INPUTS=1` (the wrapper's "
                  "`check_input_N`): %s: %s.\n",
                  ok     ? "it runs fine"
                  : same ? "the same failure"
                  : rejected
                      ? "**rejected by the input check**, which enforces the compiled bounds "
                        "(narrower than the declared ones after 0/1 specialization): not a "
                        "contract verdict"
                      : "another result",
                  mdtext(ci, t, sizeof t));
    }
}

char *af_repro_report_text(const af_repro_info *info)
{
    char title[4096];
    af_sbuf b = {0};
    report_title(info, title, sizeof title);
    af_sb_add(&b, "# %s\n\n## What happens\n\n", title);
    report_what(&b, info);
    af_sb_puts(&b, "\n## Minimal shapes\n\n");
    report_shapes(&b, info);
    af_sb_puts(&b, "\n## Which sizes matter\n\n");
    report_explain(&b, info);
    af_sb_puts(&b, "\n## Contract\n\n");
    report_contract(&b, info);
    af_sb_puts(&b, "\n## Error\n\n");
    report_error(&b, info);
    if (info->where) { /* where.c renders its own section, "## Where" heading included */
        char *wmd = af_where_markdown(info->where, info->spec);
        if (!wmd)
            b.oom = 1;
        else
            af_sb_add(&b, "\n%s", wmd);
        free(wmd);
    }
    report_reruns(&b, info);
    af_sb_puts(&b, "\n## Reproduce with Python\n\nNeeds only torch and the package "
                   "(`python3 repro.py [PACKAGE.pt2]`):\n\n");
    char *py = af_repro_py_text(info);
    char *sh = af_repro_sh_text(info);
    if (!py || !sh)
        b.oom = 1;
    af_sb_fence(&b, "python", py);
    const af_repro_check *pc = info->py_check;
    if (pc && pc->preload[0] && strcmp(pc->preload_how, "forced") == 0) {
        af_sb_add(&b,
                  "\nThe check ran it with the system C++ runtime preloaded "
                  "(`AOTI_FUZZ_LOADER=preload`): `LD_PRELOAD=%s python3 repro.py`.\n",
                  mdtext(pc->preload, title, sizeof title));
    } else if (pc && pc->preload[0]) {
        af_sb_add(
            &b,
            "\nOn this machine Python could load the package only with the system C++ runtime "
            "preloaded: `LD_PRELOAD=%s python3 repro.py`.",
            mdtext(pc->preload, title, sizeof title));
        char file[PATH_MAX] = "";
        if (strcmp(pc->preload_how, "remembered") == 0 && af_loader_file(file, sizeof file) == 0)
            af_sb_add(&b,
                      " (A start without it died on an earlier run; aoti-fuzz remembers that "
                      "in `%s`, and `AOTI_FUZZ_LOADER=off` tries without it again.)",
                      mdtext(file, title, sizeof title));
        af_sb_puts(&b, "\n");
    }
    af_sb_puts(&b, "\n## Reproduce without Python\n\nWith aoti-fuzz's `aoti-run` "
                   "(`sh repro.sh [--json] [--repeat N]`):\n\n");
    af_sb_fence(&b, "sh", sh);
    free(py);
    free(sh);
    af_sb_puts(&b, "\n## Re-checked after writing\n\n");
    report_check(&b, "repro.sh", info->sh_check);
    report_check(&b, "repro.py", info->py_check);
    af_sb_puts(&b, "\n## Versions\n\n");
    report_versions(&b, info);
    af_sb_puts(
        &b,
        "\n## How this case was found\n\nFound by aoti-fuzz and minimized by aoti-minimize:\n\n");
    report_search(&b, info);
    return af_sb_take(&b);
}

/* --- writing -------------------------------------------------------------------------------- */

static int write_text(const char *dir, const char *name, char *text, af_error *err)
{
    char path[PATH_MAX];
    if (!text)
        return af_error_set(err, AF_E_IO, "out of memory writing %s", name);
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
        free(text);
        return af_error_set(err, AF_E_USAGE, "output path too long: %s/%s", dir, name);
    }
    int rc = af_write_atomic(path, text, strlen(text), 0, err);
    free(text);
    return rc;
}

int af_repro_write_scripts(const char *dir, const af_repro_info *info, af_error *err)
{
    if (write_text(dir, "repro.py", af_repro_py_text(info), err) != 0 ||
        write_text(dir, "repro.sh", af_repro_sh_text(info), err) != 0)
        return -1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/repro.sh", dir);
    if (chmod(path, 0755) != 0)
        return af_error_sys(err, "chmod %s", path);
    return 0;
}

int af_repro_write_report(const char *dir, const af_repro_info *info, af_error *err)
{
    return write_text(dir, "report.md", af_repro_report_text(info), err);
}

/* --- running a script ----------------------------------------------------------------------- */

#define CAPTURE_MAX (256 * 1024)

typedef struct proc_run {
    af_sbuf out, errb; /* captured stdout / stderr, each cut at CAPTURE_MAX */
    int status;        /* waitpid status */
    int started;
    int timed_out, stopped;
    double seconds;
    char why[256]; /* why it did not start */
} proc_run;

static void drain(int *fd, af_sbuf *b)
{
    char buf[8192];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
        if (b->len < CAPTURE_MAX)
            af_sb_addn(b, buf, (size_t)n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
}

/* Run argv (argv[0] looked up in PATH) with stdin from /dev/null and stdout/stderr captured,
 * in its own process group, killed at timeout_s or when *stop is set; envp NULL: our
 * environment. It runs with a private TMPDIR, removed after: repro.py's torch leaves files
 * there (aoti_load_package's aotinductor_* with the model .so) that would otherwise pile up
 * in the user's. Torch's inductor cache goes to our cache dir instead, kept between runs
 * (af_env_inductor_cache): in a cache made fresh for each run, loading a package compiled
 * torch's CPU-ISA probes again and loaded each in a child Python, every time: 15 s of a 23 s
 * repro.py on a 2-CPU host (torch 2.13); the same probes held the H200 reference's start for over
 * 40 s (tests/gpu/README.md). No core is dumped: the signal is the verdict, and a core of a Python
 * with a CUDA context takes long to write. */
static void run_capture(char *const argv[], char *const envp[], double timeout_s,
                        const volatile int *stop, proc_run *pr)
{
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    double t0 = af_now_s();
    char tmpdir[PATH_MAX] = "";
    char **env = NULL;
    const char *base = getenv("TMPDIR");
    memset(pr, 0, sizeof *pr);
    snprintf(tmpdir, sizeof tmpdir, "%s/aotif-repro.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        snprintf(pr->why, sizeof pr->why, "cannot make a temp dir in %s: %s",
                 base && *base ? base : "/tmp", strerror(errno));
        tmpdir[0] = '\0';
        goto done;
    }
    char tmpvar[PATH_MAX + 8], cache[PATH_MAX + 64];
    snprintf(tmpvar, sizeof tmpvar, "TMPDIR=%s", tmpdir);
    const char *sets[] = {tmpvar, NULL, NULL};
    if (af_env_inductor_cache(cache, sizeof cache))
        sets[1] = cache;
    struct rlimit core;
    int have_core = getrlimit(RLIMIT_CORE, &core) == 0;
    core.rlim_cur = 0;
    if (!(env = af_env_with(envp, sets))) {
        snprintf(pr->why, sizeof pr->why, "out of memory");
        goto done;
    }
    if (devnull < 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        snprintf(pr->why, sizeof pr->why, "cannot make pipes: %s", strerror(errno));
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(pr->why, sizeof pr->why, "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) { /* only async-signal-safe calls from here to exec */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(errp[1], 2);
        if (have_core)
            setrlimit(RLIMIT_CORE, &core); /* a system call, no library state */
        execvpe(argv[0], argv, env);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no window where a kill of the group misses it */
    pr->started = 1;
    close(out[1]);
    close(errp[1]);
    out[1] = errp[1] = -1;
    double kill_at = 0;
    while (out[0] >= 0 || errp[0] >= 0) {
        double now = af_now_s();
        if (!kill_at && (now - t0 > timeout_s || (stop && *stop))) {
            pr->timed_out = now - t0 > timeout_s;
            pr->stopped = !pr->timed_out;
            kill(-pid, SIGKILL);
            kill_at = now;
        }
        if (kill_at && now - kill_at > 5.0) /* something outside the group holds the pipes */
            break;
        struct pollfd pf[2] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
        int n = poll(pf, 2, 100);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        if (out[0] >= 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(&out[0], &pr->out);
        if (errp[0] >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(&errp[0], &pr->errb);
    }
    while (waitpid(pid, &pr->status, 0) < 0 && errno == EINTR)
        ;
done:
    pr->seconds = af_now_s() - t0;
    int fds[5] = {out[0], out[1], errp[0], errp[1], devnull};
    for (int i = 0; i < 5; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(env);
    if (tmpdir[0])
        af_remove_tree(tmpdir);
}

static void proc_free(proc_run *pr)
{
    free(pr->out.s);
    free(pr->errb.s);
}

/* The last non-empty line of text, printable. */
static void last_line(const af_sbuf *b, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!b->s)
        return;
    size_t end = b->len;
    while (end > 0 && (b->s[end - 1] == '\n' || b->s[end - 1] == '\r' || b->s[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start > 0 && b->s[start - 1] != '\n')
        start--;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%.*s",
             (int)(end - start < sizeof tmp ? end - start : sizeof tmp - 1), b->s + start);
    ptext(tmp, buf, len);
}

/* Fill the common part of a check from a finished run; returns 1 if it ended normally. */
static int check_common(const proc_run *pr, af_repro_check *out)
{
    out->seconds = pr->seconds;
    out->exit_status = -1;
    if (!pr->started) {
        snprintf(out->detail, sizeof out->detail, "could not start: %s", pr->why);
        return 0;
    }
    if (pr->timed_out || pr->stopped) {
        out->timed_out = pr->timed_out;
        snprintf(out->detail, sizeof out->detail, "%s after %.0f s",
                 pr->timed_out ? "timed out" : "stopped", pr->seconds);
        return 0;
    }
    out->ran = 1;
    if (WIFEXITED(pr->status))
        out->exit_status = WEXITSTATUS(pr->status);
    if (WIFSIGNALED(pr->status))
        out->signo = WTERMSIG(pr->status);
    if (WIFEXITED(pr->status) && WEXITSTATUS(pr->status) == 127) {
        out->ran = 0;
        char ll[400];
        last_line(&pr->errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "could not run (exit 127)%s%s", ll[0] ? ": " : "",
                 ll);
        return 0;
    }
    return 1;
}

/* A MISMATCH on the output `expect` names, of the same kind (see af_mismatch_same). */
static int same_mismatch(const af_result *expect, const char *text)
{
    return expect->cls == AF_RES_MISMATCH && af_mismatch_same(expect->message, text);
}

void af_repro_check_sh(const char *sh_path, const af_result *expect, double timeout_s,
                       const volatile int *stop, af_repro_check *out)
{
    memset(out, 0, sizeof *out);
    char *argv[] = {"/bin/sh", (char *)sh_path, "--json", NULL};
    proc_run pr;
    run_capture(argv, NULL, timeout_s, stop, &pr);
    if (!check_common(&pr, out))
        goto done;
    if (out->signo) {
        snprintf(out->detail, sizeof out->detail, "aoti-run died of %s",
                 af_signal_name(out->signo));
        goto done;
    }
    cJSON *j = pr.out.s ? cJSON_Parse(pr.out.s) : NULL;
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(j, "signature");
    char t[300];
    if (!cJSON_IsString(sig)) {
        char ll[400];
        last_line(&pr.errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "exit %d, no JSON result%s%s", out->exit_status,
                 ll[0] ? ": " : "", ll);
    } else {
        int same = strcmp(sig->valuestring, expect->signature) == 0;
        out->reproduced =
            out->exit_status == 1 && (same || same_mismatch(expect, sig->valuestring));
        snprintf(out->detail, sizeof out->detail, "exit %d, %s%s", out->exit_status,
                 same ? "same signature" : "signature ",
                 same ? "" : ptext(sig->valuestring, t, sizeof t));
    }
    cJSON_Delete(j);
done:
    proc_free(&pr);
}

/* The exception line repro.py prints before re-raising: "T: message" after the marker. */
static const char *raised_line(const af_sbuf *b, char *buf, size_t len)
{
    static const char marker[] = "repro.py: the model raised ";
    static const char differ[] = "repro.py: outputs differ: "; /* a MISMATCH reproduced */
    const char *p = b->s ? strstr(b->s, marker) : NULL;
    if (p) {
        p += sizeof marker - 1;
    } else {
        p = b->s ? strstr(b->s, differ) : NULL;
        if (!p)
            return NULL;
        p += sizeof differ - 1;
    }
    size_t l = strcspn(p, "\n");
    snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), p);
    return buf;
}

/* How CUDA words the errors a kernel leaves behind (cuGetErrorString, which torch quotes in
 * "CUDA error: ..."), by name; NULL for others. */
static const char *cuda_error_words(const char *name)
{
    static const char *const table[][2] = {
        {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
        {"CUDA_ERROR_ASSERT", "device-side assert triggered"},
        {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
        {"CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
        {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
        {"CUDA_ERROR_INVALID_PC", "invalid program counter"},
        {"CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
        {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i][0]) == 0)
            return table[i][1];
    return NULL;
}

/* Whether masked `want` occurs in buffer b once masked. */
static int masked_in(const af_sbuf *b, const char *want)
{
    if (!b->s || !want[0])
        return 0;
    size_t n = strlen(b->s) + 1;
    char *m = malloc(n);
    if (!m)
        return 0;
    af_mask_numbers(b->s, m, n);
    int hit = strstr(m, want) != NULL;
    free(m);
    return hit;
}

/* Judge one run of repro.py. Returns 1 when Python died of a signal before it got to the
 * model (a loader crash, not the bug). */
static int judge_py(const char *python, const proc_run *pr, const af_result *expect,
                    af_repro_check *out)
{
    char raised[1024], t[600];
    if (!check_common(pr, out))
        return 0;
    if (pr->out.s && strncmp(pr->out.s, "torch ", 6) == 0) {
        char v[64];
        snprintf(v, sizeof v, "%.*s", (int)strcspn(pr->out.s + 6, "\r\n"), pr->out.s + 6);
        ptext(v, out->torch_version, sizeof out->torch_version);
    } else if (!out->signo) { /* it never got as far as printing torch's version */
        char ll[400];
        last_line(&pr->errb, ll, sizeof ll);
        out->ran = 0;
        snprintf(out->detail, sizeof out->detail, "%s could not import torch%s%s",
                 ptext(python, t, sizeof t), ll[0] ? ": " : "", ll);
        return 0;
    }
    /* the script prints this line right before it calls the model */
    int reached = pr->out.s && strstr(pr->out.s, "\nrunning the model; ") != NULL;
    const char *exc = raised_line(&pr->errb, raised, sizeof raised);
    int want_signal =
        expect->cls == AF_RES_SIGNAL || (expect->cls == AF_RES_WORKER_LOST && expect->signo);
    int want_raise = expect->cls == AF_RES_RUNTIME_ERROR || expect->cls == AF_RES_DEVICE_FAULT ||
                     expect->cls == AF_RES_MISMATCH;
    if (out->signo && !reached) {
        snprintf(out->detail, sizeof out->detail,
                 "died of %s before running the model (loading it)", af_signal_name(out->signo));
        return 1;
    }
    if (out->signo) {
        out->reproduced = want_signal && out->signo == expect->signo;
        snprintf(out->detail, sizeof out->detail, "died of %s", af_signal_name(out->signo));
    } else if (exc) {
        /* masked, the exception text must hold the worker's masked first message line */
        char want[1024], got[1024], fl[1024];
        snprintf(fl, sizeof fl, "%s", expect->message);
        fl[strcspn(fl, "\n")] = '\0';
        /* the worker words a device fault "<CUDA's string> (CUDA error 700)", torch words it
         * "CUDA error: <CUDA's string>": CUDA's string is what both share */
        char *code = expect->cls == AF_RES_DEVICE_FAULT ? strstr(fl, " (CUDA error") : NULL;
        if (code)
            *code = '\0';
        const char *colon = strstr(exc, ": ");
        af_mask_numbers(fl, want, sizeof want);
        af_mask_numbers(colon ? colon + 2 : exc, got, sizeof got);
        out->reproduced = want_raise && out->exit_status != 0 && strstr(got, want) != NULL;
        if (!out->reproduced && out->exit_status != 0 && pr->errb.s &&
            strstr(pr->errb.s, "repro.py: outputs differ: ") && same_mismatch(expect, exc))
            out->reproduced = 1;
        /* A device-side assert: torch raises "CUDA error: device-side assert triggered" and the
         * assert's own text ("index out of bounds: ...") is what the device printed, on the
         * script's stdout or stderr; the same CUDA error plus that text is the same failure. */
        const char *words =
            expect->cls == AF_RES_DEVICE_FAULT ? cuda_error_words(expect->cuda_error) : NULL;
        if (!out->reproduced && words && out->exit_status != 0 && strstr(exc, words))
            out->reproduced = strcmp(expect->cuda_error, "CUDA_ERROR_ASSERT") != 0 ||
                              masked_in(&pr->errb, want) || masked_in(&pr->out, want);
        snprintf(out->detail, sizeof out->detail, "exit %d, raised %s%s", out->exit_status,
                 ptext(exc, t, sizeof t),
                 out->reproduced || !want_raise ? "" : " (another message)");
    } else if (out->exit_status == 0) {
        snprintf(out->detail, sizeof out->detail, "exit 0: the model ran without error");
    } else {
        char ll[400];
        last_line(&pr->errb, ll, sizeof ll);
        snprintf(out->detail, sizeof out->detail, "exit %d%s%s%s", out->exit_status,
                 reached ? "" : " before running the model", ll[0] ? ": " : "", ll);
    }
    return 0;
}

/* Whether a start of repro.py failed in the loader, so that the other loader environment
 * may do better: it died of a signal before it called the model (judge_py's 1), or it could
 * not import torch where the C++ runtime is to blame (a GLIBCXX / CXXABI version not found),
 * or at all while it had a preload (a remembered preload gone stale). */
static int loader_failed(const proc_run *pr, const af_repro_check *c, int died_loading,
                         int had_preload)
{
    if (died_loading)
        return 1;
    if (c->ran || !pr->started || pr->timed_out || pr->stopped)
        return 0;
    const char *e = pr->errb.s ? pr->errb.s : "";
    return had_preload || strstr(e, "GLIBCXX_") || strstr(e, "CXXABI_") || strstr(e, "libstdc++");
}

/* One start of repro.py, with `lib` in LD_PRELOAD ("" : none); 1 when it failed in the
 * loader (loader_failed).
 *
 * TORCHINDUCTOR_VEC_ISA_OK=1 (unless ours sets it): loading a package makes torch check the
 * CPU's vector ISAs (_load_aoti -> get_device_information -> pick_vec_isa) only to warn when
 * they differ from the package's metadata; each check builds a probe and loads it in a child
 * Python, which before torch 2.13 (pytorch#183515) imports torch: on the H200 image (torch
 * 2.11, AMX) about six torch starts inside every repro.py start, cache or not. The setting
 * trusts the CPU's flags for the base check of each ISA (about half of those children; the
 * bf16 and AMX checks still run); the outcome is the same warning or none, and the model,
 * its inputs and the verdict are untouched. */
static int check_py_once(const char *python, char *const argv[], const char *lib,
                         const af_result *expect, double timeout_s, const volatile int *stop,
                         af_repro_check *out)
{
    char preload[PATH_MAX + 600];
    const char *sets[3] = {NULL, NULL, NULL};
    int ns = 0;
    char **env = NULL;
    proc_run pr;
    memset(out, 0, sizeof *out);
    if (!getenv("TORCHINDUCTOR_VEC_ISA_OK"))
        sets[ns++] = "TORCHINDUCTOR_VEC_ISA_OK=1";
    if (lib[0] && af_env_preload(lib, preload, sizeof preload) != 0) {
        snprintf(out->detail, sizeof out->detail, "could not start: LD_PRELOAD too long");
        return 0;
    }
    if (lib[0])
        sets[ns++] = preload;
    if (!(env = af_env_with(NULL, sets))) {
        snprintf(out->detail, sizeof out->detail, "could not start: out of memory");
        return 0;
    }
    run_capture(argv, env, timeout_s, stop, &pr);
    int died_loading = judge_py(python, &pr, expect, out);
    int failed = loader_failed(&pr, out, died_loading, lib[0] != '\0');
    proc_free(&pr);
    free(env);
    snprintf(out->preload, sizeof out->preload, "%s", lib);
    return failed;
}

void af_repro_check_py(const char *python, const char *py_path, const af_result *expect,
                       double timeout_s, const volatile int *stop, af_repro_check *out)
{
    char *argv[] = {(char *)python, (char *)py_path, NULL};
    char t[PATH_MAX];
    /* Seen with CUDA packages: the model .so, built by a newer system gcc than torch, crashes
     * in the C++ runtime torch brought along, and the system's runtime, preloaded, fixes it.
     * The loader memory says whether this Python needed that before: then the first start
     * has it, and no start dies first. */
    af_loader_plan plan;
    af_loader_plan_for(python, &plan);
    int failed = check_py_once(python, argv, plan.first, expect, timeout_s, stop, out);
    if (plan.first[0])
        snprintf(out->preload_how, sizeof out->preload_how, "%s",
                 plan.remembered ? "remembered" : "forced");
    if (!failed || !plan.can_retry || (stop && *stop)) {
        if (plan.remembered) {
            size_t l = strlen(out->detail);
            snprintf(out->detail + l, sizeof out->detail - l,
                     " (with LD_PRELOAD=%s, remembered for this Python)",
                     ptext(plan.first, t, sizeof t));
        }
        return;
    }
    af_repro_check again;
    int failed_again = check_py_once(python, argv, plan.retry, expect, timeout_s, stop, &again);
    if (!failed_again && again.ran) /* it came up the other way: the answer from now on */
        af_loader_remember(&plan, plan.retry, again.torch_version, out->detail, NULL);
    char first[sizeof out->detail];
    snprintf(first, sizeof first, "%s", out->detail);
    again.seconds += out->seconds;
    *out = again;
    if (plan.retry[0]) {
        snprintf(out->preload_how, sizeof out->preload_how, "retry");
        snprintf(out->detail, sizeof out->detail, "with LD_PRELOAD=%s: %s (without it: %s)",
                 ptext(plan.retry, t, sizeof t), again.detail, first);
    } else {
        snprintf(out->detail, sizeof out->detail,
                 "without LD_PRELOAD: %s (with the remembered LD_PRELOAD=%s: %s)", again.detail,
                 ptext(plan.first, t, sizeof t), first);
    }
}

/* --- the host ------------------------------------------------------------------------------ */

int af_repro_find_python(char *python, size_t plen, char *torch_version, size_t vlen, char *why,
                         size_t wlen)
{
    const char *env = getenv("AOTI_FUZZ_PYTHON");
    const char *py = env && *env ? env : "python3";
    char *argv[] = {(char *)py, "-c", "import torch; print(torch.__version__)", NULL};
    proc_run pr;
    run_capture(argv, NULL, 180.0, NULL, &pr);
    int ok = pr.started && !pr.timed_out && WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0 &&
             pr.out.s && pr.out.len;
    if (ok) {
        snprintf(python, plen, "%s", py);
        char v[128];
        snprintf(v, sizeof v, "%s", pr.out.s);
        v[strcspn(v, "\r\n")] = '\0';
        ptext(v, torch_version, vlen);
    } else {
        char ll[400];
        last_line(&pr.errb, ll, sizeof ll);
        snprintf(why, wlen, "%s cannot import torch%s%s", py, ll[0] ? ": " : "", ll);
    }
    proc_free(&pr);
    return ok ? 0 : -1;
}

void af_repro_host_info(char *compiler, size_t clen, char *os_name, size_t olen)
{
    compiler[0] = os_name[0] = '\0';
    char *argv[] = {"gcc", "--version", NULL};
    proc_run pr;
    run_capture(argv, NULL, 20.0, NULL, &pr);
    if (pr.started && WIFEXITED(pr.status) && WEXITSTATUS(pr.status) == 0 && pr.out.s) {
        char l[256];
        snprintf(l, sizeof l, "%s", pr.out.s);
        l[strcspn(l, "\r\n")] = '\0';
        ptext(l, compiler, clen);
    }
    proc_free(&pr);
    FILE *f = fopen("/etc/os-release", "re");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "PRETTY_NAME=", 12) != 0)
            continue;
        char *v = line + 12;
        v[strcspn(v, "\r\n")] = '\0';
        size_t n = strlen(v);
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v[n - 1] = '\0';
            v++;
        }
        ptext(v, os_name, olen);
        break;
    }
    if (f)
        fclose(f);
}
