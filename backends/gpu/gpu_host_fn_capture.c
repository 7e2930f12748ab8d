/*
 * Host functions inside captures, at capture time (rules 15 and 16): a node per
 * captured host function and its operations in the capture, signalled (tpevent's
 * own captures) or rung by a doorbell, a runtime host function (someone else's);
 * gpu_host_fn_graph.c's top says how they run.
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_host_fn_graph.h"

#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda_page.h" /* rt_stream_write_value64; HIP's and the fake's are in their mappings */
#endif

#include <stdlib.h>

/* ---------------------------------------------------------------- doorbell */

/* On the runtime's callback thread, at each launch that reaches the node. */
static void doorbell(void *arg)
{
    gpu_host_fn_node *node = arg;
    gpu_graph_lane *lane = node->lane;
    if (node->held) {
        atomic_store_explicit(node->counter.host, node->armed - 1, memory_order_relaxed);
        /* The store before the look at exiting: either the exit handler's raise
         * comes after it, or this sees exiting and raises it again. */
        atomic_thread_fence(memory_order_seq_cst);
    }
    if (gpu_counters_exiting()) {
        if (node->held)
            gpu_counter_raise(node->counter.host, node->armed);
        return; /* nothing runs after exit began */
    }
    pthread_mutex_lock(&lane->lock);
    uint64_t ring = ++node->rung;
    if (node->queued) {
        node->extra_rings++;
    } else {
        atomic_fetch_add_explicit(&node->refs, 1, memory_order_relaxed); /* the lane's, until it ran */
        node->queued = true;
        node->next = NULL;
        if (lane->last)
            lane->last->next = node;
        else
            atomic_store_explicit(&lane->first, node, memory_order_relaxed);
        lane->last = node;
    }
    if (lane->idle)
        pthread_cond_signal(&lane->work_ready);
    while (!node->held && node->run < ring && !gpu_counters_exiting())
        gpu_wait_unless_exiting(&lane->ran, &lane->lock); /* a gate: until fn returned */
    pthread_mutex_unlock(&lane->lock);
}

/* ------------------------------------------------------------------ capture */

static void run_nothing(void *arg)
{
    (void)arg;
}

static tp_status node_make(gpu_stream *stream, void (*fn)(void *), void *arg, uint64_t capture, bool own,
                           gpu_host_fn_node **out)
{
    /* (release is set once the node is in the capture: a failure before gives
     * nothing out, and calls no release.) */
    gpu_host_fn_node *node = calloc(1, sizeof *node);
    if (!node)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    node->fn = fn;
    node->arg = arg;
    atomic_init(&node->refs, 1);
    node->held = RT_WAIT_VALUE_CAPTURED && gpu_counters_supported(stream->device);
    tp_status status = node->held ? gpu_counter_take(stream->device, "tp_stream_launch_host_fn", &node->counter)
                                  : gpu_counters_watch_exit("tp_stream_launch_host_fn");
    if (status == TP_OK && node->held) {
        /* Armed one above its value: the captured wait holds until a run raises it. */
        node->armed = atomic_load_explicit(node->counter.host, memory_order_relaxed) + 1;
        /* tpevent's own capture: its launches say when the node runs, and the
         * device's write of armed - 1 says when it is reached; until then the
         * counter stays at armed (so that no run looks reached early). */
        node->signalled = own;
        if (own) {
            gpu_counter_raise(node->counter.host, node->armed);
            gpu_graph_lanes_watch_exit(); /* after the counters' (taken above) */
        }
    }
    if (status == TP_OK)
        status = gpu_graph_lane_take(stream, capture, &node->lane);
    if (status != TP_OK) {
        if (node->counter.host) /* taken: a refused take gives nothing to give back */
            gpu_counter_give(stream->device, node->counter);
        free(node);
        return status;
    }
    *out = node;
    return TP_OK;
}

/* With the stream's device current: a signalled node's two operations, the
 * device's "reached" and its wait for fn. On failure after the write, the node
 * and its counter are kept for good (the write may be in the capture, and would
 * lower the counter under a next owner), running nothing. */
static tp_status capture_signalled(gpu_stream *stream, gpu_host_fn_node *node)
{
    rt_error e = rt_stream_write_value64(stream->native, node->counter.device, node->armed - 1);
    if (e != RT_SUCCESS) {
        gpu_host_fn_node_free(node);
        return gpu_fail_call(RT_WRITE_VALUE_CALL, e);
    }
    e = rt_stream_wait_value64(stream->native, node->counter.device, node->armed);
    if (e != RT_SUCCESS) {
        node->fn = run_nothing;
        node->arg = NULL;
        gpu_host_fn_node_keep(node);
        return gpu_fail_call(RT_WAIT_VALUE_CALL, e);
    }
    return TP_OK;
}

tp_status gpu_host_fn_capture(gpu_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *), bool own,
                              gpu_host_fn_node **out)
{
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    /* One lane per capture and stream: host functions of two graphs never wait
     * for each other, even where both were captured on one stream (torch's
     * graphs all are, on its one capture stream). */
    gpu_host_fn_node *node = NULL;
    tp_status status = node_make(stream, fn, arg, rt_stream_capture_id(stream->native), own, &node);
    if (status == TP_OK && node->signalled)
        status = capture_signalled(stream, node);
    if (status != TP_OK || node->signalled) {
        rt_guard_leave(&guard);
        if (status == TP_OK) {
            node->release = release;
            *out = node;
        }
        return status;
    }
    const char *call = RT_CALL("LaunchHostFunc");
    e = rt_launch_host_fn(stream->native, doorbell, node);
    if (e == RT_SUCCESS && node->held) {
        call = RT_WAIT_VALUE_CALL;
        e = rt_stream_wait_value64(stream->native, node->counter.device, node->armed);
        if (e != RT_SUCCESS) {
            /* The doorbell is in the capture already (a failed call usually
             * invalidates it, but not surely): the node is kept for good, as a
             * gate that runs nothing (the caller keeps arg), its counter with it. */
            node->held = false;
            node->fn = run_nothing;
            node->arg = NULL;
            gpu_host_fn_node_keep(node);
            rt_guard_leave(&guard);
            return gpu_fail_call(call, e);
        }
    }
    rt_guard_leave(&guard);
    if (e != RT_SUCCESS) {
        gpu_host_fn_node_free(node);
        return gpu_fail_call(call, e);
    }
    node->release = release;
    *out = node;
    return TP_OK;
}
