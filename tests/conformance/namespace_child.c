/*
 * The second process of the socket tests (namespace_child.h). The namespaces are
 * made by a go-between: it unshares (a new PID namespace takes effect for the
 * unsharing process's children, not itself), makes the mount tree private so that
 * the tmpfs over /dev/shm stays its own, and forks the child, which is then pid 1
 * of the new namespace and execs this program. The go-between reports how the
 * unshare went on a pipe before it forks, and exits with the child's status.
 */
#define _GNU_SOURCE /* unshare, environ, program_invocation_name */

#include "namespace_child.h"
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the go-between writes on the pipe: 0, or the step that failed and its errno. */
enum { STEP_OK, STEP_UNSHARE, STEP_MOUNT_PRIVATE, STEP_MOUNT_SHM, STEP_FORK };

static void report(int pipe_fd, int step, int err)
{
    int said[2] = {step, err};
    ssize_t ignored = write(pipe_fd, said, sizeof said);
    (void)ignored;
}

/* The go-between, in the fork's child: only system calls from here on (the parent
 * may have had threads). */
static void go_between(int pipe_fd, bool isolated, char **argv, char **env)
{
    if (isolated) {
        if (unshare(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS) != 0) {
            report(pipe_fd, STEP_UNSHARE, errno);
            _exit(3);
        }
        /* The types are ignored for a propagation change; named, not NULL, for memcheck. */
        if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0) {
            report(pipe_fd, STEP_MOUNT_PRIVATE, errno);
            _exit(3);
        }
        if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m") != 0) {
            report(pipe_fd, STEP_MOUNT_SHM, errno);
            _exit(3);
        }
    }
    pid_t child = fork();
    if (child < 0) {
        report(pipe_fd, STEP_FORK, errno);
        _exit(3);
    }
    if (child == 0) {
        /* Pid 1 of the new namespace mounts its own /proc, as a container's runtime
         * does: under the old one, /proc/<getpid()> is the host's init, and CUDA's
         * driver failed to start there (cudaErrorOperatingSystem, H100). */
        if (isolated && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
            _exit(4);
        execve(program_invocation_name, argv, env);
        _exit(127);
    }
    report(pipe_fd, STEP_OK, 0);
    close(pipe_fd);
    free(env); /* the parent's copy, made before the fork (memcheck follows this process) */
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

bool namespace_child_start(namespace_child *child, const char *device, const char *test, bool isolated)
{
    int pair[2], status_pipe[2];
    /* The child's end survives exec; the parent's does not. */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    CHECK(fcntl(pair[0], F_SETFD, FD_CLOEXEC) == 0);
    CHECK(pipe2(status_pipe, O_CLOEXEC) == 0);

    /* Everything the go-between needs, made before the fork. */
    static char socket_var[64];
    snprintf(socket_var, sizeof socket_var, "%s=%d", NAMESPACE_CHILD_SOCKET_ENV, pair[1]);
    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + 2, sizeof *env);
    CHECK(env != NULL);
    for (size_t i = 0; i < count; i++)
        env[i] = environ[i];
    env[count] = socket_var;
    char *argv[] = {"tpevent_conformance", "--device", (char *)device, "--test", (char *)test, NULL};

    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(pair[0]);
        close(status_pipe[0]);
        go_between(status_pipe[1], isolated, argv, env);
    }
    free(env);
    close(pair[1]);
    close(status_pipe[1]);
    int said[2] = {-1, 0};
    ssize_t n;
    while ((n = read(status_pipe[0], said, sizeof said)) < 0 && errno == EINTR)
        ;
    close(status_pipe[0]);
    child->pid = pid;
    child->socket = pair[0];
    if (n == (ssize_t)sizeof said && said[0] == STEP_OK)
        return true;
    int status = 0;
    waitpid(pid, &status, 0);
    close(pair[0]);
    if (n == (ssize_t)sizeof said && said[0] == STEP_UNSHARE && said[1] == EPERM) {
        printf("skipped: unshare(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS): %s (needs root or CAP_SYS_ADMIN)\n",
               strerror(EPERM));
        return false;
    }
    static const char *const steps[] = {"", "unshare", "mount --make-rprivate /", "mount tmpfs on /dev/shm", "fork"};
    check_failed(__FILE__, __LINE__, "starting the child: %s: %s",
                 n == (ssize_t)sizeof said && said[0] > 0 && said[0] <= STEP_FORK ? steps[said[0]] : "no report",
                 strerror(said[1]));
    return false;
}

bool socket_ipc_supported(const char *device)
{
    if (!ipc_supported(device, true))
        return false;
    tp_event *event = new_event(device, TP_EVENT_INTERPROCESS);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    tp_status status = tp_event_ipc_send(event, pair[0]);
    if (status == TP_ERR_UNSUPPORTED)
        printf("skipped: %s\n", tp_last_error());
    else
        CHECK_OK(status);
    close(pair[0]);
    close(pair[1]);
    CHECK_OK(tp_event_destroy(event));
    return status == TP_OK;
}

int namespace_child_socket(void)
{
    const char *value = getenv(NAMESPACE_CHILD_SOCKET_ENV);
    return value ? atoi(value) : -1;
}

void namespace_child_say(int socket, char what)
{
    CHECK(send(socket, &what, 1, MSG_NOSIGNAL) == 1);
}

void namespace_child_expect(int socket, char what, double seconds)
{
    struct pollfd p = {socket, POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, (int)(seconds * 1000.0))) < 0 && errno == EINTR)
        ;
    if (ready == 0)
        check_failed(__FILE__, __LINE__, "no '%c' from the other process within %.0f s", what, seconds);
    char got = 0;
    ssize_t n = recv(socket, &got, 1, 0);
    if (n != 1 || got != what)
        check_failed(__FILE__, __LINE__, "expected '%c' from the other process, got %s'%c'", what,
                     n == 1 ? "" : "end of stream instead of ", n == 1 ? got : ' ');
}

void namespace_child_join(namespace_child *child, double seconds)
{
    int status = 0;
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
        pid_t done = waitpid(child->pid, &status, WNOHANG);
        if (done == child->pid)
            break;
        if (monotonic_seconds() > deadline) {
            kill(child->pid, SIGKILL);
            waitpid(child->pid, &status, 0);
            check_failed(__FILE__, __LINE__, "the child did not exit within %.0f s", seconds);
        }
        sleep_ms(5);
    }
    close(child->socket);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        check_failed(__FILE__, __LINE__, "the child ended with %s %d", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}
