/*
 * What the process-level IPC tests share: a peer process to export, import, record
 * and wait from, the bytes of a handle, and the resources a test must not leak.
 *
 * The peer is this same test program started anew (posix_spawn, never a bare
 * fork: CUDA does not survive fork without exec) as `--device D --test role_peer`.
 * It reads commands from descriptor PEER_COMMAND_FD and answers each on
 * PEER_REPLY_FD, one fixed-size message at a time; a shared page the parent made
 * (a memfd) is at PEER_PAGE_FD, so that host functions of both processes can write
 * and read the same memory.
 */
#ifndef TPEVENT_TESTS_IPC_SUPPORT_H
#define TPEVENT_TESTS_IPC_SUPPORT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "support.h"

/* Descriptors of the peer, set up before it starts. */
#define PEER_COMMAND_FD 3
#define PEER_REPLY_FD 4
#define PEER_PAGE_FD 5

/* How long a peer may take to answer a command that does not block. */
#define PEER_REPLY_SECONDS 20.0

/* The bound the issue sets on noticing a dead process. */
#define DEATH_NOTICED_SECONDS 2.0

enum peer_command {
    PEER_CREATE = 1,   /* arg: flags added to TP_EVENT_INTERPROCESS; the peer's event */
    PEER_EXPORT,       /* reply.handle: the peer event's handle */
    PEER_IMPORT,       /* handle: the peer's event becomes this imported one */
    PEER_RECORD_GATED, /* arg: a value. On the peer's stream: a closed gate, a host
                        * function writing the value into the page (if it has
                        * one), the record */
    PEER_RECORD_IDLE,  /* records the event on an idle stream (reached at once) */
    PEER_OPEN_GATES,   /* opens every gate of the peer */
    PEER_QUERY,        /* reply.status, reply.done */
    PEER_SYNCHRONIZE,  /* reply.status; blocks the peer until it returns */
    PEER_DESTROY,      /* destroys the peer's event */
    PEER_EXIT,         /* cleans up and exits 0 */
};

typedef struct peer_message {
    int32_t command;
    int32_t status; /* a tp_status */
    int64_t arg;
    int32_t done;
    int32_t pid; /* the peer's, in replies */
    tp_ipc_handle handle;
    char error[256]; /* the peer's tp_last_error() for a failed call */
} peer_message;

/* The page both processes see: host functions write and read `value`. */
typedef struct shared_page {
    _Atomic int64_t value;
} shared_page;

typedef struct peer {
    pid_t pid;
    int command_fd; /* ours: the write end */
    int reply_fd;   /* ours: the read end */
    bool reaped;
} peer;

/* A page in a memfd: mapped here, its descriptor handed to peers. */
typedef struct page_mapping {
    int fd;
    shared_page *page;
} page_mapping;

void page_create(page_mapping *mapping);
void page_destroy(page_mapping *mapping);

/* Starts a peer on `device`; `page_fd` is -1 or handed to it at PEER_PAGE_FD. */
void peer_start(peer *p, const char *device, int page_fd);
void peer_send(peer *p, enum peer_command command, int64_t arg, const tp_ipc_handle *handle);
/* The reply to the last command, if it comes within `seconds`; fails the test if
 * the peer closed its end (it died) or answered something else. */
bool peer_reply_within(peer *p, double seconds, peer_message *reply);
/* send, then a reply within PEER_REPLY_SECONDS, which must be TP_OK. */
peer_message peer_call(peer *p, enum peer_command command, int64_t arg, const tp_ipc_handle *handle);
/* Sends PEER_EXIT and checks that the peer exits with status 0. */
void peer_finish(peer *p);
/* SIGKILL; the peer stays a zombie until peer_reap. */
void peer_kill(peer *p);
/* Waits for the peer to end; its wait status. */
int peer_reap(peer *p);

/* The program a peer runs: `--test role_peer`. */
int peer_main(const char *device, bool has_page);

/*
 * Whether the device's interprocess events reach their records in order: on CUDA
 * (and HIP, which copies it) a record of an interprocess event is reached only once
 * every earlier record of it is, whichever stream or process made them (measured
 * on the H200: even the recording process sees a record on an idle stream pending
 * while an earlier one is gated). Rule 3 then holds for records that do not
 * overlap; README.md says so. The CPU backend has no such limit.
 */
bool interprocess_records_complete_in_order(const char *device);

/* ---------------------------------------------------------------- handles */

/* Fields of the handle's header (core/backend.h; the tests read the public bytes,
 * so the layout is restated here). */
#define HANDLE_HEADER_SIZE 16u
#define HANDLE_PAYLOAD_MAX (TP_IPC_HANDLE_SIZE - HANDLE_HEADER_SIZE)
#define HANDLE_TYPE_OFFSET 6u
#define HANDLE_INDEX_OFFSET 7u
#define HANDLE_LENGTH_OFFSET 8u
#define HANDLE_CHECKSUM_OFFSET 12u

/* Little-endian u32 and FNV-1a (from 2166136261u), written out apart from the core's
 * so that a change there is caught: the handle's and the socket message's checksum. */
uint32_t ipc_get_u32(const unsigned char *p);
void ipc_put_u32(unsigned char *p, uint32_t v);
uint32_t ipc_fnv1a(uint32_t hash, const unsigned char *bytes, size_t length);

uint32_t handle_payload_length(const tp_ipc_handle *handle);
void handle_set_length(tp_ipc_handle *handle, uint32_t length);
/* Recomputes the checksum (FNV-1a of bytes [0, 12) and the payload), as the core
 * does, so that a changed handle passes the core's check and reaches the backend. */
void handle_reseal(tp_ipc_handle *handle);

/* Imports, expecting the given status; on success the event is destroyed. Fails
 * the test with the handle's bytes and the library's message otherwise. */
void expect_import(const tp_ipc_handle *handle, const char *device, tp_status expected, const char *what);

/* A test's own random numbers (xorshift64*), so that a failure can be replayed
 * from its seed. */
uint64_t next_random(uint64_t *state);

/* -------------------------------------------------------------- resources */

/* Descriptors this process has open. */
int open_fd_count(void);

/* The names in /dev/shm, sorted, as one string joined by '\n'. */
char *dev_shm_listing(void);
/* Fails the test, naming them, if `after` holds names that `before` does not. */
void check_nothing_new_in_dev_shm(const char *before, const char *after);
/* The same, except for names that start with `foreign_prefix` (files of a driver
 * underneath, not of tpevent), which are printed and let pass. */
void check_nothing_new_in_dev_shm_except(const char *before, const char *after, const char *foreign_prefix);

/* CPU time (user + system) of the calling thread, in seconds, from
 * getrusage(RUSAGE_THREAD). */
double thread_rusage_seconds(void);

/* A tpevent call on another thread, to see whether and when it returns. */
typedef struct async_call {
    tp_event *event;
    tp_status status;
    char error[256];
    atomic_bool returned;
    double started;     /* monotonic_seconds() */
    double finished;    /* monotonic_seconds() when it returned */
    double cpu_seconds; /* CPU time the call's thread used inside it */
    pthread_t thread;
} async_call;

/* tp_event_synchronize(event) on a new thread. */
void async_synchronize(async_call *call, tp_event *event);
/* True if it returned within `seconds` (then it is joined). */
bool async_returned_within(async_call *call, double seconds);

#endif /* TPEVENT_TESTS_IPC_SUPPORT_H */
