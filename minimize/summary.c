/* summary.c — what aoti-minimize prints on stdout (the --json summary, or a few lines of
 * text) and minimal.json; see steps.h.
 *
 * The JSON summary is built in parts, in the order of its keys: the failure and the cases,
 * the search and its explain phase, the crash map, where the time went, how the answers
 * came, the side findings, and the re-checks with what they found about the host. Keys are
 * what scripts read (tests/e2e, the docs): their names and order are kept as they are. */
#include "steps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "aotif/json.h"

cJSON *af_mz_case_json(const af_spec *spec, const af_case *c)
{
    cJSON *o = cJSON_CreateObject();
    char cs[1024];
    af_case_str(spec, c, cs, sizeof cs);
    cJSON_AddStringToObject(o, "case", cs);
    cJSON *sy = cJSON_AddObjectToObject(o, "symbols");
    for (int k = 0; k < spec->n_syms; k++)
        cJSON_AddNumberToObject(
            sy, spec->syms[k].dim_name[0] ? spec->syms[k].dim_name : spec->syms[k].name,
            (double)c->values[k]);
    cJSON *sh = cJSON_AddArrayToObject(o, "shapes");
    for (int i = 0; i < spec->n_inputs; i++) {
        cJSON *one = cJSON_CreateArray();
        for (int d = 0; d < spec->inputs[i].rank; d++)
            cJSON_AddItemToArray(one, cJSON_CreateNumber((double)af_case_dim(spec, c, i, d)));
        cJSON_AddItemToArray(sh, one);
    }
    cJSON_AddStringToObject(o, "fill", af_fill_name(c->fill));
    char seed[32];
    snprintf(seed, sizeof seed, "%" PRIu64, c->seed);
    if (c->seed <= (1ULL << 53))
        cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    else
        cJSON_AddStringToObject(o, "seed", seed);
    cJSON_AddBoolToObject(o, "below_compiled_lower_bound", af_case_below_compiled(spec, c));
    char why[384];
    cJSON_AddStringToObject(o, "contract", af_ctv_name(af_case_verdict(spec, c, why, sizeof why)));
    cJSON_AddStringToObject(o, "contract_note", why);
    return o;
}

static cJSON *check_json(const af_repro_check *c)
{
    if (!c)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ran", c->ran);
    cJSON_AddBoolToObject(o, "reproduced", c->reproduced);
    cJSON_AddNumberToObject(o, "exit_status", c->exit_status);
    cJSON_AddNumberToObject(o, "signal", c->signo);
    cJSON_AddBoolToObject(o, "timed_out", c->timed_out);
    cJSON_AddNumberToObject(o, "seconds", c->seconds);
    cJSON_AddStringToObject(o, "detail", c->detail);
    if (c->preload[0])
        cJSON_AddStringToObject(o, "ld_preload", c->preload);
    if (c->warm) { /* repro.py ran in the Python started ahead */
        cJSON *w = cJSON_AddObjectToObject(o, "started_ahead");
        cJSON_AddNumberToObject(w, "seconds_before_check", c->warm_started_s);
        cJSON_AddBoolToObject(w, "ready", c->warm_ready);
        if (c->warm_ready)
            cJSON_AddNumberToObject(w, "warm_up_seconds", c->warm_up_s);
    }
    return o;
}

/* minimal.json: the crash file's sidecar (af_crash_to_json) plus what only the minimizer
 * knows, the explain result and the crash map. Readers of sidecars look keys up by name,
 * so the extra keys leave it a valid sidecar. */
int af_mz_write_minimal_json(const af_mz *m, const char *path, af_error *err)
{
    const af_spec *spec = &m->spec;
    const af_crashmap *map = m->have_map ? &m->cmap : NULL;
    char *text = af_crash_to_json(&m->mc);
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!o)
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    cJSON_AddItemToObject(o, "explain", af_explain_json(spec, &m->ex));
    if (map)
        cJSON_AddItemToObject(o, "crash_map", af_crashmap_json(map, spec));
    else
        cJSON_AddStringToObject(o, "crash_map", m->map_why);
    char *out = af_json_print(o, 1);
    cJSON_Delete(o);
    if (!out)
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    size_t n = strlen(out);
    char *buf = realloc(out, n + 2);
    if (!buf) {
        free(out);
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    }
    buf[n] = '\n';
    buf[n + 1] = '\0';
    int rc = af_write_atomic(path, buf, n + 1, 0, err);
    free(buf);
    return rc;
}

/* Print o on stdout, indented, and free it. */
static void print_json(cJSON *o)
{
    char *t = af_json_print(o, 1);
    if (t)
        puts(t);
    free(t);
    cJSON_Delete(o);
}

