/*
 * Plain events: in-process, with or without timing and blocking sync. These are
 * the budgeted hot paths (record, query, synchronize, wait, elapsed: the C API adds
 * under 3% to each raw call), so each has its common case in one branch and
 * everything else out of line: the common cases are gpu_event_direct.h's (inline,
 * for the tables' direct layer in gpu_backend.c too), a record's other cases
 * gpu_event_record.c's. Interprocess events are gpu_ipc_event.c's.
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_event_direct.h"
#include "common/thread_cache.h"

#include <stdlib.h>

/* ---------------------------------------------------- event struct cache */

/*
 * Freed event structs kept per thread for the next create (common/thread_cache.h),
 * so that a create+destroy pair costs no malloc/free (the pool budget: 10x faster
 * than cudaEventCreate+Destroy, which leaves ~20 ns for the whole pair). A struct
 * destroyed on one thread may be reused on that thread: it carries nothing of its
 * last owner.
 */
static tp_thread_cache_kind event_cache_kind = TP_THREAD_CACHE_KIND_INIT(free);
static _Thread_local tp_thread_cache *thread_event_cache;

__attribute__((constructor)) static void make_event_cache_key(void)
{
    tp_thread_cache_kind_init(&event_cache_kind);
}

static inline tp_status plain_event_init(gpu_event *event, int index, unsigned flags, tp_event **out)
{
    event->head = (tp_event){.backend = gpu.table, .device = {RT_DEVICE_TYPE, index}, .flags = flags};
    atomic_init(&event->native, NULL);
    atomic_init(&event->recorded, false);
    atomic_init(&event->capture, NULL);
    *out = &event->head;
    return TP_OK;
}

/* The thread's cache is empty: a struct from the heap. */
TP_COLD static tp_status plain_event_create_allocated(int index, unsigned flags, tp_event **out)
{
    gpu_event *event = malloc(sizeof *event);
    if (TP_UNLIKELY(!event))
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    return plain_event_init(event, index, flags, out);
}

/* A struct from the thread's cache inline, the heap a tail call: the common case
 * needs no stack frame. */
tp_status gpu_plain_event_create(int index, unsigned flags, tp_event **out)
{
    gpu_event *event = tp_thread_cache_take(thread_event_cache);
    if (TP_LIKELY(event))
        return plain_event_init(event, index, flags, out);
    return plain_event_create_allocated(index, flags, out);
}

/* No call on the event may overlap its destroy (the event is freed here), so
 * `native` is only read: no locked exchange, no fence. A native while `recorded`
 * is false was recorded last inside a capture (gpu_graph.c), not to be queried. */
tp_status gpu_plain_event_destroy(tp_event *base)
{
    gpu_event *event = gpu_as_event(base);
    rt_event native = atomic_load_explicit(&event->native, memory_order_relaxed);
    if (TP_UNLIKELY(native && !gpu_event_recorded(event)))
        gpu_pool_give_captured(gpu_event_device(event), event->head.flags, native);
    else if (native)
        gpu_pool_give(gpu_event_device(event), event->head.flags, native, true);
    tp_thread_cache_give(&event_cache_kind, &thread_event_cache, event);
    return TP_OK;
}

/* ---------------------------------------------------------------- record */

tp_status gpu_plain_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_event *event = gpu_as_event(base);
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (TP_LIKELY(gpu_event_recorded(event) & stream->context_free))
        return gpu_direct_event_record(base, stream_base);
    return gpu_event_record_slow(event, stream);
}

/* ------------------------------------------------------ query, synchronize */

tp_status gpu_plain_event_query(tp_event *base, bool *done)
{
    if (!gpu_event_recorded(gpu_as_event(base))) {
        *done = true; /* rule 4 */
        return TP_OK;
    }
    return gpu_direct_event_query(base, done);
}

tp_status gpu_plain_event_synchronize(tp_event *base)
{
    if (!gpu_event_recorded(gpu_as_event(base)))
        return TP_OK; /* rule 5 */
    return gpu_direct_event_synchronize(base);
}

