/*
 * The device's notifier (gpu_notify.c): the poller thread that calls snapshot_notify's
 * functions once their markers are reached, whole in one header: its state, kept in
 * gpu_device (by value: a device's fields are set up at init, never allocated
 * later), its set-up and its calls. Included by gpu_internal.h after the runtime
 * mapping, whose rt_* types it uses; gpu_device is declared after it, hence `struct`.
 */
#ifndef TPEVENT_BACKENDS_GPU_NOTIFY_H
#define TPEVENT_BACKENDS_GPU_NOTIFY_H

#include "common/free_list.h"
#include "common/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct gpu_device;
typedef struct gpu_notify_call gpu_notify_call;

typedef struct gpu_notifier {
    pthread_mutex_t lock;
    pthread_cond_t polled_added; /* monotonic: the poller sleeps on it between passes */
    gpu_notify_call *polled;     /* under lock: the poller's */
    bool fresh;                  /* under lock: calls added since the poller took them */
    bool poller_started;         /* under lock */
    tp_free_list spare;          /* of gpu_notify_call: calls done with, taken again first */
} gpu_notifier;

/* A device's notifier at backend init (gpu_device.c), zeroed before: no poller yet,
 * started by the first notify. */
static inline void gpu_notifier_init(gpu_notifier *notifier)
{
    pthread_mutex_init(&notifier->lock, NULL);
    tp_cond_init_monotonic(&notifier->polled_added);
    pthread_mutex_init(&notifier->spare.lock, NULL);
}

/* rt_event_query of tpevent's own, from any thread: the device's context where needed,
 * relaxed (rule 16); *call names what failed. */
rt_error gpu_event_query_relaxed(const struct gpu_device *device, rt_event event, const char **call);

/* snapshot_notify's mechanism: the device's poller calls fn(arg) once it sees the
 * marker reached (late by a pass and a pause at most, never early). */
tp_status gpu_notify_when_reached(struct gpu_device *device, rt_event marker, void (*fn)(void *), void *arg);
/* The same for a counter in host memory that only grows (an interprocess event's
 * page, gpu_ipc_page.c): fn(arg) once *counter >= value, as the poller sees it. */
tp_status gpu_notify_when_counter_reaches(struct gpu_device *device, const _Atomic uint64_t *counter, uint64_t value,
                                          void (*fn)(void *), void *arg);

#endif /* TPEVENT_BACKENDS_GPU_NOTIFY_H */
