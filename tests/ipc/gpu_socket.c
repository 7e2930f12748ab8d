/*
 * What a GPU backend refuses of events handed over a Unix socket, each with its
 * reason (backends/gpu/gpu_ipc_page.c): an event shared one way only (no IPC handle
 * of a sent event, no send of an event exported by handle), and records and waits
 * inside a capture (a graph would write and wait on one counter value at every
 * launch). The CPU allows both ways at once (one region): these run on GPU devices.
 * And what a record and a wait of such an event ask the runtime, counted on the fake
 * GPU (tests/gpu_fake/probe_calls.h).
 */
#include "ipc_support.h"
#include "native_runtime.h"
#include "tests/gpu_fake/probe_calls.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static bool gpu_device(const char *device)
{
    if (strncmp(device, "cpu", 3) == 0) {
        printf("skipped: a GPU backend's test (the CPU shares an event both ways at once)\n");
        return false;
    }
    return test_skip_unless_device(device, "device") == 0 && ipc_supported(device, true);
}

TEST(gpu_socket_event_is_shared_one_way)
{
    if (!gpu_device(env->device))
        return TEST_SKIP;
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    tp_ipc_handle handle;
    tp_event *exported = new_event(env->device, TP_EVENT_INTERPROCESS);
    CHECK_OK(tp_event_ipc_handle(exported, &handle));
    CHECK_STATUS(tp_event_ipc_send(exported, pair[0]), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("IPC handles already");

    tp_event *sent = new_event(env->device, TP_EVENT_INTERPROCESS);
    CHECK_OK(tp_event_ipc_send(sent, pair[0]));
    CHECK_STATUS(tp_event_ipc_handle(sent, &handle), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("handed over a socket");
    tp_event *received = NULL;
    CHECK_OK(tp_event_ipc_recv(&received, pair[1], NULL));
    CHECK_STATUS(tp_event_ipc_handle(received, &handle), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_event_destroy(received));
    CHECK_OK(tp_event_destroy(sent));
    CHECK_OK(tp_event_destroy(exported));
    close(pair[0]);
    close(pair[1]);
    return 0;
}

TEST(gpu_socket_event_refused_inside_a_capture)
{
    if (!gpu_device(env->device))
        return TEST_SKIP;
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    tp_stream *stream = new_stream(env->device);
    tp_event *sent = new_event(env->device, TP_EVENT_INTERPROCESS);
    CHECK_OK(tp_event_ipc_send(sent, pair[0]));
    tp_hold *held = NULL;
    CHECK_OK(tp_stream_hold(stream, INT64_MAX, &held));
    CHECK_OK(tp_event_record(sent, stream)); /* pending: a wait on it would be captured */
    tp_stream *capturing = new_stream(env->device);
    CHECK_OK(tp_stream_begin_capture(capturing));
    CHECK_STATUS(tp_event_record(sent, capturing), TP_ERR_CAPTURING);
    CHECK_ERROR_MENTIONS("inside a capture");
    CHECK_STATUS(tp_stream_wait_event(capturing, sent), TP_ERR_CAPTURING);
    tp_graph *graph = NULL;
    CHECK_OK(tp_stream_end_capture(capturing, &graph));
    CHECK_OK(tp_graph_destroy(graph));
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_event_synchronize(sent));
    CHECK_OK(tp_event_destroy(sent));
    CHECK_OK(tp_stream_destroy(capturing));
    CHECK_OK(tp_stream_destroy(stream));
    close(pair[0]);
    close(pair[1]);
    return 0;
}

/* A record is one stream write and a wait one stream wait on the page and a marker
 * after it (rule 17's place given back once the stream passed): nothing else of the
 * runtime's on a stream that no capture involves (is-capturing is asked only where
 * the stream says a capture may be, as on every other GPU record and wait). Counted
 * on the caller's thread: the device's poller asks about the markers meanwhile. */
TEST(gpu_socket_record_and_wait_ask_the_runtime_nothing_else)
{
    if (!gpu_device(env->device))
        return TEST_SKIP;
    enum { OPS = 20, WAITS = 8 }; /* waits: each in a place of the fake's window (10) */
    tp_stream *stream = new_stream(env->device);
    const probe_calls *probes = fake_gpu_symbol(PROBE_CALLS_FAKE_SYMBOL); /* the module is loaded now */
    if (!probes) {
        printf("skipped: %s has no runtime call counter (only the fake GPU counts calls)\n", env->device);
        CHECK_OK(tp_stream_destroy(stream));
        return TEST_SKIP;
    }
    tp_stream *waiter = new_stream(env->device);
    tp_event *sent = new_event(env->device, TP_EVENT_INTERPROCESS);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK_OK(tp_event_ipc_send(sent, pair[0]));
    unsigned long before = probes->thread_runtime_calls();
    for (int i = 0; i < OPS; i++)
        CHECK_OK(tp_event_record(sent, stream)); /* counted: the write */
    unsigned long records = probes->thread_runtime_calls() - before;
    CHECK_OK(tp_stream_synchronize(stream));

    tp_hold *held = NULL;
    CHECK_OK(tp_stream_hold(stream, INT64_MAX, &held));
    CHECK_OK(tp_event_record(sent, stream)); /* pending: each wait reaches the runtime */
    before = probes->thread_runtime_calls();
    for (int i = 0; i < WAITS; i++)
        CHECK_OK(tp_stream_wait_event(waiter, sent)); /* the fake counts no stream wait */
    unsigned long waits = probes->thread_runtime_calls() - before;
    CHECK_OK(tp_hold_release(held));
    CHECK_OK(tp_stream_synchronize(waiter));
    printf("%d records: %lu runtime calls; %d waits: %lu\n", OPS, records, WAITS, waits);
    CHECK(records < 2 * OPS); /* one write each; an is-capturing each would double it */
    /* The marker recorded after each (and a native event made for it where the pool
     * has none reached): an is-capturing each would be one more. */
    CHECK(waits <= 2 * WAITS);
    CHECK_OK(tp_event_destroy(sent));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    close(pair[0]);
    close(pair[1]);
    return 0;
}
