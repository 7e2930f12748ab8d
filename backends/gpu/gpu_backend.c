/*
 * The GPU backend's tables (see gpu_internal.h for how its files fit). Events come
 * in two kinds, each with a table of its own: plain ones (gpu_event.c) and
 * interprocess ones (gpu_ipc_event.c, TP_EVENT_INTERPROCESS, which an event keeps
 * for life). The registry knows `gpu_table`; interprocess events point at
 * `gpu_ipc_table`, the same but for the entries that take an event, so a call on
 * either kind is one indirect call, and the plain event's code has no IPC branch.
 * Only creation picks the kind. What each slot of the tables calls: gpu_entries.h.
 */
#include "backends/gpu/gpu_internal.h"
#include "backends/gpu/gpu_graph.h"
#include "backends/gpu/gpu_entries.h"

#include <stdio.h>

static const tp_backend gpu_table, gpu_ipc_table, gpu_wrapped_table;

static tp_status init(const tp_host *host, char *reason, size_t reason_size)
{
    return gpu_init(&gpu_table, &gpu_ipc_table, host, reason, reason_size);
}

static tp_status event_create(int device, unsigned flags, tp_event **out)
{
    if (TP_UNLIKELY(flags & TP_EVENT_INTERPROCESS))
        return gpu_ipc_event_create(device, flags, out);
    return gpu_plain_event_create(device, flags, out);
}

/* A host function (gpu_host_fn.c) holds its stream until it returns: a
 * device-wide synchronize from one would wait for it forever. */
static tp_status device_synchronize(int device)
{
    if (TP_UNLIKELY(gpu_host_fn_on_device(device)))
        return gpu.host->fail(TP_ERR_INVALID_ARGUMENT,
                              "tp_device_synchronize: called from a host function on a stream of %s:%d, which "
                              "would wait for itself forever",
                              RT_BACKEND_NAME, device);
    return gpu_device_synchronize(device);
}

/* Rule 15, for the core's timed waits: the untimed one asks the same. */
static bool stream_waits_for_itself(tp_stream *stream)
{
    return gpu_host_fn_would_wait_for_itself(gpu_as_stream(stream));
}

/* tp_event_from_native: wrappers point at gpu_wrapped_table. */
static tp_status event_from_native(int device, void *native, tp_event **out)
{
    return gpu_wrapped_event_create(device, native, &gpu_wrapped_table, out);
}

/* The list of entries (gpu_entries.h) made into the guards and the tables. A
 * guard's parameters and arguments, from its parameter types (one to four). */
#define GPU_PICK(_1, _2, _3, _4, picked, ...) picked
#define GPU_PARAMS(...) GPU_PICK(__VA_ARGS__, GPU_PARAMS4, GPU_PARAMS3, GPU_PARAMS2, GPU_PARAMS1, )(__VA_ARGS__)
#define GPU_PARAMS1(t1) (t1 a1)
#define GPU_PARAMS2(t1, t2) (t1 a1, t2 a2)
#define GPU_PARAMS3(t1, t2, t3) (t1 a1, t2 a2, t3 a3)
#define GPU_PARAMS4(t1, t2, t3, t4) (t1 a1, t2 a2, t3 a3, t4 a4)
#define GPU_ARGS(...) GPU_PICK(__VA_ARGS__, (a1, a2, a3, a4), (a1, a2, a3), (a1, a2), (a1), )

/*
 * fork() (gpu_device.c): in a child of the process that initialized the driver,
 * every entry that can reach the runtime fails at once. One relaxed load and a
 * branch in front of the entry, then a tail call. An entry a capture changes
 * (rule 16) tests for a capture next, and takes gpu_graph.c's path only if one may
 * be involved.
 */
