/*
 * The backend interface: what the core asks of a backend, and what a backend module
 * (libtpevent-cuda.so, libtpevent-hip.so) exports. Internal to tpevent; not installed.
 *
 * Model: the OpenCL ICD loader and PyTorch's DeviceGuardImplInterface. Every handle
 * the core gives out starts with a pointer to its backend's table, so the core
 * dispatches a call with one load and one indirect call: no lock, no lookup by name.
 * A backend may give handles of different kinds tables of their own (the GPU
 * backend's interprocess events have one); such tables share name, type and the
 * entries that take no event, and the core tells backends apart by device type,
 * never by comparing tables.
 *
 * Division of labour. The core has already checked, before any entry is called:
 *   - pointers the caller passed are not NULL, flags have no unknown bits;
 *   - device indices are within [0, device_count);
 *   - for event_record: the stream is of the event's device (same backend, same index);
 *   - for stream_wait_event: stream and event belong to this backend (the device may
 *     differ: any stream, of any device, may wait on an event, rule 1);
 *   - for event_elapsed: both events belong to this backend's one device and both
 *     have TIMING;
 *     rule 7's order is the core's (core/elapsed.c), through host->elapsed_sequenced;
 *   - for stream_destroy: the stream is not a default stream;
 *   - for event_ipc_export: the event has TP_EVENT_INTERPROCESS;
 *   - for event_ipc_import: the handle's header (magic, layout version, checksum,
 *     backend) is valid; the payload is the backend's to check.
 * A backend reports a failure by returning host->fail(status, fmt, ...), which
 * records the calling thread's message (tp_last_error) and returns status. Messages
 * name the operation and the runtime's error name: "cudaEventRecord: cudaErrorIllegalAddress: ...".
 *
 * An entry may be NULL when the backend does not offer the operation; the core then
 * answers TP_ERR_UNSUPPORTED naming the backend and the operation.
 */
#ifndef TPEVENT_CORE_BACKEND_H
#define TPEVENT_CORE_BACKEND_H

#include <tpevent/tpevent.h>
#include <tpevent/tpevent_diagnostics.h> /* tp_native_op, for native_sample */
#include <tpevent/vulkan.h>              /* tp_vulkan_info, for vulkan_stream_info */

#include "core/backend_timeline.h" /* tp_timeline_export, for the waits on the device */

#include "common/compiler.h" /* TP_PRINTF */

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structs below. */
#define TP_BACKEND_ABI_VERSION 5u

typedef struct tp_backend tp_backend;

/* ------------------------------------------------------------- handles */

enum {
    TP_STREAM_DEFAULT = 1u << 0,  /* the device's default stream: never destroyed */
    TP_STREAM_BORROWED = 1u << 1, /* wraps a native stream the caller owns */
};

/* The head of every stream a backend gives out; the backend's own struct starts
 * with it. `backend` first: dispatch is one load. */
struct tp_stream {
    const tp_backend *backend;
    tp_device device;
    int priority;  /* as clamped by the backend */
    unsigned kind; /* TP_STREAM_* */
    /* The core's, left zero by the backend: the stream's number on its device in
     * creation order (1, 2, ...; 0: the default stream) and the name that
     * tp_stream_set_name gave it (NULL: none; the core's malloc, set and read under
     * the trace's lock, freed by tp_stream_destroy), both for the trace's tracks. A
     * pointer, not the name: the backend's fields that record and wait read stay in
     * the head's cache line. */
    uint32_t number;
    char *name;
};

/* The head of every event a backend gives out. */
struct tp_event {
    const tp_backend *backend;
    tp_device device;
    unsigned flags; /* TP_EVENT_* */
    /* The core's, left zero by the backend (a compound literal does): the event's
     * holds by graphs that wait on it across backends, and whether tp_event_destroy
     * came meanwhile (core/event.c). In the head's padding. */
    _Atomic uint32_t core_holds;
};

/* The head of every graph a backend gives out (rule 16). */
struct tp_graph {
    const tp_backend *backend;
    tp_device device;
};

/* ------------------------------------------------- services of the core */

