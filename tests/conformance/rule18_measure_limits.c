/* Conformance, rule 18: what bounds a measurement. A batch too large for memory or for
 * max_time, a stream held by someone else, a caller that wants its waits back (Ctrl-C
 * in Python), a trace that starts in the middle: each ends the call in time, with a
 * status or a note that says why. Tolerances are wide: a loaded CI machine under a
 * sanitizer slows everything, and no test here asserts a tight time. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct work {
    int64_t stream_ns; /* a host function that busy-waits, per call */
    int calls;
    int trace_at; /* the call that starts a trace (0: none) */
} work;

static tp_status work_fn(tp_stream *stream, void *arg)
{
    work *w = arg;
    if (++w->calls == w->trace_at) {
        tp_status status = tp_trace_start();
        if (status != TP_OK)
            return status;
    }
    return tp_stream_launch_host_fn(stream, busy_host_fn, &w->stream_ns);
}

static tp_measure_options limit_options(int64_t max_time_ns)
{
    tp_measure_options options;
    tp_measure_options_init(&options);
    options.min_time_ns = 0;
    options.max_time_ns = max_time_ns;
    options.max_noise = 1e9;
    return options;
}

static tp_measurement new_measurement(void)
{
    tp_measurement m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    return m;
}

/* Cold with a batch of 2^60 (2^60 + 1): its events' sizes wrapped, realloc(p, 0) freed
 * the array that was then written. The batch is cut to what fits in max_time. */
TEST(rule18_measure_cold_batch_of_2_to_the_60_is_cut_to_max_time)
{
    tp_stream *stream = new_stream(env->device);
    for (int64_t extra = 0; extra < 2; extra++) {
        work w = {.stream_ns = 10 * 1000};
        tp_measure_options options = limit_options(300 * 1000 * 1000);
        options.flags = TP_MEASURE_COLD;
        options.batch = ((int64_t)1 << 60) + extra;
        tp_measurement m = new_measurement();
        double started = monotonic_seconds();
        tp_status status = tp_measure(stream, work_fn, &w, &options, &m);
        if (status == TP_ERR_UNSUPPORTED) {
            printf("skipped: %s\n", tp_last_error());
            CHECK_OK(tp_stream_destroy(stream));
            return TEST_SKIP;
        }
        CHECK_OK(status);
        printf("batch %lld: %lld calls in %.2f s, note: %s\n", (long long)options.batch, (long long)m.calls,
               monotonic_seconds() - started, m.note);
        CHECK(m.samples >= 1 && m.calls == m.samples && m.batch < options.batch);
        CHECK_CONTAINS(m.note, "cut to");
    }
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A cold batch of 20,000 with max_time 0.3 s ran every flush (tens of seconds on the
 * CPU); now the calibration's time per call and flush cuts it. Checked on the calls
 * made, not on a time a loaded machine could stretch. */
TEST(rule18_measure_cold_batch_is_cut_to_max_time)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 10 * 1000};
    tp_measure_options options = limit_options(300 * 1000 * 1000);
    options.flags = TP_MEASURE_COLD;
    options.batch = 20000;
    tp_measurement m = new_measurement();
    tp_status status = tp_measure(stream, work_fn, &w, &options, &m);
    if (status == TP_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", tp_last_error());
        CHECK_OK(tp_stream_destroy(stream));
        return TEST_SKIP;
    }
    CHECK_OK(status);
    printf("%lld calls (batch %lld), note: %s\n", (long long)m.calls, (long long)m.batch, m.note);
    CHECK(m.calls >= 1 && m.calls < options.batch);
    CHECK_CONTAINS(m.note, "cut to");
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Hot, the same: 100,000 calls of 100 us (10 s) with max_time 0.3 s. */
TEST(rule18_measure_hot_batch_is_cut_to_max_time)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 100 * 1000};
    tp_measure_options options = limit_options(300 * 1000 * 1000);
    options.batch = 100000;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("%lld calls (batch %lld), note: %s\n", (long long)m.calls, (long long)m.batch, m.note);
    CHECK(m.calls >= 1 && m.calls < options.batch);
    CHECK_CONTAINS(m.note, "cut to");
    CHECK(m.median_ns >= 0.95 * (double)w.stream_ns);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A batch the caller sets is cut to the stream's window as a chosen one is (rule 17):
 * past it, the runtime's queue could block the caller behind the stretch's own hold
 * until the watchdog. Four windows' worth asked; where there is no window, or one
 * smaller than a stretch's own ten operations and a call (the fake GPU's 10: passed at
 * batch 1 anyway), all given. CUDA's 256 keeps 246. */
