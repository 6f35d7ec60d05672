/* interrupt.h — SIGINT/SIGTERM for the tools, without work in a signal handler.
 *
 * A tool holds an extracted package (a private temp dir) that must not outlive it. Removing a
 * directory tree takes opendir, readdir, unlink and free, none of them async-signal-safe, so no
 * handler does it. Instead af_interrupt_start blocks SIGINT and SIGTERM in the calling thread
 * (before any other thread or worker exists, so every thread inherits the mask) and starts one
 * thread that waits for them with sigwait(): it runs ordinary code, not a handler.
 *
 *  - While no package is registered (it is still being extracted), a signal is remembered; the
 *    main path's af_interrupt_set_package then closes the package and ends the process with the
 *    signal's default action, after the extraction, never in the middle of it.
 *  - With a `stop` flag registered, the first signal only sets it (the tool winds down on its main
 *    path and writes what it has); a second ends the process.
 *  - Otherwise a signal removes the registered package's temp dir, restores the default action
 *    and re-raises it, so the exit status says which signal ended the tool.
 *
 * Ownership: the package registered is borrowed; the caller registers NULL before it closes the
 * package itself. The flag `stop` must outlive the process's use of this module. */
#ifndef AOTIF_INTERRUPT_H
#define AOTIF_INTERRUPT_H

#include "aotif/package.h"

/* Block SIGINT/SIGTERM here and start the waiting thread. `stop`, when not NULL, is set to the
 * signal number by the first signal (see above). Returns 0, or -1 if the thread could not start
 * (the signals are then left as they were). Call once, before forking or starting threads. */
int af_interrupt_start(volatile int *stop);

/* Register the package whose temp dir a signal removes (NULL: none). If a signal came while
 * none was registered and pkg is not NULL, closes pkg and ends the process by that signal. */
void af_interrupt_set_package(af_package *pkg);

#endif
