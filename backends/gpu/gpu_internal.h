/*
 * What the GPU backend's files share. The backend is one implementation for CUDA
 * and HIP, compiled once per runtime: the mapping header (runtime_cuda.h or
 * runtime_hip.h) gives every runtime call an rt_* name, and nothing in these files
 * knows which runtime it runs on. CUDA is the one tested on hardware here, so this
 * code is the tested code for both.
 *
 * The files, each calling only the ones listed before it, and every file of the
 * folder named (layout.file_maps checks both, the calls read from the objects):
 *   gpu_device.c     the backend's state, devices (opened lazily), errors
 *   gpu_pool.c       pools of native events per device and flags
 *   gpu_clock.c      the device's event clock on CLOCK_MONOTONIC (rule 13)
 *   gpu_host_counter.c  counters in mapped host memory that hold streams
 *   gpu_host_fn_graph.c  host functions inside captures: a thread per capture and
 *                    stream that runs each launch's nodes (gpu_host_fn_graph.h)
 *   gpu_host_fn_capture.c  their nodes, made at capture time: signalled by the
 *                    device, or rung by a runtime host function (a doorbell)
 *   gpu_host_fn.c    host functions (rule 15): a thread per stream that runs
 *                    them, the stream held meanwhile by a stream memory
 *                    operation on a counter in mapped host memory; process exit
 *   gpu_hold.c       stream_hold (rule 14): a stream held on a counter
 *                    (gpu_host_counter.c), or a runtime host function gate
 *   gpu_stream.c     streams, the pool of native streams whose handle was given
 *                    out (rule 19), and the relay streams a stream's relayed waits use
 *   gpu_event_record.c  a record's every case but the common one, and the
 *                    pieces of a record that interprocess events and captures share
 *   gpu_event.c      plain (in-process) events: the hot paths (their common case
 *                    inline in gpu_event_direct.h), the per-thread cache of their
 *                    structs; wrapped native events (interop)
 *   gpu_ipc.c        what interprocess events rest on (gpu_ipc.h): payloads, opened handles,
 *                    retirement of shared native events, exporters' liveness
 *   gpu_notify.c     the device's notifier (gpu_notify.h): a poller thread that
 *                    calls snapshot_notify's functions once markers (or pages' counters) are reached
 *   gpu_snapshot.c   snapshots of records of events of both kinds (markers)
 *   gpu_ipc_page.c   events handed over a Unix socket (gpu_ipc_page.h): the sealed
 *                    memfd page their records go through, a counter per writer;
 *   gpu_ipc_page_wait.c  their query, synchronize and waits (a wait's place in rule
 *                    17's window); gpu_ipc_page_layout.h: the page the two share
 *   gpu_ipc_event.c  the entries of interprocess and imported events
 *   gpu_sample.c     the runtime's own calls timed, for the benchmark baseline
 *   gpu_flush.c, gpu_empty.c  tp_measure's device work (rule 18): the cold
 *                    calls' cache flush, the floor's empty kernel
 *   gpu_sm_clock.c   tp_measure's SM clock around each stretch (rule 18)
 *   gpu_timeline_wait.c  waits on another runtime's exported timeline semaphores
 *                    on the device (Vulkan's records; gpu_timeline_wait.h)
 *   gpu_tool.c       the tool entries (gpu_tool.h): ranges and stream names for
 *                    the runtime's profiling tools (NVTX)
 *   gpu_graph.c      rule 16 (gpu_graph.h): records, waits and the rest inside a
 *                    capture, wrapping the entries below it
 *   gpu_graph_exec.c tpevent's own captures, their graphs and launches
 *   gpu_forked.c     the entries of a child created by fork(), which fail at once
 *   gpu_backend.c    the tables, written out (their list: gpu_entries.h), with the
 *                    capture layer in front of the entries a capture changes; each
 *                    kind of event (plain, interprocess, wrapped) has its own
 *   gpu_module_entry.c  the module's one exported symbol (modules only)
 * and beside them:
 *   gpu_backend.h    the entries of each runtime's build (core/builtin_backends.h)
 *   gpu_internal.h   this file: what the files share
 *   gpu_entries.h, gpu_event_direct.h, gpu_graph.h, gpu_host_fn_graph.h, gpu_ipc.h,
 *   gpu_ipc_page.h, gpu_notify.h, gpu_tool.h  the headers of the files named above
 *   runtime_cuda.h, runtime_hip.h  the mappings of the two runtimes (rt_* names);
 *   runtime_cuda_page.h  CUDA's calls of gpu_ipc_page.c and gpu_host_fn_capture.c
 *                    (runtime_cuda.h is full)
 *   runtime_cuda_sm_clock.h  the CUDA mapping's SM clock part (gpu_sm_clock.c's)
 *   runtime_cuda_semaphore.h  CUDA's external semaphores (gpu_timeline_wait.c's)
 *   gpu_module.cmake the build: the sources once per runtime, one object each
 *
 * How the pieces fit:
 *  - Devices are opened lazily (first stream, first record, default stream): the
 *    backend then holds the device's primary context and knows its priority range.
 *    Opening nothing at init means a process that touches only cuda:1 never pays
 *    for a context on cuda:0.
 *  - Streams wrap a native stream. Created streams are non-blocking; the default
 *    stream is the runtime's NULL stream (see the mapping for which handle).
 *    Handles that mean "the default stream of the current device" need their
 *    device current for each call; every other handle works from any device.
 *    A created stream whose handle was given out (rule 19) leaves its native
 *    stream, at destroy, in a pool of its device, which a later stream of the same
 *    priority takes once the native stream is idle; the others are destroyed.
 *  - Events get their native event at the first record (rule 2), from a pool per
 *    device and flag combination. A native event goes back to its pool when its
 *    tp event is destroyed, and is handed out again only once its last record has
 *    been reached, so no one else's record can land on it while a wait or a query
 *    of the old owner is still meant for it (HIP even leaves recording a pending
 *    event undefined).
 *  - Hot paths (record, query, wait, elapsed, synchronize) take no lock, allocate
 *    nothing and change no device unless the stream needs its device current.
 *    Where the runtime would create a context on a thread that has none (record
 *    and waits; see RT_*_NEEDS_CONTEXT in the mapping for the rest), the extra
 *    work is rt_guard_enter's check that the thread has a current context, a
 *    thread-local flag once it has one: no call of ours makes the runtime create a
 *    context on a device nobody asked for. Streams created once the runtime's
 *    lazy-start device is open skip even that (gpu_stream.context_free): the
 *    runtime's lazy start would only adopt a context that exists already.
 *    elapsed_time, like everything that must switch devices, leaves the caller's
 *    current context (or its lack of one) as it found it.
 *  - Host functions (rule 15; gpu_host_fn.c) run on a tpevent thread per stream,
 *    started at the stream's first host function, never on the runtime's one
 *    callback thread: host functions of two streams run at once, and may call
 *    tpevent and the runtime. Where the device cannot hold a stream on host
 *    memory, they go through the runtime's own host functions instead.
 *  - Interprocess events (rule 8; gpu_ipc.c) wrap the runtime's IPC event handles.
 *    A native event known to another process is "shared": it is never pooled and
 *    never replaced, its own state answers query and synchronize, and synchronize
 *    polls it (the runtime ignores blocking sync for these events and cannot
 *    notice that the process they wait for died).
 *
 * Names. Every function shared between these files has external (hidden) linkage
 * under the one name its source gives it. Each runtime's build of the files is
 * linked into one relocatable object in which every symbol but the entry is made
 * local (gpu_module.cmake), so the CUDA and the HIP builds of the same names link
 * into one static library without clashing.
 */
