/*
 * The mapping onto a simulated GPU runtime, for running the GPU backend's shared
 * code on a machine with no GPU: the same rt_* names as runtime_cuda.h and
 * runtime_hip.h, over the fake_* calls of the simulated driver, which lives with
 * the tests (tests/gpu_fake/runtime_fake.c: a thread per stream that runs its work
 * in order, as a device would). The module built from both loads as the "cuda"
 * backend (so that the core takes it), from a folder of its own (<build>/gpu-fake).
 *
 * What it models of CUDA, because the shared code relies on it:
 *  - streams in order, independent of each other (the default stream too, as for
 *    CUDA's non-blocking streams); a destroyed stream finishes its work, and any
 *    later call on it (a record, a query, a second destroy) fails with "invalid
 *    resource handle", where CUDA's answer is undefined (rule 19's tests);
 *  - an event's latest record: query and synchronize answer for it, a wait keeps
 *    the record latest at the call, a record replaces the previous one;
 *  - the runtime's host functions of every stream run on ONE callback thread, each
 *    holding its stream until it returns (what rule 15 is about);
 *  - 64-bit stream waits on mapped host memory, with CUDA's cyclic comparison
 *    ((int64_t)(*addr - value) >= 0), polled by the stream's thread;
 *  - at exit, the runtime's teardown runs after the handlers registered after its
 *    start (tpevent's): it finds a stream still held by a wait on host memory, it
 *    reports it and ends the process with status 86, where a driver might hang;
 *  - stream capture and CUDA's capture modes: each thread's mode, each capture's
 *    mode, and the captures a call invalidates (see "Capture" below).
 * Not modelled: contexts (a current device per thread, as HIP), IPC across
 * processes (an export works; opening a handle fails, in this process as CUDA's
 * does), priorities (kept, never used).
 *
 * TPEVENT_FAKE_DEVICES: how many devices (default 2). TPEVENT_FAKE_NO_WAIT_VALUE=1:
 * the devices cannot wait on host memory, so the shared code falls back on the
 * runtime's host functions. Failures for tests, each said where it is made:
 * TPEVENT_FAKE_FAILED_LAUNCHES_EVERY, TPEVENT_FAKE_FAILED_MARKS_EVERY (graph
 * launches, runtime_fake_graph.c), TPEVENT_FAKE_FAILED_HOST_ALLOC (mapped host
 * memory, runtime_fake_memops.c).
 */
#ifndef TPEVENT_BACKENDS_GPU_RUNTIME_FAKE_H
#define TPEVENT_BACKENDS_GPU_RUNTIME_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RT_BACKEND_NAME "cuda" /* the core takes a module of the name it asks for */
#define RT_DEVICE_TYPE TP_DEVICE_CUDA
#define RT_CALL(name) "fake" name
#define RT_STREAM_WAIT_EVENT_CALL RT_CALL("StreamWaitEvent")
#define RT_EVENT_ELAPSED_CALL RT_CALL("EventElapsedTime")

typedef int rt_error;
enum {
    FAKE_SUCCESS = 0,
    FAKE_ERROR_INVALID_VALUE = 1,
    FAKE_ERROR_OUT_OF_MEMORY = 2,
    FAKE_ERROR_INVALID_HANDLE = 400,
    FAKE_ERROR_NOT_READY = 600,
    FAKE_ERROR_NOT_PERMITTED = 800,
    FAKE_ERROR_NOT_SUPPORTED = 801,
    FAKE_ERROR_CAPTURE_UNSUPPORTED = 900,
    FAKE_ERROR_CAPTURE_INVALIDATED = 901,
    FAKE_ERROR_CAPTURE_UNJOINED = 904,
    FAKE_ERROR_CAPTURE_ISOLATION = 905,
    FAKE_ERROR_ILLEGAL_STATE = 401,
};
typedef struct fake_stream *rt_stream;
typedef struct fake_event *rt_event;

#define RT_SUCCESS FAKE_SUCCESS
#define RT_ERROR_NOT_READY FAKE_ERROR_NOT_READY
#define RT_ERROR_OUT_OF_MEMORY FAKE_ERROR_OUT_OF_MEMORY

