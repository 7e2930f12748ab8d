/*
 * Allocation-failure injection. This program defines malloc, calloc, realloc and
 * free itself; the dynamic linker binds libtpevent.so's calls to them, so the test
 * sees every allocation the library makes, in the caller's threads and the
 * workers' alike, without a hook in the library.
 *
 * For n = 1, 2, ...: arm the n-th allocation to fail, run a scenario that touches
 * every allocating path of the conformance scenarios, and check that
 *   - every call returns TP_OK or TP_ERR_OUT_OF_MEMORY;
 *   - once disarmed, the same scenario succeeds in full (the library is usable);
 *   - the number of the library's live allocations returns to where it was (nothing
 *     leaked); every allocation is tracked with its call site, and one that leaks is
 *     printed with it.
 * Stops at the first n that the scenario no longer reaches.
 *
 *   alloc_failure_test <device> <peer device>
 */
#include <tpevent/tpevent.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- the allocator */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* Exported: the project builds with hidden visibility, and a hidden malloc would
 * interpose nothing. */
#define INTERPOSED __attribute__((visibility("default")))

/* Where each live allocation came from, so that a leak names its call site. */
#define TRACKED_MAX 8192
static struct {
    _Atomic(void *) pointer;
    void *site;
    long serial;
} tracked[TRACKED_MAX];
static atomic_long allocation_serial;

static void track(void *pointer, void *site)
{
    for (size_t i = ((uintptr_t)pointer >> 4) % TRACKED_MAX, n = 0; n < TRACKED_MAX; n++, i = (i + 1) % TRACKED_MAX) {
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&tracked[i].pointer, &expected, pointer)) {
            tracked[i].site = site;
            tracked[i].serial = atomic_fetch_add(&allocation_serial, 1);
            return;
        }
    }
}

static void untrack(void *pointer)
{
    for (size_t i = ((uintptr_t)pointer >> 4) % TRACKED_MAX, n = 0; n < TRACKED_MAX; n++, i = (i + 1) % TRACKED_MAX) {
        void *expected = pointer;
        if (atomic_compare_exchange_strong(&tracked[i].pointer, &expected, NULL))
            return;
    }
}
static atomic_long countdown; /* > 0: armed; the allocation that takes it to 0 fails */
static atomic_int failures_injected;

#define MAX_SITES 256
static void *failed_sites[MAX_SITES];
static atomic_int failed_site_count;

static bool should_fail(void *site)
{
    if (atomic_load_explicit(&countdown, memory_order_relaxed) <= 0)
        return false;
    if (atomic_fetch_sub(&countdown, 1) != 1)
        return false;
    /* As the real allocator says it: glibc's pthread_create asserts ENOMEM when the
     * allocation of a new thread's TLS fails. */
    errno = ENOMEM;
    atomic_fetch_add(&failures_injected, 1);
    int i = atomic_fetch_add(&failed_site_count, 1);
    if (i < MAX_SITES)
        failed_sites[i] = site;
    return true;
}

INTERPOSED void *malloc(size_t size)
{
    if (should_fail(__builtin_return_address(0)))
        return NULL;
    void *p = __libc_malloc(size);
    if (p) {
        track(p, __builtin_return_address(0));
    }
    return p;
}

INTERPOSED void *calloc(size_t count, size_t size)
{
    if (should_fail(__builtin_return_address(0)))
        return NULL;
    void *p = __libc_calloc(count, size);
    if (p) {
        track(p, __builtin_return_address(0));
    }
    return p;
}

/* The CPU backend's queues are aligned to their cache lines (cpu_queue.c). */
INTERPOSED void *aligned_alloc(size_t alignment, size_t size)
{
    if (should_fail(__builtin_return_address(0)))
        return NULL;
    void *p = __libc_memalign(alignment, size);
    if (p) {
        track(p, __builtin_return_address(0));
    }
    return p;
}

