/*
 * stream_hold (core/backend.h; rule 14): later work on a GPU stream waits until the
 * host lets it go, without holding a thread the runtime needs. What the core
 * makes a GPU stream wait on another backend's record with (core/wait_across.c):
 * the other backend's snapshot_notify calls the release.
 *
 * A stream's holds form a chain (gpu_hold_chain, made at its first hold): hold k
 * of the stream is a wait on the stream for "the chain's counter >= base + k", the
 * counter one of gpu_host_counter.c's in mapped host memory, taken for the stream.
 * Releases come in any order; the counter is raised to base + k once holds 1..k were
 * all released, so a hold never lets a later one go early. The device sees the store
 * and lets the stream go (10.8 us p50 on the H200). Nothing on the host waits.
 * Counters only grow; the exit handler of gpu_host_counter.c raises every slab's
 * counters, these included, so no stream stays held at exit.
 *
 * The window (rule 17). A stream's runtime queue is finite: on the H200 the 1,021st
 * pending cuStreamWaitValue64 blocked its caller for 977 ms, and for good when that
 * caller was the thread that would release the first. So at most RT_HOLD_WINDOW holds
 * of a stream are queued on the device and not yet let go; a hold past that joins
 * the latest one queued instead of queuing a new operation: that one is then let go
 * only once its own release and every joined release came. Work submitted between
 * the two waits for the later release too (an order no event asked for, rule 12),
 * the price of never blocking the caller; docs/semantics.md says so. A wait on
 * another runtime's timeline semaphore (gpu_timeline_wait.c) takes a place in the
 * window too (gpu_hold_slot), given back once its record is reached, but never the
 * last place: with only that left the core makes the wait a hold instead, whose
 * operation later holds join (a hold joined to a wait's place would pass with the
 * wait's record, not with its release).
 *
 * The fallback (no stream memory operations, or TPEVENT_GPU_WAIT=host-fn): hold k
 * is a runtime host function on the stream that blocks until the chain let holds
 * 1..k go, with the same window. It holds the
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
 * still come, touches only the chain, never the stream; the chain goes (and its
 * counter back) once the stream is gone and every release came.
 *
 * Refused on a wrapped stream that someone else is capturing (torch.cuda.graph):
 * a stream memory operation captured into a graph keeps its target at every
 * launch, which would break rule 6 at replay (docs/design.md, pitfalls).
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_timeline_wait.h" /* gpu_hold_slot */
#include "common/env.h"
#include "common/free_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HOLD_UNKNOWN, HOLD_COUNTER, HOLD_GATE };

/* A stream's holds (see the top). Freed once the stream is closed and no release
 * (nor gate) is to come. */
struct gpu_hold_chain {
    pthread_mutex_t lock;
    pthread_cond_t passed_changed; /* gates wait on it */
    gpu_device *device;
    bool on_counter; /* HOLD_COUNTER; else gates */
    gpu_counter counter;
    uint64_t base; /* the counter's value when taken */
    /* Under lock. */
    uint64_t queued;                        /* holds queued on the stream: hold k waits for base + k */
    uint64_t passed;                        /* holds 1..passed were let go (the counter is raised to base + passed) */
    unsigned refs;                          /* the stream's (until closed), one per release and gate to come */
    uint32_t releases_left[RT_HOLD_WINDOW]; /* of hold k, at k % RT_HOLD_WINDOW, while queued > k > passed */
};

/* What a release lets go: hold `seq` of the chain. Kept on a free list after its
 * release, so that a warmed-up program's waits allocate nothing. */
typedef struct hold_ticket {
    struct hold_ticket *next;
    gpu_hold_chain *chain;
    uint64_t seq;
} hold_ticket;

/* A gate of the fallback: waits until its chain passed seq. */
typedef struct hold_gate {
    gpu_hold_chain *chain;
    uint64_t seq;
} hold_gate;

static struct {
    _Atomic int mode[TP_MAX_DEVICES];           /* HOLD_*, decided at first need */
    const char *_Atomic reason[TP_MAX_DEVICES]; /* why HOLD_GATE */
    tp_free_list free;                          /* of hold_ticket */
    pthread_mutex_t creation_lock;              /* racing first holds on a stream agree on one chain */
} holds = {
    .free = TP_FREE_LIST_INIT,
    .creation_lock = PTHREAD_MUTEX_INITIALIZER,
};

tp_status gpu_stream_hold_window(tp_stream *stream, int64_t *ops)
{
    (void)stream;
    *ops = RT_HOLD_WINDOW;
    return TP_OK;
}

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

/* ------------------------------------------------------------------ chain */

