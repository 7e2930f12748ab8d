/* Conformance, rule 18: tp_measure times work of known length as the device runs it
 * (host functions that busy-wait, the one kind of work every backend runs), with the
 * host's submission rate outside the interval when held, the flush outside it when
 * cold; work that synchronizes, fails, or is captured; the options and the answer.
 * Tolerances are wide on the slow side: a loaded CI machine delays host functions,
 * never makes them shorter. Each test says one thing. */
#include "capture_support.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct work {
    int64_t stream_ns; /* put on the stream per call: a host function that busy-waits */
    int64_t host_ns;   /* spent inside fn itself per call */
    bool synchronize;  /* fn synchronizes the stream after its launch */
    int fail_at;       /* the call that fails (0: none) */
    int block_at;      /* the call that blocks until its own work has run (0: none) */
    atomic_int block_ran;
    bool block_timed_out;
    int calls;
    tp_stream *seen; /* the stream fn was given */
} work;

/* Blocks until a host function launched now has run: under a hold, until its watchdog
 * lets the stream go, whatever the watchdog's length (10 calibrations' host time, 0.5 s
 * on the fake GPU under valgrind). */
static tp_status block_until_run(tp_stream *stream, work *w)
{
    tp_status status = tp_stream_launch_host_fn(stream, flag_host_fn, &w->block_ran);
    if (status == TP_OK)
        w->block_timed_out = !flag_reaches_within(&w->block_ran, 1, 60.0);
    return status;
}

static tp_status work_fn(tp_stream *stream, void *arg)
{
    work *w = arg;
    w->seen = stream;
    if (++w->calls == w->fail_at)
        return tp_event_record(NULL, stream); /* TP_ERR_INVALID_ARGUMENT, with tpevent's message */
    if (w->calls == w->block_at) {
        tp_status status = block_until_run(stream, w);
        if (status != TP_OK)
            return status;
    }
    if (w->stream_ns > 0) {
        tp_status status = tp_stream_launch_host_fn(stream, busy_host_fn, &w->stream_ns);
        if (status != TP_OK)
            return status;
    }
    if (w->host_ns > 0)
        busy_host_fn(&w->host_ns);
    return w->synchronize ? tp_stream_synchronize(stream) : TP_OK;
}

static tp_measurement new_measurement(void)
{
    tp_measurement m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    return m;
}

/* A per-call time (a median, or the shortest) lies between the work's length and a
 * loaded machine's delay of it (the fake GPU adds up to ~1 ms per host function: its
 * stream threads poll with a back-off that grows to 1 ms). Far below a watchdog's
 * 100 ms, and below a CPU cache flush (2-5 ms to read 64 MB). */
static bool near_work_length(double per_call_ns, int64_t work_ns)
{
    printf("%.1f us per call of %.1f us of work\n", per_call_ns / 1e3, (double)work_ns / 1e3);
    return per_call_ns >= 0.95 * (double)work_ns && per_call_ns <= 3.0 * (double)work_ns + 1e6;
}

/* Held: each call's time is its work's length, with the stream's per-task cost. The
 * shortest call is checked against both bounds: no call is shorter than its work, and
 * a cost in every call would be in the shortest too, while a loaded machine delays
 * some calls only (CI's TSan stage, two tests at once on two cores, read a median of
 * 3 ms per call of 300 us on the fake GPU's runtime host functions: four threads hand
 * each call on). */
