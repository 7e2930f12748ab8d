/*
 * Timed waits: tp_event_synchronize_for and tp_stream_synchronize_for, built in
 * the core on the backends' non-blocking queries, so that no backend needs an
 * entry of its own for them. The untimed synchronizes stay one table call each.
 *
 * The loop: one query; then, unless the event sleeps (TP_EVENT_BLOCKING), the
 * spin of common/spin.h on the query; then its doubling sleeps, each cut to the
 * time left, with a query after each, until done or the deadline (CLOCK_MONOTONIC)
 * has passed. A query that fails ends the wait with its status.
 */
#include "core/internal.h"

#include "common/spin.h"

#include <inttypes.h>

typedef tp_status (*poll_fn)(void *object, bool *done);
typedef bool (*self_wait_fn)(void *object);

/* One query of a spin: its status lands in *status, and a failed query ends the
 * spin as a done one does. */
typedef struct spin_poll {
    poll_fn poll;
    void *object;
    tp_status *status;
} spin_poll;

static bool spin_poll_ended(const void *arg)
{
    const spin_poll *p = arg;
    bool done = false;
    *p->status = p->poll(p->object, &done);
    return *p->status != TP_OK || done;
}

TP_COLD static tp_status negative_timeout(const char *operation, int64_t timeout_ns)
{
    return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: timeout_ns is negative (%" PRId64 ")", operation, timeout_ns);
}

TP_COLD static tp_status timed_out(const char *operation, const char *what, int64_t timeout_ns)
{
    return tp_fail(TP_ERR_NOT_READY, "%s: the time ran out (%" PRId64 " ns) before %s", operation, timeout_ns, what);
}

TP_COLD static tp_status waits_for_itself(const char *operation)
{
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "%s: called from a host function on the stream it would wait for, which "
                   "would wait for itself forever",
                   operation);
}

static tp_status wait_for(poll_fn poll, self_wait_fn self_wait, void *object, int64_t timeout_ns, bool sleep_only,
                          const char *operation, const char *what)
{
    bool done = false;
    tp_status status = poll(object, &done);
    if (status != TP_OK)
        return tp_fail_within(status, operation, "");
    if (done)
        return TP_OK;
    if (timeout_ns == 0)
        return timed_out(operation, what, timeout_ns);
    /* Rule 15: as the untimed synchronizes, a wait that could only end by timing
     * out is refused at once. */
    if (self_wait && self_wait(object))
        return waits_for_itself(operation);
    uint64_t now = tp_now_ns();
    uint64_t deadline = (uint64_t)timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + (uint64_t)timeout_ns;
    if (!sleep_only) {
        uint64_t spin_ns = deadline - now > TP_SPIN_NS ? TP_SPIN_NS : deadline - now;
        if (tp_spin_until(spin_poll_ended, &(spin_poll){poll, object, &status}, spin_ns))
            return status == TP_OK ? TP_OK : tp_fail_within(status, operation, "");
    }
    uint64_t pause = TP_PAUSE_FIRST_NS;
    for (;;) {
        now = tp_now_ns();
        if (now >= deadline)
            return timed_out(operation, what, timeout_ns);
        uint64_t left = deadline - now;
        tp_sleep_ns(pause < left ? pause : left);
        status = poll(object, &done);
        if (status != TP_OK)
            return tp_fail_within(status, operation, "");
        if (done)
            return TP_OK;
        pause = tp_pause_next(pause);
    }
}

static tp_status poll_event(void *object, bool *done)
{
    tp_event *event = object;
    return event->backend->event_query(event, done);
}

static tp_status poll_stream(void *object, bool *done)
{
    tp_stream *stream = object;
    return stream->backend->stream_query(stream, done);
}

static bool event_waits_for_itself(void *object)
{
    tp_event *event = object;
    return event->backend->event_waits_for_itself && event->backend->event_waits_for_itself(event);
}

static bool stream_waits_for_itself(void *object)
{
    tp_stream *stream = object;
    return stream->backend->stream_waits_for_itself && stream->backend->stream_waits_for_itself(stream);
}

tp_status tp_event_synchronize_for(tp_event *event, int64_t timeout_ns)
{
    if (!event)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_synchronize_for: event is NULL");
    if (timeout_ns < 0)
        return negative_timeout("tp_event_synchronize_for", timeout_ns);
    return wait_for(poll_event, event_waits_for_itself, event, timeout_ns, (event->flags & TP_EVENT_BLOCKING) != 0,
                    "tp_event_synchronize_for", "the event's latest record was reached");
}

tp_status tp_stream_synchronize_for(tp_stream *stream, int64_t timeout_ns)
{
    if (!stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_synchronize_for: stream is NULL");
    if (timeout_ns < 0)
        return negative_timeout("tp_stream_synchronize_for", timeout_ns);
    if (!stream->backend->stream_query)
        return tp_unsupported(stream->backend, "tp_stream_synchronize_for");
    return wait_for(poll_stream, stream_waits_for_itself, stream, timeout_ns, false, "tp_stream_synchronize_for",
                    "the stream's work was done");
}
