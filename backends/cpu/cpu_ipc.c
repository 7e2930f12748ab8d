/*
 * Interprocess events: the record state of an event that processes of one user
 * share, in a small region of shared memory.
 *
 * Where it lives. The region is a memfd: it has no name in any file system, so
 * nothing of it can be left behind however the processes end, SIGKILL included;
 * the kernel frees it with the last descriptor and mapping. Another process opens
 * it through /proc/<pid>/fd/<fd> of a process that holds it, which the kernel
 * allows to processes of the same user (the check that guards reading the other
 * process's memory). The handle's payload says which pid and descriptor, the pid's
 * start time (so that a pid reused by another process is not taken for the
 * exporter) and a random token that the region must hold.
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
 * good. Waiters look at the channel's owner (pid and start time, through /proc)
 * every TP_LIVENESS_PERIOD_NS (20 ms) while they wait, and fail once it is gone,
 * so nobody hangs on a dead process. The region's lock is a robust mutex: a
 * process killed while holding it does not block the others; every write made
 * under it leaves the region consistent at each step.
 *
 * Limits: processes must share a PID namespace (the pid in the handle is looked up
 * in /proc) and must not be forked from a process holding the event without exec
 * (the child would pass for its parent); CPU_IPC_CHANNELS streams at most may have
 * records of one event pending at once.
 */
#include "backends/cpu/cpu_internal.h"
#include "backends/common/bytes.h"
#include "backends/common/process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The memfd's name, as readlink shows it ("/memfd:tpevent-cpu-event (deleted)"). */
#define CPU_IPC_MEMFD_NAME "tpevent-cpu-event"
#define CPU_IPC_MEMFD_LINK "/memfd:" CPU_IPC_MEMFD_NAME

#define CPU_IPC_MAGIC "tpevcpu" /* 8 bytes with its NUL */
#define CPU_IPC_LAYOUT_VERSION 1u
#define CPU_IPC_REGION_SIZE 4096u
#define CPU_IPC_CHANNELS 64u

/* Payload: u32 version, u32 region size, i32 pid, i32 fd, u64 start time, u64 token;
 * little-endian. */
#define CPU_IPC_PAYLOAD_VERSION 1u
#define CPU_IPC_PAYLOAD_SIZE 32u

#define TICKET_CHANNEL_SHIFT 56
#define TICKET_COUNT_MASK ((UINT64_C(1) << TICKET_CHANNEL_SHIFT) - 1)

_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
               "atomics shared between processes must be lock-free");
_Static_assert(CPU_IPC_PAYLOAD_SIZE <= TP_IPC_PAYLOAD_MAX, "the payload must fit the handle");

typedef struct cpu_ipc_channel {
    /* The owner; written under the region's lock while nothing is pending, read
     * anywhere. pid 0: never used. */
    _Atomic int32_t pid;
    _Atomic uint64_t start_time;
    _Atomic uint64_t stream; /* the owner's cpu_queue, as a number */
    /* `recorded` under the region's lock; `reached` by the owner's stream (or under
     * the lock when nothing is pending). reached <= recorded. */
    _Atomic uint64_t recorded;
    _Atomic uint64_t reached;
} cpu_ipc_channel;

typedef struct cpu_ipc_region {
    /* Written once by the creator, before anyone else can see the region. */
    char magic[8];
    uint32_t layout_version;
    uint32_t size;
    uint64_t token;
    uint32_t flags; /* the creator's TP_EVENT_BLOCKING, which importers take on */
    uint32_t reserved;

    pthread_mutex_t lock; /* robust, process-shared */
    _Atomic uint64_t latest;
    _Atomic uint32_t progress; /* the futex word: bumped whenever a record is reached */
    _Atomic uint32_t waiters;  /* threads about to sleep on `progress`, all processes */
    cpu_ipc_channel channels[CPU_IPC_CHANNELS];
} cpu_ipc_region;

