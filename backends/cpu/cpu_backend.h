/*
 * The CPU reference backend: device "cpu", built into the core library.
 *
 * It behaves like a GPU stream so that everything written against tpevent can be
 * tested without a GPU. What it promises, beyond the rules of DESIGN.md:
 *
 * Devices. TPEVENT_CPU_DEVICES (default 1, from 1 to TP_MAX_DEVICES) virtual devices,
 * "cpu:0".."cpu:N-1". They share the machine's cores; they exist so that the
 * cross-device rules (1, 7) can be tested. Any other value of the variable makes the
 * backend unavailable, with a reason naming the variable and the value.
 *
 * Streams. One worker thread per stream, started at the first submission that cannot
 * complete at once (a host function, a record on a busy stream, a wait on a record
 * not yet reached), runs its stream's tasks in submission order. A stream that never
 * needs one never has one. The worker exits once its stream is destroyed and its work
 * is done. Workers block every signal, so signals go to the application's threads.
 *
 * Records. On an idle stream a record completes at once on the caller's thread,
 * stamped with clock_gettime(CLOCK_MONOTONIC): timing plain CPU code costs a clock
 * read and no thread hop. On a busy stream an event with TP_EVENT_TIMING is stamped by
 * the worker when it reaches the record; an event without timing needs no stamp, so
 * its record only notes how far the stream has to get and enqueues nothing.
 *
 * Synchronize. event_synchronize spins for up to TP_CPU_SPIN_NS (with a pause
 * instruction) and then sleeps on a condition variable; with TP_EVENT_BLOCKING it
 * sleeps at once. stream_synchronize spins the same short while then sleeps;
 * device_synchronize sleeps at once. A sleeping thread uses no CPU.
 *
 * Host functions run on the stream's worker. One may call tpevent on other streams
 * and record events on its own stream (that only enqueues), but must not wait for
 * its own stream (synchronize it, an event recorded on it after itself, or its
 * device): that would wait for itself forever, and the call fails with
 * TP_ERR_INVALID_ARGUMENT instead. Waits through other streams that come back to it
 * cannot be detected and deadlock, as on CUDA.
 *
 * Priorities. Clamped to [TP_CPU_PRIORITY_HIGHEST, 0] and reported by
 * tp_stream_priority, but they order nothing: each stream has its own thread and the
 * kernel's scheduler decides. They are accepted so that code written for CUDA runs.
 *
 * Native streams. The native handle of a CPU stream is the tp_stream itself (for a
 * stream made by tp_stream_from_native, the stream it wraps). tp_stream_from_native
 * takes such a pointer and gives a borrowed wrapper that feeds the same FIFO; the
 * wrapper keeps the stream's queue alive until both are destroyed.
 *
 * Not offered: IPC (a later task) and tp_native_sample (no runtime underneath).
 */
#ifndef TPEVENT_BACKENDS_CPU_BACKEND_H
#define TPEVENT_BACKENDS_CPU_BACKEND_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long a non-blocking synchronize spins before it sleeps, in ns: long enough
 * to catch a worker that is about to finish a short task without a futex round
 * trip, short enough that a thread waiting for long work costs nothing measurable. */
#define TP_CPU_SPIN_NS 20000u

/* The CPU backend's table, same shape as tp_backend_entry_fn. Refuses a core_abi
 * other than TP_BACKEND_ABI_VERSION with a reason. */
tp_status tp_backend_entry_cpu(uint32_t core_abi, const tp_backend **out, char *reason,
                               size_t reason_size);

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_BACKENDS_CPU_BACKEND_H */
