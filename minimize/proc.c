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

/* The child's ends and ours: stdin from /dev/null, a pipe each for stdout and stderr. */
typedef struct proc_fds {
    int devnull;
    int out[2], err[2];
} proc_fds;

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

/* Fork the child into its own process group and exec argv in it. The child's pid, or -1
 * (why in pr->why). */
static pid_t spawn(char *const argv[], char *const envp[], const proc_fds *f, proc_run *pr)
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
        dup2(f->devnull, 0);
        dup2(f->out[1], 1);
        dup2(f->err[1], 2);
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
    pid_t pid = spawn(argv, envp, &f, pr);
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
