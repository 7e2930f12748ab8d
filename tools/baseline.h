/*
 * Host baselines for backends with no runtime underneath (the CPU backend, where
 * tp_native_sample answers TP_ERR_UNSUPPORTED): the floor of a CPU event operation is
 * a read of CLOCK_MONOTONIC, and the floor of a round trip through another thread is
 * a condition-variable ping-pong. Timed like tpevent's calls (measure.h): one sample
 * per call, the tool's clock read just before and just after.
 */
#ifndef TPEVENT_TOOL_BASELINE_H
#define TPEVENT_TOOL_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One clock_gettime(CLOCK_MONOTONIC) per sample. */
void baseline_sample_clock(uint64_t *samples, size_t count);

/* A partner thread that answers each ping with a pong through one mutex and two
 * condition variables. */
typedef struct baseline_ping_pong baseline_ping_pong;

/* Starts the partner thread; NULL if it could not be started (errno says why). */
baseline_ping_pong *baseline_ping_pong_start(void);

/* One ping and its pong per sample. */
void baseline_ping_pong_sample(baseline_ping_pong *ping_pong, uint64_t *samples, size_t count);

/* Stops and joins the partner thread. */
void baseline_ping_pong_stop(baseline_ping_pong *ping_pong);

#endif /* TPEVENT_TOOL_BASELINE_H */
