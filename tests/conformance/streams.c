/* Conformance: the stream calls that the twelve rules do not cover on their own. */
#include "support.h"

#include <stdint.h>
#include <stdio.h>

/* Skips the test, saying why, on a device whose native queue names no stream of its
 * own to wrap (Vulkan: one VkQueue shared by the device's streams, vk_backend.h). */
static bool from_native_supported(const char *device)
{
    tp_stream *stream = new_stream(device), *wrapper = NULL;
    void *native = NULL;
    tp_status status = tp_stream_native(stream, &native);
    if (status == TP_OK)
        status = tp_stream_from_native(&wrapper, device, native);
    if (status == TP_ERR_UNSUPPORTED)
        printf("skipped: %s\n", tp_last_error());
    if (wrapper)
        (void)tp_stream_destroy(wrapper);
    (void)tp_stream_destroy(stream);
    return status != TP_ERR_UNSUPPORTED;
}

#define REQUIRE_FROM_NATIVE(device)     \
    if (!from_native_supported(device)) \
    return TEST_SKIP

TEST(stream_record_event_null_creates_timing_event)
{
    tp_stream *stream = new_stream(env->device);
    tp_event *event = NULL;
    CHECK_OK(tp_stream_record_event(stream, &event));
    CHECK(event != NULL);
    unsigned flags = 0;
    CHECK_OK(tp_event_flags(event, &flags));
    CHECK((flags & TP_EVENT_TIMING) != 0);
    tp_device want, got;
    CHECK_OK(tp_device_parse(env->device, &want));
    CHECK_OK(tp_event_device(event, &got));
    CHECK(got.type == want.type && got.index == want.index);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(stream_record_event_pair_gives_elapsed)
{
    /* The seed's example: e1 = s.record_event(); e2 = s.record_event(); e1.elapsed_time(e2). */
    enum { work_ms = 20 };
    tp_stream *stream = new_stream(env->device);
    tp_event *start = NULL, *end = NULL;
    CHECK_OK(tp_stream_record_event(stream, &start));
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)work_ms));
    CHECK_OK(tp_stream_record_event(stream, &end));
    CHECK(start != end);
    CHECK_OK(tp_event_synchronize(end));
    float ms = -1.0f;
    CHECK_OK(tp_event_elapsed_time(start, end, &ms));
    CHECK(ms >= (float)work_ms);
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(stream_record_event_records_given_event)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    tp_event *given = event;

    gate_launch(&g, stream);
    CHECK_OK(tp_stream_record_event(stream, &given));
    CHECK(given == event);
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(gate_passed(&g) == 1);
    unsigned flags = 0xdeadu;
    CHECK_OK(tp_event_flags(event, &flags));
    CHECK(flags == TP_EVENT_DEFAULT);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(stream_wait_stream_holds_back_later_work)
{
    gate g;
    gate_init(&g);
    tp_stream *held = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, held);
    CHECK_OK(tp_stream_wait_stream(waiter, held));
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_pending_for(after_wait, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(after_wait));
    CHECK(gate_passed(&g) == 1);

    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(held));
    gate_destroy(&g);
    return 0;
}

TEST(stream_wait_stream_ignores_work_submitted_after)
{
    gate g;
    gate_init(&g);
    tp_stream *other = new_stream(env->device);
    tp_stream *waiter = new_stream(env->device);
    tp_event *after_wait = new_event(env->device, TP_EVENT_DEFAULT);

    CHECK_OK(tp_stream_wait_stream(waiter, other));
    gate_launch(&g, other);
    CHECK_OK(tp_event_record(after_wait, waiter));
    CHECK(event_done_within(after_wait, EVENTUALLY_SECONDS));
    CHECK(gate_passed(&g) == 0);
    gate_open(&g);

    CHECK_OK(tp_stream_synchronize(other));
    CHECK_OK(tp_event_destroy(after_wait));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(other));
    gate_destroy(&g);
    return 0;
}

TEST(stream_native_round_trip)
{
    REQUIRE_FROM_NATIVE(env->device);
    tp_stream *stream = new_stream(env->device);
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK(native != NULL);
    tp_stream *wrapper = NULL;
    CHECK_OK(tp_stream_from_native(&wrapper, env->device, native));
    CHECK(wrapper != NULL);
    void *again = NULL;
    CHECK_OK(tp_stream_native(wrapper, &again));
    CHECK(again == native);
    tp_device want, got;
    CHECK_OK(tp_device_parse(env->device, &want));
    CHECK_OK(tp_stream_device(wrapper, &got));
    CHECK(got.type == want.type && got.index == want.index);
    CHECK_OK(tp_stream_destroy(wrapper));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(stream_from_native_is_the_same_queue)
{
    REQUIRE_FROM_NATIVE(env->device);
    /* Work on the wrapper lines up behind work on the stream it wraps. */
    gate g;
    gate_init(&g);
    order_log log;
    order_log_init(&log);
    order_item first = {&log, 1}, second = {&log, 2};
    tp_stream *stream = new_stream(env->device);
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    tp_stream *wrapper = NULL;
    CHECK_OK(tp_stream_from_native(&wrapper, env->device, native));
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);

    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, order_log_host_fn, &first));
    CHECK_OK(tp_stream_launch_host_fn(wrapper, order_log_host_fn, &second));
    CHECK_OK(tp_event_record(event, wrapper));
    CHECK(event_pending_for(event, 50));
    gate_open(&g);
    CHECK_OK(tp_event_synchronize(event));
    CHECK(log.count == 2 && log.values[0] == 1 && log.values[1] == 2);

    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(wrapper));
    CHECK_OK(tp_stream_destroy(stream));
    order_log_destroy(&log);
    gate_destroy(&g);
    return 0;
}

