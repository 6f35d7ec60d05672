/* memo.c — the shared answer memo of aoti-minimize (see memo.h).
 *
 * Open addressing with linear probing on a 64-bit mix of the whole case, load kept under
 * one half, doubled when full: a few hundred answers per run, so simplicity wins. Texts
 * repeat (one signature answers many cases), so each distinct text is stored once and the
 * slots hold its index. */
#include "memo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct memo_slot {
    af_case key;
    int verdict; /* -1: empty slot */
    int text;    /* index into texts, -1: none */
} memo_slot;

struct af_memo {
    memo_slot *slot;
    size_t cap; /* power of two */
    size_t n;
    char **texts; /* distinct texts, owned */
    int n_texts, cap_texts;
};

static memo_slot *find(memo_slot *slot, size_t cap, const af_case *c)
{
    size_t mask = cap - 1;
    for (size_t i = (size_t)af_case_hash(c) & mask;; i = (i + 1) & mask)
        if (slot[i].verdict < 0 || af_case_equal(&slot[i].key, c))
            return &slot[i];
}

static memo_slot *new_slots(size_t cap)
{
    memo_slot *s = malloc(cap * sizeof *s);
    if (s)
        for (size_t i = 0; i < cap; i++)
            s[i].verdict = -1;
    return s;
}

af_memo *af_memo_new(void)
{
    af_memo *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cap = 256;
    if (!(m->slot = new_slots(m->cap))) {
        free(m);
        return NULL;
    }
    return m;
}

void af_memo_free(af_memo *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_texts; i++)
        free(m->texts[i]);
    free(m->texts);
    free(m->slot);
    free(m);
}

int af_memo_get(const af_memo *m, const af_case *c, const char **text)
{
    const memo_slot *s = find(m->slot, m->cap, c);
    if (text)
        *text = s->verdict >= 0 && s->text >= 0 ? m->texts[s->text] : "";
    return s->verdict;
}

/* The index of `t` in the text table, added when new; -2 when out of memory. */
static int intern(af_memo *m, const char *t)
{
    for (int i = 0; i < m->n_texts; i++)
        if (strcmp(m->texts[i], t) == 0)
            return i;
    if (m->n_texts == m->cap_texts) {
        int cap = m->cap_texts ? 2 * m->cap_texts : 8;
        char **grown = realloc(m->texts, (size_t)cap * sizeof *grown);
        if (!grown)
            return -2;
        m->texts = grown;
        m->cap_texts = cap;
    }
    char *copy = strdup(t);
    if (!copy)
        return -2;
    m->texts[m->n_texts] = copy;
    return m->n_texts++;
}

int af_memo_put(af_memo *m, const af_case *c, int verdict, const char *text)
{
    if (2 * (m->n + 1) > m->cap) { /* keep the load under one half */
        size_t cap = 2 * m->cap;
        memo_slot *bigger = new_slots(cap);
        if (!bigger)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].verdict >= 0)
                *find(bigger, cap, &m->slot[i].key) = m->slot[i];
        free(m->slot);
        m->slot = bigger;
        m->cap = cap;
    }
    int t = -1;
    if (text && *text && (t = intern(m, text)) == -2)
        return -1;
    memo_slot *s = find(m->slot, m->cap, c);
    if (s->verdict < 0)
        m->n++;
    s->key = *c;
    s->verdict = verdict;
    s->text = t;
    return 0;
}

size_t af_memo_count(const af_memo *m)
{
    return m->n;
}
