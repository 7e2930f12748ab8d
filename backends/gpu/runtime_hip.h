/*
 * The HIP side of the GPU backend's runtime mapping (ROCm's HIP runtime, AMD
 * platform; Debian's libamdhip64, HIP 5.2 and later): the same rt_* names as
 * runtime_cuda.h. Where HIP behaves differently from CUDA the difference is
 * handled here and the comment says so.
 */
#ifndef TPEVENT_BACKENDS_GPU_RUNTIME_HIP_H
#define TPEVENT_BACKENDS_GPU_RUNTIME_HIP_H

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_BACKEND_NAME "hip"
#define RT_DEVICE_TYPE TP_DEVICE_HIP
#define RT_CALL(name) "hip" name
#define RT_STREAM_WAIT_EVENT_CALL RT_CALL("StreamWaitEvent")
#define RT_EVENT_ELAPSED_CALL RT_CALL("EventElapsedTime")

typedef hipError_t rt_error;
typedef hipStream_t rt_stream;
typedef hipEvent_t rt_event;

#define RT_SUCCESS hipSuccess
#define RT_ERROR_NOT_READY hipErrorNotReady
#define RT_ERROR_OUT_OF_MEMORY hipErrorOutOfMemory

#define RT_EVENT_DEFAULT hipEventDefault
#define RT_EVENT_DISABLE_TIMING hipEventDisableTiming
#define RT_EVENT_BLOCKING_SYNC hipEventBlockingSync
/* HIP 5.2 on AMD documents hipEventInterprocess as "under development" and may
 * refuse it at creation; that failure is reported at the first record. */
#define RT_EVENT_INTERPROCESS hipEventInterprocess

/*
 * The default stream is HIP's NULL stream. HIP differs from CUDA here: a record
 * on the NULL stream waits for all commands on all other streams of the device
 * (non-blocking ones included), and synchronizing it waits for them too. That only
 * adds order, so the rules still hold; streams tpevent creates (non-blocking) do
 * not wait for the NULL stream. HIP 5.2 has no hipStreamLegacy to name it by.
 */
#define RT_DEFAULT_STREAM ((hipStream_t)0)

/* Hence a host function on any stream of the device must not synchronize the
 * default stream: it would wait for the host function's own stream. */
#define RT_DEFAULT_STREAM_WAITS_FOR_ALL 1

/*
 * HIP differs from CUDA: recording an event whose previous record is still pending
 * is undefined ("either outstanding recording may save state into the event").
 * The shared code then records a fresh native event instead and lets the old one
 * go back to the pool once reached.
 */
#define RT_RERECORD_WHILE_PENDING 0

/* The handle tp_stream_native gives out, and back: HIP names its default stream 0. */
static inline void *rt_stream_public(rt_stream s) { return (void *)s; }
static inline rt_stream rt_stream_from_public(void *h) { return (rt_stream)h; }

static inline bool rt_stream_follows_current_device(rt_stream stream)
{
    return stream == NULL || stream == hipStreamPerThread;
}

static inline const char *rt_error_name(rt_error e) { return hipGetErrorName(e); }

/* HIP 5.2's hipGetErrorString gives back the error's name; for the errors a user
 * meets when the backend cannot start, say what they mean instead. */
static inline const char *rt_error_string(rt_error e)
{
    const char *text = hipGetErrorString(e);
    if (text && strcmp(text, hipGetErrorName(e)) != 0)
        return text;
    switch (e) {
    case hipErrorNoDevice:
        return "no ROCm-capable device is detected";
    case hipErrorInsufficientDriver:
        return "the AMD GPU driver (amdgpu/KFD) is missing or too old for this HIP runtime";
    case hipErrorInvalidDevice:
        return "invalid device ordinal";
    case hipErrorNotInitialized:
        return "the HIP runtime is not initialized";
    case hipErrorOutOfMemory:
        return "out of memory";
    default:
        return "no description from the HIP runtime";
    }
}

static inline rt_error rt_device_count(int *count) { return hipGetDeviceCount(count); }

/* rt_error_string already says what the start failures mean. */
static inline void rt_start_failure_hint(rt_error e, char *buf, size_t size)
{
    (void)e;
    (void)size;
    buf[0] = '\0';
}

