/*
 * Raw Vulkan's own calls, timed one at a time on the device tpevent made: the
 * baseline column of `tpevent bench` (tp_native_sample). What a program on raw
 * Vulkan does for each op: a record is a submission that signals a timeline's next
 * value (with timing, of a command buffer that writes a timestamp), a query reads
 * the counter, a synchronize waits for a reached value, a wait is a submission that
 * waits for one, elapsed time reads two queries; an event made and destroyed is a
 * timeline semaphore. Not on any path of the library's.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "backends/vulkan/vk_raw.h"
#include "common/clock.h"

typedef struct sample_setup {
    vk_device *device;
    VkSemaphore timeline, other;
    uint64_t value, other_value;
    VkCommandPool pool;
    VkQueryPool queries;
    VkCommandBuffer stamp;
} sample_setup;

/* vk_raw_submit on tpevent's queue, which its streams share: under its lock. */
static VkResult submit(sample_setup *s, VkCommandBuffer commands, VkSemaphore wait, uint64_t wait_value,
                       VkSemaphore signal, uint64_t *signal_value)
{
    pthread_mutex_lock(&s->device->queue_lock);
    VkResult result = vk_raw_submit(s->device->queue, commands, wait, wait_value, signal, signal_value);
    pthread_mutex_unlock(&s->device->queue_lock);
    return result;
}

static VkResult wait_value(sample_setup *s, VkSemaphore semaphore, uint64_t value)
{
    return vk_raw_wait(s->device->device, semaphore, value);
}

/* The semaphores, two timestamps written and reached, a command buffer writing one. */
static VkResult sample_prepare(sample_setup *s, const char **call)
{
    VkDevice device = s->device->device;
    *call = "vkCreateSemaphore";
    VkResult result = vk_raw_timeline_create(device, &s->timeline);
    if (result == VK_SUCCESS)
        result = vk_raw_timeline_create(device, &s->other);
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = s->device->family};
    if (result == VK_SUCCESS && (*call = "vkCreateCommandPool"))
        result = vkCreateCommandPool(device, &pool, NULL, &s->pool);
    VkQueryPoolCreateInfo queries = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    if (result == VK_SUCCESS && (*call = "vkCreateQueryPool"))
        result = vkCreateQueryPool(device, &queries, NULL, &s->queries);
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = s->pool,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1};
    if (result == VK_SUCCESS && (*call = "vkAllocateCommandBuffers"))
        result = vkAllocateCommandBuffers(device, &allocate, &s->stamp);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    if (result == VK_SUCCESS && (*call = "vkBeginCommandBuffer"))
        result = vkBeginCommandBuffer(s->stamp, &begin);
    if (result == VK_SUCCESS) {
        vkCmdResetQueryPool(s->stamp, s->queries, 0, 2);
        vkCmdWriteTimestamp(s->stamp, s->device->stamp_stage, s->queries, 0);
        vkCmdWriteTimestamp(s->stamp, s->device->stamp_stage, s->queries, 1);
        *call = "vkEndCommandBuffer";
        result = vkEndCommandBuffer(s->stamp);
    }
    if (result == VK_SUCCESS && (*call = "vkQueueSubmit"))
        result = submit(s, s->stamp, VK_NULL_HANDLE, 0, s->timeline, &s->value);
    if (result == VK_SUCCESS && (*call = "vkWaitSemaphores"))
        result = wait_value(s, s->timeline, s->value);
    return result;
}

static void sample_release(sample_setup *s)
{
    VkDevice device = s->device->device;
    if (s->timeline)
        (void)wait_value(s, s->timeline, s->value);
    if (s->other)
        (void)wait_value(s, s->other, s->other_value);
    if (s->pool)
        vkDestroyCommandPool(device, s->pool, NULL);
    if (s->queries)
        vkDestroyQueryPool(device, s->queries, NULL);
    if (s->other)
        vkDestroySemaphore(device, s->other, NULL);
    if (s->timeline)
        vkDestroySemaphore(device, s->timeline, NULL);
}

/* One timed call (or pair) of `op`. */
static VkResult sample_once(tp_native_op op, sample_setup *s, uint64_t *ns, const char **call)
{
    VkResult result = VK_SUCCESS;
    uint64_t counter = 0, stamps[2];
    VkSemaphore made = VK_NULL_HANDLE;
    uint64_t t0 = tp_now_ns();
    switch (op) {
    case TP_NATIVE_RECORD:
    case TP_NATIVE_RECORD_TIMING:
        *call = "vkQueueSubmit";
        result = submit(s, op == TP_NATIVE_RECORD_TIMING ? s->stamp : VK_NULL_HANDLE, VK_NULL_HANDLE, 0, s->timeline,
                        &s->value);
        break;
    case TP_NATIVE_QUERY:
        *call = "vkGetSemaphoreCounterValue";
        result = vkGetSemaphoreCounterValue(s->device->device, s->timeline, &counter);
        break;
    case TP_NATIVE_SYNCHRONIZE:
        *call = "vkWaitSemaphores";
        result = wait_value(s, s->timeline, s->value);
        break;
    case TP_NATIVE_STREAM_WAIT:
        *call = "vkQueueSubmit";
        result = submit(s, VK_NULL_HANDLE, s->timeline, s->value, s->other, &s->other_value);
        break;
    case TP_NATIVE_ELAPSED:
        *call = "vkGetQueryPoolResults";
        result = vkGetQueryPoolResults(s->device->device, s->queries, 0, 2, sizeof stamps, stamps, sizeof stamps[0],
                                       VK_QUERY_RESULT_64_BIT);
        break;
    case TP_NATIVE_CREATE_DESTROY:
        *call = "vkCreateSemaphore/vkDestroySemaphore";
        result = vk_raw_timeline_create(s->device->device, &made);
        if (result == VK_SUCCESS)
            vkDestroySemaphore(s->device->device, made, NULL);
        break;
    case TP_NATIVE_RECORD_SYNCHRONIZE:
        *call = "vkQueueSubmit/vkWaitSemaphores";
        result = submit(s, VK_NULL_HANDLE, VK_NULL_HANDLE, 0, s->timeline, &s->value);
        if (result == VK_SUCCESS)
            result = wait_value(s, s->timeline, s->value);
        break;
    }
    *ns = tp_now_ns() - t0;
    return result;
}

tp_status tp_vk_native_sample(int index, tp_native_op op, uint64_t *samples_ns, size_t count)
{
    sample_setup setup = {.device = tp_vk_device(index)};
    const char *call = "";
    VkResult result = sample_prepare(&setup, &call);
    /* A timing record's command buffer writes the queries anew: one at a time. */
    for (size_t i = 0; result == VK_SUCCESS && i < count; i++) {
        result = sample_once(op, &setup, &samples_ns[i], &call);
        if (result == VK_SUCCESS && op == TP_NATIVE_RECORD_TIMING)
            result = wait_value(&setup, setup.timeline, setup.value);
    }
    sample_release(&setup);
    return result == VK_SUCCESS ? TP_OK : tp_vk_fail("tp_native_sample", call, result);
}
