/*
 * The GPU backend, shared by CUDA and HIP. Compiled once per runtime: the mapping
 * header (runtime_cuda.h or runtime_hip.h) gives every runtime call an rt_* name,
 * and nothing below knows which runtime it runs on. CUDA is the one tested on
 * hardware here, so this file is the tested code for both.
 *
 * How the pieces fit:
 *  - Devices are opened lazily (first stream, first record, default stream): the
 *    backend then holds the device's primary context and knows its priority range.
 *    Opening nothing at init means a process that touches only cuda:1 never pays
 *    for a context on cuda:0.
 *  - Streams wrap a native stream. Created streams are non-blocking; the default
 *    stream is the runtime's NULL stream (see the mapping for which handle).
 *    Handles that mean "the default stream of the current device" need their
 *    device current for each call; every other handle works from any device.
 *  - Events get their native event at the first record (rule 2), from a pool per
 *    device and flag combination. A native event goes back to its pool when its
 *    tp event is destroyed, and is handed out again only once its last record has
 *    been reached, so no one else's record can land on it while a wait or a query
 *    of the old owner is still meant for it (HIP even leaves recording a pending
 *    event undefined).
 *  - Hot paths (record, query, wait, elapsed, synchronize) take no lock, allocate
 *    nothing and change no device unless the stream needs its device current.
 *    Where the runtime would create a context on a thread that has none (record
 *    and waits; see RT_*_NEEDS_CONTEXT in the mapping for the rest), the only extra
 *    work is rt_guard_enter's check that the thread has a current context, a
 *    thread-local flag once it has one: no call of ours makes the runtime create a
 *    context on a device nobody asked for. elapsed_time, like everything that must
 *    switch devices, leaves the caller's current context (or its lack of one) as
 *    it found it.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "backends/gpu/gpu_backend.h"

#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda.h"
#define GPU_ENTRY tp_backend_entry_cuda
#elif defined(TPEVENT_GPU_HIP)
#include "backends/gpu/runtime_hip.h"
#define GPU_ENTRY tp_backend_entry_hip
#else
#error "define TPEVENT_GPU_CUDA or TPEVENT_GPU_HIP to pick the runtime mapping"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#define GPU_LIKELY(x) __builtin_expect(!!(x), 1)
#define GPU_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define GPU_LIKELY(x) (x)
#define GPU_UNLIKELY(x) (x)
#endif

/* One pool per flag combination: TIMING, BLOCKING and INTERPROCESS each change the
 * native event's creation flags. */
#define POOL_COUNT (TP_EVENT_FLAGS_ALL + 1)

/* A pool keeps at most this many native events in each of its lists; beyond that
 * they are destroyed, so that a burst of events does not pin memory for good. */
#define POOL_KEEP_MAX 4096

/* Pending native events a pool queries, at most, before it creates a new one. */
#define POOL_REAP_MAX 8

typedef struct native_list {
    rt_event *items;
    size_t count;
    size_t capacity;
} native_list;

typedef struct event_pool {
    pthread_mutex_t lock;
    native_list reached; /* last record reached, or never recorded: ready to hand out */
    native_list pending; /* last record possibly not reached: not yet */
} event_pool;

struct gpu_device;

typedef struct gpu_stream {
    tp_stream head;
    rt_stream native;
    struct gpu_device *device;
    bool follows_current_device; /* NULL/legacy/per-thread handle: needs its device current */
} gpu_stream;

typedef struct gpu_device {
    int index;
    _Atomic bool open; /* context held, priority range known, default stream set up */
    pthread_mutex_t open_lock;
    rt_context context;
    int least_priority;    /* the runtime's convention: lower numbers run first, */
    int greatest_priority; /* so greatest <= least */
    gpu_stream default_stream;
    event_pool pools[POOL_COUNT];
} gpu_device;

