/*
 * What the two files of an interprocess event's shared record state share: the
 * region's layout in memory (the same in every process that maps it) and one
 * process's hold on it. cpu_ipc_region.c makes, opens and frees regions;
 * cpu_ipc.c keeps the records in them. Not for any other file: the rest of the
 * backend sees only the functions of cpu_internal.h.
 */
#ifndef TPEVENT_BACKENDS_CPU_IPC_H
#define TPEVENT_BACKENDS_CPU_IPC_H

#include "backends/cpu/cpu_internal.h"

#define CPU_IPC_MAGIC "tpevcpu" /* 8 bytes with its NUL */
#define CPU_IPC_LAYOUT_VERSION 3u
#define CPU_IPC_CHANNELS 64u

_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
               "atomics shared between processes must be lock-free");

typedef struct cpu_ipc_channel {
    /* The owner; written under the region's lock while nothing is pending, read
     * anywhere. pid 0: never used. */
    _Atomic int32_t pid;
    _Atomic uint64_t start_time;
    /* The owner's PID namespace (the inode of /proc/self/ns/pid; 0: unknown): a pid
     * means something only there, and processes of two containers may have equal
     * pids (an event handed over a socket, cpu_ipc_region.c). */
    _Atomic uint64_t pid_ns;
    _Atomic uint64_t stream; /* the owner's cpu_queue, as a number */
    /* The byte past the region that the owner's handle holds a lock on while it lives
     * (cpu_ipc_region.c), which tells a waiter of another PID namespace whether it is
     * gone; 0: none. Set at each record, under the region's lock. */
    _Atomic uint64_t owner_lock;
    /* `recorded` under the region's lock; `reached` by the owner's stream (or under
     * the lock when nothing is pending). reached <= recorded. */
    _Atomic uint64_t recorded;
    _Atomic uint64_t reached;
} cpu_ipc_channel;

typedef struct cpu_ipc_region {
    /* Written once by the creator, before anyone else can see the region. */
    char magic[8];
    uint32_t layout_version;
    uint32_t size;
    uint64_t token;
    uint32_t flags; /* the creator's TP_EVENT_BLOCKING, which importers take on */
    uint32_t reserved;

    pthread_mutex_t lock; /* robust, process-shared */
    _Atomic uint64_t latest;
    _Atomic uint32_t progress; /* the futex word: bumped whenever a record is reached */
    _Atomic uint32_t waiters;  /* threads about to sleep on `progress`, all processes */
    cpu_ipc_channel channels[CPU_IPC_CHANNELS];
} cpu_ipc_region;

_Static_assert(sizeof(cpu_ipc_region) <= CPU_IPC_REGION_SIZE, "the shared state must fit its region");

/* One process's hold on a region: the event's handle and its wait tasks share it. */
struct cpu_ipc {
    atomic_uint refs;
    /* Kept open so that this process can export and send the event too: an open
     * file description of this handle's own, on which it holds an OFD lock on the
     * byte at lock_offset (cpu_ipc_region.c); lock_offset 0 where it has none (the
     * description received over a socket, where /proc/self/fd could not reopen it). */
    int fd;
    uint64_t lock_offset;
    cpu_ipc_region *region;
    tp_process_id self;
    uint64_t self_pid_ns; /* as cpu_ipc_channel.pid_ns */
    /* The process that exported the event, for an imported one (pidfd -1 and pid 0
     * otherwise): watched from import on (process.h), so that a pid reused by
     * another process does not pass for it. */
    tp_process_watch exporter;
    /* query looks at a pending record's process at most once a period. */
    _Atomic uint64_t next_liveness_check_ns;
    _Atomic uint64_t dead_ticket; /* a pending record whose process is known gone */
};

/* cpu_ipc_region.c: whether the handle holding the lock at `offset` is gone (its
 * process exited, or the handle was destroyed with nothing pending); false where it
 * cannot tell (offset 0, the look failed). */
bool tp_cpu_ipc_owner_gone(const cpu_ipc *ipc, uint64_t offset);

#endif /* TPEVENT_BACKENDS_CPU_IPC_H */
