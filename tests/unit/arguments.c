/* Unit tests: arguments refused other than NULL pointers — flags, the default
 * stream, IPC on an event not made for it, what the CPU backend does not offer. */
#include "check.h"

#include <tpevent/tpevent_diagnostics.h>

#include <stdint.h>
#include <stdlib.h>

static const char device[] = "cpu:0";

static void check_flags_refused(unsigned flags)
{
    tp_event *untouched = (tp_event *)&untouched;
    tp_event *event = untouched;
    tp_status status = tp_event_create(&event, device, flags);
    if (status != TP_ERR_INVALID_ARGUMENT)
        check_failed(__FILE__, __LINE__, "flags 0x%x: %s, expected TP_ERR_INVALID_ARGUMENT", flags,
                     tp_status_name(status));
    CHECK(event == untouched);
    CHECK(tp_last_error()[0] != '\0');
}

TEST(event_create_refuses_unknown_flag_bits)
{
    check_flags_refused(1u << 4);
    check_flags_refused(TP_EVENT_TIMING | (1u << 5));
    check_flags_refused(1u << 31);
    check_flags_refused(~0u);
    check_flags_refused(~(unsigned)TP_EVENT_FLAGS_ALL);
    return 0;
}

TEST(event_create_refuses_interprocess_with_timing)
{
    check_flags_refused(TP_EVENT_INTERPROCESS | TP_EVENT_TIMING);
    check_flags_refused(TP_EVENT_FLAGS_ALL);
    return 0;
}

TEST(event_create_accepts_every_valid_combination)
{
    for (unsigned flags = 0; flags <= TP_EVENT_FLAGS_ALL; flags++) {
        bool refused = (flags & TP_EVENT_INTERPROCESS) && (flags & TP_EVENT_TIMING);
        if (refused)
            continue;
        tp_event *event = NULL;
        CHECK_OK(tp_event_create(&event, device, flags));
        unsigned got = ~0u;
        CHECK_OK(tp_event_flags(event, &got));
        CHECK(got == flags);
        CHECK_OK(tp_event_destroy(event));
    }
    return 0;
}

TEST(default_stream_destroy_refused)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_default(device, &stream));
    CHECK_STATUS(tp_stream_destroy(stream), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS_WORD("default");
    /* Refused twice, and still usable. */
    CHECK_STATUS(tp_stream_destroy(stream), TP_ERR_INVALID_ARGUMENT);
    CHECK_OK(tp_stream_synchronize(stream));
    return 0;
}

TEST(ipc_handle_refused_without_interprocess)
{
    static const unsigned flag_sets[] = {TP_EVENT_DEFAULT, TP_EVENT_TIMING, TP_EVENT_BLOCKING};
    for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
        tp_event *event = NULL;
        CHECK_OK(tp_event_create(&event, device, flag_sets[i]));
        tp_ipc_handle handle;
        memset(&handle, 0xab, sizeof handle);
        CHECK_STATUS(tp_event_ipc_handle(event, &handle), TP_ERR_INVALID_ARGUMENT);
        CHECK_ERROR_MENTIONS_WORD("interprocess");
        CHECK(handle.bytes[0] == 0xab && handle.bytes[TP_IPC_HANDLE_SIZE - 1] == 0xab);
        CHECK_OK(tp_event_destroy(event));
    }
    return 0;
}

TEST(ipc_import_refuses_zero_handle)
{
    tp_ipc_handle handle;
    memset(&handle, 0, sizeof handle);
    tp_event *event = NULL;
    CHECK_STATUS(tp_event_from_ipc_handle(&event, device, &handle), TP_ERR_INVALID_ARGUMENT);
    CHECK(event == NULL);
    CHECK(tp_last_error()[0] != '\0');
    return 0;
}

TEST(ipc_import_refuses_garbage_handle)
{
    tp_ipc_handle handle;
    for (size_t i = 0; i < sizeof handle.bytes; i++)
        handle.bytes[i] = (unsigned char)(i * 37u + 11u);
    memcpy(handle.bytes, "TPEV", 4); /* right magic, nonsense after it */
    tp_event *event = NULL;
    CHECK_STATUS(tp_event_from_ipc_handle(&event, device, &handle), TP_ERR_INVALID_ARGUMENT);
    CHECK(event == NULL);
    return 0;
}

