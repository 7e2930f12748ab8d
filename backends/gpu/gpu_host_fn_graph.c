/*
 * Host functions inside captures (rules 15 and 16): captured so that at every
 * launch of the graph fn runs once, in stream order, on a tpevent thread, never on
 * the runtime's one callback thread.
 *
 * Outside a capture (gpu_host_fn.c) a launch holds the stream on a counter until
 * its seq: captured, that wait would keep its value at every launch (a stream
 * memory operation is replayed as it was captured), and the thread would hear of
 * one run only. So a captured host function is a node of its own, made at capture
 * time, and the capture gets two operations per node:
 *   1. a runtime host function, the doorbell: on the callback thread at each
 *      launch, it lowers the node's counter to armed - 1 and queues the node on
 *      its lane, then returns at once (it never waits, never calls the runtime);
 *   2. a stream memory operation that holds the stream until the counter reaches
 *      armed, a value fixed at capture time: correct at every launch, since the
 *      doorbell lowered the counter just before.
 * The lane's thread runs fn and raises the counter to armed, which lets the
 * graph go on. Launches of one executable graph run one after the other (CUDA
 * orders them; tpevent's own launches of a graph also take turns, under its
 * launch_lock, gpu_graph_exec.c), so a node is rung again only after its last run
 * raised the counter. Measured on the H200: 100 launches of a graph of three such
 * nodes ran each fn once per launch, in order, each holding its stream until it
 * returned. Where two launches of one executable graph do run at once (someone
 * else's graph instantiated twice), a node rung while queued runs fn once more
 * per ring, and nothing is corrupted; its wait is released by the first run.
 *
 * Lanes. One thread per capture and native stream (the runtime's capture id), so
 * that host functions of two graphs never wait for each other, even where both
 * were captured on one stream (torch captures every graph on its one capture
 * stream), and those of two streams run at once; a lane runs its nodes in the
 * order they are rung. A lane lives while a node needs it; its thread ends with
 * the last node. A node lives while its owner keeps it and while it is queued or
 * running (the lane's reference), so that an owner letting it go early (a launch
 * released at exit, a marker the runtime failed) frees nothing in use.
 *
 * Rule 15's self-waits: a captured host function that synchronizes its device is
 * refused (gpu_host_fn_graph_on_device); one that synchronizes the stream its
 * launch runs on is not seen (a node does not know its launches' streams) and
 * waits forever, as a CUDA host function would.
 *
 * Where the device cannot hold a stream on host memory, or the runtime cannot
 * capture a stream memory operation (RT_WAIT_VALUE_CAPTURED 0: HIP), the doorbell
 * is a gate instead: it waits until the lane ran fn. fn still runs on the lane,
 * but gates share the runtime's one callback thread, so one that blocks holds
 * back the others (docs/semantics.md says so).
 *
 * Nodes belong to whoever owns the graph: tpevent's own graphs free theirs once
 * the graph and its launches are gone (gpu_graph_exec.c); nodes of someone else's
 * capture (torch.cuda.graph) are kept for good, as tpevent cannot know when that
 * graph is gone.
 *
 * Process exit: the counters' exit handler raises every counter (gpu_host_counter.c);
 * a doorbell rung afterwards queues nothing (and raises its own counter again), and
 * lanes run nothing more. A host function running is not interrupted.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "backends/gpu/gpu_internal.h"
#include "common/array.h"
#include "common/spin.h"
#include "common/thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_graph_lane {
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    pthread_cond_t ran; /* a gate's node ran */
    /* Under lock: nodes rung and not yet taken, in order (first is read without
     * the lock by the thread's spin too); the nodes that need the lane (the
     * thread ends at 0); whether the thread sleeps. */
    _Atomic(gpu_host_fn_node *) first;
    gpu_host_fn_node *last;
    size_t refs;
    bool idle;
    /* Set at creation: its key. */
    gpu_device *device;
    rt_stream native;
    uint64_t capture; /* the runtime's id of the capture (rt_stream_capture_id) */
} gpu_graph_lane;

