#define _POSIX_C_SOURCE 200809L

#include "support.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gate_init(gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->is_open = false;
    g->entered = 0;
    g->passed = 0;
}

void gate_destroy(gate *g)
{
    pthread_cond_destroy(&g->changed);
    pthread_mutex_destroy(&g->lock);
}

void gate_open(gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->is_open = true;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

int gate_passed(gate *g)
{
    pthread_mutex_lock(&g->lock);
    int passed = g->passed;
    pthread_mutex_unlock(&g->lock);
    return passed;
}

void gate_host_fn(void *arg)
{
    gate *g = arg;
    pthread_mutex_lock(&g->lock);
    g->entered++;
    while (!g->is_open)
        pthread_cond_wait(&g->changed, &g->lock);
    g->passed++;
    pthread_mutex_unlock(&g->lock);
}

bool gate_entered_within(gate *g, int count, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        int entered = g->entered;
        pthread_mutex_unlock(&g->lock);
        if (entered >= count)
            return true;
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
}

void gate_launch(gate *g, tp_stream *stream)
{
    CHECK_OK(tp_stream_launch_host_fn(stream, gate_host_fn, g));
}

static void *opener_main(void *arg)
{
    gate_opener *opener = arg;
    sleep_ms(opener->delay_ms);
    atomic_store(&opener->opened, true);
    gate_open(opener->gate);
    return NULL;
}

void gate_open_later(gate_opener *opener, gate *g, int delay_ms)
{
    opener->gate = g;
    opener->delay_ms = delay_ms;
    atomic_init(&opener->opened, false);
    CHECK(pthread_create(&opener->thread, NULL, opener_main, opener) == 0);
}

void gate_opener_join(gate_opener *opener)
{
    CHECK(pthread_join(opener->thread, NULL) == 0);
}

void flag_host_fn(void *flag)
{
    atomic_store((atomic_int *)flag, 1);
}

void busy_host_fn(void *ns)
{
    int64_t until = monotonic_ns() + *(const int64_t *)ns;
    while (monotonic_ns() < until) {
    }
}

tp_measure_options quick_measure_options(void)
{
    tp_measure_options options;
    tp_measure_options_init(&options);
    options.min_time_ns = 10 * 1000 * 1000;
    options.max_time_ns = 5LL * 1000 * 1000 * 1000;
    options.min_samples = 5;
    options.max_noise = 1e9;
    return options;
}

void counter_host_fn(void *counter)
{
    atomic_fetch_add((atomic_int *)counter, 1);
}

void sleep_host_fn(void *ms)
{
    sleep_ms((int)(intptr_t)ms);
}

void order_log_init(order_log *log)
{
    pthread_mutex_init(&log->lock, NULL);
    log->count = 0;
}

void order_log_destroy(order_log *log)
{
    pthread_mutex_destroy(&log->lock);
}

void order_log_host_fn(void *arg)
{
    order_item *item = arg;
    pthread_mutex_lock(&item->log->lock);
    if (item->log->count < ORDER_LOG_MAX)
        item->log->values[item->log->count++] = item->value;
    pthread_mutex_unlock(&item->log->lock);
}

void expect_elapsed_refused(tp_event *start, tp_event *end, tp_status expected)
{
    float ms = 123.0f;
    CHECK_STATUS(tp_event_elapsed_time(start, end, &ms), expected);
    CHECK(ms == 123.0f);
}

bool event_is_done(tp_event *event)
{
    bool done = false;
    CHECK_OK(tp_event_query(event, &done));
    return done;
}

bool stream_is_idle(tp_stream *stream)
{
    bool idle = false;
    CHECK_OK(tp_stream_query(stream, &idle));
    return idle;
}

bool stream_idle_within(tp_stream *stream, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    while (!stream_is_idle(stream)) {
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
    return true;
}

bool event_done_within(tp_event *event, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    while (!event_is_done(event)) {
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
    return true;
}

bool event_pending_for(tp_event *event, int ms)
{
    double end = monotonic_seconds() + ms / 1000.0;
    do {
        if (event_is_done(event))
            return false;
        sleep_ms(1);
    } while (monotonic_seconds() < end);
    return !event_is_done(event);
}

bool flag_reaches_within(atomic_int *flag, int value, double seconds)
{
    double deadline = monotonic_seconds() + seconds;
    while (atomic_load(flag) < value) {
        if (monotonic_seconds() > deadline)
            return false;
        sleep_ms(1);
    }
    return true;
}

typedef struct timed_call {
    void (*fn)(void *);
    void *arg;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool returned;
} timed_call;

static void *timed_call_main(void *arg)
{
    timed_call *call = arg;
    call->fn(call->arg);
    pthread_mutex_lock(&call->lock);
    call->returned = true;
    pthread_cond_broadcast(&call->changed);
    pthread_mutex_unlock(&call->lock);
    return NULL;
}

bool call_returns_within(void (*fn)(void *), void *arg, double seconds)
{
    /* On the heap: if the call hangs, the thread outlives this frame. */
    timed_call *call = calloc(1, sizeof *call);
    CHECK(call != NULL);
    call->fn = fn;
    call->arg = arg;
    pthread_mutex_init(&call->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&call->changed, &attr);
    pthread_condattr_destroy(&attr);

    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, timed_call_main, call) == 0);

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)seconds;
    deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&call->lock);
    while (!call->returned) {
        if (pthread_cond_timedwait(&call->changed, &call->lock, &deadline) == ETIMEDOUT)
            break;
    }
    bool returned = call->returned;
    pthread_mutex_unlock(&call->lock);
    if (!returned)
        return false;
    CHECK(pthread_join(thread, NULL) == 0);
    pthread_cond_destroy(&call->changed);
    pthread_mutex_destroy(&call->lock);
    free(call);
    return true;
}

