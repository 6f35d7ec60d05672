/* memo.c — a direct-mapped cache of failing cases, and the shape classes learnt from every
 * run; see memo.h. The case key is the whole case, compared exactly; a class key is the
 * fill and each symbol's value-class mask (a whole class), or the fill and one symbol's
 * mask (a one-symbol class: `pin` names the symbol, the other masks are 0), compared
 * exactly; hashes only pick the slot (linear probing over a few slots). Every run that
 * teaches updates its whole class and, with two or more symbols, each of its one-symbol
 * classes, so an outcome that makes a whole class mixed makes its one-symbol classes mixed
 * too. */
#include "memo.h"

#include "featmap.h"

#include <stddef.h>
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
    int pin; /* -1: a whole class; i: the one-symbol class of symbol i (other masks 0) */
    af_fill fill;
    uint32_t classes[AF_MAX_SYMS]; /* af_feat_value_classes of each symbol's value */
    shape_state state;
    int fails;           /* cases of the class that failed with `signature`, all of them */
    uint64_t others;     /* one-symbol class: the other symbols' classes at the first failure */
    int varied;          /* ... and a later failure came with other classes of the others */
    int64_t predictions; /* predictions made; every verify-th is run instead */
    af_class cls;
    char signature[256];
    char message[256];
} shape_entry;

#define SHAPE_SLOTS 4096

/* An OK case: its key with n_syms values and its outputs' summaries, one allocation. The
 * signature is not kept: an OK result's is its class alone (af_result_sign). */
typedef struct ok_entry {
    int n_outputs;
    af_output_summary *outputs; /* into the same allocation, after the key */
    af_case key;                /* last: only key.n_syms values are allocated */
} ok_entry;

struct af_memo {
    int ok_mask; /* the OK table: ok_mask + 1 slots, NULL while off */
    ok_entry **ok;
    int ok_n;
    int mask;
    memo_entry *e;
    uint8_t *used;       /* e[i].used, packed: a lookup that misses (most of them) reads one byte
                            here instead of a cold kilobyte entry */
    shape_entry *shapes; /* SHAPE_SLOTS, allocated on the first af_memo_set_predict */
    int learn, verify;
    int predicted_classes, broken;
    int pinned_classes;   /* of predicted_classes, the one-symbol ones */
    int64_t by_pinned;    /* predictions made from a one-symbol class */
    af_case last;         /* the case last keyed, and its key: af_memo_predict and then */
    shape_entry last_key; /* af_memo_note_run of one case compute its classes once */
    int last_valid;
};

/* A remembered answer as a result (class, signature, message; nothing run): returns 1. */
static int answer(af_result *out, af_class cls, const char sig[256], const char msg[256])
{
    af_result_reset(out);
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
    m->used = calloc((size_t)n, 1);
    if (!m->e || !m->used) {
        free(m->e);
        free(m->used);
        free(m);
        return NULL;
    }
    m->mask = n - 1;
    return m;
}

void af_memo_free(af_memo *m)
{
    if (m) {
        for (int i = 0; m->ok && i <= m->ok_mask; i++)
            free(m->ok[i]);
        free(m->ok);
        free(m->shapes);
        free(m->e);
        free(m->used);
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
    uint64_t at = h & (uint64_t)m->mask;
    for (int p = 0; p < PROBES; p++) {
        uint64_t i = (h + (uint64_t)p) & (uint64_t)m->mask;
        if (!m->used[i] || af_case_equal(&m->e[i].key, c)) {
            at = i;
            break;
        }
    }
    memo_entry *slot = &m->e[at];
    memset(slot, 0, sizeof *slot);
    slot->used = 1;
    m->used[at] = 1;
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
        uint64_t i = (h + (uint64_t)p) & (uint64_t)m->mask;
        if (!m->used[i])
            return 0;
        const memo_entry *e = &m->e[i];
        if (af_case_equal(&e->key, c))
            return answer(out, e->cls, e->signature, e->message);
    }
    return 0;
}

/* ---- cases that ran OK ----------------------------------------------------------------- */

int af_memo_ok_enable(af_memo *m, int slots)
{
    if (m->ok || slots <= 0)
        return 0;
    int n = 16;
    while (n < slots && n < (1 << 24))
        n <<= 1;
    if (!(m->ok = calloc((size_t)n, sizeof *m->ok)))
        return -1;
    m->ok_mask = n - 1;
    return 0;
}

