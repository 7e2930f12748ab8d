/*
 * CUDA's side of waits on other runtimes' timeline semaphores (gpu_timeline_wait.c;
 * issue 56), beside its mapping (runtime_cuda.h, which is at the tree's 600 lines):
 * an opaque fd of a Vulkan timeline semaphore imported once, and waited on in a
 * stream's order for a value. HIP and the fake runtime have no such mapping: the
 * file says so where it is built for them.
 */
#ifndef TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_SEMAPHORE_H
#define TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_SEMAPHORE_H

#include "backends/gpu/runtime_cuda.h"

#define RT_HAS_EXTERNAL_TIMELINES 1
#define RT_IMPORT_SEMAPHORE_CALL "cudaImportExternalSemaphore"
#define RT_WAIT_SEMAPHORE_CALL "cudaWaitExternalSemaphoresAsync"

typedef cudaExternalSemaphore_t rt_external_semaphore;

/* Whether the device can import timeline semaphores (the driver's answer). */
static inline rt_error rt_timeline_interop(int device, bool *supported)
{
    int value = 0;
    rt_error e = cudaDeviceGetAttribute(&value, cudaDevAttrTimelineSemaphoreInteropSupported, device);
    *supported = e == RT_SUCCESS && value != 0;
    return e;
}

/* Imports the timeline semaphore behind `fd`, which the runtime takes on success. */
static inline rt_error rt_import_timeline_fd(int fd, rt_external_semaphore *out)
{
    struct cudaExternalSemaphoreHandleDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    desc.handle.fd = fd;
    return cudaImportExternalSemaphore(out, &desc);
}

/* Later work of the stream waits until the semaphore's counter is at `value`. */
static inline rt_error rt_wait_timeline(rt_external_semaphore semaphore, uint64_t value, rt_stream stream)
{
    struct cudaExternalSemaphoreWaitParams params;
    memset(&params, 0, sizeof params);
    params.params.fence.value = value;
    return cudaWaitExternalSemaphoresAsync(&semaphore, &params, 1, stream);
}

#endif /* TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_SEMAPHORE_H */
