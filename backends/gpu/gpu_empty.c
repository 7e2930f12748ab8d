/*
 * stream_launch_empty (core/backend.h): the least work a user's call queues on a
 * stream, which tp_measure times to know what its own records cost each sample
 * (rule 18's floor): an empty kernel on CUDA and the fake GPU, a 4-byte fill on HIP
 * (runtime_*.h say why).
 *
 * The work is the device's, made at the first launch under the device's setup lock
 * (open_lock) and kept for the life of the process, as the cold calls' flush buffer
 * is (gpu_flush.c).
 */
#include "backends/gpu/gpu_internal.h"

#include <stdlib.h>

struct gpu_empty_work {
    rt_empty_work work;
};

/* Under open_lock: the device's empty work, which is current. */
static tp_status empty_work_make_locked(gpu_device *device, struct gpu_empty_work **out)
{
    struct gpu_empty_work *empty = malloc(sizeof *empty);
    if (!empty)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    rt_error e = rt_empty_work_make(&empty->work);
    if (e != RT_SUCCESS) {
        free(empty);
        return gpu_fail_call(RT_EMPTY_WORK_MAKE_CALLS, e);
    }
    atomic_store_explicit(&device->empty_work, empty, memory_order_release);
    *out = empty;
    return TP_OK;
}

/* The device's empty work, made if it has none; the device is current. */
static tp_status empty_work_of(gpu_device *device, struct gpu_empty_work **out)
{
    *out = atomic_load_explicit(&device->empty_work, memory_order_acquire);
    if (*out)
        return TP_OK;
    pthread_mutex_lock(&device->open_lock);
    *out = atomic_load_explicit(&device->empty_work, memory_order_acquire);
    tp_status status = *out ? TP_OK : empty_work_make_locked(device, out);
    pthread_mutex_unlock(&device->open_lock);
    return status;
}

tp_status gpu_stream_launch_empty(tp_stream *base)
{
    gpu_stream *stream = gpu_as_stream(base);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    struct gpu_empty_work *empty;
    tp_status status = empty_work_of(stream->device, &empty);
    if (status == TP_OK && (e = rt_empty_work_launch(empty->work, stream->native)) != RT_SUCCESS)
        status = gpu_fail_call(RT_EMPTY_WORK_LAUNCH_CALL, e);
    rt_guard_leave(&guard);
    return status;
}
