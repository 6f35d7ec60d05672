/* summary.c — what aoti-fuzz says about a run: the status line while it runs, the closing
 * lines at its end, and the --summary JSON document (the keys are read by tests/ and bench/,
 * so they only ever grow).
 *
 * Everything here reads the run's state (fuzz.h) and changes nothing in it but the time of
 * the last status line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "aotif/json.h"
#include "fuzz.h"

void af_fuzz_crash_case_str(const af_crash *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_syms && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s=%" PRId64, i ? " " : "",
                         c->dim_names[i][0] ? c->dim_names[i] : c->sym_names[i], c->values[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (n < len && c->fill != AF_FILL_RANDOM)
        snprintf(buf + n, len - n, " fill=%s", af_fill_name(c->fill));
}

int af_fuzz_outside_count(const fuzz_state *g)
{
    int n = 0;
    for (int i = 0; g->store && i < af_store_size(g->store); i++)
        n += af_store_entry_at(g->store, i)->crash.contract == AF_CT_OUTSIDE;
    return n;
}

/* ---- the lines on stderr ------------------------------------------------------------------ */

void af_fuzz_status_line(fuzz_state *g, int force)
{
    double t = af_now_s();
    if (!force && t - g->last_status < 1.0)
        return;
    g->last_status = t;
    double el = t - g->t0;
    fprintf(stderr,
            "aoti-fuzz: %" PRId64 " execs  %.0f/s  (%" PRId64 " runs, %" PRId64 " memo, %" PRId64
            " predicted)  crashes %d"
            " (%" PRId64 " inputs, %d outside the contract)  timeouts %" PRId64 "  ooms %" PRId64
            "  refused %" PRId64 "  features %" PRId64 "  eager checks %" PRId64 "  worst: %s\n",
            g->execs, el > 0 ? (double)g->execs / el : 0.0, g->runs, g->memo_hits, g->predicted,
            af_store_size(g->store), g->crash_runs, af_fuzz_outside_count(g), g->timeouts, g->ooms,
            g->refused, g->n_features, g->checks, g->worst[0] ? g->worst : "-");
    af_error err;
    af_error_clear(&err);
    if (af_store_flush(g->store, 0, &err) < 0 && !g->store_warned++)
        fprintf(stderr, "aoti-fuzz: warning: %s\n", err.message);
}

void af_fuzz_print_done(const fuzz_state *g, double elapsed)
{
    int n_crashes = g->store ? af_store_size(g->store) : 0;
    fprintf(stderr,
            "aoti-fuzz: done: %" PRId64 " execs (%" PRId64 " runs, %" PRId64
            " from the memo, %" PRId64 " of them repeats of OK cases, %" PRId64 " predicted) in"
            " %.1f s (%.0f/s), %d distinct crash%s (%" PRId64 " new, %" PRId64
            " failing inputs), %" PRId64 " timeouts, %" PRId64 " ooms, %" PRId64 " refused\n",
            g->execs, g->runs, g->memo_hits, g->memo_hits_ok, g->predicted, elapsed,
            elapsed > 0 ? (double)g->execs / elapsed : 0.0, n_crashes, n_crashes == 1 ? "" : "es",
            g->new_crashes, g->crash_runs, g->timeouts, g->ooms, g->refused);
    for (int i = 0; i < n_crashes; i++) {
        const af_store_entry *e = af_store_entry_at(g->store, i);
        char cs[256];
        af_fuzz_crash_case_str(&e->crash, cs, sizeof cs);
        fprintf(stderr, "  %-14s x%-6" PRId64 " %-24s %s%s\n    %s\n    eager: %s%s%s\n",
                af_class_name(e->crash.cls), e->crash.count + e->pending, cs, e->path,
                e->crash.flaky ? " (flaky)" : "",
                e->crash.contract_note[0] ? e->crash.contract_note : "contract: not recorded",
                e->crash.eager[0] ? e->crash.eager : "not recorded",
                e->crash.eager_error[0] ? ": " : "", e->crash.eager_error);
    }
}

