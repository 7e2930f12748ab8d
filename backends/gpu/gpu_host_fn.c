/*
 * Host functions (rule 15): they never hold each other back, and they may call
 * tpevent and the runtime.
 *
 * The runtime's own host functions (cudaLaunchHostFunc, hipStreamAddCallback) run
 * on one driver thread for all streams: two 200 ms host functions on two CUDA
 * streams took 400 ms on the H200, one that blocks stalls every stream's, and they
 * must not call the runtime. So a stream that launches a host function gets a thread
 * of its own (started at its first host function, as the CPU backend's workers are)
 * and a FIFO of (fn, arg). A launch puts two things on the native stream:
 *   1. a record of a native event: "the point is reached";
 *   2. a stream memory operation that holds the stream until a 64-bit counter in
 *      mapped host memory reaches the launch's sequence number;
 * and queues (fn, arg, event, seq). The thread takes the queue in order: it waits
 * for the item's event (a short spin on query, then the runtime's blocking-sync
 * wait, which sleeps), runs fn, and stores seq into the counter, which releases the
 * stream. Later work on the stream waits for fn to return; nothing else does: no
 * runtime thread is blocked, so other streams' host functions and work go on.
 * The thread is woken as a launch begins, not once its runtime calls are done, and
 * spins a while (TP_SPIN_NS) for the next item before it sleeps (wait_for_work), so
 * that launch to fn on an idle stream is meant to cost what the runtime's callback
 * thread takes, not that plus a futex wake-up (issue 53's aim, 1.3x raw
 * cudaLaunchHostFunc at most; not yet measured on a GPU: tpevent_bench_host_fn,
 * which scripts/gpu-check.sh runs, measures it).
 *
 * Why an event, not a tiny cudaLaunchHostFunc callback that wakes the thread: that
 * callback would run on the runtime's one callback thread, where whatever else
 * blocks (a program's own host function) would delay every tpevent host function.
 *
 * Counters: one per stream, in mapped host memory (gpu_host_counter.c).
 *
 * Beyond HOST_DEVICE_WINDOW host functions pending on a stream, a launch is held
 * by a runtime host function that only waits (a gate) instead: fn still runs on
 * the stream's thread, so it may still call the runtime.
 *
 * Where the device cannot do this (rt_stream_wait_value_supported says why: no
 * 64-bit stream memory operations, no mapped host memory), every launch is held
 * by a gate: fn still runs on the stream's thread and may call the runtime, but
 * the gates of all streams share the runtime's one callback thread, so a host
 * function that blocks holds back the others. docs/semantics.md says so.
 *
 * Destroying a stream with host functions pending (rule 9): its thread still runs
 * them, in order, then gives back its events and its counter and frees the queue;
 * the runtime frees the native stream once its work is done, as for any work.
 *
 * Process exit: the counters' exit handler releases every stream held on them;
 * from then on no host function starts, gates stop waiting, and launches are
 * refused; one already running is not interrupted, and exit does not wait for it.
 *
 * A host function that synchronizes its own stream, or its device, would wait for
 * itself forever; those calls fail with TP_ERR_INVALID_ARGUMENT instead, as on the
 * CPU backend. Waits that come back through other streams cannot be seen.
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
#include <unistd.h>

#define HOST_RING_INITIAL 16u

/* Host functions of one stream held on the device by stream memory operations at
 * once, at most. On the H200, 100 host functions launched at once behind a blocked
 * one made the launching thread block inside the runtime (its queue for the stream
 * was full), and a thread that would open a gate ahead of them could then never do
 * so; 50 did not. Streams share the device's hardware queues (8 by default,
 * CUDA_DEVICE_MAX_CONNECTIONS), so what is held there also fills the queue of other
 * streams: the model test hung so, now and then, under load, with a window of 32
 * (not with CUDA_DEVICE_MAX_CONNECTIONS=32). A launch beyond the window is held by a runtime host function
 * instead, a gate that only waits: fn itself still runs on the stream's thread
 * (so it may call the runtime, rule 15), but while a gate waits it holds the
 * runtime's one callback thread, so other streams' gates wait for it (docs/semantics.md
 * says so). */
