/* Conformance, rule 18: the floor, the median's interval, work that is not on the
 * stream, and host work. A measurement takes its protocol's own cost per sample (the
 * floor) off every sample, hot and cold alike, and says so; the median comes with its
 * confidence interval; a fn that puts nothing on the stream is told so at once rather
 * than timed for max_time; host_work runs a sample's calls in one host function.
 * Tolerances are wide: a loaded CI machine under a sanitizer slows host functions,
 * never makes them shorter. Each test says one thing. */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct spin_work {
    int64_t stream_ns; /* a host function that busy-waits, per call (0: nothing queued) */
} spin_work;

static tp_status spin_fn(tp_stream *stream, void *arg)
{
    spin_work *w = arg;
    return w->stream_ns > 0 ? tp_stream_launch_host_fn(stream, busy_host_fn, &w->stream_ns) : TP_OK;
}

static tp_measure_options floor_options(int64_t min_time_ms, int64_t max_time_ms)
{
    tp_measure_options options;
    tp_measure_options_init(&options);
    options.min_time_ns = min_time_ms * 1000 * 1000;
    options.max_time_ns = max_time_ms * 1000 * 1000;
    options.min_samples = 5;
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

/* The floor is measured and reported: finite, >= 0, with a spread; the answer is the
 * raw median less floor / batch (hot), never below 0. */
TEST(rule18_measure_reports_the_floor_it_takes_off_hot_samples)
{
    tp_stream *stream = new_stream(env->device);
    spin_work w = {.stream_ns = 200 * 1000};
    tp_measure_options options = floor_options(20, 5000);
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, spin_fn, &w, &options, &m));
    printf("floor %.3f us +- %.3f, raw median %.3f us, median %.3f us, batch %lld\n", m.floor_ns / 1e3,
           m.floor_stdev_ns / 1e3, m.raw_median_ns / 1e3, m.median_ns / 1e3, (long long)m.batch);
    CHECK(isfinite(m.floor_ns) && m.floor_ns >= 0 && isfinite(m.floor_stdev_ns) && m.floor_stdev_ns >= 0);
    double taken = m.raw_median_ns - m.median_ns, share = m.floor_ns / (double)m.batch;
    CHECK(fabs(taken - share) <= 1e-6 * m.raw_median_ns + 1.0);
    CHECK(m.median_ns >= 0.95 * 200e3);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Cold, each call is its own sample and carries the whole floor, which is taken off
 * it: a known length reads the same cold and hot (a loaded machine only adds). */
TEST(rule18_measure_cold_and_hot_agree_on_work_of_known_length)
{
    tp_stream *stream = new_stream(env->device);
    spin_work w = {.stream_ns = 10 * 1000 * 1000}; /* the fake GPU's host functions may start 1 ms late */
    tp_measure_options options = floor_options(40, 10000);
    tp_measurement hot = new_measurement(), cold = new_measurement();
    CHECK_OK(tp_measure(stream, spin_fn, &w, &options, &hot));
    options.flags = TP_MEASURE_COLD;
    CHECK_OK(tp_measure(stream, spin_fn, &w, &options, &cold));
    printf("hot %.3f us (least %.3f), cold %.3f us (least %.3f, raw median %.3f), floor %.3f us\n", hot.median_ns / 1e3,
           hot.min_ns / 1e3, cold.median_ns / 1e3, cold.min_ns / 1e3, cold.raw_median_ns / 1e3, cold.floor_ns / 1e3);
    CHECK(cold.cold && fabs(cold.raw_median_ns - cold.median_ns - cold.floor_ns) <= 1.0);
    /* The least of each: a loaded host stretches busy-waits (2 ms read 2.2-4.1 ms with
     * four tests on two cores), never shortens them, and some call escapes it. */
    CHECK(hot.min_ns >= 0.98 * 10e6 && cold.min_ns >= 0.98 * 10e6);
    CHECK(cold.min_ns <= 1.15 * hot.min_ns && hot.min_ns <= 1.15 * cold.min_ns);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The median's interval holds the median, and converged means its half-width is
 * within max_noise of it. */
TEST(rule18_measure_converges_on_the_interval_of_the_median)
{
    tp_stream *stream = new_stream(env->device);
    spin_work w = {.stream_ns = 100 * 1000};
    tp_measure_options options = floor_options(20, 10000);
    options.max_noise = 0.05;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, spin_fn, &w, &options, &m));
    printf("median %.3f us in [%.3f, %.3f], %lld samples, converged %d, note: %s\n", m.median_ns / 1e3,
           m.median_low_ns / 1e3, m.median_high_ns / 1e3, (long long)m.samples, m.converged, m.note);
    CHECK(m.median_low_ns <= m.median_ns && m.median_ns <= m.median_high_ns);
    CHECK(m.min_ns <= m.median_low_ns && m.median_high_ns <= m.max_ns);
    if (m.converged)
        CHECK((m.median_high_ns - m.median_low_ns) / 2 <= options.max_noise * m.median_ns);
    else
        CHECK_CONTAINS(m.note, "interval");
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A fn that puts nothing on the stream is told so within its first stretches, not
 * timed until max_time: converged false, the note naming the stream and the remedy. */
