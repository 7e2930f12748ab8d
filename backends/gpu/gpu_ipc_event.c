/*
 * The entries of interprocess events (TP_EVENT_INTERPROCESS, rule 8), exported
 * from here or imported. They sit on the plain events' record (gpu_event.c) and on
 * gpu_ipc.c; what differs from a plain event:
 *  - the native event, once exported or imported, is "shared": another process may
 *    record it, so its own state answers query and synchronize, it is never
 *    replaced (not even on HIP with a record pending), and it is retired, never
 *    pooled, when the event goes;
 *  - an imported event's pending record may never be reached if its exporter died:
 *    query and synchronize look (gpu_import_exporter_alive) and fail then;
 *  - synchronize polls where the runtime would spin or wait for good;
 *  - a stream of another device waits through a relay (CUDA 13 crashes otherwise).
 * An event handed over a Unix socket (tp_event_ipc_send, or received) records,
 * waits, queries and synchronizes through its page instead (gpu_ipc_page.c) from
 * its first send on; it is then shared that way only (no IPC handle).
 */
#include "backends/gpu/gpu_ipc.h"
#include "backends/gpu/gpu_ipc_page.h"
#include "common/spin.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct gpu_ipc_event {
    gpu_event base;
    /* The native event is known to another process (exported, or imported). */
    atomic_bool shared;
    /* Imported events only: the opened handle, which owns the native event. Set
     * before the event is handed out, never changed. */
    gpu_import *import;
    /* Handed over a socket: the page its records go through; set once. */
    _Atomic(gpu_page *) page;
    /* Records on the native event under way (they found no page): the first send
     * waits for them before it takes the latest into the page. */
    atomic_uint native_records;
} gpu_ipc_event;

static inline gpu_ipc_event *as_ipc_event(tp_event *event)
{
    return (gpu_ipc_event *)event;
}

static inline gpu_page *page_of(gpu_ipc_event *event)
{
    return atomic_load_explicit(&event->page, memory_order_acquire);
}

static inline gpu_page *page_of_seq_cst(gpu_ipc_event *event)
{
    return atomic_load(&event->page);
}

bool gpu_ipc_event_paged(tp_event *event)
{
    return page_of(as_ipc_event(event)) != NULL;
}

static gpu_ipc_event *ipc_event_new(int index, unsigned flags)
{
    gpu_ipc_event *event = malloc(sizeof *event);
    if (!event)
        return NULL;
    event->base.head = (tp_event){.backend = gpu.ipc_table, .device = {RT_DEVICE_TYPE, index}, .flags = flags};
    atomic_init(&event->base.native, NULL);
    atomic_init(&event->base.recorded, false);
    atomic_init(&event->base.capture, NULL);
    atomic_init(&event->shared, false);
    event->import = NULL;
    atomic_init(&event->page, NULL);
    atomic_init(&event->native_records, 0);
    return event;
}

tp_status gpu_ipc_event_create(int index, unsigned flags, tp_event **out)
{
    gpu_ipc_event *event = ipc_event_new(index, flags);
    if (!event)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    *out = &event->base.head;
    return TP_OK;
}

tp_status gpu_ipc_event_destroy(tp_event *base)
{
    gpu_ipc_event *event = as_ipc_event(base);
    gpu_device *device = gpu_event_device(&event->base);
    rt_event native = atomic_load_explicit(&event->base.native, memory_order_relaxed);
    gpu_page *page = page_of(event);
    if (page)
        gpu_page_release(page);
    if (event->import)
        gpu_import_release(device, event->import);
    else if (native && atomic_load_explicit(&event->shared, memory_order_acquire))
        gpu_retire_shared_native(device, native, NULL);
    else if (native)
        gpu_pool_give(device, base->flags, native, true);
    free(event);
    return TP_OK;
}

/* A record on the native event, made at the first record of an event never
 * exported (see below). */
