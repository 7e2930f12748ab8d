/*
 * The OpenCL backend: device "opencl", the module libtpevent-opencl.so, on the ICD
 * loader. What it promises, beyond the rules of docs/design.md:
 *
 * Devices. Every device of every platform the ICD loader lists, numbered across the
 * platforms in the loader's order, each platform's devices in its order;
 * tp_device_name is "<device> (<platform>)". A machine without a platform makes the
 * backend unavailable with the reason (no ICD file, or OCL_ICD_FILENAMES).
 *
 * Streams are in-order command queues with CL_QUEUE_PROFILING_ENABLE, one context
 * per device. tp_stream_from_native wraps a caller's in-order cl_command_queue of
 * the device (of any context); NULL is refused (OpenCL has no legacy default queue)
 * and so is an out-of-order queue (rule 12). The default stream is a queue like any
 * other: its native handle is that queue, not NULL as on CUDA. One priority (0).
 * tp_stream_query and tp_stream_synchronize look at a marker after the stream's
 * work, which the stream keeps and makes anew only once tpevent enqueued more on it:
 * a stream with nothing enqueued since that marker completed is idle without a new
 * command (NVIDIA's OpenCL keeps a marker enqueued on an idle queue CL_QUEUED for
 * some us). On PoCL a marker is CL_SUBMITTED once every earlier command of its queue
 * completed, which counts as idle; elsewhere only CL_COMPLETE does. A stream wrapped
 * from a caller's queue gets a new marker at each query (the caller may have
 * enqueued work tpevent never saw): on NVIDIA's OpenCL an idle wrapped queue reads
 * busy to a query for the few us its marker takes; synchronize is exact.
 *
 * Records are markers (clEnqueueMarkerWithWaitList), flushed at once. tp_event_native
 * is the latest record's marker (a cl_event, valid until the next record or the
 * destroy). tp_event_from_native wraps a caller's command event (a pyopencl
 * Event's int_ptr) of the device read-only, retained until the wrapper goes: query,
 * synchronize, wait, elapsed time and the timestamp answer for that command (its
 * CL_PROFILING_COMMAND_END is its time: its queue must profile for those two); a
 * record on it is TP_ERR_UNSUPPORTED, since a cl_event is one command's and cannot
 * be recorded again. A user event is refused (no command, no time).
 *
 * Synchronize spins TP_SPIN_NS, then with TP_EVENT_BLOCKING (and stream and device
 * synchronize; a host function's worker with no spin) sleeps until the CL_COMPLETE
 * callback or a poll of its state (sleeps that double up to 1 ms) sees it over,
 * whichever comes first: not in clWaitForEvents (NVIDIA's spins a CPU), not on the
 * callback alone (NVIDIA's comes up to 20 ms late); without it, yields the CPU
 * between polls.
 *
 * Elapsed time and timestamps read CL_PROFILING_COMMAND_END only of a record seen
 * CL_COMPLETE (NVIDIA's OpenCL answers CL_SUCCESS and a meaningless END before); a
 * record keeps that it was seen so, and then costs one call.
 *
 * Waits. Within one context a barrier on the marker; across contexts, and from a
 * record of another backend, a barrier on a user event that the record's
 * completion sets (rule 14: no thread is held per wait; one notifier thread of the
 * module polls every pending record, ocl_notify.c). tp_stream_hold is the same user
 * event barrier (rule 17); PoCL's queues have no bound, so the window is INT64_MAX
 * there, and OCL_HOLD_WINDOW (256, ocl_internal.h) on other platforms.
 *
 * tp_measure's cold calls (rule 18) fill a buffer twice CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
 * first, at least 64 MB (PoCL reports no cache); ocl_flush.c.
 *
 * Timestamps (rule 13) are CL_PROFILING_COMMAND_END mapped to CLOCK_MONOTONIC
 * through bracketed, drift-corrected anchors (ocl_clock.c); error_ns is the widest
 * anchor bracket's half plus its residual, plus 2 us.
 *
 * Host functions (rule 15) run on a worker thread of their stream's own; one may
 * call tpevent and OpenCL but must not wait for its own stream, its device or an
 * event recorded on its stream after itself (TP_ERR_INVALID_ARGUMENT).
 *
 * Not offered: interprocess events (rule 8; TP_EVENT_INTERPROCESS is
 * TP_ERR_UNSUPPORTED with the reason) and capture (rule 16: cl_khr_command_buffer
 * records only its own commands, not markers, waits or host functions).
 */
#ifndef TPEVENT_BACKENDS_OPENCL_OCL_BACKEND_H
#define TPEVENT_BACKENDS_OPENCL_OCL_BACKEND_H

#include "core/builtin_backends.h"

/* The module's exported entry (ocl_module_entry.c); forwards to tp_backend_entry_opencl. */
TP_BACKEND_EXPORT tp_status tpevent_backend_entry(uint32_t core_abi, const tp_backend **out, char *reason,
                                                  size_t reason_size);

#endif /* TPEVENT_BACKENDS_OPENCL_OCL_BACKEND_H */
