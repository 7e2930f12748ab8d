/*
 * A recorder in another PID namespace that exits with its record pending: its pid
 * means nothing here, so the backend knows it gone by the lock its handle held on the
 * event's shared memory (backends/cpu/cpu_ipc_region.c, backends/gpu/gpu_ipc_page.c).
 * Query and synchronize then fail within DEATH_NOTICED_SECONDS, never hang; on the
 * CPU a stream waiting on the record goes on (a GPU stream's memory wait cannot be
 * called off: it stays held, as on a dead exporter's CUDA IPC event).
 */
#include "ipc_support.h"
#include "namespace_child.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TEST_NAME "socket_recorder_in_another_namespace_exits_with_its_record_pending"

/* The child: receives the event, records it on a held stream, and exits with the
 * record pending once told to. */
static int recorder_child(const test_env *env, int socket)
{
    tp_event *event = NULL;
    CHECK_OK(tp_event_ipc_recv(&event, socket, env->device));
    tp_stream *stream = new_stream(env->device);
    tp_hold *held = NULL;
    CHECK_OK(tp_stream_hold(stream, INT64_MAX, &held));
    CHECK_OK(tp_event_record(event, stream));
    namespace_child_say(socket, 'r');
    namespace_child_expect(socket, 'x', 60);
    fflush(NULL);
    _exit(0); /* the record never reached */
}

TEST(socket_recorder_in_another_namespace_exits_with_its_record_pending)
{
    int child_socket = namespace_child_socket();
    if (child_socket >= 0)
        return recorder_child(env, child_socket);
    if (!socket_ipc_supported(env->device))
        return TEST_SKIP;
    bool cpu = strncmp(env->device, "cpu", 3) == 0;
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_stream *waiter = cpu ? new_stream(env->device) : NULL;
    tp_event *after_wait = cpu ? new_event(env->device, TP_EVENT_DEFAULT) : NULL;
    namespace_child child;
    if (!namespace_child_start(&child, env->device, TEST_NAME))
        return TEST_SKIP;
    CHECK_OK(tp_event_ipc_send(event, child.socket));
    namespace_child_expect(child.socket, 'r', 60);
    CHECK(event_pending_for(event, 50)); /* the child lives: its record is pending */
    if (cpu) {
        CHECK_OK(tp_event_wait(event, waiter));
        CHECK_OK(tp_event_record(after_wait, waiter));
    }
    namespace_child_say(child.socket, 'x');
    namespace_child_join(&child, 60);

    double start = monotonic_seconds();
    CHECK_STATUS(tp_event_synchronize_for(event, 10 * INT64_C(1000000000)), TP_ERR_BACKEND);
    CHECK_ERROR_MENTIONS("exited before reaching it");
    CHECK(monotonic_seconds() - start < DEATH_NOTICED_SECONDS);
    bool done = true;
    CHECK_STATUS(tp_event_query(event, &done), TP_ERR_BACKEND);
    if (cpu) { /* the stream waiting on it gives up and goes on */
        CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(after_wait));
        CHECK_OK(tp_stream_destroy(waiter));
    }
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