#ifndef TPEVENT_BACKENDS_GPU_INTERNAL_H
#define TPEVENT_BACKENDS_GPU_INTERNAL_H

/* First of every file of the backend, before any system header: POSIX 2008
 * (clock_gettime, nanosleep, O_CLOEXEC), and syscall() for process.h's pidfd. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1
#endif

#include "backends/gpu/gpu_backend.h"
#include "common/compiler.h"
#include "common/process.h"

#if defined(TPEVENT_GPU_CUDA)
#include "backends/gpu/runtime_cuda.h"
#elif defined(TPEVENT_GPU_HIP)
#include "backends/gpu/runtime_hip.h"
#elif defined(TPEVENT_GPU_FAKE)
/* A simulated runtime (its driver: tests/gpu_fake): this code's tests on a machine with no GPU. */
#include "runtime_fake.h" /* tests/gpu_fake, on the fake build's include path only */
#else
#error "define TPEVENT_GPU_CUDA, TPEVENT_GPU_HIP or TPEVENT_GPU_FAKE to pick the runtime mapping"
#endif

/* Whether a capture takes the stream memory operation as a node of its graph,
 * replayed with its captured value (CUDA: tried on the H200; the fake models it). */
#ifndef RT_WAIT_VALUE_CAPTURED
#define RT_WAIT_VALUE_CAPTURED 1
#endif

