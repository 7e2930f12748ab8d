/*
 * Tests of a GPU backend module (CUDA or HIP) beyond the conformance suite: its
 * unavailable path, which CI without a GPU exercises for real, and on a machine with
 * the GPU, what only a GPU backend has (contexts, native handles, priorities, the
 * pool, the raw-runtime baselines).
 *
 * Built once per backend from this one source:
 *   GPU_BACKEND      "cuda" or "hip"
 *   GPU_ERROR_PREFIX "cudaError" or "hipError": how the runtime's error names start
 *   GPU_MODULE_PATH  the module file the build made
 * Each test checks the available path where the backend can be used, and the
 * unavailable path where it cannot; a test that exists only for one of the two says
 * why it skips on the other.
 */
#define _GNU_SOURCE /* dlopen/dlsym, RTLD_NOLOAD */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#include <tpevent/tpevent_diagnostics.h>

#if !defined(GPU_BACKEND) || !defined(GPU_ERROR_PREFIX) || !defined(GPU_MODULE_PATH)
#error "GPU_BACKEND, GPU_ERROR_PREFIX and GPU_MODULE_PATH are set by tests/gpu/CMakeLists.txt"
#endif

#define DEVICE0 GPU_BACKEND ":0"
#define IS_CUDA (strcmp(GPU_BACKEND, "cuda") == 0)

static bool backend_available(void)
{
    const char *reason = NULL;
    return tp_backend_status(GPU_BACKEND, &reason) == TP_OK;
}

static int skip(const char *why)
{
    printf("skipped: %s\n", why);
    return TEST_SKIP;
}

static int skip_without_backend(void)
{
    const char *reason = NULL;
    (void)tp_backend_status(GPU_BACKEND, &reason);
    printf("skipped: needs a usable %s backend: %s\n", GPU_BACKEND, reason ? reason : "?");
    return TEST_SKIP;
}

/* ----------------------------------------------------------- both paths */

TEST(backend_status_reports_runtime)
{
    const char *reason = NULL;
    int count = -1;
    tp_backend_info info;
    CHECK_OK(tp_backend_get_info(GPU_BACKEND, &info));
    CHECK(info.module_found);
    CHECK(info.loaded); /* the module itself loads, GPU or not */
    CHECK_CONTAINS(info.module_path, "libtpevent-" GPU_BACKEND);

    if (backend_available()) {
        CHECK_OK(tp_backend_status(GPU_BACKEND, &reason));
        CHECK_OK(tp_device_count(GPU_BACKEND, &count));
        CHECK(count >= 1);
        for (int d = 0; d < count; d++) {
            char device[24], name[256] = "";
            snprintf(device, sizeof device, "%s:%d", GPU_BACKEND, d);
            CHECK_OK(tp_device_name(device, name, sizeof name));
            CHECK(name[0] != '\0');
            if (IS_CUDA)
                CHECK_CONTAINS(name, "NVIDIA");
            printf("%s: %s\n", device, name);
        }
        return 0;
    }

    CHECK_STATUS(tp_backend_status(GPU_BACKEND, &reason), TP_ERR_BACKEND_UNAVAILABLE);
    printf("reason: %s\n", reason);
    /* The module loaded and its runtime said why: the reason names the runtime's
     * error, after the module's path. */
    CHECK_CONTAINS(reason, "libtpevent-" GPU_BACKEND);
    CHECK_CONTAINS(reason, GPU_ERROR_PREFIX);
    CHECK_STATUS(tp_backend_status(GPU_BACKEND, NULL), TP_ERR_BACKEND_UNAVAILABLE);
    CHECK_ERROR_MENTIONS(GPU_ERROR_PREFIX);
    CHECK_OK(tp_device_count(GPU_BACKEND, &count));
    CHECK(count == 0);
    return 0;
}

