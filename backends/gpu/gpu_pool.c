/*
 * Pools of native events per device and flag combination, so that the first
 * record of an event rarely pays for cudaEventCreate, and a native event is handed
 * out again only once its last record was reached.
 */
#include "backends/gpu/gpu_internal.h"
#include "common/array.h"
#include "common/pointer_table.h"

#include <stdlib.h>

/* A pool keeps at most this many native events in each of its lists; beyond that
 * they are destroyed, so that a burst of events does not pin memory for good. */
#define POOL_KEEP_MAX 4096

/* Pending native events a pool queries, at most, before it creates a new one. */
#define POOL_REAP_MAX 8

unsigned gpu_native_flags(unsigned flags)
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

static bool list_push(gpu_native_list *list, rt_event event)
{
    if (list->count == list->capacity) {
        if (list->capacity >= POOL_KEEP_MAX)
            return false;
        if (!tp_array_grow(&list->items, &list->capacity, list->count + 1, sizeof *list->items))
            return false;
    }
    list->items[list->count++] = event;
    return true;
}

void gpu_destroy_native(gpu_device *device, rt_event event)
{
    rt_guard guard;
    if (rt_guard_enter(&guard, device->context, RT_NEED_CONTEXT_FOR_CALL) == RT_SUCCESS) {
        (void)rt_event_destroy(event);
        rt_guard_leave(&guard);
    }
}

/* Moves pending native events whose record was reached to the reached list; asks
 * about a few only, so taking one stays cheap. Called with the pool locked.
 * Rule 16: these queries are tpevent's, not the caller's; in relaxed mode, so that
 * they do not invalidate a capture in global mode (the caller's or another
 * thread's: torch.cuda.graph's default), as PyTorch's allocator queries its events. */
static void pool_reap(gpu_device *device, gpu_event_pool *pool)
{
    rt_capture_mode mode = rt_thread_capture_relax_save();
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
            gpu_destroy_native(device, event); /* broken, or more than the pool keeps */
    }
    rt_thread_capture_restore(mode);
}

tp_status gpu_pool_take(gpu_device *device, unsigned flags, rt_event *out)
{
    gpu_event_pool *pool = &device->pools[flags & TP_EVENT_FLAGS_ALL];
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
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_event_create(out, gpu_native_flags(flags));
    rt_guard_leave(&guard);
    return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_CALL("EventCreateWithFlags"), e);
}

/*
 * Handing a maybe-pending event out before its record is reached would let the
 * next owner's record replace one that a racing query or synchronize of the old
 * owner, or a relayed wait, still means; and on HIP, recording a pending event is
 * undefined. So such an event waits in the pending list until a query says it is
 * reached.
 */
/*
 * Pinned natives, handed out again only once the last pin is gone:
 *   - rule 16: natives recorded inside a capture (gpu_graph.c). Querying one while
 *     its capture is open is illegal (and in global mode invalidates the capture);
 *     an external one is recorded again at each launch of its graph;
 *   - a snapshot's marker that the device's poller asks about (gpu_notify.c): one
 *     per wait of another backend's stream on this device's pending records, so
 *     there may be thousands.
 * While pinned, a give is only noted, and the last unpin gives it back then. A
 * pointer table (common/pointer_table.h) under a lock, looked at only while not
 * empty: a give finds its native in O(1) however many are pinned, where a list
 * scan made 10,000 pending waits cost ~50 ms of gives.
 */
typedef struct pinned_native {
    rt_event native; /* the table's key */
    unsigned pins;
    bool given; /* its owner gave it back meanwhile: with these */
    gpu_device *device;
    unsigned flags;
} pinned_native;

static struct {
    pthread_mutex_t lock;
    tp_pointer_table table;
    atomic_size_t live; /* table.count, read without the lock */
} pinned = {.lock = PTHREAD_MUTEX_INITIALIZER, .table = TP_POINTER_TABLE_INIT(pinned_native)};

void gpu_pool_pin(rt_event native)
{
    pthread_mutex_lock(&pinned.lock);
    pinned_native *found = tp_pointer_table_find(&pinned.table, native);
    if (!found)
        found = tp_pointer_table_insert(&pinned.table, native); /* NULL: out of memory, it stays unpinned */
    if (found)
        found->pins++;
    atomic_store_explicit(&pinned.live, pinned.table.count, memory_order_relaxed);
    pthread_mutex_unlock(&pinned.lock);
}

void gpu_pool_unpin(rt_event native, bool captured_record)
{
    pthread_mutex_lock(&pinned.lock);
    pinned_native *found = tp_pointer_table_find(&pinned.table, native);
    pinned_native last = {0};
    if (found && --found->pins == 0) {
        last = *found;
        tp_pointer_table_remove(&pinned.table, found);
        atomic_store_explicit(&pinned.live, pinned.table.count, memory_order_relaxed);
    }
    pthread_mutex_unlock(&pinned.lock);
    if (last.given && captured_record)
        gpu_pool_give_captured(last.device, last.flags, last.native);
    else if (last.given)
        gpu_pool_give(last.device, last.flags, last.native, true);
}

/* A give of a pinned native: noted, for the last unpin. */
static bool give_pinned(gpu_device *device, unsigned flags, rt_event native)
{
    pthread_mutex_lock(&pinned.lock);
    pinned_native *found = tp_pointer_table_find(&pinned.table, native);
    if (found)
        *found = (pinned_native){native, found->pins, true, device, flags};
    pthread_mutex_unlock(&pinned.lock);
    return found != NULL;
}

void gpu_pool_give(gpu_device *device, unsigned flags, rt_event event, bool maybe_pending)
{
    if (TP_UNLIKELY(atomic_load_explicit(&pinned.live, memory_order_relaxed) != 0) && give_pinned(device, flags, event))
        return;
    gpu_event_pool *pool = &device->pools[flags & TP_EVENT_FLAGS_ALL];
    bool reached = true;
    if (maybe_pending) {
        rt_capture_mode mode = rt_thread_capture_relax_save(); /* as in pool_reap */
        rt_error e = rt_event_query(event);
        rt_thread_capture_restore(mode);
        if (e != RT_SUCCESS && e != RT_ERROR_NOT_READY) {
            gpu_destroy_native(device, event);
            return;
        }
        reached = e == RT_SUCCESS;
    }
    pthread_mutex_lock(&pool->lock);
    bool kept = list_push(reached ? &pool->reached : &pool->pending, event);
    pthread_mutex_unlock(&pool->lock);
    if (!kept)
        gpu_destroy_native(device, event); /* the runtime frees it once its record is reached */
}

void gpu_pool_give_captured(gpu_device *device, unsigned flags, rt_event event)
{
    if (TP_UNLIKELY(atomic_load_explicit(&pinned.live, memory_order_relaxed) != 0) && give_pinned(device, flags, event))
        return; /* the last unpin says what its latest record is then */
    gpu_destroy_native(device, event);
}
