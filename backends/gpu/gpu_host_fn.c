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
 *
 * Why an event, not a tiny cudaLaunchHostFunc callback that wakes the thread: that
 * callback would run on the runtime's one callback thread, where whatever else
 * blocks (a program's own host function) would delay every tpevent host function.
 *
 * Counters. One 64-byte line per stream (one counter: the threads of two streams
 * never write the same line), from slabs of mapped host memory per device, so that
 * 40,000 streams pin 2.5 MB rather than a page each. A counter only grows: a stream
 * takes over a free counter at the value it has, so no wait its last owner left
 * (all passed) can be armed again. Every value stays below 2^63 (HIP compares
 * plainly, CUDA cyclically: see the mappings).
 *
 * Where the device cannot do this (rt_stream_wait_value_supported says why: no
 * 64-bit stream memory operations, no mapped host memory), host functions go
 * through the runtime's own (rt_launch_host_fn), as before this file: they then
 * share the runtime's one thread and must not call the runtime. The README says so.
 *
 * Destroying a stream with host functions pending (rule 9): its thread still runs
 * them, in order, then gives back its events and its counter and frees the queue;
 * the runtime frees the native stream once its work is done, as for any work.
 *
 * Process exit. An exit handler (registered with the first counter taken, a
 * queue's or a cross-backend wait's hold, gpu_hold.c) marks the
 * process exiting, then raises every counter of every slab by 2^62: every wait
 * ever enqueued passes, so no GPU stream stays held and the runtime's teardown
 * finds none blocked. From then on no host function starts and launches are
 * refused; one already running is not interrupted, and exit does not wait for it.
 *
 * A host function that synchronizes its own stream, or its device, would wait for
 * itself forever; those calls fail with TP_ERR_INVALID_ARGUMENT instead, as on the
 * CPU backend. Waits that come back through other streams cannot be seen.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "backends/gpu/gpu_internal.h"
#include "backends/common/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One counter per cache line, 1024 per slab. */
#define HOST_COUNTER_BYTES 64u
#define HOST_SLAB_BYTES 65536u
#define HOST_SLAB_COUNTERS (HOST_SLAB_BYTES / HOST_COUNTER_BYTES)

/* How long a thread spins on its event's query before it sleeps in the runtime's
 * wait: long enough to catch an idle stream reaching a record (a few us), short
 * enough that a stream busy for long costs its thread nothing measurable. */
#define HOST_SPIN_NS 20000u

/* What the exit handler adds to every counter: more than any stream is ever
 * ahead of its counter, and 2^63 is never reached. */
#define HOST_RELEASE_STEP (UINT64_C(1) << 62)

#define HOST_RING_INITIAL 16u

/* Host functions of one stream held on the device by stream memory operations at
 * once, at most; a launch beyond goes through the runtime's own host functions (in
 * stream order all the same). On the H200, 100 host functions launched at once
 * made the launching thread block inside the runtime (its queue for the stream was
 * full), and a thread that would open a gate ahead of them could then never do so;
 * 50 did not. Beyond the window rule 15 does not hold for those host functions:
 * they may wait for each other on the runtime's one thread. */
#define HOST_DEVICE_WINDOW 32u

typedef gpu_counter host_counter; /* gpu_internal.h: gpu_hold.c takes them too */

/* Never freed: the exit handler walks the slabs without a lock of its own. */
typedef struct host_slab {
    struct host_slab *next; /* set before the slab is published */
    unsigned char *memory;
} host_slab;

enum { HOST_MODE_UNKNOWN, HOST_MODE_THREAD, HOST_MODE_RUNTIME };

typedef struct host_device {
    _Atomic int mode; /* HOST_MODE_*: decided at the device's first host function */
    /* Why HOST_MODE_RUNTIME, for a debugger: no API shows it yet (tp_backend_info
     * has no field for it); the README says when it happens. */
    const char *_Atomic runtime_reason;
    _Atomic(host_slab *) slabs;
    host_counter *free; /* room for every counter of every slab; under host_fns.lock */
    size_t free_count, free_capacity;
} host_device;

static struct {
    /* Slabs, free counters, queue creation, the exit handler's registration. Never
     * held around user code, nor a call that waits for the device (the one runtime
     * call made under it, cudaHostAlloc, does not). */
    pthread_mutex_t lock;
    atomic_bool exiting;
    bool exit_handler_registered;
    pid_t owner; /* the process that registered it: a forked child inherits it */
    host_device devices[TP_MAX_DEVICES];
} host_fns = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct host_item {
    void (*fn)(void *);
    void *arg;
    rt_event reached; /* recorded just before the stream's wait for seq */
    uint64_t seq;
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
    uint64_t submitted; /* seq of the latest launch; under submit_lock */
    bool worker_idle;
    bool closed; /* the stream was destroyed: drain, then free */
    /* Set at creation. */
    host_counter counter;
    gpu_device *device;
    rt_stream native;
};

/* The queue whose thread this is; NULL on every other thread. */
static _Thread_local gpu_host_queue *running_queue;

/* -------------------------------------------------------------- counters */

/* Seen by the device: what the stream's waits compare with. */
static void counter_raise(_Atomic uint64_t *counter, uint64_t seq)
{
    /* Raised, never lowered: the exit handler may have raised it further. */
    uint64_t current = atomic_load_explicit(counter, memory_order_relaxed);
    while (current < seq &&
           !atomic_compare_exchange_weak_explicit(counter, &current, seq, memory_order_release, memory_order_relaxed)) {
    }
}

/* A new slab of counters for the device. Under host_fns.lock. */
static tp_status slab_add(gpu_device *device, host_device *slot)
{
    size_t needed = slot->free_count + HOST_SLAB_COUNTERS;
    if (slot->free_capacity < needed) {
        size_t capacity = slot->free_capacity + HOST_SLAB_COUNTERS;
        host_counter *free_list = realloc(slot->free, capacity * sizeof *free_list);
        if (!free_list)
            return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
        slot->free = free_list;
        slot->free_capacity = capacity;
    }
    host_slab *slab = malloc(sizeof *slab);
    if (!slab)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    void *memory = NULL;
    rt_device_ptr base;
    const char *call = RT_CALL("SetDevice");
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, device->context, RT_NEED_DEVICE);
    if (e == RT_SUCCESS) {
        call = RT_HOST_ALLOC_CALL;
        e = rt_host_alloc_mapped(&memory, HOST_SLAB_BYTES);
        if (e == RT_SUCCESS) {
            call = RT_CALL("HostGetDevicePointer");
            e = rt_host_device_pointer(&base, memory);
            if (e != RT_SUCCESS)
                (void)rt_host_free(memory);
        }
        rt_guard_leave(&guard);
    }
    if (e != RT_SUCCESS) {
        free(slab);
        return gpu_fail_call(call, e);
    }
    slab->memory = memory;
    for (size_t i = HOST_SLAB_COUNTERS; i-- > 0;) {
        _Atomic uint64_t *counter = (_Atomic uint64_t *)(void *)(slab->memory + i * HOST_COUNTER_BYTES);
        atomic_init(counter, 0);
        slot->free[slot->free_count++] = (host_counter){counter, rt_device_ptr_offset(base, i * HOST_COUNTER_BYTES)};
    }
    slab->next = atomic_load_explicit(&slot->slabs, memory_order_relaxed);
    atomic_store_explicit(&slot->slabs, slab, memory_order_release);
    return TP_OK;
}

