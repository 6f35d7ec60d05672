/* report.c — report.md: a bug report to paste, for a minimal case; see repro.h.
 *
 * Sections, in order: the title (what fails, in one line), What happens (the failure, its
 * contract verdict, eager's verdict), Minimal shapes (next to the declared and compiled
 * ranges), Which sizes matter (the explain phase's free and pinned symbols, the crash map),
 * Contract (every fact and where it came from), Error, Where (where.c's section), Re-runs,
 * both reproducers inline, the re-checks of them, Versions, and how the case was found.
 * Text from outside lands in prose through af_text_md (no backtick, no bar) and in code
 * blocks through af_text_ascii, inside fences longer than any backtick run (af_sb_fence). */
#include "repro_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotif/env.h"

/* A message's first line, in printable ASCII. */
static void first_line(const char *msg, char *buf, size_t len)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", msg ? msg : "");
    tmp[strcspn(tmp, "\r\n")] = '\0';
    af_text_md(tmp, buf, len);
}

/* Add the text built in `inner` to b as a fenced text block, and free it. */
static void fence_text(af_sbuf *b, af_sbuf *inner)
{
    if (inner->oom)
        b->oom = 1;
    else
        af_sb_fence(b, "text", inner->s);
    free(inner->s);
    inner->s = NULL;
}

/* Where a crash happened, as its signature names it: the function names after " @ " (the
 * model's own frame last, demangled, no offsets), else the top frame without its offset. */
