/*
 * Messages of events handed over a Unix socket (tp_event_ipc_recv) that must be
 * refused with TP_ERR_INVALID_ARGUMENT and a message naming the socket and what was
 * wrong, never a crash, a SIGBUS or a descriptor left open: forged, corrupted and
 * truncated messages, a peer gone mid-message, none or two descriptors, a descriptor
 * that is a pipe, a memfd of the wrong size or without seals, a region of another
 * event. A test takes a real message (the event sent, then read raw), changes it and
 * sends it again, resealing the checksum as core/ipc_socket.c computes it, so that
 * each change meets the check it is for. Run under ASan in CI.
 */
#define _GNU_SOURCE /* memfd_create */

#include "ipc_support.h"
#include "namespace_child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define MESSAGE_SIZE 128
#define PAYLOAD_AT 32

typedef struct raw_message {
    unsigned char bytes[MESSAGE_SIZE];
    int fd;
} raw_message;

static void reseal(raw_message *m)
{
    uint32_t length = ipc_get_u32(m->bytes + 20);
    if (length > MESSAGE_SIZE - PAYLOAD_AT)
        length = MESSAGE_SIZE - PAYLOAD_AT; /* a claimed length too long: the core refuses it first */
    ipc_put_u32(m->bytes + 24, ipc_fnv1a(ipc_fnv1a(2166136261u, m->bytes, 24), m->bytes + PAYLOAD_AT, length));
}

/* Sends `length` bytes of the message with `fds` descriptors over `socket`. */
static void send_raw(int socket, const unsigned char *bytes, size_t length, const int *fds, int fd_count)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int) * 4)];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec part = {(void *)bytes, length};
    struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
    if (fd_count > 0) {
        header.msg_control = control.bytes;
        header.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)fd_count);
        struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
        rights->cmsg_level = SOL_SOCKET;
        rights->cmsg_type = SCM_RIGHTS;
        rights->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)fd_count);
        memcpy(CMSG_DATA(rights), fds, sizeof(int) * (size_t)fd_count);
    }
    CHECK(sendmsg(socket, &header, MSG_NOSIGNAL) == (ssize_t)length);
}

/* A real message: the event sent, read back raw. */
static raw_message real_message(tp_event *event)
{
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    CHECK_OK(tp_event_ipc_send(event, pair[0]));
    raw_message m = {.fd = -1};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec part = {m.bytes, MESSAGE_SIZE};
    struct msghdr header = {
        .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes};
    CHECK(recvmsg(pair[1], &header, MSG_CMSG_CLOEXEC) == MESSAGE_SIZE);
    struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
    CHECK(rights != NULL && rights->cmsg_type == SCM_RIGHTS);
    memcpy(&m.fd, CMSG_DATA(rights), sizeof m.fd);
    close(pair[0]);
    close(pair[1]);
    return m;
}

/* Sends what `send_fn` writes on a fresh socketpair of `type`, expects the receive
 * refused naming `words`, and no descriptor left open by the receive. */
static void expect_refused(const char *device, int type, const unsigned char *bytes, size_t length, const int *fds,
                           int fd_count, bool close_after, const char *words)
{
    int pair[2];
    CHECK(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, pair) == 0);
    int before = open_fd_count();
    send_raw(pair[0], bytes, length, fds, fd_count);
    if (close_after)
        close(pair[0]);
    tp_event *event = (tp_event *)&pair; /* never written on failure */
    CHECK_STATUS(tp_event_ipc_recv(&event, pair[1], device), TP_ERR_INVALID_ARGUMENT);
    CHECK(event == (tp_event *)&pair);
    CHECK_ERROR_MENTIONS("tp_event_ipc_recv: socket");
    CHECK_ERROR_MENTIONS(words);
    CHECK(open_fd_count() == before - (close_after ? 1 : 0));
    if (!close_after)
        close(pair[0]);
    close(pair[1]);
}

