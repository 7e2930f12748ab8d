/*
 * Stress: many threads doing random things to a shared pool of streams and events
 * on two virtual CPU devices (rule 10: every function may be called from any thread
 * at the same time), for a given time.
 *
 *   tpevent_stress [--seconds S] [--watchdog S] [--seed N] [--threads N]
 *
 * --seconds: how long to run (default: $TPEVENT_STRESS_SECONDS, else 5);
 * --watchdog: fail if one call takes, or no thread finishes a call for, this long
 *   (default 30 s): a deadlock, reported with what each thread was doing;
 * --seed: the random choices (printed; the interleaving is the scheduler's).
 *
 * What it checks:
 *   - every call answers TP_OK, or one of the statuses documented for it in that
 *     situation (record on another device's stream: TP_ERR_DEVICE_MISMATCH, exactly
 *     when the devices differ; elapsed time and timestamps: rule 7's errors,
 *     TIMING_DISABLED exactly when a flag is missing, events of two devices timed);
 *   - no call hangs (the watchdog);
 *   - every host function launched runs, streams destroyed with work pending
 *     included (rule 9);
 *   - nothing leaks (ASan's leak check, in the asan preset) and nothing races (the
 *     tsan preset).
 *
 * Handles are shared, so destruction must not race with use: a thread uses a
 * handle only while it holds a use count on its pool slot, and destroys only a
 * handle it has taken out of its slot (which needs the use count to be zero); it
 * then puts a new one in. A thread never waits for a slot: a slot in use or empty
 * makes it pick another operation, so the pool itself cannot deadlock and what the
 * watchdog sees is the library's.
 */
#define _POSIX_C_SOURCE 200809L

#include "stress.h"

typedef struct watchdog {
    stress *stress;
    atomic_bool done;
    /* What the main thread is doing once the workers have stopped. */
    _Atomic(const char *) main_phase;
    _Atomic uint64_t main_since_ns;
    pthread_t thread;
} watchdog;

static _Noreturn void dump_and_fail(const stress *s, const char *why)
{
    uint64_t now = now_ns();
    fprintf(stderr, "stress: FAILED: %s (watchdog: %.0f s). What each thread was doing:\n", why, s->watchdog_seconds);
    for (int i = 0; i < s->thread_count; i++) {
        const activity *a = &s->workers[i].activity;
        int op = atomic_load(&a->op);
        double for_s = (double)(now - atomic_load(&a->since_ns)) / 1e9;
        int device = atomic_load(&a->device);
        fprintf(stderr,
                "  thread %2d: %-30s for %6.2f s  %s%s stream slots %3d %3d, event slots %3d %3d, "
                "handles %#" PRIxPTR " %#" PRIxPTR "; %" PRIu64 " operations done\n",
                i, op >= 0 && op < OP_KIND_COUNT ? op_names[op] : "?", for_s,
                device >= 0 && device < STRESS_DEVICES ? device_names[device] : "", device >= 0 ? "," : "",
                atomic_load(&a->stream_slots[0]), atomic_load(&a->stream_slots[1]), atomic_load(&a->event_slots[0]),
                atomic_load(&a->event_slots[1]), atomic_load(&a->handles[0]), atomic_load(&a->handles[1]),
                atomic_load(&a->done));
    }
    fprintf(stderr, "  host functions: %" PRIu64 " launched, %" PRIu64 " ran\n", atomic_load(&s->host_fns_launched),
            atomic_load(&s->host_fns_ran));
    fflush(stderr);
    _Exit(1);
}

