/*
 * tpevent: device events and streams over CUDA, HIP, OpenCL, Vulkan and a CPU reference backend.
 *
 * One API for marking points in streams of device work, waiting for them, ordering
 * streams against each other and timing the work between two points. The backend is
 * picked at run time by a device string: "cpu", "cuda:1", "hip:0", "opencl:0".
 *
 * Conventions (as in libuv):
 *  - every function that can fail returns a tp_status; TP_OK is 0;
 *  - on failure, tp_last_error() gives the calling thread's message for it;
 *  - output parameters are written only on success;
 *  - handles are opaque; every function may be called from any thread, at the same time as any other (rule 10), with
 *    one exception, as in CUDA: an event or a stream may not be destroyed while another thread is inside a call on
 *    it, nor used once destroyed. Destroy it after the other threads' calls on it have returned (joined, or said so
 *    through a lock or an atomic); from then on any thread may destroy it at once, and nothing of tpevent touches it
 *    any more. Why not make that safe too: a destroy that waits for the calls in progress needs every call on the
 *    object to take and drop a reference, two atomic read-modify-writes on one cache line that all threads using the
 *    object share: a few ns alone and far more when threads query one event together, against a budget of 3% of a
 *    140-300 ns raw call (docs/design.md, budgets). And it would not help the call that starts just after the
 *    destroy, whose handle is already freed: a program has to order its last use of an object before its destroy in
 *    any case.
 *
 * The semantic rules every backend honours are numbered as in docs/design.md and quoted where they apply.
 *
 * This header, with <tpevent/measure.h> that it includes at its end (tp_measure), is the whole stable API.
 * <tpevent/tpevent_diagnostics.h> holds what only the tpevent tool's benchmark uses (tp_native_sample), outside of
 * it.
 */
#ifndef TPEVENT_TPEVENT_H
#define TPEVENT_TPEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TPEVENT_STATIC)
#define TP_API
#elif defined(__GNUC__)
#define TP_API __attribute__((visibility("default")))
#else
#define TP_API
#endif

#define TPEVENT_VERSION_MAJOR 0 /* this header's version: major, */
#define TPEVENT_VERSION_MINOR 3 /* minor (0.x: a minor release may change the API), */
#define TPEVENT_VERSION_PATCH 0 /* patch */

/* "0.2.0": the version of the library actually loaded, not of this header. */
TP_API const char *tp_version_string(void);

/* What every call that can fail returns: TP_OK (0), or why it failed (tp_last_error() says more). */

typedef enum tp_status {
    TP_OK = 0,
    TP_ERR_INVALID_ARGUMENT,    /* NULL pointer, unknown flag bit, bad handle bytes */
    TP_ERR_INVALID_DEVICE,      /* malformed device string, index out of range */
    TP_ERR_BACKEND_UNAVAILABLE, /* backend not built, module not loadable, no driver/device */
    TP_ERR_NOT_RECORDED,        /* elapsed time asked of an event never recorded */
    TP_ERR_NOT_READY,           /* elapsed time asked before both records were reached */
    TP_ERR_TIMING_DISABLED,     /* elapsed time asked of an event created without timing */
    TP_ERR_DEVICE_MISMATCH,     /* event recorded on another device's stream, ... */
    TP_ERR_UNSUPPORTED,         /* the backend does not offer this operation */
    TP_ERR_OUT_OF_MEMORY,
    TP_ERR_BACKEND,   /* the runtime underneath failed; the message names its error */
    TP_ERR_CAPTURING, /* not allowed while a capture is open (rule 16) */
} tp_status;

#define TP_STATUS_COUNT (TP_ERR_CAPTURING + 1) /* the number of statuses */

/* "TP_ERR_NOT_READY" for TP_ERR_NOT_READY; "TP_ERR_UNKNOWN" for anything else. */
TP_API const char *tp_status_name(tp_status status);

/* A one-line description of the status itself (not of a particular failure). */
TP_API const char *tp_status_description(tp_status status);

/*
 * The calling thread's message for its most recent failed call: what was wrong and
 * with what, e.g. `unknown device type 'cdua' in "cdua:0" (known: cpu, cuda, hip, opencl, vulkan)`.
 * Successful calls leave it as it was. Never NULL; "" before any failure. The string
 * stays valid until the thread's next failing call.
 */
