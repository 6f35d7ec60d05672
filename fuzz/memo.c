/* memo.c — a direct-mapped cache of failing cases; see memo.h. The key is the whole case,
 * compared exactly; the hash only picks the slot (linear probing over a few slots). */
#include "memo.h"

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

struct af_memo {
    int mask;
    memo_entry *e;
};

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
        if (af_case_equal(&e->key, c)) {
            memset(out, 0, sizeof *out);
            out->cls = e->cls;
            memcpy(out->signature, e->signature, sizeof out->signature);
            memcpy(out->message, e->message, sizeof e->message);
            out->exit_status = -1;
            return 1;
        }
    }
    return 0;
}
