/*
 * tp_stream_hold, tp_hold_release, tp_stream_hold_window (rule 17): the public hold,
 * over the backends' stream_hold entry (what waits across backends hold a stream
 * with, core/wait_across.c).
 *
 * The watchdog. A hold with a timeout is in one heap by deadline, and one thread
 * (started at the first such hold, then kept) sleeps until the earliest deadline; a
 * hold that becomes the earliest wakes it, no other does. A heap, not a list scanned
 * at each wake: with tens of thousands of holds outstanding, taking one, releasing
 * one and letting the due ones go each stay O(log n) (issue 47). Exactly one of
 * the release and the watchdog lets the stream go: each claims the hold by moving
 * its state from HELD, and only the winner calls the backend's release. The hold is
 * freed by tp_hold_release alone, whoever won: the watchdog takes what it needs
 * (the release and its argument) under the heap's lock, and tp_hold_release takes
 * the hold out of the heap under that lock before it looks, so the hold is never
 * freed while the watchdog reads it.
 *
 * fork(): the child has no watchdog thread; its handler empties the heap (the
 * parent's holds do not cross, docs/design.md) so that the child's first hold starts one.
 */
#include "core/internal.h"

#include "common/clock.h"
#include "common/deadline_heap.h"
#include "common/thread.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

enum { HOLD_HELD, HOLD_RELEASED, HOLD_RAN_OUT };

struct tp_hold {
    void (*release)(void *);
    void *arg;
    int64_t timeout_ns;
    atomic_int state; /* HOLD_* */
    /* Its deadline (CLOCK_MONOTONIC; INT64_MAX: not watched) and its place in the
     * watchdog's heap, under the heap's lock. */
    tp_deadline_node watch;
};

static tp_hold *hold_of(tp_deadline_node *node)
{
    return (tp_hold *)(void *)((char *)node - offsetof(tp_hold, watch));
}

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* CLOCK_MONOTONIC: an earlier deadline than the thread sleeps to */
    tp_deadline_heap holds;
    bool running;
    pthread_once_t once;
} watchdog = {.lock = PTHREAD_MUTEX_INITIALIZER, .holds = TP_DEADLINE_HEAP_INIT, .once = PTHREAD_ONCE_INIT};

/* ---------------------------------------------------------------- watchdog */

static void *watchdog_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&watchdog.lock);
    for (;;) {
        tp_deadline_node *earliest = tp_deadline_heap_earliest(&watchdog.holds);
        if (!earliest) {
            pthread_cond_wait(&watchdog.changed, &watchdog.lock);
            continue;
        }
        int64_t deadline_ns = earliest->deadline_ns;
        if ((int64_t)tp_now_ns() < deadline_ns) {
            struct timespec until = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
            (void)pthread_cond_timedwait(&watchdog.changed, &watchdog.lock, &until);
            continue;
        }
        tp_deadline_heap_remove(&watchdog.holds, earliest);
        tp_hold *due = hold_of(earliest);
        int held = HOLD_HELD;
        if (!atomic_compare_exchange_strong(&due->state, &held, HOLD_RAN_OUT))
            continue; /* released meanwhile (then it is out of the heap already: not reached) */
        void (*release)(void *) = due->release;
        void *arg = due->arg;
        pthread_mutex_unlock(&watchdog.lock); /* `due` is tp_hold_release's from here */
        release(arg);
        pthread_mutex_lock(&watchdog.lock);
    }
    return NULL;
}

static void watchdog_forget_after_fork(void)
{
    pthread_mutex_init(&watchdog.lock, NULL);
    tp_cond_init_monotonic(&watchdog.changed);
    tp_deadline_heap_forget_all(&watchdog.holds);
    watchdog.running = false;
}

static void watchdog_setup(void)
{
    tp_cond_init_monotonic(&watchdog.changed);
    (void)pthread_atfork(NULL, NULL, watchdog_forget_after_fork);
}

/* Puts the hold in the heap, starting the thread if none runs; wakes the thread
 * when the hold is the earliest, the one deadline it may be sleeping past. */
