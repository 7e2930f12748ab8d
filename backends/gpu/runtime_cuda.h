/*
 * The CUDA side of the GPU backend's runtime mapping: every rt_* name that the GPU
 * backend (gpu_internal.h) uses, in terms of cudart (linked statically into the
 * module) and, for contexts, stream memory operations and two hot calls, the driver
 * API reached through cudart's entry-point query (so the module needs libcuda.so.1
 * only at run time, and fails init with a reason without it). runtime_hip.h
 * defines the same names for HIP; keep the two in step. Differences between the
 * runtimes are handled here and said so in a comment, never with a runtime test in
 * the shared code.
 */
#ifndef TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_H
#define TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_H

#include <cuda.h> /* types of the few driver calls below; nothing is linked from it */
#include <cuda_runtime_api.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RT_BACKEND_NAME "cuda"
#define RT_DEVICE_TYPE TP_DEVICE_CUDA
/* The runtime's name for call `name`, for messages: RT_CALL("EventRecord"). */
#define RT_CALL(name) "cuda" name
#define RT_STREAM_WAIT_EVENT_CALL "cuStreamWaitEvent"
#define RT_EVENT_ELAPSED_CALL "cuEventElapsedTime"

typedef cudaError_t rt_error;
typedef cudaStream_t rt_stream;
typedef cudaEvent_t rt_event;

#define RT_SUCCESS cudaSuccess
#define RT_ERROR_NOT_READY cudaErrorNotReady
#define RT_ERROR_OUT_OF_MEMORY cudaErrorMemoryAllocation

#define RT_EVENT_DEFAULT cudaEventDefault
#define RT_EVENT_DISABLE_TIMING cudaEventDisableTiming
#define RT_EVENT_BLOCKING_SYNC cudaEventBlockingSync
#define RT_EVENT_INTERPROCESS cudaEventInterprocess

/* The device's default stream is the legacy NULL stream, named by the explicit
 * cudaStreamLegacy handle so that --default-stream per-thread does not change what
 * it means: one stream for all threads, as tp_stream_default promises; it serialises
 * with blocking streams, not with the non-blocking ones tpevent creates. */
#define RT_DEFAULT_STREAM cudaStreamLegacy

/* Synchronizing the legacy stream waits for blocking streams only, and the streams
 * tpevent creates are non-blocking: a host function on one of them may synchronize
 * the default stream. */
#define RT_DEFAULT_STREAM_WAITS_FOR_ALL 0

/* CUDA allows recording an event again while its previous record is pending: the
 * new record replaces the old one. */
#define RT_RERECORD_WHILE_PENDING 1

/* Handles that name no stream of their own but "the default stream of whatever
 * device is current": calls on them need the stream's device current. */