TEST(rule18_measure_times_work_of_known_length)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 300 * 1000};
    tp_measure_options options = quick_measure_options();
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("shortest call %.1f us, median %.1f us\n", m.min_ns / 1e3, m.median_ns / 1e3);
    CHECK(near_work_length(m.min_ns, w.stream_ns));
    CHECK(m.held && !m.cold);
    CHECK(m.samples >= options.min_samples && m.calls >= m.samples && m.batch >= 1);
    CHECK(m.min_ns <= m.median_ns && m.median_ns <= m.max_ns && m.noise >= 0);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The hold keeps a slow submission out of the time: fn spends 5 ms on the host per
 * call and puts 100 us on the stream; held, a call reads 100 us and the stream's
 * per-task cost; unheld, the stream waits for the host and a call reads its 5 ms. On
 * the fake GPU, whose threads poll with a back-off that grows to 1 ms, either may be
 * off by up to ~1.5 ms, and a loaded machine delays some held calls by more: the
 * shortest held call is compared, as the host's 5 ms would be in every one. */
TEST(rule18_measure_hold_keeps_the_host_submission_rate_out)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 100 * 1000, .host_ns = 5000 * 1000};
    tp_measure_options options = quick_measure_options();
    tp_measurement held = new_measurement(), unheld = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &held));
    options.flags = TP_MEASURE_NO_HOLD;
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &unheld));
    printf("held %.1f us per call, shortest %.1f us (%lld x %lld; %s), unheld %.1f us\n", held.median_ns / 1e3,
           held.min_ns / 1e3, (long long)held.samples, (long long)held.batch, held.note, unheld.median_ns / 1e3);
    CHECK(held.held && !unheld.held);
    CHECK(held.min_ns >= 0.95 * 100e3 && held.min_ns < 0.5 * unheld.median_ns);
    CHECK(unheld.median_ns >= 0.5 * 5000e3);
    CHECK(held.cpu_ns >= 0.95 * 5000e3 && unheld.cpu_ns >= 0.95 * 5000e3);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Cold: each call is timed alone, with the cache flush before it and outside it.
 * A flush inside the time would be in every sample, the shortest too: the shortest
 * is checked, which a loaded machine's delays of some calls leave alone (the fake
 * GPU's polling threads under ASan on CI's 2 cores put the median at 1.7-3 ms). */
TEST(rule18_measure_cold_times_each_call_without_the_flush)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 200 * 1000};
    tp_measure_options options = quick_measure_options();
    options.flags = TP_MEASURE_COLD;
    options.min_time_ns = 0; /* a few flushes: under a sanitizer or valgrind a CPU flush is slow */
    options.min_samples = 5;
    /* Under TSan the CPU's warm-up, which fills the flush's 64 MB, and five flushes took
     * 3.5 s alone and 9.5 s beside two other such tests on 2 cores. */
    options.max_time_ns = 60LL * 1000 * 1000 * 1000;
    tp_measurement m = new_measurement();
    tp_status status = tp_measure(stream, work_fn, &w, &options, &m);
    if (status == TP_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", tp_last_error());
        CHECK_OK(tp_stream_destroy(stream));
        return TEST_SKIP;
    }
    CHECK_OK(status);
    printf("%lld calls in %lld samples, note: %s\n", (long long)m.calls, (long long)m.samples, m.note);
    CHECK(m.cold && m.held);
    CHECK(m.samples == m.calls);
    printf("shortest call %.1f us, median %.1f us\n", m.min_ns / 1e3, m.median_ns / 1e3);
    CHECK(near_work_length(m.min_ns, w.stream_ns));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Work that synchronizes its stream is no hang: the hold runs out, that sample is
 * dropped, the rest is unheld, and the note says so, well before max_time. */
TEST(rule18_measure_work_that_synchronizes_is_measured_unheld)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 50 * 1000, .synchronize = true};
    tp_measure_options options = quick_measure_options();
    options.max_time_ns = 20LL * 1000 * 1000 * 1000;
    tp_measurement m = new_measurement();
    double started = monotonic_seconds();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    CHECK(monotonic_seconds() - started < 5.0);
    CHECK(!m.held);
    CHECK(m.samples >= options.min_samples);
    CHECK_CONTAINS(m.note, "without a hold");
    CHECK(m.median_ns >= 0.95 * 50e3);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* fn failing ends the measurement with fn's status and message, the stream let go. */
