/* memo.c — a direct-mapped cache of failing cases, and the shape classes learnt from every
 * run; see memo.h. The case key is the whole case, compared exactly; the class key is the
 * fill and each symbol's value-class mask, compared exactly; hashes only pick the slot
 * (linear probing over a few slots). */
#include "memo.h"

#include "featmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBES 4

typedef struct memo_entry {
    int used;
    af_case key;
    af_class cls;
    char signature[256];
    char message[256];
} memo_entry;

typedef enum shape_state { SHAPE_LEARNING = 0, SHAPE_PREDICTED, SHAPE_MIXED } shape_state;

typedef struct shape_entry {
    int used;
    int n_syms;
    af_fill fill;
    uint32_t classes[AF_MAX_SYMS]; /* af_feat_value_classes of each symbol's value */
    shape_state state;
    int fails;           /* cases of the class that failed with `signature`, all of them */
    int64_t predictions; /* predictions made; every verify-th is run instead */
    af_class cls;
    char signature[256];
    char message[256];
} shape_entry;

#define SHAPE_SLOTS 4096

struct af_memo {
    int mask;
    memo_entry *e;
    shape_entry *shapes; /* SHAPE_SLOTS, allocated on the first af_memo_set_predict */
    int learn, verify;
    int predicted_classes, broken;
};

/* A remembered answer as a result (class, signature, message; nothing run): returns 1. */
static int answer(af_result *out, af_class cls, const char sig[256], const char msg[256])
{
    memset(out, 0, sizeof *out);
    out->cls = cls;
    memcpy(out->signature, sig, 256);
    memcpy(out->message, msg, 256);
    out->exit_status = -1;
    return 1;
}

af_memo *af_memo_new(int slots)
{
    int n = 16;
    while (n < slots && n < (1 << 24))
        n <<= 1;
    af_memo *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->e = calloc((size_t)n, sizeof *m->e);
    if (!m->e) {
        free(m);
        return NULL;
    }
    m->mask = n - 1;
    return m;
}

void af_memo_free(af_memo *m)
{
    if (m) {
        free(m->shapes);
        free(m->e);
        free(m);
    }
}

void af_memo_put(af_memo *m, const af_case *c, const af_result *r)
{
    /* A timeout is not a fact about the case: a stalled worker (stopped, starved, a slow
     * machine) times out on whatever it runs. Remembered, one stall would be replayed for
     * every later draw of that case, and the case never run again. */
    if (r->cls == AF_RES_TIMEOUT)
        return;
    uint64_t h = af_case_hash(c);
    memo_entry *slot = &m->e[h & (uint64_t)m->mask];
    for (int p = 0; p < PROBES; p++) {
        memo_entry *e = &m->e[(h + (uint64_t)p) & (uint64_t)m->mask];
        if (!e->used || af_case_equal(&e->key, c)) {
            slot = e;
            break;
        }
    }
    memset(slot, 0, sizeof *slot);
    slot->used = 1;
    slot->key = *c;
    slot->cls = r->cls;
    snprintf(slot->signature, sizeof slot->signature, "%s", r->signature);
    snprintf(slot->message, sizeof slot->message, "%.*s", (int)sizeof slot->message - 1,
             r->message); /* the first line(s) are enough for a repeat */
}

int af_memo_get(const af_memo *m, const af_case *c, af_result *out)
{
    uint64_t h = af_case_hash(c);
    for (int p = 0; p < PROBES; p++) {
        const memo_entry *e = &m->e[(h + (uint64_t)p) & (uint64_t)m->mask];
        if (!e->used)
            return 0;
        if (af_case_equal(&e->key, c))
            return answer(out, e->cls, e->signature, e->message);
    }
    return 0;
}

/* ---- shape classes -------------------------------------------------------------------- */

void af_memo_set_predict(af_memo *m, int learn, int verify)
{
    if (learn > 0 && !m->shapes) {
        m->shapes = calloc(SHAPE_SLOTS, sizeof *m->shapes);
        if (!m->shapes) /* prediction is an optimisation: without memory, none */
            learn = 0;
    }
    m->learn = learn > 0 ? learn : 0;
    m->verify = verify >= 1 ? verify : 1;
}