TP_API const char *tp_last_error(void);

/* The device types, one per backend: the list is cmake/TpeventDeviceTypes.cmake (static asserts check this one). */

typedef enum tp_device_type {
    TP_DEVICE_CPU = 0,
    TP_DEVICE_CUDA = 1,
    TP_DEVICE_HIP = 2,
    TP_DEVICE_OPENCL = 3,
    TP_DEVICE_VULKAN = 4,
} tp_device_type;

#define TP_DEVICE_TYPE_COUNT 5 /* the number of device types */

/* Device indices are below this, on every backend. */
#define TP_MAX_DEVICES 64

/* The index of a parsed device string that named no index ("cuda"). */
#define TP_DEVICE_INDEX_CURRENT (-1)

/* A device: what tp_device_parse makes of a device string. */
typedef struct tp_device {
    tp_device_type type; /* its backend */
    int index;           /* 0.., or TP_DEVICE_INDEX_CURRENT after parsing a string without one */
} tp_device;

/* "cpu", "cuda", "hip", "opencl", "vulkan"; NULL for a value outside the enum. */
TP_API const char *tp_device_type_name(tp_device_type type);

/*
 * Strict parse of "<type>" or "<type>:<index>", type one of cpu, cuda, hip, opencl, vulkan, index a
 * plain decimal below TP_MAX_DEVICES. Anything else (empty, unknown type, missing or
 * signed or non-decimal index, spaces, trailing characters, overflow) is
 * TP_ERR_INVALID_DEVICE. Parsing never loads a backend and never checks that the
 * device exists.
 */
TP_API tp_status tp_device_parse(const char *str, tp_device *out);

/*
 * The size of a buffer that holds any device string tpevent writes, its NUL
 * included: what tp_device_format writes ("cuda:63") and the device strings in
 * tp_last_error()'s messages, with room for longer type names to come.
 */
#define TP_DEVICE_STRING_MAX 32

/* Writes "cuda:1" into buf; TP_DEVICE_STRING_MAX bytes are always enough. A buf too
 * small for the string is TP_ERR_INVALID_ARGUMENT, and buf is left as it was. */
TP_API tp_status tp_device_format(tp_device device, char *buf, size_t size);

/*
 * Number of devices of a backend ("cpu", "cuda", "hip", "opencl", "vulkan"). An unavailable backend has
 * 0 devices and answers TP_OK: asking how many is not an error.
 */
TP_API tp_status tp_device_count(const char *type, int *count);

/*
 * TP_OK if the backend can be used; otherwise TP_ERR_BACKEND_UNAVAILABLE (or
 * TP_ERR_INVALID_DEVICE for an unknown type) and, if reason is not NULL, a
 * process-lifetime string saying why (`cuda: libtpevent-cuda.so: cudaErrorNoDevice:
 * no CUDA-capable device is detected`). Loads the backend's module on first use.
 */
TP_API tp_status tp_backend_status(const char *type, const char **reason);

/* The device's name as its runtime gives it ("NVIDIA H200"; "CPU (virtual device 0)"). */
TP_API tp_status tp_device_name(const char *device, char *buf, size_t size);

/* What the core knows of one backend, for diagnostics (the tpevent tool's `devices`). */
typedef struct tp_backend_info {
    const char *name;        /* "cuda" */
    bool built_in;           /* linked into the core library (no module to load) */
    bool module_found;       /* a module file was found on the search path */
    bool loaded;             /* built in, or its module loaded and its entry answered */
    tp_status status;        /* TP_OK if usable; as tp_backend_status */
    const char *reason;      /* why not usable; "" when usable */
    const char *module_path; /* the module file tried, or "" */
    int device_count;        /* 0 when not usable */
} tp_backend_info;

/* Fills info for "cpu", "cuda", "hip", "opencl" or "vulkan", loading the backend if needed. The strings
 * live as long as the process. */
TP_API tp_status tp_backend_get_info(const char *type, tp_backend_info *info);

/*
 * The calling thread's current device. The default is TPEVENT_DEVICE if set, else
 * the first available of cuda, hip, cpu. A string with no index ("cuda") keeps the
 * thread's current index of that type (0 unless set).
 */