#define RT_EVENT_DEFAULT 0u
#define RT_EVENT_DISABLE_TIMING 1u
#define RT_EVENT_BLOCKING_SYNC 2u
#define RT_EVENT_INTERPROCESS 4u

#define RT_DEFAULT_STREAM ((rt_stream)0)
#define RT_DEFAULT_STREAM_WAITS_FOR_ALL 0
#define RT_RERECORD_WHILE_PENDING 1

const char *fake_error_name(rt_error e);
rt_error fake_device_count(int *count);
int fake_current_device(void);
/* Whether the calling thread is the runtime's callback thread, where CUDA refuses
 * runtime calls (cudaSetDevice answered cudaErrorNotPermitted there on the H200). */
bool fake_on_callback_thread(void);
void fake_set_current_device(int device);
rt_error fake_device_synchronize(void);
rt_error fake_stream_create(rt_stream *stream, int priority);
rt_error fake_stream_destroy(rt_stream stream);
rt_error fake_stream_query(rt_stream stream);
rt_error fake_stream_synchronize(rt_stream stream);
rt_error fake_stream_priority(rt_stream stream, int *priority);
rt_error fake_stream_device(rt_stream stream, int *device);
rt_error fake_stream_wait_event(rt_stream stream, rt_event event);
rt_error fake_launch_host_fn(rt_stream stream, void (*fn)(void *), void *arg);
rt_error fake_stream_wait_value64(rt_stream stream, uintptr_t counter, uint64_t value);
rt_error fake_event_create(rt_event *event, unsigned flags);
rt_error fake_event_destroy(rt_event event);
rt_error fake_event_record(rt_event event, rt_stream stream);
rt_error fake_event_query(rt_event event);
rt_error fake_event_synchronize(rt_event event);
rt_error fake_event_elapsed(float *ms, rt_event start, rt_event end);
bool fake_wait_value_supported(void);

/* CUDA's cudaStreamLegacy and cudaStreamPerThread handles, which torch and CuPy may
 * hand over (__cuda_stream__): the fake resolves 1 to the current device's default
 * stream and 2 to the calling thread's own stream of the current device. */
#define FAKE_STREAM_LEGACY ((rt_stream)(uintptr_t)1)
#define FAKE_STREAM_PER_THREAD ((rt_stream)(uintptr_t)2)

static inline bool rt_stream_follows_current_device(rt_stream stream)
{
    return stream == NULL || stream == FAKE_STREAM_LEGACY || stream == FAKE_STREAM_PER_THREAD;
}
/* As CUDA's: the legacy handle is given out as 0 (NULL), as torch and CuPy name it. */
static inline void *rt_stream_public(rt_stream s) { return s == FAKE_STREAM_LEGACY ? NULL : (void *)s; }
static inline rt_stream rt_stream_from_public(void *h) { return (rt_stream)h; }
static inline const char *rt_error_name(rt_error e) { return fake_error_name(e); }
static inline const char *rt_error_string(rt_error e) { return fake_error_name(e); }
static inline rt_error rt_device_count(int *count) { return fake_device_count(count); }
static inline void rt_start_failure_hint(rt_error e, char *buf, size_t size)
{
    (void)e;
    (void)size;
    buf[0] = '\0';
}
static inline rt_error rt_device_name(int device, char *buf, size_t size)
{
    snprintf(buf, size, "Fake GPU %d (tests/gpu_fake)", device);
    return RT_SUCCESS;
}
static inline rt_error rt_device_synchronize(void) { return fake_device_synchronize(); }
static inline rt_error rt_stream_priority_range(int *least, int *greatest)
{
    *least = 0;
    *greatest = -1;
    return RT_SUCCESS;
}
static inline rt_error rt_stream_create(rt_stream *s, int priority) { return fake_stream_create(s, priority); }
static inline rt_error rt_stream_destroy(rt_stream s) { return fake_stream_destroy(s); }
static inline rt_error rt_stream_query(rt_stream s) { return fake_stream_query(s); }
static inline rt_error rt_stream_synchronize(rt_stream s) { return fake_stream_synchronize(s); }
static inline rt_error rt_stream_priority(rt_stream s, int *p) { return fake_stream_priority(s, p); }
static inline rt_error rt_stream_wait_event(rt_stream s, rt_event e) { return fake_stream_wait_event(s, e); }
static inline rt_error rt_launch_host_fn(rt_stream s, void (*fn)(void *), void *arg)
{
    return fake_launch_host_fn(s, fn, arg);
}
static inline rt_error rt_stream_device(rt_stream s, int *device, bool *known)
{
    *known = true;
    return fake_stream_device(s, device);
}
static inline rt_error rt_event_create(rt_event *e, unsigned flags) { return fake_event_create(e, flags); }
static inline rt_error rt_event_destroy(rt_event e) { return fake_event_destroy(e); }
static inline rt_error rt_event_record(rt_event e, rt_stream s) { return fake_event_record(e, s); }
static inline rt_error rt_event_query(rt_event e) { return fake_event_query(e); }
static inline rt_error rt_event_synchronize(rt_event e) { return fake_event_synchronize(e); }
static inline rt_error rt_event_elapsed(float *ms, rt_event start, rt_event end)
{
    return fake_event_elapsed(ms, start, end);
}
/* What tp_native_sample times for a wait and an elapsed time: the same calls. */
static inline rt_error rt_sample_stream_wait_event(rt_stream s, rt_event e) { return rt_stream_wait_event(s, e); }
static inline rt_error rt_sample_event_elapsed(float *ms, rt_event a, rt_event b) { return rt_event_elapsed(ms, a, b); }