static tp_status record_native(gpu_ipc_event *event, gpu_stream *stream)
{
    for (;;) {
        rt_event native = atomic_load_explicit(&event->base.native, memory_order_acquire);
        if (native) {
            if (event->import)
                atomic_store_explicit(&event->import->recorded_here, true, memory_order_relaxed);
            tp_status status = gpu_record_native(native, stream);
            if (status == TP_OK)
                atomic_store_explicit(&event->base.recorded, true, memory_order_release);
            return status;
        }
        bool published;
        tp_status status = gpu_event_record_fresh(&event->base, stream, NULL, false, &published);
        if (status != TP_OK || published)
            return status; /* else an export made the native event first: record that */
    }
}

/* In place, always: the native event is never replaced (another process may hold
 * it, or will), so it is recorded again as CUDA would. Only the first record of an
 * event never exported makes one. */
tp_status gpu_ipc_event_record(tp_event *base, tp_stream *stream_base)
{
    gpu_ipc_event *event = as_ipc_event(base);
    gpu_stream *stream = gpu_as_stream(stream_base);
    gpu_page *page = page_of(event);
    if (page)
        return gpu_page_record(page, stream);
    /* Announced, then the page looked at again (both sequentially consistent, as the
     * send's attach and its look at the count): either this record sees the page, or
     * the send sees it under way and waits for it (attach_page). */
    atomic_fetch_add(&event->native_records, 1);
    page = page_of_seq_cst(event);
    tp_status status = page ? gpu_page_record(page, stream) : record_native(event, stream);
    atomic_fetch_sub_explicit(&event->native_records, 1, memory_order_release);
    return status;
}

/* Query of an imported event whose record is not reached: a record the exporter
 * will never reach, if it is gone. */
TP_COLD static tp_status import_query_pending(gpu_import *import, bool *done)
{
    if (gpu_import_exporter_alive_throttled(import)) {
        *done = false;
        return TP_OK;
    }
    /* A record reached just before the exporter went still counts. */
    if (rt_event_query(import->native) == RT_SUCCESS) {
        *done = true;
        return TP_OK;
    }
    return gpu_exporter_exited(import, "tp_event_query");
}

tp_status gpu_ipc_event_query(tp_event *base, bool *done)
{
    gpu_ipc_event *event = as_ipc_event(base);
    gpu_page *page = page_of(event);
    if (page)
        return gpu_page_query(page, done);
    if (!gpu_event_recorded(&event->base)) {
        *done = true; /* rule 4 */
        return TP_OK;
    }
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, gpu_event_device(&event->base)->context,
                                    RT_NEED_CONTEXT);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_query(gpu_event_native(&event->base));
    rt_guard_leave(&guard);
    if (e == RT_SUCCESS || (e == RT_ERROR_NOT_READY && !event->import)) {
        *done = e == RT_SUCCESS;
        return TP_OK;
    }
    if (e == RT_ERROR_NOT_READY)
        return import_query_pending(event->import, done);
    if (event->import && !gpu_import_exporter_alive(event->import))
        return gpu_exporter_exited(event->import, "tp_event_query");
    return gpu_fail_call(RT_CALL("EventQuery"), e);
}

/*
 * Synchronize by polling the runtime, for interprocess events that must sleep or
 * must notice a dead exporter:
 *  - TP_EVENT_BLOCKING (exported, imported, or local): sleeps from the start,
 *    between queries TP_PAUSE_FIRST_NS doubling to TP_PAUSE_LONGEST_NS (common/spin.h),
 *    since the runtime ignores its blocking-sync flag for these events. A wait of
 *    200 ms costs about 200 queries and sleeps: well under 1% of a CPU. A record is
 *    seen at most TP_PAUSE_LONGEST_NS late.
 *  - imported without TP_EVENT_BLOCKING: spins for POLL_SPIN_NS first, as the
 *    runtime would, so a record reached soon is seen at once; then sleeps as above.
 * An imported event's exporter is looked at every TP_LIVENESS_PERIOD_NS: once it is
 * gone, the pending record will never be reached (the runtime would wait forever),
 * so synchronize fails.
 */
#define POLL_SPIN_NS 50000u