static inline rt_error rt_device_name(int device, char *buf, size_t size)
{
    hipDeviceProp_t prop;
    rt_error e = hipGetDeviceProperties(&prop, device);
    if (e == RT_SUCCESS)
        snprintf(buf, size, "%s", prop.name);
    return e;
}

static inline rt_error rt_device_synchronize(void) { return hipDeviceSynchronize(); }
static inline rt_error rt_stream_priority_range(int *least, int *greatest)
{
    return hipDeviceGetStreamPriorityRange(least, greatest);
}

static inline rt_error rt_stream_create(rt_stream *stream, int priority)
{
    return hipStreamCreateWithPriority(stream, hipStreamNonBlocking, priority);
}

static inline rt_error rt_stream_destroy(rt_stream s) { return hipStreamDestroy(s); }
static inline rt_error rt_stream_query(rt_stream s) { return hipStreamQuery(s); }
static inline rt_error rt_stream_synchronize(rt_stream s) { return hipStreamSynchronize(s); }
static inline rt_error rt_stream_priority(rt_stream s, int *p) { return hipStreamGetPriority(s, p); }
static inline rt_error rt_stream_wait_event(rt_stream s, rt_event e) { return hipStreamWaitEvent(s, e, 0); }
/*
 * HIP differs from CUDA: HIP 5.2 declares hipLaunchHostFunc but libamdhip64 does
 * not export it, so host functions go through hipStreamAddCallback, which also
 * holds back later work on the stream until the callback returns. Its callback
 * has another signature, hence a small trampoline per call, freed when it runs.
 */
typedef struct rt_host_call {
    void (*fn)(void *);
    void *arg;
} rt_host_call;

static inline void rt_host_call_run(hipStream_t stream, hipError_t status, void *data)
{
    rt_host_call call = *(rt_host_call *)data;
    (void)stream;
    (void)status; /* as with cudaLaunchHostFunc, the function runs whatever came before */
    free(data);
    call.fn(call.arg);
}

static inline rt_error rt_launch_host_fn(rt_stream s, void (*fn)(void *), void *arg)
{
    rt_host_call *call = malloc(sizeof *call);
    if (!call)
        return hipErrorOutOfMemory;
    *call = (rt_host_call){fn, arg};
    rt_error e = hipStreamAddCallback(s, rt_host_call_run, call, 0);
    if (e != RT_SUCCESS)
        free(call);
    return e;
}

/* HIP 5.2 has no hipStreamGetDevice. */
static inline rt_error rt_stream_device(rt_stream s, int *device, bool *known)
{
    (void)s;
    (void)device;
    *known = false;
    return RT_SUCCESS;
}

static inline rt_error rt_event_create(rt_event *e, unsigned flags) { return hipEventCreateWithFlags(e, flags); }
static inline rt_error rt_event_destroy(rt_event e) { return hipEventDestroy(e); }
static inline rt_error rt_event_record(rt_event e, rt_stream s) { return hipEventRecord(e, s); }
/*
 * What HIP answers for an event never recorded has varied between releases and its
 * own documentation contradicts itself (5.2's says both hipSuccess and
 * hipErrorNotReady); hipEventElapsedTime answers hipErrorInvalidHandle. The shared
 * code never asks the runtime about an unrecorded event: it answers rule 4 and
 * rule 7 from its own "recorded" flag.
 */
static inline rt_error rt_event_query(rt_event e) { return hipEventQuery(e); }
static inline rt_error rt_event_synchronize(rt_event e) { return hipEventSynchronize(e); }
/* HIP differs from CUDA: the resolution is about 1 us (CUDA: about 0.5 us), so two
 * records close together can be 0 ms apart. */
static inline rt_error rt_event_elapsed(float *ms, rt_event start, rt_event end)
{
    return hipEventElapsedTime(ms, start, end);
}
/* What tp_native_sample times for a wait and an elapsed time: the same calls. */
static inline rt_error rt_sample_stream_wait_event(rt_stream s, rt_event e) { return rt_stream_wait_event(s, e); }
static inline rt_error rt_sample_event_elapsed(float *ms, rt_event a, rt_event b) { return rt_event_elapsed(ms, a, b); }

