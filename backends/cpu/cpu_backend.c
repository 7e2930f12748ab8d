/*
 * The CPU backend's table, its devices and init. What the backend
 * promises is in cpu_backend.h; how its objects live is in cpu_internal.h.
 *
 * Module state: the core's services (handed to init) and the devices. Both are
 * process-wide by nature: device_count and friends take no handle to keep them in.
 * The devices are a fixed array rather than an allocation: nothing frees them, so
 * that a worker still draining a destroyed stream always finds its device's lock
 * alive, and default streams (never destroyed) live as long as the process.
 */
#include "backends/cpu/cpu_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_DEVICES_ENV "TPEVENT_CPU_DEVICES"

static struct {
    const tp_host *host;
    int device_count;
    cpu_device devices[TP_MAX_DEVICES];
} cpu;

const tp_host *tp_cpu_host(void)
{
    return cpu.host;
}

cpu_device *tp_cpu_device(int index)
{
    return &cpu.devices[index];
}

/* Strict: a plain decimal from 1 to TP_MAX_DEVICES, nothing around it. */
static bool parse_device_count(const char *text, int *count)
{
    if (text[0] < '1' || text[0] > '9')
        return false;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < 1 || value > TP_MAX_DEVICES)
        return false;
    *count = (int)value;
    return true;
}

static tp_status cpu_init(const tp_host *host, char *reason, size_t reason_size)
{
    const char *env = getenv(CPU_DEVICES_ENV);
    int count = 1;
    if (env && !parse_device_count(env, &count)) {
        snprintf(reason, reason_size, "%s=\"%s\": expected a whole number of virtual devices from 1 to %d",
                 CPU_DEVICES_ENV, env, TP_MAX_DEVICES);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    for (int i = 0; i < count; i++) {
        cpu_device *device = &cpu.devices[i];
        int err = pthread_mutex_init(&device->lock, NULL);
        if (err != 0) {
            snprintf(reason, reason_size, "pthread_mutex_init: %s", strerror(err));
            while (i-- > 0)
                pthread_mutex_destroy(&cpu.devices[i].lock);
            return TP_ERR_BACKEND_UNAVAILABLE;
        }
        device->index = i;
        device->queues = NULL;
        device->queue_count = 0;
        atomic_init(&device->default_queue, NULL);
    }
    cpu.host = host;
    cpu.device_count = count;
    return TP_OK;
}

static tp_status cpu_device_count(int *count)
{
    *count = cpu.device_count;
    return TP_OK;
}

static tp_status cpu_device_name(int device, char *buf, size_t size)
{
    if (size == 0)
        return cpu.host->fail(TP_ERR_INVALID_ARGUMENT, "device_name: buffer of size 0");
    snprintf(buf, size, "CPU (virtual device %d)", device);
    return TP_OK;
}

const tp_backend tp_cpu_backend_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = "cpu",
    .type = TP_DEVICE_CPU,
    .init = cpu_init,
    .device_count = cpu_device_count,
    .device_name = cpu_device_name,
    .device_synchronize = tp_cpu_device_synchronize,
    .stream_create = tp_cpu_stream_create,
    .stream_from_native = tp_cpu_stream_from_native,
    .stream_default = tp_cpu_stream_default,
    .stream_destroy = tp_cpu_stream_destroy,
    .stream_query = tp_cpu_stream_query,
    .stream_synchronize = tp_cpu_stream_synchronize,
    .stream_wait_event = tp_cpu_stream_wait_event,
    .stream_launch_host_fn = tp_cpu_stream_launch_host_fn,
    .stream_native = tp_cpu_stream_native,
    .event_create = tp_cpu_event_create,
    .event_destroy = tp_cpu_event_destroy,
    .event_record = tp_cpu_event_record,
    .event_query = tp_cpu_event_query,
    .event_synchronize = tp_cpu_event_synchronize,
    .event_elapsed = tp_cpu_event_elapsed,
    .event_ipc_export = tp_cpu_event_ipc_export,
    .event_ipc_import = tp_cpu_event_ipc_import,
    .native_sample = NULL, /* no runtime underneath to compare with */
};

tp_status tp_backend_entry_cpu(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the cpu backend speaks backend ABI version %u, the core asked for %u",
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &tp_cpu_backend_table;
    return TP_OK;
}
