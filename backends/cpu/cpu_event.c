/*
 * Events: a snapshot (queue, seq) of the latest record, its version and time.
 *
 * The hot paths (record on an idle stream, query) take the event's spinlock for a
 * handful of loads and stores and never the stream's lock: a pthread mutex round
 * costs about as much as the whole budget (60 ns for record+query). The lock is
 * needed at all because a record replaces the snapshot and drops the reference on
 * the old source queue while another thread may be reading it.
 *
 * An event with `ops` (an interprocess event, cpu_ipc_event.c) does its records,
 * queries, synchronizes, waits and release its own way, built from the snapshot
 * functions below; this file knows nothing else of it.
 */
#include "backends/cpu/cpu_internal.h"
#include "common/thread_cache.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The lock is held: spins until it is not, then takes it. Out of line, so that
 * event_lock itself is one exchange inlined into each caller. */
TP_NOINLINE static void event_lock_contended(cpu_event *event)
{
    unsigned spins = 0;
    do {
        while (atomic_load_explicit(&event->locked, memory_order_relaxed)) {
            /* The holder may have been preempted; let it run rather than burn
             * its time slice. */
            if (++spins < 128)
                tp_cpu_relax();
            else
                sched_yield();
        }
    } while (atomic_exchange_explicit(&event->locked, true, memory_order_acquire));
}

static inline void event_lock(cpu_event *event)
{
    if (TP_UNLIKELY(atomic_exchange_explicit(&event->locked, true, memory_order_acquire)))
        event_lock_contended(event);
}

static inline void event_unlock(cpu_event *event)
{
    atomic_store_explicit(&event->locked, false, memory_order_release);
}

/*
 * fork(): a spinlock that another thread held at the instant of fork() would be
 * held for good in the child. Every live event is on one list, so that the
 * prepare handler can take every event's spinlock (each is held for a few stores:
 * it waits that long at most) and the handlers after the fork give them back. The
 * list costs a create and a destroy one uncontended mutex round each; records and
 * queries never touch it.
 */
static struct {
    pthread_mutex_t lock;
    cpu_event *first;
} live_events = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void live_events_add(cpu_event *event)
{
    pthread_mutex_lock(&live_events.lock);
    event->prev_live = NULL;
    event->next_live = live_events.first;
    if (live_events.first)
        live_events.first->prev_live = event;
    live_events.first = event;
    pthread_mutex_unlock(&live_events.lock);
}

static void live_events_remove(cpu_event *event)
{
    pthread_mutex_lock(&live_events.lock);
    if (event->prev_live)
        event->prev_live->next_live = event->next_live;
    else
        live_events.first = event->next_live;
    if (event->next_live)
        event->next_live->prev_live = event->prev_live;
    pthread_mutex_unlock(&live_events.lock);
}

static void events_fork_prepare(void)
{
    pthread_mutex_lock(&live_events.lock);
    for (cpu_event *event = live_events.first; event; event = event->next_live)
        event_lock(event);
}

static void events_fork_parent(void)
{
    for (cpu_event *event = live_events.first; event; event = event->next_live)
        event_unlock(event);
    pthread_mutex_unlock(&live_events.lock);
}

/* The forking thread took them all: it is the child's only thread. */
static void events_fork_child(void)
{
    for (cpu_event *event = live_events.first; event; event = event->next_live)
        event_unlock(event);
    (void)pthread_mutex_init(&live_events.lock, NULL);
}

__attribute__((constructor)) static void register_events_fork_handlers(void)
{
    (void)pthread_atfork(events_fork_prepare, events_fork_parent, events_fork_child);
}

/* ---------------------------------------------------- event struct cache */

/*
 * Freed plain event structs kept per thread for the next create
 * (common/thread_cache.h), still on the live list (a cached struct's spinlock is
 * free, so the fork handlers take and give it as any other's): a create+destroy
 * pair then costs neither malloc/free nor the list's mutex, which were two thirds
 * of its instructions (callgrind). The struct goes to the cache of the thread that
 * drops its last reference (a stream's worker, for a record pending at destroy);
 * it carries nothing of its last owner.
 */
_Static_assert(offsetof(cpu_event, next_live) + sizeof(cpu_event *) == sizeof(cpu_event) &&
                   offsetof(cpu_event, prev_live) + sizeof(cpu_event *) == offsetof(cpu_event, next_live),
               "the live list's links are cpu_event's last fields: a reused struct is zeroed up to them");

static void event_struct_free(void *event)
{
    live_events_remove(event);
    free(event);
}

