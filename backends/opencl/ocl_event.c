/*
 * Events: the latest record (ocl_record.c) behind a small lock, since a record
 * replaces it while other threads may read it (rule 10: a marker released under a
 * reader would be used after its release). Timing needs nothing of its own: every
 * queue tpevent makes profiles, and a record's END is its time (rules 7, 13).
 * A wait within one context is a barrier on the marker; across contexts (two
 * platforms, or two devices), a hold released by the marker's completion.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/free_list.h"

static tp_free_list event_pool = TP_FREE_LIST_INIT;

tp_status tp_ocl_event_create(int device, unsigned flags, tp_event **out)
{
    if (flags & TP_EVENT_INTERPROCESS)
        return tp_ocl_host()->fail(TP_ERR_UNSUPPORTED,
                                   "tp_event_create: the opencl backend has no interprocess events (OpenCL cannot "
                                   "share an event between processes)");
    ocl_event *event = tp_free_list_take(&event_pool, sizeof *event);
    if (!event)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    event->head = (tp_event){.backend = tp_ocl_table(), .device = {TP_DEVICE_OPENCL, device}, .flags = flags};
    pthread_mutex_init(&event->lock, NULL);
    event->latest = NULL;
    *out = &event->head;
    return TP_OK;
}

tp_status tp_ocl_event_destroy(tp_event *handle)
{
    ocl_event *event = (ocl_event *)handle;
    if (event->latest)
        tp_ocl_record_unref(event->latest); /* a pending marker runs on: the runtime holds it */
    pthread_mutex_destroy(&event->lock);
    tp_free_list_give(&event_pool, event);
    return TP_OK;
}

ocl_record *tp_ocl_event_latest(ocl_event *event)
{
    pthread_mutex_lock(&event->lock);
    ocl_record *record = event->latest;
    if (record)
        tp_ocl_record_ref(record);
    pthread_mutex_unlock(&event->lock);
    return record;
}

tp_status tp_ocl_event_record(tp_event *handle, tp_stream *stream_handle)
{
    ocl_event *event = (ocl_event *)handle;
    ocl_stream *stream = (ocl_stream *)stream_handle;
    ocl_record *record = NULL;
    tp_status status = tp_ocl_record_enqueue(stream->device, stream->context, stream->queue, stream, "tp_event_record",
                                             &record);
    if (TP_UNLIKELY(status != TP_OK))
        return status;
    pthread_mutex_lock(&event->lock);
    ocl_record *replaced = event->latest;
    event->latest = record;
    pthread_mutex_unlock(&event->lock);
    if (replaced)
        tp_ocl_record_unref(replaced);
    return TP_OK;
}

tp_status tp_ocl_event_query(tp_event *handle, bool *done)
{
    ocl_event *event = (ocl_event *)handle;
    pthread_mutex_lock(&event->lock);
    tp_status status = TP_OK;
    if (event->latest)
        status = tp_ocl_record_query(event->latest, "tp_event_query", done);
    else
        *done = true;
    pthread_mutex_unlock(&event->lock);
    return status;
}

/* Rule 15: the record comes after the host function the calling thread runs. */
static bool record_waits_for_caller(ocl_record *record)
{
    if (record->stream != tp_ocl_host_fn_running_stream())
        return false;
    bool reached = true;
    return tp_ocl_record_query(record, "tp_event_synchronize", &reached) == TP_OK && !reached;
}

bool tp_ocl_event_waits_for_itself(tp_event *handle)
{
    ocl_record *record = tp_ocl_event_latest((ocl_event *)handle);
    if (!record)
        return false;
    bool waits = record_waits_for_caller(record);
    tp_ocl_record_unref(record);
    return waits;
}

tp_status tp_ocl_event_synchronize(tp_event *handle)
{
    ocl_record *record = tp_ocl_event_latest((ocl_event *)handle);
    if (!record)
        return TP_OK;
    tp_status status;
    if (TP_UNLIKELY(record_waits_for_caller(record)))
        status = tp_ocl_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                     "tp_event_synchronize: the record comes after the host function that waits for "
                                     "it, on its stream: it would wait for itself forever");
    else
        status = tp_ocl_record_wait(record, handle->flags & TP_EVENT_BLOCKING, "tp_event_synchronize");
    tp_ocl_record_unref(record);
    return status;
}

