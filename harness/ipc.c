/* ipc.c — the messages, the shared-memory mailbox and the futex; see ipc.h.
 *
 * Both ends of each channel live here: the socket messages (with descriptors passed over
 * SCM_RIGHTS), the worker's wait for a case and the tool's post-and-wait for its result.
 * The waits spin first and sleep in a futex only when the other side is slow: a blocked
 * wait costs a wake-up that can be longer than a small model's whole run. */
#include "ipc.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "aotif/clock.h"

/* ---- the tool's end of a worker -------------------------------------------------------- */

void af_worker_clear(worker *w)
{
    memset(w, 0, sizeof *w);
    w->fd = w->errfd = -1;
}

void af_worker_close(worker *w)
{
    if (w->mb)
        munmap(w->mb, sizeof(mailbox));
    if (w->fd >= 0)
        close(w->fd);
    if (w->errfd >= 0)
        close(w->errfd);
    af_worker_clear(w);
}

/* ---- the control messages -------------------------------------------------------------- */

int af_ipc_send_fds(int sock, const void *msg, size_t len, const int *fds, int nfds)
{
    struct iovec iov = {(void *)msg, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 3)];
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds) {
        memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

ssize_t af_ipc_recv_fds(int sock, void *msg, size_t len, int *fds, int nfds)
{
    struct iovec iov = {msg, len};
    char cbuf[CMSG_SPACE(sizeof(int) * 3)];
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    for (int i = 0; i < nfds; i++)
        fds[i] = -1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    if (n > 0 && cm && cm->cmsg_type == SCM_RIGHTS) {
        int got = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)(got < nfds ? got : nfds));
    }
    return n;
}

ssize_t af_ipc_send(int fd, const void *msg, size_t len)
{
    ssize_t n;
    do
        n = send(fd, msg, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

int af_ipc_wait_readable(int fd, double timeout_s)
{
    double end = af_now_s() + timeout_s;
    for (;;) {
        double left = end - af_now_s();
        if (left < 0)
            left = 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000 + 0.999));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        return 1;
    }
}

void af_ipc_send_hello(int fd, const af_error *e, const char *versions, const msg_hello *times)
{
    msg_hello h = {0};
    if (times) {
        h.t_enter = times->t_enter;
        h.t_torch = times->t_torch;
        h.t_warm = times->t_warm;
        memcpy(h.t_load, times->t_load, sizeof h.t_load);
    }
    h.type = MSG_HELLO;
    h.ok = e == NULL;
    if (e) {
        h.errcode = e->code;
        snprintf(h.error, sizeof h.error, "%s", e->message);
    }
    if (versions)
        snprintf(h.versions, sizeof h.versions, "%s", versions);
    af_ipc_send(fd, &h, sizeof h);
}

/* ---- the mailbox ----------------------------------------------------------------------- */

double af_ipc_spin_seconds(void)
{
    static double v = -1;
    if (v < 0) {
        const char *e = getenv("AOTI_FUZZ_SPIN_US");
        v = e && *e ? atof(e) * 1e-6 : 50e-6;
    }
    return v;
}

int af_ipc_tool_spin_cap(double *cap_s, af_error *err)
{
    *cap_s = -1;
    const char *e = getenv("AOTI_FUZZ_TOOL_SPIN_US");
    if (!e || !*e)
        return 0;
    char *end;
    errno = 0;
    double us = strtod(e, &end);
    if (*end || errno || !(us >= 0 && us <= 1e6))
        return af_error_set(err, AF_E_INPUT,
                            "AOTI_FUZZ_TOOL_SPIN_US='%s': not a number of microseconds in [0, "
                            "1000000]",
                            e);
    *cap_s = us * 1e-6;
    return 0;
}

/* One step of a spin wait on the other side's counter. Mostly a CPU pause (a few dozen ns):
 * a sched_yield on every step costs a system call, up to a microsecond on a virtual
 * machine, between the message landing and this side seeing it. Every 256th step still
 * yields, so two sides sharing one core (more jobs than cores) do not starve each other;
 * every 32nd step reads the clock (returned in *now), otherwise *now is left as it was. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline void spin_step(unsigned *step, double *now)
{
    unsigned k = ++*step;
    if ((k & 255) == 0)
        sched_yield();
    else
        cpu_relax();
    if ((k & 31) == 0)
        *now = af_now_s();
}

uint32_t af_mailbox_wait_case(mailbox *mb, uint32_t last)
{
    double t0 = af_now_s(), now = t0;
    unsigned step = 0;
    uint32_t seq;
    while ((seq = LOAD(&mb->case_seq)) == last) {
        if (now - t0 < SPIN_S) {
            spin_step(&step, &now);
            continue;
        }
        STORE(&mb->worker_waiting, 1);
        if (LOAD(&mb->case_seq) == last)
            af_futex(&mb->case_seq, FUTEX_WAIT, last, NULL);
        STORE(&mb->worker_waiting, 0);
    }
    return seq;
}

/* 0: r goes through the full copy; 1: plain, unsigned; 2: plain, signed as every OK run is
 * (its class alone, af_result_sign), which the reader writes back. Whether its outputs pack
 * into the mailbox is the poster's test (af_mailbox_pack_outputs). */