typedef struct tp_host {
    uint32_t abi_version;
    uint32_t size;
    /* Sets the calling thread's error message (printf format) and returns status. */
    tp_status (*fail)(tp_status status, const char *fmt, ...) TP_PRINTF(2, 3);

    /*
     * Rule 7's answer to tp_event_elapsed_time(start, end, ms), for an event_elapsed
     * entry that has no milliseconds to give: the core finds TIMING_DISABLED,
     * NOT_RECORDED, NOT_READY, DEVICE_MISMATCH, in that order, from snapshots of the
     * records; times two devices on the host clock (rule 13); and, for two records
     * of one device now both reached, calls event_elapsed once more, whose answer
     * is then the one (core/elapsed.c). The entry passes its own arguments and
     * returns what this returns. It is the entry's to call, not the core's after the
     * entry, so that the core's call of the entry is a tail call: nothing of the
     * caller's is kept across it on the budgeted path.
     */
    tp_status (*elapsed_sequenced)(tp_event *start, tp_event *end, float *ms);
} tp_host;

/* ------------------------------------------------------------ IPC handle */

/*
 * Layout of tp_ipc_handle.bytes; the core owns the header, the backend the payload.
 * All integers little-endian.
 *   [0..3]   magic "TPEV"
 *   [4..5]   layout version (TP_IPC_LAYOUT_VERSION)
 *   [6]      device type
 *   [7]      device index
 *   [8..11]  payload length in bytes
 *   [12..15] FNV-1a checksum of bytes [0..12) and the payload
 *   [16..]   payload (TP_IPC_PAYLOAD_MAX bytes)
 */
#define TP_IPC_MAGIC "TPEV"
#define TP_IPC_LAYOUT_VERSION 1u
#define TP_IPC_HEADER_SIZE 16u
#define TP_IPC_PAYLOAD_MAX (TP_IPC_HANDLE_SIZE - TP_IPC_HEADER_SIZE)

/* ------------------------------------------------------------ snapshots */

/*
 * A snapshot names one record of one event: the record that was the event's
 * latest when the snapshot was taken (docs/design.md, "Snapshots"). It is a value: the
 * core keeps it where it likes (on its stack, inside a task) and hands it back to
 * the entries of the backend that took it. It keeps meaning the same record when
 * the event is recorded again or destroyed, and when the stream it was recorded on
 * is destroyed (rules 6, 9): what it needs to stay valid it holds itself, until
 * snapshot_release. Every snapshot taken is released exactly once.
 *
 * The core reads `backend`, `device`, `flags` and `state`; `object` and `word` are
 * the backend's own (the CPU backend: the source queue and the record's sequence
 * number; the GPU backend: a native event that marks the record).
 */
typedef enum tp_snapshot_state {
    TP_SNAPSHOT_NEVER_RECORDED, /* the event had no record: nothing to wait for (rules 4-6) */
    TP_SNAPSHOT_REACHED,        /* reached already when taken: nothing is held */
    TP_SNAPSHOT_PENDING,        /* maybe not reached yet: ask the backend */
} tp_snapshot_state;

typedef struct tp_snapshot {
    const tp_backend *backend; /* whose entries read it (the event's table) */
    tp_device device;          /* the event's */
    unsigned flags;            /* the event's TP_EVENT_* */
    tp_snapshot_state state;
    void *object;
    uint64_t word[2];
} tp_snapshot;

/* ------------------------------------------------------------ SM clock */

/*
 * Rule 18's SM clock (the table's sm_clock; docs/measure.md): what clock the device's
 * SMs ran at while a stretch of tp_measure ran, read as nvbench reads it. A reader is
 * two marks the device writes, each the SM clock counter and the device's global
 * timer at the moment the stream reached it; the clock between them is their cycles
 * over their ns. The core opens one per measurement, once the stream's first work is
 * done (opening may load a kernel), marks before and after each stretch, and reads
 * the pair once the stream has passed both.
 */