static inline bool rt_stream_follows_current_device(rt_stream stream)
{
    return stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

/* The handle tp_stream_native gives out, and back: the legacy default stream is 0
 * (NULL), as torch and CuPy name it; a 0 taken in is the legacy stream whatever
 * the caller was built with (this module is not built for per-thread streams). */
static inline void *rt_stream_public(rt_stream s) { return s == cudaStreamLegacy ? NULL : (void *)s; }
static inline rt_stream rt_stream_from_public(void *h) { return h ? (rt_stream)h : cudaStreamLegacy; }

static inline const char *rt_error_name(rt_error e) { return cudaGetErrorName(e); }
static inline const char *rt_error_string(rt_error e) { return cudaGetErrorString(e); }

static inline rt_error rt_device_count(int *count) { return cudaGetDeviceCount(count); }

/* What the error text alone does not say when the runtime cannot start: whether
 * there is a driver at all, and how its version compares with the runtime's. */
static inline void rt_start_failure_hint(rt_error e, char *buf, size_t size)
{
    int driver = 0, runtime = CUDART_VERSION;
    buf[0] = '\0';
    if (e != cudaErrorInsufficientDriver)
        return;
    (void)cudaDriverGetVersion(&driver);
    if (driver == 0)
        snprintf(buf, size, " (no NVIDIA driver: libcuda.so.1 was not found)");
    else
        snprintf(buf, size, " (the driver supports CUDA %d.%d, this module's runtime is CUDA %d.%d)",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
}

static inline rt_error rt_device_name(int device, char *buf, size_t size)
{
    struct cudaDeviceProp prop;
    rt_error e = cudaGetDeviceProperties(&prop, device);
    if (e == RT_SUCCESS)
        snprintf(buf, size, "%s", prop.name);
    return e;
}

/* Both need the device current. */
static inline rt_error rt_device_synchronize(void) { return cudaDeviceSynchronize(); }
static inline rt_error rt_stream_priority_range(int *least, int *greatest)
{
    return cudaDeviceGetStreamPriorityRange(least, greatest);
}

/* Needs the device current. Non-blocking: no implicit order against the legacy
 * stream (rule 12). */
static inline rt_error rt_stream_create(rt_stream *stream, int priority)
{
    return cudaStreamCreateWithPriority(stream, cudaStreamNonBlocking, priority);
}

static inline rt_error rt_stream_destroy(rt_stream s) { return cudaStreamDestroy(s); }
static inline rt_error rt_stream_query(rt_stream s) { return cudaStreamQuery(s); }
static inline rt_error rt_stream_synchronize(rt_stream s) { return cudaStreamSynchronize(s); }
static inline rt_error rt_stream_priority(rt_stream s, int *p) { return cudaStreamGetPriority(s, p); }
static inline rt_error rt_launch_host_fn(rt_stream s, void (*fn)(void *), void *arg)
{
    return cudaLaunchHostFunc(s, fn, arg);
}

/* The device a stream belongs to, where the runtime can tell (CUDA 12.8 on);
 * *known = false otherwise. */
static inline rt_error rt_stream_device(rt_stream s, int *device, bool *known)
{
#if CUDART_VERSION >= 12080
    *known = true;
    return cudaStreamGetDevice(s, device);
#else
    (void)s;
    (void)device;
    *known = false;
    return RT_SUCCESS;
#endif
}

/* Needs the device current: the event belongs to it. */
static inline rt_error rt_event_create(rt_event *e, unsigned flags) { return cudaEventCreateWithFlags(e, flags); }
static inline rt_error rt_event_destroy(rt_event e) { return cudaEventDestroy(e); }
static inline rt_error rt_event_record(rt_event e, rt_stream s) { return cudaEventRecord(e, s); }
/* For an event never recorded, cudaEventQuery answers cudaSuccess. The shared code
 * never asks it: it answers "done" itself until the first record (rule 4). */
static inline rt_error rt_event_query(rt_event e) { return cudaEventQuery(e); }
static inline rt_error rt_event_synchronize(rt_event e) { return cudaEventSynchronize(e); }
/* rt_stream_wait_event and rt_event_elapsed go to the driver (contexts, below);
 * tp_native_sample times cudart's own calls, as a program makes them. */
static inline rt_error rt_sample_stream_wait_event(rt_stream s, rt_event e) { return cudaStreamWaitEvent(s, e, 0); }
static inline rt_error rt_sample_event_elapsed(float *ms, rt_event a, rt_event b) { return cudaEventElapsedTime(ms, a, b); }

/* ---------------------------------------------------------------- IPC
 *
 * Interprocess events (cudaIpcGetEventHandle / cudaIpcOpenEventHandle). Behaviours
 * seen on CUDA 13 (H200) that the shared code works around (gpu_ipc_event.c):
 *  - cudaEventBlockingSync is ignored for interprocess events, exported or opened:
 *    cudaEventSynchronize spins;
 *  - once the exporting process is SIGKILLed, cudaEventSynchronize of an opened
 *    event with the exporter's record pending never returns and cudaEventQuery
 *    stays cudaErrorNotReady; opening a dead exporter's handle still succeeds;
 *  - opening a handle in the process that exported it fails
 *    (cudaErrorDeviceUninitialized).
 * A process that exported an event and is killed leaves the driver's own
 * /dev/shm/cuda.shm.* file behind; that is the driver's, not tpevent's.
 */
#define RT_IPC_PAYLOAD_MAGIC "tpevcuda" /* 8 bytes, no NUL: begins every CUDA payload */
#define RT_IPC_HANDLE_SIZE CUDA_IPC_HANDLE_SIZE
typedef cudaIpcEventHandle_t rt_ipc_event_handle;

/* Both run with the event's device current (the handle is of the current context). */
static inline rt_error rt_ipc_get_event_handle(rt_ipc_event_handle *handle, rt_event e)
{
    return cudaIpcGetEventHandle(handle, e);
}
static inline rt_error rt_ipc_open_event_handle(rt_event *e, const rt_ipc_event_handle *handle)
{
    return cudaIpcOpenEventHandle(e, *handle);
}

/* The device's 16-byte UUID (as nvidia-smi prints it, GPU-...): tells an importer
 * whether its device is the exporter's, whatever numbering each process sees. */
static inline rt_error rt_device_uuid(int device, unsigned char uuid[16])
{
    struct cudaDeviceProp prop;
    rt_error e = cudaGetDeviceProperties(&prop, device);
    if (e == RT_SUCCESS)
        memcpy(uuid, prop.uuid.bytes, 16);
    return e;
}

/* ---------------------------------------------------------------- contexts
 *
 * cudart creates a device's primary context (hundreds of MiB) the first time a
 * call needs "the current device" on a thread that has no current context, and
 * cudaSetDevice creates one too. To switch devices for a call and restore the
 * caller's state exactly, without ever creating a context the program did not ask
 * for, the backend pushes the device's primary context onto the thread's driver
 * context stack and pops it afterwards: the caller's current context, or its lack
 * of one, comes back as it was. cudart follows the driver's current context, so
 * "current device" follows too.
 */
typedef CUcontext rt_context;

typedef struct rt_driver_api {
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_push_current)(CUcontext);
    CUresult (*ctx_pop_current)(CUcontext *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*primary_ctx_get_state)(CUdevice, unsigned *, int *);
    /* Optional (NULL where the driver lacks them): host functions then go through
     * cudaLaunchHostFunc (see "host functions" below). */
    CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*stream_wait_value64)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
    /* Two hot calls straight to the driver (RT_*_CALL name them), at cudart's own
     * version: through cudart they read 1.033 and 1.041 of the raw call (H200, 150
     * and 70 ns), the driver's 0.79 and 0.88-0.94. Never NULL: cudart's call where
     * the driver lacks the entry point. */
    CUresult (*event_elapsed_time)(float *, CUevent, CUevent);
    CUresult (*stream_wait_event)(CUstream, CUevent, unsigned);
} rt_driver_api;

