/* package.c — open a .pt2 (a zip) safely, find one model, extract what running it needs.
 *
 * Two passes over the central directory. The first validates every entry, whatever model
 * it belongs to: a package with an absolute path, a ".." component, a symlink or an entry
 * over the size limit is refused as a whole. The second collects the chosen model's files
 * under <top>/data/aotinductor/<model>/: the compiled .so, its cubins and weights blob are
 * extracted (flat, by basename) into a private mkdtemp dir (0700, files 0600, O_EXCL |
 * O_NOFOLLOW); the metadata JSON and wrapper source are read into memory. */
#include "aotif/package.h"

#include "aotif/contract.h"
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

af_package *af_package_open(const char *path, const af_package_opts *opts, af_error *err)
{
    const char *model = (opts && opts->model) ? opts->model : "model";
    int64_t limit =
        (opts && opts->max_entry_bytes) ? opts->max_entry_bytes : AF_DEFAULT_MAX_ENTRY_BYTES;
    zip_t *za = NULL;
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
    struct stat st;
    if (stat(path, &st) != 0) {
        af_error_sys(err, "%s", path);
        if (err)
            err->code = AF_E_INPUT;
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        af_error_set(err, AF_E_INPUT, "%s: not a regular file", path);
        goto fail;
    }
    if (!realpath(path, pkg->abspath))
        snprintf(pkg->abspath, sizeof pkg->abspath, "%s", path);
    if (af_sha256_file(path, pkg->sha256, err) != 0)
        goto fail;

    int zerr = 0;
    za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    if (!za) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        af_error_set(err, AF_E_INPUT, "%s: not a valid .pt2 package (zip: %s)", path,
                     zip_error_strerror(&ze));
        zip_error_fini(&ze);
        goto fail;
    }

    zip_int64_t n = zip_get_num_entries(za, 0);
    zip_int64_t so_idx = -1, meta_idx = -1, cpp_idx = -1, blob_idx = -1, exported_idx = -1;
    int has_cmake = 0;
    char models_seen[256] = "";
    size_t model_len = strlen(model);
    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        if (zip_stat_index(za, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME)) {
            af_error_set(err, AF_E_INPUT, "%s: unreadable entry %lld", path, (long long)i);
            goto fail;
        }
        if (check_entry_name(zs.name, err) != 0)
            goto fail;
        if (entry_is_symlink(za, (zip_uint64_t)i)) {
            af_error_set(err, AF_E_INPUT, "refusing package entry that is a symlink: %s", zs.name);
            goto fail;
        }
        if ((zs.valid & ZIP_STAT_SIZE) && zs.size > (zip_uint64_t)limit) {
            af_error_set(err, AF_E_INPUT,
                         "refusing package entry over the size limit (%llu > %lld bytes): %s",
                         (unsigned long long)zs.size, (long long)limit, zs.name);
            goto fail;
        }
        const char *m = aoti_part(zs.name);
        if (!m) {
            /* The serialized ExportedProgram of a unified archive: <top>/models/<model>.json.
             * Its weights (data/weights/) and constants belong to the program, not to the
             * AOTI model, which carries its own. */
            const char *mj = strstr(zs.name, "models/");
            if (mj && (mj == zs.name || mj[-1] == '/') && !strncmp(mj + 7, model, model_len) &&
                !strcmp(mj + 7 + model_len, ".json"))
                exported_idx = i;
            continue;
        }
        const char *slash = strchr(m, '/');
        if (!slash)
            continue;
        if ((size_t)(slash - m) != model_len || strncmp(m, model, model_len) != 0) {
            size_t seen = strlen(models_seen);
            char one[96];
            snprintf(one, sizeof one, "%.*s", (int)(slash - m), m);
            if (!strstr(models_seen, one) && seen + strlen(one) + 3 < sizeof models_seen)
                snprintf(models_seen + seen, sizeof models_seen - seen, "%s%s", seen ? ", " : "",
                         one);
            continue;
        }
        const char *base = slash + 1;
        if (strchr(base, '/') || !base[0] || base[0] == '.')
            continue; /* nested and hidden files are not part of what runs */
        if (!strcmp(base, "weights_config.json")) {
            af_error_set(err, AF_E_INPUT,
                         "%s: model '%s' keeps its weights outside the .so (data/weights/, "
                         "weights_config.json), which only Python's loader maps in; re-export "
                         "with the weights in the .so or a weights blob",
                         path, model);
            goto fail;
        }
        if (ends_with(base, ".wrapper.json")) {
            af_error_set(err, AF_E_INPUT,
                         "%s: model '%s' has %s: it calls ops that need a C++ proxy executor, "
                         "which cannot run from C",
                         path, model, base);
            goto fail;
        }
        if (ends_with(base, ".wrapper.so") || (so_idx < 0 && ends_with(base, ".so"))) {
            if (so_idx >= 0 && ends_with(base, ".wrapper.so")) {
                zip_stat_t prev;
                zip_stat_index(za, (zip_uint64_t)so_idx, 0, &prev);
                if (ends_with(prev.name, ".wrapper.so")) {
                    af_error_set(err, AF_E_INPUT, "%s: model '%s' has more than one .wrapper.so",
                                 path, model);
                    goto fail;
                }
            }
            so_idx = i;
        } else if (ends_with(base, ".wrapper_metadata.json")) {
            meta_idx = i;
        } else if (ends_with(base, ".wrapper.cpp")) {
            cpp_idx = i;
        } else if (ends_with(base, ".wrapper_weights.blob")) {
            blob_idx = i;
        } else if (!strcmp(base, "CMakeLists.txt")) {
            has_cmake = 1;
        }
    }

    if (so_idx < 0) {
        if (has_cmake)
            af_error_set(err, AF_E_INPUT,
                         "%s: model '%s' holds sources only (package_cpp_only); build the .so "
                         "first",
                         path, model);
        else if (models_seen[0])
            af_error_set(err, AF_E_INPUT, "%s: no model '%s' (models in package: %s)", path, model,
                         models_seen);
        else
            af_error_set(err, AF_E_INPUT, "%s: no compiled model .so (not an AOTInductor package?)",
                         path);
        goto fail;
    }

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
        goto fail;
    }
    snprintf(pkg->model_dir, sizeof pkg->model_dir, "%s/%s", pkg->tmpdir, model);
    if (mkdir(pkg->model_dir, 0700) != 0) {
        af_error_sys(err, "mkdir %s", pkg->model_dir);
        goto fail;
    }

    for (zip_int64_t i = 0; i < n; i++) {
        zip_stat_t zs;
        zip_stat_index(za, (zip_uint64_t)i, 0, &zs);
        const char *m = aoti_part(zs.name);
        if (!m || strncmp(m, model, model_len) != 0 || m[model_len] != '/')
            continue;
        const char *base = m + model_len + 1;
        if (strchr(base, '/') || !base[0] || base[0] == '.')
            continue;
        int want_file = i == so_idx || i == blob_idx || ends_with(base, ".cubin");
        char dest[PATH_MAX];
        snprintf(dest, sizeof dest, "%s/%s", pkg->model_dir, base);
        if (want_file) {
            if (extract_entry(za, (zip_uint64_t)i, zs.size, dest, err) != 0)
                goto fail;
            if (i == so_idx)
                snprintf(pkg->so_path, sizeof pkg->so_path, "%s", dest);
            else if (i == blob_idx)
                snprintf(pkg->blob_path, sizeof pkg->blob_path, "%s", dest);
            else
                pkg->n_cubins++;
        } else if (i == meta_idx) {
            if (!(pkg->metadata_json = read_entry(za, (zip_uint64_t)i, zs.size, err)))
                goto fail;
        } else if (i == cpp_idx) {
            if (!(pkg->wrapper_cpp = read_entry(za, (zip_uint64_t)i, zs.size, err)))
                goto fail;
        }
    }
    if (exported_idx >= 0) {
        zip_stat_t zs;
        zip_stat_index(za, (zip_uint64_t)exported_idx, 0, &zs);
        if (!(pkg->exported_json = read_entry(za, (zip_uint64_t)exported_idx, zs.size, err)))
            goto fail;
        snprintf(pkg->exported_entry, sizeof pkg->exported_entry, "%s", zs.name);
    }
    zip_close(za);
    za = NULL;
    if (check_elf(pkg->so_path, err) != 0)
        goto fail;

    if (pkg->metadata_json)
        read_metadata(pkg);
    if (!pkg->device[0])
        snprintf(pkg->device, sizeof pkg->device, "cpu");
    if (strcmp(pkg->device, "cpu") != 0 && strcmp(pkg->device, "cuda") != 0) {
        af_error_set(err, AF_E_INPUT, "%s: model '%s' targets device '%s'; only cpu and cuda run",
                     path, model, pkg->device);
        goto fail;
    }
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

