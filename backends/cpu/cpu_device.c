/*
 * The bottom of the CPU backend: its module state. The core's services (handed
 * to init), the backend's table (which every handle's head points at; the table
 * itself lives at the top, in cpu_backend.c, and is handed down at init) and the
 * virtual devices. All process-wide by nature: device_count and friends take no
 * handle to keep them in.
 *
 * The devices are a fixed array rather than an allocation: nothing frees them, so
 * that a worker still draining a destroyed stream always finds its device's lock
 * alive, and default streams (never destroyed) live as long as the process.
 */
#include "backends/cpu/cpu_internal.h"
#include "common/env.h"

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

const tp_backend *tp_cpu_table_pointer;

const tp_host *tp_cpu_host(void)
{
    return cpu.host;
}

cpu_device *tp_cpu_device(int index)
{
    return &cpu.devices[index];
}

int tp_cpu_device_count(void)
{
    return cpu.device_count;
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

/*
 * fork(). Only the thread that called fork() exists in the child: the workers of
 * the parent's streams do not, and a lock another thread held at that moment
 * stays held for good. The child's handler therefore starts a new generation:
 * every queue of an earlier one fails at once on whatever would need its worker
 * or its lock (submit, wait, watch; tp_cpu_queue_inherited), with a message that
 * says so, instead of hanging; the devices' locks are made anew and their lists
 * emptied (the inherited queues are on none), and each device gets a fresh
 * default stream on first use. Streams and events the child creates work as in
 * any process. A query of a record pending on an inherited queue (the idle
 * paths are left alone, for speed) answers "not reached": it never blocks. The
 * events' spinlocks are all taken before the fork and given back after it on
 * both sides (cpu_event.c's handlers), and the capture lock is made anew in the
 * child (cpu_graph.c's). Not
 * covered: interprocess events held across fork() (the child would pass for its
 * parent: cpu_ipc.c).
 */
_Atomic unsigned tp_cpu_fork_generation;

static void cpu_atfork_child(void)
{
    atomic_fetch_add_explicit(&tp_cpu_fork_generation, 1, memory_order_relaxed);
    for (int i = 0; i < cpu.device_count; i++) {
        cpu_device *device = &cpu.devices[i];
        (void)pthread_mutex_init(&device->lock, NULL);
        device->queues = NULL;
        device->queue_count = 0;
        atomic_store_explicit(&device->default_queue, NULL, memory_order_relaxed);
    }
}

tp_status tp_cpu_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size)
{
    const char *env = tp_env(CPU_DEVICES_ENV); /* empty means unset, as for every TPEVENT_* */
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
    tp_cpu_table_pointer = table;
    cpu.device_count = count;
    static atomic_bool atfork_registered;
    if (!atomic_exchange(&atfork_registered, true) && pthread_atfork(NULL, NULL, cpu_atfork_child) != 0) {
        atomic_store(&atfork_registered, false);
        snprintf(reason, reason_size, "pthread_atfork: out of memory");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}

/* CLOCK_MONOTONIC itself: its step, and no calibration to be wrong by. */
tp_status tp_cpu_device_clock(int device, tp_clock_info *info)
{
    (void)device;
    struct timespec resolution;
    if (clock_getres(CLOCK_MONOTONIC, &resolution) != 0)
        resolution = (struct timespec){0, 1};
    info->resolution_ns = (int64_t)resolution.tv_sec * 1000000000 + resolution.tv_nsec;
    info->error_ns = 0;
    return TP_OK;
}
