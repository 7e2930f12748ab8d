/*
 * Query, synchronize and wait on a GPU event handed over a socket (gpu_ipc_page.h):
 * the host reads the record's channel of the shared page, a stream waits on it
 * with a stream memory operation (cuStreamWaitValue64, greater or equal).
 *
 * The window (rule 17). A wait on another process's record may stay pending for
 * long (that process may hold its stream), and a stream's runtime queue is finite:
 * so each wait takes a place in the stream's window of holds (gpu_hold.c's
 * gpu_hold_slot), given back once the stream passed it (a marker recorded after it),
 * and with the window full it becomes a hold of the stream instead (joining the
 * latest, as a hold past the window does), let go once the record's channel reaches
 * its value: nothing of this process tells when another's record is reached, so the
 * device's poller (gpu_notify.c) watches the channel. A record whose process died is
 * never reached: its waits keep their places, the stream stays held (see
 * gpu_ipc_page.c), and the poller keeps watching, the page kept for it.
 */
#define _GNU_SOURCE
#include "backends/gpu/gpu_ipc_page_layout.h"
#include "backends/gpu/gpu_timeline_wait.h" /* gpu_hold_slot */
#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda_page.h" /* HIP's and the fake's are in their mappings */
#endif
#include "common/ipc_file.h"
#include "common/spin.h"

#include <stdlib.h>

#define POLL_SPIN_NS 50000u

/* ------------------------------------------------------------ liveness */

/* Whether the handle that made the pending record `count` of `channel` is gone and
 * the record not reached after all; false where it cannot tell. */
static bool recorder_gone(gpu_page *page, page_channel *channel, uint64_t count)
{
    uint64_t offset = atomic_load_explicit(&channel->owner_lock, memory_order_relaxed);
    if (offset == page->lock_offset || page->lock_offset == 0)
        return false; /* this handle's own, or it holds no lock to compare with */
    if (!tp_ipc_liveness_lock_free(page->fd, offset))
        return false; /* held, no lock to look at, or failing to look: never "gone" */
    return !channel_reached(channel, count);
}

static TP_COLD tp_status recorder_died(const char *operation)
{
    return gpu.host->fail(TP_ERR_BACKEND,
                          "%s: the process that recorded the event exited before reaching it (its handle's lock on "
                          "the event's page is gone)",
                          operation);
}

/* ------------------------------------------------------------- waiting */

/* Looks whether the pending record's handle is gone, and remembers a death seen. */
static bool record_dead(gpu_page *page, uint64_t ticket, page_channel *channel, uint64_t count)
{
    if (!recorder_gone(page, channel, count))
        return false;
    atomic_store_explicit(&page->dead_ticket, ticket, memory_order_relaxed);
    return true;
}

tp_status gpu_page_query(gpu_page *page, bool *done)
{
    page_channel *channel;
    uint64_t ticket, count;
    *done = !latest_record(page, &ticket, &channel, &count) || channel_reached(channel, count);
    /* A look at the lock costs a system call; a query nanoseconds: once a period. */
    if (!*done && (atomic_load_explicit(&page->dead_ticket, memory_order_relaxed) == ticket ||
                   tp_liveness_due(&page->next_liveness_check_ns, tp_now_ns())))
        if (record_dead(page, ticket, channel, count))
            return recorder_died("tp_event_query");
    return TP_OK;
}

/* Polls the page: spins briefly (not with TP_EVENT_BLOCKING), then sleeps in pauses
 * doubling up to TP_PAUSE_LONGEST_NS, so a record is seen at most 1 ms late. */
tp_status gpu_page_synchronize(gpu_page *page, bool blocking)
{
    page_channel *channel;
    uint64_t ticket, count;
    if (!latest_record(page, &ticket, &channel, &count))
        return TP_OK;
    uint64_t now = tp_now_ns();
    uint64_t spin_until = blocking ? 0 : now + POLL_SPIN_NS, next_liveness_check = now;
    uint64_t pause = TP_PAUSE_FIRST_NS;
    while (!channel_reached(channel, count)) {
        now = tp_now_ns();
        if (now >= next_liveness_check) {
            if (record_dead(page, ticket, channel, count))
                return recorder_died("tp_event_synchronize");
            next_liveness_check = now + TP_LIVENESS_PERIOD_NS;
        }
        if (now < spin_until)
            continue;
        tp_sleep_ns(pause);
        pause = tp_pause_next(pause);
    }
    return TP_OK;
}

/* A wait's place in the stream's window, or the hold it became: let go once the
 * stream passed the wait (a marker recorded after it) or, for a hold, once the
 * channel reaches the value (the poller calls page_wait_passed either way). */
