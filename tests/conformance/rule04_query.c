/* Conformance, rule 4: query never blocks; it is true if the event was never
 * recorded or its latest record was reached. */
#include "support.h"

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