/* ---------------------------------------------------------------- IPC */

#define RT_IPC_PAYLOAD_MAGIC "tpevfake"
#define RT_IPC_HANDLE_SIZE 64
typedef struct rt_ipc_event_handle {
    unsigned char bytes[RT_IPC_HANDLE_SIZE];
} rt_ipc_event_handle;

rt_error fake_ipc_get_event_handle(rt_ipc_event_handle *handle, rt_event e);
static inline rt_error rt_ipc_get_event_handle(rt_ipc_event_handle *handle, rt_event e)
{
    return fake_ipc_get_event_handle(handle, e);
}
/* Refused, as CUDA refuses a handle opened in the process that exported it. */
static inline rt_error rt_ipc_open_event_handle(rt_event *e, const rt_ipc_event_handle *handle)
{
    (void)e;
    (void)handle;
    return FAKE_ERROR_INVALID_HANDLE;
}
static inline rt_error rt_device_uuid(int device, unsigned char uuid[16])
{
    memset(uuid, 0, 16);
    memcpy(uuid, "FAKEGPU", 7);
    uuid[15] = (unsigned char)device;
    return RT_SUCCESS;
}

/* ----------------------------------------------------- contexts (as HIP) */

typedef int rt_context;
static inline rt_error rt_runtime_start(const char **what)
{
    (void)what;
    return RT_SUCCESS;
}
static inline rt_error rt_context_open(int device, rt_context *ctx)
{
    *ctx = device;
    return RT_SUCCESS;
}
static inline void rt_context_close(int device) { (void)device; }
static inline rt_error rt_context_active(int device, bool *active)
{
    (void)device;
    *active = true;
    return RT_SUCCESS;
}

typedef enum rt_need { RT_NEED_CONTEXT, RT_NEED_CONTEXT_FOR_CALL, RT_NEED_DEVICE } rt_need;
typedef struct rt_guard {
    int saved_device; /* -1: nothing to restore */
} rt_guard;

#define RT_LAZY_CONTEXT_DEVICE (-1)
#define RT_QUERY_NEEDS_CONTEXT 0
#define RT_SYNCHRONIZE_NEEDS_CONTEXT 0
/* The step of the event timer: the fake device reads CLOCK_MONOTONIC (drifted). */
#define RT_EVENT_RESOLUTION_NS 1
#define RT_ELAPSED_NEEDS_CONTEXT 0

