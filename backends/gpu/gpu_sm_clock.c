/*
 * sm_clock (core/backend.h, tp_sm_clock_ops): tp_measure's SM clock (rule 18), read as
 * nvbench reads it. A mark is a kernel of one thread per SM, loaded as PTX, whose block
 * on SM 0 writes %clock64 and %globaltimer into mapped host memory
 * (runtime_cuda.h); a stretch's clock is the cycles between its two marks over their
 * ns. NVML (by dlopen, when present) gives the maximum clock and the throttle reasons.
 * HIP reads no clock: its open says why (runtime_hip.h).
 *
 * The kernel is the device's, made at the first reader under the device's setup lock
 * (open_lock) and kept, as the floor's empty work is (gpu_empty.c), with the maximum
 * clock asked then (NVML's calls once per device, not per measurement); a reader's marks
 * are kept too, on the kernel's free list, for the next reader: freeing mapped host
 * memory may wait for the device, and a measurement must not. A reader given back
 * with a mark still queued (a stream held elsewhere) is retired instead, never reused:
 * its marks may be written whenever that stream goes on.
 */
#define GPU_SM_CLOCK_MAPPING /* the runtime mapping's SM clock part: this file's alone */

#include "backends/gpu/gpu_internal.h" /* first: it sets the feature macros */

#include <stdio.h>
#include <stdlib.h>

#if RT_SM_CLOCK_SUPPORTED

struct gpu_sm_clock_kernel {
    rt_sm_clock_kernel kernel;
    /* The SM's maximum clock and where it came from, asked once with the kernel:
     * NVML's or the runtime's answer is the device's, not a measurement's. */
    double max_mhz;
    char max_note[TP_MEASURE_NOTE_MAX];
    pthread_mutex_t lock;
    struct tp_sm_clock *free;    /* readers given back, under lock */
    struct tp_sm_clock *retired; /* readers whose marks may still be written: kept, never reused */
};

struct tp_sm_clock {
    struct tp_sm_clock *next; /* on the free list */
    gpu_device *device;
    struct gpu_sm_clock_kernel *kernel;
    volatile uint64_t *marks; /* mapped host memory: per mark, SM 0's cycles and the ns */
    rt_device_ptr marks_device;
};

/* Under open_lock: the device's kernel, with the maximum asked before; the device is
 * current. */
static tp_status kernel_make_locked(gpu_device *device, double max_mhz, const char *max_note,
                                    struct gpu_sm_clock_kernel **out)
{
    struct gpu_sm_clock_kernel *kernel = calloc(1, sizeof *kernel);
    if (!kernel)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
    rt_error e = rt_sm_clock_kernel_make(device->index, &kernel->kernel);
    if (e != RT_SUCCESS) {
        free(kernel);
        return gpu_fail_call(RT_SM_CLOCK_MAKE_CALLS, e);
    }
    kernel->max_mhz = max_mhz;
    snprintf(kernel->max_note, sizeof kernel->max_note, "%s", max_note);
    pthread_mutex_init(&kernel->lock, NULL);
    atomic_store_explicit(&device->sm_clock, kernel, memory_order_release);
    *out = kernel;
    return TP_OK;
}

static tp_status kernel_of(gpu_device *device, struct gpu_sm_clock_kernel **out)
{
    *out = atomic_load_explicit(&device->sm_clock, memory_order_acquire);
    if (*out)
        return TP_OK;
    /* Outside the device's setup lock: NVML's first call (nvmlInit_v2) may take long,
     * and the device's other setup (its opening by another thread, the floor's empty
     * work, the flush buffer) waits for that lock. */
    char max_note[TP_MEASURE_NOTE_MAX];
    double max_mhz = rt_sm_clock_max_mhz(device->index, max_note, sizeof max_note);
    pthread_mutex_lock(&device->open_lock);
    *out = atomic_load_explicit(&device->sm_clock, memory_order_acquire);
    tp_status status = *out ? TP_OK : kernel_make_locked(device, max_mhz, max_note, out);
    pthread_mutex_unlock(&device->open_lock);
    return status;
}

/* A reader given back earlier, or a new one with its marks; the device is current. */
static tp_status reader_take(gpu_device *device, struct gpu_sm_clock_kernel *kernel, tp_sm_clock **out)
{
    pthread_mutex_lock(&kernel->lock);
    tp_sm_clock *clock = kernel->free;
    if (clock)
        kernel->free = clock->next;
    pthread_mutex_unlock(&kernel->lock);
    if (!clock) {
        void *marks = NULL;
        if (!(clock = calloc(1, sizeof *clock)))
            return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_measure: out of memory");
        rt_error e = rt_host_alloc_mapped(&marks, 4 * sizeof(uint64_t));
        if (e == RT_SUCCESS && (e = rt_host_device_pointer(&clock->marks_device, marks)) != RT_SUCCESS)
            (void)rt_host_free(marks);
        if (e != RT_SUCCESS) {
            free(clock);
            return gpu_fail_call(RT_CALL("HostAlloc"), e);
        }
        clock->marks = marks;
    }
    clock->device = device;
    clock->kernel = kernel;
    for (int i = 0; i < 4; i++)
        clock->marks[i] = 0;
    *out = clock;
    return TP_OK;
}