INTERPOSED void *realloc(void *old, size_t size)
{
    if (!old)
        return malloc(size);
    if (size == 0) {
        free(old);
        return NULL;
    }
    if (should_fail(__builtin_return_address(0)))
        return NULL;
    void *p = __libc_realloc(old, size);
    if (p) {
        untrack(old);
        track(p, __builtin_return_address(0));
    }
    return p;
}

INTERPOSED void free(void *p)
{
    if (!p)
        return;
    untrack(p);
    __libc_free(p);
}

/* -------------------------------------------------------------- the scenario */

static int violations;

/* A call that may fail only for lack of memory. */
static bool allowed(tp_status status, const char *call, long n)
{
    if (status == TP_OK)
        return true;
    if (status != TP_ERR_OUT_OF_MEMORY) {
        fprintf(stderr,
                "n=%ld: %s returned %s (%s); only TP_OK or TP_ERR_OUT_OF_MEMORY may come of a failed "
                "allocation\n",
                n, call, tp_status_name(status), tp_last_error());
        violations++;
    }
    return false;
}

#define TRY(call) allowed((call), #call, n)

static void count_run(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

typedef struct scenario_result {
    bool complete; /* every call succeeded */
} scenario_result;

static scenario_result scenario(const char *device, const char *peer, long n)
{
    tp_stream *stream = NULL, *other = NULL, *wrapper = NULL;
    tp_event *start = NULL, *end = NULL, *created = NULL, *plain = NULL, *shared = NULL;
    atomic_int runs = 0;
    int launched = 0;
    bool ok = true;

    ok &= TRY(tp_stream_create(&stream, device, 0));
    ok &= TRY(tp_stream_create(&other, peer, -1));
    ok &= TRY(tp_event_create(&start, device, TP_EVENT_TIMING));
    ok &= TRY(tp_event_create(&end, device, TP_EVENT_TIMING | TP_EVENT_BLOCKING));
    ok &= TRY(tp_event_create(&plain, device, TP_EVENT_DEFAULT));
    if (stream && start && end) {
        bool recorded = TRY(tp_event_record(start, stream));
        if (TRY(tp_stream_launch_host_fn(stream, count_run, &runs)))
            launched++;
        recorded &= TRY(tp_event_record(end, stream));
        ok &= recorded;
        if (other) {
            ok &= TRY(tp_event_wait(end, other));
            if (TRY(tp_stream_launch_host_fn(other, count_run, &runs)))
                launched++;
            ok &= TRY(tp_stream_wait_stream(stream, other));
        }
        ok &= TRY(tp_stream_record_event(stream, &created));
        ok &= TRY(tp_event_synchronize(end));
        if (recorded) {
            float ms;
            ok &= TRY(tp_event_elapsed_time(start, end, &ms));
        }
    } else {
        ok = false;
    }
    if (TRY(tp_event_create(&shared, device, TP_EVENT_INTERPROCESS)) && stream) {
        tp_ipc_handle handle;
        ok &= TRY(tp_event_record(shared, stream));
        ok &= TRY(tp_event_ipc_handle(shared, &handle));
        ok &= TRY(tp_event_synchronize(shared));
    } else {
        ok = false;
    }
    if (plain && stream) {
        ok &= TRY(tp_event_record(plain, NULL));
        ok &= TRY(tp_event_wait(plain, NULL));
    }
    if (stream) {
        void *native = NULL;
        ok &= TRY(tp_stream_native(stream, &native));
        if (native && TRY(tp_stream_from_native(&wrapper, device, native)))
            ok &= TRY(tp_stream_synchronize(wrapper));
        else
            ok = false;
    }
    ok &= TRY(tp_device_synchronize(device));
    ok &= TRY(tp_device_synchronize(peer));
    if (atomic_load(&runs) != launched) {
        fprintf(stderr, "n=%ld: %d host functions launched, %d ran after synchronize\n", n, launched,
                atomic_load(&runs));
        violations++;
    }
    /* Destroy never allocates and never fails for a valid handle. */
    tp_event *events[] = {start, end, created, plain, shared};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
        if (events[i] && tp_event_destroy(events[i]) != TP_OK)
            ok = allowed(TP_ERR_BACKEND, "tp_event_destroy", n);
    tp_stream *streams[] = {wrapper, other, stream};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        if (streams[i] && tp_stream_destroy(streams[i]) != TP_OK)
            ok = allowed(TP_ERR_BACKEND, "tp_stream_destroy", n);
    return (scenario_result){.complete = ok};
}

/* Live allocations made by libtpevent itself. The C library's own (a new thread's
 * TLS, kept with its cached stack) are not ours to count. */
static long library_live_allocations(void)
{
    long live = 0;
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        Dl_info info;
        if (atomic_load(&tracked[i].pointer) && dladdr(tracked[i].site, &info) && info.dli_fname &&
            strstr(info.dli_fname, "libtpevent"))
            live++;
    }
    return live;
}