static tp_status synchronize_polling(gpu_ipc_event *event)
{
    gpu_import *import = event->import;
    rt_event native = gpu_event_native(&event->base);
    rt_guard guard;
    rt_error e = gpu_guard_enter_if(RT_QUERY_NEEDS_CONTEXT, &guard, gpu_event_device(&event->base)->context,
                                    RT_NEED_CONTEXT);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    uint64_t now = tp_now_ns();
    uint64_t spin_until = (event->base.head.flags & TP_EVENT_BLOCKING) ? now : now + POLL_SPIN_NS;
    uint64_t next_liveness_check = now; /* an exporter already gone fails at once */
    uint64_t pause = TP_PAUSE_FIRST_NS;
    tp_status status = TP_OK;
    for (;;) {
        e = rt_event_query(native);
        if (e == RT_SUCCESS)
            break;
        if (e != RT_ERROR_NOT_READY) {
            status = import && !gpu_import_exporter_alive(import) ? gpu_exporter_exited(import, "tp_event_synchronize")
                                                                  : gpu_fail_call(RT_CALL("EventQuery"), e);
            break;
        }
        now = tp_now_ns();
        if (import && now >= next_liveness_check) {
            if (!gpu_import_exporter_alive(import)) {
                /* A record reached just before the exporter went still counts. */
                if (rt_event_query(native) != RT_SUCCESS)
                    status = gpu_exporter_exited(import, "tp_event_synchronize");
                break;
            }
            next_liveness_check = now + TP_LIVENESS_PERIOD_NS;
        }
        if (now < spin_until)
            continue;
        tp_sleep_ns(pause);
        pause = tp_pause_next(pause);
    }
    rt_guard_leave(&guard);
    return status;
}

tp_status gpu_ipc_event_synchronize(tp_event *base)
{
    gpu_ipc_event *event = as_ipc_event(base);
    gpu_page *page = page_of(event);
    if (page)
        return gpu_page_synchronize(page, base->flags & TP_EVENT_BLOCKING);
    if (!gpu_event_recorded(&event->base))
        return TP_OK; /* rule 5 */
    if (event->import || (base->flags & TP_EVENT_BLOCKING))
        return synchronize_polling(event);
    return gpu_plain_event_synchronize(base);
}

/*
 * A stream of one device waiting on an interprocess event of another: CUDA 13
 * crashes in cuStreamWaitEvent on that (seen on two H200s; same-device waits and
 * cross-device waits on ordinary events work). So the wait is relayed: on the
 * event's device, the waiting stream's own relay stream (gpu_stream_relay) waits
 * on the event, which takes the snapshot of its latest record now (rule 6), and
 * records an ordinary pooled event, which the waiting stream then waits on. The
 * relay serves that one stream, so a relayed wait is ordered only after the
 * stream's earlier relayed waits, which the stream waits for anyway: no order
 * between streams that no event asked for (rule 12).
 */
static tp_status relay_wait(gpu_stream *stream, gpu_ipc_event *event)
{
    gpu_device *device = gpu_event_device(&event->base);
    rt_stream relay;
    tp_status status = gpu_stream_relay(stream, device, &relay);
    if (status != TP_OK)
        return status;
    rt_event marker;
    status = gpu_pool_take(device, TP_EVENT_DEFAULT, &marker);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    const char *call = RT_CALL("SetDevice");
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        call = RT_STREAM_WAIT_EVENT_CALL;
        e = rt_stream_wait_event(relay, gpu_event_native(&event->base));
        if (e == RT_SUCCESS) {
            call = RT_CALL("EventRecord");
            e = rt_event_record(marker, relay);
        }
        rt_guard_leave(&guard);
    }
    if (e == RT_SUCCESS) {
        call = RT_STREAM_WAIT_EVENT_CALL;
        e = gpu_stream_enter(stream, &guard);
        if (e == RT_SUCCESS) {
            e = rt_stream_wait_event(stream->native, marker);
            rt_guard_leave(&guard);
        }
    }
    gpu_pool_give(device, TP_EVENT_DEFAULT, marker, true);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(call, e);
}

