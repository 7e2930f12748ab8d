/*
 * Host functions inside captures (rules 15 and 16): at every launch of the graph
 * fn runs once, in stream order, on a tpevent thread, never on the runtime's one
 * callback thread. A captured wait keeps its value at every launch, so each node
 * has a counter of its own and a fixed value `armed` (docs/semantics.md says why
 * and what it costs), and the capture gets two operations per node:
 *   signalled (tpevent's own captures): a stream memory write of armed - 1 (the
 *     device says "reached"), then a wait for the counter >= armed. Each launch
 *     (gpu_graph_exec.c) queues the node's run on its lane; the lane's thread waits
 *     for the device's write (a spin, then polls in pauses), runs fn and raises the
 *     counter to armed. Nothing goes through the runtime's callback thread: a
 *     run costs what one held host function does outside a capture.
 *   doorbell (someone else's capture, whose launches tpevent does not see): a
 *     runtime host function that lowers the counter to armed - 1 and queues the
 *     node, returning at once, then the same wait.
 * Launches of one executable graph run one after the other (CUDA orders them;
 * tpevent's own take turns under launch_lock), so a node is reached again only
 * after its last run raised the counter. Where two launches of someone else's
 * graph do run at once, a node rung while queued runs fn once more per ring.
 *
 * Lanes: one thread per capture and native stream (the runtime's capture id), so
 * that host functions of two graphs never wait for each other, even where both
 * were captured on one stream (torch's are), and those of two streams run at
 * once; a lane runs its nodes in the order they are reached. A lane lives while
 * a node needs it; a node while its owner keeps it and while it is queued or
 * running. A captured host function that synchronizes its device is refused; one
 * that synchronizes its launch's stream waits forever, as a CUDA one would.
 *
 * Where the device cannot hold a stream on host memory, or the runtime cannot
 * capture a stream memory operation (HIP), the doorbell is a gate: it waits on
 * the callback thread until the lane ran fn (docs/semantics.md says so).
 *
 * Process exit: the counters' exit handler raises every counter; a doorbell rung
 * afterwards raises its own again, and lanes run nothing more. Signalled runs
 * still reached afterwards are let go by a thread started at exit (lanes_at_exit).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_host_fn_graph.h"
#include "common/array.h"
#include "common/spin.h"
#include "common/thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    gpu_graph_lane *lane = (gpu_graph_lane *)(uintptr_t)arg;
    return queue_head(lane) != NULL || atomic_load_explicit(&lane->run_hint, memory_order_relaxed) > 0;
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
    free(lane->runs);
    pthread_cond_destroy(&lane->ran);
    pthread_cond_destroy(&lane->work_ready);
    pthread_mutex_destroy(&lane->lock);
    free(lane);
}

/* -------------------------------------------------------- signalled runs */

/* What gpu_host_counter.c's exit handler adds to every counter (RELEASE_STEP);
 * a node's values stay far below it. */
#define EXIT_STEP (UINT64_C(1) << 62)

#define RUN_SPIN_NS (4u * TP_SPIN_NS)

/* Set by lanes_at_exit (before the counters' exit handler, registered earlier):
 * from then on the servant serves the runs left, and the lanes' threads none. */
static atomic_bool lanes_exiting;

/* Whether the device reached the node in its next run: it wrote armed - 1 (the
 * exit handler may have added its step since, which released the wait). */
static bool run_reached(const void *arg)
{
    const gpu_host_fn_node *node = arg;
    return atomic_load_explicit(node->counter.host, memory_order_acquire) == node->armed - 1;
}

/* The same at exit, under the lane's lock: a reach the exit handler's step was
 * added to counts once, for the run it was seen for (lanes_at_exit). */
static bool run_reached_at_exit(gpu_host_fn_node *node)
{
    uint64_t value = atomic_load_explicit(node->counter.host, memory_order_acquire);
    bool reached = value == node->armed - 1 || (!node->exit_reach_seen && value == node->armed - 1 + EXIT_STEP);
    node->exit_reach_seen = node->exit_reach_seen || reached;
    return reached;
}

/* Under the lane's lock: takes its next run. */
static gpu_host_fn_node *run_take(gpu_graph_lane *lane)
{
    gpu_host_fn_node *node = lane->runs[lane->run_first];
    lane->run_first = (lane->run_first + 1) & (lane->run_capacity - 1);
    atomic_store_explicit(&lane->run_hint, --lane->run_count, memory_order_relaxed);
    return node;
}

/* Spins, then polls in pauses (common/spin.h) until the device reached the node,
 * or until exit: false then. No runtime call, no callback: the device's own write
 * is the signal (an event recorded in the graph could not say which launch
 * reached it). */
