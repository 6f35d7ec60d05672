/* outputs.c — aoti-minimize's steps from the minimal case to the files: minimal.bin and
 * minimal.json, crashmap.svg, repro.py and repro.sh, their re-checks, report.md; see
 * steps.h.
 *
 * Everything is written atomically into the output dir, made only now: a crash that does
 * not reproduce leaves nothing behind. After writing, repro.sh and repro.py are run again
 * (side by side: repro.py, a Python start with torch, is the longer one) and judged, and
 * the minimal case once more with the wrapper's input checks on; what they gave goes into
 * the report and the summary. */
#include "steps.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"

/* aoti-run for repro.sh: $AOTI_RUN, else next to us, else ../harness/ (the build tree),
 * else on PATH. "" when none is found. */
static void find_aoti_run(char *buf, size_t len)
{
    char self[PATH_MAX], cand[PATH_MAX + 32];
    const char *env = getenv("AOTI_RUN");
    buf[0] = '\0';
    if (env && *env) {
        if (!realpath(env, buf))
            snprintf(buf, len, "%s", env);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            const char *rel[] = {"/aoti-run", "/../harness/aoti-run"};
            for (int i = 0; i < 2; i++) {
                snprintf(cand, sizeof cand, "%s%s", self, rel[i]);
                if (access(cand, X_OK) == 0 && realpath(cand, buf))
                    return;
            }
        }
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t l = strcspn(path, ":");
        snprintf(cand, sizeof cand, "%.*s/aoti-run", (int)l, path);
        if (l && cand[0] == '/' && access(cand, X_OK) == 0) {
            snprintf(buf, len, "%s", cand);
            return;
        }
        path += l + (path[l] == ':');
    }
    buf[0] = '\0';
}

/* What the minimal case gives with AOTI_RUNTIME_CHECK_INPUTS=1, in a pool of its own. */
static void check_inputs_run(const af_package *pkg, const af_spec *spec, const af_case *c,
                             af_worker_opts wopts, char *buf, size_t len)
{
    af_error err = {0};
    af_result r;
    wopts.check_inputs = 1;
    wopts.warm_spare = 0;
    buf[0] = '\0';
    af_pool *pool = af_pool_start(pkg, spec, &wopts, &err);
    if (!pool)
        return;
    if (af_pool_run(pool, c, &r, &err) == 0) {
        char first[512];
        snprintf(first, sizeof first, "%s", r.message);
        first[strcspn(first, "\n")] = '\0';
        if (r.cls == AF_RES_OK)
            snprintf(buf, len, "it runs fine (OK)");
        else if (r.cls == AF_RES_RUNTIME_ERROR)
            snprintf(buf, len, "%s, \"%s\"", af_class_name(r.cls), first);
        else
            snprintf(buf, len, "%s", r.signature);
    }
    af_pool_stop(pool);
}

/* The repro.py check, for a thread of its own. */
typedef struct py_job {
    const char *python;
    af_warm_py *warm;
    char path[PATH_MAX + 32];
    const af_result *expect;
    double timeout_s;
    af_repro_check *out;
    const volatile int *stop;
} py_job;

static void *py_check_thread(void *arg)
{
    py_job *j = arg;
    af_repro_check_py(j->python, j->path, j->warm, j->expect, j->timeout_s, j->stop, j->out);
    return NULL;
}

