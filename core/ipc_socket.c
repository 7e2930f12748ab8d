/*
 * Interprocess events handed over a Unix-domain socket (include/tpevent/ipc.h): the
 * message, its descriptor, and every check on the receiving side that is not the
 * backend's payload.
 *
 * The message, 128 bytes, little-endian:
 *   [0..3]   magic "TPES"
 *   [4..5]   version (MESSAGE_VERSION)
 *   [6]      device type        [7] device index
 *   [8..15]  size of the descriptor's file, as the sender saw it
 *   [16..19] the event's TP_EVENT_* flags
 *   [20..23] payload length     [24..27] FNV-1a checksum of [0..24) and the payload
 *   [28..31] zero               [32..]   the backend's payload, then zeros
 * with one descriptor (SCM_RIGHTS) in the same sendmsg. On a stream socket the
 * message may arrive in pieces; the descriptor comes with the first.
 *
 * Why so many checks: the peer may be another container, a crashed process or a
 * hostile one. The receiver maps the descriptor, so it must be a sealed memfd that
 * nobody can shrink under the mapping (SIGBUS); every descriptor that arrives is
 * either handed to the backend or closed, never left open.
 */
#include "core/internal.h"
#include "common/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MESSAGE_MAGIC "TPES"
#define MESSAGE_VERSION 1u
#define MESSAGE_SIZE 128u
#define MESSAGE_HEADER 32u
#define MESSAGE_PAYLOAD_MAX (MESSAGE_SIZE - MESSAGE_HEADER)
#define REQUIRED_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
/* Descriptors a receive makes room for: more than one is refused, all closed. */
#define MAX_DESCRIPTORS 8

static uint32_t message_checksum(const unsigned char *message, size_t payload_length)
{
    return tp_fnv1a(tp_fnv1a(TP_FNV1A_BASIS, message, 24), message + MESSAGE_HEADER, payload_length);
}

/* The socket's type (SOCK_STREAM, ...) once it is known to be an AF_UNIX socket. */
static tp_status unix_socket_type(const char *who, int fd, int *type)
{
    socklen_t length = sizeof *type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, type, &length) != 0) {
        int err = errno;
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: descriptor %d is not a socket (%s)", who, fd,
                       err == ENOTSOCK ? "a file, pipe or device" : strerror(err));
    }
    struct sockaddr_storage address;
    length = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &length) != 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: getsockname: %s", who, fd, strerror(errno));
    if (address.ss_family != AF_UNIX)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "%s: socket %d is of address family %d, not AF_UNIX: descriptors travel only over "
                       "Unix-domain sockets",
                       who, fd, (int)address.ss_family);
    return TP_OK;
}

static TP_COLD tp_status socket_failed(const char *who, int fd, const char *call, int err)
{
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: %s: %s (the peer is gone or never connected)", who, fd,
                       call, strerror(err));
    if (err == EAGAIN || err == EWOULDBLOCK)
        return tp_fail(TP_ERR_NOT_READY, "%s: socket %d is non-blocking and %s would block", who, fd, call);
    return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: %s: %s", who, fd, call, strerror(err));
}

/* How long a message begun may wait for its rest. A message is 128 bytes, which a Unix
 * socket moves whole; a peer that stops inside one is stuck or hostile, and a caller
 * that made the socket non-blocking (or gave Python's socket a timeout) must not wait
 * on it for good. */
#define MESSAGE_REST_WAIT_MS 10000

/* Waits until the socket can go on with a message begun (a non-blocking socket); false
 * when MESSAGE_REST_WAIT_MS pass first (the poll retried on a signal, from its start). */
static bool wait_ready(int fd, short events)
{
    struct pollfd p = {fd, events, 0};
    int n;
    do
        n = poll(&p, 1, MESSAGE_REST_WAIT_MS);
    while (n < 0 && errno == EINTR);
    return n != 0;
}

static TP_COLD tp_status peer_stalled(const char *who, int fd, const char *did, size_t done)
{
    return tp_fail(TP_ERR_INVALID_ARGUMENT,
                   "%s: socket %d: the peer %s %zu of the message's %u bytes and nothing more for %d s (stuck, or "
                   "not a tpevent peer): the socket is out of step, close it",
                   who, fd, did, done, MESSAGE_SIZE, MESSAGE_REST_WAIT_MS / 1000);
}

/* ------------------------------------------------------------------ send */

static tp_status send_message(const char *who, int socket_fd, const unsigned char *message, int fd)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    size_t sent = 0;
    while (sent < MESSAGE_SIZE) {
        struct iovec part = {(void *)(message + sent), MESSAGE_SIZE - sent};
        struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
        if (sent == 0) {
            header.msg_control = control.bytes;
            header.msg_controllen = sizeof control.bytes;
            struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
            rights->cmsg_level = SOL_SOCKET;
            rights->cmsg_type = SCM_RIGHTS;
            rights->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(rights), &fd, sizeof fd);
        }
        ssize_t n = sendmsg(socket_fd, &header, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && sent > 0) {
                if (!wait_ready(socket_fd, POLLOUT)) /* half a message must not be left behind */
                    return peer_stalled(who, socket_fd, "took", sent);
                continue;
            }
            return socket_failed(who, socket_fd, "sendmsg", errno);
        }
        sent += (size_t)n;
    }
    return TP_OK;
}

