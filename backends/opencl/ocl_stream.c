/*
 * Streams: in-order command queues with profiling, made by tpevent (created, the
 * device's default) or wrapped from a caller's cl_command_queue. A destroyed
 * stream's queue is released (OpenCL flushes it and runs its work on, rule 9), or,
 * once its handle was given out, kept in the device's pool and reused by a later
 * stream once the marker enqueued at its destroy has completed (rule 19).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/spin.h"

#include <stdlib.h>

static void stream_link(ocl_device *device, ocl_stream *stream)
{
    pthread_mutex_lock(&device->lock);
    stream->prev = NULL;
    stream->next = device->streams;
    if (device->streams)
        device->streams->prev = stream;
    device->streams = stream;
    pthread_mutex_unlock(&device->lock);
}

static void stream_unlink(ocl_device *device, ocl_stream *stream)
{
    pthread_mutex_lock(&device->lock);
    if (stream->prev)
        stream->prev->next = stream->next;
    else
        device->streams = stream->next;
    if (stream->next)
        stream->next->prev = stream->prev;
    pthread_mutex_unlock(&device->lock);
}

/* A pooled queue whose work is done, or NULL (rule 19: never one still busy). */
static cl_command_queue pooled_queue_take(ocl_device *device)
{
    cl_command_queue queue = NULL;
    pthread_mutex_lock(&device->lock);
    for (int i = 0; i < device->pooled_count && !queue; i++) {
        cl_int state = CL_QUEUED;
        clGetEventInfo(device->pooled[i].tail, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
        if (state > CL_COMPLETE)
            continue;
        queue = device->pooled[i].queue;
        clReleaseEvent(device->pooled[i].tail);
        device->pooled[i] = device->pooled[--device->pooled_count];
    }
    pthread_mutex_unlock(&device->lock);
    return queue;
}

/* Keeps a queue whose handle was given out; false when there is no room (the
 * queue then leaks rather than dies under its holder). */
static bool pooled_queue_give(ocl_device *device, cl_command_queue queue)
{
    cl_event tail = NULL;
    if (clEnqueueMarkerWithWaitList(queue, 0, NULL, &tail) != CL_SUCCESS || clFlush(queue) != CL_SUCCESS)
        return false;
    pthread_mutex_lock(&device->lock);
    bool kept = device->pooled_count < device->pooled_capacity;
    if (!kept) {
        int capacity = device->pooled_capacity ? device->pooled_capacity * 2 : 8;
        ocl_pooled_queue *grown = realloc(device->pooled, (size_t)capacity * sizeof *grown);
        if (grown) {
            device->pooled = grown;
            device->pooled_capacity = capacity;
            kept = true;
        }
    }
    if (kept)
        device->pooled[device->pooled_count++] = (ocl_pooled_queue){queue, tail};
    pthread_mutex_unlock(&device->lock);
    if (!kept)
        clReleaseEvent(tail);
    return kept;
}

static tp_status stream_new(ocl_device *device, cl_context context, cl_command_queue queue, unsigned kind,
                            tp_stream **out)
{
    ocl_stream *stream = calloc(1, sizeof *stream);
    if (!stream)
        return tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_create: out of memory");
    stream->head = (tp_stream){
        .backend = tp_ocl_table(), .device = {TP_DEVICE_OPENCL, device->index}, .priority = 0, .kind = kind};
    stream->device = device;
    stream->context = context;
    stream->queue = queue;
    stream->borrowed = kind & TP_STREAM_BORROWED;
    atomic_init(&stream->given_out, false);
    atomic_init(&stream->enqueued, false); /* a new queue, or a pooled one whose work is done */
    pthread_mutex_init(&stream->lock, NULL);
    stream_link(device, stream);
    *out = &stream->head;
    return TP_OK;
}

tp_status tp_ocl_stream_create(int index, int priority, tp_stream **out)
{
    (void)priority; /* one priority: cl_khr_priority_hints is not on every platform */
    ocl_device *device = tp_ocl_device(index);
    cl_command_queue queue = pooled_queue_take(device);
    bool pooled = queue != NULL;
    if (!queue && !(queue = tp_ocl_queue_create(device, "tp_stream_create")))
        return TP_ERR_BACKEND;
    tp_status status = stream_new(device, device->context, queue, 0, out);
    if (status != TP_OK)
        clReleaseCommandQueue(queue);
    else if (pooled) /* its handle is still out there: it goes back to the pool */
        atomic_store(&((ocl_stream *)*out)->given_out, true);
    return status;
}

tp_status tp_ocl_stream_from_native(int index, void *native, tp_stream **out)
{
    static const char call[] = "tp_stream_from_native";
    const tp_host *host = tp_ocl_host();
    ocl_device *device = tp_ocl_device(index);
    if (!native)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: native is NULL (OpenCL has no default queue to name so)", call);
    cl_command_queue queue = native;
    cl_device_id queue_device = NULL;
    cl_context context = NULL;
    cl_command_queue_properties properties = 0;
    cl_int error = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof queue_device, &queue_device, NULL);
    if (error == CL_SUCCESS)
        error = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
    if (error == CL_SUCCESS)
        error = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, NULL);
    if (error != CL_SUCCESS)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: %p is not a cl_command_queue (clGetCommandQueueInfo: %s)", call,
                          native, tp_ocl_error_name(error));
    if (queue_device != device->id)
        return host->fail(TP_ERR_DEVICE_MISMATCH, "%s: the queue is not of opencl:%d (%s)", call, index, device->name);
    if (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: the queue is out of order; a stream is in order (rule 12)",
                          call);
    return stream_new(device, context, queue, TP_STREAM_BORROWED, out);
}

