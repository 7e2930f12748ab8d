/* Conformance, rule 1: an event belongs to its device; recording it on a stream of
 * another device is TP_ERR_DEVICE_MISMATCH, and any stream may wait on it. */
#include "support.h"

TEST(rule01_event_reports_its_device)
{
    tp_device want, got;
    CHECK_OK(tp_device_parse(env->device, &want));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_device(event, &got));
    CHECK(got.type == want.type);
    CHECK(got.index == want.index);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(rule01_record_on_peer_stream_is_device_mismatch)
{
    REQUIRE_PEER(env);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_stream *peer_stream = new_stream(env->peer);
    CHECK_STATUS(tp_event_record(event, peer_stream), TP_ERR_DEVICE_MISMATCH);
    CHECK(tp_last_error()[0] != '\0');
    CHECK_OK(tp_stream_destroy(peer_stream));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(rule01_record_on_peer_default_stream_is_device_mismatch)
{
    REQUIRE_PEER(env);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    tp_stream *peer_default = NULL;
    CHECK_OK(tp_stream_default(env->peer, &peer_default));
    CHECK_STATUS(tp_event_record(event, peer_default), TP_ERR_DEVICE_MISMATCH);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(rule01_refused_record_leaves_event_unrecorded)
{
    REQUIRE_PEER(env);
    tp_event *start = new_event(env->device, TP_EVENT_TIMING);
    tp_event *end = new_event(env->device, TP_EVENT_TIMING);
    tp_stream *stream = new_stream(env->device);
    tp_stream *peer_stream = new_stream(env->peer);
    CHECK_OK(tp_event_record(end, stream));
    CHECK_STATUS(tp_event_record(start, peer_stream), TP_ERR_DEVICE_MISMATCH);
    float ms = -1.0f;
    CHECK_STATUS(tp_event_elapsed_time(start, end, &ms), TP_ERR_NOT_RECORDED);
    CHECK(event_is_done(start));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(peer_stream));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_event_destroy(end));
    return 0;
}

/* A stream of the peer device waits on an event (created with `flags`) recorded
 * behind a closed gate: its later work runs only once the gate opens. */
static int peer_stream_waits(const test_env *env, unsigned flags)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *peer_stream = new_stream(env->peer);
    tp_event *event = new_event(env->device, flags);
    tp_event *after = new_event(env->peer, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_wait(event, peer_stream));
    CHECK_OK(tp_event_record(after, peer_stream));
    CHECK(event_pending_for(after, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(peer_stream));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule01_peer_stream_waits_on_event)
{
    REQUIRE_PEER(env);
    return peer_stream_waits(env, TP_EVENT_DEFAULT);
}

/* CUDA 13 cannot wait on an interprocess event from another device's stream
 * directly (it crashes); the backend relays such waits. */
TEST(rule01_peer_stream_waits_on_interprocess_event)
{
    REQUIRE_PEER(env);
    REQUIRE_IPC(env->device);
    return peer_stream_waits(env, TP_EVENT_INTERPROCESS);
}

TEST(rule01_record_null_stream_uses_event_device)
{
    /* NULL is the current stream of the *event's* device, whatever the thread's
     * current device is. */
    REQUIRE_PEER(env);
    CHECK_OK(tp_set_device(env->peer));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, NULL));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
