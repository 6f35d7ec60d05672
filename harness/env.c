/* env.c — a child's environment with variables set, and the loader memory (env.h).
 *
 * The memory is one JSON object, read whole and written whole (af_write_atomic: temp file,
 * fsync, rename), so a reader never sees half a file; two tools writing at once lose one
 * update at worst, which costs the loser's next run one dying start, nothing more:
 *   {"format": "aoti-fuzz loader memory", "version": 1,
 *    "pythons": {"/opt/torch/.venv/bin/python3": {"real": "/usr/bin/python3.12",
 *                "mtime": 1733000000, "size": 8000000,
 *                "ld_preload": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
 *                "torch": "2.11.0+cu130", "why": "died of SIGSEGV ...", "recorded": 1796204976}}}
 * Only Pythons that need the preload have an entry; an entry that no longer matches its
 * interpreter (real path, mtime, size), or names a library outside the known list, is no
 * answer. */
#include "aotif/env.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aotif/crashfile.h"
#include "aotif/fileio.h"
#include "aotif/json.h"

extern char **environ;

#define LOADER_FORMAT "aoti-fuzz loader memory"
#define LOADER_MAX_BYTES ((size_t)1 << 20)
#define LOADER_MAX_ENTRIES 64 /* the oldest go first: a file that cannot grow without bound */

/* Whether `entry` ("NAME=...") sets the variable that `set` ("NAME=value") names. */
static int same_name(const char *entry, const char *set)
{
    size_t n = strcspn(set, "=");
    return strncmp(entry, set, n) == 0 && entry[n] == '=';
}

