/* The model test's runner: failures and the trace, the watchdog, time, random choices,
 * the host functions it launches and what it reads from the backend. */
#define _POSIX_C_SOURCE 200809L

#include "model_runner.h"

const char *device_name_of(const runner *r, int device)
{
    return r->devices[device];
}

static void print_trace(const runner *r)
{
    fprintf(stderr, "operations of this sequence so far:\n");
    for (int i = 0; i < r->trace_count; i++)
        fprintf(stderr, "  %s\n", r->trace[i]);
}

_Noreturn void fail(runner *r, const char *fmt, ...)
{
    va_list args;
    fflush(stdout);
    print_trace(r);
    fprintf(stderr, "model: FAILED: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n  tp_last_error (this thread): \"%s\"\n", tp_last_error());
    fprintf(stderr, "  sequence %d; replay it with: --device %s%s%s --seed %" PRIu64 " --sequences 1\n", r->sequence,
            r->devices[0], r->devices[1] ? " --peer " : "", r->devices[1] ? r->devices[1] : "", r->seed);
    fflush(stderr);
    /* Not exit(): host functions may be blocked on gates nobody will open. */
    _Exit(1);
}

void trace(runner *r, const char *fmt, ...)
{
    if (r->trace_count >= MAX_OPS + 16)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(r->trace[r->trace_count], TRACE_WIDTH, fmt, args);
    va_end(args);
    if (r->verbose)
        printf("  %s\n", r->trace[r->trace_count]);
    r->trace_count++;
}

/*
 * The watchdog: SIGALRM after SEQUENCE_WATCHDOG_SECONDS per sequence, or
 * BLOCKING_CALL_SECONDS around a call that blocks. A signal handler can only write
 * what is ready, so the message is written beforehand and the trace is read as it
 * stands (the main thread is blocked in the library, not writing it).
 */
#define BLOCKING_CALL_SECONDS 30

static struct {
    char message[320];
    const runner *runner;
} watchdog;

static void write_text(const char *text)
{
    ssize_t written = write(STDERR_FILENO, text, strlen(text));
    (void)written;
}

void on_watchdog(int signo)
{
    (void)signo;
    const runner *r = watchdog.runner;
    if (r) {
        write_text("operations of this sequence so far:\n");
        for (int i = 0; i < r->trace_count; i++) {
            write_text("  ");
            write_text(r->trace[i]);
            write_text("\n");
        }
    }
    write_text(watchdog.message);
    _exit(1);
}

void watch(runner *r, unsigned seconds, const char *what)
{
    snprintf(watchdog.message, sizeof watchdog.message,
             "model: FAILED: %s hangs (more than %u s) in sequence %d; replay it with: --device %s%s%s --seed %" PRIu64
             " --sequences 1 --verbose\n",
             what, seconds, r->sequence, r->devices[0], r->devices[1] ? " --peer " : "",
             r->devices[1] ? r->devices[1] : "", r->seed);
    watchdog.runner = r;
    alarm(seconds);
}

/* Around a call the model says returns. */
void blocking_call(runner *r, const char *what)
{
    watch(r, BLOCKING_CALL_SECONDS, what);
}

void blocking_call_returned(runner *r)
{
    watch(r, SEQUENCE_WATCHDOG_SECONDS, "the sequence");
}

/* ---------------------------------------------------------------- time */

double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

void sleep_us(long us)
{
    struct timespec left = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------- random */

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

int random_below(runner *r, int bound)
{
    return (int)(next_random(&r->rng) % (uint64_t)bound);
}

int device_count(const runner *r)
{
    return r->devices[1] ? 2 : 1;
}

/* A random index among those that pass `pick`, or -1. */
int random_stream(runner *r, int device, bool allow_default)
{
    int candidates[MODEL_MAX_STREAMS], count = 0;
    for (int i = 0; i < r->m->stream_count; i++) {
        const model_stream *s = &r->m->streams[i];
        if (s->alive && (device < 0 || s->device == device) && (allow_default || !s->is_default))
            candidates[count++] = i;
    }
    return count ? candidates[random_below(r, count)] : -1;
}

int random_event(runner *r)
{
    int candidates[MODEL_MAX_EVENTS], count = 0;
    for (int i = 0; i < r->m->event_count; i++)
        if (r->m->events[i].alive)
            candidates[count++] = i;
    return count ? candidates[random_below(r, count)] : -1;
}

/* A random gate: a closed one if `closed` (-1 if none is left), else any. */
int random_gate(runner *r, bool closed)
{
    int candidates[MODEL_MAX_GATES], count = 0;
    for (int g = 0; g < MODEL_GATES; g++)
        if (!closed || !r->m->gate_open[g])
            candidates[count++] = g;
    return count ? candidates[random_below(r, count)] : -1;
}

int default_stream_of(const runner *r, int device)
{
    for (int i = 0; i < r->m->stream_count; i++)
        if (r->m->streams[i].is_default && r->m->streams[i].device == device)
            return i;
    return -1;
}

/* ------------------------------------------------------- host functions */

static void log_append(runner *r, int item)
{
    pthread_mutex_lock(&r->log_lock);
    if (r->log_count < MODEL_MAX_ITEMS)
        r->log[r->log_count++] = item;
    pthread_mutex_unlock(&r->log_lock);
}

void host_call_run(void *arg)
{
    host_call *call = arg;
    runner *r = call->runner;
    if (call->gate >= 0) {
        real_gate *g = &r->gates[call->gate];
        pthread_mutex_lock(&g->lock);
        while (!g->open)
            pthread_cond_wait(&g->changed, &g->lock);
        pthread_mutex_unlock(&g->lock);
    }
    log_append(r, call->item);
}

void gate_open(real_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* The log as it is now; *count entries. */
int snapshot_log(runner *r, int *log)
{
    pthread_mutex_lock(&r->log_lock);
    int count = r->log_count;
    memcpy(log, r->log, sizeof(int) * (size_t)count);
    pthread_mutex_unlock(&r->log_lock);
    return count;
}

bool item_is_logged(const model_item *item)
{
    return item->kind == MODEL_HOST_FN || item->kind == MODEL_GATE;
}

void describe_item(const model *m, int item, char *buf, size_t size)
{
    const model_item *it = &m->items[item];
    snprintf(buf, size, "%s #%d (stream s%d, position %d)", it->kind == MODEL_GATE ? "gate fn" : "host fn", item,
             it->stream, it->position);
}

/* ----------------------------------------------------------- real calls */

bool real_event_done(runner *r, int event)
{
    bool done = false;
    EXPECT_OK(r, tp_event_query(r->events[event], &done));
    return done;
}

bool real_stream_idle(runner *r, int stream)
{
    bool idle = false;
    EXPECT_OK(r, tp_stream_query(r->streams[stream], &idle));
    return idle;
}