void af_memo_put_ok(af_memo *m, const af_case *c, const af_result *r)
{
    if (!m->ok || r->cls != AF_RES_OK || c->n_syms < 0 || c->n_syms > AF_MAX_SYMS ||
        r->n_outputs < 0 || r->n_outputs > AF_MAX_OUTPUTS)
        return;
    uint64_t h = af_case_hash(c);
    uint64_t at = h & (uint64_t)m->ok_mask;
    for (int p = 0; p < PROBES; p++) {
        uint64_t i = (h + (uint64_t)p) & (uint64_t)m->ok_mask;
        if (!m->ok[i] || af_case_equal(&m->ok[i]->key, c)) {
            at = i;
            break;
        }
    }
    size_t key_end = offsetof(ok_entry, key) + offsetof(af_case, values) +
                     (size_t)c->n_syms * sizeof c->values[0];
    size_t out_at =
        (key_end + _Alignof(af_output_summary) - 1) & ~(size_t)(_Alignof(af_output_summary) - 1);
    ok_entry *e = malloc(out_at + (size_t)r->n_outputs * sizeof *r->outputs);
    if (!e) /* an optimisation: without memory, the case runs again */
        return;
    e->n_outputs = r->n_outputs;
    e->outputs = (af_output_summary *)(void *)((char *)e + out_at);
    af_case_copy_in_use(&e->key, c);
    memcpy(e->outputs, r->outputs, (size_t)r->n_outputs * sizeof *r->outputs);
    if (m->ok[at])
        free(m->ok[at]);
    else
        m->ok_n++;
    m->ok[at] = e;
}

int af_memo_get_ok(const af_memo *m, const af_case *c, af_result *out)
{
    if (!m->ok)
        return 0;
    uint64_t h = af_case_hash(c);
    for (int p = 0; p < PROBES; p++) {
        const ok_entry *e = m->ok[(h + (uint64_t)p) & (uint64_t)m->ok_mask];
        if (!e)
            return 0;
        if (af_case_equal(&e->key, c)) {
            af_result_reset(out);
            af_result_sign(out); /* "OK", as the run signed it */
            out->n_outputs = e->n_outputs;
            memcpy(out->outputs, e->outputs, (size_t)e->n_outputs * sizeof *e->outputs);
            return 1;
        }
    }
    return 0;
}

