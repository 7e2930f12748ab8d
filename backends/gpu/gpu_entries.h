/*
 * The GPU backend's entries, listed once: what each slot of its tables
 * (core/backend.h) calls. gpu_backend.c generates from this list the capture layer
 * in front of the entries a capture changes, its three tables, and the tables a
 * child created by fork() uses instead, so a new entry is one line here and one
 * call is followed from here:
 *
 *   GUARDED(slot, operation, function, parameter types...)
 *       an entry that can reach the runtime: `function` itself. In a child created
 *       by fork() (gpu_device.c) the slot fails at once instead, naming the public
 *       call `operation` (the child's tables: nothing on the call's path).
 *   CAPTURED(slot, operation, function, test, capture_path, parameter types...)
 *       a guarded entry that a capture changes (rule 16). `test`, an expression of
 *       the arguments a1, a2, ... (one or two relaxed loads, gpu_graph.h), says
 *       whether a capture may be involved: if so, `capture_path` (gpu_graph.c)
 *       answers, which ends in `function` itself where none is after all (a
 *       wrapped stream nobody captures, a capture closed since); if not,
 *       `function` is tail-called.
 *   DIRECT(slot, operation, function, test, capture_path, direct_test, direct, types...)
 *       a captured entry on a hot path. `direct_test` (gpu_event_direct.h), one test
 *       of the flags the call loads anyway, says that the common case holds, which
 *       no capture is part of: then `direct` (gpu_event_direct.h, inline), the
 *       common case alone, runs in place; otherwise it goes on as CAPTURED.
 *   UNGUARDED(slot, value)
 *       a function that never reaches the runtime, or a constant.
 *
 * The slots all three tables share come first; then those of the entries that
 * take an event, one list per kind of event:
 *   GPU_PLAIN_EVENT_ENTRIES    gpu_table: events without TP_EVENT_INTERPROCESS
 *   GPU_IPC_EVENT_ENTRIES      gpu_ipc_table: interprocess events (imported ones too)
 *   GPU_WRAPPED_EVENT_ENTRIES  gpu_wrapped_table: wrappers of native events their
 *                              callers own (tp_event_from_native), never interprocess
 * Functions without the gpu_ prefix are gpu_backend.c's own.
 */
#ifndef TPEVENT_BACKENDS_GPU_ENTRIES_H
#define TPEVENT_BACKENDS_GPU_ENTRIES_H

/* A host function, as the parameter types below name it. */
typedef void gpu_fn(void *);