TP_API tp_status tp_set_device(const char *device);
TP_API tp_status tp_current_device(tp_device *out);

/* Blocks until all work on all streams of the device is done. NULL: current device. */
TP_API tp_status tp_device_synchronize(const char *device);

/* As tp_device_synchronize, for at most timeout_ns (>= 0): TP_ERR_NOT_READY when
 * the time runs out, and nothing else changes (the work goes on). The wait runs on
 * a helper thread of tpevent's, one per device at a time, which finishes the
 * device-wide wait on its own after a caller's time ran out. */
TP_API tp_status tp_device_synchronize_for(const char *device, int64_t timeout_ns);

/* A device's clock as tp_event_timestamp sees it (rule 13). */
typedef struct tp_clock_info {
    int64_t resolution_ns; /* the step of the device's timer */
    int64_t error_ns;      /* the bound of its calibration against CLOCK_MONOTONIC */
} tp_clock_info;

/* The device's clock (NULL: current device). On a GPU the first call calibrates
 * (a few records on an idle stream, tens of us); error_ns may change as later
 * calibrations are made. */
TP_API tp_status tp_device_clock(const char *device, tp_clock_info *info);

/* --------------------------------------------------------------- streams */

typedef struct tp_stream tp_stream; /* an in-order queue of work on one device (rule 12) */
typedef struct tp_event tp_event;   /* a point in a stream: its latest record (rule 3) */

/*
 * Priorities follow CUDA: lower numbers run first. Each backend clamps the value to
 * its range (CPU: TP_CPU_PRIORITY_HIGHEST..0); tp_stream_priority gives the value used.
 */
#define TP_CPU_PRIORITY_HIGHEST (-2)

/* Makes a stream of the device (NULL: current device) with that priority. */
TP_API tp_status tp_stream_create(tp_stream **out, const char *device, int priority);

/*
 * Wraps a native stream (cudaStream_t, hipStream_t; for the CPU, a tp_stream_native
 * of another CPU stream). The tp_stream does not own it: destroying the wrapper
 * leaves the native stream alone.
 * CPU: the backend knows its live streams, and anything else (NULL, a pointer that
 * was never a CPU stream, the handle of a destroyed one) is TP_ERR_INVALID_ARGUMENT,
 * without being read; a live stream of another CPU device is TP_ERR_DEVICE_MISMATCH.
 * CUDA, HIP: the handle cannot be checked; it is handed to the runtime as it is, so
 * one that is not a live stream of that device is undefined behaviour, as in the
 * runtime itself.
 */
TP_API tp_status tp_stream_from_native(tp_stream **out, const char *device, void *native);

/* Safe with work pending: the stream goes when its work is done (rule 9).
 * The default stream cannot be destroyed (TP_ERR_INVALID_ARGUMENT), nor a stream
 * that is part of a capture tpevent began and that is still open, as its origin or
 * joined to it (TP_ERR_CAPTURING: end the capture first; a wrapper from
 * tp_stream_from_native may go). Not while another thread is inside a call on this
 * stream (rule 10's exception, above). */
TP_API tp_status tp_stream_destroy(tp_stream *stream);

/* The device's default stream; it lives as long as the process. */
TP_API tp_status tp_stream_default(const char *device, tp_stream **out);

/* The calling thread's current stream for the device; it starts as the default
 * stream (rule 11). */
TP_API tp_status tp_stream_current(const char *device, tp_stream **out);

/* Makes the stream current for its device on the calling thread. */
TP_API tp_status tp_stream_set_current(tp_stream *stream);

/* *idle: true if all work submitted to the stream is done. Never blocks. */
TP_API tp_status tp_stream_query(tp_stream *stream, bool *idle);
TP_API tp_status tp_stream_synchronize(tp_stream *stream);

/*
 * tp_stream_synchronize, bounded: waits at most timeout_ns (CLOCK_MONOTONIC) for
 * all work submitted to the stream so far to be done. TP_OK once it is done;
 * TP_ERR_NOT_READY, with a message saying the time ran out, if the deadline passed
 * first, and nothing else changes (the work runs on). timeout_ns 0 is a query that
 * answers TP_ERR_NOT_READY for "not done"; a negative timeout_ns is
 * TP_ERR_INVALID_ARGUMENT (INT64_MAX is "forever"). Built on tp_stream_query:
 * spins ~20 us, then sleeps in pauses that double from 20 us to 1 ms, so it may
 * return up to about 1 ms after the work is done, and a query's failure is its
 * answer.
 */