static tp_thread_cache_kind event_cache_kind = TP_THREAD_CACHE_KIND_INIT(event_struct_free);
static _Thread_local tp_thread_cache *thread_event_cache;

__attribute__((constructor)) static void make_event_cache_key(void)
{
    tp_thread_cache_kind_init(&event_cache_kind);
}

/* A cached struct made as new: every field zeroed but two. Its spinlock, taken
 * meanwhile: being listed, it may be held by a fork's prepare handler, which takes
 * every listed event's (and then this waits for the fork). The list's links, which
 * other threads' adds and removes write under the list's lock. */
static void event_struct_clear(cpu_event *event)
{
    unsigned char *bytes = (unsigned char *)event;
    size_t lock_start = offsetof(cpu_event, locked), lock_end = lock_start + sizeof event->locked;
    event_lock(event);
    memset(bytes, 0, lock_start);
    memset(bytes + lock_end, 0, offsetof(cpu_event, prev_live) - lock_end);
    event_unlock(event);
}

/* A zeroed plain event struct on the live list, its spinlock free: the thread's
 * cached one, else a new one. */
static cpu_event *event_struct_take(void)
{
    cpu_event *event = tp_thread_cache_take(thread_event_cache);
    if (TP_LIKELY(event)) {
        event_struct_clear(event);
        return event;
    }
    event = calloc(1, sizeof *event);
    if (event) {
        atomic_init(&event->locked, false);
        live_events_add(event);
    }
    return event;
}

void tp_cpu_event_ref(cpu_event *event)
{
    atomic_fetch_add_explicit(&event->refs, 1, memory_order_relaxed);
}

void tp_cpu_capture_unref(cpu_capture *token)
{
    if (atomic_fetch_sub_explicit(&token->refs, 1, memory_order_acq_rel) == 1)
        free(token);
}

