/* Conformance, rule 9 across backends: destroying the event and the streams of a
 * wait across backends while it is pending is safe. Runs both ways. */
#include "across_backends.h"

/* Rule 9: the event, then the waiting stream, then the event's stream destroyed
 * with the wait pending; the gate opens afterwards: nothing crashes, the work
 * recorded after the wait completes, and both devices synchronize. */
static void destroyed_while_pending(const char *event_device, const char *stream_device, unsigned flags)
{
    across a;
    across_make(&a, event_device, stream_device, flags);
    CHECK_OK(tp_event_wait(a.event, a.waiting));
    CHECK_OK(tp_event_record(a.after, a.waiting));
    CHECK_OK(tp_event_destroy(a.event));
    a.event = NULL;
    CHECK_OK(tp_stream_destroy(a.waiting));
    a.waiting = NULL;
    CHECK_OK(tp_stream_destroy(a.source));
    a.source = NULL;
    CHECK(event_pending_for(a.after, 50));
    gate_open(&a.gate);
    CHECK(event_done_within(a.after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_device_synchronize(stream_device));
    CHECK_OK(tp_device_synchronize(event_device));
    across_finish(&a);
}

TEST(rule09_across_backends_destroy_event_and_streams_with_wait_pending)
{
    BOTH_WAYS(env, destroyed_while_pending, TP_EVENT_DEFAULT);
}
