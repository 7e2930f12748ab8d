/*
 * core/measure_window.h on its own: the calls one stretch of tp_measure (rule 18) may
 * queue behind its hold keep everything the stretch queues within the stream's window
 * (rule 17), a trace's marks included, since a trace may start mid-measurement. The
 * operations are counted here as core/measure_stretch.c queues them, not taken from
 * the header. No device has a window that shows this: the fake GPU's 10 leaves one
 * call of each shape, CUDA's 256 is not in CI.
 */
#include "core/measure_window.h"

#include "check.h"

#include <stdio.h>

/* Under every stretch's hold: the hold and the trace range's two marks. */
#define HOLD_AND_RANGE 3
/* Around fn's stretches: the SM clock's two marks. */
#define CLOCK_MARKS 2
/* A pair of timing records and the trace's mark on each. */
#define TIMED_PAIR 4

static const int64_t windows[] = {16, 22, 40, 64, 100, 256, 1021, 4096};

static void check_fits(int64_t window, int64_t own, int64_t calls, int64_t per_call, const char *what)
{
    int64_t queued = own + calls * per_call;
    printf("window %lld, %s: %lld calls, %lld operations\n", (long long)window, what, (long long)calls,
           (long long)queued);
    CHECK(calls >= 1);
    CHECK(queued <= window);
    /* And the window is used, within the one operation spared and a call's rounding. */
    CHECK(queued + 1 + per_call > window);
}

/* Hot: a pair of records around the batch, one operation a call. */
TEST(hot_batch_and_its_records_fit_the_window)
{
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++)
        check_fits(windows[i], HOLD_AND_RANGE + CLOCK_MARKS + TIMED_PAIR, measure_window_batch(windows[i], false), 1,
                   "hot");
    return 0;
}

/* Cold: per call a flush, the call and a pair of records with their trace marks (six,
 * where four were counted: on CUDA's 256, 61 calls queued 371 operations). */
TEST(cold_batch_counts_each_calls_trace_marks)
{
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++) {
        int64_t calls = measure_window_batch(windows[i], true);
        int64_t queued = HOLD_AND_RANGE + CLOCK_MARKS + calls * (1 + 1 + TIMED_PAIR);
        printf("window %lld, cold: %lld calls, %lld operations\n", (long long)windows[i], (long long)calls,
               (long long)queued);
        CHECK(calls >= 1 && queued <= windows[i]);
    }
    return 0;
}

/* The floor's per-call stretch (no SM clock): the least work and a pair of records a
 * call, and a flush before each when cold; its batch stretch: one pair. */
TEST(floor_stretches_fit_the_window)
{
    for (size_t i = 0; i < sizeof windows / sizeof *windows; i++) {
        int64_t window = windows[i];
        int64_t hot = measure_window_calls(window, MEASURE_FLOOR_OWN_OPS_PER_HOLD, measure_ops_per_call(false));
        int64_t cold = measure_window_calls(window, MEASURE_FLOOR_OWN_OPS_PER_HOLD, measure_ops_per_call(true));
        CHECK(hot >= 1 && HOLD_AND_RANGE + hot * (1 + TIMED_PAIR) <= window);
        CHECK(cold >= 1 && HOLD_AND_RANGE + cold * (1 + 1 + TIMED_PAIR) <= window);
        int64_t batch = measure_window_calls(window, MEASURE_FLOOR_OWN_OPS_PER_HOLD, 1);
        CHECK(batch >= 1 && HOLD_AND_RANGE + TIMED_PAIR + batch <= window);
    }
    return 0;
}

/* A window smaller than one stretch still gives one call (the fake GPU's 10); no window
 * gives no bound. */
TEST(small_and_unbounded_windows)
{
    CHECK(measure_window_batch(10, false) == 1 && measure_window_batch(10, true) == 1);
    CHECK(measure_window_calls(3, MEASURE_FLOOR_OWN_OPS_PER_HOLD, 1) == 1);
    CHECK(measure_window_batch(INT64_MAX, false) == INT64_MAX && measure_window_batch(INT64_MAX, true) == INT64_MAX);
    return 0;
}
