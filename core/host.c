/*
 * The services the core hands every backend at init (tp_host, core/backend.h):
 * where a backend's entry calls back into the core.
 */
#include "core/internal.h"

const tp_host tp_core_host = {
    .abi_version = TP_BACKEND_ABI_VERSION,
    .size = sizeof(tp_host),
    .fail = tp_fail,
    .elapsed_sequenced = tp_elapsed_sequenced,
};
