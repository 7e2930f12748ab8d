/*
 * fork(). A child of a process that initialized OpenCL cannot use it: the
 * platform's threads (PoCL's device threads, the driver's) and the module's own
 * (the notifier, the host function workers) are not in the child, and locks they
 * held at the fork stay held, so a call there hung (issue 47 item 2: in the
 * child, tp_stream_create succeeded and a record's synchronize never returned).
 * OpenCL says nothing of fork, and no platform promises it. So, as the GPU
 * backend does (backends/gpu/gpu_device.c), every entry that can reach the
 * runtime or the module's threads and locks fails there at once with
 * TP_ERR_BACKEND and the reason: the child's handler, registered once the module
 * is initialized, puts the forked table in place of the backend's tables, so the
 * calls' paths carry no test. Only the CPU backend works in such a child; a
 * process started with exec (multiprocessing's spawn) may use OpenCL. A child
 * forked before the module was initialized initializes it as any process.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef void ocl_fn(void *);

static struct {
    pid_t init_pid; /* the process that initialized the module */
    tp_backend *tables[2];
} fork_guard;

static TP_COLD tp_status forked_fail(const char *operation)
{
    return tp_ocl_host()->fail(
        TP_ERR_BACKEND,
        "%s: OpenCL cannot be used in a child created by fork() after the parent (pid %d) initialized it; only the "
        "cpu backend works in this process (pid %d): start it with exec (Python: multiprocessing's 'spawn' start "
        "method) to use opencl",
        operation, (int)fork_guard.init_pid, (int)getpid());
}

#define FORKED1(slot, operation, t1)      \
    static tp_status forked_##slot(t1 a1) \
    {                                     \
        (void)a1;                         \
        return forked_fail(#operation);   \
    }
#define FORKED2(slot, operation, t1, t2)         \
    static tp_status forked_##slot(t1 a1, t2 a2) \
    {                                            \
        (void)a1;                                \
        (void)a2;                                \
        return forked_fail(#operation);          \
    }
#define FORKED3(slot, operation, t1, t2, t3)            \
    static tp_status forked_##slot(t1 a1, t2 a2, t3 a3) \
    {                                                   \
        (void)a1;                                       \
        (void)a2;                                       \
        (void)a3;                                       \
        return forked_fail(#operation);                 \
    }

/* The operations are the public calls that reach each entry, or what the core
 * uses the entry for. */
FORKED1(device_synchronize, tp_device_synchronize, int)
FORKED3(stream_create, tp_stream_create, int, int, tp_stream **)
FORKED3(stream_from_native, tp_stream_from_native, int, void *, tp_stream **)
FORKED2(stream_default, tp_stream_default, int, tp_stream **)
FORKED1(stream_destroy, tp_stream_destroy, tp_stream *)
FORKED2(stream_query, tp_stream_query, tp_stream *, bool *)
FORKED1(stream_synchronize, tp_stream_synchronize, tp_stream *)
FORKED2(stream_wait_event, tp_event_wait, tp_stream *, tp_event *)
FORKED3(stream_launch_host_fn, tp_stream_launch_host_fn, tp_stream *, ocl_fn *, void *)
FORKED3(event_create, tp_event_create, int, unsigned, tp_event **)
FORKED1(event_destroy, tp_event_destroy, tp_event *)
FORKED2(event_record, tp_event_record, tp_event *, tp_stream *)
FORKED2(event_query, tp_event_query, tp_event *, bool *)
FORKED1(event_synchronize, tp_event_synchronize, tp_event *)
FORKED3(event_elapsed, tp_event_elapsed_time, tp_event *, tp_event *, float *)
FORKED2(event_timestamp, tp_event_timestamp, tp_event *, int64_t *)
FORKED2(device_clock, tp_device_clock, int, tp_clock_info *)
FORKED2(snapshot_take, snapshot of a record, tp_event *, tp_snapshot *)
FORKED2(snapshot_query, query of a snapshot of a record, const tp_snapshot *, bool *)
FORKED1(snapshot_synchronize, wait for a snapshot of a record, const tp_snapshot *)
FORKED3(snapshot_notify, notice of a snapshot of a record, const tp_snapshot *, ocl_fn *, void *)
FORKED3(stream_hold, tp_stream_hold, tp_stream *, ocl_fn **, void **)
FORKED2(event_native, tp_event_native, tp_event *, void **)
FORKED3(event_from_native, tp_event_from_native, int, void *, tp_event **)
FORKED1(stream_flush_cache, tp_measure, tp_stream *)
FORKED1(stream_launch_empty, tp_measure, tp_stream *)

/* The snapshot's reference is the parent's: releasing it would call the runtime. */
static void forked_snapshot_release(tp_snapshot *snapshot)
{
    (void)snapshot;
}

#define FORKED_SLOT(slot) table->slot = forked_##slot

/* Every entry that can reach the runtime, or the module's threads and locks. Those
 * that answer from the module's own data stay: the devices' count and names, the
 * wait mechanism, the priorities, the hold window, a stream's native queue, rule
 * 15's self-wait of a stream (a thread-local). */
static void put_forked_entries(tp_backend *table)
{
    FORKED_SLOT(device_synchronize);
    FORKED_SLOT(stream_create);
    FORKED_SLOT(stream_from_native);
    FORKED_SLOT(stream_default);
    FORKED_SLOT(stream_destroy);
    FORKED_SLOT(stream_query);
    FORKED_SLOT(stream_synchronize);
    FORKED_SLOT(stream_wait_event);
    FORKED_SLOT(stream_launch_host_fn);
    FORKED_SLOT(event_create);
    FORKED_SLOT(event_destroy);
    FORKED_SLOT(event_record); /* the wrapped table's refusal too */
    FORKED_SLOT(event_query);
    FORKED_SLOT(event_synchronize);
    FORKED_SLOT(event_elapsed);
    FORKED_SLOT(event_timestamp);
    FORKED_SLOT(device_clock);
    FORKED_SLOT(snapshot_take);
    FORKED_SLOT(snapshot_release);
    FORKED_SLOT(snapshot_query);
    FORKED_SLOT(snapshot_synchronize);
    FORKED_SLOT(snapshot_notify);
    FORKED_SLOT(stream_hold);
    FORKED_SLOT(event_native);
    FORKED_SLOT(event_from_native);
    FORKED_SLOT(stream_flush_cache);
    FORKED_SLOT(stream_launch_empty);
    table->event_waits_for_itself = NULL; /* reads the event's latest record: the core then asks no one */
}

/* pthread_atfork's child handler: the child has one thread, this one, so the
 * tables change under no call. */
static void use_forked_tables(void)
{
    for (size_t i = 0; i < sizeof fork_guard.tables / sizeof fork_guard.tables[0]; i++)
        put_forked_entries(fork_guard.tables[i]);
}

tp_status tp_ocl_fork_guard_install(tp_backend *table, tp_backend *wrapped_table, char *reason, size_t reason_size)
{
    fork_guard.init_pid = getpid();
    fork_guard.tables[0] = table;
    fork_guard.tables[1] = wrapped_table;
    int error = pthread_atfork(NULL, NULL, use_forked_tables);
    if (error != 0) {
        snprintf(reason, reason_size, "opencl: pthread_atfork: %s", strerror(error));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}