/* Filled once by rt_runtime_start, read-only afterwards. Defined once, in
 * gpu_device.c (RT_DEFINE_STATE), for every file of the backend. */
extern rt_driver_api rt_driver __attribute__((visibility("hidden")));

/* cudart's error codes equal the driver's for every error these context, event and
 * stream calls can return (invalid value, device, context or handle, not ready, not
 * supported, deinitialised...), so a CUresult is reported through the same names. */
static inline rt_error rt_from_driver(CUresult r) { return (rt_error)r; }

static inline rt_error rt_stream_wait_event(rt_stream s, rt_event e) { return rt_from_driver(rt_driver.stream_wait_event(s, e, 0)); }
/* Resolution about 0.5 us (CUDA documents it); not ready until both are reached. */
static inline rt_error rt_event_elapsed(float *ms, rt_event a, rt_event b) { return rt_from_driver(rt_driver.event_elapsed_time(ms, a, b)); }

static inline rt_error rt_driver_symbol(const char *name, void **fn, unsigned version)
{
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    rt_error e = cudaGetDriverEntryPointByVersion(name, fn, version, cudaEnableDefault, &found);
#else
    (void)version;
    rt_error e = cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, &found);
#endif
    if (e == RT_SUCCESS && (found != cudaDriverEntryPointSuccess || !*fn))
        e = cudaErrorSymbolNotFound;
    return e;
}

/* Where the driver lacks the entry points: cudart's own calls. */
static inline CUresult rt_cudart_event_elapsed(float *ms, CUevent a, CUevent b) { return (CUresult)cudaEventElapsedTime(ms, a, b); }
static inline CUresult rt_cudart_stream_wait_event(CUstream s, CUevent e, unsigned f) { return (CUresult)cudaStreamWaitEvent(s, e, f); }

/* After the device count succeeded (the driver is loaded): what else the backend
 * needs. On failure names the missing piece in `what`. */
