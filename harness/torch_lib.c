/* torch_lib.c — finding libtorch's lib dir, for the pool's workers (af_find_torch_lib in
 * aotif/worker.h): the caller's dir, else $AOTI_FUZZ_TORCH_LIB, else where the Python of
 * $AOTI_FUZZ_PYTHON (or python3) imports torch from. The tools never load it themselves;
 * the zygote does (runtime.c, af_torch_load). */
#include "aotif/worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int af_find_torch_lib(const char *hint, char *dir, size_t len, af_error *err)
{
    char probe[4300];
    const char *env = getenv("AOTI_FUZZ_TORCH_LIB");
    const char *given = hint && *hint ? hint : (env && *env ? env : NULL);
    if (given) {
        snprintf(probe, sizeof probe, "%s/libtorch.so", given);
        if (access(probe, R_OK) != 0)
            return af_error_set(err, AF_E_USAGE, "no libtorch.so in %s%s", given,
                                hint && *hint ? "" : " (from AOTI_FUZZ_TORCH_LIB)");
        snprintf(dir, len, "%s", given);
        return 0;
    }
    const char *py = getenv("AOTI_FUZZ_PYTHON");
    char cmd[512];
    snprintf(
        cmd, sizeof cmd,
        "'%s' -c 'import os,torch;print(os.path.join(os.path.dirname(torch.__file__),\"lib\"))' "
        "2>/dev/null",
        py && *py && !strchr(py, '\'') ? py : "python3");
    FILE *p = popen(cmd, "r");
    char line[4096] = "";
    if (p) {
        if (!fgets(line, sizeof line, p))
            line[0] = '\0';
        pclose(p);
    }
    line[strcspn(line, "\n")] = '\0';
    snprintf(probe, sizeof probe, "%s/libtorch.so", line);
    if (!line[0] || access(probe, R_OK) != 0)
        return af_error_set(err, AF_E_USAGE,
                            "cannot find libtorch: give --torch-lib DIR, set AOTI_FUZZ_TORCH_LIB, "
                            "or make 'python3 -c \"import torch\"' work");
    snprintf(dir, len, "%s", line);
    return 0;
}