int af_mailbox_result_is_plain(const af_result *r)
{
    if (!(r->cls == AF_RES_OK && !r->message[0] && !r->cuda_error[0] && !r->kernel[0] &&
          !r->triage[0] && r->n_frames == 0 && r->signo == 0 && r->fault_addr == 0 &&
          r->n_outputs >= 0 && r->n_outputs <= AF_MAX_OUTPUTS))
        return 0;
    if (!r->signature[0])
        return 1;
    return strcmp(r->signature, af_class_name(AF_RES_OK)) == 0 ? 2 : 0;
}

enum { PACK_NUMEL = 1, PACK_NONFINITE = 2, PACK_SUM = 4 };
#define SUMMARY_RANKS ((int)(sizeof((af_output_summary *)0)->sizes / sizeof(int64_t)))

/* the bytes of one packed output after its rank and flags bytes */
static size_t packed_body_bytes(int rank, int flags)
{
    return 8 * (size_t)rank + (flags & PACK_NUMEL ? 8 : 0) + (flags & PACK_NONFINITE ? 16 : 0) +
           (flags & PACK_SUM ? 8 : 0);
}

/* what the sizes say numel is: their product (wrapping, the same on both sides) */
static int64_t sizes_product(const int64_t *sizes, int rank)
{
    uint64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (uint64_t)sizes[d];
    return (int64_t)n;
}

int af_mailbox_pack_outputs(const af_output_summary *o, int n, unsigned char *buf, size_t cap)
{
    size_t at = 0;
    for (int i = 0; i < n; i++, o++) {
        if (o->rank < 0 || o->rank > SUMMARY_RANKS)
            return -1;
        for (int d = o->rank; d < SUMMARY_RANKS; d++)
            if (o->sizes[d])
                return -1;
        static const double zero = 0;
        int flags = (o->numel != sizes_product(o->sizes, o->rank) ? PACK_NUMEL : 0) |
                    (o->n_nan || o->n_inf ? PACK_NONFINITE : 0) |
                    (memcmp(&o->sum, &zero, sizeof zero) ? PACK_SUM : 0);
        if (2 + packed_body_bytes(o->rank, flags) > cap - at)
            return -1;
        buf[at++] = (unsigned char)o->rank;
        buf[at++] = (unsigned char)flags;
        memcpy(buf + at, o->sizes, 8 * (size_t)o->rank);
        at += 8 * (size_t)o->rank;
        if (flags & PACK_NUMEL)
            memcpy(buf + at, &o->numel, 8), at += 8;
        if (flags & PACK_NONFINITE) {
            memcpy(buf + at, &o->n_nan, 8), at += 8;
            memcpy(buf + at, &o->n_inf, 8), at += 8;
        }
        if (flags & PACK_SUM)
            memcpy(buf + at, &o->sum, 8), at += 8;
    }
    return (int)at;
}

int af_mailbox_unpack_outputs(const unsigned char *buf, size_t len, int n, af_output_summary *o)
{
    size_t at = 0;
    for (int i = 0; i < n; i++, o++) {
        memset(o, 0, sizeof *o);
        if (len - at < 2 || buf[at] > SUMMARY_RANKS)
            return -1;
        int rank = buf[at], flags = buf[at + 1];
        at += 2;
        if (packed_body_bytes(rank, flags) > len - at)
            return -1;
        o->rank = rank;
        memcpy(o->sizes, buf + at, 8 * (size_t)rank);
        at += 8 * (size_t)rank;
        if (flags & PACK_NUMEL)
            memcpy(&o->numel, buf + at, 8), at += 8;
        else
            o->numel = sizes_product(o->sizes, rank);
        if (flags & PACK_NONFINITE) {
            memcpy(&o->n_nan, buf + at, 8), at += 8;
            memcpy(&o->n_inf, buf + at, 8), at += 8;
        }
        if (flags & PACK_SUM)
            memcpy(&o->sum, buf + at, 8), at += 8;
    }
    return at == len ? 0 : -1;
}