static void chain_free(gpu_hold_chain *chain)
{
    if (chain->on_counter)
        gpu_counter_give(chain->device, chain->counter);
    pthread_cond_destroy(&chain->passed_changed);
    pthread_mutex_destroy(&chain->lock);
    free(chain);
}

/* Under the chain's lock: drops one reference; true when the chain is to be freed
 * (after the lock is left). */
static bool chain_unref_locked(gpu_hold_chain *chain)
{
    return --chain->refs == 0;
}

static tp_status chain_make(gpu_stream *stream, int mode, gpu_hold_chain **out)
{
    gpu_hold_chain *chain = calloc(1, sizeof *chain);
    if (!chain)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    chain->device = stream->device;
    chain->on_counter = mode == HOLD_COUNTER;
    if (chain->on_counter) {
        tp_status status = gpu_counter_take(stream->device, "tp_stream_hold", &chain->counter);
        if (status != TP_OK) {
            free(chain);
            return status;
        }
        chain->base = atomic_load_explicit(chain->counter.host, memory_order_relaxed);
    }
    pthread_mutex_init(&chain->lock, NULL);
    pthread_cond_init(&chain->passed_changed, NULL);
    chain->refs = 1; /* the stream's */
    *out = chain;
    return TP_OK;
}

/* The stream's chain, made at its first hold. With the stream's device current
 * (a counter's first slab is host memory mapped for it). */
static tp_status stream_chain(gpu_stream *stream, int mode, gpu_hold_chain **out)
{
    gpu_hold_chain *chain = atomic_load_explicit(&stream->holds, memory_order_acquire);
    if (TP_LIKELY(chain != NULL)) {
        *out = chain;
        return TP_OK;
    }
    pthread_mutex_lock(&holds.creation_lock);
    chain = atomic_load_explicit(&stream->holds, memory_order_acquire);
    tp_status status = TP_OK;
    if (!chain && (status = chain_make(stream, mode, &chain)) == TP_OK)
        atomic_store_explicit(&stream->holds, chain, memory_order_release);
    pthread_mutex_unlock(&holds.creation_lock);
    *out = chain;
    return status;
}

void gpu_hold_stream_closed(gpu_stream *stream)
{
    gpu_hold_chain *chain = atomic_load_explicit(&stream->holds, memory_order_acquire);
    if (!chain)
        return;
    pthread_mutex_lock(&chain->lock);
    bool last = chain_unref_locked(chain);
    pthread_mutex_unlock(&chain->lock);
    if (last)
        chain_free(chain);
}

/* Under the chain's lock: a hold of it, queued anew (*seq one more than the last,
 * true returned: the caller queues its operation) or, with the window full, joined
 * to the latest queued (false). A reference for its release either way. */
static bool chain_add_locked(gpu_hold_chain *chain, uint64_t *seq)
{
    chain->refs++;
    if (chain->queued - chain->passed < RT_HOLD_WINDOW) {
        *seq = ++chain->queued;
        chain->releases_left[*seq % RT_HOLD_WINDOW] = 1;
        return true;
    }
    *seq = chain->queued;
    chain->releases_left[*seq % RT_HOLD_WINDOW]++;
    return false;
}

/* One release of hold `seq` came: lets go every hold all of whose releases came,
 * in order. */
static void chain_release(gpu_hold_chain *chain, uint64_t seq)
{
    pthread_mutex_lock(&chain->lock);
    chain->releases_left[seq % RT_HOLD_WINDOW]--;
    uint64_t passed = chain->passed;
    while (passed < chain->queued && chain->releases_left[(passed + 1) % RT_HOLD_WINDOW] == 0)
        passed++;
    if (passed != chain->passed) {
        chain->passed = passed;
        /* Under the lock: once it is left, the chain (and its counter, which a next
         * owner would go on from) may be gone. */
        if (chain->on_counter)
            gpu_counter_raise(chain->counter.host, chain->base + passed);
        else
            pthread_cond_broadcast(&chain->passed_changed);
    }
    bool last = chain_unref_locked(chain);
    pthread_mutex_unlock(&chain->lock);
    if (last)
        chain_free(chain);
}

/* ---------------------------------------------------------------- tickets */

static hold_ticket *ticket_take(void)
{
    return tp_free_list_take(&holds.free, sizeof(hold_ticket));
}

static void ticket_give(hold_ticket *ticket)
{
    tp_free_list_give(&holds.free, ticket);
}

static void ticket_release(void *arg)
{
    hold_ticket *ticket = arg;
    chain_release(ticket->chain, ticket->seq); /* first: the stream goes on as soon as it can */
    ticket_give(ticket);
}

/* ------------------------------------------------------------------ gates */

