/*
 * tpevent: a Vulkan user's own work on a tpevent stream (interop). Part of the stable
 * API, for programs that use Vulkan themselves; include it after, or instead of,
 * <tpevent/tpevent.h> (it includes that). It needs no Vulkan header: Vulkan's handles
 * are given as void * (VkInstance, VkPhysicalDevice, VkDevice, VkQueue and
 * VkCommandBuffer are dispatchable handles, pointers on every platform).
 *
 * A stream of a vulkan device is a timeline of its own on its device's one queue,
 * which every stream of the device shares, and tpevent's threads submit to that queue
 * (a held stream's work goes from a worker thread). Vulkan wants a queue's submissions
 * externally synchronized, so a program never calls vkQueueSubmit on it: it records
 * its command buffers on the device tp_vulkan_stream_info names and hands them to
 * tp_vulkan_stream_submit, which puts them in the stream's order. docs/vulkan.md says
 * more. Other backends answer both calls TP_ERR_UNSUPPORTED with the reason.
 */
#ifndef TPEVENT_VULKAN_H
#define TPEVENT_VULKAN_H

#include <tpevent/tpevent.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most command buffers one tp_vulkan_stream_submit takes. */
#define TP_VULKAN_SUBMIT_MOST 32u

/*
 * The Vulkan objects behind a stream of a vulkan device, owned by tpevent and valid
 * while the backend is loaded (the process's life): never destroy them. Set `size` to
 * sizeof(tp_vulkan_info) before the call (fields may be appended; a caller built
 * against an older header gets only the fields it knows).
 */
typedef struct tp_vulkan_info {
    size_t size;                   /**< sizeof(tp_vulkan_info), set by the caller */
    void *instance;                /**< VkInstance (Vulkan 1.2 asked for) */
    void *physical_device;         /**< VkPhysicalDevice */
    void *device;                  /**< VkDevice: record and allocate here */
    void *queue;                   /**< VkQueue, shared by every stream of the device: never submit to it */
    uint32_t queue_family;         /**< the queue's family: create command pools of it */
    uint32_t queue_index;          /**< the queue's index in its family */
    uint32_t api_version;          /**< the physical device's apiVersion (VK_MAKE_API_VERSION) */
    uint32_t extension_count;      /**< how many device extensions tpevent enabled */
    const char *const *extensions; /**< their names (VK_EXT_calibrated_timestamps, VK_KHR_shader_clock where found) */
    /** Features enabled besides Vulkan 1.2's timelineSemaphore, which always is:
     * VkPhysicalDeviceShaderClockFeaturesKHR's shaderSubgroupClock and
     * shaderDeviceClock, where the device has them (GLSL's clockARB and
     * clockRealtimeEXT). */
    bool shader_subgroup_clock; /**< shaderSubgroupClock enabled */
    bool shader_device_clock;   /**< shaderDeviceClock enabled */
} tp_vulkan_info;

/*
 * Fills `info` (its `size` set by the caller; at least up to `queue`, else
 * TP_ERR_INVALID_ARGUMENT) with the Vulkan objects behind `stream`. A stream of
 * another backend: TP_ERR_UNSUPPORTED naming the backend. Never blocks.
 */
TP_API tp_status tp_vulkan_stream_info(tp_stream *stream, tp_vulkan_info *info);

/*
 * Submits `count` (1 to TP_VULKAN_SUBMIT_MOST) of the caller's primary command
 * buffers, VkCommandBuffer each, recorded (executable) on the stream's VkDevice from
 * a pool of its queue family, to run in the stream's order: they start after all the
 * stream's earlier work has ended (records, waits, host functions, holds, earlier
 * submissions: an execution and memory barrier before them), run in the order given,
 * and the stream's later work starts after they ended (a barrier after them). A
 * record made after this call is reached once they ended; its time is after them.
 * While the stream is held (tp_stream_hold) or waits on the host, they go to the
 * queue when it is let go, as any work of the stream does.
 *
 * The command buffers stay the caller's: each must stay valid and unchanged (not
 * reset, re-recorded or freed) until work recorded on the stream after this call is
 * reached (tp_event_synchronize of an event recorded after it, tp_stream_synchronize);
 * one without VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT must not be pending
 * elsewhere. Vulkan's validity rules are the caller's: tpevent checks only that the
 * stream is a vulkan one, that `cmds` is given with `count` in range and no null
 * handle (else TP_ERR_INVALID_ARGUMENT naming the bad value; nothing was submitted).
 * A submission the driver refuses is TP_ERR_BACKEND with Vulkan's error; one made
 * later from the stream's worker that the driver refuses is not reported (the
 * stream's later records are reached all the same, so nothing waits for ever).
 */
TP_API tp_status tp_vulkan_stream_submit(tp_stream *stream, void *const *cmds, uint32_t count);

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_VULKAN_H */
