/*
 * A device's timestamps on CLOCK_MONOTONIC (rule 13), through
 * VK_EXT_calibrated_timestamps: one call reads the device's timestamp and
 * CLOCK_MONOTONIC together, with the bound of their difference (maxDeviation). A
 * device's anchor is made anew when it is older than VK_ANCHOR_NS, so that the two
 * clocks' drift between anchors stays within the error it reports. On lavapipe the
 * device's timestamps are CLOCK_MONOTONIC itself (both domains read equal).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/vulkan/vk_internal.h"
#include "common/clock.h"

#include <math.h>

/* How old an anchor may get before a conversion makes a new one. */
#define VK_ANCHOR_NS 100000000u

/* What the error adds to the calibration's own bound: the two clocks' drift over an
 * anchor's life, 2 us being 20 ppm over 100 ms. Not measured on a Vulkan device: on
 * the H200, CUDA's event clock ran 8.7 ppm fast against CLOCK_MONOTONIC
 * (backends/gpu/gpu_clock.c), 0.9 us over 100 ms; lavapipe's is CLOCK_MONOTONIC. */
#define VK_DRIFT_NS 2000

static tp_status anchor_make(vk_device *device, const char *call)
{
    VkCalibratedTimestampInfoEXT domains[2] = {
        {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
        {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t values[2] = {0, 0};
    uint64_t deviation = 0;
    VkResult result = device->get_calibrated(device->device, 2, domains, values, &deviation);
    if (result != VK_SUCCESS)
        return tp_vk_fail(call, "vkGetCalibratedTimestampsEXT", result);
    device->anchor_ticks = values[0];
    device->anchor_host_ns = (int64_t)values[1];
    device->anchor_made_ns = tp_now_ns();
    if ((int64_t)deviation > device->deviation_ns)
        device->deviation_ns = (int64_t)deviation;
    return TP_OK;
}

static tp_status unsupported(vk_device *device, const char *call)
{
    return tp_vk_host()->fail(TP_ERR_UNSUPPORTED,
                              "%s: vulkan:%d (%s) has no VK_EXT_calibrated_timestamps with the device and "
                              "CLOCK_MONOTONIC domains: its timestamps cannot be put on the host clock",
                              call, device->index, device->name);
}

tp_status tp_vk_clock_convert(vk_device *device, uint64_t ticks, int64_t *host_ns)
{
    static const char call[] = "tp_event_timestamp";
    if (!device->calibrated)
        return unsupported(device, call);
    pthread_mutex_lock(&device->clock_lock);
    tp_status status = TP_OK;
    if (device->anchor_made_ns == 0 || tp_now_ns() - device->anchor_made_ns > VK_ANCHOR_NS)
        status = anchor_make(device, call);
    if (status == TP_OK) {
        uint64_t mask = device->valid_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << device->valid_bits) - 1;
        /* The difference within the valid bits, signed: a record older than the anchor is before it. */
        uint64_t delta = (ticks - device->anchor_ticks) & mask;
        int64_t signed_delta = delta > mask / 2 ? -(int64_t)((mask - delta) + 1) : (int64_t)delta;
        *host_ns = device->anchor_host_ns + (int64_t)llround((double)signed_delta * device->tick_ns);
    }
    pthread_mutex_unlock(&device->clock_lock);
    return status;
}

tp_status tp_vk_device_clock(int index, tp_clock_info *info)
{
    static const char call[] = "tp_device_clock";
    vk_device *device = tp_vk_device(index);
    if (!device->calibrated)
        return unsupported(device, call);
    pthread_mutex_lock(&device->clock_lock);
    tp_status status = device->anchor_made_ns == 0 ? anchor_make(device, call) : TP_OK;
    int64_t deviation = device->deviation_ns;
    pthread_mutex_unlock(&device->clock_lock);
    if (status != TP_OK)
        return status;
    int64_t tick = (int64_t)ceil(device->tick_ns);
    info->resolution_ns = tick > 0 ? tick : 1;
    info->error_ns = deviation + info->resolution_ns + VK_DRIFT_NS;
    return TP_OK;
}
