/*
 * Interprocess events handed over a Unix socket (include/tpevent/ipc.h), on the GPU:
 * their record state is a page of a sealed memfd that every process holding the
 * event maps and registers as mapped host memory (gpu_ipc_page.c). For
 * gpu_ipc_event.c, whose interprocess events attach one at their first send (or are
 * received with one) and from then on record, wait, query and synchronize through it.
 */
#ifndef TPEVENT_BACKENDS_GPU_IPC_PAGE_H
#define TPEVENT_BACKENDS_GPU_IPC_PAGE_H

#include "backends/gpu/gpu_internal.h"

typedef struct gpu_page gpu_page;

/* The payload that travels with the page's descriptor: u32 version, u32 page size,
 * u64 token, little-endian. */
#define GPU_PAGE_PAYLOAD_SIZE 16u

/* A new page for an event of `device` made with `flags`, mapped and registered. */
tp_status gpu_page_create(gpu_device *device, unsigned flags, gpu_page **out);
/* The page behind a received descriptor, checked against the payload; takes fd
 * (closed on failure). */
tp_status gpu_page_adopt(gpu_device *device, int fd, const unsigned char *payload, size_t length, gpu_page **out);
/* What is sent: the page's descriptor (the page's own) and the payload. */
void gpu_page_describe(const gpu_page *page, int *fd, unsigned char *payload, size_t *length);
/* The sender's TP_EVENT_BLOCKING, which receivers take on. */
unsigned gpu_page_flags(const gpu_page *page);
/* Drops a hold on the page (the event's, a pending wait's or adopted record's); the
 * page goes once no hold is left and no write of this process into it and no wait
 * of its streams on it is pending (rule 9). */
void gpu_page_release(gpu_page *page);

/* A record on the stream: the stream writes its channel's next value once its
 * earlier work is done (rule 3). */
tp_status gpu_page_record(gpu_page *page, gpu_stream *stream);
/* The event's latest record was made before the page, as the native record a
 * snapshot names: it becomes the page's latest, reached when the snapshot's is,
 * unless a record through the page came first (that one is then the latest). */
tp_status gpu_page_adopt_record(gpu_page *page, const tp_snapshot *snapshot);
/* Rules 4-6: never blocks; blocks the thread (sleeping with TP_EVENT_BLOCKING); later
 * work of the stream waits for the record latest now. */
tp_status gpu_page_query(gpu_page *page, bool *done);
tp_status gpu_page_synchronize(gpu_page *page, bool blocking);
tp_status gpu_page_wait(gpu_page *page, gpu_stream *stream);

#endif /* TPEVENT_BACKENDS_GPU_IPC_PAGE_H */
