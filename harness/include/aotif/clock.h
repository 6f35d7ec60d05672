/* aotif/clock.h — the one monotonic clock of the tools. */
#ifndef AOTIF_CLOCK_H
#define AOTIF_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (system-wide: comparable between the tool and its workers).
 * Async-signal-safe (clock_gettime only). */
double af_now_s(void);

#endif