/* Dim names, and integer ranges stated by the model's author, from an embedded spec:
 * the exported program has neither. */
static void keep_from_embedded(af_spec *spec, const af_spec *emb)
{
    for (int k = 0; k < spec->n_syms; k++)
        for (int j = 0; j < emb->n_syms; j++)
            if (!spec->syms[k].dim_name[0] && !strcmp(spec->syms[k].name, emb->syms[j].name))
                snprintf(spec->syms[k].dim_name, sizeof spec->syms[k].dim_name, "%s",
                         emb->syms[j].dim_name);
}

static int package_spec(const af_package *pkg, const char *spec_file, af_spec *out, af_error *err)
{
    af_spec wrapper;
    af_error werr = {0};
    int have_wrapper =
        pkg->wrapper_cpp && af_spec_from_wrapper(pkg->wrapper_cpp, &wrapper, &werr) == 0;

    if (spec_file) {
        if (af_spec_from_file(spec_file, out, err) != 0) {
            if (err)
                err->code = AF_E_INPUT; /* a missing or unreadable spec file is bad input */
            return -1;
        }
    } else {
        int embedded = 0;
        cJSON *meta = pkg->metadata_json ? cJSON_Parse(pkg->metadata_json) : NULL;
        const cJSON *v = meta ? cJSON_GetObjectItemCaseSensitive(meta, "aoti_fuzz.spec") : NULL;
        if (v && cJSON_IsString(v)) {
            if (af_spec_from_json(v->valuestring, AF_SPEC_EMBEDDED, out, err) != 0) {
                char why[sizeof err->message];
                snprintf(why, sizeof why, "%s", err ? err->message : "");
                cJSON_Delete(meta);
                return af_error_set(err, AF_E_INPUT, "%s: embedded spec: %s", pkg->path, why);
            }
            embedded = 1;
        }
        cJSON_Delete(meta);
        if (!embedded) {
            if (!have_wrapper) {
                if (pkg->wrapper_cpp)
                    return af_error_set(err, AF_E_INPUT,
                                        "%s: no embedded spec and the wrapper source could not "
                                        "be read (%s); give --spec FILE",
                                        pkg->path, werr.message);
                return af_error_set(err, AF_E_INPUT,
                                    "%s: no embedded spec and no wrapper source; give --spec FILE",
                                    pkg->path);
            }
            *out = wrapper;
            /* The wrapper only knows the compiled bounds. A compiled lower bound of 2 is
             * what 0/1 specialization leaves of a Dim declared with min 0 or 1 (torch 2.13
             * compiles >= 2 even for min=0), so the sizes 0 and 1 may well be in the
             * user's contract, and they are where the bugs are: explore them, and say
             * that the lower bound 0 is assumed. The exported program, when there is one,
             * replaces the assumption with the declared range. */
            for (int i = 0; i < out->n_syms; i++)
                if (out->syms[i].compiled_min == 2 && out->syms[i].min == 2)
                    out->syms[i].min = out->syms[i].decl_min = 0;
            return 0;
        }
    }
    if (have_wrapper) {
        char why[256];
        if (af_spec_fits_wrapper(out, &wrapper, why, sizeof why) != 0)
            return af_error_set(err, AF_E_INPUT,
                                "%s contradicts the compiled model (its wrapper source): %s",
                                spec_file ? spec_file : "the package's embedded spec", why);
        af_spec_merge_compiled(out, &wrapper);
    }
    return 0;
}

