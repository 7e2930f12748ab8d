/*
 * Events: the latest record (ocl_record.c), which a record replaces while other
 * threads may read it. Timing needs nothing of its own: every queue tpevent makes
 * profiles, and a record's END is its time (rules 7, 13). A wait within one context
 * is a barrier on the marker; across contexts (two platforms, or two devices), a
 * hold released by the marker's completion.
 *
 * No lock on the hot path. A reader (query, synchronize, wait, elapsed) publishes
 * the record it reads in its thread's hazard slot and loads `latest` again to see
 * that it still is the latest (ocl_readers.c): one locked store per record read,
 * no wait, readers never wait for one another. A record exchanges `latest` and
 * then looks through the slots: a replaced record that no slot holds is dropped at
 * once. Why that is safe (rule 10: a marker released under a reader would be used
 * after its release): both sides are sequentially consistent, the reader stores
 * then loads, the recorder exchanges then loads; so a reader whose slot the
 * recorder did not see loads `latest` after the exchange, sees it changed and
 * never uses the old record. One a slot holds goes on the event's `retired` stack
 * instead, linked through next_free (a record there is in no pool), and a later
 * record takes the whole stack, drops what no slot holds any more and puts the
 * rest back. Only whole stacks are taken (no pop of one), so there is no ABA. A
 * stack outlives a reader at most until the next record after it, or the event's
 * destroy. What a reader keeps past its read (synchronize's long wait, snapshots)
 * it takes a reference on.
 *
 * Before the slots, readers counted themselves in and out of the event with two
 * atomic adds per read: ~13 ns of PoCL's ~16 ns query, ~18 ns of its ~7 ns
 * elapsed (bench/opencl, issue 53).
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
    atomic_init(&event->latest, NULL);
    atomic_init(&event->retired, NULL);
    *out = &event->head;
    return TP_OK;
}

static void unref_stack(ocl_record *record)
{
    while (record) {
        ocl_record *next = record->next_free;
        tp_ocl_record_unref(record); /* a pending marker runs on: the runtime holds it */
        record = next;
    }
}

tp_status tp_ocl_event_destroy(tp_event *handle)
{
    ocl_event *event = (ocl_event *)handle; /* no reader left: the caller's promise */
    ocl_record *latest = atomic_load_explicit(&event->latest, memory_order_relaxed);
    if (latest)
        tp_ocl_record_unref(latest);
    unref_stack(atomic_load_explicit(&event->retired, memory_order_acquire));
    tp_free_list_give(&event_pool, event);
    return TP_OK;
}

tp_status tp_ocl_event_wrap(int index, void *native, const tp_backend *table, tp_event **out)
{
    static const char call[] = "tp_event_from_native";
    const tp_host *host = tp_ocl_host();
    ocl_device *device = tp_ocl_device(index);
    cl_event marker = native;
    cl_command_queue queue = NULL;
    cl_context context = NULL;
    cl_device_id queue_device = NULL;
    cl_int error = clGetEventInfo(marker, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, NULL);
    if (error == CL_SUCCESS)
        error = clGetEventInfo(marker, CL_EVENT_CONTEXT, sizeof context, &context, NULL);
    if (error != CL_SUCCESS)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: %p is not a cl_event (clGetEventInfo: %s)", call, native,
                          tp_ocl_error_name(error));
    if (!queue)
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the cl_event is a user event, of no command and so of no time: wrap a command's event",
                          call);
    error = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL);
    if (error != CL_SUCCESS)
        return tp_ocl_fail(call, "clGetCommandQueueInfo", error);
    if (queue_device != device->id)
        return host->fail(TP_ERR_DEVICE_MISMATCH, "%s: the event's command is not of opencl:%d (%s)", call, index,
                          device->name);
    ocl_record *record = NULL;
    tp_status status = tp_ocl_record_wrap(device, context, queue, marker, call, &record);
    if (status != TP_OK)
        return status;
    tp_event *made = NULL;
    if ((status = tp_ocl_event_create(index, TP_EVENT_TIMING, &made)) != TP_OK) {
        tp_ocl_record_unref(record);
        return status;
    }
    made->backend = table;
    atomic_store_explicit(&((ocl_event *)made)->latest, record, memory_order_relaxed);
    *out = made;
    return TP_OK;
}

static void retired_push(ocl_event *event, ocl_record *first, ocl_record *last)
{
    ocl_record *head = atomic_load_explicit(&event->retired, memory_order_relaxed);
    do
        last->next_free = head;
    while (!atomic_compare_exchange_weak_explicit(&event->retired, &head, first, memory_order_release,
                                                  memory_order_relaxed));
}

/* The records of `stack` that no reader holds any more are dropped; the others go
 * back on the event's stack. */
static void retired_prune(ocl_event *event, ocl_record *stack)
{
    ocl_record *kept = NULL, *kept_last = NULL;
    while (stack) {
        ocl_record *next = stack->next_free;
        if (tp_ocl_record_in_use(stack)) {
            stack->next_free = kept;
            kept = stack;
            if (!kept_last)
                kept_last = stack;
        } else {
            tp_ocl_record_unref(stack);
        }
        stack = next;
    }
    if (kept)
        retired_push(event, kept, kept_last);
}

/* The event's reference on `replaced` (and on what earlier records left), dropped
 * once no reader holds it. */