static inline rt_error rt_runtime_start(const char **what)
{
    static const struct {
        const char *name;
        size_t offset;
    } symbols[] = {
        {"cuCtxGetCurrent", offsetof(rt_driver_api, ctx_get_current)},
        {"cuCtxSetCurrent", offsetof(rt_driver_api, ctx_set_current)},
        {"cuCtxPushCurrent", offsetof(rt_driver_api, ctx_push_current)},
        {"cuCtxPopCurrent", offsetof(rt_driver_api, ctx_pop_current)},
        {"cuDeviceGet", offsetof(rt_driver_api, device_get)},
        {"cuDevicePrimaryCtxRetain", offsetof(rt_driver_api, primary_ctx_retain)},
        {"cuDevicePrimaryCtxRelease", offsetof(rt_driver_api, primary_ctx_release)},
        {"cuDevicePrimaryCtxGetState", offsetof(rt_driver_api, primary_ctx_get_state)},
    };
    static const struct {
        const char *name;
        size_t offset;
    } optional[] = {
        {"cuDeviceGetAttribute", offsetof(rt_driver_api, device_get_attribute)},
        {"cuStreamWaitValue64", offsetof(rt_driver_api, stream_wait_value64)},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        rt_error e = rt_driver_symbol(symbols[i].name, (void **)((char *)&rt_driver + symbols[i].offset), 12000);
        if (e != RT_SUCCESS) {
            *what = symbols[i].name;
            return e;
        }
    }
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
        void **fn = (void **)((char *)&rt_driver + optional[i].offset);
        if (rt_driver_symbol(optional[i].name, fn, 12000) != RT_SUCCESS)
            *fn = NULL;
    }
    if (rt_driver_symbol("cuEventElapsedTime", (void **)&rt_driver.event_elapsed_time, CUDART_VERSION) != RT_SUCCESS)
        rt_driver.event_elapsed_time = rt_cudart_event_elapsed;
    if (rt_driver_symbol("cuStreamWaitEvent", (void **)&rt_driver.stream_wait_event, CUDART_VERSION) != RT_SUCCESS)
        rt_driver.stream_wait_event = rt_cudart_stream_wait_event;
    return RT_SUCCESS;
}

/* Makes the device's primary context exist and keeps a reference to it. */
static inline rt_error rt_context_open(int device, rt_context *ctx)
{
    CUdevice dev;
    CUresult r = rt_driver.device_get(&dev, device);
    if (r == CUDA_SUCCESS)
        r = rt_driver.primary_ctx_retain(ctx, dev);
    return rt_from_driver(r);
}

static inline void rt_context_close(int device)
{
    CUdevice dev;
    if (rt_driver.device_get(&dev, device) == CUDA_SUCCESS)
        (void)rt_driver.primary_ctx_release(dev);
}

/* Whether the device's primary context exists (without creating it). */
static inline rt_error rt_context_active(int device, bool *active)
{
    CUdevice dev;
    unsigned flags;
    int is_active = 0;
    CUresult r = rt_driver.device_get(&dev, device);
    if (r == CUDA_SUCCESS)
        r = rt_driver.primary_ctx_get_state(dev, &flags, &is_active);
    *active = is_active != 0;
    return rt_from_driver(r);
}

/*
 * Guards: what a call needs of the calling thread's current context.
 *
 * cudart creates a context when a call that needs "the current device" runs on a
 * thread with no current context: the primary context of device 0, or of whatever
 * cudaSetDevice last named. PyTorch found cudaEventElapsedTime does so; record,
 * waits and stream calls are treated alike (see RT_*_NEEDS_CONTEXT below for the
 * calls that are not).
 */
typedef enum rt_need {
    /* Any current context will do. A thread with none adopts the device's, as
     * cudart's own lazy start would adopt device 0's: later calls on the thread
     * then cost nothing extra, and no context is created on a device not in use. */
    RT_NEED_CONTEXT,
    /* Any current context will do; a thread with none gets the device's for this
     * call only, and has none again afterwards (elapsed time, pool upkeep). */
    RT_NEED_CONTEXT_FOR_CALL,
    /* The call needs this device current (creating objects, the legacy stream);
     * the caller's current context, or its lack of one, comes back afterwards. */
    RT_NEED_DEVICE,
} rt_need;

typedef struct rt_guard {
    bool pushed;
} rt_guard;

