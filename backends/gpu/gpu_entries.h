/*
 * The GPU backend's tables (gpu_backend.c), slot by slot: what each slot of each
 * table holds, by kind. A list only: the tables are written out in gpu_backend.c,
 * and tests/gpu_fake/gpu_entries_test.c checks them against it (every slot named
 * here set or NULL as said, in each table it belongs to, none set that is not named
 * here, and in a child created by fork() exactly the slots that can reach the
 * runtime replaced).
 *
 *   X(slot, GUARDED)   a function that can reach the runtime: in a child created by
 *                      fork() (gpu_device.c) it fails at once instead (gpu_forked.c)
 *   X(slot, CAPTURED)  a guarded entry that a capture changes (rule 16): the table
 *                      points at gpu_backend.c's capture layer, captured_<slot>
 *                      (shared slots) or captured_<kind>_<slot>
 *   X(slot, LOCAL)     a function that never reaches the runtime, kept by a child
 *   X(slot, NONE)      NULL on purpose (gpu_backend.c says why)
 *   X(slot, VALUE)     not a function: the ABI version, size, name, type, a flag
 *
 * The slots all three tables share come first; then those of the entries that
 * take an event, one list per kind of event:
 *   GPU_PLAIN_EVENT_SLOTS_LIST    gpu_table: events without TP_EVENT_INTERPROCESS
 *   GPU_IPC_EVENT_SLOTS_LIST      gpu_ipc_table: interprocess events (imported ones too)
 *   GPU_WRAPPED_EVENT_SLOTS_LIST  gpu_wrapped_table: wrappers of native events their
 *                                 callers own (tp_event_from_native)
 */
#ifndef TPEVENT_BACKENDS_GPU_ENTRIES_H
#define TPEVENT_BACKENDS_GPU_ENTRIES_H

/* clang-format off */
#define GPU_SHARED_SLOTS_LIST(X)       \
    X(abi_version, VALUE)              \
    X(size, VALUE)                     \
    X(name, VALUE)                     \
    X(type, VALUE)                     \
    X(init, LOCAL)                     \
    X(device_count, LOCAL)             \
    X(device_name, LOCAL)              \
    X(device_synchronize, GUARDED)     \
    X(stream_create, GUARDED)          \
    X(stream_from_native, GUARDED)     \
    X(stream_default, GUARDED)         \
    X(stream_destroy, CAPTURED)        \
    X(stream_query, CAPTURED)          \
    X(stream_synchronize, CAPTURED)    \
    X(stream_launch_host_fn, CAPTURED) \
    X(stream_native, LOCAL)            \
    X(event_create, GUARDED)           \
    X(event_ipc_import, GUARDED)       \
    X(event_ipc_receive, GUARDED)      \
    X(native_sample, GUARDED)          \
    X(snapshot_take, CAPTURED)         \
    X(snapshot_release, LOCAL)         \
    X(snapshot_query, GUARDED)         \
    X(snapshot_synchronize, GUARDED)   \
    X(snapshot_time, NONE)             \
    X(snapshot_notify, GUARDED)        \
    X(stream_hold, GUARDED)            \
    X(stream_hold_window, LOCAL)       \
    X(host_fn_may_block, VALUE)        \
    X(wait_mechanism, GUARDED)         \
    X(event_timestamp, CAPTURED)       \
    X(device_clock, GUARDED)           \
    X(event_native, LOCAL)             \
    X(event_from_native, GUARDED)      \
    X(stream_priority_range, GUARDED)  \
    X(stream_begin_capture, GUARDED)   \
    X(stream_end_capture, GUARDED)     \
    X(stream_is_capturing, GUARDED)    \
    X(graph_launch, GUARDED)           \
    X(graph_destroy, GUARDED)          \
    X(stream_flush_cache, GUARDED)     \
    X(stream_launch_empty, GUARDED)    \
    X(tool_attached, LOCAL)            \
    X(tool_range_push, LOCAL)          \
    X(tool_range_pop, LOCAL)           \
    X(tool_stream_name, LOCAL)         \
    X(stream_capture_host_fn, GUARDED) \
    X(stream_waits_for_itself, LOCAL)  \
    X(event_waits_for_itself, NONE)    \
    X(event_elapsed, CAPTURED)         \
    X(sm_clock, GUARDED)               \
    X(timeline_import_support, GUARDED) \
    X(stream_wait_timeline, GUARDED)

#define GPU_PLAIN_EVENT_SLOTS_LIST(X)    \
    X(stream_wait_event, CAPTURED)       \
    X(event_destroy, CAPTURED)           \
    X(event_record, CAPTURED)            \
    X(event_query, CAPTURED)             \
    X(event_synchronize, CAPTURED)       \
    X(event_ipc_export, NONE)            \
    X(event_ipc_send_prepare, NONE)      \
    X(event_record_uncaptured, CAPTURED)

#define GPU_IPC_EVENT_SLOTS_LIST(X)    \
    X(stream_wait_event, CAPTURED)     \
    X(event_destroy, GUARDED)          \
    X(event_record, CAPTURED)          \
    X(event_query, GUARDED)            \
    X(event_synchronize, GUARDED)      \
    X(event_ipc_export, GUARDED)       \
    X(event_ipc_send_prepare, GUARDED) \
    X(event_record_uncaptured, NONE)

#define GPU_WRAPPED_EVENT_SLOTS_LIST(X) \
    X(stream_wait_event, CAPTURED)      \
    X(event_destroy, GUARDED)           \
    X(event_record, GUARDED)            \
    X(event_query, CAPTURED)            \
    X(event_synchronize, CAPTURED)      \
    X(event_ipc_export, NONE)           \
    X(event_ipc_send_prepare, NONE)     \
    X(event_record_uncaptured, NONE)
/* clang-format on */

#endif /* TPEVENT_BACKENDS_GPU_ENTRIES_H */
