/* steps.c — aoti-minimize's steps up to the minimal case and its crash map: read the crash
 * file, open the package and start the workers, search, take the minimal case's full result,
 * draw the crash map, stop the workers; see steps.h. (outputs.c writes what they found.)
 *
 * The crash file is all it needs: it names the package (re-opened, with a warning when its
 * SHA-256 changed), the model, the device and the case. A crash inside the contract is
 * minimized inside it, so the minimal case keeps its standing; one found outside is searched
 * where it was found. A MISMATCH is seen only against eager, so it needs the exported
 * program; any other crash is minimized without one, the report then saying why eager gave
 * no verdict. */
#include "steps.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "aotif/interrupt.h"

int af_mz_fail(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("aoti-minimize: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return rc;
}

/* "<dir of crash>/<crash stem>.min" */
static void default_out_dir(const char *crash_path, char *buf, size_t len)
{
    const char *slash = strrchr(crash_path, '/');
    const char *base = slash ? slash + 1 : crash_path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    snprintf(buf, len, "%.*s%.*s.min", (int)(base - crash_path), crash_path, (int)stem, base);
}

int af_mz_read_crash(af_mz *m)
{
    const char *crash_path = m->f.crash_path;
    if (af_crash_read(crash_path, &m->crash, &m->err) != 0)
        return af_mz_fail(2, "%s", m->err.message);
    if (m->f.out)
        snprintf(m->out_dir, sizeof m->out_dir, "%s", m->f.out);
    else
        default_out_dir(crash_path, m->out_dir, sizeof m->out_dir);
    af_crash_package_path(&m->crash, crash_path, m->pkg_path, sizeof m->pkg_path);
    /* the outputs are written at the end, into a dir made only then: one that cannot be
     * made is bad input, said now rather than after the whole search */
    if (af_dir_check_creatable(m->out_dir, &m->err) != 0)
        return af_mz_fail(2, "%s %s: %s", m->f.out ? "--out" : "output dir", m->out_dir,
                          m->err.message);
    if (!m->f.co.model)
        m->f.co.model = m->crash.model;
    if (!m->f.co.device)
        m->f.co.device = m->crash.device; /* where the case ran */
    return 0;
}

/* The package the crash file names, and its spec (the contract). */
static int open_package(af_mz *m)
{
    af_cli_opts *co = &m->f.co;
    af_package_opts popts;
    af_cli_package_opts(&m->f.co, &popts);
    if (af_interrupt_start(m->stop) != 0)
        return af_mz_fail(1, "cannot start the signal thread");
    m->pkg = af_package_open(m->pkg_path, &popts, &m->err);
    af_interrupt_set_package(m->pkg);
    if (!m->pkg) /* the crash file names a package we cannot use: bad input either way */
        return af_mz_fail(2, "%s (the package of %s)", m->err.message, m->f.crash_path);
    if (m->crash.package_sha256[0] && strcmp(m->crash.package_sha256, m->pkg->sha256) != 0)
        fprintf(stderr,
                "aoti-minimize: warning: %s changed since the crash was recorded (sha256 %.12s, "
                "was %.12s)\n",
                m->pkg->path, m->pkg->sha256, m->crash.package_sha256);
    if (!co->exported && !co->spec_file && m->crash.exported[0])
        co->exported = m->crash.exported; /* the contract the crash was found under */
    if (af_package_spec(m->pkg, co->spec_file, co->exported, &m->spec, &m->err) != 0)
        return af_mz_fail(af_error_exit_code(&m->err), "%s", m->err.message);
    return 0;
}

/* The crash file's case under the spec, where the search starts. */
static int start_case(af_mz *m)
{
    af_mz_oracle *o = &m->o;
    /* A crash inside the contract is minimized inside it, so the minimal case keeps its
     * standing; one found outside is searched where it was found. */
    if (m->f.co.beyond_contract || m->crash.fill == AF_FILL_WIDE ||
        (m->crash.beyond_contract && af_crash_to_case(&m->crash, &m->spec, &o->start, NULL) != 0))
        af_spec_widen_beyond_contract(&m->spec);
    o->spec = &m->spec;
    o->crash = &m->crash;
    if (af_crash_to_case(&m->crash, &m->spec, &o->start, &m->err) != 0)
        return af_mz_fail(2, "%s: %s", m->f.crash_path, m->err.message);
    af_case_str(&m->spec, &o->start, m->start_str, sizeof m->start_str);
    o->tty = isatty(2);
    o->t0 = af_now_s();
    fprintf(stderr, "aoti-minimize: %s: %s, case %s fill %s seed %" PRIu64 " (%s, %s)\n",
            m->f.crash_path, m->crash.signature, m->start_str, af_fill_name(o->start.fill),
            o->start.seed, m->pkg->path, m->f.co.device);
    return 0;
}

/* The exported program eager runs, or why there is none. */
static int choose_reference(af_mz *m)
{
    af_ref_opts *ropts = &m->ropts;
    int no_eager = m->f.co.eager == 0;
    af_cli_ref_opts(&m->f.co, ropts); /* the device, the tolerances given */
    if (!ropts->have_tol && m->crash.cls == AF_RES_MISMATCH && m->crash.have_tol) {
        ropts->have_tol = 1; /* compare as the mismatch was found */
        ropts->rtol = m->crash.rtol;
        ropts->atol = m->crash.atol;
    }
    m->program = no_eager ? NULL : af_ref_program(m->pkg, m->f.co.exported);
    if (!m->program)
        snprintf(m->why_no_ref, sizeof m->why_no_ref, "%s",
                 no_eager ? "not run (--no-eager)"
                          : "not run: no exported program (a plain package; give --exported "
                            "or the unified archive)");
    if (m->crash.cls == AF_RES_MISMATCH && !m->program)
        return af_mz_fail(
            2,
            "%s is a MISMATCH, which only the eager reference sees: it needs the exported "
            "program (%s)",
            m->f.crash_path, m->why_no_ref);
    return 0;
}

/* The workers, and the eager reference beside them. */
static int start_workers(af_mz *m)
{
    af_worker_opts *wopts = &m->wopts;
    af_cli_worker_opts(&m->f.co, wopts);
    if (!wopts->timeout_s) /* the re-checks' limits follow it */
        wopts->timeout_s = 30;
    wopts->warm_spare = 1; /* most cases crash their worker: have the next one ready */
    if (m->program)
        wopts->arena_bytes = AF_ARENA_DEFAULT_BYTES;
    if (!m->f.no_check) { /* its imports and torch's ISA probe run beside the search */
        const char *py = getenv("AOTI_FUZZ_PYTHON");
        /* a second one for the loader's retry where that is seen: CUDA packages (repro.h) */
        m->warm = af_warm_py_start(py && *py ? py : "python3", af_device_is_cuda(m->f.co.device));
    }
    double t = af_now_s();
    m->o.pool = af_pool_start(m->pkg, &m->spec, wopts, &m->err);
    m->phase_s[AF_MZ_PH_POOL] = af_now_s() - t;
    if (!m->o.pool)
        return af_mz_fail(af_error_exit_code(&m->err), "%s", m->err.message);
    if (!m->program)
        return 0;
    t = af_now_s();
    m->o.ref = af_ref_start(m->pkg, &m->spec, m->program, m->o.pool, &m->ropts, &m->err);
    m->phase_s[AF_MZ_PH_REF] = af_now_s() - t;
    if (!m->o.ref && m->crash.cls == AF_RES_MISMATCH)
        return af_mz_fail(1, "%s", m->err.message);
    if (!m->o.ref) { /* the crash itself can still be minimized: say what is missing */
        snprintf(m->why_no_ref, sizeof m->why_no_ref,
                 "not run: the reference could not start (%.100s)", m->err.message);
        fprintf(stderr, "aoti-minimize: warning: eager reference %s\n", m->why_no_ref);
        af_error_clear(&m->err);
    }
    return 0;
}

int af_mz_open(af_mz *m)
{
    int rc = open_package(m);
    if (!rc)
        rc = start_case(m);
    if (!rc)
        rc = choose_reference(m);
    if (!rc)
        rc = start_workers(m);
    return rc;
}

/* The crash did not come back: say what the start case gave instead. */
static int not_reproduced(af_mz *m)
{
    int rc = 1;
    if (*m->stop) {
        rc = af_mz_fail(130, "interrupted before the crash was reproduced");
    } else {
        af_mz_fail(1, "the crash does not reproduce: %d runs of %s gave %s, not %s",
                   (int)(m->f.runs > 3 ? m->f.runs : 3), m->start_str,
                   m->o.start_gave[0] ? m->o.start_gave : "no failure", m->crash.signature);
    }
    if (m->f.json)
        af_mz_print_not_reproduced(m);
    return rc;
}

int af_mz_search(af_mz *m)
{
    /* The engine reproduces with max(runs, 3) runs and then asks `runs` per question, a
     * majority of 3 once flaky. --runs N means N reproduction runs, one run per question
     * while the crash is stable: so 1 up to N = 3, and N beyond. */
    af_min_opts mo = {
        .runs = m->f.runs <= 3 ? 1 : (int)m->f.runs,
        .budget_s = m->f.budget_s,
        .stop = m->stop,
        .progress = af_mz_progress,
        .progress_ctx = &m->o,
        .simplify_fill = !m->f.keep_fill,
        .explain = &m->ex,
        .other_class = &m->o.other_cls,
    };
    if (!(m->memo = af_memo_new()))
        return af_mz_fail(1, "out of memory");
    mo.memo = m->memo;
    double t = af_now_s();
    m->erc = af_minimize(&m->spec, &m->o.start, af_mz_ask, &m->o, &mo, &m->rep, &m->err);
    m->search_s = af_now_s() - t;
    af_mz_end_line(&m->o);
    if (m->erc != 0 && !m->o.have_same)
        return af_mz_fail(1, "%s", m->err.message);
    if (!m->rep.reproduced)
        return not_reproduced(m);
    if (m->erc != 0)
        fprintf(stderr, "aoti-minimize: the search ended early: %s\n", m->err.message);
    return 0;
}

int af_mz_minimal_result(af_mz *m)
{
    af_mz_oracle *o = &m->o;
    /* A full result for the minimal case: the latest SAME run of it, else a fresh one. */
    m->best = m->rep.best;
    int have_res = o->have_same && af_case_equal(&o->same_case, &m->best);
    for (int k = 0; !have_res && k < 3 && m->erc == 0; k++) {
        char other[AF_MIN_SIG_MAX] = "";
        if (af_mz_ask(o, &m->best, other, sizeof other) == AF_V_SAME)
            have_res = 1;
    }
    if (have_res) {
        m->res = o->same_result;
    } else { /* flaky and unlucky: what the crash file says */
        memset(&m->res, 0, sizeof m->res);
        m->res.cls = m->crash.cls;
        snprintf(m->res.signature, sizeof m->res.signature, "%s", m->crash.signature);
        snprintf(m->res.message, sizeof m->res.message, "%s", m->crash.message);
    }
    if (have_res && !*m->stop) /* a device fault: one blocking-launch re-run names the kernel */
        af_pool_triage(o->pool, &m->best, &m->res);
    /* The contract verdict of the minimal case: does eager fail too? A mismatch's eager ran. */
    memset(&m->eager_rr, 0, sizeof m->eager_rr);
    m->have_eager = 0;
    if (o->ref && m->res.cls == AF_RES_MISMATCH) {
        af_result again;
        m->have_eager =
            af_ref_check(o->pool, o->ref, &m->spec, &m->best, &again, &m->eager_rr, &m->err) == 0;
    } else if (o->ref) {
        m->have_eager = af_ref_run(o->ref, &m->best, 0, &m->eager_rr, &m->err) == 0;
    }
    return 0;
}

static const char *sym_label(const af_spec *spec, int k)
{
    return spec->syms[k].dim_name[0] ? spec->syms[k].dim_name : spec->syms[k].name;
}

/* The crash map: extra questions, outside the engine's bound, through the same memo. */
int af_mz_crash_map(af_mz *m)
{
    af_crashmap *cmap = &m->cmap;
    if (m->f.no_map)
        snprintf(m->map_why, sizeof m->map_why, "not drawn (--no-crash-map)");
    else if (*m->stop || m->rep.stopped)
        snprintf(m->map_why, sizeof m->map_why, "not drawn: the search was stopped early");
    else if (m->erc != 0)
        snprintf(m->map_why, sizeof m->map_why, "not drawn: the search ended with an error");
    if (m->map_why[0])
        return 0;
    af_crashmap_plan(&m->spec, &m->best, &m->ex, cmap);
    if (cmap->n_axes == 0) {
        snprintf(m->map_why, sizeof m->map_why, "not drawn: no symbol has more than one value");
        return 0;
    }
    af_crashmap_opts co = {.runs = m->rep.runs_per_question,
                           .stop = m->stop,
                           .progress = af_mz_map_progress,
                           .progress_ctx = &m->o};
    fprintf(stderr, "aoti-minimize: crash map: %d x %d cases over %s%s%s\n", cmap->n_vals[0],
            cmap->n_vals[1], sym_label(&m->spec, cmap->sym[0]), cmap->sym[1] >= 0 ? " and " : "",
            cmap->sym[1] >= 0 ? sym_label(&m->spec, cmap->sym[1]) : "");
    af_error merr = {0};
    int mrc = af_crashmap_run(&m->spec, &m->best, &m->ex, m->memo, af_mz_ask, &m->o, &co,
                              m->res.signature, cmap, &merr);
    af_mz_end_line(&m->o);
    if (mrc != 0)
        fprintf(stderr, "aoti-minimize: warning: crash map cut short: %s\n", merr.message);
    m->have_map = cmap->cases > 0;
    if (!m->have_map)
        snprintf(m->map_why, sizeof m->map_why, "not drawn: no case was answered");
    return 0;
}

int af_mz_stop_workers(af_mz *m)
{
    af_pool *pool = m->o.pool;
    af_ref_stop(m->o.ref);
    m->o.ref = NULL;
    af_pool_versions(pool, m->versions, sizeof m->versions);
    if (!realpath(af_pool_torch_lib(pool), m->torch_lib)) /* the libtorch the workers loaded */
        snprintf(m->torch_lib, sizeof m->torch_lib, "%s", af_pool_torch_lib(pool));
    af_pool_get_stats(pool, &m->pst);
    af_pool_stop(pool);
    m->o.pool = NULL;
    return 0;
}

void af_mz_close(af_mz *m)
{
    af_mz_end_line(&m->o);
    af_ref_stop(m->o.ref);
    af_pool_stop(m->o.pool);
    af_interrupt_set_package(NULL);
    af_package_close(m->pkg);
    af_memo_free(m->memo);
    af_warm_py_free(m->warm);
    m->warm = NULL;
    m->o.ref = NULL;
    m->o.pool = NULL;
    m->pkg = NULL;
    m->memo = NULL;
}
