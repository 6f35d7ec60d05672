/* interrupt.c — SIGINT/SIGTERM through a sigwait() thread; see interrupt.h.
 *
 * The mutex orders the thread's view of the registered package against the main path's: a
 * signal either finds the package registered (and removes its dir under the lock, so the main
 * path cannot close it meanwhile) or finds none and leaves a note the main path reads when it
 * registers one. Workers are other processes: they end on their own through PR_SET_PDEATHSIG
 * when this process dies. */
#include "aotif/interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static af_package *registered; /* guarded by lock */
static int pending;            /* a signal that found nothing to remove; guarded by lock */
static volatile int *stop_flag;
static sigset_t saved_mask; /* the mask before af_interrupt_start: what children get back */

/* A child of fork (a worker, the zygote, the reference before its exec, a repro run) has no
 * waiting thread: it gets the signal mask it would have had without this module. Runs in the
 * child right after fork; sigprocmask is async-signal-safe. */
static void restore_in_child(void)
{
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

static void die_by(int signo)
{
    sigset_t set;
    signal(signo, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, signo);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(signo);
    _exit(128 + signo); /* not reached: the default action of SIGINT/SIGTERM ends the process */
}

static void *waiter(void *arg)
{
    const sigset_t *set = arg;
    int stopped = 0;
    for (;;) {
        int signo = 0;
        if (sigwait(set, &signo) != 0)
            continue;
        if (stop_flag && !stopped) {
            stopped = 1;
            *stop_flag = signo;
            continue;
        }
        pthread_mutex_lock(&lock);
        if (!registered) {
            pending = signo;
            pthread_mutex_unlock(&lock);
            continue;
        }
        af_package_close(registered); /* the process ends next: nothing uses it after this */
        registered = NULL;
        die_by(signo);
    }
    return NULL;
}

int af_interrupt_start(volatile int *stop)
{
    static sigset_t set;
    pthread_t t;
    pthread_attr_t attr;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    stop_flag = stop;
    if (pthread_sigmask(SIG_BLOCK, &set, &saved_mask) != 0)
        return -1;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, waiter, &set);
    pthread_attr_destroy(&attr);
    if (rc != 0 || pthread_atfork(NULL, NULL, restore_in_child) != 0) {
        pthread_sigmask(SIG_SETMASK, &saved_mask,
                        NULL); /* a started thread then waits for nothing */
        return -1;
    }
    return 0;
}

void af_interrupt_set_package(af_package *pkg)
{
    pthread_mutex_lock(&lock);
    registered = pkg;
    if (pkg && pending) {
        int signo = pending;
        af_package_close(pkg);
        registered = NULL;
        die_by(signo);
    }
    pthread_mutex_unlock(&lock);
}