/*
 * Which calls need no guard: no context is made for them on a thread that has none.
 * Seen on CUDA 13.0 (H200, driver 580): cudaEventQuery, cudaEventSynchronize and
 * cudaEventElapsedTime make none (older runtimes did in the last: PyTorch #122538,
 * so below 13.0 it and synchronize stay guarded; cudart is linked in statically, so
 * the version checked is the one that runs), nor do the driver's calls made
 * straight; cudaEventRecord, cudaStreamQuery and cudaStreamSynchronize make device
 * 0's primary context current (cudart's lazy start). The backend leaves records to
 * that lazy start once it holds device 0's context anyway: nothing new is created,
 * and the hot paths skip the guard.
 */
#define RT_LAZY_CONTEXT_DEVICE 0

#define RT_QUERY_NEEDS_CONTEXT 0
#define RT_SYNCHRONIZE_NEEDS_CONTEXT (CUDART_VERSION < 13000)
/* The step of the event timer: cudaEventElapsedTime: "a resolution of around 0.5 microseconds" (CUDA runtime API). */
#define RT_EVENT_RESOLUTION_NS 500
#define RT_ELAPSED_NEEDS_CONTEXT (CUDART_VERSION < 13000)

/* A guard that does nothing when left. */
static inline void rt_guard_init(rt_guard *g) { g->pushed = false; }

/* Once a thread has a current context it keeps one unless its owner pops it, so a
 * thread-local flag saves the driver call on the hot paths (a program that pops its
 * last context gets cudart's usual lazy one next, as a raw call would). Left to the
 * default TLS model: initial-exec would make the whole module's TLS, cudart's
 * included, static, and dlopen fails for lack of room. RT_DEFINE_STATE defines it. */
extern _Thread_local bool rt_thread_has_context __attribute__((visibility("hidden")));

/* The one definition of the mapping's state, in gpu_device.c. */
#define RT_DEFINE_STATE()                                                                                  \
    rt_driver_api rt_driver;                                                                               \
    _Thread_local bool rt_thread_has_context

static inline rt_error rt_guard_enter(rt_guard *g, rt_context ctx, rt_need need)
{
    g->pushed = false;
    if (need != RT_NEED_DEVICE && rt_thread_has_context)
        return RT_SUCCESS;
    CUcontext current = NULL;
    CUresult r = rt_driver.ctx_get_current(&current);
    if (r != CUDA_SUCCESS)
        return rt_from_driver(r);
    if (current != NULL)
        rt_thread_has_context = true;
    if (current == ctx || (current != NULL && need != RT_NEED_DEVICE))
        return RT_SUCCESS;
    if (need == RT_NEED_CONTEXT) {
        r = rt_driver.ctx_set_current(ctx);
        rt_thread_has_context = r == CUDA_SUCCESS;
        return rt_from_driver(r);
    }
    r = rt_driver.ctx_push_current(ctx);
    g->pushed = r == CUDA_SUCCESS;
    return rt_from_driver(r);
}

static inline void rt_guard_leave(rt_guard *g)
{
    if (g->pushed) {
        CUcontext popped;
        (void)rt_driver.ctx_pop_current(&popped);
    }
}

/* ---------------------------------------------------------- host functions
 *
 * What gpu_host_fn.c holds a stream with while a host function runs on its own
 * thread: a stream memory operation (cuStreamWaitValue64, a driver call reached
 * through the entry-point query like the context calls above) on a 64-bit counter
 * in page-locked host memory mapped into the device (cudaHostAlloc with
 * cudaHostAllocMapped: managed memory is refused by memory operations). The CPU
 * releases the stream with a store; no runtime thread is blocked meanwhile.
 *
 * CUDA's comparison is cyclic: the wait passes once (int64_t)(*addr - value) >= 0.
 * So the counter is raised, never set to "everything": UINT64_MAX would not pass a
 * wait for 5. The shared code keeps every value below 2^63 (HIP's comparison is a
 * plain one) and releases by adding 2^62.
 */
typedef CUdeviceptr rt_device_ptr;

/* `bytes` further into the same mapping. */
static inline rt_device_ptr rt_device_ptr_offset(rt_device_ptr p, size_t bytes) { return p + bytes; }

/* The calls' names, for messages (they are not cudart's). */
#define RT_HOST_ALLOC_CALL "cudaHostAlloc"
#define RT_WAIT_VALUE_CALL "cuStreamWaitValue64"