typedef struct page_wait {
    gpu_page *page; /* held until then: the device reads it, the poller too */
    void (*release)(void *);
    void *arg;
    rt_event marker; /* recorded after the wait queued; NULL: the channel is watched */
} page_wait;

static void page_wait_passed(void *arg)
{
    page_wait *wait = arg;
    wait->release(wait->arg);
    gpu_page_release(wait->page); /* the last hold frees the page once the device is done with it */
    free(wait);
}

/* The mapping stays until the stream's wait has passed (rule 9: the event may go
 * first): the highest value waited on, per channel. */
static void note_waited(gpu_page *page, const page_channel *channel, uint64_t count)
{
    _Atomic uint64_t *waited = &page->waited[channel - page->layout->channels];
    uint64_t seen = atomic_load_explicit(waited, memory_order_relaxed);
    while (seen < count &&
           !atomic_compare_exchange_weak_explicit(waited, &seen, count, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* With the stream's device current: a pooled native event recorded after the wait,
 * reached once the stream passed it (the channel reaching the value is not enough:
 * the device may not have read it yet, and the page may then go). NULL if the
 * runtime refused. */
static rt_event marker_after_wait(gpu_stream *stream)
{
    rt_event marker;
    if (gpu_pool_take(stream->device, TP_EVENT_DEFAULT, &marker) != TP_OK)
        return NULL;
    if (rt_event_record(marker, stream->native) == RT_SUCCESS)
        return marker;
    gpu_pool_give(stream->device, TP_EVENT_DEFAULT, marker, true);
    return NULL;
}

/* With the stream's device current: the stream waits for the channel to reach
 * count, in a place of the window (*queued) or, with the window full, held. */
static tp_status queue_wait(gpu_page *page, gpu_stream *stream, page_channel *channel, uint64_t count, page_wait *wait,
                            bool *queued)
{
    wait->marker = NULL;
    *queued = gpu_hold_slot(stream, &wait->release, &wait->arg) == TP_OK;
    if (!*queued)
        return gpu_stream_hold(&stream->head, &wait->release, &wait->arg);
    rt_error e = rt_stream_wait_value64(stream->native, device_pointer_of(page, &channel->reached), count);
    if (e != RT_SUCCESS) {
        wait->release(wait->arg); /* nothing queued: the place goes back at once */
        return gpu_fail_call(RT_WAIT_VALUE_CALL, e);
    }
    wait->marker = marker_after_wait(stream);
    return TP_OK;
}

/* The poller's call for the wait: on its marker, or on the channel. */
static tp_status watch(gpu_stream *stream, page_channel *channel, uint64_t count, page_wait *wait)
{
    if (!wait->marker)
        return gpu_notify_when_counter_reaches(stream->device, &channel->reached, count, page_wait_passed, wait);
    rt_event marker = wait->marker;
    tp_status status = gpu_notify_when_reached(stream->device, marker, page_wait_passed, wait);
    gpu_pool_give(stream->device, TP_EVENT_DEFAULT, marker, true); /* pinned: kept until the poller is done */
    return status;
}

tp_status gpu_page_wait(gpu_page *page, gpu_stream *stream)
{
    page_channel *channel;
    uint64_t ticket, count;
    if (!latest_record(page, &ticket, &channel, &count) || channel_reached(channel, count))
        return TP_OK; /* rule 6: nothing to wait for */
    if (stream_capturing(stream))
        return gpu_page_refused_in_capture("tp_stream_wait_event");
    /* The page's own device was asked when the page was made or received. */
    if (stream->device != page->device) {
        tp_status status = gpu_page_check_support(stream->device, "tp_stream_wait_event");
        if (status != TP_OK)
            return status;
    }
    page_wait *wait = malloc(sizeof *wait);
    if (!wait)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_wait_event: out of memory");
    wait->page = page;
    bool queued = false;
    rt_guard guard;
    rt_error e = gpu_stream_enter(stream, &guard);
    tp_status status = e == RT_SUCCESS ? queue_wait(page, stream, channel, count, wait, &queued)
                                       : gpu_fail_call(RT_CALL("SetDevice"), e);
    if (e == RT_SUCCESS)
        rt_guard_leave(&guard);
    if (status != TP_OK) {
        free(wait);
        return status;
    }
    if (queued)
        note_waited(page, channel, count);
    atomic_fetch_add_explicit(&page->refs, 1, memory_order_relaxed);
    status = watch(stream, channel, count, wait);
    if (status == TP_OK)
        return TP_OK;
    /* No watcher: a queued wait gives its place back now (it still waits on the
     * device, and note_waited keeps the page for it); a hold is let go, and the
     * wait fails. */
    page_wait_passed(wait);
    return queued ? TP_OK : status;
}
