/* The Vulkan tests' own Vulkan (vk_test.h). */
#include "vk_test.h"

#include "check.h"
#include "spin_spv.inc" /* tp_spin_spirv: the build's compile of spin.comp, or the committed one */

#include <stdio.h>
#include <string.h>

#define VK_CHECK(call) CHECK((call) == VK_SUCCESS)

int vkt_open(vkt *t, const char *device, tp_stream **stream)
{
    memset(t, 0, sizeof *t);
    int skip = test_skip_unless_device(device, "device");
    if (skip)
        return skip;
    CHECK_OK(tp_stream_create(stream, device, 0));
    t->info.size = sizeof t->info;
    CHECK_OK(tp_vulkan_stream_info(*stream, &t->info));
    t->device = (VkDevice)t->info.device;
    VkPhysicalDeviceVulkan12Properties properties12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 properties = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                              .pNext = &properties12};
    vkGetPhysicalDeviceProperties2((VkPhysicalDevice)t->info.physical_device, &properties);
    t->driver = properties12.driverID;
    printf("%s: %s (%s)\n", device, properties.properties.deviceName, properties12.driverName);
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = t->info.queue_family};
    VK_CHECK(vkCreateCommandPool(t->device, &pool, NULL, &t->pool));
    return 0;
}

void vkt_close(vkt *t, tp_stream *stream)
{
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_stream_destroy(stream));
    vkDestroyCommandPool(t->device, t->pool, NULL);
}

VkCommandBuffer vkt_begin(vkt *t, bool simultaneous)
{
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = t->pool,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1};
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VK_CHECK(vkAllocateCommandBuffers(t->device, &allocate, &commands));
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = simultaneous ? VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT : 0};
    VK_CHECK(vkBeginCommandBuffer(commands, &begin));
    return commands;
}

void vkt_end(VkCommandBuffer commands)
{
    VK_CHECK(vkEndCommandBuffer(commands));
}

void vkt_buffer_make(vkt *t, VkDeviceSize bytes, vkt_buffer *out)
{
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = bytes,
                               .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VK_CHECK(vkCreateBuffer(t->device, &info, NULL, &out->buffer));
    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(t->device, out->buffer, &needs);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties((VkPhysicalDevice)t->info.physical_device, &memory);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && type == UINT32_MAX; i++)
        if ((needs.memoryTypeBits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    CHECK(type != UINT32_MAX);
    VkMemoryAllocateInfo allocate = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = needs.size, .memoryTypeIndex = type};
    VK_CHECK(vkAllocateMemory(t->device, &allocate, NULL, &out->memory));
    VK_CHECK(vkBindBufferMemory(t->device, out->buffer, out->memory, 0));
    void *host = NULL;
    VK_CHECK(vkMapMemory(t->device, out->memory, 0, VK_WHOLE_SIZE, 0, &host));
    memset(host, 0, bytes);
    out->host = host;
}

void vkt_buffer_free(vkt *t, vkt_buffer *buffer)
{
    vkUnmapMemory(t->device, buffer->memory);
    vkDestroyBuffer(t->device, buffer->buffer, NULL);
    vkFreeMemory(t->device, buffer->memory, NULL);
}

bool vkt_spin_make(vkt *t, vkt_spin *out)
{
    if (!t->info.shader_device_clock) {
        printf("the device has no shaderDeviceClock (VK_KHR_shader_clock): the spin shader cannot run\n");
        return false;
    }
    VkShaderModuleCreateInfo module = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = sizeof tp_spin_spirv, .pCode = tp_spin_spirv};
    VK_CHECK(vkCreateShaderModule(t->device, &module, NULL, &out->module));
    vkt_buffer_make(t, 256, &out->result);
    VkDescriptorSetLayoutBinding binding = {.binding = 0,
                                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                            .descriptorCount = 1,
                                            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo set_layout = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = 1, .pBindings = &binding};
    VK_CHECK(vkCreateDescriptorSetLayout(t->device, &set_layout, NULL, &out->set_layout));
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1, .poolSizeCount = 1, .pPoolSizes = &size};
    VK_CHECK(vkCreateDescriptorPool(t->device, &pool, NULL, &out->pool));
    VkDescriptorSetAllocateInfo set = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = out->pool,
                                       .descriptorSetCount = 1,
                                       .pSetLayouts = &out->set_layout};
    VK_CHECK(vkAllocateDescriptorSets(t->device, &set, &out->set));
    VkDescriptorBufferInfo buffer = {out->result.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = out->set,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &buffer};
    vkUpdateDescriptorSets(t->device, 1, &write, 0, NULL);
    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 4};
    VkPipelineLayoutCreateInfo layout = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                         .setLayoutCount = 1,
                                         .pSetLayouts = &out->set_layout,
                                         .pushConstantRangeCount = 1,
                                         .pPushConstantRanges = &range};
    VK_CHECK(vkCreatePipelineLayout(t->device, &layout, NULL, &out->layout));
    VkComputePipelineCreateInfo pipeline = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                      .module = out->module,
                                                      .pName = "main"},
                                            .layout = out->layout};
    VK_CHECK(vkCreateComputePipelines(t->device, VK_NULL_HANDLE, 1, &pipeline, NULL, &out->pipeline));
    return true;
}

void vkt_spin_free(vkt *t, vkt_spin *spin)
{
    vkDestroyPipeline(t->device, spin->pipeline, NULL);
    vkDestroyPipelineLayout(t->device, spin->layout, NULL);
    vkDestroyDescriptorPool(t->device, spin->pool, NULL);
    vkDestroyDescriptorSetLayout(t->device, spin->set_layout, NULL);
    vkDestroyShaderModule(t->device, spin->module, NULL);
    vkt_buffer_free(t, &spin->result);
}

VkCommandBuffer vkt_spin_commands(vkt *t, const vkt_spin *spin, uint64_t ticks)
{
    VkCommandBuffer commands = vkt_begin(t, true);
    CHECK(ticks < UINT32_MAX); /* spin.comp reads the clock's low word */
    uint32_t words[1] = {(uint32_t)ticks};
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, spin->pipeline);
    vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, spin->layout, 0, 1, &spin->set, 0, NULL);
    vkCmdPushConstants(commands, spin->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof words, words);
    vkCmdDispatch(commands, 1, 1, 1);
    vkt_end(commands);
    return commands;
}
