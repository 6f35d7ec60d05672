/* crashfile.c — the crash file format: an af_crash as JSON and back, the files read, the
 * case mapped back onto a spec; see aotif/crashfile.h and docs/crash-file.md.
 *
 * Reading is strict: the header line must be ours and of our version, and the JSON (parsed
 * by cJSON, never by hand) must hold every field; every refusal is one line naming the file
 * and what is wrong with it. Fields are read in the order the format lists them, so that of
 * several bad ones the first is named; an optional field that is absent reads as its
 * default (false, "", the contract unknown, last_seen = first_seen). Making a crash record
 * from a run and writing it to disk are crashfile_write.c's. */
#include "aotif/crashfile.h"

#include "aotif/fileio.h"
#include "aotif/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int bad_field(af_error *err, const char *name, const char *key)
{
    return af_error_set(err, AF_E_INPUT, "%s: missing or bad field \"%s\"", name, key);
}

/* The text as one JSON object: no NUL in it, nothing after it. *root is the caller's. */
static int parse_root(const char *text, size_t len, const char *name, cJSON **root, af_error *err)
{
    const char *stop = NULL;
    int escaped = 0;
    long nul = json_nul(text, len, &escaped);
    if (nul >= 0)
        return af_error_set(err, AF_E_INPUT,
                            escaped
                                ? "%s: a JSON string holds \\u0000 (at byte %ld of the JSON); "
                                  "no field may contain a NUL"
                                : "%s: a NUL byte at byte %ld of the JSON (a crash file is text)",
                            name, nul);
    *root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
    if (!*root) {
        if (json_cut_short(text, len))
            return af_error_set(err, AF_E_INPUT, "%s: truncated JSON", name);
        return af_error_set(err, AF_E_INPUT, "%s: malformed JSON at byte %zu", name,
                            (size_t)(stop - text));
    }
    for (const char *p = stop; p && p < text + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t' && *p != '\0')
            return af_error_set(err, AF_E_INPUT, "%s: trailing data after the JSON object", name);
    if (!cJSON_IsObject(*root))
        return af_error_set(err, AF_E_INPUT, "%s: not a JSON object", name);
    return 0;
}

/* "format" and "version": ours. */
static int read_head(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    int64_t v;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(item) || strcmp(item->valuestring, "aoti-fuzz crash") != 0)
        return af_error_set(err, AF_E_INPUT, "%s: not an aoti-fuzz crash file (bad format field)",
                            name);
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "version"), &v) < 0)
        return bad_field(err, name, "version");
    if (v != AF_CRASH_VERSION)
        return af_error_set(err, AF_E_INPUT, "%s: unsupported version %" PRId64, name, v);
    out->version = (int)v;
    return 0;
}

/* "package" (path, abspath, sha256), "model", "device". */
static int read_package(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    const cJSON *pkg = cJSON_GetObjectItemCaseSensitive(root, "package");
    if (!cJSON_IsObject(pkg))
        return bad_field(err, name, "package");
    if (af_json_get_path(pkg, "path", out->package_path, sizeof out->package_path, 1) < 0)
        return bad_field(err, name, "package.path");
    if (af_json_get_path(pkg, "abspath", out->package_abspath, sizeof out->package_abspath, 0) < 0)
        return bad_field(err, name, "package.abspath");
    if (get_str(pkg, "sha256", out->package_sha256, sizeof out->package_sha256, 0) < 0)
        return bad_field(err, name, "package.sha256");
    if (get_str(root, "model", out->model, sizeof out->model, 1) < 0)
        return bad_field(err, name, "model");
    if (get_str(root, "device", out->device, sizeof out->device, 1) < 0 ||
        !af_device_name_ok(out->device))
        return bad_field(err, name, "device");
    return 0;
}

/* "case.symbols": each a name (once), a Dim name and a value. */
static int read_symbols(const cJSON *syms, const char *name, af_crash *out, af_error *err)
{
    const cJSON *item;
    if (cJSON_GetArraySize(syms) > AF_MAX_SYMS)
        return af_error_set(err, AF_E_INPUT, "%s: more than %d symbols", name, AF_MAX_SYMS);
    cJSON_ArrayForEach(item, syms)
    {
        int i = out->n_syms;
        if (!cJSON_IsObject(item) || get_str(item, "name", out->sym_names[i], AF_NAME_MAX, 1) < 0 ||
            !out->sym_names[i][0] || get_str(item, "dim", out->dim_names[i], AF_NAME_MAX, 0) < 0 ||
            get_int(cJSON_GetObjectItemCaseSensitive(item, "value"), &out->values[i]) < 0)
            return af_error_set(err, AF_E_INPUT, "%s: bad entry %d of case.symbols", name, i);
        for (int j = 0; j < i; j++)
            if (strcmp(out->sym_names[j], out->sym_names[i]) == 0)
                return af_error_set(err, AF_E_INPUT, "%s: symbol %s given twice", name,
                                    out->sym_names[i]);
        out->n_syms++;
    }
    return 0;
}

