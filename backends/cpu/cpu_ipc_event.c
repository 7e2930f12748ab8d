/*
 * Interprocess events (TP_EVENT_INTERPROCESS, rule 8): events of cpu_event.c
 * whose records also go into the shared record state of cpu_ipc.c, as tickets
 * that any process can look at. They are made here, with their own entries (the
 * cpu_event_ops below), and exported and imported here.
 *
 * The local snapshot stays: when the latest record is one this handle made, waits
 * go through its stream as for any event (a host function waiting for its own
 * stream is refused as usual); a record made elsewhere is waited for through the
 * shared state. The shared state is attached at the event's first record or
 * export (rule 2), or at import.
 *
 * The handle's payload: u32 version, u32 region size, i32 pid, i32 fd, u64 start
 * time, u64 token; little-endian (cpu_ipc.c says what each names). Handed over a
 * Unix socket instead, the event travels as its region's descriptor and a payload
 * of u32 version, u32 region size, u64 token: nothing names a pid or a path, so
 * the processes may be in different PID, IPC and mount namespaces.
 */
#include "backends/cpu/cpu_internal.h"
#include "common/bytes.h"

#include <stdlib.h>
#include <unistd.h>

#define CPU_IPC_PAYLOAD_VERSION 1u
#define CPU_IPC_PAYLOAD_SIZE 32u

_Static_assert(CPU_IPC_PAYLOAD_SIZE <= TP_IPC_PAYLOAD_MAX, "the payload must fit the handle");

typedef struct cpu_ipc_event {
    cpu_event event;
    /* The shared record state, once attached; set once. The event holds a
     * reference on it. */
    _Atomic(cpu_ipc *) ipc;
} cpu_ipc_event;

static cpu_ipc *attached(cpu_event *event)
{
    return atomic_load_explicit(&((cpu_ipc_event *)event)->ipc, memory_order_acquire);
}

