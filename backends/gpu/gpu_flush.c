/*
 * stream_flush_cache (core/backend.h): what tp_measure queues before each cold call
 * (rule 18), a fill of a device buffer twice the size of the device's last-level
 * cache, so that what the call reads comes from memory whatever the cache's
 * replacement order (triton's do_bench fills 256 MB for the same reason).
 *
 * The buffer is the device's, made at the first flush under the device's setup lock
 * (open_lock) and kept for the life of the process, as the clock's anchors are.
 */
#include "backends/gpu/gpu_internal.h"

#include <stdlib.h>

struct gpu_flush_buffer {
    void *memory;
    size_t size;
};

/* Under open_lock: a new buffer for the device, which is current. */
static tp_status flush_buffer_make_locked(gpu_device *device, struct gpu_flush_buffer **out)
{
    int cache_bytes = 0;
    rt_error e = rt_device_cache_bytes(device->index, &cache_bytes);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_FLUSH_CALLS, e);
    if (cache_bytes <= 0)
        return gpu.host->fail(TP_ERR_UNSUPPORTED, "tp_measure: %s:%d reports no last-level cache to flush (%d bytes)",
                              RT_BACKEND_NAME, device->index, cache_bytes);
    struct gpu_flush_buffer *buffer = malloc(sizeof *buffer);
    if (!buffer)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    buffer->size = (size_t)cache_bytes * 2;
    if ((e = rt_device_alloc(&buffer->memory, buffer->size)) != RT_SUCCESS) {
        free(buffer);
        return gpu_fail_call(RT_FLUSH_CALLS, e);
    }
    atomic_store_explicit(&device->flush_buffer, buffer, memory_order_release);
    *out = buffer;
    return TP_OK;
}

/* The device's buffer, made if it has none; the device is current. */
static tp_status flush_buffer_of(gpu_device *device, struct gpu_flush_buffer **out)
{
    *out = atomic_load_explicit(&device->flush_buffer, memory_order_acquire);
    if (*out)
        return TP_OK;
    pthread_mutex_lock(&device->open_lock);
    *out = atomic_load_explicit(&device->flush_buffer, memory_order_acquire);
    tp_status status = *out ? TP_OK : flush_buffer_make_locked(device, out);
    pthread_mutex_unlock(&device->open_lock);
    return status;
}

tp_status gpu_stream_flush_cache(tp_stream *base)
{
    gpu_stream *stream = gpu_as_stream(base);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    struct gpu_flush_buffer *buffer;
    tp_status status = flush_buffer_of(stream->device, &buffer);
    if (status == TP_OK && (e = rt_memset_async(buffer->memory, 0, buffer->size, stream->native)) != RT_SUCCESS)
        status = gpu_fail_call(RT_MEMSET_CALL, e);
    rt_guard_leave(&guard);
    return status;
}