#define HOST_DEVICE_WINDOW 8u

typedef struct host_item {
    void (*fn)(void *);
    void *arg;
    rt_event reached; /* recorded just before the stream's wait for seq; NULL: held by a gate */
    uint64_t seq;     /* the counter's value once fn returned; for a gate, its number */
} host_item;

struct gpu_host_queue {
    /* Launches, one at a time, so that records and waits go on the native stream in
     * the order of the queue. Held across runtime calls that may block while the
     * device's queue for the stream is full; so the thread never takes it. */
    pthread_mutex_t submit_lock;
    /* The ring and the spare events, between launches and the thread; never held
     * across a runtime call. */
    pthread_mutex_t lock;
    pthread_cond_t work_ready;
    /* Under lock. */
    host_item *ring; /* capacity a power of two */
    size_t capacity, first, count;
    rt_event *spare; /* reached events for the next launches; room for capacity + 1 */
    size_t spare_count;
    uint64_t submitted;      /* seq of the latest launch held on the device; under submit_lock */
    uint64_t gates_launched; /* under submit_lock */
    /* Gates (launches beyond the window), under lock: how many the runtime reached,
     * how many the thread finished, how many have not returned yet. */
    uint64_t gates_reached, gates_done;
    unsigned gates_unreturned;
    pthread_cond_t gate_changed;
    /* Launches that took room in the ring and have not pushed their item yet (under
     * lock): the first wakes a sleeping thread, whose wake-up then overlaps the
     * launch's runtime calls instead of following them. */
    unsigned incoming;
    atomic_size_t pushes; /* items pushed so far: the thread's spin reads it without the lock */
    bool worker_idle;
    bool closed; /* the stream was destroyed: drain, then free */
    /* Set at creation. */
    bool held_on_device; /* the device holds streams on counters; else gates only */
    gpu_counter counter; /* if held_on_device */
    gpu_device *device;
    rt_stream native;
};

/* Racing first launches on a stream agree on one queue. */
static pthread_mutex_t queue_creation_lock = PTHREAD_MUTEX_INITIALIZER;

/* The queue whose thread this is; NULL on every other thread. */
static _Thread_local gpu_host_queue *running_queue;

/* ------------------------------------------------------------------ thread */

static bool event_reached(const void *event)
{
    return rt_event_query((rt_event)(uintptr_t)event) != RT_ERROR_NOT_READY;
}

/* Returns once the event's record is reached, or the runtime says it never will
 * be (a failed device): the host function then runs all the same, as HIP's own
 * callbacks do, so that what it releases is released. */
static void wait_reached(rt_event event)
{
    if (!tp_spin_until(event_reached, (const void *)(uintptr_t)event, TP_SPIN_NS))
        (void)rt_event_synchronize(event); /* a blocking-sync event: the thread sleeps */
}

/* The last owner: the stream is destroyed and its queue drained. */
static void queue_free(gpu_host_queue *q)
{
    for (size_t i = 0; i < q->spare_count; i++)
        gpu_pool_give(q->device, TP_EVENT_BLOCKING, q->spare[i], false);
    if (q->held_on_device)
        gpu_counter_give(q->device, q->counter);
    pthread_cond_destroy(&q->gate_changed);
    pthread_cond_destroy(&q->work_ready);
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->submit_lock);
    free(q->spare);
    free(q->ring);
    free(q);
}

/* Until the runtime has reached the gate numbered `gate`. */
static void gate_wait_reached(gpu_host_queue *q, uint64_t gate)
{
    pthread_mutex_lock(&q->lock);
    while (q->gates_reached < gate)
        pthread_cond_wait(&q->gate_changed, &q->lock);
    pthread_mutex_unlock(&q->lock);
}

/*
 * A gate, on the runtime's callback thread: says it was reached, then holds the
 * stream until the thread has run its host function. At exit it stops waiting
 * (the thread runs nothing more), so that the runtime's teardown finds no
 * callback blocked (gpu_wait_unless_exiting).
 */
