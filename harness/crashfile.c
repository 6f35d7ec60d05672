/* crashfile.c — make, write and map back crash files; see aotif/crashfile.h and
 * docs/crash-file.md.
 *
 * Writing goes through af_write_atomic so that a reader (a second fuzzing job, the
 * minimizer, a user's editor) never sees half a file: the bytes go to a temp file in the
 * same directory, are fsync'ed, and the temp file is renamed (or linked, when an existing
 * file must not be replaced) onto the final name, then the directory is fsync'ed so the
 * rename itself survives a power cut. Reading them back is crashfile_read.c's. */
#include "aotif/crashfile.h"
#include "aotif/json.h"
#include "aotif/where.h"

#include "aotif/fileio.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- to JSON ------------------------------------------------------------------------ */

static int add(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return -1;
    cJSON_AddItemToObject(obj, key, item);
    return 0;
}

static void utc_str(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, len, "?");
}

/* "package" (path, abspath, sha256), "model", "device". Returns 1 when something failed. */
static int add_package(cJSON *root, const af_crash *c)
{
    cJSON *pkg;
    int bad = add(root, "package", pkg = cJSON_CreateObject());
    if (pkg) {
        bad |= af_json_add_path(pkg, "path", c->package_path) != 0;
        bad |= af_json_add_path(pkg, "abspath", c->package_abspath) != 0;
        bad |= add(pkg, "sha256", cJSON_CreateString(c->package_sha256));
    }
    bad |= add(root, "model", cJSON_CreateString(c->model));
    bad |= add(root, "device", cJSON_CreateString(c->device));
    return bad;
}

/* "case": the symbols by name, fill, seed. */
static int add_case(cJSON *root, const af_crash *c)
{
    cJSON *cs, *syms = NULL;
    int bad = add(root, "case", cs = cJSON_CreateObject());
    if (!cs)
        return bad;
    bad |= add(cs, "symbols", syms = cJSON_CreateArray());
    for (int i = 0; syms && i < c->n_syms && i < AF_MAX_SYMS; i++) {
        cJSON *s = cJSON_CreateObject();
        if (!s) {
            bad = 1;
            break;
        }
        cJSON_AddItemToArray(syms, s);
        bad |= add(s, "name", cJSON_CreateString(c->sym_names[i]));
        bad |= add(s, "dim", cJSON_CreateString(c->dim_names[i]));
        bad |= add(s, "value", af_json_int(c->values[i]));
    }
    bad |= add(cs, "fill", cJSON_CreateString(af_fill_name(c->fill)));
    bad |= add(cs, "seed", af_json_uint(c->seed));
    return bad;
}

/* What the case gave, and where it lies relative to the contract; eager's verdict. */
static int add_result(cJSON *root, const af_crash *c)
{
    int bad = add(root, "class", cJSON_CreateString(af_class_name(c->cls)));
    bad |= add(root, "signature", cJSON_CreateString(c->signature));
    bad |= add(root, "message", cJSON_CreateString(c->message));
    if (c->cuda_error[0])
        bad |= add(root, "cuda_error", cJSON_CreateString(c->cuda_error));
    if (c->kernel[0])
        bad |= add(root, "kernel", cJSON_CreateString(c->kernel));
    if (c->triage[0])
        bad |= add(root, "triage", cJSON_CreateString(c->triage));
    bad |= add(root, "below_compiled", cJSON_CreateBool(c->below_compiled));
    bad |= add(root, "contract", cJSON_CreateString(af_ctv_name(c->contract)));
    bad |= add(root, "contract_note", cJSON_CreateString(c->contract_note));
    bad |= add(root, "beyond_contract", cJSON_CreateBool(c->beyond_contract));
    if (c->exported[0])
        bad |= add(root, "exported", cJSON_CreateString(c->exported));
    if (c->eager[0]) {
        bad |= add(root, "eager", cJSON_CreateString(c->eager));
        bad |= add(root, "eager_error", cJSON_CreateString(c->eager_error));
    }
    return bad;
}

