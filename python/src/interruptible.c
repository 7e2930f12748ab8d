/*
 * Blocking calls that Ctrl-C interrupts (docs/design.md, pitfalls: Python), beyond
 * Event.synchronize and Stream.synchronize (wait.c):
 *
 *   - a wait for an event's latest record (elapsed_time, timestamp) and the
 *     device-wide wait (tpevent.synchronize) run in wait.c's slices, through
 *     tp_event_synchronize_for and tp_device_synchronize_for;
 *   - tp_trace_stop, one C call that waits for the trace's records, runs on a
 *     thread of its own while the caller waits for it in the same slices. On a
 *     signal the caller raises at once; the stop goes on in the background and
 *     ends within its own limit (TPEVENT_TRACE_STOP_TIMEOUT_MS), the trace written
 *     or dropped, and the next trace_start works once it has.
 */
#include "tpevent_python.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLICE_NS (50 * 1000000LL)

static tp_status event_slice(void *event, int64_t timeout_ns)
{
    return tp_event_synchronize_for(event, timeout_ns);
}

int tppy_wait_reached(tp_event *event)
{
    PyObject *done = tppy_wait(event_slice, event, -1, "Event.synchronize");
    Py_XDECREF(done);
    return done ? 0 : -1;
}

static tp_status device_slice(void *device, int64_t timeout_ns)
{
    return tp_device_synchronize_for(device, timeout_ns);
}

PyObject *tppy_wait_device(const char *device)
{
    return tppy_wait(device_slice, (void *)device, -1, "synchronize");
}

/* ---------------------------------------------------------- trace stop */

typedef struct stop_call {
    atomic_int owners; /* the caller and the thread: the last one frees it */
    pthread_mutex_t lock;
    pthread_cond_t ended;
    bool done;
    tp_status status;
    char message[1024];
    char path[];
} stop_call;

static void stop_call_release(stop_call *call)
{
    if (atomic_fetch_sub(&call->owners, 1) != 1)
        return;
    pthread_cond_destroy(&call->ended);
    pthread_mutex_destroy(&call->lock);
    free(call);
}

static void *stop_main(void *arg)
{
    stop_call *call = arg;
    tp_status status = tp_trace_stop(call->path);
    pthread_mutex_lock(&call->lock);
    call->status = status;
    snprintf(call->message, sizeof call->message, "%s", status == TP_OK ? "" : tp_last_error());
    call->done = true;
    pthread_cond_signal(&call->ended);
    pthread_mutex_unlock(&call->lock);
    stop_call_release(call);
    return NULL;
}

static stop_call *stop_call_start(const char *path)
{
    size_t length = strlen(path);
    stop_call *call = calloc(1, sizeof *call + length + 1);
    if (!call)
        return NULL;
    memcpy(call->path, path, length + 1);
    atomic_init(&call->owners, 2);
    pthread_mutex_init(&call->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&call->ended, &attr);
    pthread_condattr_destroy(&attr);
    pthread_attr_t thread_attr;
    pthread_t thread;
    pthread_attr_init(&thread_attr);
    pthread_attr_setdetachstate(&thread_attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&thread, &thread_attr, stop_main, call);
    pthread_attr_destroy(&thread_attr);
    if (err != 0) {
        atomic_store(&call->owners, 1);
        stop_call_release(call);
        return NULL;
    }
    return call;
}

/* Without the GIL: true once the stop has ended, false after a slice. */
static bool stop_call_ended_within_slice(stop_call *call)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += SLICE_NS;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&call->lock);
    while (!call->done && pthread_cond_timedwait(&call->ended, &call->lock, &deadline) != ETIMEDOUT)
        ;
    bool done = call->done;
    pthread_mutex_unlock(&call->lock);
    return done;
}

PyObject *tppy_trace_stop_interruptible(const char *path)
{
    stop_call *call = stop_call_start(path);
    if (!call)
        return PyErr_NoMemory();
    for (;;) {
        bool done;
        Py_BEGIN_ALLOW_THREADS
        done = stop_call_ended_within_slice(call);
        Py_END_ALLOW_THREADS
        if (done)
            break;
        if (PyErr_CheckSignals() < 0) {
            stop_call_release(call); /* the thread ends the stop and frees the call */
            return NULL;
        }
    }
    tp_status status = call->status;
    PyObject *result = status == TP_OK ? Py_None : tppy_raise_with(status, call->message);
    Py_XINCREF(result);
    stop_call_release(call);
    return result;
}
