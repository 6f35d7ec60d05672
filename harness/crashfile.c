/* crashfile.c — write, read and map back crash files; see aotif/crashfile.h and
 * docs/crash-file.md.
 *
 * Writing goes through af_write_atomic so that a reader (a second fuzzing job, the
 * minimizer, a user's editor) never sees half a file: the bytes go to a temp file in the
 * same directory, are fsync'ed, and the temp file is renamed (or linked, when an existing
 * file must not be replaced) onto the final name, then the directory is fsync'ed so the
 * rename itself survives a power cut. Reading is strict: the header line must be ours and
 * of our version, and the JSON (parsed by cJSON, never by hand) must hold every field;
 * every refusal is one line naming the file and what is wrong with it. */
#include "aotif/crashfile.h"
#include "aotif/json.h"
#include "aotif/where.h"

#include "aotif/fileio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CRASH_MAX_BYTES (1 << 20) /* a crash file is a few KiB; refuse anything huge */

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

char *af_crash_to_json(const af_crash *c)
{
    cJSON *root = cJSON_CreateObject(), *pkg = NULL, *cs = NULL, *syms = NULL;
    char *text = NULL, when[32];
    int bad = 0;

    if (!root)
        return NULL;
    bad |= add(root, "format", cJSON_CreateString("aoti-fuzz crash"));
    bad |= add(root, "version", cJSON_CreateNumber(AF_CRASH_VERSION));
    bad |= add(root, "package", pkg = cJSON_CreateObject());
    if (pkg) {
        bad |= af_json_add_path(pkg, "path", c->package_path) != 0;
        bad |= af_json_add_path(pkg, "abspath", c->package_abspath) != 0;
        bad |= add(pkg, "sha256", cJSON_CreateString(c->package_sha256));
    }
    bad |= add(root, "model", cJSON_CreateString(c->model));
    bad |= add(root, "device", cJSON_CreateString(c->device));
    bad |= add(root, "case", cs = cJSON_CreateObject());
    if (cs) {
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
    }
    bad |= add(root, "class", cJSON_CreateString(af_class_name(c->cls)));
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

/* ---- from JSON ---------------------------------------------------------------------- */

static int get_int(const cJSON *item, int64_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (d != d || d < -9.2e18 || d > 9.2e18 || (double)(int64_t)d != d)
            return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (cJSON_IsString(item) && item->valuestring[0]) {
        char *end;
        errno = 0;
        long long v = strtoll(item->valuestring, &end, 10);
        if (errno || *end)
            return -1;
        *out = v;
        return 0;
    }
    return -1;
}

static int get_uint(const cJSON *item, uint64_t *out)
{
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (d != d || d < 0 || d > 1.8e19 || (double)(uint64_t)d != d)
            return -1;
        *out = (uint64_t)d;
        return 0;
    }
    if (cJSON_IsString(item) && item->valuestring[0] && item->valuestring[0] != '-') {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(item->valuestring, &end, 10);
        if (errno || *end)
            return -1;
        *out = v;
        return 0;
    }
    return -1;
}

static int get_str(const cJSON *obj, const char *key, char *dst, size_t len, int required)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!item) {
        dst[0] = '\0';
        return required ? -1 : 0;
    }
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= len)
        return -1;
    memcpy(dst, item->valuestring, strlen(item->valuestring) + 1);
    return 0;
}

/* The file name shown in messages: the last path component keeps them one short line. */
static const char *short_name(const char *what)
{
    const char *slash = what ? strrchr(what, '/') : NULL;
    return slash && slash[1] ? slash + 1 : (what ? what : "crash file");
}

#define BAD_FIELD(key)                                                                             \
    do {                                                                                           \
        af_error_set(err, AF_E_INPUT, "%s: missing or bad field \"%s\"", name, key);               \
        goto fail;                                                                                 \
    } while (0)

/* After cJSON refused the text: was it cut short, or is it malformed? Not a parser: a
 * lexical scan that tracks only string literals and bracket depth. A text that ends inside
 * a string, with brackets still open, or before any content is a cut-off document (cJSON's
 * error position does not say this: for a cut string it points at the opening quote). */