typedef struct gpu_event {
    tp_event head;
    /* NULL until the first record. Replaced, never cleared, by a record on HIP when
     * the previous record is pending; taken out by destroy. */
    _Atomic(rt_event) native;
    /* Set once the first record succeeded: query, synchronize, wait and elapsed answer
     * "never recorded" from it without asking the runtime. */
    atomic_bool recorded;
    /* IPC (a later addition exports and imports here): the native event is known to
     * another process, so it is destroyed, never pooled, and never replaced. */
    atomic_bool shared;
} gpu_event;

static struct {
    const tp_host *host;
    int device_count;
    gpu_device *devices;
} gpu;

static const tp_backend gpu_table;

/* ----------------------------------------------------------------- errors */

static tp_status status_of(rt_error e)
{
    return e == RT_ERROR_OUT_OF_MEMORY ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
}

/* "cudaEventRecord: cudaErrorIllegalAddress: an illegal memory access was encountered" */
static tp_status fail_call(const char *call, rt_error e)
{
    return gpu.host->fail(status_of(e), "%s: %s: %s", call, rt_error_name(e), rt_error_string(e));
}

/* -------------------------------------------------------------- pools */

static unsigned native_flags(unsigned flags)
{
    unsigned native = RT_EVENT_DEFAULT;
    if (!(flags & TP_EVENT_TIMING))
        native |= RT_EVENT_DISABLE_TIMING;
    if (flags & TP_EVENT_BLOCKING)
        native |= RT_EVENT_BLOCKING_SYNC;
    if (flags & TP_EVENT_INTERPROCESS)
        native |= RT_EVENT_INTERPROCESS | RT_EVENT_DISABLE_TIMING;
    return native;
}

static bool list_push(native_list *list, rt_event event)
{
    if (list->count == list->capacity) {
        if (list->capacity >= POOL_KEEP_MAX)
            return false;
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        rt_event *items = realloc(list->items, capacity * sizeof *items);
        if (!items)
            return false;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = event;
    return true;
}

/* Destroys a native event of the device without leaving a context behind on a
 * thread that had none. */
static void destroy_native(gpu_device *device, rt_event event)
{
    rt_guard guard;
    if (rt_guard_enter(&guard, device->context, RT_NEED_CONTEXT_FOR_CALL) == RT_SUCCESS) {
        (void)rt_event_destroy(event);
        rt_guard_leave(&guard);
    }
}

static void list_destroy_all(native_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        (void)rt_event_destroy(list->items[i]);
    free(list->items);
    *list = (native_list){0};
}

/* Moves pending native events whose record was reached to the reached list; asks
 * about a few only, so taking one stays cheap. Called with the pool locked. */
static void pool_reap(gpu_device *device, event_pool *pool)
{
    size_t asked = 0;
    for (size_t i = 0; i < pool->pending.count && asked < POOL_REAP_MAX; asked++) {
        rt_event event = pool->pending.items[i];
        rt_error e = rt_event_query(event);
        if (e == RT_ERROR_NOT_READY) {
            i++;
            continue;
        }
        pool->pending.items[i] = pool->pending.items[--pool->pending.count];
        if (e != RT_SUCCESS || !list_push(&pool->reached, event))
            destroy_native(device, event); /* broken, or more than the pool keeps */
    }
}

/* A native event for `flags` on the device: a reached one from the pool, else a
 * new one. */
static tp_status pool_take(gpu_device *device, unsigned flags, rt_event *out)
{
    event_pool *pool = &device->pools[flags & TP_EVENT_FLAGS_ALL];
    pthread_mutex_lock(&pool->lock);
    if (pool->reached.count == 0 && pool->pending.count > 0)
        pool_reap(device, pool);
    bool found = pool->reached.count > 0;
    if (found)
        *out = pool->reached.items[--pool->reached.count];
    pthread_mutex_unlock(&pool->lock);
    if (found)
        return TP_OK;

    /* The event belongs to the device that is current when it is created. */
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_create(out, native_flags(flags));
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : fail_call(RT_CALL("EventCreateWithFlags"), e);
}

/*
 * Gives a native event back. `maybe_pending`: it was recorded, and the record may
 * not be reached yet; such an event waits in the pending list until a query says
 * it is. Handing it out before then would let the next owner's record replace one
 * that a racing query or synchronize of the old owner, or (later) a snapshot for a
 * cross-backend wait, still means; and on HIP, recording a pending event is
 * undefined.
 */
static void pool_give(gpu_device *device, unsigned flags, rt_event event, bool maybe_pending)
{
    event_pool *pool = &device->pools[flags & TP_EVENT_FLAGS_ALL];
    bool reached = true;
    if (maybe_pending) {
        rt_error e = rt_event_query(event);
        if (e != RT_SUCCESS && e != RT_ERROR_NOT_READY) {
            destroy_native(device, event);
            return;
        }
        reached = e == RT_SUCCESS;
    }
    pthread_mutex_lock(&pool->lock);
    bool kept = list_push(reached ? &pool->reached : &pool->pending, event);
    pthread_mutex_unlock(&pool->lock);
    if (!kept)
        destroy_native(device, event); /* the runtime frees it once its record is reached */
}

/* --------------------------------------------------------------- devices */

/* Holds the device's primary context, reads its priority range and sets up its
 * default stream; once per device, on first need. */
static tp_status device_open(gpu_device *device)
{
    if (GPU_LIKELY(atomic_load_explicit(&device->open, memory_order_acquire)))
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
                .head = {.backend = &gpu_table,
                         .device = {RT_DEVICE_TYPE, device->index},
                         .priority = default_priority,
                         .kind = TP_STREAM_DEFAULT},
                .native = RT_DEFAULT_STREAM,
                .device = device,
                .follows_current_device = true,
            };
            atomic_store_explicit(&device->open, true, memory_order_release);
        } else {
            status = fail_call(call, e);
        }
    }
    pthread_mutex_unlock(&device->open_lock);
    return status;
}

