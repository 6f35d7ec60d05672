/* package.c — open a .pt2 (a zip) safely, find one model, extract what running it needs.
 *
 * Two passes over the central directory. The first validates every entry, whatever model
 * it belongs to: a package with an absolute path, a ".." component, a symlink or an entry
 * over the size limit is refused as a whole. The second collects the chosen model's files
 * under <top>/data/aotinductor/<model>/: the compiled .so, its cubins and weights blob are
 * extracted (flat, by basename) into a private mkdtemp dir (0700, files 0600, O_EXCL |
 * O_NOFOLLOW); the metadata JSON and wrapper source are read into memory. The spec read
 * from an open package is package_spec.c's. */
#include "aotif/package.h"

#include "aotif/fileio.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Refuse names that could escape the extraction dir or are not plain relative paths. */
static int check_entry_name(const char *name, af_error *err)
{
    if (name[0] == '/' || name[0] == '\\')
        return af_error_set(err, AF_E_INPUT, "refusing package entry with an absolute path: %s",
                            name);
    if (strchr(name, '\\'))
        return af_error_set(err, AF_E_INPUT, "refusing package entry with a backslash: %s", name);
    const char *p = name;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return af_error_set(err, AF_E_INPUT, "refusing package entry with '..': %s", name);
        p += len;
        if (*p == '/')
            p++;
    }
    return 0;
}

static int entry_is_symlink(zip_t *za, zip_uint64_t i)
{
    zip_uint8_t opsys;
    zip_uint32_t attr;
    if (zip_file_get_external_attributes(za, i, 0, &opsys, &attr) != 0)
        return 0;
    return opsys == ZIP_OPSYS_UNIX && S_ISLNK((attr >> 16) & 0xffff);
}

static char *read_entry(zip_t *za, zip_uint64_t i, zip_uint64_t size, af_error *err)
{
    if (size > (zip_uint64_t)AF_MAX_TEXT_ENTRY_BYTES) {
        const char *name = zip_get_name(za, i, 0);
        af_error_set(err, AF_E_INPUT,
                     "refusing package entry %s: %llu bytes inflated, over the %lld-byte limit "
                     "for text read into memory",
                     name ? name : "?", (unsigned long long)size,
                     (long long)AF_MAX_TEXT_ENTRY_BYTES);
        return NULL;
    }
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf) {
        af_error_set(err, AF_E_INPUT, "cannot read package entry %llu: %s", (unsigned long long)i,
                     zip_strerror(za));
        return NULL;
    }
    char *buf = malloc(size + 1);
    if (!buf) {
        zip_fclose(zf);
        af_error_set(err, AF_E_IO, "out of memory reading a package entry");
        return NULL;
    }
    zip_int64_t got = zip_fread(zf, buf, size);
    zip_fclose(zf);
    if (got < 0 || (zip_uint64_t)got != size) {
        free(buf);
        af_error_set(err, AF_E_INPUT, "package entry %llu is truncated or corrupt",
                     (unsigned long long)i);
        return NULL;
    }
    buf[size] = '\0';
    return buf;
}

static int extract_entry(zip_t *za, zip_uint64_t i, zip_uint64_t size, const char *dest,
                         af_error *err)
{
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf)
        return af_error_set(err, AF_E_INPUT, "cannot read package entry for %s: %s", dest,
                            zip_strerror(za));
    int fd = open(dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        zip_fclose(zf);
        return af_error_sys(err, "%s", dest);
    }
    char buf[1 << 16];
    zip_uint64_t total = 0;
    int rc = 0;
    for (;;) {
        zip_int64_t n = zip_fread(zf, buf, sizeof buf);
        if (n < 0) {
            rc = af_error_set(err, AF_E_INPUT, "package entry for %s is corrupt: %s", dest,
                              zip_file_strerror(zf));
            break;
        }
        if (n == 0)
            break;
        total += (zip_uint64_t)n;
        if (total > size) { /* never write more than the directory promised */
            rc =
                af_error_set(err, AF_E_INPUT, "package entry for %s is larger than declared", dest);
            break;
        }
        if (af_write_all(fd, buf, (size_t)n) != 0) {
            rc = af_error_sys(err, "%s: write", dest);
            break;
        }
    }
    zip_fclose(zf);
    if (close(fd) != 0 && rc == 0)
        rc = af_error_sys(err, "%s: close", dest);
    return rc;
}

