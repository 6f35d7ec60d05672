/* repro_py.c — repro.py: standalone Python (torch + the package, nothing else) that fails
 * the way the minimal case does; see repro.h.
 *
 * The script is written in sections, in the order they appear in it: a docstring (package,
 * model, inputs, case, failure), debug switches as commented lines, the case as constants
 * (every path and name through af_py_quote), the fill function of docs/fill.md (embedded
 * from harness/python/aotif_fill.py, so its tensors equal the worker's bit for bit), main()
 * (build the inputs, run the exported program eagerly when there is one, load the package,
 * call the model) and compare() (AOTI against eager, for a MISMATCH). Before re-raising, main
 * prints a marker line ("repro.py: the model raised T: message", or "repro.py: outputs
 * differ: ..."), which is what the re-check (recheck.c) reads. */
#include "repro_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The fill function: harness/python/aotif_fill.py, embedded at build time (embed.cmake). */
#include "aotif_fill_py.h"

/* Debug switches that fit the failure, as commented lines (set before torch is imported);
 * the input checks set for real when the case was minimized with them. */
static void py_switches(af_sbuf *b, const af_repro_info *info)
{
    af_class cls = info->result->cls;
    int cuda = af_device_is_cuda(af_repro_device(info));
    if (info->with_check_inputs)
        af_sb_puts(b, "os.environ[\"AOTI_RUNTIME_CHECK_INPUTS\"] = \"1\"  # as the case was "
                      "minimized (--check-inputs)\n");
    af_sb_puts(b, "# Debug switches for this failure: uncomment (they must be set before torch is "
                  "imported).\n");
    if (!info->with_check_inputs)
        af_sb_puts(b, "# os.environ[\"AOTI_RUNTIME_CHECK_INPUTS\"] = \"1\"  # the wrapper checks "
                      "every input against its compiled shape contract\n");
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

/* The docstring (what fails, and how to run it) and the imports. */
static void py_docstring(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_case *c = info->minimal;
    const af_result *r = info->result;
    const char *dev = af_repro_device(info);
    char t1[PATH_MAX], t2[1024], line[4096];
    af_sb_puts(b, "#!/usr/bin/env python3\n\"\"\"Reproducer of an AOTInductor failure, written by "
                  "aoti-minimize (aoti-fuzz " AF_VERSION ").\n\n");
    af_sb_add(b, "Package: %s (sha256 %s)\n", af_text_doc(info->pkg->abspath, t1, sizeof t1),
              info->pkg->sha256);
    af_sb_add(b, "Model:   %s on %s\n", af_text_doc(info->pkg->model, t2, sizeof t2),
              af_text_doc(dev, line, sizeof line));
    af_repro_inputs_line(spec, c, line, sizeof line);
    af_sb_add(b, "Inputs:  %s\n", line);
    af_repro_case_line(spec, c, line, sizeof line);
    af_sb_add(b, "Case:    %s, fill %s, seed %" PRIu64 "\n", line, af_fill_name(c->fill), c->seed);
    af_sb_add(b, "Failure: %s\n\n", af_text_doc(r->signature, line, sizeof line));
    af_sb_puts(b, "Needs only torch and the package:  python3 repro.py [PACKAGE.pt2]\n");
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(b, "Reproduces when the process dies of %s; exits 0 when the model runs fine.\n",
                  af_signal_name(r->signo));
    else
        af_sb_puts(
            b, "Reproduces when the model raises (exit 1); exits 0 when the model runs fine.\n");
    af_sb_puts(b, "\"\"\"\nimport faulthandler\nimport os\nimport sys\n\n");
}

/* The case as constants: package, model, device, fill, the exported program, tolerances,
 * the expected signature and every input's shape, dtype and value range. */
static void py_constants(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    const af_case *c = info->minimal;
    const af_result *r = info->result;
    const char *dev = af_repro_device(info);
    af_sb_puts(b, "PACKAGE = ");
    af_sb_py_quoted(b, info->pkg->abspath);
    af_sb_puts(b, "\nMODEL = ");
    af_sb_py_quoted(b, info->pkg->model);
    af_sb_puts(b, "\nDEVICE = ");
    af_sb_py_quoted(b, strcmp(dev, "cuda") == 0 ? "cuda:0" : dev);
    af_sb_add(b, "\nFILL = '%s'\nSEED = %" PRIu64 "\n", af_fill_name(c->fill), c->seed);
    af_sb_puts(b, "PROGRAM = ");
    if (info->program && *info->program)
        af_sb_py_quoted(b, info->program);
    else
        af_sb_puts(b, "None");
    af_sb_puts(b, "  # the exported program, run eagerly first (None: not available)\n");
    char sc[256];
    af_case_shape_class(spec, c, sc, sizeof sc);
    af_sb_puts(b, "SHAPE_CLASS = ");
    af_sb_py_quoted(b, sc);
    if (info->have_tol)
        af_sb_add(b, "\nTOL = {\"rtol\": %.17g, \"atol\": %.17g}\n", info->rtol, info->atol);
    else
        af_sb_puts(b, "\nTOL = {}  # torch.testing.assert_close's dtype defaults\n");
    af_sb_puts(b, "EXPECTED = ");
    af_sb_py_quoted(b, r->signature);
    af_sb_puts(b, "  # aoti-fuzz's signature of the failure\n");
    af_sb_puts(b,
               "# (name, shape, dtype, value range of integer inputs), in the model's input order\n"
               "INPUTS = [\n");
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        char shape[512];
        af_repro_shape_tuple(spec, c, i, shape, sizeof shape);
        af_sb_puts(b, "    (");
        af_sb_py_quoted(b, in->name);
        af_sb_add(b, ", %s, torch.%s, (%" PRId64 ", %" PRId64 ")),\n", shape,
                  af_dtype_name(in->dtype), in->int_lo, in->int_hi);
    }
    af_sb_puts(b, "]\n\n");
}