/* On the runtime's callback thread: blocks it until the chain let hold seq go, or
 * until the process exits (so that the runtime's teardown finds no stream held). */
static void gate_host_fn(void *arg)
{
    hold_gate *gate = arg;
    gpu_hold_chain *chain = gate->chain;
    pthread_mutex_lock(&chain->lock);
    while (chain->passed < gate->seq && !gpu_counters_exiting())
        gpu_wait_unless_exiting(&chain->passed_changed, &chain->lock);
    bool last = chain_unref_locked(chain);
    pthread_mutex_unlock(&chain->lock);
    free(gate);
    if (last)
        chain_free(chain);
}

/* ------------------------------------------------------------------ queue */

/* With the stream's device current: what holds the stream until the chain passed
 * seq. On failure, nothing was queued. */
static tp_status queue_hold(gpu_stream *stream, gpu_hold_chain *chain, uint64_t seq)
{
    if (chain->on_counter) {
        rt_error e = rt_stream_wait_value64(stream->native, chain->counter.device, chain->base + seq);
        return e == RT_SUCCESS ? TP_OK : gpu_fail_call(RT_WAIT_VALUE_CALL, e);
    }
    hold_gate *gate = malloc(sizeof *gate);
    if (!gate)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    *gate = (hold_gate){chain, seq};
    pthread_mutex_lock(&chain->lock);
    chain->refs++; /* the gate's */
    pthread_mutex_unlock(&chain->lock);
    rt_error e = rt_launch_host_fn(stream->native, gate_host_fn, gate);
    if (e == RT_SUCCESS)
        return TP_OK;
    free(gate);
    pthread_mutex_lock(&chain->lock);
    chain->refs--; /* never the last: the stream's is held by the caller's call */
    pthread_mutex_unlock(&chain->lock);
    return gpu_fail_call(RT_CALL("LaunchHostFunc"), e);
}

/* With the stream's device current. */
static tp_status hold_stream(gpu_stream *stream, int mode, void (**release)(void *), void **arg)
{
    if (mode == HOLD_GATE) {
        tp_status status = gpu_counters_watch_exit("tp_stream_hold");
        if (status != TP_OK)
            return status;
    }
    gpu_hold_chain *chain;
    tp_status status = stream_chain(stream, mode, &chain);
    if (status != TP_OK)
        return status;
    hold_ticket *ticket = ticket_take();
    if (!ticket)
        return gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_stream_hold: out of memory");
    uint64_t seq;
    pthread_mutex_lock(&chain->lock);
    bool queue = chain_add_locked(chain, &seq);
    pthread_mutex_unlock(&chain->lock);
    /* Outside the lock: the call may wait for room in the runtime's queue (work of
     * the user's), and releases, which take the lock, must go on meanwhile. */
    if (queue && (status = queue_hold(stream, chain, seq)) != TP_OK) {
        ticket_give(ticket);
        chain_release(chain, seq); /* queued on the chain, not on the stream: let go at once */
        return status;
    }
    *ticket = (hold_ticket){.chain = chain, .seq = seq};
    *release = ticket_release;
    *arg = ticket;
    return TP_OK;
}

/* gpu_timeline_wait.h: a place in the window for a wait queued by the caller. The
 * window's last place is left to a hold: a hold past the window joins the latest
 * place queued, and only a hold's own operation holds the stream until its release
 * (the wait's place passes with its record). So the latest place of a full window is
 * always a hold's. */
tp_status gpu_hold_slot(gpu_stream *stream, void (**release)(void *), void **arg)
{
    gpu_hold_chain *chain;
    if (stream_chain(stream, hold_mode(stream->device), &chain) != TP_OK)
        return TP_ERR_UNSUPPORTED;
    hold_ticket *ticket = ticket_take();
    if (!ticket)
        return TP_ERR_UNSUPPORTED;
    uint64_t seq = 0;
    pthread_mutex_lock(&chain->lock);
    bool room = chain->queued - chain->passed + 1 < RT_HOLD_WINDOW && chain_add_locked(chain, &seq);
    pthread_mutex_unlock(&chain->lock);
    if (!room) {
        ticket_give(ticket);
        return TP_ERR_UNSUPPORTED;
    }
    *ticket = (hold_ticket){.chain = chain, .seq = seq};
    *release = ticket_release;
    *arg = ticket;
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
                                "tp_stream_hold: the %s:%d stream is being captured: a hold (what a wait on another "
                                "backend's record holds the stream with) cannot be captured (it would hold the stream "
                                "at every launch of the graph)",
                                RT_BACKEND_NAME, stream->device->index);
    else
        status = hold_stream(stream, mode, release, arg);
    rt_guard_leave(&guard);
    return status;
}
