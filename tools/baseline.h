/*
 * The tool's own measurements, timed like tpevent's calls (measure.h): `batch` calls
 * per sample between two reads of the tool's clock, the sample being the mean.
 *
 *   baseline_sample_empty: an empty function called through a pointer, the floor of
 *     any call; the baseline of a backend with no runtime underneath (the CPU), so
 *     that tpevent's median minus its median is what tpevent's call costs.
 *   baseline_sample_clock: one clock_gettime(CLOCK_MONOTONIC), for scale.
 *   baseline_ping_pong_*: a round trip to a partner thread through one mutex and two
 *     condition variables, for scale: what a record + synchronize would cost if it
 *     went through another thread (on an idle CPU stream it does not).
 */
#ifndef TPEVENT_TOOL_BASELINE_H
#define TPEVENT_TOOL_BASELINE_H

#include <stddef.h>

void baseline_sample_empty(double *samples, size_t count, unsigned batch);
void baseline_sample_clock(double *samples, size_t count, unsigned batch);

typedef struct baseline_ping_pong baseline_ping_pong;

/* Starts the partner thread; NULL if it could not be started (errno says why). */
baseline_ping_pong *baseline_ping_pong_start(void);

/* One ping and its pong per sample. */
void baseline_ping_pong_sample(baseline_ping_pong *ping_pong, double *samples, size_t count);

/* Stops and joins the partner thread. */
void baseline_ping_pong_stop(baseline_ping_pong *ping_pong);

#endif /* TPEVENT_TOOL_BASELINE_H */
