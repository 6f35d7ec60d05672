/* test_loader.c — the loader memory (aotif/env.h): which LD_PRELOAD a Python needed, kept in
 * $XDG_CACHE_HOME/aoti-fuzz/loader.json; the AOTI_FUZZ_LOADER switch; and the environment
 * helpers next to it (executables found like execvp, LD_PRELOAD prepended, torch's inductor
 * cache dir). The Pythons here are shell scripts in a temp dir: only their paths, mtimes and
 * sizes matter to the memory. */
#include "aotif/env.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af_test.h"
#include "aotif/fileio.h"

static char g_tmp[PATH_MAX];

static void write_exe(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
    chmod(path, 0755);
}

static cJSON *read_memory(void)
{
    char file[PATH_MAX];
    if (af_loader_file(file, sizeof file) != 0)
        return NULL;
    char *text = af_read_file(file, 1 << 20, NULL, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

static int n_entries(void)
{
    cJSON *j = read_memory();
    int n = j ? cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "pythons")) : -1;
    cJSON_Delete(j);
    return n;
}

/* No temp file of af_write_atomic is left beside the memory. */
static int no_temp_files(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/xdg/aoti-fuzz", g_tmp);
    DIR *d = opendir(dir);
    if (!d)
        return 1;
    int clean = 1;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp-"))
            clean = 0;
    closedir(d);
    return clean;
}

static void test_find_exe(void)
{
    char buf[PATH_MAX], want[PATH_MAX];
    snprintf(want, sizeof want, "%s/bin/python3", g_tmp);
    CHECK(af_env_find_exe("python3", buf, sizeof buf) == 0);
    CHECK_STR(buf, want);
    CHECK(af_env_find_exe(want, buf, sizeof buf) == 0);
    CHECK_STR(buf, want);
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(g_tmp) == 0);
    CHECK(af_env_find_exe("bin/python3", buf, sizeof buf) == 0); /* relative: made absolute */
    CHECK_STR(buf, want);
    CHECK(chdir(cwd) == 0);
    CHECK(af_env_find_exe("no-such-python-aotif", buf, sizeof buf) == -1);
    CHECK(af_env_find_exe("/nonexistent/python3", buf, sizeof buf) == -1);
    char notexe[PATH_MAX];
    snprintf(notexe, sizeof notexe, "%s/bin/plainfile", g_tmp);
    write_exe(notexe, "x\n");
    chmod(notexe, 0644);
    CHECK(af_env_find_exe("plainfile", buf, sizeof buf) == -1); /* not executable: skipped */
}