int af_mz_write_minimal(af_mz *m)
{
    char path[PATH_MAX + 32];
    af_crash *mc = &m->mc;
    if (af_mkdir_p(m->out_dir, &m->err) != 0)
        return af_mz_fail(af_error_exit_code(&m->err), "%s", m->err.message);
    af_crash_from_run(mc, m->pkg, &m->spec, &m->best, &m->res, m->f.co.device);
    af_crash_set_where(mc, m->pkg, &m->spec, &m->res);
    mc->flaky = m->rep.flaky;
    if (m->res.cls == AF_RES_MISMATCH && m->ropts.have_tol) {
        mc->have_tol = 1;
        mc->rtol = m->ropts.rtol;
        mc->atol = m->ropts.atol;
    }
    af_ref_to_crash(m->have_eager ? &m->eager_rr : NULL,
                    m->why_no_ref[0] ? m->why_no_ref : "the reference gave no answer", mc);
    if (m->f.co.exported && !realpath(m->f.co.exported, mc->exported))
        snprintf(mc->exported, sizeof mc->exported, "%s", m->f.co.exported);
    snprintf(path, sizeof path, "%s/minimal.bin", m->out_dir);
    if (af_crash_write(path, mc, &m->err) != 0)
        return af_mz_fail(1, "%s", m->err.message);
    snprintf(path, sizeof path, "%s/minimal.json", m->out_dir);
    if (af_mz_write_minimal_json(m, path, &m->err) != 0)
        return af_mz_fail(1, "%s", m->err.message);
    if (!m->have_map)
        return 0;
    char title[300];
    const af_package *pkg = m->pkg;
    const char *slash = strrchr(pkg->path, '/');
    int named = pkg->model[0] && strcmp(pkg->model, "model") != 0; /* not the default */
    snprintf(title, sizeof title, "crash map: %.80s%s%.40s (%s)", slash ? slash + 1 : pkg->path,
             named ? ", model " : "", named ? pkg->model : "", af_class_name(m->res.cls));
    snprintf(path, sizeof path, "%s/crashmap.svg", m->out_dir);
    if (af_crashmap_write_svg(path, &m->cmap, &m->spec, title, &m->err) != 0)
        return af_mz_fail(1, "%s", m->err.message);
    m->map_file = "crashmap.svg";
    return 0;
}

int af_mz_side_findings(af_mz *m)
{
    const af_min_report *rep = &m->rep;
    for (int i = 0; i < rep->n_side; i++) {
        af_repro_finding *f = &m->findings[i];
        af_case_str(&m->spec, &rep->side[i].c, f->case_str, sizeof f->case_str);
        size_t l = strlen(f->case_str);
        snprintf(f->case_str + l, sizeof f->case_str - l, " fill=%s seed=%" PRIu64,
                 af_fill_name(rep->side[i].c.fill), rep->side[i].c.seed);
        snprintf(f->signature, sizeof f->signature, "%s", rep->side[i].signature);
        f->cls = rep->side[i].cls;
    }
    return 0;
}

/* What the scripts and the report name besides the case: the paths as absolute ones, the
 * host, and where in the package's sources the minimal case fails. */
static void repro_facts(af_mz *m)
{
    const af_cli_opts *co = &m->f.co;
    find_aoti_run(m->aoti_run, sizeof m->aoti_run);
    if (co->spec_file && !realpath(co->spec_file, m->spec_abs))
        snprintf(m->spec_abs, sizeof m->spec_abs, "%s", co->spec_file);
    if (co->exported && !realpath(co->exported, m->exported_abs))
        snprintf(m->exported_abs, sizeof m->exported_abs, "%s", co->exported);
    af_repro_host_info(m->compiler, sizeof m->compiler, m->os_name, sizeof m->os_name);
    /* where the minimal case fails, from the package's own sources (a MISMATCH names no
     * kernel); a package that cannot be read again only loses the section */
    af_where_finding wfind;
    m->have_where = m->res.cls != AF_RES_MISMATCH &&
                    af_where_finding_from_result(&m->res, &wfind) &&
                    af_where_from_package(m->pkg, &m->spec, &wfind, &m->where, NULL) == 0;
}

int af_mz_write_repro(af_mz *m)
{
    const af_min_report *rep = &m->rep;
    int repro_runs = (int)(m->f.runs > 3 ? m->f.runs : 3);
    repro_facts(m);
    m->info = (af_repro_info){
        .pkg = m->pkg,
        .spec = &m->spec,
        .device = m->f.co.device,
        .start = &m->o.start,
        .minimal = &m->best,
        .result = &m->res,
        .crash_path = m->f.crash_path,
        .aoti_run = m->aoti_run[0] ? m->aoti_run : NULL,
        .torch_lib = m->torch_lib[0] ? m->torch_lib : NULL,
        .spec_file = m->spec_abs[0] ? m->spec_abs : NULL,
        .exported_file = m->exported_abs[0] ? m->exported_abs : NULL,
        .eager = m->mc.eager,
        .eager_error = m->mc.eager_error,
        .program = m->program,
        .have_tol = m->ropts.have_tol,
        .rtol = m->ropts.rtol,
        .atol = m->ropts.atol,
        .with_check_inputs = m->f.co.check_inputs,
        .versions = m->versions,
        .compiler = m->compiler,
        .os_name = m->os_name,
        .oracle_calls = rep->oracle_calls,
        .cache_hits = rep->cache_hits,
        .oracle_runs = rep->oracle_runs,
        .search_seconds = m->search_s,
        .runs_per_question = rep->runs_per_question,
        .repro_runs = repro_runs,
        .repro_same = (int)(rep->repro_rate * repro_runs + 0.5),
        .stopped = rep->stopped,
        .locally_minimal = rep->locally_minimal,
        .findings = m->findings,
        .n_findings = rep->n_side,
        .call_bound = rep->call_bound,
        .explain_calls = rep->explain_calls,
        .explain = m->ex.ran ? &m->ex : NULL,
        .crash_map = m->have_map ? &m->cmap : NULL,
        .crash_map_file = m->map_file,
        .crash_map_why = m->map_why,
        .where = m->have_where ? &m->where : NULL,
    };
    if (af_repro_write_scripts(m->out_dir, &m->info, &m->err) != 0)
        return af_mz_fail(1, "%s", m->err.message);
    return 0;
}

