/*
 * tp_measure's device work (rule 18). The cold calls' flush is a vkCmdFillBuffer
 * over a buffer of the device's, VK_FLUSH_BYTES_LEAST (64 MB) or more: Vulkan
 * reports no cache size, and that is more than the last-level cache of the GPUs
 * and CPUs it runs on. Its command buffer is recorded once, for simultaneous use,
 * and shared by the device's streams. The floor's least work is an empty batch:
 * the one signal of the stream's timeline that any submission is.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

static uint32_t memory_type(VkPhysicalDevice physical, uint32_t allowed)
{
    VkPhysicalDeviceMemoryProperties properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &properties);
    uint32_t any = UINT32_MAX;
    for (uint32_t i = 0; i < properties.memoryTypeCount; i++) {
        if (!(allowed & (1u << i)))
            continue;
        if (properties.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
            return i;
        if (any == UINT32_MAX)
            any = i;
    }
    return any;
}

/* The buffer and its fill, made once; the device's lock held. */
static tp_status flush_make(vk_device *device, const char *call)
{
    vk_flush_work *flush = &device->flush;
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = device->cache_bytes,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult result = vkCreateBuffer(device->device, &info, NULL, &flush->buffer);
    if (result != VK_SUCCESS)
        return tp_vk_fail(call, "vkCreateBuffer", result);
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(device->device, flush->buffer, &needs);
    VkMemoryAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                     .allocationSize = needs.size,
                                     .memoryTypeIndex = memory_type(device->physical, needs.memoryTypeBits)};
    const char *step = "vkAllocateMemory";
    result = vkAllocateMemory(device->device, &allocate, NULL, &flush->memory);
    if (result == VK_SUCCESS) {
        step = "vkBindBufferMemory";
        result = vkBindBufferMemory(device->device, flush->buffer, flush->memory, 0);
    }
    VkCommandBufferAllocateInfo commands = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = device->commands,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1};
    if (result == VK_SUCCESS) {
        step = "vkAllocateCommandBuffers";
        result = vkAllocateCommandBuffers(device->device, &commands, &flush->fill);
    }
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    if (result == VK_SUCCESS) {
        step = "vkBeginCommandBuffer";
        result = vkBeginCommandBuffer(flush->fill, &begin);
    }
    if (result == VK_SUCCESS) {
        vkCmdFillBuffer(flush->fill, flush->buffer, 0, VK_WHOLE_SIZE, 0x5a5a5a5au);
        step = "vkEndCommandBuffer";
        result = vkEndCommandBuffer(flush->fill);
    }
    if (result != VK_SUCCESS) {
        if (flush->fill)
            vkFreeCommandBuffers(device->device, device->commands, 1, &flush->fill);
        if (flush->memory)
            vkFreeMemory(device->device, flush->memory, NULL);
        vkDestroyBuffer(device->device, flush->buffer, NULL);
        *flush = (vk_flush_work){0};
        return tp_vk_fail(call, step, result);
    }
    flush->bytes = device->cache_bytes;
    return TP_OK;
}

tp_status tp_vk_stream_flush_cache(tp_stream *handle)
{
    static const char call[] = "tp_measure";
    vk_stream *stream = (vk_stream *)handle;
    vk_device *device = stream->device;
    pthread_mutex_lock(&device->lock);
    tp_status status = device->flush.fill ? TP_OK : flush_make(device, call);
    VkCommandBuffer fill = device->flush.fill;
    pthread_mutex_unlock(&device->lock);
    if (status != TP_OK)
        return status;
    uint64_t value = 0;
    return tp_vk_stream_mark(stream, (vk_batch){.command = fill, .fill = true}, true, call, &value);
}

tp_status tp_vk_stream_launch_empty(tp_stream *handle)
{
    uint64_t value = 0;
    return tp_vk_stream_mark((vk_stream *)handle, (vk_batch){0}, true, "tp_measure", &value);
}