/* Position of "data/aotinductor/" as a path component in name, or NULL. */
static const char *aoti_part(const char *name)
{
    static const char key[] = "data/aotinductor/";
    const char *p = name;
    while ((p = strstr(p, key))) {
        if (p == name || p[-1] == '/')
            return p + sizeof key - 1;
        p++;
    }
    return NULL;
}

static void read_metadata(af_package *pkg)
{
    cJSON *meta = cJSON_Parse(pkg->metadata_json);
    if (!meta)
        return;
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(meta, "AOTI_DEVICE_KEY")) && cJSON_IsString(v))
        snprintf(pkg->device, sizeof pkg->device, "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(meta, "AOTI_COMPUTE_CAPABILITY")) &&
        cJSON_IsString(v))
        snprintf(pkg->compute_capability, sizeof pkg->compute_capability, "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(meta, "AOTI_CPU_ISA")) && cJSON_IsString(v))
        snprintf(pkg->cpu_isa, sizeof pkg->cpu_isa, "%s", v->valuestring);
    cJSON_Delete(meta);
}

#if defined(__x86_64__)
#define HOST_EM EM_X86_64
#define HOST_ARCH "x86-64"
#elif defined(__aarch64__)
#define HOST_EM EM_AARCH64
#define HOST_ARCH "aarch64"
#endif

/* The model .so as the loader would see it, read here without loading it: a 64-bit
 * little-endian ELF shared object for this machine's architecture. dlopen's own words for
 * a wrong architecture ("cannot open shared object file: No such file or directory") name
 * nothing. */