static void retire(ocl_event *event, ocl_record *replaced)
{
    if (replaced) {
        if (!tp_ocl_record_in_use(replaced))
            tp_ocl_record_unref(replaced);
        else
            retired_push(event, replaced, replaced);
    }
    if (TP_LIKELY(!atomic_load_explicit(&event->retired, memory_order_relaxed)))
        return;
    ocl_record *stack = atomic_exchange_explicit(&event->retired, NULL, memory_order_acquire);
    if (stack)
        retired_prune(event, stack);
}

ocl_record *tp_ocl_event_latest(ocl_event *event)
{
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *record = tp_ocl_read_enter(slot, 0, &event->latest);
    if (record)
        tp_ocl_record_ref(record);
    tp_ocl_read_leave(slot, 0);
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
    tp_ocl_stream_enqueued(stream);
    retire(event, atomic_exchange_explicit(&event->latest, record, memory_order_seq_cst));
    return TP_OK;
}

tp_status tp_ocl_event_query(tp_event *handle, bool *done)
{
    ocl_event *event = (ocl_event *)handle;
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *record = tp_ocl_read_enter(slot, 0, &event->latest);
    tp_status status = TP_OK;
    if (record)
        status = tp_ocl_record_query(record, "tp_event_query", done);
    else
        *done = true;
    tp_ocl_read_leave(slot, 0);
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

/* The wait past a record not reached at the first look (a reference held). */
static tp_status synchronize_pending(tp_event *handle, ocl_record *record)
{
    if (TP_UNLIKELY(record_waits_for_caller(record)))
        return tp_ocl_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                   "tp_event_synchronize: the record comes after the host function that waits for "
                                   "it, on its stream: it would wait for itself forever");
    return tp_ocl_record_wait(record, handle->flags & TP_EVENT_BLOCKING, "tp_event_synchronize");
}

tp_status tp_ocl_event_synchronize(tp_event *handle)
{
    ocl_event *event = (ocl_event *)handle;
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *record = tp_ocl_read_enter(slot, 0, &event->latest);
    bool reached = true;
    tp_status status = record ? tp_ocl_record_query(record, "tp_event_synchronize", &reached) : TP_OK;
    if (TP_UNLIKELY(status == TP_OK && !reached))
        tp_ocl_record_ref(record); /* the wait may be long: kept past the read */
    tp_ocl_read_leave(slot, 0);
    if (TP_LIKELY(status != TP_OK || reached))
        return status;
    status = synchronize_pending(handle, record);
    tp_ocl_record_unref(record);
    return status;
}

/* Two reached records (of one device: the core calls for no other); anything else
 * is for the core to sort out in rule 7's order (tp_host's elapsed_sequenced). */
tp_status tp_ocl_event_elapsed(tp_event *start_handle, tp_event *end_handle, float *ms)
{
    ocl_event *start_event = (ocl_event *)start_handle, *end_event = (ocl_event *)end_handle;
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *records[2];
    tp_ocl_read_enter_pair(slot, &start_event->latest, &end_event->latest, records);
    ocl_record *start = records[0], *end = records[1];
    cl_ulong start_ns = 0, end_ns = 0;
    /* NOT_RECORDED / NOT_READY: the core sorts out rule 7's answer (below). */
    tp_status status = start ? tp_ocl_record_end(start, "tp_event_elapsed_time", &start_ns) : TP_ERR_NOT_RECORDED;
    if (status == TP_OK)
        status = end ? tp_ocl_record_end(end, "tp_event_elapsed_time", &end_ns) : TP_ERR_NOT_RECORDED;
    tp_ocl_read_leave(slot, 1);
    tp_ocl_read_leave(slot, 0);
    if (status == TP_OK)
        *ms = (float)((double)(int64_t)(end_ns - start_ns) / 1e6);
    if (status == TP_ERR_NOT_RECORDED || status == TP_ERR_NOT_READY)
        return tp_ocl_host()->elapsed_sequenced(start_handle, end_handle, ms);
    return status;
}

tp_status tp_ocl_event_timestamp(tp_event *handle, int64_t *ns)
{
    ocl_record *record = tp_ocl_event_latest((ocl_event *)handle);
    if (!record)
        return TP_ERR_NOT_RECORDED;
    tp_status status = tp_ocl_record_time(record, "tp_event_timestamp", ns); /* NOT_READY: not reached */
    tp_ocl_record_unref(record);
    return status;
}

tp_status tp_ocl_event_native(tp_event *handle, void **native)
{
    ocl_event *event = (ocl_event *)handle;
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *record = tp_ocl_read_enter(slot, 0, &event->latest);
    *native = record ? (void *)record->marker : NULL;
    tp_ocl_read_leave(slot, 0);
    return TP_OK;
}

tp_status tp_ocl_stream_wait_event(tp_stream *stream_handle, tp_event *event_handle)
{
    static const char call[] = "tp_event_wait";
    ocl_stream *stream = (ocl_stream *)stream_handle;
    ocl_event *event = (ocl_event *)event_handle;
    /* The barrier and the notice retain the marker themselves: no reference. */
    ocl_reader_slot *slot = tp_ocl_reader_slot();
    ocl_record *record = tp_ocl_read_enter(slot, 0, &event->latest);
    tp_status status = TP_OK;
    if (!record) {
        tp_ocl_read_leave(slot, 0);
        return TP_OK; /* never recorded: nothing to wait for (rule 6) */
    }
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
    tp_ocl_read_leave(slot, 0);
    tp_ocl_stream_enqueued(stream);
    return status;
}
