/*
 * Streams: created (non-blocking, with a priority), wrapped from a native handle,
 * or the device's default stream; the pool of native streams whose handle was
 * given out; and each stream's relay streams. Host functions are gpu_host_fn.c's;
 * a stream only makes room for them and tells them when it is destroyed.
 */
#include "backends/gpu/gpu_internal.h"
#include "common/array.h"

#include <stdlib.h>

/*
 * Everything but records and waits done to a stream (query, synchronize, destroy;
 * host functions alike, in gpu_host_fn.c) runs with the stream's device current, as
 * PyTorch does:
 * for cudaLaunchHostFunc on a stream of another device than the current one, CUDA
 * 13's driver reports "stream does not belong to the expected context" (seen under
 * cuda-gdb). None of these is on a budgeted hot path.
 */
static inline rt_error stream_enter_device(gpu_stream *stream, rt_guard *guard)
{
    return rt_guard_enter(guard, stream->device->context, RT_NEED_DEVICE);
}

static int clamp_priority(const gpu_device *device, int priority)
{
    if (priority < device->greatest_priority)
        return device->greatest_priority;
    if (priority > device->least_priority)
        return device->least_priority;
    return priority;
}

/* A new wrapper of `native` on the device. */
static gpu_stream *stream_wrap(gpu_device *device, rt_stream native, int priority, unsigned kind, bool follows)
{
    gpu_stream *stream = malloc(sizeof *stream);
    if (!stream)
        return NULL;
    stream->head = (tp_stream){
        .backend = gpu.table, .device = {RT_DEVICE_TYPE, device->index}, .priority = priority, .kind = kind};
    stream->native = native;
    stream->device = device;
    stream->follows_current_device = follows;
    stream->context_free = !follows && gpu_lazy_start_is_harmless();
    atomic_init(&stream->relays, NULL);
    atomic_init(&stream->host_queue, NULL);
    atomic_init(&stream->holds, NULL);
    /* A wrapped stream may be captured by its owner at any time (rule 16). */
    atomic_init(&stream->capture_check, (kind & TP_STREAM_BORROWED) != 0);
    atomic_init(&stream->direct, stream->context_free && !(kind & TP_STREAM_BORROWED));
    atomic_init(&stream->capture, NULL);
    atomic_init(&stream->handle_given_out, false);
    return stream;
}

/* Destroys a native stream of the device; with work pending the runtime returns at
 * once and frees the stream when the work is done (rule 9). */
static rt_error destroy_native_stream(gpu_device *device, rt_stream native)
{
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        e = rt_stream_destroy(native);
        rt_guard_leave(&guard);
    }
    return e;
}

/* ------------------------------------------------------------------ pool */

/*
 * Rule 19. A native stream whose handle was given out may still be used by whoever
 * holds the handle after its tp stream is destroyed: torch's caching host allocator
 * records an event on every stream a pinned block was used on when it frees the
 * block, and a destroyed stream there aborts the process. So such a native stream
 * is never destroyed: destroy leaves it in its device's pool, and a later stream of
 * the same priority takes it, as torch's own pool hands its streams out again.
 *
 * Only an idle one is taken: its last owner's work (host functions, holds, waits:
 * all of them keep it busy until they are done), and whatever a holder of the
 * handle put on it since, is complete. So a new stream starts with nothing ahead of
 * it, and a host-function thread or hold of the old tp stream never touches it
 * again (those touch only their own queue, counters and gates once the stream has
 * passed them). Everything else tpevent keeps of a stream (relays, host-function
 * queue, capture, name) is in its tp stream struct, which is new each time.
 *
 * Never freed, not even at exit (gpu_stream_pool). Streams are created and destroyed
 * off the hot paths, so a lock per device is fine here. In a child created by fork()
 * no entry reaches the pool (gpu_device.c).
 */

/* Pooled native streams a take asks the runtime about, at most, before it creates
 * a new one: taking stays cheap while many are busy, and each is asked in turn. */
#define STREAM_POOL_ASK_MAX 8

/* An idle native stream of `priority` from the device's pool, with its device
 * current. Rule 16: a stream someone captures is never queried (that would
 * invalidate the capture); the queries are tpevent's own, in relaxed mode, as in
 * gpu_pool.c. */
