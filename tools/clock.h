/* The tool's one clock: CLOCK_MONOTONIC, the clock the CPU backend stamps records with. */
#ifndef TPEVENT_TOOL_CLOCK_H
#define TPEVENT_TOOL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t tool_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

#endif /* TPEVENT_TOOL_CLOCK_H */