static tp_status gpu_init(const tp_host *host, char *reason, size_t reason_size)
{
    if (!host || host->abi_version != TP_BACKEND_ABI_VERSION || host->size < sizeof *host || !host->fail) {
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
        for (int p = 0; p < POOL_COUNT; p++)
            pthread_mutex_init(&devices[d].pools[p].lock, NULL);
    }
    gpu.host = host;
    gpu.device_count = count;
    gpu.devices = devices;
    return TP_OK;
}

static void gpu_shutdown(void)
{
    for (int d = 0; d < gpu.device_count; d++) {
        gpu_device *device = &gpu.devices[d];
        for (int p = 0; p < POOL_COUNT; p++) {
            list_destroy_all(&device->pools[p].reached);
            list_destroy_all(&device->pools[p].pending);
            pthread_mutex_destroy(&device->pools[p].lock);
        }
        if (atomic_load_explicit(&device->open, memory_order_acquire))
            rt_context_close(d);
        pthread_mutex_destroy(&device->open_lock);
    }
    free(gpu.devices);
    gpu.devices = NULL;
    gpu.device_count = 0;
}

static tp_status gpu_device_count(int *count)
{
    *count = gpu.device_count;
    return TP_OK;
}

static tp_status gpu_device_name(int device, char *buf, size_t size)
{
    rt_error e = rt_device_name(device, buf, size);
    return e == RT_SUCCESS ? TP_OK : fail_call(RT_CALL("GetDeviceProperties"), e);
}

static tp_status gpu_device_synchronize(int index)
{
    gpu_device *device = &gpu.devices[index];
    bool active = false;
    rt_error e = rt_context_active(index, &active);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("DevicePrimaryCtxGetState"), e);
    if (!active)
        return TP_OK; /* no context, so no work: and none is created to find out */
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_device_synchronize();
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : fail_call(RT_CALL("DeviceSynchronize"), e);
}