/* ---------------------------------------------------------------- IPC
 *
 * hipIpcGetEventHandle / hipIpcOpenEventHandle (HIP 5.2 has both; its documentation
 * calls hipEventInterprocess "under development" on AMD). Like CUDA, HIP refuses to
 * open a handle in the process that exported it (hipErrorInvalidContext). Not
 * tried on hardware here: the shared code treats HIP's interprocess events as
 * CUDA's (polling synchronize, liveness checks), which is safe whatever HIP's
 * blocking-sync flag does for them.
 */
#define RT_IPC_PAYLOAD_MAGIC "tpev-hip" /* 8 bytes, no NUL: begins every HIP payload */
#define RT_IPC_HANDLE_SIZE HIP_IPC_HANDLE_SIZE
typedef hipIpcEventHandle_t rt_ipc_event_handle;

static inline rt_error rt_ipc_get_event_handle(rt_ipc_event_handle *handle, rt_event e)
{
    return hipIpcGetEventHandle(handle, e);
}
static inline rt_error rt_ipc_open_event_handle(rt_event *e, const rt_ipc_event_handle *handle)
{
    return hipIpcOpenEventHandle(e, *handle);
}

static inline rt_error rt_device_uuid(int device, unsigned char uuid[16])
{
    hipDevice_t handle;
    hipUUID id;
    rt_error e = hipDeviceGet(&handle, device);
    if (e == RT_SUCCESS)
        e = hipDeviceGetUuid(&id, handle);
    if (e == RT_SUCCESS)
        memcpy(uuid, id.bytes, 16);
    return e;
}

/* ---------------------------------------------------------------- contexts
 *
 * HIP differs from CUDA: the runtime sets up every device when it starts, and a
 * call never creates a per-device context on the side, so the only thing a guard
 * does is make the device current (hipSetDevice) and put the caller's back. HIP's
 * context API is deprecated and not used.
 */
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

/* The same needs as CUDA's (see runtime_cuda.h); only RT_NEED_DEVICE does anything. */
typedef enum rt_need { RT_NEED_CONTEXT, RT_NEED_CONTEXT_FOR_CALL, RT_NEED_DEVICE } rt_need;

typedef struct rt_guard {
    int saved_device; /* -1: nothing to restore */
} rt_guard;

/* No lazy per-device context on the side (see above): no call needs a guard for
 * the context's sake. */
#define RT_LAZY_CONTEXT_DEVICE (-1)

#define RT_QUERY_NEEDS_CONTEXT 0
#define RT_SYNCHRONIZE_NEEDS_CONTEXT 0
/* The step of the event timer: hipEventElapsedTime: "a resolution of approximately one microsecond" (HIP API). */
#define RT_EVENT_RESOLUTION_NS 1000
#define RT_ELAPSED_NEEDS_CONTEXT 0

static inline void rt_guard_init(rt_guard *g) { g->saved_device = -1; }

static inline rt_error rt_guard_enter(rt_guard *g, rt_context device, rt_need need)
{
    g->saved_device = -1;
    if (need != RT_NEED_DEVICE)
        return RT_SUCCESS;
    int current = -1;
    rt_error e = hipGetDevice(&current);
    if (e != RT_SUCCESS || current == device)
        return e;
    e = hipSetDevice(device);
    if (e == RT_SUCCESS)
        g->saved_device = current;
    return e;
}

static inline void rt_guard_leave(rt_guard *g)
{
    if (g->saved_device >= 0)
        (void)hipSetDevice(g->saved_device);
}

/* ---------------------------------------------------------- host functions
 *
 * The same hold as CUDA's (see runtime_cuda.h): hipStreamWaitValue64 on a 64-bit
 * counter in mapped host memory. HIP differs from CUDA: the wait takes a mask
 * (all ones here) and compares plainly, *counter >= value (the shared code keeps
 * every value below 2^63, so signed or not makes no difference); support is told
 * by hipDeviceAttributeCanUseStreamWaitValue. The memory is coherent, so the
 * device sees the CPU's store without a flush. Not tried on hardware here.
 */
typedef void *rt_device_ptr;

static inline rt_device_ptr rt_device_ptr_offset(rt_device_ptr p, size_t bytes) { return (char *)p + bytes; }

