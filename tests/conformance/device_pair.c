/* A check run on two devices or two backends, and two events, one of each. */
#include "device_pair.h"

int on_peer(const test_env *env, pair_check *check)
{
    REQUIRE_PEER(env);
    check(env->device, env->peer);
    return 0;
}

int on_other_backend(const test_env *env, pair_check *check)
{
    const char *other = other_backend(env);
    if (!other)
        return TEST_SKIP;
    check(env->device, other);
    return 0;
}

pair pair_create(const char *a, const char *b, unsigned flags_a, unsigned flags_b)
{
    pair p = {{new_stream(a), new_stream(b)}, {new_event(a, flags_a), new_event(b, flags_b)}};
    return p;
}

void pair_destroy(pair *p)
{
    for (int i = 1; i >= 0; i--) {
        CHECK_OK(tp_event_destroy(p->events[i]));
        CHECK_OK(tp_stream_destroy(p->streams[i]));
    }
}
