/* Conformance, rule 7 across backends: the order of elapsed_time's answers for
 * events of two backends is the rule's (TIMING_DISABLED, NOT_RECORDED, NOT_READY,
 * then DEVICE_MISMATCH until the clock issue), not "two backends" first.
 *
 * The other backend: the CPU for a GPU device; for a CPU device, the first GPU
 * backend usable here. On a machine with none (CI) these tests skip, saying so;
 * the core's sequencing itself is the one that events of two CPU devices go
 * through too (rules_05_08.c's rule07_*_beats_device_mismatch). */
#include "support.h"

TEST(rule07_two_backends_timing_disabled_first)
{
    REQUIRE_OTHER_BACKEND(env, other);
    tp_event *start = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *end = new_event(other, TP_EVENT_TIMING);
    expect_elapsed_refused(start, end, TP_ERR_TIMING_DISABLED);
    expect_elapsed_refused(end, start, TP_ERR_TIMING_DISABLED);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}

TEST(rule07_two_backends_not_recorded_before_device_mismatch)
{
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(other, TP_EVENT_TIMING);
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_synchronize(start));
    expect_elapsed_refused(start, end, TP_ERR_NOT_RECORDED);
    expect_elapsed_refused(end, start, TP_ERR_NOT_RECORDED);
    CHECK_ERROR_MENTIONS("never recorded");
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule07_two_backends_not_ready_before_device_mismatch)
{
    REQUIRE_OTHER_BACKEND(env, other);
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *other_stream = new_stream(other);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(other, TP_EVENT_TIMING);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, other_stream));
    CHECK_OK(tp_event_synchronize(end));
    expect_elapsed_refused(start, end, TP_ERR_NOT_READY);
    expect_elapsed_refused(end, start, TP_ERR_NOT_READY);
    CHECK_ERROR_MENTIONS("not reached");
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(other_stream));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* Until the clock issue puts both on CLOCK_MONOTONIC (rule 13). */
TEST(rule07_two_backends_both_reached_device_mismatch)
{
    REQUIRE_OTHER_BACKEND(env, other);
    tp_stream *stream = new_stream(env->device);
    tp_stream *other_stream = new_stream(other);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(other, TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, other_stream));
    CHECK_OK(tp_event_synchronize(start));
    CHECK_OK(tp_event_synchronize(end));
    float ms = 12345.0f;
    CHECK_STATUS(tp_event_elapsed_time(start, end, &ms), TP_ERR_DEVICE_MISMATCH);
    CHECK(ms == 12345.0f);
    CHECK_ERROR_MENTIONS(env->device);
    expect_elapsed_refused(end, start, TP_ERR_DEVICE_MISMATCH);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(other_stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