tp_status tp_ocl_stream_default(int index, tp_stream **out)
{
    ocl_device *device = tp_ocl_device(index);
    pthread_mutex_lock(&device->lock);
    ocl_stream *stream = device->default_stream;
    pthread_mutex_unlock(&device->lock);
    if (stream) {
        *out = &stream->head;
        return TP_OK;
    }
    cl_command_queue queue = tp_ocl_queue_create(device, "tp_stream_default");
    if (!queue)
        return TP_ERR_BACKEND;
    tp_stream *made = NULL;
    tp_status status = stream_new(device, device->context, queue, TP_STREAM_DEFAULT, &made);
    if (status != TP_OK) {
        clReleaseCommandQueue(queue);
        return status;
    }
    pthread_mutex_lock(&device->lock);
    ocl_stream *winner = device->default_stream;
    if (!winner)
        device->default_stream = winner = (ocl_stream *)made;
    pthread_mutex_unlock(&device->lock);
    if (winner != (ocl_stream *)made) /* another thread made it first */
        tp_ocl_stream_destroy(made);
    *out = &winner->head;
    return TP_OK;
}

/* Forgets the retired records that are done; under the device's lock. */
static void retired_prune(ocl_device *device)
{
    int kept = 0;
    for (int i = 0; i < device->retired_count; i++) {
        bool reached = false;
        if (tp_ocl_record_query(device->retired[i], "tp_stream_destroy", &reached) != TP_OK || reached)
            tp_ocl_record_unref(device->retired[i]);
        else
            device->retired[kept++] = device->retired[i];
    }
    device->retired_count = kept;
}

/* Keeps a marker after a destroyed stream's work for device_synchronize; a stream
 * whose marker cannot be had (out of memory) is not waited for. */
static void retire(ocl_stream *stream)
{
    ocl_device *device = stream->device;
    ocl_record *tail = NULL;
    if (tp_ocl_record_enqueue(device, stream->context, stream->queue, stream, "tp_stream_destroy", &tail) != TP_OK)
        return;
    pthread_mutex_lock(&device->lock);
    retired_prune(device);
    if (device->retired_count == device->retired_capacity) {
        int capacity = device->retired_capacity ? device->retired_capacity * 2 : 16;
        ocl_record **grown = realloc(device->retired, (size_t)capacity * sizeof *grown);
        if (grown) {
            device->retired = grown;
            device->retired_capacity = capacity;
        }
    }
    bool kept = device->retired_count < device->retired_capacity;
    if (kept)
        device->retired[device->retired_count++] = tail;
    pthread_mutex_unlock(&device->lock);
    if (!kept)
        tp_ocl_record_unref(tail);
}

tp_status tp_ocl_stream_destroy(tp_stream *handle)
{
    ocl_stream *stream = (ocl_stream *)handle;
    stream_unlink(stream->device, stream);
    retire(stream);
    if (stream->worker)
        tp_ocl_host_worker_close(stream->worker);
    if (!stream->borrowed) {
        bool pooled = atomic_load(&stream->given_out) && pooled_queue_give(stream->device, stream->queue);
        if (!pooled && !atomic_load(&stream->given_out))
            clReleaseCommandQueue(stream->queue);
    }
    if (stream->holds) /* its holds' releases still come (rule 9) */
        tp_ocl_hold_chain_close(stream->holds);
    if (stream->probe)
        tp_ocl_record_unref(stream->probe);
    if (stream->flush.memory) /* OpenCL frees it once the fills queued on it are done */
        clReleaseMemObject(stream->flush.memory);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
    return TP_OK;
}