void tp_cpu_event_unref(cpu_event *event)
{
    if (atomic_fetch_sub_explicit(&event->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (event->source)
        tp_cpu_queue_unref(event->source);
    cpu_capture *token = atomic_load_explicit(&event->capture, memory_order_relaxed);
    if (token)
        tp_cpu_capture_unref(token);
    if (event->ops) {
        live_events_remove(event);
        event->ops->release(event);
    } else {
        tp_thread_cache_give(&event_cache_kind, &thread_event_cache, event);
    }
}

/*
 * Under the lock: if the latest record has been reached, forgets its source, so
 * that later calls need not look, and returns it for the caller to unref once
 * unlocked; else NULL.
 */
static cpu_queue *forget_reached_locked(cpu_event *event)
{
    cpu_queue *source = event->source;
    if (!source || !tp_cpu_queue_reached(source, event->seq))
        return NULL;
    event->source = NULL;
    return source;
}

static inline cpu_snapshot take_snapshot(cpu_event *event)
{
    event_lock(event);
    cpu_queue *release = forget_reached_locked(event);
    cpu_snapshot pending = {
        event->source,  event->seq,
        event->tag,     event->recorded,
        event->time_ns, tp_cpu_capture_open(atomic_load_explicit(&event->capture, memory_order_relaxed))};
    if (pending.source)
        tp_cpu_queue_ref(pending.source);
    event_unlock(event);
    if (release)
        tp_cpu_queue_unref(release);
    return pending;
}

cpu_snapshot tp_cpu_event_snapshot(cpu_event *event)
{
    return take_snapshot(event);
}

/* A timing event's record on a busy stream, reached: stamps the time if the
 * record is still the event's latest, then drops the task's reference. */
static void record_task(void *arg, cpu_word version)
{
    cpu_event *event = arg;
    uint64_t now = tp_now_ns();
    event_lock(event);
    if (event->version == version.u64)
        event->time_ns = now;
    event_unlock(event);
    tp_cpu_event_unref(event);
}

/* A stream's wait for another queue's record: drops the task's reference on the
 * source once it is reached. */
static void wait_task(void *source, cpu_word seq)
{
    /* Cannot fail: the source is another queue (a wait on the same queue is
     * dropped at submission), so this worker is not the one it waits for. */
    (void)tp_cpu_queue_wait(source, seq.u64, CPU_WAIT_SLEEP, "tp_stream_wait_event");
    tp_cpu_queue_unref(source);
}

cpu_task tp_cpu_event_wait_task(cpu_queue *source, uint64_t seq)
{
    return (cpu_task){.run = wait_task, .arg = source, .word.u64 = seq};
}

/* ------------------------------------------------------------------ entries */

/* The fields every event starts with; the struct is zeroed, its spinlock free (and
 * maybe held by a fork's prepare handler already: not written here). */
static void event_head_init(cpu_event *event, int device, unsigned flags, const cpu_event_ops *ops)
{
    event->head = (tp_event){
        .backend = tp_cpu_table(),
        .device = {.type = TP_DEVICE_CPU, .index = device},
        .flags = flags,
    };
    event->ops = ops;
    atomic_init(&event->refs, 1);
}

void tp_cpu_event_init(cpu_event *event, int device, unsigned flags, const cpu_event_ops *ops)
{
    event_head_init(event, device, flags, ops);
    atomic_init(&event->locked, false);
    live_events_add(event);
}

tp_status tp_cpu_event_create(int device, unsigned flags, tp_event **out)
{
    cpu_event *event = event_struct_take();
    if (!event)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory for an event of cpu:%d",
                                   device);
    event_head_init(event, device, flags, NULL);
    *out = &event->head;
    return TP_OK;
}

tp_status tp_cpu_event_destroy(tp_event *handle)
{
    /* A pending record task holds its own reference (rule 9). */
    tp_cpu_event_unref((cpu_event *)handle);
    return TP_OK;
}

/* Replaces the latest record; sets *version to the one it got. `source` NULL:
 * reached already, at `now`. Returns the old source, whose reference goes to the
 * caller. */
static inline cpu_queue *swap_record(cpu_event *event, cpu_queue *source, uint64_t seq, uint64_t now, uint64_t tag,
                                     uint64_t *version)
{
    event_lock(event);
    cpu_queue *old = event->source;
    cpu_capture *old_capture = atomic_load_explicit(&event->capture, memory_order_relaxed);
    *version = ++event->version;
    event->recorded = true;
    event->source = source;
    event->seq = seq;
    event->time_ns = now;
    event->tag = tag;
    if (TP_UNLIKELY(old_capture != NULL))
        atomic_store_explicit(&event->capture, NULL, memory_order_relaxed);
    event_unlock(event);
    if (TP_UNLIKELY(old_capture != NULL))
        tp_cpu_capture_unref(old_capture);
    return old;
}

/* The same, dropping the old source's reference (after unlocking); returns the
 * version. */
static inline uint64_t replace_record(cpu_event *event, cpu_queue *source, uint64_t seq, uint64_t now, uint64_t tag)
{
    uint64_t version;
    cpu_queue *old = swap_record(event, source, seq, now, tag, &version);
    if (old)
        tp_cpu_queue_unref(old);
    return version;
}

void tp_cpu_event_capture_record(cpu_event *event, cpu_capture *token, cpu_queue *branch, uint64_t pos)
{
    tp_cpu_capture_ref(token);
    event_lock(event);
    cpu_queue *old = event->source;
    cpu_capture *old_capture = atomic_load_explicit(&event->capture, memory_order_relaxed);
    ++event->version;
    event->recorded = false; /* outside the graph, no record (tpevent.h, capture) */
    event->source = NULL;
    event->time_ns = 0;
    event->tag = 0;
    atomic_store_explicit(&event->capture, token, memory_order_relaxed);
    event->capture_queue = branch;
    event->capture_pos = pos;
    event_unlock(event);
    if (old)
        tp_cpu_queue_unref(old);
    if (old_capture)
        tp_cpu_capture_unref(old_capture);
}

cpu_capture *tp_cpu_event_capture_of(cpu_event *event, cpu_queue **branch, uint64_t *pos)
{
    event_lock(event);
    cpu_capture *token = atomic_load_explicit(&event->capture, memory_order_relaxed);
    if (token && tp_cpu_capture_open(token)) {
        tp_cpu_capture_ref(token);
        *branch = event->capture_queue;
        *pos = event->capture_pos;
    } else {
        token = NULL;
    }
    event_unlock(event);
    return token;
}

cpu_task tp_cpu_event_record_task(cpu_event *event, cpu_queue *queue, uint64_t seq)
{
    tp_cpu_event_ref(event); /* the task's */
    tp_cpu_queue_ref(queue); /* the snapshot's */
    uint64_t version = replace_record(event, queue, seq, 0, 0);
    return (cpu_task){.run = record_task, .arg = event, .word.u64 = version};
}

TP_COLD tp_status tp_cpu_event_capturing_fail(const cpu_event *event, const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_CAPTURING,
                               "%s: the cpu:%d event's latest record was made inside a capture that is still open: "
                               "it is reached only when the graph is launched (rule 16)",
                               operation, event->head.device.index);
}