tp_status gpu_ipc_stream_wait_event(tp_stream *stream_base, tp_event *event_base)
{
    gpu_ipc_event *event = as_ipc_event(event_base);
    gpu_page *page = page_of(event);
    if (page)
        return gpu_page_wait(page, gpu_as_stream(stream_base));
    if (!gpu_event_recorded(&event->base))
        return TP_OK; /* rule 6: nothing to wait for */
    if (event_base->device.index != stream_base->device.index)
        return relay_wait(gpu_as_stream(stream_base), event);
    return gpu_plain_stream_wait_event(stream_base, event_base);
}

/* ---------------------------------------------------------------- export */

/*
 * The event's native event for export: made now if it has none, and marked
 * shared. From then on another process may record it, so its own state answers
 * query and synchronize (`recorded`).
 */
static tp_status share_native(gpu_ipc_event *event, rt_event *out)
{
    gpu_device *device = gpu_event_device(&event->base);
    rt_event native = atomic_load_explicit(&event->base.native, memory_order_acquire);
    if (native == NULL) {
        rt_event fresh;
        tp_status status = gpu_pool_take(device, event->base.head.flags, &fresh);
        if (status != TP_OK)
            return status;
        if (atomic_compare_exchange_strong_explicit(&event->base.native, &native, fresh, memory_order_acq_rel,
                                                    memory_order_acquire))
            native = fresh;
        else
            gpu_pool_give(device, event->base.head.flags, fresh, false); /* a record published one first */
    }
    atomic_store_explicit(&event->shared, true, memory_order_release);
    atomic_store_explicit(&event->base.recorded, true, memory_order_release);
    *out = native;
    return TP_OK;
}

tp_status gpu_event_ipc_export(tp_event *base, unsigned char *payload, size_t *length)
{
    gpu_ipc_event *event = as_ipc_event(base);
    if (page_of(event))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "tp_event_ipc_handle: the event was handed over a socket (tp_event_ipc_send), where "
                              "its records go; an importer of a handle would not see them: send it on instead");
    if (event->import) {
        /* Passed on as it came: a third process imports the first one's event. */
        memcpy(payload, event->import->payload, GPU_IPC_PAYLOAD_SIZE);
        *length = GPU_IPC_PAYLOAD_SIZE;
        return TP_OK;
    }
    gpu_device *device = gpu_event_device(&event->base);
    gpu_ipc_payload p = {.flags = base->flags & (TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING), .device = device->index};
    if (!tp_process_self(&p.exporter))
        return gpu.host->fail(TP_ERR_BACKEND, "tp_event_ipc_handle: cannot read this process's start time from /proc");
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_event native;
    status = share_native(event, &native);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    (void)gpu_device_uuid(device, p.uuid);
    e = rt_ipc_get_event_handle(&p.handle, native);
    rt_guard_leave(&guard);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("IpcGetEventHandle"), e);
    gpu_payload_encode(&p, payload);
    *length = GPU_IPC_PAYLOAD_SIZE;
    return TP_OK;
}

/* ---------------------------------------------------------------- import */

tp_status gpu_event_ipc_import(int index, const unsigned char *payload, size_t length, tp_event **out)
{
    static const char who[] = "tp_event_from_ipc_handle";
    gpu_ipc_payload p = {.flags = 0};
    tp_status status = gpu_payload_decode(payload, length, &p);
    if (status != TP_OK)
        return status;
    /* Checked before the runtime sees the handle: it opens a dead process's handle
     * as if nothing were wrong, and fails on one of this process's own. */
    if (!tp_process_is(&p.exporter))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: the exporting process (pid %d) is gone, or is in another PID namespace (a "
                              "container: hand the event over a Unix socket instead, tp_event_ipc_send)",
                              who, (int)p.exporter.pid);
    if (p.exporter.pid == (int32_t)getpid())
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: the handle was exported by this process (pid %d), and %s cannot open an event's "
                              "handle in the process that exported it: use the exported event itself",
                              who, (int)p.exporter.pid, RT_BACKEND_NAME);
    gpu_device *device = &gpu.devices[index];
    status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    status = gpu_check_same_gpu(device, &p);
    if (status != TP_OK)
        return status;
    gpu_ipc_event *event = ipc_event_new(index, p.flags);
    if (!event)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    gpu_import *import = NULL;
    status = gpu_import_acquire(device, &p, payload, &import);
    if (status != TP_OK) {
        free(event);
        return status;
    }
    atomic_init(&event->base.native, import->native);
    atomic_init(&event->base.recorded, true); /* the exporter may have recorded it: ask the runtime */
    atomic_init(&event->base.capture, NULL);
    atomic_init(&event->shared, true);
    event->import = import;
    *out = &event->base.head;
    return TP_OK;
}