/* What the runtime must say on a machine like CI's, where the answer is known. */
TEST(unavailable_reason_is_the_precise_one)
{
    if (backend_available())
        return skip("the backend is usable here; the unavailable reason cannot be seen");
    const char *reason = NULL;
    CHECK_STATUS(tp_backend_status(GPU_BACKEND, &reason), TP_ERR_BACKEND_UNAVAILABLE);
    if (IS_CUDA) {
        void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (driver) {
            dlclose(driver);
            /* A driver but no usable device: cudaErrorNoDevice and the like. */
            CHECK_CONTAINS(reason, "cudaError");
            return 0;
        }
        CHECK_CONTAINS(reason, "cudaErrorInsufficientDriver");
        CHECK_CONTAINS(reason, "libcuda.so.1 was not found");
        return 0;
    }
    if (access("/dev/kfd", F_OK) != 0) {
        /* No AMD kernel driver at all: HIP finds no device. */
        CHECK_CONTAINS(reason, "hipErrorNoDevice");
        CHECK_CONTAINS(reason, "no ROCm-capable device");
        return 0;
    }
    CHECK_CONTAINS(reason, "hipError");
    return 0;
}

TEST(event_creation)
{
    const char *devices[] = {GPU_BACKEND, DEVICE0};
    const unsigned flag_sets[] = {TP_EVENT_DEFAULT,      TP_EVENT_TIMING,
                                  TP_EVENT_BLOCKING,     TP_EVENT_TIMING | TP_EVENT_BLOCKING,
                                  TP_EVENT_INTERPROCESS, TP_EVENT_INTERPROCESS | TP_EVENT_BLOCKING};
    bool available = backend_available();
    for (size_t d = 0; d < 2; d++) {
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
            tp_event *sentinel = (tp_event *)(uintptr_t)0x5e17, *event = sentinel;
            if (!available) {
                CHECK_STATUS(tp_event_create(&event, devices[d], flag_sets[f]), TP_ERR_BACKEND_UNAVAILABLE);
                CHECK(event == sentinel); /* outputs are written only on success */
                CHECK_ERROR_MENTIONS(GPU_BACKEND " backend unavailable");
                CHECK_ERROR_MENTIONS(GPU_ERROR_PREFIX);
                continue;
            }
            CHECK_OK(tp_event_create(&event, devices[d], flag_sets[f]));
            unsigned flags = 0;
            CHECK_OK(tp_event_flags(event, &flags));
            CHECK(flags == flag_sets[f]);
            tp_device where;
            CHECK_OK(tp_event_device(event, &where));
            CHECK(where.index == 0);
            CHECK_OK(tp_event_record(event, NULL));
            CHECK_OK(tp_event_synchronize(event));
            CHECK(event_is_done(event));
            CHECK_OK(tp_event_destroy(event));
        }
    }
    return 0;
}

TEST(stream_and_device_calls)
{
    tp_stream *sentinel = (tp_stream *)(uintptr_t)0x5e17, *stream = sentinel;
    if (!backend_available()) {
        CHECK_STATUS(tp_stream_create(&stream, DEVICE0, 0), TP_ERR_BACKEND_UNAVAILABLE);
        CHECK(stream == sentinel);
        CHECK_ERROR_MENTIONS(GPU_ERROR_PREFIX);
        CHECK_STATUS(tp_stream_create(&stream, GPU_BACKEND, 0), TP_ERR_BACKEND_UNAVAILABLE);
        CHECK_STATUS(tp_stream_default(DEVICE0, &stream), TP_ERR_BACKEND_UNAVAILABLE);
        CHECK_STATUS(tp_stream_from_native(&stream, DEVICE0, NULL), TP_ERR_BACKEND_UNAVAILABLE);
        CHECK(stream == sentinel);
        CHECK_STATUS(tp_device_synchronize(DEVICE0), TP_ERR_BACKEND_UNAVAILABLE);
        CHECK_STATUS(tp_set_device(DEVICE0), TP_ERR_BACKEND_UNAVAILABLE);
        uint64_t sample = 0;
        CHECK_STATUS(tp_native_sample(DEVICE0, TP_NATIVE_RECORD, &sample, 1), TP_ERR_BACKEND_UNAVAILABLE);
        char name[64];
        CHECK(tp_device_name(DEVICE0, name, sizeof name) != TP_OK);
        return 0;
    }
    int count = 0;
    CHECK_OK(tp_device_count(GPU_BACKEND, &count));
    char past_last[24];
    snprintf(past_last, sizeof past_last, "%s:%d", GPU_BACKEND, count);
    CHECK_STATUS(tp_stream_create(&stream, past_last, 0), TP_ERR_INVALID_DEVICE);
    CHECK(stream == sentinel);
    CHECK_OK(tp_stream_create(&stream, DEVICE0, 0));
    CHECK_OK(tp_stream_synchronize(stream));
    CHECK(stream_is_idle(stream));
    CHECK_OK(tp_device_synchronize(DEVICE0));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}