static void gate_main(void *arg)
{
    gpu_host_queue *q = arg;
    pthread_mutex_lock(&q->lock);
    uint64_t gate = ++q->gates_reached;
    pthread_cond_broadcast(&q->gate_changed);
    while (q->gates_done < gate && !gpu_counters_exiting())
        gpu_wait_unless_exiting(&q->gate_changed, &q->lock);
    q->gates_unreturned--;
    pthread_cond_broadcast(&q->gate_changed);
    pthread_mutex_unlock(&q->lock);
}

typedef struct push_watch {
    const gpu_host_queue *q;
    size_t seen;
} push_watch;

static bool item_pushed(const void *arg)
{
    const push_watch *w = arg;
    return atomic_load_explicit(&w->q->pushes, memory_order_relaxed) != w->seen;
}

/*
 * Under q->lock, with nothing queued: until an item comes or the stream is
 * closed. The thread spins once (TP_SPIN_NS, the lock left) before it sleeps
 * where an item is a few us away: a launch is under way (it woke the thread
 * before its runtime calls), or an item just ran (a program that launches and
 * synchronizes in turn launches again within the release and its synchronize).
 * A sleeping thread's futex wake-up is what the spin saves (issue 53 measured the
 * round trip on an idle H100 stream at 17.8 us against raw cudaLaunchHostFunc's
 * 8.6 us before it; the wake-up's share of that was not measured). Once only: a
 * launch blocked in the runtime (the device's queue for the stream full) does
 * not keep the thread spinning.
 */
static void wait_for_work(gpu_host_queue *q, bool just_ran)
{
    bool may_spin = just_ran || q->incoming > 0;
    while (q->count == 0 && !q->closed) {
        if (may_spin) {
            push_watch watch = {q, atomic_load_explicit(&q->pushes, memory_order_relaxed)};
            pthread_mutex_unlock(&q->lock);
            (void)tp_spin_until(item_pushed, &watch, TP_SPIN_NS);
            pthread_mutex_lock(&q->lock);
            may_spin = false;
            if (q->count > 0 || q->closed)
                break;
        }
        q->worker_idle = true;
        pthread_cond_wait(&q->work_ready, &q->lock);
        q->worker_idle = false;
        may_spin = q->incoming > 0;
    }
}

static void *worker_main(void *arg)
{
    gpu_host_queue *q = arg;
    running_queue = q;
#if defined(__GLIBC__)
    char name[16]; /* the kernel's limit, NUL included */
    snprintf(name, sizeof name, "tpevent-%s:%d", RT_BACKEND_NAME, q->device->index);
    pthread_setname_np(pthread_self(), name);
#endif
    /* Host functions run with the stream's device current, and the waits below
     * need its context: made current for good (the guard is never left). */
    rt_guard guard;
    (void)rt_guard_enter(&guard, q->device->context, RT_NEED_DEVICE);
    /* A program's capture in global mode on another thread is not invalidated by
     * this thread's queries and waits, nor by its host functions' calls. */
    rt_thread_relax_capture();

    pthread_mutex_lock(&q->lock);
    for (bool just_ran = false;; just_ran = true) {
        wait_for_work(q, just_ran);
        if (q->count == 0)
            break; /* destroyed and drained */
        host_item item = q->ring[q->first];
        q->first = (q->first + 1) & (q->capacity - 1);
        q->count--;
        pthread_mutex_unlock(&q->lock);

        if (item.reached)
            wait_reached(item.reached);
        else
            gate_wait_reached(q, item.seq);
        if (gpu_counters_exiting())
            return NULL; /* the exit handler released the stream; run nothing, touch nothing */
        item.fn(item.arg);

        if (item.reached)
            gpu_counter_raise(q->counter.host, item.seq);
        pthread_mutex_lock(&q->lock);
        if (item.reached) {
            q->spare[q->spare_count++] = item.reached; /* reached: ready for a launch */
        } else {
            q->gates_done = item.seq;
            pthread_cond_broadcast(&q->gate_changed);
        }
    }
    /* The gates still return into this queue. */
    while (q->gates_unreturned > 0)
        pthread_cond_wait(&q->gate_changed, &q->lock);
    pthread_mutex_unlock(&q->lock);
    queue_free(q);
    return NULL;
}