_Static_assert(sizeof(cpu_ipc_region) <= CPU_IPC_REGION_SIZE, "the shared state must fit its region");

/* One process's hold on a region: the event's handle and its wait tasks share it. */
struct cpu_ipc {
    atomic_uint refs;
    int fd; /* kept open so that this process can export the event too */
    cpu_ipc_region *region;
    tp_process_id self;
    /* query looks at a pending record's process at most once a period. */
    _Atomic uint64_t next_liveness_check_ns;
    _Atomic uint64_t dead_ticket; /* a pending record whose process is known gone */
};

/* ---------------------------------------------------------- the region */

static bool region_lock(cpu_ipc_region *region)
{
    int err = pthread_mutex_lock(&region->lock);
    if (err == EOWNERDEAD) {
        /* A process died holding it; what it wrote is consistent (see above). */
        pthread_mutex_consistent(&region->lock);
        err = 0;
    }
    return err == 0;
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
    return !channel ||
           atomic_load_explicit(&channel->reached, memory_order_acquire) >= (ticket & TICKET_COUNT_MASK);
}

static bool channel_owned_by(cpu_ipc_channel *channel, const tp_process_id *process, uint64_t stream)
{
    return atomic_load_explicit(&channel->pid, memory_order_relaxed) == process->pid &&
           atomic_load_explicit(&channel->start_time, memory_order_relaxed) == process->start_time &&
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
        if (channel_owned_by(channel, &ipc->self, stream))
            return channel;
        if (!idle && atomic_load_explicit(&channel->reached, memory_order_relaxed) ==
                         atomic_load_explicit(&channel->recorded, memory_order_relaxed))
            idle = channel;
    }
    if (idle) {
        atomic_store_explicit(&idle->pid, ipc->self.pid, memory_order_relaxed);
        atomic_store_explicit(&idle->start_time, ipc->self.start_time, memory_order_relaxed);
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

/* ---------------------------------------------------------- lifetime */

static uint64_t random_token(void)
{
    uint64_t token = 0;
    if (getrandom(&token, sizeof token, GRND_NONBLOCK) != (ssize_t)sizeof token) {
        /* Entropy not ready this early in boot: the token guards against stale
         * handles, not against an adversary, so a weaker one will do. */
        token = tp_now_ns() * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)getpid() << 32 ^ (uintptr_t)&token;
    }
    return token ? token : 1;
}

static tp_status ipc_wrap(int fd, cpu_ipc_region *region, const tp_process_id *self, const char *operation,
                          cpu_ipc **out)
{
    cpu_ipc *ipc = calloc(1, sizeof *ipc);
    if (!ipc) {
        munmap(region, CPU_IPC_REGION_SIZE);
        close(fd);
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", operation);
    }
    atomic_init(&ipc->refs, 1);
    ipc->fd = fd;
    ipc->region = region;
    ipc->self = *self;
    atomic_init(&ipc->next_liveness_check_ns, 0);
    atomic_init(&ipc->dead_ticket, 0);
    *out = ipc;
    return TP_OK;
}

