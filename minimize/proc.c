/* proc.c — a time-limited child with its output captured; see proc.h.
 *
 * The child is made with fork and exec, not posix_spawn: between the two it sets its core
 * size limit to 0 (no core is dumped: the signal is the verdict, and the core of a Python
 * with a CUDA context takes long to write), which posix_spawn cannot do for the child alone
 * (lowering our own limit around the spawn would race with the other thread that runs a
 * check at the same time). Between fork and exec only async-signal-safe calls are made. An
 * exec that fails is exit 127, as a shell says "command not found".
 *
 * The group is made in both processes (setpgid in the child and in the parent), so there is
 * no window in which killing the group misses the child. The output pipes are read with
 * poll until both close; after a kill, five more seconds at most (something outside the
 * group may hold the pipes open), then the child is reaped. */
#include "proc.h"

#include "aotif/clock.h"
#include "aotif/fileio.h"
#include "quote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fds(proc_fds *f)
{
    int *fds[5] = {&f->out[0], &f->out[1], &f->err[0], &f->err[1], &f->devnull};
    for (int i = 0; i < 5; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}

/* Read what is there from *fd into b (kept up to the cap); close it at its end. */
static void drain(int *fd, af_sbuf *b)
{
    char buf[8192];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
        if (b->len < AF_PROC_CAPTURE_MAX)
            af_sb_addn(b, buf, (size_t)n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
}

/* Fork the child into its own process group and exec argv in it, stdin from in_fd, and
 * fd3 (when >= 0) as its fd 3. The child's pid, or -1 (why in pr->why). */
static pid_t spawn(char *const argv[], char *const envp[], const proc_fds *f, int in_fd, int fd3,
                   proc_run *pr)
{
    struct rlimit core;
    int have_core = getrlimit(RLIMIT_CORE, &core) == 0;
    core.rlim_cur = 0;
    char *const *env = envp ? envp : environ;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(pr->why, sizeof pr->why, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) { /* only async-signal-safe calls from here to exec */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        dup2(in_fd, 0);
        dup2(f->out[1], 1);
        dup2(f->err[1], 2);
        if (fd3 == 3)
            fcntl(3, F_SETFD, 0); /* dup2 onto itself would keep close-on-exec */
        else if (fd3 >= 0)
            dup2(fd3, 3);
        if (have_core)
            setrlimit(RLIMIT_CORE, &core); /* a system call, no library state */
        execvpe(argv[0], argv, env);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no window where a kill of the group misses it */
    return pid;
}

/* Read both pipes until they close; kill the group at the time limit or on *stop. */
static void pump(pid_t pid, proc_fds *f, double t0, double timeout_s, const volatile int *stop,
                 proc_run *pr)
{
    double kill_at = 0;
    while (f->out[0] >= 0 || f->err[0] >= 0) {
        double now = af_now_s();
        if (!kill_at && (now - t0 > timeout_s || (stop && *stop))) {
            pr->timed_out = now - t0 > timeout_s;
            pr->stopped = !pr->timed_out;
            kill(-pid, SIGKILL);
            kill_at = now;
        }
        if (kill_at && now - kill_at > 5.0) /* something outside the group holds the pipes */
            break;
        struct pollfd pf[2] = {{f->out[0], POLLIN, 0}, {f->err[0], POLLIN, 0}};
        int n = poll(pf, 2, 100);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        if (f->out[0] >= 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(&f->out[0], &pr->out);
        if (f->err[0] >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
            drain(&f->err[0], &pr->errb);
    }
}

void af_proc_capture(char *const argv[], char *const envp[], double timeout_s,
                     const volatile int *stop, proc_run *pr)
{
    proc_fds f = {
        .devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), .out = {-1, -1}, .err = {-1, -1}};
    double t0 = af_now_s();
    memset(pr, 0, sizeof *pr);
    if (f.devnull < 0 || pipe2(f.out, O_CLOEXEC) != 0 || pipe2(f.err, O_CLOEXEC) != 0) {
        snprintf(pr->why, sizeof pr->why, "cannot make pipes: %s", strerror(errno));
        goto done;
    }
    pid_t pid = spawn(argv, envp, &f, f.devnull, -1, pr);
    if (pid < 0)
        goto done;
    pr->started = 1;
    close(f.out[1]);
    close(f.err[1]);
    f.out[1] = f.err[1] = -1;
    pump(pid, &f, t0, timeout_s, stop, pr);
    while (waitpid(pid, &pr->status, 0) < 0 && errno == EINTR)
        ;
done:
    pr->seconds = af_now_s() - t0;
    close_fds(&f);
}

/* ---- a child started now and finished later --------------------------------------------- */

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

int af_proc_start(char *const argv[], char *const envp[], af_proc_bg *bg)
{
    int in[2] = {-1, -1}, rd[2] = {-1, -1};
    memset(bg, 0, sizeof *bg);
    bg->f = (proc_fds){.devnull = -1, .out = {-1, -1}, .err = {-1, -1}};
    bg->in_w = bg->ready_r = -1;
    bg->t_start = af_now_s();
    if (pipe2(bg->f.out, O_CLOEXEC) != 0 || pipe2(bg->f.err, O_CLOEXEC) != 0 ||
        pipe2(in, O_CLOEXEC) != 0 || pipe2(rd, O_CLOEXEC) != 0) {
        snprintf(bg->pr.why, sizeof bg->pr.why, "cannot make pipes: %s", strerror(errno));
        goto fail;
    }
    bg->pid = spawn(argv, envp, &bg->f, in[0], rd[1], &bg->pr);
    if (bg->pid < 0)
        goto fail;
    bg->pr.started = 1;
    close_fd(&bg->f.out[1]);
    close_fd(&bg->f.err[1]);
    close_fd(&in[0]);
    close_fd(&rd[1]);
    bg->in_w = in[1];
    bg->ready_r = rd[0];
    fcntl(bg->ready_r, F_SETFL, O_NONBLOCK);
    fcntl(bg->f.out[0], F_SETFL, O_NONBLOCK);
    fcntl(bg->f.err[0], F_SETFL, O_NONBLOCK);
    return 0;
fail:
    close_fds(&bg->f);
    for (int i = 0; i < 2; i++) {
        close_fd(&in[i]);
        close_fd(&rd[i]);
    }
    bg->pid = 0;
    return -1;
}

int af_proc_poll_ready(af_proc_bg *bg)
{
    if (bg->pid <= 0)
        return -1;
    if (bg->f.out[0] >= 0)
        drain(&bg->f.out[0], &bg->pr.out);
    if (bg->f.err[0] >= 0)
        drain(&bg->f.err[0], &bg->pr.errb);
    if (bg->ready)
        return 1;
    if (bg->ready_r < 0)
        return -1;
    char buf[64];
    ssize_t n = read(bg->ready_r, buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        bg->ready = strncmp(buf, "ready ", 6) == 0;
        if (bg->ready)
            bg->ready_s = atof(buf + 6);
        close_fd(&bg->ready_r);
        return bg->ready ? 1 : -1;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) { /* closed unready: it is gone */
        close_fd(&bg->ready_r);
        return -1;
    }
    return 0;
}

void af_proc_finish(af_proc_bg *bg, const char *line, double timeout_s, const volatile int *stop,
                    proc_run *pr)
{
    double t0 = af_now_s();
    af_proc_poll_ready(bg);
    close_fd(&bg->ready_r);
    if (bg->in_w >= 0) { /* a dead reader: EPIPE, and the output says what happened */
        void (*old)(int) = signal(SIGPIPE, SIG_IGN);
        if (line && af_write_all(bg->in_w, line, strlen(line)) == 0)
            af_write_all(bg->in_w, "\n", 1);
        signal(SIGPIPE, old);
        close_fd(&bg->in_w);
    }
    *pr = bg->pr;
    memset(&bg->pr, 0, sizeof bg->pr);
    if (bg->pid > 0) {
        fcntl(bg->f.out[0], F_SETFL, 0);
        fcntl(bg->f.err[0], F_SETFL, 0);
        pump(bg->pid, &bg->f, t0, timeout_s, stop, pr);
        while (waitpid(bg->pid, &pr->status, 0) < 0 && errno == EINTR)
            ;
        bg->pid = 0;
    }
    pr->seconds = af_now_s() - t0;
    close_fds(&bg->f);
}

void af_proc_cancel(af_proc_bg *bg)
{
    close_fd(&bg->in_w); /* it reads end of file and ends; the kill makes sure */
    close_fd(&bg->ready_r);
    if (bg->pid > 0) {
        kill(-bg->pid, SIGKILL);
        while (waitpid(bg->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        bg->pid = 0;
    }
    close_fds(&bg->f);
    af_proc_free(&bg->pr);
    memset(&bg->pr, 0, sizeof bg->pr);
}

void af_proc_free(proc_run *pr)
{
    free(pr->out.s);
    free(pr->errb.s);
}

void af_proc_last_line(const af_sbuf *b, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!b->s)
        return;
    size_t end = b->len;
    while (end > 0 && (b->s[end - 1] == '\n' || b->s[end - 1] == '\r' || b->s[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start > 0 && b->s[start - 1] != '\n')
        start--;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%.*s",
             (int)(end - start < sizeof tmp ? end - start : sizeof tmp - 1), b->s + start);
    af_text_ascii(tmp, buf, len);
}