#include "backends/gpu/gpu_notify.h"

#include <pthread.h>
#include <stdatomic.h> /* stdbool.h, stddef.h, stdint.h: by tpevent.h */

/* ================================================================ gpu_device.c */
/* One pool per flag combination: TIMING, BLOCKING and INTERPROCESS each change the
 * native event's creation flags. */
#define GPU_POOL_COUNT (TP_EVENT_FLAGS_ALL + 1)

typedef struct gpu_native_list {
    rt_event *items;
    size_t count, capacity;
} gpu_native_list;

typedef struct gpu_event_pool {
    pthread_mutex_t lock;
    gpu_native_list reached; /* last record reached, or never recorded: ready to hand out */
    gpu_native_list pending; /* last record possibly not reached: not yet */
} gpu_event_pool;

/* A shared native event no tp event uses any more, kept until its record is
 * reached (see gpu_retire_shared_native). */
typedef struct gpu_retired_native {
    rt_event native;
    tp_process_id exporter; /* of an imported one; pid 0 for one exported from here */
} gpu_retired_native;

typedef struct gpu_retired_list {
    gpu_retired_native *items;
    size_t count, capacity;
} gpu_retired_list;

#define GPU_UUID_SIZE 16u

/* Streams per device that snapshots mark records on, at most (gpu_snapshot.c). */
#define GPU_SNAPSHOT_STREAMS 16

/* Anchors of a device's clock kept at once (gpu_clock.c). */
#define GPU_CLOCK_ANCHORS 256

struct gpu_device;
struct gpu_import;
typedef struct gpu_clock gpu_clock;
typedef struct gpu_host_queue gpu_host_queue;
typedef struct gpu_hold_chain gpu_hold_chain;

typedef struct gpu_stream {
    tp_stream head;
    rt_stream native;
    struct gpu_device *device;
    bool follows_current_device; /* NULL/legacy/per-thread handle: needs its device current */
    /* Records and waits on it need no guard: it names its own device, and a thread
     * with no current context may be left to the runtime's lazy start (see
     * gpu_lazy_start_is_harmless). Decided at creation; false only costs a guard. */
    bool context_free;
    /* Relay streams of this stream's relayed waits, one per device, made on first
     * need (gpu_stream_relay): NULL, or an array of gpu.device_count. */
    _Atomic(_Atomic(rt_stream) *) relays;
    /* Its host functions' thread and queue (gpu_host_fn.c), made at its first
     * host function; NULL before, and for good where the device cannot hold a
     * stream on host memory. */
    _Atomic(struct gpu_host_queue *) host_queue;
    /* Its holds pending on the native stream and their window (gpu_hold.c), made at
     * its first hold; NULL before. */
    _Atomic(struct gpu_hold_chain *) holds;
    atomic_bool capture_check; /* rule 16: look for a capture (gpu_graph.h) */
    /* Records and waits on it take gpu_event.c's direct paths, past every check:
     * context_free and not capture_check, in one flag so that a hot path tests one
     * byte of the stream (kept so by gpu_stream_set_capture_check, gpu_graph.h). */
    atomic_bool direct;
    _Atomic(struct gpu_capture *) capture; /* the one it is in, begun by tpevent or joined */
    /* Its native handle was given out (stream_native): destroy pools the native
     * stream instead of destroying it (rule 19). */
    atomic_bool handle_given_out;
} gpu_stream;

