/*
 * The backend's snapshot entries (core/backend.h): a record of an event as a
 * value. A plain event's pending record is (queue, seq), holding a reference on
 * the queue, so it outlives the event and the stream's handle (rules 6, 9); an
 * interprocess event's record made by another handle or process is its ticket in
 * the shared state (cpu_ipc.c), holding a reference on that.
 */
#include "backends/cpu/cpu_internal.h"
#include "common/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void tp_cpu_snapshot_of_record(cpu_snapshot record, tp_snapshot *out)
{
    if (!record.recorded) {
        out->state = TP_SNAPSHOT_NEVER_RECORDED;
    } else if (!record.source) {
        out->state = TP_SNAPSHOT_REACHED;
        out->word[0] = record.time_ns;
    } else {
        out->state = TP_SNAPSHOT_PENDING;
        out->object = record.source; /* takes over the record's reference */
        out->word[0] = record.seq;
        out->word[1] = CPU_SNAPSHOT_QUEUE;
    }
}

tp_status tp_cpu_snapshot_take(tp_event *handle, tp_snapshot *out)
{
    cpu_event *event = (cpu_event *)handle;
    *out = (tp_snapshot){.backend = handle->backend, .device = handle->device, .flags = handle->flags};
    if (event->ops)
        return event->ops->snapshot(event, out);
    cpu_snapshot record = tp_cpu_event_snapshot(event);
    if (TP_UNLIKELY(record.capturing))
        return tp_cpu_event_capturing_fail(event, "reading the event's latest record");
    tp_cpu_snapshot_of_record(record, out);
    return TP_OK;
}

void tp_cpu_snapshot_release(tp_snapshot *snapshot)
{
    if (snapshot->state != TP_SNAPSHOT_PENDING)
        return;
    if (snapshot->word[1] == CPU_SNAPSHOT_IPC)
        tp_cpu_ipc_unref(snapshot->object);
    else
        tp_cpu_queue_unref(snapshot->object);
    snapshot->state = TP_SNAPSHOT_REACHED;
    snapshot->object = NULL;
}

tp_status tp_cpu_snapshot_query(const tp_snapshot *snapshot, bool *reached)
{
    if (snapshot->word[1] == CPU_SNAPSHOT_IPC)
        return tp_cpu_ipc_query(snapshot->object, snapshot->word[0], reached);
    *reached = tp_cpu_queue_reached(snapshot->object, snapshot->word[0]);
    return TP_OK;
}

tp_status tp_cpu_snapshot_synchronize(const tp_snapshot *snapshot)
{
    enum cpu_wait_mode mode = (snapshot->flags & TP_EVENT_BLOCKING) ? CPU_WAIT_SLEEP : CPU_WAIT_SPIN_THEN_SLEEP;
    if (snapshot->word[1] == CPU_SNAPSHOT_IPC)
        return tp_cpu_ipc_wait(snapshot->object, snapshot->word[0], mode, "snapshot_synchronize");
    return tp_cpu_queue_wait(snapshot->object, snapshot->word[0], mode, "snapshot_synchronize");
}

/* A record in the shared state reaches this process through no queue of its own:
 * a thread waits for it (notifies on interprocess records are rare), holding a
 * reference on the shared state. A wait that fails (the recorder died) notifies
 * too: nothing will come after it. */
typedef struct ipc_watch {
    cpu_ipc *ipc;
    uint64_t ticket;
    void (*fn)(void *);
    void *arg;
} ipc_watch;

static void *ipc_watch_main(void *arg)
{
    ipc_watch watch = *(ipc_watch *)arg;
    free(arg);
    (void)tp_cpu_ipc_wait(watch.ipc, watch.ticket, CPU_WAIT_SLEEP, "snapshot_notify");
    tp_cpu_ipc_unref(watch.ipc);
    watch.fn(watch.arg);
    return NULL;
}

static tp_status ipc_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    ipc_watch *watch = malloc(sizeof *watch);
    if (!watch)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "snapshot_notify: out of memory");
    *watch = (ipc_watch){snapshot->object, snapshot->word[0], fn, arg};
    tp_cpu_ipc_ref(watch->ipc);
    int err = tp_thread_start_detached(ipc_watch_main, watch);
    if (err == 0)
        return TP_OK;
    tp_cpu_ipc_unref(watch->ipc);
    free(watch);
    return tp_cpu_host()->fail(err == EAGAIN ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND,
                               "snapshot_notify: pthread_create: %s", strerror(err));
}

tp_status tp_cpu_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg)
{
    if (snapshot->word[1] == CPU_SNAPSHOT_IPC)
        return ipc_notify(snapshot, fn, arg);
    return tp_cpu_queue_watch(snapshot->object, snapshot->word[0], fn, arg, "snapshot_notify");
}
