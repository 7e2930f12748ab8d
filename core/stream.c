/*
 * The public stream calls: argument checks, then one indirect call through the
 * stream's backend table. The calling thread's current streams are
 * current_stream.c's.
 */
#include "core/internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

/* The streams made or wrapped so far per device: a new stream's number, its track's
 * default name in traces ("stream N"). Per process, as the devices are. */
static atomic_uint stream_count[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES];

static tp_status numbered(tp_status status, tp_stream *stream)
{
    if (status == TP_OK)
        stream->number = atomic_fetch_add_explicit(&stream_count[stream->device.type][stream->device.index], 1,
                                                   memory_order_relaxed) +
                         1;
    return status;
}

tp_status tp_stream_create(tp_stream **out, const char *device_str, int priority)
{
    tp_device device;
    const tp_backend *backend;
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_create: out is NULL");
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    status = backend->stream_create(device.index, priority, out);
    return numbered(status, status == TP_OK ? *out : NULL);
}

tp_status tp_stream_from_native(tp_stream **out, const char *device_str, void *native)
{
    tp_device device;
    const tp_backend *backend;
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_from_native: out is NULL");
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->stream_from_native)
        return tp_unsupported(backend, "tp_stream_from_native");
    status = backend->stream_from_native(device.index, native, out);
    return numbered(status, status == TP_OK ? *out : NULL);
}

tp_status tp_stream_set_name(tp_stream *stream, const char *name)
{
    if (!stream || !name)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_set_name: %s is NULL", stream ? "name" : "stream");
    tp_status status = tp_trace_name_stream(stream, name); /* core/trace.c: under the trace's lock, which reads it */
    if (status == TP_OK && tp_range_tools_on() && stream->backend->tool_stream_name)
        stream->backend->tool_stream_name(stream, name);
    return status;
}

tp_status tp_stream_destroy(tp_stream *stream)
{
    if (!stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_destroy: stream is NULL");
    if (stream->kind & TP_STREAM_DEFAULT) {
        char text[TP_DEVICE_STRING_MAX];
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_destroy: the default stream of %s cannot be destroyed",
                       tp_device_str(stream->device, text));
    }
    /* The calling thread stops using it; other threads that made it current must
     * reset it before destroying it, as with any object they share. */
    tp_stream_forget_current(stream);
    char *name = stream->name; /* the head is the backend's to free */
    tp_status status = TP_UNLIKELY(tp_trace_on_for_destroy())
                           ? tp_trace_destroy_stream(stream) /* core/trace.c: the destroy, and the trace forgets it */
                           : stream->backend->stream_destroy(stream);
    if (status == TP_OK)
        free(name);
    return status;
}

tp_status tp_stream_default(const char *device_str, tp_stream **out)
{
    tp_device device;
    const tp_backend *backend;
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_default: out is NULL");
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    return backend->stream_default(device.index, out);
}

tp_status tp_stream_query(tp_stream *stream, bool *idle)
{
    if (TP_UNLIKELY(!stream || !idle))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_query: %s is NULL", stream ? "idle" : "stream");
    if (!stream->backend->stream_query)
        return tp_unsupported(stream->backend, "tp_stream_query");
    return stream->backend->stream_query(stream, idle);
}

tp_status tp_stream_synchronize(tp_stream *stream)
{
    if (!stream)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_synchronize: stream is NULL");
    if (!stream->backend->stream_synchronize)
        return tp_unsupported(stream->backend, "tp_stream_synchronize");
    return stream->backend->stream_synchronize(stream);
}

tp_status tp_stream_wait_event(tp_stream *stream, tp_event *event)
{
    if (TP_UNLIKELY(!stream))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_wait_event: stream is NULL");
    return tp_event_wait(event, stream);
}

tp_status tp_stream_wait_stream(tp_stream *stream, tp_stream *other)
{
    if (!stream || !other)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_wait_stream: %s is NULL", stream ? "other" : "stream");
    if (stream == other)
        return TP_OK; /* a stream is always in order with itself (rule 12) */
    /* An event marks the end of other's work so far; a pooled backend makes this
     * cheap, and destroying it with the wait pending is safe (rule 9). */
    tp_event *marker = NULL;
    tp_status status = other->backend->event_create(other->device.index, TP_EVENT_DEFAULT, &marker);
    if (status != TP_OK)
        return status;
    status = tp_event_record(marker, other); /* public calls: a trace sees the flow */
    if (status == TP_OK) {
        status = tp_event_wait(marker, stream);
        if (status == TP_ERR_CAPTURING)
            status = tp_fail_within(status, "tp_stream_wait_stream",
                                    "the stream waits for another stream's work that is not part of its capture "
                                    "(make that stream join the capture, or wait on a TP_EVENT_EXTERNAL event); ");
    }
    tp_event_destroy(marker);
    return status;
}

tp_status tp_stream_record_event(tp_stream *stream, tp_event **event)
{
    if (!stream || !event)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_record_event: %s is NULL", stream ? "event" : "stream");
    if (*event)
        return tp_event_record(*event, stream);
    tp_event *created = NULL;
    tp_status status = stream->backend->event_create(stream->device.index, TP_EVENT_TIMING, &created);
    if (status != TP_OK)
        return status;
    status = tp_event_record(created, stream);
    if (status != TP_OK) {
        stream->backend->event_destroy(created);
        return status;
    }
    *event = created;
    return TP_OK;
}

tp_status tp_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    if (!stream || !fn)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_launch_host_fn: %s is NULL", stream ? "fn" : "stream");
    if (!stream->backend->stream_launch_host_fn)
        return tp_unsupported(stream->backend, "tp_stream_launch_host_fn");
    return stream->backend->stream_launch_host_fn(stream, fn, arg);
}

tp_status tp_stream_native(tp_stream *stream, void **native)
{
    if (!stream || !native)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_native: %s is NULL", stream ? "native" : "stream");
    if (!stream->backend->stream_native)
        return tp_unsupported(stream->backend, "tp_stream_native");
    *native = stream->backend->stream_native(stream);
    return TP_OK;
}

tp_status tp_stream_device(tp_stream *stream, tp_device *out)
{
    if (!stream || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_device: %s is NULL", stream ? "out" : "stream");
    *out = stream->device;
    return TP_OK;
}

tp_status tp_stream_priority(tp_stream *stream, int *priority)
{
    if (!stream || !priority)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_priority: %s is NULL", stream ? "priority" : "stream");
    *priority = stream->priority;
    return TP_OK;
}

tp_status tp_stream_priority_range(const char *device_str, int *least, int *greatest)
{
    if (!least || !greatest)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_priority_range: %s is NULL", least ? "greatest" : "least");
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->stream_priority_range)
        return tp_unsupported(backend, "tp_stream_priority_range");
    int l = 0, g = 0;
    status = backend->stream_priority_range(device.index, &l, &g);
    if (status == TP_OK) {
        *least = l;
        *greatest = g;
    }
    return status;
}
