/*
 * The one symbol the Vulkan backend module exports (TP_BACKEND_ENTRY_SYMBOL).
 * Compiled into the module only; a static build calls tp_backend_entry_vulkan.
 */
#include "backends/vulkan/vk_backend.h"

TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size)
{
    return tp_backend_entry_vulkan(core_abi, out, reason, reason_size);
}