/* ------------------------------------------------------------------ wait */

/* Any stream, of any device, may wait (rule 1); the runtime keeps the record that
 * is latest now, whatever is recorded later (rule 6). */
TP_NOINLINE static tp_status stream_wait_event_slow(gpu_stream *stream, gpu_event *event)
{
    if (!gpu_event_recorded(event))
        return TP_OK; /* rule 6: nothing to wait for */
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_wait_event(stream->native, gpu_event_native(event));
    rt_guard_leave(&guard);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_STREAM_WAIT_EVENT_CALL, e);
}

tp_status gpu_plain_stream_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_event *event = gpu_as_event(event_base);
    gpu_stream *stream = gpu_as_stream(stream_base);
    if (TP_LIKELY(gpu_event_recorded(event) & stream->context_free))
        return gpu_direct_stream_wait_event(stream_base, event_base);
    return stream_wait_event_slow(stream, event);
}

/* --------------------------------------------------------------- elapsed */

/* Anything but two recorded events needing no guard (the core calls for one device
 * only): never recorded, the core's to sequence (rule 7's order);
 * where the runtime would create a context on a thread that has none, the guard
 * lends the thread the events' device's context for the call and takes it back,
 * so the caller's current device is as it was. */
TP_COLD static tp_status event_elapsed_checked(gpu_event *start, gpu_event *end, float *ms)
{
    if (!gpu_event_recorded(start) || !gpu_event_recorded(end))
        return gpu.host->elapsed_sequenced(&start->head, &end->head, ms);
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_ELAPSED_NEEDS_CONTEXT, &guard, gpu_event_device(start)->context,
                                    RT_NEED_CONTEXT_FOR_CALL);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_elapsed(ms, gpu_event_native(start), gpu_event_native(end));
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_elapsed_failed(e);
}

tp_status gpu_event_elapsed(tp_event *start, tp_event *end, float *ms)
{
    if (TP_LIKELY(gpu_elapsed_is_direct(start, end)))
        return gpu_direct_event_elapsed(start, end, ms);
    return event_elapsed_checked(gpu_as_event(start), gpu_as_event(end), ms);
}

/* ----------------------------------------------------------- interop */

/* tp_event_native, for events of every kind: the native event of the latest
 * record, once there is one (rule 2: none before). */
tp_status gpu_event_native_handle(tp_event *base, void **native)
{
    gpu_event *event = gpu_as_event(base);
    *native = gpu_event_recorded(event) ? (void *)gpu_event_native(event) : NULL;
    return TP_OK;
}

/*
 * tp_event_from_native: a wrapper of a native event the caller owns. Its native
 * event is set at creation and never replaced, so the plain entries serve it for
 * query, synchronize, waits, elapsed time and snapshots; `recorded` is true from
 * the start, the native event's own state being the answer (a native event never
 * recorded answers "reached", as rule 4 wants). Its record and destroy are the two
 * below: a record goes on the native event itself, and destroy never pools it.
 */
tp_status gpu_wrapped_event_create(int index, void *native, const tp_backend *table, tp_event **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    gpu_event *event = malloc(sizeof *event);
    if (!event)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_from_native: out of memory");
    event->head = (tp_event){.backend = table, .device = {RT_DEVICE_TYPE, index}, .flags = TP_EVENT_TIMING};
    atomic_init(&event->native, (rt_event)native);
    atomic_init(&event->recorded, true);
    atomic_init(&event->capture, NULL);
    *out = &event->head;
    return TP_OK;
}

tp_status gpu_wrapped_event_destroy(tp_event *base)
{
    free(gpu_as_event(base)); /* the native event is its owner's */
    return TP_OK;
}

/* Always in place, as its owner's own records are (HIP: recording it while its
 * record is pending is the runtime's rule, as for the owner). */
tp_status gpu_wrapped_event_record(tp_event *base, tp_stream *stream)
{
    return gpu_record_native(gpu_event_native(gpu_as_event(base)), gpu_as_stream(stream));
}