void af_mz_print_not_reproduced(const af_mz *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "crash", m->f.crash_path);
    cJSON_AddBoolToObject(o, "reproduced", 0);
    cJSON_AddStringToObject(o, "signature", m->crash.signature);
    cJSON_AddStringToObject(o, "start_gave", m->o.start_gave[0] ? m->o.start_gave : "OK");
    cJSON_AddItemToObject(o, "start", af_mz_case_json(&m->spec, &m->o.start));
    print_json(o);
}

/* The failure, where it is, and the case before and after. */
static void json_failure(cJSON *o, const af_mz *m)
{
    const af_result *res = &m->res;
    cJSON_AddStringToObject(o, "crash", m->f.crash_path);
    cJSON_AddBoolToObject(o, "reproduced", 1);
    af_json_add_path(o, "package", m->pkg->path);
    cJSON_AddStringToObject(o, "device", m->f.co.device);
    cJSON_AddStringToObject(o, "class", af_class_name(res->cls));
    cJSON_AddStringToObject(o, "signature", res->signature);
    cJSON_AddStringToObject(o, "message", res->message);
    if (res->kernel[0])
        cJSON_AddStringToObject(o, "kernel", res->kernel);
    if (res->triage[0])
        cJSON_AddStringToObject(o, "triage", res->triage);
    if (m->have_where)
        af_where_add_json(o, "where", &m->where, &m->spec);
    cJSON_AddItemToObject(o, "start", af_mz_case_json(&m->spec, &m->o.start));
    cJSON_AddItemToObject(o, "minimal", af_mz_case_json(&m->spec, &m->best));
}

/* The questions, the explain phase and the crash map. */
static void json_search(cJSON *o, const af_mz *m)
{
    const af_min_report *rep = &m->rep;
    cJSON_AddNumberToObject(o, "oracle_calls", (double)rep->oracle_calls);
    cJSON_AddNumberToObject(o, "oracle_runs", (double)rep->oracle_runs);
    cJSON_AddNumberToObject(o, "cache_hits", (double)rep->cache_hits);
    cJSON_AddNumberToObject(o, "call_bound", (double)rep->call_bound);
    cJSON_AddNumberToObject(o, "explain_calls", (double)rep->explain_calls);
    cJSON_AddItemToObject(o, "explain", af_explain_json(&m->spec, &m->ex));
    if (m->have_map) {
        cJSON *cm = af_crashmap_json(&m->cmap, &m->spec);
        if (cm && m->map_file) {
            char f[PATH_MAX + 32];
            snprintf(f, sizeof f, "%s/%s", m->out_dir, m->map_file);
            cJSON_AddStringToObject(cm, "file", f);
        }
        cJSON_AddItemToObject(o, "crash_map", cm);
    } else {
        cJSON_AddStringToObject(o, "crash_map", m->map_why);
    }
}

/* Where the wall time went: workers up, the eager reference up, the search, then the three
 * re-checks side by side (repro_checks: the run with the input checks on, repro.sh and
 * repro.py; and each). */
static void json_time(cJSON *o, const af_mz *m)
{
    cJSON_AddNumberToObject(o, "rounds", m->rep.rounds);
    cJSON_AddNumberToObject(o, "search_seconds", m->search_s);
    cJSON_AddNumberToObject(o, "wall_seconds", af_now_s() - m->o.t0);
    cJSON *ph = cJSON_AddObjectToObject(o, "phase_seconds");
    cJSON_AddNumberToObject(ph, "workers_start", m->phase_s[AF_MZ_PH_POOL]);
    cJSON_AddNumberToObject(ph, "reference_start", m->phase_s[AF_MZ_PH_REF]);
    cJSON_AddNumberToObject(ph, "search", m->search_s);
    cJSON_AddNumberToObject(ph, "check_inputs_run", m->phase_s[AF_MZ_PH_CHECK_INPUTS]);
    cJSON_AddNumberToObject(ph, "repro_checks", m->phase_s[AF_MZ_PH_CHECKS]);
    cJSON_AddNumberToObject(ph, "repro_sh", m->shc.seconds);
    cJSON_AddNumberToObject(ph, "repro_py", m->pyc.seconds);
    cJSON_AddNumberToObject(o, "worker_spawns", (double)m->pst.spawns);
}