TP_API tp_status tp_stream_synchronize_for(tp_stream *stream, int64_t timeout_ns);

/* Work submitted to the stream from now on waits for the event's latest record
 * as of this call (rule 6). Same as tp_event_wait(event, stream). */
TP_API tp_status tp_stream_wait_event(tp_stream *stream, tp_event *event);

/* Work submitted to `stream` from now on waits for all work submitted to `other`
 * so far. */
TP_API tp_status tp_stream_wait_stream(tp_stream *stream, tp_stream *other);

/*
 * Records an event on the stream. If *event is NULL, creates one on the stream's
 * device with TP_EVENT_TIMING (so that two of them can be timed against each other,
 * as the seed's record_event() example does); the caller destroys it.
 */
TP_API tp_status tp_stream_record_event(tp_stream *stream, tp_event **event);

/*
 * Runs fn(arg) on a host thread once all earlier work on the stream is done; later
 * work on the stream waits for it to return. Rule 15: a host function never delays
 * host functions or work of another stream, and may call tpevent and the device's
 * runtime; on CUDA and HIP it runs on a tpevent thread of the stream's own, the
 * stream held meanwhile by a stream memory operation. Where the device cannot do
 * that, and beyond 8 host functions pending on one stream, the stream is held by a
 * runtime host function (cudaLaunchHostFunc / hipStreamAddCallback) that only waits
 * while fn runs on the same tpevent thread: fn may still call the runtime, but such
 * gates run one at a time on the runtime's thread (docs/semantics.md, "Host
 * functions, per backend", which also states the limit of shared hardware queues).
 * fn must not wait for its own stream: synchronizing it, or its device, fails with
 * TP_ERR_INVALID_ARGUMENT. Once the process is exiting (tpevent's atexit handler
 * has run), no further host function of a CUDA or HIP stream starts on tpevent's
 * threads, streams held for them are released, and this call fails with
 * TP_ERR_BACKEND; one already running is not waited for.
 */
TP_API tp_status tp_stream_launch_host_fn(tp_stream *stream, void (*fn)(void *), void *arg);

/*
 * The native stream (cudaStream_t, hipStream_t, the CPU stream itself). The default
 * stream of a CUDA or HIP device answers NULL (0), as torch and CuPy name it: the
 * legacy default stream, for code built without per-thread default streams (tpevent
 * itself passes cudaStreamLegacy to the runtime for it, whatever the caller's build).
 * tp_stream_from_native of NULL or of cudaStreamLegacy wraps that same stream.
 * Lifetime (rule 19): once this call gave out the handle of a CUDA or HIP stream
 * tpevent created, its native stream stays valid while the process runs, for whoever
 * still holds the handle (torch's host allocator records on it when it frees a
 * pinned block): tp_stream_destroy leaves it in a pool, and a later tp_stream_create
 * of the same device and priority takes it once it is idle. A CPU stream's handle is
 * the stream itself, valid until tp_stream_destroy.
 */
TP_API tp_status tp_stream_native(tp_stream *stream, void **native);
TP_API tp_status tp_stream_device(tp_stream *stream, tp_device *out);
TP_API tp_status tp_stream_priority(tp_stream *stream, int *priority);

/* The device's stream priorities (NULL: current device), as cudaDeviceGetStreamPriorityRange
 * answers them: *greatest (runs first) <= *least. CPU: 0 and TP_CPU_PRIORITY_HIGHEST. */
TP_API tp_status tp_stream_priority_range(const char *device, int *least, int *greatest);

/* ------------------------------------------------------------------ hold */

/* Rule 17. A hold: later work on a stream waits until it is released. */
typedef struct tp_hold tp_hold;

