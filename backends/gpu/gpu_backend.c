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
 *    and waits; see RT_*_NEEDS_CONTEXT in the mapping for the rest), the extra
 *    work is rt_guard_enter's check that the thread has a current context, a
 *    thread-local flag once it has one: no call of ours makes the runtime create a
 *    context on a device nobody asked for. Streams created once the runtime's
 *    lazy-start device is open skip even that (gpu_stream.context_free): the
 *    runtime's lazy start would only adopt a context that exists already. elapsed_time, like everything that must
 *    switch devices, leaves the caller's current context (or its lack of one) as
 *    it found it.
 *  - Interprocess events (rule 8; see "IPC" below) wrap the runtime's IPC event
 *    handles. A native event known to another process is "shared": it is never
 *    pooled and never replaced, its own state answers query and synchronize, and
 *    synchronize polls it (the runtime ignores blocking sync for these events and
 *    cannot notice that the process they wait for died).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include "backends/gpu/gpu_backend.h"
#include "backends/common/process.h"

#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda.h"
#define GPU_ENTRY tp_backend_entry_cuda
#elif defined(TPEVENT_GPU_HIP)
#include "backends/gpu/runtime_hip.h"
#define GPU_ENTRY tp_backend_entry_hip
#else
#error "define TPEVENT_GPU_CUDA or TPEVENT_GPU_HIP to pick the runtime mapping"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* A process as another process knows it: the pid and, so that a pid reused by a
 * later process is not taken for it, its start time (clock ticks after boot,
 * field 22 of /proc/<pid>/stat). */
typedef struct process_id {
    int32_t pid;
    uint64_t start_time;
} process_id;

/*
 * The payload of an IPC handle (the core writes the header around it). All
 * integers little-endian.
 *   [0..8)    RT_IPC_PAYLOAD_MAGIC: a payload of this runtime's backend
 *   [8..12)   payload version (GPU_IPC_PAYLOAD_VERSION)
 *   [12..16)  the event's flags: TP_EVENT_INTERPROCESS, maybe TP_EVENT_BLOCKING
 *   [16..20)  the exporter's pid
 *   [20..24)  the exporter's device index, in its own numbering (for messages)
 *   [24..32)  the exporter's start time
 *   [32..48)  the device's UUID; all zero if the runtime could not tell
 *   [48..112) the runtime's IPC event handle
 */
#define GPU_IPC_PAYLOAD_VERSION 1u
#define GPU_IPC_PAYLOAD_SIZE 112u
#define GPU_IPC_HANDLE_OFFSET 48u
#define GPU_UUID_SIZE 16u

_Static_assert(GPU_IPC_PAYLOAD_SIZE <= TP_IPC_PAYLOAD_MAX, "the payload must fit the handle");
_Static_assert(sizeof(rt_ipc_event_handle) == RT_IPC_HANDLE_SIZE &&
                   GPU_IPC_HANDLE_OFFSET + RT_IPC_HANDLE_SIZE == GPU_IPC_PAYLOAD_SIZE,
               "the runtime's handle fills the end of the payload");
_Static_assert(sizeof(RT_IPC_PAYLOAD_MAGIC) == 9, "the payload magic is 8 bytes");

typedef struct ipc_payload {
    unsigned flags;
    process_id exporter;
    int device;
    unsigned char uuid[GPU_UUID_SIZE];
    rt_ipc_event_handle handle;
} ipc_payload;

/*
 * One opened IPC handle in this process. Importing the same handle again on the
 * same device shares it (so whatever the runtime does with a handle opened twice,
 * each imported tp event stays valid until it is destroyed); the native event goes
 * once the last of them is destroyed.
 */
typedef struct gpu_import {
    struct gpu_import *next; /* the device's list, under its ipc_lock */
    unsigned refs;           /* under the device's ipc_lock */
    rt_event native;
    process_id exporter;
    unsigned char payload[GPU_IPC_PAYLOAD_SIZE]; /* exported again as it came */
    /* query looks at the exporter at most once a period; once it is known gone,
     * it stays gone. */
    _Atomic uint64_t next_liveness_check_ns;
    atomic_bool exporter_gone;
    atomic_bool recorded_here; /* a tp event of this process recorded it */
} gpu_import;

/* A shared native event no tp event uses any more, kept until its record is
 * reached (see retire_shared_native). */
typedef struct retired_native {
    rt_event native;
    process_id exporter; /* of an imported one; pid 0 for one exported from here */
} retired_native;

typedef struct retired_list {
    retired_native *items;
    size_t count;
    size_t capacity;
} retired_list;

struct gpu_device;

typedef struct gpu_stream {
    tp_stream head;
    rt_stream native;
    struct gpu_device *device;
    bool follows_current_device; /* NULL/legacy/per-thread handle: needs its device current */
    /* Records and waits on it need no guard: it names its own device, and a thread
     * with no current context may be left to the runtime's lazy start (see
     * lazy_start_is_harmless). Decided at creation; false only costs a guard. */
    bool context_free;
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
    /* IPC: imports, retired shared native events, the UUID. Never taken on a hot
     * path. */
    pthread_mutex_t ipc_lock;
    gpu_import *imports;
    retired_list retired;
    enum { UUID_UNREAD, UUID_KNOWN, UUID_UNKNOWN } uuid_state;
    unsigned char uuid[GPU_UUID_SIZE];
    /* Cross-device waits on interprocess events go through this stream of the
     * event's device (see relay_wait); made on first need, under relay_lock. */
    pthread_mutex_t relay_lock;
    rt_stream relay;
    bool relay_made;
} gpu_device;

