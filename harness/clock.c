/* The one monotonic clock of the tools: see aotif/clock.h. */
#include "aotif/clock.h"

#include <time.h>

double af_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
