/* zygote.h — the zygote's side of the pool (zygote.c), as pool.c calls it; internal to the
 * harness. Each call runs in the tool's process and talks to the zygote over pool->ctl. */
#ifndef AOTIF_ZYGOTE_H
#define AOTIF_ZYGOTE_H

#include "pool_internal.h"

/* Fork the zygote (it forgets the tool's signal handlers and exit hooks, arms its death
 * signal and loads libtorch unless opts.no_zygote) and wait until it says HELLO. Sets
 * pool->zygote and pool->ctl. */
int af_zygote_start(af_pool *pool, af_error *err);
/* Whether the zygote has died (it is the tool's child: reaped here). */
int af_zygote_gone(af_pool *pool);
/* Ask the zygote for a worker into the empty slot w (flags 1: a triage worker, with
 * blocking launches); a normal worker gets the warm-up case when opts.warm_up has one. On
 * return w holds the worker's pid, socket, stderr and mailbox, not yet ready (no HELLO). */
int af_zygote_spawn(af_pool *pool, worker *w, int flags, af_error *err);
/* Exit status of a worker, as reported by the zygote; -1 if unknown within timeout. */
int af_zygote_worker_status(af_pool *pool, pid_t pid, double timeout_s);

#endif