/* ---- the --summary document --------------------------------------------------------------- */

/* "pool": the worker pool's statistics (worker.h), where the time went. */
static cJSON *pool_json(const af_pool *pool)
{
    af_pool_stats ps;
    af_pool_get_stats(pool, &ps);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "setup_seconds", ps.setup_seconds);
    cJSON_AddNumberToObject(p, "spawns", (double)ps.spawns);
    cJSON_AddNumberToObject(p, "spawn_seconds", ps.spawn_seconds);
    cJSON_AddNumberToObject(p, "spares_peak", ps.spares_peak);
    cJSON_AddNumberToObject(p, "zygote_restarts", ps.zygote_restarts);
    cJSON_AddNumberToObject(p, "cases_rerun", (double)ps.cases_rerun);
    /* per worker that came up, in seconds: where start-up goes */
    cJSON *lp = cJSON_AddObjectToObject(p, "load_phases_mean_seconds");
    static const char *const phase[] = {"fork", "libtorch", "cuda_context", "model_so",
                                        "container"};
    for (int k = 0; k < 5; k++)
        cJSON_AddNumberToObject(lp, phase[k],
                                ps.loads ? ps.load_phase_seconds[k] / (double)ps.loads : 0);
    cJSON_AddNumberToObject(p, "loads", (double)ps.loads);
    cJSON_AddNumberToObject(p, "wait_worker_seconds", ps.wait_worker_seconds);
    cJSON_AddNumberToObject(p, "warm_ups", (double)ps.warm_ups);
    cJSON_AddNumberToObject(p, "warm_up_mean_seconds",
                            ps.warm_ups ? ps.warm_up_seconds / (double)ps.warm_ups : 0);
    cJSON_AddNumberToObject(p, "warm_deaths", (double)ps.warm_deaths);
    cJSON_AddNumberToObject(p, "faults", (double)ps.faults);
    cJSON_AddNumberToObject(p, "fault_case_seconds", ps.fault_case_seconds);
    cJSON_AddNumberToObject(p, "fault_exit_seconds", ps.fault_exit_seconds);
    cJSON_AddNumberToObject(p, "first_case_mean_seconds",
                            ps.first_cases ? ps.first_case_seconds / (double)ps.first_cases : 0);
    /* per case, in microseconds: the worker's side (post to answer) and the tool's (from an
     * answer to the next post, on the same worker) */
    cJSON_AddNumberToObject(p, "exchange_mean_us",
                            ps.cases ? 1e6 * ps.exchange_seconds / (double)ps.cases : 0);
    cJSON_AddNumberToObject(p, "run_mean_us",
                            ps.cases ? 1e6 * ps.run_seconds / (double)ps.cases : 0);
    cJSON_AddNumberToObject(p, "between_mean_us",
                            ps.betweens ? 1e6 * ps.between_seconds / (double)ps.betweens : 0);
    cJSON_AddNumberToObject(p, "plain_results", (double)ps.plain_results);
    cJSON_AddNumberToObject(p, "ahead_posted", (double)ps.ahead_posted);
    cJSON_AddNumberToObject(p, "ahead_taken", (double)ps.ahead_taken);
    return p;
}