/* A reached record's END; TP_ERR_NOT_RECORDED / NOT_READY with no message (the
 * core sorts out rule 7's answer). */
static tp_status reached_end(ocl_record *record, cl_ulong *end)
{
    if (!record)
        return TP_ERR_NOT_RECORDED;
    bool reached = false;
    tp_status status = tp_ocl_record_query(record, "tp_event_elapsed_time", &reached);
    if (status != TP_OK)
        return status;
    return reached ? tp_ocl_record_end(record, end) : TP_ERR_NOT_READY;
}

/* Two reached records of one device; anything else is for the core to sort out in
 * rule 7's order (tp_host's elapsed_sequenced). */
tp_status tp_ocl_event_elapsed(tp_event *start_handle, tp_event *end_handle, float *ms)
{
    if (TP_UNLIKELY(start_handle->device.index != end_handle->device.index))
        return tp_ocl_host()->elapsed_sequenced(start_handle, end_handle, ms);
    ocl_record *start = tp_ocl_event_latest((ocl_event *)start_handle);
    ocl_record *end = tp_ocl_event_latest((ocl_event *)end_handle);
    cl_ulong start_ns = 0, end_ns = 0;
    tp_status status = reached_end(start, &start_ns);
    if (status == TP_OK)
        status = reached_end(end, &end_ns);
    if (status == TP_OK)
        *ms = (float)((double)(int64_t)(end_ns - start_ns) / 1e6);
    if (start)
        tp_ocl_record_unref(start);
    if (end)
        tp_ocl_record_unref(end);
    if (status == TP_ERR_NOT_RECORDED || status == TP_ERR_NOT_READY)
        return tp_ocl_host()->elapsed_sequenced(start_handle, end_handle, ms);
    return status;
}

tp_status tp_ocl_event_timestamp(tp_event *handle, int64_t *ns)
{
    ocl_record *record = tp_ocl_event_latest((ocl_event *)handle);
    if (!record)
        return TP_ERR_NOT_RECORDED;
    bool reached = false;
    tp_status status = tp_ocl_record_query(record, "tp_event_timestamp", &reached);
    if (status == TP_OK)
        status = reached ? tp_ocl_record_time(record, ns) : TP_ERR_NOT_READY;
    tp_ocl_record_unref(record);
    return status;
}

tp_status tp_ocl_event_native(tp_event *handle, void **native)
{
    ocl_event *event = (ocl_event *)handle;
    pthread_mutex_lock(&event->lock);
    *native = event->latest ? (void *)event->latest->marker : NULL;
    pthread_mutex_unlock(&event->lock);
    return TP_OK;
}

tp_status tp_ocl_stream_wait_event(tp_stream *stream_handle, tp_event *event_handle)
{
    static const char call[] = "tp_event_wait";
    ocl_stream *stream = (ocl_stream *)stream_handle;
    ocl_record *record = tp_ocl_event_latest((ocl_event *)event_handle);
    if (!record)
        return TP_OK; /* never recorded: nothing to wait for (rule 6) */
    tp_status status = TP_OK;
    if (TP_LIKELY(record->context == stream->context)) {
        cl_int error = clEnqueueBarrierWithWaitList(stream->queue, 1, &record->marker, NULL);
        if (error == CL_SUCCESS)
            error = clFlush(stream->queue);
        if (error != CL_SUCCESS)
            status = tp_ocl_fail(call, "clEnqueueBarrierWithWaitList", error);
    } else {
        void (*release)(void *) = NULL;
        void *arg = NULL;
        status = tp_ocl_hold_queue(stream->context, stream->queue, call, &release, &arg);
        if (status == TP_OK && (status = tp_ocl_record_notify(record, release, arg, call)) != TP_OK)
            release(arg);
    }
    tp_ocl_record_unref(record);
    return status;
}
