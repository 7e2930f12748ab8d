/*
 * The Vulkan tests' own Vulkan: what a user of include/tpevent/vulkan.h does to put
 * work on a tpevent stream (a command pool on the stream's device, host-visible
 * buffers, the spin shader's pipeline), kept out of the tests that use it.
 */
#ifndef TPEVENT_TESTS_VULKAN_VK_TEST_H
#define TPEVENT_TESTS_VULKAN_VK_TEST_H

#include <tpevent/vulkan.h>
#include <vulkan/vulkan.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct vkt {
    tp_vulkan_info info;
    VkDevice device;
    VkCommandPool pool;
    VkDriverId driver;
} vkt;

/* A buffer the host sees, mapped. */
typedef struct vkt_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    volatile uint32_t *host;
} vkt_buffer;

/* The spin shader's pipeline (spin.comp): a dispatch spins for a given number of the
 * device clock's ticks, then writes how many passed into result.host[0]. */
typedef struct vkt_spin {
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    vkt_buffer result;
} vkt_spin;

/* 0, or TEST_SKIP after saying why (no vulkan:0). Fails the test on Vulkan's errors. */
int vkt_open(vkt *t, const char *device, tp_stream **stream);
void vkt_close(vkt *t, tp_stream *stream);
/* A command buffer of the pool, begun (simultaneous use when asked). */
VkCommandBuffer vkt_begin(vkt *t, bool simultaneous);
void vkt_end(VkCommandBuffer commands);
void vkt_buffer_make(vkt *t, VkDeviceSize bytes, vkt_buffer *out);
void vkt_buffer_free(vkt *t, vkt_buffer *buffer);
/* False: the device has no shaderDeviceClock (the reason printed). */
bool vkt_spin_make(vkt *t, vkt_spin *out);
void vkt_spin_free(vkt *t, vkt_spin *spin);
/* A command buffer (simultaneous use) of one dispatch spinning for `ticks`. */
VkCommandBuffer vkt_spin_commands(vkt *t, const vkt_spin *spin, uint64_t ticks);

#endif /* TPEVENT_TESTS_VULKAN_VK_TEST_H */
