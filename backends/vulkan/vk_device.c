/*
 * Module state: the core's services, the instance and the devices. A device is a
 * physical device with a queue family that computes and with timeline semaphores
 * (Vulkan 1.2's timelineSemaphore); others are not numbered, and where none is
 * usable the backend is unavailable with each one's reason. Each device gets a
 * VkDevice and one queue of its compute family, shared by every stream (a queue
 * is all lavapipe has; vk_worker.c says why that is enough).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/clock.h"
#include "common/compiler.h"
#include "common/env.h"
#include "common/spin.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A last-level cache no device has more of; a flush writes twice what the device
 * reports, or this where it reports nothing (vk_flush.c). */
#define VK_FLUSH_BYTES_LEAST (64u << 20)

static const tp_host *module_host;
static const tp_backend *module_table;
static VkInstance instance;
static vk_device *devices;
static int device_count;

const tp_host *tp_vk_host(void)
{
    return module_host;
}

VkInstance tp_vk_instance(void)
{
    return instance;
}

const tp_backend *tp_vk_table(void)
{
    return module_table;
}

int tp_vk_device_count(void)
{
    return device_count;
}

vk_device *tp_vk_device(int index)
{
    return &devices[index];
}

const char *tp_vk_error_name(VkResult result)
{
    switch (result) {
#define NAME(r) \
    case r:     \
        return #r;
        NAME(VK_SUCCESS)
        NAME(VK_NOT_READY)
        NAME(VK_TIMEOUT)
        NAME(VK_INCOMPLETE)
        NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
        NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        NAME(VK_ERROR_INITIALIZATION_FAILED)
        NAME(VK_ERROR_DEVICE_LOST)
        NAME(VK_ERROR_MEMORY_MAP_FAILED)
        NAME(VK_ERROR_LAYER_NOT_PRESENT)
        NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
        NAME(VK_ERROR_FEATURE_NOT_PRESENT)
        NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
        NAME(VK_ERROR_TOO_MANY_OBJECTS)
        NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
        NAME(VK_ERROR_UNKNOWN)
#undef NAME
    default:
        return "VkResult";
    }
}

tp_status tp_vk_fail(const char *call, const char *runtime_call, VkResult result)
{
    tp_status status = result == VK_ERROR_OUT_OF_HOST_MEMORY ? TP_ERR_OUT_OF_MEMORY : TP_ERR_BACKEND;
    return module_host->fail(status, "%s: %s: %s (%d)", call, runtime_call, tp_vk_error_name(result), (int)result);
}

/* ------------------------------------------------------------ timelines */

uint64_t tp_vk_timeline_counter(const vk_timeline *timeline)
{
    uint64_t value = 0;
    (void)timeline->device->get_counter(timeline->device->device, timeline->semaphore, &value);
    tp_vk_tsan_acquire(timeline);
    return value;
}

static bool goal_reached(const void *arg)
{
    const timeline_goal *goal = arg;
    return tp_vk_timeline_counter(goal->timeline) >= goal->value;
}

tp_status tp_vk_timeline_wait(const vk_timeline *timeline, uint64_t value, bool sleep, const char *call)
{
    timeline_goal goal = {timeline, value};
    if (tp_spin_until(goal_reached, &goal, TP_SPIN_NS))
        return TP_OK;
    if (!sleep) {
        while (!goal_reached(&goal))
            sched_yield();
        return TP_OK;
    }
    VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                .semaphoreCount = 1,
                                .pSemaphores = &timeline->semaphore,
                                .pValues = &value};
    for (;;) {
        VkResult result = vkWaitSemaphores(timeline->device->device, &info, UINT64_MAX);
        if (result == VK_SUCCESS) {
            tp_vk_tsan_acquire(timeline);
            return TP_OK;
        }
        if (result != VK_TIMEOUT)
            return tp_vk_fail(call, "vkWaitSemaphores", result);
    }
}

