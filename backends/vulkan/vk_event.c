/*
 * Events: the latest record (vk_record.c), a value of a stream's timeline. A
 * record of an event without timing is the stream's last value when nothing waits
 * on its worker (no batch at all: that value's signal comes after all the stream's
 * work); with timing it is a batch that writes the timestamp. Query reads the
 * semaphore's counter, synchronize waits for it (vkWaitSemaphores), elapsed time is
 * the two timestamps' difference in the device's ticks.
 *
 * Query, synchronize and wait need only the latest record's timeline and value,
 * which they read without a lock (a sequence lock): timelines are never destroyed
 * (vk_internal.h), so a record replaced meanwhile costs them nothing. What reads the
 * record's query (elapsed, timestamp, snapshots) takes a reference under the lock.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/clock.h"
#include "common/compiler.h"
#include "common/free_list.h"

static tp_free_list event_pool = TP_FREE_LIST_INIT;

tp_status tp_vk_event_create(int device, unsigned flags, tp_event **out)
{
    if (flags & TP_EVENT_INTERPROCESS)
        return tp_vk_host()->fail(TP_ERR_UNSUPPORTED,
                                  "tp_event_create: the vulkan backend has no interprocess events (a timeline "
                                  "semaphore is shared between processes only through an exported fd, which "
                                  "lavapipe and many drivers do not export)");
    vk_event *event = tp_free_list_take(&event_pool, sizeof *event);
    if (!event)
        return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_create: out of memory");
    event->head = (tp_event){.backend = tp_vk_table(), .device = {TP_DEVICE_VULKAN, device}, .flags = flags};
    pthread_mutex_init(&event->lock, NULL);
    event->latest = NULL;
    atomic_init(&event->sequence, 0);
    atomic_init(&event->timeline, NULL);
    atomic_init(&event->value, 0);
    *out = &event->head;
    return TP_OK;
}

tp_status tp_vk_event_destroy(tp_event *handle)
{
    vk_event *event = (vk_event *)handle;
    if (event->latest)
        tp_vk_record_unref(event->latest); /* a pending batch runs on (rule 9) */
    pthread_mutex_destroy(&event->lock);
    tp_free_list_give(&event_pool, event);
    return TP_OK;
}

vk_record *tp_vk_event_latest(vk_event *event)
{
    pthread_mutex_lock(&event->lock);
    vk_record *record = event->latest;
    if (record)
        tp_vk_record_ref(record);
    pthread_mutex_unlock(&event->lock);
    return record;
}

/* The latest record's timeline and value, without the lock or a reference; false:
 * never recorded. A sequence lock: a record makes `sequence` odd, writes the two,
 * makes it even; a reader that saw it change reads again. */