int af_memo_ok_size(const af_memo *m)
{
    return m->ok_n;
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

/* The whole class of c (pin -1). The spec is the memo's one spec for its lifetime, so the
 * case alone says whether the key cached from the last call still holds. */
static void shape_key(af_memo *m, const af_spec *spec, const af_case *c, shape_entry *k)
{
    if (m->last_valid && af_case_equal(&m->last, c)) {
        *k = m->last_key;
        return;
    }
    memset(k, 0, sizeof *k);
    k->n_syms = c->n_syms < spec->n_syms ? c->n_syms : spec->n_syms;
    if (k->n_syms < 0)
        k->n_syms = 0;
    k->pin = -1;
    k->fill = c->fill;
    for (int i = 0; i < k->n_syms; i++)
        k->classes[i] = af_feat_value_classes(&spec->syms[i], c->values[i]);
    m->last = *c;
    m->last_key = *k;
    m->last_valid = 1;
}

/* The one-symbol class of symbol i within the whole class `whole`. */
static void pin_key(const shape_entry *whole, int i, shape_entry *k)
{
    memset(k, 0, sizeof *k);
    k->n_syms = whole->n_syms;
    k->pin = i;
    k->fill = whole->fill;
    k->classes[i] = whole->classes[i];
}

static int shape_same(const shape_entry *a, const shape_entry *b)
{
    return a->n_syms == b->n_syms && a->pin == b->pin && a->fill == b->fill &&
           memcmp(a->classes, b->classes, (size_t)a->n_syms * sizeof a->classes[0]) == 0;
}

/* The case hash over the class masks (the same mixing, another key); `skip` leaves one
 * symbol out (-1: none), `pin` goes in as one more value. */
static uint64_t classes_hash(const shape_entry *k, int skip)
{
    af_case h;
    memset(&h, 0, sizeof h);
    h.n_syms = k->n_syms < AF_MAX_SYMS ? k->n_syms + 1 : k->n_syms;
    h.fill = k->fill;
    for (int i = 0; i < k->n_syms; i++)
        h.values[i] = i == skip ? 0 : (int64_t)k->classes[i];
    if (k->n_syms < AF_MAX_SYMS)
        h.values[k->n_syms] = k->pin;
    return af_case_hash(&h);
}

static uint64_t shape_hash(const shape_entry *k)
{
    return classes_hash(k, -1);
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
    if (first->used && first->state == SHAPE_PREDICTED) {
        m->predicted_classes--;
        m->pinned_classes -= first->pin >= 0;
    }
    *first = *k;
    first->used = 1;
    return first;
}

/* Failures that end the worker: the ones a prediction saves a worker for. */
static int kills_worker(af_class cls)
{
    return cls == AF_RES_SIGNAL || cls == AF_RES_DEVICE_FAULT;
}

/* What one run teaches the class entry e; `others` is the hash of the run's whole class
 * without e's symbol (for a one-symbol class: did the failures vary the other symbols?). */
static void learn_run(af_memo *m, shape_entry *e, const af_result *r, uint64_t others)
{
    if (e->state == SHAPE_MIXED)
        return;
    int same = kills_worker(r->cls) &&
               (e->fails == 0 || (e->cls == r->cls && strcmp(e->signature, r->signature) == 0));
    if (!same) {
        if (e->state == SHAPE_PREDICTED) {
            m->predicted_classes--;
            m->pinned_classes -= e->pin >= 0;
            m->broken++;
        }
        e->state = SHAPE_MIXED;
        return;
    }
    if (e->fails == 0) {
        e->cls = r->cls;
        snprintf(e->signature, sizeof e->signature, "%s", r->signature);
        snprintf(e->message, sizeof e->message, "%.*s", (int)sizeof e->message - 1, r->message);
        e->others = others;
    } else if (others != e->others) {
        e->varied = 1;
    }
    if (e->fails < INT32_MAX)
        e->fails++;
    /* A one-symbol class also needs failures with the other symbols in two classes or more:
     * evidence that they do not matter, not only that the one symbol is always there. */
    if (e->state == SHAPE_LEARNING && e->fails >= m->learn && (e->pin < 0 || e->varied)) {
        e->state = SHAPE_PREDICTED;
        m->predicted_classes++;
        m->pinned_classes += e->pin >= 0;
    }
}

void af_memo_note_run(af_memo *m, const af_spec *spec, const af_case *c, const af_result *r)
{
    if (!m->learn || r->cls == AF_RES_TIMEOUT || r->cls == AF_RES_REFUSED)
        return;
    shape_entry k, p;
    shape_key(m, spec, c, &k);
    learn_run(m, shape_find(m, &k, 1), r, 0);
    for (int i = 0; k.n_syms >= 2 && i < k.n_syms; i++) {
        pin_key(&k, i, &p);
        learn_run(m, shape_find(m, &p, 1), r, classes_hash(&k, i));
    }
}

/* A predicted entry's answer, or 0 on its every verify-th case (which runs: af_memo_note_run
 * confirms or breaks the class). */
static int predict_from(af_memo *m, shape_entry *e, af_result *out)
{
    if (++e->predictions % m->verify == 0)
        return 0;
    m->by_pinned += e->pin >= 0;
    return answer(out, e->cls, e->signature, e->message);
}

int af_memo_predict(af_memo *m, const af_spec *spec, const af_case *c, af_result *out)
{
    if (!m->learn)
        return 0;
    shape_entry k, p;
    shape_key(m, spec, c, &k);
    shape_entry *e = shape_find(m, &k, 0);
    if (e && e->state == SHAPE_MIXED)
        return 0; /* this very class has done something else: no symbol decides it alone */
    if (e && e->state == SHAPE_PREDICTED)
        return predict_from(m, e, out);
    for (int i = 0; k.n_syms >= 2 && i < k.n_syms; i++) {
        pin_key(&k, i, &p);
        e = shape_find(m, &p, 0);
        if (e && e->state == SHAPE_PREDICTED)
            return predict_from(m, e, out);
    }
    return 0;
}

int af_memo_predicted_classes(const af_memo *m)
{
    return m->predicted_classes;
}

int af_memo_broken_predictions(const af_memo *m)
{
    return m->broken;
}

int af_memo_pinned_classes(const af_memo *m)
{
    return m->pinned_classes;
}

int64_t af_memo_pinned_predictions(const af_memo *m)
{
    return m->by_pinned;
}
