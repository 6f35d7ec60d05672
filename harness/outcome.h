/* outcome.h — what a worker's run came to, as a result class; internal to the harness
 * (pool.c, zygote.c, runtime.c).
 *
 * Every rule that turns evidence into an af_class lives in outcome.c: the error text of a
 * failed Run (in the worker), the worker's stderr, its wait status when it died without a
 * report, a timeout (in the tool). The one exception is the crash handler's choice between
 * SIGNAL and DEVICE_FAULT (crash_report.c), made in the signal context where nothing may be
 * called. All functions write into the caller's result; none signs it (af_result_sign),
 * except af_outcome_harness_failed, whose result is final. */
#ifndef AOTIF_OUTCOME_H
#define AOTIF_OUTCOME_H

#include <stddef.h>

#include "aotif/error.h"
#include "aotif/result.h"

/* In the worker: the class of a Run that returned an error, from its message: OOM for an
 * allocation failure, DEVICE_FAULT on a GPU (cuda) for a CUDA error (the process is then
 * poisoned), else RUNTIME_ERROR. */
af_class af_outcome_of_run_error(const char *message, int cuda);
/* In the worker: the harness itself failed to run the case (err says why): WORKER_LOST,
 * signed. */
void af_outcome_harness_failed(af_result *r, const af_error *err);

/* In the tool: no result within timeout_s (the worker is killed by the caller). */
void af_outcome_timeout(af_result *r, double timeout_s);
/* In the tool: the worker died without a report; st is the wait status the zygote reported,
 * -1 when unknown. A signal other than SIGKILL is a SIGNAL (it crashed before its handler
 * could post); a SIGKILL (from outside), an exit or nothing known is WORKER_LOST. */
void af_outcome_lost(af_result *r, int st);
/* " (killed by SIGSEGV)", " (exit 3)" or "" for wait status st (-1: unknown), into buf. */
void af_outcome_status_text(int st, char *buf, size_t len);
/* In the tool: what the case's stderr (errbuf, NUL-terminated) adds to r: the model's error
 * text for RUNTIME_ERROR, OOM and WORKER_LOST; an allocation failure it names turns a
 * RUNTIME_ERROR into OOM; a DEVICE_FAULT gets its assert text and Triton kernel. */
void af_outcome_from_stderr(af_result *r, const char *errbuf);
/* The parts of af_outcome_from_stderr, for the triage re-run: the model's own error text
 * into an empty r->message; a device-side assert's text and the Triton kernel stderr names. */
void af_outcome_message_from_stderr(af_result *r, const char *errbuf);
void af_outcome_device_fault_details(af_result *r, const char *errbuf);

#endif
