/*
 * The page behind a GPU event handed over a socket, as its two files see it:
 * gpu_ipc_page.c (making, receiving, freeing and recording) and gpu_ipc_page_wait.c
 * (query, synchronize and waits). The layout is shared with every process holding
 * the event: a change is a new PAGE_LAYOUT_VERSION (gpu_ipc_page.c). Not for any
 * other file: gpu_ipc_page.h is the page's interface.
 */
#ifndef TPEVENT_BACKENDS_GPU_IPC_PAGE_LAYOUT_H
#define TPEVENT_BACKENDS_GPU_IPC_PAGE_LAYOUT_H

#include "backends/gpu/gpu_graph.h"
#include "backends/gpu/gpu_ipc_page.h"

#include <stdalign.h>

#define PAGE_BYTES 4096u
#define PAGE_CHANNELS 56u
#define TICKET_SHIFT 56
#define COUNT_MASK ((UINT64_C(1) << TICKET_SHIFT) - 1)

typedef struct page_channel {
    _Atomic uint64_t reached;    /* written by a stream (or, for a record adopted, the host) */
    _Atomic uint64_t recorded;   /* under the lock */
    _Atomic uint64_t owner;      /* the writer (a handle's tag and a stream); 0: none yet */
    _Atomic uint64_t owner_lock; /* the byte its handle's lock is on; 0: none (see above) */
    uint64_t unused[4];          /* a line each: two writers never share one */
} page_channel;

typedef struct page_layout {
    /* Written once by the creator, before anyone else can see the page. */
    char magic[8];
    uint32_t layout_version;
    uint32_t size;
    uint64_t token;
    uint32_t flags; /* the creator's TP_EVENT_BLOCKING, which receivers take on */
    uint32_t reserved;
    pthread_mutex_t lock;
    _Atomic uint64_t latest; /* the latest record's ticket; 0: never recorded */
    alignas(512) page_channel channels[PAGE_CHANNELS];
} page_layout;

_Static_assert(sizeof(page_channel) == 64, "a channel a line");
_Static_assert(sizeof(page_layout) <= PAGE_BYTES, "the layout must fit the page");

struct gpu_page {
    atomic_uint refs; /* the event's, and each adopted record's pending notify */
    int fd;
    page_layout *layout;
    rt_device_ptr device_pointer; /* of layout, for stream memory operations */
    gpu_device *device;
    uint64_t tag;                            /* random: this handle's writers are tag ^ stream */
    _Atomic uint64_t claimed;                /* bit i: this handle took channel i at some time */
    _Atomic uint64_t waited[PAGE_CHANNELS];  /* the highest value this handle's streams wait for */
    uint64_t lock_offset;                    /* the byte this handle holds its lock on; 0: none */
    _Atomic uint64_t next_liveness_check_ns; /* query looks at most once a period */
    _Atomic uint64_t dead_ticket;            /* a pending record whose handle is known gone */
    struct gpu_page *next;                   /* on the retired list */
};

static inline bool channel_reached(const page_channel *channel, uint64_t count)
{
    return atomic_load_explicit(&channel->reached, memory_order_acquire) >= count;
}

static inline page_channel *ticket_channel(page_layout *layout, uint64_t ticket)
{
    uint64_t index = ticket >> TICKET_SHIFT;
    return index < PAGE_CHANNELS ? &layout->channels[index] : NULL;
}

static inline rt_device_ptr device_pointer_of(const gpu_page *page, _Atomic uint64_t *word)
{
    return rt_device_ptr_offset(page->device_pointer, (size_t)((char *)word - (char *)page->layout));
}

/* The latest record's ticket, channel and value; false if never recorded. */
static inline bool latest_record(gpu_page *page, uint64_t *ticket, page_channel **channel, uint64_t *count)
{
    *ticket = atomic_load_explicit(&page->layout->latest, memory_order_acquire);
    *channel = *ticket ? ticket_channel(page->layout, *ticket) : NULL;
    *count = *ticket & COUNT_MASK;
    return *channel != NULL;
}

/* Whether the stream captures: the runtime is asked only where the stream says a
 * capture may be involved (gpu_graph.h), so that a record or wait costs one relaxed
 * load here, as every other GPU record and wait does. */
static inline bool stream_capturing(gpu_stream *stream)
{
    return TP_UNLIKELY(gpu_stream_capture_checked(&stream->head)) && rt_stream_capturing(stream->native);
}

/* gpu_ipc_page.c's, for gpu_ipc_page_wait.c. */
/* Streams must write and wait on host memory: the device's stream memory operations. */
tp_status gpu_page_check_support(gpu_device *device, const char *who);
/* The error of a record or wait inside a capture (rule 16). */
tp_status gpu_page_refused_in_capture(const char *operation);

#endif /* TPEVENT_BACKENDS_GPU_IPC_PAGE_LAYOUT_H */