TEST(rule18_measure_failing_work_returns_its_status_and_message)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 20 * 1000, .fail_at = 6};
    tp_measure_options options = quick_measure_options();
    options.batch = 2;
    tp_measurement m = new_measurement();
    CHECK_STATUS(tp_measure(stream, work_fn, &w, &options, &m), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("tp_event_record");
    CHECK(w.calls == 6);
    CHECK(m.calls == 2 && m.samples == 1); /* warm-up, calibration, one sample, then the failure */
    tp_event *after = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS)); /* no hold left behind */
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A capturing stream is refused before fn is called. */
TEST(rule18_measure_refuses_a_capturing_stream_before_calling_fn)
{
    REQUIRE_CAPTURE(env);
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_stream_begin_capture(stream));
    work w = {0};
    tp_measurement m = new_measurement();
    CHECK_STATUS(tp_measure(stream, work_fn, &w, NULL, &m), TP_ERR_CAPTURING);
    CHECK(w.calls == 0);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(stream, &graph));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* max_time ends a measurement that cannot converge: TP_OK, converged false, a note. */
TEST(rule18_measure_stops_at_max_time_unconverged)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 20 * 1000};
    tp_measure_options options = quick_measure_options();
    options.max_noise = 0;                   /* samples of busy-waits are never all equal */
    options.max_time_ns = 600 * 1000 * 1000; /* under valgrind the fake GPU's warm-up alone took 200 ms */
    tp_measurement m = new_measurement();
    double started = monotonic_seconds();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    CHECK(monotonic_seconds() - started < 5.0);
    CHECK(!m.converged && m.samples > 0);
    CHECK_CONTAINS(m.note, "max_time");
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Converged: min_samples and min_time_ns reached (and the noise within max_noise,
 * which quick_measure_options leaves unbounded), well before max_time. */
TEST(rule18_measure_converges_after_min_time_and_min_samples)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 100 * 1000};
    tp_measure_options options = quick_measure_options();
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    CHECK(m.converged && m.samples >= options.min_samples);
    if (m.note[0] != '\0')
        check_failed(__FILE__, __LINE__, "a note where nothing was given up: %s", m.note);
    /* Hot, the sum of the intervals as timed: each sample is a batch's interval per
     * call, answered less the floor's share (floor / batch), which min_time does not
     * take off: the answered mean times the calls fell below min_time under TSan on
     * a busy machine (4 of 150 runs here, none of 240 with the share added back). */
    double timed_ns = (m.mean_ns + m.floor_ns / (double)m.batch) * (double)m.calls;
    if (!(timed_ns >= 0.99 * (double)options.min_time_ns))
        check_failed(__FILE__, __LINE__, "%.0f ns timed (mean %.0f, floor %.0f, batch %lld, %lld calls), min_time %lld",
                     timed_ns, m.mean_ns, m.floor_ns, (long long)m.batch, (long long)m.calls,
                     (long long)options.min_time_ns);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The caller's buffer gets the first samples, each within [min, max]. */
TEST(rule18_measure_fills_the_callers_samples_buffer)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 50 * 1000};
    double samples[4] = {-1, -1, -1, -1};
    tp_measure_options options = quick_measure_options();
    options.samples_ns = samples;
    options.samples_capacity = 3;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    for (int i = 0; i < 3; i++)
        CHECK(samples[i] >= m.min_ns && samples[i] <= m.max_ns);
    CHECK(samples[3] == -1);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Work run inside fn, not on the stream, is cpu_ns; the note says the device time is
 * far below it. max_time leaves room for stretches whose hold runs out (dropped, with
 * their calls): under valgrind on CI's 2 busy cores, 300 ms kept none, and cpu_ns
 * was 0. */
