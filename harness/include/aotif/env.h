/* aotif/env.h — an environment for a child process: ours (or a given one) with some variables
 * set, built before fork (execve takes it; nothing is allocated in the child); torch's
 * inductor cache for Python children, kept in our cache dir; and the loader memory, which
 * says whether a Python child must start with the system C++ runtime preloaded.
 *
 * The loader memory. On some images Python's loader dies on a model .so built by a newer
 * system gcc than the torch wheel (seen on the H200 image: SIGSEGV in std::regex while the
 * container is created) unless the system libstdc++ is in LD_PRELOAD. The tools find that
 * out by a start that dies and a retry with the preload; each such start of torch costs
 * seconds to a minute. So the outcome is remembered per Python executable in one small JSON
 * file, $XDG_CACHE_HOME/aoti-fuzz/loader.json (default ~/.cache/aoti-fuzz/loader.json), and
 * later starts (the eager reference, the repro.py check, later runs of any tool) use the
 * preload from the first start. An entry is keyed by the Python's absolute path as exec finds
 * it (a venv's bin/python3 stays apart from other venvs on the same interpreter) and holds
 * the interpreter's real path, mtime and size: a rebuilt or replaced Python is a new one.
 * Only the one variable is stored, and only as a choice among the system libstdc++ paths
 * this file knows: the file never names a library that gets loaded unchecked, and the
 * environment is never written anywhere. A remembered preload that stops working (a start
 * with it dies, one without works) is forgotten the same way it was learnt.
 *
 * AOTI_FUZZ_LOADER switches it: "auto" (default, also when unset): the memory as above;
 * "off": no memory, neither read nor written (each start tries without the preload first and
 * retries once with it); "preload": always start with the system libstdc++ preloaded;
 * "plain": never preload. Any other value counts as "off". */
#ifndef AOTIF_ENV_H
#define AOTIF_ENV_H

#include <limits.h>
#include <stddef.h>

#include "aotif/error.h"

/* base (NULL: environ) with each "NAME=value" string of the NULL-terminated `sets` in place of
 * base's NAME (added when base has none). The array is malloc'ed, the strings are borrowed from
 * base and sets: free the array alone, after the exec. NULL when out of memory. */
char **af_env_with(char *const base[], const char *const sets[]);

/* "LD_PRELOAD=<lib>" with our LD_PRELOAD after it (lib first: it must be the C++ runtime the
 * process binds to), into buf. 0, -1 when it does not fit. */
int af_env_preload(const char *lib, char *buf, size_t len);

/* "TORCHINDUCTOR_CACHE_DIR=<dir>" into buf, where dir is torchinductor/ in our cache dir
 * ($XDG_CACHE_HOME/aoti-fuzz, default ~/.cache/aoti-fuzz): so a Python child given a private
 * TMPDIR (whose torchinductor_<user>/ went with it) finds torch's compiled CPU-ISA probes of
 * an earlier run. Loading a package with a cold cache compiles them and loads each in a
 * child Python: seconds on a CPU host, tens of seconds on the H200 image. Returns 1 when
 * filled, 0 when our environment sets TORCHINDUCTOR_CACHE_DIR already (children inherit it
 * as is), there is no cache dir to name, or it does not fit. */
int af_env_inductor_cache(char *buf, size_t len);

/* The system's C++ runtime: the first readable of the usual libstdc++.so.6 paths, or NULL.
 * Static storage. */
const char *af_env_system_libstdcxx(void);

/* The executable execvp would run for `name` (PATH searched when it has no '/'), as an
 * absolute path without resolving links, into buf. 0, or -1 when none is found. */
int af_env_find_exe(const char *name, char *buf, size_t len);

/* The loader memory's file ($XDG_CACHE_HOME/aoti-fuzz/loader.json, else under
 * $HOME/.cache) into buf. 0, or -1 when there is no cache dir to name. */
int af_loader_file(char *buf, size_t len);

/* How to start one Python child: the preload of the first start, and of the one retry the
 * caller may make when that start dies in the loader. */
typedef struct af_loader_plan {
    char python[PATH_MAX]; /* af_env_find_exe of the Python, "" when not found (no memory) */
    char first[PATH_MAX];  /* LD_PRELOAD library of the first start, "" for none */
    char retry[PATH_MAX];  /* ... of the retry, "" for none (a start without the preload) */
    int can_retry;         /* 1: one retry with `retry` is allowed after a loader failure */
    int remembered;        /* 1: `first` is the memory's answer for this Python */
    int memory;            /* 1: the memory is on (auto): af_loader_remember records */
} af_loader_plan;

/* Plan the start of `python` (a name or path, as given to exec) from AOTI_FUZZ_LOADER and the
 * memory. Never fails: an unreadable or corrupt memory is an empty one. */
void af_loader_plan_for(const char *python, af_loader_plan *plan);

/* Record that the plan's Python started with `preload` ("" : without one) after the other
 * start died in the loader. `torch_version` and `why` (how the other start failed) may be
 * NULL; they are kept for the reader of the file. Nothing happens unless plan->memory.
 * Returns 0, or -1 when the file cannot be written (err says why; callers may ignore it:
 * without the memory the next run only pays the dying start again). */
int af_loader_remember(const af_loader_plan *plan, const char *preload, const char *torch_version,
                       const char *why, af_error *err);

#endif