/* Prints the call sites of live allocations made since `serial`. */
static void print_live_since(long serial)
{
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        if (!atomic_load(&tracked[i].pointer) || tracked[i].serial < serial)
            continue;
        Dl_info info;
        if (dladdr(tracked[i].site, &info) && info.dli_sname)
            fprintf(stderr, "  live: allocated from %s+%#lx (%s)\n", info.dli_sname,
                    (unsigned long)((char *)tracked[i].site - (char *)info.dli_saddr), info.dli_fname);
        else
            fprintf(stderr, "  live: allocated from %p (%s)\n", tracked[i].site, info.dli_fname ? info.dli_fname : "?");
    }
}

/* Streams' workers free their queues after they exit, a little later. */
static bool settles_at(long baseline)
{
    for (int i = 0; i < 2000; i++) {
        if (library_live_allocations() <= baseline)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s <device> <peer device>\n", argv[0]);
        return 2;
    }
    const char *device = argv[1], *peer = argv[2];
    const char *reason = NULL;
    tp_device parsed;
    if (tp_device_parse(device, &parsed) == TP_OK &&
        tp_backend_status(tp_device_type_name(parsed.type), &reason) != TP_OK) {
        printf("skipped: %s\n", reason);
        return 77;
    }

    /* Warm up: default streams, the registry, stdio's buffer. */
    printf("allocation-failure injection on %s (peer %s)\n", device, peer);
    fflush(stdout);
    if (!scenario(device, peer, 0).complete || violations) {
        fprintf(stderr, "the scenario fails without any injected failure: %s\n", tp_last_error());
        return 1;
    }
    long baseline = library_live_allocations();
    settles_at(baseline);
    baseline = library_live_allocations();

    long n;
    int leaks = 0;
    for (n = 1;; n++) {
        int injected_before = atomic_load(&failures_injected);
        long serial_before = atomic_load(&allocation_serial);
        atomic_store(&countdown, n);
        scenario(device, peer, n);
        atomic_store(&countdown, 0);
        bool reached = atomic_load(&failures_injected) != injected_before;

        if (!scenario(device, peer, n).complete) {
            fprintf(stderr, "n=%ld: the library is not usable after a failed allocation: %s\n", n, tp_last_error());
            violations++;
        }
        if (!settles_at(baseline)) {
            fprintf(stderr, "n=%ld: %ld allocations leaked\n", n, library_live_allocations() - baseline);
            print_live_since(serial_before);
            leaks++;
            baseline = library_live_allocations();
        }
        if (!reached)
            break;
        if (n > 100000) {
            fprintf(stderr, "the scenario allocates without end\n");
            return 1;
        }
    }

    int sites = atomic_load(&failed_site_count);
    int distinct = 0;
    for (int i = 0; i < sites && i < MAX_SITES; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = failed_sites[j] == failed_sites[i];
        distinct += !seen;
    }
    printf("%ld allocations injected to fail, from %d distinct call sites; %d violations, %d leaks\n", n - 1, distinct,
           violations, leaks);
    return violations || leaks ? 1 : 0;
}