/* "where" and, for a MISMATCH, "tolerance". */
static int add_where_and_tolerance(cJSON *root, const af_crash *c)
{
    int bad = 0;
    if (c->where_json[0]) { /* kept as the object it is; dropped if it does not parse */
        cJSON *w = cJSON_Parse(c->where_json);
        if (w && cJSON_IsObject(w))
            bad |= add(root, "where", w);
        else
            cJSON_Delete(w);
    }
    /* the tolerances a MISMATCH was found with, so that a replay compares the same way */
    if (c->cls == AF_RES_MISMATCH) {
        cJSON *tol =
            c->have_tol ? cJSON_CreateObject() : cJSON_CreateString("assert_close defaults");
        bad |= add(root, "tolerance", tol);
        if (tol && c->have_tol) {
            bad |= add(tol, "rtol", cJSON_CreateNumber(c->rtol));
            bad |= add(tol, "atol", cJSON_CreateNumber(c->atol));
        }
    }
    return bad;
}

char *af_crash_to_json(const af_crash *c)
{
    cJSON *root = cJSON_CreateObject();
    char *text = NULL, when[32];
    int bad = 0;

    if (!root)
        return NULL;
    bad |= add(root, "format", cJSON_CreateString("aoti-fuzz crash"));
    bad |= add(root, "version", cJSON_CreateNumber(AF_CRASH_VERSION));
    bad |= add_package(root, c);
    bad |= add_case(root, c);
    bad |= add_result(root, c);
    bad |= add_where_and_tolerance(root, c);
    bad |= add(root, "flaky", cJSON_CreateBool(c->flaky));
    bad |= add(root, "first_seen", af_json_int(c->first_seen));
    utc_str(c->first_seen, when, sizeof when);
    bad |= add(root, "first_seen_utc", cJSON_CreateString(when));
    bad |= add(root, "last_seen", af_json_int(c->last_seen));
    bad |= add(root, "count", af_json_int(c->count));
    if (!bad)
        text = af_json_print(root, 1);
    cJSON_Delete(root);
    return text;
}

void af_crash_from_run(af_crash *out, const af_package *pkg, const af_spec *spec, const af_case *c,
                       const af_result *r, const char *device)
{
    memset(out, 0, sizeof *out);
    out->version = AF_CRASH_VERSION;
    if (pkg) {
        snprintf(out->package_path, sizeof out->package_path, "%s", pkg->path);
        snprintf(out->package_abspath, sizeof out->package_abspath, "%s", pkg->abspath);
        snprintf(out->package_sha256, sizeof out->package_sha256, "%s", pkg->sha256);
        snprintf(out->model, sizeof out->model, "%s", pkg->model);
        snprintf(out->device, sizeof out->device, "%s", pkg->device);
    }
    if (device && *device)
        snprintf(out->device, sizeof out->device, "%s", device);
    out->n_syms = spec->n_syms;
    for (int i = 0; i < spec->n_syms && i < AF_MAX_SYMS; i++) {
        snprintf(out->sym_names[i], AF_NAME_MAX, "%s", spec->syms[i].name);
        snprintf(out->dim_names[i], AF_NAME_MAX, "%s", spec->syms[i].dim_name);
        out->values[i] = c->values[i];
    }
    out->fill = c->fill;
    out->seed = c->seed;
    out->below_compiled = af_case_below_compiled(spec, c);
    out->contract = af_case_verdict(spec, c, out->contract_note, sizeof out->contract_note);
    out->beyond_contract = spec->beyond_contract;
    if (r) {
        out->cls = r->cls;
        snprintf(out->signature, sizeof out->signature, "%s", r->signature);
        snprintf(out->message, sizeof out->message, "%s", r->message);
        snprintf(out->cuda_error, sizeof out->cuda_error, "%s", r->cuda_error);
        snprintf(out->kernel, sizeof out->kernel, "%s", r->kernel);
        snprintf(out->triage, sizeof out->triage, "%s", r->triage);
    }
    out->first_seen = out->last_seen = (int64_t)time(NULL);
    out->count = 1;
}

/* ---- files -------------------------------------------------------------------------- */

static int write_with_header(const char *path, const af_crash *c, int header, int no_replace,
                             af_error *err)
{
    char *json = af_crash_to_json(c);
    if (!json)
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    char head[32];
    int hl = header ? snprintf(head, sizeof head, "%s %d\n", AF_CRASH_MAGIC, AF_CRASH_VERSION) : 0;
    size_t jl = strlen(json);
    char *buf = malloc((size_t)hl + jl + 2);
    if (!buf) {
        free(json);
        return af_error_set(err, AF_E_INTERNAL, "%s: out of memory", path);
    }
    memcpy(buf, head, (size_t)hl);
    memcpy(buf + hl, json, jl);
    buf[(size_t)hl + jl] = '\n';
    int rc = af_write_atomic(path, buf, (size_t)hl + jl + 1, no_replace, err);
    free(buf);
    free(json);
    return rc;
}