/* "case": symbols, fill, seed. */
static int read_case(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    char buf[64];
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(root, "case");
    if (!cJSON_IsObject(cs))
        return bad_field(err, name, "case");
    const cJSON *syms = cJSON_GetObjectItemCaseSensitive(cs, "symbols");
    if (!cJSON_IsArray(syms))
        return bad_field(err, name, "case.symbols");
    if (read_symbols(syms, name, out, err) != 0)
        return -1;
    if (get_str(cs, "fill", buf, sizeof buf, 1) < 0 || af_fill_from_name(buf) < 0)
        return bad_field(err, name, "case.fill");
    out->fill = (af_fill)af_fill_from_name(buf);
    if (get_uint(cJSON_GetObjectItemCaseSensitive(cs, "seed"), &out->seed) < 0)
        return bad_field(err, name, "case.seed");
    return 0;
}

/* The optional strings (absent from older files, and from files of CPU crashes). */
static int read_optional_strings(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
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
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, extra[k].key);
        if (item && !cJSON_IsString(item))
            return bad_field(err, name, extra[k].key);
        if (item)
            snprintf((char *)out + extra[k].off, extra[k].len, "%s", item->valuestring);
    }
    return 0;
}

/* "class", "signature", "message", the optional strings and "where". */
static int read_result(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    char buf[64];
    if (get_str(root, "class", buf, sizeof buf, 1) < 0 || af_class_from_name(buf) < 0)
        return bad_field(err, name, "class");
    out->cls = (af_class)af_class_from_name(buf);
    if (get_str(root, "signature", out->signature, sizeof out->signature, 1) < 0)
        return bad_field(err, name, "signature");
    /* A message longer than ours (a hand-edited file) is cut, not refused. */
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (item && !cJSON_IsString(item))
        return bad_field(err, name, "message");
    if (item)
        snprintf(out->message, sizeof out->message, "%s", item->valuestring);
    if (read_optional_strings(root, name, out, err) != 0)
        return -1;
    item = cJSON_GetObjectItemCaseSensitive(root, "where");
    if (item && !cJSON_IsObject(item))
        return bad_field(err, name, "where");
    if (item) {
        char *w = cJSON_PrintUnformatted(item);
        if (w && strlen(w) < sizeof out->where_json)
            memcpy(out->where_json, w, strlen(w) + 1); /* larger: not kept (it is derived) */
        free(w);
    }
    return 0;
}

/* An optional boolean field: absent is false. */
static int read_bool(const cJSON *root, const char *key, int *out, const char *name, af_error *err)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    if (item && !cJSON_IsBool(item))
        return bad_field(err, name, key);
    *out = cJSON_IsTrue(item);
    return 0;
}

/* "below_compiled", "contract", "beyond_contract", "tolerance". */
static int read_contract(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    if (read_bool(root, "below_compiled", &out->below_compiled, name, err) != 0)
        return -1;
    /* contract fields: absent in files written before the contract was read (unknown) */
    out->contract = AF_CT_UNKNOWN;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "contract");
    if (item) {
        int cv = cJSON_IsString(item) ? af_ctv_from_name(item->valuestring) : -1;
        if (cv < 0)
            return bad_field(err, name, "contract");
        out->contract = (af_ctv)cv;
    }
    if (read_bool(root, "beyond_contract", &out->beyond_contract, name, err) != 0)
        return -1;
    item = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (item && cJSON_IsObject(item)) {
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(item, "rtol");
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(item, "atol");
        if (!cJSON_IsNumber(rt) || !cJSON_IsNumber(at) || !(rt->valuedouble >= 0) ||
            !(at->valuedouble >= 0) || !isfinite(rt->valuedouble) || !isfinite(at->valuedouble))
            return bad_field(err, name, "tolerance");
        out->have_tol = 1;
        out->rtol = rt->valuedouble;
        out->atol = at->valuedouble;
    } else if (item && !cJSON_IsString(item)) {
        return bad_field(err, name, "tolerance");
    }
    return 0;
}

/* "flaky", "first_seen", "last_seen" (first_seen when absent), "count". */
static int read_seen(const cJSON *root, const char *name, af_crash *out, af_error *err)
{
    if (read_bool(root, "flaky", &out->flaky, name, err) != 0)
        return -1;
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "first_seen"), &out->first_seen) < 0)
        return bad_field(err, name, "first_seen");
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "last_seen");
    out->last_seen = out->first_seen;
    if (item && get_int(item, &out->last_seen) < 0)
        return bad_field(err, name, "last_seen");
    if (get_int(cJSON_GetObjectItemCaseSensitive(root, "count"), &out->count) < 0 || out->count < 1)
        return bad_field(err, name, "count");
    return 0;
}

int af_crash_from_json(const char *text, size_t len, const char *what, af_crash *out, af_error *err)
{
    const char *name = short_name(what);
    cJSON *root = NULL;
    memset(out, 0, sizeof *out);
    /* in the order of the format: of several bad fields, the first is the one named */
    if (parse_root(text, len, name, &root, err) != 0 || read_head(root, name, out, err) != 0 ||
        read_package(root, name, out, err) != 0 || read_case(root, name, out, err) != 0 ||
        read_result(root, name, out, err) != 0 || read_contract(root, name, out, err) != 0 ||
        read_seen(root, name, out, err) != 0) {
        cJSON_Delete(root);
        return -1;
    }
    cJSON_Delete(root);
    return 0;
}

/* ---- files ------------------------------------------------------------------------- */

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
