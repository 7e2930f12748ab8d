/*
 * tp_stream_hold, tp_hold_release, tp_stream_hold_window (rule 17): the public hold,
 * over the backends' stream_hold entry (what waits across backends hold a stream
 * with, core/wait_across.c).
 *
 * The watchdog. A hold with a timeout is on one list, and one thread (started at
 * the first such hold, then kept) sleeps until the earliest deadline. Exactly one of
 * the release and the watchdog lets the stream go: each claims the hold by moving
 * its state from HELD, and only the winner calls the backend's release. The hold is
 * freed by tp_hold_release alone, whoever won: the watchdog takes what it needs
 * (the release and its argument) under the list's lock, and tp_hold_release takes
 * the hold off the list under that lock before it looks, so the hold is never freed
 * while the watchdog reads it.
 *
 * fork(): the child has no watchdog thread; its handler empties the list (the
 * parent's holds do not cross, DESIGN) so that the child's first hold starts one.
 */
#include "core/internal.h"

#include "common/clock.h"
#include "common/thread.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

enum { HOLD_HELD, HOLD_RELEASED, HOLD_RAN_OUT };

struct tp_hold {
    void (*release)(void *);
    void *arg;
    int64_t timeout_ns;
    int64_t deadline_ns; /* CLOCK_MONOTONIC; INT64_MAX: not watched */
    atomic_int state;    /* HOLD_* */
    /* On the watchdog's list, under its lock. */
    struct tp_hold *prev, *next;
    bool watched;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* CLOCK_MONOTONIC: a hold added, or the thread's first wait */
    tp_hold *first;
    bool running;
    pthread_once_t once;
} watchdog = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

/* ---------------------------------------------------------------- watchdog */

static void watchdog_unlink_locked(tp_hold *hold)
{
    if (hold->prev)
        hold->prev->next = hold->next;
    else
        watchdog.first = hold->next;
    if (hold->next)
        hold->next->prev = hold->prev;
    hold->watched = false;
}

/* Under the lock: the earliest watched hold, NULL if none. */
static tp_hold *watchdog_earliest_locked(void)
{
    tp_hold *earliest = watchdog.first;
    for (tp_hold *h = watchdog.first; h; h = h->next)
        if (h->deadline_ns < earliest->deadline_ns)
            earliest = h;
    return earliest;
}

static void *watchdog_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&watchdog.lock);
    for (;;) {
        tp_hold *due = watchdog_earliest_locked();
        if (!due) {
            pthread_cond_wait(&watchdog.changed, &watchdog.lock);
            continue;
        }
        if ((int64_t)tp_now_ns() < due->deadline_ns) {
            struct timespec until = {.tv_sec = due->deadline_ns / 1000000000, .tv_nsec = due->deadline_ns % 1000000000};
            (void)pthread_cond_timedwait(&watchdog.changed, &watchdog.lock, &until);
            continue;
        }
        watchdog_unlink_locked(due);
        int held = HOLD_HELD;
        if (!atomic_compare_exchange_strong(&due->state, &held, HOLD_RAN_OUT))
            continue; /* released meanwhile (then it is off the list already: not reached) */
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
    watchdog.first = NULL;
    watchdog.running = false;
}

static void watchdog_setup(void)
{
    tp_cond_init_monotonic(&watchdog.changed);
    (void)pthread_atfork(NULL, NULL, watchdog_forget_after_fork);
}

/* Puts the hold on the list, starting the thread if none runs. */
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
    if (status == TP_OK) {
        hold->prev = NULL;
        hold->next = watchdog.first;
        if (watchdog.first)
            watchdog.first->prev = hold;
        watchdog.first = hold;
        hold->watched = true;
        pthread_cond_signal(&watchdog.changed);
    }
    pthread_mutex_unlock(&watchdog.lock);
    return status;
}

static void watchdog_unwatch(tp_hold *hold)
{
    pthread_mutex_lock(&watchdog.lock);
    if (hold->watched)
        watchdog_unlink_locked(hold);
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
    hold->watched = false;
    int64_t now = (int64_t)tp_now_ns();
    hold->deadline_ns = timeout_ns >= INT64_MAX - now ? INT64_MAX : now + timeout_ns;
    if (hold->deadline_ns != INT64_MAX && (status = watchdog_watch(hold)) != TP_OK) {
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
    if (hold->deadline_ns != INT64_MAX)
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