/* Holds tpevent keeps queued on one stream (rule 17's window; gpu_hold.c). Measured on
 * the H200 (CUDA 13): a stream's queue takes about 1,020 pending operations, and the
 * 1,021st cuStreamWaitValue64 behind unreached records blocked its caller for 977 ms.
 * A quarter of it, so that the user's own launches and tpevent's host functions
 * (HOST_DEVICE_WINDOW) keep the rest. */
#define RT_HOLD_WINDOW 256

/* Both need the device current: the memory is mapped for its context. */
static inline rt_error rt_host_alloc_mapped(void **host, size_t size)
{
    return cudaHostAlloc(host, size, cudaHostAllocMapped);
}
static inline rt_error rt_host_device_pointer(rt_device_ptr *device, void *host)
{
    void *pointer = NULL;
    rt_error e = cudaHostGetDevicePointer(&pointer, host, 0);
    if (e == RT_SUCCESS)
        *device = (CUdeviceptr)(uintptr_t)pointer;
    return e;
}
static inline rt_error rt_host_free(void *host) { return cudaFreeHost(host); }

/* tp_measure's cold calls (gpu_flush.c): the last-level cache's size, a device buffer
 * and a fill of it queued on a stream. The buffer needs the device current. */
#define RT_FLUSH_CALLS "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize), cudaMalloc"
#define RT_MEMSET_CALL "cudaMemsetAsync"
static inline rt_error rt_device_cache_bytes(int device, int *bytes)
{
    return cudaDeviceGetAttribute(bytes, cudaDevAttrL2CacheSize, device);
}
static inline rt_error rt_device_alloc(void **memory, size_t size) { return cudaMalloc(memory, size); }
static inline rt_error rt_memset_async(void *memory, int value, size_t size, rt_stream s)
{
    return cudaMemsetAsync(memory, value, size, s);
}

/* tp_measure's floor (gpu_empty.c): an empty kernel, PTX the driver compiles, loaded now (a lazy load at the first
 * launch may wait for every stream of the context: under a hold, for the hold; the CUDA guide's lazy loading). */