static void top_symbol(const af_result *r, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *at = r->cls == AF_RES_SIGNAL ? strstr(r->signature, " @ ") : NULL;
    if (at) {
        af_text_md(at + 3, buf, len);
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
    af_text_md(tmp, buf, len);
}

static void report_title(const af_repro_info *info, char *buf, size_t len)
{
    const af_result *r = info->result;
    char where[200] = "", what[600], ins[2048], fl[512];
    top_symbol(r, where, sizeof where);
    af_repro_inputs_line(info->spec, info->minimal, ins, sizeof ins);
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
        af_text_md(r->kernel, fl, sizeof fl);
        snprintf(what, sizeof what, "%s%s%s",
                 r->cuda_error[0] ? af_text_md(r->cuda_error, where, sizeof where) : "CUDA fault",
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

/* The first paragraph: what running the case does. */
static void what_happens(af_sbuf *b, const af_repro_info *info)
{
    const af_result *r = info->result;
    char name[PATH_MAX], ins[2048], fl[1024], where[200], dev[64];
    const char *base = strrchr(info->pkg->abspath, '/');
    af_text_md(base ? base + 1 : info->pkg->abspath, name, sizeof name);
    af_repro_inputs_line(info->spec, info->minimal, ins, sizeof ins);
    top_symbol(r, where, sizeof where);
    af_sb_add(b, "Running the AOTInductor package `%s` (model `%s`, %s) on inputs of shape %s ",
              name, af_text_md(info->pkg->model, fl, sizeof fl),
              af_text_md(af_repro_device(info), dev, sizeof dev), ins);
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
                  r->cuda_error[0] ? af_text_md(r->cuda_error, dev, sizeof dev)
                                   : "a sticky CUDA error",
                  r->kernel[0] ? " in `" : "", af_text_md(r->kernel, fl, sizeof fl),
                  r->kernel[0] ? "`" : "");
        break;
    default:
        af_sb_add(b, "gives %s.", af_class_name(r->cls));
        break;
    }
}

/* The contract verdict of the case, and what it means for the report. */
static void what_contract(af_sbuf *b, const af_repro_info *info)
{
    char why[512], fl[1024];
    af_ctv v = af_case_verdict(info->spec, info->minimal, why, sizeof why);
    af_sb_add(b, "\n\nContract: this case is %s.", af_text_md(why, fl, sizeof fl));
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
}

/* Eager's verdict on the case: does the exported program fail too? */
static void what_eager(af_sbuf *b, const af_repro_info *info)
{
    const char *ev = info->eager ? info->eager : "";
    char ee[700];
    af_text_md(info->eager_error ? info->eager_error : "", ee, sizeof ee);
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
}

/* "## What happens": the failure, the contract verdict, eager's verdict, the input checks. */
static void report_what(af_sbuf *b, const af_repro_info *info)
{
    char fl[1024];
    what_happens(b, info);
    what_contract(b, info);
    what_eager(b, info);
    af_sb_puts(b, "\n\n");
    if (info->check_inputs && *info->check_inputs)
        af_sb_add(b,
                  "With `AOTI_RUNTIME_CHECK_INPUTS=1` the same case gives: %s (that check "
                  "enforces the compiled bounds, which are narrower than the declared ones after "
                  "0/1 specialization: its rejection is not a contract verdict).",
                  af_text_md(info->check_inputs, fl, sizeof fl));
    af_sb_puts(b, "\n");
}

static void report_contract(af_sbuf *b, const af_repro_info *info)
{
    const af_spec *spec = info->spec;
    char t1[512], t2[AF_NAME_MAX];
    af_sb_add(b, "Source: %s.\n\n",
              spec->contract_src[0]          ? af_text_md(spec->contract_src, t1, sizeof t1)
              : af_spec_contract_known(spec) ? af_origin_name(spec->syms[0].decl_from)
                                             : "none read (the package's wrapper only; see below)");
    af_sb_puts(b, "| fact | value | from |\n|---|---|---|\n");
    for (int i = 0; i < spec->n_inputs; i++) {
        const af_input *in = &spec->inputs[i];
        af_sb_add(b, "| input %d name | %s | %s |\n", i, af_text_md(in->name, t2, sizeof t2),
                  af_origin_name(in->name_from));
        if (af_dtype_is_float(in->dtype) || in->dtype == AF_DT_BOOL)
            continue;
        af_sb_add(b, "| %s values | [%" PRId64 ", %" PRId64 "] | %s%s%s |\n",
                  af_text_md(in->name, t2, sizeof t2), in->int_lo, in->int_hi,
                  af_origin_name(in->int_from), in->int_why[0] ? ": " : "",
                  af_text_md(in->int_why, t1, sizeof t1));
    }
    for (int k = 0; k < spec->n_syms; k++) {
        const af_symbol *s = &spec->syms[k];
        af_sb_add(b, "| %s declared range | [%" PRId64 ", %" PRId64 "]%s | %s |\n",
                  af_text_md(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2), s->decl_min,
                  s->decl_max, s->max_unbounded ? " (no upper bound; explored up to here)" : "",
                  s->decl_from == AF_FROM_ASSUMED ? "assumed (unknown)"
                                                  : af_origin_name(s->decl_from));
        af_sb_add(b, "| %s compiled range | [%" PRId64 ", %" PRId64 "] | wrapper |\n",
                  af_text_md(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2),
                  s->compiled_min, s->compiled_max);
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
                af_text_md(s->dim_name[0] ? s->dim_name : s->name, t2, sizeof t2), s->decl_min,
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
        af_repro_shape_symbolic(spec, i, s1, sizeof s1);
        af_repro_shape_tuple(spec, info->minimal, i, s2, sizeof s2);
        af_repro_shape_tuple(spec, info->start, i, s3, sizeof s3);
        af_sb_add(b, "| %s | %s | %s | **%s** | %s |\n",
                  af_text_md(spec->inputs[i].name, t1, sizeof t1),
                  af_dtype_name(spec->inputs[i].dtype), s1, s2, s3);
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
                  af_text_md(s->name, t1, sizeof t1),
                  s->dim_name[0] ? af_text_md(s->dim_name, t2, sizeof t2) : "-", v,
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
            af_sb_add(b, "%" PRId64 " passes (%s)", t->value, af_text_md(t->text, sig, sizeof sig));
        else
            af_sb_add(b, "%" PRId64 " passes", t->value);
        break;
    case AF_V_OTHER:
        af_sb_add(b, "%" PRId64 " fails differently (`%s`)", t->value,
                  af_text_md(t->text, sig, sizeof sig));
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
                      ? af_text_md(info->crash_map_why, sig, sizeof sig)
                      : "not drawn");
        return;
    }
    const char *xn = af_text_md(af_repro_sym_label(&spec->syms[map->sym[0]]), t1, sizeof t1);
    const char *yn = map->sym[1] >= 0
                         ? af_text_md(af_repro_sym_label(&spec->syms[map->sym[1]]), t2, sizeof t2)
                         : NULL;
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
                  af_text_ascii(map->keys[k], sig, sizeof sig));
    if (map->keys_dropped)
        af_sb_add(&g, "*: %d further signatures\n", map->keys_dropped);
    fence_text(b, &g);
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
        af_sb_add(b, "It **%s**.\n\n", af_text_md(t1, t1, sizeof t1));
        af_sb_puts(
            b, "Each symbol was tried alone across its range, the others held at the minimal "
               "case, at its lower bound, one above it, a typical value, a power of two and its "
               "upper bound: *free* when every tried value still fails the same way, *pinned* "
               "otherwise. Freedom is per symbol (two free symbols were not moved together).\n\n");
        af_sb_puts(b, "Minimal failing shape set: ");
        for (int i = 0; i < ex->n_syms; i++) {
            const af_explain_sym *s = &ex->sym[i];
            af_sb_add(b, "%s`%s=%" PRId64 "`", i ? ", " : "",
                      af_text_md(af_repro_sym_label(&spec->syms[i]), t2, sizeof t2),
                      ex->smallest.values[i]);
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
                      af_text_md(af_repro_sym_label(&spec->syms[i]), t2, sizeof t2),
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
              af_text_ascii(r->signature, t, sizeof t));
    if (r->message[0]) {
        /* the message may span lines; keep them, made printable one by one */
        af_sb_puts(&e, "message:   ");
        const char *p = r->message;
        for (int n = 0; *p && n < 12; n++) {
            size_t l = strcspn(p, "\n");
            char one[1024];
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
            af_sb_add(&e, "%s%s\n", n ? "           " : "", af_text_ascii(one, t, sizeof t));
            p += l;
            if (*p == '\n')
                p++;
        }
    }
    if (r->cls == AF_RES_SIGNAL)
        af_sb_add(&e, "signal:    %s (%d), fault address 0x%" PRIx64 "\n", af_signal_name(r->signo),
                  r->signo, r->fault_addr);
    if (r->cuda_error[0])
        af_sb_add(&e, "cuda:      %s\n", af_text_ascii(r->cuda_error, t, sizeof t));
    if (r->kernel[0])
        af_sb_add(&e, "kernel:    %s\n", af_text_ascii(r->kernel, t, sizeof t));
    if (r->triage[0]) /* the re-run with blocking launches */
        af_sb_add(&e, "triage:    %s\n", af_text_ascii(r->triage, t, sizeof t));
    if (r->n_frames) {
        af_sb_puts(&e, "top frames:\n");
        for (int i = 0; i < r->n_frames; i++)
            af_sb_add(&e, "  #%d %s\n", i, af_text_ascii(r->frames[i], t, sizeof t));
    }
    fence_text(b, &e);
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
              af_text_md(c->detail, t, sizeof t), c->seconds);
    if (c->warm)
        af_sb_add(b,
                  "  - It ran in a Python aoti-minimize started %.1f s before the check, which "
                  "had imported torch and run torch's CPU-ISA probe %s; the script ran in it as "
                  "`python3 repro.py` (runpy, as `__main__`), with the same environment.\n",
                  c->warm_started_s,
                  c->warm_ready ? "by then" : "(still at it when the check began)");
}