/* Under host_fns.lock. */
static tp_status counter_take(gpu_device *device, host_counter *out)
{
    host_device *slot = &host_fns.devices[device->index];
    if (slot->free_count == 0) {
        tp_status status = slab_add(device, slot);
        if (status != TP_OK)
            return status;
    }
    *out = slot->free[--slot->free_count];
    return TP_OK;
}

/* Under host_fns.lock. */
static void counter_put(gpu_device *device, host_counter counter)
{
    host_device *slot = &host_fns.devices[device->index];
    slot->free[slot->free_count++] = counter; /* there is room for all of them */
}

static void counter_give(gpu_device *device, host_counter counter)
{
    pthread_mutex_lock(&host_fns.lock);
    counter_put(device, counter);
    pthread_mutex_unlock(&host_fns.lock);
}

/* gpu_hold.c's (gpu_internal.h). */
void gpu_counter_give(gpu_device *device, gpu_counter counter) { counter_give(device, counter); }
void gpu_counter_raise(gpu_counter counter, uint64_t value) { counter_raise(counter.host, value); }

/* ------------------------------------------------------------ process exit */

static void host_fns_at_exit(void)
{
    /* A child forked without exec has none of these threads and cannot use the
     * device; the counters may not even be mapped in it (pinned memory is often
     * not inherited), and the lock may have been held at the fork. */
    if (getpid() != host_fns.owner)
        return;
    atomic_store_explicit(&host_fns.exiting, true, memory_order_seq_cst);
    /* The lock keeps a slab from being added unseen (queue creation looks at the
     * mark under it); nothing holds it for long. */
    pthread_mutex_lock(&host_fns.lock);
    for (int d = 0; d < gpu.device_count; d++) {
        host_slab *slab = atomic_load_explicit(&host_fns.devices[d].slabs, memory_order_acquire);
        for (; slab; slab = slab->next)
            for (size_t i = 0; i < HOST_SLAB_COUNTERS; i++)
                atomic_fetch_add_explicit((_Atomic uint64_t *)(void *)(slab->memory + i * HOST_COUNTER_BYTES),
                                          HOST_RELEASE_STEP, memory_order_release);
    }
    pthread_mutex_unlock(&host_fns.lock);
}