static tp_status watchdog_watch(tp_hold *hold)
{
    pthread_once(&watchdog.once, watchdog_setup);
    pthread_mutex_lock(&watchdog.lock);
    tp_status status = TP_OK;
    if (!watchdog.running) {
        pthread_attr_t attr;
        pthread_t thread;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, watchdog_main, NULL) == 0)
            watchdog.running = true;
        else
            status = tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: cannot start the watchdog's thread");
        pthread_attr_destroy(&attr);
    }
    if (status == TP_OK && !tp_deadline_heap_add(&watchdog.holds, &hold->watch))
        status = tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory (the watchdog's heap of %zu holds)",
                         watchdog.holds.count);
    if (status == TP_OK && tp_deadline_heap_earliest(&watchdog.holds) == &hold->watch)
        pthread_cond_signal(&watchdog.changed);
    pthread_mutex_unlock(&watchdog.lock);
    return status;
}

static void watchdog_unwatch(tp_hold *hold)
{
    pthread_mutex_lock(&watchdog.lock);
    tp_deadline_heap_remove(&watchdog.holds, &hold->watch);
    pthread_mutex_unlock(&watchdog.lock);
}

/* ------------------------------------------------------------------ public */

static tp_status hold_refused_in_capture(tp_stream *stream)
{
    char device[TP_DEVICE_STRING_MAX];
    return tp_fail(TP_ERR_CAPTURING,
                   "tp_stream_hold: the %s stream is capturing: a hold cannot be captured (it would hold the stream "
                   "at every launch of the graph, with nothing to release it); hold it before begin_capture",
                   tp_device_str(stream->device, device));
}

tp_status tp_stream_hold(tp_stream *stream, int64_t timeout_ns, tp_hold **out)
{
    if (!stream || !out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_hold: %s is NULL", stream ? "out" : "stream");
    if (timeout_ns <= 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "tp_stream_hold: timeout_ns is %" PRId64 ": it must be > 0 (INT64_MAX: no watchdog)",
                       timeout_ns);
    if (!stream->backend->stream_hold)
        return tp_unsupported(stream->backend, "holding a stream (tp_stream_hold)");
    bool capturing = false;
    if (stream->backend->stream_is_capturing && stream->backend->stream_is_capturing(stream, &capturing) == TP_OK &&
        capturing)
        return hold_refused_in_capture(stream);
    tp_hold *hold = malloc(sizeof *hold);
    if (!hold)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    tp_status status = stream->backend->stream_hold(stream, &hold->release, &hold->arg);
    if (status != TP_OK) {
        free(hold);
        return status;
    }
    atomic_init(&hold->state, HOLD_HELD);
    hold->timeout_ns = timeout_ns;
    int64_t now = (int64_t)tp_now_ns();
    tp_deadline_node_init(&hold->watch, timeout_ns >= INT64_MAX - now ? INT64_MAX : now + timeout_ns);
    if (hold->watch.deadline_ns != INT64_MAX && (status = watchdog_watch(hold)) != TP_OK) {
        hold->release(hold->arg); /* nothing else would ever let the stream go */
        free(hold);
        return status;
    }
    *out = hold;
    return TP_OK;
}

tp_status tp_hold_release(tp_hold *hold)
{
    if (!hold)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_hold_release: hold is NULL");
    if (hold->watch.deadline_ns != INT64_MAX)
        watchdog_unwatch(hold);
    int held = HOLD_HELD;
    if (atomic_compare_exchange_strong(&hold->state, &held, HOLD_RELEASED)) {
        hold->release(hold->arg);
        free(hold);
        return TP_OK;
    }
    int64_t timeout_ms = hold->timeout_ns / 1000000;
    free(hold);
    return tp_fail(TP_ERR_NOT_READY, "tp_hold_release: the hold ran out after %" PRId64 " ms and released itself",
                   timeout_ms);
}

tp_status tp_stream_hold_window(tp_stream *stream, int64_t *ops)
{
    if (!stream || !ops)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_hold_window: %s is NULL", stream ? "ops" : "stream");
    if (!stream->backend->stream_hold)
        return tp_unsupported(stream->backend, "holding a stream (tp_stream_hold_window)");
    if (!stream->backend->stream_hold_window) {
        *ops = INT64_MAX;
        return TP_OK;
    }
    return stream->backend->stream_hold_window(stream, ops);
}