/* --------------------------------------------------------------- streams */

static inline gpu_stream *as_stream(tp_stream *stream)
{
    return (gpu_stream *)stream;
}

/*
 * Records and waits: the runtime takes an event and a stream of any device whatever
 * device is current ("event and stream must be on the same device"; a stream may
 * wait on an event of another device), so the stream's device is made current only
 * for handles that mean "the current device's default stream".
 */
static inline rt_error stream_enter(gpu_stream *stream, rt_guard *guard)
{
    return rt_guard_enter(guard, stream->device->context,
                          stream->follows_current_device ? RT_NEED_DEVICE : RT_NEED_CONTEXT);
}

/*
 * Everything else done to a stream (host functions, query, synchronize, destroy)
 * runs with the stream's device current, as PyTorch does: for cudaLaunchHostFunc on
 * a stream of another device than the current one, CUDA 13's driver reports
 * "stream does not belong to the expected context" (seen under cuda-gdb). None of
 * these is on a budgeted hot path.
 */
static inline rt_error stream_enter_device(gpu_stream *stream, rt_guard *guard)
{
    return rt_guard_enter(guard, stream->device->context, RT_NEED_DEVICE);
}

/* A guard only where the mapping says the call needs one (a compile-time constant,
 * so the hot paths that need none carry no check at all). */
static inline rt_error guard_enter_if(bool needed, rt_guard *guard, rt_context ctx, rt_need need)
{
    if (!needed) {
        rt_guard_init(guard);
        return RT_SUCCESS;
    }
    return rt_guard_enter(guard, ctx, need);
}

static int clamp_priority(const gpu_device *device, int priority)
{
    if (priority < device->greatest_priority)
        return device->greatest_priority;
    if (priority > device->least_priority)
        return device->least_priority;
    return priority;
}

static tp_status gpu_stream_create(int index, int priority, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    gpu_stream *stream = malloc(sizeof *stream);
    if (!stream)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_create: out of memory");
    int clamped = clamp_priority(device, priority);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        e = rt_stream_create(&stream->native, clamped);
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        free(stream);
        return fail_call(RT_CALL("StreamCreateWithPriority"), e);
    }
    stream->head = (tp_stream){&gpu_table, {RT_DEVICE_TYPE, index}, clamped, 0};
    stream->device = device;
    stream->follows_current_device = false;
    *out = &stream->head;
    return TP_OK;
}

static tp_status gpu_stream_from_native(int index, void *native, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_stream handle = (rt_stream)native;
    bool follows = rt_stream_follows_current_device(handle);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, follows ? RT_NEED_DEVICE : RT_NEED_CONTEXT_FOR_CALL);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
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
        return fail_call(call, e);
    if (owner_known && owner != index)
        return gpu.host->fail(TP_ERR_DEVICE_MISMATCH, "tp_stream_from_native: the native stream is of %s:%d, not %s:%d",
                              RT_BACKEND_NAME, owner, RT_BACKEND_NAME, index);
    gpu_stream *stream = malloc(sizeof *stream);
    if (!stream)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_from_native: out of memory");
    stream->head = (tp_stream){&gpu_table, {RT_DEVICE_TYPE, index}, priority, TP_STREAM_BORROWED};
    stream->native = handle;
    stream->device = device;
    stream->follows_current_device = follows;
    *out = &stream->head;
    return TP_OK;
}

static tp_status gpu_stream_default(int index, tp_stream **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    *out = &device->default_stream.head;
    return TP_OK;
}

static tp_status gpu_stream_destroy(tp_stream *base)
{
    gpu_stream *stream = as_stream(base);
    rt_error e = RT_SUCCESS;
    if (!(base->kind & TP_STREAM_BORROWED)) {
        /* With work pending the runtime returns at once and frees the stream when
         * the work is done (rule 9). */
        rt_guard guard;
        e = stream_enter_device(stream, &guard);
        if (e == RT_SUCCESS) {
            e = rt_stream_destroy(stream->native);
            rt_guard_leave(&guard);
        }
    }
    free(stream);
    return e == RT_SUCCESS ? TP_OK : fail_call(RT_CALL("StreamDestroy"), e);
}

