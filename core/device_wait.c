/*
 * tp_device_synchronize_for: the device-wide wait with a time limit, so that a
 * caller (Python, between its signal checks) can wait in slices.
 *
 * Backends have no query for a whole device, only the blocking device_synchronize,
 * so the blocking call runs on a helper thread, one per device at a time, and the
 * callers wait for it on a condition variable with their deadline. A wait asked for
 * at some moment is answered by a device_synchronize that started after it (work
 * submitted before the call is then done): each caller needs the generation after
 * the one running, and the helper runs generations until none is needed any more,
 * then ends. A caller whose time runs out leaves; the helper finishes on its own
 * (a device that never gets idle keeps one thread busy, as a blocked
 * tp_device_synchronize would). The slices of one Python wait ask for the same
 * generation while it runs, so they cost one device_synchronize, plus one after it
 * at most.
 */
#include "core/internal.h"
#include "common/thread.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct device_waiter {
    bool running;    /* a helper thread serves the device */
    uint64_t wanted; /* the generation the latest caller needs */
    uint64_t started, finished;
    tp_status status;   /* of the generation `finished`, with its message */
    char message[1024]; /* as long as a thread's message (core/error.c) */
    const tp_backend *backend;
    int index;
} device_waiter;

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    pthread_cond_t done; /* on CLOCK_MONOTONIC, as every deadline of tpevent */
    device_waiter devices[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES];
} waiters = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void init_done_condition(void)
{
    tp_cond_init_monotonic(&waiters.done);
}

static void *helper_main(void *arg)
{
    device_waiter *w = arg;
    pthread_mutex_lock(&waiters.lock);
    while (w->started < w->wanted) {
        uint64_t generation = ++w->started;
        const tp_backend *backend = w->backend;
        int index = w->index;
        pthread_mutex_unlock(&waiters.lock);
        tp_status status = backend->device_synchronize(index);
        pthread_mutex_lock(&waiters.lock);
        w->finished = generation;
        w->status = status;
        snprintf(w->message, sizeof w->message, "%s", status == TP_OK ? "" : tp_last_error());
        pthread_cond_broadcast(&waiters.done);
    }
    w->running = false;
    pthread_mutex_unlock(&waiters.lock);
    return NULL;
}

/* Under the lock: a helper serves the device (started if none does). */
static tp_status ensure_helper(device_waiter *w)
{
    if (w->running)
        return TP_OK;
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&thread, &attr, helper_main, w);
    pthread_attr_destroy(&attr);
    if (err != 0)
        return tp_fail(err == ENOMEM ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND,
                       "tp_device_synchronize_for: cannot start its helper thread: %s", strerror(err));
    w->running = true;
    return TP_OK;
}

static struct timespec deadline_of(int64_t timeout_ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    int64_t s = timeout_ns / 1000000000, ns = timeout_ns % 1000000000 + t.tv_nsec;
    t.tv_sec += (time_t)(s + ns / 1000000000);
    t.tv_nsec = (long)(ns % 1000000000);
    return t;
}

tp_status tp_device_synchronize_for(const char *str, int64_t timeout_ns)
{
    if (timeout_ns < 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_synchronize_for: timeout_ns is negative (%" PRId64 ")",
                       timeout_ns);
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->device_synchronize)
        return tp_fail(TP_ERR_UNSUPPORTED, "%s backend does not support device_synchronize", backend->name);
    /* A billion seconds is forever, and keeps the deadline's arithmetic in range. */
    struct timespec deadline = deadline_of(timeout_ns < 1000000000LL * 1000000000LL ? timeout_ns : INT64_MAX / 4);
    device_waiter *w = &waiters.devices[device.type][device.index];
    pthread_once(&waiters.once, init_done_condition);
    pthread_mutex_lock(&waiters.lock);
    w->backend = backend;
    w->index = device.index;
    uint64_t needed = w->started + 1;
    if (w->wanted < needed)
        w->wanted = needed;
    status = ensure_helper(w);
    while (status == TP_OK && w->finished < needed)
        if (pthread_cond_timedwait(&waiters.done, &waiters.lock, &deadline) == ETIMEDOUT && w->finished < needed)
            status = tp_fail(TP_ERR_NOT_READY,
                             "tp_device_synchronize_for: the time ran out (%" PRId64
                             " ns) before the device's work was done",
                             timeout_ns);
    if (status == TP_OK && w->status != TP_OK)
        status = tp_fail(w->status, "%s", w->message);
    pthread_mutex_unlock(&waiters.lock);
    return status;
}

/* fork(): no helper thread exists in the child, and the lock may have been held. */
static void forget_device_waiters_after_fork(void)
{
    (void)pthread_mutex_init(&waiters.lock, NULL);
    waiters.once = (pthread_once_t)PTHREAD_ONCE_INIT; /* the condition is made anew at first use */
    memset(waiters.devices, 0, sizeof waiters.devices);
}

__attribute__((constructor)) static void register_device_waiters_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, forget_device_waiters_after_fork);
}