tp_status tp_event_ipc_send(tp_event *event, int socket_fd)
{
    static const char who[] = "tp_event_ipc_send";
    if (!event)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: event is NULL", who);
    if (!(event->flags & TP_EVENT_INTERPROCESS))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: the event was created without TP_EVENT_INTERPROCESS", who);
    if (!event->backend->event_ipc_send_prepare)
        return tp_unsupported(event->backend, who);
    int type;
    tp_status status = unix_socket_type(who, socket_fd, &type);
    if (status != TP_OK)
        return status;

    unsigned char message[MESSAGE_SIZE] = {0};
    unsigned char payload[TP_IPC_PAYLOAD_MAX] = {0};
    size_t length = 0;
    int fd = -1;
    status = event->backend->event_ipc_send_prepare(event, &fd, payload, &length);
    if (status != TP_OK)
        return status;
    if (length > MESSAGE_PAYLOAD_MAX)
        return tp_fail(TP_ERR_BACKEND, "%s: the %s backend wrote %zu bytes of payload, at most %u fit", who,
                       event->backend->name, length, MESSAGE_PAYLOAD_MAX);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return tp_fail(TP_ERR_BACKEND, "%s: fstat of the event's shared memory: %s", who, strerror(errno));

    memcpy(message, MESSAGE_MAGIC, 4);
    tp_put_u16(message + 4, MESSAGE_VERSION);
    message[6] = (unsigned char)event->device.type;
    message[7] = (unsigned char)event->device.index;
    tp_put_u64(message + 8, (uint64_t)st.st_size);
    tp_put_u32(message + 16, event->flags);
    tp_put_u32(message + 20, (uint32_t)length);
    memcpy(message + MESSAGE_HEADER, payload, length);
    tp_put_u32(message + 24, message_checksum(message, length));
    return send_message(who, socket_fd, message, fd);
}

/* --------------------------------------------------------------- receive */

typedef struct received {
    unsigned char message[MESSAGE_SIZE];
    size_t length;
    int fds[MAX_DESCRIPTORS];
    int fd_count;
    bool control_truncated;
} received;

static void close_received(received *r)
{
    for (int i = 0; i < r->fd_count; i++)
        close(r->fds[i]);
    r->fd_count = 0;
}

static void take_descriptors(received *r, struct msghdr *header)
{
    if (header->msg_flags & MSG_CTRUNC)
        r->control_truncated = true;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(header); c; c = CMSG_NXTHDR(header, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (r->fd_count < MAX_DESCRIPTORS)
                r->fds[r->fd_count++] = fd;
            else
                close(fd);
        }
    }
}

/* Reads one message: all of it on a stream socket, one datagram otherwise. */
static tp_status receive_message(const char *who, int socket_fd, int type, received *r)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int) * MAX_DESCRIPTORS)];
    } control;
    while (r->length < MESSAGE_SIZE) {
        /* One byte more than a message on a datagram socket, to see a longer one. */
        unsigned char spill[MESSAGE_SIZE + 1];
        struct iovec part = {type == SOCK_STREAM ? r->message + r->length : spill,
                             type == SOCK_STREAM ? MESSAGE_SIZE - r->length : sizeof spill};
        struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
        header.msg_control = control.bytes;
        header.msg_controllen = sizeof control.bytes;
        ssize_t n = recvmsg(socket_fd, &header, MSG_CMSG_CLOEXEC);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && r->length > 0) {
                if (!wait_ready(socket_fd, POLLIN))
                    return peer_stalled(who, socket_fd, "sent", r->length);
                continue;
            }
            return socket_failed(who, socket_fd, "recvmsg", errno);
        }
        take_descriptors(r, &header);
        if (n == 0 && type == SOCK_STREAM)
            return tp_fail(TP_ERR_INVALID_ARGUMENT,
                           "%s: socket %d: the peer closed it after %zu of the message's %u bytes (did it exit "
                           "mid-transfer?)",
                           who, socket_fd, r->length, MESSAGE_SIZE);
        if (type != SOCK_STREAM) {
            if ((size_t)n != MESSAGE_SIZE || (header.msg_flags & MSG_TRUNC))
                return tp_fail(TP_ERR_INVALID_ARGUMENT,
                               "%s: socket %d: a message of %s%zd bytes, an event's is %u bytes: not an event", who,
                               socket_fd, (header.msg_flags & MSG_TRUNC) || (size_t)n > MESSAGE_SIZE ? "over " : "", n,
                               MESSAGE_SIZE);
            memcpy(r->message, spill, MESSAGE_SIZE);
        }
        r->length += (size_t)n;
    }
    return TP_OK;
}