/*
 * Work submitted to the stream after this call does not start until
 * tp_hold_release(*out) or until timeout_ns have passed (the watchdog), whichever
 * comes first: exactly one of the two lets it go. timeout_ns > 0; INT64_MAX: no
 * watchdog; <= 0: TP_ERR_INVALID_ARGUMENT. The hold takes no host thread and, on a
 * GPU, no SM (a stream memory operation on host memory; CPU: a gate in the worker's
 * queue). Several holds on one stream: later work waits for all of them. Destroying a
 * held stream is safe (rule 9). A capturing stream: TP_ERR_CAPTURING (a stream may
 * begin a capture while held; the hold stays outside the graph). Holding a CUDA/HIP
 * legacy default stream also holds every stream that synchronizes with it. Holds do
 * not cross fork(): a child must not release its parent's.
 * What fills a runtime queue behind a hold: tpevent's own waits, holds and host
 * functions never block the caller (past tp_stream_hold_window they join the
 * stream's latest); work submitted through the runtime itself (launches, records)
 * can fill it, and then its caller blocks until the hold is released or its
 * watchdog fires.
 */
TP_API tp_status tp_stream_hold(tp_stream *stream, int64_t timeout_ns, tp_hold **out);

/* Lets the stream go and frees the hold: TP_OK, or TP_ERR_NOT_READY ("the hold ran
 * out after N ms and released itself") when the watchdog came first. From any
 * thread but one running work of the held stream; releasing twice is undefined. */
TP_API tp_status tp_hold_release(tp_hold *hold);

/* *ops: how many operations tpevent may queue on the stream behind a hold before a
 * caller could block (rule 17): the device's documented window (CUDA 256, from the H200's ~1,020; HIP and
 * OpenCL 256; INT64_MAX where the queue has no bound: the CPU, Vulkan's worker, PoCL). */
TP_API tp_status tp_stream_hold_window(tp_stream *stream, int64_t *ops);

/* The flags of tp_event_create (Python: enable_timing, blocking, interprocess, external). */
enum {
    TP_EVENT_DEFAULT = 0,
    TP_EVENT_TIMING = 1u << 0,       /* elapsed_time may be asked of it */
    TP_EVENT_BLOCKING = 1u << 1,     /* synchronize sleeps instead of spinning */
    TP_EVENT_INTERPROCESS = 1u << 2, /* may be shared with other processes; not with TIMING */
    TP_EVENT_EXTERNAL = 1u << 3,     /* a record inside a capture is made again at each launch (rule 16) */
};
/* Every flag tp_event_create knows; any other bit is TP_ERR_INVALID_ARGUMENT. */
#define TP_EVENT_FLAGS_ALL (TP_EVENT_TIMING | TP_EVENT_BLOCKING | TP_EVENT_INTERPROCESS | TP_EVENT_EXTERNAL)

/* Creates an event of the device (NULL: current device). No native event exists
 * until the first record (rule 2). Unknown flag bits and INTERPROCESS|TIMING are
 * TP_ERR_INVALID_ARGUMENT (rule 8). */
TP_API tp_status tp_event_create(tp_event **out, const char *device, unsigned flags);

/* Safe with a record pending: resources go when it is reached (rule 9). Not while
 * another thread is inside a call on this event, a wait or synchronize on it
 * included (rule 10's exception, above). */
TP_API tp_status tp_event_destroy(tp_event *event);

/* Marks the point after all work submitted to the stream so far; replaces the
 * previous record (rule 3). NULL stream: the current stream of the event's device.
 * A stream of another device: TP_ERR_DEVICE_MISMATCH (rule 1). */
TP_API tp_status tp_event_record(tp_event *event, tp_stream *stream);

/* Never blocks; *done is true if never recorded or the latest record was reached
 * (rule 4). */
TP_API tp_status tp_event_query(tp_event *event, bool *done);

/* Blocks until the latest record is reached; at once if never recorded (rule 5). */
TP_API tp_status tp_event_synchronize(tp_event *event);

/*
 * tp_event_synchronize, bounded: waits at most timeout_ns (CLOCK_MONOTONIC) for the
 * event's latest record to be reached (as tp_event_query sees it: a record made by
 * another thread during the wait is waited for too). TP_OK at once for an event never
 * recorded or already reached; TP_ERR_NOT_READY, with a message saying the time ran
 * out, if the deadline passed first, and nothing else changes (the record stays
 * pending and completes as it would have). timeout_ns 0 is a query that answers
 * TP_ERR_NOT_READY for "not reached"; a negative timeout_ns is
 * TP_ERR_INVALID_ARGUMENT (INT64_MAX is "forever"). Built on tp_event_query: spins
 * ~20 us (not with TP_EVENT_BLOCKING, which sleeps from the start), then sleeps in
 * pauses that double from 20 us to 1 ms, so it may return up to about 1 ms after
 * the record is reached; a query's failure (a dead exporter of an imported event)
 * is its answer. Not while another thread destroys the event (rule 10's exception).
 */