struct gpu_host_fn_node {
    void (*fn)(void *);
    void *arg;
    void (*release)(void *); /* of arg, when the node is freed; NULL: none */
    /* Its owner's (the graph's, or the kept list's), and one while it is queued
     * or running: the lane may still run it when the owner lets it go (a
     * launch released at exit, a marker the runtime failed). */
    atomic_uint refs;
    gpu_graph_lane *lane;
    /* Under the lane's lock: its link on the lane's queue; whether it is on it;
     * rings that came while it was (two launches at once of one executable graph,
     * which the runtime does not order: each still runs fn once). */
    gpu_host_fn_node *next;
    bool queued;
    unsigned extra_rings;
    bool held; /* on counter; else the doorbell is a gate */
    gpu_counter counter;
    uint64_t armed;     /* what the captured wait waits for */
    uint64_t rung, run; /* gates: rings and runs, under the lane's lock */
};

/* The lanes, by (native stream, capture); and the nodes kept for good (someone else's
 * capture's, so that they stay reachable, for leak checkers too). Under lanes_lock,
 * never held across a runtime call. */
static pthread_mutex_t lanes_lock = PTHREAD_MUTEX_INITIALIZER;
static gpu_graph_lane **lanes;
static size_t lane_count, lane_capacity;
static gpu_host_fn_node **kept;
static size_t kept_count, kept_capacity;

/* ------------------------------------------------------------------- lanes */

static void lane_remove(gpu_graph_lane *lane)
{
    for (size_t i = 0; i < lane_count; i++)
        if (lanes[i] == lane) {
            lanes[i] = lanes[--lane_count];
            return;
        }
}

/* Under the lane's lock (or, in the spin, a hint only). */
static gpu_host_fn_node *queue_head(gpu_graph_lane *lane)
{
    return atomic_load_explicit(&lane->first, memory_order_relaxed);
}

static bool work_rung(const void *arg)
{
    return queue_head((gpu_graph_lane *)(uintptr_t)arg) != NULL;
}

static void node_ran(gpu_host_fn_node *node)
{
    if (node->held) {
        gpu_counter_raise(node->counter.host, node->armed); /* from here the node may be freed */
        return;
    }
    gpu_graph_lane *lane = node->lane;
    pthread_mutex_lock(&lane->lock);
    node->run++;
    pthread_cond_broadcast(&lane->ran);
    pthread_mutex_unlock(&lane->lock);
}

/* The device whose captured host function this thread runs; NULL elsewhere. */
static _Thread_local gpu_device *running_lane_device;

bool gpu_host_fn_graph_on_device(int device)
{
    return running_lane_device && running_lane_device->index == device;
}

static void lane_unref(gpu_graph_lane *lane);
static void node_unref(gpu_host_fn_node *node);

static void lane_free(gpu_graph_lane *lane)
{
    pthread_cond_destroy(&lane->ran);
    pthread_cond_destroy(&lane->work_ready);
    pthread_mutex_destroy(&lane->lock);
    free(lane);
}

static void *lane_main(void *arg)
{
    gpu_graph_lane *lane = arg;
#if defined(__GLIBC__)
    char name[16]; /* the kernel's limit, NUL included */
    snprintf(name, sizeof name, "tpevent-g%s:%d", RT_BACKEND_NAME, lane->device->index);
    pthread_setname_np(pthread_self(), name);
#endif
    /* As gpu_host_fn.c's threads: the device current for good, and a program's
     * capture on another thread is not invalidated by what fn calls. */
    rt_guard guard;
    (void)rt_guard_enter(&guard, lane->device->context, RT_NEED_DEVICE);
    rt_thread_relax_capture();
    running_lane_device = lane->device;
    pthread_mutex_lock(&lane->lock);
    for (;;) {
        while (!queue_head(lane) && lane->refs > 0) {
            /* A graph rings its nodes one after another: a short spin catches the
             * next without a wake-up (as the CPU backend's workers do). */
            pthread_mutex_unlock(&lane->lock);
            bool rung = tp_spin_until(work_rung, lane, TP_SPIN_NS);
            pthread_mutex_lock(&lane->lock);
            if (rung || queue_head(lane) || lane->refs == 0)
                continue;
            lane->idle = true;
            pthread_cond_wait(&lane->work_ready, &lane->lock);
            lane->idle = false;
        }
        gpu_host_fn_node *node = queue_head(lane);
        if (!node)
            break; /* no node needs the lane any more */
        atomic_store_explicit(&lane->first, node->next, memory_order_relaxed);
        if (!node->next)
            lane->last = NULL;
        node->queued = false;
        unsigned runs = 1 + node->extra_rings;
        node->extra_rings = 0;
        pthread_mutex_unlock(&lane->lock);
        for (unsigned i = 0; i < runs; i++) {
            if (gpu_counters_exiting())
                return NULL; /* the exit handler released every stream; run nothing */
            node->fn(node->arg);
            node_ran(node);
        }
        node_unref(node); /* may be the last reference: the lane's own may go too */
        pthread_mutex_lock(&lane->lock);
    }
    pthread_mutex_unlock(&lane->lock);
    lane_free(lane);
    return NULL;
}