typedef struct gpu_event {
    tp_event head;
    /* NULL until the first record or export. Replaced, never cleared, by a record on
     * HIP when the previous record is pending (never for an interprocess event);
     * taken out by destroy. */
    _Atomic(rt_event) native;
    /* Set once the native event's own state is the answer: after the first record,
     * or once the native event is shared (another process may record it). Until
     * then query, synchronize, wait and elapsed answer "never recorded" without
     * asking the runtime. */
    atomic_bool recorded;
    /* The native event is known to another process (exported, or imported): it is
     * retired, never pooled, and never replaced. */
    atomic_bool shared;
    /* Imported events only: the opened handle, which owns the native event. Set
     * before the event is handed out, never changed. */
    gpu_import *import;
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

/* ------------------------------------------------------------------ time */

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pause_for(uint64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    (void)nanosleep(&t, NULL); /* a signal cuts it short: the caller polls again */
}

/* ------------------------------------------------------------- processes */

static bool process_is(const process_id *process)
{
    uint64_t start_time = 0;
    return tp_process_running(process->pid, &start_time) && start_time == process->start_time;
}

static bool self_identity(process_id *self)
{
    self->pid = (int32_t)getpid();
    return tp_process_running(self->pid, &self->start_time);
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

/* ------------------------------------------------- shared native events */

/* Retired shared native events kept at most; beyond that they are destroyed at once. */
#define RETIRED_KEEP_MAX 4096

/* Retired native events a reap asks about, at most. */
#define RETIRED_REAP_MAX 8

/* How often a waiter on an imported event looks whether its exporter still runs:
 * the bound on noticing that it died, at the cost of a read of /proc each time. */
#define LIVENESS_PERIOD_NS 20000000u

static bool retired_push(retired_list *list, rt_event native, const process_id *exporter)
{
    if (list->count == list->capacity) {
        if (list->capacity >= RETIRED_KEEP_MAX)
            return false;
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        retired_native *items = realloc(list->items, capacity * sizeof *items);
        if (!items)
            return false;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = (retired_native){native, exporter ? *exporter : (process_id){0, 0}};
    return true;
}

/* A retired native event that nobody can still be waiting for. */
static bool retired_done(const retired_native *retired)
{
    rt_error e = rt_event_query(retired->native);
    if (e != RT_ERROR_NOT_READY)
        return true; /* reached, or broken */
    return retired->exporter.pid != 0 && !process_is(&retired->exporter);
}

/* Destroys a few retired native events whose record was reached. Called with the
 * device's ipc_lock held. */
static void retired_reap(gpu_device *device)
{
    retired_list *list = &device->retired;
    size_t asked = 0;
    for (size_t i = 0; i < list->count && asked < RETIRED_REAP_MAX; asked++) {
        if (!retired_done(&list->items[i])) {
            i++;
            continue;
        }
        destroy_native(device, list->items[i].native);
        list->items[i] = list->items[--list->count];
    }
}

/*
 * Gives up a shared native event (exported from here, or an opened handle) that no
 * tp event uses any more. With a record still pending it is kept until the record
 * is reached (rule 9): destroying the event that made the latest record of an
 * interprocess event can leave the other process's synchronize blocked for good
 * (PyTorch saw it: pytorch#15974). An imported one whose exporter is gone will never
 * be reached, and goes at once. `exporter`: of an imported one, else NULL.
 */
static void retire_shared_native(gpu_device *device, rt_event native, const process_id *exporter)
{
    retired_native retired = {native, exporter ? *exporter : (process_id){0, 0}};
    bool pending = !retired_done(&retired);
    pthread_mutex_lock(&device->ipc_lock);
    retired_reap(device);
    bool kept = pending && retired_push(&device->retired, native, exporter);
    pthread_mutex_unlock(&device->ipc_lock);
    if (!kept)
        destroy_native(device, native);
}

/* Drops one tp event's hold on an opened handle. The last one destroys it, or
 * retires it if a record of this process may be pending on it. */
static void import_release(gpu_device *device, gpu_import *import)
{
    pthread_mutex_lock(&device->ipc_lock);
    bool last = --import->refs == 0;
    if (last) {
        gpu_import **link = &device->imports;
        while (*link != import)
            link = &(*link)->next;
        *link = import->next;
    }
    pthread_mutex_unlock(&device->ipc_lock);
    if (!last)
        return;
    if (atomic_load_explicit(&import->recorded_here, memory_order_relaxed))
        retire_shared_native(device, import->native, &import->exporter);
    else
        destroy_native(device, import->native); /* the pending record is the exporter's own */
    free(import);
}

/* At unload, when no entry runs any more: every native event the IPC side holds. */
static void ipc_shutdown(gpu_device *device)
{
    for (size_t i = 0; i < device->retired.count; i++)
        (void)rt_event_destroy(device->retired.items[i].native);
    free(device->retired.items);
    device->retired = (retired_list){0};
    while (device->imports) {
        gpu_import *import = device->imports;
        device->imports = import->next;
        (void)rt_event_destroy(import->native);
        free(import);
    }
}

/*
 * Whether the process that exported an imported event still runs. Once it is
 * known gone it stays gone: a process that exited comes back no more, and a pid
 * reused by another one has another start time.
 */
static bool import_exporter_alive(gpu_import *import)
{
    if (atomic_load_explicit(&import->exporter_gone, memory_order_relaxed))
        return false;
    if (process_is(&import->exporter))
        return true;
    atomic_store_explicit(&import->exporter_gone, true, memory_order_relaxed);
    return false;
}

/* The same, looking at /proc at most once a LIVENESS_PERIOD_NS (query may be
 * called in a loop); in between, the last answer. */
static bool import_exporter_alive_throttled(gpu_import *import)
{
    uint64_t now = now_ns();
    if (now < atomic_load_explicit(&import->next_liveness_check_ns, memory_order_relaxed))
        return !atomic_load_explicit(&import->exporter_gone, memory_order_relaxed);
    atomic_store_explicit(&import->next_liveness_check_ns, now + LIVENESS_PERIOD_NS, memory_order_relaxed);
    return import_exporter_alive(import);
}

static tp_status exporter_exited(const gpu_import *import, const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND,
                          "%s: the process (pid %d) that exported the event exited before its record was reached",
                          operation, (int)import->exporter.pid);
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
                .context_free = false,
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
        pthread_mutex_init(&devices[d].ipc_lock, NULL);
        pthread_mutex_init(&devices[d].relay_lock, NULL);
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
        ipc_shutdown(device);
        pthread_mutex_destroy(&device->ipc_lock);
        if (device->relay_made)
            (void)rt_stream_destroy(device->relay);
        pthread_mutex_destroy(&device->relay_lock);
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

/*
 * Whether a record or wait on a thread with no current context may be left to the
 * runtime: its lazy start then makes RT_LAZY_CONTEXT_DEVICE's primary context
 * current, as a raw call would, and creates nothing once this backend holds that
 * context (its device is open). Where this is so, records and waits on streams
 * that name their own device need no guard at all, not even the guard's
 * thread-local read.
 */
static bool lazy_start_is_harmless(void)
{
#if RT_LAZY_CONTEXT_DEVICE < 0
    return true;
#else
    return RT_LAZY_CONTEXT_DEVICE < gpu.device_count &&
           atomic_load_explicit(&gpu.devices[RT_LAZY_CONTEXT_DEVICE].open, memory_order_acquire);
#endif
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
    stream->context_free = lazy_start_is_harmless();
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
    stream->context_free = !follows && lazy_start_is_harmless();
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

/*
 * Freed event structs kept per thread for the next create, so that a
 * create+destroy pair costs no malloc/free (the pool budget: 10x faster than
 * cudaEventCreate+Destroy, which leaves ~20 ns for the whole pair). A struct
 * destroyed on one thread may be reused on that thread: it carries nothing of its
 * last owner. The cache is freed at thread exit through a key's destructor.
 */
#define EVENT_CACHE_MAX 32

typedef struct event_cache {
    gpu_event *items[EVENT_CACHE_MAX];
    int count;
} event_cache;

static _Thread_local event_cache *thread_event_cache;
static pthread_key_t event_cache_key;
static pthread_once_t event_cache_once = PTHREAD_ONCE_INIT;

static void event_cache_free(void *cache_ptr)
{
    event_cache *cache = cache_ptr;
    for (int i = 0; i < cache->count; i++)
        free(cache->items[i]);
    free(cache);
}

static void event_cache_key_create(void)
{
    (void)pthread_key_create(&event_cache_key, event_cache_free);
}

#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static event_cache *event_cache_make(void)
{
    pthread_once(&event_cache_once, event_cache_key_create);
    event_cache *cache = calloc(1, sizeof *cache);
    if (cache && pthread_setspecific(event_cache_key, cache) != 0) {
        free(cache);
        cache = NULL;
    }
    thread_event_cache = cache;
    return cache;
}

static inline gpu_event *event_struct_take(void)
{
    event_cache *cache = thread_event_cache;
    if (GPU_LIKELY(cache && cache->count > 0))
        return cache->items[--cache->count];
    return malloc(sizeof(gpu_event));
}

static inline void event_struct_give(gpu_event *event)
{
    event_cache *cache = thread_event_cache;
    if (GPU_UNLIKELY(!cache))
        cache = event_cache_make();
    if (GPU_LIKELY(cache && cache->count < EVENT_CACHE_MAX))
        cache->items[cache->count++] = event;
    else
        free(event);
}

static tp_status gpu_event_create(int index, unsigned flags, tp_event **out)
{
    gpu_event *event = event_struct_take();
    if (GPU_UNLIKELY(!event))
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    event->head = (tp_event){&gpu_table, {RT_DEVICE_TYPE, index}, flags};
    atomic_init(&event->native, NULL);
    atomic_init(&event->recorded, false);
    atomic_init(&event->shared, false);
    event->import = NULL;
    *out = &event->head;
    return TP_OK;
}

/* Gives up a native event this tp event no longer uses (an imported one's belongs
 * to its import, which gpu_event_destroy releases). */
static void event_release_native(gpu_event *event, rt_event native)
{
    if (atomic_load_explicit(&event->shared, memory_order_acquire)) {
        retire_shared_native(event_device(event), native, NULL);
        return;
    }
    pool_give(event_device(event), event->head.flags, native, true);
}

/* No call on the event may overlap its destroy (the event is freed here), so
 * `native` is only read: no locked exchange, no fence. */
static tp_status gpu_event_destroy(tp_event *base)
{
    gpu_event *event = as_event(base);
    rt_event native = atomic_load_explicit(&event->native, memory_order_relaxed);
    if (GPU_UNLIKELY(event->import != NULL))
        import_release(event_device(event), event->import);
    else if (native)
        event_release_native(event, native);
    event_struct_give(event);
    return TP_OK;
}

/* One record of `native` on the stream. */
static inline tp_status record_native(rt_event native, gpu_stream *stream)
{
    rt_guard guard;
    rt_error e = stream_enter(stream, &guard);
    if (GPU_UNLIKELY(e != RT_SUCCESS))
        return fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_record(native, stream->native);
    rt_guard_leave(&guard);
    return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("EventRecord"), e);
}

/* HIP only (RT_RERECORD_WHILE_PENDING 0): the native event must not be recorded
 * again before its record is reached. An interprocess event keeps its native event
 * for good (another process may hold it, or will), so it is recorded again in
 * place, as CUDA would. */
static bool record_would_overlap(gpu_event *event, rt_event native)
{
    return !RT_RERECORD_WHILE_PENDING && !(event->head.flags & TP_EVENT_INTERPROCESS) &&
           rt_event_query(native) == RT_ERROR_NOT_READY;
}

static tp_status gpu_event_record(tp_event *base, tp_stream *stream_base);

/*
 * The first record (and, on HIP, a record while the previous one is pending):
 * record a native event from the pool, then publish it in place of `expected`.
 * Publishing after the record means a concurrent query never sees a native event
 * that has not been recorded for this tp event. If another thread published one
 * meanwhile (a racing record, or an export), this record goes to that one instead.
 */
static tp_status event_record_fresh(gpu_event *event, gpu_stream *stream, rt_event expected)
{
    gpu_device *device = event_device(event);
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_event fresh;
    status = pool_take(device, event->head.flags, &fresh);
    if (status != TP_OK)
        return status;
    status = record_native(fresh, stream);
    if (status != TP_OK) {
        pool_give(device, event->head.flags, fresh, false);
        return status;
    }
    rt_event seen = expected;
    if (!atomic_compare_exchange_strong_explicit(&event->native, &seen, fresh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        pool_give(device, event->head.flags, fresh, true);
        return gpu_event_record(&event->head, &stream->head);
    }
    atomic_store_explicit(&event->recorded, true, memory_order_release);
    if (expected)
        event_release_native(event, expected);
    return TP_OK;
}

/* Not recorded yet: no native event, or one that an export (or a racing first
 * record) made. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tp_status event_record_first(gpu_event *event, gpu_stream *stream)
{
    rt_event native = atomic_load_explicit(&event->native, memory_order_acquire);
    if (native == NULL || record_would_overlap(event, native))
        return event_record_fresh(event, stream, native);
    tp_status status = record_native(native, stream);
    if (status == TP_OK)
        atomic_store_explicit(&event->recorded, true, memory_order_release);
    return status;
}

/* Everything but the common case: the first record, a stream that needs a guard,
 * an imported event, (HIP) a record that would overlap the pending one. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tp_status event_record_slow(gpu_event *event, gpu_stream *stream)
{
    if (!event_recorded(event))
        return event_record_first(event, stream);
    rt_event native = event_native(event);
    if (record_would_overlap(event, native))
        return event_record_fresh(event, stream, native);
    if (event->import != NULL)
        atomic_store_explicit(&event->import->recorded_here, true, memory_order_relaxed);
    return record_native(native, stream);
}

/* The common case in one branch (the record is ~250 ns, the budget 3% of it):
 * recorded before, on a stream that needs no guard, not an import. */
static tp_status gpu_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_event *event = as_event(base);
    gpu_stream *stream = as_stream(stream_base);
    if (GPU_LIKELY(event_recorded(event) & stream->context_free & (event->import == NULL))) {
        rt_event native = event_native(event);
        if (GPU_LIKELY(!record_would_overlap(event, native))) {
            rt_error e = rt_event_record(native, stream->native);
            return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("EventRecord"), e);
        }
    }
    return event_record_slow(event, stream);
}

/* Query of an imported event whose record is not reached: a record the exporter
 * will never reach, if it is gone (see the IPC notes). */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static tp_status import_query_pending(gpu_event *event, bool *done)
{
    gpu_import *import = event->import;
    if (import_exporter_alive_throttled(import)) {
        *done = false;
        return TP_OK;
    }
    /* A record reached just before the exporter went still counts. */
    if (rt_event_query(import->native) == RT_SUCCESS) {
        *done = true;
        return TP_OK;
    }
    return exporter_exited(import, "tp_event_query");
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
    if (GPU_LIKELY(e == RT_SUCCESS)) {
        *done = true;
        return TP_OK;
    }
    if (e == RT_ERROR_NOT_READY) {
        if (GPU_UNLIKELY(event->import != NULL))
            return import_query_pending(event, done);
        *done = false;
        return TP_OK;
    }
    if (event->import && !import_exporter_alive(event->import))
        return exporter_exited(event->import, "tp_event_query");
    return fail_call(RT_CALL("EventQuery"), e);
}

/*
 * Synchronize by polling the runtime, for interprocess events that must sleep or
 * must notice a dead exporter (see the IPC notes):
 *  - TP_EVENT_BLOCKING (exported, imported, or local): sleeps from the start,
 *    between queries POLL_PAUSE_FIRST_NS doubling to POLL_PAUSE_MAX_NS, since the
 *    runtime ignores its blocking-sync flag for these events. A wait of 200 ms
 *    costs about 200 queries and sleeps: well under 1% of a CPU. A record is seen
 *    at most POLL_PAUSE_MAX_NS late.
 *  - imported without TP_EVENT_BLOCKING: spins for POLL_SPIN_NS first, as the
 *    runtime would, so a record reached soon is seen at once; then sleeps as above.
 * An imported event's exporter is looked at every LIVENESS_PERIOD_NS: once it is
 * gone, the pending record will never be reached (the runtime would wait forever),
 * so synchronize fails.
 */
#define POLL_SPIN_NS 50000u
#define POLL_PAUSE_FIRST_NS 20000u
#define POLL_PAUSE_MAX_NS 1000000u

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tp_status event_synchronize_polling(gpu_event *event)
{
    gpu_import *import = event->import;
    rt_event native = event_native(event);
    rt_guard guard;
    rt_error e = guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, event_device(event)->context, RT_NEED_CONTEXT);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    uint64_t now = now_ns();
    uint64_t spin_until = (event->head.flags & TP_EVENT_BLOCKING) ? now : now + POLL_SPIN_NS;
    uint64_t next_liveness_check = now; /* an exporter already gone fails at once */
    uint64_t pause = POLL_PAUSE_FIRST_NS;
    tp_status status = TP_OK;
    for (;;) {
        e = rt_event_query(native);
        if (e == RT_SUCCESS)
            break;
        if (e != RT_ERROR_NOT_READY) {
            status = import && !import_exporter_alive(import) ? exporter_exited(import, "tp_event_synchronize")
                                                              : fail_call(RT_CALL("EventQuery"), e);
            break;
        }
        now = now_ns();
        if (import && now >= next_liveness_check) {
            if (!import_exporter_alive(import)) {
                /* A record reached just before the exporter went still counts. */
                if (rt_event_query(native) != RT_SUCCESS)
                    status = exporter_exited(import, "tp_event_synchronize");
                break;
            }
            next_liveness_check = now + LIVENESS_PERIOD_NS;
        }
        if (now < spin_until)
            continue;
        pause_for(pause);
        pause = pause * 2 < POLL_PAUSE_MAX_NS ? pause * 2 : POLL_PAUSE_MAX_NS;
    }
    rt_guard_leave(&guard);
    return status;
}

/* Interprocess events that synchronize by polling: imported ones, and blocking ones. */
static inline bool synchronize_polls(const gpu_event *event)
{
    return (event->head.flags & TP_EVENT_INTERPROCESS) &&
           (event->import != NULL || (event->head.flags & TP_EVENT_BLOCKING));
}

static tp_status gpu_event_synchronize(tp_event *base)
{
    gpu_event *event = as_event(base);
    if (!event_recorded(event))
        return TP_OK; /* rule 5 */
    if (GPU_UNLIKELY(synchronize_polls(event)))
        return event_synchronize_polling(event);
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
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tp_status stream_wait_event_slow(gpu_stream *stream, gpu_event *event)
{
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

/*
 * A stream of one device waiting on an interprocess event of another: CUDA 13
 * crashes in cuStreamWaitEvent on that (seen on two H200s; same-device waits and
 * cross-device waits on ordinary events work). So the wait is relayed: on the
 * event's device, a relay stream waits on the event, which takes the snapshot of
 * its latest record now (rule 6), and records an ordinary pooled event, which the
 * waiting stream then waits on. The relay stream is shared by the device's relayed
 * waits, which it runs in order: a relayed wait may also wait for the relayed waits
 * before it, never for anything else.
 */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static tp_status relay_wait(gpu_stream *stream, gpu_event *event)
{
    gpu_device *device = event_device(event);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    const char *call = RT_CALL("StreamCreateWithPriority");
    pthread_mutex_lock(&device->relay_lock);
    if (!device->relay_made && (e = rt_stream_create(&device->relay, device->least_priority)) == RT_SUCCESS)
        device->relay_made = true;
    rt_event marker = NULL;
    tp_status status = TP_OK;
    if (e == RT_SUCCESS) {
        call = RT_CALL("StreamWaitEvent");
        e = rt_stream_wait_event(device->relay, event_native(event));
    }
    if (e == RT_SUCCESS) {
        status = pool_take(device, TP_EVENT_DEFAULT, &marker);
        if (status == TP_OK) {
            call = RT_CALL("EventRecord");
            e = rt_event_record(marker, device->relay);
        }
    }
    pthread_mutex_unlock(&device->relay_lock);
    rt_guard_leave(&guard);
    if (status == TP_OK && e != RT_SUCCESS)
        status = fail_call(call, e);
    if (status == TP_OK) {
        e = stream_enter(stream, &guard);
        if (e == RT_SUCCESS) {
            e = rt_stream_wait_event(stream->native, marker);
            rt_guard_leave(&guard);
        }
        if (e != RT_SUCCESS)
            status = fail_call(RT_CALL("StreamWaitEvent"), e);
    }
    if (marker)
        pool_give(device, TP_EVENT_DEFAULT, marker, true);
    return status;
}

/* The common case in one branch: recorded, on a stream that needs no guard. */
static tp_status gpu_stream_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_event *event = as_event(event_base);
    gpu_stream *stream = as_stream(stream_base);
    if (GPU_UNLIKELY((event->head.flags & TP_EVENT_INTERPROCESS) &&
                     event->head.device.index != stream->head.device.index))
        return event_recorded(event) ? relay_wait(stream, event) : TP_OK;
    if (GPU_LIKELY(event_recorded(event) & stream->context_free)) {
        rt_error e = rt_stream_wait_event(stream->native, event_native(event));
        return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : fail_call(RT_CALL("StreamWaitEvent"), e);
    }
    return stream_wait_event_slow(stream, event);
}

/* cudaEventElapsedTime failed for two recorded events of one device. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static tp_status elapsed_failed(rt_error e)
{
    if (e == RT_ERROR_NOT_READY)
        return gpu.host->fail(TP_ERR_NOT_READY, "tp_event_elapsed_time: a record is not reached yet");
    return fail_call(RT_CALL("EventElapsedTime"), e);
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
        if (e != RT_SUCCESS)
            status = elapsed_failed(e);
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
 * budget 3% of it): both recorded, one device, no guard needed; then a failure of
 * the call needs nothing but its error, so nothing is kept across it. Anything
 * else goes the checked way, which says why. */
static tp_status gpu_event_elapsed(tp_event *start_base, tp_event *end_base, float *ms)
{
    gpu_event *start = as_event(start_base), *end = as_event(end_base);
    if (GPU_LIKELY(!RT_ELAPSED_NEEDS_CONTEXT &&
                   (event_recorded(start) & event_recorded(end) & (start->head.device.index == end->head.device.index)))) {
        rt_error e = rt_event_elapsed(ms, event_native(start), event_native(end));
        return GPU_LIKELY(e == RT_SUCCESS) ? TP_OK : elapsed_failed(e);
    }
    return event_elapsed_checked(start, end, ms);
}

/* ------------------------------------------------------------------- IPC */

/*
 * Interprocess events (rule 8) over the runtime's IPC event handles.
 *
 * Export gives the event its native event if it has none (rule 2: made at the
 * first record or export), marks it shared and writes a payload (layout above)
 * with the runtime's handle and who exported it. Import checks the payload, that
 * the exporter still runs and is another process, and that the device is the
 * exporter's GPU (by UUID: processes may number devices differently), then opens
 * the handle on the device asked for; importing a handle again in the same
 * process and on the same device shares the opened one. An imported event may be
 * queried, synchronized, waited on, recorded, and exported again (its handle is
 * the one it came from).
 *
 * What the runtime does not do, and this backend does instead (seen with raw CUDA
 * 13 on an H200):
 *  - blocking sync: the runtime spins in synchronize of an interprocess event
 *    whatever its flags. Synchronize polls instead (event_synchronize_polling).
 *  - a dead exporter: after a SIGKILL of the exporter, the runtime's synchronize of
 *    a pending import never returns and its query says "not ready" for good, and
 *    opening the dead process's handle succeeds. So import refuses a handle whose
 *    exporter is gone (pid and start time, from /proc), and while an imported
 *    event's record is not reached, query and synchronize look whether its
 *    exporter still runs and fail with TP_ERR_BACKEND once it does not.
 * Limits, which follow from what the runtime tells:
 *  - Which process made the pending record is unknown: a record the importer made
 *    itself is judged by the exporter's liveness too. So an importer that records
 *    the event after its exporter died gets the error while that record is
 *    pending, and the right answer once it is reached. Liveness is asked only
 *    while a record is pending.
 *  - A stream waiting on an imported event (stream_wait_event) whose exporter dies
 *    before reaching the record waits for good: the wait is in the device's
 *    queue, out of this library's reach. Synchronize or query the event first
 *    where the exporter may die.
 *  - The exporter's side does not watch its importers: a synchronize there of a
 *    record that a killed importer made may not return (with TP_EVENT_BLOCKING it
 *    polls, and still waits for good).
 *  - Using an imported event after its exporter destroyed it is undefined in the
 *    runtime; the exporter must keep it while others use it.
 *  - The processes must share a PID namespace, as /proc is how they know each
 *    other; a process forked from the exporter without exec passes for another.
 */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void payload_encode(const ipc_payload *p, unsigned char *out)
{
    memcpy(out, RT_IPC_PAYLOAD_MAGIC, 8);
    put_u32(out + 8, GPU_IPC_PAYLOAD_VERSION);
    put_u32(out + 12, p->flags);
    put_u32(out + 16, (uint32_t)p->exporter.pid);
    put_u32(out + 20, (uint32_t)p->device);
    put_u64(out + 24, p->exporter.start_time);
    memcpy(out + 32, p->uuid, GPU_UUID_SIZE);
    memcpy(out + GPU_IPC_HANDLE_OFFSET, &p->handle, RT_IPC_HANDLE_SIZE);
}

/* The payload's fields, or TP_ERR_INVALID_ARGUMENT for one this backend did not
 * write. Says nothing yet about whether its exporter still runs. */
static tp_status payload_decode(const unsigned char *payload, size_t length, ipc_payload *p)
{
    static const char who[] = "tp_event_from_ipc_handle";
    if (length != GPU_IPC_PAYLOAD_SIZE)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: a %zu-byte payload is not of a %s event (%u bytes)", who,
                              length, RT_BACKEND_NAME, GPU_IPC_PAYLOAD_SIZE);
    if (memcmp(payload, RT_IPC_PAYLOAD_MAGIC, 8) != 0)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload is not of a %s event (bad magic)", who,
                              RT_BACKEND_NAME);
    uint32_t version = get_u32(payload + 8);
    if (version != GPU_IPC_PAYLOAD_VERSION)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: %s payload version %u, this library reads %u", who,
                              RT_BACKEND_NAME, (unsigned)version, GPU_IPC_PAYLOAD_VERSION);
    p->flags = get_u32(payload + 12);
    if (!(p->flags & TP_EVENT_INTERPROCESS) || (p->flags & ~(unsigned)(TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING)))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload's event flags 0x%x are not an interprocess event's",
                              who, p->flags);
    uint32_t pid = get_u32(payload + 16), device = get_u32(payload + 20);
    if (pid == 0 || pid > INT32_MAX)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload names no process (pid %u)", who, (unsigned)pid);
    if (device >= TP_MAX_DEVICES)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload names device index %u", who, (unsigned)device);
    p->exporter = (process_id){(int32_t)pid, get_u64(payload + 24)};
    p->device = (int)device;
    memcpy(p->uuid, payload + 32, GPU_UUID_SIZE);
    memcpy(&p->handle, payload + GPU_IPC_HANDLE_OFFSET, RT_IPC_HANDLE_SIZE);
    return TP_OK;
}

