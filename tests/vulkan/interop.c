/*
 * include/tpevent/vulkan.h on vulkan:0 (lavapipe in CI): the objects behind a
 * stream, and a user's command buffers in the stream's order (after its earlier
 * work, before its later work, behind a hold), and the arguments refused.
 */
#define _POSIX_C_SOURCE 200809L
#include "vk_test.h"

#include "check.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEVICE "vulkan:0"

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

TEST(interop_info_names_the_streams_vulkan_objects)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    CHECK(t.info.size == sizeof t.info);
    CHECK(t.info.instance && t.info.physical_device && t.info.device && t.info.queue);
    void *queue = NULL;
    CHECK_OK(tp_stream_native(stream, &queue));
    CHECK(queue == t.info.queue);
    CHECK(t.info.queue_index == 0);
    CHECK(VK_API_VERSION_MINOR(t.info.api_version) >= 2 || VK_API_VERSION_MAJOR(t.info.api_version) > 1);
    bool clock_listed = false;
    for (uint32_t i = 0; i < t.info.extension_count; i++) {
        printf("extension: %s\n", t.info.extensions[i]);
        clock_listed |= strcmp(t.info.extensions[i], VK_KHR_SHADER_CLOCK_EXTENSION_NAME) == 0;
    }
    CHECK(clock_listed == (t.info.shader_subgroup_clock || t.info.shader_device_clock));
    /* A caller's older, shorter struct: only its fields are written. */
    struct {
        tp_vulkan_info head;
        unsigned char after[64];
    } small;
    memset(&small, 0xab, sizeof small);
    small.head.size = offsetof(tp_vulkan_info, queue) + sizeof(void *);
    CHECK_OK(tp_vulkan_stream_info(stream, &small.head));
    CHECK(small.head.queue == t.info.queue && small.head.device == t.info.device);
    const unsigned char *tail = (const unsigned char *)&small.head + small.head.size;
    for (size_t i = 0; i < sizeof small - small.head.size; i++)
        CHECK(tail[i] == 0xab);
    vkt_close(&t, stream);
    return 0;
}

typedef struct copy_check {
    vkt_buffer *from, *to;
    uint32_t seen;
} copy_check;

static void write_late(void *arg)
{
    sleep_ms(30); /* the copy after this would read the old value if it ran early */
    ((copy_check *)arg)->from->host[0] = 7;
}

static void read_copy(void *arg)
{
    copy_check *check = arg;
    check->seen = check->to->host[0];
}

/* Behind a host function the submission waits in the stream's worker; on an idle
 * stream it goes to the queue at once: both paths keep the order. */
TEST(interop_submit_runs_after_earlier_work_and_before_later)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    vkt_buffer from, to;
    vkt_buffer_make(&t, 256, &from);
    vkt_buffer_make(&t, 256, &to);
    VkCommandBuffer copy = vkt_begin(&t, false);
    vkCmdCopyBuffer(copy, from.buffer, to.buffer, 1, &(VkBufferCopy){.size = 256});
    vkt_end(copy);
    copy_check check = {&from, &to, 0};
    tp_event *before = NULL, *after = NULL;
    CHECK_OK(tp_event_create(&before, DEVICE, TP_EVENT_TIMING));
    CHECK_OK(tp_event_create(&after, DEVICE, TP_EVENT_TIMING));

    CHECK_OK(tp_event_record(before, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, write_late, &check));
    void *cmds[] = {copy};
    CHECK_OK(tp_vulkan_stream_submit(stream, cmds, 1));
    CHECK_OK(tp_stream_launch_host_fn(stream, read_copy, &check));
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_event_synchronize(after));
    CHECK(check.seen == 7);
    float ms = -1;
    CHECK_OK(tp_event_elapsed_time(before, after, &ms));
    printf("worker path: copied %u, %.3f ms between the records\n", (unsigned)check.seen, (double)ms);
    CHECK(ms >= 29.0f);

    /* Idle stream: to the queue from this thread. */
    CHECK_OK(tp_stream_synchronize(stream));
    bool idle = false;
    CHECK_OK(tp_stream_query(stream, &idle));
    CHECK(idle);
    from.host[0] = 11;
    check.seen = 0;
    CHECK_OK(tp_vulkan_stream_submit(stream, cmds, 1));
    CHECK_OK(tp_stream_launch_host_fn(stream, read_copy, &check));
    CHECK_OK(tp_event_record(after, stream));
    CHECK_OK(tp_event_synchronize(after));
    CHECK(check.seen == 11);

    CHECK_OK(tp_event_destroy(before));
    CHECK_OK(tp_event_destroy(after));
    vkt_close(&t, stream);
    vkt_buffer_free(&t, &from);
    vkt_buffer_free(&t, &to);
    return 0;
}