/* 0 or an errno value. */
static int init_region_lock(cpu_ipc_region *region)
{
    pthread_mutexattr_t attr;
    int err = pthread_mutexattr_init(&attr);
    if (err != 0)
        return err;
    err = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (err == 0)
        err = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    if (err == 0)
        err = pthread_mutex_init(&region->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return err;
}

/* A new region for an event created with `flags`, held by this process alone. */
static tp_status region_create(unsigned flags, const char *operation, cpu_ipc **out)
{
    const tp_host *host = tp_cpu_host();
    tp_process_id self;
    if (!tp_process_self(&self))
        return host->fail(TP_ERR_BACKEND, "%s: cannot read this process's start time from /proc/self/stat",
                          operation);
    int fd = memfd_create(CPU_IPC_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return host->fail(TP_ERR_BACKEND, "%s: memfd_create for an interprocess event: %s", operation,
                          strerror(errno));
    /* Sealed at its size, so that no process can shrink it under the others'
     * mappings (which would kill them with SIGBUS). */
    if (ftruncate(fd, CPU_IPC_REGION_SIZE) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int err = errno;
        close(fd);
        return host->fail(TP_ERR_BACKEND, "%s: sizing an interprocess event's shared memory: %s", operation,
                          strerror(err));
    }
    cpu_ipc_region *region = mmap(NULL, CPU_IPC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (region == MAP_FAILED) {
        int err = errno;
        close(fd);
        return host->fail(TP_ERR_BACKEND, "%s: mmap of an interprocess event's shared memory: %s", operation,
                          strerror(err));
    }
    /* The memfd starts zeroed: no channel used, never recorded. */
    memcpy(region->magic, CPU_IPC_MAGIC, sizeof region->magic);
    region->layout_version = CPU_IPC_LAYOUT_VERSION;
    region->size = CPU_IPC_REGION_SIZE;
    region->token = random_token();
    region->flags = flags & TP_EVENT_BLOCKING;
    int err = init_region_lock(region);
    if (err != 0) {
        munmap(region, CPU_IPC_REGION_SIZE);
        close(fd);
        return host->fail(TP_ERR_BACKEND, "%s: a process-shared robust mutex: %s", operation, strerror(err));
    }
    return ipc_wrap(fd, region, &self, operation, out);
}

void tp_cpu_ipc_ref(cpu_ipc *ipc)
{
    atomic_fetch_add_explicit(&ipc->refs, 1, memory_order_relaxed);
}

void tp_cpu_ipc_unref(cpu_ipc *ipc)
{
    if (atomic_fetch_sub_explicit(&ipc->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* The lock is not destroyed: other processes may be using it. */
    munmap(ipc->region, CPU_IPC_REGION_SIZE);
    close(ipc->fd);
    free(ipc);
}

tp_status tp_cpu_ipc_attach(cpu_event *event, const char *operation, cpu_ipc **out)
{
    cpu_ipc *ipc = atomic_load_explicit(&event->ipc, memory_order_acquire);
    if (!ipc) {
        tp_status status = region_create(event->head.flags, operation, &ipc);
        if (status != TP_OK)
            return status;
        /* Two threads may attach at once: the first one's region wins. */
        cpu_ipc *attached = NULL;
        if (!atomic_compare_exchange_strong_explicit(&event->ipc, &attached, ipc, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            tp_cpu_ipc_unref(ipc);
            ipc = attached;
        }
    }
    *out = ipc;
    return TP_OK;
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

static tp_status all_channels_busy(const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND,
                               "%s: records of this interprocess event are pending on %u streams already, "
                               "the most it can follow",
                               operation, CPU_IPC_CHANNELS);
}

static tp_status lock_failed(const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND, "%s: the interprocess event's shared lock is unusable", operation);
}

tp_status tp_cpu_ipc_record_reached(cpu_ipc *ipc, cpu_queue *queue, bool *recorded, uint64_t *ticket)
{
    cpu_ipc_region *region = ipc->region;
    if (!region_lock(region))
        return lock_failed("event_record");
    cpu_ipc_channel *channel = channel_claim(ipc, queue);
    if (!channel) {
        region_unlock(region);
        return all_channels_busy("event_record");
    }
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
        return lock_failed("event_record");
    cpu_ipc_channel *channel = channel_claim(ipc, queue);
    if (!channel) {
        region_unlock(region);
        return all_channels_busy("event_record");
    }
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
    return channel && channel_owned_by(channel, &ipc->self, (uint64_t)(uintptr_t)queue);
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
    if (recorder.pid == ipc->self.pid && recorder.start_time == ipc->self.start_time)
        return 0;
    if (tp_process_is(&recorder))
        return 0;
    /* It may have reached the record just before it went. */
    return ticket_reached(ipc->region, ticket) ? 0 : (recorder.pid > 0 ? recorder.pid : -1);
}

static tp_status recorder_died(const char *operation, int32_t pid)
{
    return tp_cpu_host()->fail(TP_ERR_BACKEND,
                               "%s: the process (pid %d) that recorded the event exited before reaching it",
                               operation, (int)pid);
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
    if (mode == CPU_WAIT_SPIN_THEN_SLEEP && tp_spin_until(mark_reached, &(ticket_mark){region, ticket}, TP_CPU_SPIN_NS))
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
        /* Announce the sleep before the last look (seq_cst, against
         * publish): a publisher either sees us and wakes us, or bumped
         * `progress` before we read it, so that its record is visible below. */
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
            return recorder_died("event_query", pid);
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
    (void)tp_cpu_ipc_wait(ipc, ticket.u64, CPU_WAIT_SLEEP, "stream_wait_event");
    tp_cpu_ipc_unref(ipc);
}

/* ------------------------------------------------------------- entries */

tp_status tp_cpu_event_ipc_export(tp_event *handle, unsigned char *payload, size_t *length)
{
    cpu_ipc *ipc;
    tp_status status = tp_cpu_ipc_attach((cpu_event *)handle, "event_ipc_export", &ipc);
    if (status != TP_OK)
        return status;
    tp_put_u32(payload, CPU_IPC_PAYLOAD_VERSION);
    tp_put_u32(payload + 4, CPU_IPC_REGION_SIZE);
    tp_put_u32(payload + 8, (uint32_t)ipc->self.pid);
    tp_put_u32(payload + 12, (uint32_t)ipc->fd);
    tp_put_u64(payload + 16, ipc->self.start_time);
    tp_put_u64(payload + 24, ipc->region->token);
    *length = CPU_IPC_PAYLOAD_SIZE;
    return TP_OK;
}

/* Why /proc/<pid>/fd/<fd> could not be opened, as the import's error. */
static tp_status open_failed(int err, int32_t pid, int32_t fd)
{
    static const char who[] = "event_ipc_import";
    const tp_host *host = tp_cpu_host();
    switch (err) {
    case ENOENT:
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the exporting process (pid %d) no longer holds the event's shared memory "
                          "(descriptor %d): was the event destroyed?",
                          who, (int)pid, (int)fd);
    case EACCES:
    case EPERM:
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: cannot open descriptor %d of pid %d: %s (cpu events can be shared between "
                          "processes of one user only)",
                          who, (int)fd, (int)pid, strerror(err));
    case EMFILE:
    case ENFILE:
    case ENOMEM:
        return host->fail(TP_ERR_BACKEND, "%s: opening descriptor %d of pid %d: %s", who, (int)fd, (int)pid,
                          strerror(err));
    default:
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: cannot open descriptor %d of pid %d: %s", who, (int)fd,
                          (int)pid, strerror(err));
    }
}

/* Opens and checks the region a payload names; the payload itself is checked. */
static tp_status region_open(int32_t pid, int32_t fd, uint64_t token, int *out_fd, cpu_ipc_region **out)
{
    static const char who[] = "event_ipc_import";
    const tp_host *host = tp_cpu_host();
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, (int)fd);

    /* Look before opening: the descriptor may now be anything (a device, a
     * terminal), and opening some files does things. */
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length < 0)
        return open_failed(errno, pid, fd);
    target[length] = '\0';
    size_t prefix = strlen(CPU_IPC_MEMFD_LINK);
    if (strncmp(target, CPU_IPC_MEMFD_LINK, prefix) != 0 || (target[prefix] != '\0' && target[prefix] != ' '))
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: descriptor %d of pid %d is \"%s\", not an event's shared memory", who, (int)fd,
                          (int)pid, target);

    int mine = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (mine < 0)
        return open_failed(errno, pid, fd);
    struct stat st;
    int seals = fcntl(mine, F_GET_SEALS);
    if (fstat(mine, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)CPU_IPC_REGION_SIZE || seals < 0 ||
        !(seals & F_SEAL_SHRINK)) {
        close(mine);
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: descriptor %d of pid %d is not an event's shared memory (size or seals differ)", who,
                          (int)fd, (int)pid);
    }
    cpu_ipc_region *region = mmap(NULL, CPU_IPC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
    if (region == MAP_FAILED) {
        int err = errno;
        close(mine);
        return host->fail(TP_ERR_BACKEND, "%s: mmap of the event's shared memory: %s", who, strerror(err));
    }
    if (memcmp(region->magic, CPU_IPC_MAGIC, sizeof region->magic) != 0 ||
        region->layout_version != CPU_IPC_LAYOUT_VERSION || region->size != CPU_IPC_REGION_SIZE ||
        region->token != token) {
        munmap(region, CPU_IPC_REGION_SIZE);
        close(mine);
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the shared memory at descriptor %d of pid %d is not the handle's event (token "
                          "differs: the event was destroyed and its descriptor reused?)",
                          who, (int)fd, (int)pid);
    }
    *out_fd = mine;
    *out = region;
    return TP_OK;
}

