/*
 * Stream entries: owned streams, borrowed wrappers, default streams, and waiting
 * for a stream or a whole device.
 */
#include "backends/cpu/cpu_internal.h"

#include <stdlib.h>

static cpu_queue *queue_of(tp_stream *stream)
{
    return ((cpu_stream *)stream)->queue;
}

static int clamp_priority(int priority)
{
    if (priority < TP_CPU_PRIORITY_HIGHEST)
        return TP_CPU_PRIORITY_HIGHEST;
    return priority > 0 ? 0 : priority;
}

tp_status tp_cpu_stream_create(int device, int priority, tp_stream **out)
{
    cpu_queue *queue;
    tp_status status = tp_cpu_queue_create(tp_cpu_device(device), clamp_priority(priority), 0, "tp_stream_create",
                                           &queue);
    if (status != TP_OK)
        return status;
    *out = &queue->own.head;
    return TP_OK;
}

/* The live queue whose native handle is `native`, with a handle and a reference
 * taken for the caller, or NULL. Only the devices' lists are read, never `native`
 * itself: a pointer that is no live stream of this process (garbage, a destroyed
 * stream's freed memory) is compared, not followed. Under the device's lock, then
 * the queue's (the lock order), so that the queue cannot go meanwhile: a queue on
 * a list holds a reference of its own. */
static cpu_queue *find_live_queue(const void *native, int *device_index)
{
    int count = tp_cpu_device_count();
    for (int i = 0; i < count; i++) {
        cpu_device *device = tp_cpu_device(i);
        pthread_mutex_lock(&device->lock);
        for (cpu_queue *queue = device->queues; queue; queue = queue->next) {
            if ((const void *)&queue->own.head != native)
                continue;
            pthread_mutex_lock(&queue->lock);
            bool open = queue->handles > 0; /* 0: destroyed, its worker draining it */
            if (open)
                queue->handles++;
            pthread_mutex_unlock(&queue->lock);
            if (open)
                tp_cpu_queue_ref(queue);
            pthread_mutex_unlock(&device->lock);
            *device_index = i;
            return open ? queue : NULL;
        }
        pthread_mutex_unlock(&device->lock);
    }
    return NULL;
}

tp_status tp_cpu_stream_from_native(int device, void *native, tp_stream **out)
{
    /* The native handle of a CPU stream is its owner's tp_stream (what
     * tp_stream_native answers, for a wrapper too); the backend knows which are
     * live, so anything else is refused without being read. */
    if (!native)
        return tp_cpu_host()->fail(TP_ERR_INVALID_ARGUMENT, "tp_stream_from_native: native is NULL");
    int found_device = -1;
    cpu_queue *queue = find_live_queue(native, &found_device);
    if (!queue)
        return tp_cpu_host()->fail(TP_ERR_INVALID_ARGUMENT,
                                   "tp_stream_from_native: %p is not a live cpu stream (never one, or destroyed)",
                                   native);
    if (found_device != device) {
        tp_cpu_queue_close_handle(queue);
        tp_cpu_queue_unref(queue);
        return tp_cpu_host()->fail(TP_ERR_DEVICE_MISMATCH,
                                   "tp_stream_from_native: the native stream is of cpu:%d, not of cpu:%d", found_device,
                                   device);
    }
    cpu_stream *wrapper = malloc(sizeof *wrapper);
    if (!wrapper) {
        tp_cpu_queue_close_handle(queue);
        tp_cpu_queue_unref(queue);
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_from_native: out of memory");
    }
    wrapper->head = (tp_stream){
        .backend = tp_cpu_table(),
        .device = queue->own.head.device,
        .priority = queue->own.head.priority,
        .kind = TP_STREAM_BORROWED,
    };
    wrapper->queue = queue;
    *out = &wrapper->head;
    return TP_OK;
}

