/*
 * stream_hold (core/backend.h): a task on the stream's FIFO that blocks its worker
 * until the release comes. The worker is the stream's own thread and serves
 * nothing else, so blocking it holds back this stream alone (rule 14).
 *
 * The core does not use this for the waits it makes (a CPU stream waits on another
 * backend's record with a host function that blocks on the record itself, lower
 * latency: see host_fn_may_block); it is the entry for waits on a condition that is
 * only known through a callback, and it keeps the table complete.
 *
 * A hold is shared by the task and the release, each dropping one reference, so
 * either may come first; a stream destroyed before the release keeps its worker
 * until the task has run (rule 9).
 */
#include "backends/cpu/cpu_internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct cpu_hold {
    pthread_mutex_t lock;
    pthread_cond_t released_cond;
    bool released;
    atomic_uint refs; /* the task's and the release's */
} cpu_hold;

static void hold_unref(cpu_hold *hold)
{
    if (atomic_fetch_sub_explicit(&hold->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_cond_destroy(&hold->released_cond);
    pthread_mutex_destroy(&hold->lock);
    free(hold);
}

static void hold_release(void *arg)
{
    cpu_hold *hold = arg;
    pthread_mutex_lock(&hold->lock);
    hold->released = true;
    pthread_cond_signal(&hold->released_cond);
    pthread_mutex_unlock(&hold->lock);
    hold_unref(hold);
}

static void hold_task(void *arg, cpu_word word)
{
    (void)word;
    cpu_hold *hold = arg;
    pthread_mutex_lock(&hold->lock);
    while (!hold->released)
        pthread_cond_wait(&hold->released_cond, &hold->lock);
    pthread_mutex_unlock(&hold->lock);
    hold_unref(hold);
}

tp_status tp_cpu_stream_hold(tp_stream *stream, void (**release)(void *), void **arg)
{
    cpu_hold *hold = malloc(sizeof *hold);
    if (!hold)
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    pthread_mutex_init(&hold->lock, NULL);
    pthread_cond_init(&hold->released_cond, NULL);
    hold->released = false;
    atomic_init(&hold->refs, 2);
    cpu_task task = {.run = hold_task, .arg = hold};
    tp_status status = tp_cpu_queue_submit(((cpu_stream *)stream)->queue, &task, "stream_hold");
    if (status != TP_OK) {
        atomic_store_explicit(&hold->refs, 1, memory_order_relaxed);
        hold_unref(hold);
        return status;
    }
    *release = hold_release;
    *arg = hold;
    return TP_OK;
}

tp_status tp_cpu_wait_mechanism(int device, char *buf, size_t size)
{
    (void)device;
    snprintf(buf, size,
             "a task on the stream's own worker blocks on the record (spins ~20 us, then sleeps; "
             "sleeps at once with TP_EVENT_BLOCKING)");
    return TP_OK;
}