typedef struct tp_sm_clock tp_sm_clock; /* the backend's */
typedef struct tp_sm_clock_ops {
    /* A reader for the stream's device. *max_mhz: the SM's maximum clock (CUDA: NVML's),
     * 0 when it cannot be known, `note` then saying why; else where it came from.
     * TP_ERR_UNSUPPORTED, with no message set and `note` saying why, where the device's
     * clock cannot be read (HIP). */
    tp_status (*open)(tp_stream *stream, tp_sm_clock **out, double *max_mhz, char *note, size_t note_size);
    /* Queues on the stream the read into mark `which` (0: before a stretch, 1: after). */
    tp_status (*mark)(tp_sm_clock *clock, tp_stream *stream, int which);
    /* Once the stream has passed both marks: the clock between them in MHz, 0 when a
     * mark was not written; the marks are then cleared for the next pair. */
    double (*read)(tp_sm_clock *clock);
    /* Why the clock may be low now, in words (CUDA: NVML's throttle reasons), "" when
     * unknown. */
    void (*explain)(tp_sm_clock *clock, char *note, size_t note_size);
    /* Gives the reader back. `passed`: the stream has passed every mark queued, so a
     * later reader may reuse its marks; else a mark may still be written (a stretch
     * given up on a stream held elsewhere) and they are never reused. */
    void (*close)(tp_sm_clock *clock, bool passed);
} tp_sm_clock_ops;

/* --------------------------------------------------------------- table */

struct tp_backend {
    uint32_t abi_version; /* TP_BACKEND_ABI_VERSION the module was built with */
    uint32_t size;        /* sizeof(tp_backend) the module was built with */
    const char *name;     /* "cpu", "cuda", "hip", "opencl" */
    tp_device_type type;

    /*
     * Called once, before any other entry, with the core's services. Decides whether
     * the backend is usable: a runtime that cannot start, a driver too old, no device.
     * On failure writes a reason a user can act on into `reason` (NUL-terminated, at
     * most `reason_size` bytes) and returns non-TP_OK; the backend then stays
     * unavailable for the life of the process and no other entry is called.
     */
    tp_status (*init)(const tp_host *host, char *reason, size_t reason_size);

    /* Number of devices; fixed after init. */
    tp_status (*device_count)(int *count);

    /* Human name of the device ("NVIDIA H200", "CPU (virtual device 0)"). */
    tp_status (*device_name)(int device, char *buf, size_t size);

    /* Blocks until all work on all streams of the device (the default stream
     * included) is done. */
    tp_status (*device_synchronize)(int device);

    /*
     * Streams. stream_create makes a stream that runs without implicit ordering
     * against other streams, the default stream included (CUDA: non-blocking).
     * `priority` is clamped to the backend's range; the clamped value goes into the
     * head. stream_default answers the same stream every time for a device; it is
     * created on first use and lives as long as the process.
     */
    tp_status (*stream_create)(int device, int priority, tp_stream **out);
    tp_status (*stream_from_native)(int device, void *native, tp_stream **out);
    tp_status (*stream_default)(int device, tp_stream **out);

    /* Never blocks. With work pending the stream is released when the work is done
     * (rule 9); events recorded on it stay valid. */
    tp_status (*stream_destroy)(tp_stream *stream);

    /* *idle: all work submitted so far is done. Never blocks. */
    tp_status (*stream_query)(tp_stream *stream, bool *idle);
    tp_status (*stream_synchronize)(tp_stream *stream);

    /*
     * Versioned wait (rule 6): work submitted to `stream` after this call waits for
     * the event's latest record *as of this call*. Recording the event again later
     * does not change what this wait waits for. An event never recorded: no-op.
     * The stream's device may differ from the event's.
     */
    tp_status (*stream_wait_event)(tp_stream *stream, tp_event *event);

    /* fn(arg) runs on a host thread after all earlier work of the stream; later
     * work waits for it to return. */
    tp_status (*stream_launch_host_fn)(tp_stream *stream, void (*fn)(void *), void *arg);

    /*
     * The native handle: cudaStream_t, hipStream_t; the CPU returns the stream.
     * Rule 19: once a created stream's handle was given out, its native stream
     * outlives the tp stream for as long as the process runs (whoever holds the
     * handle may record on it later): stream_destroy keeps it in a pool that
     * stream_create of the same device and priority takes from, once it is idle.
     * tp_stream_native, the trace's tracks and Python's __cuda_stream__ and
     * native_handle all come here. A wrapped stream's native stream is its
     * owner's; the CPU's handle is the tp stream itself, valid until its destroy.
     */
    void *(*stream_native)(tp_stream *stream);

