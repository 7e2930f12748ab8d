/*
 * The GPU backend: one implementation (the files of backends/gpu, see
 * gpu_internal.h) compiled once per runtime, with TPEVENT_GPU_CUDA or
 * TPEVENT_GPU_HIP selecting the mapping (runtime_cuda.h, runtime_hip.h). Each build
 * has its own entry (core/builtin_backends.h), not exported, so that a static build
 * can link both into one library; a module adds gpu_module_entry.c, which exports
 * the loader's entry symbol and forwards to it.
 */
#ifndef TPEVENT_BACKENDS_GPU_GPU_BACKEND_H
#define TPEVENT_BACKENDS_GPU_GPU_BACKEND_H

#include "core/builtin_backends.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The entry of the GPU backend over a simulated runtime, for tests (tests/gpu_fake);
 * the real runtimes' are core/builtin_backends.h's. */
tp_status tp_backend_entry_fake(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);

/* The entry of the runtime this file is compiled for. */
#if defined(TPEVENT_GPU_CUDA)
#define GPU_ENTRY tp_backend_entry_cuda
#elif defined(TPEVENT_GPU_HIP)
#define GPU_ENTRY tp_backend_entry_hip
#elif defined(TPEVENT_GPU_FAKE)
#define GPU_ENTRY tp_backend_entry_fake
#endif

#ifdef TPEVENT_GPU_MODULE
/* TP_BACKEND_ENTRY_SYMBOL: what the core's loader looks up in the module. */
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size);
#endif

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_BACKENDS_GPU_GPU_BACKEND_H */
