/*
 * What the core's files share with each other. Not installed; backends see only
 * core/backend.h (and core/builtin_backends.h, which declares their entries).
 */
#ifndef TPEVENT_CORE_INTERNAL_H
#define TPEVENT_CORE_INTERNAL_H

#include "core/backend.h"
#include "core/device_types.h" /* the list of types; the test core's TP_DEVICE_TYPE_COUNT */
#include "common/compiler.h"   /* TP_LIKELY, TP_UNLIKELY, TP_COLD, TP_PRINTF */

#include <stdatomic.h>
#include <string.h> /* memcpy */

/* ------------------------------------------------------------- error.c */

/* Sets the calling thread's message (tp_last_error) and returns status. */
tp_status tp_fail(tp_status status, const char *fmt, ...) TP_PRINTF(2, 3);

/* The failure of a call made on behalf of `operation` (a public call built on
 * others), said as that call's: "<operation>: <context><the message so far>". */
tp_status tp_fail_within(tp_status status, const char *operation, const char *context);

/* TP_ERR_UNSUPPORTED for a NULL table entry: "the <backend> backend does not
 * support <operation>". */
tp_status tp_unsupported(const tp_backend *backend, const char *operation);

/* Two devices are one: type and index, read as one word (one compare on the hot
 * paths instead of two). */