/* Whether the stream may have work its probe does not cover; under its lock. A
 * wrapped queue may have work of its caller that tpevent never saw: a new probe for
 * each synchronize, and for a query once the last is reached (one not yet reached
 * says busy rightly: the work before it, or the marker itself, is not done). */
static bool probe_stale(ocl_stream *stream, bool query)
{
    /* Cleared before the marker: work whose flag this missed is enqueued after the
     * exchange, and sets it again. */
    if (atomic_exchange_explicit(&stream->enqueued, false, memory_order_acq_rel))
        return true;
    if (!stream->borrowed)
        return false;
    if (!query || !stream->probe)
        return true;
    bool reached = true;
    return tp_ocl_record_query(stream->probe, "tp_stream_query", &reached) != TP_OK || reached;
}

/*
 * A marker after every command enqueued on the stream so far, with a reference, for
 * query and synchronize; NULL when nothing ever was; *made: a new one. The stream
 * keeps the latest and enqueues a new one only once more work came: on NVIDIA's
 * OpenCL a marker just enqueued on an idle queue stays CL_QUEUED or CL_SUBMITTED for
 * some us, so that a query enqueuing one each time would say busy of an idle stream,
 * forever to a polling caller; and a stream synchronized stays idle to later queries.
 */
static tp_status stream_probe(ocl_stream *stream, bool query, const char *call, ocl_record **out, bool *made)
{
    pthread_mutex_lock(&stream->lock);
    tp_status status = TP_OK;
    *made = probe_stale(stream, query);
    if (*made) {
        ocl_record *probe = NULL;
        status = tp_ocl_record_enqueue(stream->device, stream->context, stream->queue, stream, call, &probe);
        if (status == TP_OK) {
            if (stream->probe)
                tp_ocl_record_unref(stream->probe);
            stream->probe = probe;
        } else {
            tp_ocl_stream_enqueued(stream); /* still not covered */
        }
    }
    *out = status == TP_OK ? stream->probe : NULL;
    if (*out)
        tp_ocl_record_ref(*out);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

/* The state that makes a stream idle: CL_COMPLETE; on PoCL, CL_SUBMITTED. */
static bool probe_says_idle(const ocl_record *probe, cl_int state)
{
    return state == CL_COMPLETE || (state <= CL_SUBMITTED && probe->device->submitted_marker_means_idle);
}

static bool probe_settled(const void *arg)
{
    const ocl_record *probe = arg;
    cl_int state = CL_QUEUED;
    cl_int error = clGetEventInfo(probe->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    return error != CL_SUCCESS || state < 0 || probe_says_idle(probe, state);
}

tp_status tp_ocl_stream_query(tp_stream *handle, bool *idle)
{
    static const char call[] = "tp_stream_query";
    ocl_stream *stream = (ocl_stream *)handle;
    ocl_record *probe = NULL;
    bool made = false;
    tp_status status = stream_probe(stream, true, call, &probe, &made);
    if (status != TP_OK || !probe || atomic_load_explicit(&probe->reached, memory_order_acquire)) {
        *idle = true;
        if (probe)
            tp_ocl_record_unref(probe);
        return status;
    }
    /* A wrapped queue gets a new marker whenever the last was reached, so a caller
     * polling an idle one would meet a fresh marker each time on NVIDIA's OpenCL:
     * a spin as long as a synchronize's sees it through (once per new marker). */
    if (made && stream->borrowed)
        (void)tp_spin_until(probe_settled, probe, TP_SPIN_NS);
    cl_int state = CL_QUEUED;
    cl_int error = clGetEventInfo(probe->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    if (error == CL_SUCCESS && state == CL_COMPLETE)
        atomic_store_explicit(&probe->reached, true, memory_order_release);
    bool says_idle = probe_says_idle(probe, state);
    tp_ocl_record_unref(probe);
    if (error != CL_SUCCESS)
        return tp_ocl_fail(call, "clGetEventInfo", error);
    if (state < 0)
        return tp_ocl_fail(call, "an earlier command of the queue", state);
    *idle = says_idle;
    return TP_OK;
}

static tp_status refuse_self_wait(const char *call)
{
    return tp_ocl_host()->fail(TP_ERR_INVALID_ARGUMENT,
                               "%s: called from a host function of the stream it waits for, which would wait for "
                               "itself forever",
                               call);
}

bool tp_ocl_stream_waits_for_itself(tp_stream *stream)
{
    return tp_ocl_host_fn_running_stream() == (const void *)stream;
}

tp_status tp_ocl_stream_synchronize(tp_stream *handle)
{
    static const char call[] = "tp_stream_synchronize";
    if (tp_ocl_stream_waits_for_itself(handle))
        return refuse_self_wait(call);
    ocl_record *probe = NULL;
    bool made = false;
    tp_status status = stream_probe((ocl_stream *)handle, false, call, &probe, &made);
    if (status != TP_OK || !probe)
        return status;
    status = tp_ocl_record_wait(probe, true, call);
    tp_ocl_record_unref(probe);
    return status;
}

tp_status tp_ocl_stream_launch_host_fn(tp_stream *handle, void (*fn)(void *), void *arg)
{
    ocl_stream *stream = (ocl_stream *)handle;
    pthread_mutex_lock(&stream->lock); /* the marker, the hold and the task, in one order */
    tp_status status = tp_ocl_host_fn_launch(stream->context, stream->queue, stream, &stream->worker, fn, arg);
    tp_ocl_stream_enqueued(stream);
    pthread_mutex_unlock(&stream->lock);
    return status;
}

void *tp_ocl_stream_native(tp_stream *handle)
{
    ocl_stream *stream = (ocl_stream *)handle;
    atomic_store(&stream->given_out, true);
    return stream->queue;
}

tp_status tp_ocl_stream_hold(tp_stream *handle, void (**release)(void *), void **arg)
{
    static const char call[] = "tp_stream_hold";
    ocl_stream *stream = (ocl_stream *)handle;
    int64_t window = stream->device->hold_window;
    tp_status status = TP_OK;
    if (window == INT64_MAX) { /* an unbounded queue (PoCL): a barrier per hold */
        status = tp_ocl_hold_queue(stream->context, stream->queue, call, release, arg);
    } else {
        pthread_mutex_lock(&stream->lock);
        status = stream->holds ? TP_OK : tp_ocl_hold_chain_open(window, &stream->holds);
        if (status == TP_OK)
            status = tp_ocl_hold_chained(stream->holds, stream->context, stream->queue, call, release, arg);
        pthread_mutex_unlock(&stream->lock);
    }
    tp_ocl_stream_enqueued(stream);
    return status;
}

/* Whether the calling thread runs a host function of a live stream of the device. */
static bool runs_host_fn_of(ocl_device *device)
{
    const void *running = tp_ocl_host_fn_running_stream();
    if (!running)
        return false;
    for (ocl_stream *stream = device->streams; stream; stream = stream->next)
        if ((const void *)stream == running)
            return true;
    return false;
}

tp_status tp_ocl_device_synchronize(int index)
{
    static const char call[] = "tp_device_synchronize";
    ocl_device *device = tp_ocl_device(index);
    pthread_mutex_lock(&device->lock);
    if (runs_host_fn_of(device)) {
        pthread_mutex_unlock(&device->lock);
        return refuse_self_wait(call);
    }
    retired_prune(device);
    int count = device->retired_count;
    for (ocl_stream *stream = device->streams; stream; stream = stream->next)
        count++;
    ocl_record **tails = calloc((size_t)count + 1, sizeof *tails);
    tp_status status = tails ? TP_OK : tp_ocl_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    int made = 0;
    bool fresh = false;
    for (int i = 0; status == TP_OK && i < device->retired_count; i++) {
        tp_ocl_record_ref(device->retired[i]);
        tails[made++] = device->retired[i];
    }
    for (ocl_stream *stream = device->streams; stream && status == TP_OK; stream = stream->next)
        if ((status = stream_probe(stream, false, call, &tails[made], &fresh)) == TP_OK && tails[made])
            made++;
    pthread_mutex_unlock(&device->lock);
    for (int i = 0; i < made; i++) {
        if (status == TP_OK)
            status = tp_ocl_record_wait(tails[i], true, call);
        tp_ocl_record_unref(tails[i]);
    }
    free(tails);
    return status;
}
