/*
 * What interprocess events rest on (gpu_ipc.c), for gpu_ipc_event.c: the payload of
 * an IPC handle, the handles opened in this process, retirement of shared native
 * events and the exporters' liveness. Out of gpu_internal.h, which only these two
 * files need it from.
 */
#ifndef TPEVENT_BACKENDS_GPU_IPC_H
#define TPEVENT_BACKENDS_GPU_IPC_H

#include "backends/gpu/gpu_internal.h"

/*
 * The payload of an IPC handle (the core writes the header around it). All
 * integers little-endian.
 *   [0..8)    RT_IPC_PAYLOAD_MAGIC: a payload of this runtime's backend
 *   [8..12)   payload version (GPU_IPC_PAYLOAD_VERSION)
 *   [12..16)  the event's flags: TP_EVENT_INTERPROCESS, maybe TP_EVENT_BLOCKING
 *   [16..20)  the exporter's pid
 *   [20..24)  the exporter's device index, in its own numbering (for messages)
 *   [24..32)  the exporter's start time
 *   [32..48)  the device's UUID; all zero if the runtime could not tell
 *   [48..112) the runtime's IPC event handle
 */
#define GPU_IPC_PAYLOAD_VERSION 1u
#define GPU_IPC_PAYLOAD_SIZE 112u
#define GPU_IPC_HANDLE_OFFSET 48u

typedef struct gpu_ipc_payload {
    unsigned flags;
    tp_process_id exporter;
    int device;
    unsigned char uuid[GPU_UUID_SIZE];
    rt_ipc_event_handle handle;
} gpu_ipc_payload;

/*
 * One opened IPC handle in this process. Importing the same handle again on the
 * same device shares it (so whatever the runtime does with a handle opened twice,
 * each imported tp event stays valid until it is destroyed); the native event goes
 * once the last of them is destroyed.
 */
typedef struct gpu_import {
    struct gpu_import *next; /* the device's list, under its ipc_lock */
    unsigned refs;           /* under the device's ipc_lock */
    rt_event native;
    tp_process_id exporter;
    /* The exporter watched from import on (its pidfd where the kernel has them,
     * process.h): a pid reused by another process does not pass for it. */
    tp_process_watch exporter_watch;
    unsigned char payload[GPU_IPC_PAYLOAD_SIZE]; /* exported again as it came */
    /* query looks at the exporter at most once a period; once it is known gone,
     * it stays gone. */
    _Atomic uint64_t next_liveness_check_ns;
    atomic_bool exporter_gone;
    atomic_bool recorded_here; /* a tp event of this process recorded it */
} gpu_import;

void gpu_payload_encode(const gpu_ipc_payload *p, unsigned char *out);

/* The payload's fields, or TP_ERR_INVALID_ARGUMENT for one this backend did not
 * write. Says nothing yet about whether its exporter still runs. */
tp_status gpu_payload_decode(const unsigned char *payload, size_t length, gpu_ipc_payload *p);

/* The device's UUID, read once; all zero (and false) if the runtime cannot tell. */
bool gpu_device_uuid(gpu_device *device, unsigned char uuid[GPU_UUID_SIZE]);

/* Refuses an import on a device that is not the GPU the event lives on, where
 * both UUIDs are known. */
tp_status gpu_check_same_gpu(gpu_device *device, const gpu_ipc_payload *p);

/*
 * Gives up a shared native event (exported from here, or an opened handle) that no
 * tp event uses any more; with a record still pending it is kept until the record
 * is reached (rule 9). `exporter`: of an imported one, else NULL.
 */
void gpu_retire_shared_native(gpu_device *device, rt_event native, const tp_process_id *exporter);

/* The opened handle for `payload` on the device: the one already open here, or
 * newly opened. gpu_import_release drops one hold on it. */
tp_status gpu_import_acquire(gpu_device *device, const gpu_ipc_payload *p, const unsigned char *payload,
                             gpu_import **out);
void gpu_import_release(gpu_device *device, gpu_import *import);

/* Whether an import's exporter still runs (once gone, gone); the throttled form looks
 * at /proc at most once a TP_LIVENESS_PERIOD_NS (query may be called in a loop). */
bool gpu_import_exporter_alive(gpu_import *import);
bool gpu_import_exporter_alive_throttled(gpu_import *import);

/* TP_ERR_BACKEND: the import's exporter exited before reaching the record. */
tp_status gpu_exporter_exited(const gpu_import *import, const char *operation);

#endif /* TPEVENT_BACKENDS_GPU_IPC_H */