#define RT_EMPTY_WORK_MAKE_CALLS "cudaLibraryLoadData, cudaLibraryGetKernel, cudaFuncGetAttributes"
#define RT_EMPTY_WORK_LAUNCH_CALL "cudaLaunchKernel"
typedef cudaKernel_t rt_empty_work;
static inline rt_error rt_empty_work_make(rt_empty_work *w) { cudaLibrary_t l; rt_error e = cudaLibraryLoadData(&l, ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry tpevent_empty() { ret; }\n", NULL, NULL, 0, NULL, NULL, 0); if (e == RT_SUCCESS) e = cudaLibraryGetKernel(w, l, "tpevent_empty"); struct cudaFuncAttributes a; return e != RT_SUCCESS ? e : cudaFuncGetAttributes(&a, (const void *)*w); }
static inline rt_error rt_empty_work_launch(rt_empty_work w, rt_stream s) { return cudaLaunchKernel((const void *)w, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, s); }

/* Whether streams of the device can wait on a 64-bit value in mapped host memory
 * (the H200 can, CUDA 13); if not, *why says what is missing. */
static inline bool rt_stream_wait_value_supported(int device, const char **why)
{
    CUdevice dev;
    int value = 0;
    if (!rt_driver.stream_wait_value64 || !rt_driver.device_get_attribute) {
        *why = "the driver has no cuStreamWaitValue64";
        return false;
    }
    if (rt_driver.device_get(&dev, device) != CUDA_SUCCESS ||
        rt_driver.device_get_attribute(&value, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev) !=
            CUDA_SUCCESS ||
        value == 0) {
        *why = "CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS is 0";
        return false;
    }
    if (rt_driver.device_get_attribute(&value, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev) != CUDA_SUCCESS ||
        value == 0) {
        *why = "the device cannot map host memory";
        return false;
    }
    return true;
}

/* Holds later work on the stream until the counter at `counter` reaches `value`
 * (cyclically, see above). */
static inline rt_error rt_stream_wait_value64(rt_stream s, rt_device_ptr counter, uint64_t value)
{
    return rt_from_driver(rt_driver.stream_wait_value64((CUstream)s, counter, value, CU_STREAM_WAIT_VALUE_GEQ));
}

/* Capture. Whether someone (torch.cuda.graph on a wrapped stream) captures the
 * stream, legal to ask during any capture; an error (the legacy stream while a
 * blocking stream captures) counts as capturing, and the runtime's own call then
 * says what is wrong. Needs the stream's device current for the default handles. */
static inline bool rt_stream_capturing(rt_stream s)
{
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(s, &status) != RT_SUCCESS || status != cudaStreamCaptureStatusNone;
}
/* The id of the capture the stream is in, unique in the process; 0: none. */
static inline uint64_t rt_stream_capture_id(rt_stream s)
{
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    rt_error e = cudaStreamGetCaptureInfo(s, &status, &id, NULL, NULL, NULL, NULL);
    return e == RT_SUCCESS && status == cudaStreamCaptureStatusActive ? id : 0;
}

/* The calling thread's potentially unsafe calls (event queries, synchronizes) no
 * longer invalidate another thread's capture in global mode: for tpevent's own
 * threads, which never capture. */
static inline void rt_thread_relax_capture(void)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

/* Rule 16: tpevent's own captures (gpu_graph.c), in relaxed mode: a global one is
 * invalidated by an unsafe call of any thread not relaxed (a data loader's cudaMalloc)
 * that tpevent cannot keep off; relaxed, the capture may also end on another thread. */
typedef cudaGraph_t rt_graph;
typedef cudaGraphExec_t rt_graph_exec;
typedef enum cudaStreamCaptureMode rt_capture_mode;

static inline rt_error rt_stream_begin_capture(rt_stream s) { return cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed); }
static inline rt_error rt_stream_end_capture(rt_stream s, rt_graph *g) { return cudaStreamEndCapture(s, g); }
static inline rt_error rt_graph_instantiate(rt_graph_exec *x, rt_graph g) { return cudaGraphInstantiateWithFlags(x, g, 0); }
static inline rt_error rt_graph_launch(rt_graph_exec x, rt_stream s) { return cudaGraphLaunch(x, s); }
/* "If the executable graph is in-flight, it will not be terminated, but rather
 * freed asynchronously on completion" (rule 9). */
static inline rt_error rt_graph_exec_destroy(rt_graph_exec x) { return cudaGraphExecDestroy(x); }
static inline rt_error rt_graph_destroy(rt_graph g) { return cudaGraphDestroy(g); }
/* Only valid while the stream is capturing: made again at each launch. */
static inline rt_error rt_event_record_external(rt_event e, rt_stream s)
{
    return cudaEventRecordWithFlags(e, s, cudaEventRecordExternal);
}
static inline rt_error rt_stream_wait_event_external(rt_stream s, rt_event e)
{
    return cudaStreamWaitEvent(s, e, cudaEventWaitExternal);
}
/* The calling thread in relaxed mode for a few calls (pool queries) during a
 * capture, then back to what it was, as PyTorch's CUDAStreamCaptureModeGuard. */
static inline rt_capture_mode rt_thread_capture_relax_save(void)
{
    rt_capture_mode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    return mode;
}
static inline void rt_thread_capture_restore(rt_capture_mode mode) { (void)cudaThreadExchangeStreamCaptureMode(&mode); }

/* ------------------------------------------------------- profiling tools */

/* gpu_tool.c's alone (GPU_TOOL_MAPPING): NVTX v3, header-only. A tool attaches by
 * NVTX_INJECTION64_PATH (Nsight Systems sets it for the program it runs); without one
 * tpevent makes no NVTX call (core/backend.h, tool_attached). */
#ifdef GPU_TOOL_MAPPING
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <stdlib.h>

static inline bool rt_tool_attached(void)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");
    return path && *path;
}
static inline void rt_tool_range_push(const char *name) { (void)nvtxRangePushA(name); }
static inline void rt_tool_range_pop(void) { (void)nvtxRangePop(); }
static inline void rt_tool_name_stream(rt_stream s, const char *name) { nvtxNameCudaStreamA(s, name); }
#endif

#include "backends/gpu/runtime_cuda_sm_clock.h" /* tp_measure's SM clock: gpu_sm_clock.c's alone */
#endif /* TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_H */
