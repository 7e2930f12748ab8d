/*
 * The one symbol a GPU backend module exports (TP_BACKEND_ENTRY_SYMBOL). Compiled
 * into the module only; a static build calls tp_backend_entry_cuda/_hip directly.
 */
#include "backends/gpu/gpu_backend.h"

#ifndef GPU_ENTRY
#error "define TPEVENT_GPU_CUDA or TPEVENT_GPU_HIP"
#endif

tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    return GPU_ENTRY(core_abi, out, reason, reason_size);
}
