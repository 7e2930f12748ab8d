/* Conformance, rule 7 on one device: elapsed time in milliseconds, and its errors in
 * their order: TIMING_DISABLED, NOT_RECORDED, NOT_READY. (Across devices and
 * backends: rule07_elapsed_across_devices.c.) */
#include "support.h"

#include <stdint.h>

TEST(rule07_elapsed_at_least_work_duration)
{
    enum { work_ms = 30 };
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);

    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)work_ms));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    if (!(ms >= (float)work_ms))
        check_failed(__FILE__, __LINE__, "elapsed %.3f ms around %d ms of work", (double)ms, work_ms);

    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_elapsed_back_to_back_is_not_negative)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    CHECK(ms >= 0.0f);
    CHECK(ms < 10000.0f);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_elapsed_from_event_to_itself_is_zero)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(event, event, &ms));
    CHECK(ms == 0.0f);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_on_start)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_on_end)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_BLOCKING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_timing_disabled_beats_not_recorded)
{
    tp_event *start = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    expect_elapsed_refused(end, start, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}

TEST(rule07_not_recorded_start)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_not_recorded_end)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_synchronize(start));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_not_recorded_beats_not_ready)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(start, stream));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    expect_elapsed_refused(end, start, TP_ERR_NOT_RECORDED);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule07_not_ready_until_both_reached)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(end, stream));
    CHECK(event_done_within(start, EVENTUALLY_SECONDS));
    expect_elapsed_refused(start, end, TP_ERR_NOT_READY);
    expect_elapsed_refused(end, start, TP_ERR_NOT_READY);
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    CHECK(ms >= 0.0f);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}
