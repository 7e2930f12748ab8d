/*
 * stream_hold (core/backend.h; rule 14): later work on a GPU stream waits until the
 * host lets it go, without holding a thread the runtime needs. What the core
 * makes a GPU stream wait on another backend's record with (core/wait_across.c):
 * the other backend's snapshot_notify calls the release.
 *
 * Stream memory operations, where the device has them (the same check host
 * functions make, rt_stream_wait_value_supported): a counter from gpu_host_counter.c's
 * mapped host slabs, and a wait on the stream for counter >= target, target one
 * more than the counter's value now. The release stores target (release ordering)
 * and gives the counter back: the device sees the store and lets the stream go
 * (10.8 us p50 on the H200, the measure). Nothing on the host waits.
 * Counters only grow, so a counter taken again continues from its value and no
 * earlier wait of it can be armed again; the exit handler of gpu_host_counter.c raises
 * every slab's counters, these included, so no stream stays held at exit.
 *
 * The fallback (no stream memory operations, or TPEVENT_GPU_WAIT=host-fn): a
 * runtime host function on the stream that blocks until the release. It holds the
 * runtime's one callback thread meanwhile (CUDA runs every stream's runtime host
 * functions on one thread): other streams' runtime host functions wait for it,
 * and so do other backends' notifies of this runtime. tpevent's own host
 * functions (rule 15) run on their own threads where the device has stream memory
 * operations, so with the setting forced they are not delayed. At exit every
 * gate stops waiting, as the counters are raised (gpu_host_counter.c's exit
 * handler, which both share; gpu_wait_unless_exiting).
 *
 * Rule 9: the stream may be destroyed before the release: the runtime keeps the
 * native stream until its work (the wait) is done, and the release, which must
 * still come, touches only the counter or the gate, never the stream.
 *
 * Refused on a wrapped stream that someone else is capturing (torch.cuda.graph):
 * a stream memory operation captured into a graph keeps its target at every
 * launch, which would break rule 6 at replay (DESIGN.md, pitfalls).
 */
#include "backends/gpu/gpu_internal.h"
#include "common/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HOLD_UNKNOWN, HOLD_COUNTER, HOLD_GATE };

/* A hold on a counter; kept on a free list after its release, so that a
 * warmed-up program's waits allocate nothing. */
typedef struct counter_hold {
    struct counter_hold *next;
    gpu_device *device;
    gpu_counter counter;
    uint64_t target;
} counter_hold;

/* A gate: the host function and the release each drop a reference. */
typedef struct gate_hold {
    atomic_uint refs;
    bool open; /* under holds.gate_lock */
} gate_hold;

static struct {
    _Atomic int mode[TP_MAX_DEVICES];           /* HOLD_*, decided at first need */
    const char *_Atomic reason[TP_MAX_DEVICES]; /* why HOLD_GATE */
    pthread_mutex_t free_lock;
    counter_hold *free;
    /* Gates: one lock and one condition for all of them (a fallback, rarely more
     * than one closed at once: they share the runtime's one thread anyway). */
    pthread_mutex_t gate_lock;
    pthread_cond_t gate_changed;
} holds = {
    .free_lock = PTHREAD_MUTEX_INITIALIZER,
    .gate_lock = PTHREAD_MUTEX_INITIALIZER,
    .gate_changed = PTHREAD_COND_INITIALIZER,
};

/* -------------------------------------------------------------- the mode */

static int hold_mode(gpu_device *device)
{
    int mode = atomic_load_explicit(&holds.mode[device->index], memory_order_acquire);
    if (TP_LIKELY(mode != HOLD_UNKNOWN))
        return mode;
    const char *setting = tp_env("TPEVENT_GPU_WAIT");
    const char *why = "";
    if (setting && strcmp(setting, "host-fn") == 0) {
        why = "forced by TPEVENT_GPU_WAIT=host-fn";
        mode = HOLD_GATE;
    } else if (gpu_counters_supported(device)) {
        mode = HOLD_COUNTER;
    } else {
        why = gpu_counters_unsupported_reason(device);
        mode = HOLD_GATE;
    }
    atomic_store_explicit(&holds.reason[device->index], why, memory_order_relaxed);
    atomic_store_explicit(&holds.mode[device->index], mode, memory_order_release);
    return mode;
}

tp_status gpu_wait_mechanism(int device, char *buf, size_t size)
{
    gpu_device *d = &gpu.devices[device];
    if (hold_mode(d) == HOLD_COUNTER)
        snprintf(buf, size, "stream memory operations (%s on mapped host memory)", RT_WAIT_VALUE_CALL);
    else
        snprintf(buf, size, "host-function gate on the runtime's callback thread (fallback: %s)",
                 atomic_load_explicit(&holds.reason[device], memory_order_relaxed));
    return TP_OK;
}

