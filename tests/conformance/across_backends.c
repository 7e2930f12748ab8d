/* A record held back by a gate, and a stream of another backend waiting on it. */
#include "across_backends.h"

void across_make(across *a, const char *event_device, const char *stream_device, unsigned flags)
{
    gate_init(&a->gate);
    a->source = new_stream(event_device);
    a->waiting = new_stream(stream_device);
    a->event = new_event(event_device, flags);
    a->after = new_event(stream_device, TP_EVENT_DEFAULT);
    gate_launch(&a->gate, a->source);
    CHECK_OK(tp_event_record(a->event, a->source));
}

void across_finish(across *a)
{
    gate_open(&a->gate);
    if (a->after) {
        CHECK(event_done_within(a->after, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(a->after));
    }
    if (a->waiting) {
        CHECK_OK(tp_stream_synchronize(a->waiting));
        CHECK_OK(tp_stream_destroy(a->waiting));
    }
    if (a->source) {
        CHECK_OK(tp_stream_synchronize(a->source));
        CHECK_OK(tp_stream_destroy(a->source));
    }
    if (a->event)
        CHECK_OK(tp_event_destroy(a->event));
    gate_destroy(&a->gate);
}