char **af_env_with(char *const base[], const char *const sets[])
{
    char *const *src = base ? base : environ;
    size_t n = 0, m = 0;
    while (src[n])
        n++;
    while (sets[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int replaced = 0;
        for (size_t j = 0; j < m && !replaced; j++)
            replaced = same_name(src[i], sets[j]);
        if (!replaced)
            env[k++] = src[i];
    }
    for (size_t j = 0; j < m; j++)
        env[k++] = (char *)sets[j];
    env[k] = NULL;
    return env;
}

int af_env_preload(const char *lib, char *buf, size_t len)
{
    const char *old = getenv("LD_PRELOAD");
    int has_old = old && *old;
    int n = snprintf(buf, len, "LD_PRELOAD=%s%s%s", lib, has_old ? ":" : "", has_old ? old : "");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* --- our cache dir ------------------------------------------------------------------------ */

/* $XDG_CACHE_HOME/aoti-fuzz, else $HOME/.cache/aoti-fuzz, + `leaf`, into buf. */
static int cache_path(const char *leaf, char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') /* the spec: a relative value is to be ignored */
        n = snprintf(buf, len, "%s/aoti-fuzz/%s", xdg, leaf);
    else if (home && home[0] == '/')
        n = snprintf(buf, len, "%s/.cache/aoti-fuzz/%s", home, leaf);
    else
        return -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int af_env_inductor_cache(char *buf, size_t len)
{
    const char *set = getenv("TORCHINDUCTOR_CACHE_DIR");
    char dir[PATH_MAX];
    if ((set && *set) || cache_path("torchinductor", dir, sizeof dir) != 0)
        return 0;
    int n = snprintf(buf, len, "TORCHINDUCTOR_CACHE_DIR=%s", dir);
    return n > 0 && (size_t)n < len;
}

/* --- executables and the system C++ runtime ------------------------------------------- */

static const char *const k_libstdcxx[] = {
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib/aarch64-linux-gnu/libstdc++.so.6",
    "/usr/lib64/libstdc++.so.6",
};

/* Whether lib is one of the known system libstdc++ paths, and readable. */
static int known_libstdcxx(const char *lib)
{
    for (size_t i = 0; i < sizeof k_libstdcxx / sizeof k_libstdcxx[0]; i++)
        if (lib && strcmp(lib, k_libstdcxx[i]) == 0)
            return access(lib, R_OK) == 0;
    return 0;
}

const char *af_env_system_libstdcxx(void)
{
    for (size_t i = 0; i < sizeof k_libstdcxx / sizeof k_libstdcxx[0]; i++)
        if (access(k_libstdcxx[i], R_OK) == 0)
            return k_libstdcxx[i];
    return NULL;
}

static int executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* dir/name made absolute against the working directory. */
static int abs_join(const char *dir, const char *name, char *buf, size_t len)
{
    char cwd[PATH_MAX];
    int n;
    if (dir[0] == '/')
        n = snprintf(buf, len, "%s%s%s", dir, *dir && *name ? "/" : "", name);
    else if (!getcwd(cwd, sizeof cwd))
        return -1;
    else
        n = snprintf(buf, len, "%s%s%s%s%s", cwd, *dir ? "/" : "", dir, *name ? "/" : "", name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int af_env_find_exe(const char *name, char *buf, size_t len)
{
    if (!name || !*name || !len)
        return -1;
    buf[0] = '\0';
    if (strchr(name, '/')) {
        if (abs_join(name[0] == '/' ? name : "", name[0] == '/' ? "" : name, buf, len) != 0)
            return -1;
        return executable_file(buf) ? 0 : (buf[0] = '\0', -1);
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin"; /* what execvp searches without a PATH */
    for (const char *p = path;; p++) {
        size_t n = strcspn(p, ":");
        char dir[PATH_MAX];
        if (n < sizeof dir) {
            snprintf(dir, sizeof dir, "%.*s", (int)n, p);
            if (abs_join(dir, name, buf, len) == 0 && executable_file(buf))
                return 0;
        }
        p += n;
        if (!*p)
            break;
    }
    buf[0] = '\0';
    return -1;
}

/* --- the memory --------------------------------------------------------------------------- */

int af_loader_file(char *buf, size_t len)
{
    return cache_path("loader.json", buf, len);
}

typedef enum loader_mode { MODE_AUTO, MODE_OFF, MODE_PRELOAD, MODE_PLAIN } loader_mode;

static loader_mode mode_of_env(void)
{
    const char *v = getenv("AOTI_FUZZ_LOADER");
    if (!v || !*v || strcmp(v, "auto") == 0)
        return MODE_AUTO;
    if (strcmp(v, "preload") == 0)
        return MODE_PRELOAD;
    if (strcmp(v, "plain") == 0)
        return MODE_PLAIN;
    return MODE_OFF;
}

/* What identifies the interpreter behind `python`: its real path, mtime and size. */
typedef struct py_ident {
    char real[PATH_MAX];
    double mtime, size;
} py_ident;

static int ident_of(const char *python, py_ident *id)
{
    struct stat st;
    if (stat(python, &st) != 0 || !realpath(python, id->real))
        return -1;
    id->mtime = (double)st.st_mtim.tv_sec;
    id->size = (double)st.st_size;
    return 0;
}

/* The memory's root object, or a new empty one (missing, unreadable, corrupt: no memory). */
static cJSON *memory_load(const char *file)
{
    char *text = af_read_file(file, LOADER_MAX_BYTES, NULL, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) ||
        strcmp(fmt->valuestring, LOADER_FORMAT) != 0 ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "pythons"))) {
        cJSON_Delete(root);
        root = cJSON_CreateObject();
        if (root) {
            cJSON_AddStringToObject(root, "format", LOADER_FORMAT);
            cJSON_AddNumberToObject(root, "version", 1);
            cJSON_AddObjectToObject(root, "pythons");
        }
    }
    return root;
}

/* The preload the memory holds for `python` into lib; 1 when it has a valid answer. */
static int memory_recall(const char *python, char *lib, size_t len)
{
    char file[PATH_MAX];
    py_ident id;
    if (af_loader_file(file, sizeof file) != 0 || ident_of(python, &id) != 0)
        return 0;
    cJSON *root = memory_load(file);
    const cJSON *e =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "pythons"), python);
    const cJSON *real = cJSON_GetObjectItemCaseSensitive(e, "real");
    const cJSON *mtime = cJSON_GetObjectItemCaseSensitive(e, "mtime");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(e, "ld_preload");
    int ok = cJSON_IsString(real) && strcmp(real->valuestring, id.real) == 0 &&
             cJSON_IsNumber(mtime) && mtime->valuedouble == id.mtime && cJSON_IsNumber(size) &&
             size->valuedouble == id.size && cJSON_IsString(pre) &&
             known_libstdcxx(pre->valuestring);
    if (ok)
        snprintf(lib, len, "%s", pre->valuestring);
    cJSON_Delete(root);
    return ok;
}

void af_loader_plan_for(const char *python, af_loader_plan *p)
{
    memset(p, 0, sizeof *p);
    if (af_env_find_exe(python, p->python, sizeof p->python) != 0)
        p->python[0] = '\0';
    const char *lib = af_env_system_libstdcxx();
    if (!lib)
        return; /* nothing to preload: one plain start */
    switch (mode_of_env()) {
    case MODE_PRELOAD:
        snprintf(p->first, sizeof p->first, "%s", lib);
        return;
    case MODE_PLAIN:
        return;
    case MODE_OFF:
        snprintf(p->retry, sizeof p->retry, "%s", lib);
        p->can_retry = 1;
        return;
    case MODE_AUTO:
        p->memory = p->python[0] != '\0';
        p->can_retry = 1;
        if (p->memory && memory_recall(p->python, p->first, sizeof p->first))
            p->remembered = 1; /* retry: without it, should it have gone stale */
        else
            snprintf(p->retry, sizeof p->retry, "%s", lib);
        return;
    }
}

/* Drop the oldest entries beyond LOADER_MAX_ENTRIES. */
static void memory_trim(cJSON *pythons)
{
    while (cJSON_GetArraySize(pythons) > LOADER_MAX_ENTRIES) {
        cJSON *oldest = NULL;
        double t_old = 0;
        for (cJSON *e = pythons->child; e; e = e->next) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "recorded");
            double v = cJSON_IsNumber(t) ? t->valuedouble : 0;
            if (!oldest || v < t_old)
                oldest = e, t_old = v;
        }
        cJSON_Delete(cJSON_DetachItemViaPointer(pythons, oldest));
    }
}

