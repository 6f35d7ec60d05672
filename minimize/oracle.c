/* oracle.c — the oracle aoti-minimize gives the engine (ddmin.h), and the progress it shows
 * on stderr; see steps.h.
 *
 * The oracle runs each case in a worker (worker.h) and compares with the crash: SAME when
 * the class and signature are the crash's (for a MISMATCH: the same kind of difference, as
 * af_mismatch_same says), PASS when it ran fine or was not a bug (refused, timeout, OOM:
 * counted apart, the class kept as the answer's note for the crash map), OTHER for any other
 * failure (a different bug, a side finding, never taken; its class is left in other_cls for
 * the engine). A MISMATCH is seen only against eager, so its cases run through the
 * reference. Workers crashing is the normal case here. It also keeps the latest SAME run, so
 * that the minimal case's full result needs no extra run. */
#include "steps.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "aotif/clock.h"

static af_verdict judge(af_mz_oracle *m, const af_case *c, const af_result *r, char *other,
                        size_t olen)
{
    if (r->cls == m->crash->cls &&
        (strcmp(r->signature, m->crash->signature) == 0 ||
         (r->cls == AF_RES_MISMATCH && af_mismatch_same(r->signature, m->crash->signature)))) {
        m->n_same++;
        m->have_same = 1;
        m->same_case = *c;
        m->same_result = *r;
        return AF_V_SAME;
    }
    if (af_case_equal(c, &m->start))
        snprintf(m->start_gave, sizeof m->start_gave, "%s", r->signature);
    switch (r->cls) {
    case AF_RES_OK:
        m->n_pass++;
        return AF_V_PASS;
    /* not a bug, and not this one: minimization treats them as passing, counted apart;
     * the class goes with the answer, for the crash map */
    case AF_RES_REFUSED:
        m->n_refused++;
        break;
    case AF_RES_TIMEOUT:
        m->n_timeout++;
        break;
    case AF_RES_OOM:
        m->n_oom++;
        break;
    default:
        m->n_other++;
        m->other_cls = r->cls;
        snprintf(other, olen, "%s", r->signature);
        return AF_V_OTHER;
    }
    snprintf(other, olen, "%s", af_class_name(r->cls));
    return AF_V_PASS;
}

af_verdict af_mz_ask(void *ctx, const af_case *c, char *other, size_t olen)
{
    af_mz_oracle *m = ctx;
    af_result r;
    if (m->crash->cls == AF_RES_MISMATCH && m->ref) { /* a mismatch is seen only against eager */
        if (af_ref_check(m->pool, m->ref, m->spec, c, &r, &m->last_rr, &m->fatal) != 0) {
            snprintf(other, olen, "%s", m->fatal.message);
            return AF_V_ERROR;
        }
        return judge(m, c, &r, other, olen);
    }
    if (af_pool_run(m->pool, c, &r, &m->fatal) != 0) {
        snprintf(other, olen, "%s", m->fatal.message);
        return AF_V_ERROR;
    }
    return judge(m, c, &r, other, olen);
}

/* --- progress ----------------------------------------------------------------------------- */

void af_mz_end_line(af_mz_oracle *m)
{
    if (m->drawn) {
        fputc('\n', stderr);
        m->drawn = 0;
    }
}

/* On a terminal: one line redrawn in place. Otherwise: a line per stage and improvement. */
void af_mz_progress(void *ctx, const char *stage, int64_t calls, const af_case *best)
{
    af_mz_oracle *m = ctx;
    char cs[512];
    double now = af_now_s();
    int improved = strcmp(stage, "improved") == 0;
    int new_stage = !improved && strcmp(stage, m->stage) != 0;
    if (!improved)
        snprintf(m->stage, sizeof m->stage, "%s", stage);
    af_case_str(m->spec, best, cs, sizeof cs);
    if (m->tty) {
        if (!new_stage && !improved && now - m->last_draw < 0.1)
            return;
        fprintf(stderr,
                "\r\033[Kaoti-minimize: %-9s %5" PRId64 " questions  best %s fill %s seed %" PRIu64
                "  %.1f s",
                m->stage, calls, cs, af_fill_name(best->fill), best->seed, now - m->t0);
        fflush(stderr);
        m->drawn = 1;
        m->last_draw = now;
    } else if (improved || (new_stage && (!strcmp(stage, "reproduce") || !strcmp(stage, "done")))) {
        fprintf(stderr,
                "aoti-minimize: %s %s: %" PRId64 " questions, best %s fill %s seed %" PRIu64
                " (%.1f s)\n",
                m->stage, improved ? "improved" : "stage", calls, cs, af_fill_name(best->fill),
                best->seed, now - m->t0);
    }
}

/* The crash map's cases: redrawn in place on a terminal, else a line every 64 cases. */
void af_mz_map_progress(void *ctx, int64_t done, int64_t total)
{
    af_mz_oracle *m = ctx;
    if (m->tty) {
        fprintf(stderr, "\r\033[Kaoti-minimize: crash map %" PRId64 "/%" PRId64 " cases  %.1f s",
                done, total, af_now_s() - m->t0);
        fflush(stderr);
        m->drawn = 1;
    } else if (done % 64 == 0 || done == total) {
        fprintf(stderr, "aoti-minimize: crash map: %" PRId64 " of %" PRId64 " cases (%.1f s)\n",
                done, total, af_now_s() - m->t0);
    }
}
