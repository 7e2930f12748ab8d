/* Conformance, rule 9 across devices: destroying an event, or the stream that recorded
 * it, while a stream of the peer device waits on its pending record is safe, and the
 * wait still waits for that record: it refers to the record, not to the handles. For
 * plain events and interprocess ones, whose cross-device waits some backends relay
 * (rule01_peer_stream_waits_on_interprocess_event). On one device: rule09_destroy.c;
 * across backends: rule09_destroy_across_backends.c. */
#include "support.h"

#include <stdbool.h>

/* The peer's stream waits on a record held by a closed gate; the event (and, with
 * `destroy_stream`, the stream that recorded it) is destroyed before the gate opens.
 * The peer's later work runs once the gate opens, not before. */
static int destroy_with_peer_wait_pending(const test_env *env, unsigned flags, bool destroy_stream)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->peer);
    tp_event *event = new_event(env->device, flags);
    tp_event *after_wait = new_event(env->peer, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK_OK(tp_event_wait(event, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK_OK(tp_event_destroy(event));
    if (destroy_stream)
        CHECK_OK(tp_stream_destroy(held));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 1);

    if (!destroy_stream) {
        CHECK_OK(tp_stream_synchronize(held));
        CHECK_OK(tp_stream_destroy(held));
    }
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_stream_destroy(waiter));
    gate_destroy(&g);
    return 0;
}

TEST(rule09_across_devices_destroy_event_a_peer_stream_waits_on)
{
    REQUIRE_PEER(env);
    return destroy_with_peer_wait_pending(env, TP_EVENT_DEFAULT, false);
}

TEST(rule09_across_devices_destroy_event_and_its_stream_a_peer_stream_waits_on)
{
    REQUIRE_PEER(env);
    return destroy_with_peer_wait_pending(env, TP_EVENT_DEFAULT, true);
}

TEST(rule09_across_devices_destroy_interprocess_event_and_its_stream_a_peer_stream_waits_on)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    if (!peer_of_the_same_backend(env, "an interprocess event's wait across devices"))
        return TEST_SKIP;
    return destroy_with_peer_wait_pending(env, TP_EVENT_INTERPROCESS, true);
}