static int json_cut_short(const char *text, size_t len)
{
    int depth = 0, in_str = 0, esc = 0, content = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (ch == '\\')
                esc = 1;
            else if (ch == '"')
                in_str = 0;
            continue;
        }
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        content = 1;
        if (ch == '"')
            in_str = 1;
        else if (ch == '{' || ch == '[')
            depth++;
        else if ((ch == '}' || ch == ']') && depth > 0)
            depth--;
    }
    return !content || in_str || depth > 0;
}

/* A NUL in the text, or a \u0000 escape inside a string literal: cJSON would keep the
 * string up to it and drop the rest without a word (a package path, a signature cut short).
 * Returns its offset, or -1; *escaped says which. NUL bytes after the last other byte are
 * not counted: a tail of zeros is what a file system can leave after a crash. */
static long json_nul(const char *text, size_t len, int *escaped)
{
    while (len > 0 && text[len - 1] == '\0')
        len--;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '\0') {
            *escaped = 0;
            return (long)i;
        }
        if (!in_str) {
            in_str = ch == '"';
            continue;
        }
        if (ch == '"') {
            in_str = 0;
        } else if (ch == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 6 <= len && memcmp(text + i + 2, "0000", 4) == 0) {
                *escaped = 1;
                return (long)i;
            }
            i++; /* the escaped character, which may be a quote */
        }
    }
    return -1;
}

