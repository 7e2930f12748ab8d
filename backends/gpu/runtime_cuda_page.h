/*
 * CUDA's side of events handed over a Unix socket (gpu_ipc_page.c; its write is
 * also the device's "reached" of gpu_host_fn_capture.c's nodes), beside its
 * mapping (runtime_cuda.h, which is at the tree's 600 lines): a page of a memfd that
 * other processes map too, registered as mapped host memory (portable: every
 * context sees it), and a record as a write of a 64-bit value after the stream's
 * earlier work (the default flags fence it, as __threadfence_system would, scoped to
 * the stream). HIP's and the fake runtime's are in their mappings.
 */
#ifndef TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_PAGE_H
#define TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_PAGE_H

#include "backends/gpu/runtime_cuda.h"

#include <stdatomic.h>

#define RT_HOST_REGISTER_CALL "cudaHostRegister"
#define RT_WRITE_VALUE_CALL "cuStreamWriteValue64"

static inline rt_error rt_host_register_mapped(void *host, size_t size)
{
    return cudaHostRegister(host, size, cudaHostRegisterMapped | cudaHostRegisterPortable);
}

static inline rt_error rt_host_unregister(void *host)
{
    return cudaHostUnregister(host);
}

typedef CUresult (*rt_write_value64_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned);

/* The driver's entry point, looked up at the first write (one copy in each file
 * that includes this header: gpu_ipc_page.c, gpu_host_fn_capture.c); NULL where
 * the driver lacks it. */
static inline rt_write_value64_fn rt_write_value64_entry(void)
{
    static _Atomic(rt_write_value64_fn) entry;
    static atomic_bool looked;
    if (!atomic_load_explicit(&looked, memory_order_acquire)) {
        void *fn = NULL;
        if (rt_driver_symbol("cuStreamWriteValue64", &fn, 12000) == RT_SUCCESS)
            atomic_store_explicit(&entry, (rt_write_value64_fn)fn, memory_order_relaxed);
        atomic_store_explicit(&looked, true, memory_order_release);
    }
    return atomic_load_explicit(&entry, memory_order_relaxed);
}

static inline rt_error rt_stream_write_value64(rt_stream s, rt_device_ptr target, uint64_t value)
{
    rt_write_value64_fn write = rt_write_value64_entry();
    if (!write)
        return cudaErrorNotSupported;
    return rt_from_driver(write((CUstream)s, target, value, CU_STREAM_WRITE_VALUE_DEFAULT));
}

#endif /* TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_PAGE_H */