#define RT_HOST_ALLOC_CALL "hipHostMalloc"
#define RT_WAIT_VALUE_CALL "hipStreamWaitValue64"
/* Whether a stream capture takes hipStreamWaitValue64 as a node of the graph: HIP's
 * documentation does not say, and no AMD GPU here to try; so captured host functions
 * are held by gates (gpu_host_fn_graph.c). */
#define RT_WAIT_VALUE_CAPTURED 0

/* Holds tpevent keeps queued on one stream (rule 17's window; gpu_hold.c). HIP's
 * documentation states no depth for a stream's queue (its commands become packets of
 * an HSA queue of fixed size, which a full queue makes the submitting thread wait on,
 * as CUDA's does); no AMD GPU here to measure it on. The CUDA figure is kept: a
 * quarter of the ~1,020 pending operations measured on the H200. */
#define RT_HOLD_WINDOW 256

static inline rt_error rt_host_alloc_mapped(void **host, size_t size)
{
    return hipHostMalloc(host, size, hipHostMallocMapped | hipHostMallocCoherent);
}
static inline rt_error rt_host_device_pointer(rt_device_ptr *device, void *host)
{
    return hipHostGetDevicePointer(device, host, 0);
}
static inline rt_error rt_host_free(void *host) { return hipHostFree(host); }

/* tp_measure's cold calls (gpu_flush.c), as runtime_cuda.h's. */
#define RT_FLUSH_CALLS "hipDeviceGetAttribute(hipDeviceAttributeL2CacheSize), hipMalloc"
#define RT_MEMSET_CALL "hipMemsetAsync"
static inline rt_error rt_device_cache_bytes(int device, int *bytes)
{
    return hipDeviceGetAttribute(bytes, hipDeviceAttributeL2CacheSize, device);
}
static inline rt_error rt_device_alloc(void **memory, size_t size) { return hipMalloc(memory, size); }
static inline rt_error rt_memset_async(void *memory, int value, size_t size, rt_stream s)
{
    return hipMemsetAsync(memory, value, size, s);
}

/* tp_measure's floor (gpu_empty.c): the least work a user's call queues. HIP loads
 * only code objects (no source to compile at run time, as CUDA's PTX), so the
 * least work is a fill of 4 bytes of a buffer of the device's, itself a kernel on
 * AMD's GPUs. Not tried on hardware here. */
#define RT_EMPTY_WORK_MAKE_CALLS "hipMalloc"
#define RT_EMPTY_WORK_LAUNCH_CALL "hipMemsetAsync"
typedef void *rt_empty_work;
static inline rt_error rt_empty_work_make(rt_empty_work *work) { return hipMalloc(work, 4); }
static inline rt_error rt_empty_work_launch(rt_empty_work work, rt_stream s) { return hipMemsetAsync(work, 0, 4, s); }

static inline bool rt_stream_wait_value_supported(int device, const char **why)
{
    int value = 0;
    if (hipDeviceGetAttribute(&value, hipDeviceAttributeCanUseStreamWaitValue, device) != hipSuccess ||
        value == 0) {
        *why = "hipDeviceAttributeCanUseStreamWaitValue is 0";
        return false;
    }
    return true;
}

static inline rt_error rt_stream_wait_value64(rt_stream s, rt_device_ptr counter, uint64_t value)
{
    return hipStreamWaitValue64(s, counter, value, hipStreamWaitValueGte, UINT64_MAX);
}

/* Events handed over a Unix socket: as CUDA's (runtime_cuda.h). */
#define RT_HOST_REGISTER_CALL "hipHostRegister"
#define RT_WRITE_VALUE_CALL "hipStreamWriteValue64"
static inline rt_error rt_host_register_mapped(void *host, size_t size)
{
    return hipHostRegister(host, size, hipHostRegisterMapped | hipHostRegisterPortable);
}
static inline rt_error rt_host_unregister(void *host) { return hipHostUnregister(host); }
static inline rt_error rt_stream_write_value64(rt_stream s, rt_device_ptr target, uint64_t value)
{
    return hipStreamWriteValue64(s, target, value, 0);
}