    /*
     * Events. event_create allocates no native event (rule 2): the native event is
     * made at the first record or IPC export, on the device of the event. Backends
     * pool native events so that create+destroy is cheap.
     */
    tp_status (*event_create)(int device, unsigned flags, tp_event **out);

    /* Never blocks. With a record pending, resources go once it is reached (rule 9). */
    tp_status (*event_destroy)(tp_event *event);

    /*
     * Marks the point after all work submitted to the stream so far, replacing the
     * previous record (rule 3). The stream is of the event's device. Must not
     * allocate after warm-up.
     */
    tp_status (*event_record)(tp_event *event, tp_stream *stream);

    /* Never blocks. *done: never recorded, or the latest record was reached (rule 4). */
    tp_status (*event_query)(tp_event *event, bool *done);

    /* Blocks until the latest record as of the call is reached; returns at once if
     * never recorded (rule 5). TP_EVENT_BLOCKING: the thread sleeps, it does not spin. */
    tp_status (*event_synchronize)(tp_event *event);

    /*
     * tp_event_elapsed_time, called last by the core (a tail call): milliseconds
     * between two reached records of events of one device. Both events are of one
     * device of this backend and have TIMING (two devices are the core's, on the host
     * clock). For anything but two reached records (never recorded, not reached) the
     * entry returns host->elapsed_sequenced(start, end, ms), which gives rule 7's
     * answer in its order; where it knows the answer without its arguments (the
     * runtime's own call said "not reached" for two recorded events of one device)
     * it may fail with TP_ERR_NOT_READY and a message itself. A failure of the
     * runtime is TP_ERR_BACKEND. Must not leave the runtime's current device
     * changed, nor create a context.
     */
    tp_status (*event_elapsed)(tp_event *start, tp_event *end, float *ms);

    /*
     * Rule 13's fast path: the CLOCK_MONOTONIC time in ns at which the device
     * reached the timing event's latest record. The event has TIMING. Anything but
     * a reached record fails with TP_ERR_NOT_READY or TP_ERR_NOT_RECORDED, no
     * message needed: the core sequences rule 7's errors from snapshots. A record's
     * time, once given, is given again unchanged; records of one stream never get
     * times that go backwards. May be called from any thread.
     */
    tp_status (*event_timestamp)(tp_event *event, int64_t *ns);

    /* The device's timer resolution and the bound of its calibration against
     * CLOCK_MONOTONIC (tp_clock_info, rule 13). May calibrate on first use. */
    tp_status (*device_clock)(int device, tp_clock_info *info);

    /*
     * IPC (rule 8). export writes the payload (at most TP_IPC_PAYLOAD_MAX bytes)
     * and its length; the core writes the header. import gets a payload whose
     * header the core has checked and refuses anything else with
     * TP_ERR_INVALID_ARGUMENT; an imported event may be queried, synchronized,
     * waited on and recorded.
     */
    tp_status (*event_ipc_export)(tp_event *event, unsigned char *payload, size_t *length);
    tp_status (*event_ipc_import)(int device, const unsigned char *payload, size_t length, tp_event **out);

    /* Optional: times the runtime's own call for `op` `count` times on the device,
     * one sample per call in ns, for benchmarks (tp_native_sample, declared in
     * tpevent_diagnostics.h, outside the stable API). */
    tp_status (*native_sample)(int device, tp_native_op op, uint64_t *samples_ns, size_t count);

    /*
     * Snapshots (see tp_snapshot above): what the core builds the rules that span
     * two events, two devices or two backends from (rules 6, 7, 13, 14). None of
     * them is on a hot path of one backend; each may be called from any thread.
     *
     * snapshot_take: the event's latest record, as of the call. Never blocks; must
     * not allocate after warm-up. A record made concurrently by another thread may
     * or may not be the one taken (no order between the two calls); a record made
     * after this returns never is.
     */
    tp_status (*snapshot_take)(tp_event *event, tp_snapshot *out);

    /* Gives up what a snapshot holds. Never blocks; cannot fail. */
    void (*snapshot_release)(tp_snapshot *snapshot);

    /* *reached: the record was reached. Never blocks. Only for TP_SNAPSHOT_PENDING
     * snapshots (the core answers the others itself). */
    tp_status (*snapshot_query)(const tp_snapshot *snapshot, bool *reached);