/* clang-format off */
#define GPU_SHARED_ENTRIES(GUARDED, CAPTURED, DIRECT, UNGUARDED)                                                      \
    UNGUARDED(abi_version, TP_BACKEND_ABI_VERSION)                                                                    \
    UNGUARDED(size, sizeof(tp_backend))                                                                               \
    UNGUARDED(name, RT_BACKEND_NAME)                                                                                  \
    UNGUARDED(type, RT_DEVICE_TYPE)                                                                                   \
    UNGUARDED(init, init)                                                                                             \
    UNGUARDED(device_count, gpu_device_count)                                                                         \
    UNGUARDED(device_name, gpu_device_name)                                                                           \
    GUARDED(device_synchronize, tp_device_synchronize, device_synchronize, int)                                       \
    GUARDED(stream_create, tp_stream_create, gpu_stream_create, int, int, tp_stream **)                               \
    GUARDED(stream_from_native, tp_stream_from_native, gpu_stream_from_native, int, void *, tp_stream **)             \
    GUARDED(stream_default, tp_stream_default, gpu_stream_default, int, tp_stream **)                                 \
    CAPTURED(stream_destroy, tp_stream_destroy, gpu_stream_destroy,                                                   \
             gpu_stream_in_capture(a1), gpu_capture_stream_destroy, tp_stream *)                                      \
    CAPTURED(stream_query, tp_stream_query, gpu_stream_query,                                                         \
             gpu_stream_capture_checked(a1), gpu_capture_stream_query, tp_stream *, bool *)                           \
    CAPTURED(stream_synchronize, tp_stream_synchronize, gpu_stream_synchronize,                                       \
             gpu_stream_capture_checked(a1), gpu_capture_stream_synchronize, tp_stream *)                             \
    CAPTURED(stream_launch_host_fn, tp_stream_launch_host_fn, gpu_host_fn_launch,                                     \
             gpu_stream_capture_checked(a1), gpu_capture_host_fn_launch, tp_stream *, gpu_fn *, void *)               \
    UNGUARDED(stream_native, gpu_stream_native)                                                                       \
    GUARDED(event_create, tp_event_create, event_create, int, unsigned, tp_event **)                                  \
    GUARDED(event_ipc_import, tp_event_from_ipc_handle, gpu_event_ipc_import,                                         \
            int, const unsigned char *, size_t, tp_event **)                                                          \
    GUARDED(native_sample, tp_native_sample, gpu_native_sample, int, tp_native_op, uint64_t *, size_t)                \
    CAPTURED(snapshot_take, snapshot_take, gpu_snapshot_take,                                                         \
             gpu_event_capture_unsettled(a1), gpu_capture_snapshot_take, tp_event *, tp_snapshot *)                   \
    UNGUARDED(snapshot_release, gpu_snapshot_release)                                                                 \
    GUARDED(snapshot_query, snapshot_query, gpu_snapshot_query, const tp_snapshot *, bool *)                          \
    GUARDED(snapshot_synchronize, snapshot_synchronize, gpu_snapshot_synchronize, const tp_snapshot *)                \
    UNGUARDED(snapshot_time, NULL) /* timestamps go by the event */                                                   \
    GUARDED(snapshot_notify, snapshot_notify, gpu_snapshot_notify, const tp_snapshot *, gpu_fn *, void *)             \
    GUARDED(stream_hold, tp_stream_hold, gpu_stream_hold, tp_stream *, gpu_fn **, void **)                            \
    UNGUARDED(stream_hold_window, gpu_stream_hold_window)                                                             \
    UNGUARDED(host_fn_may_block, false) /* stream_hold holds no thread (core/backend.h) */                            \
    GUARDED(wait_mechanism, tp_device_wait_mechanism, gpu_wait_mechanism, int, char *, size_t)                        \
    CAPTURED(event_timestamp, tp_event_timestamp, gpu_event_timestamp,                                                \
             gpu_event_capture_unsettled(a1), gpu_capture_event_timestamp, tp_event *, int64_t *)                     \
    GUARDED(device_clock, tp_device_clock, gpu_device_clock, int, tp_clock_info *)                                    \
    UNGUARDED(event_native, gpu_event_native_handle)                                                                  \
    GUARDED(event_from_native, tp_event_from_native, event_from_native, int, void *, tp_event **)                     \
    GUARDED(stream_priority_range, tp_stream_priority_range, gpu_stream_priority_range, int, int *, int *)            \
    GUARDED(stream_begin_capture, tp_stream_begin_capture, gpu_stream_begin_capture, tp_stream *)                     \
    GUARDED(stream_end_capture, tp_stream_end_capture, gpu_stream_end_capture, tp_stream *, tp_graph **)              \
    GUARDED(stream_is_capturing, tp_stream_is_capturing, gpu_stream_is_capturing, tp_stream *, bool *)                \
    GUARDED(graph_launch, tp_graph_launch, gpu_graph_launch, tp_graph *, tp_stream *)                                 \
    GUARDED(graph_destroy, tp_graph_destroy, gpu_graph_destroy, tp_graph *)                                           \
    GUARDED(stream_flush_cache, tp_measure, gpu_stream_flush_cache, tp_stream *)                                       \
    GUARDED(stream_launch_empty, tp_measure, gpu_stream_launch_empty, tp_stream *)                                     \
    UNGUARDED(tool_attached, gpu_tool_attached)                                                                        \
    UNGUARDED(tool_range_push, gpu_tool_range_push)                                                                    \
    UNGUARDED(tool_range_pop, gpu_tool_range_pop)                                                                      \
    UNGUARDED(tool_stream_name, gpu_tool_stream_name)                                                                  \
    GUARDED(stream_capture_host_fn, tp_event_wait, gpu_stream_capture_host_fn, tp_stream *, gpu_fn *, void *, gpu_fn *) \
    UNGUARDED(stream_waits_for_itself, stream_waits_for_itself)                                                       \
    UNGUARDED(event_waits_for_itself, NULL) /* an event does not know its record's stream (the README) */             \
    DIRECT(event_elapsed, tp_event_elapsed_time, gpu_event_elapsed,                                                   \
           gpu_event_capture_unsettled(a1) || gpu_event_capture_unsettled(a2), gpu_capture_event_elapsed,             \
           gpu_elapsed_is_direct(a1, a2), gpu_direct_event_elapsed, tp_event *, tp_event *, float *)