static bool exiting(void)
{
    return atomic_load_explicit(&host_fns.exiting, memory_order_acquire);
}

/* Under host_fns.lock: the exit handler, registered with the first counter taken
 * (a queue's or a hold's, gpu_hold.c). */
static tp_status exit_handler_register(const char *operation)
{
    if (host_fns.exit_handler_registered)
        return TP_OK;
    host_fns.owner = getpid();
    if (atexit(host_fns_at_exit) != 0)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "%s: atexit failed", operation);
    host_fns.exit_handler_registered = true;
    return TP_OK;
}

tp_status gpu_counter_take(gpu_device *device, gpu_counter *out)
{
    pthread_mutex_lock(&host_fns.lock);
    /* Under the lock, as queue_create: the exit handler raises every slab's
     * counters under it, so a counter taken here is either raised or refused. */
    tp_status status = exiting() ? gpu.host->fail(TP_ERR_BACKEND, "tp_event_wait: the process is exiting")
                                 : exit_handler_register("tp_event_wait");
    if (status == TP_OK)
        status = counter_take(device, out);
    pthread_mutex_unlock(&host_fns.lock);
    return status;
}

TP_COLD static tp_status refused_at_exit(void)
{
    return gpu.host->fail(TP_ERR_BACKEND, "tp_stream_launch_host_fn: the process is exiting: host functions of %s "
                                          "streams no longer run",
                          RT_BACKEND_NAME);
}

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
    if (!tp_spin_until(event_reached, (const void *)(uintptr_t)event, HOST_SPIN_NS))
        (void)rt_event_synchronize(event); /* a blocking-sync event: the thread sleeps */
}

/* The last owner: the stream is destroyed and its queue drained. */
static void queue_free(gpu_host_queue *q)
{
    for (size_t i = 0; i < q->spare_count; i++)
        gpu_pool_give(q->device, TP_EVENT_BLOCKING, q->spare[i], false);
    counter_give(q->device, q->counter);
    pthread_cond_destroy(&q->work_ready);
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->submit_lock);
    free(q->spare);
    free(q->ring);
    free(q);
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
    for (;;) {
        while (q->count == 0 && !q->closed) {
            q->worker_idle = true;
            pthread_cond_wait(&q->work_ready, &q->lock);
            q->worker_idle = false;
        }
        if (q->count == 0)
            break; /* destroyed and drained */
        host_item item = q->ring[q->first];
        q->first = (q->first + 1) & (q->capacity - 1);
        q->count--;
        pthread_mutex_unlock(&q->lock);

        wait_reached(item.reached);
        if (exiting())
            return NULL; /* the exit handler released the stream; run nothing, touch nothing */
        item.fn(item.arg);
        counter_raise(q->counter.host, item.seq);

        pthread_mutex_lock(&q->lock);
        q->spare[q->spare_count++] = item.reached; /* reached: ready for a launch */
    }
    pthread_mutex_unlock(&q->lock);
    queue_free(q);
    return NULL;
}