/* The event's shared state, made now if it has none yet. */
static tp_status attach(cpu_event *event, const char *operation, cpu_ipc **out)
{
    cpu_ipc *ipc = attached(event);
    if (!ipc) {
        tp_status status = tp_cpu_ipc_create(event->head.flags, operation, &ipc);
        if (status != TP_OK)
            return status;
        /* Two threads may attach at once: the first one's region wins. */
        cpu_ipc *first = NULL;
        if (!atomic_compare_exchange_strong_explicit(&((cpu_ipc_event *)event)->ipc, &first, ipc, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            tp_cpu_ipc_unref(ipc);
            ipc = first;
        }
    }
    *out = ipc;
    return TP_OK;
}

/* ------------------------------------------------------------- the ops */

/*
 * The record goes into the shared state as well, and a record on a busy stream
 * always gets a task, which tells the other processes when the stream has got
 * there.
 */
static tp_status ipc_record(cpu_event *event, cpu_queue *queue)
{
    cpu_ipc *ipc;
    tp_status status = attach(event, "tp_event_record", &ipc);
    if (status != TP_OK)
        return status;
    uint64_t ticket;
    uint64_t submitted = atomic_load_explicit(&queue->submitted, memory_order_acquire);
    if (tp_cpu_queue_reached(queue, submitted)) {
        bool recorded;
        status = tp_cpu_ipc_record_reached(ipc, queue, &recorded, &ticket);
        if (status != TP_OK)
            return status;
        if (recorded) {
            tp_cpu_event_replace_record(event, NULL, 0, 0, ticket);
            return TP_OK;
        }
    }
    status = tp_cpu_queue_begin_submit(queue, "tp_event_record");
    if (status != TP_OK)
        return status;
    status = tp_cpu_ipc_record_pending(ipc, queue, &ticket);
    if (status != TP_OK) {
        tp_cpu_queue_cancel_submit(queue);
        return status;
    }
    uint64_t seq = tp_cpu_queue_next_seq(queue);
    tp_cpu_ipc_ref(ipc);     /* the task's */
    tp_cpu_queue_ref(queue); /* the snapshot's */
    tp_cpu_event_replace_record(event, queue, seq, 0, ticket);
    /* Reaching it is news for the other processes (such events have no timing). */
    cpu_task task = {.run = tp_cpu_ipc_publish_task, .arg = ipc, .word.u64 = ticket};
    tp_cpu_queue_end_submit(queue, &task);
    return TP_OK;
}

/* The handle's own snapshot if the shared latest record is the one it made;
 * otherwise drops it and says no. */
static bool own_latest_record(cpu_event *event, uint64_t latest, cpu_snapshot *mine)
{
    *mine = tp_cpu_event_snapshot(event);
    if (mine->tag == latest)
        return true;
    if (mine->source)
        tp_cpu_queue_unref(mine->source);
    return false;
}

static tp_status ipc_synchronize(cpu_event *event, enum cpu_wait_mode mode)
{
    cpu_ipc *ipc = attached(event);
    if (!ipc)
        return TP_OK; /* never recorded by anyone: a record attaches first */
    uint64_t latest = tp_cpu_ipc_latest(ipc);
    if (latest == 0 || tp_cpu_ipc_reached(ipc, latest))
        return TP_OK;
    cpu_snapshot mine;
    if (own_latest_record(event, latest, &mine))
        return tp_cpu_record_synchronize(mine, mode);
    return tp_cpu_ipc_wait(ipc, latest, mode, "tp_event_synchronize");
}

/* Versioned as any wait (rule 6): the task waits for the ticket latest now. */
static tp_status ipc_wait(cpu_queue *queue, cpu_event *event)
{
    cpu_ipc *ipc = attached(event);
    if (!ipc)
        return TP_OK;
    uint64_t latest = tp_cpu_ipc_latest(ipc);
    if (latest == 0 || tp_cpu_ipc_reached(ipc, latest))
        return TP_OK;
    cpu_snapshot mine;
    if (own_latest_record(event, latest, &mine))
        return tp_cpu_record_wait(queue, mine);
    if (tp_cpu_ipc_recorded_on(ipc, latest, queue))
        return TP_OK;    /* recorded on this stream by another handle: the FIFO orders it */
    tp_cpu_ipc_ref(ipc); /* the task's */
    cpu_task task = {.run = tp_cpu_ipc_wait_task, .arg = ipc, .word.u64 = latest};
    tp_status status = tp_cpu_queue_submit(queue, &task, "tp_stream_wait_event");
    if (status != TP_OK)
        tp_cpu_ipc_unref(ipc);
    return status;
}

static tp_status ipc_query(cpu_event *event, bool *done)
{
    cpu_ipc *ipc = attached(event);
    if (!ipc) {
        *done = true;
        return TP_OK;
    }
    return tp_cpu_ipc_query(ipc, tp_cpu_ipc_latest(ipc), done);
}

/* The latest record by anyone: this handle's own, as its record state (which
 * knows the stream), else the ticket in the shared state. */
static tp_status ipc_snapshot(cpu_event *event, tp_snapshot *out)
{
    cpu_ipc *ipc = attached(event);
    uint64_t latest = ipc ? tp_cpu_ipc_latest(ipc) : 0;
    if (latest == 0) {
        out->state = TP_SNAPSHOT_NEVER_RECORDED;
        return TP_OK;
    }
    if (tp_cpu_ipc_reached(ipc, latest)) {
        out->state = TP_SNAPSHOT_REACHED;
        return TP_OK;
    }
    cpu_snapshot mine;
    if (own_latest_record(event, latest, &mine)) {
        tp_cpu_snapshot_of_record(mine, out);
        return TP_OK;
    }
    tp_cpu_ipc_ref(ipc); /* the snapshot's */
    out->state = TP_SNAPSHOT_PENDING;
    out->object = ipc;
    out->word[0] = latest;
    out->word[1] = CPU_SNAPSHOT_IPC;
    return TP_OK;
}

static void ipc_release(cpu_event *event)
{
    cpu_ipc *ipc = atomic_load_explicit(&((cpu_ipc_event *)event)->ipc, memory_order_relaxed);
    if (ipc)
        tp_cpu_ipc_unref(ipc);
    free(event);
}

static const cpu_event_ops ipc_ops = {
    .record = ipc_record,
    .query = ipc_query,
    .synchronize = ipc_synchronize,
    .wait = ipc_wait,
    .snapshot = ipc_snapshot,
    .release = ipc_release,
};

/* ------------------------------------------------------------- entries */

/* `ipc` NULL: attached at the first record or export. Takes over ipc's reference. */
static tp_status ipc_event_new(int device, unsigned flags, cpu_ipc *ipc, tp_event **out)
{
    cpu_ipc_event *event = calloc(1, sizeof *event);
    if (!event)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory for an event of cpu:%d",
                                   device);
    tp_cpu_event_init(&event->event, device, flags, &ipc_ops);
    atomic_init(&event->ipc, ipc);
    *out = &event->event.head;
    return TP_OK;
}

/* An event of another process's region (opened from a handle or received over a
 * socket): blocking as its creator made it. Takes over ipc's reference, let go
 * where the event cannot be made. */
static tp_status imported_event_new(int device, cpu_ipc *ipc, tp_event **out)
{
    unsigned flags = TP_EVENT_INTERPROCESS | (tp_cpu_ipc_flags(ipc) & TP_EVENT_BLOCKING);
    tp_status status = ipc_event_new(device, flags, ipc, out);
    if (status != TP_OK)
        tp_cpu_ipc_unref(ipc);
    return status;
}

tp_status tp_cpu_ipc_event_create(int device, unsigned flags, tp_event **out)
{
    return ipc_event_new(device, flags, NULL, out);
}

tp_status tp_cpu_event_ipc_export(tp_event *handle, unsigned char *payload, size_t *length)
{
    cpu_ipc *ipc;
    tp_status status = attach((cpu_event *)handle, "tp_event_ipc_handle", &ipc);
    if (status != TP_OK)
        return status;
    cpu_ipc_name name = tp_cpu_ipc_name_of(ipc);
    tp_put_u32(payload, CPU_IPC_PAYLOAD_VERSION);
    tp_put_u32(payload + 4, CPU_IPC_REGION_SIZE);
    tp_put_u32(payload + 8, (uint32_t)name.holder.pid);
    tp_put_u32(payload + 12, (uint32_t)name.fd);
    tp_put_u64(payload + 16, name.holder.start_time);
    tp_put_u64(payload + 24, name.token);
    *length = CPU_IPC_PAYLOAD_SIZE;
    return TP_OK;
}