int af_crash_from_json(const char *text, size_t len, const char *what, af_crash *out, af_error *err)
{
    const char *name = short_name(what);
    const char *stop = NULL;
    cJSON *root = NULL;
    const cJSON *item, *pkg, *cs, *syms;
    int64_t v;
    char buf[64];

    memset(out, 0, sizeof *out);
    int escaped = 0;
    long nul = json_nul(text, len, &escaped);
    if (nul >= 0)
        return af_error_set(err, AF_E_INPUT,
                            escaped
                                ? "%s: a JSON string holds \\u0000 (at byte %ld of the JSON); "
                                  "no field may contain a NUL"
                                : "%s: a NUL byte at byte %ld of the JSON (a crash file is text)",
                            name, nul);
    root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
    if (!root) {
        if (json_cut_short(text, len))
            return af_error_set(err, AF_E_INPUT, "%s: truncated JSON", name);
        return af_error_set(err, AF_E_INPUT, "%s: malformed JSON at byte %zu", name,
                            (size_t)(stop - text));
    }
    for (const char *p = stop; p && p < text + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0') {
            af_error_set(err, AF_E_INPUT, "%s: trailing data after the JSON object", name);
            goto fail;
        }
    if (!cJSON_IsObject(root)) {
        af_error_set(err, AF_E_INPUT, "%s: not a JSON object", name);
        goto fail;
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(item) || strcmp(item->valuestring, "aoti-fuzz crash") != 0) {
        af_error_set(err, AF_E_INPUT, "%s: not an aoti-fuzz crash file (bad format field)", name);
        goto fail;
    }
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "version"), &v) < 0)
        BAD_FIELD("version");
    if (v != AF_CRASH_VERSION) {
        af_error_set(err, AF_E_INPUT, "%s: unsupported version %" PRId64, name, v);
        goto fail;
    }
    out->version = (int)v;

    pkg = cJSON_GetObjectItemCaseSensitive(root, "package");
    if (!cJSON_IsObject(pkg))
        BAD_FIELD("package");
    if (af_json_get_path(pkg, "path", out->package_path, sizeof out->package_path, 1) < 0)
        BAD_FIELD("package.path");
    if (af_json_get_path(pkg, "abspath", out->package_abspath, sizeof out->package_abspath, 0) < 0)
        BAD_FIELD("package.abspath");
    if (get_str(pkg, "sha256", out->package_sha256, sizeof out->package_sha256, 0) < 0)
        BAD_FIELD("package.sha256");
    if (get_str(root, "model", out->model, sizeof out->model, 1) < 0)
        BAD_FIELD("model");
    if (get_str(root, "device", out->device, sizeof out->device, 1) < 0 ||
        !af_device_name_ok(out->device))
        BAD_FIELD("device");

    cs = cJSON_GetObjectItemCaseSensitive(root, "case");
    if (!cJSON_IsObject(cs))
        BAD_FIELD("case");
    syms = cJSON_GetObjectItemCaseSensitive(cs, "symbols");
    if (!cJSON_IsArray(syms))
        BAD_FIELD("case.symbols");
    if (cJSON_GetArraySize(syms) > AF_MAX_SYMS) {
        af_error_set(err, AF_E_INPUT, "%s: more than %d symbols", name, AF_MAX_SYMS);
        goto fail;
    }
    cJSON_ArrayForEach(item, syms)
    {
        int i = out->n_syms;
        if (!cJSON_IsObject(item) || get_str(item, "name", out->sym_names[i], AF_NAME_MAX, 1) < 0 ||
            !out->sym_names[i][0] || get_str(item, "dim", out->dim_names[i], AF_NAME_MAX, 0) < 0 ||
            get_int(cJSON_GetObjectItemCaseSensitive(item, "value"), &out->values[i]) < 0) {
            af_error_set(err, AF_E_INPUT, "%s: bad entry %d of case.symbols", name, i);
            goto fail;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(out->sym_names[j], out->sym_names[i]) == 0) {
                af_error_set(err, AF_E_INPUT, "%s: symbol %s given twice", name, out->sym_names[i]);
                goto fail;
            }
        out->n_syms++;
    }
    if (get_str(cs, "fill", buf, sizeof buf, 1) < 0 || af_fill_from_name(buf) < 0)
        BAD_FIELD("case.fill");
    out->fill = (af_fill)af_fill_from_name(buf);
    if (get_uint(cJSON_GetObjectItemCaseSensitive(cs, "seed"), &out->seed) < 0)
        BAD_FIELD("case.seed");

    if (get_str(root, "class", buf, sizeof buf, 1) < 0 || af_class_from_name(buf) < 0)
        BAD_FIELD("class");
    out->cls = (af_class)af_class_from_name(buf);
    if (get_str(root, "signature", out->signature, sizeof out->signature, 1) < 0)
        BAD_FIELD("signature");
    /* A message longer than ours (a hand-edited file) is cut, not refused. */
    item = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (item && !cJSON_IsString(item))
        BAD_FIELD("message");
    if (item)
        snprintf(out->message, sizeof out->message, "%s", item->valuestring);
    /* optional words about a device fault (absent from files of CPU crashes) */
    static const struct {
        const char *key;
        size_t off, len;
    } extra[] = {
        {"cuda_error", offsetof(af_crash, cuda_error), sizeof out->cuda_error},
        {"kernel", offsetof(af_crash, kernel), sizeof out->kernel},
        {"triage", offsetof(af_crash, triage), sizeof out->triage},
        {"contract_note", offsetof(af_crash, contract_note), sizeof out->contract_note},
        {"exported", offsetof(af_crash, exported), sizeof out->exported},
        {"eager", offsetof(af_crash, eager), sizeof out->eager},
        {"eager_error", offsetof(af_crash, eager_error), sizeof out->eager_error},
    };
    for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++) {
        item = cJSON_GetObjectItemCaseSensitive(root, extra[k].key);
        if (item && !cJSON_IsString(item))
            BAD_FIELD(extra[k].key);
        if (item)
            snprintf((char *)out + extra[k].off, extra[k].len, "%s", item->valuestring);
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "where");
    if (item && !cJSON_IsObject(item))
        BAD_FIELD("where");
    if (item) {
        char *w = cJSON_PrintUnformatted(item);
        if (w && strlen(w) < sizeof out->where_json)
            memcpy(out->where_json, w, strlen(w) + 1); /* larger: not kept (it is derived) */
        free(w);
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "below_compiled");
    if (item && !cJSON_IsBool(item))
        BAD_FIELD("below_compiled");
    out->below_compiled = cJSON_IsTrue(item);
    /* contract fields: absent in files written before the contract was read (unknown) */
    out->contract = AF_CT_UNKNOWN;
    item = cJSON_GetObjectItemCaseSensitive(root, "contract");
    if (item) {
        int cv = cJSON_IsString(item) ? af_ctv_from_name(item->valuestring) : -1;
        if (cv < 0)
            BAD_FIELD("contract");
        out->contract = (af_ctv)cv;
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "beyond_contract");
    if (item && !cJSON_IsBool(item))
        BAD_FIELD("beyond_contract");
    out->beyond_contract = cJSON_IsTrue(item);
    item = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (item && cJSON_IsObject(item)) {
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(item, "rtol");
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(item, "atol");
        if (!cJSON_IsNumber(rt) || !cJSON_IsNumber(at) || !(rt->valuedouble >= 0) ||
            !(at->valuedouble >= 0) || !isfinite(rt->valuedouble) || !isfinite(at->valuedouble))
            BAD_FIELD("tolerance");
        out->have_tol = 1;
        out->rtol = rt->valuedouble;
        out->atol = at->valuedouble;
    } else if (item && !cJSON_IsString(item)) {
        BAD_FIELD("tolerance");
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "flaky");
    if (item && !cJSON_IsBool(item))
        BAD_FIELD("flaky");
    out->flaky = cJSON_IsTrue(item);
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "first_seen"), &out->first_seen) < 0)
        BAD_FIELD("first_seen");
    item = cJSON_GetObjectItemCaseSensitive(root, "last_seen");
    out->last_seen = out->first_seen;
    if (item && get_int(item, &out->last_seen) < 0)
        BAD_FIELD("last_seen");
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "count"), &out->count) < 0 || out->count < 1)
        BAD_FIELD("count");
    cJSON_Delete(root);
    return 0;