static int check_elf(const char *so, af_error *err)
{
    Elf64_Ehdr h;
    const char *base = strrchr(so, '/') ? strrchr(so, '/') + 1 : so;
    int fd = open(so, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return af_error_sys(err, "%s", so);
    ssize_t n = read(fd, &h, sizeof h);
    close(fd);
    if (n == 0)
        return af_error_set(err, AF_E_INPUT, "the model .so %s is empty", base);
    if (n != (ssize_t)sizeof h || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
        return af_error_set(err, AF_E_INPUT, "the model .so %s is not an ELF file", base);
    if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
        return af_error_set(err, AF_E_INPUT,
                            "the model .so %s is a %s ELF file; this machine loads 64-bit "
                            "little-endian ones",
                            base, h.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "big-endian");
    if (h.e_type != ET_DYN)
        return af_error_set(err, AF_E_INPUT,
                            "the model .so %s is not a shared object (ELF type %u)", base,
                            (unsigned)h.e_type);
#ifdef HOST_EM
    if (h.e_machine != HOST_EM)
        return af_error_set(err, AF_E_INPUT,
                            "the model .so %s is for another architecture (ELF machine %u); this "
                            "machine is %s",
                            base, (unsigned)h.e_machine, HOST_ARCH);
#endif
    return 0;
}

/* What the first pass found: the chosen model's entries, and the other models' names. */
typedef struct model_entries {
    zip_int64_t so, meta, cpp, blob; /* entry indices of the model's files, -1 when absent */
    zip_int64_t exported;            /* <top>/models/<model>.json of a unified archive, or -1 */
    int has_cmake;                   /* a CMakeLists.txt: sources only (package_cpp_only) */
    char models_seen[256];           /* the other models' names, for a model not found */
} model_entries;

/* The file itself: there, a regular file, its real path and digest. */
static int check_file(af_package *pkg, const char *path, af_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        af_error_sys(err, "%s", path);
        if (err)
            err->code = AF_E_INPUT;
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return af_error_set(err, AF_E_INPUT, "%s: not a regular file", path);
    if (!realpath(path, pkg->abspath))
        snprintf(pkg->abspath, sizeof pkg->abspath, "%s", path);
    return af_sha256_file(path, pkg->sha256, err);
}

static zip_t *open_zip(const char *path, af_error *err)
{
    int zerr = 0;
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        af_error_set(err, AF_E_INPUT, "%s: not a valid .pt2 package (zip: %s)", path,
                     zip_error_strerror(&ze));
        zip_error_fini(&ze);
    }
    return za;
}

/* Entry i's stat into zs, refused when it could escape the extraction dir or is over the
 * size limit: an absolute path or '..' (check_entry_name), a symlink, then the size. */
static int check_entry(zip_t *za, zip_int64_t i, int64_t limit, const char *path, zip_stat_t *zs,
                       af_error *err)
{
    if (zip_stat_index(za, (zip_uint64_t)i, 0, zs) != 0 || !(zs->valid & ZIP_STAT_NAME))
        return af_error_set(err, AF_E_INPUT, "%s: unreadable entry %lld", path, (long long)i);
    if (check_entry_name(zs->name, err) != 0)
        return -1;
    if (entry_is_symlink(za, (zip_uint64_t)i))
        return af_error_set(err, AF_E_INPUT, "refusing package entry that is a symlink: %s",
                            zs->name);
    if ((zs->valid & ZIP_STAT_SIZE) && zs->size > (zip_uint64_t)limit)
        return af_error_set(err, AF_E_INPUT,
                            "refusing package entry over the size limit (%llu > %lld bytes): %s",
                            (unsigned long long)zs->size, (long long)limit, zs->name);
    return 0;
}

/* Add the model name [m, slash) to the list of other models seen, once. */
static void note_other_model(model_entries *me, const char *m, const char *slash)
{
    size_t seen = strlen(me->models_seen);
    char one[96];
    snprintf(one, sizeof one, "%.*s", (int)(slash - m), m);
    if (!strstr(me->models_seen, one) && seen + strlen(one) + 3 < sizeof me->models_seen)
        snprintf(me->models_seen + seen, sizeof me->models_seen - seen, "%s%s", seen ? ", " : "",
                 one);
}

/* One file `base` of the chosen model: refused when the model cannot run from C, else noted
 * in me when it is one the run needs. */
static int note_model_file(zip_t *za, zip_int64_t i, const char *base, const char *path,
                           const char *model, model_entries *me, af_error *err)
{
    if (!strcmp(base, "weights_config.json"))
        return af_error_set(err, AF_E_INPUT,
                            "%s: model '%s' keeps its weights outside the .so (data/weights/, "
                            "weights_config.json), which only Python's loader maps in; re-export "
                            "with the weights in the .so or a weights blob",
                            path, model);
    if (ends_with(base, ".wrapper.json"))
        return af_error_set(err, AF_E_INPUT,
                            "%s: model '%s' has %s: it calls ops that need a C++ proxy executor, "
                            "which cannot run from C",
                            path, model, base);
    if (ends_with(base, ".wrapper.so") || (me->so < 0 && ends_with(base, ".so"))) {
        if (me->so >= 0 && ends_with(base, ".wrapper.so")) {
            zip_stat_t prev;
            zip_stat_index(za, (zip_uint64_t)me->so, 0, &prev);
            if (ends_with(prev.name, ".wrapper.so"))
                return af_error_set(err, AF_E_INPUT, "%s: model '%s' has more than one .wrapper.so",
                                    path, model);
        }
        me->so = i;
    } else if (ends_with(base, ".wrapper_metadata.json")) {
        me->meta = i;
    } else if (ends_with(base, ".wrapper.cpp")) {
        me->cpp = i;
    } else if (ends_with(base, ".wrapper_weights.blob")) {
        me->blob = i;
    } else if (!strcmp(base, "CMakeLists.txt")) {
        me->has_cmake = 1;
    }
    return 0;
}

/* Sort one checked entry: the chosen model's file, another model's, or (outside
 * data/aotinductor/) a unified archive's exported program. */
static int classify_entry(zip_t *za, zip_int64_t i, const char *name, const char *path,
                          const char *model, model_entries *me, af_error *err)
{
    size_t model_len = strlen(model);
    const char *m = aoti_part(name);
    if (!m) {
        /* The serialized ExportedProgram of a unified archive: <top>/models/<model>.json.
         * Its weights (data/weights/) and constants belong to the program, not to the
         * AOTI model, which carries its own. */
        const char *mj = strstr(name, "models/");
        if (mj && (mj == name || mj[-1] == '/') && !strncmp(mj + 7, model, model_len) &&
            !strcmp(mj + 7 + model_len, ".json"))
            me->exported = i;
        return 0;
    }
    const char *slash = strchr(m, '/');
    if (!slash)
        return 0;
    if ((size_t)(slash - m) != model_len || strncmp(m, model, model_len) != 0) {
        note_other_model(me, m, slash);
        return 0;
    }
    const char *base = slash + 1;
    if (strchr(base, '/') || !base[0] || base[0] == '.')
        return 0; /* nested and hidden files are not part of what runs */
    return note_model_file(za, i, base, path, model, me, err);
}

/* Why there is no model .so to run. Returns -1. */
static int no_model_so(const model_entries *me, const char *path, const char *model, af_error *err)
{
    if (me->has_cmake)
        return af_error_set(err, AF_E_INPUT,
                            "%s: model '%s' holds sources only (package_cpp_only); build the .so "
                            "first",
                            path, model);
    if (me->models_seen[0])
        return af_error_set(err, AF_E_INPUT, "%s: no model '%s' (models in package: %s)", path,
                            model, me->models_seen);
    return af_error_set(err, AF_E_INPUT, "%s: no compiled model .so (not an AOTInductor package?)",
                        path);
}

/* The first pass: every entry checked, in order, and sorted as it is checked. */
static int scan_entries(zip_t *za, const char *path, const char *model, int64_t limit,
                        model_entries *me, af_error *err)
{
    memset(me, 0, sizeof *me);
    me->so = me->meta = me->cpp = me->blob = me->exported = -1;
    zip_int64_t n = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        if (check_entry(za, i, limit, path, &zs, err) != 0 ||
            classify_entry(za, i, zs.name, path, model, me, err) != 0)
            return -1;
    }
    return me->so < 0 ? no_model_so(me, path, model, err) : 0;
}