static const char *check_word(const af_repro_check *c)
{
    return c->reproduced ? "reproduced" : c->ran ? "did not reproduce" : "not run";
}

/* The repro.sh check, for a thread of its own. */
typedef struct sh_job {
    char path[PATH_MAX + 32];
    const af_result *expect;
    double timeout_s;
    af_repro_check *out;
    const volatile int *stop;
} sh_job;

static void *sh_check_thread(void *arg)
{
    sh_job *j = arg;
    af_repro_check_sh(j->path, j->expect, j->timeout_s, j->stop, j->out);
    return NULL;
}

/* Run what was written, unless told not to or interrupted. The three runs are independent
 * processes and go side by side: repro.py (a Python, the longest), repro.sh (aoti-run) in
 * threads of their own, and the run with the input checks on (a pool of its own) here. */
static void run_checks(af_mz *m)
{
    fprintf(stderr, "aoti-minimize: checking the repros\n");
    double t = af_now_s();
    double timeout_s = m->wopts.timeout_s;
    py_job pj = {.python = m->python,
                 .warm = m->warm,
                 .expect = &m->res,
                 .timeout_s = 2 * timeout_s + 300,
                 .out = &m->pyc,
                 .stop = m->stop};
    snprintf(pj.path, sizeof pj.path, "%s/repro.py", m->out_dir);
    sh_job sj = {
        .expect = &m->res, .timeout_s = 2 * timeout_s + 120, .out = &m->shc, .stop = m->stop};
    snprintf(sj.path, sizeof sj.path, "%s/repro.sh", m->out_dir);
    pthread_t pt, st;
    int py_threaded = pthread_create(&pt, NULL, py_check_thread, &pj) == 0;
    int sh_threaded = pthread_create(&st, NULL, sh_check_thread, &sj) == 0;
    double t_in = af_now_s();
    check_inputs_run(m->pkg, &m->spec, &m->best, m->wopts, m->check_inputs, sizeof m->check_inputs);
    m->phase_s[AF_MZ_PH_CHECK_INPUTS] = af_now_s() - t_in;
    m->info.check_inputs = m->check_inputs;
    if (sh_threaded)
        pthread_join(st, NULL);
    else
        sh_check_thread(&sj);
    m->info.sh_check = &m->shc;
    fprintf(stderr, "aoti-minimize: repro.sh: %s (%s)\n", check_word(&m->shc), m->shc.detail);
    if (py_threaded)
        pthread_join(pt, NULL);
    else
        py_check_thread(&pj);
    m->info.py_check = &m->pyc;
    m->phase_s[AF_MZ_PH_CHECKS] = af_now_s() - t;
    snprintf(m->torch_version, sizeof m->torch_version, "%s", m->pyc.torch_version);
    fprintf(stderr, "aoti-minimize: repro.py: %s (%s)\n", check_word(&m->pyc), m->pyc.detail);
}

int af_mz_recheck(af_mz *m)
{
    const char *pyenv = getenv("AOTI_FUZZ_PYTHON");
    snprintf(m->python, sizeof m->python, "%s", pyenv && *pyenv ? pyenv : "python3");
    if (!m->f.no_check && !*m->stop)
        run_checks(m);
    if (!m->torch_version[0] && !*m->stop)
        af_repro_find_python(m->python, sizeof m->python, m->torch_version, sizeof m->torch_version,
                             m->python_why, sizeof m->python_why);
    m->info.torch_version = m->torch_version;
    return 0;
}

int af_mz_write_report(af_mz *m)
{
    if (af_repro_write_report(m->out_dir, &m->info, &m->err) != 0)
        return af_mz_fail(1, "%s", m->err.message);
    return 0;
}
