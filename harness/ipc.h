/* ipc.h — how the tool, the zygote and the workers talk; internal to the harness (pool.c,
 * zygote.c, crash_report.c).
 *
 * Two channels. Control messages (msg_*) go over SOCK_SEQPACKET sockets: the tool's ctl
 * socket to the zygote (SPAWN, SPAWNED with the worker's descriptors over SCM_RIGHTS,
 * EXITED, QUIT) and each worker's own socket (HELLO once it is loaded; then it stays open
 * only to say, by hanging up, that the worker is gone). Cases and results go through the
 * worker's mailbox, a page of shared memory, with a futex to sleep on (see `mailbox`). */
#ifndef AOTIF_IPC_H
#define AOTIF_IPC_H

#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "aotif/case.h"
#include "aotif/error.h"
#include "aotif/result.h"
#include "aotif/runtime.h"

enum msg_type {
    MSG_HELLO = 1,
    MSG_SPAWN,
    MSG_SPAWNED,
    MSG_EXITED,
    MSG_QUIT,
};

typedef struct msg_hello {
    uint32_t type;
    int ok;
    int errcode;
    char error[512];
    char versions[512];
    double t_enter;                /* the worker's first instruction (CLOCK_MONOTONIC) */
    double t_torch;                /* loading libtorch, when the zygote had not */
    double t_load[AF_LOAD_PHASES]; /* af_runtime_open's phases */
    double t_warm;                 /* the warm-up case, when it ran */
} msg_hello;

typedef struct msg_ctl {
    uint32_t type;
    pid_t pid;
    int status;
} msg_ctl;

/* MSG_SPAWN: msg_ctl's fields (status: 1 for a triage worker), then the warm-up case, which
 * the zygote writes into the new worker's mailbox before it forks (opts.warm_up) */
typedef struct msg_spawn {
    msg_ctl h;
    int warm;
    af_case c;
} msg_spawn;

/* The case/result mailbox: a page of shared memory per worker (a memfd the zygote makes
 * and hands to the tool with the worker's socket). A case is posted by bumping case_seq,
 * a result by setting result_seq to it; each side spins briefly on the other's counter and
 * then sleeps on it in a futex, woken only when it said it sleeps (the *_waiting flags,
 * checked after the counter is bumped, with sequentially consistent atomics on both
 * sides, so no wake-up is lost). No system call is made while both sides are busy.
 *
 * The fields are laid out by who writes them, so that a case crosses cores in as few cache
 * lines as can hold it: the tool's line holds case_seq and the case's head (its count,
 * fill, seed and first values: a case of up to four symbols is that one line, which the
 * worker's spin has just fetched), the worker's line holds result_seq and a plain result
 * (OK, no text, no frames: a healthy model's every case) with its outputs' summaries
 * packed right after it (a rank-2 float output takes 26 bytes of the 40 left on that line,
 * where its af_output_summary is 104). Only a result with text, or outputs that do not
 * pack, goes through the full af_result `r`, several KB. What either
 * side writes and the other reads only after a death (taken_seq) or once per case
 * (quiet_seq) lies on a third line, off the two the sides spin on. */
#define AF_MB_LINE 64
/* the packed outputs of a plain result: the rest of result_seq's line and 11 lines more */
#define AF_MB_PLAIN_BYTES (12 * AF_MB_LINE - 24)

typedef struct mailbox {
    /* written by the tool */
    _Alignas(AF_MB_LINE) uint32_t case_seq; /* bumped by the tool when c holds a new case */
    uint32_t dump_outputs; /* copy this case's outputs into the pool's output arena */
    uint32_t tool_waiting; /* the tool sleeps on result_seq */
    uint32_t warm_ready;   /* set by the tool when warm holds a warm-up case */
    af_case c;             /* only its part in use is copied (af_case_copy_in_use) */
    /* written by the worker */
    _Alignas(AF_MB_LINE) uint32_t result_seq; /* set to case_seq when the result is in */
    uint32_t worker_waiting;                  /* the worker sleeps on case_seq */
    uint8_t plain; /* 1: the result is OK with no text (plain_*), 2: the same signed "OK"
                      (as af_result_sign signs every OK run), 0: it is r */
    uint8_t plain_n_outputs;
    uint16_t plain_len; /* bytes of plain_bytes in use */
    int32_t plain_exit_status;
    double plain_run_seconds;
    /* the outputs' summaries packed (af_mailbox_pack_outputs): what a summary holds and no
     * more, so that a small model's outputs ride on result_seq's own line */
    unsigned char plain_bytes[AF_MB_PLAIN_BYTES];
    /* written by the worker, read by the tool after a death or once per case */
    _Alignas(AF_MB_LINE) uint32_t taken_seq; /* set to case_seq once the worker has the case */
    uint32_t quiet_seq;  /* set to result_seq by the worker, after the result, when its
                            stdout/stderr pipe held nothing unread: the tool need not read
                            the pipe before the next case */
    uint32_t warm_state; /* the worker: 1 running the warm-up case, 2 done */
    af_case warm;
    af_result r;
} mailbox;