TP_API tp_status tp_event_synchronize_for(tp_event *event, int64_t timeout_ns);

/* Same as tp_stream_wait_event(stream, event); NULL stream: the current stream of
 * the event's device. */
TP_API tp_status tp_event_wait(tp_event *event, tp_stream *stream);

/* Milliseconds from start's record to end's (rule 7), negative when end was reached
 * first. Errors, checked in order: TP_ERR_TIMING_DISABLED, TP_ERR_NOT_RECORDED,
 * TP_ERR_NOT_READY. Events of one device are timed on its own clock; events of two
 * devices or two backends on the host clock (tp_event_timestamp), where the answer
 * may be off by the two devices' error_ns (tp_device_clock) plus their drift over
 * the interval (docs/semantics.md, "One clock", states the bound). */
TP_API tp_status tp_event_elapsed_time(tp_event *start, tp_event *end, float *ms);

/* The CLOCK_MONOTONIC time, in ns, at which the device reached the event's latest
 * record (rule 13). Errors as tp_event_elapsed_time's. A record made on an idle
 * stream between host times t0 (before the record call) and t1 (after a
 * synchronize returned) has t0 - e <= *ns <= t1 + e, e being the device's error_ns;
 * a record's timestamp never changes once given, and timestamps of records on one
 * stream never go backwards. */
TP_API tp_status tp_event_timestamp(tp_event *event, int64_t *ns);

/* The event's device, and its TP_EVENT_* flags. */
TP_API tp_status tp_event_device(tp_event *event, tp_device *out);
TP_API tp_status tp_event_flags(tp_event *event, unsigned *flags);

/*
 * The runtime's event behind the latest record (cudaEvent_t, hipEvent_t), for
 * another library to query, wait on or time: NULL (and TP_OK) for an event never
 * recorded and for every CPU event. Native events are pooled: the handle is valid
 * until the event's next record or its destroy, and must not be recorded or
 * destroyed by its user.
 */
TP_API tp_status tp_event_native(tp_event *event, void **native);

/*
 * Wraps a runtime event the caller owns (a torch.cuda.Event's cuda_event, a CuPy
 * Event's ptr) as an event of `device`, as tp_stream_from_native does for streams.
 * Records go on that native event itself (so its owner sees them), and query,
 * synchronize, wait, elapsed time and tp_event_native answer for its latest record,
 * whoever made it. tpevent never destroys it: the caller keeps it alive until the
 * wrapper is destroyed (and until the records it made are reached, if other
 * events' waits depend on them). The wrapper has TP_EVENT_TIMING (the runtime
 * answers elapsed time for a native event made without timing with its error). The
 * handle cannot be checked: one that is not a live event of that device is
 * undefined behaviour, as in the runtime. NULL: TP_ERR_INVALID_ARGUMENT; the CPU
 * backend has no native events: TP_ERR_UNSUPPORTED.
 */
TP_API tp_status tp_event_from_native(tp_event **out, const char *device, void *native);

/* --------------------------------------------------------------- capture */

