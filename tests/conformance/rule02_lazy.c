/* Conformance, rule 2: the native event is created lazily, so that an event never
 * recorded costs nothing and is still usable. */
#include "support.h"

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
        TP_EVENT_DEFAULT,      TP_EVENT_TIMING,
        TP_EVENT_BLOCKING,     TP_EVENT_TIMING | TP_EVENT_BLOCKING,
        TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING,
    };
    bool ipc = ipc_supported(env->device, false); /* rule 8's own tests say it when not */
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
        if ((combos[i] & TP_EVENT_INTERPROCESS) && !ipc)
            continue;
        tp_event *event = new_event(env->device, combos[i]);
        unsigned flags = 0xdeadu;
        CHECK_OK(tp_event_flags(event, &flags));
        CHECK(flags == combos[i]);
        CHECK_OK(tp_event_destroy(event));
    }
    return 0;
}