tp_status tp_vk_timeline_take(vk_device *device, const char *call, vk_timeline **out)
{
    pthread_mutex_lock(&device->lock);
    vk_timeline **link = &device->free_timelines;
    while (*link && tp_vk_timeline_counter(*link) < (*link)->issued)
        link = &(*link)->next_free;
    vk_timeline *timeline = *link;
    if (timeline)
        *link = timeline->next_free;
    pthread_mutex_unlock(&device->lock);
    if (timeline) {
        *out = timeline;
        return TP_OK;
    }
    timeline = calloc(1, sizeof *timeline);
    if (!timeline)
        return module_host->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", call);
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    /* Exportable where the driver said so: any record may be waited for by another
     * runtime's stream (vk_export.c). */
    VkExportSemaphoreCreateInfo exportable = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                              .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    if (device->export_fd)
        type.pNext = &exportable;
    VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
    VkResult result = vkCreateSemaphore(device->device, &info, NULL, &timeline->semaphore);
    if (result != VK_SUCCESS) {
        free(timeline);
        return tp_vk_fail(call, "vkCreateSemaphore", result);
    }
    timeline->device = device;
    atomic_init(&timeline->known_reached, 0);
    *out = timeline;
    return TP_OK;
}

void tp_vk_timeline_give(vk_timeline *timeline)
{
    vk_device *device = timeline->device;
    pthread_mutex_lock(&device->lock);
    timeline->next_free = device->free_timelines;
    device->free_timelines = timeline;
    pthread_mutex_unlock(&device->lock);
}

/* ----------------------------------------------------------- submission */

tp_status tp_vk_submit(vk_device *device, const vk_batch *batch, const char *call)
{
    static const VkPipelineStageFlags all_commands = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo values = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = batch->wait ? 1 : 0,
        .pWaitSemaphoreValues = &batch->wait_value,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &batch->signal_value,
    };
    VkSubmitInfo info = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &values,
        .waitSemaphoreCount = batch->wait ? 1 : 0,
        .pWaitSemaphores = batch->wait ? &batch->wait->semaphore : NULL,
        .pWaitDstStageMask = &all_commands,
        .commandBufferCount = batch->commands  ? batch->command_count
                              : batch->command ? 1
                                               : 0,
        .pCommandBuffers = batch->commands ? batch->commands : &batch->command,
        .signalSemaphoreCount = 1,
        .pSignalSemaphores = &batch->signal->semaphore,
    };
    tp_vk_tsan_release(batch->signal);
    pthread_mutex_lock(&device->queue_lock);
    /* A value at or below `submitted` was signalled already: by the host, at exit
     * (vk_export.c), for a batch a worker held back until now; a timeline's value is
     * signalled once. */
    VkResult result = VK_SUCCESS;
    if (TP_LIKELY(batch->signal_value > atomic_load_explicit(&batch->signal->submitted, memory_order_relaxed))) {
        result = vkQueueSubmit(device->queue, 1, &info, VK_NULL_HANDLE);
        if (result == VK_SUCCESS) /* under the lock: vk_export.c's exit handler reads it there */
            atomic_store_explicit(&batch->signal->submitted, batch->signal_value, memory_order_release);
    }
    pthread_mutex_unlock(&device->queue_lock);
    return result == VK_SUCCESS ? TP_OK : tp_vk_fail(call, "vkQueueSubmit", result);
}

/* -------------------------------------------------------------- devices */

