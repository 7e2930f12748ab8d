/*
 * Promises of the CPU backend's interprocess events that need no second process
 * (cpu_backend.h): the backend imports a handle in the process that exported it,
 * so both sides of the shared state can be driven from one process, where the
 * sanitizers see them both.
 */
#include "ipc_support.h"

#include <stdio.h>
#include <string.h>

/* The CPU backend follows up to this many streams with records of one event
 * pending (cpu_backend.h). */
#define CPU_PENDING_STREAMS_MAX 64

static tp_event *import_in_process(tp_event *event, const char *device)
{
    tp_ipc_handle handle;
    CHECK_OK(tp_event_ipc_handle(event, &handle));
    tp_event *imported = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&imported, device, &handle));
    return imported;
}

TEST(cpu_records_pending_on_many_streams)
{
    enum { STREAMS = CPU_PENDING_STREAMS_MAX + 1 };
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_stream *streams[STREAMS];
    gate g;
    gate_init(&g);
    for (int i = 0; i < STREAMS; i++) {
        streams[i] = new_stream(env->device);
        gate_launch(&g, streams[i]);
    }
    for (int i = 0; i < CPU_PENDING_STREAMS_MAX; i++)
        CHECK_OK(tp_event_record(event, streams[i]));
    CHECK_STATUS(tp_event_record(event, streams[CPU_PENDING_STREAMS_MAX]), TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS("pending on 64 streams");
    /* The refused record changed nothing: the latest is still pending. */
    CHECK(!event_is_done(event));

    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    for (int i = 0; i < STREAMS; i++)
        CHECK_OK(tp_stream_synchronize(streams[i]));

    /* Nothing pending any more: every stream may record again, the one refused
     * included, and each record is followed exactly. */
    gate again;
    gate_init(&again);
    gate_launch(&again, streams[CPU_PENDING_STREAMS_MAX]);
    CHECK_OK(tp_event_record(event, streams[CPU_PENDING_STREAMS_MAX]));
    CHECK(event_pending_for(event, 20));
    gate_open(&again);
    CHECK_OK(tp_event_synchronize(event));
    for (int i = 0; i < STREAMS; i++) {
        CHECK_OK(tp_event_record(event, streams[i]));
        CHECK(event_is_done(event));
    }

    CHECK_OK(tp_event_destroy(event));
    for (int i = 0; i < STREAMS; i++)
        CHECK_OK(tp_stream_destroy(streams[i]));
    gate_destroy(&again);
    gate_destroy(&g);
    return 0;
}

typedef struct own_wait {
    tp_event *event;
    tp_status status;
    char error[256];
} own_wait;

static void synchronize_host_fn(void *arg)
{
    own_wait *wait = arg;
    wait->status = tp_event_synchronize(wait->event);
    snprintf(wait->error, sizeof wait->error, "%s", tp_last_error());
}

TEST(cpu_host_function_waiting_for_its_own_record_refused)
{
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *imported = import_in_process(event, env->device);
    tp_stream *stream = new_stream(env->device);
    gate g;
    gate_init(&g);

    /* Through the handle that made the record, and through another handle of
     * the same event (the shared state's path): both would wait for the very
     * thread that runs them. */
    own_wait through_recorder = {.event = event, .status = TP_OK};
    own_wait through_import = {.event = imported, .status = TP_OK};
    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, synchronize_host_fn, &through_recorder));
    CHECK_OK(tp_stream_launch_host_fn(stream, synchronize_host_fn, &through_import));
    CHECK_OK(tp_event_record(event, stream));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_STATUS(through_recorder.status, TP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(through_recorder.error, "wait for itself");
    CHECK_STATUS(through_import.status, TP_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(through_import.error, "wait for itself");
    CHECK(event_is_done(imported));

    CHECK_OK(tp_event_destroy(imported));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(cpu_versioned_wait_through_the_shared_state)
{
    /* Rule 6 where the waiting handle did not make the record: the wait is for
     * the record latest at the call, not for a later one reached first. */
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *imported = import_in_process(event, env->device);
    tp_stream *gated = new_stream(env->device);
    tp_stream *idle = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    gate g;
    gate_init(&g);
    gate_launch(&g, gated);
    CHECK_OK(tp_event_record(event, gated));
    atomic_int after_wait = 0;
    CHECK_OK(tp_event_wait(imported, waiter));
    CHECK_OK(tp_stream_launch_host_fn(waiter, flag_host_fn, &after_wait));
    CHECK_OK(tp_event_record(event, idle));
    CHECK(event_is_done(imported));
    sleep_ms(100);
    CHECK(atomic_load(&after_wait) == 0);
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(waiter));
    CHECK(atomic_load(&after_wait) == 1);

    CHECK_OK(tp_event_destroy(imported));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(idle));
    CHECK_OK(tp_stream_destroy(gated));
    gate_destroy(&g);
    return 0;
}

/* --------------------------------------------------- threads on both handles */

#define THREADS 4
#define ROUNDS 300

typedef struct worker_args {
    const char *device;
    tp_event *handles[2]; /* the exporter's and the import */
    int index;
    atomic_int ran;
    tp_status failed; /* the first failure, or TP_OK */
    char error[256];
} worker_args;

static void note(worker_args *args, tp_status status)
{
    if (status != TP_OK && args->failed == TP_OK) {
        args->failed = status;
        snprintf(args->error, sizeof args->error, "%s", tp_last_error());
    }
}

static void *worker_main(void *arg)
{
    worker_args *args = arg;
    tp_stream *stream = new_stream(args->device);
    tp_stream *waiter = new_stream(args->device);
    for (int round = 0; round < ROUNDS; round++) {
        tp_event *mine = args->handles[(args->index + round) % 2];
        tp_event *other = args->handles[(args->index + round + 1) % 2];
        bool done;
        note(args, tp_stream_launch_host_fn(stream, counter_host_fn, &args->ran));
        note(args, tp_event_record(mine, stream));
        note(args, tp_event_wait(other, waiter));
        note(args, tp_stream_launch_host_fn(waiter, counter_host_fn, &args->ran));
        note(args, tp_event_query(other, &done));
        if (round % 16 == 0)
            note(args, tp_event_synchronize(other));
    }
    note(args, tp_stream_synchronize(stream));
    note(args, tp_stream_synchronize(waiter));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    return NULL;
}

TEST(cpu_shared_event_from_many_threads)
{
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *imported = import_in_process(event, env->device);
    worker_args args[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i] = (worker_args){.device = env->device, .handles = {event, imported}, .index = i, .failed = TP_OK};
        atomic_init(&args[i].ran, 0);
        CHECK(pthread_create(&threads[i], NULL, worker_main, &args[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        if (args[i].failed != TP_OK)
            check_failed(__FILE__, __LINE__, "thread %d: %s: %s", i, tp_status_name(args[i].failed), args[i].error);
        CHECK(atomic_load(&args[i].ran) == 2 * ROUNDS);
    }
    /* Every stream is done: so is every record, seen through either handle. */
    CHECK(event_is_done(event));
    CHECK(event_is_done(imported));
    CHECK_OK(tp_event_destroy(imported));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
