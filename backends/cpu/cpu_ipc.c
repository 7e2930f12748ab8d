/*
 * Interprocess events: the record state of an event that processes of one user
 * share, in a small region of shared memory (cpu_ipc_region.c says where it lives
 * and how other processes find it; cpu_ipc.h its layout).
 *
 * Records. Any stream of any process holding the event may record it, and records
 * on different streams may be reached in any order. A record is known by its
 * ticket (channel, n): a channel belongs to one stream of one process at a time,
 * n counts the records made through the channel, and since a stream reaches its
 * records in order, record n is reached exactly when the channel's `reached` is at
 * least n. So a wait for one record waits for that record and no other (rule 6),
 * whatever is recorded later. `latest` is the ticket of the latest record (rule 3);
 * 0 means never recorded. A channel with nothing pending may be taken over by
 * another stream; its counters carry on from where they were, so the tickets it
 * gave out before stay true.
 *
 * Who moves `reached`: a record on an idle stream, at once; a record on a busy
 * stream, the stream's worker when it gets to the record's task, which then bumps
 * `progress` and wakes whoever sleeps on it. Waiters sleep on `progress` with a
 * futex that is not process-private, so a record in one process wakes a waiter in
 * another.
 *
 * Death. A process that exits with records pending leaves its channel pending for
 * good. Waiters look at the channel's owner (the exporter through the pidfd an
 * import opened; others by pid and start time, process.h) every
 * TP_LIVENESS_PERIOD_NS (20 ms) while they wait, and fail once it is known gone
 * (failing to look, as at the descriptor limit, is not gone),
 * so nobody hangs on a dead process. The region's lock is a robust mutex: a
 * process killed while holding it does not block the others; every write made
 * under it leaves the region consistent at each step.
 *
 * A recorder in another PID namespace (an event handed over a Unix socket to another
 * container) cannot be looked up by pid: there, the lock its handle holds on a byte
 * past the region (cpu_ipc_region.c) tells, free once its process is gone.
 *
 * Limits: a handle's importer must share the exporter's PID namespace (the pid in
 * the handle is looked up in /proc; an event handed over a Unix socket,
 * tp_event_ipc_send, needs none); a recorder without /proc/self/fd has no lock, and
 * is never taken for gone by processes of other namespaces. Processes must not be
 * forked from a process holding the event without exec (the child's channels would
 * still name its parent); CPU_IPC_CHANNELS streams at most may have records of one
 * event pending at once. Recorders other than the
 * exporter are known by (pid, start time) only, which a pid reused within one
 * clock tick can fool (process.h); the exporter, through its pidfd, cannot be.
 */
#include "backends/cpu/cpu_ipc.h"
#include "common/ipc_file.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TICKET_CHANNEL_SHIFT 56
#define TICKET_COUNT_MASK ((UINT64_C(1) << TICKET_CHANNEL_SHIFT) - 1)

/* ---------------------------------------------------------- the region */

static bool region_lock(cpu_ipc_region *region)
{
    return tp_ipc_shared_mutex_lock(&region->lock); /* consistent after a death: see above */
}

static void region_unlock(cpu_ipc_region *region)
{
    pthread_mutex_unlock(&region->lock);
}

static uint64_t make_ticket(unsigned channel, uint64_t count)
{
    return (uint64_t)channel << TICKET_CHANNEL_SHIFT | (count & TICKET_COUNT_MASK);
}

/* The ticket's channel, or NULL for a value this library never wrote. */
static cpu_ipc_channel *ticket_channel(cpu_ipc_region *region, uint64_t ticket)
{
    uint64_t channel = ticket >> TICKET_CHANNEL_SHIFT;
    return channel < CPU_IPC_CHANNELS ? &region->channels[channel] : NULL;
}

static bool ticket_reached(cpu_ipc_region *region, uint64_t ticket)
{
    cpu_ipc_channel *channel = ticket_channel(region, ticket);
    /* A ticket no one wrote has nothing to wait for. */
    return !channel || atomic_load_explicit(&channel->reached, memory_order_acquire) >= (ticket & TICKET_COUNT_MASK);
}