TEST(rule18_measure_notes_work_run_inside_fn)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.host_ns = 200 * 1000};
    tp_measure_options options = quick_measure_options();
    options.min_time_ns = 0;
    options.max_time_ns = 3LL * 1000 * 1000 * 1000;
    options.min_samples = 9; /* a median that a few samples with the worker descheduled leave alone */
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("%lld calls in %lld samples, cpu_ns %.1f us, note: %s\n", (long long)m.calls, (long long)m.samples,
           m.cpu_ns / 1e3, m.note);
    CHECK(m.cpu_ns >= 0.95 * 200e3);
    CHECK_CONTAINS(m.note, "put no work on the");
    CHECK(!m.converged);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A hold that runs out once (fn blocks past the watchdog in one call, as a process
 * descheduled on a loaded machine does) drops its stretch alone: the next are held
 * again. Call 3 is the first stretch's first (1: the warm-up, 2: the calibration). */
TEST(rule18_measure_holds_again_after_one_hold_runs_out)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 50 * 1000, .block_at = 3};
    tp_measure_options options = quick_measure_options();
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("%lld calls in %lld samples, note: %s\n", (long long)m.calls, (long long)m.samples, m.note);
    CHECK(!w.block_timed_out);
    CHECK(m.held && m.converged);
    CHECK_CONTAINS(m.note, "1 stretch dropped");
    CHECK(m.calls < w.calls - 2); /* the dropped stretch's calls are not counted */
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A max_time that passes before the first sample (here in the warm-up) still gets one:
 * TP_OK, converged false, a time, and a note that says which criterion was not met. */
TEST(rule18_measure_keeps_one_sample_when_max_time_passes_first)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 2 * 1000 * 1000};
    tp_measure_options options = quick_measure_options();
    options.max_time_ns = 1000 * 1000;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    printf("%lld calls in %lld samples, note: %s\n", (long long)m.calls, (long long)m.samples, m.note);
    CHECK(m.samples == 1 && !m.converged);
    CHECK(m.median_ns >= 0.95 * (double)w.stream_ns); /* one sample: a loaded machine's delay is all in it */
    CHECK_CONTAINS(m.note, "max_time 0.001 s passed after 1 of min_samples 5 samples");
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* NULL stream: the current stream of the current device, which fn is given. */
TEST(rule18_measure_null_stream_is_the_current_stream)
{
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_set_device(env->device));
    CHECK_OK(tp_stream_set_current(stream));
    work w = {.stream_ns = 10 * 1000};
    tp_measure_options options = quick_measure_options();
    options.min_time_ns = 0;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(NULL, work_fn, &w, &options, &m));
    CHECK(w.seen == stream);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* A caller's smaller tp_measurement is written up to its size, not past it. */
TEST(rule18_measure_writes_the_answer_up_to_its_size)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 10 * 1000};
    tp_measure_options options = quick_measure_options();
    options.min_time_ns = 0;
    unsigned char buffer[sizeof(tp_measurement)];
    memset(buffer, 0xab, sizeof buffer);
    tp_measurement *m = (tp_measurement *)buffer;
    m->size = offsetof(tp_measurement, median_ns);
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, m));
    CHECK(m->calls > 0 && m->samples > 0 && m->batch > 0);
    for (size_t i = offsetof(tp_measurement, median_ns); i < sizeof buffer; i++)
        CHECK(buffer[i] == 0xab);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Arguments out of range are refused before fn is called. */
