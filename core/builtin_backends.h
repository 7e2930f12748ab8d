/*
 * The backends linked into the core library, by their entry functions: the one
 * place where the core names a backend. core/registry.c's list of backends takes
 * its built-in entries from here and includes nothing of any backend.
 *
 * Each entry has the shape of tp_backend_entry_fn (core/backend.h): `core_abi` is the
 * ABI the core speaks; a backend that cannot speak it returns
 * TP_ERR_BACKEND_UNAVAILABLE with a reason.
 *
 *   tp_backend_entry_cpu   always built in (backends/cpu/cpu_backend.c)
 *   tp_backend_entry_cuda  built in by a static build only (TPEVENT_BUILTIN_CUDA);
 *   tp_backend_entry_hip   otherwise the GPU backends are modules, loaded through
 *                          TP_BACKEND_ENTRY_SYMBOL (backends/gpu/gpu_backend.c)
 *   tp_backend_entry_opencl  likewise (TPEVENT_BUILTIN_OPENCL, backends/opencl/ocl_backend.c)
 *
 * All four are declared whatever the build, so that a backend's own sources can
 * include this header for the declaration of the entry they define. What is built
 * in is said by TP_BUILTIN_ENTRY_*: the entry, or NULL for a backend that the core
 * loads as a module. cmake/TpeventStatic.cmake defines TPEVENT_BUILTIN_CUDA,
 * TPEVENT_BUILTIN_HIP and TPEVENT_BUILTIN_OPENCL for the static core.
 */
#ifndef TPEVENT_CORE_BUILTIN_BACKENDS_H
#define TPEVENT_CORE_BUILTIN_BACKENDS_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

tp_status tp_backend_entry_cpu(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);
tp_status tp_backend_entry_cuda(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);
tp_status tp_backend_entry_hip(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);
tp_status tp_backend_entry_opencl(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size);

#define TP_BUILTIN_ENTRY_CPU tp_backend_entry_cpu
#ifdef TPEVENT_BUILTIN_CUDA
#define TP_BUILTIN_ENTRY_CUDA tp_backend_entry_cuda
#else
#define TP_BUILTIN_ENTRY_CUDA NULL
#endif
#ifdef TPEVENT_BUILTIN_HIP
#define TP_BUILTIN_ENTRY_HIP tp_backend_entry_hip
#else
#define TP_BUILTIN_ENTRY_HIP NULL
#endif
#ifdef TPEVENT_BUILTIN_OPENCL
#define TP_BUILTIN_ENTRY_OPENCL tp_backend_entry_opencl
#else
#define TP_BUILTIN_ENTRY_OPENCL NULL
#endif

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_CORE_BUILTIN_BACKENDS_H */