static bool stream_pool_take(gpu_device *device, int priority, rt_stream *out)
{
    gpu_stream_pool *pool = &device->stream_pool;
    bool found = false;
    pthread_mutex_lock(&pool->lock);
    rt_capture_mode mode = rt_thread_capture_relax_save();
    size_t asked = 0;
    for (size_t seen = 0; seen < pool->count && asked < STREAM_POOL_ASK_MAX && !found; seen++) {
        size_t i = pool->next++ % pool->count;
        gpu_pooled_stream *item = &pool->items[i];
        if (item->priority != priority)
            continue;
        asked++;
        if (rt_stream_capturing(item->native) || rt_stream_query(item->native) != RT_SUCCESS)
            continue; /* busy, captured, or failed: kept, for its holders */
        *out = item->native;
        *item = pool->items[--pool->count];
        found = true;
    }
    rt_thread_capture_restore(mode);
    pthread_mutex_unlock(&pool->lock);
    return found;
}

/* Pools a native stream whose handle was given out, busy or not. Out of memory it
 * is kept all the same, outside the pool: never destroyed, never reused. */
static void stream_pool_give(gpu_device *device, rt_stream native, int priority)
{
    gpu_stream_pool *pool = &device->stream_pool;
    pthread_mutex_lock(&pool->lock);
    if (tp_array_grow(&pool->items, &pool->capacity, pool->count + 1, sizeof *pool->items))
        pool->items[pool->count++] = (gpu_pooled_stream){native, priority};
    pthread_mutex_unlock(&pool->lock);
}

/* --------------------------------------------------------------- streams */

tp_status gpu_stream_create(int index, int priority, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    int clamped = clamp_priority(device, priority);
    rt_stream native;
    bool pooled = false;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        pooled = stream_pool_take(device, clamped, &native);
        if (!pooled)
            e = rt_stream_create(&native, clamped);
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("StreamCreateWithPriority"), e);
    gpu_stream *stream = stream_wrap(device, native, clamped, 0, false);
    if (!stream) {
        if (pooled)
            stream_pool_give(device, native, clamped); /* its handle is still out there */
        else
            (void)destroy_native_stream(device, native);
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_create: out of memory");
    }
    /* Given out before: it stays given out, and goes back to the pool again. */
    atomic_store_explicit(&stream->handle_given_out, pooled, memory_order_relaxed);
    *out = &stream->head;
    return TP_OK;
}

tp_status gpu_stream_from_native(int index, void *native, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_stream handle = rt_stream_from_public(native); /* NULL: the default stream, as tpevent names it */
    bool follows = rt_stream_follows_current_device(handle);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, follows ? RT_NEED_DEVICE : RT_NEED_CONTEXT_FOR_CALL);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    int owner = index, priority = 0;
    bool owner_known = false;
    const char *call = RT_CALL("StreamGetDevice");
    if (!follows)
        e = rt_stream_device(handle, &owner, &owner_known);
    if (e == RT_SUCCESS) {
        call = RT_CALL("StreamGetPriority");
        e = rt_stream_priority(handle, &priority);
    }
    rt_guard_leave(&guard);
    if (e != RT_SUCCESS)
        return gpu_fail_call(call, e);
    if (owner_known && owner != index)
        return gpu.host->fail(TP_ERR_DEVICE_MISMATCH, "tp_stream_from_native: the native stream is of %s:%d, not %s:%d",
                              RT_BACKEND_NAME, owner, RT_BACKEND_NAME, index);
    gpu_stream *stream = stream_wrap(device, handle, priority, TP_STREAM_BORROWED, follows);
    if (!stream)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_from_native: out of memory");
    *out = &stream->head;
    return TP_OK;
}

tp_status gpu_stream_default(int index, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    *out = &device->default_stream.head;
    return TP_OK;
}

static void destroy_relays(gpu_stream *stream)
{
    _Atomic(rt_stream) *relays = atomic_load_explicit(&stream->relays, memory_order_acquire);
    if (!relays)
        return;
    for (int d = 0; d < gpu.device_count; d++) {
        rt_stream relay = atomic_load_explicit(&relays[d], memory_order_relaxed);
        if (relay)
            (void)destroy_native_stream(&gpu.devices[d], relay);
    }
    free((void *)relays);
}