TEST(rule18_measure_of_no_work_on_the_stream_ends_at_once)
{
    tp_stream *stream = new_stream(env->device);
    spin_work w = {.stream_ns = 0};
    tp_measure_options options = floor_options(500, 60000);
    tp_measurement m = new_measurement();
    int64_t began = monotonic_ns();
    CHECK_OK(tp_measure(stream, spin_fn, &w, &options, &m));
    double seconds = (double)(monotonic_ns() - began) / 1e9;
    printf("%.3f s, %lld samples, note: %s\n", seconds, (long long)m.samples, m.note);
    CHECK(!m.converged);
    CHECK_CONTAINS(m.note, "put no work on the");
    CHECK_CONTAINS(m.note, env->device);
    CHECK(seconds < 20.0); /* a third of max_time: it did not run to it (about 2 ms here) */
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* ---------------------------------------------------------------- host work */

typedef struct host_counter {
    atomic_llong calls, functions; /* host_work's calls, its host functions of at least one (not the floor's) */
    int64_t ns_per_call;
    bool fail_batches; /* host_work fails a batch (the measurement's first sample) */
} host_counter;

static tp_status counting_host_work(void *arg, int64_t calls)
{
    host_counter *c = arg;
    if (calls > 0) /* not the floor's */
        atomic_fetch_add(&c->functions, 1);
    if (c->fail_batches && calls > 1)
        return TP_ERR_BACKEND;
    for (int64_t i = 0; i < calls; i++)
        busy_host_fn(&c->ns_per_call);
    atomic_fetch_add(&c->calls, calls);
    return TP_OK;
}

/* host_work runs a hot sample's calls in one host function: the calls are the
 * measurement's (and the warm-up's and calibration's), far fewer host functions than
 * calls, and each call's time is its own. */
TEST(rule18_measure_host_work_runs_a_sample_in_one_host_function)
{
    tp_stream *stream = new_stream(env->device);
    host_counter c = {.ns_per_call = 500 * 1000}; /* of the size of the fake GPU's host-function floor's noise */
    tp_measure_options options = floor_options(20, 10000);
    options.host_work = counting_host_work;
    options.batch = 8; /* the batch's choice aside: a loaded machine may make a call read as a sample */
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, NULL, &c, &options, &m));
    CHECK_OK(tp_stream_synchronize(stream));
    long long calls = atomic_load(&c.calls), functions = atomic_load(&c.functions);
    printf("%lld calls in %lld host functions; measured %lld calls, batch %lld, median %.3f us, floor %.3f us\n", calls,
           functions, (long long)m.calls, (long long)m.batch, m.median_ns / 1e3, m.floor_ns / 1e3);
    CHECK(m.batch == 8 && m.calls >= m.batch);
    CHECK(calls >= m.calls + 2); /* warm-up and calibration besides */
    CHECK(functions < calls);    /* a batch per host function */
    /* A call's own time: a loaded host only adds, and the floor taken off each sample is
     * a median (of a host function's launch: the fake GPU's start up to 1 ms late). */
    CHECK(m.median_ns >= 0.8 * 500e3);
    CHECK(m.cpu_ns == 0); /* nothing ran in fn on the caller's thread */
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* host_work failing stops the measurement with its status, the message naming it;
 * no host function calls it once tp_measure has returned. */
TEST(rule18_measure_host_work_failure_stops_the_measurement)
{
    tp_stream *stream = new_stream(env->device);
    host_counter c = {.ns_per_call = 1000, .fail_batches = true};
    tp_measure_options options = floor_options(500, 10000);
    options.host_work = counting_host_work;
    tp_measurement m = new_measurement();
    tp_status status = tp_measure(stream, NULL, &c, &options, &m);
    printf("%s after %lld host functions: %lld samples, note: %s\n", tp_status_name(status),
           (long long)atomic_load(&c.functions), (long long)m.samples, m.note);
    CHECK(status == TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS("host_work");
    long long functions = atomic_load(&c.functions);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(atomic_load(&c.functions) == functions);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Neither fn nor host_work: refused before anything runs. */
TEST(rule18_measure_without_fn_or_host_work_is_refused)
{
    tp_stream *stream = new_stream(env->device);
    tp_measurement m = new_measurement();
    CHECK_STATUS(tp_measure(stream, NULL, NULL, NULL, &m), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("fn is NULL");
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