/* Only the entry symbol leaves the module: a static runtime inside it stays private,
 * and the per-runtime entry (for static builds) is not exported. */
TEST(module_exports_only_its_entry)
{
    void *module = dlopen(GPU_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
    CHECK(module != NULL);
    CHECK(dlsym(module, "tpevent_backend_entry") != NULL);
    CHECK(dlsym(module, "tp_backend_entry_" GPU_BACKEND) == NULL);
    CHECK(dlsym(module, "gpu_table") == NULL);
    if (IS_CUDA) /* cudart is linked in statically; HIP's is a dependency dlsym also searches */
        CHECK(dlsym(module, "cudaEventRecord") == NULL);
    /* Not dlclose'd, as the core never unloads a module whose runtime may have
     * started: unmapping a runtime that registered exit handlers crashes at exit. */
    return 0;
}

/* ------------------------------------------------------------ GPU only */

TEST(priorities_clamped_to_device_range)
{
    if (!backend_available())
        return skip_without_backend();
    tp_stream *highest, *lowest, *normal;
    int high = 1, low = -1, zero = -1;
    CHECK_OK(tp_stream_create(&highest, DEVICE0, -1000000));
    CHECK_OK(tp_stream_create(&lowest, DEVICE0, 1000000));
    CHECK_OK(tp_stream_create(&normal, DEVICE0, 0));
    CHECK_OK(tp_stream_priority(highest, &high));
    CHECK_OK(tp_stream_priority(lowest, &low));
    CHECK_OK(tp_stream_priority(normal, &zero));
    printf("priority range: %d (highest) .. %d (lowest)\n", high, low);
    CHECK(high > -1000000 && low < 1000000);
    CHECK(high <= zero && zero <= low);
    /* The value in the head is the native stream's own. */
    void *native = NULL;
    tp_stream *wrapper = NULL;
    int wrapped = 1;
    CHECK_OK(tp_stream_native(highest, &native));
    CHECK_OK(tp_stream_from_native(&wrapper, DEVICE0, native));
    CHECK_OK(tp_stream_priority(wrapper, &wrapped));
    CHECK(wrapped == high);
    CHECK_OK(tp_stream_destroy(wrapper));
    CHECK_OK(tp_stream_destroy(normal));
    CHECK_OK(tp_stream_destroy(lowest));
    CHECK_OK(tp_stream_destroy(highest));
    return 0;
}

TEST(default_stream_is_the_null_stream)
{
    if (!backend_available())
        return skip_without_backend();
    tp_stream *stream = NULL;
    void *native = (void *)&stream;
    CHECK_OK(tp_stream_default(DEVICE0, &stream));
    CHECK_OK(tp_stream_native(stream, &native));
    /* 0 on both, as torch's and CuPy's default streams say (README, interop): CUDA's
     * legacy NULL stream, which tpevent passes to the runtime as cudaStreamLegacy so
     * that per-thread default-stream builds agree; HIP's NULL stream itself. */
    CHECK(native == NULL);
    /* Wrappers of 0 and (CUDA) of cudaStreamLegacy are that stream: they say 0 too,
     * and work on the device's NULL stream. */
    void *handles[2] = {NULL, (void *)(uintptr_t)0x1};
    for (int i = 0; i < (IS_CUDA ? 2 : 1); i++) {
        tp_stream *wrapper = NULL;
        tp_event *event = new_event(DEVICE0, TP_EVENT_DEFAULT);
        CHECK_OK(tp_stream_from_native(&wrapper, DEVICE0, handles[i]));
        native = (void *)&stream;
        CHECK_OK(tp_stream_native(wrapper, &native));
        CHECK(native == NULL);
        CHECK_OK(tp_event_record(event, wrapper));
        CHECK_OK(tp_event_synchronize(event));
        CHECK_OK(tp_stream_synchronize(wrapper));
        CHECK_OK(tp_stream_destroy(wrapper));
        CHECK_OK(tp_event_destroy(event));
    }
    return 0;
}

/*
 * Pooled native events go back out only once their record is reached: an event
 * destroyed while its record waits behind a gate must not be recorded by the next
 * event, or a stream waiting on the first one would be released early (and on HIP
 * the re-record is undefined). Many create/record/destroy rounds while the gate is
 * closed, then each later event completes on its own idle stream.
 */
TEST(pool_never_reuses_a_pending_native_event)
{
    if (!backend_available())
        return skip_without_backend();
    gate g;
    gate_init(&g);
    tp_stream *busy = new_stream(DEVICE0), *idle = new_stream(DEVICE0), *waiter = new_stream(DEVICE0);
    atomic_int after_wait = 0;

    gate_launch(&g, busy);
    tp_event *pending = new_event(DEVICE0, TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(pending, busy));
    CHECK_OK(tp_stream_wait_event(waiter, pending));
    CHECK_OK(tp_stream_launch_host_fn(waiter, flag_host_fn, &after_wait));
    CHECK_OK(tp_event_destroy(pending));

    for (int i = 0; i < 64; i++) {
        tp_event *next = new_event(DEVICE0, TP_EVENT_DEFAULT);
        CHECK_OK(tp_event_record(next, idle));
        CHECK(event_done_within(next, EVENTUALLY_SECONDS));
        CHECK_OK(tp_event_destroy(next));
    }
    /* The waiter still waits for the destroyed event's record. */
    sleep_ms(50);
    CHECK(atomic_load(&after_wait) == 0);
    gate_open(&g);
    CHECK(flag_reaches_within(&after_wait, 1, EVENTUALLY_SECONDS));

    CHECK_OK(tp_stream_synchronize(waiter));
    CHECK_OK(tp_stream_destroy(waiter));
    CHECK_OK(tp_stream_destroy(idle));
    CHECK_OK(tp_stream_destroy(busy));
    gate_destroy(&g);
    return 0;
}

TEST(native_samples_for_every_op)
{
    if (!backend_available()) {
        uint64_t sample;
        CHECK_STATUS(tp_native_sample(DEVICE0, TP_NATIVE_QUERY, &sample, 1), TP_ERR_BACKEND_UNAVAILABLE);
        return 0;
    }
    for (int op = 0; op < TP_NATIVE_OP_COUNT; op++) {
        uint64_t samples[64];
        memset(samples, 0, sizeof samples);
        CHECK_OK(tp_native_sample(DEVICE0, (tp_native_op)op, samples, 64));
        uint64_t nonzero = 0;
        for (int i = 0; i < 64; i++)
            nonzero += samples[i] > 0 && samples[i] < 1000000000u;
        CHECK(nonzero >= 32); /* a clock with coarse ticks may read 0 for a few */
    }
    CHECK_STATUS(tp_native_sample(DEVICE0, (tp_native_op)TP_NATIVE_OP_COUNT, NULL, 0), TP_ERR_INVALID_ARGUMENT);
    return 0;
}

/* ------------------------------------------------ CUDA contexts (driver API) */

/*
 * The CUDA driver's view of contexts, reached with dlopen so that the test needs no
 * toolkit to build. CUresult is an int, CUcontext a pointer, CUdevice an int.
 */
typedef struct cuda_driver {
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*primary_state)(int, unsigned *, int *);
    int (*primary_retain)(void **, int);
    int (*ctx_get_current)(void **);
    int (*ctx_set_current)(void *);
} cuda_driver;