static inline void rt_guard_init(rt_guard *g) { g->saved_device = -1; }
static inline rt_error rt_guard_enter(rt_guard *g, rt_context device, rt_need need)
{
    g->saved_device = -1;
    if (need != RT_NEED_DEVICE)
        return RT_SUCCESS;
    if (fake_on_callback_thread())
        return FAKE_ERROR_NOT_PERMITTED;
    int current = fake_current_device();
    if (current != device) {
        fake_set_current_device(device);
        g->saved_device = current;
    }
    return RT_SUCCESS;
}
static inline void rt_guard_leave(rt_guard *g)
{
    if (g->saved_device >= 0)
        fake_set_current_device(g->saved_device);
}

/* The state is runtime_fake.c's. */
#define RT_DEFINE_STATE() _Static_assert(1, "no state")

/* ------------------------------------------------------- host functions */

typedef uintptr_t rt_device_ptr;
static inline rt_device_ptr rt_device_ptr_offset(rt_device_ptr p, size_t bytes) { return p + bytes; }
#define RT_HOST_ALLOC_CALL "fakeHostAlloc"
#define RT_WAIT_VALUE_CALL "fakeStreamWaitValue64"

/* Holds tpevent keeps queued on one stream (rule 17's window; gpu_hold.c): the fake
 * runtime blocks a submission once a stream has 40 stream memory waits pending
 * (FAKE_WAIT_DEPTH, its model of the H200's ~1,020), and host functions keep 8 of
 * their own there (HOST_DEVICE_WINDOW): a quarter of it, as on CUDA. */
#define RT_HOLD_WINDOW 10

rt_error fake_host_alloc(void **host, size_t size);
static inline rt_error rt_host_alloc_mapped(void **host, size_t size) { return fake_host_alloc(host, size); }
static inline rt_error rt_host_device_pointer(rt_device_ptr *device, void *host)
{
    *device = (uintptr_t)host;
    return RT_SUCCESS;
}
rt_error fake_host_free(void *host);
static inline rt_error rt_host_free(void *host) { return fake_host_free(host); }

/* tp_measure's cold calls (gpu_flush.c): the fake device's "cache" is 1 MiB, its memory
 * the host's, and a fill a queued memset. */
#define RT_FLUSH_CALLS "fakeDeviceCacheBytes, fakeAlloc"
#define RT_MEMSET_CALL "fakeMemsetAsync"
#define FAKE_CACHE_BYTES (1 << 20)
static inline rt_error rt_device_cache_bytes(int device, int *bytes)
{
    (void)device;
    *bytes = FAKE_CACHE_BYTES;
    return RT_SUCCESS;
}
static inline rt_error rt_device_alloc(void **memory, size_t size) { return fake_host_alloc(memory, size); }
rt_error fake_memset_async(void *memory, int value, size_t size, rt_stream s);
static inline rt_error rt_memset_async(void *memory, int value, size_t size, rt_stream s)
{
    return fake_memset_async(memory, value, size, s);
}

/* tp_measure's floor (gpu_empty.c): the least work a user's call queues, an op of
 * the fake stream that does nothing (runtime_fake.c). */
#define RT_EMPTY_WORK_MAKE_CALLS "fakeEmptyKernelLoad"
#define RT_EMPTY_WORK_LAUNCH_CALL "fakeLaunchKernel"
typedef int rt_empty_work;
static inline rt_error rt_empty_work_make(rt_empty_work *work)
{
    *work = 1;
    return RT_SUCCESS;
}
rt_error fake_launch_empty(rt_stream s);
static inline rt_error rt_empty_work_launch(rt_empty_work work, rt_stream s)
{
    (void)work;
    return fake_launch_empty(s);
}
static inline bool rt_stream_wait_value_supported(int device, const char **why)
{
    (void)device;
    if (fake_wait_value_supported())
        return true;
    *why = "TPEVENT_FAKE_NO_WAIT_VALUE is set";
    return false;
}
static inline rt_error rt_stream_wait_value64(rt_stream s, rt_device_ptr counter, uint64_t value)
{
    return fake_stream_wait_value64(s, counter, value);
}
/* Events handed over a Unix socket (runtime_fake_memops.c): registration is a no-op
 * (the fake device's memory is the host's), a write a store in stream order. */