uint64_t tp_cpu_event_replace_record(cpu_event *event, cpu_queue *source, uint64_t seq, uint64_t now, uint64_t tag)
{
    return replace_record(event, source, seq, now, tag);
}

cpu_queue *tp_cpu_event_swap_record(cpu_event *event, cpu_queue *source, uint64_t seq)
{
    uint64_t version;
    return swap_record(event, source, seq, 0, 0, &version);
}

/* A record on a stream with work pending, out of line: the record on an idle
 * stream needs none of it. */
TP_NOINLINE static tp_status record_on_busy_queue(cpu_event *event, cpu_queue *queue, uint64_t submitted, bool timing)
{
    /* Busy, no timing: reached when the stream has done what it has now; no task
     * needed, since nobody will ask when. (Not on a stream inherited through
     * fork(), whose worker is not here to get there.) */
    if (tp_cpu_queue_inherited(queue))
        return tp_cpu_queue_inherited_fail(queue, "tp_event_record");
    if (!timing) {
        tp_cpu_queue_ref(queue);
        replace_record(event, queue, submitted, 0, 0);
        return TP_OK;
    }

    /* Busy, timing: the worker stamps the time when it gets there. */
    tp_status status = tp_cpu_queue_begin_submit(queue, "tp_event_record");
    if (status != TP_OK)
        return status;
    uint64_t seq = tp_cpu_queue_next_seq(queue);
    tp_cpu_event_ref(event); /* the task's */
    tp_cpu_queue_ref(queue); /* the snapshot's */
    /* replace_record may drop the last reference of the old source while this
     * queue's lock is held; that is safe, since freeing a queue takes no lock, and
     * the old source cannot be this queue (the new snapshot holds a reference). */
    uint64_t version = replace_record(event, queue, seq, 0, 0);
    cpu_task task = {.run = record_task, .arg = event, .word.u64 = version};
    tp_cpu_queue_end_submit(queue, &task);
    return TP_OK;
}

tp_status tp_cpu_event_record(tp_event *handle, tp_stream *stream)
{
    cpu_event *event = (cpu_event *)handle;
    cpu_queue *queue = ((cpu_stream *)stream)->queue;
    if (TP_UNLIKELY(event->ops))
        return event->ops->record(event, queue);
    bool timing = (event->head.flags & TP_EVENT_TIMING) != 0;
    uint64_t submitted = atomic_load_explicit(&queue->submitted, memory_order_acquire);
    if (TP_UNLIKELY(!tp_cpu_queue_reached(queue, submitted)))
        return record_on_busy_queue(event, queue, submitted, timing);
    /* Idle: everything submitted so far is done, so the record is reached now, on
     * this thread. (Work another thread submits meanwhile is not ordered before
     * this record anyway: rule 12.) */
    replace_record(event, NULL, 0, timing ? tp_now_ns() : 0, 0);
    return TP_OK;
}

/* Takes over the snapshot's reference. */
static tp_status synchronize_snapshot(cpu_snapshot pending, enum cpu_wait_mode mode)
{
    if (!pending.source)
        return TP_OK;
    tp_status status = tp_cpu_queue_wait(pending.source, pending.seq, mode, "tp_event_synchronize");
    tp_cpu_queue_unref(pending.source);
    return status;
}

tp_status tp_cpu_record_synchronize(cpu_snapshot pending, enum cpu_wait_mode mode)
{
    return synchronize_snapshot(pending, mode);
}

tp_status tp_cpu_event_synchronize(tp_event *handle)
{
    cpu_event *event = (cpu_event *)handle;
    enum cpu_wait_mode mode = (event->head.flags & TP_EVENT_BLOCKING) ? CPU_WAIT_SLEEP : CPU_WAIT_SPIN_THEN_SLEEP;
    if (TP_UNLIKELY(event->ops))
        return event->ops->synchronize(event, mode);
    cpu_snapshot pending = take_snapshot(event);
    if (TP_UNLIKELY(pending.capturing))
        return tp_cpu_event_capturing_fail(event, "tp_event_synchronize");
    return synchronize_snapshot(pending, mode);
}

/* Interprocess events: their own synchronize sees it (cpu_ipc.c); not here. */
bool tp_cpu_event_waits_for_itself(tp_event *handle)
{
    cpu_event *event = (cpu_event *)handle;
    if (event->ops || !tp_cpu_current_worker)
        return false;
    cpu_snapshot pending = take_snapshot(event);
    bool itself = pending.source == tp_cpu_current_worker && !tp_cpu_queue_reached(pending.source, pending.seq);
    if (pending.source)
        tp_cpu_queue_unref(pending.source);
    return itself;
}