/* How the answers came (flaky, stopped, not bugs), and the other failures met. */
static void json_answers(cJSON *o, const af_mz *m)
{
    const af_min_report *rep = &m->rep;
    cJSON_AddBoolToObject(o, "flaky", rep->flaky);
    cJSON_AddNumberToObject(o, "reproduce_rate", rep->repro_rate);
    cJSON_AddNumberToObject(o, "runs_per_question", rep->runs_per_question);
    cJSON_AddBoolToObject(o, "stopped", rep->stopped);
    cJSON_AddBoolToObject(o, "interrupted", *m->stop != 0);
    cJSON_AddBoolToObject(o, "locally_minimal", rep->locally_minimal);
    cJSON *nb = cJSON_AddObjectToObject(o, "not_bugs");
    cJSON_AddNumberToObject(nb, "refused", (double)m->o.n_refused);
    cJSON_AddNumberToObject(nb, "timeout", (double)m->o.n_timeout);
    cJSON_AddNumberToObject(nb, "oom", (double)m->o.n_oom);
    cJSON *sf = cJSON_AddArrayToObject(o, "side_findings");
    for (int i = 0; i < rep->n_side; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "case", af_mz_case_json(&m->spec, &rep->side[i].c));
        cJSON_AddStringToObject(e, "class", af_class_name(m->findings[i].cls));
        cJSON_AddStringToObject(e, "signature", rep->side[i].signature);
        cJSON_AddNumberToObject(e, "runs", (double)rep->side[i].runs);
        cJSON_AddItemToArray(sf, e);
    }
    if (rep->side_dropped)
        cJSON_AddNumberToObject(o, "side_findings_dropped", rep->side_dropped);
}

/* The re-checks, eager's verdict, the torch version, where it all is. */
static void json_checks(cJSON *o, const af_mz *m)
{
    cJSON *rp = cJSON_AddObjectToObject(o, "repro");
    cJSON_AddItemToObject(rp, "sh", check_json(m->info.sh_check));
    cJSON_AddItemToObject(rp, "py", check_json(m->info.py_check));
    cJSON_AddStringToObject(o, "check_inputs", m->check_inputs);
    cJSON *ej = cJSON_AddObjectToObject(o, "eager");
    cJSON_AddStringToObject(ej, "verdict", m->mc.eager);
    cJSON_AddStringToObject(ej, "error", m->mc.eager_error);
    cJSON_AddStringToObject(o, "torch_version", m->torch_version);
    af_json_add_path(o, "out_dir", m->out_dir);
}

/* The search in a few lines: what the minimal case is, what it gives, how it was found. */
static void print_search_text(const af_mz *m)
{
    const af_min_report *rep = &m->rep;
    char best_str[1024], vwhy[384];
    af_case_str(&m->spec, &m->best, best_str, sizeof best_str);
    af_case_verdict(&m->spec, &m->best, vwhy, sizeof vwhy);
    printf("minimal case: %s fill %s seed %" PRIu64 "\ncontract:     %s\n", best_str,
           af_fill_name(m->best.fill), m->best.seed, vwhy);
    printf("signature:    %s\n", m->res.signature);
    printf("eager:        %s%s%s\n", m->mc.eager, m->mc.eager_error[0] ? ": " : "",
           m->mc.eager_error);
    printf("from:         %s fill %s seed %" PRIu64 "\n", m->start_str,
           af_fill_name(m->o.start.fill), m->o.start.seed);
    printf("search:       %" PRId64 " questions (%" PRId64 " runs, %" PRId64
           " cache hits), %.1f s%s%s\n",
           rep->oracle_calls, rep->oracle_runs, rep->cache_hits, m->search_s,
           rep->locally_minimal ? ", locally minimal" : "", rep->stopped ? ", stopped early" : "");
    if (m->ex.ran) {
        char es[1024];
        af_explain_summary(&m->spec, &m->ex, es, sizeof es);
        printf("explain:      %s (%" PRId64 " questions)\n", es, rep->explain_calls);
    }
}

/* What came after the search: the map, flakiness, other bugs, the re-checks, the files. */
static void print_outputs_text(const af_mz *m)
{
    const af_min_report *rep = &m->rep;
    if (m->have_map)
        printf("crash map:    %s/%s: %" PRId64 " cases, %" PRId64 " new questions, %" PRId64
               " from the memo\n",
               m->out_dir, m->map_file ? m->map_file : "-", m->cmap.cases, m->cmap.questions,
               m->cmap.memo_hits);
    else
        printf("crash map:    %s\n", m->map_why);
    if (rep->flaky)
        printf("flaky:        reproduced in %.0f%% of runs; questions were majority votes of %d\n",
               100 * rep->repro_rate, rep->runs_per_question);
    for (int i = 0; i < rep->n_side; i++)
        printf("other bug:    %s: %s\n", m->findings[i].case_str, m->findings[i].signature);
    if (m->info.sh_check)
        printf("repro.sh:     %s\n", m->shc.reproduced ? "reproduced" : m->shc.detail);
    if (m->info.py_check)
        printf("repro.py:     %s\n", m->pyc.reproduced ? "reproduced" : m->pyc.detail);
    printf("written:      %s/{minimal.bin,minimal.json,repro.py,repro.sh,report.md%s}\n",
           m->out_dir, m->map_file ? ",crashmap.svg" : "");
}

void af_mz_print_summary(const af_mz *m)
{
    if (!m->f.json) {
        print_search_text(m);
        print_outputs_text(m);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    json_failure(o, m);
    json_search(o, m);
    json_time(o, m);
    json_answers(o, m);
    json_checks(o, m);
    print_json(o);
}