static tp_status gpu_stream_query(tp_stream *base, bool *idle)
{
    gpu_stream *stream = as_stream(base);
    rt_guard guard;
    rt_error e = stream_enter_device(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_query(stream->native);
    rt_guard_leave(&guard);
    if (GPU_LIKELY(e == RT_SUCCESS || e == RT_ERROR_NOT_READY)) {
        *idle = e == RT_SUCCESS;
        return TP_OK;
    }
    return fail_call(RT_CALL("StreamQuery"), e);
}

static tp_status gpu_stream_synchronize(tp_stream *base)
{
    gpu_stream *stream = as_stream(base);
    rt_guard guard;
    rt_error e = stream_enter_device(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_synchronize(stream->native);
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("StreamSynchronize"), e);
}

static tp_status gpu_stream_launch_host_fn(tp_stream *base, void (*fn)(void *), void *arg)
{
    gpu_stream *stream = as_stream(base);
    rt_guard guard;
    rt_error e = stream_enter_device(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_launch_host_fn(stream->native, fn, arg);
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("LaunchHostFunc"), e);
}

static void *gpu_stream_native(tp_stream *base)
{
    return (void *)as_stream(base)->native;
}

/* ---------------------------------------------------------------- events */

static inline gpu_event *as_event(tp_event *event)
{
    return (gpu_event *)event;
}

static inline gpu_device *event_device(const gpu_event *event)
{
    return &gpu.devices[event->head.device.index];
}

static inline bool event_recorded(gpu_event *event)
{
    return atomic_load_explicit(&event->recorded, memory_order_acquire);
}

/* Valid once event_recorded() said true (the release store of `recorded` comes
 * after the native event's). */
static inline rt_event event_native(gpu_event *event)
{
    return atomic_load_explicit(&event->native, memory_order_relaxed);
}

static tp_status gpu_event_create(int index, unsigned flags, tp_event **out)
{
    gpu_event *event = malloc(sizeof *event);
    if (!event)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    event->head = (tp_event){&gpu_table, {RT_DEVICE_TYPE, index}, flags};
    atomic_init(&event->native, NULL);
    atomic_init(&event->recorded, false);
    atomic_init(&event->shared, false);
    *out = &event->head;
    return TP_OK;
}

/* Gives up a native event this tp event no longer uses. */
static void event_release_native(gpu_event *event, rt_event native)
{
    if (atomic_load_explicit(&event->shared, memory_order_relaxed)) {
        destroy_native(event_device(event), native);
        return;
    }
    pool_give(event_device(event), event->head.flags, native, true);
}

static tp_status gpu_event_destroy(tp_event *base)
{
    gpu_event *event = as_event(base);
    rt_event native = atomic_exchange_explicit(&event->native, NULL, memory_order_acq_rel);
    if (native)
        event_release_native(event, native);
    free(event);
    return TP_OK;
}

/*
 * The first record (and, on HIP, a record while the previous one is pending):
 * record a native event from the pool, then publish it. Publishing after the record
 * means a concurrent query never sees a native event that has not been recorded for
 * this tp event, and two threads racing here each give back what the other replaced.
 */
static tp_status event_record_fresh(gpu_event *event, gpu_stream *stream)
{
    gpu_device *device = event_device(event);
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_event fresh;
    status = pool_take(device, event->head.flags, &fresh);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = stream_enter(stream, &guard);
    if (e == RT_SUCCESS) {
        e = rt_event_record(fresh, stream->native);
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        pool_give(device, event->head.flags, fresh, false);
        return fail_call(RT_CALL("EventRecord"), e);
    }
    rt_event old = atomic_exchange_explicit(&event->native, fresh, memory_order_acq_rel);
    atomic_store_explicit(&event->recorded, true, memory_order_release);
    if (old)
        event_release_native(event, old);
    return TP_OK;
}

/* HIP only (RT_RERECORD_WHILE_PENDING 0): the native event must not be recorded
 * again before its record is reached. */
static bool record_would_overlap(gpu_event *event, rt_event native)
{
    return !RT_RERECORD_WHILE_PENDING && !atomic_load_explicit(&event->shared, memory_order_relaxed) &&
           rt_event_query(native) == RT_ERROR_NOT_READY;
}

static tp_status gpu_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_event *event = as_event(base);
    gpu_stream *stream = as_stream(stream_base);
    rt_event native = atomic_load_explicit(&event->native, memory_order_acquire);
    if (GPU_UNLIKELY(native == NULL) || record_would_overlap(event, native))
        return event_record_fresh(event, stream);
    rt_guard guard;
    rt_error e = stream_enter(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_record(native, stream->native);
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("EventRecord"), e);
}

