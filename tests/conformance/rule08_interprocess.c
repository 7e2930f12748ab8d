/* Conformance, rule 8: TP_EVENT_INTERPROCESS with TP_EVENT_TIMING is refused at
 * creation; an interprocess event works in its own process as any other. */
#include "support.h"

TEST(rule08_interprocess_with_timing_refused)
{
    static const unsigned refused[] = {
        TP_EVENT_INTERPROCESS | TP_EVENT_TIMING,
        TP_EVENT_INTERPROCESS | TP_EVENT_TIMING | TP_EVENT_BLOCKING,
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tp_event *untouched = (tp_event *)&refused[i];
        tp_event *event = untouched;
        CHECK_STATUS(tp_event_create(&event, env->device, refused[i]), TP_ERR_INVALID_ARGUMENT);
        CHECK(event == untouched);
        CHECK(tp_last_error()[0] != '\0');
    }
    return 0;
}

TEST(rule08_interprocess_event_works_in_process)
{
    REQUIRE_IPC(env->device);
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_wait(event, waiter));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}