/* The private extraction dir (0700) and the model's dir in it. */
static int make_tmpdir(af_package *pkg, const char *model, af_error *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(pkg->tmpdir, sizeof pkg->tmpdir, "%s/aotif.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(pkg->tmpdir)) {
        int e = errno;
        if (tmp && *tmp) {
            /* the user's setting: a TMPDIR that is missing, a file or not writable */
            af_error_set(err,
                         e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS ? AF_E_USAGE
                                                                                  : AF_E_IO,
                         "TMPDIR %s: cannot make a temp dir there: %s", tmp, strerror(e));
        } else {
            af_error_set(err, AF_E_IO, "mkdtemp %s: %s", pkg->tmpdir, strerror(e));
        }
        pkg->tmpdir[0] = '\0';
        return -1;
    }
    snprintf(pkg->model_dir, sizeof pkg->model_dir, "%s/%s", pkg->tmpdir, model);
    if (mkdir(pkg->model_dir, 0700) != 0)
        return af_error_sys(err, "mkdir %s", pkg->model_dir);
    return 0;
}

/* One entry of the chosen model, `base` its name in the model's dir: extracted (the .so,
 * the weights blob, cubins), read into memory (metadata, wrapper source) or left alone. */
static int take_model_entry(zip_t *za, zip_int64_t i, const zip_stat_t *zs, const char *base,
                            const model_entries *me, af_package *pkg, af_error *err)
{
    int want_file = i == me->so || i == me->blob || ends_with(base, ".cubin");
    char dest[PATH_MAX];
    snprintf(dest, sizeof dest, "%s/%s", pkg->model_dir, base);
    if (want_file) {
        if (extract_entry(za, (zip_uint64_t)i, zs->size, dest, err) != 0)
            return -1;
        if (i == me->so)
            snprintf(pkg->so_path, sizeof pkg->so_path, "%s", dest);
        else if (i == me->blob)
            snprintf(pkg->blob_path, sizeof pkg->blob_path, "%s", dest);
        else
            pkg->n_cubins++;
    } else if (i == me->meta) {
        if (!(pkg->metadata_json = read_entry(za, (zip_uint64_t)i, zs->size, err)))
            return -1;
    } else if (i == me->cpp) {
        if (!(pkg->wrapper_cpp = read_entry(za, (zip_uint64_t)i, zs->size, err)))
            return -1;
    }
    return 0;
}