static tp_status gpu_event_query(tp_event *base, bool *done)
{
    gpu_event *event = as_event(base);
    if (!event_recorded(event)) {
        *done = true; /* rule 4 */
        return TP_OK;
    }
    rt_guard guard;
    rt_error e = guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, event_device(event)->context, RT_NEED_CONTEXT);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_query(event_native(event));
    rt_guard_leave(&guard);
    if (GPU_LIKELY(e == RT_SUCCESS || e == RT_ERROR_NOT_READY)) {
        *done = e == RT_SUCCESS;
        return TP_OK;
    }
    return fail_call(RT_CALL("EventQuery"), e);
}

static tp_status gpu_event_synchronize(tp_event *base)
{
    gpu_event *event = as_event(base);
    if (!event_recorded(event))
        return TP_OK; /* rule 5 */
    rt_guard guard;
    rt_error e = guard_enter_if(RT_SYNCHRONIZE_NEEDS_CONTEXT, &guard, event_device(event)->context, RT_NEED_CONTEXT);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_synchronize(event_native(event));
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("EventSynchronize"), e);
}

/* Any stream, of any device, may wait (rule 1); the runtime keeps the record that
 * is latest now, whatever is recorded later (rule 6). */
static tp_status gpu_stream_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_event *event = as_event(event_base);
    gpu_stream *stream = as_stream(stream_base);
    if (!event_recorded(event))
        return TP_OK; /* rule 6: nothing to wait for */
    rt_guard guard;
    rt_error e = stream_enter(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_stream_wait_event(stream->native, event_native(event));
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("StreamWaitEvent"), e);
}