#define GPU_PLAIN_EVENT_ENTRIES(GUARDED, CAPTURED, DIRECT, UNGUARDED)                                                 \
    DIRECT(stream_wait_event, tp_event_wait, gpu_plain_stream_wait_event,                                             \
           gpu_stream_capture_checked(a1) || gpu_event_capture_marked(a2), gpu_capture_wait_event,                    \
           gpu_wait_is_direct(a1, a2), gpu_direct_stream_wait_event, tp_stream *, tp_event *)                         \
    CAPTURED(event_destroy, tp_event_destroy, gpu_plain_event_destroy,                                                \
             gpu_event_capture_marked(a1), gpu_capture_event_destroy, tp_event *)                                     \
    DIRECT(event_record, tp_event_record, gpu_plain_event_record,                                                     \
           gpu_stream_capture_checked(a2) || gpu_event_capture_marked(a1), gpu_capture_event_record,                  \
           gpu_record_is_direct(a1, a2), gpu_direct_event_record, tp_event *, tp_stream *)                            \
    DIRECT(event_query, tp_event_query, gpu_plain_event_query,                                                        \
           gpu_event_capture_unsettled(a1), gpu_capture_event_query,                                                  \
           gpu_event_is_direct(a1), gpu_direct_event_query, tp_event *, bool *)                                       \
    DIRECT(event_synchronize, tp_event_synchronize, gpu_plain_event_synchronize,                                      \
           gpu_event_capture_unsettled(a1), gpu_capture_event_synchronize,                                            \
           gpu_event_is_direct(a1), gpu_direct_event_synchronize, tp_event *)                                         \
    UNGUARDED(event_ipc_export, NULL) /* the core lets only interprocess events export */

#define GPU_IPC_EVENT_ENTRIES(GUARDED, CAPTURED, DIRECT, UNGUARDED)                                                   \
    CAPTURED(stream_wait_event, tp_event_wait, gpu_ipc_stream_wait_event,                                             \
             gpu_stream_capture_checked(a1), gpu_capture_ipc_wait_event, tp_stream *, tp_event *)                     \
    GUARDED(event_destroy, tp_event_destroy, gpu_ipc_event_destroy, tp_event *)                                       \
    CAPTURED(event_record, tp_event_record, gpu_ipc_event_record,                                                     \
             gpu_stream_capture_checked(a2), gpu_capture_ipc_event_record, tp_event *, tp_stream *)                   \
    GUARDED(event_query, tp_event_query, gpu_ipc_event_query, tp_event *, bool *)                                     \
    GUARDED(event_synchronize, tp_event_synchronize, gpu_ipc_event_synchronize, tp_event *)                           \
    GUARDED(event_ipc_export, tp_event_ipc_handle, gpu_event_ipc_export, tp_event *, unsigned char *, size_t *)

#define GPU_WRAPPED_EVENT_ENTRIES(GUARDED, CAPTURED, DIRECT, UNGUARDED)                                               \
    DIRECT(stream_wait_event, tp_event_wait, gpu_plain_stream_wait_event,                                             \
           gpu_stream_capture_checked(a1) || gpu_event_capture_marked(a2), gpu_capture_wait_event,                    \
           gpu_wait_is_direct(a1, a2), gpu_direct_stream_wait_event, tp_stream *, tp_event *)                         \
    GUARDED(event_destroy, tp_event_destroy, gpu_wrapped_event_destroy, tp_event *)                                   \
    /* a wrapper's record goes on the caller's own native event, never marked as captured */                         \
    GUARDED(event_record, tp_event_record, gpu_wrapped_event_record, tp_event *, tp_stream *)                         \
    DIRECT(event_query, tp_event_query, gpu_plain_event_query,                                                        \
           gpu_event_capture_unsettled(a1), gpu_capture_event_query,                                                  \
           gpu_event_is_direct(a1), gpu_direct_event_query, tp_event *, bool *)                                       \
    DIRECT(event_synchronize, tp_event_synchronize, gpu_plain_event_synchronize,                                      \
           gpu_event_capture_unsettled(a1), gpu_capture_event_synchronize,                                            \
           gpu_event_is_direct(a1), gpu_direct_event_synchronize, tp_event *)                                         \
    UNGUARDED(event_ipc_export, NULL) /* the core lets only interprocess events export */
/* clang-format on */

#endif /* TPEVENT_BACKENDS_GPU_ENTRIES_H */
