/* Conformance, rule 13 on one device: a reached record's timestamp is the
 * CLOCK_MONOTONIC time its device reached it, within the device's error_ns of the
 * host's bracket; it never changes once given; timestamps of one stream never go
 * backwards; the errors are rule 7's, in its order; and tp_device_clock's answer.
 * (Across devices and backends: rule13_clock_across_devices.c.) */
#include "support.h"

#include <stdio.h>

/* An output that failing calls must leave alone (outputs are written on success). */
static const int64_t untouched_ns = -12345;

static void expect_timestamp_refused(tp_event *event, tp_status expected)
{
    int64_t ns = untouched_ns;
    CHECK_STATUS(tp_event_timestamp(event, &ns), expected);
    CHECK(ns == untouched_ns);
}

/* ------------------------------------------------------------ the bracket */

/* `tries` records on an idle stream, each timestamp within the host's bracket
 * widened by the device's error_ns. */
static void check_idle_records_within_bracket(const char *device, int tries)
{
    tp_stream *stream = new_stream(device);
    tp_event *event = new_event(device, TP_EVENT_TIMING);
    const int64_t e = device_error_ns(device);
    for (int i = 0; i < tries; i++) {
        int64_t t0, t1;
        record_reached(event, stream, &t0, &t1);
        const int64_t ns = timestamp_of(event);
        if (!(ns >= t0 - e && ns <= t1 + e))
            check_failed(__FILE__, __LINE__,
                         "record %d: timestamp %lld outside [t0 - e, t1 + e] = [%lld, %lld] "
                         "(t0 %+lld ns, t1 %+lld ns from it, error_ns %lld)",
                         i, (long long)ns, (long long)(t0 - e), (long long)(t1 + e), (long long)(t0 - ns),
                         (long long)(t1 - ns), (long long)e);
        if (i % 10 == 9)
            sleep_ms(2); /* spread the records, so that more than one anchor may serve */
    }
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
}

TEST(rule13_timestamp_of_idle_record_within_host_bracket)
{
    check_idle_records_within_bracket(env->device, 50);
    return 0;
}

/* The first calibration is narrow even when the device starts out busy with other
 * work (on a GPU, other processes' contexts taking turns hold an idle stream's
 * record for hundreds of us). On conformance.fake-contended:0 the process's first
 * records are each reached 3 ms late (TPEVENT_FAKE_CONTENDED_RECORDS): keeping the
 * narrowest of the first few brackets was off by milliseconds. The bound is far
 * above a narrow calibration (tens of us), far below a contended one. */
TEST(rule13_first_calibration_is_narrow_on_a_busy_device)
{
    tp_clock_info info;
    CHECK_OK(tp_device_clock(env->device, &info)); /* the first: before any record of ours */
    printf("error_ns %lld after the first calibration\n", (long long)info.error_ns);
    CHECK(info.error_ns >= 0 && info.error_ns < 1000 * 1000);
    check_idle_records_within_bracket(env->device, 20);
    return 0;
}

/* ------------------------------------------------- after an idle while */

enum { idle_ms = 1500, records_after_idle = 10, spacing_ms = 100 };
/* How much error_ns may grow past twice the first calibration's: a later anchor's
 * bracket in a loaded run (a try or two reached among descheduled ones: 8 ms once
 * on 2 cores at load 4). Far below what the drift of the idle while gave on
 * conformance.fake-drifting:0 (2 % slow: 30 ms over 1.5 s). */
static const int64_t error_growth_allowed_ns = 10 * 1000 * 1000;

/* Issue 47: on an H100, after tens of seconds in which a process took no timestamp,
 * the first record of a new stream was converted across that whole while at the
 * drift rate the clock had then (none measured yet): 391 us before its own record
 * call, 8.7 ppm over 45 s. Here: a first calibration and one timestamp, an idle
 * while, then a new stream and event and records spaced as the issue's, each within
 * the host's bracket, and error_ns not grown to hold them. On a fake GPU whose clock
 * drifts far more than a GPU's (conformance.fake-drifting:0), a second and a half
 * shows what took the H100 45 s. */
