/*
 * TP_EVENT_BLOCKING: a thread in tp_event_synchronize sleeps (rule 5). Measured
 * with getrusage(RUSAGE_THREAD) on the synchronizing thread while a gate keeps the
 * record pending for SYNCHRONIZE_MS: under MAX_BLOCKING_SHARE of one CPU. The
 * figure without the flag (the backend may spin: CPU, a short spin then sleep;
 * CUDA, a spin) is printed, not bounded.
 */
#include "ipc_support.h"

#include <stdio.h>

#define SYNCHRONIZE_MS 200
#define MAX_BLOCKING_SHARE 0.10

typedef void (*release_fn)(void *arg);

/* The share of one CPU a thread used synchronizing the pending event until
 * `release` let it be reached, SYNCHRONIZE_MS later. */
static double synchronize_cpu_share(tp_event *event, release_fn release, void *arg, const char *label)
{
    CHECK(!event_is_done(event));
    async_call call;
    async_synchronize(&call, event);
    sleep_ms(SYNCHRONIZE_MS);
    CHECK(!atomic_load(&call.returned));
    release(arg);
    CHECK(async_returned_within(&call, EVENTUALLY_SECONDS));
    CHECK_STATUS(call.status, TP_OK);
    double wall = call.finished - call.started;
    CHECK(wall >= SYNCHRONIZE_MS * 0.75 / 1000.0);
    double share = call.cpu_seconds / wall;
    printf("%s: synchronize waited %.0f ms, used %.3f ms of CPU: %.2f%% of one CPU\n", label, wall * 1000.0,
           call.cpu_seconds * 1000.0, share * 100.0);
    fflush(stdout);
    return share;
}

static void open_gate_fn(void *g)
{
    gate_open(g);
}

static double local_event_share(const char *device, unsigned flags, const char *label)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(device);
    tp_event *event = new_event(device, flags);
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    double share = synchronize_cpu_share(event, open_gate_fn, &g, label);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return share;
}

TEST(blocking_synchronize_sleeps)
{
    double blocking = local_event_share(env->device, TP_EVENT_BLOCKING, "TP_EVENT_BLOCKING");
    double shared = local_event_share(env->device, TP_EVENT_BLOCKING | TP_EVENT_INTERPROCESS,
                                      "TP_EVENT_BLOCKING | TP_EVENT_INTERPROCESS");
    double spinning = local_event_share(env->device, TP_EVENT_DEFAULT, "without TP_EVENT_BLOCKING");
    (void)spinning; /* allowed to spin: printed for the record, not bounded */
    CHECK(blocking < MAX_BLOCKING_SHARE);
    CHECK(shared < MAX_BLOCKING_SHARE);
    return 0;
}

static void open_peer_gates_fn(void *p)
{
    peer_call(p, PEER_OPEN_GATES, 0, NULL);
}

/* An event of the peer's with `flags`, imported here and synchronized while its
 * record waits behind the peer's gate. *imported_flags: what the import reports. */
static double imported_event_share(peer *producer, const char *device, unsigned flags, unsigned *imported_flags,
                                   const char *label)
{
    peer_call(producer, PEER_CREATE, flags, NULL);
    peer_call(producer, PEER_RECORD_GATED, 0, NULL);
    tp_ipc_handle handle = peer_call(producer, PEER_EXPORT, 0, NULL).handle;
    tp_event *event = NULL;
    CHECK_OK(tp_event_from_ipc_handle(&event, device, &handle));
    CHECK_OK(tp_event_flags(event, imported_flags));
    double share = synchronize_cpu_share(event, open_peer_gates_fn, producer, label);
    CHECK_OK(tp_event_destroy(event));
    peer_call(producer, PEER_DESTROY, 0, NULL);
    return share;
}

TEST(blocking_synchronize_of_imported_event_sleeps)
{
    peer producer;
    peer_start(&producer, env->device, -1);
    unsigned flags = 0;
    double blocking = imported_event_share(&producer, env->device, TP_EVENT_BLOCKING, &flags,
                                           "imported, exported with TP_EVENT_BLOCKING");
    if (flags & TP_EVENT_BLOCKING)
        CHECK(blocking < MAX_BLOCKING_SHARE);
    else
        printf("the imported event does not report TP_EVENT_BLOCKING on %s: its figure is not bounded\n", env->device);
    unsigned spinning_flags = 0;
    (void)imported_event_share(&producer, env->device, TP_EVENT_DEFAULT, &spinning_flags,
                               "imported, exported without TP_EVENT_BLOCKING");
    CHECK(!(spinning_flags & TP_EVENT_BLOCKING));
    peer_finish(&producer);
    return 0;
}