tp_status tp_cpu_stream_default(int index, tp_stream **out)
{
    cpu_device *device = tp_cpu_device(index);
    cpu_queue *queue = atomic_load_explicit(&device->default_queue, memory_order_acquire);
    if (!queue) {
        /* First use: create one and publish it; a thread that loses the race
         * drops its own, which never had work. */
        cpu_queue *created;
        tp_status status = tp_cpu_queue_create(device, 0, TP_STREAM_DEFAULT, "tp_stream_default", &created);
        if (status != TP_OK)
            return status;
        queue = NULL;
        if (atomic_compare_exchange_strong_explicit(&device->default_queue, &queue, created, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            queue = created;
        } else {
            tp_cpu_queue_close_handle(created);
            tp_cpu_queue_unref(created);
        }
    }
    *out = &queue->own.head;
    return TP_OK;
}

TP_COLD static tp_status destroy_capturing_fail(const cpu_queue *queue)
{
    return tp_cpu_host()->fail(TP_ERR_CAPTURING,
                               "tp_stream_destroy: the cpu:%d stream %p is part of a capture still open: end the "
                               "capture first, on the stream it began on (tp_stream_end_capture)",
                               queue->device->index, (const void *)&queue->own.head);
}

tp_status tp_cpu_stream_destroy(tp_stream *stream)
{
    cpu_stream *handle = (cpu_stream *)stream;
    cpu_queue *queue = handle->queue;
    /* Rule 16: the capture would be left with no way to end (or a branch gone);
     * a wrapper of the stream may go, the stream stays. */
    if (TP_UNLIKELY(atomic_load_explicit(&queue->capture, memory_order_acquire) != NULL) && handle == &queue->own)
        return destroy_capturing_fail(queue);
    /* Never blocks: pending work runs on, and the worker and the snapshots hold
     * the queue until it is done (rule 9). */
    tp_cpu_queue_close_handle(queue);
    if (handle != &queue->own)
        free(handle); /* a borrowed wrapper; the owner's handle lives in the queue */
    tp_cpu_queue_unref(queue);
    return TP_OK;
}

TP_COLD static tp_status capturing_fail(const cpu_queue *queue, const char *operation)
{
    return tp_cpu_host()->fail(TP_ERR_CAPTURING,
                               "%s: the cpu:%d stream %p is capturing: its work runs only when the graph is "
                               "launched (rule 16)",
                               operation, queue->device->index, (const void *)&queue->own.head);
}

tp_status tp_cpu_stream_query(tp_stream *stream, bool *idle)
{
    cpu_queue *queue = queue_of(stream);
    if (TP_UNLIKELY(atomic_load_explicit(&queue->capture, memory_order_relaxed) != NULL))
        return capturing_fail(queue, "tp_stream_query");
    *idle = tp_cpu_queue_reached(queue, atomic_load_explicit(&queue->submitted, memory_order_acquire));
    return TP_OK;
}

tp_status tp_cpu_stream_synchronize(tp_stream *stream)
{
    cpu_queue *queue = queue_of(stream);
    if (TP_UNLIKELY(atomic_load_explicit(&queue->capture, memory_order_relaxed) != NULL))
        return capturing_fail(queue, "tp_stream_synchronize");
    uint64_t submitted = atomic_load_explicit(&queue->submitted, memory_order_acquire);
    return tp_cpu_queue_wait(queue, submitted, CPU_WAIT_SPIN_THEN_SLEEP, "tp_stream_synchronize");
}

bool tp_cpu_stream_waits_for_itself(tp_stream *stream)
{
    cpu_queue *queue = queue_of(stream);
    return tp_cpu_current_worker == queue &&
           !tp_cpu_queue_reached(queue, atomic_load_explicit(&queue->submitted, memory_order_acquire));
}

static void host_fn_task(void *arg, cpu_word fn)
{
    fn.fn(arg);
}

tp_status tp_cpu_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg)
{
    cpu_task task = {.run = host_fn_task, .arg = arg, .word.fn = fn};
    return tp_cpu_queue_submit(queue_of(stream), &task, "tp_stream_launch_host_fn");
}

void *tp_cpu_stream_native(tp_stream *stream)
{
    /* A wrapper answers the stream it wraps, as a CUDA wrapper answers the
     * cudaStream_t it was given. */
    return &queue_of(stream)->own.head;
}

/* ------------------------------------------------------------------ device */

typedef struct queue_mark {
    cpu_queue *queue;
    uint64_t seq;
} queue_mark;

tp_status tp_cpu_device_synchronize(int index)
{
    cpu_device *device = tp_cpu_device(index);
    /* Marks every queue's work as of now under the device's lock, then waits
     * unlocked, so that streams may come and go meanwhile. A queue on the list
     * always holds a reference of its own (handle or worker), so taking one here
     * is safe. */
    pthread_mutex_lock(&device->lock);
    size_t count = device->queue_count;
    queue_mark *marks = count ? malloc(count * sizeof *marks) : NULL;
    if (count && !marks) {
        pthread_mutex_unlock(&device->lock);
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY,
                                   "tp_device_synchronize: out of memory for %zu streams of cpu:%d", count, index);
    }
    size_t n = 0;
    for (cpu_queue *queue = device->queues; queue; queue = queue->next) {
        tp_cpu_queue_ref(queue);
        marks[n].queue = queue;
        marks[n].seq = atomic_load_explicit(&queue->submitted, memory_order_acquire);
        n++;
    }
    pthread_mutex_unlock(&device->lock);

    tp_status status = TP_OK;
    for (size_t i = 0; i < n; i++) {
        if (status == TP_OK)
            status = tp_cpu_queue_wait(marks[i].queue, marks[i].seq, CPU_WAIT_SLEEP, "tp_device_synchronize");
        tp_cpu_queue_unref(marks[i].queue);
    }
    free(marks);
    return status;
}