/* The device's UUID, read once; all zero (and false) if the runtime cannot tell. */
static bool device_uuid(gpu_device *device, unsigned char uuid[GPU_UUID_SIZE])
{
    pthread_mutex_lock(&device->ipc_lock);
    if (device->uuid_state == UUID_UNREAD) {
        static const unsigned char zero[GPU_UUID_SIZE];
        bool read = rt_device_uuid(device->index, device->uuid) == RT_SUCCESS;
        device->uuid_state = read && memcmp(device->uuid, zero, GPU_UUID_SIZE) != 0 ? UUID_KNOWN : UUID_UNKNOWN;
    }
    bool known = device->uuid_state == UUID_KNOWN;
    if (known)
        memcpy(uuid, device->uuid, GPU_UUID_SIZE);
    else
        memset(uuid, 0, GPU_UUID_SIZE);
    pthread_mutex_unlock(&device->ipc_lock);
    return known;
}

/* "GPU-8f2c1e6a-..." as nvidia-smi prints it. */
static const char *uuid_text(const unsigned char uuid[GPU_UUID_SIZE], char text[48])
{
    int n = snprintf(text, 48, "GPU-");
    for (unsigned i = 0; i < GPU_UUID_SIZE; i++)
        n += snprintf(text + n, (size_t)(48 - n), "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
                      uuid[i]);
    return text;
}