static bool latest_value(vk_event *event, const vk_timeline **timeline, uint64_t *value)
{
    for (;;) {
        uint32_t before = atomic_load_explicit(&event->sequence, memory_order_acquire);
        const vk_timeline *t = atomic_load_explicit(&event->timeline, memory_order_relaxed);
        uint64_t v = atomic_load_explicit(&event->value, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (TP_LIKELY(!(before & 1) && atomic_load_explicit(&event->sequence, memory_order_relaxed) == before)) {
            *timeline = t;
            *value = v;
            return t != NULL;
        }
        tp_cpu_relax();
    }
}

tp_status tp_vk_event_record(tp_event *handle, tp_stream *stream_handle)
{
    static const char call[] = "tp_event_record";
    vk_event *event = (vk_event *)handle;
    vk_stream *stream = (vk_stream *)stream_handle;
    bool timing = (handle->flags & TP_EVENT_TIMING) != 0;
    vk_record *record = NULL;
    tp_status status = tp_vk_record_take(stream->device, timing, call, &record);
    if (status != TP_OK)
        return status;
    record->timeline = stream->timeline;
    status = tp_vk_stream_mark(stream,
                               (vk_batch){.command = record->stamp, .stamp = record->query, .stamp_slot = record->slot},
                               false, call, &record->value);
    if (status != TP_OK) {
        record->timeline = NULL; /* never submitted: back to the pool at once */
        tp_vk_record_unref(record);
        return status;
    }
    pthread_mutex_lock(&event->lock);
    vk_record *replaced = event->latest;
    event->latest = record;
    uint32_t sequence = atomic_load_explicit(&event->sequence, memory_order_relaxed);
    atomic_store_explicit(&event->sequence, sequence + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&event->timeline, record->timeline, memory_order_relaxed);
    atomic_store_explicit(&event->value, record->value, memory_order_relaxed);
    atomic_store_explicit(&event->sequence, sequence + 2, memory_order_release);
    pthread_mutex_unlock(&event->lock);
    if (replaced)
        tp_vk_record_unref(replaced);
    return TP_OK;
}

tp_status tp_vk_event_query(tp_event *handle, bool *done)
{
    const vk_timeline *timeline = NULL;
    uint64_t value = 0;
    *done = !latest_value((vk_event *)handle, &timeline, &value) || tp_vk_timeline_counter(timeline) >= value;
    return TP_OK;
}

/* Rule 15: the calling thread runs a host function of the record's stream that the
 * record comes after, so that waiting for it from here would never end. */
static bool waits_for_caller(const vk_timeline *timeline, uint64_t value)
{
    uint64_t after = 0;
    vk_stream *running = tp_vk_running_stream(&after);
    return running && running->timeline == timeline && value > after;
}

bool tp_vk_record_waits_for_caller(const vk_record *record)
{
    return waits_for_caller(record->timeline, record->value);
}

bool tp_vk_event_waits_for_itself(tp_event *handle)
{
    const vk_timeline *timeline = NULL;
    uint64_t value = 0;
    return latest_value((vk_event *)handle, &timeline, &value) && waits_for_caller(timeline, value);
}

tp_status tp_vk_event_synchronize(tp_event *handle)
{
    static const char call[] = "tp_event_synchronize";
    const vk_timeline *timeline = NULL;
    uint64_t value = 0;
    if (!latest_value((vk_event *)handle, &timeline, &value))
        return TP_OK;
    if (waits_for_caller(timeline, value))
        return tp_vk_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                  "%s: the event's record comes after the host function that calls this, on the "
                                  "same stream: the wait would never end",
                                  call);
    return tp_vk_timeline_wait(timeline, value, (handle->flags & TP_EVENT_BLOCKING) != 0, call);
}

tp_status tp_vk_event_elapsed(tp_event *start_handle, tp_event *end_handle, float *ms)
{
    static const char call[] = "tp_event_elapsed_time";
    vk_record *start = tp_vk_event_latest((vk_event *)start_handle);
    vk_record *end = tp_vk_event_latest((vk_event *)end_handle);
    uint64_t start_ticks = 0, end_ticks = 0;
    tp_status status = TP_ERR_NOT_READY;
    if (start && end && (status = tp_vk_record_ticks(start, call, &start_ticks)) == TP_OK)
        status = tp_vk_record_ticks(end, call, &end_ticks);
    double tick_ns = start ? start->device->tick_ns : 0;
    uint32_t bits = start ? start->device->valid_bits : 64;
    if (start)
        tp_vk_record_unref(start);
    if (end)
        tp_vk_record_unref(end);
    if (status == TP_ERR_NOT_READY)
        return tp_vk_host()->elapsed_sequenced(start_handle, end_handle, ms); /* rule 7, in order */
    if (status != TP_OK)
        return status;
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t delta = (end_ticks - start_ticks) & mask;
    double ticks = delta > mask / 2 ? -(double)((mask - delta) + 1) : (double)delta;
    *ms = (float)(ticks * tick_ns / 1e6);
    return TP_OK;
}

tp_status tp_vk_event_timestamp(tp_event *handle, int64_t *ns)
{
    vk_record *record = tp_vk_event_latest((vk_event *)handle);
    if (!record)
        return TP_ERR_NOT_RECORDED;
    tp_status status = tp_vk_record_time(record, "tp_event_timestamp", ns);
    tp_vk_record_unref(record);
    return status;
}

/* The latest record's timeline semaphore (a VkSemaphore): reached once its counter
 * is at the record's value, which tpevent does not give out. */
tp_status tp_vk_event_native(tp_event *handle, void **native)
{
    const vk_timeline *timeline = NULL;
    uint64_t value = 0;
    *native = latest_value((vk_event *)handle, &timeline, &value) ? (void *)timeline->semaphore : NULL;
    return TP_OK;
}

tp_status tp_vk_stream_wait_event(tp_stream *stream, tp_event *handle)
{
    const vk_timeline *timeline = NULL;
    uint64_t value = 0;
    if (!latest_value((vk_event *)handle, &timeline, &value))
        return TP_OK; /* never recorded: nothing to wait for (rule 6) */
    return tp_vk_stream_wait_value((vk_stream *)stream, timeline, value, "tp_event_wait");
}
