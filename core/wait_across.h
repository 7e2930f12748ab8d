/*
 * The wait (rule 6) as tp_event_wait and the trace's wait make it: one table call
 * on one backend, or core/wait_across.c's path for an event of another backend.
 * Apart from core/internal.h because the inline wait calls down into
 * wait_across.c, which needs core/internal.h: from there, nothing calls back up.
 */
#ifndef TPEVENT_CORE_WAIT_ACROSS_H
#define TPEVENT_CORE_WAIT_ACROSS_H

#include "core/internal.h"

/* tp_event_wait of a stream on an event of another backend (rules 6, 14). */
tp_status tp_wait_across_backends(tp_event *event, tp_stream *stream) TP_COLD;

/* Before the host path (core/wait_across_device.c): true when the stream now waits
 * for the pending snapshot's record on the device, through a timeline semaphore the
 * event's backend exported; false (nothing done) where either backend cannot. */
bool tp_wait_across_on_device(tp_stream *stream, const tp_snapshot *snapshot) TP_COLD;

/* The wait itself (rule 6), for tp_event_wait and the trace's: one table call on
 * one backend. One backend per device type; a backend may give its events of
 * different kinds tables of their own, so the tables are not what is compared. */
static inline tp_status tp_event_wait_on(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(stream->device.type != event->device.type))
        return tp_wait_across_backends(event, stream); /* core/wait_across.c */
    return event->backend->stream_wait_event(stream, event);
}

#endif /* TPEVENT_CORE_WAIT_ACROSS_H */