/* A bare system call: also what the crash handler wakes the tool with (crash_report.c). */
static inline long af_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* The tool's end of one worker. The descriptors and the mapping are owned by the slot:
 * af_worker_close releases them (the process itself is the caller's to kill and reap). */
typedef struct worker {
    pid_t pid;       /* 0 when there is none */
    mailbox *mb;     /* shared with the worker */
    uint32_t seq;    /* last case posted */
    int fd;          /* HELLO and liveness socket */
    int errfd;       /* read end of its stderr */
    int ready;       /* HELLO received */
    int64_t n_cases; /* cases posted to it */
    double t_request;
} worker;

/* An empty slot: no process, no descriptors. */
void af_worker_clear(worker *w);
/* Unmap the mailbox, close the descriptors, leave the slot empty. */
void af_worker_close(worker *w);

/* Send msg with up to 3 descriptors (SCM_RIGHTS): 0, or -1. EINTR-safe. */
int af_ipc_send_fds(int sock, const void *msg, size_t len, const int *fds, int nfds);
/* Receive one message and up to nfds (<= 3) descriptors, O_CLOEXEC; the missing ones are
 * -1. The descriptors are the caller's to close. Returns recvmsg's count. */
ssize_t af_ipc_recv_fds(int sock, void *msg, size_t len, int *fds, int nfds);
ssize_t af_ipc_send(int fd, const void *msg, size_t len);
/* Wait for fd to be readable: 1 readable (or hung up), 0 timeout, -1 error. */
int af_ipc_wait_readable(int fd, double timeout_s);
/* HELLO: e NULL for "loaded" (with versions and the load's times, each may be NULL), else
 * the error that stopped the load. */
void af_ipc_send_hello(int fd, const af_error *e, const char *versions, const msg_hello *times);

/* The longest the tool spins for a worker's answer before blocking in the futex:
 * $AOTI_FUZZ_TOOL_SPIN_US (0: block at once), for measuring what the tool's spin costs the
 * worker's run beside it. *cap_s < 0 when unset (the pool's own choice, see post_case);
 * AF_E_INPUT for a value that is not a number of microseconds in [0, 1e6]. */
int af_ipc_tool_spin_cap(double *cap_s, af_error *err);

/* How long a side spins for the other's message before blocking; $AOTI_FUZZ_SPIN_US. */
double af_ipc_spin_seconds(void);
#define SPIN_S af_ipc_spin_seconds()

/* The worker: wait for the next case (spin, then sleep on the counter). Returns the new
 * case_seq. */
uint32_t af_mailbox_wait_case(mailbox *mb, uint32_t last);
/* Whether r goes through the plain path: OK, every text empty but an OK signature, no
 * frames, no signal. 0: not; 1: plain with no signature; 2: plain, signed "OK". */
int af_mailbox_result_is_plain(const af_result *r);
/* Pack the n output summaries o[] into buf (cap bytes): per output its rank, a flags byte,
 * the sizes in use, then only what the sizes do not already say (numel when it is not
 * their product, the NaN and Inf counts when either is not 0, the sum when its bits are not
 * 0). Returns the bytes written, or -1 when they do not fit or a summary does not pack (a
 * rank outside [0, 8], a size set past the rank): such a result takes the full path. */
int af_mailbox_pack_outputs(const af_output_summary *o, int n, unsigned char *buf, size_t cap);
/* Unpack len bytes of af_mailbox_pack_outputs into n summaries, each as it was packed
 * (every byte past the fields in use 0). Returns 0, or -1 when the bytes are not n of them. */
int af_mailbox_unpack_outputs(const unsigned char *buf, size_t len, int n, af_output_summary *o);
/* The worker: post res as the result of case seq, and wake the tool if it sleeps on it. */
void af_mailbox_post_result(mailbox *mb, uint32_t seq, const af_result *res);
/* The tool: the posted result into out, as af_result_copy(out, the worker's result) would
 * leave it (the fields not in use are left alone). A plain answer whose packed outputs do
 * not decode (the mailbox written over from inside the worker) reads as WORKER_LOST, with a
 * message saying so. */
void af_mailbox_read_result(const mailbox *mb, af_result *out);
/* The tool: post case c to worker w (dump: ask for its outputs in the arena) and wait for
 * its result: spin for `spin` seconds, then sleep in short slices, looking in between
 * whether the worker is still alive. Both times count from t_post, the caller's clock
 * (af_now_s) just before the call: one clock read per case fewer. Returns 1 with *out filled, 0
 * when no result came within timeout_s, -1 when the worker died without posting a result. */
int af_mailbox_exchange(worker *w, const af_case *c, int dump, double t_post, double spin,
                        double timeout_s, af_result *out);
/* af_mailbox_exchange's two halves: the post (w->seq becomes the case's number), and the wait
 * for the result of the case posted last. */
void af_mailbox_post_case(worker *w, const af_case *c, int dump);
int af_mailbox_await(worker *w, double t_post, double spin, double timeout_s, af_result *out);

#endif