/* Rule 7, in its order: NOT_RECORDED, NOT_READY, DEVICE_MISMATCH (the core has
 * checked TIMING). Where the runtime would create a context on a thread that has
 * none, the guard lends the thread the events' device's context for the call and
 * takes it back, so the caller's current device is as it was. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static tp_status event_elapsed_checked(gpu_event *start, gpu_event *end, float *ms)
{
    if (!event_recorded(start) || !event_recorded(end))
        return gpu.host->fail(TP_ERR_NOT_RECORDED, "tp_event_elapsed_time: the %s event was never recorded",
                              event_recorded(start) ? "end" : "start");
    rt_guard guard;
    rt_error e = guard_enter_if(RT_ELAPSED_NEEDS_CONTEXT, &guard, event_device(start)->context,
                                RT_NEED_CONTEXT_FOR_CALL);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    tp_status status = TP_OK;
    if (start->head.device.index == end->head.device.index) {
        e = rt_event_elapsed(ms, event_native(start), event_native(end));
        if (e == RT_ERROR_NOT_READY)
            status = gpu.host->fail(TP_ERR_NOT_READY, "tp_event_elapsed_time: a record is not reached yet");
        else if (e != RT_SUCCESS)
            status = fail_call(RT_CALL("EventElapsedTime"), e);
    } else {
        rt_error start_state = rt_event_query(event_native(start));
        rt_error end_state = rt_event_query(event_native(end));
        if (start_state != RT_SUCCESS && start_state != RT_ERROR_NOT_READY)
            status = fail_call(RT_CALL("EventQuery"), start_state);
        else if (end_state != RT_SUCCESS && end_state != RT_ERROR_NOT_READY)
            status = fail_call(RT_CALL("EventQuery"), end_state);
        else if (start_state == RT_ERROR_NOT_READY || end_state == RT_ERROR_NOT_READY)
            status = gpu.host->fail(TP_ERR_NOT_READY, "tp_event_elapsed_time: the %s event's record is not reached yet",
                                    start_state == RT_ERROR_NOT_READY ? "start" : "end");
        else
            status = gpu.host->fail(TP_ERR_DEVICE_MISMATCH, "tp_event_elapsed_time: start is of %s:%d, end of %s:%d",
                                    RT_BACKEND_NAME, start->head.device.index, RT_BACKEND_NAME,
                                    end->head.device.index);
    }
    rt_guard_leave(&guard);
    return status;
}

/* The common case in as few instructions as it takes (the call is ~100 ns, the
 * budget 3% of it): both recorded, one device, no guard needed, reached. Anything
 * else goes the checked way, which asks again and says why. */
static tp_status gpu_event_elapsed(tp_event *start_base, tp_event *end_base, float *ms)
{
    gpu_event *start = as_event(start_base), *end = as_event(end_base);
    if (GPU_LIKELY(!RT_ELAPSED_NEEDS_CONTEXT && event_recorded(start) && event_recorded(end) &&
                   start->head.device.index == end->head.device.index) &&
        GPU_LIKELY(rt_event_elapsed(ms, event_native(start), event_native(end)) == RT_SUCCESS))
        return TP_OK;
    return event_elapsed_checked(start, end, ms);
}

/* ------------------------------------------------------------- baselines */

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct sample_setup {
    rt_stream stream, other;
    rt_event first, second;
} sample_setup;

/* Objects for sampling `op`: streams as tpevent creates them, events as the
 * matching tp flags would make them, recorded and reached where the op needs it. */
static rt_error sample_prepare(tp_native_op op, sample_setup *s, const char **call)
{
    bool timing = op == TP_NATIVE_RECORD_TIMING || op == TP_NATIVE_ELAPSED;
    unsigned flags = native_flags(timing ? TP_EVENT_TIMING : 0);
    *call = RT_CALL("StreamCreateWithPriority");
    rt_error e = rt_stream_create(&s->stream, 0);
    if (e == RT_SUCCESS)
        e = rt_stream_create(&s->other, 0);
    if (e != RT_SUCCESS || op == TP_NATIVE_CREATE_DESTROY)
        return e;
    *call = RT_CALL("EventCreateWithFlags");
    e = rt_event_create(&s->first, flags);
    if (e == RT_SUCCESS)
        e = rt_event_create(&s->second, flags);
    *call = RT_CALL("EventRecord");
    if (e == RT_SUCCESS)
        e = rt_event_record(s->first, s->stream);
    if (e == RT_SUCCESS)
        e = rt_event_record(s->second, s->stream);
    *call = RT_CALL("StreamSynchronize");
    if (e == RT_SUCCESS)
        e = rt_stream_synchronize(s->stream);
    return e;
}

static void sample_release(sample_setup *s)
{
    if (s->stream)
        (void)rt_stream_synchronize(s->stream);
    if (s->other)
        (void)rt_stream_synchronize(s->other);
    if (s->first)
        (void)rt_event_destroy(s->first);
    if (s->second)
        (void)rt_event_destroy(s->second);
    if (s->stream)
        (void)rt_stream_destroy(s->stream);
    if (s->other)
        (void)rt_stream_destroy(s->other);
}