/* One entry of "crashes": a crash file of the artifact dir. */
static cJSON *crash_entry_json(const af_store_entry *e)
{
    char buf[512], when[32];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "signature", e->crash.signature);
    cJSON_AddStringToObject(x, "class", af_class_name(e->crash.cls));
    af_json_add_path(x, "file", e->path);
    af_fuzz_crash_case_str(&e->crash, buf, sizeof buf);
    cJSON_AddStringToObject(x, "case", buf);
    cJSON_AddNumberToObject(x, "first_seen", (double)e->crash.first_seen);
    time_t t = (time_t)e->crash.first_seen;
    struct tm tm;
    if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
        cJSON_AddStringToObject(x, "first_seen_utc", when);
    cJSON_AddNumberToObject(x, "count", (double)(e->crash.count + e->pending));
    cJSON_AddNumberToObject(x, "seen_this_run", (double)e->seen_here);
    cJSON_AddBoolToObject(x, "from_earlier_run", e->loaded);
    cJSON_AddBoolToObject(x, "flaky", e->crash.flaky);
    cJSON_AddBoolToObject(x, "below_compiled", e->crash.below_compiled);
    cJSON_AddStringToObject(x, "contract", af_ctv_name(e->crash.contract));
    cJSON_AddStringToObject(x, "contract_note", e->crash.contract_note);
    cJSON_AddStringToObject(x, "eager", e->crash.eager);
    cJSON_AddStringToObject(x, "eager_error", e->crash.eager_error);
    cJSON_AddStringToObject(x, "message", e->crash.message);
    return x;
}

/* The counts of failures: crash runs, the crash files, timeouts, OOMs, results by class. */
static void add_failures_json(cJSON *o, const fuzz_state *g)
{
    if (g->first_crash_exec) {
        cJSON_AddNumberToObject(o, "first_crash_exec", (double)g->first_crash_exec);
        cJSON_AddNumberToObject(o, "first_crash_seconds", g->first_crash_s);
    } else {
        cJSON_AddNullToObject(o, "first_crash_exec");
        cJSON_AddNullToObject(o, "first_crash_seconds");
    }
    cJSON_AddNumberToObject(o, "crash_runs", (double)g->crash_runs);
    cJSON_AddNumberToObject(o, "new_crashes", (double)g->new_crashes);
    cJSON_AddNumberToObject(o, "distinct_crashes", g->store ? af_store_size(g->store) : 0);
    cJSON *arr = cJSON_AddArrayToObject(o, "crashes");
    for (int i = 0; g->store && i < af_store_size(g->store); i++)
        cJSON_AddItemToArray(arr, crash_entry_json(af_store_entry_at(g->store, i)));
    cJSON_AddNumberToObject(o, "timeouts", (double)g->timeouts);
    cJSON_AddNumberToObject(o, "ooms", (double)g->ooms);
    cJSON_AddNumberToObject(o, "refused", (double)g->refused);
    cJSON_AddNumberToObject(o, "flaky", (double)g->flaky);
    if (g->first_timeout[0])
        cJSON_AddStringToObject(o, "first_timeout_case", g->first_timeout);
    if (g->first_oom[0])
        cJSON_AddStringToObject(o, "first_oom_case", g->first_oom);
    cJSON *cls = cJSON_AddObjectToObject(o, "results_by_class");
    for (int c = 0; c < AF_RES_COUNT; c++)
        cJSON_AddNumberToObject(cls, af_class_name((af_class)c), (double)g->by_class[c]);
}

/* "reference": the eager reference, on or off and what it did. */
static cJSON *reference_json(const fuzz_state *g)
{
    cJSON *orc = cJSON_CreateObject();
    cJSON_AddBoolToObject(orc, "on", g->ref != NULL);
    cJSON_AddStringToObject(orc, "why_off", g->why_no_ref);
    cJSON_AddNumberToObject(orc, "value_checks", (double)g->checks);
    cJSON_AddNumberToObject(orc, "value_check_seconds", g->check_seconds);
    cJSON_AddNumberToObject(orc, "mismatches", (double)g->mismatches);
    cJSON_AddNumberToObject(orc, "eager_verdicts", (double)g->verdicts);
    cJSON_AddNumberToObject(orc, "check_every", (double)g->o.check_every);
    cJSON_AddNumberToObject(orc, "restarts", af_ref_restarts(g->ref));
    return orc;
}

