/*
 * Latency of a wait across processes (issue 57): from the moment one process's
 * record of an interprocess event is reached to the moment the other process's
 * stream, which waits on it, runs its next work. Three ways, alternating round by
 * round in one run:
 *   raw     the floor: no tpevent; the other process's thread waits on a word of
 *           shared memory (spinning ~20 us, then a futex), and this one stores and
 *           wakes it, as tpevent's CPU backend does underneath;
 *   handle  the event shared by tp_event_ipc_handle (CPU: the region through
 *           /proc/<pid>/fd; CUDA/HIP: the runtime's IPC event handle);
 *   socket  the event handed over a Unix socket (tp_event_ipc_send), received in a
 *           second child that is pid 1 of new PID, IPC and mount namespaces where
 *           that is allowed (run as root), else a plain one, said in the output
 *           (the handle's child shares this process's namespaces: a handle cannot
 *           cross them).
 * A sample: this process's stream is held; on it a host function notes the time t0,
 * then the record. The child's stream waits on that record (made before the child's
 * wait: rule 6) and then runs a host function that notes t1. Releasing the hold lets
 * it all go; t1 - t0 (CLOCK_MONOTONIC, one clock for both processes) is the sample.
 * The children are this program again, started with exec.
 *
 * Usage: tpevent_bench_ipc_wait [--device D] [--samples N] [--handle-across-namespaces]
 * Prints medians and p90s in us, and each path's ratio to the raw floor; asserts
 * nothing about time. --handle-across-namespaces instead reports (never fails on)
 * whether the runtime's own path, tp_event_ipc_handle, works for a child in new PID,
 * IPC and mount namespaces with a private /dev/shm: imported, and its wait released
 * by this process's record.
 */
#define _GNU_SOURCE /* CLONE_NEW*, memfd_create, program_invocation_name */

#include <tpevent/tpevent.h>

#include "bench_rounds.h"
#include "runtime_handle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { PATH_RAW, PATH_HANDLE, PATH_SOCKET, PATHS };
/* Each sample is three round trips between processes: a million is hours. */
#define MAX_SAMPLES 1000000
static const char *const path_names[PATHS] = {"raw futex wake (floor)", "tp_event_ipc_handle", "tp_event_ipc_send"};

/* Shared by the two processes (a memfd both map). */
typedef struct shared {
    _Atomic uint64_t t0, t1;
    _Atomic uint32_t raw_word; /* the raw path's futex word: the round's number */
    tp_ipc_handle handle;
    unsigned char runtime_handle[RUNTIME_HANDLE_SIZE]; /* CUDA: the driver's own */
    int runtime_handle_ok;
} shared;