_Static_assert(sizeof(tp_device) == sizeof(uint64_t), "tp_device is two 32-bit fields, no padding");
static inline bool tp_device_same(tp_device a, tp_device b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* The services handed to every backend at init (core/host.c). */
extern const tp_host tp_core_host;

/* tp_host's elapsed_sequenced (core/elapsed.c): rule 7's answer once the backend's
 * event_elapsed had none. */
tp_status tp_elapsed_sequenced(tp_event *start, tp_event *end, float *ms);

/* ---------------------------------------------------------- registry.c */

/* Set once a backend said a profiling tool is attached (its tool_attached): from then
 * on tp_range_push, tp_range_pop and tp_stream_set_name pass on to the backends'
 * tool entries, trace or not. */
extern atomic_bool tp_range_tools_flag;
static inline bool tp_range_tools_on(void)
{
    return atomic_load_explicit(&tp_range_tools_flag, memory_order_relaxed);
}

/* The usable backend of a type and its device count (may be NULL), loading it on
 * first use. Fails with TP_ERR_BACKEND_UNAVAILABLE and a message that gives the
 * reason. */
tp_status tp_backend_acquire(tp_device_type type, const tp_backend **out, int *device_count);

/* ----------------------------------------------------- device_string.c */

/* "cuda:1" into a caller buffer; for messages. */
const char *tp_device_str(tp_device device, char buf[static TP_DEVICE_STRING_MAX]);

/* The type a device string starts with, without setting the thread's last error
 * (false if it names none). */
bool tp_device_type_of(const char *str, tp_device_type *type);

/* ------------------------------------------------------------ device.c */

/* Parses a device string, NULL meaning the thread's current device, fills in the
 * thread's current index for a type given without one, loads the backend and checks
 * the index is in range. */
tp_status tp_device_resolve(const char *str, tp_device *device, const tp_backend **backend);

/* ---------------------------------------------------- current_stream.c */

/* The thread's current stream of a device (its default stream until set). */
tp_status tp_stream_current_of(tp_device device, const tp_backend *backend, tp_stream **out);

/* The calling thread stops using a stream that is being destroyed. */
void tp_stream_forget_current(const tp_stream *stream);

/* --------------------------------------------------------- snapshot.c */

/*
 * The core's side of snapshots (core/backend.h): the rules that span two events,
 * devices or backends are built from these. take fails with TP_ERR_UNSUPPORTED
 * for a backend without snapshots; every snapshot taken is released once.
 * tp_snapshot_reached answers NEVER_RECORDED and REACHED itself, and asks the
 * backend only for PENDING.
 */
tp_status tp_snapshot_take(tp_event *event, tp_snapshot *out);
void tp_snapshot_release(tp_snapshot *snapshot);
tp_status tp_snapshot_reached(const tp_snapshot *snapshot, bool *reached);

/* Whether `backend` takes, reads and releases snapshots at all: the entries every
 * use of one needs (a wait across backends asks further for the one it waits by). */
static inline bool tp_backend_has_snapshots(const tp_backend *backend)
{
    return backend->snapshot_take && backend->snapshot_release && backend->snapshot_query;
}

/* ---------------------------------------------------------- event holds
 *
 * core_holds (core/backend.h): a graph that waits on the event across backends
 * runs, at each launch, a host function that reads the event's latest record
 * (core/wait_across.c), so the event must outlive the graph even when the program
 * destroys it first; the backend's destroy then comes with the last hold's
 * release. The word counts holds, with TP_EVENT_HOLDS_DESTROYED set by
 * tp_event_destroy (core/event.c); each change is one atomic operation, so exactly
 * one of the destroy and the last release sees both. An event nobody holds (the
 * common case) costs its destroy one relaxed load: a hold is only taken by a call
 * that uses the event, which the program must not make concurrently with the
 * event's destroy.
 */
#define TP_EVENT_HOLDS_DESTROYED (UINT32_C(1) << 31)

static inline void tp_event_hold(tp_event *event)
{
    atomic_fetch_add_explicit(&event->core_holds, 1, memory_order_relaxed);
}

static inline void tp_event_release_hold(tp_event *event)
{
    if (atomic_fetch_sub_explicit(&event->core_holds, 1, memory_order_acq_rel) == (TP_EVENT_HOLDS_DESTROYED | 1))
        (void)event->backend->event_destroy(event);
}

/* ------------------------------------------------------------ graph.c */

/* TP_ERR_CAPTURING: a wait across backends on a capturing stream (rule 16). */
tp_status tp_refuse_wait_in_capture(tp_event *event, tp_stream *stream) TP_COLD;

/* -------------------------------------------------------------- ipc.c */

/* Header of tp_ipc_handle (see core/backend.h for the layout). */
void tp_ipc_seal(tp_ipc_handle *handle, tp_device device, size_t payload_length);
tp_status tp_ipc_open(const tp_ipc_handle *handle, tp_device *device, size_t *payload_length);

/* ------------------------------------------------------------ loader.c */

/*
 * Loads the backend module at `path`, checks its entry symbol, ABI version, table
 * size and type, and calls its init. On failure returns TP_ERR_BACKEND_UNAVAILABLE and
 * writes a reason that names the file and the cause; the process is unharmed.
 */
tp_status tp_module_load(const char *path, tp_device_type type, const tp_backend **out, void **dl_handle, char *reason,
                         size_t reason_size);

/* Finds the module file `file`, a whole file name ("libtpevent-cuda.so", as the
 * registry builds it from the backend's name and TPEVENT_MODULE_SUFFIX): in the folder
 * of the core library itself, then in each folder of TPEVENT_BACKEND_PATH
 * (':'-separated, empty entries skipped), in that order. The first file that exists
 * is the answer, whether it loads or not (tp_module_load reports a broken one), and
 * its path goes into `path`. Returns false if no folder has it; `path` then says
 * where it looked. */
bool tp_module_find(const char *file, char *path, size_t path_size);

/* Checks a table a backend handed over (ABI, size, type, mandatory entries). */
tp_status tp_backend_check_table(const tp_backend *table, tp_device_type type, char *reason, size_t reason_size);

/* ------------------------------------------------------------ trace.c */

/* True while a trace runs (tp_trace_start..tp_trace_stop). Every hook below is
 * behind this one relaxed load and a branch; trace.c checks again under its lock. */
extern atomic_bool tp_trace_running_flag;
static inline bool tp_trace_on(void)
{
    return atomic_load_explicit(&tp_trace_running_flag, memory_order_relaxed);
}
/* The destroy calls' check: acquire, so that a destroy that sees the trace stopped
 * also sees everything tp_trace_stop did to the object before it cleared the flag
 * (it closes open ranges on streams that still exist). */
static inline bool tp_trace_on_for_destroy(void)
{
    return atomic_load_explicit(&tp_trace_running_flag, memory_order_acquire);
}

/* tp_event_record / tp_event_wait while tracing: the record or wait itself, plus
 * the marks a wait's flow needs (core/trace.c). Arguments already checked. */
tp_status tp_trace_record(tp_event *event, tp_stream *stream) TP_COLD;
tp_status tp_trace_wait(tp_event *event, tp_stream *stream) TP_COLD;
/* The object is being destroyed: the trace forgets it (its records stay). A
 * stream is destroyed under the trace's lock and forgotten only if its backend
 * agreed (it refuses a stream that is capturing), so that its address, free once
 * the lock is let go, is never taken for another stream's. */
void tp_trace_forget_event(tp_event *event) TP_COLD;
/* tp_stream_set_name's copy, under the lock the trace reads names with (the running
 * trace's track takes the new name too). */
tp_status tp_trace_name_stream(tp_stream *stream, const char *name) TP_COLD;
tp_status tp_trace_destroy_stream(tp_stream *stream) TP_COLD;

#endif /* TPEVENT_CORE_INTERNAL_H */
