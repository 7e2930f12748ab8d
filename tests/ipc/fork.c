/*
 * fork() (issue 18 item 3): a child of a process whose CPU streams have started
 * their workers, forked while a worker is inside a host function and another
 * thread is inside a synchronize. In the child, the inherited streams (the
 * default one included) and the events pending on them fail at once with
 * TP_ERR_BACKEND and a message naming fork(); streams and events the child
 * creates, and the child's own default stream, work. alarm() bounds the child, so
 * that a hang shows as SIGALRM in the parent, which checks the exit status.
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

#define CHILD_FAILS_WITH_FORK(call)                                    \
    do {                                                               \
        tp_status s_ = (call);                                         \
        if (s_ != TP_ERR_BACKEND)                                      \
            fprintf(stderr, "status %s\n", tp_status_name(s_));        \
        CHILD_CHECK(s_ == TP_ERR_BACKEND);                             \
        CHILD_CHECK(strstr(tp_last_error(), "before fork()") != NULL); \
    } while (0)

/* TSan cannot run a thread started in a child of a multi-threaded fork ("dup
 * thread with used id"), and under ASan (GCC 12's) such a thread can hang at its
 * first allocation on the allocator's lock that a parent thread held at the fork
 * (seen in CI's asan run: SizeClassAllocator64::GetFromAllocator, in this file's
 * two tests). There the children take the library's locks and use their own CPU
 * streams without starting a stream's worker. */
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

/* A host function on a child's own stream; under TSan run in place instead. */
#define CHILD_LAUNCH(stream, fn, arg) \
    (CHILD_STARTS_THREADS ? tp_stream_launch_host_fn((stream), (fn), (arg)) : ((fn)(arg), TP_OK))

static void child_body(const char *device, tp_stream *inherited, tp_stream *inherited_default, tp_event *pending)
{
    alarm(CHILD_SECONDS);
    atomic_int flag = 0;
    /* Inherited objects: at once, with the reason. */
    CHILD_FAILS_WITH_FORK(tp_stream_launch_host_fn(inherited, flag_host_fn, &flag));
    CHILD_FAILS_WITH_FORK(tp_stream_synchronize(inherited));
    CHILD_FAILS_WITH_FORK(tp_event_synchronize(pending));
    CHILD_FAILS_WITH_FORK(tp_stream_launch_host_fn(inherited_default, flag_host_fn, &flag));
    fprintf(stderr, "child: %s\n", tp_last_error());
    /* Idle at fork: nothing to wait for, it returns at once. */
    CHILD_CHECK(tp_stream_synchronize(inherited_default) == TP_OK);
    tp_event *record_here = NULL;
    CHILD_CHECK(tp_event_create(&record_here, device, 0) == TP_OK);
    CHILD_FAILS_WITH_FORK(tp_event_record(record_here, inherited));
    CHILD_CHECK(tp_stream_destroy(inherited) == TP_OK); /* returns; the stream stays, unused */

    /* The child's own objects work, the current stream (a NULL stream) included:
     * the thread's current stream of the parent's is forgotten. */
    tp_stream *current = NULL;
    CHILD_CHECK(tp_stream_current(device, &current) == TP_OK);
    CHILD_CHECK(current != inherited_default);
    CHILD_CHECK(CHILD_LAUNCH(current, flag_host_fn, &flag) == TP_OK);
    CHILD_CHECK(tp_stream_synchronize(current) == TP_OK);
    CHILD_CHECK(atomic_load(&flag) == 1);
    atomic_store(&flag, 0);
    tp_stream *fresh_default = NULL;
    CHILD_CHECK(tp_stream_default(device, &fresh_default) == TP_OK);
    CHILD_CHECK(fresh_default != inherited_default);
    CHILD_CHECK(CHILD_LAUNCH(fresh_default, flag_host_fn, &flag) == TP_OK);
    CHILD_CHECK(tp_stream_synchronize(fresh_default) == TP_OK);
    CHILD_CHECK(atomic_load(&flag) == 1);
    tp_stream *own = NULL;
    CHILD_CHECK(tp_stream_create(&own, device, 0) == TP_OK);
    atomic_store(&flag, 0);
    CHILD_CHECK(CHILD_LAUNCH(own, sleep_host_fn, (void *)(intptr_t)20) == TP_OK);
    CHILD_CHECK(tp_event_record(record_here, own) == TP_OK);
    CHILD_CHECK(CHILD_LAUNCH(own, flag_host_fn, &flag) == TP_OK);
    CHILD_CHECK(tp_event_synchronize(record_here) == TP_OK);
    CHILD_CHECK(tp_stream_synchronize(own) == TP_OK);
    CHILD_CHECK(atomic_load(&flag) == 1);
    CHILD_CHECK(tp_device_synchronize(device) == TP_OK);
    CHILD_CHECK(tp_event_destroy(record_here) == TP_OK);
    CHILD_CHECK(tp_stream_destroy(own) == TP_OK);
    _exit(0);
}