static bool has_extension(VkPhysicalDevice physical, const char *name)
{
    uint32_t count = 0;
    if (vkEnumerateDeviceExtensionProperties(physical, NULL, &count, NULL) != VK_SUCCESS)
        return false;
    VkExtensionProperties *all = calloc(count ? count : 1, sizeof *all);
    bool found = false;
    if (all && vkEnumerateDeviceExtensionProperties(physical, NULL, &count, all) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = strcmp(all[i].extensionName, name) == 0;
    free(all);
    return found;
}

/*
 * Whether the device's timeline semaphores can be exported as opaque fds, for
 * another runtime's stream to wait on them on the device (issue 56: CUDA's
 * cudaImportExternalSemaphore of a timeline fd): the driver's answer, asked rather
 * than assumed, said in `note` either way (vk_export.c reports it).
 */
static bool timeline_exportable(VkPhysicalDevice physical, char *note, size_t size)
{
    VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkPhysicalDeviceExternalSemaphoreInfo info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
                                                  .pNext = &type,
                                                  .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkExternalSemaphoreProperties answer = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    vkGetPhysicalDeviceExternalSemaphoreProperties(physical, &info, &answer);
    if (!(answer.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT)) {
        snprintf(note, size,
                 "vkGetPhysicalDeviceExternalSemaphoreProperties: a timeline semaphore is not exportable as an "
                 "opaque fd (externalSemaphoreFeatures 0x%x, compatibleHandleTypes 0x%x)",
                 (unsigned)answer.externalSemaphoreFeatures, (unsigned)answer.compatibleHandleTypes);
        return false;
    }
    if (!has_extension(physical, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
        snprintf(note, size, "exportable, but the driver has no VK_KHR_external_semaphore_fd to export them with");
        return false;
    }
    snprintf(note, size, "timeline semaphores as opaque fds (VK_KHR_external_semaphore_fd)");
    return true;
}

/* Whether the device calibrates its timestamps against CLOCK_MONOTONIC. */
static bool has_monotonic_domain(VkPhysicalDevice physical)
{
    PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT get_domains =
        (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkGetInstanceProcAddr(
            instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
    VkTimeDomainEXT domains[8];
    uint32_t count = 8;
    if (!get_domains || get_domains(physical, &count, domains) < VK_SUCCESS)
        return false;
    bool device_domain = false, monotonic = false;
    for (uint32_t i = 0; i < count; i++) {
        device_domain = device_domain || domains[i] == VK_TIME_DOMAIN_DEVICE_EXT;
        monotonic = monotonic || domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    }
    return device_domain && monotonic;
}

/* Why the physical device cannot be a tpevent device ("" when it can); its compute
 * family in *family. */
static void unusable_reason(VkPhysicalDevice physical, uint32_t *family, char *why, size_t size)
{
    why[0] = '\0';
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    if (properties.apiVersion < VK_API_VERSION_1_2) {
        snprintf(why, size, "Vulkan %u.%u, timeline semaphores need 1.2", VK_API_VERSION_MAJOR(properties.apiVersion),
                 VK_API_VERSION_MINOR(properties.apiVersion));
        return;
    }
    VkPhysicalDeviceVulkan12Features features12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &features12};
    vkGetPhysicalDeviceFeatures2(physical, &features);
    if (!features12.timelineSemaphore) {
        snprintf(why, size, "no timeline semaphores (timelineSemaphore)");
        return;
    }
    uint32_t count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, NULL);
    VkQueueFamilyProperties families[16];
    count = count < 16 ? count : 16;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
    for (uint32_t i = 0; i < count; i++)
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].timestampValidBits > 0) {
            *family = i;
            return;
        }
    snprintf(why, size, "no queue family with compute and timestamps");
}

static VkDeviceSize last_level_cache(VkPhysicalDevice physical)
{
    (void)physical; /* Vulkan reports no cache size: the least that covers every device's */
    return VK_FLUSH_BYTES_LEAST;
}

/*
 * Where a record's timestamp is written. The bottom of the pipe: once every earlier
 * command is done. Lavapipe runs compute and transfer commands to their end on its
 * queue's thread before it starts the next one, so its top of the pipe is already
 * after them (a 256 MB vkCmdFillBuffer between two timestamps read 28-35 ms at the
 * top, 37-41 ms at the bottom); at the bottom it first flushes its rasterizer, 8-40
 * us a timestamp on a busy machine, which was most of a sample of nothing and its
 * noise (two records with nothing between: 16-64 us at the bottom, 0.3-1 us at the
 * top). Graphics work drawn before a record on lavapipe would be missed there:
 * tpevent times compute.
 */