/* A native stream whose handle was given out, kept after its tp stream went
 * (rule 19; gpu_stream.c), for a later stream of its priority. */
typedef struct gpu_pooled_stream {
    rt_stream native;
    int priority;
} gpu_pooled_stream;

/* Never freed, not even at exit: whoever holds a handle may still use it from
 * its own teardown (torch's host allocator does), as torch never frees its own. */
typedef struct gpu_stream_pool {
    pthread_mutex_t lock;
    gpu_pooled_stream *items;
    size_t count, capacity;
    size_t next; /* where the next look for an idle one starts, so that each is looked at in turn */
} gpu_stream_pool;

typedef struct gpu_device {
    int index;
    _Atomic bool open; /* context held, priority range known, default stream set up */
    pthread_mutex_t open_lock;
    rt_context context;
    int least_priority;    /* the runtime's convention: lower numbers run first, */
    int greatest_priority; /* so greatest <= least */
    gpu_stream default_stream;
    gpu_event_pool pools[GPU_POOL_COUNT];
    gpu_stream_pool stream_pool;
    /* IPC: imports, retired shared native events, the UUID. Never taken on a hot
     * path. */
    pthread_mutex_t ipc_lock;
    struct gpu_import *imports;
    gpu_retired_list retired;
    enum { GPU_UUID_UNREAD, GPU_UUID_KNOWN, GPU_UUID_UNKNOWN } uuid_state;
    unsigned char uuid[GPU_UUID_SIZE];
    /* Snapshots (gpu_snapshot.c): the streams their markers are recorded on, made
     * on first need, under snapshot_lock. */
    pthread_mutex_t snapshot_lock;
    rt_stream snapshot_streams[GPU_SNAPSHOT_STREAMS];
    int snapshot_stream_count;
    unsigned snapshot_stream_next;
    gpu_notifier notifier;
    /* The clock's anchors (gpu_clock.c), made on first need. */
    _Atomic(gpu_clock *) clock;
    /* tp_measure's cold calls fill it (gpu_flush.c); made at the first, then kept. */
    _Atomic(struct gpu_flush_buffer *) flush_buffer;
    /* tp_measure's floor launches it (gpu_empty.c); made at the first, then kept. */
    _Atomic(struct gpu_empty_work *) empty_work;
    /* tp_measure's SM clock reads it (gpu_sm_clock.c); made at the first, then kept. */
    _Atomic(struct gpu_sm_clock_kernel *) sm_clock;
} gpu_device;

/* The backend's state: set by init, read-only afterwards (the devices' own fields
 * have their locks). */
typedef struct gpu_backend_state {
    const tp_backend *table;     /* gpu_backend.c's: streams and plain events point at it */
    const tp_backend *ipc_table; /* the same, with the entries of interprocess events */
    const tp_host *host;
    int device_count;
    gpu_device *devices;
    int32_t init_pid; /* the process that initialized the driver (fork: gpu_device.c) */
} gpu_backend_state;

extern gpu_backend_state gpu;

/* TP_ERR_BACKEND: the driver cannot be used in a child created by fork() (what
 * every entry that can reach the runtime answers there: gpu_forked.c). */
tp_status gpu_forked_fail(const char *operation);
/* gpu_forked.c: the child's entries in place of those of `table` that can reach the
 * runtime (pthread_atfork's child handler, gpu_backend.c). */
void gpu_use_forked_entries(tp_backend *table);

/* "cudaEventRecord: cudaErrorIllegalAddress: an illegal memory access was encountered" */
tp_status gpu_fail_call(const char *call, rt_error e) TP_COLD;

