/*
 * Fuzz target: receiving an event handed over a Unix socket (tp_event_ipc_recv).
 *
 * Input: one control byte, then up to 128 bytes (the message's size).
 *   control bits 0-1, how the message is made:
 *     0  the bytes as they are (zero-padded): mostly stops at the core's checks;
 *     1  the bytes, resealed: magic, version, a device of a type that exists
 *        (mostly), a payload length that fits, zeros where zeros belong and the
 *        FNV-1a checksum set right, so that the descriptor's and the backend's
 *        checks are what gets fuzzed;
 *     2  a real message of a CPU event, sent here and read back raw, XORed with the
 *        bytes;
 *     3  as 2, then resealed;
 *   bits 2-3, the descriptor sent with it: the real event's memfd, none, a pipe, an
 *     unsealed memfd of the page's size;
 *   bit 4, the socket: SOCK_STREAM or SOCK_SEQPACKET;
 *   bit 5, the message cut after as many bytes as the input has, the sender's end
 *     closed (a peer dying mid-transfer; stream sockets).
 *
 * What must hold: any status is allowed, but it is a tp_status, a failure says why,
 * leaves *out alone and leaves no descriptor open, and an event received is of a CPU
 * device and can be queried, recorded, synchronized, waited on and destroyed. A real
 * message unchanged, with its own descriptor, whole, must be received.
 */
#define _GNU_SOURCE /* memfd_create */

#include "fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* core/ipc_socket.c's layout, written out here so that the test does not trust the
 * code it tests for it. */
enum { MESSAGE_SIZE = 128, HEADER_SIZE = 32, PAYLOAD_MAX = MESSAGE_SIZE - HEADER_SIZE, PAGE_BYTES = 4096 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_prepare_environment();
    return 0;
}

/* A valid header around whatever the bytes hold; the device reduced, not forced. */
static void reseal(unsigned char *m)
{
    memcpy(m, "TPES", 4);
    m[4] = 1;
    m[5] = 0;
    m[6] = (unsigned char)(m[6] % 8 < 6 ? TP_DEVICE_CPU : m[6] % 4);
    m[7] = (unsigned char)(m[7] % 3);
    uint32_t length = fuzz_get_u32(m + 20) % (PAYLOAD_MAX + 1);
    fuzz_put_u32(m + 20, length);
    memset(m + 28, 0, 4);
    memset(m + HEADER_SIZE + length, 0, PAYLOAD_MAX - length);
    fuzz_put_u32(m + 24, fuzz_fnv1a(fuzz_fnv1a(2166136261u, m, 24), m + HEADER_SIZE, length));
}

static void send_with(int socket, const unsigned char *bytes, size_t length, int fd)
{
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec part = {(void *)bytes, length};
    struct msghdr header = {.msg_iov = &part, .msg_iovlen = 1};
    if (fd >= 0) {
        header.msg_control = control.bytes;
        header.msg_controllen = sizeof control.bytes;
        struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
        rights->cmsg_level = SOL_SOCKET;
        rights->cmsg_type = SCM_RIGHTS;
        rights->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(rights), &fd, sizeof fd);
    }
    FUZZ_REQUIRE(sendmsg(socket, &header, MSG_NOSIGNAL) == (ssize_t)length);
}

/* A real message and its descriptor: the event sent, read back raw. */
static void real_message(tp_event *event, unsigned char *message, int *fd)
{
    int pair[2];
    FUZZ_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    FUZZ_REQUIRE(tp_event_ipc_send(event, pair[0]) == TP_OK);
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec part = {message, MESSAGE_SIZE};
    struct msghdr header = {
        .msg_iov = &part, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes};
    FUZZ_REQUIRE(recvmsg(pair[1], &header, MSG_CMSG_CLOEXEC) == MESSAGE_SIZE);
    struct cmsghdr *rights = CMSG_FIRSTHDR(&header);
    FUZZ_REQUIRE(rights != NULL);
    memcpy(fd, CMSG_DATA(rights), sizeof *fd);
    close(pair[0]);
    close(pair[1]);
}

static int open_descriptors(void)
{
    DIR *dir = opendir("/proc/self/fd");
    FUZZ_REQUIRE(dir != NULL);
    int count = 0;
    while (readdir(dir) != NULL)
        count++;
    closedir(dir);
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned control = data[0];
    const uint8_t *bytes = data + 1;
    size_t count = size - 1 < MESSAGE_SIZE ? size - 1 : MESSAGE_SIZE;
    unsigned mode = control & 3u, kind = (control >> 2) & 3u;
    bool seqpacket = control & 16u, cut = (control & 32u) && !seqpacket;

    tp_event *event = NULL;
    FUZZ_REQUIRE(tp_event_create(&event, "cpu:0", TP_EVENT_INTERPROCESS) == TP_OK);
    unsigned char message[MESSAGE_SIZE] = {0};
    int real_fd = -1;
    real_message(event, message, &real_fd);
    bool mutated = false;
    if (mode < 2) {
        memset(message, 0, sizeof message);
        memcpy(message, bytes, count);
    } else {
        for (size_t i = 0; i < count; i++) {
            message[i] ^= bytes[i];
            mutated |= bytes[i] != 0;
        }
    }
    if (mode == 1 || mode == 3)
        reseal(message);

    int fd = real_fd, pipe_fds[2] = {-1, -1}, unsealed = -1;
    if (kind == 1)
        fd = -1;
    if (kind == 2) {
        FUZZ_REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
        fd = pipe_fds[0];
    }
    if (kind == 3) {
        unsealed = memfd_create("fuzz-unsealed", MFD_CLOEXEC);
        FUZZ_REQUIRE(unsealed >= 0 && ftruncate(unsealed, PAGE_BYTES) == 0);
        fd = unsealed;
    }

    int pair[2];
    FUZZ_REQUIRE(socketpair(AF_UNIX, (seqpacket ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC, 0, pair) == 0);
    int before = open_descriptors();
    send_with(pair[0], message, cut ? count : MESSAGE_SIZE, fd);
    if (cut || seqpacket)
        close(pair[0]); /* nothing more is coming */
    tp_event *sentinel = (tp_event *)&sentinel, *received = sentinel;
    tp_status status = cut && count == 0 ? TP_ERR_INVALID_ARGUMENT : tp_event_ipc_recv(&received, pair[1], NULL);
    FUZZ_REQUIRE(fuzz_status_is_known(status));
    if (mode >= 2 && !mutated && kind == 0 && !cut)
        FUZZ_REQUIRE(status == TP_OK); /* a real message, whole and unchanged */
    if (status == TP_OK) {
        FUZZ_REQUIRE(received != NULL && received != sentinel);
        fuzz_use_cpu_event(received);
        FUZZ_REQUIRE(tp_event_destroy(received) == TP_OK);
    } else {
        FUZZ_REQUIRE(received == sentinel);
        if (!(cut && count == 0))
            FUZZ_REQUIRE_FAILURE_EXPLAINED();
        /* Every descriptor that came is closed; the sender's end, if closed above,
         * is one fewer. */
        FUZZ_REQUIRE(open_descriptors() == before - (cut || seqpacket ? 1 : 0));
    }
    if (!(cut || seqpacket))
        close(pair[0]);
    close(pair[1]);
    if (unsealed >= 0)
        close(unsealed);
    if (pipe_fds[0] >= 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
    }
    close(real_fd);
    FUZZ_REQUIRE(tp_event_destroy(event) == TP_OK);
    return 0;
}
