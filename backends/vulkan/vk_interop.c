/*
 * A Vulkan user's own work on a stream (include/tpevent/vulkan.h): the objects
 * behind the stream, and the user's command buffers in the stream's order.
 *
 * A stream's order is not Vulkan's: commands of one queue, even of batches
 * submitted one after another, may overlap unless a barrier or a semaphore orders
 * them, and the streams of a device share its queue. So a user's command buffers go
 * between two barriers (all commands, all memory: a prerecorded command buffer of
 * the device's, submitted before and after them), which order them after every
 * earlier command of the queue and before every later one, this stream's work among
 * them. The barrier orders other streams' work around them too; that costs overlap,
 * never correctness. The batch then signals the stream's next value like any other
 * submission, from the caller's thread or, behind a hold or a wait, from the
 * stream's worker (vk_worker.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"

#include <string.h>

/* The device's barrier command buffer, recorded once (simultaneous use: a batch
 * holds it twice, and batches on the queue may share it). Device lock held. */
static tp_status barrier_make(vk_device *device, const char *call)
{
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = device->commands,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1};
    VkCommandBuffer barrier = VK_NULL_HANDLE;
    VkResult result = vkAllocateCommandBuffers(device->device, &allocate, &barrier);
    if (result != VK_SUCCESS)
        return tp_vk_fail(call, "vkAllocateCommandBuffers", result);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
    const char *step = "vkBeginCommandBuffer";
    result = vkBeginCommandBuffer(barrier, &begin);
    if (result == VK_SUCCESS) {
        VkMemoryBarrier memory = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
        vkCmdPipelineBarrier(barrier, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
                             &memory, 0, NULL, 0, NULL);
        step = "vkEndCommandBuffer";
        result = vkEndCommandBuffer(barrier);
    }
    if (result != VK_SUCCESS) {
        vkFreeCommandBuffers(device->device, device->commands, 1, &barrier);
        return tp_vk_fail(call, step, result);
    }
    device->barrier = barrier;
    return TP_OK;
}

tp_status tp_vk_stream_submit(tp_stream *handle, void *const *cmds, uint32_t count)
{
    static const char call[] = "tp_vulkan_stream_submit";
    vk_stream *stream = (vk_stream *)handle;
    vk_device *device = stream->device;
    pthread_mutex_lock(&device->lock);
    tp_status status = device->barrier ? TP_OK : barrier_make(device, call);
    VkCommandBuffer barrier = device->barrier;
    pthread_mutex_unlock(&device->lock);
    if (status != TP_OK)
        return status;
    VkCommandBuffer commands[TP_VULKAN_SUBMIT_MOST + 2];
    commands[0] = barrier;
    for (uint32_t i = 0; i < count; i++)
        commands[1 + i] = (VkCommandBuffer)cmds[i];
    commands[count + 1] = barrier;
    return tp_vk_stream_submit_commands(stream, commands, count + 2, call);
}

tp_status tp_vk_stream_info(tp_stream *handle, tp_vulkan_info *info)
{
    const vk_device *device = ((vk_stream *)handle)->device;
    info->instance = tp_vk_instance();
    info->physical_device = device->physical;
    info->device = device->device;
    info->queue = device->queue;
    info->queue_family = device->family;
    info->queue_index = 0;
    info->api_version = device->api_version;
    info->extension_count = device->extension_count;
    info->extensions = device->extensions;
    info->shader_subgroup_clock = device->shader_clock[0];
    info->shader_device_clock = device->shader_clock[1];
    return TP_OK;
}