/*
 * The event's native event for export: made now if it has none, and marked
 * shared. From then on another process may record it, so its own state answers
 * query and synchronize (`recorded`), it is never replaced (record_would_overlap)
 * and it is retired, not pooled (event_release_native).
 */
static tp_status event_share_native(gpu_event *event, rt_event *out)
{
    gpu_device *device = event_device(event);
    rt_event native = atomic_load_explicit(&event->native, memory_order_acquire);
    if (native == NULL) {
        rt_event fresh;
        tp_status status = pool_take(device, event->head.flags, &fresh);
        if (status != TP_OK)
            return status;
        if (atomic_compare_exchange_strong_explicit(&event->native, &native, fresh, memory_order_acq_rel,
                                                    memory_order_acquire))
            native = fresh;
        else
            pool_give(device, event->head.flags, fresh, false); /* a record published one first */
    }
    atomic_store_explicit(&event->shared, true, memory_order_release);
    atomic_store_explicit(&event->recorded, true, memory_order_release);
    *out = native;
    return TP_OK;
}

static tp_status gpu_event_ipc_export(tp_event *base, unsigned char *payload, size_t *length)
{
    gpu_event *event = as_event(base);
    if (event->import) {
        /* Passed on as it came: a third process imports the first one's event. */
        memcpy(payload, event->import->payload, GPU_IPC_PAYLOAD_SIZE);
        *length = GPU_IPC_PAYLOAD_SIZE;
        return TP_OK;
    }
    gpu_device *device = event_device(event);
    ipc_payload p = {.flags = event->head.flags & (TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING), .device = device->index};
    if (!self_identity(&p.exporter))
        return gpu.host->fail(TP_ERR_BACKEND, "tp_event_ipc_handle: cannot read this process's start time from /proc");
    tp_status status = device_open(device);
    if (status != TP_OK)
        return status;
    rt_event native;
    status = event_share_native(event, &native);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("SetDevice"), e);
    (void)device_uuid(device, p.uuid);
    e = rt_ipc_get_event_handle(&p.handle, native);
    rt_guard_leave(&guard);
    if (e != RT_SUCCESS)
        return fail_call(RT_CALL("IpcGetEventHandle"), e);
    payload_encode(&p, payload);
    *length = GPU_IPC_PAYLOAD_SIZE;
    return TP_OK;
}