int af_crash_write(const char *path, const af_crash *crash, af_error *err)
{
    return write_with_header(path, crash, 1, 0, err);
}

int af_crash_create(const char *path, const af_crash *crash, af_error *err)
{
    return write_with_header(path, crash, 1, 1, err);
}

int af_crash_write_sidecar(const char *path, const af_crash *crash, af_error *err)
{
    return write_with_header(path, crash, 0, 0, err);
}

int af_crash_sidecar_path(const char *crash_path, char *buf, size_t len)
{
    size_t n = strlen(crash_path);
    int w;
    if (n >= 4 && strcmp(crash_path + n - 4, ".bin") == 0)
        w = snprintf(buf, len, "%.*s.json", (int)(n - 4), crash_path);
    else
        w = snprintf(buf, len, "%s.json", crash_path);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* ---- back onto a spec --------------------------------------------------------------- */

int af_crash_to_case(const af_crash *crash, const af_spec *spec, af_case *out, af_error *err)
{
    int used[AF_MAX_SYMS] = {0};

    memset(out, 0, sizeof *out);
    out->n_syms = spec->n_syms;
    out->fill = crash->fill;
    out->seed = crash->seed;
    for (int i = 0; i < spec->n_syms; i++) {
        const af_symbol *s = &spec->syms[i];
        int found = -1;
        for (int j = 0; j < crash->n_syms && found < 0; j++)
            if (!used[j] && strcmp(crash->sym_names[j], s->name) == 0)
                found = j;
        /* Symbol names ("s77") can differ between two exports of the same model; the
         * user's Dim name is the stable one. */
        for (int j = 0; j < crash->n_syms && found < 0 && s->dim_name[0]; j++)
            if (!used[j] && strcmp(crash->dim_names[j], s->dim_name) == 0)
                found = j;
        if (found < 0) {
            if (s->dim_name[0])
                return af_error_set(err, AF_E_INPUT,
                                    "the crash file does not set symbol %s (%s) of the spec",
                                    s->name, s->dim_name);
            return af_error_set(err, AF_E_INPUT,
                                "the crash file does not set symbol %s of the spec", s->name);
        }
        used[found] = 1;
        int64_t v = crash->values[found];
        if (v < s->min || v > s->max)
            return af_error_set(err, AF_E_INPUT,
                                "crash value %s=%" PRId64 " is outside the spec's range [%" PRId64
                                ", %" PRId64 "]",
                                s->name, v, s->min, s->max);
        out->values[i] = v;
    }
    for (int j = 0; j < crash->n_syms; j++)
        if (!used[j])
            return af_error_set(err, AF_E_INPUT, "symbol %s of the crash file is not in the spec",
                                crash->sym_names[j]);
    return 0;
}

void af_crash_package_path(const af_crash *cr, const char *crash_path, char *buf, size_t len)
{
    if (cr->package_abspath[0] && access(cr->package_abspath, R_OK) == 0) {
        snprintf(buf, len, "%s", cr->package_abspath);
        return;
    }
    if (cr->package_path[0] != '/' && access(cr->package_path, R_OK) != 0 && crash_path) {
        const char *slash = strrchr(crash_path, '/');
        if (slash) {
            snprintf(buf, len, "%.*s%s", (int)(slash + 1 - crash_path), crash_path,
                     cr->package_path);
            if (access(buf, R_OK) == 0)
                return;
        }
    }
    snprintf(buf, len, "%s", cr->package_path[0] ? cr->package_path : cr->package_abspath);
}

int af_crash_set_where(af_crash *c, const af_package *pkg, const af_spec *spec, const af_result *r)
{
    af_where_finding f;
    c->where_json[0] = '\0';
    if (r->cls == AF_RES_MISMATCH || !af_where_finding_from_result(r, &f))
        return 0;
    af_where *w = calloc(1, sizeof *w); /* large: off the stack */
    cJSON *o = cJSON_CreateObject();
    int rc = 0;
    if (w && o && af_where_from_package(pkg, spec, &f, w, NULL) == 0 &&
        af_where_add_json(o, "where", w, spec) == 0) {
        char *t = af_json_print(cJSON_GetObjectItemCaseSensitive(o, "where"), 0);
        if (t && strlen(t) < sizeof c->where_json) {
            memcpy(c->where_json, t, strlen(t) + 1);
            rc = 1;
        }
        free(t);
    }
    cJSON_Delete(o);
    free(w);
    return rc;
}
