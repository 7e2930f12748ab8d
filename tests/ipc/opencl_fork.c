/*
 * fork() on OpenCL (issue 47 item 2): a child of a process that initialized
 * OpenCL fails every OpenCL call at once with TP_ERR_BACKEND and the reason, as a
 * child of a CUDA/HIP process does (fork.c's gpu_fork_child_fails_at_once); the
 * CPU backend works in it. Before, tp_stream_create succeeded in the child and a
 * record and synchronize then never returned (PoCL's threads are not in the
 * child). alarm() bounds the child, so that a hang shows as SIGALRM in the parent.
 * Registered for opencl:0 only (tests/ipc/CMakeLists.txt).
 */
#define _GNU_SOURCE

#include "ipc_support.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_SECONDS 10

/* In the child: no CHECK (it would run the parent's exit path); the line that
 * failed becomes the exit status. */
#define CHILD_CHECK(expr)                                                                                  \
    do {                                                                                                   \
        if (!(expr)) {                                                                                     \
            fprintf(stderr, "child %s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, #expr, tp_last_error()); \
            _exit(__LINE__ % 250 + 1);                                                                     \
        }                                                                                                  \
    } while (0)

/* The call fails at once, and says why. */
#define CHILD_FAILS_AFTER_FORK(call)                                                                 \
    do {                                                                                             \
        tp_status s_ = (call);                                                                       \
        if (s_ != TP_ERR_BACKEND)                                                                    \
            fprintf(stderr, "child: %s answered %s\n", #call, tp_status_name(s_));                   \
        CHILD_CHECK(s_ == TP_ERR_BACKEND);                                                           \
        CHILD_CHECK(strstr(tp_last_error(), "cannot be used in a child created by fork()") != NULL); \
    } while (0)

/* Under TSan and ASan a thread started in a child of a multi-threaded fork can
 * hang or is refused (fork.c says more): there the child runs its CPU host
 * function in place. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHILD_STARTS_THREADS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define CHILD_STARTS_THREADS 0
#endif
#endif
#ifndef CHILD_STARTS_THREADS
#define CHILD_STARTS_THREADS 1
#endif

typedef struct inherited {
    tp_stream *stream; /* idle at the fork */
    tp_stream *held;   /* a hold keeps its record pending at the fork */
    tp_event *reached; /* recorded on `stream`, reached */
    tp_event *pending; /* recorded on `held`, not reached */
    atomic_int *flag;
} inherited;

static void opencl_child_body(const char *device, inherited *parent)
{
    alarm(CHILD_SECONDS);
    /* What the issue saw hang: a new stream, a record on it and its synchronize,
     * and a synchronize of the parent's stream. */
    tp_stream *fresh = NULL;
    CHILD_FAILS_AFTER_FORK(tp_stream_create(&fresh, device, 0));
    fprintf(stderr, "child: %s\n", tp_last_error());
    CHILD_FAILS_AFTER_FORK(tp_stream_synchronize(parent->stream));
    CHILD_FAILS_AFTER_FORK(tp_event_record(parent->reached, parent->stream));
    CHILD_FAILS_AFTER_FORK(tp_event_synchronize(parent->reached));
    CHILD_FAILS_AFTER_FORK(tp_event_synchronize(parent->pending));
    bool done = false;
    CHILD_FAILS_AFTER_FORK(tp_event_query(parent->pending, &done));
    CHILD_FAILS_AFTER_FORK(tp_stream_query(parent->held, &done));
    CHILD_FAILS_AFTER_FORK(tp_stream_launch_host_fn(parent->stream, flag_host_fn, parent->flag));
    tp_hold *hold = NULL;
    CHILD_FAILS_AFTER_FORK(tp_stream_hold(parent->stream, 1000000000, &hold));
    tp_event *event = NULL;
    CHILD_FAILS_AFTER_FORK(tp_event_create(&event, device, 0));
    tp_stream *default_stream = NULL;
    CHILD_FAILS_AFTER_FORK(tp_stream_default(device, &default_stream));
    CHILD_FAILS_AFTER_FORK(tp_device_synchronize(device));
    int64_t ns = 0;
    CHILD_FAILS_AFTER_FORK(tp_event_timestamp(parent->reached, &ns));
    float ms = 0;
    CHILD_FAILS_AFTER_FORK(tp_event_elapsed_time(parent->reached, parent->reached, &ms));
    tp_clock_info clock;
    CHILD_FAILS_AFTER_FORK(tp_device_clock(device, &clock));
    CHILD_FAILS_AFTER_FORK(tp_stream_destroy(parent->stream));
    CHILD_FAILS_AFTER_FORK(tp_event_destroy(parent->pending));

    /* The CPU backend works, a wait on an OpenCL event (across backends) aside. */
    tp_stream *cpu = NULL;
    CHILD_CHECK(tp_stream_create(&cpu, "cpu:0", 0) == TP_OK);
    CHILD_FAILS_AFTER_FORK(tp_stream_wait_event(cpu, parent->reached));
    atomic_store(parent->flag, 0);
    CHILD_CHECK((CHILD_STARTS_THREADS ? tp_stream_launch_host_fn(cpu, flag_host_fn, parent->flag)
                                      : (flag_host_fn(parent->flag), TP_OK)) == TP_OK);
    CHILD_CHECK(tp_stream_synchronize(cpu) == TP_OK);
    CHILD_CHECK(atomic_load(parent->flag) == 1);
    CHILD_CHECK(tp_stream_destroy(cpu) == TP_OK);
    _exit(0);
}

TEST(opencl_fork_child_fails_at_once)
{
    int skip = test_skip_unless_device(env->device, "device");
    if (skip)
        return skip;
    atomic_int flag = 0;
    inherited parent = {.stream = new_stream(env->device), .held = new_stream(env->device), .flag = &flag};
    parent.reached = new_event(env->device, TP_EVENT_TIMING);
    parent.pending = new_event(env->device, 0);
    /* Everything of the backend started: a host function's worker, the notifier
     * of a wait across backends, a hold. */
    CHECK_OK(tp_stream_launch_host_fn(parent.stream, flag_host_fn, &flag));
    CHECK_OK(tp_event_record(parent.reached, parent.stream));
    tp_stream *cpu = new_stream("cpu:0");
    CHECK_OK(tp_stream_wait_event(cpu, parent.reached));
    CHECK_OK(tp_stream_synchronize(cpu));
    CHECK_OK(tp_event_synchronize(parent.reached));
    CHECK(atomic_load(&flag) == 1);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(parent.held, 60 * 1000000000LL, &hold));
    CHECK_OK(tp_event_record(parent.pending, parent.held));

    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0)
        opencl_child_body(env->device, &parent);

    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status))
        printf("the child was killed by signal %d%s\n", WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* The parent is untouched. */
    CHECK_OK(tp_hold_release(hold));
    CHECK_OK(tp_event_synchronize(parent.pending));
    CHECK_OK(tp_event_record(parent.reached, parent.stream));
    CHECK_OK(tp_event_synchronize(parent.reached));
    CHECK_OK(tp_stream_destroy(cpu));
    CHECK_OK(tp_event_destroy(parent.pending));
    CHECK_OK(tp_event_destroy(parent.reached));
    CHECK_OK(tp_stream_destroy(parent.held));
    CHECK_OK(tp_stream_destroy(parent.stream));
    return 0;
}