tp_status tp_cpu_event_ipc_import(int device, const unsigned char *payload, size_t length, tp_event **out)
{
    static const char who[] = "tp_event_from_ipc_handle";
    const tp_host *host = tp_cpu_host();
    if (length != CPU_IPC_PAYLOAD_SIZE)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: a cpu handle's payload has %u bytes, this one %zu", who,
                          CPU_IPC_PAYLOAD_SIZE, length);
    uint32_t version = tp_get_u32(payload);
    if (version != CPU_IPC_PAYLOAD_VERSION)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: cpu handle payload version %u, this library reads %u", who,
                          (unsigned)version, CPU_IPC_PAYLOAD_VERSION);
    uint32_t size = tp_get_u32(payload + 4);
    if (size != CPU_IPC_REGION_SIZE)
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the handle's event keeps %u bytes of shared state, this library %u (another "
                          "build of tpevent?)",
                          who, (unsigned)size, CPU_IPC_REGION_SIZE);
    cpu_ipc_name name = {
        .holder = {.pid = (int32_t)tp_get_u32(payload + 8), .start_time = tp_get_u64(payload + 16)},
        .fd = (int32_t)tp_get_u32(payload + 12),
        .token = tp_get_u64(payload + 24),
    };
    int32_t pid = name.holder.pid;
    if (pid <= 0 || name.fd < 0 || name.token == 0)
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the handle names pid %d, descriptor %d, token %s: not a "
                          "handle this library wrote",
                          who, (int)pid, (int)name.fd, name.token ? "set" : "zero");
    /* Only a definite answer refuses the handle: this process is alive without a
     * look, and /proc failing to answer (the descriptor limit) is not a death. */
    if (!tp_process_is(&name.holder)) {
        uint64_t running_since = 0;
        bool reused = tp_process_look(pid, &running_since) == TP_PROCESS_RUNNING &&
                      running_since != name.holder.start_time;
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the exporting process (pid %d) has exited%s, or is in another PID namespace (a "
                          "container: hand the event over a Unix socket instead, tp_event_ipc_send)",
                          who, (int)pid, reused ? "; its pid now belongs to another process" : "");
    }

    cpu_ipc *ipc;
    tp_status status = tp_cpu_ipc_open(&name, who, &ipc);
    if (status != TP_OK)
        return status;
    return imported_event_new(device, ipc, out);
}

/* ------------------------------------------------- over a Unix socket */

#define CPU_IPC_SOCKET_PAYLOAD_SIZE 16u

tp_status tp_cpu_event_ipc_send_prepare(tp_event *handle, int *fd, unsigned char *payload, size_t *length)
{
    cpu_ipc *ipc;
    tp_status status = attach((cpu_event *)handle, "tp_event_ipc_send", &ipc);
    if (status != TP_OK)
        return status;
    tp_put_u32(payload, CPU_IPC_PAYLOAD_VERSION);
    tp_put_u32(payload + 4, CPU_IPC_REGION_SIZE);
    tp_put_u64(payload + 8, tp_cpu_ipc_name_of(ipc).token);
    *length = CPU_IPC_SOCKET_PAYLOAD_SIZE;
    *fd = tp_cpu_ipc_descriptor(ipc);
    return TP_OK;
}

tp_status tp_cpu_event_ipc_receive(int device, int fd, const unsigned char *payload, size_t length, tp_event **out)
{
    static const char who[] = "tp_event_ipc_recv";
    const tp_host *host = tp_cpu_host();
    uint32_t version = length == CPU_IPC_SOCKET_PAYLOAD_SIZE ? tp_get_u32(payload) : 0;
    uint32_t size = length == CPU_IPC_SOCKET_PAYLOAD_SIZE ? tp_get_u32(payload + 4) : 0;
    uint64_t token = length == CPU_IPC_SOCKET_PAYLOAD_SIZE ? tp_get_u64(payload + 8) : 0;
    if (version != CPU_IPC_PAYLOAD_VERSION || size != CPU_IPC_REGION_SIZE || token == 0) {
        close(fd);
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the cpu payload (%zu bytes, version %u, region of %u bytes) is not one this library "
                          "writes (%u bytes, version %u, %u bytes: another build of tpevent?)",
                          who, length, (unsigned)version, (unsigned)size, CPU_IPC_SOCKET_PAYLOAD_SIZE,
                          CPU_IPC_PAYLOAD_VERSION, CPU_IPC_REGION_SIZE);
    }
    cpu_ipc *ipc;
    tp_status status = tp_cpu_ipc_adopt(fd, token, who, &ipc);
    if (status != TP_OK)
        return status;
    return imported_event_new(device, ipc, out);
}
