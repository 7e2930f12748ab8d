/*
 * The Vulkan backend: device "vulkan", the module libtpevent-vulkan.so, on the
 * Vulkan loader (libvulkan.so.1). What it promises, beyond the rules of
 * docs/design.md (docs/vulkan.md has the detail):
 *
 * Devices. The physical devices the loader lists that have a queue family with
 * compute and timestamps and timeline semaphores (Vulkan 1.2), numbered in the
 * loader's order; others are left out, and where none is left the backend is
 * unavailable with each one's reason (no driver at all: the loader's error).
 * tp_device_name is the device's deviceName.
 *
 * Streams. Each device has one VkDevice and one queue of its compute family,
 * shared by its streams; a stream is a timeline semaphore of its own, each of its
 * submissions a batch that signals the timeline's next value (vk_worker.c). One
 * priority (0). tp_stream_native is the shared VkQueue; work submitted there by
 * the caller is not part of the stream. tp_stream_from_native is not offered.
 *
 * Records are values of the stream's timeline: without timing no batch at all
 * (the stream's last value), with timing a batch that writes a timestamp query at
 * the bottom of the pipe (lavapipe: at the top, after its compute and transfer
 * commands all the same; vk_device.c, stamp_stage).
 * Query reads the semaphore's counter (vkGetSemaphoreCounterValue), synchronize
 * spins TP_SPIN_NS and then, with TP_EVENT_BLOCKING, sleeps in vkWaitSemaphores
 * (else yields between reads). tp_event_native is the latest record's timeline
 * VkSemaphore.
 *
 * Waits. A wait for a value already on the device's queue is a native semaphore
 * wait. Host functions, holds and waits for what is not on the queue yet (another
 * device's record, a record a held stream has not submitted) wait in the stream's
 * worker, a thread of its own, and the stream's later submissions queue behind
 * them there: a wait-before-signal on a shared queue would hold up every stream
 * of the device. So host functions may block (host_fn_may_block: waits across
 * backends are the core's blocking host functions), and a hold is a gate in the
 * worker (rule 17); the window is unbounded (the worker's queue is the host's).
 *
 * Timestamps (rule 13) are the timestamp queries put on CLOCK_MONOTONIC through
 * VK_EXT_calibrated_timestamps (vk_clock.c); a device without it answers
 * TP_ERR_UNSUPPORTED for timestamps and times across devices.
 *
 * Host functions (rule 15) run on the stream's worker after the stream's earlier
 * work is reached; one may call tpevent and Vulkan but must not wait for its own
 * stream, its device or a record of its stream after itself
 * (TP_ERR_INVALID_ARGUMENT).
 *
 * Not offered: interprocess events (rule 8: TP_EVENT_INTERPROCESS is
 * TP_ERR_UNSUPPORTED with the reason) and capture (rule 16: a Vulkan command buffer
 * holds no host functions nor host waits; the core answers TP_ERR_UNSUPPORTED).
 */
#ifndef TPEVENT_BACKENDS_VULKAN_VK_BACKEND_H
#define TPEVENT_BACKENDS_VULKAN_VK_BACKEND_H

#include "core/builtin_backends.h"

/* The module's exported entry (vk_module_entry.c); forwards to tp_backend_entry_vulkan. */
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size);

#endif /* TPEVENT_BACKENDS_VULKAN_VK_BACKEND_H */