/* The contract the run explored, and the symbols whose declared and compiled ranges differ. */
static void add_contract_json(cJSON *o, const fuzz_state *g)
{
    const af_spec *spec = &g->spec;
    cJSON_AddStringToObject(o, "contract_source", spec->contract_src);
    cJSON_AddBoolToObject(o, "contract_known", af_spec_contract_known(spec));
    cJSON_AddBoolToObject(o, "beyond_contract", spec->beyond_contract);
    cJSON_AddNumberToObject(o, "crashes_outside_contract", (double)af_fuzz_outside_count(g));
    cJSON_AddItemToObject(o, "contract_gaps", af_spec_gaps_json(spec));
}

cJSON *af_fuzz_summary_json(const fuzz_state *g, double elapsed)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "tool", "aoti-fuzz");
    af_json_add_path(o, "package", g->pkg->path);
    cJSON_AddStringToObject(o, "sha256", g->pkg->sha256);
    cJSON_AddStringToObject(o, "model", g->pkg->model);
    cJSON_AddStringToObject(o, "device", g->o.co.device ? g->o.co.device : g->pkg->device);
    af_json_add_path(o, "artifacts", g->o.artifacts);
    cJSON_AddNumberToObject(o, "execs", (double)g->execs);
    cJSON_AddNumberToObject(o, "runs", (double)g->runs);
    cJSON_AddNumberToObject(o, "memo_hits", (double)g->memo_hits);
    cJSON_AddNumberToObject(o, "memo_hits_ok", (double)g->memo_hits_ok);
    cJSON_AddBoolToObject(o, "rerun_ok", g->o.rerun_ok);
    cJSON *ra = cJSON_AddObjectToObject(o, "run_ahead");
    cJSON_AddBoolToObject(ra, "posting", !g->o.no_run_ahead);
    cJSON_AddNumberToObject(ra, "made", (double)g->ahead_made);
    cJSON_AddNumberToObject(ra, "taken", (double)g->ahead_hits);
    cJSON_AddNumberToObject(ra, "missed", (double)g->ahead_missed);
    cJSON_AddNumberToObject(o, "ok_cases_held", g->memo ? (double)af_memo_ok_size(g->memo) : 0);
    cJSON_AddBoolToObject(o, "predict", g->predicting);
    cJSON_AddNumberToObject(o, "predicted", (double)g->predicted);
    cJSON_AddNumberToObject(o, "predicted_classes",
                            g->memo ? (double)af_memo_predicted_classes(g->memo) : 0);
    cJSON_AddNumberToObject(o, "broken_predictions",
                            g->memo ? (double)af_memo_broken_predictions(g->memo) : 0);
    cJSON_AddNumberToObject(o, "predicted_classes_one_symbol",
                            g->memo ? (double)af_memo_pinned_classes(g->memo) : 0);
    cJSON_AddNumberToObject(o, "predicted_by_one_symbol",
                            g->memo ? (double)af_memo_pinned_predictions(g->memo) : 0);
    cJSON_AddNumberToObject(o, "reruns", (double)g->reruns);
    cJSON_AddNumberToObject(o, "seconds", elapsed);
    cJSON_AddNumberToObject(o, "execs_per_second", elapsed > 0 ? (double)g->execs / elapsed : 0);
    if (g->pool)
        cJSON_AddItemToObject(o, "pool", pool_json(g->pool));
    add_failures_json(o, g);
    cJSON_AddNumberToObject(o, "features", (double)g->n_features);
    cJSON_AddItemToObject(o, "reference", reference_json(g));
    add_contract_json(o, g);
    cJSON_AddBoolToObject(o, "timeouts_are_bugs", g->o.timeouts_are_bugs);
    cJSON_AddBoolToObject(o, "oom_is_bug", g->o.oom_is_bug);
    return o;
}

int af_fuzz_write_summary(const fuzz_state *g, double elapsed, const char *path, af_error *err)
{
    cJSON *o = af_fuzz_summary_json(g, elapsed);
    char *text = o ? af_json_print(o, 1) : NULL;
    cJSON_Delete(o);
    if (!text)
        return af_error_set(err, AF_E_INTERNAL, "out of memory");
    int rc = af_write_atomic(path, text, strlen(text), 0, err);
    free(text);
    return rc;
}
