/* crash_report.h — a worker's fatal-signal report; internal to the harness (zygote.c).
 *
 * The only code of aoti-fuzz that runs in an asynchronous signal context. A worker that
 * dies of SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT or SIGTRAP catches it on an alternate
 * stack, posts a SIGNAL result (signal, fault address, the raw stack as module + offset) in
 * its mailbox as the current case's result, wakes the tool and re-raises the signal, so the
 * process still dies of it. The tool names the frames later (symbolize.c) and signs.
 *
 * Rules inside crash_report.c's handler and everything it calls (the fault may have struck
 * anywhere, holding any lock, with the heap half-updated):
 * - only async-signal-safe calls: raise, the futex system call, memset/memcpy, and
 *   backtrace, whose libgcc_s is loaded beforehand by af_crash_install; of the harness only
 *   functions that read or copy memory and nothing more (af_result_copy, af_signal_name,
 *   af_cuda_faulting_kernel/_error: keep them so);
 * - no malloc or free, no stdio (no snprintf, no printf), no locks, no dladdr or
 *   dl_iterate_phdr (the loader's lock): text is written byte by byte into fixed buffers;
 * - read only state prepared before the case: the module table (published with one atomic
 *   store, never written while published), the mailbox pointer, static buffers;
 * - write only the static result, the mailbox's result and its counter;
 * - never return to the faulting code: end by re-raising (SA_RESETHAND).
 * What the handler needs must be taken beforehand, outside the signal context: that is
 * what af_crash_install and af_crash_modules_refresh do. */
#ifndef AOTIF_CRASH_REPORT_H
#define AOTIF_CRASH_REPORT_H

#include "ipc.h"

/* In the worker, after the model is loaded and before it says HELLO: the alternate stack,
 * libgcc_s loaded, the module table, the handlers. mb (the worker's mailbox, mapped for the
 * process's lifetime) is where a crash is posted. */
void af_crash_install(mailbox *mb);
/* Take a new module table if a module was loaded or unloaded since the last one (cheap when
 * not: one dl_iterate_phdr callback). Between cases, never in the handler. */
void af_crash_modules_refresh(void);

#endif