TEST(rule18_measure_rejects_bad_arguments)
{
    tp_stream *stream = new_stream(env->device);
    work w = {0};
    tp_measurement m = new_measurement();
    CHECK_STATUS(tp_measure(stream, NULL, &w, NULL, &m), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_measure(stream, work_fn, &w, NULL, NULL), TP_ERR_INVALID_ARGUMENT);
    m.size = 4;
    CHECK_STATUS(tp_measure(stream, work_fn, &w, NULL, &m), TP_ERR_INVALID_ARGUMENT);
    m.size = sizeof m;
    tp_measure_options bad[7];
    for (int i = 0; i < 7; i++)
        tp_measure_options_init(&bad[i]);
    bad[0].min_time_ns = -1;
    bad[1].max_time_ns = 0;
    bad[2].max_noise = -0.1;
    bad[3].min_samples = 0;
    bad[4].batch = -1;
    bad[5].flags = 1u << 7;
    bad[6].samples_capacity = 4; /* with samples_ns NULL */
    for (int i = 0; i < 7; i++)
        CHECK_STATUS(tp_measure(stream, work_fn, &w, &bad[i], &m), TP_ERR_INVALID_ARGUMENT);
    bad[0].size = 0;
    CHECK_STATUS(tp_measure(stream, work_fn, &w, &bad[0], &m), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("tp_measure_options_init");
    CHECK_STATUS(tp_measure_options_init(NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK(w.calls == 0);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* While a trace runs, each sample (and the calibration) is a range "tp_measure" on the
 * stream's track. */
TEST(rule18_measure_traces_each_sample_as_a_range)
{
    tp_stream *stream = new_stream(env->device);
    work w = {.stream_ns = 20 * 1000};
    tp_measure_options options = quick_measure_options();
    options.min_time_ns = 0;
    options.batch = 2;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_trace_start());
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    char *trace = trace_stop_text();
    CHECK(text_occurrences(trace, "\"tp_measure\"") == m.samples + 1);
    free(trace);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* The batch stays within the stream's window (rule 17): work too short to fill a
 * sample by itself is batched up to the window less tpevent's own operations, never
 * past it (a GPU's queue would then block the caller behind the hold). */
TEST(rule18_measure_batch_stays_within_the_window)
{
    tp_stream *stream = new_stream(env->device);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    work w = {.stream_ns = 1};
    tp_measure_options options = quick_measure_options();
    options.min_time_ns = 0;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_measure(stream, work_fn, &w, &options, &m));
    /* Under one hold tpevent queues up to 9 operations of its own besides the batch
     * (core/measure.c's own_ops_per_hold: the hold, the range's and the SM clock's marks,
     * the timing records and their trace marks), and keeps one to spare. */
    CHECK(m.batch >= 1 && (window == INT64_MAX || m.batch <= (window > 11 ? window - 10 : 1)));
    CHECK(m.held);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Cold under a trace, the batch stays within the window too: a cold call queues a
 * flush, a timing record, the call and a timing record, and a trace marks each record
 * (core/measure_window.h: six operations a call, besides the hold's own ten). A trace
 * may start mid-measurement, so they count whether one runs or not; with one running,
 * they are queued. The fake GPU's window of 10 leaves one call; CUDA's 256, 41. */
TEST(rule18_measure_cold_batch_stays_within_the_window)
{
    tp_stream *stream = new_stream(env->device);
    int64_t window = 0;
    CHECK_OK(tp_stream_hold_window(stream, &window));
    work w = {.stream_ns = 1};
    tp_measure_options options = quick_measure_options();
    options.flags = TP_MEASURE_COLD;
    options.min_time_ns = 0;
    options.min_samples = 1; /* a CPU flush is slow under a sanitizer or valgrind */
    options.max_time_ns = 60LL * 1000 * 1000 * 1000;
    tp_measurement m = new_measurement();
    CHECK_OK(tp_trace_start());
    tp_status status = tp_measure(stream, work_fn, &w, &options, &m);
    free(trace_stop_text());
    if (status == TP_ERR_UNSUPPORTED) {
        printf("skipped: %s\n", tp_last_error());
        CHECK_OK(tp_stream_destroy(stream));
        return TEST_SKIP;
    }
    CHECK_OK(status);
    printf("window %lld, cold batch %lld, note: %s\n", (long long)window, (long long)m.batch, m.note);
    CHECK(m.cold && m.held);
    CHECK(m.batch >= 1 && (window == INT64_MAX || m.batch <= (window >= 16 ? (window - 10) / 6 : 1)));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
