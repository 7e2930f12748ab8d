/*
 * Timing records' query pools on vulkan:0 (issue 56): recording in bursts makes a
 * query pool once per block of records, not once per record whose predecessor the
 * device has not reached yet, and each record of a block keeps a timestamp of its
 * own. The pools made are counted by interposing vkCreateQueryPool: the test
 * program exports it (ENABLE_EXPORTS), so the backend module, which takes the
 * loader's symbol, calls this one, which counts and calls the loader's.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "vk_test.h"

#include "check.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define DEVICE "vulkan:0"
#define BURST 200
#define BURSTS 20
#define BLOCK 32 /* backends/vulkan/vk_record.c: its least block (later ones are larger) */

static atomic_int pools_made;

/* vulkan.h declares it; exported past the build's hidden default. */
__attribute__((visibility("default"))) VKAPI_ATTR VkResult VKAPI_CALL vkCreateQueryPool(
    VkDevice device, const VkQueryPoolCreateInfo *info, const VkAllocationCallbacks *allocator, VkQueryPool *pool)
{
    PFN_vkCreateQueryPool next = (PFN_vkCreateQueryPool)dlsym(RTLD_NEXT, "vkCreateQueryPool");
    if (!next)
        return VK_ERROR_INITIALIZATION_FAILED;
    atomic_fetch_add(&pools_made, 1);
    return next(device, info, allocator, pool);
}

TEST(record_pool_bursts_of_timing_records_make_a_pool_per_block)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, DEVICE, TP_EVENT_TIMING));
    int before = atomic_load(&pools_made);
    for (int burst = 0; burst < BURSTS; burst++) {
        for (int i = 0; i < BURST; i++)
            CHECK_OK(tp_event_record(event, stream));
        CHECK_OK(tp_stream_synchronize(stream));
    }
    int made = atomic_load(&pools_made) - before;
    /* A burst needs at most its own records and the one kept as the event's latest;
     * bursts after the first find the earlier ones reached. Per record it made up to
     * one pool for each not yet reached: up to BURST, and more on a slow queue. */
    int most = (BURST + 1 + BLOCK - 1) / BLOCK + 1;
    printf("query pools made over %d bursts of %d timing records: %d (at most %d)\n", BURSTS, BURST, made, most);
    CHECK(made >= 0 && made <= most);
    CHECK_OK(tp_event_destroy(event));
    vkt_close(&t, stream);
    return 0;
}

TEST(record_pool_records_of_one_block_keep_their_own_timestamps)
{
    vkt t;
    tp_stream *stream = NULL;
    int skip = vkt_open(&t, DEVICE, &stream);
    if (skip)
        return skip;
    enum { COUNT = 3 * BLOCK + 5 };
    tp_event *events[COUNT];
    for (int i = 0; i < COUNT; i++)
        CHECK_OK(tp_event_create(&events[i], DEVICE, TP_EVENT_TIMING));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < COUNT; i++)
            CHECK_OK(tp_event_record(events[i], stream));
        CHECK_OK(tp_stream_synchronize(stream));
        /* In record order on one stream: each at or after the one before, and the
         * last after the first (a hundred batches take microseconds at least);
         * records sharing a slot would read one time. */
        for (int i = 1; i < COUNT; i++) {
            float ms = -1.0f;
            CHECK_OK(tp_event_elapsed_time(events[i - 1], events[i], &ms));
            CHECK(ms >= 0.0f);
        }
        float all_ms = 0.0f;
        CHECK_OK(tp_event_elapsed_time(events[0], events[COUNT - 1], &all_ms));
        printf("round %d: %d records in %.4f ms\n", round, COUNT, (double)all_ms);
        CHECK(all_ms > 0.0f);
    }
    for (int i = 0; i < COUNT; i++)
        CHECK_OK(tp_event_destroy(events[i]));
    vkt_close(&t, stream);
    return 0;
}
