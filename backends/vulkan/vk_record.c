/*
 * Records. A record is a value of its stream's timeline: reached once the
 * semaphore's counter is at it. A timing record also has a query of one timestamp
 * and a command buffer, recorded once, that resets it and writes the device's time
 * at the bottom of the pipe: the record's batch runs it, and the batch's signal
 * comes after it (and after every earlier batch of the queue), so a reached
 * record's timestamp is there to read. Records are pooled per device with their
 * query; one whose query the device may still write goes back to the pool only
 * once it is reached (device->retired).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

#include <stdlib.h>

static tp_status query_make(vk_device *device, vk_record *record, const char *call)
{
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 1};
    VkResult result = vkCreateQueryPool(device->device, &info, NULL, &record->query);
    if (result != VK_SUCCESS)
        return tp_vk_fail(call, "vkCreateQueryPool", result);
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = device->commands,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1};
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    /* The pool is the device's: its lock, for the allocation and the recording. */
    pthread_mutex_lock(&device->lock);
    const char *step = "vkAllocateCommandBuffers";
    result = vkAllocateCommandBuffers(device->device, &allocate, &record->stamp);
    if (result == VK_SUCCESS &&
        (step = "vkBeginCommandBuffer", result = vkBeginCommandBuffer(record->stamp, &begin)) == VK_SUCCESS) {
        vkCmdResetQueryPool(record->stamp, record->query, 0, 1);
        vkCmdWriteTimestamp(record->stamp, device->stamp_stage, record->query, 0);
        step = "vkEndCommandBuffer";
        result = vkEndCommandBuffer(record->stamp);
    }
    pthread_mutex_unlock(&device->lock);
    if (result != VK_SUCCESS) {
        vkDestroyQueryPool(device->device, record->query, NULL);
        return tp_vk_fail(call, step, result);
    }
    return TP_OK;
}

tp_status tp_vk_record_take(vk_device *device, bool timing, const char *call, vk_record **out)
{
    pthread_mutex_lock(&device->lock);
    vk_record *record = device->free_records[timing];
    if (record) {
        device->free_records[timing] = record->next_free;
    } else if (timing && device->retired_first && tp_vk_record_reached(device->retired_first)) {
        record = device->retired_first;
        device->retired_first = record->next_free;
        if (!device->retired_first)
            device->retired_last = NULL;
    }
    pthread_mutex_unlock(&device->lock);
    if (!record) {
        record = calloc(1, sizeof *record);
        if (!record)
            return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
        record->device = device;
        if (timing) {
            tp_status status = query_make(device, record, call);
            if (status != TP_OK) {
                free(record);
                return status;
            }
        }
    }
    atomic_init(&record->refs, 1);
    record->timeline = NULL;
    record->value = 0;
    atomic_init(&record->host_ns, INT64_MIN);
    atomic_init(&record->ticks, 0);
    *out = record;
    return TP_OK;
}

void tp_vk_record_ref(vk_record *record)
{
    atomic_fetch_add_explicit(&record->refs, 1, memory_order_relaxed);
}

static void give_back(void *arg)
{
    vk_record *record = arg;
    vk_device *device = record->device;
    bool timing = record->query != VK_NULL_HANDLE;
    pthread_mutex_lock(&device->lock);
    record->next_free = device->free_records[timing];
    device->free_records[timing] = record;
    pthread_mutex_unlock(&device->lock);
}

void tp_vk_record_unref(vk_record *record)
{
    if (atomic_fetch_sub_explicit(&record->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* A query the device may still write is not reset by another record meanwhile:
     * retired, taken again once reached. Records of one stream are reached in their
     * order, so the oldest is the first to look at; a record of another stream that
     * is late behind it only keeps the ones after it waiting (a new one is made). */
    if (record->query != VK_NULL_HANDLE && record->timeline && !tp_vk_record_reached(record)) {
        vk_device *device = record->device;
        record->next_free = NULL;
        pthread_mutex_lock(&device->lock);
        if (device->retired_last)
            device->retired_last->next_free = record;
        else
            device->retired_first = record;
        device->retired_last = record;
        pthread_mutex_unlock(&device->lock);
        return;
    }
    give_back(record);
}

bool tp_vk_record_reached(const vk_record *record)
{
    return tp_vk_timeline_counter(record->timeline) >= record->value;
}

tp_status tp_vk_record_ticks(vk_record *record, const char *call, uint64_t *ticks)
{
    uint64_t known = atomic_load_explicit(&record->ticks, memory_order_acquire);
    if (known != 0) {
        *ticks = known;
        return TP_OK;
    }
    if (!tp_vk_record_reached(record))
        return TP_ERR_NOT_READY;
    uint64_t value = 0;
    VkResult result = vkGetQueryPoolResults(record->device->device, record->query, 0, 1, sizeof value, &value,
                                            sizeof value, VK_QUERY_RESULT_64_BIT);
    if (result != VK_SUCCESS)
        return tp_vk_fail(call, "vkGetQueryPoolResults", result);
    atomic_store_explicit(&record->ticks, value, memory_order_release);
    *ticks = value;
    return TP_OK;
}

tp_status tp_vk_record_time(vk_record *record, const char *call, int64_t *host_ns)
{
    int64_t known = atomic_load_explicit(&record->host_ns, memory_order_acquire);
    if (known != INT64_MIN) {
        *host_ns = known;
        return TP_OK;
    }
    uint64_t ticks = 0;
    tp_status status = tp_vk_record_ticks(record, call, &ticks);
    int64_t converted = 0;
    if (status == TP_OK)
        status = tp_vk_clock_convert(record->device, ticks, &converted);
    if (status != TP_OK)
        return status;
    /* The first time given is the time: a racing conversion of a later anchor loses. */
    int64_t expected = INT64_MIN;
    if (!atomic_compare_exchange_strong_explicit(&record->host_ns, &expected, converted, memory_order_acq_rel,
                                                 memory_order_acquire))
        converted = expected;
    *host_ns = converted;
    return TP_OK;
}
