/*
 * A device's state for notifying other backends (gpu_notify.c), kept in gpu_device.
 */
#ifndef TPEVENT_BACKENDS_GPU_NOTIFIER_H
#define TPEVENT_BACKENDS_GPU_NOTIFIER_H

#include "common/free_list.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct gpu_notify_call gpu_notify_call;

typedef struct gpu_notifier {
    pthread_mutex_t lock;
    pthread_cond_t polled_added; /* monotonic: the poller sleeps on it between passes */
    gpu_notify_call *polled;     /* under lock: the poller's */
    bool fresh;                  /* under lock: calls added since the poller took them */
    bool poller_started;         /* under lock */
    tp_free_list spare;          /* of gpu_notify_call: calls done with, taken again first */
} gpu_notifier;

#endif /* TPEVENT_BACKENDS_GPU_NOTIFIER_H */
