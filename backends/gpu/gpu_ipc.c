/*
 * What interprocess events rest on (rule 8): the payload of a handle, the device's
 * UUID, the opened handles of this process, the retirement of shared native
 * events, and whether an exporter still runs. The events' entries are
 * gpu_ipc_event.c's.
 *
 * Export gives the event its native event if it has none (rule 2: made at the
 * first record or export), marks it shared and writes a payload (its layout: gpu_internal.h)
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
 *    whatever its flags. Synchronize polls instead (gpu_ipc_event.c).
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

#include "backends/gpu/gpu_ipc.h"
#include "common/array.h"
#include "common/bytes.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(GPU_IPC_PAYLOAD_SIZE <= TP_IPC_PAYLOAD_MAX, "the payload must fit the handle");
_Static_assert(sizeof(rt_ipc_event_handle) == RT_IPC_HANDLE_SIZE &&
                   GPU_IPC_HANDLE_OFFSET + RT_IPC_HANDLE_SIZE == GPU_IPC_PAYLOAD_SIZE,
               "the runtime's handle fills the end of the payload");
_Static_assert(sizeof(RT_IPC_PAYLOAD_MAGIC) == 9, "the payload magic is 8 bytes");

/* ---------------------------------------------------------------- payload */

void gpu_payload_encode(const gpu_ipc_payload *p, unsigned char *out)
{
    memcpy(out, RT_IPC_PAYLOAD_MAGIC, 8);
    tp_put_u32(out + 8, GPU_IPC_PAYLOAD_VERSION);
    tp_put_u32(out + 12, p->flags);
    tp_put_u32(out + 16, (uint32_t)p->exporter.pid);
    tp_put_u32(out + 20, (uint32_t)p->device);
    tp_put_u64(out + 24, p->exporter.start_time);
    memcpy(out + 32, p->uuid, GPU_UUID_SIZE);
    memcpy(out + GPU_IPC_HANDLE_OFFSET, &p->handle, RT_IPC_HANDLE_SIZE);
}

/* The payload's fields, or TP_ERR_INVALID_ARGUMENT for one this backend did not
 * write. Says nothing yet about whether its exporter still runs. */
tp_status gpu_payload_decode(const unsigned char *payload, size_t length, gpu_ipc_payload *p)
{
    static const char who[] = "tp_event_from_ipc_handle";
    if (length != GPU_IPC_PAYLOAD_SIZE)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: a %zu-byte payload is not of a %s event (%u bytes)", who,
                              length, RT_BACKEND_NAME, GPU_IPC_PAYLOAD_SIZE);
    if (memcmp(payload, RT_IPC_PAYLOAD_MAGIC, 8) != 0)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload is not of a %s event (bad magic)", who,
                              RT_BACKEND_NAME);
    uint32_t version = tp_get_u32(payload + 8);
    if (version != GPU_IPC_PAYLOAD_VERSION)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: %s payload version %u, this library reads %u", who,
                              RT_BACKEND_NAME, (unsigned)version, GPU_IPC_PAYLOAD_VERSION);
    p->flags = tp_get_u32(payload + 12);
    if (!(p->flags & TP_EVENT_INTERPROCESS) || (p->flags & ~(unsigned)(TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING)))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: the payload's event flags 0x%x are not an interprocess event's", who, p->flags);
    uint32_t pid = tp_get_u32(payload + 16), device = tp_get_u32(payload + 20);
    if (pid == 0 || pid > INT32_MAX)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload names no process (pid %u)", who, (unsigned)pid);
    if (device >= TP_MAX_DEVICES)
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the payload names device index %u", who, (unsigned)device);
    p->exporter = (tp_process_id){(int32_t)pid, tp_get_u64(payload + 24)};
    p->device = (int)device;
    memcpy(p->uuid, payload + 32, GPU_UUID_SIZE);
    memcpy(&p->handle, payload + GPU_IPC_HANDLE_OFFSET, RT_IPC_HANDLE_SIZE);
    return TP_OK;
}

/* The device's UUID, read once; all zero (and false) if the runtime cannot tell. */
bool gpu_device_uuid(gpu_device *device, unsigned char uuid[GPU_UUID_SIZE])
{
    pthread_mutex_lock(&device->ipc_lock);
    if (device->uuid_state == GPU_UUID_UNREAD) {
        static const unsigned char zero[GPU_UUID_SIZE];
        bool read = rt_device_uuid(device->index, device->uuid) == RT_SUCCESS;
        device->uuid_state = read && memcmp(device->uuid, zero, GPU_UUID_SIZE) != 0 ? GPU_UUID_KNOWN : GPU_UUID_UNKNOWN;
    }
    bool known = device->uuid_state == GPU_UUID_KNOWN;
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
        n += snprintf(text + n, (size_t)(48 - n), "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", uuid[i]);
    return text;
}

/* ------------------------------------------------------------- the device */

/* Refuses an import on a device that is not the GPU the event lives on, where
 * both UUIDs are known. */