    /* Blocks the calling thread until the record is reached; the thread sleeps
     * with TP_EVENT_BLOCKING (in the snapshot's flags), as event_synchronize
     * would. Only for TP_SNAPSHOT_PENDING snapshots. */
    tp_status (*snapshot_synchronize)(const tp_snapshot *snapshot);

    /* Optional until the clock issue (rule 13): the CLOCK_MONOTONIC time in ns at
     * which the device reached the record, for a timing event's reached record. */
    tp_status (*snapshot_time)(const tp_snapshot *snapshot, int64_t *ns);

    /*
     * Runs fn(arg) once, on some thread, once the record is reached (at once, on
     * the calling thread, if it is already). fn must be short and must not block:
     * it may run on a thread that serves other work (a stream's worker, a runtime's
     * callback thread). The backend keeps what it needs of the snapshot; the caller
     * may release its own at once. Only for TP_SNAPSHOT_PENDING snapshots.
     */
    tp_status (*snapshot_notify)(const tp_snapshot *snapshot, void (*fn)(void *), void *arg);

    /*
     * Optional (rule 14; without it a stream of this backend cannot wait on a
     * record of another backend, see host_fn_may_block): work submitted to `stream`
     * after this call waits until the host lets it go, by calling *release(*arg)
     * once, from any thread (for instance from another backend's snapshot_notify).
     * Holds no thread that the runtime needs for other streams (a GPU runtime: a
     * stream memory operation on host memory). Destroying the stream before the
     * release is safe; the release must still come.
     */
    tp_status (*stream_hold)(tp_stream *stream, void (**release)(void *), void **arg);

    /*
     * How a stream of this backend waits on a record of another backend (rule 14;
     * core/wait_across.c decides by this flag, nothing else):
     *   true (the CPU): stream_launch_host_fn's functions run on a thread of the
     *     stream's own that nothing else needs (the stream's worker), so one may
     *     block. The core then launches a host function that blocks on the other
     *     backend's snapshot (spinning briefly, then snapshot_synchronize, which
     *     sleeps with TP_EVENT_BLOCKING): the next task starts as soon as the
     *     waiting thread sees the record, with no hop through a notify callback.
     *   false (CUDA, HIP): stream_hold, released by the event's backend's
     *     snapshot_notify. A GPU stream's host functions run on tpevent threads
     *     (rule 15), but blocking one for the length of a wait would hold a thread
     *     per pending wait, and on the runtime-host-function fallback the runtime's
     *     one callback thread; a stream memory operation holds no thread at all.
     */
    bool host_fn_may_block;

    /* Optional: what holds a stream of the device in a wait on another backend's
     * record, in words ("stream memory operations (cuStreamWaitValue64)", or the
     * fallback and why), for `tpevent devices` (tp_device_wait_mechanism). */
    tp_status (*wait_mechanism)(int device, char *buf, size_t size);

    /*
     * Interop (appended: entries above keep their offsets).
     * event_native: the runtime's event behind the latest record (cudaEvent_t,
     * hipEvent_t), NULL for an event never recorded or a backend with none (the
     * CPU). Never blocks. Valid until the event's next record or its destroy.
     */
    tp_status (*event_native)(tp_event *event, void **native);

    /* Optional: an event of `device` wrapping a runtime event the caller owns and
     * keeps alive until the wrapper is destroyed; records go on that native event,
     * and destroying the wrapper leaves it alone. NULL: TP_ERR_UNSUPPORTED. */
    tp_status (*event_from_native)(int device, void *native, tp_event **out);

    /* The priorities a stream of the device may have, as the runtime reports them:
     * greatest (runs first) <= least. */
    tp_status (*stream_priority_range)(int device, int *least, int *greatest);

    /*
     * Capture (rule 16). Optional: a backend without them answers
     * TP_ERR_UNSUPPORTED (the core's). The core has checked: pointers not NULL;
     * for graph_launch, the stream is of the graph's device. stream_is_capturing
     * answers for captures of anyone (a wrapped GPU stream captured by the
     * program) and never fails on a live stream; the core asks it before a wait
     * across backends, which it refuses inside a capture.
     */
    tp_status (*stream_begin_capture)(tp_stream *stream);
    tp_status (*stream_end_capture)(tp_stream *stream, tp_graph **out);
    tp_status (*stream_is_capturing)(tp_stream *stream, bool *capturing);
    tp_status (*graph_launch)(tp_graph *graph, tp_stream *stream);
    tp_status (*graph_destroy)(tp_graph *graph);