static void test_env_helpers(void)
{
    char buf[PATH_MAX + 64];
    unsetenv("LD_PRELOAD");
    CHECK(af_env_preload("/usr/lib/x/libstdc++.so.6", buf, sizeof buf) == 0);
    CHECK_STR(buf, "LD_PRELOAD=/usr/lib/x/libstdc++.so.6");
    setenv("LD_PRELOAD", "/opt/mine.so", 1);
    CHECK(af_env_preload("/usr/lib/x/libstdc++.so.6", buf, sizeof buf) == 0);
    CHECK_STR(buf, "LD_PRELOAD=/usr/lib/x/libstdc++.so.6:/opt/mine.so"); /* ours first */
    unsetenv("LD_PRELOAD");
    char small[16];
    CHECK(af_env_preload("/usr/lib/x/libstdc++.so.6", small, sizeof small) == -1);

    /* our cache dir: the memory's file, and torch's inductor cache beside it */
    char file[PATH_MAX];
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    unsetenv("TORCHINDUCTOR_CACHE_DIR");
    CHECK(af_loader_file(file, sizeof file) == 0);
    CHECK_STR(file, "/x/cache/aoti-fuzz/loader.json");
    CHECK(af_env_inductor_cache(buf, sizeof buf) == 1);
    CHECK_STR(buf, "TORCHINDUCTOR_CACHE_DIR=/x/cache/aoti-fuzz/torchinductor");
    setenv("TORCHINDUCTOR_CACHE_DIR", "/somewhere", 1);
    CHECK(af_env_inductor_cache(buf, sizeof buf) == 0); /* set: inherited, not replaced */
    unsetenv("TORCHINDUCTOR_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, as the XDG spec says */
    setenv("HOME", "/home/u", 1);
    CHECK(af_loader_file(file, sizeof file) == 0);
    CHECK_STR(file, "/home/u/.cache/aoti-fuzz/loader.json");
    CHECK(af_env_inductor_cache(buf, sizeof buf) == 1);
    CHECK_STR(buf, "TORCHINDUCTOR_CACHE_DIR=/home/u/.cache/aoti-fuzz/torchinductor");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(af_loader_file(file, sizeof file) == -1);
    CHECK(af_env_inductor_cache(buf, sizeof buf) == 0); /* nowhere to keep it: torch's default */
}

static void test_memory(const char *lib)
{
    char xdg[PATH_MAX], py[PATH_MAX], other[PATH_MAX], file[PATH_MAX];
    snprintf(xdg, sizeof xdg, "%s/xdg", g_tmp);
    setenv("XDG_CACHE_HOME", xdg, 1);
    snprintf(py, sizeof py, "%s/bin/python3", g_tmp);
    snprintf(other, sizeof other, "%s/bin/python3.other", g_tmp);
    write_exe(other, "#!/bin/sh\nexit 0\n");
    CHECK(af_loader_file(file, sizeof file) == 0);
    unsetenv("AOTI_FUZZ_LOADER");

    /* nothing known: a plain start, and one retry with the preload */
    af_loader_plan p;
    af_loader_plan_for("python3", &p);
    CHECK_STR(p.python, py);
    CHECK_STR(p.first, "");
    CHECK_STR(p.retry, lib);
    CHECK(p.can_retry && p.memory && !p.remembered);
    CHECK(access(file, F_OK) != 0); /* planning writes nothing */

    /* it needed the preload: remembered, with what identifies the interpreter, no more */
    CHECK(af_loader_remember(&p, lib, "2.11.0+cu130", "died of SIGSEGV before running the model",
                             NULL) == 0);
    cJSON *j = read_memory();
    const cJSON *e =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "pythons"), py);
    CHECK(cJSON_IsObject(e));
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "ld_preload")), lib);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "torch")), "2.11.0+cu130");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "real")), py);
    static const char *const keys[] = {"real",  "mtime", "size",    "ld_preload",
                                       "torch", "why",   "recorded"};
    int n = 0;
    for (const cJSON *k = e ? e->child : NULL; k; k = k->next, n++) {
        int known = 0;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            known |= strcmp(k->string, keys[i]) == 0;
        CHECK(known); /* never the environment, never another variable */
    }
    CHECK_EQ_INT(n, 7);
    cJSON_Delete(j);
    CHECK(no_temp_files());

    /* the next start follows it; without it, should it have gone stale */
    af_loader_plan_for(py, &p);
    CHECK(p.remembered && p.can_retry && p.memory);
    CHECK_STR(p.first, lib);
    CHECK_STR(p.retry, "");
    af_loader_plan q;
    af_loader_plan_for(other, &q); /* another Python: its own question */
    CHECK(!q.remembered);
    CHECK_STR(q.first, "");

    /* the switch */
    setenv("AOTI_FUZZ_LOADER", "off", 1);
    af_loader_plan_for(py, &q);
    CHECK(!q.memory && !q.remembered && q.can_retry);
    CHECK_STR(q.first, "");
    CHECK_STR(q.retry, lib);
    CHECK(af_loader_remember(&q, "", NULL, NULL, NULL) == 0);
    CHECK_EQ_INT(n_entries(), 1); /* off: not forgotten either */
    setenv("AOTI_FUZZ_LOADER", "preload", 1);
    af_loader_plan_for(other, &q);
    CHECK(!q.memory && !q.can_retry);
    CHECK_STR(q.first, lib);
    setenv("AOTI_FUZZ_LOADER", "plain", 1);
    af_loader_plan_for(py, &q);
    CHECK(!q.memory && !q.can_retry);
    CHECK_STR(q.first, "");
    setenv("AOTI_FUZZ_LOADER", "of", 1); /* a typo: off, the memory untouched */
    af_loader_plan_for(py, &q);
    CHECK(!q.memory && !q.remembered);
    setenv("AOTI_FUZZ_LOADER", "auto", 1);
    af_loader_plan_for(py, &q);
    CHECK(q.remembered);
    unsetenv("AOTI_FUZZ_LOADER");

    /* a replaced interpreter (new size and mtime) is a new one */
    write_exe(py, "#!/bin/sh\n# rebuilt\nexit 0\n");
    struct stat st;
    stat(py, &st);
    af_loader_plan_for(py, &q);
    CHECK(!q.remembered);
    CHECK_STR(q.first, "");

    /* remembered again, then it starts without: forgotten */
    CHECK(af_loader_remember(&q, lib, NULL, NULL, NULL) == 0);
    af_loader_plan_for(py, &q);
    CHECK(q.remembered);
    CHECK(af_loader_remember(&q, "", NULL, NULL, NULL) == 0);
    af_loader_plan_for(py, &q);
    CHECK(!q.remembered);
    CHECK_EQ_INT(n_entries(), 0);

    /* only the known system libraries: the file cannot make a tool preload anything else */
    CHECK(af_loader_remember(&q, "/tmp/evil.so", NULL, NULL, NULL) == -1);
    CHECK_EQ_INT(n_entries(), 0);
    CHECK(af_loader_remember(&q, lib, NULL, NULL, NULL) == 0);
    char *text = af_read_file(file, 1 << 20, NULL, NULL);
    char *at = text ? strstr(text, lib) : NULL;
    if (at) {
        FILE *f = fopen(file, "w");
        fprintf(f, "%.*s/tmp/evil.so%s", (int)(at - text), text, at + strlen(lib));
        fclose(f);
    }
    free(text);
    af_loader_plan_for(py, &q);
    CHECK(!q.remembered);
    CHECK_STR(q.first, "");

    /* a corrupt file is no memory, and the next record replaces it */
    FILE *f = fopen(file, "w");
    fputs("{\"format\": \"aoti-fuzz loader memory\", \"pythons\": [", f);
    fclose(f);
    af_loader_plan_for(py, &q);
    CHECK(!q.remembered && q.can_retry);
    CHECK(af_loader_remember(&q, lib, NULL, NULL, NULL) == 0);
    af_loader_plan_for(py, &q);
    CHECK(q.remembered);

    /* bounded: the oldest entries go */
    for (int i = 0; i < 70; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/bin/py%02d", g_tmp, i);
        write_exe(path, "#!/bin/sh\nexit 0\n");
        af_loader_plan r;
        af_loader_plan_for(path, &r);
        CHECK(af_loader_remember(&r, lib, NULL, NULL, NULL) == 0);
    }
    CHECK_EQ_INT(n_entries(), 64);
    CHECK(no_temp_files());

    /* an unwritable cache dir: an error to ignore, nothing more */
    setenv("XDG_CACHE_HOME", "/proc/aotif-no-such-dir", 1);
    af_loader_plan_for(py, &q);
    CHECK(!q.remembered && q.memory);
    af_error err = {0};
    CHECK(af_loader_remember(&q, lib, NULL, NULL, &err) == -1);
    CHECK(err.message[0] != '\0');
    setenv("XDG_CACHE_HOME", xdg, 1);
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/aotif-test-loader.XXXXXX");
    char made[PATH_MAX];
    if (!mkdtemp(g_tmp) || !realpath(g_tmp, made)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(g_tmp, sizeof g_tmp, "%s", made); /* the memory keeps real paths */
    char bin[PATH_MAX], py[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/bin", g_tmp);
    mkdir(bin, 0700);
    snprintf(py, sizeof py, "%s/python3", bin);
    write_exe(py, "#!/bin/sh\nexit 0\n");
    setenv("PATH", bin, 1);

    test_find_exe();
    test_env_helpers();
    const char *lib = af_env_system_libstdcxx();
    if (!lib) {
        printf("note: no system libstdc++ at the usual paths; the memory is not exercised\n");
        af_loader_plan p;
        af_loader_plan_for(py, &p);
        CHECK(!p.can_retry && !p.first[0]); /* nothing to preload: one plain start */
    } else {
        test_memory(lib);
    }
    af_remove_tree(g_tmp);
    TEST_MAIN_END();
}