TEST(cpu_fork_child_fails_inherited_objects_at_once)
{
    tp_stream *stream = new_stream(env->device);
    tp_stream *default_stream = NULL;
    CHECK_OK(tp_stream_default(env->device, &default_stream));
    atomic_int flag = 0;
    /* Both workers started; the default one idle, the other inside a gate. */
    CHECK_OK(tp_stream_launch_host_fn(default_stream, flag_host_fn, &flag));
    CHECK_OK(tp_stream_synchronize(default_stream));
    gate g;
    gate_init(&g);
    gate_launch(&g, stream);
    CHECK(gate_entered_within(&g, 1, EVENTUALLY_SECONDS));
    tp_event *event = new_event(env->device, 0);
    /* The thread's current stream (the default one) looked up before the fork. */
    CHECK_OK(tp_event_record(event, NULL));
    CHECK_OK(tp_event_record(event, stream));
    CHECK(!event_is_done(event));
    /* Another thread inside the library (asleep in a synchronize) at fork time. */
    async_call call;
    async_synchronize(&call, event);
    sleep_ms(50);

    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0)
        child_body(env->device, stream, default_stream, event);

    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status))
        printf("the child was killed by signal %d%s\n", WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* The parent is untouched. */
    CHECK(!atomic_load(&call.returned));
    gate_open(&g);
    CHECK(async_returned_within(&call, EVENTUALLY_SECONDS));
    CHECK_STATUS(call.status, TP_OK);
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    gate_destroy(&g);
    return 0;
}

/* GPU: a child of a process that initialized the driver fails every GPU call at
 * once, with the reason; the CPU backend works in it. Run on the fake GPU module
 * here (ipc.fake:0), on a real GPU where there is one. */
TEST(gpu_fork_child_fails_at_once)
{
    if (strncmp(env->device, "cpu", 3) == 0) {
        printf("skipped: a GPU backend's test\n");
        return TEST_SKIP;
    }
    int skip = test_skip_unless_device(env->device, "device");
    if (skip)
        return skip;
    tp_stream *stream = new_stream(env->device);
    tp_event *event = new_event(env->device, 0);
    atomic_int flag = 0;
    CHECK_OK(tp_stream_launch_host_fn(stream, flag_host_fn, &flag));
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK(atomic_load(&flag) == 1);

    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        alarm(CHILD_SECONDS);
        const char *why = "cannot be used in a child created by fork()";
        bool done = false;
        CHILD_CHECK(tp_event_query(event, &done) == TP_ERR_BACKEND);
        CHILD_CHECK(strstr(tp_last_error(), why) != NULL);
        fprintf(stderr, "child: %s\n", tp_last_error());
        CHILD_CHECK(tp_event_synchronize(event) == TP_ERR_BACKEND);
        CHILD_CHECK(tp_event_record(event, stream) == TP_ERR_BACKEND);
        CHILD_CHECK(tp_stream_launch_host_fn(stream, flag_host_fn, &flag) == TP_ERR_BACKEND);
        CHILD_CHECK(tp_stream_synchronize(stream) == TP_ERR_BACKEND);
        CHILD_CHECK(strstr(tp_last_error(), why) != NULL);
        tp_stream *other = NULL;
        CHILD_CHECK(tp_stream_create(&other, env->device, 0) == TP_ERR_BACKEND);
        tp_event *fresh = NULL;
        CHILD_CHECK(tp_event_create(&fresh, env->device, 0) == TP_ERR_BACKEND);
        CHILD_CHECK(tp_device_synchronize(env->device) == TP_ERR_BACKEND);
        /* The CPU backend works. */
        tp_stream *cpu = NULL;
        CHILD_CHECK(tp_stream_create(&cpu, "cpu:0", 0) == TP_OK);
        atomic_store(&flag, 0);
        CHILD_CHECK(CHILD_LAUNCH(cpu, flag_host_fn, &flag) == TP_OK);
        CHILD_CHECK(tp_stream_synchronize(cpu) == TP_OK);
        CHILD_CHECK(atomic_load(&flag) == 1);
        CHILD_CHECK(tp_stream_destroy(cpu) == TP_OK);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status))
        printf("the child was killed by signal %d%s\n", WTERMSIG(status),
               WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The parent is untouched. */
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    CHECK_OK(tp_event_destroy(event));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

typedef struct churn {
    const char *device;
    atomic_bool stop;
    atomic_int rounds;
} churn;

/*
 * A sanitizer's allocator is not fork-safe as glibc's malloc is: a child forked
 * while another thread is inside malloc blocks on the allocator's lock at its
 * first allocation (seen with gcc 12's ASan, inside __sanitizer::Mutex::Lock from
 * the child's calloc). There the churn takes only a stream's lock, which needs no
 * allocation; everywhere else it also creates and destroys streams and
 * synchronizes the device (the device's lock).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHURN_ALLOCATES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHURN_ALLOCATES 0
#endif
#endif
#ifndef CHURN_ALLOCATES
#define CHURN_ALLOCATES 1
#endif

/* Takes the device's lock and a stream's lock over and over (creating and
 * destroying streams, where allocating is fork-safe) until told to stop. */
static void *churn_main(void *arg)
{
    churn *c = arg;
    tp_stream *kept = NULL;
    if (tp_stream_create(&kept, c->device, 0) != TP_OK)
        return NULL;
    while (!atomic_load(&c->stop)) {
        if (CHURN_ALLOCATES) {
            tp_stream *s = NULL;
            if (tp_stream_create(&s, c->device, 0) == TP_OK)
                (void)tp_stream_destroy(s);
        }
        if (CHURN_ALLOCATES)
            (void)tp_device_synchronize(c->device); /* the device's lock (and a malloc) */
        bool idle;
        (void)tp_stream_query(kept, &idle); /* the stream's lock */
        (void)tp_stream_synchronize(kept);
        atomic_fetch_add(&c->rounds, 1);
    }
    (void)tp_stream_destroy(kept);
    return NULL;
}

/* Another thread inside the library, taking the device's lock over and over, at
 * the moment of each fork: the child must never find that lock held for good. */
TEST(cpu_fork_while_another_thread_takes_the_device_lock)
{
    churn c = {.device = env->device};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, churn_main, &c) == 0);
    /* 1000 forks take under a second here, but a sanitizer's fork copies its shadow
     * mappings and takes ~10 ms: the forks stop after 1000 or 4 s, whichever first. */
    int forks = 0;
    double stop_at = monotonic_seconds() + 4.0;
    for (; forks < 1000 && monotonic_seconds() < stop_at; forks++) {
        fflush(NULL);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            alarm(CHILD_SECONDS);
            atomic_int flag = 0;
            tp_stream *own = NULL;
            CHILD_CHECK(tp_stream_create(&own, env->device, 0) == TP_OK);
            if (CHILD_STARTS_THREADS) {
                CHILD_CHECK(CHILD_LAUNCH(own, flag_host_fn, &flag) == TP_OK);
            } else {
                atomic_store(&flag, 1); /* TSan: no thread in a child of a threaded fork */
                tp_event *record = NULL;
                CHILD_CHECK(tp_event_create(&record, env->device, 0) == TP_OK);
                CHILD_CHECK(tp_event_record(record, own) == TP_OK); /* idle: no worker */
                CHILD_CHECK(tp_event_destroy(record) == TP_OK);
            }
            CHILD_CHECK(tp_stream_synchronize(own) == TP_OK);
            CHILD_CHECK(tp_stream_destroy(own) == TP_OK);
            CHILD_CHECK(tp_device_synchronize(env->device) == TP_OK);
            _exit(atomic_load(&flag) == 1 ? 0 : 3);
        }
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        if (WIFSIGNALED(status))
            printf("child %d was killed by signal %d%s\n", forks, WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? " (alarm: it hung)" : "");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    atomic_store(&c.stop, true);
    CHECK(pthread_join(thread, NULL) == 0);
    printf("%d forks while the other thread made %d streams\n", forks, atomic_load(&c.rounds));
    return 0;
}