tp_status gpu_check_same_gpu(gpu_device *device, const gpu_ipc_payload *p)
{
    static const unsigned char zero[GPU_UUID_SIZE];
    unsigned char here[GPU_UUID_SIZE];
    if (memcmp(p->uuid, zero, GPU_UUID_SIZE) == 0 || !gpu_device_uuid(device, here) ||
        memcmp(p->uuid, here, GPU_UUID_SIZE) == 0)
        return TP_OK;
    char theirs[48], ours[48];
    return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                          "tp_event_from_ipc_handle: the event is on %s (%s:%d of pid %d), but %s:%d here is %s",
                          uuid_text(p->uuid, theirs), RT_BACKEND_NAME, p->device, (int)p->exporter.pid, RT_BACKEND_NAME,
                          device->index, uuid_text(here, ours));
}

/* -------------------------------------------------- shared native events */

/* Retired shared native events kept at most; beyond that they are destroyed at once. */
#define RETIRED_KEEP_MAX 4096

/* Retired native events a reap asks about, at most. */
#define RETIRED_REAP_MAX 8

static bool retired_push(gpu_retired_list *list, rt_event native, const tp_process_id *exporter)
{
    if (list->count == list->capacity) {
        if (list->capacity >= RETIRED_KEEP_MAX)
            return false;
        if (!tp_array_grow(&list->items, &list->capacity, list->count + 1, sizeof *list->items))
            return false;
    }
    list->items[list->count++] = (gpu_retired_native){native, exporter ? *exporter : (tp_process_id){0, 0}};
    return true;
}

/* A retired native event that nobody can still be waiting for. */
static bool retired_done(const gpu_retired_native *retired)
{
    rt_error e = rt_event_query(retired->native);
    if (e != RT_ERROR_NOT_READY)
        return true; /* reached, or broken */
    return retired->exporter.pid != 0 && !tp_process_is(&retired->exporter);
}

/* Destroys a few retired native events whose record was reached. Called with the
 * device's ipc_lock held. */
static void retired_reap(gpu_device *device)
{
    gpu_retired_list *list = &device->retired;
    size_t asked = 0;
    for (size_t i = 0; i < list->count && asked < RETIRED_REAP_MAX; asked++) {
        if (!retired_done(&list->items[i])) {
            i++;
            continue;
        }
        gpu_destroy_native(device, list->items[i].native);
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
void gpu_retire_shared_native(gpu_device *device, rt_event native, const tp_process_id *exporter)
{
    gpu_retired_native retired = {native, exporter ? *exporter : (tp_process_id){0, 0}};
    bool pending = !retired_done(&retired);
    pthread_mutex_lock(&device->ipc_lock);
    retired_reap(device);
    bool kept = pending && retired_push(&device->retired, native, exporter);
    pthread_mutex_unlock(&device->ipc_lock);
    if (!kept)
        gpu_destroy_native(device, native);
}

/* Drops one tp event's hold on an opened handle. The last one destroys it, or
 * retires it if a record of this process may be pending on it. */
void gpu_import_release(gpu_device *device, gpu_import *import)
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
        gpu_retire_shared_native(device, import->native, &import->exporter);
    else
        gpu_destroy_native(device, import->native); /* the pending record is the exporter's own */
    tp_process_watch_close(&import->exporter_watch);
    free(import);
}

/* ---------------------------------------------------------------- imports */

/* The opened handle for `payload` on the device: the one already open here, or
 * newly opened. */
tp_status gpu_import_acquire(gpu_device *device, const gpu_ipc_payload *p, const unsigned char *payload,
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
    bool gone = tp_process_watch_open(&import->exporter_watch, &p->exporter) == TP_PROCESS_GONE;
    memcpy(import->payload, payload, GPU_IPC_PAYLOAD_SIZE);
    atomic_init(&import->next_liveness_check_ns, 0);
    atomic_init(&import->exporter_gone, gone);
    atomic_init(&import->recorded_here, false);
    import->next = device->imports;
    device->imports = import;
    pthread_mutex_unlock(&device->ipc_lock);
    *out = import;
    return TP_OK;
}

/*
 * Whether the process that exported an imported event still runs (false only
 * when it is known gone: failing to look, as at the descriptor limit, is not).
 * Once it is known gone it stays gone: a process that exited comes back no more,
 * and a pid reused by another one is told apart by the pidfd opened at import,
 * or, without pidfds, by its start time.
 */
bool gpu_import_exporter_alive(gpu_import *import)
{
    if (atomic_load_explicit(&import->exporter_gone, memory_order_relaxed))
        return false;
    if (tp_process_watch_alive(&import->exporter_watch))
        return true;
    atomic_store_explicit(&import->exporter_gone, true, memory_order_relaxed);
    return false;
}

/* The last answer in between looks (tp_liveness_due). */
bool gpu_import_exporter_alive_throttled(gpu_import *import)
{
    if (!tp_liveness_due(&import->next_liveness_check_ns, tp_now_ns()))
        return !atomic_load_explicit(&import->exporter_gone, memory_order_relaxed);
    return gpu_import_exporter_alive(import);
}

tp_status gpu_exporter_exited(const gpu_import *import, const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND,
                          "%s: the process (pid %d) that exported the event exited before its record was reached",
                          operation, (int)import->exporter.pid);
}
