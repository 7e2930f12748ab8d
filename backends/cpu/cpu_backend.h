/*
 * The CPU reference backend: device "cpu", built into the core library.
 *
 * It behaves like a GPU stream so that everything written against tpevent can be
 * tested without a GPU. What it promises, beyond the rules of docs/design.md:
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
 * Synchronize. event_synchronize spins for up to TP_SPIN_NS (common/spin.h, with a pause
 * instruction) and then sleeps on a condition variable; with TP_EVENT_BLOCKING it
 * sleeps at once. stream_synchronize spins the same short while then sleeps;
 * device_synchronize sleeps at once. A sleeping thread uses no CPU. (An
 * interprocess event whose latest record was made elsewhere is slept on with a
 * futex shared between the processes, which wakes every 20 ms to look at the
 * recording process: well under 1% of a CPU.)
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
 * Interprocess events (TP_EVENT_INTERPROCESS, rule 8). At its first record or
 * export (rule 2) such an event gets its record state in a small shared memory
 * region, a memfd: nothing is ever created in /dev/shm or any other file system, so
 * nothing can be left behind however the processes end, SIGKILL included. The
 * handle names the exporting process (pid and start time), its descriptor of the
 * region and a random token; a process of the same user, in the same PID
 * namespace, opens the region through /proc/<pid>/fd/<fd>. Import refuses with
 * TP_ERR_INVALID_ARGUMENT, saying why, a handle whose exporter has exited (or whose
 * pid now belongs to another process), whose event the exporter destroyed, or
 * whose bytes are not what an export wrote. Every process holding the event may
 * query, synchronize, wait on, record and export it; an imported event takes on
 * the exporter's TP_EVENT_BLOCKING. Waits are versioned across processes as
 * within one (rule 6). A child forked from a process holding the event must exec
 * before it uses it.
 *
 * A process that exits before reaching a record it made: query and synchronize of
 * the event in the other processes fail with TP_ERR_BACKEND ("the process (pid N)
 * that recorded the event exited before reaching it") within about 20 ms, as long
 * as that record is the latest. A stream waiting on such a record has nobody to
 * report to: its wait gives up within about 20 ms and the stream goes on; the
 * event's query and synchronize report the death. A new record makes the event
 * usable again. At most 64 streams, of all processes together, may have records
 * of one interprocess event pending at once; a record on one more fails with
 * TP_ERR_BACKEND.
 *
 * Not offered: tp_native_sample (no runtime underneath).
 */
#ifndef TPEVENT_BACKENDS_CPU_BACKEND_H
#define TPEVENT_BACKENDS_CPU_BACKEND_H

#include "core/builtin_backends.h" /* its entry, tp_backend_entry_cpu */

#endif /* TPEVENT_BACKENDS_CPU_BACKEND_H */