static tp_status worker_start(gpu_host_queue *q)
{
    int err = tp_thread_start_detached(worker_main, q);
    if (err == 0)
        return TP_OK;
    tp_status status = err == EAGAIN || err == ENOMEM ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
    return gpu.host->fail(status,
                          "tp_stream_launch_host_fn: pthread_create for the host functions of a %s:%d stream: %s",
                          RT_BACKEND_NAME, q->device->index, strerror(err));
}

/* ------------------------------------------------------------------- queue */

/* Under queue_creation_lock. */
static tp_status queue_create(gpu_stream *stream, gpu_host_queue **out)
{
    gpu_host_queue *q = calloc(1, sizeof *q);
    if (!q)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    q->held_on_device = gpu_counters_supported(stream->device);
    tp_status status = q->held_on_device ? gpu_counter_take(stream->device, "tp_stream_launch_host_fn", &q->counter)
                                         : gpu_counters_watch_exit("tp_stream_launch_host_fn");
    if (status != TP_OK) {
        free(q);
        return status;
    }
    q->device = stream->device;
    q->native = stream->native;
    atomic_init(&q->pushes, 0);
    if (q->held_on_device)
        q->submitted = atomic_load_explicit(q->counter.host, memory_order_relaxed);
    pthread_mutex_init(&q->submit_lock, NULL);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work_ready, NULL);
    pthread_cond_init(&q->gate_changed, NULL);
    status = worker_start(q);
    if (status != TP_OK) {
        if (q->held_on_device)
            gpu_counter_give(q->device, q->counter);
        pthread_cond_destroy(&q->gate_changed);
        pthread_cond_destroy(&q->work_ready);
        pthread_mutex_destroy(&q->lock);
        pthread_mutex_destroy(&q->submit_lock);
        free(q);
        return status;
    }
    *out = q;
    return TP_OK;
}

/* The stream's queue, made at its first host function; racing first launches
 * agree on one. */
static tp_status stream_queue(gpu_stream *stream, gpu_host_queue **out)
{
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_acquire);
    tp_status status = TP_OK;
    if (!q) {
        pthread_mutex_lock(&queue_creation_lock);
        q = atomic_load_explicit(&stream->host_queue, memory_order_relaxed);
        if (!q) {
            status = queue_create(stream, &q);
            if (status == TP_OK)
                atomic_store_explicit(&stream->host_queue, q, memory_order_release);
        }
        pthread_mutex_unlock(&queue_creation_lock);
    }
    *out = q;
    return status;
}

/* Under q->lock. Keeps the pending items in order, from index 0. The spare list
 * grows with it: a stream never has more events than items in flight, plus one. */
static tp_status ring_grow(gpu_host_queue *q)
{
    size_t capacity = q->capacity ? q->capacity * 2 : HOST_RING_INITIAL;
    bool spare_grown = tp_array_resize(&q->spare, capacity + 1, sizeof *q->spare);
    host_item *ring = spare_grown ? malloc(capacity * sizeof *ring) : NULL;
    if (!ring)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY,
                              "tp_stream_launch_host_fn: out of memory growing a stream's host functions to %zu",
                              capacity);
    for (size_t i = 0; i < q->count; i++)
        ring[i] = q->ring[(q->first + i) & (q->capacity - 1)];
    free(q->ring);
    q->ring = ring;
    q->capacity = capacity;
    q->first = 0;
    return TP_OK;
}

/* Under q->lock: room in the ring for the item a launch is about to push (only
 * launches push, one at a time under submit_lock, so the room stays). The launch
 * is then incoming until it pushes or gives up (ring_abandon); a sleeping thread
 * is woken now, so that its wake-up overlaps the launch's runtime calls. */
static tp_status ring_reserve(gpu_host_queue *q)
{
    tp_status status = q->count == q->capacity ? ring_grow(q) : TP_OK;
    if (status == TP_OK) {
        q->incoming++;
        if (q->worker_idle)
            pthread_cond_signal(&q->work_ready);
    }
    return status;
}