#define RT_HOST_REGISTER_CALL "fakeHostRegister"
#define RT_WRITE_VALUE_CALL "fakeStreamWriteValue64"
rt_error fake_host_register(void *host, size_t size);
static inline rt_error rt_host_register_mapped(void *host, size_t size) { return fake_host_register(host, size); }
static inline rt_error rt_host_unregister(void *host)
{
    (void)host;
    return RT_SUCCESS;
}
rt_error fake_stream_write_value64(rt_stream s, uintptr_t target, uint64_t value);
static inline rt_error rt_stream_write_value64(rt_stream s, rt_device_ptr target, uint64_t value)
{
    return fake_stream_write_value64(s, target, value);
}

/* Capture (tests/gpu_fake/runtime_fake_graph.c): as CUDA's, enough for rule 16's tests. A
 * stream captures its records (external ones become operations of the graph),
 * waits (an external wait too; a wait on a record inside the capture joins the
 * waiting stream to it; a plain wait on a record outside it fails, as CUDA's),
 * runtime host functions, and waits on host memory, replayed with the value they
 * were captured with (as on the H200); launches of one executable graph run one
 * after the other, whatever their streams (as CUDA orders them). Calls CUDA forbids on what is being captured
 * (query or synchronize of a capturing stream, or of an event last recorded
 * inside an open capture) fail with fakeErrorStreamCaptureUnsupported and
 * invalidate the capture, so a test sees any such call tpevent makes. Capture
 * modes as CUDA's: each thread has one (global by default; relaxed once tpevent
 * sets it), and each capture the mode it began with (tpevent's own: relaxed). A
 * potentially unsafe call (a query or synchronize, a host allocation) fails and
 * invalidates the captures that prohibit it: from a thread not relaxed, any
 * capture that thread began not relaxed, and any other thread's global capture.
 * A test begins a foreign capture in a mode of its choosing through
 * tpevent_fake_foreign_capture (runtime_fake_graph.c). */
typedef struct fake_graph *rt_graph;
typedef struct fake_graph *rt_graph_exec;
typedef int rt_capture_mode;
rt_error fake_stream_begin_capture(rt_stream s);
rt_error fake_stream_end_capture(rt_stream s, rt_graph *g);
rt_error fake_graph_instantiate(rt_graph_exec *x, rt_graph g);
rt_error fake_graph_launch(rt_graph_exec x, rt_stream s);
rt_error fake_graph_destroy(rt_graph g);
rt_error fake_event_record_external(rt_event e, rt_stream s);
rt_error fake_stream_wait_event_external(rt_stream s, rt_event e);
bool fake_stream_is_capturing(rt_stream s);
int fake_thread_exchange_capture_mode(int mode); /* the previous one */
#define FAKE_CAPTURE_MODE_GLOBAL 0
#define FAKE_CAPTURE_MODE_THREAD_LOCAL 1
#define FAKE_CAPTURE_MODE_RELAXED 2
static inline bool rt_stream_capturing(rt_stream s) { return fake_stream_is_capturing(s); }
uint64_t fake_stream_capture_id(rt_stream s); /* 0: none */
static inline uint64_t rt_stream_capture_id(rt_stream s) { return fake_stream_capture_id(s); }
static inline void rt_thread_relax_capture(void) { (void)fake_thread_exchange_capture_mode(FAKE_CAPTURE_MODE_RELAXED); }
static inline rt_error rt_stream_begin_capture(rt_stream s) { return fake_stream_begin_capture(s); }
static inline rt_error rt_stream_end_capture(rt_stream s, rt_graph *g) { return fake_stream_end_capture(s, g); }
static inline rt_error rt_graph_instantiate(rt_graph_exec *x, rt_graph g) { return fake_graph_instantiate(x, g); }
static inline rt_error rt_graph_launch(rt_graph_exec x, rt_stream s) { return fake_graph_launch(x, s); }
static inline rt_error rt_graph_exec_destroy(rt_graph_exec x) { return fake_graph_destroy(x); }
static inline rt_error rt_graph_destroy(rt_graph g) { return fake_graph_destroy(g); }
static inline rt_error rt_event_record_external(rt_event e, rt_stream s) { return fake_event_record_external(e, s); }
static inline rt_error rt_stream_wait_event_external(rt_stream s, rt_event e)
{
    return fake_stream_wait_event_external(s, e);
}
static inline rt_capture_mode rt_thread_capture_relax_save(void)
{
    return fake_thread_exchange_capture_mode(FAKE_CAPTURE_MODE_RELAXED);
}
static inline void rt_thread_capture_restore(rt_capture_mode mode) { (void)fake_thread_exchange_capture_mode(mode); }