    /*
     * Rule 15's self-wait, for the core's timed waits (core/wait.c), which poll
     * the queries above and so cannot see it: true when the calling thread runs a
     * host function that the stream's work not yet done (or the event's latest
     * record) comes after, so that waiting for it from here would never end.
     * Never blocks. Optional (NULL: never true); the untimed synchronizes detect it
     * themselves.
     */
    bool (*stream_waits_for_itself)(tp_stream *stream);
    bool (*event_waits_for_itself)(tp_event *event);

    /*
     * Rule 17's window (appended): how many holds, waits and host functions tpevent
     * may queue on one of the device's streams before a submission could block its
     * caller; stream_hold past it must not fill the runtime's queue (a GPU: the hold
     * joins the stream's latest). INT64_MAX where the queue has no bound (the CPU).
     * Optional (NULL: INT64_MAX).
     */
    tp_status (*stream_hold_window)(tp_stream *stream, int64_t *ops);

    /*
     * Rule 18's cold calls (appended): queues on the stream work that evicts the
     * device's last-level cache (writes a buffer at least its size, sized from the
     * device and kept by it), so that the stream's next work finds the cache cold.
     * Later work of the stream runs after it. Optional (NULL: tp_measure with
     * TP_MEASURE_COLD is TP_ERR_UNSUPPORTED).
     */
    tp_status (*stream_flush_cache)(tp_stream *stream);

    /*
     * Profiling tools (appended; optional, NULL: none): tpevent's ranges and stream
     * names passed on to the runtime's own tools (NVTX on CUDA, which Nsight Systems
     * reads), whether or not a tpevent trace runs. tool_attached is asked once, after
     * init: true when a tool is attached to the process (CUDA: NVTX_INJECTION64_PATH
     * set, as Nsight Systems sets it for the program it runs); only then does the core
     * call the three others, from tp_range_push, tp_range_pop and tp_stream_set_name,
     * on the caller's thread, once their arguments are checked. A range is the tool's
     * push/pop range of the calling thread (NVTX's nest per thread, as
     * torch.cuda.nvtx.range's do). They cannot fail: a tool's trouble is not the
     * caller's.
     */
    bool (*tool_attached)(void);
    void (*tool_range_push)(tp_stream *stream, const char *name);
    void (*tool_range_pop)(tp_stream *stream);
    void (*tool_stream_name)(tp_stream *stream, const char *name);

    /*
     * Rule 16 (appended; optional, NULL: the core refuses a wait across backends
     * inside a capture): while `stream` captures, captures fn(arg) as
     * stream_launch_host_fn would (fn runs once at each launch of the graph, in
     * stream order, on a thread that may block), and calls release(arg) once, when
     * no launch can run fn any more: once the graph and its launches are gone, at
     * once for a capture that is dropped, never for a capture someone else began
     * (torch.cuda.graph on a wrapped stream: tpevent cannot know when that graph
     * is gone). On failure release is not called. The core's waits across backends
     * inside a capture (core/wait_across.c) are such host functions.
     */
    tp_status (*stream_capture_host_fn)(tp_stream *stream, void (*fn)(void *), void *arg, void (*release)(void *));

    /*
     * Rule 18's floor (appended): queues on the stream the least work a user's call
     * can be, made once by the device and kept (CUDA: an empty kernel; HIP: a 4-byte
     * fill; OpenCL: a marker; the CPU: none), so that tp_measure can time what its
     * own records around a call cost beyond the call's cadence. Later work of the
     * stream runs after it; nothing is left to free. The first launch on a device
     * makes the work, which may wait for every stream of the device (CUDA loads a
     * kernel with its context synchronized): tp_measure makes it before it holds
     * anything. Optional
     * (NULL: the core queues a host function that does nothing instead, which is the
     * least call on a device whose calls are host functions).
     */
    tp_status (*stream_launch_empty)(tp_stream *stream);

