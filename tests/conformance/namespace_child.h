/*
 * A second process for the tests of events handed over a Unix socket: this program
 * again, started with exec (never a bare fork of a process that may have started a
 * GPU runtime), optionally in new PID, IPC and mount namespaces with a private
 * tmpfs on /dev/shm, as a container would be. namespace_child.c.
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_NAMESPACE_CHILD_H
#define TPEVENT_TESTS_CONFORMANCE_NAMESPACE_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether the device's events can be handed over a socket; false after printing
 * "skipped: <the backend's reason>" where the backend answers TP_ERR_UNSUPPORTED. */
bool socket_ipc_supported(const char *device);

#define REQUIRE_SOCKET_IPC(device)       \
    if (!socket_ipc_supported((device))) \
    return TEST_SKIP

/* The environment variable that carries the child's socket descriptor. */
#define NAMESPACE_CHILD_SOCKET_ENV "TPEVENT_TEST_CHILD_SOCKET"

typedef struct namespace_child {
    pid_t pid;
    int socket; /* the parent's end of a stream socketpair */
} namespace_child;

/*
 * Starts `test` of this program on `device` in a child holding the other end of a
 * socketpair (its number in NAMESPACE_CHILD_SOCKET_ENV), as pid 1 of a new PID
 * namespace, in new IPC and mount namespaces, with a private tmpfs on /dev/shm and
 * its own /proc. Returns false after printing "skipped: <why>" only where the new
 * namespaces are refused with EPERM (not root, or a sandbox that forbids them); any
 * other failure fails the test.
 */
bool namespace_child_start(namespace_child *child, const char *device, const char *test);

/* The child's end of the socket, or -1 in the parent (the variable is unset). */
int namespace_child_socket(void);

/* One byte to the other side; the next byte from it, within `seconds` (fails the
 * test after that, or if the other side closed the socket). */
void namespace_child_say(int socket, char what);
void namespace_child_expect(int socket, char what, double seconds);

/* Waits for the child's exit within `seconds` (killing it after that) and fails the
 * test unless it exited with 0. */
void namespace_child_join(namespace_child *child, double seconds);

#endif /* TPEVENT_TESTS_CONFORMANCE_NAMESPACE_CHILD_H */