/*
 * Rule 16. Between tp_stream_begin_capture and tp_stream_end_capture, work
 * submitted to the stream is not run but captured into a graph; so is the later
 * work of any stream that joins the capture by waiting on an event whose latest
 * record was made inside it. tp_graph_launch runs the captured work after the
 * work already submitted to the launch stream, as many times as it is launched,
 * on any stream of the graph's device.
 *
 * Inside a capture:
 *  - a record of an event orders work within the graph only; once the capture
 *    has ended, such a record is as if never made outside the graph (query true,
 *    waits wait for nothing, elapsed time TP_ERR_NOT_RECORDED). With
 *    TP_EVENT_EXTERNAL the record is made again at each launch: after a launch,
 *    query, synchronize, elapsed time and tp_event_timestamp answer for that
 *    launch's record;
 *  - a wait on a TP_EVENT_EXTERNAL event waits, at each launch, for the event's
 *    latest record as of that launch (of another backend: when the launch reaches
 *    the wait; the graph keeps the event alive); a wait on another event whose
 *    latest record was made outside the capture is TP_ERR_CAPTURING (as CUDA
 *    refuses it), and one never recorded does nothing;
 *  - a host function (rule 15) runs once at each launch, in stream order, on a
 *    tpevent thread, and may call tpevent and the runtime;
 *  - query/synchronize/elapsed/timestamp of an event whose latest record is inside
 *    a capture still open, and query/synchronize of a capturing stream, answer
 *    TP_ERR_CAPTURING, touching no runtime; what cannot be replayed correctly
 *    (interprocess events) is refused with TP_ERR_CAPTURING.
 * A capture ends on its origin stream (the one tp_stream_begin_capture was called
 * on); it is refused, and dropped (the captured work is discarded and every stream
 * leaves the capture), if a stream that joined has not joined back: its last
 * captured work must be followed by a record that the origin stream waited on.
 */
typedef struct tp_graph tp_graph;

/* TP_ERR_CAPTURING if the stream is capturing already (its own capture or one it
 * joined). A wrapped CUDA/HIP stream that someone else is capturing is
 * TP_ERR_CAPTURING too. */
TP_API tp_status tp_stream_begin_capture(tp_stream *stream);

/* Ends the capture begun on `stream` and gives its graph. TP_ERR_INVALID_ARGUMENT
 * if `stream` is not the origin of a capture; TP_ERR_CAPTURING, naming the stream,
 * if a joined stream did not join back (the capture is dropped). */
TP_API tp_status tp_stream_end_capture(tp_stream *stream, tp_graph **out);

/* *capturing: the stream's work is being captured (by tpevent, or, for a wrapped
 * CUDA/HIP stream, by whoever began a capture on it). Always false on a device
 * that cannot capture (OpenCL, Vulkan): TP_OK, not TP_ERR_UNSUPPORTED. */
TP_API tp_status tp_stream_is_capturing(tp_stream *stream, bool *capturing);

/* Runs the graph's work after the work submitted to `stream` so far; the stream is
 * of the graph's device (TP_ERR_DEVICE_MISMATCH otherwise) and is not capturing
 * (TP_ERR_CAPTURING). May be called many times, on any stream of the device. */
TP_API tp_status tp_graph_launch(tp_graph *graph, tp_stream *stream);

/* Safe with launches pending: they run to the end (rule 9). */
TP_API tp_status tp_graph_destroy(tp_graph *graph);

/* The device the graph was captured on. */
TP_API tp_status tp_graph_device(tp_graph *graph, tp_device *out);

/* -------------------------------------------------------------- timeline */

/*
 * Named ranges on streams, and a trace that collects them into a Chrome trace-event
 * JSON file (Perfetto, chrome://tracing; python -m tpevent.timeline draws it as SVG).
 * Every function here may be called from any thread (rule 10).
 *
 * tp_range_push / tp_range_pop: open and close a range named `name` on the stream
 * (NULL: the current stream of the current device). One stack of ranges per stream:
 * a pop closes the range pushed last on that stream. While no trace runs and no tool
 * is attached, both return TP_OK at once, without looking at their arguments (two
 * relaxed loads). A profiling tool attached to the process (CUDA: NVTX's, as Nsight
 * Systems attaches) gets every range as an NVTX push/pop range of the calling thread,
 * and tp_stream_set_name's names, trace or not. While a trace runs, a range is two records of pooled timing events
 * on the stream (no allocation once the trace's storage has warmed up, see the
 * README); its start is tp_event_timestamp of the first (CLOCK_MONOTONIC), its
 * length tp_event_elapsed_time of the two (the device's own clock). The name is
 * copied. A NULL name is TP_ERR_INVALID_ARGUMENT; so is a pop on a stream with no
 * range open in the running trace (a push made before tp_trace_start recorded
 * nothing, so its pop during the trace fails).
 */
TP_API tp_status tp_range_push(tp_stream *stream, const char *name);
TP_API tp_status tp_range_pop(tp_stream *stream);

/* tp_stream_set_name: the stream's track name in traces (copied; cut to
 * TP_STREAM_NAME_MAX - 1 bytes; "" forgets it). Unnamed, a track is "stream N" (N in
 * creation order per device; "default stream" for the default one). */