/* The message's header, checked; its payload length. */
static tp_status check_message(const char *who, int socket_fd, const unsigned char *m, size_t *payload_length)
{
    if (memcmp(m, MESSAGE_MAGIC, 4) != 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: the message is not a tpevent event (bad magic)", who,
                       socket_fd);
    unsigned version = tp_get_u16(m + 4);
    if (version != MESSAGE_VERSION)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: message version %u, this library reads %u", who,
                       socket_fd, version, MESSAGE_VERSION);
    uint32_t length = tp_get_u32(m + 20);
    if (length > MESSAGE_PAYLOAD_MAX)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: the message claims a %u-byte payload, at most %u fit",
                       who, socket_fd, (unsigned)length, MESSAGE_PAYLOAD_MAX);
    if (tp_get_u32(m + 24) != message_checksum(m, length))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: message checksum mismatch (corrupted or forged)", who,
                       socket_fd);
    for (size_t i = 28; i < MESSAGE_SIZE; i++)
        if ((i < MESSAGE_HEADER || i >= MESSAGE_HEADER + length) && m[i] != 0)
            return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: the message has bytes where zeros belong", who,
                           socket_fd);
    if (m[6] >= TP_DEVICE_TYPE_COUNT || m[7] >= TP_MAX_DEVICES)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "%s: socket %d: the message names device type %u index %u, which do "
                       "not exist",
                       who, socket_fd, m[6], m[7]);
    if (!(tp_get_u32(m + 16) & TP_EVENT_INTERPROCESS))
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: the message's event is not TP_EVENT_INTERPROCESS", who,
                       socket_fd);
    *payload_length = length;
    return TP_OK;
}

/* The descriptor must be what the sender's was: a regular file of the size it saw,
 * sealed so that no process can shrink or grow it, nor take the seals off. */
static tp_status check_descriptor(const char *who, int socket_fd, int fd, uint64_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: socket %d: fstat of the descriptor received: %s", who, socket_fd,
                       strerror(errno));
    if (!S_ISREG(st.st_mode))
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "%s: socket %d: the descriptor received is not a regular file (mode 0%o): not an event's "
                       "shared memory",
                       who, socket_fd, (unsigned)(st.st_mode & S_IFMT));
    if ((uint64_t)st.st_size != size)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "%s: socket %d: the descriptor received is %lld bytes, the message says %llu", who, socket_fd,
                       (long long)st.st_size, (unsigned long long)size);
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & REQUIRED_SEALS) != REQUIRED_SEALS)
        return tp_fail(TP_ERR_INVALID_ARGUMENT,
                       "%s: socket %d: the descriptor received is not sealed against shrinking, growing and "
                       "unsealing (%s): a peer could cut its mapping short",
                       who, socket_fd, seals < 0 ? "not a memfd" : "seals missing");
    return TP_OK;
}

tp_status tp_event_ipc_recv(tp_event **out, int socket_fd, const char *device_str)
{
    static const char who[] = "tp_event_ipc_recv";
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: out is NULL", who);
    int type;
    tp_status status = unix_socket_type(who, socket_fd, &type);
    if (status != TP_OK)
        return status;
    received r = {.length = 0, .fd_count = 0, .control_truncated = false};
    size_t length = 0;
    status = receive_message(who, socket_fd, type, &r);
    if (status == TP_OK)
        status = check_message(who, socket_fd, r.message, &length);
    if (status == TP_OK && (r.control_truncated || r.fd_count != 1))
        status = tp_fail(TP_ERR_INVALID_ARGUMENT,
                         "%s: socket %d: the message came with %s%d descriptors, an "
                         "event's with one",
                         who, socket_fd, r.control_truncated ? "more than " : "", r.fd_count);
    if (status == TP_OK)
        status = check_descriptor(who, socket_fd, r.fds[0], tp_get_u64(r.message + 8));
    if (status != TP_OK) {
        close_received(&r);
        return status;
    }

    /* The message knows its device; a device string, when given, must be of its type,
     * which is asked before the string's backend is (that one may not even load). */
    tp_device sent = {(tp_device_type)r.message[6], (int)r.message[7]}, device;
    const tp_backend *backend = NULL;
    char text[TP_DEVICE_STRING_MAX];
    if (device_str) {
        status = tp_device_parse(device_str, &device);
        if (status == TP_OK && device.type != sent.type)
            status = tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: the message is of an event of %s, not of %s", who,
                             tp_device_str(sent, text), device_str);
    }
    if (status == TP_OK)
        status = tp_device_resolve(device_str ? device_str : tp_device_str(sent, text), &device, &backend);
    if (status == TP_OK && !backend->event_ipc_receive)
        status = tp_unsupported(backend, who);
    if (status != TP_OK) {
        close_received(&r);
        return status;
    }
    return backend->event_ipc_receive(device.index, r.fds[0], r.message + MESSAGE_HEADER, length, out);
}