/* Holds the device's primary context, reads its priority range and sets up its
 * default stream; once per device, on first need. */
tp_status gpu_device_open(gpu_device *device);

/*
 * Whether a record or wait on a thread with no current context may be left to the
 * runtime: its lazy start then makes RT_LAZY_CONTEXT_DEVICE's primary context
 * current, as a raw call would, and creates nothing once this backend holds that
 * context (its device is open).
 */
bool gpu_lazy_start_is_harmless(void);

/* The table's init, with the tables the handles will point at. */
tp_status gpu_init(const tp_backend *table, const tp_backend *ipc_table, const tp_host *host, char *reason,
                   size_t reason_size);
tp_status gpu_device_count(int *count);
tp_status gpu_device_name(int device, char *buf, size_t size);
tp_status gpu_device_synchronize(int device);

/* ================================================================== gpu_pool.c */
/* The runtime's creation flags for an event of tp `flags`. */
unsigned gpu_native_flags(unsigned flags);

/* Destroys a native event of the device without leaving a context behind on a
 * thread that had none. */
void gpu_destroy_native(gpu_device *device, rt_event event);

/* A native event for `flags` on the device: a reached one from the pool, else a
 * new one. */
tp_status gpu_pool_take(gpu_device *device, unsigned flags, rt_event *out);

/* Gives a native event back. `maybe_pending`: it was recorded, and the record may
 * not be reached yet; it is handed out again only once a query says it is. */
void gpu_pool_give(gpu_device *device, unsigned flags, rt_event event, bool maybe_pending);

/* Gives back a native event whose latest record was made inside a capture that may
 * have ended (rule 16): a node of the capture's graph, never run. CUDA answers a
 * query of it with "invalid argument" (an API error under compute-sanitizer), so it
 * is not asked: it is destroyed, as such a query's failure had it destroyed. */
void gpu_pool_give_captured(gpu_device *device, unsigned flags, rt_event event);

/* A native recorded inside a capture is never queried by the pool
 * while pinned: a give meanwhile is kept back until the last unpin.
 * `captured_record`: the native's latest record is still the one made inside the
 * capture (no launch of its graph recorded it since), so that a give kept back is
 * gpu_pool_give_captured's. */
void gpu_pool_pin(rt_event event);
void gpu_pool_unpin(rt_event event, bool captured_record);

/* ========================================================== gpu_host_counter.c */
/* A 64-bit counter in mapped host memory: host stores, device waits on it. */
typedef struct gpu_counter {
    _Atomic uint64_t *host;
    rt_device_ptr device;
} gpu_counter;

/* Whether the device can hold a stream on host memory (decided once); why not. */
bool gpu_counters_supported(gpu_device *device);
const char *gpu_counters_unsupported_reason(gpu_device *device);

/* A free counter, at its value (it only grows); refused once exiting. */
tp_status gpu_counter_take(gpu_device *device, const char *operation, gpu_counter *out);
void gpu_counter_give(gpu_device *device, gpu_counter counter);

/* Stores max(counter, value), release: the work it lets go sees the host's writes. */
void gpu_counter_raise(_Atomic uint64_t *counter, uint64_t value);

/* At exit every counter was raised past every wait, and none is handed out;
 * watch_exit registers the exit handler for whoever needs it without a counter;
 * gates wait in wait_unless_exiting (returns when signalled, or after 10 ms). */
bool gpu_counters_exiting(void);
tp_status gpu_counters_watch_exit(const char *operation);
tp_status gpu_counters_refused_at_exit(const char *operation);
void gpu_wait_unless_exiting(pthread_cond_t *cond, pthread_mutex_t *lock);

/* ========================================================= gpu_host_fn_graph.c */
/* A host function launched on a capturing stream (rule 16), captured as a node
 * that runs fn once at every launch of the graph, on a tpevent thread. *out: the
 * node, to be freed by its graph's owner once the graph and its launches are gone
 * (left unfreed for someone else's capture); freeing it calls release(arg) where
 * release is not NULL. On failure nothing is given out and release is not called.
 * own: tpevent's capture, whose every launch of the graph says so, its nodes in
 * capture order: reserve, then launched before the runtime's launch (which may
 * wait for the device to pass earlier nodes), and launch_failed if it failed. */