static void *watchdog_main(void *arg)
{
    watchdog *dog = arg;
    stress *s = dog->stress;
    uint64_t limit_ns = (uint64_t)(s->watchdog_seconds * 1e9);
    char why[160];
    while (!atomic_load(&dog->done)) {
        sleep_us(100000);
        uint64_t now = now_ns();
        const char *phase = atomic_load(&dog->main_phase);
        if (phase) {
            if (now - atomic_load(&dog->main_since_ns) > limit_ns) {
                snprintf(why, sizeof why, "the main thread hangs %s", phase);
                dump_and_fail(s, why);
            }
            continue;
        }
        for (int i = 0; i < s->thread_count; i++) {
            const activity *a = &s->workers[i].activity;
            int op = atomic_load(&a->op);
            uint64_t since = atomic_load(&a->since_ns);
            if (op != OP_IDLE && now > since && now - since > limit_ns) {
                snprintf(why, sizeof why, "thread %d hangs in %s", i, op_names[op]);
                dump_and_fail(s, why);
            }
        }
        uint64_t last = atomic_load_explicit(&s->last_progress_ns, memory_order_relaxed);
        if (now > last && now - last > limit_ns)
            dump_and_fail(s, "no thread finished an operation");
    }
    return NULL;
}

static void main_phase(watchdog *dog, const char *phase)
{
    atomic_store(&dog->main_since_ns, now_ns());
    atomic_store(&dog->main_phase, phase);
}

/* ------------------------------------------------------------------- main */

static double parse_seconds(const char *text, const char *what)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value > 0) || value > 1e6)
        fail("%s: expected a positive number of seconds, got \"%s\"", what, text);
    return value;
}

static uint64_t parse_u64(const char *text, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0')
        fail("%s: expected a whole number, got \"%s\"", what, text);
    return (uint64_t)value;
}

static void parse_arguments(stress *s, int argc, char **argv)
{
    const char *env = getenv("TPEVENT_STRESS_SECONDS");
    s->seconds = env && *env ? parse_seconds(env, "TPEVENT_STRESS_SECONDS") : STRESS_SECONDS_DEFAULT;
    s->watchdog_seconds = STRESS_WATCHDOG_DEFAULT;
    s->seed = now_ns() ^ ((uint64_t)(uintptr_t)s << 16);
    s->thread_count = STRESS_THREADS_DEFAULT;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--seconds") == 0 && value)
            s->seconds = parse_seconds(value, "--seconds");
        else if (strcmp(argv[i], "--watchdog") == 0 && value)
            s->watchdog_seconds = parse_seconds(value, "--watchdog");
        else if (strcmp(argv[i], "--seed") == 0 && value)
            s->seed = parse_u64(value, "--seed");
        else if (strcmp(argv[i], "--threads") == 0 && value) {
            uint64_t threads = parse_u64(value, "--threads");
            if (threads < 1 || threads > STRESS_THREADS_MAX)
                fail("--threads: from 1 to %d", STRESS_THREADS_MAX);
            s->thread_count = (int)threads;
        } else {
            fprintf(stderr, "usage: %s [--seconds S] [--watchdog S] [--seed N] [--threads N]\n", argv[0]);
            exit(2);
        }
    }
}

static void fill_pool(stress *s, worker *setup)
{
    for (int i = 0; i < STRESS_STREAMS; i++) {
        pthread_mutex_init(&s->streams[i].lock, NULL);
        int device = i % STRESS_DEVICES;
        put_stream(&s->streams[i], create_stream(setup, device), device);
    }
    for (int i = 0; i < STRESS_EVENTS; i++) {
        pthread_mutex_init(&s->events[i].lock, NULL);
        int device = (int)random_below(&setup->rng, STRESS_DEVICES);
        unsigned flags = random_event_flags(&setup->rng);
        put_event(&s->events[i], create_event(setup, device, flags), device, flags);
    }
}

/* Destroys what is left, with whatever work is still pending on it (rule 9). */
static void empty_pool(stress *s, worker *setup)
{
    for (int i = 0; i < STRESS_STREAMS; i++) {
        EXPECT_OK(setup, tp_stream_destroy(s->streams[i].stream));
        pthread_mutex_destroy(&s->streams[i].lock);
    }
    for (int i = 0; i < STRESS_EVENTS; i++) {
        EXPECT_OK(setup, tp_event_destroy(s->events[i].event));
        pthread_mutex_destroy(&s->events[i].lock);
    }
}

