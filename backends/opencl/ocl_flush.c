/*
 * stream_flush_cache (core/backend.h): what tp_measure queues before each cold call
 * (rule 18), a clEnqueueFillBuffer of a buffer twice the device's global memory
 * cache (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE), so that what the call reads comes from
 * memory whatever the cache's replacement order (as backends/gpu/gpu_flush.c).
 *
 * At least 64 MB: a device that reports no such cache (PoCL's CPU devices: cache
 * type None, size 0) still has the CPU's, and 64 MB is twice the 32 MB L3 of a
 * server core complex and the bound backends/cpu/cpu_flush.c puts on its own flush;
 * and a platform may report a smaller cache than its last level (the floor costs a
 * GPU some 20 us). At most CL_DEVICE_MAX_MEM_ALLOC_SIZE.
 *
 * A buffer is of one context: the device's, made at the first flush under the
 * device's lock and kept for the life of the process, as the clock's queue is; a
 * stream wrapped from a queue of another context keeps its own, released with it.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

static const cl_ulong flush_bytes_least = (cl_ulong)64 << 20;

static cl_ulong flush_bytes(ocl_device *device)
{
    cl_ulong cache = 0, max_alloc = 0;
    clGetDeviceInfo(device->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL);
    clGetDeviceInfo(device->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    cl_ulong twice = cache > CL_ULONG_MAX / 2 ? CL_ULONG_MAX : cache * 2; /* the runtime's number: no wrap */
    cl_ulong bytes = twice > flush_bytes_least ? twice : flush_bytes_least;
    return max_alloc > 0 && bytes > max_alloc ? max_alloc : bytes;
}

/* Under the device's lock: the buffer in `slot`, made at the first flush. */
static tp_status flush_buffer_locked(ocl_device *device, cl_context context, ocl_flush_buffer *slot)
{
    if (slot->memory)
        return TP_OK;
    cl_ulong bytes = flush_bytes(device);
    cl_int error = CL_SUCCESS;
    cl_mem memory = clCreateBuffer(context, CL_MEM_READ_WRITE, (size_t)bytes, NULL, &error);
    if (error != CL_SUCCESS)
        return tp_ocl_fail("tp_measure", "clCreateBuffer (the cache flush's buffer)", error);
    slot->memory = memory;
    slot->bytes = (size_t)bytes;
    return TP_OK;
}

tp_status tp_ocl_stream_flush_cache(tp_stream *handle)
{
    ocl_stream *stream = (ocl_stream *)handle;
    ocl_device *device = stream->device;
    ocl_flush_buffer *slot = stream->context == device->context ? &device->flush : &stream->flush;
    pthread_mutex_lock(&device->lock);
    tp_status status = flush_buffer_locked(device, stream->context, slot);
    ocl_flush_buffer buffer = *slot;
    pthread_mutex_unlock(&device->lock);
    if (status != TP_OK)
        return status;
    const cl_uint pattern = 0;
    cl_int error = clEnqueueFillBuffer(stream->queue, buffer.memory, &pattern, sizeof pattern, 0, buffer.bytes, 0, NULL,
                                       NULL);
    if (error == CL_SUCCESS)
        error = clFlush(stream->queue);
    tp_ocl_stream_enqueued(stream);
    return error == CL_SUCCESS ? TP_OK : tp_ocl_fail("tp_measure", "clEnqueueFillBuffer (the cache flush)", error);
}

/* tp_measure's floor: a marker with no event kept, flushed as a user's enqueue is
 * (the least a queue runs; OpenCL compiles kernels only from source, seconds on
 * PoCL). */
tp_status tp_ocl_stream_launch_empty(tp_stream *handle)
{
    ocl_stream *stream = (ocl_stream *)handle;
    cl_int error = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, NULL);
    if (error == CL_SUCCESS)
        error = clFlush(stream->queue);
    tp_ocl_stream_enqueued(stream);
    return error == CL_SUCCESS ? TP_OK
                               : tp_ocl_fail("tp_measure", "clEnqueueMarkerWithWaitList (the floor's work)", error);
}