TEST(interop_submit_waits_for_a_hold)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    vkt_buffer buffer;
    vkt_buffer_make(&t, 256, &buffer);
    VkCommandBuffer fill = vkt_begin(&t, false);
    vkCmdFillBuffer(fill, buffer.buffer, 0, VK_WHOLE_SIZE, 9);
    vkt_end(fill);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(stream, 10 * 1000 * 1000 * 1000LL, &hold));
    void *cmds[] = {fill};
    CHECK_OK(tp_vulkan_stream_submit(stream, cmds, 1));
    tp_event *after = NULL;
    CHECK_OK(tp_event_create(&after, DEVICE, 0));
    CHECK_OK(tp_event_record(after, stream));
    sleep_ms(50);
    bool done = true;
    CHECK_OK(tp_event_query(after, &done));
    CHECK(!done);
    CHECK(buffer.host[0] == 0);
    CHECK_OK(tp_hold_release(hold));
    CHECK_OK(tp_event_synchronize(after));
    CHECK(buffer.host[0] == 9 && buffer.host[63] == 9);
    CHECK_OK(tp_event_destroy(after));
    vkt_close(&t, stream);
    vkt_buffer_free(&t, &buffer);
    return 0;
}

TEST(interop_bad_arguments_are_refused)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    VkCommandBuffer fill = vkt_begin(&t, false);
    vkt_end(fill);
    void *cmds[TP_VULKAN_SUBMIT_MOST + 1];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        cmds[i] = fill;
    CHECK_STATUS(tp_vulkan_stream_submit(NULL, cmds, 1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("tp_vulkan_stream_submit: stream is NULL");
    CHECK_STATUS(tp_vulkan_stream_submit(stream, NULL, 1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("cmds is NULL");
    CHECK_STATUS(tp_vulkan_stream_submit(stream, cmds, 0), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("count is 0");
    CHECK_STATUS(tp_vulkan_stream_submit(stream, cmds, TP_VULKAN_SUBMIT_MOST + 1), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("count is 33");
    cmds[2] = NULL;
    CHECK_STATUS(tp_vulkan_stream_submit(stream, cmds, 3), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("cmds[2] is VK_NULL_HANDLE");
    tp_vulkan_info info = {.size = sizeof info};
    CHECK_STATUS(tp_vulkan_stream_info(NULL, &info), TP_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(tp_vulkan_stream_info(stream, NULL), TP_ERR_INVALID_ARGUMENT);
    info.size = offsetof(tp_vulkan_info, queue);
    CHECK_STATUS(tp_vulkan_stream_info(stream, &info), TP_ERR_INVALID_ARGUMENT);
    CHECK_ERROR_MENTIONS("info->size is");

    /* Another backend's stream: refused, saying why. */
    tp_stream *cpu = NULL;
    CHECK_OK(tp_stream_create(&cpu, "cpu:0", 0));
    cmds[2] = fill;
    CHECK_STATUS(tp_vulkan_stream_submit(cpu, cmds, 1), TP_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("the cpu backend does not support it: its streams are not Vulkan queues");
    info.size = sizeof info;
    CHECK_STATUS(tp_vulkan_stream_info(cpu, &info), TP_ERR_UNSUPPORTED);
    CHECK_ERROR_MENTIONS("tp_vulkan_stream_info");
    CHECK_OK(tp_stream_destroy(cpu));
    vkt_close(&t, stream);
    return 0;
}
