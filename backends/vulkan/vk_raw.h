/*
 * Raw Vulkan's calls for tpevent's ops, as a program on Vulkan alone makes them: the
 * baseline tpevent is timed against, by `tpevent bench` (vk_sample.c's
 * tp_native_sample, on tpevent's own device) and by bench/vulkan/vulkan_bench.c (on a
 * VkDevice of its own). One place, so that both baselines are the same calls. Vulkan's
 * handles only, no tpevent state; the caller keeps the queue's external
 * synchronization.
 */
#ifndef TPEVENT_BACKENDS_VULKAN_VK_RAW_H
#define TPEVENT_BACKENDS_VULKAN_VK_RAW_H

#include <vulkan/vulkan.h>

#include <stdint.h>

/* A timeline semaphore at 0. */
static inline VkResult vk_raw_timeline_create(VkDevice device, VkSemaphore *out)
{
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    return vkCreateSemaphore(device, &info, NULL, out);
}

/* One batch: optional commands, an optional wait for `wait`'s value, the signal of
 * `signal`'s next value (*signal_value, one more once submitted). */
static inline VkResult vk_raw_submit(VkQueue queue, VkCommandBuffer commands, VkSemaphore wait, uint64_t wait_value,
                                     VkSemaphore signal, uint64_t *signal_value)
{
    static const VkPipelineStageFlags all = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    uint64_t next = *signal_value + 1;
    VkTimelineSemaphoreSubmitInfo values = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                            .waitSemaphoreValueCount = wait ? 1 : 0,
                                            .pWaitSemaphoreValues = &wait_value,
                                            .signalSemaphoreValueCount = 1,
                                            .pSignalSemaphoreValues = &next};
    VkSubmitInfo info = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .pNext = &values,
                         .waitSemaphoreCount = wait ? 1 : 0,
                         .pWaitSemaphores = &wait,
                         .pWaitDstStageMask = &all,
                         .commandBufferCount = commands ? 1 : 0,
                         .pCommandBuffers = &commands,
                         .signalSemaphoreCount = 1,
                         .pSignalSemaphores = &signal};
    VkResult result = vkQueueSubmit(queue, 1, &info, VK_NULL_HANDLE);
    if (result == VK_SUCCESS)
        *signal_value = next;
    return result;
}

/* Blocks until the semaphore's counter is at `value`. */
static inline VkResult vk_raw_wait(VkDevice device, VkSemaphore semaphore, uint64_t value)
{
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 1,
                                .pSemaphores = &semaphore,
                                .pValues = &value};
    return vkWaitSemaphores(device, &info, UINT64_MAX);
}

#endif /* TPEVENT_BACKENDS_VULKAN_VK_RAW_H */