static bool channel_owned_by(cpu_ipc_channel *channel, const cpu_ipc *ipc, uint64_t stream)
{
    return atomic_load_explicit(&channel->pid, memory_order_relaxed) == ipc->self.pid &&
           atomic_load_explicit(&channel->start_time, memory_order_relaxed) == ipc->self.start_time &&
           atomic_load_explicit(&channel->pid_ns, memory_order_relaxed) == ipc->self_pid_ns &&
           atomic_load_explicit(&channel->stream, memory_order_relaxed) == stream;
}

/*
 * Under the region's lock: the channel of this process's stream, taking over one
 * with nothing pending if the stream has none; NULL if all are busy. A process
 * that dies halfway through the stores below leaves a channel with nothing
 * pending, which anyone may take over again.
 */
static cpu_ipc_channel *channel_claim(cpu_ipc *ipc, const cpu_queue *queue)
{
    uint64_t stream = (uint64_t)(uintptr_t)queue;
    cpu_ipc_channel *idle = NULL;
    for (unsigned i = 0; i < CPU_IPC_CHANNELS; i++) {
        cpu_ipc_channel *channel = &ipc->region->channels[i];
        if (channel_owned_by(channel, ipc, stream))
            return channel;
        if (!idle && atomic_load_explicit(&channel->reached, memory_order_relaxed) ==
                         atomic_load_explicit(&channel->recorded, memory_order_relaxed))
            idle = channel;
    }
    if (idle) {
        atomic_store_explicit(&idle->pid, ipc->self.pid, memory_order_relaxed);
        atomic_store_explicit(&idle->start_time, ipc->self.start_time, memory_order_relaxed);
        atomic_store_explicit(&idle->pid_ns, ipc->self_pid_ns, memory_order_relaxed);
        atomic_store_explicit(&idle->stream, stream, memory_order_relaxed);
    }
    return idle;
}

static unsigned channel_index(cpu_ipc *ipc, const cpu_ipc_channel *channel)
{
    return (unsigned)(channel - ipc->region->channels);
}

/* ------------------------------------------------------------- futex */

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while *word == seen, for `ns` at most; wakes early on any change. Not
 * FUTEX_PRIVATE_FLAG: the word is shared with other processes. */
static void futex_wait_for(_Atomic uint32_t *word, uint32_t seen, uint64_t ns)
{
    struct timespec timeout = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, &timeout, NULL, 0);
}

/* ------------------------------------------------------------- records */

uint64_t tp_cpu_ipc_latest(cpu_ipc *ipc)
{
    return atomic_load_explicit(&ipc->region->latest, memory_order_acquire);
}

bool tp_cpu_ipc_reached(cpu_ipc *ipc, uint64_t ticket)
{
    return ticket_reached(ipc->region, ticket);
}

static TP_COLD tp_status all_channels_busy(const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND,
                               "%s: records of this interprocess event are pending on %u streams already, "
                               "the most it can follow",
                               operation, CPU_IPC_CHANNELS);
}

static TP_COLD tp_status lock_failed(const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND, "%s: the interprocess event's shared lock is unusable", operation);
}

tp_status tp_cpu_ipc_record_reached(cpu_ipc *ipc, cpu_queue *queue, bool *recorded, uint64_t *ticket)
{
    cpu_ipc_region *region = ipc->region;
    if (!region_lock(region))
        return lock_failed("tp_event_record");
    cpu_ipc_channel *channel = channel_claim(ipc, queue);
    if (!channel) {
        region_unlock(region);
        return all_channels_busy("tp_event_record");
    }
    /* This handle vouches for the record: its lock says whether it lives. */
    atomic_store_explicit(&channel->owner_lock, ipc->lock_offset, memory_order_relaxed);
    uint64_t count = atomic_load_explicit(&channel->recorded, memory_order_relaxed);
    /* Another thread's record on this stream still pending: the stream was idle
     * when the caller looked, but is not now. */
    *recorded = atomic_load_explicit(&channel->reached, memory_order_relaxed) == count;
    if (*recorded) {
        count++;
        atomic_store_explicit(&channel->recorded, count, memory_order_relaxed);
        atomic_store_explicit(&channel->reached, count, memory_order_release);
        *ticket = make_ticket(channel_index(ipc, channel), count);
        atomic_store_explicit(&region->latest, *ticket, memory_order_release);
    }
    region_unlock(region);
    return TP_OK;
}