/* Refuses an import on a device that is not the GPU the event lives on, where
 * both UUIDs are known. */
static tp_status check_same_gpu(gpu_device *device, const ipc_payload *p)
{
    static const unsigned char zero[GPU_UUID_SIZE];
    unsigned char here[GPU_UUID_SIZE];
    if (memcmp(p->uuid, zero, GPU_UUID_SIZE) == 0 || !device_uuid(device, here) ||
        memcmp(p->uuid, here, GPU_UUID_SIZE) == 0)
        return TP_OK;
    char theirs[48], ours[48];
    return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                          "tp_event_from_ipc_handle: the event is on %s (%s:%d of pid %d), but %s:%d here is %s",
                          uuid_text(p->uuid, theirs), RT_BACKEND_NAME, p->device, (int)p->exporter.pid,
                          RT_BACKEND_NAME, device->index, uuid_text(here, ours));
}

/* The opened handle for `payload` on the device: the one already open here, or
 * newly opened. */
static tp_status import_acquire(gpu_device *device, const ipc_payload *p, const unsigned char *payload,
                                gpu_import **out)
{
    pthread_mutex_lock(&device->ipc_lock);
    retired_reap(device);
    for (gpu_import *import = device->imports; import; import = import->next) {
        if (memcmp(import->payload, payload, GPU_IPC_PAYLOAD_SIZE) == 0) {
            import->refs++;
            pthread_mutex_unlock(&device->ipc_lock);
            *out = import;
            return TP_OK;
        }
    }
    gpu_import *import = calloc(1, sizeof *import);
    if (!import) {
        pthread_mutex_unlock(&device->ipc_lock);
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_from_ipc_handle: out of memory");
    }
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    const char *call = RT_CALL("SetDevice");
    if (e == RT_SUCCESS) {
        call = RT_CALL("IpcOpenEventHandle");
        e = rt_ipc_open_event_handle(&import->native, &p->handle);
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        pthread_mutex_unlock(&device->ipc_lock);
        free(import);
        /* The handle is what was given: the runtime refusing it is an invalid
         * argument, unless it ran out of memory. */
        return gpu.host->fail(e == RT_ERROR_OUT_OF_MEMORY ? TP_ERR_OUT_OF_MEMORY : TP_ERR_INVALID_ARGUMENT,
                              "tp_event_from_ipc_handle: %s: %s: %s (the event of pid %d, its %s:%d)", call,
                              rt_error_name(e), rt_error_string(e), (int)p->exporter.pid, RT_BACKEND_NAME, p->device);
    }
    import->refs = 1;
    import->exporter = p->exporter;
    memcpy(import->payload, payload, GPU_IPC_PAYLOAD_SIZE);
    atomic_init(&import->next_liveness_check_ns, 0);
    atomic_init(&import->exporter_gone, false);
    atomic_init(&import->recorded_here, false);
    import->next = device->imports;
    device->imports = import;
    pthread_mutex_unlock(&device->ipc_lock);
    *out = import;
    return TP_OK;
}