/* One timed runtime call (or pair) of `op`. */
static rt_error sample_once(tp_native_op op, sample_setup *s, uint64_t *ns, const char **call)
{
    rt_error e = RT_SUCCESS;
    float ms;
    rt_event created = NULL;
    uint64_t t0 = now_ns();
    switch (op) {
    case TP_NATIVE_RECORD:
    case TP_NATIVE_RECORD_TIMING:
        e = rt_event_record(s->first, s->stream);
        *call = RT_CALL("EventRecord");
        break;
    case TP_NATIVE_QUERY:
        e = rt_event_query(s->first);
        *call = RT_CALL("EventQuery");
        break;
    case TP_NATIVE_SYNCHRONIZE:
        e = rt_event_synchronize(s->first);
        *call = RT_CALL("EventSynchronize");
        break;
    case TP_NATIVE_STREAM_WAIT:
        e = rt_stream_wait_event(s->other, s->first);
        *call = RT_CALL("StreamWaitEvent");
        break;
    case TP_NATIVE_ELAPSED:
        e = rt_event_elapsed(&ms, s->first, s->second);
        *call = RT_CALL("EventElapsedTime");
        break;
    case TP_NATIVE_CREATE_DESTROY:
        e = rt_event_create(&created, native_flags(0));
        if (e == RT_SUCCESS)
            e = rt_event_destroy(created);
        *call = RT_CALL("EventCreateWithFlags/EventDestroy");
        break;
    case TP_NATIVE_RECORD_SYNCHRONIZE:
        e = rt_event_record(s->first, s->stream);
        if (e == RT_SUCCESS)
            e = rt_event_synchronize(s->first);
        *call = RT_CALL("EventRecord/EventSynchronize");
        break;
    }
    *ns = now_ns() - t0;
    return e;
}

static tp_status gpu_native_sample(int index, tp_native_op op, uint64_t *samples_ns, size_t count)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    sample_setup setup = {0};
    const char *call = "";
    e = sample_prepare(op, &setup, &call);
    for (size_t i = 0; e == RT_SUCCESS && i < count; i++)
        e = sample_once(op, &setup, &samples_ns[i], &call);
    sample_release(&setup);
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : fail_call(call, e);
}

/* ----------------------------------------------------------------- table */

static const tp_backend gpu_table = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_backend),
    .name = RT_BACKEND_NAME,
    .type = RT_DEVICE_TYPE,
    .init = gpu_init,
    .device_count = gpu_device_count,
    .device_name = gpu_device_name,
    .device_synchronize = gpu_device_synchronize,
    .stream_create = gpu_stream_create,
    .stream_from_native = gpu_stream_from_native,
    .stream_default = gpu_stream_default,
    .stream_destroy = gpu_stream_destroy,
    .stream_query = gpu_stream_query,
    .stream_synchronize = gpu_stream_synchronize,
    .stream_wait_event = gpu_stream_wait_event,
    .stream_launch_host_fn = gpu_stream_launch_host_fn,
    .stream_native = gpu_stream_native,
    .event_create = gpu_event_create,
    .event_destroy = gpu_event_destroy,
    .event_record = gpu_event_record,
    .event_query = gpu_event_query,
    .event_synchronize = gpu_event_synchronize,
    .event_elapsed = gpu_event_elapsed,
    /* IPC comes later: export will give the event its native event (rule 2) from
     * the INTERPROCESS pool, mark it shared and write the runtime's handle; import
     * will wrap an opened handle as a shared event with `recorded` set (the other
     * process records it). Shared native events are destroyed, never pooled. */
    .event_ipc_export = NULL,
    .event_ipc_import = NULL,
    .native_sample = gpu_native_sample,
    .shutdown = gpu_shutdown,
};

tp_status GPU_ENTRY(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the %s backend speaks backend ABI version %u, the core %u", RT_BACKEND_NAME,
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &gpu_table;
    return TP_OK;
}
