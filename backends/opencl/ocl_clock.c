/*
 * A device's profiling clock on CLOCK_MONOTONIC (rule 13): tp_event_timestamp and
 * tp_device_clock.
 *
 * CL_PROFILING_COMMAND_END is in the device's own ns, on a clock OpenCL does not
 * name (PoCL's is CLOCK_MONOTONIC_RAW, 200 ms away from CLOCK_MONOTONIC on these
 * VMs, and the two run at rates NTP makes differ), and clGetDeviceAndHostTimer
 * answers CL_INVALID_OPERATION on PoCL and on NVIDIA's OpenCL. So, as the GPU
 * backend does (backends/gpu/gpu_clock.c), a device keeps anchors: a marker on an
 * idle queue of its own, bracketed by host clock reads (t0 before the enqueue, t1
 * once a spin on its status sees it complete), the narrowest of ANCHOR_TRIES
 * taken, its host time the bracket's middle.
 *
 * The map from device to host time is piecewise linear, continuous and fixed once
 * made, so that records of one stream never go backwards: anchor k starts a
 * segment at the host time the map had reached there; its first OCL_SLEW_NS rise at
 * the drift rate plus what corrects the anchor's residual (its measurement minus
 * the map), the rest at the drift rate. The drift rate is measured between the
 * newest anchor and the oldest kept when they are RATE_BASELINE_NS apart; until
 * then it is 1. A conversion takes a new anchor when the newest is older than
 * ANCHOR_PERIOD_NS. Each record keeps its converted time (ocl_record.c), so it is
 * given again unchanged. Not a hot path: one mutex per device.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/clock.h"

#include <math.h>

#define ANCHOR_TRIES 5
#define ANCHOR_PERIOD_NS 200e6
#define RATE_BASELINE_NS 1e9
#define OCL_SLEW_NS 100e6
#define ANCHOR_LIMIT_NS 1000000000u
#define CLOCK_ERROR_FLOOR_NS 2000

static ocl_anchor *anchor_at(ocl_clock *clock, int i)
{
    return &clock->anchors[(clock->first + i) % OCL_CLOCK_ANCHORS];
}

/* The map's host time at device time d (the clock has an anchor). */
static double map_device_time(ocl_clock *clock, double d)
{
    ocl_anchor *oldest = anchor_at(clock, 0);
    if (d < oldest->device_ns)
        return oldest->map_ns - (oldest->device_ns - d) * oldest->rate;
    int k = clock->count - 1;
    while (anchor_at(clock, k)->device_ns > d)
        k--;
    ocl_anchor *a = anchor_at(clock, k);
    double x = d - a->device_ns;
    double slewed = x < OCL_SLEW_NS ? x : OCL_SLEW_NS;
    return a->map_ns + slewed * a->slew_rate + (x - slewed) * a->rate;
}

/* One bracketed marker on the clock's queue: its END and the host bracket. */
static tp_status bracket(ocl_clock *clock, cl_ulong *device_ns, uint64_t *t0, uint64_t *t1)
{
    cl_event marker = NULL;
    *t0 = tp_now_ns();
    cl_int error = clEnqueueMarkerWithWaitList(clock->queue, 0, NULL, &marker);
    if (error == CL_SUCCESS)
        error = clFlush(clock->queue);
    cl_int state = CL_QUEUED;
    while (error == CL_SUCCESS && state != CL_COMPLETE) {
        error = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
        if (state < 0)
            error = state;
        if (tp_now_ns() - *t0 > ANCHOR_LIMIT_NS)
            error = CL_OUT_OF_RESOURCES;
        tp_cpu_relax();
    }
    *t1 = tp_now_ns();
    if (error == CL_SUCCESS)
        error = clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof *device_ns, device_ns, NULL);
    if (marker)
        clReleaseEvent(marker);
    return error == CL_SUCCESS ? TP_OK : tp_ocl_fail("tp_event_timestamp", "a clock anchor's marker", error);
}

static tp_status add_anchor(ocl_device *device, ocl_clock *clock)
{
    if (!clock->queue && !(clock->queue = tp_ocl_queue_create(device, "tp_event_timestamp")))
        return TP_ERR_BACKEND;
    double device_ns = 0, host_ns = 0;
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < ANCHOR_TRIES; i++) {
        cl_ulong end = 0;
        uint64_t t0 = 0, t1 = 0;
        tp_status status = bracket(clock, &end, &t0, &t1);
        if (status != TP_OK)
            return status;
        if (t1 - t0 < best_width) {
            best_width = t1 - t0;
            device_ns = (double)end;
            host_ns = (double)t0 + (double)(t1 - t0) / 2.0;
        }
    }
    ocl_anchor made = {.device_ns = device_ns, .host_ns = host_ns, .half_width_ns = (int64_t)(best_width / 2)};
    if (clock->count == 0) {
        made.map_ns = host_ns;
        made.slew_rate = made.rate = 1.0;
    } else {
        ocl_anchor *newest = anchor_at(clock, clock->count - 1);
        ocl_anchor *oldest = anchor_at(clock, 0);
        made.map_ns = map_device_time(clock, device_ns);
        made.rate = newest->rate;
        if (device_ns - oldest->device_ns >= RATE_BASELINE_NS)
            made.rate = (host_ns - oldest->host_ns) / (device_ns - oldest->device_ns);
        made.slew_rate = made.rate + (host_ns - made.map_ns) / OCL_SLEW_NS;
        made.slew_rate = fmax(made.rate * 0.5, fmin(made.rate * 1.5, made.slew_rate));
    }
    if (clock->count == OCL_CLOCK_ANCHORS) {
        clock->first = (clock->first + 1) % OCL_CLOCK_ANCHORS;
        clock->count--;
    }
    *anchor_at(clock, clock->count++) = made;
    int64_t residual = (int64_t)fabs(host_ns - made.map_ns);
    int64_t error = made.half_width_ns + residual;
    if (error > clock->widest_half_width_ns)
        clock->widest_half_width_ns = error;
    return TP_OK;
}

tp_status tp_ocl_clock_convert(ocl_device *device, cl_ulong device_ns, int64_t *host_ns)
{
    ocl_clock *clock = &device->clock;
    pthread_mutex_lock(&clock->lock);
    tp_status status = TP_OK;
    if (clock->count == 0 || (double)tp_now_ns() - anchor_at(clock, clock->count - 1)->host_ns > ANCHOR_PERIOD_NS)
        status = add_anchor(device, clock);
    if (clock->count > 0) {
        status = TP_OK; /* a failed new anchor leaves the map as it was */
        *host_ns = (int64_t)llround(map_device_time(clock, (double)device_ns));
    }
    pthread_mutex_unlock(&clock->lock);
    return status;
}

tp_status tp_ocl_device_clock(int index, tp_clock_info *info)
{
    ocl_device *device = tp_ocl_device(index);
    int64_t ignored = 0;
    cl_ulong now = 0;
    /* An anchor first, so that the bound is the one the first timestamps have. */
    tp_status status = tp_ocl_clock_convert(device, now, &ignored);
    if (status != TP_OK)
        return status;
    size_t resolution = 1;
    clGetDeviceInfo(device->id, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof resolution, &resolution, NULL);
    pthread_mutex_lock(&device->clock.lock);
    info->resolution_ns = resolution > 0 ? (int64_t)resolution : 1;
    info->error_ns = device->clock.widest_half_width_ns + CLOCK_ERROR_FLOOR_NS;
    pthread_mutex_unlock(&device->clock.lock);
    return TP_OK;
}