void sleep_ms(int ms)
{
    struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t device_error_ns(const char *device)
{
    tp_clock_info info = {0, -1};
    CHECK_OK(tp_device_clock(device, &info));
    CHECK(info.error_ns >= 0);
    return info.error_ns;
}

void record_reached(tp_event *event, tp_stream *stream, int64_t *before_ns, int64_t *after_ns)
{
    *before_ns = monotonic_ns();
    CHECK_OK(tp_event_record(event, stream));
    CHECK_OK(tp_event_synchronize(event));
    *after_ns = monotonic_ns();
}

int64_t timestamp_of(tp_event *event)
{
    int64_t ns = -1;
    CHECK_OK(tp_event_timestamp(event, &ns));
    return ns;
}

double thread_cpu_seconds(void)
{
    struct timespec used;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
    return (double)used.tv_sec + (double)used.tv_nsec / 1e9;
}

tp_event *new_event(const char *device, unsigned flags)
{
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, device, flags));
    CHECK(event != NULL);
    return event;
}

tp_stream *new_stream(const char *device)
{
    tp_stream *stream = NULL;
    CHECK_OK(tp_stream_create(&stream, device, 0));
    CHECK(stream != NULL);
    return stream;
}

const char *other_backend(const test_env *env)
{
    static const char *const gpus[][2] = {{"cuda", "cuda:0"}, {"hip", "hip:0"}};
    const char *device = env->device;
    tp_device of_device, of_peer;
    if (env->peer && tp_device_parse(device, &of_device) == TP_OK && tp_device_parse(env->peer, &of_peer) == TP_OK &&
        of_peer.type != of_device.type) {
        const char *reason = NULL;
        if (tp_backend_status(tp_device_type_name(of_peer.type), &reason) == TP_OK)
            return env->peer;
        printf("skipped: the other backend, the peer %s, is not usable here: %s\n", env->peer, reason ? reason : "");
        return NULL;
    }
    if (strncmp(device, "cpu", 3) != 0)
        return "cpu:0";
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (tp_backend_status(gpus[i][0], NULL) == TP_OK)
            return gpus[i][1];
    printf("skipped: needs a second backend, and no GPU backend is usable here (cuda, hip)\n");
    return NULL;
}

bool peer_of_the_same_backend(const test_env *env, const char *what)
{
    tp_device of_device, of_peer;
    CHECK_OK(tp_device_parse(env->device, &of_device));
    CHECK_OK(tp_device_parse(env->peer, &of_peer));
    if (of_peer.type == of_device.type)
        return true;
    printf("skipped: %s needs a peer of %s's backend, and the peer is %s\n", what, env->device, env->peer);
    return false;
}

char *trace_stop_text(void)
{
    char path[] = "/tmp/tpevent-conformance-trace-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(tp_trace_stop(path));
    FILE *file = fopen(path, "r");
    CHECK(file != NULL);
    CHECK(fseek(file, 0, SEEK_END) == 0);
    long length = ftell(file);
    CHECK(length >= 0);
    rewind(file);
    char *text = malloc((size_t)length + 1);
    CHECK(text != NULL);
    CHECK(fread(text, 1, (size_t)length, file) == (size_t)length);
    text[length] = '\0';
    fclose(file);
    unlink(path);
    return text;
}

int text_occurrences(const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle))
        count++;
    return count;
}

bool ipc_supported(const char *device, bool say_why)
{
    tp_event *event = NULL;
    tp_status status = tp_event_create(&event, device, TP_EVENT_INTERPROCESS);
    if (status == TP_ERR_UNSUPPORTED) {
        if (say_why)
            printf("skipped: %s\n", tp_last_error());
        return false;
    }
    CHECK_OK(status);
    CHECK_OK(tp_event_destroy(event));
    return true;
}