TEST(native_sample_unsupported_on_cpu)
{
    uint64_t samples[4];
    CHECK_STATUS(tp_native_sample(device, TP_NATIVE_RECORD, samples, 4), TP_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("cpu");
    return 0;
}

TEST(cpu_stream_from_native_null_refused)
{
    /* On the CPU the native stream is a CPU stream; NULL is none. (On CUDA NULL is
     * the legacy default stream, so this is a CPU-only test.) */
    tp_stream *stream = NULL;
    CHECK_STATUS(tp_stream_from_native(&stream, device, NULL), TP_ERR_INVALID_ARGUMENT);
    CHECK(stream == NULL);
    return 0;
}

/* Issue 18, item 6: the CPU backend knows its live streams, so anything else given
 * as a native CPU stream is refused, never read. */
static void check_native_refused(void *native)
{
    tp_stream *untouched = (tp_stream *)&untouched;
    tp_stream *stream = untouched;
    CHECK_STATUS(tp_stream_from_native(&stream, device, native), TP_ERR_INVALID_ARGUMENT);
    CHECK(stream == untouched);
    CHECK(tp_last_error()[0] != '\0');
}

TEST(cpu_stream_from_native_refuses_what_is_no_stream)
{
    check_native_refused((void *)(uintptr_t)12345);
    check_native_refused((void *)(uintptr_t)-1);
    check_native_refused((void *)(uintptr_t)UINT64_MAX);
    check_native_refused((void *)(uintptr_t)0x7f0000001000u);
    /* Memory of the process that is no stream: a stack variable, a heap block. */
    long local[16] = {0};
    check_native_refused(local);
    void *block = calloc(1, 4096);
    CHECK(block != NULL);
    check_native_refused(block);
    free(block);
    return 0;
}

TEST(cpu_stream_from_native_refuses_a_destroyed_stream)
{
    /* Its handle is freed memory once the stream is gone (a use-after-free under
     * ASan before the fix); a stream that still has work pending, but no handle,
     * is refused as well. */
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, device, 0));
    void *native = NULL;
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK_OK(tp_stream_destroy(stream));
    check_native_refused(native);

    CHECK_OK(tp_stream_create(&stream, device, 0));
    CHECK_OK(tp_stream_native(stream, &native));
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, device, TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_stream_destroy(stream));
    check_native_refused(native);
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(cpu_stream_from_native_accepts_live_streams)
{
    tp_stream *stream = NULL, *wrapper = NULL, *def = NULL;
    void *native = NULL;
    CHECK_OK(tp_stream_create(&stream, device, 0));
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK_OK(tp_stream_from_native(&wrapper, device, native));
    CHECK_OK(tp_stream_destroy(wrapper));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_stream_default(device, &def));
    CHECK_OK(tp_stream_native(def, &native));
    CHECK_OK(tp_stream_from_native(&wrapper, device, native));
    CHECK_OK(tp_stream_destroy(wrapper));
    return 0;
}

TEST(cpu_stream_from_native_of_another_device_mismatch)
{
    tp_stream *stream = NULL, *wrapper = NULL;
    void *native = NULL;
    CHECK_OK(tp_stream_create(&stream, "cpu:1", 0));
    CHECK_OK(tp_stream_native(stream, &native));
    CHECK_STATUS(tp_stream_from_native(&wrapper, device, native), TP_ERR_DEVICE_MISMATCH);
    CHECK(wrapper == NULL);
    CHECK_OK(tp_stream_from_native(&wrapper, "cpu:1", native));
    CHECK_OK(tp_stream_destroy(wrapper));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

static int cpu_priority(int asked)
{
    tp_stream *stream = NULL;
    int priority = 12345;
    CHECK_OK(tp_stream_create(&stream, device, asked));
    CHECK_OK(tp_stream_priority(stream, &priority));
    CHECK_OK(tp_stream_destroy(stream));
    return priority;
}

TEST(cpu_priority_clamped_to_range)
{
    CHECK(cpu_priority(-100) == TP_CPU_PRIORITY_HIGHEST);
    CHECK(cpu_priority(TP_CPU_PRIORITY_HIGHEST - 1) == TP_CPU_PRIORITY_HIGHEST);
    CHECK(cpu_priority(-1) == -1);
    CHECK(cpu_priority(0) == 0);
    CHECK(cpu_priority(7) == 0);
    return 0;
}

TEST(record_on_other_cpu_device_stream_refused)
{
    tp_event *event = NULL;
    tp_stream *stream = NULL;
    CHECK_OK(tp_event_create(&event, "cpu:0", TP_EVENT_DEFAULT));
    CHECK_OK(tp_stream_create(&stream, "cpu:1", 0));
    CHECK_STATUS(tp_event_record(event, stream), TP_ERR_DEVICE_MISMATCH);
    CHECK_ERROR_MENTIONS("cpu:1");
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
