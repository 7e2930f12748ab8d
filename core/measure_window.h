/*
 * How many calls one stretch of tp_measure (rule 18) may queue behind its hold: what
 * tpevent queues there itself, besides the calls, stays out of the stream's window
 * (rule 17, tp_stream_hold_window), past which the runtime's queue may block the
 * thread that is to release the hold. A call of fn counts as one operation.
 *
 * A trace may start while a measurement runs (fn's or another thread's
 * tp_trace_start), so the marks it puts on each timing record are always counted,
 * whether a trace runs at the stretch's start or not. Header-only, so that
 * tests/backend checks the counts without a device (the fake GPU's window of 10 leaves
 * room for one call of each shape whatever they are).
 */
#ifndef TPEVENT_CORE_MEASURE_WINDOW_H
#define TPEVENT_CORE_MEASURE_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/* A stretch of fn's, per hold: the hold, the range's two marks, the SM clock's two
 * marks (a kernel launch each on CUDA), the two timing records and their two trace
 * marks (9), and one to spare. A cold stretch's records are its calls' (below): it
 * counts them twice, to spare. */
#define MEASURE_OWN_OPS_PER_HOLD 10
/* The floor's stretches take no SM clock marks: 7, and one to spare. */
#define MEASURE_FLOOR_OWN_OPS_PER_HOLD 8

/* What a per-call stretch queues per call, the call included: a timing record, the
 * call, a timing record and the records' two trace marks (5), and the flush before it
 * when cold (6). */
static inline int64_t measure_ops_per_call(bool flush)
{
    return flush ? 6 : 5;
}

/* The calls a stretch may queue in a window of `window` operations (INT64_MAX: no
 * bound), tpevent's own `own_ops` and `ops_per_call` a call; at least one, past the
 * window if need be (a window smaller than one stretch still measures). */
static inline int64_t measure_window_calls(int64_t window, int64_t own_ops, int64_t ops_per_call)
{
    if (window == INT64_MAX)
        return INT64_MAX;
    int64_t calls = (window - own_ops) / ops_per_call;
    return calls > 1 ? calls : 1;
}

/* A stretch of fn's: hot, a batch of calls between one pair of records (a call an
 * operation); cold, per call a flush, a pair of records and the call. */
static inline int64_t measure_window_batch(int64_t window, bool cold)
{
    return measure_window_calls(window, MEASURE_OWN_OPS_PER_HOLD, cold ? measure_ops_per_call(true) : 1);
}

#endif /* TPEVENT_CORE_MEASURE_WINDOW_H */
