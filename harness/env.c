/* env.c — a child's environment with variables set (env.h). */
#include "aotif/env.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

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
