/* crashfile_write.c — a crash record made from a run and written to disk; see
 * aotif/crashfile.h.
 *
 * Writing goes through af_write_atomic so that a reader (a second fuzzing job, the
 * minimizer, a user's editor) never sees half a file: the bytes go to a temp file in the
 * same directory, are fsync'ed, and the temp file is renamed (or linked, when an existing
 * file must not be replaced) onto the final name, then the directory is fsync'ed so the
 * rename itself survives a power cut. The format itself is crashfile.c's. */
#include "aotif/crashfile.h"

#include "aotif/fileio.h"
#include "aotif/json.h"
#include "aotif/where.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- from a run ---------------------------------------------------------------------- */

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