static void report(const stress *s, double elapsed)
{
    uint64_t ops[OP_KIND_COUNT] = {0}, statuses[TP_STATUS_COUNT] = {0}, total = 0;
    for (int i = 0; i < s->thread_count; i++) {
        for (int op = 0; op < OP_KIND_COUNT; op++) {
            ops[op] += s->workers[i].op_counts[op];
            total += s->workers[i].op_counts[op];
        }
        for (int st = 0; st < TP_STATUS_COUNT; st++)
            statuses[st] += s->workers[i].status_counts[st];
    }
    printf("stress: %" PRIu64 " operations in %.1f s (%.0f/s) by %d threads\n", total, elapsed, (double)total / elapsed,
           s->thread_count);
    for (int op = 1; op < OP_KIND_COUNT; op++)
        printf("  %-30s %10" PRIu64 "\n", op_names[op], ops[op]);
    printf("  statuses answered:");
    for (int st = 0; st < TP_STATUS_COUNT; st++)
        if (statuses[st])
            printf(" %s %" PRIu64, tp_status_name((tp_status)st), statuses[st]);
    printf("\n  host functions: %" PRIu64 " launched, %" PRIu64 " ran\n", atomic_load(&s->host_fns_launched),
           atomic_load(&s->host_fns_ran));
}

int main(int argc, char **argv)
{
    stress *s = calloc(1, sizeof *s);
    if (!s)
        fail("out of memory");
    parse_arguments(s, argc, argv);
    /* Two virtual CPU devices unless the caller chose; at least two are needed. */
    setenv("TPEVENT_CPU_DEVICES", "2", 0);
    int cpu_devices = 0;
    if (tp_device_count("cpu", &cpu_devices) != TP_OK || cpu_devices < STRESS_DEVICES)
        fail("needs %d CPU devices (TPEVENT_CPU_DEVICES), has %d: %s", STRESS_DEVICES, cpu_devices, tp_last_error());

    printf("stress: %d threads, %d streams, %d events on cpu:0 and cpu:1, %.1f s, watchdog %.0f s, --seed %" PRIu64
           "\n",
           s->thread_count, STRESS_STREAMS, STRESS_EVENTS, s->seconds, s->watchdog_seconds, s->seed);
    fflush(stdout);

    worker setup = {.stress = s, .index = -1, .rng = s->seed};
    fill_pool(s, &setup);

    atomic_store(&s->last_progress_ns, now_ns());
    for (int i = 0; i < s->thread_count; i++) {
        worker *w = &s->workers[i];
        w->stress = s;
        w->index = i;
        w->rng = s->seed + 0x1000193u * (uint64_t)(i + 1);
        atomic_store(&w->activity.since_ns, now_ns());
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            fail("pthread_create for thread %d", i);
    }
    watchdog dog = {.stress = s};
    if (pthread_create(&dog.thread, NULL, watchdog_main, &dog) != 0)
        fail("pthread_create for the watchdog");

    uint64_t start = now_ns();
    sleep_us((long)(s->seconds * 1e6));
    atomic_store(&s->stop, true);
    for (int i = 0; i < s->thread_count; i++)
        pthread_join(s->workers[i].thread, NULL);
    double elapsed = (double)(now_ns() - start) / 1e9;

    main_phase(&dog, "destroying the pool");
    empty_pool(s, &setup);
    main_phase(&dog, "in tp_device_synchronize");
    for (int d = 0; d < STRESS_DEVICES; d++)
        EXPECT_OK(&setup, tp_device_synchronize(device_names[d]));
    /* Streams destroyed with work pending finish it on their own (rule 9); every
     * host function launched must run. */
    main_phase(&dog, "waiting for every host function launched to run");
    while (atomic_load(&s->host_fns_ran) < atomic_load(&s->host_fns_launched))
        sleep_us(1000);
    atomic_store(&dog.done, true);
    pthread_join(dog.thread, NULL);

    report(s, elapsed);
    if (atomic_load(&s->host_fns_ran) != atomic_load(&s->host_fns_launched))
        fail("more host functions ran than were launched");
    free(s);
    return 0;
}