tp_status tp_cpu_ipc_record_pending(cpu_ipc *ipc, cpu_queue *queue, uint64_t *ticket)
{
    cpu_ipc_region *region = ipc->region;
    if (!region_lock(region))
        return lock_failed("tp_event_record");
    cpu_ipc_channel *channel = channel_claim(ipc, queue);
    if (!channel) {
        region_unlock(region);
        return all_channels_busy("tp_event_record");
    }
    /* This handle vouches for the record: its lock says whether it lives. */
    atomic_store_explicit(&channel->owner_lock, ipc->lock_offset, memory_order_relaxed);
    uint64_t count = atomic_load_explicit(&channel->recorded, memory_order_relaxed) + 1;
    atomic_store_explicit(&channel->recorded, count, memory_order_relaxed);
    *ticket = make_ticket(channel_index(ipc, channel), count);
    atomic_store_explicit(&region->latest, *ticket, memory_order_release);
    region_unlock(region);
    return TP_OK;
}

static void publish(cpu_ipc *ipc, uint64_t ticket)
{
    cpu_ipc_region *region = ipc->region;
    cpu_ipc_channel *channel = ticket_channel(region, ticket);
    if (!channel)
        return;
    /* While one of its records is pending, only this stream moves the channel,
     * in FIFO order, so no lock is needed. seq_cst, with `progress` and
     * `waiters`: a waiter that this thread sees as absent is sure to see the
     * record reached (see tp_cpu_ipc_wait). */
    uint64_t count = ticket & TICKET_COUNT_MASK;
    if (atomic_load_explicit(&channel->reached, memory_order_relaxed) < count)
        atomic_store_explicit(&channel->reached, count, memory_order_seq_cst);
    atomic_fetch_add_explicit(&region->progress, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&region->waiters, memory_order_seq_cst) > 0)
        futex_wake_all(&region->progress);
}

void tp_cpu_ipc_publish_task(void *ipc, cpu_word ticket)
{
    publish(ipc, ticket.u64);
    tp_cpu_ipc_unref(ipc);
}

bool tp_cpu_ipc_recorded_on(cpu_ipc *ipc, uint64_t ticket, const cpu_queue *queue)
{
    cpu_ipc_channel *channel = ticket_channel(ipc->region, ticket);
    return channel && channel_owned_by(channel, ipc, (uint64_t)(uintptr_t)queue);
}

/* ------------------------------------------------------------- waiting */

/* The pid of the process that made the pending record `ticket` if that process is
 * gone; 0 if it runs, or the record was reached after all. */
static int32_t dead_recorder(cpu_ipc *ipc, uint64_t ticket)
{
    cpu_ipc_channel *channel = ticket_channel(ipc->region, ticket);
    if (!channel)
        return 0;
    tp_process_id recorder = {
        .pid = atomic_load_explicit(&channel->pid, memory_order_relaxed),
        .start_time = atomic_load_explicit(&channel->start_time, memory_order_relaxed),
    };
    uint64_t pid_ns = atomic_load_explicit(&channel->pid_ns, memory_order_relaxed);
    if (pid_ns != ipc->self_pid_ns || pid_ns == 0) {
        /* A pid of another PID namespace names nothing here: the lock of the
         * recorder's handle says whether it lives (cpu_ipc_region.c). */
        if (!tp_cpu_ipc_owner_gone(ipc, atomic_load_explicit(&channel->owner_lock, memory_order_relaxed)))
            return 0;
        return ticket_reached(ipc->region, ticket) ? 0 : (recorder.pid > 0 ? recorder.pid : -1);
    }
    if (recorder.pid == ipc->self.pid && recorder.start_time == ipc->self.start_time)
        return 0;
    /* The exporter is watched through its pidfd where there is one (a reused pid
     * cannot pass for it); any other recorder by (pid, start time). Failing to
     * look is never "gone" (process.h). */
    bool exporter = recorder.pid == ipc->exporter.id.pid && recorder.start_time == ipc->exporter.id.start_time;
    if (exporter ? tp_process_watch_alive(&ipc->exporter) : tp_process_is(&recorder))
        return 0;
    /* It may have reached the record just before it went. */
    return ticket_reached(ipc->region, ticket) ? 0 : (recorder.pid > 0 ? recorder.pid : -1);
}