static void check(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_ipc_wait: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void say(int fd, char c)
{
    if (write(fd, &c, 1) != 1)
        exit(2);
}

static char hear(int fd)
{
    char c = 0;
    if (read(fd, &c, 1) != 1)
        exit(2); /* the other side is gone */
    return c;
}

static void note_t0(void *arg)
{
    atomic_store(&((shared *)arg)->t0, bench_now_ns());
}

static void note_t1(void *arg)
{
    atomic_store(&((shared *)arg)->t1, bench_now_ns());
}

/* ------------------------------------------------------------- child */

/* Commands: 'r' a raw round, 'h' / 's' arm a wait on the handle's / socket's event
 * (answered 'a' once armed, 'n' where the child has no such event), 'q' quit. The
 * socket's child gets its event over the control socket, the other one by the handle
 * in shared memory; a handle that cannot be imported (the fake GPU's events are one
 * process's) is said once, and its rounds are left out. */
static int child_main(const char *device, int control, shared *sh, bool socket_child)
{
    tp_event *events[PATHS] = {NULL};
    if (socket_child)
        check(tp_event_ipc_recv(&events[PATH_SOCKET], control, device), "tp_event_ipc_recv");
    else if (tp_event_from_ipc_handle(&events[PATH_HANDLE], device, &sh->handle) != TP_OK) {
        printf("tp_event_ipc_handle's rounds left out: %s\n", tp_last_error());
        fflush(stdout);
        events[PATH_HANDLE] = NULL;
    }
    tp_stream *stream;
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");
    uint32_t round = 0;
    for (;;) {
        char c = hear(control);
        if (c == 'q')
            break;
        if (c == 'r') {
            round++;
            say(control, 'a');
            uint64_t spin_until = bench_now_ns() + 20000;
            while (atomic_load(&sh->raw_word) != round) {
                if (bench_now_ns() > spin_until)
                    syscall(SYS_futex, &sh->raw_word, FUTEX_WAIT, round - 1, NULL, NULL, 0);
            }
            atomic_store(&sh->t1, bench_now_ns());
            say(control, 'd');
            continue;
        }
        tp_event *event = events[c == 'h' ? PATH_HANDLE : PATH_SOCKET];
        if (!event) {
            say(control, 'n');
            continue;
        }
        check(tp_event_wait(event, stream), "tp_event_wait");
        check(tp_stream_launch_host_fn(stream, note_t1, sh), "tp_stream_launch_host_fn");
        say(control, 'a');
        check(tp_stream_synchronize(stream), "tp_stream_synchronize");
        say(control, 'd');
    }
    check(tp_stream_destroy(stream), "tp_stream_destroy");
    tp_event *event = events[socket_child ? PATH_SOCKET : PATH_HANDLE];
    if (event)
        check(tp_event_destroy(event), "tp_event_destroy");
    return 0;
}

/* ------------------------------------------------------------ parent */

/* Execs the child with nothing but what it needs: another child's end of a socket,
 * or this process's, held by it would keep its peer from seeing this process go. */
static void exec_child(int control, int memory, char **argv)
{
    for (int fd = 3; fd < 1024; fd++)
        if (fd != control && fd != memory)
            close(fd);
    fcntl(control, F_SETFD, 0); /* its end alone crosses the exec */
    execv(program_invocation_name, argv);
    _exit(127);
}

/* Starts a child; the socket's child is cloned into new namespaces first, as pid 1
 * there, where that is allowed (as the namespace tests' child is:
 * tests/conformance/namespace_child.c), else a child like the other. */
static pid_t start_child(const char *device, int control, int memory, const char *mode, bool *isolated)
{
    char control_text[16], memory_text[16];
    snprintf(control_text, sizeof control_text, "%d", control);
    snprintf(memory_text, sizeof memory_text, "%d", memory);
    char *argv[] = {
        "tpevent_bench_ipc_wait", "--device", (char *)device, (char *)mode, control_text, memory_text, NULL};
    fflush(NULL);
    pid_t pid = -1;
    if (strcmp(mode, "--child") != 0) {
        pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
            /* Its own /dev/shm and /proc, as a container's runtime mounts them (under
             * the host's /proc CUDA's driver did not start on an H100:
             * docs/interprocess.md). */
            if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
                mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m") != 0 ||
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
                _exit(4);
            exec_child(control, memory, argv);
        }
    }
    *isolated = pid > 0;
    if (pid < 0) {
        pid = fork();
        if (pid == 0)
            exec_child(control, memory, argv);
    }
    if (pid < 0)
        exit(2);
    return pid;
}

/* The child of --handle-across-namespaces: says what tpevent's handle and, on CUDA,
 * the driver's own handle do here. */
static int handle_child_main(const char *device, int control, shared *sh)
{
    tp_event *event = NULL;
    tp_stream *stream = NULL;
    tp_status status = tp_event_from_ipc_handle(&event, device, &sh->handle);
    if (status != TP_OK) {
        printf("  tp_event_from_ipc_handle: refused: %s: %s\n", tp_status_name(status), tp_last_error());
    } else {
        bool done = true;
        status = tp_event_query(event, &done);
        printf("  tp_event_from_ipc_handle: imported; the sender's held record is %s\n",
               status != TP_OK ? tp_last_error()
               : done          ? "reached (wrong: it is held)"
                               : "pending (right)");
        check(tp_stream_create(&stream, device, 0), "tp_stream_create");
        check(tp_event_wait(event, stream), "tp_event_wait");
    }
    void *runtime = NULL;
    if (sh->runtime_handle_ok) {
        tp_device parsed;
        check(tp_device_parse(device, &parsed), "tp_device_parse");
        runtime_handle_open(parsed.index < 0 ? 0 : parsed.index, sh->runtime_handle, &runtime);
    }
    fflush(stdout);
    say(control, 'a');
    hear(control); /* released */
    if (event) {
        status = tp_stream_synchronize_for(stream, 10000000000);
        printf("  a stream's wait on it after the sender's record was reached: %s%s\n",
               status == TP_OK ? "released" : tp_status_name(status), status == TP_OK ? "" : " within 10 s");
        status = tp_event_synchronize_for(event, 10000000000);
        printf("  synchronize: %s\n", status == TP_OK ? "returned" : tp_last_error());
    }
    runtime_handle_finish(runtime);
    fflush(stdout);
    say(control, 'd');
    return 0;
}

