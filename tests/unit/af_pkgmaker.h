/* af_pkgmaker.h — build small .pt2-shaped zips for tests, with libzip: crafted bad packages
 * for the refusal tests and the fault-injection package around tests/fault/fake_model.c. */
#ifndef AF_PKGMAKER_H
#define AF_PKGMAKER_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

typedef struct pm_entry {
    const char *name;
    const char *data; /* NULL: contents of file `from` */
    const char *from;
    int symlink;
} pm_entry;

static char *pm_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Write a zip at path with the given entries; returns 0 on success. */
static int pm_write(const char *path, const pm_entry *e, int n)
{
    int zerr;
    remove(path);
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!za)
        return -1;
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *buf;
        if (e[i].data) {
            len = strlen(e[i].data);
            buf = malloc(len + 1);
            memcpy(buf, e[i].data, len + 1);
        } else if (!(buf = pm_slurp(e[i].from, &len))) {
            zip_discard(za);
            return -1;
        }
        zip_source_t *src = zip_source_buffer(za, buf, len, 1);
        zip_int64_t idx = zip_file_add(za, e[i].name, src, ZIP_FL_ENC_UTF_8);
        if (idx < 0) {
            zip_source_free(src);
            zip_discard(za);
            return -1;
        }
        if (e[i].symlink)
            zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                                             (zip_uint32_t)(S_IFLNK | 0777) << 16);
    }
    return zip_close(za);
}

/* Metadata JSON with an embedded spec of one float input x: (mode,) and mode in [0,16]. */
#define PM_FAKE_META(isa)                                                                          \
    "{\"AOTI_DEVICE_KEY\": \"cpu\", \"AOTI_CPU_ISA\": \"" isa "\", \"aoti_fuzz.spec\": "           \
    "\"{\\\"format\\\":\\\"aoti-fuzz-spec\\\",\\\"version\\\":1,\\\"inputs\\\":[{\\\"name\\\":"    \
    "\\\"x\\\",\\\"dtype\\\":\\\"float32\\\",\\\"shape\\\":[\\\"s0\\\"]}],\\\"symbols\\\":[{"      \
    "\\\"name\\\":\\\"s0\\\",\\\"dim\\\":\\\"mode\\\",\\\"min\\\":0,\\\"max\\\":16}]}\"}"

#define PM_DIR "fake/data/aotinductor/model/"

/* The fault-injection package: the fake model .so plus metadata. */
static int pm_fake_package(const char *path, const char *so_path, const char *meta)
{
    pm_entry e[] = {
        {"fake/archive_format", "pt2", NULL, 0},
        {PM_DIR "cfake.wrapper.so", NULL, so_path, 0},
        {PM_DIR "cfake.wrapper_metadata.json", meta, NULL, 0},
    };
    return pm_write(path, e, 3);
}
#endif
