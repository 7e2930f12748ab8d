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
#include "backends/gpu/gpu_event_direct.h"
#include "backends/gpu/gpu_graph.h"
#include "backends/gpu/gpu_entries.h"
#include "backends/gpu/gpu_tool.h"

#include <stdio.h>

static tp_backend gpu_table, gpu_ipc_table, gpu_wrapped_table;
static void use_forked_tables(void);

/* Once the driver is initialized, a child created by fork() must not use it
 * (gpu_device.c). */
static tp_status init(const tp_host *host, char *reason, size_t reason_size)
{
    tp_status status = gpu_init(&gpu_table, &gpu_ipc_table, host, reason, reason_size);
    if (status == TP_OK)
        (void)pthread_atfork(NULL, NULL, use_forked_tables);
    return status;
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

/* The list of entries (gpu_entries.h) made into the capture layer and the tables.
 * A generated function's parameters and arguments, from its parameter types (one
 * to four). */
#define GPU_PICK(_1, _2, _3, _4, picked, ...) picked
#define GPU_PARAMS(...) GPU_PICK(__VA_ARGS__, GPU_PARAMS4, GPU_PARAMS3, GPU_PARAMS2, GPU_PARAMS1, )(__VA_ARGS__)
#define GPU_PARAMS1(t1) (t1 a1)
#define GPU_PARAMS2(t1, t2) (t1 a1, t2 a2)
#define GPU_PARAMS3(t1, t2, t3) (t1 a1, t2 a2, t3 a3)
#define GPU_PARAMS4(t1, t2, t3, t4) (t1 a1, t2 a2, t3 a3, t4 a4)
#define GPU_ARGS(...) GPU_PICK(__VA_ARGS__, (a1, a2, a3, a4), (a1, a2, a3), (a1, a2), (a1), )
#define GPU_UNUSED(...) GPU_PICK(__VA_ARGS__, GPU_UNUSED4, GPU_UNUSED3, GPU_UNUSED2, GPU_UNUSED1, )
#define GPU_UNUSED1 (void)a1
#define GPU_UNUSED2 GPU_UNUSED1, (void)a2
#define GPU_UNUSED3 GPU_UNUSED2, (void)a3
#define GPU_UNUSED4 GPU_UNUSED3, (void)a4

/*
 * The capture layer: an entry a capture changes (rule 16) tests for a capture, and
 * takes gpu_graph.c's path only if one may be involved; a hot one first tests for
 * its common case, which no capture is part of, and goes straight to it.
 */
#define GPU_CAPTURE_LAYER(table, slot, operation, function, test, capture_path, ...) \
    static tp_status captured_##table##_##slot GPU_PARAMS(__VA_ARGS__)               \
    {                                                                                \
        if (TP_UNLIKELY(test))                                                       \
            return capture_path GPU_ARGS(__VA_ARGS__);                               \
        return function GPU_ARGS(__VA_ARGS__);                                       \
    }
#define GPU_DIRECT_LAYER(table, slot, operation, function, test, capture_path, direct_test, direct, ...) \
    static tp_status captured_##table##_##slot GPU_PARAMS(__VA_ARGS__)                                   \
    {                                                                                                    \
        if (TP_LIKELY(direct_test))                                                                      \
            return direct GPU_ARGS(__VA_ARGS__);                                                         \
        if (TP_UNLIKELY(test))                                                                           \
            return capture_path GPU_ARGS(__VA_ARGS__);                                                   \
        return function GPU_ARGS(__VA_ARGS__);                                                           \
    }
#define GPU_NO_LAYER(slot, ...)
#define GPU_SHARED_CAPTURE(slot, ...) GPU_CAPTURE_LAYER(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_CAPTURE(slot, ...) GPU_CAPTURE_LAYER(plain, slot, __VA_ARGS__)
#define GPU_IPC_CAPTURE(slot, ...) GPU_CAPTURE_LAYER(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_CAPTURE(slot, ...) GPU_CAPTURE_LAYER(wrapped, slot, __VA_ARGS__)
#define GPU_SHARED_DIRECT(slot, ...) GPU_DIRECT_LAYER(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_DIRECT(slot, ...) GPU_DIRECT_LAYER(plain, slot, __VA_ARGS__)
#define GPU_IPC_DIRECT(slot, ...) GPU_DIRECT_LAYER(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_DIRECT(slot, ...) GPU_DIRECT_LAYER(wrapped, slot, __VA_ARGS__)

GPU_SHARED_ENTRIES(GPU_NO_LAYER, GPU_SHARED_CAPTURE, GPU_SHARED_DIRECT, GPU_NO_LAYER)
GPU_PLAIN_EVENT_ENTRIES(GPU_NO_LAYER, GPU_PLAIN_CAPTURE, GPU_PLAIN_DIRECT, GPU_NO_LAYER)
GPU_IPC_EVENT_ENTRIES(GPU_NO_LAYER, GPU_IPC_CAPTURE, GPU_IPC_DIRECT, GPU_NO_LAYER)
GPU_WRAPPED_EVENT_ENTRIES(GPU_NO_LAYER, GPU_WRAPPED_CAPTURE, GPU_WRAPPED_DIRECT, GPU_NO_LAYER)

/* fork() (gpu_device.c): what each entry that can reach the runtime answers in a
 * child of the process that initialized the driver. */
#define GPU_FORKED(table, slot, operation, function, ...)            \
    static tp_status forked_##table##_##slot GPU_PARAMS(__VA_ARGS__) \
    {                                                                \
        GPU_UNUSED(__VA_ARGS__);                                     \
        return gpu_forked_fail(#operation);                          \
    }
#define GPU_FORKED_CAPTURED(table, slot, operation, function, test, capture_path, ...) \
    GPU_FORKED(table, slot, operation, function, __VA_ARGS__)
#define GPU_FORKED_DIRECT(table, slot, operation, function, test, capture_path, direct_test, direct, ...) \
    GPU_FORKED(table, slot, operation, function, __VA_ARGS__)
#define GPU_SHARED_FORKED(slot, ...) GPU_FORKED(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_FORKED(slot, ...) GPU_FORKED(plain, slot, __VA_ARGS__)
#define GPU_IPC_FORKED(slot, ...) GPU_FORKED(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_FORKED(slot, ...) GPU_FORKED(wrapped, slot, __VA_ARGS__)
#define GPU_SHARED_FORKED_CAPTURED(slot, ...) GPU_FORKED_CAPTURED(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_FORKED_CAPTURED(slot, ...) GPU_FORKED_CAPTURED(plain, slot, __VA_ARGS__)
#define GPU_IPC_FORKED_CAPTURED(slot, ...) GPU_FORKED_CAPTURED(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_FORKED_CAPTURED(slot, ...) GPU_FORKED_CAPTURED(wrapped, slot, __VA_ARGS__)
#define GPU_SHARED_FORKED_DIRECT(slot, ...) GPU_FORKED_DIRECT(shared, slot, __VA_ARGS__)
#define GPU_PLAIN_FORKED_DIRECT(slot, ...) GPU_FORKED_DIRECT(plain, slot, __VA_ARGS__)
#define GPU_IPC_FORKED_DIRECT(slot, ...) GPU_FORKED_DIRECT(ipc, slot, __VA_ARGS__)
#define GPU_WRAPPED_FORKED_DIRECT(slot, ...) GPU_FORKED_DIRECT(wrapped, slot, __VA_ARGS__)

GPU_SHARED_ENTRIES(GPU_SHARED_FORKED, GPU_SHARED_FORKED_CAPTURED, GPU_SHARED_FORKED_DIRECT, GPU_NO_LAYER)
GPU_PLAIN_EVENT_ENTRIES(GPU_PLAIN_FORKED, GPU_PLAIN_FORKED_CAPTURED, GPU_PLAIN_FORKED_DIRECT, GPU_NO_LAYER)
GPU_IPC_EVENT_ENTRIES(GPU_IPC_FORKED, GPU_IPC_FORKED_CAPTURED, GPU_IPC_FORKED_DIRECT, GPU_NO_LAYER)
GPU_WRAPPED_EVENT_ENTRIES(GPU_WRAPPED_FORKED, GPU_WRAPPED_FORKED_CAPTURED, GPU_WRAPPED_FORKED_DIRECT, GPU_NO_LAYER)

#define GPU_SLOT(slot, value) .slot = value,
#define GPU_FUNCTION_SLOT(slot, operation, function, ...) .slot = function,
#define GPU_SHARED_SLOT(slot, ...) .slot = captured_shared_##slot,
#define GPU_PLAIN_SLOT(slot, ...) .slot = captured_plain_##slot,
#define GPU_IPC_SLOT(slot, ...) .slot = captured_ipc_##slot,
#define GPU_WRAPPED_SLOT(slot, ...) .slot = captured_wrapped_##slot,
#define GPU_SHARED_FORKED_SLOT(slot, ...) .slot = forked_shared_##slot,
#define GPU_PLAIN_FORKED_SLOT(slot, ...) .slot = forked_plain_##slot,
#define GPU_IPC_FORKED_SLOT(slot, ...) .slot = forked_ipc_##slot,
#define GPU_WRAPPED_FORKED_SLOT(slot, ...) .slot = forked_wrapped_##slot,

/* Not const: a child created by fork() puts the forked tables' entries in their
 * place (use_forked_tables), so that no call tests for fork on its way. */
/* clang-format off */
static tp_backend gpu_table = {
    GPU_SHARED_ENTRIES(GPU_FUNCTION_SLOT, GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_PLAIN_EVENT_ENTRIES(GPU_FUNCTION_SLOT, GPU_PLAIN_SLOT, GPU_PLAIN_SLOT, GPU_SLOT)
};

static tp_backend gpu_ipc_table = {
    GPU_SHARED_ENTRIES(GPU_FUNCTION_SLOT, GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_IPC_EVENT_ENTRIES(GPU_FUNCTION_SLOT, GPU_IPC_SLOT, GPU_IPC_SLOT, GPU_SLOT)
};

static tp_backend gpu_wrapped_table = {
    GPU_SHARED_ENTRIES(GPU_FUNCTION_SLOT, GPU_SHARED_SLOT, GPU_SHARED_SLOT, GPU_SLOT)
    GPU_WRAPPED_EVENT_ENTRIES(GPU_FUNCTION_SLOT, GPU_WRAPPED_SLOT, GPU_WRAPPED_SLOT, GPU_SLOT)
};

static const tp_backend gpu_forked_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SLOT)
    GPU_PLAIN_EVENT_ENTRIES(GPU_PLAIN_FORKED_SLOT, GPU_PLAIN_FORKED_SLOT, GPU_PLAIN_FORKED_SLOT, GPU_SLOT)
};

static const tp_backend gpu_ipc_forked_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SLOT)
    GPU_IPC_EVENT_ENTRIES(GPU_IPC_FORKED_SLOT, GPU_IPC_FORKED_SLOT, GPU_IPC_FORKED_SLOT, GPU_SLOT)
};

static const tp_backend gpu_wrapped_forked_table = {
    GPU_SHARED_ENTRIES(GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SHARED_FORKED_SLOT, GPU_SLOT)
    GPU_WRAPPED_EVENT_ENTRIES(GPU_WRAPPED_FORKED_SLOT, GPU_WRAPPED_FORKED_SLOT, GPU_WRAPPED_FORKED_SLOT, GPU_SLOT)
};
/* clang-format on */

/* pthread_atfork's child handler: the child has one thread, this one, so the
 * tables change under no call. */
static void use_forked_tables(void)
{
    gpu_table = gpu_forked_table;
    gpu_ipc_table = gpu_ipc_forked_table;
    gpu_wrapped_table = gpu_wrapped_forked_table;
}

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