/* ------------------------------------------------- over a Unix socket */

/* The event's page, made at its first send; a native record pending then becomes
 * the page's latest, reached when the native one is, unless a record through the
 * page came first (gpu_page_adopt_record). A record another thread makes meanwhile
 * either finds the page, or is on the native event before the latest is taken: the
 * send waits for the records under way (gpu_ipc_event_record). */
static tp_status attach_page(gpu_ipc_event *event, gpu_page **out)
{
    static const char who[] = "tp_event_ipc_send";
    gpu_page *page = page_of(event);
    if (page) {
        *out = page;
        return TP_OK;
    }
    if (event->import || atomic_load_explicit(&event->shared, memory_order_acquire))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: the event is shared through IPC handles already (%s), whose importers would not "
                              "see records made through a socket: send an event never given a handle",
                              who, event->import ? "imported" : "exported");
    gpu_device *device = gpu_event_device(&event->base);
    tp_status status = gpu_device_open(device);
    if (status == TP_OK)
        status = gpu_page_create(device, event->base.head.flags, &page);
    if (status != TP_OK)
        return status;
    gpu_page *first = NULL;
    if (!atomic_compare_exchange_strong_explicit(&event->page, &first, page, memory_order_seq_cst,
                                                 memory_order_acquire)) {
        gpu_page_release(page); /* another thread's send attached one first */
        *out = first;
        return TP_OK;
    }
    /* A record under way takes microseconds, unless the runtime's queue is full
     * (then it waits for room, and so does this send). */
    for (uint64_t pause = TP_PAUSE_FIRST_NS; atomic_load(&event->native_records) != 0; pause = tp_pause_next(pause))
        tp_sleep_ns(pause);
    if (gpu_event_recorded(&event->base)) {
        tp_snapshot snapshot = {.backend = event->base.head.backend};
        status = gpu_snapshot_take(&event->base.head, &snapshot);
        if (status == TP_OK && snapshot.state == TP_SNAPSHOT_PENDING)
            status = gpu_page_adopt_record(page, &snapshot);
        if (snapshot.state == TP_SNAPSHOT_PENDING)
            gpu_snapshot_release(&snapshot);
    }
    *out = page;
    return status;
}

tp_status gpu_event_ipc_send_prepare(tp_event *base, int *fd, unsigned char *payload, size_t *length)
{
    gpu_page *page = NULL;
    tp_status status = attach_page(as_ipc_event(base), &page);
    if (status == TP_OK)
        gpu_page_describe(page, fd, payload, length);
    return status;
}

tp_status gpu_event_ipc_receive(int index, int fd, const unsigned char *payload, size_t length, tp_event **out)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK) {
        close(fd);
        return status;
    }
    gpu_page *page;
    status = gpu_page_adopt(device, fd, payload, length, &page);
    if (status != TP_OK)
        return status;
    gpu_ipc_event *event = ipc_event_new(index, TP_EVENT_INTERPROCESS | gpu_page_flags(page));
    if (!event) {
        gpu_page_release(page);
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_ipc_recv: out of memory");
    }
    atomic_store_explicit(&event->page, page, memory_order_release);
    *out = &event->base.head;
    return TP_OK;
}