    /*
     * Interprocess events handed over a Unix socket (appended; optional, NULL: the
     * core answers TP_ERR_UNSUPPORTED naming the backend). core/ipc_socket.c writes,
     * sends, receives and checks the message; these give and take what it carries.
     * event_ipc_send_prepare: the descriptor of a sealed memfd holding the event's
     * record state (made now if the event has none yet, rule 2), which stays the
     * backend's (open while the event lives), and a payload of at most
     * TP_IPC_PAYLOAD_MAX bytes that the receiver checks it against. The core has
     * checked that the event has TP_EVENT_INTERPROCESS.
     * event_ipc_receive: an event of `device` from a received descriptor and
     * payload. The core has checked the message (magic, version, checksum, the
     * sender's device of this backend's type) and that the descriptor is a regular
     * file of the size the sender's was, sealed with F_SEAL_SHRINK, F_SEAL_GROW and
     * F_SEAL_SEAL (no process can cut a mapping short: no SIGBUS); the payload is the
     * backend's to check. Takes the descriptor in every case (closed on failure).
     * The event stays valid when the sender exits; a record may be made, waited
     * for and queried from either side (rules 3-6, 9), across PID, IPC and mount
     * namespaces.
     */
    tp_status (*event_ipc_send_prepare)(tp_event *event, int *fd, unsigned char *payload, size_t *length);
    tp_status (*event_ipc_receive)(int device, int fd, const unsigned char *payload, size_t length, tp_event **out);

    /* Rule 18's SM clock (appended; optional, NULL: a measurement's clock is unknown,
     * its sm_clock_note saying so): the reader's entries, tp_sm_clock_ops above. */
    const tp_sm_clock_ops *sm_clock;

    /*
     * Vulkan interop (appended; optional, NULL: the core answers TP_ERR_UNSUPPORTED
     * naming the backend), include/tpevent/vulkan.h. The core has checked the
     * arguments (no NULL, count 1 to TP_VULKAN_SUBMIT_MOST, no null handle).
     * vulkan_stream_info: fills every field of a whole tp_vulkan_info (the core copies
     * what the caller's `size` holds).
     * vulkan_stream_submit: the caller's command buffers in the stream's order, after
     * its earlier work and before its later work (holds and waits included); the
     * array is the caller's only for the call.
     */
    tp_status (*vulkan_stream_info)(tp_stream *stream, struct tp_vulkan_info *info);
    tp_status (*vulkan_stream_submit)(tp_stream *stream, void *const *cmds, uint32_t count);

    /*
     * The trace's marks (appended; optional, NULL: the core asks stream_is_capturing,
     * then records with event_record): records `event` on `stream` as event_record
     * does, unless the stream captures now (anyone's capture, as stream_is_capturing
     * answers), where it records nothing; *captured says which. It asks once where
     * the two entries would each ask (a wrapped GPU stream: one cudaStreamIsCapturing
     * instead of two). `event` is the trace's own (TP_EVENT_TIMING, of this table).
     */
    tp_status (*event_record_uncaptured)(tp_event *event, tp_stream *stream, bool *captured);

    /* Waits across backends on the device (appended; optional, NULL: the host path):
     * a record exported as a timeline semaphore's value that another backend's
     * stream waits on in its queue. The contract, entry by entry:
     * core/backend_timeline.h. */
    tp_status (*timeline_export_support)(int device, unsigned char uuid[16], char *how, size_t how_size);
    tp_status (*snapshot_export_timeline)(const tp_snapshot *snapshot, struct tp_timeline_export *out);
    tp_status (*timeline_import_support)(int device, const unsigned char uuid[16], char *how, size_t how_size);
    tp_status (*stream_wait_timeline)(tp_stream *stream, const struct tp_timeline_export *timeline,
                                      void (**passed)(void *), void **arg);
};

/*
 * The one symbol a backend module exports (a backend built into the core has an
 * entry of the same shape instead, declared in core/builtin_backends.h). `core_abi`
 * is the ABI the core speaks. A module that cannot speak it returns
 * TP_ERR_BACKEND_UNAVAILABLE with a reason; the core also checks the table's
 * abi_version and size itself.
 */
#define TP_BACKEND_ENTRY_SYMBOL "tpevent_backend_entry"
typedef tp_status (*tp_backend_entry_fn)(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);

#if defined(__GNUC__)
#define TP_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define TP_BACKEND_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_CORE_BACKEND_H */
