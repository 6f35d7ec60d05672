/* pool_internal.h — the pool's state, shared by pool.c (which drives it in the tool) and
 * zygote.c (which forks the zygote from it, so the zygote and its workers read their copy
 * of it: the package, the spec, the options, the device, the arena). Internal to the
 * harness. Everything in it is owned by the pool; af_pool_stop releases it. */
#ifndef AOTIF_POOL_INTERNAL_H
#define AOTIF_POOL_INTERNAL_H

#include <sys/types.h>

#include "aotif/symbolize.h"
#include "aotif/worker.h"
#include "ipc.h"

#define ERRBUF_MAX 16384
#define MAX_EXITED 64

struct af_pool {
    const af_package *pkg;
    const af_spec *spec;
    af_worker_opts opts;
    char torch_lib[4096];
    char device[32];
    int cuda;
    pid_t zygote;
    int ctl;
    worker active;
    worker spares[AF_MAX_SPARES]; /* loaded and waiting, oldest request first */
    int n_spares;
    int spares_max; /* opts.warm_spare: 0 none; else up to this many */
    int have_ok;    /* ok_case holds the first case that ran OK: the warm-up case */
    af_case ok_case;
    int spares_wanted; /* as many as restarts need lately (1..spares_max); 0 until the
                          first death with warm_spare 2 (CUDA's default) */
    double t_replaced; /* when the active worker was last replaced */
    af_pool_stats stats;
    char errbuf[ERRBUF_MAX + 1]; /* the current case's worker stderr (tail) */
    size_t errlen;
    struct {
        pid_t pid;
        int status;
    } exited[MAX_EXITED];
    int n_exited;
    char versions[1024];
    double t_answer;        /* when the last answer came */
    double ema_case_s;      /* recent case round-trip time: how long it pays to spin for one */
    double tool_spin_cap_s; /* $AOTI_FUZZ_TOOL_SPIN_US in seconds, < 0 when unset */
    int arena_fd;           /* output arena memfd, -1 when none; mapped before the zygote forks,
                             * so every worker shares the mapping */
    void *arena;
    size_t arena_bytes;
    int dump_next; /* the next case posted asks for its outputs */
    int ahead;     /* ahead_case is posted to the active worker (af_pool_post_ahead) */
    af_case ahead_case;
    double ahead_t_send; /* when it was posted */
    af_symbolizer *sym;  /* names crashed workers' frames; made at the first crash */
};

#endif
