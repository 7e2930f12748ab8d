/*
 * Records. A record is a value of its stream's timeline: reached once the
 * semaphore's counter is at it. A timing record also has a query slot of one
 * timestamp and a command buffer, recorded once, that resets the slot and writes
 * the device's time at the bottom of the pipe: the record's batch runs it, and the
 * batch's signal comes after it (and after every earlier batch of the queue), so a
 * reached record's timestamp is there to read. Records are pooled per device with
 * their query; one whose query the device may still write goes back to the pool
 * only once it is reached (device->retired).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

#include <stdlib.h>

/* Timing records are made a block at a time: one query pool of a slot each, their
 * command buffers allocated in one call. A burst of records whose predecessors the
 * device has not reached yet needs new ones; a block makes a pool once per block of
 * them instead of once each, and none once the burst's records come back. Each
 * block of a device is twice the one before, up to VK_RECORD_BLOCK_MOST: a queue
 * that stays behind for long is caught up with after a few blocks, and no one
 * record call stalls for long making one. */
#define VK_RECORD_BLOCK_LEAST 32
#define VK_RECORD_BLOCK_MOST 256

/* The device's lock held: its command pool. */
static VkResult stamp_record(vk_device *device, VkCommandBuffer stamp, VkQueryPool query, uint32_t slot,
                             const char **step)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    *step = "vkBeginCommandBuffer";
    VkResult result = vkBeginCommandBuffer(stamp, &begin);
    if (result != VK_SUCCESS)
        return result;
    vkCmdResetQueryPool(stamp, query, slot, 1);
    vkCmdWriteTimestamp(stamp, device->stamp_stage, query, slot);
    *step = "vkEndCommandBuffer";
    return vkEndCommandBuffer(stamp);
}

static void records_free(vk_record **records, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        free(records[i]);
}

/* A block of timing records: the first in *out, the others to the device's pool. */
static tp_status block_make(vk_device *device, const char *call, vk_record **out)
{
    pthread_mutex_lock(&device->lock);
    uint32_t count = device->record_block < VK_RECORD_BLOCK_LEAST ? VK_RECORD_BLOCK_LEAST : device->record_block;
    device->record_block = count * 2 > VK_RECORD_BLOCK_MOST ? VK_RECORD_BLOCK_MOST : count * 2;
    pthread_mutex_unlock(&device->lock);
    vk_record *records[VK_RECORD_BLOCK_MOST] = {0};
    for (uint32_t i = 0; i < count; i++)
        if (!(records[i] = calloc(1, sizeof *records[i]))) {
            records_free(records, count);
            return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
        }
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = count};
    VkQueryPool query = VK_NULL_HANDLE;
    VkResult result = vkCreateQueryPool(device->device, &info, NULL, &query);
    if (result != VK_SUCCESS) {
        records_free(records, count);
        return tp_vk_fail(call, "vkCreateQueryPool", result);
    }
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = device->commands,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = count};
    VkCommandBuffer stamps[VK_RECORD_BLOCK_MOST];
    const char *step = "vkAllocateCommandBuffers";
    pthread_mutex_lock(&device->lock);
    result = vkAllocateCommandBuffers(device->device, &allocate, stamps);
    bool allocated = result == VK_SUCCESS;
    for (uint32_t i = 0; result == VK_SUCCESS && i < count; i++)
        result = stamp_record(device, stamps[i], query, i, &step);
    if (result == VK_SUCCESS) {
        for (uint32_t i = 0; i < count; i++)
            *records[i] = (vk_record){.device = device, .query = query, .slot = i, .stamp = stamps[i]};
        for (uint32_t i = count - 1; i > 0; i--) {
            records[i]->next_free = device->free_records[true];
            device->free_records[true] = records[i];
        }
    } else if (allocated) {
        vkFreeCommandBuffers(device->device, device->commands, count, stamps);
    }
    pthread_mutex_unlock(&device->lock);
    if (result != VK_SUCCESS) {
        vkDestroyQueryPool(device->device, query, NULL);
        records_free(records, count);
        return tp_vk_fail(call, step, result);
    }
    *out = records[0];
    return TP_OK;
}

/* Whether the driver says the record is reached, kept as its timeline's
 * known_reached for the next looks. Only here, not in every counter read: query and
 * wait pay nothing for it. The device's lock held: a timeline's one writer. */
static bool reached_now(vk_record *record)
{
    vk_timeline *timeline = (vk_timeline *)record->timeline;
    uint64_t counter = tp_vk_timeline_counter(timeline);
    if (counter > atomic_load_explicit(&timeline->known_reached, memory_order_relaxed))
        atomic_store_explicit(&timeline->known_reached, counter, memory_order_relaxed);
    return counter >= record->value;
}

/* The device's lock held. A retired record is taken again once reached: as far as
 * its timeline was last read here, else as the driver says now. */
static vk_record *retired_take(vk_device *device)
{
    vk_record *record = device->retired_first;
    if (!record || !(tp_vk_record_known_reached(record) || reached_now(record)))
        return NULL;
    device->retired_first = record->next_free;
    if (!device->retired_first)
        device->retired_last = NULL;
    return record;
}

tp_status tp_vk_record_take(vk_device *device, bool timing, const char *call, vk_record **out)
{
    pthread_mutex_lock(&device->lock);
    vk_record *record = device->free_records[timing];
    if (record)
        device->free_records[timing] = record->next_free;
    else if (timing)
        record = retired_take(device);
    pthread_mutex_unlock(&device->lock);
    if (!record && timing) {
        tp_status status = block_make(device, call, &record);
        if (status != TP_OK)
            return status;
    } else if (!record) {
        record = calloc(1, sizeof *record);
        if (!record)
            return tp_vk_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
        record->device = device;
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
     * is late behind it only keeps the ones after it waiting (a block is made). The
     * driver is not asked here: a record replaced by the next one is rarely reached
     * yet, and the take looks again. */
    if (record->query != VK_NULL_HANDLE && record->timeline && !tp_vk_record_known_reached(record)) {
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

bool tp_vk_record_known_reached(const vk_record *record)
{
    return atomic_load_explicit(&record->timeline->known_reached, memory_order_relaxed) >= record->value;
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
    VkResult result = vkGetQueryPoolResults(record->device->device, record->query, record->slot, 1, sizeof value,
                                            &value, sizeof value, VK_QUERY_RESULT_64_BIT);
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