/* As CUDA's (runtime_cuda.h). */
static inline bool rt_stream_capturing(rt_stream s)
{
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    return hipStreamIsCapturing(s, &status) != hipSuccess || status != hipStreamCaptureStatusNone;
}
/* The id of the capture the stream is in, unique in the process; 0: none. */
static inline uint64_t rt_stream_capture_id(rt_stream s)
{
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    unsigned long long id = 0;
    hipError_t e = hipStreamGetCaptureInfo(s, &status, &id);
    return e == hipSuccess && status == hipStreamCaptureStatusActive ? id : 0;
}

static inline void rt_thread_relax_capture(void)
{
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    (void)hipThreadExchangeStreamCaptureMode(&mode);
}

/* Rule 16: as CUDA's (runtime_cuda.h). Not built or run on hardware here. */
typedef hipGraph_t rt_graph;
typedef hipGraphExec_t rt_graph_exec;
typedef hipStreamCaptureMode rt_capture_mode;

static inline rt_error rt_stream_begin_capture(rt_stream s)
{
    return hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed);
}
static inline rt_error rt_stream_end_capture(rt_stream s, rt_graph *g) { return hipStreamEndCapture(s, g); }
static inline rt_error rt_graph_instantiate(rt_graph_exec *x, rt_graph g)
{
    return hipGraphInstantiateWithFlags(x, g, 0);
}
static inline rt_error rt_graph_launch(rt_graph_exec x, rt_stream s) { return hipGraphLaunch(x, s); }
static inline rt_error rt_graph_exec_destroy(rt_graph_exec x) { return hipGraphExecDestroy(x); }
static inline rt_error rt_graph_destroy(rt_graph g) { return hipGraphDestroy(g); }
#if defined(hipEventRecordExternal) && defined(hipEventWaitExternal)
static inline rt_error rt_event_record_external(rt_event e, rt_stream s)
{
    return hipEventRecordWithFlags(e, s, hipEventRecordExternal);
}
static inline rt_error rt_stream_wait_event_external(rt_stream s, rt_event e)
{
    return hipStreamWaitEvent(s, e, hipEventWaitExternal);
}
#else /* older HIP (5.x): no external records or waits; TP_EVENT_EXTERNAL inside a capture fails */
static inline rt_error rt_event_record_external(rt_event e, rt_stream s)
{
    (void)e;
    (void)s;
    return hipErrorNotSupported;
}
static inline rt_error rt_stream_wait_event_external(rt_stream s, rt_event e)
{
    (void)s;
    (void)e;
    return hipErrorNotSupported;
}
#endif
static inline rt_capture_mode rt_thread_capture_relax_save(void)
{
    rt_capture_mode mode = hipStreamCaptureModeRelaxed;
    (void)hipThreadExchangeStreamCaptureMode(&mode);
    return mode;
}
static inline void rt_thread_capture_restore(rt_capture_mode mode)
{
    (void)hipThreadExchangeStreamCaptureMode(&mode);
}

/* HIP's mapping keeps no state of its own. */
#define RT_DEFINE_STATE() _Static_assert(1, "no state")

/* ------------------------------------------------------- profiling tools */

/* gpu_tool.c's alone. roctx, ROCm's NVTX (roctracer's libroctx64), is not part of
 * Debian's ROCm packages: HIP passes no range to a tool (tool_attached is false). */
#ifdef GPU_TOOL_MAPPING
static inline bool rt_tool_attached(void) { return false; }
static inline void rt_tool_range_push(const char *name) { (void)name; }
static inline void rt_tool_range_pop(void) {}
static inline void rt_tool_name_stream(rt_stream s, const char *name)
{
    (void)s;
    (void)name;
}
#endif

/* gpu_sm_clock.c's alone: HIP's SM clock is not read. CUDA's reader is a PTX kernel
 * (%clock64, %globaltimer), and the HIP build loads no PTX: an AMD device's would be
 * s_memtime and s_memrealtime in a code object, not written. A measurement there says
 * "clock unknown" with this reason. */
#ifdef GPU_SM_CLOCK_MAPPING
#define RT_SM_CLOCK_SUPPORTED 0
#define RT_SM_CLOCK_UNSUPPORTED "the HIP build loads no PTX to read %clock64 and %globaltimer (an AMD reader, " \
                                "s_memtime and s_memrealtime in a code object, is not written)"
#endif

#endif /* TPEVENT_BACKENDS_GPU_RUNTIME_HIP_H */