tp_status tp_cpu_event_ipc_import(int device, const unsigned char *payload, size_t length, tp_event **out)
{
    static const char who[] = "event_ipc_import";
    const tp_host *host = tp_cpu_host();
    if (length != CPU_IPC_PAYLOAD_SIZE)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: a cpu handle's payload has %u bytes, this one %zu", who,
                          CPU_IPC_PAYLOAD_SIZE, length);
    uint32_t version = tp_get_u32(payload);
    if (version != CPU_IPC_PAYLOAD_VERSION)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: cpu handle payload version %u, this library reads %u",
                          who, (unsigned)version, CPU_IPC_PAYLOAD_VERSION);
    uint32_t size = tp_get_u32(payload + 4);
    if (size != CPU_IPC_REGION_SIZE)
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the handle's event keeps %u bytes of shared state, this library %u (another "
                          "build of tpevent?)",
                          who, (unsigned)size, CPU_IPC_REGION_SIZE);
    int32_t pid = (int32_t)tp_get_u32(payload + 8);
    int32_t fd = (int32_t)tp_get_u32(payload + 12);
    uint64_t start_time = tp_get_u64(payload + 16);
    uint64_t token = tp_get_u64(payload + 24);
    if (pid <= 0 || fd < 0 || token == 0)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the handle names pid %d, descriptor %d, token %s: not a "
                          "handle this library wrote", who, (int)pid, (int)fd, token ? "set" : "zero");
    uint64_t running_since;
    if (!tp_process_running(pid, &running_since))
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the exporting process (pid %d) has exited", who, (int)pid);
    if (running_since != start_time)
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the exporting process (pid %d) has exited; its pid now belongs to another process",
                          who, (int)pid);

    tp_process_id self;
    if (!tp_process_self(&self))
        return host->fail(TP_ERR_BACKEND, "%s: cannot read this process's start time from /proc/self/stat", who);
    int mine = -1;
    cpu_ipc_region *region = NULL;
    tp_status status = region_open(pid, fd, token, &mine, &region);
    if (status != TP_OK)
        return status;
    cpu_ipc *ipc;
    status = ipc_wrap(mine, region, &self, who, &ipc);
    if (status != TP_OK)
        return status;
    tp_event *event;
    status = tp_cpu_event_create(device, TP_EVENT_INTERPROCESS | (region->flags & TP_EVENT_BLOCKING), &event);
    if (status != TP_OK) {
        tp_cpu_ipc_unref(ipc);
        return status;
    }
    atomic_store_explicit(&((cpu_event *)event)->ipc, ipc, memory_order_release);
    *out = event;
    return TP_OK;
}