/* The second pass: the chosen model's files, then the unified archive's exported program. */
static int extract_model(zip_t *za, const model_entries *me, const char *model, af_package *pkg,
                         af_error *err)
{
    size_t model_len = strlen(model);
    zip_int64_t n = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        zip_stat_index(za, (zip_uint64_t)i, 0, &zs);
        const char *m = aoti_part(zs.name);
        if (!m || strncmp(m, model, model_len) != 0 || m[model_len] != '/')
            continue;
        const char *base = m + model_len + 1;
        if (strchr(base, '/') || !base[0] || base[0] == '.')
            continue;
        if (take_model_entry(za, i, &zs, base, me, pkg, err) != 0)
            return -1;
    }
    if (me->exported >= 0) {
        zip_stat_t zs;
        zip_stat_index(za, (zip_uint64_t)me->exported, 0, &zs);
        if (!(pkg->exported_json = read_entry(za, (zip_uint64_t)me->exported, zs.size, err)))
            return -1;
        snprintf(pkg->exported_entry, sizeof pkg->exported_entry, "%s", zs.name);
    }
    return 0;
}

/* The device from the metadata ("cpu" when it names none): one the tools run on. */
static int read_device(af_package *pkg, const char *path, const char *model, af_error *err)
{
    if (pkg->metadata_json)
        read_metadata(pkg);
    if (!pkg->device[0])
        snprintf(pkg->device, sizeof pkg->device, "cpu");
    if (strcmp(pkg->device, "cpu") != 0 && strcmp(pkg->device, "cuda") != 0)
        return af_error_set(err, AF_E_INPUT,
                            "%s: model '%s' targets device '%s'; only cpu and cuda run", path,
                            model, pkg->device);
    return 0;
}

af_package *af_package_open(const char *path, const af_package_opts *opts, af_error *err)
{
    const char *model = (opts && opts->model) ? opts->model : "model";
    int64_t limit =
        (opts && opts->max_entry_bytes) ? opts->max_entry_bytes : AF_DEFAULT_MAX_ENTRY_BYTES;
    zip_t *za = NULL;
    model_entries me;
    af_package *pkg = calloc(1, sizeof *pkg);
    if (!pkg) {
        af_error_set(err, AF_E_IO, "out of memory");
        return NULL;
    }
    snprintf(pkg->path, sizeof pkg->path, "%s", path);
    snprintf(pkg->model, sizeof pkg->model, "%s", model);
    if (strchr(model, '/') || !strcmp(model, "..") || !model[0]) {
        af_error_set(err, AF_E_USAGE, "bad model name '%s'", model);
        goto fail;
    }
    if (check_file(pkg, path, err) != 0 || !(za = open_zip(path, err)))
        goto fail;
    if (scan_entries(za, path, model, limit, &me, err) != 0 || make_tmpdir(pkg, model, err) != 0 ||
        extract_model(za, &me, model, pkg, err) != 0)
        goto fail;
    zip_close(za);
    za = NULL;
    if (check_elf(pkg->so_path, err) != 0 || read_device(pkg, path, model, err) != 0)
        goto fail;
    return pkg;

fail:
    if (za)
        zip_discard(za);
    af_package_close(pkg);
    return NULL;
}