TEST(rule13_first_timestamp_after_an_idle_while_within_bracket)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    const int64_t first_error = device_error_ns(env->device); /* the first calibration */
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    (void)timestamp_of(event); /* the map is used once before the idle while */
    sleep_ms(idle_ms);
    /* Nothing asks the clock from here until the timestamp: an error_ns read here
     * would calibrate before the record, which the process did not. */
    tp_stream *later_stream = new_stream(env->device);
    tp_event *later_event = new_event(env->device, TP_EVENT_TIMING);
    int64_t farthest_outside = 0, largest_error = first_error;
    for (int i = 0; i < records_after_idle; i++) {
        int64_t t0, t1;
        record_reached(later_event, later_stream, &t0, &t1);
        const int64_t ns = timestamp_of(later_event);
        const int64_t error = device_error_ns(env->device);
        const int64_t e = error > first_error ? error : first_error;
        const int64_t outside = ns < t0 ? t0 - ns : ns > t1 ? ns - t1 : 0;
        farthest_outside = outside > farthest_outside ? outside : farthest_outside;
        largest_error = error > largest_error ? error : largest_error;
        if (!(ns >= t0 - e && ns <= t1 + e))
            check_failed(__FILE__, __LINE__,
                         "record %d after %d ms idle: timestamp %lld outside [t0 - e, t1 + e] "
                         "(t0 %+lld ns, t1 %+lld ns from it, error_ns %lld)",
                         i, idle_ms, (long long)ns, (long long)(t0 - ns), (long long)(t1 - ns), (long long)e);
        if (error > 2 * first_error + error_growth_allowed_ns)
            check_failed(__FILE__, __LINE__,
                         "record %d after %d ms idle: error_ns %lld, from %lld after the first calibration", i, idle_ms,
                         (long long)error, (long long)first_error);
        sleep_ms(spacing_ms);
    }
    printf("after %d ms idle: timestamps at most %lld ns outside their bracket; error_ns %lld, at most %lld\n", idle_ms,
           (long long)farthest_outside, (long long)first_error, (long long)largest_error);
    CHECK_OK(tp_event_destroy(later_event));
    CHECK_OK(tp_stream_destroy(later_stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* ------------------------------------------------------- never backwards */

enum { ordered_records = 200 };

TEST(rule13_timestamps_of_one_stream_never_go_backwards)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    int64_t previous = INT64_MIN;
    for (int i = 0; i < ordered_records; i++) {
        CHECK_OK(tp_event_record(event, stream));
        CHECK_OK(tp_event_synchronize(event));
        const int64_t ns = timestamp_of(event);
        if (ns < previous)
            check_failed(__FILE__, __LINE__, "record %d's timestamp %lld is %lld ns before the previous one's", i,
                         (long long)ns, (long long)(previous - ns));
        previous = ns;
        if (i % 40 == 39)
            sleep_ms(1); /* a few ms in all: the conversion may move to later anchors */
    }
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Records converted newest first still come out in the stream's order: a late
 * conversion of an early record uses the anchors around it, not the latest ones. */
TEST(rule13_timestamps_converted_in_reverse_never_go_backwards)
{
    enum { batch = 40 };
    tp_stream *stream = new_stream(env->device);
    tp_event *events[batch];
    for (int i = 0; i < batch; i++) {
        events[i] = new_event(env->device, TP_EVENT_TIMING);
        CHECK_OK(tp_event_record(events[i], stream));
        if (i % 10 == 9)
            sleep_ms(1);
    }
    CHECK_OK(tp_stream_synchronize(stream));
    int64_t ns[batch];
    for (int i = batch - 1; i >= 0; i--)
        ns[i] = timestamp_of(events[i]);
    for (int i = 1; i < batch; i++)
        if (ns[i] < ns[i - 1])
            check_failed(__FILE__, __LINE__, "record %d's timestamp is %lld ns before record %d's", i,
                         (long long)(ns[i - 1] - ns[i]), i - 1);
    for (int i = 0; i < batch; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* -------------------------------------------------------- asked twice */

TEST(rule13_timestamp_asked_twice_is_the_same)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    tp_event *other = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    const int64_t first = timestamp_of(event);
    /* Other records and time in between, so that new anchors may be taken. */
    for (int i = 0; i < 20; i++) {
        CHECK_OK(tp_event_record(other, stream));
        CHECK_OK(tp_event_synchronize(other));
        (void)timestamp_of(other);
        sleep_ms(1);
    }
    const int64_t second = timestamp_of(event);
    if (second != first)
        check_failed(__FILE__, __LINE__, "timestamp %lld, then %lld (%+lld ns)", (long long)first, (long long)second,
                     (long long)(second - first));
    CHECK_OK(tp_event_destroy(other));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* ------------------------------------------------- errors, rule 7's order */

TEST(rule13_timestamp_timing_disabled_even_if_never_recorded)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_BLOCKING);
    expect_timestamp_refused(event, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    expect_timestamp_refused(event, TP_ERR_TIMING_DISABLED);
    CHECK_ERROR_MENTIONS("TP_EVENT_TIMING");
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule13_timestamp_not_recorded)
{
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    expect_timestamp_refused(event, TP_ERR_NOT_RECORDED);
    CHECK_ERROR_MENTIONS("never recorded");
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(rule13_timestamp_not_ready_behind_gate)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    expect_timestamp_refused(event, TP_ERR_NOT_READY);
    CHECK_ERROR_MENTIONS("not reached");
    const int64_t opened = monotonic_ns();
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    /* Reached after the gate opened, whatever the time of the record call. */
    const int64_t ns = timestamp_of(event);
    CHECK(ns >= opened - device_error_ns(env->device));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule13_timestamp_null_arguments_invalid)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    int64_t ns = untouched_ns;
    CHECK_STATUS(tp_event_timestamp(NULL, &ns), TP_ERR_INVALID_ARGUMENT);
    CHECK(ns == untouched_ns);
    CHECK_STATUS(tp_event_timestamp(event, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* ------------------------------------------------------- tp_device_clock */

TEST(rule13_device_clock_resolution_and_error_bound)
{
    tp_clock_info info = {-1, -1};
    CHECK_OK(tp_device_clock(env->device, &info));
    /* A bound, not a budget: error_ns is what the calibration measured, which a
     * loaded or instrumented run (valgrind: 3.5 ms on the fake GPU) widens; the
     * benchmark holds the budget (bench/timestamp). */
    if (!(info.resolution_ns > 0 && info.error_ns >= 0 && info.error_ns < 1000000000))
        check_failed(__FILE__, __LINE__, "%s: resolution_ns %lld, error_ns %lld (want > 0, and in [0, 1 s))",
                     env->device, (long long)info.resolution_ns, (long long)info.error_ns);
    return 0;
}

TEST(rule13_device_clock_null_info_invalid)
{
    CHECK_STATUS(tp_device_clock(env->device, NULL), TP_ERR_INVALID_ARGUMENT);
    return 0;
}

TEST(rule13_device_clock_bad_device_invalid)
{
    /* The device's own type, at an index no machine has, and a string of no type. */
    char out_of_range[64];
    snprintf(out_of_range, sizeof out_of_range, "%.*s:9999", (int)strcspn(env->device, ":"), env->device);
    const char *const bad[] = {out_of_range, "cdua:0", "cpu:x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tp_clock_info info = {-1, -1};
        CHECK_STATUS(tp_device_clock(bad[i], &info), TP_ERR_INVALID_DEVICE);
        CHECK(info.resolution_ns == -1 && info.error_ns == -1);
        CHECK_ERROR_MENTIONS(bad[i]);
    }
    return 0;
}