typedef struct gpu_host_fn_node gpu_host_fn_node;
tp_status gpu_host_fn_capture(gpu_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *), bool own,
                              gpu_host_fn_node **out);
tp_status gpu_host_fn_launch_reserve(gpu_host_fn_node *const *nodes, size_t count);
void gpu_host_fn_launched(gpu_host_fn_node *const *nodes, size_t count);
void gpu_host_fn_launch_failed(gpu_host_fn_node *const *nodes, size_t count);
void gpu_host_fn_node_free(gpu_host_fn_node *node);
/* A node that is never freed (someone else's capture), kept where it stays
 * reachable. */
void gpu_host_fn_node_keep(gpu_host_fn_node *node);
/* Whether the calling thread runs a captured host function of the device: a
 * device-wide synchronize would wait for it forever. */
bool gpu_host_fn_graph_on_device(int device);

/* =============================================================== gpu_host_fn.c */
/* tp_stream_launch_host_fn: fn(arg) runs on the stream's host-function thread once
 * the stream reaches this point, which is held until fn returns. Refused once the
 * process is exiting. Launches nothing, and sets *capture_began, where the stream
 * entered a capture since the caller looked: gpu_graph.c's capture layer takes it. */
tp_status gpu_host_fn_launch(tp_stream *stream, void (*fn)(void *), void *arg, bool *capture_began);
/* The stream's launches wait from pause to resume, across a capture's begin or a
 * join (the why: gpu_host_fn.c). gpu_capture_lock may be taken inside. */
void gpu_host_fn_launches_pause(gpu_stream *stream);
void gpu_host_fn_launches_resume(gpu_stream *stream);

/* The stream is being destroyed: its host-function thread runs what is queued,
 * then frees what it holds. No call on the stream follows. */
void gpu_host_fn_stream_closed(gpu_stream *stream);

/* Whether the calling thread is running a host function that `stream` waits for:
 * one of that very stream, or (where the default stream waits for every stream,
 * RT_DEFAULT_STREAM_WAITS_FOR_ALL) any of the default stream's device. */
bool gpu_host_fn_would_wait_for_itself(const gpu_stream *stream);

/* Whether the calling thread is running a host function of a stream of the
 * device: a device-wide synchronize would wait for it forever. */
bool gpu_host_fn_on_device(int device);

/* ================================================================== gpu_hold.c */
/* stream_hold (core/backend.h) and what tpevent devices says of it. */
tp_status gpu_stream_hold(tp_stream *stream, void (**release)(void *), void **arg);
/* stream_hold_window: holds kept queued on a stream before the next joins the latest
 * (rule 17): RT_HOLD_WINDOW. */
tp_status gpu_stream_hold_window(tp_stream *stream, int64_t *ops);
/* The stream is being destroyed: its holds still pending stay until released,
 * then what they share is freed. No call on the stream follows. */
void gpu_hold_stream_closed(gpu_stream *stream);
tp_status gpu_wait_mechanism(int device, char *buf, size_t size);
/* gpu_flush.c: stream_flush_cache (core/backend.h). */
tp_status gpu_stream_flush_cache(tp_stream *stream);
/* gpu_empty.c: stream_launch_empty (core/backend.h). */
tp_status gpu_stream_launch_empty(tp_stream *stream);
/* gpu_sm_clock.c: sm_clock (core/backend.h), and its entries in a child of fork(). */
extern const tp_sm_clock_ops gpu_sm_clock_ops, gpu_sm_clock_forked_ops;

/* ================================================================ gpu_stream.c */
static inline gpu_stream *gpu_as_stream(tp_stream *stream)
{
    return (gpu_stream *)stream;
}

/* Records and waits: the runtime takes an event and a stream of any device whatever
 * device is current ("event and stream must be on the same device"; a stream may
 * wait on an event of another device), so the stream's device is made current only
 * for handles that mean "the current device's default stream". */