/* A launch that reserved gave up: nothing will be pushed. */
static void ring_abandon(gpu_host_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->incoming--;
    pthread_mutex_unlock(&q->lock);
}

static void ring_push(gpu_host_queue *q, host_item item)
{
    pthread_mutex_lock(&q->lock);
    q->ring[(q->first + q->count) & (q->capacity - 1)] = item;
    q->count++;
    q->incoming--;
    atomic_fetch_add_explicit(&q->pushes, 1, memory_order_relaxed);
    if (q->worker_idle)
        pthread_cond_signal(&q->work_ready);
    pthread_mutex_unlock(&q->lock);
}

/*
 * Under q->submit_lock, with the stream's device current: the record and the wait
 * go on the native stream in the order of the queue, so that each item's event
 * comes after the wait of the one before. q->lock is taken only around the ring:
 * with many host functions pending the runtime calls below block until the device
 * has room for more work on the stream, which only the thread's progress (popping
 * items under q->lock) makes (seen on the H200: 17 host functions launched at once
 * hung when the launch held the thread's lock).
 */
static tp_status enqueue_held_on_device(gpu_host_queue *q, void (*fn)(void *), void *arg)
{
    rt_event reached = NULL;
    pthread_mutex_lock(&q->lock);
    tp_status status = ring_reserve(q);
    if (status == TP_OK && q->spare_count > 0)
        reached = q->spare[--q->spare_count];
    pthread_mutex_unlock(&q->lock);
    if (status != TP_OK)
        return status;
    if (!reached) {
        status = gpu_pool_take(q->device, TP_EVENT_BLOCKING, &reached);
        if (status != TP_OK) {
            ring_abandon(q);
            return status;
        }
    }
    uint64_t seq = q->submitted + 1;
    const char *call = RT_CALL("EventRecord");
    rt_error e = rt_event_record(reached, q->native);
    if (e == RT_SUCCESS) {
        call = RT_WAIT_VALUE_CALL;
        e = rt_stream_wait_value64(q->native, q->counter.device, seq);
    }
    if (TP_UNLIKELY(e != RT_SUCCESS)) {
        gpu_pool_give(q->device, TP_EVENT_BLOCKING, reached, true);
        ring_abandon(q);
        return gpu_fail_call(call, e);
    }
    q->submitted = seq;
    ring_push(q, (host_item){fn, arg, reached, seq});
    return TP_OK;
}

/* Beyond the window (HOST_DEVICE_WINDOW): the same, held by a gate. Under
 * q->submit_lock, with the stream's device current. */
static tp_status enqueue_behind_gate(gpu_host_queue *q, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&q->lock);
    tp_status status = ring_reserve(q);
    if (status == TP_OK)
        q->gates_unreturned++; /* before the launch: the gate may return at once */
    pthread_mutex_unlock(&q->lock);
    if (status != TP_OK)
        return status;
    rt_error e = rt_launch_host_fn(q->native, gate_main, q);
    if (TP_UNLIKELY(e != RT_SUCCESS)) {
        pthread_mutex_lock(&q->lock);
        q->gates_unreturned--;
        q->incoming--;
        pthread_mutex_unlock(&q->lock);
        return gpu_fail_call(RT_CALL("LaunchHostFunc"), e);
    }
    ring_push(q, (host_item){fn, arg, NULL, ++q->gates_launched});
    return TP_OK;
}

/* ----------------------------------------------------------------- entries */

/* Someone else's capture (torch.cuda.graph) on a wrapped stream: a node made again
 * at each of that graph's launches (gpu_host_fn_graph.c), kept for good, as
 * tpevent cannot know when that graph is gone. */
TP_NOINLINE static tp_status capture_for_someone_else(gpu_stream *stream, void (*fn)(void *), void *arg)
{
    gpu_host_fn_node *node = NULL;
    tp_status status = gpu_host_fn_capture(stream, fn, arg, NULL, false, &node);
    if (status == TP_OK)
        gpu_host_fn_node_keep(node);
    return status;
}