static bool cuda_driver_open(cuda_driver *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
#define LOAD(field, name)                            \
    do {                                             \
        void *symbol_ = dlsym(lib, name);            \
        memcpy(&d->field, &symbol_, sizeof symbol_); \
    } while (0)
    LOAD(init, "cuInit");
    LOAD(device_get, "cuDeviceGet");
    LOAD(primary_state, "cuDevicePrimaryCtxGetState");
    LOAD(primary_retain, "cuDevicePrimaryCtxRetain");
    LOAD(ctx_get_current, "cuCtxGetCurrent");
    LOAD(ctx_set_current, "cuCtxSetCurrent");
#undef LOAD
    CHECK(d->init && d->device_get && d->primary_state && d->primary_retain && d->ctx_get_current &&
          d->ctx_set_current);
    CHECK(d->init(0) == 0);
    return true;
}

static bool primary_context_active(cuda_driver *d, int ordinal)
{
    int dev = -1, active = -1;
    unsigned flags = 0;
    CHECK(d->device_get(&dev, ordinal) == 0);
    CHECK(d->primary_state(dev, &flags, &active) == 0);
    return active != 0;
}

static int skip_unless_cuda_pair(const test_env *env, cuda_driver *driver)
{
    if (!IS_CUDA)
        return skip("CUDA-only: HIP sets up every device when it starts, there is no lazy context");
    if (!backend_available())
        return skip_without_backend();
    if (env->peer == NULL || strcmp(env->peer, GPU_BACKEND ":1") != 0)
        return skip("needs --peer cuda:1");
    if (test_skip_unless_device(env->peer, "peer") != 0)
        return TEST_SKIP;
    CHECK(cuda_driver_open(driver));
    return 0;
}

