/* mailbox_roundtrip.c — the hand-off's own cost: one case posted and one plain OK answer read
 * back through a worker mailbox (harness/ipc.c), with no model and no libtorch. A forked
 * child plays the worker: it waits for each case, takes it as the worker does and posts a
 * fixed OK result with one rank-2 float output, as healthy's. The parent times N exchanges
 * after 1,000 untimed ones. Against it, a bare ping-pong of two counters on two cache lines
 * (no payload, release and acquire only) gives this machine's floor for two cores passing a
 * line each way.
 *
 *   mailbox_roundtrip [N] [REPS]    prints one JSON line: µs per round trip, per rep */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aotif/clock.h"
#include "ipc.h"

static double mailbox_rep(int n)
{
    mailbox *mb = mmap(NULL, sizeof *mb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int sv[2];
    if (mb == MAP_FAILED || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
        perror("mailbox_roundtrip");
        exit(1);
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        af_result r;
        af_result_reset(&r);
        af_result_sign(&r);
        r.n_outputs = 1;
        r.outputs[0] = (af_output_summary){0};
        r.outputs[0].rank = 2, r.outputs[0].sizes[0] = 4, r.outputs[0].sizes[1] = 8;
        r.outputs[0].numel = 32, r.outputs[0].sum = 1.5;
        af_case c;
        memset(&c, 0, sizeof c);
        uint32_t seq = 0;
        for (;;) {
            seq = af_mailbox_wait_case(mb, seq);
            af_case_copy_in_use(&c, &mb->c);
            af_mailbox_post_result(mb, seq, &r);
        }
    }
    close(sv[1]);
    worker w;
    af_worker_clear(&w);
    w.mb = mb, w.fd = sv[0], w.pid = pid;
    af_case c;
    memset(&c, 0, sizeof c);
    c.n_syms = 2, c.values[0] = 4, c.values[1] = 8;
    af_result out;
    for (int i = 0; i < 1000; i++)
        af_mailbox_exchange(&w, &c, 0, af_now_s(), 1e-3, 5.0, &out);
    double t0 = af_now_s();
    for (int i = 0; i < n; i++)
        if (af_mailbox_exchange(&w, &c, 0, af_now_s(), 1e-3, 5.0, &out) != 1 ||
            out.n_outputs != 1 || out.outputs[0].numel != 32) {
            fprintf(stderr, "mailbox_roundtrip: a bad answer\n");
            exit(1);
        }
    double us = (af_now_s() - t0) / n * 1e6;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(sv[0]);
    munmap(mb, sizeof *mb);
    return us;
}

struct pingpong {
    _Alignas(64) uint32_t a;
    _Alignas(64) uint32_t b;
};

static double pingpong_rep(int n)
{
    struct pingpong *m =
        mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mailbox_roundtrip");
        exit(1);
    }
    memset(m, 0, sizeof *m);
    pid_t pid = fork();
    if (pid == 0) {
        uint32_t s = 0;
        for (;;) {
            while (__atomic_load_n(&m->a, __ATOMIC_ACQUIRE) == s)
                __builtin_ia32_pause();
            s = __atomic_load_n(&m->a, __ATOMIC_ACQUIRE);
            __atomic_store_n(&m->b, s, __ATOMIC_RELEASE);
        }
    }
    double t0 = 0;
    for (uint32_t i = 1; i <= (uint32_t)n + 1000; i++) {
        if (i == 1001)
            t0 = af_now_s();
        __atomic_store_n(&m->a, i, __ATOMIC_RELEASE);
        while (__atomic_load_n(&m->b, __ATOMIC_ACQUIRE) != i)
            __builtin_ia32_pause();
    }
    double us = (af_now_s() - t0) / n * 1e6;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    munmap(m, sizeof *m);
    return us;
}

int main(int argc, char **argv)
{
    char *end = "";
    long n = argc > 1 ? strtol(argv[1], &end, 10) : 200000;
    int bad = *end != '\0';
    long reps = argc > 2 ? strtol(argv[2], &end, 10) : 5;
    bad |= *end != '\0';
    if (bad || argc > 3 || n < 1 || n > 100000000 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: mailbox_roundtrip [N in 1..1e8] [REPS in 1..100]\n");
        return 2;
    }
    printf("{\"exchanges\": %ld, \"mailbox_us\": [", n);
    for (long r = 0; r < reps; r++)
        printf("%s%.3f", r ? ", " : "", mailbox_rep((int)n));
    printf("], \"pingpong_us\": [");
    for (long r = 0; r < reps; r++)
        printf("%s%.3f", r ? ", " : "", pingpong_rep((int)n));
    printf("]}\n");
    return 0;
}