/* ------------------------------------------------------- profiling tools */

/* gpu_tool.c's alone: NVTX's core as on CUDA where the toolkit's headers were found
 * (TPEVENT_FAKE_NVTX, tests/gpu_fake/CMakeLists.txt), so that CI tests the ranges
 * through NVTX's injection interface; stream names are not passed on (a fake stream
 * is no cudaStream_t, and naming one needs the CUDA headers). */
#ifdef GPU_TOOL_MAPPING
#ifdef TPEVENT_FAKE_NVTX
#include <nvtx3/nvToolsExt.h>

#include <stdlib.h>

static inline bool rt_tool_attached(void)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");
    return path && *path;
}
static inline void rt_tool_range_push(const char *name) { (void)nvtxRangePushA(name); }
static inline void rt_tool_range_pop(void) { (void)nvtxRangePop(); }
#else
static inline bool rt_tool_attached(void) { return false; }
static inline void rt_tool_range_push(const char *name) { (void)name; }
static inline void rt_tool_range_pop(void) {}
#endif
static inline void rt_tool_name_stream(rt_stream s, const char *name)
{
    (void)s;
    (void)name;
}
#endif

/* gpu_sm_clock.c's alone: the fake device's SM clock (runtime_fake_sm_clock.c), a
 * counter of cycles that runs at TPEVENT_FAKE_SM_CLOCK_MHZ (default 1980, an H100's
 * maximum), lowered to TPEVENT_FAKE_SM_CLOCK_LOW_MHZ (default 345, its idle clock)
 * between the two marks of every TPEVENT_FAKE_SM_CLOCK_LOW_EVERY-th pair (0: none)
 * and of the first TPEVENT_FAKE_SM_CLOCK_RAMP pairs (a clock ramping up); the
 * maximum NVML would give is TPEVENT_FAKE_SM_CLOCK_MAX_MHZ (default the clock; 0:
 * unknown, as without NVML). A mark is written in stream order by a runtime host
 * function (no device code here). */
rt_error fake_sm_clock_launch(rt_stream s, uint64_t *mark);
double fake_sm_clock_max_mhz(void);
unsigned long fake_sm_clock_max_queries(void); /* calls of fake_sm_clock_max_mhz (probe_calls.h) */
#ifdef GPU_SM_CLOCK_MAPPING
#define RT_SM_CLOCK_SUPPORTED 1
#define RT_SM_CLOCK_MAKE_CALLS "fakeSmClockLoad"
#define RT_SM_CLOCK_LAUNCH_CALL "fakeLaunchKernel"
typedef int rt_sm_clock_kernel;
static inline rt_error rt_sm_clock_kernel_make(int device, rt_sm_clock_kernel *k)
{
    (void)device;
    *k = 1;
    return RT_SUCCESS;
}
static inline rt_error rt_sm_clock_launch(const rt_sm_clock_kernel *k, rt_stream s, rt_device_ptr mark)
{
    (void)k;
    return fake_sm_clock_launch(s, (uint64_t *)mark);
}
static inline double rt_sm_clock_max_mhz(int device, char *note, size_t size)
{
    (void)device;
    double mhz = fake_sm_clock_max_mhz();
    if (mhz <= 0)
        snprintf(note, size, "maximum SM clock unknown (TPEVENT_FAKE_SM_CLOCK_MAX_MHZ=0): no stretch can be flagged");
    else
        snprintf(note, size, "maximum SM clock %.0f MHz (the fake GPU's)", mhz);
    return mhz;
}
static inline void rt_sm_clock_reasons(int device, char *out, size_t size)
{
    (void)device;
    snprintf(out, size, "the fake GPU's clock is lowered by TPEVENT_FAKE_SM_CLOCK_LOW_EVERY or _RAMP");
}
#endif

#endif /* TPEVENT_BACKENDS_GPU_RUNTIME_FAKE_H */