typedef struct elapsed_call {
    tp_event *start, *end;
    tp_status status;
    float ms;
    void *context_before, *context_after;
    cuda_driver *driver;
} elapsed_call;

/* Elapsed time, then synchronize and query: the calls that may run on a thread
 * without lending it a context. */
static void call_elapsed(void *arg)
{
    elapsed_call *call = arg;
    bool done = false;
    call->driver->ctx_get_current(&call->context_before);
    call->status = tp_event_elapsed_time(call->start, call->end, &call->ms);
    if (call->status == TP_OK)
        call->status = tp_event_synchronize(call->end);
    if (call->status == TP_OK)
        call->status = tp_event_query(call->end, &done);
    if (call->status == TP_OK && !done)
        call->status = TP_ERR_NOT_READY;
    call->driver->ctx_get_current(&call->context_after);
}

/*
 * Work only on cuda:1: no context may appear on cuda:0, not even from
 * elapsed_time, synchronize or query on a thread that has no current context
 * (cudart creates device 0's there for some calls), nor from device_synchronize of
 * cuda:0; and those calls leave that thread with no context, as they found it.
 */
TEST(cuda_no_context_on_an_unused_device)
{
    cuda_driver driver;
    int skipped = skip_unless_cuda_pair(env, &driver);
    if (skipped)
        return skipped;
    CHECK(!primary_context_active(&driver, 0));
    CHECK(!primary_context_active(&driver, 1));

    CHECK_OK(tp_device_synchronize("cuda:1")); /* nothing ran there: creates nothing */
    CHECK(!primary_context_active(&driver, 1));

    tp_stream *stream = new_stream("cuda:1");
    tp_event *start = new_event("cuda:1", TP_EVENT_TIMING), *end = new_event("cuda:1", TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_stream_launch_host_fn(stream, sleep_host_fn, (void *)(intptr_t)5));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));

    elapsed_call call = {.start = start, .end = end, .driver = &driver};
    CHECK(call_returns_within(call_elapsed, &call, EVENTUALLY_SECONDS));
    CHECK_OK(call.status);
    CHECK(call.ms >= 4.0f);
    CHECK(call.context_before == NULL && call.context_after == NULL);

    bool done = false;
    CHECK_OK(tp_event_query(end, &done));
    CHECK_OK(tp_device_synchronize("cuda:0"));
    CHECK_OK(tp_device_synchronize("cuda:1"));
    CHECK(primary_context_active(&driver, 1));
    CHECK(!primary_context_active(&driver, 0));

    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_stream_destroy(stream));
    CHECK(!primary_context_active(&driver, 0));
    return 0;
}