static int report_handle_across_namespaces(const char *device, int memory, shared *sh)
{
    tp_event *event;
    tp_stream *stream;
    tp_hold *hold;
    check(tp_event_create(&event, device, TP_EVENT_INTERPROCESS), "tp_event_create");
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");
    check(tp_stream_hold(stream, INT64_MAX, &hold), "tp_stream_hold");
    check(tp_event_record(event, stream), "tp_event_record");
    check(tp_event_ipc_handle(event, &sh->handle), "tp_event_ipc_handle");
    printf("the runtime's own path (tp_event_ipc_handle) on %s, to a child in new namespaces:\n", device);
    tp_device parsed;
    check(tp_device_parse(device, &parsed), "tp_device_parse");
    if (parsed.type == TP_DEVICE_CUDA) {
        /* The driver's own handle of the same native event, apart from tpevent's
         * checks on its handle (which look for the exporter's pid). */
        void *native = NULL;
        char why[256] = "";
        if (tp_event_native(event, &native) == TP_OK && native &&
            runtime_handle_export(parsed.index < 0 ? 0 : parsed.index, native, sh->runtime_handle, why, sizeof why))
            sh->runtime_handle_ok = 1;
        else
            printf("  the driver's own handle: cannot tell: %s\n", why[0] ? why : "no native event");
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return 2;
    bool isolated = false;
    fflush(stdout);
    pid_t child = start_child(device, pair[1], memory, "--handle-child", &isolated);
    close(pair[1]);
    if (!isolated)
        printf("  (new namespaces refused here: the child shares this process's namespaces)\n");
    hear(pair[0]); /* armed */
    check(tp_hold_release(hold), "tp_hold_release");
    check(tp_stream_synchronize(stream), "tp_stream_synchronize");
    say(pair[0], 'g');
    hear(pair[0]);
    int status = 0;
    waitpid(child, &status, 0);
    check(tp_stream_synchronize(stream), "tp_stream_synchronize");
    check(tp_event_destroy(event), "tp_event_destroy");
    check(tp_stream_destroy(stream), "tp_stream_destroy");
    return 0;
}

int main(int argc, char **argv)
{
    bool report_handle = false;
    const char *device = "cpu:0";
    size_t samples = 2000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            device = argv[++i];
        else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
            /* The user's count sizes three arrays and the run: a whole number in bounds. */
            if (!bench_parse_size(argv[++i], &samples) || samples > MAX_SAMPLES) {
                fprintf(stderr, "tpevent_bench_ipc_wait: --samples %s: a whole number from 1 to %d\n", argv[i],
                        MAX_SAMPLES);
                return 2;
            }
        } else if (strcmp(argv[i], "--handle-across-namespaces") == 0)
            report_handle = true;
        else if ((strcmp(argv[i], "--child") == 0 || strcmp(argv[i], "--socket-child") == 0 ||
                  strcmp(argv[i], "--handle-child") == 0) &&
                 i + 2 < argc) {
            int control = atoi(argv[i + 1]), memory = atoi(argv[i + 2]);
            shared *sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
            if (sh == MAP_FAILED)
                return 2;
            if (strcmp(argv[i], "--handle-child") == 0)
                return handle_child_main(device, control, sh);
            return child_main(device, control, sh, strcmp(argv[i], "--socket-child") == 0);
        } else {
            fprintf(stderr, "usage: %s [--device D] [--samples N]\n", argv[0]);
            return 2;
        }
    }
    tp_device parsed;
    const char *reason = NULL;
    check(tp_device_parse(device, &parsed), "tp_device_parse");
    if (tp_backend_status(tp_device_type_name(parsed.type), &reason) != TP_OK) {
        printf("skipped: %s\n", reason ? reason : tp_last_error());
        return 77;
    }
    int memory = memfd_create("tpevent-bench-ipc", 0);
    shared *sh = NULL;
    if (memory < 0 || ftruncate(memory, sizeof(shared)) != 0 ||
        (sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0)) == MAP_FAILED) {
        perror("shared memory");
        return 2;
    }
    if (report_handle)
        return report_handle_across_namespaces(device, memory, sh);
    tp_event *events[PATHS] = {NULL};
    for (int i = PATH_HANDLE; i < PATHS; i++)
        check(tp_event_create(&events[i], device, TP_EVENT_INTERPROCESS), "tp_event_create");
    check(tp_event_ipc_handle(events[PATH_HANDLE], &sh->handle), "tp_event_ipc_handle");
    /* controls[p]: the socket to the child of path p (raw and handle share one). */
    int pairs[2][2], controls[PATHS];
    pid_t children[2];
    bool isolated = false, ignored;
    for (int c = 0; c < 2; c++) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pairs[c]) != 0)
            return 2;
        children[c] = start_child(device, pairs[c][1], memory, c == 1 ? "--socket-child" : "--child",
                                  c == 1 ? &isolated : &ignored);
        close(pairs[c][1]);
    }
    controls[PATH_RAW] = controls[PATH_HANDLE] = pairs[0][0];
    controls[PATH_SOCKET] = pairs[1][0];
    check(tp_event_ipc_send(events[PATH_SOCKET], controls[PATH_SOCKET]), "tp_event_ipc_send");
    tp_stream *stream;
    check(tp_stream_create(&stream, device, 0), "tp_stream_create");

    double *values[PATHS];
    for (int p = 0; p < PATHS; p++) {
        values[p] = calloc(samples, sizeof(double));
        if (!values[p]) {
            fprintf(stderr, "tpevent_bench_ipc_wait: out of memory for %zu samples\n", samples);
            exit(2);
        }
    }
    for (size_t s = 0; s < samples; s++) {
        for (int p = 0; p < PATHS; p++) {
            int control = controls[p];
            if (p == PATH_RAW) {
                say(control, 'r');
                hear(control);
                usleep(50); /* let the child reach its futex, as a stream's idle worker would */
                uint64_t t0 = bench_now_ns();
                atomic_store(&sh->raw_word, (uint32_t)(s + 1));
                syscall(SYS_futex, &sh->raw_word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
                hear(control);
                values[p][s] = (double)(atomic_load(&sh->t1) - t0) / 1000.0;
                continue;
            }
            tp_hold *hold;
            check(tp_stream_hold(stream, INT64_MAX, &hold), "tp_stream_hold");
            check(tp_stream_launch_host_fn(stream, note_t0, sh), "tp_stream_launch_host_fn");
            check(tp_event_record(events[p], stream), "tp_event_record");
            say(control, p == PATH_HANDLE ? 'h' : 's');
            bool armed = hear(control) == 'a';
            if (armed)
                usleep(50); /* the child's stream is now waiting, as a server's would be */
            check(tp_hold_release(hold), "tp_hold_release");
            if (!armed) {
                check(tp_stream_synchronize(stream), "tp_stream_synchronize");
                values[p][s] = -1; /* no such path here */
                continue;
            }
            hear(control);
            values[p][s] = (double)(atomic_load(&sh->t1) - atomic_load(&sh->t0)) / 1000.0;
        }
    }
    int failed = 0;
    for (int c = 0; c < 2; c++) {
        int status = 0;
        say(pairs[c][0], 'q');
        waitpid(children[c], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }

    printf("cross-process wait on %s: record reached in one process -> the other's stream runs its next work\n",
           device);
    printf("socket's child: %s; %zu samples each, rounds alternating\n",
           isolated ? "pid 1 of new PID, IPC and mount namespaces, private /dev/shm"
                    : "same namespaces (new namespaces refused here)",
           samples);
    double floor_median = 0;
    for (int p = 0; p < PATHS; p++) {
        double median = bench_quantile(values[p], samples, 0.5); /* sorts them */
        if (values[p][0] < 0) {
            printf("  %-24s not measured here (see above)\n", path_names[p]);
            free(values[p]);
            continue;
        }
        double p90 = bench_quantile(values[p], samples, 0.9);
        if (p == PATH_RAW)
            floor_median = median;
        printf("  %-24s median %8.2f us  p90 %8.2f us  median / floor %6.2f\n", path_names[p], median, p90,
               floor_median > 0 ? median / floor_median : 0.0);
        free(values[p]);
    }
    check(tp_stream_destroy(stream), "tp_stream_destroy");
    for (int i = PATH_HANDLE; i < PATHS; i++)
        check(tp_event_destroy(events[i]), "tp_event_destroy");
    return failed;
}