static bool wait_run_reached(gpu_graph_lane *lane, const gpu_host_fn_node *node)
{
    /* Longer than a wait's usual spin: the next node of a launch going on is the
     * GPU's release of the last (10.8 us p50 on the H200) and a little work away,
     * and a pause sleeps 50 us or more (the timer's slack). */
    if (tp_spin_until(run_reached, node, RUN_SPIN_NS))
        return true;
    for (uint64_t pause = TP_PAUSE_FIRST_NS; !run_reached(node); pause = tp_pause_next(pause)) {
        if (atomic_load_explicit(&lanes_exiting, memory_order_acquire) ||
            atomic_load_explicit(&lane->run_hint, memory_order_relaxed) == 0)
            return false; /* exit, or the launch failed and took its runs back */
        struct timespec left = {0, (long)pause};
        nanosleep(&left, NULL);
    }
    return true;
}

/* Under the lane's lock, with a run queued: waits (the lock left) for the device
 * to reach it, runs fn, raises the counter; returns with the lock held, false at
 * exit (the lock left, the run left to the servant). */
static bool run_next(gpu_graph_lane *lane)
{
    gpu_host_fn_node *node = lane->runs[lane->run_first];
    atomic_fetch_add_explicit(&node->refs, 1, memory_order_relaxed); /* the wait's: its run may be taken back */
    pthread_mutex_unlock(&lane->lock);
    bool reached = wait_run_reached(lane, node);
    pthread_mutex_lock(&lane->lock);
    bool exiting = atomic_load_explicit(&lanes_exiting, memory_order_acquire);
    if (exiting || !reached || lane->run_count == 0 || lane->runs[lane->run_first] != node) {
        pthread_mutex_unlock(&lane->lock);
        node_unref(node);
        if (exiting)
            return false;
        pthread_mutex_lock(&lane->lock);
        return true; /* taken back (a failed launch): look again */
    }
    atomic_fetch_sub_explicit(&node->refs, 1, memory_order_relaxed); /* never the last: the run's */
    run_take(lane);
    node->running = true;
    pthread_mutex_unlock(&lane->lock);
    if (!gpu_counters_exiting())
        node->fn(node->arg);
    gpu_counter_raise(node->counter.host, node->armed);
    pthread_mutex_lock(&lane->lock);
    node->running = false;
    pthread_mutex_unlock(&lane->lock);
    node_unref(node);
    pthread_mutex_lock(&lane->lock);
    return true;
}

/*
 * The servant, a thread started at exit: the device still reaches the runs
 * launched before (the counters' exit handler released only the waits reached
 * by then), and a lane's thread may never come back from a host function that
 * blocks for good; the servant lets each run go as the device reaches it,
 * running nothing, until the process is gone.
 */
static void *lanes_serve_at_exit(void *arg)
{
    (void)arg;
    gpu_host_fn_node **served = NULL;
    size_t served_capacity = 0;
    for (uint64_t pause = TP_PAUSE_FIRST_NS;; pause = tp_pause_next(pause)) {
        size_t count = 0;
        pthread_mutex_lock(&lanes_lock);
        for (size_t i = 0; i < lane_count; i++) {
            gpu_graph_lane *lane = lanes[i];
            pthread_mutex_lock(&lane->lock);
            while (lane->run_count > 0 && tp_array_grow(&served, &served_capacity, count + 1, sizeof *served) &&
                   run_reached_at_exit(lane->runs[lane->run_first])) {
                gpu_host_fn_node *node = run_take(lane);
                gpu_counter_raise(node->counter.host, node->armed);
                served[count++] = node;
            }
            pthread_mutex_unlock(&lane->lock);
        }
        pthread_mutex_unlock(&lanes_lock);
        for (size_t i = 0; i < count; i++)
            node_unref(served[i]); /* outside lanes_lock, which the last reference takes */
        if (count > 0)
            pause = TP_PAUSE_FIRST_NS / 2;
        struct timespec left = {0, (long)pause};
        nanosleep(&left, NULL);
    }
    return NULL;
}

static pid_t lanes_owner;

/* Once, and only where a run is left: a process whose graphs are done exits
 * without a thread more. */
static void servant_start(void)
{
    static atomic_bool started;
    if (!atomic_exchange_explicit(&started, true, memory_order_acq_rel))
        (void)tp_thread_start_detached(lanes_serve_at_exit, NULL);
}

/*
 * Before the counters' exit handler (registered before this one), which adds its
 * step to every counter and so lets every wait reached by then go: a node whose
 * wait is reached (armed - 1 now) has that reach noted for the run it stands for,
 * the one a lane's thread is running, or else the lane's next, which is taken now
 * (the step lets it go). Then the servant serves the rest.
 */
static void lanes_at_exit(void)
{
    if (getpid() != lanes_owner)
        return; /* a forked child: the lanes are its parent's */
    atomic_store_explicit(&lanes_exiting, true, memory_order_seq_cst);
    size_t pending = 0;
    pthread_mutex_lock(&lanes_lock);
    for (size_t i = 0; i < lane_count; i++) {
        gpu_graph_lane *lane = lanes[i];
        pthread_mutex_lock(&lane->lock);
        for (size_t r = 0; r < lane->run_count; r++) {
            gpu_host_fn_node *node = lane->runs[(lane->run_first + r) & (lane->run_capacity - 1)];
            node->exit_reach_seen = node->running && run_reached(node);
        }
        if (lane->run_count > 0 && !lane->runs[lane->run_first]->running && run_reached(lane->runs[lane->run_first])) {
            gpu_host_fn_node *node = run_take(lane);
            node->exit_reach_seen = true;
            atomic_fetch_sub_explicit(&node->refs, 1, memory_order_relaxed); /* never the last: its owner's */
        }
        pending += lane->run_count;
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&lanes_lock);
    if (pending > 0)
        servant_start();
}