#define GPU_FORK_GUARD(table, slot, operation, function, ...)                              \
    static tp_status guarded_##table##_##slot GPU_PARAMS(__VA_ARGS__)                      \
    {                                                                                      \
        if (TP_UNLIKELY(atomic_load_explicit(&gpu_in_forked_child, memory_order_relaxed))) \
            return gpu_forked_fail(#operation);                                            \
        return function GPU_ARGS(__VA_ARGS__);                                             \
    }
#define GPU_CAPTURE_GUARD(table, slot, operation, function, test, capture_path, ...)       \
    static tp_status guarded_##table##_##slot GPU_PARAMS(__VA_ARGS__)                      \
    {                                                                                      \
        if (TP_UNLIKELY(atomic_load_explicit(&gpu_in_forked_child, memory_order_relaxed))) \
            return gpu_forked_fail(#operation);                                            \
        if (TP_UNLIKELY(test))                                                             \
            return capture_path GPU_ARGS(__VA_ARGS__);                                     \
        return function GPU_ARGS(__VA_ARGS__);                                             \
    }
#define GPU_NO_GUARD(slot, value)
#define GPU_SHARED_GUARD(slot, ...) GPU_FORK_GUARD(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_GUARD(slot, ...) GPU_FORK_GUARD(plain, slot, __VA_ARGS__)
#define GPU_IPC_GUARD(slot, ...) GPU_FORK_GUARD(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_GUARD(slot, ...) GPU_FORK_GUARD(wrapped, slot, __VA_ARGS__)
#define GPU_SHARED_CAPTURE(slot, ...) GPU_CAPTURE_GUARD(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_CAPTURE(slot, ...) GPU_CAPTURE_GUARD(plain, slot, __VA_ARGS__)
#define GPU_IPC_CAPTURE(slot, ...) GPU_CAPTURE_GUARD(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_CAPTURE(slot, ...) GPU_CAPTURE_GUARD(wrapped, slot, __VA_ARGS__)

GPU_SHARED_ENTRIES(GPU_SHARED_GUARD, GPU_SHARED_CAPTURE, GPU_NO_GUARD)
GPU_PLAIN_EVENT_ENTRIES(GPU_PLAIN_GUARD, GPU_PLAIN_CAPTURE, GPU_NO_GUARD)
GPU_IPC_EVENT_ENTRIES(GPU_IPC_GUARD, GPU_IPC_CAPTURE, GPU_NO_GUARD)
GPU_WRAPPED_EVENT_ENTRIES(GPU_WRAPPED_GUARD, GPU_WRAPPED_CAPTURE, GPU_NO_GUARD)

#define GPU_SLOT(slot, value) .slot = value,
#define GPU_SHARED_SLOT(slot, ...) .slot = guarded_shared_##slot,
#define GPU_PLAIN_SLOT(slot, ...) .slot = guarded_plain_##slot,
#define GPU_IPC_SLOT(slot, ...) .slot = guarded_ipc_##slot,
#define GPU_WRAPPED_SLOT(slot, ...) .slot = guarded_wrapped_##slot,

/* clang-format off */
static const tp_backend gpu_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_PLAIN_EVENT_ENTRIES(GPU_PLAIN_SLOT, GPU_PLAIN_SLOT, GPU_SLOT)
};

static const tp_backend gpu_ipc_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_IPC_EVENT_ENTRIES(GPU_IPC_SLOT, GPU_IPC_SLOT, GPU_SLOT)
};

static const tp_backend gpu_wrapped_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_WRAPPED_EVENT_ENTRIES(GPU_WRAPPED_SLOT, GPU_WRAPPED_SLOT, GPU_SLOT)
};
/* clang-format on */

tp_status GPU_ENTRY(uint32_t core_abi, const tp_backend **out, char *reason, size_t reason_size)
{
    if (core_abi != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "the %s backend speaks backend ABI version %u, the core %u", RT_BACKEND_NAME,
                 (unsigned)TP_BACKEND_ABI_VERSION, (unsigned)core_abi);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    *out = &gpu_table;
    return TP_OK;
}
