/* See native_stream.h. */
#include "native_stream.h"
#include "native_runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------- CUDA's driver API */

#define CU_EVENT_DISABLE_TIMING 0x2

typedef int (*cu_stream_get_ctx_fn)(void *stream, void **context);
typedef int (*cu_ctx_push_fn)(void *context);
typedef int (*cu_ctx_pop_fn)(void **context);
typedef int (*cu_event_create_fn)(void **event, unsigned flags);
typedef int (*cu_event_record_fn)(void *event, void *stream);
typedef int (*cu_event_fn)(void *event);

static struct {
    cu_stream_get_ctx_fn stream_get_ctx;
    cu_ctx_push_fn ctx_push;
    cu_ctx_pop_fn ctx_pop;
    cu_event_create_fn event_create;
    cu_event_record_fn event_record;
    cu_event_fn event_synchronize, event_destroy;
} cu;

/* In the stream's own context, which the calling thread need not have current. */
static int cu_record_and_wait(void *stream)
{
    void *context = NULL;
    int e = cu.stream_get_ctx(stream, &context);
    if (e != 0)
        return e;
    e = cu.ctx_push(context);
    if (e != 0)
        return e;
    void *event = NULL;
    e = cu.event_create(&event, CU_EVENT_DISABLE_TIMING);
    if (e == 0) {
        e = cu.event_record(event, stream);
        if (e == 0)
            e = cu.event_synchronize(event);
        (void)cu.event_destroy(event);
    }
    (void)cu.ctx_pop(&context);
    return e;
}

static int cu_live_streams(int device)
{
    (void)device;
    return -1; /* the driver does not say */
}

static bool find_cuda_driver(native_stream_runtime *out)
{
    void *driver = cuda_driver_open();
    if (!driver)
        return false;
    cu.stream_get_ctx = (cu_stream_get_ctx_fn)dlsym(driver, "cuStreamGetCtx");
    cu.ctx_push = (cu_ctx_push_fn)dlsym(driver, "cuCtxPushCurrent_v2");
    cu.ctx_pop = (cu_ctx_pop_fn)dlsym(driver, "cuCtxPopCurrent_v2");
    cu.event_create = (cu_event_create_fn)dlsym(driver, "cuEventCreate");
    cu.event_record = (cu_event_record_fn)dlsym(driver, "cuEventRecord");
    cu.event_synchronize = (cu_event_fn)dlsym(driver, "cuEventSynchronize");
    cu.event_destroy = (cu_event_fn)dlsym(driver, "cuEventDestroy_v2");
    if (!cu.stream_get_ctx || !cu.ctx_push || !cu.ctx_pop || !cu.event_create || !cu.event_record ||
        !cu.event_synchronize || !cu.event_destroy) {
        printf("skipped: the CUDA driver lacks the stream and event calls this test needs\n");
        return false;
    }
    *out = (native_stream_runtime){"CUDA driver", {cu_record_and_wait, cu_live_streams}};
    return true;
}

/* ------------------------------------------------------------ OpenCL's loader */

typedef int (*cl_enqueue_marker_fn)(void *queue, unsigned count, const void *wait_list, void **event);
typedef int (*cl_events_fn)(unsigned count, void *const *events);
typedef int (*cl_event_fn)(void *event);

static struct {
    cl_enqueue_marker_fn enqueue_marker;
    cl_events_fn wait_for_events;
    cl_event_fn release_event;
} cl;

static int cl_record_and_wait(void *queue)
{
    void *marker = NULL;
    int e = cl.enqueue_marker(queue, 0, NULL, &marker);
    if (e == 0) {
        e = cl.wait_for_events(1, &marker);
        (void)cl.release_event(marker);
    }
    return e;
}

static int cl_live_queues(int device)
{
    (void)device;
    return -1; /* OpenCL does not say */
}

/* The ICD loader the OpenCL module loaded (RTLD_NOLOAD: the same copy). */
static bool find_opencl_loader(native_stream_runtime *out)
{
    void *loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!loader) {
        printf("skipped: libOpenCL.so.1 is not loaded: %s\n", dlerror());
        return false;
    }
    cl.enqueue_marker = (cl_enqueue_marker_fn)dlsym(loader, "clEnqueueMarkerWithWaitList");
    cl.wait_for_events = (cl_events_fn)dlsym(loader, "clWaitForEvents");
    cl.release_event = (cl_event_fn)dlsym(loader, "clReleaseEvent");
    if (!cl.enqueue_marker || !cl.wait_for_events || !cl.release_event) {
        printf("skipped: the OpenCL loader lacks the calls this test needs\n");
        return false;
    }
    *out = (native_stream_runtime){"OpenCL ICD loader", {cl_record_and_wait, cl_live_queues}};
    return true;
}

/* ------------------------------------------------------------------- entry */

bool native_stream_find(const char *device, native_stream_runtime *out)
{
    if (strncmp(device, "opencl", 6) == 0)
        return find_opencl_loader(out);
    if (strncmp(device, "cuda", 4) != 0) {
        printf(
            "skipped: %s: rule 19 is about the native streams of CUDA (the fake GPU's too) and OpenCL in this test; "
            "the "
            "CPU's native handle is the tp stream itself, and HIP's is not looked at here\n",
            device);
        return false;
    }
    const native_stream_calls *fake = fake_gpu_symbol(NATIVE_STREAM_FAKE_SYMBOL);
    if (fake) {
        *out = (native_stream_runtime){"fake GPU", *fake};
        return true;
    }
    return find_cuda_driver(out);
}