int af_package_spec(const af_package *pkg, const char *spec_file, const char *exported_file,
                    af_spec *out, af_error *err)
{
    if (package_spec(pkg, spec_file, out, err) != 0)
        return -1;
    if (spec_file)
        return 0; /* the user's statement of the contract wins */
    char *owned = NULL;
    const char *text = pkg->exported_json;
    char src[96];
    if (exported_file) {
        if (!(owned = af_exported_read(exported_file, pkg->model, err)))
            return -1;
        text = owned;
        snprintf(src, sizeof src, "--exported %s", exported_file);
    } else {
        snprintf(src, sizeof src, "the package's exported program (%s)", pkg->exported_entry);
    }
    if (!text)
        return 0;
    af_contract *c = calloc(1, sizeof *c);
    af_spec *emb = malloc(sizeof *emb);
    int rc = -1;
    if (!c || !emb) {
        af_error_set(err, AF_E_INTERNAL, "out of memory");
        goto done;
    }
    *emb = *out;
    if (af_contract_from_json(text, exported_file ? exported_file : pkg->exported_entry, c, err) !=
            0 ||
        af_contract_apply(c, out, src, err) != 0) {
        if (err)
            err->code = AF_E_INPUT;
        goto done;
    }
    if (emb->source == AF_SPEC_EMBEDDED)
        keep_from_embedded(out, emb);
    rc = 0;
done:
    free(c);
    free(emb);
    free(owned);
    return rc;
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