/* In the child: its own hold with a watchdog, let go by a watchdog thread of the
 * child's own (the parent's thread did not cross the fork), the release then saying
 * so. The parent's hold is not the child's to release, and never fires there. Under
 * the sanitizers (no thread started in the child, above) only its own stream. */
static void child_holds_its_own_stream(const char *device)
{
    alarm(CHILD_SECONDS);
    tp_stream *own = NULL;
    tp_event *after = NULL;
    tp_hold *hold = NULL;
    CHILD_CHECK(tp_stream_create(&own, device, 0) == TP_OK);
    CHILD_CHECK(tp_event_create(&after, device, 0) == TP_OK);
    if (CHILD_STARTS_THREADS) {
        CHILD_CHECK(tp_stream_hold(own, 50 * 1000000LL, &hold) == TP_OK);
        CHILD_CHECK(tp_event_record(after, own) == TP_OK);
        CHILD_CHECK(tp_event_synchronize(after) == TP_OK);
        CHILD_CHECK(tp_hold_release(hold) == TP_ERR_NOT_READY);
    }
    _exit(0);
}

/* Holds do not cross fork() (rule 17): the child starts with no watchdog list and
 * makes its own; the parent's hold, with its watchdog, is untouched by the child. */
TEST(cpu_fork_holds_do_not_cross)
{
    if (strncmp(env->device, "cpu", 3) != 0) {
        printf("skipped: a CPU backend's test\n");
        return TEST_SKIP;
    }
    tp_stream *stream = new_stream(env->device);
    tp_event *after = new_event(env->device, 0);
    tp_hold *hold = NULL;
    CHECK_OK(tp_stream_hold(stream, 20LL * 1000000000, &hold)); /* its watchdog thread runs */
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0)
        child_holds_its_own_stream(env->device);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_OK(tp_event_record(after, stream));
    CHECK(event_pending_for(after, 50)); /* still held */
    CHECK_OK(tp_hold_release(hold));
    CHECK(event_done_within(after, EVENTUALLY_SECONDS));
    CHECK_OK(tp_event_destroy(after));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