/* main() up to the loading of the package: the inputs, and eager's run of them. */
static void py_main_head(af_sbuf *b)
{
    af_sb_puts(
        b, "\n\ndef main():\n"
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
}

/* main() from loading the package on: the call, the marker line, the comparison with eager. */
static void py_main_run(af_sbuf *b, const af_repro_info *info)
{
    const af_result *r = info->result;
    const char *dev = af_repro_device(info);
    int idx = af_device_index(dev); /* > 0: a device_index to pass */
    if (strcmp(info->pkg->model, "model") == 0 && idx <= 0) {
        af_sb_puts(b, "    model = torch._inductor.aoti_load_package(path)\n");
    } else {
        af_sb_puts(b, "    from torch._inductor.package import load_package\n");
        if (idx > 0)
            af_sb_add(b, "    model = load_package(path, MODEL, device_index=%d)\n", idx);
        else
            af_sb_puts(b, "    model = load_package(path, MODEL)\n");
    }
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(b,
                  "    print(\"running the model; expected: the process dies of %s (\" + "
                  "EXPECTED + \")\", flush=True)\n",
                  af_signal_name(r->signo));
    else
        af_sb_puts(b, "    print(\"running the model; expected: \" + EXPECTED, flush=True)\n");
    af_sb_puts(b, "    try:\n"
                  "        outputs = model(*inputs)\n");
    if (af_device_is_cuda(dev))
        af_sb_puts(b, "        torch.cuda.synchronize()  # CUDA faults surface at the next sync\n");
    af_sb_puts(
        b, "    except Exception as e:\n"
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
           "    return 0\n");
}

/* compare() and the entry point. */
static void py_compare(af_sbuf *b)
{
    af_sb_puts(
        b,
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
}

char *af_repro_py_text(const af_repro_info *info)
{
    af_sbuf b = {0};
    py_docstring(&b, info);
    py_switches(&b, info);
    af_sb_puts(&b, "\nimport torch  # noqa: E402\n\n");
    py_constants(&b, info);
    af_sb_puts(&b, af_aotif_fill_py);
    py_main_head(&b);
    py_main_run(&b, info);
    py_compare(&b);
    return af_sb_take(&b);
}