static void report_versions(af_sbuf *b, const af_repro_info *info)
{
    char t[1024];
    af_sb_add(b, "- torch: %s\n",
              info->torch_version && *info->torch_version
                  ? af_text_md(info->torch_version, t, sizeof t)
                  : "unknown (no Python importing torch was found)");
    if (info->versions && *info->versions) {
        const char *p = info->versions;
        while (*p) {
            size_t l = strcspn(p, "\n");
            char one[512];
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
            if (one[0])
                af_sb_add(b, "- %s\n", af_text_md(one, t, sizeof t));
            p += l;
            if (*p)
                p++;
        }
    }
    af_sb_add(b, "- package: sha256 %s, device %s", info->pkg->sha256, info->pkg->device);
    if (info->pkg->compute_capability[0])
        af_sb_add(b, ", compute capability %s",
                  af_text_md(info->pkg->compute_capability, t, sizeof t));
    if (info->pkg->cpu_isa[0])
        af_sb_add(b, ", CPU ISA %s", af_text_md(info->pkg->cpu_isa, t, sizeof t));
    af_sb_puts(b, "\n");
    af_sb_add(b, "- compiler: %s\n",
              info->compiler && *info->compiler ? af_text_md(info->compiler, t, sizeof t)
                                                : "unknown");
    af_sb_add(b, "- OS: %s\n",
              info->os_name && *info->os_name ? af_text_md(info->os_name, t, sizeof t) : "unknown");
    af_sb_puts(b, "- aoti-fuzz: " AF_VERSION "\n");
}

static void report_search(af_sbuf *b, const af_repro_info *info)
{
    char s1[1024], s2[1024];
    af_repro_case_line(info->spec, info->start, s1, sizeof s1);
    af_repro_case_line(info->spec, info->minimal, s2, sizeof s2);
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
            af_text_md(info->findings[i].case_str, s1, sizeof s1);
            af_sb_add(b, "  - `%s`: %s\n", s1,
                      af_text_md(info->findings[i].signature, sig, sizeof sig));
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
                  k[0] ? af_text_md(k, tk, sizeof tk) : "", k[0] ? "`" : "",
                  af_text_md(r->triage, t, sizeof t));
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
                  af_text_md(ci, t, sizeof t));
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
                  af_text_md(pc->preload, title, sizeof title));
    } else if (pc && pc->preload[0]) {
        af_sb_add(
            &b,
            "\nOn this machine Python could load the package only with the system C++ runtime "
            "preloaded: `LD_PRELOAD=%s python3 repro.py`.",
            af_text_md(pc->preload, title, sizeof title));
        char file[PATH_MAX] = "";
        if (strcmp(pc->preload_how, "remembered") == 0 && af_loader_file(file, sizeof file) == 0)
            af_sb_add(&b,
                      " (A start without it died on an earlier run; aoti-fuzz remembers that "
                      "in `%s`, and `AOTI_FUZZ_LOADER=off` tries without it again.)",
                      af_text_md(file, title, sizeof title));
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