static void call_elapsed_on_device0_thread(void *arg)
{
    elapsed_call *call = arg;
    void *device0 = NULL;
    int dev = -1;
    CHECK(call->driver->device_get(&dev, 0) == 0);
    CHECK(call->driver->primary_retain(&device0, dev) == 0);
    CHECK(call->driver->ctx_set_current(device0) == 0);
    call_elapsed(call);
    CHECK(call->context_before == device0);
}

/* A thread whose current device is cuda:0 asks about cuda:1 events (and waits on
 * one from a cuda:0 stream): its current context is still cuda:0's after each. */
TEST(cuda_calls_keep_the_callers_current_device)
{
    cuda_driver driver;
    int skipped = skip_unless_cuda_pair(env, &driver);
    if (skipped)
        return skipped;
    tp_stream *stream = new_stream("cuda:1");
    tp_event *start = new_event("cuda:1", TP_EVENT_TIMING), *end = new_event("cuda:1", TP_EVENT_TIMING);
    CHECK_OK(tp_event_record(start, stream));
    CHECK_OK(tp_event_record(end, stream));
    CHECK_OK(tp_event_synchronize(end));

    elapsed_call call = {.start = start, .end = end, .driver = &driver};
    CHECK(call_returns_within(call_elapsed_on_device0_thread, &call, EVENTUALLY_SECONDS));
    CHECK_OK(call.status);
    CHECK(call.context_after == call.context_before);

    /* The same on this thread, for the calls that switch devices for a moment. */
    void *device0 = NULL, *current = NULL;
    int dev = -1;
    CHECK(driver.device_get(&dev, 0) == 0);
    CHECK(driver.primary_retain(&device0, dev) == 0);
    CHECK(driver.ctx_set_current(device0) == 0);
    tp_stream *other = new_stream("cuda:1");
    tp_stream *default1 = NULL;
    CHECK_OK(tp_stream_default("cuda:1", &default1));
    tp_event *fresh = new_event("cuda:1", TP_EVENT_DEFAULT);
    CHECK_OK(tp_event_record(fresh, default1)); /* legacy stream of cuda:1, first record */
    CHECK_OK(tp_stream_wait_event(default1, fresh));
    CHECK_OK(tp_stream_synchronize(default1));
    CHECK_OK(tp_device_synchronize("cuda:1"));
    tp_stream *stream0 = new_stream("cuda:0");
    CHECK_OK(tp_stream_wait_event(stream0, fresh)); /* across devices */
    CHECK_OK(tp_stream_synchronize(stream0));
    CHECK(driver.ctx_get_current(&current) == 0);
    CHECK(current == device0);

    CHECK_OK(tp_stream_destroy(stream0));
    CHECK_OK(tp_event_destroy(fresh));
    CHECK_OK(tp_stream_destroy(other));
    CHECK_OK(tp_event_destroy(start));
    CHECK_OK(tp_event_destroy(end));
    CHECK_OK(tp_stream_destroy(stream));
    return 0;
}