static tp_status gpu_event_ipc_import(int index, const unsigned char *payload, size_t length, tp_event **out)
{
    static const char who[] = "tp_event_from_ipc_handle";
    ipc_payload p = {.flags = 0};
    tp_status status = payload_decode(payload, length, &p);
    if (status != TP_OK)
        return status;
    /* Checked before the runtime sees the handle: it opens a dead process's handle
     * as if nothing were wrong, and fails on one of this process's own. */
    if (!process_is(&p.exporter))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the exporting process (pid %d) is gone", who,
                              (int)p.exporter.pid);
    if (p.exporter.pid == (int32_t)getpid())
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: the handle was exported by this process (pid %d), and %s cannot open an event's "
                              "handle in the process that exported it: use the exported event itself",
                              who, (int)p.exporter.pid, RT_BACKEND_NAME);
    gpu_device *device = &gpu.devices[index];
    status = device_open(device);
    if (status != TP_OK)
        return status;
    status = check_same_gpu(device, &p);
    if (status != TP_OK)
        return status;
    gpu_event *event = malloc(sizeof *event);
    if (!event)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    gpu_import *import = NULL;
    status = import_acquire(device, &p, payload, &import);
    if (status != TP_OK) {
        free(event);
        return status;
    }
    event->head = (tp_event){&gpu_table, {RT_DEVICE_TYPE, index}, p.flags};
    atomic_init(&event->native, import->native);
    atomic_init(&event->recorded, true); /* the exporter may have recorded it: ask the runtime */
    atomic_init(&event->shared, true);
    event->import = import;
    *out = &event->head;
    return TP_OK;
}

/* ------------------------------------------------------------- baselines */

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
    .event_ipc_export = gpu_event_ipc_export,
    .event_ipc_import = gpu_event_ipc_import,
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