static inline rt_error gpu_stream_enter(gpu_stream *stream, rt_guard *guard)
{
    return rt_guard_enter(guard, stream->device->context,
                          stream->follows_current_device ? RT_NEED_DEVICE : RT_NEED_CONTEXT);
}

/* A guard only where the mapping says the call needs one (a compile-time constant,
 * so the hot paths that need none carry no check at all). */
static inline rt_error gpu_guard_enter_if(bool needed, rt_guard *guard, rt_context ctx, rt_need need)
{
    if (!needed) {
        rt_guard_init(guard);
        return RT_SUCCESS;
    }
    return rt_guard_enter(guard, ctx, need);
}

tp_status gpu_stream_create(int device, int priority, tp_stream **out);
tp_status gpu_stream_from_native(int device, void *native, tp_stream **out);
tp_status gpu_stream_default(int device, tp_stream **out);
/* A created stream's native stream is destroyed, or pooled if its handle was given
 * out (rule 19); a wrapped stream's is left to its owner. */
tp_status gpu_stream_destroy(tp_stream *stream);
tp_status gpu_stream_query(tp_stream *stream, bool *idle);
tp_status gpu_stream_synchronize(tp_stream *stream);
/* The native handle; the stream's native stream then outlives it (rule 19). */
void *gpu_stream_native(tp_stream *stream);
tp_status gpu_stream_priority_range(int device, int *least, int *greatest);

/*
 * A native stream of `device` that serves `stream` alone (made on first need,
 * destroyed with `stream`): work put on it is ordered after nothing but what the
 * caller puts there, so a wait relayed through it adds no order between streams
 * that no event asked for (rule 12).
 */
tp_status gpu_stream_relay(gpu_stream *stream, gpu_device *device, rt_stream *out);

/* ================================================================= gpu_event.c */
typedef struct gpu_event {
    tp_event head;
    /* NULL until the first record (or export). Replaced, never cleared, by a record
     * on HIP when the previous record is pending (never for an interprocess event);
     * taken out by destroy. */
    _Atomic(rt_event) native;
    /* Set once the native event's own state is the answer: after the first record,
     * or once the native event is shared (another process may record it). Until
     * then query, synchronize, wait and elapsed answer "never recorded" without
     * asking the runtime. */
    atomic_bool recorded;
    _Atomic(struct gpu_capture_mark *) capture; /* rule 16: latest record inside one */
} gpu_event;

static inline gpu_event *gpu_as_event(tp_event *event)
{
    return (gpu_event *)event;
}

static inline gpu_device *gpu_event_device(const gpu_event *event)
{
    return &gpu.devices[event->head.device.index];
}

static inline bool gpu_event_recorded(gpu_event *event)
{
    return atomic_load_explicit(&event->recorded, memory_order_acquire);
}

/* Valid once gpu_event_recorded() said true (the release store of `recorded` comes
 * after the native event's). */
static inline rt_event gpu_event_native(gpu_event *event)
{
    return atomic_load_explicit(&event->native, memory_order_relaxed);
}

/* HIP only (RT_RERECORD_WHILE_PENDING 0): the native event must not be recorded
 * again before its record is reached. */
static inline bool gpu_record_would_overlap(rt_event native)
{
    return !RT_RERECORD_WHILE_PENDING && rt_event_query(native) == RT_ERROR_NOT_READY;
}

/* ========================================================= gpu_event_record.c */
/* One record of `native` on the stream. */
tp_status gpu_record_native(rt_event native, gpu_stream *stream);

/*
 * Records a native event from the pool and publishes it in place of `expected`.
 * Publishing after the record means a concurrent query never sees a native event
 * that has not been recorded for this tp event. *published false: another thread
 * published one first (a racing record, or an export), and the fresh one went
 * back; the caller records again. `expected`, once replaced, goes back to the pool
 * (`expected_captured`: its latest record was made inside a capture, so that the
 * pool does not query it: gpu_pool_give_captured).
 */