#define TP_STREAM_NAME_MAX 64
TP_API tp_status tp_stream_set_name(tp_stream *stream, const char *name);

/*
 * tp_trace_start: starts collecting; TP_ERR_INVALID_ARGUMENT if a trace is running
 * (one at a time, per process). While a trace runs, each tp_event_record also
 * records a pooled timing mark just before it on the same stream, and each wait on
 * an event recorded that way (tp_event_wait, tp_stream_wait_event,
 * tp_stream_wait_stream; same or another backend) a mark just after it on the
 * waiting stream: the trace draws a flow from the one to the other. Waits on records
 * made before the trace started get no flow, nor does a wait again on the same record
 * from the same stream (it orders nothing new).
 *
 * tp_trace_stop: stops collecting, waits for every record the trace made, and
 * writes it to `path`: one process per device, one track per stream (its native
 * handle in the metadata), an "X" slice per range (ts, dur in us on CLOCK_MONOTONIC),
 * nested ranges nested, and per wait a flow (bind_id) between two "X" slices of no
 * length, "record" and "wait", at its two marks. Ranges still open are
 * closed by the stop (on streams destroyed meanwhile they are dropped). A trace with
 * no ranges is a valid file with no slices. Inside a capture (rule 16) the trace
 * takes no marks, since they would be part of the graph: ranges pushed or popped
 * while their stream captures are left out of the file, as are flows from records
 * and to waits made inside a capture (the user's records and waits themselves are
 * captured as always); a capture open at the stop is left as it is. A path that cannot be written is
 * TP_ERR_INVALID_ARGUMENT with the path and the system's reason; the trace is
 * stopped all the same and its records dropped. No trace running:
 * TP_ERR_INVALID_ARGUMENT. NULL path: TP_ERR_INVALID_ARGUMENT, and the trace goes on.
 * Called from a host function on a stream with a range open: TP_ERR_INVALID_ARGUMENT
 * at once, and the trace goes on (the range's end would come after the caller). The
 * records are waited for TPEVENT_TRACE_STOP_TIMEOUT_MS in all (default 10 s); one not
 * reached by then is TP_ERR_NOT_READY, and the trace is dropped. The file is written
 * next to `path` and renamed onto it: a symbolic link at `path` is replaced, not
 * followed, unless it leads to a FIFO or character device (/dev/stdout), written into
 * (a FIFO's reader waited for in the same limit); a directory, socket or block device is
 * refused. Bytes of a name that are not UTF-8 are written as \ufffd. A trace holds at
 * most TPEVENT_TRACE_MAX_RANGES ranges (default 2^20); later ones are dropped and counted
 * in the file. tp_trace_start refuses either variable out of range. After fork(): none.
 */
TP_API tp_status tp_trace_start(void);
TP_API tp_status tp_trace_stop(const char *path);

/* ------------------------------------------------------------------- IPC */

#define TP_IPC_HANDLE_SIZE 128 /* the bytes of a tp_ipc_handle */

/* Plain bytes to copy, send and import elsewhere; versioned, checked on import. */
typedef struct tp_ipc_handle {
    unsigned char bytes[TP_IPC_HANDLE_SIZE]; /* the handle, as it travels */
} tp_ipc_handle;

/*
 * tp_event_ipc_handle: only for events created with TP_EVENT_INTERPROCESS.
 * tp_event_from_ipc_handle: `device` NULL means the device the handle names; a device
 * string must be of the handle's type, and its index picks the device in this process
 * (processes may number devices differently, e.g. under CUDA_VISIBLE_DEVICES). A handle
 * that is garbage, of another layout version or backend, or whose exporting process
 * is gone is TP_ERR_INVALID_ARGUMENT.
 */
TP_API tp_status tp_event_ipc_handle(tp_event *event, tp_ipc_handle *handle);
TP_API tp_status tp_event_from_ipc_handle(tp_event **out, const char *device, const tp_ipc_handle *handle);

#ifdef __cplusplus
}
#endif

#include <tpevent/measure.h> /* tp_measure (rule 18) */
#include <tpevent/ipc.h>     /* tp_event_ipc_send, tp_event_ipc_recv */

#endif /* TPEVENT_TPEVENT_H */