tp_status gpu_stream_destroy(tp_stream *base)
{
    gpu_stream *stream = gpu_as_stream(base);
    rt_error e = RT_SUCCESS;
    gpu_host_fn_stream_closed(stream); /* its host functions still run (rule 9) */
    gpu_hold_stream_closed(stream);    /* its holds stay until released */
    destroy_relays(stream);            /* tpevent's own, never given out */
    if (atomic_load_explicit(&stream->handle_given_out, memory_order_relaxed))
        stream_pool_give(stream->device, stream->native, base->priority);
    else if (!(base->kind & TP_STREAM_BORROWED))
        e = destroy_native_stream(stream->device, stream->native);
    free(stream);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("StreamDestroy"), e);
}

tp_status gpu_stream_query(tp_stream *base, bool *idle)
{
    gpu_stream *stream = gpu_as_stream(base);
    rt_guard guard;
    rt_error e = stream_enter_device(stream, &guard);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_query(stream->native);
    rt_guard_leave(&guard);
    if (TP_LIKELY(e == RT_SUCCESS || e == RT_ERROR_NOT_READY)) {
        *idle = e == RT_SUCCESS;
        return TP_OK;
    }
    return gpu_fail_call(RT_CALL("StreamQuery"), e);
}

TP_COLD static tp_status waits_for_itself(const gpu_stream *stream)
{
    return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                          "tp_stream_synchronize: called from a host function on the %s:%d stream it would wait for, "
                          "which would wait for itself forever",
                          RT_BACKEND_NAME, stream->device->index);
}

tp_status gpu_stream_synchronize(tp_stream *base)
{
    gpu_stream *stream = gpu_as_stream(base);
    if (TP_UNLIKELY(gpu_host_fn_would_wait_for_itself(stream)))
        return waits_for_itself(stream);
    rt_guard guard;
    rt_error e = stream_enter_device(stream, &guard);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_synchronize(stream->native);
    rt_guard_leave(&guard);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_CALL("StreamSynchronize"), e);
}

/* The default stream answers NULL, as torch and CuPy name it (tpevent.h). A wrapped
 * stream's native stream is its owner's, and the default stream is never
 * destroyed: only a created one is marked. */
void *gpu_stream_native(tp_stream *base)
{
    gpu_stream *stream = gpu_as_stream(base);
    if (!(base->kind & (TP_STREAM_DEFAULT | TP_STREAM_BORROWED)))
        atomic_store_explicit(&stream->handle_given_out, true, memory_order_relaxed);
    return rt_stream_public(stream->native);
}

/* ---------------------------------------------------------------- relays */

/* The stream's array of relays, made on first need; racing threads agree on one. */
static _Atomic(rt_stream) *stream_relays(gpu_stream *stream)
{
    _Atomic(rt_stream) *relays = atomic_load_explicit(&stream->relays, memory_order_acquire);
    if (relays)
        return relays;
    _Atomic(rt_stream) *fresh = calloc((size_t)gpu.device_count, sizeof *fresh);
    if (!fresh)
        return NULL;
    for (int d = 0; d < gpu.device_count; d++)
        atomic_init(&fresh[d], NULL);
    if (atomic_compare_exchange_strong_explicit(&stream->relays, &relays, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free((void *)fresh);
    return relays;
}

tp_status gpu_stream_relay(gpu_stream *stream, gpu_device *device, rt_stream *out)
{
    _Atomic(rt_stream) *relays = stream_relays(stream);
    if (!relays)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_wait_event: out of memory for a relay stream");
    rt_stream relay = atomic_load_explicit(&relays[device->index], memory_order_acquire);
    if (relay) {
        *out = relay;
        return TP_OK;
    }
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_create(&relay, device->least_priority);
    rt_guard_leave(&guard);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("StreamCreateWithPriority"), e);
    rt_stream seen = NULL;
    if (!atomic_compare_exchange_strong_explicit(&relays[device->index], &seen, relay, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        (void)destroy_native_stream(device, relay); /* another thread made one first */
        relay = seen;
    }
    *out = relay;
    return TP_OK;
}

tp_status gpu_stream_priority_range(int index, int *least, int *greatest)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    *least = device->least_priority;
    *greatest = device->greatest_priority;
    return TP_OK;
}