tp_status gpu_event_record_fresh(gpu_event *event, gpu_stream *stream, rt_event expected, bool expected_captured,
                                 bool *published);

/* A record's every other case than gpu_event_direct.h's common one. */
tp_status gpu_event_record_slow(gpu_event *event, gpu_stream *stream);

/* ================================================================ gpu_event.c */

/* The entries of events without TP_EVENT_INTERPROCESS (gpu_backend.c picks). */
tp_status gpu_plain_event_create(int device, unsigned flags, tp_event **out);
tp_status gpu_plain_event_destroy(tp_event *event);
tp_status gpu_plain_event_record(tp_event *event, tp_stream *stream);
tp_status gpu_plain_event_query(tp_event *event, bool *done);
tp_status gpu_plain_event_synchronize(tp_event *event);
tp_status gpu_plain_stream_wait_event(tp_stream *stream, tp_event *event);
/* Events with timing only, so never interprocess ones (rule 8). */
tp_status gpu_event_elapsed(tp_event *start, tp_event *end, float *ms);
/* Their common case alone, inline for the tables' direct layer: gpu_event_direct.h. */

/* tp_event_native, for every kind; tp_event_from_native's wrapper of a native event
 * its caller owns (its `table`: the plain entries but for these record, destroy). */
tp_status gpu_event_native_handle(tp_event *event, void **native);
tp_status gpu_wrapped_event_create(int device, void *native, const tp_backend *table, tp_event **out);
tp_status gpu_wrapped_event_destroy(tp_event *event);
tp_status gpu_wrapped_event_record(tp_event *event, tp_stream *stream);

/* ================================================================= gpu_clock.c */
tp_status gpu_event_timestamp(tp_event *event, int64_t *ns);
tp_status gpu_device_clock(int device, tp_clock_info *info);
/* cudaEventElapsedTime's failure for two recorded events of one device, said. */
tp_status gpu_elapsed_failed(rt_error e) TP_COLD;

/* ============================================================= gpu_ipc_event.c */
/* The entries of events with TP_EVENT_INTERPROCESS, imported ones included. */
tp_status gpu_ipc_event_create(int device, unsigned flags, tp_event **out);
tp_status gpu_ipc_event_destroy(tp_event *event);
tp_status gpu_ipc_event_record(tp_event *event, tp_stream *stream);
tp_status gpu_ipc_event_query(tp_event *event, bool *done);
tp_status gpu_ipc_event_synchronize(tp_event *event);
tp_status gpu_ipc_stream_wait_event(tp_stream *stream, tp_event *event);
tp_status gpu_event_ipc_export(tp_event *event, unsigned char *payload, size_t *length);
tp_status gpu_event_ipc_import(int device, const unsigned char *payload, size_t length, tp_event **out);
/* Handed over a Unix socket (gpu_ipc_page.c holds the record state); paged: the
 * event records through its page (a capture refuses it rather than capture it). */
tp_status gpu_event_ipc_send_prepare(tp_event *event, int *fd, unsigned char *payload, size_t *length);
tp_status gpu_event_ipc_receive(int device, int fd, const unsigned char *payload, size_t length, tp_event **out);
bool gpu_ipc_event_paged(tp_event *event);

/* ============================================================== gpu_snapshot.c */
/* Snapshot entries, both kinds of event: a pooled native event (`object`) marks a record. */
tp_status gpu_snapshot_take(tp_event *event, tp_snapshot *out);
void gpu_snapshot_release(tp_snapshot *snapshot);
tp_status gpu_snapshot_query(const tp_snapshot *snapshot, bool *reached);
tp_status gpu_snapshot_synchronize(const tp_snapshot *snapshot);
tp_status gpu_snapshot_notify(const tp_snapshot *snapshot, void (*fn)(void *), void *arg);

/* ================================================================ gpu_sample.c */
tp_status gpu_native_sample(int device, tp_native_op op, uint64_t *samples_ns, size_t count);

#endif /* TPEVENT_BACKENDS_GPU_INTERNAL_H */