static VkPipelineStageFlagBits stamp_stage(VkPhysicalDevice physical)
{
    VkPhysicalDeviceVulkan12Properties properties12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 properties = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                              .pNext = &properties12};
    vkGetPhysicalDeviceProperties2(physical, &properties);
    return properties12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ? VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
                                                               : VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
}

static tp_status device_open(vk_device *device, VkPhysicalDevice physical, uint32_t family, char *reason,
                             size_t reason_size)
{
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    device->stamp_stage = stamp_stage(physical);
    uint32_t count = 16;
    VkQueueFamilyProperties families[16];
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families);
    device->physical = physical;
    device->family = family;
    snprintf(device->name, sizeof device->name, "%s", properties.deviceName);
    device->tick_ns = properties.limits.timestampPeriod;
    device->valid_bits = families[family].timestampValidBits;
    device->calibrated = has_extension(physical, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
                         has_monotonic_domain(physical);
    device->cache_bytes = last_level_cache(physical);
    bool exportable = timeline_exportable(physical, device->export_note, sizeof device->export_note);
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceProperties2 with_id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
    vkGetPhysicalDeviceProperties2(physical, &with_id);
    memcpy(device->uuid, id.deviceUUID, sizeof device->uuid);

    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = family,
                                     .queueCount = 1,
                                     .pQueuePriorities = &priority};
    /* The shader clock, where the device has it, for the users' own shaders
     * (include/tpevent/vulkan.h's interop; the measure tests' shader spins on it). */
    VkPhysicalDeviceShaderClockFeaturesKHR clock = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    if (has_extension(physical, VK_KHR_SHADER_CLOCK_EXTENSION_NAME)) {
        VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &clock};
        vkGetPhysicalDeviceFeatures2(physical, &features);
        clock.pNext = NULL;
    }
    device->shader_clock[0] = clock.shaderSubgroupClock;
    device->shader_clock[1] = clock.shaderDeviceClock;
    VkPhysicalDeviceVulkan12Features features12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = clock.shaderSubgroupClock || clock.shaderDeviceClock ? &clock : NULL,
        .timelineSemaphore = VK_TRUE};
    device->api_version = properties.apiVersion;
    device->extension_count = 0;
    if (device->calibrated)
        device->extensions[device->extension_count++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    if (features12.pNext)
        device->extensions[device->extension_count++] = VK_KHR_SHADER_CLOCK_EXTENSION_NAME;
    if (exportable)
        device->extensions[device->extension_count++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
    VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &features12,
                               .queueCreateInfoCount = 1,
                               .pQueueCreateInfos = &queue,
                               .enabledExtensionCount = device->extension_count,
                               .ppEnabledExtensionNames = device->extensions};
    VkResult result = vkCreateDevice(physical, &info, NULL, &device->device);
    if (result != VK_SUCCESS) {
        snprintf(reason, reason_size, "vulkan: vkCreateDevice for %s: %s", device->name, tp_vk_error_name(result));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    vkGetDeviceQueue(device->device, family, 0, &device->queue);
    device->get_counter = (PFN_vkGetSemaphoreCounterValue)vkGetDeviceProcAddr(device->device,
                                                                              "vkGetSemaphoreCounterValue");
    if (!device->get_counter) /* a core 1.2 call: only a broken driver has none; the loader's then */
        device->get_counter = vkGetSemaphoreCounterValue;
    if (device->calibrated)
        device->get_calibrated = (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(device->device,
                                                                                       "vkGetCalibratedTimestampsEXT");
    device->calibrated = device->get_calibrated != NULL;
    if (exportable)
        device->export_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(device->device, "vkGetSemaphoreFdKHR");
    if (exportable && !device->export_fd)
        snprintf(device->export_note, sizeof device->export_note, "vkGetDeviceProcAddr found no vkGetSemaphoreFdKHR");
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    result = vkCreateCommandPool(device->device, &pool, NULL, &device->commands);
    if (result != VK_SUCCESS) {
        snprintf(reason, reason_size, "vulkan: vkCreateCommandPool for %s: %s", device->name, tp_vk_error_name(result));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    pthread_mutex_init(&device->queue_lock, NULL);
    pthread_mutex_init(&device->lock, NULL);
    pthread_mutex_init(&device->clock_lock, NULL);
    return TP_OK;
}

/* With TPEVENT_VULKAN_VERBOSE, each physical device the loader listed, on stderr:
 * the device string it became, or why it was left out (as TPEVENT_OPENCL_VERBOSE
 * says what each OpenCL platform answered). */
static void device_note(uint32_t position, const VkPhysicalDeviceProperties *properties, const char *why, int index)
{
    if (why[0] != '\0')
        fprintf(stderr, "tpevent vulkan (pid %ld): physical device %u \"%s\" (Vulkan %u.%u): left out: %s\n",
                (long)getpid(), (unsigned)position, properties->deviceName,
                VK_API_VERSION_MAJOR(properties->apiVersion), VK_API_VERSION_MINOR(properties->apiVersion), why);
    else
        fprintf(stderr, "tpevent vulkan (pid %ld): physical device %u \"%s\" (Vulkan %u.%u): vulkan:%d\n",
                (long)getpid(), (unsigned)position, properties->deviceName,
                VK_API_VERSION_MAJOR(properties->apiVersion), VK_API_VERSION_MINOR(properties->apiVersion), index);
}

static tp_status instance_create(char *reason, size_t reason_size)
{
    VkApplicationInfo application = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "tpevent", .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &application};
    VkResult result = vkCreateInstance(&info, NULL, &instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
        snprintf(reason, reason_size,
                 "vulkan: no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER: the loader found no "
                 "ICD; Debian: mesa-vulkan-drivers, or see VK_ICD_FILENAMES)");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (result != VK_SUCCESS) {
        snprintf(reason, reason_size, "vulkan: vkCreateInstance: %s", tp_vk_error_name(result));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}

tp_status tp_vk_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size)
{
    module_host = host;
    module_table = table;
    tp_status status = instance_create(reason, reason_size);
    if (status != TP_OK)
        return status;
    uint32_t count = 0;
    VkResult result = vkEnumeratePhysicalDevices(instance, &count, NULL);
    VkPhysicalDevice physical[TP_MAX_DEVICES];
    count = count < TP_MAX_DEVICES ? count : TP_MAX_DEVICES;
    if (result == VK_SUCCESS || result == VK_INCOMPLETE)
        result = vkEnumeratePhysicalDevices(instance, &count, physical);
    if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
        snprintf(reason, reason_size, "vulkan: vkEnumeratePhysicalDevices: %s", tp_vk_error_name(result));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (count == 0) {
        snprintf(reason, reason_size,
                 "vulkan: the Vulkan loader found no device (no driver for this machine's "
                 "GPUs; Debian's mesa-vulkan-drivers gives lavapipe, a CPU device)");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    devices = calloc(count, sizeof *devices);
    if (!devices) {
        snprintf(reason, reason_size, "vulkan: out of memory listing devices");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    /* The reasons of the devices left out, for a backend with none usable. */
    char unusable[512] = "";
    size_t used = 0;
    bool verbose = tp_env("TPEVENT_VULKAN_VERBOSE") != NULL;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t family = 0;
        char why[160];
        unusable_reason(physical[i], &family, why, sizeof why);
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(physical[i], &properties);
        if (verbose)
            device_note(i, &properties, why, device_count);
        if (why[0] != '\0') {
            int n = snprintf(unusable + used, sizeof unusable - used, "%s%s: %s", used ? "; " : "",
                             properties.deviceName, why);
            used = n > 0 && used + (size_t)n < sizeof unusable ? used + (size_t)n : used;
            continue;
        }
        vk_device *device = &devices[device_count];
        device->index = device_count;
        if ((status = device_open(device, physical[i], family, reason, reason_size)) != TP_OK)
            return status;
        device_count++;
    }
    if (device_count == 0) {
        snprintf(reason, reason_size, "vulkan: no usable device (%s)", unusable);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}
