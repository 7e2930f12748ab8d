/* Conformance, rules 1-4: which device an event belongs to, lazy creation, what a
 * record marks, and what query says. */
#include "support.h"

/* ---------------------------------------------------------------- rule 1 */

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

/* ---------------------------------------------------------------- rule 2 */

TEST(rule02_create_destroy_many_unrecorded)
{
    for (int i = 0; i < 10000; i++) {
        tp_event *event = new_event(env->device, (unsigned)(i % 4) & TP_EVENT_FLAGS_ALL);
        CHECK_OK(tp_event_destroy(event));
    }
    enum { alive = 1000 };
    static tp_event *events[alive];
    for (int i = 0; i < alive; i++)
        events[i] = new_event(env->device, TP_EVENT_TIMING);
    for (int i = 0; i < alive; i++)
        CHECK_OK(tp_event_destroy(events[i]));

    /* The device still works for an event that is recorded. */
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule02_unrecorded_event_is_usable)
{
    /* With no native event yet, every operation still behaves as on a recorded
     * event whose record was reached. */
    tp_event *event = new_event(env->device, TP_EVENT_BLOCKING);
    tp_stream *stream = new_stream(env->device);
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_wait(event, stream));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(rule02_flags_reported_for_every_valid_combination)
{
    static const unsigned combos[] = {
        TP_EVENT_DEFAULT,
        TP_EVENT_TIMING,
        TP_EVENT_BLOCKING,
        TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS,
        TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING,
    };
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
        tp_event *event = new_event(env->device, combos[i]);
        unsigned flags = 0xdeadu;
        CHECK_OK(tp_event_flags(event, &flags));
        CHECK(flags == combos[i]);
        CHECK_OK(tp_event_destroy(event));
    }
    return 0;
}

/* ---------------------------------------------------------------- rule 3 */

TEST(rule03_record_waits_for_earlier_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    CHECK(event_is_done(event));

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_record_ignores_later_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, stream));
    gate_launch(&g, stream);
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_rerecord_replaces_pending_with_reached)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK(!event_is_done(event));
    CHECK_OK(tp_event_record(event, free_stream));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_synchronize(event)); /* the latest record: must not wait for the gate */
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(held));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(free_stream));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_rerecord_replaces_reached_with_pending)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *free_stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, free_stream));
    CHECK_OK(tp_event_synchronize(event));
    gate_launch(&g, held);
    CHECK_OK(tp_event_record(event, held));
    CHECK(event_pending_for(event, 50));

    gate_opener opener;
    gate_open_later(&opener, &g, 50);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    gate_opener_join(&opener);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(free_stream));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(rule03_record_on_same_stream_again_moves_the_mark)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_record(event, stream));
    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* ---------------------------------------------------------------- rule 4 */

TEST(rule04_never_recorded_query_is_done)
{
    tp_event *plain = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *timed = new_event(env->device, TP_EVENT_TIMING | TP_EVENT_BLOCKING);
    bool done = false;
    CHECK_OK(tp_event_query(plain, &done));
    CHECK(done);
    done = false;
    CHECK_OK(tp_event_query(timed, &done));
    CHECK(done);
    CHECK_OK(tp_event_destroy(timed));
    CHECK_OK(tp_event_destroy(plain));
    return 0;
}

typedef struct query_call {
    tp_event *event;
    tp_status status;
    bool done;
} query_call;

static void query_once(void *arg)
{
    query_call *call = arg;
    call->status = tp_event_query(call->event, &call->done);
}

TEST(rule04_query_of_pending_record_does_not_block)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_BLOCKING);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    query_call call = {event, TP_ERR_BACKEND, true};
    CHECK(call_returns_within(query_once, &call, EVENTUALLY_SECONDS));
    CHECK_OK(call.status);
    CHECK(!call.done);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(rule04_query_is_done_once_record_reached)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_TIMING);
    atomic_int ran = 0;
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(event, stream));
    CHECK(event_done_within(event, EVENTUALLY_SECONDS));
    CHECK(atomic_load(&ran) == 1);
    /* Asking again does not change the answer. */
    CHECK(event_is_done(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
