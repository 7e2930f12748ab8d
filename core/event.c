/*
 * The public event calls: argument checks, then one indirect call through the
 * event's backend table. Nothing here locks, allocates or looks anything up on the
 * record/query/wait/elapsed paths: a NULL stream is a thread-local load.
 */
#include "core/internal.h"
#include "core/wait_across.h"

/* Why tp_event_create refuses its arguments; out of line (TP_COLD), so that the
 * create itself tests them in one branch. */
TP_COLD static tp_status create_refused(tp_event **out, unsigned flags)
{
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_create: out is NULL");
    if (flags & ~(unsigned)TP_EVENT_FLAGS_ALL)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_create: unknown flag bits 0x%x",
                       flags & ~(unsigned)TP_EVENT_FLAGS_ALL);
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "tp_event_create: TP_EVENT_INTERPROCESS cannot be combined with TP_EVENT_TIMING");
}

#define CREATE_EXCLUSIVE ((unsigned)(TP_EVENT_INTERPROCESS | TP_EVENT_TIMING))

tp_status tp_event_create(tp_event **out, const char *device_str, unsigned flags)
{
    if (TP_UNLIKELY(!out || (flags & ~(unsigned)TP_EVENT_FLAGS_ALL) || (flags & CREATE_EXCLUSIVE) == CREATE_EXCLUSIVE))
        return create_refused(out, flags);
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    return backend->event_create(device.index, flags, out);
}

tp_status tp_event_destroy(tp_event *event)
{
    if (!event)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_destroy: event is NULL");
    if (TP_UNLIKELY(tp_trace_on_for_destroy()))
        tp_trace_forget_event(event); /* core/trace.c */
    if (TP_UNLIKELY(atomic_load_explicit(&event->core_holds, memory_order_relaxed) != 0) &&
        atomic_fetch_or_explicit(&event->core_holds, TP_EVENT_HOLDS_DESTROYED, memory_order_acq_rel) != 0)
        return TP_OK; /* held by a graph: its last release destroys it (core/internal.h) */
    return event->backend->event_destroy(event);
}

/* Failure paths of the hot calls, out of line (TP_COLD) so that the calls themselves
 * need no stack frame for message buffers. */

TP_COLD static tp_status record_mismatch(const tp_event *event, const tp_stream *stream)
{
    char event_device[TP_DEVICE_STRING_MAX], stream_device[TP_DEVICE_STRING_MAX];
    return tp_fail(TP_ERR_DEVICE_MISMATCH, "tp_event_record: event of %s recorded on a stream of %s",
                   tp_device_str(event->device, event_device), tp_device_str(stream->device, stream_device));
}

/* tp_event_record with both arguments there: each path ends in a tail call. */
static inline tp_status record_on(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(!tp_device_same(event->device, stream->device)))
        return record_mismatch(event, stream);
    if (TP_UNLIKELY(tp_trace_on()))
        return tp_trace_record(event, stream); /* core/trace.c: marks a wait's flow start */
    return event->backend->event_record(event, stream);
}

/* The thread's current stream is looked up out of line, so that a record on a
 * stream given keeps nothing across a call (no stack frame). */
TP_NOINLINE static tp_status record_on_current(tp_event *event)
{
    tp_stream *stream;
    tp_status status = tp_stream_current_of(event->device, event->backend, &stream);
    if (TP_UNLIKELY(status != TP_OK))
        return status;
    return record_on(event, stream);
}

tp_status tp_event_record(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(!event))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_record: event is NULL");
    if (!stream)
        return record_on_current(event);
    return record_on(event, stream);
}

tp_status tp_event_query(tp_event *event, bool *done)
{
    if (TP_UNLIKELY(!event || !done))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_query: %s is NULL", event ? "done" : "event");
    return event->backend->event_query(event, done);
}

tp_status tp_event_synchronize(tp_event *event)
{
    if (TP_UNLIKELY(!event))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_synchronize: event is NULL");
    return event->backend->event_synchronize(event);
}

/* tp_event_wait with both arguments there: each path ends in a tail call. */
static inline tp_status wait_on(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(tp_trace_on()))
        return tp_trace_wait(event, stream); /* core/trace.c: the wait, and its flow */
    return tp_event_wait_on(event, stream);
}