tp_status gpu_host_fn_launch(tp_stream *base, void (*fn)(void *), void *arg, bool *capture_began)
{
    gpu_stream *stream = gpu_as_stream(base);
    *capture_began = false;
    if (TP_UNLIKELY(gpu_counters_exiting()))
        return gpu_counters_refused_at_exit("tp_stream_launch_host_fn");
    /* The record and the stream memory operation need the stream's device
     * current, as cudaLaunchHostFunc does (for cudaLaunchHostFunc on a stream of
     * another device than the current one, CUDA 13's driver reports "stream does
     * not belong to the expected context"). */
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    /*
     * Rule 16. Captured, the record and the wait would be wrong at every replay:
     * the wait keeps this launch's seq, and the thread hears of one run only. So
     * under a capture someone else began on a wrapped stream (torch.cuda.graph),
     * the function is captured as a node instead (the stream needs no queue);
     * tpevent's own captures are gpu_graph.c's, which sends them there too.
     */
    if (TP_UNLIKELY(base->kind & TP_STREAM_BORROWED) && rt_stream_capturing(stream->native)) {
        rt_guard_leave(&guard);
        return capture_for_someone_else(stream, fn, arg);
    }
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_acquire);
    if (TP_UNLIKELY(!q)) {
        tp_status status = stream_queue(stream, &q);
        if (status != TP_OK) {
            rt_guard_leave(&guard);
            return status;
        }
    }
    pthread_mutex_lock(&q->submit_lock);
    /* A capture tpevent began after this launch found the stream outside any
     * (gpu_host_fn_launches_pause) or made it join one: what goes to the stream now would go into its
     * graph, so the capture layer takes the launch. */
    if (TP_UNLIKELY(atomic_load_explicit(&stream->capture, memory_order_relaxed) != NULL)) {
        pthread_mutex_unlock(&q->submit_lock);
        rt_guard_leave(&guard);
        *capture_began = true;
        return TP_OK;
    }
    bool on_device = q->held_on_device &&
                     q->submitted - atomic_load_explicit(q->counter.host, memory_order_acquire) < HOST_DEVICE_WINDOW;
    tp_status status = on_device ? enqueue_held_on_device(q, fn, arg) : enqueue_behind_gate(q, fn, arg);
    pthread_mutex_unlock(&q->submit_lock);
    rt_guard_leave(&guard);
    return status;
}

/* A capture's begin pauses the stream's launches across the runtime's begin and
 * the stream's entry into the capture (gpu_graph_exec.c), as a wait that may make
 * the stream join a capture does (gpu_graph.c): a launch which found the stream
 * outside any capture either reaches the stream before the runtime captures it
 * or, after the pause, finds the capture (gpu_host_fn_launch's *capture_began).
 * Else its gate would land in a graph whose launches its queue never feeds again.
 * A stream without a queue keeps queue_creation_lock, so none is made until the
 * resume: a first launch makes it after, and looks then. Neither lock is held by
 * a launch while it waits for gpu_capture_lock. */
void gpu_host_fn_launches_pause(gpu_stream *stream)
{
    pthread_mutex_lock(&queue_creation_lock);
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_relaxed);
    if (!q)
        return;
    pthread_mutex_lock(&q->submit_lock);
    pthread_mutex_unlock(&queue_creation_lock);
}

void gpu_host_fn_launches_resume(gpu_stream *stream)
{
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_relaxed);
    pthread_mutex_unlock(q ? &q->submit_lock : &queue_creation_lock);
}

void gpu_host_fn_stream_closed(gpu_stream *stream)
{
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_acquire);
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    if (q->worker_idle)
        pthread_cond_signal(&q->work_ready);
    pthread_mutex_unlock(&q->lock);
    /* From here the thread owns the queue, and frees it once drained. */
}

bool gpu_host_fn_would_wait_for_itself(const gpu_stream *stream)
{
    const gpu_host_queue *q = running_queue;
    if (TP_LIKELY(!q) || q->device != stream->device)
        return false;
    return q->native == stream->native || (RT_DEFAULT_STREAM_WAITS_FOR_ALL && stream->follows_current_device);
}

bool gpu_host_fn_on_device(int device)
{
    const gpu_host_queue *q = running_queue;
    return (q && q->device->index == device) || gpu_host_fn_graph_on_device(device);
}