fail:
    cJSON_Delete(root);
    return -1;
}

/* ---- files -------------------------------------------------------------------------- */

int af_crash_read(const char *path, af_crash *out, af_error *err)
{
    static const char magic[] = AF_CRASH_MAGIC " ";
    const size_t mlen = sizeof magic - 1;
    const char *name = short_name(path);
    size_t len = 0;
    int rc = -1;
    char *text = af_read_file(path, CRASH_MAX_BYTES, &len, err);
    if (!text)
        return -1;

    if (len == 0) {
        af_error_set(err, AF_E_INPUT, "%s: empty file", name);
        goto done;
    }
    if (memcmp(text, magic, len < mlen ? len : mlen) != 0) {
        af_error_set(err, AF_E_INPUT, "%s: not an aoti-fuzz crash file (bad magic)", name);
        goto done;
    }
    char *nl = memchr(text, '\n', len);
    if (len < mlen || !nl) {
        af_error_set(err, AF_E_INPUT, "%s: truncated header line", name);
        goto done;
    }
    /* The version: decimal digits between the magic and the newline. */
    const char *p = text + mlen;
    int64_t version = 0;
    if (p == nl) {
        af_error_set(err, AF_E_INPUT, "%s: not an aoti-fuzz crash file (bad magic)", name);
        goto done;
    }
    for (; p < nl; p++) {
        if (*p < '0' || *p > '9' || version > 100000000) {
            af_error_set(err, AF_E_INPUT, "%s: not an aoti-fuzz crash file (bad magic)", name);
            goto done;
        }
        version = version * 10 + (*p - '0');
    }
    if (version != AF_CRASH_VERSION) {
        af_error_set(err, AF_E_INPUT, "%s: unsupported version %" PRId64, name, version);
        goto done;
    }
    rc = af_crash_from_json(nl + 1, len - (size_t)(nl + 1 - text), path, out, err);
done:
    free(text);
    return rc;
}

int af_crash_read_sidecar(const char *path, af_crash *out, af_error *err)
{
    size_t len = 0;
    char *text = af_read_file(path, CRASH_MAX_BYTES, &len, err);
    if (!text)
        return -1;
    int rc;
    if (len == 0)
        rc = af_error_set(err, AF_E_INPUT, "%s: empty file", short_name(path));
    else
        rc = af_crash_from_json(text, len, path, out, err);
    free(text);
    return rc;
}

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