/* As record_on_current, for a wait. */
TP_NOINLINE static tp_status wait_on_current(tp_event *event)
{
    tp_stream *stream;
    tp_status status = tp_stream_current_of(event->device, event->backend, &stream);
    if (TP_UNLIKELY(status != TP_OK))
        return status;
    return wait_on(event, stream);
}

tp_status tp_event_wait(tp_event *event, tp_stream *stream)
{
    if (TP_UNLIKELY(!event))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_wait: event is NULL");
    if (!stream)
        return wait_on_current(event);
    return wait_on(event, stream);
}

tp_status tp_event_device(tp_event *event, tp_device *out)
{
    if (!event || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_device: %s is NULL", event ? "out" : "event");
    *out = event->device;
    return TP_OK;
}

tp_status tp_event_flags(tp_event *event, unsigned *flags)
{
    if (!event || !flags)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_flags: %s is NULL", event ? "flags" : "event");
    *flags = event->flags;
    return TP_OK;
}

tp_status tp_event_ipc_handle(tp_event *event, tp_ipc_handle *handle)
{
    if (!event || !handle)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_ipc_handle: %s is NULL", event ? "handle" : "event");
    if (!(event->flags & TP_EVENT_INTERPROCESS))
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_event_ipc_handle: the event was created without TP_EVENT_INTERPROCESS");
    if (!event->backend->event_ipc_export)
        return tp_unsupported(event->backend, "IPC handles");
    tp_ipc_handle sealed = {{0}};
    size_t length = 0;
    tp_status status = event->backend->event_ipc_export(event, sealed.bytes + TP_IPC_HEADER_SIZE, &length);
    if (status != TP_OK)
        return status;
    if (length > TP_IPC_PAYLOAD_MAX)
        return tp_fail(TP_ERR_BACKEND, "tp_event_ipc_handle: %s backend wrote %zu bytes of payload, at most %u fit",
                       event->backend->name, length, (unsigned)TP_IPC_PAYLOAD_MAX);
    tp_ipc_seal(&sealed, event->device, length);
    *handle = sealed;
    return TP_OK;
}

tp_status tp_event_from_ipc_handle(tp_event **out, const char *device_str, const tp_ipc_handle *handle)
{
    if (!out || !handle)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_from_ipc_handle: %s is NULL", out ? "handle" : "out");
    tp_device handle_device;
    size_t length;
    tp_status status = tp_ipc_open(handle, &handle_device, &length);
    if (status != TP_OK)
        return status;
    /* The handle knows its device; a device string, when given, must agree with it. */
    tp_device device;
    const tp_backend *backend;
    char text[TP_DEVICE_STRING_MAX];
    status = tp_device_resolve(device_str ? device_str : tp_device_str(handle_device, text), &device, &backend);
    if (status != TP_OK)
        return status;
    if (device.type != handle_device.type) {
        char wanted[TP_DEVICE_STRING_MAX];
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_from_ipc_handle: the handle is of an event of %s, not of %s",
                       tp_device_str(handle_device, text), tp_device_str(device, wanted));
    }
    if (!backend->event_ipc_import)
        return tp_unsupported(backend, "IPC handles");
    return backend->event_ipc_import(device.index, handle->bytes + TP_IPC_HEADER_SIZE, length, out);
}

tp_status tp_event_native(tp_event *event, void **native)
{
    if (!event || !native)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_native: %s is NULL", event ? "native" : "event");
    if (!event->backend->event_native)
        return tp_unsupported(event->backend, "tp_event_native");
    return event->backend->event_native(event, native);
}

tp_status tp_event_from_native(tp_event **out, const char *device_str, void *native)
{
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_from_native: out is NULL");
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->event_from_native)
        return tp_fail(TP_ERR_UNSUPPORTED,
                       "tp_event_from_native: the %s backend has no runtime events to wrap (its events are "
                       "tpevent's own); only cuda and hip events can be wrapped",
                       backend->name);
    if (!native)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_event_from_native: native is NULL (no runtime event to wrap)");
    return backend->event_from_native(device.index, native, out);
}