static tp_status lane_start(gpu_graph_lane *lane)
{
    int err = tp_thread_start_detached(lane_main, lane);
    if (err == 0)
        return TP_OK;
    tp_status status = err == EAGAIN || err == ENOMEM ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
    return gpu.host->fail(status,
                          "tp_stream_launch_host_fn: pthread_create for the captured host functions of a "
                          "%s:%d stream: %s",
                          RT_BACKEND_NAME, lane->device->index, strerror(err));
}

/* The stream's lane, with a reference for the caller; made (and its thread
 * started) on first need. */
static tp_status lane_take(gpu_stream *stream, uint64_t capture, gpu_graph_lane **out)
{
    pthread_mutex_lock(&lanes_lock);
    for (size_t i = 0; i < lane_count; i++) {
        gpu_graph_lane *lane = lanes[i];
        if (lane->native == stream->native && lane->device == stream->device && lane->capture == capture) {
            pthread_mutex_lock(&lane->lock);
            lane->refs++;
            pthread_mutex_unlock(&lane->lock);
            pthread_mutex_unlock(&lanes_lock);
            *out = lane;
            return TP_OK;
        }
    }
    gpu_graph_lane *lane = calloc(1, sizeof *lane);
    tp_status status = TP_OK;
    if (!lane || !tp_array_grow(&lanes, &lane_capacity, lane_count + 1, sizeof *lanes)) {
        free(lane);
        status = gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    } else {
        pthread_mutex_init(&lane->lock, NULL);
        pthread_cond_init(&lane->work_ready, NULL);
        pthread_cond_init(&lane->ran, NULL);
        lane->refs = 1;
        lane->device = stream->device;
        lane->native = stream->native;
        lane->capture = capture;
        status = lane_start(lane);
        if (status == TP_OK)
            lanes[lane_count++] = lane;
        else
            lane_free(lane);
    }
    pthread_mutex_unlock(&lanes_lock);
    if (status == TP_OK)
        *out = lane;
    return status;
}

static void lane_unref(gpu_graph_lane *lane)
{
    pthread_mutex_lock(&lanes_lock);
    pthread_mutex_lock(&lane->lock);
    bool last = --lane->refs == 0;
    if (last) {
        lane_remove(lane); /* the thread frees it */
        pthread_cond_signal(&lane->work_ready);
    }
    pthread_mutex_unlock(&lane->lock);
    pthread_mutex_unlock(&lanes_lock);
}

/* Kept for good: on failure to note it, it is still never freed. */
void gpu_host_fn_node_keep(gpu_host_fn_node *node)
{
    pthread_mutex_lock(&lanes_lock);
    if (tp_array_grow(&kept, &kept_capacity, kept_count + 1, sizeof *kept))
        kept[kept_count++] = node;
    pthread_mutex_unlock(&lanes_lock);
}

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

static void node_unref(gpu_host_fn_node *node)
{
    if (atomic_fetch_sub_explicit(&node->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (node->held) {
        /* Counters only grow for their next owner: never left below a wait. */
        gpu_counter_raise(node->counter.host, node->armed);
        gpu_counter_give(node->lane->device, node->counter);
    }
    lane_unref(node->lane);
    if (node->release)
        node->release(node->arg);
    free(node);
}

void gpu_host_fn_node_free(gpu_host_fn_node *node)
{
    if (node)
        node_unref(node); /* the owner's; the lane's, if it still runs it, goes after */
}

static void run_nothing(void *arg)
{
    (void)arg;
}

static tp_status node_make(gpu_stream *stream, void (*fn)(void *), void *arg, uint64_t capture, gpu_host_fn_node **out)
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
    }
    if (status == TP_OK)
        status = lane_take(stream, capture, &node->lane);
    if (status != TP_OK) {
        if (node->held)
            gpu_counter_give(stream->device, node->counter);
        free(node);
        return status;
    }
    *out = node;
    return TP_OK;
}

tp_status gpu_host_fn_capture(gpu_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *),
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
    tp_status status = node_make(stream, fn, arg, rt_stream_capture_id(stream->native), &node);
    if (status != TP_OK) {
        rt_guard_leave(&guard);
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
