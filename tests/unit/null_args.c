/*
 * Unit tests: every public function refuses NULL pointers with
 * TP_ERR_INVALID_ARGUMENT and a message, and does not crash. A NULL that the API
 * gives a meaning (a device string: the current device; the stream of
 * tp_event_record and tp_event_wait: the current stream) is not tested here.
 */
#include "check.h"

#include <tpevent/tpevent_diagnostics.h>

#define CHECK_REFUSES_NULL(call)                     \
    do {                                             \
        CHECK_STATUS(call, TP_ERR_INVALID_ARGUMENT); \
        CHECK(tp_last_error()[0] != '\0');           \
    } while (0)

static const char device[] = "cpu:0";

static tp_stream *fixture_stream(void)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, device, 0));
    return stream;
}

static tp_event *fixture_event(unsigned flags)
{
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, device, flags));
    return event;
}

static void do_nothing(void *arg)
{
    (void)arg;
}

TEST(null_device_parse)
{
    CHECK_REFUSES_NULL(tp_device_parse("cpu:0", NULL));
    return 0;
}

TEST(null_device_format)
{
    tp_device cpu0 = {TP_DEVICE_CPU, 0};
    CHECK_REFUSES_NULL(tp_device_format(cpu0, NULL, 16));
    return 0;
}

TEST(null_device_count)
{
    CHECK_REFUSES_NULL(tp_device_count("cpu", NULL));
    return 0;
}

TEST(null_device_name)
{
    CHECK_REFUSES_NULL(tp_device_name(device, NULL, 64));
    return 0;
}

TEST(null_backend_get_info)
{
    CHECK_REFUSES_NULL(tp_backend_get_info("cpu", NULL));
    return 0;
}

TEST(null_current_device)
{
    CHECK_REFUSES_NULL(tp_current_device(NULL));
    return 0;
}

TEST(null_stream_create)
{
    CHECK_REFUSES_NULL(tp_stream_create(NULL, device, 0));
    return 0;
}

TEST(null_stream_from_native)
{
    tp_stream *stream = fixture_stream();
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK_REFUSES_NULL(tp_stream_from_native(NULL, device, native));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_destroy)
{
    CHECK_REFUSES_NULL(tp_stream_destroy(NULL));
    return 0;
}

TEST(null_stream_default)
{
    CHECK_REFUSES_NULL(tp_stream_default(device, NULL));
    return 0;
}

TEST(null_stream_current)
{
    CHECK_REFUSES_NULL(tp_stream_current(device, NULL));
    return 0;
}

TEST(null_stream_set_current)
{
    CHECK_REFUSES_NULL(tp_stream_set_current(NULL));
    return 0;
}