static tp_status worker_start(gpu_host_queue *q)
{
    /* Every signal blocked in the new thread (it inherits the mask), so that the
     * application's handlers run on its own threads, as on the CPU backend. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err == 0) {
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_sigmask(SIG_SETMASK, &all, &previous);
        pthread_t thread;
        err = pthread_create(&thread, &attr, worker_main, q);
        pthread_sigmask(SIG_SETMASK, &previous, NULL);
        pthread_attr_destroy(&attr);
    }
    if (err == 0)
        return TP_OK;
    tp_status status = err == EAGAIN || err == ENOMEM ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
    return gpu.host->fail(status, "tp_stream_launch_host_fn: pthread_create for the host functions of a %s:%d stream: %s",
                          RT_BACKEND_NAME, q->device->index, strerror(err));
}

/* ------------------------------------------------------------------- queue */

/* Under host_fns.lock. */
static tp_status queue_create(gpu_stream *stream, gpu_host_queue **out)
{
    if (exiting())
        return refused_at_exit();
    tp_status status = exit_handler_register("tp_stream_launch_host_fn");
    if (status != TP_OK)
        return status;
    gpu_host_queue *q = calloc(1, sizeof *q);
    if (!q)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_launch_host_fn: out of memory");
    status = counter_take(stream->device, &q->counter);
    if (status != TP_OK) {
        free(q);
        return status;
    }
    q->device = stream->device;
    q->native = stream->native;
    q->submitted = atomic_load_explicit(q->counter.host, memory_order_relaxed);
    pthread_mutex_init(&q->submit_lock, NULL);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work_ready, NULL);
    status = worker_start(q);
    if (status != TP_OK) {
        counter_put(q->device, q->counter);
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
        pthread_mutex_lock(&host_fns.lock);
        q = atomic_load_explicit(&stream->host_queue, memory_order_relaxed);
        if (!q) {
            status = queue_create(stream, &q);
            if (status == TP_OK)
                atomic_store_explicit(&stream->host_queue, q, memory_order_release);
        }
        pthread_mutex_unlock(&host_fns.lock);
    }
    *out = q;
    return status;
}

/* Under q->lock. Keeps the pending items in order, from index 0. The spare list
 * grows with it: a stream never has more events than items in flight, plus one. */