TEST(rule18_measure_batch_set_by_the_caller_stays_within_the_window)
{
    tp_stream *stream = new_stream(env->device);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    work w = {.stream_ns = 1000};
    tp_measure_options options = limit_options(5LL * 1000 * 1000 * 1000);
    options.min_samples = 2;
    options.batch = window == INT64_MAX ? 64 : 4 * window;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("window %lld, batch %lld asked, %lld kept, note: %s\n", (long long)window, (long long)options.batch,
           (long long)m.batch, m.note);
    if (window == INT64_MAX || window < 11) {
        CHECK(m.batch == options.batch);
    } else {
        CHECK(m.batch >= 1 && m.batch <= window - 10);
        CHECK_CONTAINS(m.note, "window");
    }
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A stream held by another party (here the test, for a minute): the warm-up's wait
 * used to last until that hold's watchdog. It now ends max_time plus a grace of
 * 10 s after the call, TP_ERR_NOT_READY without a sample, the message saying why. */
TEST(rule18_measure_on_a_stream_held_elsewhere_ends_after_max_time)
{
    tp_stream *stream = new_stream(env->device);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(stream, 60LL * 1000 * 1000 * 1000, &hold));
    work w = {.stream_ns = 10 * 1000};
    tp_measure_options options = limit_options(1000 * 1000);
    tp_measurement m = new_measurement();
    double started = monotonic_seconds();
    CHECK_STATUS(tp_measure(stream, work_fn, &w, &options, &m), TP_ERR_NOT_READY);
    double took = monotonic_seconds() - started;
    printf("ended after %.2f s: %s\n", took, tp_last_error());
    CHECK(took >= 9.0 && took < 40.0);
    CHECK_ERROR_MENTIONS("held elsewhere");
    CHECK(m.samples == 0);
    CHECK_OK(tp_hold_release(hold));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

static tp_status refuse_third_check(void *arg)
{
    work *w = arg;
    w->trace_at--; /* counts the checks down; fn never reaches a negative call */
    return w->trace_at == -3 ? TP_ERR_BACKEND : TP_OK;
}

/* The caller's wait_check runs while tp_measure waits (Python's Ctrl-C): its failure
 * ends the wait and the measurement at once, with its status and message. */
TEST(rule18_measure_wait_check_ends_a_wait)
{
    tp_stream *stream = new_stream(env->device);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(stream, 60LL * 1000 * 1000 * 1000, &hold));
    work w = {.stream_ns = 10 * 1000};
    tp_measure_options options = limit_options(30LL * 1000 * 1000 * 1000);
    options.wait_check = refuse_third_check;
    tp_measurement m = new_measurement();
    double started = monotonic_seconds();
    CHECK_STATUS(tp_measure(stream, work_fn, &w, &options, &m), TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS("wait_check");
    CHECK(monotonic_seconds() - started < 5.0); /* 3 slices of 50 ms */
    CHECK(w.calls == 1 && w.trace_at == -3);
    CHECK_OK(tp_hold_release(hold));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A trace that starts in the middle of a stretch (fn starts it; another thread could)
 * finds the stretch's range, pushed before it, not open: the pop's refusal used to fail
 * the measurement with TP_ERR_INVALID_ARGUMENT. Call 3 is the first stretch's first. */
TEST(rule18_measure_trace_started_mid_stretch_does_not_fail_it)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 20 * 1000, .trace_at = 3};
    tp_measure_options options = limit_options(5LL * 1000 * 1000 * 1000);
    options.batch = 2;
    options.min_samples = 3;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    free(trace_stop_text());
    CHECK(m.samples >= 3);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