/* Takes over the snapshot's reference. */
static tp_status wait_for_snapshot(cpu_queue *queue, cpu_snapshot pending)
{
    if (!pending.source)
        return TP_OK; /* never recorded, or reached: nothing to wait for (rule 6) */
    if (pending.source == queue) {
        /* Its own earlier work: the FIFO already orders it (rule 12). */
        tp_cpu_queue_unref(pending.source);
        return TP_OK;
    }
    /* The task takes over the snapshot's reference. */
    cpu_task task = {.run = wait_task, .arg = pending.source, .word.u64 = pending.seq};
    tp_status status = tp_cpu_queue_submit(queue, &task, "tp_stream_wait_event");
    if (status != TP_OK)
        tp_cpu_queue_unref(pending.source);
    return status;
}

tp_status tp_cpu_record_wait(cpu_queue *queue, cpu_snapshot pending)
{
    return wait_for_snapshot(queue, pending);
}

tp_status tp_cpu_stream_wait_event(tp_stream *stream, tp_event *handle)
{
    cpu_queue *queue = ((cpu_stream *)stream)->queue;
    cpu_event *event = (cpu_event *)handle;
    if (TP_UNLIKELY(event->ops))
        return event->ops->wait(queue, event);
    return wait_for_snapshot(queue, take_snapshot(event));
}

typedef struct record_state {
    bool recorded;
    bool reached;
    bool capturing;
    uint64_t time_ns;
} record_state;

static inline record_state read_record(cpu_event *event)
{
    event_lock(event);
    cpu_queue *release = forget_reached_locked(event);
    record_state state = {
        .recorded = event->recorded,
        .reached = event->source == NULL,
        .capturing = tp_cpu_capture_open(atomic_load_explicit(&event->capture, memory_order_relaxed)),
        .time_ns = event->time_ns,
    };
    event_unlock(event);
    if (release)
        tp_cpu_queue_unref(release);
    return state;
}

tp_status tp_cpu_event_query(tp_event *handle, bool *done)
{
    cpu_event *event = (cpu_event *)handle;
    if (TP_UNLIKELY(event->ops))
        return event->ops->query(event, done);
    record_state record = read_record(event);
    if (TP_UNLIKELY(record.capturing))
        return tp_cpu_event_capturing_fail(event, "tp_event_query");
    *done = record.reached;
    return TP_OK;
}

/* Two reached records (of one device: the core calls for no other); anything else
 * is for the core to sort out in rule 7's order (tp_host's elapsed_sequenced). */
tp_status tp_cpu_event_elapsed(tp_event *start_handle, tp_event *end_handle, float *ms)
{
    record_state start = read_record((cpu_event *)start_handle);
    /* One event is one record, read once: another thread's record in between the
     * two reads would otherwise time an event against itself as nonzero. */
    record_state end = end_handle == start_handle ? start : read_record((cpu_event *)end_handle);
    if (TP_UNLIKELY(start.capturing | end.capturing))
        return tp_cpu_event_capturing_fail((cpu_event *)(start.capturing ? start_handle : end_handle),
                                           "tp_event_elapsed_time");
    if (TP_UNLIKELY(!(start.recorded & start.reached & end.recorded & end.reached)))
        return tp_cpu_host()->elapsed_sequenced(start_handle, end_handle, ms);
    /* Signed: end may have been recorded before start. */
    int64_t ns = (int64_t)(end.time_ns - start.time_ns);
    *ms = (float)((double)ns / 1e6);
    return TP_OK;
}

/* A reached timing record's time, read where the worker (or the recording thread,
 * on an idle stream) reached it; anything else is for the core (rule 7's order). */
tp_status tp_cpu_event_timestamp(tp_event *handle, int64_t *ns)
{
    cpu_event *event = (cpu_event *)handle;
    if (TP_UNLIKELY(event->ops))
        return TP_ERR_NOT_READY; /* interprocess events have no timing (rule 8) */
    record_state record = read_record(event);
    if (TP_UNLIKELY(record.capturing))
        return tp_cpu_event_capturing_fail(event, "tp_event_timestamp");
    if (TP_UNLIKELY(!(record.recorded & record.reached)))
        return TP_ERR_NOT_READY;
    *ns = (int64_t)record.time_ns;
    return TP_OK;
}