static tp_status ring_grow(gpu_host_queue *q)
{
    size_t capacity = q->capacity ? q->capacity * 2 : HOST_RING_INITIAL;
    rt_event *spare = realloc(q->spare, (capacity + 1) * sizeof *spare);
    if (spare)
        q->spare = spare;
    host_item *ring = spare ? malloc(capacity * sizeof *ring) : NULL;
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

/*
 * Under q->submit_lock, with the stream's device current: the record and the wait
 * go on the native stream in the order of the queue, so that each item's event
 * comes after the wait of the one before. q->lock is taken only around the ring:
 * with many host functions pending the runtime calls below block until the device
 * has room for more work on the stream, which only the thread's progress (popping
 * items under q->lock) makes (seen on the H200: 17 host functions launched at once
 * hung when the launch held the thread's lock).
 */
static tp_status enqueue(gpu_host_queue *q, void (*fn)(void *), void *arg)
{
    rt_event reached = NULL;
    pthread_mutex_lock(&q->lock);
    /* Room now means room at the push: only launches add items, one at a time. */
    tp_status status = q->count == q->capacity ? ring_grow(q) : TP_OK;
    if (status == TP_OK && q->spare_count > 0)
        reached = q->spare[--q->spare_count];
    pthread_mutex_unlock(&q->lock);
    if (status != TP_OK)
        return status;
    if (!reached) {
        status = gpu_pool_take(q->device, TP_EVENT_BLOCKING, &reached);
        if (status != TP_OK)
            return status;
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
        return gpu_fail_call(call, e);
    }
    q->submitted = seq;
    pthread_mutex_lock(&q->lock);
    q->ring[(q->first + q->count) & (q->capacity - 1)] = (host_item){fn, arg, reached, seq};
    q->count++;
    if (q->worker_idle)
        pthread_cond_signal(&q->work_ready);
    pthread_mutex_unlock(&q->lock);
    return TP_OK;
}

/* ----------------------------------------------------------------- entries */

static int device_mode(gpu_device *device)
{
    host_device *slot = &host_fns.devices[device->index];
    int mode = atomic_load_explicit(&slot->mode, memory_order_acquire);
    if (TP_LIKELY(mode != HOST_MODE_UNKNOWN))
        return mode;
    const char *why = "";
    mode = rt_stream_wait_value_supported(device->index, &why) ? HOST_MODE_THREAD : HOST_MODE_RUNTIME;
    if (mode == HOST_MODE_RUNTIME)
        atomic_store_explicit(&slot->runtime_reason, why, memory_order_relaxed);
    atomic_store_explicit(&slot->mode, mode, memory_order_release);
    return mode;
}

/*
 * Where the device cannot hold a stream on host memory: the runtime's own host
 * functions, with the stream's device current, as PyTorch does (for
 * cudaLaunchHostFunc on a stream of another device than the current one, CUDA 13's
 * driver reports "stream does not belong to the expected context").
 */
TP_NOINLINE static tp_status launch_through_runtime(gpu_stream *stream, void (*fn)(void *), void *arg)
{
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    e = rt_launch_host_fn(stream->native, fn, arg);
    rt_guard_leave(&guard);
    return TP_LIKELY(e == RT_SUCCESS) ? TP_OK : gpu_fail_call(RT_CALL("LaunchHostFunc"), e);
}

tp_status gpu_host_fn_launch(tp_stream *base, void (*fn)(void *), void *arg)
{
    gpu_stream *stream = gpu_as_stream(base);
    if (TP_UNLIKELY(exiting()))
        return refused_at_exit();
    gpu_host_queue *q = atomic_load_explicit(&stream->host_queue, memory_order_acquire);
    if (TP_UNLIKELY(!q)) {
        if (device_mode(stream->device) == HOST_MODE_RUNTIME)
            return launch_through_runtime(stream, fn, arg);
        tp_status status = stream_queue(stream, &q);
        if (status != TP_OK)
            return status;
    }
    /* The record and the stream memory operation need the stream's device
     * current, as cudaLaunchHostFunc does (see launch_through_runtime). */
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (TP_UNLIKELY(e != RT_SUCCESS))
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    /*
     * Rule 16. Captured, the record and the wait would be wrong at every replay:
     * the wait keeps this launch's seq, and the thread hears of one run only (its
     * query of an event recorded inside a capture fails, so fn would even run at
     * capture time). So under a capture someone else began on a wrapped stream
     * (torch.cuda.graph), the runtime's own host function is captured instead, a
     * graph node that runs at each replay; rule 15 then does not hold inside the
     * graph. tpevent's own capture (the capture issue) checks its streams here
     * too, and refuses with TP_ERR_CAPTURING what it cannot replay correctly.
     */
    if (TP_UNLIKELY(base->kind & TP_STREAM_BORROWED) && rt_stream_capturing(stream->native)) {
        rt_guard_leave(&guard);
        return launch_through_runtime(stream, fn, arg);
    }
    pthread_mutex_lock(&q->submit_lock);
    uint64_t done = atomic_load_explicit(q->counter.host, memory_order_acquire);
    tp_status status = q->submitted - done >= HOST_DEVICE_WINDOW ? launch_through_runtime(stream, fn, arg)
                                                                 : enqueue(q, fn, arg);
    pthread_mutex_unlock(&q->submit_lock);
    rt_guard_leave(&guard);
    return status;
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
    return q && q->device->index == device;
}