static tp_status sm_clock_open(tp_stream *base, tp_sm_clock **out, double *max_mhz, char *note, size_t note_size)
{
    gpu_device *device = gpu_as_stream(base)->device;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    struct gpu_sm_clock_kernel *kernel;
    tp_status status = kernel_of(device, &kernel);
    if (status == TP_OK)
        status = reader_take(device, kernel, out);
    rt_guard_leave(&guard);
    if (status == TP_OK) {
        *max_mhz = kernel->max_mhz;
        snprintf(note, note_size, "%s", kernel->max_note);
    }
    return status;
}

static tp_status sm_clock_mark(tp_sm_clock *clock, tp_stream *base, int which)
{
    gpu_stream *stream = gpu_as_stream(base);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    rt_device_ptr mark = rt_device_ptr_offset(clock->marks_device, (size_t)(which ? 2 : 0) * sizeof(uint64_t));
    e = rt_sm_clock_launch(&clock->kernel->kernel, stream->native, mark);
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_SM_CLOCK_LAUNCH_CALL, e);
}

/* The stream has passed both marks, so the device's writes are the host's to read. */
static double sm_clock_read(tp_sm_clock *clock)
{
    uint64_t cycles0 = clock->marks[0], ns0 = clock->marks[1], cycles1 = clock->marks[2], ns1 = clock->marks[3];
    for (int i = 0; i < 4; i++)
        clock->marks[i] = 0;
    /* A mark no block wrote (none ran on SM 0) stays 0. */
    if (ns0 == 0 || ns1 <= ns0 || cycles1 <= cycles0)
        return 0;
    return (double)(cycles1 - cycles0) / (double)(ns1 - ns0) * 1000.0;
}

static void sm_clock_explain(tp_sm_clock *clock, char *note, size_t note_size)
{
    rt_sm_clock_reasons(clock->device->index, note, note_size);
}

static void sm_clock_close(tp_sm_clock *clock, bool passed)
{
    struct gpu_sm_clock_kernel *kernel = clock->kernel;
    struct tp_sm_clock **list = passed ? &kernel->free : &kernel->retired;
    pthread_mutex_lock(&kernel->lock);
    clock->next = *list;
    *list = clock;
    pthread_mutex_unlock(&kernel->lock);
}

#else /* !RT_SM_CLOCK_SUPPORTED: the clock unknown, saying why */

static tp_status sm_clock_open(tp_stream *base, tp_sm_clock **out, double *max_mhz, char *note, size_t note_size)
{
    (void)base;
    *out = NULL;
    *max_mhz = 0;
    snprintf(note, note_size, "%s", RT_SM_CLOCK_UNSUPPORTED);
    return TP_ERR_UNSUPPORTED;
}

/* Never called: no reader is ever opened. */
static tp_status sm_clock_mark(tp_sm_clock *clock, tp_stream *base, int which)
{
    (void)clock;
    (void)base;
    (void)which;
    return TP_ERR_UNSUPPORTED;
}

static double sm_clock_read(tp_sm_clock *clock)
{
    (void)clock;
    return 0;
}

static void sm_clock_explain(tp_sm_clock *clock, char *note, size_t note_size)
{
    (void)clock;
    if (note_size)
        note[0] = '\0';
}

static void sm_clock_close(tp_sm_clock *clock, bool passed)
{
    (void)clock;
    (void)passed;
}

#endif

const tp_sm_clock_ops gpu_sm_clock_ops = {
    .open = sm_clock_open,
    .mark = sm_clock_mark,
    .read = sm_clock_read,
    .explain = sm_clock_explain,
    .close = sm_clock_close,
};

/* In a child created by fork() (gpu_forked.c): the parent's runtime is not the child's. */
static tp_status forked_open(tp_stream *base, tp_sm_clock **out, double *max_mhz, char *note, size_t note_size)
{
    (void)base;
    *out = NULL;
    *max_mhz = 0;
    snprintf(note, note_size, "a child of fork() cannot use its parent's %s runtime", RT_BACKEND_NAME);
    return TP_ERR_UNSUPPORTED;
}

const tp_sm_clock_ops gpu_sm_clock_forked_ops = {
    .open = forked_open,
    .mark = sm_clock_mark,
    .read = sm_clock_read,
    .explain = sm_clock_explain,
    .close = sm_clock_close,
};
