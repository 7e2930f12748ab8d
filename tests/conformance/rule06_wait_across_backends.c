/* Conformance, rule 6 across backends: a stream of one backend waits for the record
 * of another that was latest at the call (core/wait_across.c); a never-recorded or
 * reached record is nothing to wait for. Each test runs both ways. */
#include "across_backends.h"

/* Work after the wait waits for the record, and goes on once it is reached. */
static void later_work_waits(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_pending_for(a.after, 100));
    CHECK(!stream_is_idle(a.waiting));
    across_finish(&a);
}

TEST(rule06_across_backends_later_work_waits_for_the_record)
{
    BOTH_WAYS(env, later_work_waits, TP_EVENT_DEFAULT);
}

/* With TP_EVENT_BLOCKING the waiting side sleeps instead of spinning; the wait
 * means the same. */
TEST(rule06_across_backends_blocking_event_later_work_waits)
{
    BOTH_WAYS(env, later_work_waits, TP_EVENT_BLOCKING);
}

/* The wait is for the record that was latest at the call: recording the event
 * again, on an idle stream, where it is reached at once, releases nothing. */
static void rerecord_changes_nothing(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    tp_stream *idle = new_stream(event_device);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.event, idle));
    CHECK_OK(tp_event_synchronize(a.event));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK(event_pending_for(a.after, 100));
    across_finish(&a);
    CHECK_OK(tp_stream_destroy(idle));
}

TEST(rule06_across_backends_rerecord_does_not_change_the_wait)
{
    BOTH_WAYS(env, rerecord_changes_nothing, TP_EVENT_DEFAULT);
}

/* Never recorded, or reached already (`reached`): nothing to wait for; the
 * stream is not held. */
static void nothing_to_wait_for(const char *event_device, const char *stream_device, bool reached)
{
    tp_stream *source = new_stream(event_device);
    tp_stream *waiting = new_stream(stream_device);
    tp_event *event = new_event(event_device, TP_EVENT_DEFAULT);
    tp_event *after = new_event(stream_device, TP_EVENT_DEFAULT);
    if (reached) {
        CHECK_OK(tp_event_record(event, source));
        CHECK_OK(tp_event_synchronize(event));
    }
    CHECK_OK(tp_event_wait(event, waiting));
    CHECK_OK(tp_stream_wait_event(waiting, event));
    CHECK_OK(tp_event_record(after, waiting));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_stream_synchronize(waiting));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiting));
    CHECK_OK(tp_stream_destroy(source));
}

TEST(rule06_across_backends_never_recorded_is_a_noop)
{
    BOTH_WAYS(env, nothing_to_wait_for, false);
}

TEST(rule06_across_backends_reached_record_is_a_noop)
{
    BOTH_WAYS(env, nothing_to_wait_for, true);
}
