/* aotif/env.h — an environment for a child process: ours (or a given one) with some variables
 * set, built before fork (execve takes it; nothing is allocated in the child). */
#ifndef AOTIF_ENV_H
#define AOTIF_ENV_H

/* base (NULL: environ) with each "NAME=value" string of the NULL-terminated `sets` in place of
 * base's NAME (added when base has none). The array is malloc'ed, the strings are borrowed from
 * base and sets: free the array alone, after the exec. NULL when out of memory. */
char **af_env_with(char *const base[], const char *const sets[]);

#endif