TEST(null_stream_query)
{
    tp_stream *stream = fixture_stream();
    bool idle;
    CHECK_REFUSES_NULL(tp_stream_query(NULL, &idle));
    CHECK_REFUSES_NULL(tp_stream_query(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_synchronize)
{
    CHECK_REFUSES_NULL(tp_stream_synchronize(NULL));
    return 0;
}

TEST(null_stream_wait_event)
{
    tp_stream *stream = fixture_stream();
    tp_event *event = fixture_event(TP_EVENT_DEFAULT);
    CHECK_REFUSES_NULL(tp_stream_wait_event(NULL, event));
    CHECK_REFUSES_NULL(tp_stream_wait_event(stream, NULL));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_wait_stream)
{
    tp_stream *stream = fixture_stream();
    CHECK_REFUSES_NULL(tp_stream_wait_stream(NULL, stream));
    CHECK_REFUSES_NULL(tp_stream_wait_stream(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_record_event)
{
    tp_stream *stream = fixture_stream();
    tp_event *event = NULL;
    CHECK_REFUSES_NULL(tp_stream_record_event(NULL, &event));
    CHECK(event == NULL);
    CHECK_REFUSES_NULL(tp_stream_record_event(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_launch_host_fn)
{
    CHECK_REFUSES_NULL(tp_stream_launch_host_fn(NULL, do_nothing, NULL));
    return 0;
}

TEST(null_host_fn_refused)
{
    tp_stream *stream = fixture_stream();
    CHECK_REFUSES_NULL(tp_stream_launch_host_fn(stream, NULL, NULL));
    /* Nothing was queued: the stream is idle and still works. */
    bool idle = false;
    CHECK_OK(tp_stream_query(stream, &idle));
    CHECK(idle);
    CHECK_OK(tp_stream_launch_host_fn(stream, do_nothing, NULL));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_native)
{
    tp_stream *stream = fixture_stream();
    void *native;
    CHECK_REFUSES_NULL(tp_stream_native(NULL, &native));
    CHECK_REFUSES_NULL(tp_stream_native(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_device)
{
    tp_stream *stream = fixture_stream();
    tp_device out;
    CHECK_REFUSES_NULL(tp_stream_device(NULL, &out));
    CHECK_REFUSES_NULL(tp_stream_device(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_stream_priority)
{
    tp_stream *stream = fixture_stream();
    int priority;
    CHECK_REFUSES_NULL(tp_stream_priority(NULL, &priority));
    CHECK_REFUSES_NULL(tp_stream_priority(stream, NULL));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_event_create)
{
    CHECK_REFUSES_NULL(tp_event_create(NULL, device, TP_EVENT_DEFAULT));
    return 0;
}

TEST(null_event_destroy)
{
    CHECK_REFUSES_NULL(tp_event_destroy(NULL));
    return 0;
}

TEST(null_event_record)
{
    tp_stream *stream = fixture_stream();
    CHECK_REFUSES_NULL(tp_event_record(NULL, stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_event_query)
{
    tp_event *event = fixture_event(TP_EVENT_DEFAULT);
    bool done;
    CHECK_REFUSES_NULL(tp_event_query(NULL, &done));
    CHECK_REFUSES_NULL(tp_event_query(event, NULL));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(null_event_synchronize)
{
    CHECK_REFUSES_NULL(tp_event_synchronize(NULL));
    return 0;
}

TEST(null_event_wait)
{
    tp_stream *stream = fixture_stream();
    CHECK_REFUSES_NULL(tp_event_wait(NULL, stream));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

TEST(null_event_elapsed_time)
{
    tp_event *start = fixture_event(TP_EVENT_TIMING);
    tp_event *end = fixture_event(TP_EVENT_TIMING);
    float ms;
    CHECK_REFUSES_NULL(tp_event_elapsed_time(NULL, end, &ms));
    CHECK_REFUSES_NULL(tp_event_elapsed_time(start, NULL, &ms));
    CHECK_REFUSES_NULL(tp_event_elapsed_time(start, end, NULL));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_event_destroy(start));
    return 0;
}

TEST(null_event_device)
{
    tp_event *event = fixture_event(TP_EVENT_DEFAULT);
    tp_device out;
    CHECK_REFUSES_NULL(tp_event_device(NULL, &out));
    CHECK_REFUSES_NULL(tp_event_device(event, NULL));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(null_event_flags)
{
    tp_event *event = fixture_event(TP_EVENT_DEFAULT);
    unsigned flags;
    CHECK_REFUSES_NULL(tp_event_flags(NULL, &flags));
    CHECK_REFUSES_NULL(tp_event_flags(event, NULL));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(null_event_ipc_handle)
{
    tp_event *event = fixture_event(TP_EVENT_INTERPROCESS);
    tp_ipc_handle handle;
    CHECK_REFUSES_NULL(tp_event_ipc_handle(NULL, &handle));
    CHECK_REFUSES_NULL(tp_event_ipc_handle(event, NULL));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(null_event_from_ipc_handle)
{
    tp_ipc_handle handle;
    memset(&handle, 0, sizeof handle);
    tp_event *event = NULL;
    CHECK_REFUSES_NULL(tp_event_from_ipc_handle(NULL, device, &handle));
    CHECK_REFUSES_NULL(tp_event_from_ipc_handle(&event, device, NULL));
    CHECK(event == NULL);
    return 0;
}

TEST(null_native_sample)
{
    CHECK_REFUSES_NULL(tp_native_sample(device, TP_NATIVE_RECORD, NULL, 4));
    return 0;
}

TEST(null_wait_mechanism)
{
    char text[8];
    CHECK_REFUSES_NULL(tp_device_wait_mechanism(device, NULL, sizeof text));
    CHECK_REFUSES_NULL(tp_device_wait_mechanism(device, text, 0));
    return 0;
}

TEST(null_backend_status_reason_allowed)
{
    /* reason is optional. */
    CHECK_OK(tp_backend_status("cpu", NULL));
    tp_status cuda = tp_backend_status("cuda", NULL);
    CHECK(cuda == TP_OK || cuda == TP_ERR_BACKEND_UNAVAILABLE);
    return 0;
}

TEST(null_interop)
{
    int least = 0, greatest = 0;
    CHECK_REFUSES_NULL(tp_stream_priority_range(device, NULL, &greatest));
    CHECK_REFUSES_NULL(tp_stream_priority_range(device, &least, NULL));
    CHECK_REFUSES_NULL(tp_event_native(NULL, NULL));
    tp_event *event = fixture_event(TP_EVENT_DEFAULT);
    CHECK_REFUSES_NULL(tp_event_native(event, NULL));
    CHECK_OK(tp_event_destroy(event));
    void *native = NULL;
    CHECK_REFUSES_NULL(tp_event_native(NULL, &native));
    CHECK_REFUSES_NULL(tp_event_from_native(NULL, device, &native));
    return 0;
}