static void package_free(af_package *pkg)
{
    if (!pkg)
        return;
    free(pkg->metadata_json);
    free(pkg->wrapper_cpp);
    free(pkg->exported_json);
    free(pkg);
}

void af_package_close(af_package *pkg)
{
    if (!pkg)
        return;
    if (pkg->tmpdir[0])
        af_remove_tree(pkg->tmpdir);
    package_free(pkg);
}

char *af_exported_read(const char *path, const char *model, af_error *err)
{
    const zip_uint64_t limit = 1ull << 30;
    const char *want = model ? model : "model";
    char *text = NULL;
    int zerr = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        af_error_sys(err, "--exported %s", path);
        if (err)
            err->code = AF_E_INPUT;
        return NULL;
    }
    zip_t *za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        af_error_set(err, AF_E_INPUT, "--exported %s: not a torch.export.save file (not a zip)",
                     path);
        return NULL;
    }
    zip_int64_t n = zip_get_num_entries(za, 0), pick = -1, only = -1;
    int n_models = 0;
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME)) {
            af_error_set(err, AF_E_INPUT, "--exported %s: unreadable entry %lld", path,
                         (long long)i);
            goto done;
        }
        if (check_entry_name(zs.name, err) != 0)
            goto done;
        if (entry_is_symlink(za, (zip_uint64_t)i)) {
            af_error_set(err, AF_E_INPUT, "--exported %s: refusing an entry that is a symlink: %s",
                         path, zs.name);
            goto done;
        }
        const char *mj = strstr(zs.name, "models/");
        if (!mj || (mj != zs.name && mj[-1] != '/') || !ends_with(mj, ".json") ||
            strchr(mj + 7, '/'))
            continue;
        if ((zs.valid & ZIP_STAT_SIZE) && zs.size > limit) {
            af_error_set(err, AF_E_INPUT, "--exported %s: %s is over %llu bytes", path, zs.name,
                         (unsigned long long)limit);
            goto done;
        }
        n_models++;
        only = i;
        if (strlen(mj + 7) == strlen(want) + 5 && !strncmp(mj + 7, want, strlen(want)))
            pick = i;
    }
    if (pick < 0 && n_models == 1)
        pick = only;
    if (pick < 0) {
        af_error_set(err, AF_E_INPUT,
                     n_models ? "--exported %s: no exported program named '%s' (it holds %d)"
                              : "--exported %s: no exported program in it (no models/*.json; "
                                "write it with torch.export.save)",
                     path, want, n_models);
        goto done;
    }
    zip_stat_t zs;
    zip_stat_index(za, (zip_uint64_t)pick, 0, &zs);
    text = read_entry(za, (zip_uint64_t)pick, zs.size, err);
done:
    zip_discard(za);
    return text;
}

int af_device_is_cuda(const char *dev)
{
    return dev && strncmp(dev, "cuda", 4) == 0 && (dev[4] == '\0' || dev[4] == ':');
}

int af_device_index(const char *dev)
{
    if (!af_device_is_cuda(dev))
        return -1;
    return dev[4] == ':' ? atoi(dev + 5) : 0;
}

int af_device_name_ok(const char *dev)
{
    if (!dev)
        return 0;
    if (!strcmp(dev, "cpu") || !strcmp(dev, "cuda"))
        return 1;
    size_t n = strncmp(dev, "cuda:", 5) == 0 ? strlen(dev + 5) : 0;
    return n > 0 && n < 4 && strspn(dev + 5, "0123456789") == n;
}
