/*
 * The stream entries. A stream is a timeline of its own on its device's queue
 * (vk_worker.c); its native handle is that VkQueue, shared by the device's
 * streams. One priority (0): the queue is made with one.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/thread.h"

#include <stdlib.h>

static tp_status stream_new(int index, unsigned kind, const char *call, vk_stream **out)
{
    vk_device *device = tp_vk_device(index);
    vk_stream *stream = calloc(1, sizeof *stream);
    if (!stream)
        return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    tp_status status = tp_vk_timeline_take(device, call, &stream->timeline);
    if (status != TP_OK) {
        free(stream);
        return status;
    }
    stream->head = (tp_stream){.backend = tp_vk_table(), .device = {TP_DEVICE_VULKAN, index}, .kind = kind};
    stream->device = device;
    atomic_init(&stream->refs, 1);
    pthread_mutex_init(&stream->lock, NULL);
    pthread_cond_init(&stream->wake, NULL);
    pthread_cond_init(&stream->done, NULL);
    pthread_mutex_lock(&device->lock);
    stream->next = device->streams;
    if (device->streams)
        device->streams->prev = stream;
    device->streams = stream;
    pthread_mutex_unlock(&device->lock);
    *out = stream;
    return TP_OK;
}

tp_status tp_vk_stream_create(int device, int priority, tp_stream **out)
{
    (void)priority; /* clamped to the one priority, 0 */
    vk_stream *stream = NULL;
    tp_status status = stream_new(device, 0, "tp_stream_create", &stream);
    if (status == TP_OK)
        *out = &stream->head;
    return status;
}

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;

tp_status tp_vk_stream_default(int index, tp_stream **out)
{
    vk_device *device = tp_vk_device(index);
    pthread_mutex_lock(&default_lock);
    tp_status status = TP_OK;
    if (!device->default_stream)
        status = stream_new(index, TP_STREAM_DEFAULT, "tp_stream_default", &device->default_stream);
    if (status == TP_OK)
        *out = &device->default_stream->head;
    pthread_mutex_unlock(&default_lock);
    return status;
}

tp_status tp_vk_stream_destroy(tp_stream *handle)
{
    tp_vk_stream_close((vk_stream *)handle); /* pending work runs on (rule 9) */
    return TP_OK;
}

tp_status tp_vk_stream_query(tp_stream *handle, bool *idle)
{
    *idle = tp_vk_stream_idle((vk_stream *)handle);
    return TP_OK;
}

/* Rule 15: from one of the stream's host functions, its own work never ends. */
static tp_status refuse_self_wait(const char *call, const char *what)
{
    return tp_vk_host()->fail(TP_ERR_INVALID_ARGUMENT,
                              "%s: called from a host function of %s, whose later work waits for that function "
                              "to return: the wait would never end",
                              call, what);
}

bool tp_vk_stream_waits_for_itself(tp_stream *handle)
{
    uint64_t after = 0;
    return tp_vk_running_stream(&after) == (vk_stream *)handle;
}

tp_status tp_vk_stream_synchronize(tp_stream *handle)
{
    static const char call[] = "tp_stream_synchronize";
    if (tp_vk_stream_waits_for_itself(handle))
        return refuse_self_wait(call, "this stream");
    return tp_vk_stream_drain((vk_stream *)handle, call);
}

tp_status tp_vk_stream_launch_host_fn(tp_stream *handle, void (*fn)(void *), void *arg)
{
    return tp_vk_stream_host_fn((vk_stream *)handle, fn, arg);
}

void *tp_vk_stream_native(tp_stream *handle)
{
    return (void *)((vk_stream *)handle)->device->queue;
}

tp_status tp_vk_stream_hold(tp_stream *handle, void (**release)(void *), void **arg)
{
    return tp_vk_stream_gate((vk_stream *)handle, release, arg);
}

/* A reference on a stream of the device's list unless its last one is gone (it is
 * then on its way out of the list, waiting for the device's lock). */
static bool ref_if_alive(vk_stream *stream)
{
    int refs = atomic_load_explicit(&stream->refs, memory_order_relaxed);
    while (refs > 0)
        if (atomic_compare_exchange_weak_explicit(&stream->refs, &refs, refs + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

tp_status tp_vk_device_synchronize(int index)
{
    static const char call[] = "tp_device_synchronize";
    vk_device *device = tp_vk_device(index);
    uint64_t after = 0;
    vk_stream *running = tp_vk_running_stream(&after);
    if (running && running->device == device)
        return refuse_self_wait(call, "one of the device's streams");
    /* Every stream not yet freed, destroyed ones with work left included (rule 9):
     * each with a reference, so that none goes while it is waited for. */
    pthread_mutex_lock(&device->lock);
    size_t count = 0;
    for (vk_stream *s = device->streams; s; s = s->next)
        count++;
    vk_stream **all = calloc(count ? count : 1, sizeof *all);
    if (!all) {
        pthread_mutex_unlock(&device->lock);
        return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    }
    count = 0;
    for (vk_stream *s = device->streams; s; s = s->next)
        if (ref_if_alive(s))
            all[count++] = s;
    /* And the last work of the streams already freed (rule 9: it runs on, and is the
     * device's): their timelines are in the pool, each with the value it ended at. */
    size_t pooled = 0;
    for (const vk_timeline *t = device->free_timelines; t; t = t->next_free)
        pooled++;
    timeline_goal *goals = calloc(pooled ? pooled : 1, sizeof *goals);
    pooled = 0;
    for (const vk_timeline *t = device->free_timelines; goals && t; t = t->next_free)
        goals[pooled++] = (timeline_goal){t, t->issued};
    pthread_mutex_unlock(&device->lock);
    tp_status status = goals ? TP_OK : tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    for (size_t i = 0; i < count; i++) {
        if (status == TP_OK)
            status = tp_vk_stream_drain(all[i], call);
        tp_vk_stream_unref(all[i]);
    }
    for (size_t i = 0; status == TP_OK && i < pooled; i++)
        status = tp_vk_timeline_wait(goals[i].timeline, goals[i].value, true, call);
    free(goals);
    free(all);
    return status;
}