static TP_COLD tp_status recorder_died(const char *operation, int32_t pid)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND,
                               "%s: the process (pid %d) that recorded the event exited before reaching it", operation,
                               (int)pid);
}

typedef struct ticket_mark {
    cpu_ipc_region *region;
    uint64_t ticket;
} ticket_mark;

static bool mark_reached(const void *arg)
{
    const ticket_mark *mark = arg;
    return ticket_reached(mark->region, mark->ticket);
}

tp_status tp_cpu_ipc_wait(cpu_ipc *ipc, uint64_t ticket, enum cpu_wait_mode mode, const char *operation)
{
    cpu_ipc_region *region = ipc->region;
    if (ticket_reached(region, ticket))
        return TP_OK;
    if (mode == CPU_WAIT_SPIN_THEN_SLEEP && tp_spin_until(mark_reached, &(ticket_mark){region, ticket}, TP_SPIN_NS))
        return TP_OK;
    /* A channel changes hands only once its records are reached: owned by this
     * thread's stream and still pending, the record comes after this very task. */
    cpu_queue *own = tp_cpu_current_worker;
    if (own && tp_cpu_ipc_recorded_on(ipc, ticket, own) && !ticket_reached(region, ticket))
        return tp_cpu_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                   "%s: called from a host function on the cpu:%d stream it would wait for, "
                                   "which would wait for itself forever",
                                   operation, own->device->index);
    uint64_t next_check = 0;
    for (;;) {
        uint64_t now = tp_now_ns();
        if (now >= next_check) {
            int32_t pid = dead_recorder(ipc, ticket);
            if (pid != 0) {
                atomic_store_explicit(&ipc->dead_ticket, ticket, memory_order_relaxed);
                return recorder_died(operation, pid);
            }
            next_check = now + TP_LIVENESS_PERIOD_NS;
        }
        /* Announce the sleep before the last look (seq_cst, against publish):
         * a publisher either sees us and wakes us, or bumped `progress` before
         * we read it, so that its record is visible below. */
        atomic_fetch_add_explicit(&region->waiters, 1, memory_order_seq_cst);
        uint32_t seen = atomic_load_explicit(&region->progress, memory_order_seq_cst);
        bool reached = ticket_reached(region, ticket);
        if (!reached)
            futex_wait_for(&region->progress, seen, TP_LIVENESS_PERIOD_NS);
        atomic_fetch_sub_explicit(&region->waiters, 1, memory_order_seq_cst);
        if (reached || ticket_reached(region, ticket))
            return TP_OK;
    }
}

tp_status tp_cpu_ipc_query(cpu_ipc *ipc, uint64_t ticket, bool *done)
{
    if (ticket == 0 || ticket_reached(ipc->region, ticket)) {
        *done = true;
        return TP_OK;
    }
    /* A look at /proc costs microseconds; a query costs nanoseconds. Look once a
     * period, and remember a death once seen. */
    if (atomic_load_explicit(&ipc->dead_ticket, memory_order_relaxed) == ticket ||
        tp_liveness_due(&ipc->next_liveness_check_ns, tp_now_ns())) {
        int32_t pid = dead_recorder(ipc, ticket);
        if (pid != 0) {
            atomic_store_explicit(&ipc->dead_ticket, ticket, memory_order_relaxed);
            return recorder_died("tp_event_query", pid);
        }
    }
    *done = false;
    return TP_OK;
}

void tp_cpu_ipc_wait_task(void *ipc, cpu_word ticket)
{
    /* A worker has nobody to report to. If the recording process died, the wait
     * gives up and the stream goes on; the event's next query or synchronize
     * reports the death. */
    (void)tp_cpu_ipc_wait(ipc, ticket.u64, CPU_WAIT_SLEEP, "tp_stream_wait_event");
    tp_cpu_ipc_unref(ipc);
}