static void shape_key(const af_spec *spec, const af_case *c, shape_entry *k)
{
    memset(k, 0, sizeof *k);
    k->n_syms = c->n_syms < spec->n_syms ? c->n_syms : spec->n_syms;
    if (k->n_syms < 0)
        k->n_syms = 0;
    k->fill = c->fill;
    for (int i = 0; i < k->n_syms; i++)
        k->classes[i] = af_feat_value_classes(&spec->syms[i], c->values[i]);
}

static int shape_same(const shape_entry *a, const shape_entry *b)
{
    return a->n_syms == b->n_syms && a->fill == b->fill &&
           memcmp(a->classes, b->classes, (size_t)a->n_syms * sizeof a->classes[0]) == 0;
}

static uint64_t shape_hash(const shape_entry *k)
{
    af_case h; /* the case hash over the class masks: the same mixing, another key */
    memset(&h, 0, sizeof h);
    h.n_syms = k->n_syms;
    h.fill = k->fill;
    for (int i = 0; i < k->n_syms; i++)
        h.values[i] = (int64_t)k->classes[i];
    return af_case_hash(&h);
}

/* The class's entry; with `make`, a new one (a full neighbourhood overwrites its first
 * slot: that class starts learning again). NULL when absent and not made. */
static shape_entry *shape_find(af_memo *m, const shape_entry *k, int make)
{
    uint64_t h = shape_hash(k);
    shape_entry *first = &m->shapes[h & (SHAPE_SLOTS - 1)];
    for (int p = 0; p < PROBES; p++) {
        shape_entry *e = &m->shapes[(h + (uint64_t)p) & (SHAPE_SLOTS - 1)];
        if (e->used && shape_same(e, k))
            return e;
        if (!e->used) {
            if (!make)
                return NULL;
            first = e;
            break;
        }
    }
    if (!make)
        return NULL;
    if (first->used && first->state == SHAPE_PREDICTED)
        m->predicted_classes--;
    *first = *k;
    first->used = 1;
    return first;
}

/* Failures that end the worker: the ones a prediction saves a worker for. */
static int kills_worker(af_class cls)
{
    return cls == AF_RES_SIGNAL || cls == AF_RES_DEVICE_FAULT;
}

void af_memo_note_run(af_memo *m, const af_spec *spec, const af_case *c, const af_result *r)
{
    if (!m->learn || r->cls == AF_RES_TIMEOUT || r->cls == AF_RES_REFUSED)
        return;
    shape_entry k;
    shape_key(spec, c, &k);
    shape_entry *e = shape_find(m, &k, 1);
    if (e->state == SHAPE_MIXED)
        return;
    int same = kills_worker(r->cls) &&
               (e->fails == 0 || (e->cls == r->cls && strcmp(e->signature, r->signature) == 0));
    if (!same) {
        if (e->state == SHAPE_PREDICTED) {
            m->predicted_classes--;
            m->broken++;
        }
        e->state = SHAPE_MIXED;
        return;
    }
    if (e->fails == 0) {
        e->cls = r->cls;
        snprintf(e->signature, sizeof e->signature, "%s", r->signature);
        snprintf(e->message, sizeof e->message, "%.*s", (int)sizeof e->message - 1, r->message);
    }
    if (e->fails < INT32_MAX)
        e->fails++;
    if (e->state == SHAPE_LEARNING && e->fails >= m->learn) {
        e->state = SHAPE_PREDICTED;
        m->predicted_classes++;
    }
}

int af_memo_predict(af_memo *m, const af_spec *spec, const af_case *c, af_result *out)
{
    if (!m->learn)
        return 0;
    shape_entry k;
    shape_key(spec, c, &k);
    shape_entry *e = shape_find(m, &k, 0);
    if (!e || e->state != SHAPE_PREDICTED)
        return 0;
    if (++e->predictions % m->verify == 0)
        return 0; /* this one runs: af_memo_note_run confirms or breaks the class */
    return answer(out, e->cls, e->signature, e->message);
}

int af_memo_predicted_classes(const af_memo *m)
{
    return m->predicted_classes;
}

int af_memo_broken_predictions(const af_memo *m)
{
    return m->broken;
}