TEST(stream_from_native_destroy_leaves_native_working)
{
    REQUIRE_FROM_NATIVE(env->device);
    tp_stream *stream = new_stream(env->device);
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    tp_stream *wrapper = NULL;
    CHECK_OK(tp_stream_from_native(&wrapper, env->device, native));
    CHECK_OK(tp_stream_destroy(wrapper));

    atomic_int ran = 0;
    tp_event *event = new_event(env->device, TP_EVENT_DEFAULT);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &ran));
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&ran) == 1);
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(stream_query_reports_pending_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    CHECK(stream_is_idle(stream));
    gate_launch(&g, stream);
    CHECK(!stream_is_idle(stream));
    gate_open(&g);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(stream_is_idle(stream));
    CHECK(gate_passed(&g) == 1);
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(stream_synchronize_waits_for_gated_work)
{
    gate g;
    gate_init(&g);
    tp_stream *stream = new_stream(env->device);
    atomic_int after = 0;
    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    gate_opener opener;
    gate_open_later(&opener, &g, 100);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(gate_passed(&g) == 1);
    CHECK(atomic_load(&after) == 1);
    gate_opener_join(&opener);
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(stream_default_is_the_same_every_time)
{
    tp_stream *first = NULL, *second = NULL;
    CHECK_OK(tp_stream_default(env->device, &first));
    CHECK_OK(tp_stream_default(env->device, &second));
    CHECK(first != NULL && first == second);
    tp_device want, got;
    CHECK_OK(tp_device_parse(env->device, &want));
    CHECK_OK(tp_stream_device(first, &got));
    CHECK(got.type == want.type && got.index == want.index);
    return 0;
}

TEST(stream_reports_its_device)
{
    tp_stream *stream = new_stream(env->device);
    tp_device want, got;
    CHECK_OK(tp_device_parse(env->device, &want));
    CHECK_OK(tp_stream_device(stream, &got));
    CHECK(got.type == want.type && got.index == want.index);
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

static int created_priority(const char *device, int asked)
{
    tp_stream *stream = NULL;
    int priority = 12345;
    CHECK_OK(tp_stream_create(&stream, device, asked));
    CHECK_OK(tp_stream_priority(stream, &priority));
    CHECK(priority != 12345);
    CHECK_OK(tp_stream_destroy(stream));
    return priority;
}

TEST(stream_priority_clamped_and_reported)
{
    /* As on CUDA: lower runs first, 0 is the lowest priority, the range ends at
     * some highest priority at or below 0. */
    int very_high = created_priority(env->device, -1000);
    int high = created_priority(env->device, -100);
    int one_up = created_priority(env->device, -1);
    int normal = created_priority(env->device, 0);
    int low = created_priority(env->device, 1000);
    CHECK(normal == 0);
    CHECK(low == 0);
    CHECK(very_high == high);
    CHECK(very_high <= one_up && one_up <= normal);
    CHECK(very_high > -100);
    /* Within the range, a value is kept as asked. */
    CHECK(created_priority(env->device, very_high) == very_high);
    return 0;
}

TEST(device_synchronize_waits_for_all_streams)
{
    gate g;
    gate_init(&g);
    tp_stream *a = new_stream(env->device);
    tp_stream *b = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    atomic_int after = 0;

    tp_stream *streams[] = {a, b, default_stream};
    for (int i = 0; i < 3; i++) {
        gate_launch(&g, streams[i]);
        CHECK_OK(tp_stream_launch_host_fn(streams[i], counter_host_fn, &after));
    }
    gate_opener opener;
    gate_open_later(&opener, &g, 100);
    CHECK_OK(tp_device_synchronize(env->device));
    CHECK(gate_passed(&g) == 3);
    CHECK(atomic_load(&after) == 3);
    gate_opener_join(&opener);

    CHECK_OK(tp_stream_destroy(b));
    CHECK_OK(tp_stream_destroy(a));
    gate_destroy(&g);
    return 0;
}

TEST(device_synchronize_null_is_current_device)
{
    gate g;
    gate_init(&g);
    CHECK_OK(tp_set_device(env->device));
    tp_stream *stream = new_stream(env->device);
    atomic_int after = 0;
    gate_launch(&g, stream);
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &after));
    gate_opener opener;
    gate_open_later(&opener, &g, 100);
    CHECK_OK(tp_device_synchronize(NULL));
    CHECK(atomic_load(&after) == 1);
    gate_opener_join(&opener);
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

TEST(device_synchronize_idle_device_returns)
{
    tp_stream *stream = new_stream(env->device);
    CHECK_OK(tp_device_synchronize(env->device));
    CHECK_OK(tp_device_synchronize(env->device));
    CHECK(stream_is_idle(stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
