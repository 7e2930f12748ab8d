/* Conformance, rule 11: the current stream is per thread and per device, the
 * default stream at first. */
#include "support.h"

TEST(rule11_current_stream_starts_as_default)
{
    tp_stream *current = NULL, *default_stream = NULL;
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK(current != NULL);
    CHECK(current == default_stream);
    return 0;
}

typedef struct current_probe {
    const char *device;
    tp_stream *seen_first;
    tp_stream *set_to;
} current_probe;

static void *probe_current(void *arg)
{
    current_probe *probe = arg;
    CHECK_OK(tp_stream_current(probe->device, &probe->seen_first));
    CHECK_OK(tp_stream_set_current(probe->set_to));
    tp_stream *now = NULL;
    CHECK_OK(tp_stream_current(probe->device, &now));
    CHECK(now == probe->set_to);
    return NULL;
}

TEST(rule11_current_stream_is_per_thread)
{
    tp_stream *mine = new_stream(env->device);
    tp_stream *theirs = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_OK(tp_stream_set_current(mine));

    current_probe probe = {env->device, NULL, theirs};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, probe_current, &probe) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(probe.seen_first == default_stream); /* not `mine` */

    tp_stream *current = NULL;
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK(current == mine); /* not `theirs` */

    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_stream_destroy(theirs));
    CHECK_OK(tp_stream_destroy(mine));
    return 0;
}

TEST(rule11_current_stream_is_per_device)
{
    REQUIRE_PEER(env);
    tp_stream *stream = new_stream(env->device);
    tp_stream *peer_default = NULL, *peer_current = NULL, *current = NULL;
    CHECK_OK(tp_stream_set_current(stream));
    CHECK_OK(tp_stream_default(env->peer, &peer_default));
    CHECK_OK(tp_stream_current(env->peer, &peer_current));
    CHECK(peer_current == peer_default);
    CHECK_OK(tp_stream_current(env->device, &current));
    CHECK(current == stream);

    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(rule11_record_null_stream_uses_current_stream)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_stream_set_current(held));
    CHECK_OK(tp_event_record(event, NULL));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_stream_set_current(default_stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}