int af_loader_remember(const af_loader_plan *plan, const char *preload, const char *torch_version,
                       const char *why, af_error *err)
{
    char file[PATH_MAX], dir[PATH_MAX];
    py_ident id;
    int rc = -1;
    cJSON *root = NULL;
    char *text = NULL;
    if (!plan->memory || !plan->python[0] || af_loader_file(file, sizeof file) != 0)
        return 0;
    int want = preload && *preload;
    if (want && !known_libstdcxx(preload))
        return af_error_set(err, AF_E_USAGE, "loader memory: %s is not a system libstdc++",
                            preload);
    if (want && ident_of(plan->python, &id) != 0)
        return af_error_sys(err, "loader memory: %s", plan->python);
    if (!(root = memory_load(file))) {
        af_error_set(err, AF_E_IO, "out of memory");
        goto fail;
    }
    cJSON *pythons = cJSON_GetObjectItemCaseSensitive(root, "pythons");
    if (!want) { /* it starts without: forget it, if it was there */
        if (!cJSON_GetObjectItemCaseSensitive(pythons, plan->python)) {
            rc = 0;
            goto fail;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(pythons, plan->python);
    } else {
        cJSON *e = cJSON_CreateObject();
        if (!e) {
            af_error_set(err, AF_E_IO, "out of memory");
            goto fail;
        }
        cJSON_AddStringToObject(e, "real", id.real);
        cJSON_AddNumberToObject(e, "mtime", id.mtime);
        cJSON_AddNumberToObject(e, "size", id.size);
        cJSON_AddStringToObject(e, "ld_preload", preload);
        if (torch_version && *torch_version)
            cJSON_AddStringToObject(e, "torch", torch_version);
        if (why && *why) {
            char w[256];
            snprintf(w, sizeof w, "%s", why);
            cJSON_AddStringToObject(e, "why", w);
        }
        cJSON_AddNumberToObject(e, "recorded", (double)time(NULL));
        cJSON_DeleteItemFromObjectCaseSensitive(pythons, plan->python);
        cJSON_AddItemToObject(pythons, plan->python, e);
        memory_trim(pythons);
    }
    if (!(text = af_json_print(root, 1))) {
        af_error_set(err, AF_E_IO, "out of memory");
        goto fail;
    }
    snprintf(dir, sizeof dir, "%s", file);
    *strrchr(dir, '/') = '\0';
    if (af_mkdir_p(dir, err) != 0)
        goto fail;
    size_t n = strlen(text);
    text[n] = '\n'; /* the NUL becomes the file's last newline (n + 1 bytes written) */
    rc = af_write_atomic(file, text, n + 1, 0, err);
fail:
    free(text);
    cJSON_Delete(root);
    return rc;
}
