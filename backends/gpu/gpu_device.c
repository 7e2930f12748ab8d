/*
 * The GPU backend's state and its devices: init, lazy opening of a device, the
 * device-wide entries, and the one place runtime errors become tp statuses.
 */
#include "backends/gpu/gpu_internal.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>

gpu_backend_state gpu;

RT_DEFINE_STATE();

/* ----------------------------------------------------------------- errors */

static tp_status status_of(rt_error e)
{
    return e == RT_ERROR_OUT_OF_MEMORY ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
}

tp_status gpu_fail_call(const char *call, rt_error e)
{
    return gpu.host->fail(status_of(e), "%s: %s: %s", call, rt_error_name(e), rt_error_string(e));
}

/* --------------------------------------------------------------- devices */

tp_status gpu_device_open(gpu_device *device)
{
    if (TP_LIKELY(atomic_load_explicit(&device->open, memory_order_acquire)))
        return TP_OK;
    tp_status status = TP_OK;
    pthread_mutex_lock(&device->open_lock);
    if (!atomic_load_explicit(&device->open, memory_order_relaxed)) {
        rt_guard guard;
        int least = 0, greatest = 0, default_priority = 0;
        rt_error e = rt_context_open(device->index, &device->context);
        const char *call = RT_CALL("DevicePrimaryCtxRetain");
        if (e == RT_SUCCESS) {
            call = RT_CALL("SetDevice");
            e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
            if (e == RT_SUCCESS) {
                call = RT_CALL("DeviceGetStreamPriorityRange");
                e = rt_stream_priority_range(&least, &greatest);
                if (e == RT_SUCCESS && rt_stream_priority(RT_DEFAULT_STREAM, &default_priority) != RT_SUCCESS)
                    default_priority = least;
                rt_guard_leave(&guard);
            }
            if (e != RT_SUCCESS)
                rt_context_close(device->index);
        }
        if (e == RT_SUCCESS) {
            device->least_priority = least;
            device->greatest_priority = greatest;
            device->default_stream = (gpu_stream){
                .head = {.backend = gpu.table,
                         .device = {RT_DEVICE_TYPE, device->index},
                         .priority = default_priority,
                         .kind = TP_STREAM_DEFAULT},
                .native = RT_DEFAULT_STREAM,
                .device = device,
                .follows_current_device = true,
                .context_free = false,
            };
            atomic_init(&device->default_stream.relays, NULL);
            atomic_init(&device->default_stream.host_queue, NULL);
            atomic_init(&device->default_stream.holds, NULL);
            atomic_init(&device->default_stream.capture_check, false);
            atomic_init(&device->default_stream.direct, false);
            atomic_init(&device->default_stream.capture, NULL);
            atomic_init(&device->default_stream.handle_given_out, false);
            atomic_store_explicit(&device->open, true, memory_order_release);
        } else {
            status = gpu_fail_call(call, e);
        }
    }
    pthread_mutex_unlock(&device->open_lock);
    return status;
}

bool gpu_lazy_start_is_harmless(void)
{
#if RT_LAZY_CONTEXT_DEVICE < 0
    return true;
#else
    return RT_LAZY_CONTEXT_DEVICE < gpu.device_count &&
           atomic_load_explicit(&gpu.devices[RT_LAZY_CONTEXT_DEVICE].open, memory_order_acquire);
#endif
}

/*
 * fork(). A child of a process that initialized the CUDA (or HIP) driver cannot
 * use it (the runtimes' documentation; their threads and contexts are not in the
 * child), and calls into it there fail late or hang. So every entry of the
 * backend's tables that can reach the runtime fails there at once with
 * TP_ERR_BACKEND and the reason: the child's handler, registered once the driver
 * is initialized, swaps those entries for ones that do (gpu_backend.c), so the
 * calls' paths carry no test. Only the CPU backend works in such a child; a
 * process started with exec (multiprocessing's spawn) may use the GPU.
 */
TP_COLD tp_status gpu_forked_fail(const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND,
                          "%s: the %s driver cannot be used in a child created by fork() after the parent (pid %d) "
                          "initialized it; only the cpu backend works in this process (pid %d): start it with exec "
                          "(Python: multiprocessing's 'spawn' start method) to use %s",
                          operation, RT_BACKEND_NAME, (int)gpu.init_pid, (int)getpid(), RT_BACKEND_NAME);
}

tp_status gpu_init(const tp_backend *table, const tp_backend *ipc_table, const tp_host *host, char *reason,
                   size_t reason_size)
{
    if (!host || host->abi_version != TP_BACKEND_ABI_VERSION || host->size < sizeof *host || !host->fail ||
        !host->elapsed_sequenced) {
        snprintf(reason, reason_size, "the core's services are not those of backend ABI %u",
                 (unsigned)TP_BACKEND_ABI_VERSION);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    int count = 0;
    rt_error e = rt_device_count(&count);
    if (e != RT_SUCCESS) {
        char hint[160];
        rt_start_failure_hint(e, hint, sizeof hint);
        snprintf(reason, reason_size, "%s: %s%s", rt_error_name(e), rt_error_string(e), hint);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (count <= 0) {
        snprintf(reason, reason_size, "%s found no device", RT_CALL("GetDeviceCount"));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    const char *what = "";
    e = rt_runtime_start(&what);
    if (e != RT_SUCCESS) {
        snprintf(reason, reason_size, "%s: %s: %s", what, rt_error_name(e), rt_error_string(e));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (count > TP_MAX_DEVICES)
        count = TP_MAX_DEVICES;
    gpu_device *devices = calloc((size_t)count, sizeof *devices);
    if (!devices) {
        snprintf(reason, reason_size, "out of memory for %d devices", count);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    for (int d = 0; d < count; d++) {
        devices[d].index = d;
        pthread_mutex_init(&devices[d].open_lock, NULL);
        pthread_mutex_init(&devices[d].ipc_lock, NULL);
        pthread_mutex_init(&devices[d].snapshot_lock, NULL);
        gpu_notifier_init(&devices[d].notifier);
        for (int p = 0; p < GPU_POOL_COUNT; p++)
            pthread_mutex_init(&devices[d].pools[p].lock, NULL);
        pthread_mutex_init(&devices[d].stream_pool.lock, NULL);
    }
    /* Lives as long as the process: tearing devices down at exit would pull
     * streams and contexts from under other libraries still using them. */
    gpu.table = table;
    gpu.ipc_table = ipc_table;
    gpu.host = host;
    gpu.device_count = count;
    gpu.devices = devices;
    gpu.init_pid = (int32_t)getpid();
    return TP_OK;
}

tp_status gpu_device_count(int *count)
{
    *count = gpu.device_count;
    return TP_OK;
}

tp_status gpu_device_name(int device, char *buf, size_t size)
{
    rt_error e = rt_device_name(device, buf, size);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("GetDeviceProperties"), e);
}

tp_status gpu_device_synchronize(int index)
{
    gpu_device *device = &gpu.devices[index];
    bool active = false;
    rt_error e = rt_context_active(index, &active);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("DevicePrimaryCtxGetState"), e);
    if (!active)
        return TP_OK; /* no context, so no work: and none is created to find out */
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_device_synchronize();
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("DeviceSynchronize"), e);
}