void af_mailbox_post_result(mailbox *mb, uint32_t seq, const af_result *res)
{
    int plain = af_mailbox_result_is_plain(res), len = -1;
    if (plain)
        len = af_mailbox_pack_outputs(res->outputs, res->n_outputs, mb->plain_bytes,
                                      sizeof mb->plain_bytes);
    if (len >= 0) {
        mb->plain_n_outputs = (uint8_t)res->n_outputs;
        mb->plain_len = (uint16_t)len;
        mb->plain_exit_status = res->exit_status;
        mb->plain_run_seconds = res->run_seconds;
    } else {
        plain = 0;
        af_result_copy(&mb->r, res);
    }
    mb->plain = (uint8_t)plain;
    STORE(&mb->result_seq, seq);
    if (LOAD(&mb->tool_waiting))
        af_futex(&mb->result_seq, FUTEX_WAKE, 1, NULL);
}

void af_mailbox_read_result(const mailbox *mb, af_result *out)
{
    if (!mb->plain) {
        af_result_copy(out, &mb->r);
        return;
    }
    af_result_reset(out); /* a plain result is a reset one but for these: */
    if (mb->plain == 2)
        strcpy(out->signature, af_class_name(AF_RES_OK)); /* "OK": fits any signature */
    out->exit_status = mb->plain_exit_status;
    out->run_seconds = mb->plain_run_seconds;
    /* The worker packed these bytes itself, within the buffer, so they unpack, unless
     * something in the worker (a model writing out of bounds) wrote over its mailbox. Then
     * its answer says nothing, and the worker is not to be trusted with another case. */
    int n = mb->plain_n_outputs;
    size_t len = mb->plain_len;
    if (n > AF_MAX_OUTPUTS || len > sizeof mb->plain_bytes ||
        af_mailbox_unpack_outputs(mb->plain_bytes, len, n, out->outputs) != 0) {
        af_result_reset(out);
        out->cls = AF_RES_WORKER_LOST;
        out->exit_status = -1;
        snprintf(out->message, sizeof out->message,
                 "the worker's answer did not decode (%d outputs in %zu bytes): something in "
                 "the worker wrote over its mailbox",
                 n, len);
        return;
    }
    out->n_outputs = n;
}

/* The tool's side: the caller picks `spin` (about as long as cases take lately); between the
 * futex's short sleeps a poll on the socket says whether the worker is still alive (it hangs
 * up when the worker dies). */
void af_mailbox_post_case(worker *w, const af_case *c, int dump)
{
    mailbox *mb = w->mb;
    af_case_copy_in_use(&mb->c, c);
    /* published by case_seq's store below, as the case is */
    __atomic_store_n(&mb->dump_outputs, (uint32_t)dump, __ATOMIC_RELAXED);
    uint32_t seq = ++w->seq;
    STORE(&mb->case_seq, seq);
    if (LOAD(&mb->worker_waiting))
        af_futex(&mb->case_seq, FUTEX_WAKE, 1, NULL);
}

int af_mailbox_exchange(worker *w, const af_case *c, int dump, double t_post, double spin,
                        double timeout_s, af_result *out)
{
    af_mailbox_post_case(w, c, dump);
    return af_mailbox_await(w, t_post, spin, timeout_s, out);
}

int af_mailbox_await(worker *w, double t_post, double spin, double timeout_s, af_result *out)
{
    mailbox *mb = w->mb;
    uint32_t seq = w->seq;
    double t0 = t_post, now = t0;
    unsigned step = 0;
    for (;;) {
        uint32_t got = LOAD(&mb->result_seq);
        if (got == seq) {
            af_mailbox_read_result(mb, out);
            return 1;
        }
        if (now - t0 < spin) {
            spin_step(&step, &now);
            continue;
        }
        now = af_now_s();
        double el = now - t0;
        if (el >= timeout_s)
            return 0;
        struct pollfd p = {w->fd, POLLIN, 0};
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN))) {
            /* gone (or going): a crash handler posts before the process ends */
            if (LOAD(&mb->result_seq) == seq) {
                af_mailbox_read_result(mb, out);
                return 1;
            }
            return -1;
        }
        double left = timeout_s - el;
        struct timespec ts = {0, (long)((left < 0.005 ? left : 0.005) * 1e9)};
        STORE(&mb->tool_waiting, 1);
        if (LOAD(&mb->result_seq) != seq)
            af_futex(&mb->result_seq, FUTEX_WAIT, got, &ts);
        STORE(&mb->tool_waiting, 0);
    }
}