/* ------------------------------------------------------------ counter hold */

static void counter_release(void *arg)
{
    counter_hold *hold = arg;
    gpu_counter_raise(hold->counter.host, hold->target);
    /* Given back at once: its value is target now, so a next owner's wait (for
     * more) cannot be passed by this one's. */
    gpu_counter_give(hold->device, hold->counter);
    pthread_mutex_lock(&holds.free_lock);
    hold->next = holds.free;
    holds.free = hold;
    pthread_mutex_unlock(&holds.free_lock);
}

/* With the stream's device current. */
static tp_status hold_on_counter(gpu_stream *stream, void (**release)(void *), void **arg)
{
    pthread_mutex_lock(&holds.free_lock);
    counter_hold *hold = holds.free;
    if (hold)
        holds.free = hold->next;
    pthread_mutex_unlock(&holds.free_lock);
    if (!hold && !(hold = malloc(sizeof *hold)))
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_wait: out of memory");
    tp_status status = gpu_counter_take(stream->device, "tp_event_wait", &hold->counter);
    if (status != TP_OK) {
        free(hold);
        return status;
    }
    hold->device = stream->device;
    hold->target = atomic_load_explicit(hold->counter.host, memory_order_relaxed) + 1;
    rt_error e = rt_stream_wait_value64(stream->native, hold->counter.device, hold->target);
    if (e != RT_SUCCESS) {
        gpu_counter_give(stream->device, hold->counter);
        free(hold);
        return gpu_fail_call(RT_WAIT_VALUE_CALL, e);
    }
    *release = counter_release;
    *arg = hold;
    return TP_OK;
}

/* --------------------------------------------------------------- gate hold */

static void gate_unref(gate_hold *gate)
{
    if (atomic_fetch_sub_explicit(&gate->refs, 1, memory_order_acq_rel) == 1)
        free(gate);
}

static void gate_release(void *arg)
{
    gate_hold *gate = arg;
    pthread_mutex_lock(&holds.gate_lock);
    gate->open = true;
    pthread_cond_broadcast(&holds.gate_changed);
    pthread_mutex_unlock(&holds.gate_lock);
    gate_unref(gate);
}

/* On the runtime's callback thread: blocks it until the release, or until the
 * process exits (so that the runtime's teardown finds no stream held). */
static void gate_host_fn(void *arg)
{
    gate_hold *gate = arg;
    pthread_mutex_lock(&holds.gate_lock);
    while (!gate->open && !gpu_counters_exiting())
        gpu_wait_unless_exiting(&holds.gate_changed, &holds.gate_lock);
    pthread_mutex_unlock(&holds.gate_lock);
    gate_unref(gate);
}

/* With the stream's device current (the runtime's host functions need it). */
static tp_status hold_on_gate(gpu_stream *stream, void (**release)(void *), void **arg)
{
    tp_status status = gpu_counters_watch_exit("tp_event_wait");
    if (status != TP_OK)
        return status;
    gate_hold *gate = malloc(sizeof *gate);
    if (!gate)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_wait: out of memory");
    atomic_init(&gate->refs, 2);
    gate->open = false;
    rt_error e = rt_launch_host_fn(stream->native, gate_host_fn, gate);
    if (e != RT_SUCCESS) {
        free(gate);
        return gpu_fail_call(RT_CALL("LaunchHostFunc"), e);
    }
    *release = gate_release;
    *arg = gate;
    return TP_OK;
}

/* ------------------------------------------------------------------ entry */

tp_status gpu_stream_hold(tp_stream *base, void (**release)(void *), void **arg)
{
    gpu_stream *stream = gpu_as_stream(base);
    int mode = hold_mode(stream->device);
    rt_guard guard;
    rt_error e = rt_guard_enter(&guard, stream->device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    tp_status status;
    if ((base->kind & TP_STREAM_BORROWED) && rt_stream_capturing(stream->native))
        status = gpu.host->fail(TP_ERR_UNSUPPORTED,
                                "tp_event_wait: the %s:%d stream is being captured: a wait on another backend's record "
                                "cannot be captured (it would wait for this record at every launch of the graph)",
                                RT_BACKEND_NAME, stream->device->index);
    else
        status = mode == HOLD_COUNTER ? hold_on_counter(stream, release, arg) : hold_on_gate(stream, release, arg);
    rt_guard_leave(&guard);
    return status;
}