static pthread_once_t lanes_exit_once = PTHREAD_ONCE_INIT;

static void lanes_exit_register(void)
{
    lanes_owner = getpid();
    (void)atexit(lanes_at_exit); /* (out of memory: exit may then find a run left held) */
}

void gpu_graph_lanes_watch_exit(void)
{
    pthread_once(&lanes_exit_once, lanes_exit_register);
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
        while (!queue_head(lane) && lane->run_count == 0 && lane->refs > 0) {
            /* A graph rings its nodes one after another: a short spin catches the
             * next without a wake-up (as the CPU backend's workers do). */
            pthread_mutex_unlock(&lane->lock);
            bool rung = tp_spin_until(work_rung, lane, TP_SPIN_NS);
            pthread_mutex_lock(&lane->lock);
            if (rung || queue_head(lane) || lane->run_count > 0 || lane->refs == 0)
                continue;
            lane->idle = true;
            pthread_cond_wait(&lane->work_ready, &lane->lock);
            lane->idle = false;
        }
        if (lane->run_count > 0) {
            if (!run_next(lane))
                return NULL; /* exit: the runs left are the servant's (lanes_serve_at_exit) */
            continue;
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
tp_status gpu_graph_lane_take(gpu_stream *stream, uint64_t capture, gpu_graph_lane **out)
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

/* ------------------------------------------------------------------ launch */

/* Under the lane's lock: room for `more` runs, in order from index 0. */
static bool runs_reserve(gpu_graph_lane *lane, size_t more)
{
    if (lane->run_count + more <= lane->run_capacity)
        return true;
    size_t capacity = lane->run_capacity ? lane->run_capacity : 16;
    while (capacity < lane->run_count + more)
        capacity *= 2;
    gpu_host_fn_node **runs = malloc(capacity * sizeof *runs);
    if (!runs)
        return false;
    for (size_t i = 0; i < lane->run_count; i++)
        runs[i] = lane->runs[(lane->run_first + i) & (lane->run_capacity - 1)];
    free(lane->runs);
    lane->runs = runs;
    lane->run_capacity = capacity;
    lane->run_first = 0;
    return true;
}

tp_status gpu_host_fn_launch_reserve(gpu_host_fn_node *const *nodes, size_t count)
{
    if (count > 0 && atomic_load_explicit(&lanes_exiting, memory_order_acquire))
        return gpu_counters_refused_at_exit("tp_graph_launch");
    bool reserved = true;
    for (size_t i = 0; i < count && reserved; i++) {
        gpu_graph_lane *lane = nodes[i]->lane;
        if (!nodes[i]->signalled || (i > 0 && nodes[i - 1]->lane == lane))
            continue; /* (over-reserved: count, not the lane's share) */
        pthread_mutex_lock(&lane->lock);
        reserved = runs_reserve(lane, count);
        pthread_mutex_unlock(&lane->lock);
    }
    return reserved ? TP_OK : gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_graph_launch: out of memory");
}

void gpu_host_fn_launch_failed(gpu_host_fn_node *const *nodes, size_t count)
{
    for (size_t i = count; i-- > 0;) {
        if (!nodes[i]->signalled)
            continue;
        gpu_graph_lane *lane = nodes[i]->lane;
        pthread_mutex_lock(&lane->lock);
        atomic_store_explicit(&lane->run_hint, --lane->run_count, memory_order_relaxed); /* its latest: this one */
        pthread_mutex_unlock(&lane->lock);
        node_unref(nodes[i]);
    }
}

void gpu_host_fn_launched(gpu_host_fn_node *const *nodes, size_t count)
{
    for (size_t i = 0; i < count;) {
        gpu_graph_lane *lane = nodes[i]->lane;
        pthread_mutex_lock(&lane->lock);
        for (; i < count && nodes[i]->lane == lane; i++) {
            if (!nodes[i]->signalled)
                continue;                                                        /* rung by its doorbell */
            atomic_fetch_add_explicit(&nodes[i]->refs, 1, memory_order_relaxed); /* the run's */
            lane->runs[(lane->run_first + lane->run_count++) & (lane->run_capacity - 1)] = nodes[i];
        }
        atomic_store_explicit(&lane->run_hint, lane->run_count, memory_order_relaxed);
        if (lane->idle)
            pthread_cond_signal(&lane->work_ready);
        pthread_mutex_unlock(&lane->lock);
    }
    if (count > 0 && atomic_load_explicit(&lanes_exiting, memory_order_acquire))
        servant_start(); /* a launch that raced the exit handler: its runs are the servant's */
}