TEST(socket_forged_and_corrupted_messages_refused)
{
    if (!socket_ipc_supported(env->device))
        return TEST_SKIP;
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    raw_message good = real_message(event);

    raw_message m = good;
    memcpy(m.bytes, "XXXX", 4);
    reseal(&m);
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "bad magic");

    m = good;
    m.bytes[4] = 9;
    reseal(&m);
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "version 9");

    m = good;
    m.bytes[PAYLOAD_AT] ^= 1; /* not resealed */
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "checksum");

    m = good;
    ipc_put_u32(m.bytes + 20, 200);
    reseal(&m);
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "200-byte payload");

    m = good;
    m.bytes[MESSAGE_SIZE - 1] = 7;
    reseal(&m);
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "zeros");

    m = good;
    m.bytes[6] = 200;
    reseal(&m);
    expect_refused(env->device, SOCK_STREAM, m.bytes, MESSAGE_SIZE, &m.fd, 1, false, "do not exist");

    /* The backend's own payload: another event's token. */
    m = good;
    m.bytes[PAYLOAD_AT + 8] ^= 0x5a;
    reseal(&m);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    int before = open_fd_count();
    send_raw(pair[0], m.bytes, MESSAGE_SIZE, &m.fd, 1);
    tp_event *received = NULL;
    CHECK_STATUS(tp_event_ipc_recv(&received, pair[1], env->device), TP_ERR_INVALID_ARGUMENT);
    CHECK(tp_last_error()[0] != '\0');
    CHECK(open_fd_count() == before);
    close(pair[0]);
    close(pair[1]);

    /* A message of a backend without the socket path (OpenCL): refused with the
     * reason, its descriptor closed. */
    m = good;
    m.bytes[6] = TP_DEVICE_OPENCL;
    m.bytes[7] = 0;
    reseal(&m);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    /* Loading the backend opens what its runtime keeps (NVIDIA's OpenCL: its device
     * files): loaded before the count, so that only the message's descriptor counts. */
    int opencl_devices = 0;
    (void)tp_device_count("opencl", &opencl_devices);
    before = open_fd_count();
    send_raw(pair[0], m.bytes, MESSAGE_SIZE, &m.fd, 1);
    received = NULL;
    tp_status status = tp_event_ipc_recv(&received, pair[1], NULL);
    CHECK(status == TP_ERR_UNSUPPORTED || status == TP_ERR_BACKEND_UNAVAILABLE);
    CHECK(received == NULL);
    CHECK_ERROR_MENTIONS("opencl");
    CHECK(open_fd_count() == before);
    close(pair[0]);
    close(pair[1]);

    /* Unharmed: the real message is still received. */
    expect_refused(env->device, SOCK_DGRAM, good.bytes, MESSAGE_SIZE - 1, &good.fd, 1, false, "127 bytes");
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
    send_raw(pair[0], good.bytes, MESSAGE_SIZE, &good.fd, 1);
    CHECK_OK(tp_event_ipc_recv(&received, pair[1], NULL));
    CHECK_OK(tp_event_destroy(received));
    close(pair[0]);
    close(pair[1]);
    close(good.fd);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(socket_wrong_descriptors_refused)
{
    if (!socket_ipc_supported(env->device))
        return TEST_SKIP;
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    raw_message good = real_message(event);
    long page = sysconf(_SC_PAGESIZE);

    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, NULL, 0, false, "with 0 descriptors");
    int two[2] = {good.fd, good.fd};
    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, two, 2, false, "with 2 descriptors");

    int pipe_fds[2];
    CHECK(pipe2(pipe_fds, O_CLOEXEC) == 0);
    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, &pipe_fds[0], 1, false, "not a regular file");

    /* A memfd of the right size without seals: a peer could shrink it under the
     * receiver's mapping (SIGBUS). */
    int unsealed = memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK(unsealed >= 0 && ftruncate(unsealed, 4096) == 0);
    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, &unsealed, 1, false, "not sealed");
    CHECK(fcntl(unsealed, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, &unsealed, 1, false, "seals missing");

    /* Sealed, of another size than the message says. */
    int other_size = memfd_create("other-size", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK(other_size >= 0 && ftruncate(other_size, 2 * page) == 0);
    CHECK(fcntl(other_size, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
    expect_refused(env->device, SOCK_STREAM, good.bytes, MESSAGE_SIZE, &other_size, 1, false, "the message says");

    /* The peer gone after part of the message (it died mid-transfer). */
    expect_refused(env->device, SOCK_STREAM, good.bytes, 60, &good.fd, 1, true, "after 60 of the message's 128 bytes");

    /* Nothing waiting on a non-blocking socket. */
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) == 0);
    tp_event *received = NULL;
    CHECK_STATUS(tp_event_ipc_recv(&received, pair[1], NULL), TP_ERR_NOT_READY);
    close(pair[0]);
    close(pair[1]);

    close(other_size);
    close(unsealed);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    close(good.fd);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

/* A peer that sends part of a message and then nothing, its end still open, on a
 * non-blocking socket: refused once the rest has not come for 10 s (core/ipc_socket.c's
 * MESSAGE_REST_WAIT_MS), the descriptor received with the first part closed; it waited
 * for good before. */
TEST(socket_peer_stalled_mid_message_refused_in_time)
{
    if (!socket_ipc_supported(env->device))
        return TEST_SKIP;
    tp_event *event = new_event(env->device, TP_EVENT_INTERPROCESS);
    raw_message good = real_message(event);
    double started = monotonic_seconds();
    expect_refused(env->device, SOCK_STREAM | SOCK_NONBLOCK, good.bytes, 40, &good.fd, 1, false,
                   "the peer sent 40 of the message's 128 bytes and nothing more for 10 s");
    double waited = monotonic_seconds() - started;
    printf("refused after %.1f s\n", waited);
    CHECK(waited >= 9.5);
    close(good.fd);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}
