/*
 * tpevent's Vulkan backend against raw Vulkan, in one process, one table per
 * Vulkan device.
 *
 * Usage: tpevent_bench_vulkan [--device vulkan:N] [--batch N] [--rounds N] [--check]
 *
 * How it is fair (as bench/opencl/opencl_bench.c). Each op has a tpevent side and a
 * raw side written alike: a loop of --batch calls on objects made beforehand, each
 * status checked, timed as a whole by one CLOCK_MONOTONIC read before and one after.
 * The raw side has a VkDevice of its own on the same physical device (matched by
 * name), a queue of its compute family, two timeline semaphores (its "streams") and
 * a command buffer that writes a timestamp query, recorded once, and does per call
 * what a program on raw Vulkan does:
 *
 *   record (timing)  vkQueueSubmit of the timestamp's command buffer, signalling the
 *                    timeline's next value (tpevent: the same, with its record pooled)
 *   record           vkQueueSubmit of an empty batch signalling the next value
 *                    (tpevent: none at all, the stream's last value is the record)
 *   query            vkGetSemaphoreCounterValue
 *   synchronize      vkWaitSemaphores on a reached value
 *   stream wait      on a reached record: vkGetSemaphoreCounterValue, and no batch
 *                    (tpevent waits for nothing there, rule 6; a batch with the wait
 *                    would be a submit, as the record rows show)
 *   elapsed time     vkGetQueryPoolResults of two queries
 *
 * The two sides alternate batch by batch, --rounds times per op, the order flipping
 * each round; before each batch (outside the timing) both sides' work is waited for.
 * Reported per op: each side's median batch (ns per call) and the median of the
 * rounds' tpevent/raw ratios with its spread (IQR). Budget (docs/design.md): each op
 * within max(1.03x, raw + 10 ns). --check makes a missed budget the exit status (3).
 * Exit 77: no usable Vulkan device here (the reason is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include "backends/vulkan/vk_raw.h" /* the raw calls, the same as tpevent bench's baseline */
#include "bench_rounds.h"

#include <vulkan/vulkan.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_UNAVAILABLE 77
#define EXIT_OVER_BUDGET 3
#define BUDGET_RATIO 1.03
#define BUDGET_SLACK_NS 10.0 /* max(1.03x, raw + 10 ns): docs/design.md */

typedef struct tp_fixture {
    tp_stream *stream, *other;
    tp_event *start, *end, *plain;
} tp_fixture;

/* The same, made with Vulkan directly: a stream is a timeline and its last value. */
typedef struct raw_fixture {
    VkInstance instance;
    VkDevice device;
    VkQueue queue;
    VkCommandPool pool;
    VkQueryPool queries;      /* 0: start, 1: end */
    VkCommandBuffer stamp[2]; /* writes query 0, query 1 */
    VkSemaphore timeline, other;
    uint64_t value, other_value; /* the last value signalled on each */
    uint64_t start_value;        /* the latest "record" of start */
} raw_fixture;

typedef struct op {
    const char *name;
    void (*tp_batch)(tp_fixture *f, size_t n);
    void (*raw_batch)(raw_fixture *r, size_t n);
} op;

static void check_tp(tp_status status, const char *what)
{
    if (status != TP_OK) {
        fprintf(stderr, "tpevent_bench_vulkan: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
        exit(1);
    }
}

static void check_raw(VkResult result, const char *what)
{
    if (result != VK_SUCCESS) {
        fprintf(stderr, "tpevent_bench_vulkan: %s: VkResult %d\n", what, (int)result);
        exit(1);
    }
}

/* ---------------------------------------------------------------- the ops */

static void tp_record_timing(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_record(f->start, f->stream), "tp_event_record");
}

/* One batch: optional commands, an optional wait, the signal of the next value. */
static void raw_submit(raw_fixture *r, VkCommandBuffer commands, VkSemaphore wait, uint64_t wait_value,
                       VkSemaphore signal, uint64_t *signal_value)
{
    check_raw(vk_raw_submit(r->queue, commands, wait, wait_value, signal, signal_value), "vkQueueSubmit");
}

/* A command buffer runs once at a time: the last record's is waited for first, as
 * tpevent's pool gives a record a query the device is done with. */
static void raw_wait_value(raw_fixture *r, VkSemaphore semaphore, uint64_t value)
{
    check_raw(vk_raw_wait(r->device, semaphore, value), "vkWaitSemaphores");
}

static void raw_record_timing(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        raw_submit(r, r->stamp[i % 2], VK_NULL_HANDLE, 0, r->timeline, &r->value);
        r->start_value = r->value;
    }
}

static void tp_record_plain(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_record(f->plain, f->stream), "tp_event_record");
}

static void raw_record_plain(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        raw_submit(r, VK_NULL_HANDLE, VK_NULL_HANDLE, 0, r->timeline, &r->value);
        r->start_value = r->value;
    }
}

static void tp_query(tp_fixture *f, size_t n)
{
    bool done = false;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_query(f->start, &done), "tp_event_query");
}

static void raw_query(raw_fixture *r, size_t n)
{
    uint64_t value = 0;
    volatile bool done = false;
    for (size_t i = 0; i < n; i++) {
        check_raw(vkGetSemaphoreCounterValue(r->device, r->timeline, &value), "vkGetSemaphoreCounterValue");
        done = value >= r->start_value;
    }
    (void)done;
}

static void tp_synchronize(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_synchronize(f->start), "tp_event_synchronize");
}

static void raw_synchronize(raw_fixture *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        raw_wait_value(r, r->timeline, r->start_value);
}

static void tp_wait(tp_fixture *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_tp(tp_stream_wait_event(f->other, f->end), "tp_stream_wait_event");
}

/* The end record, reached (the settle waited for it): a batch only where it is not. */
static void raw_wait(raw_fixture *r, size_t n)
{
    uint64_t reached = 0;
    for (size_t i = 0; i < n; i++) {
        check_raw(vkGetSemaphoreCounterValue(r->device, r->timeline, &reached), "vkGetSemaphoreCounterValue");
        if (reached < r->value)
            raw_submit(r, VK_NULL_HANDLE, r->timeline, r->value, r->other, &r->other_value);
    }
}

static void tp_elapsed(tp_fixture *f, size_t n)
{
    float ms;
    for (size_t i = 0; i < n; i++)
        check_tp(tp_event_elapsed_time(f->start, f->end, &ms), "tp_event_elapsed_time");
}

static void raw_elapsed(raw_fixture *r, size_t n)
{
    uint64_t stamps[2] = {0, 0};
    volatile float ms = 0;
    for (size_t i = 0; i < n; i++) {
        check_raw(vkGetQueryPoolResults(r->device, r->queries, 0, 2, sizeof stamps, stamps, sizeof stamps[0],
                                        VK_QUERY_RESULT_64_BIT),
                  "vkGetQueryPoolResults");
        ms = (float)((double)(int64_t)(stamps[1] - stamps[0]) / 1e6);
    }
    (void)ms;
}

static const op ops[] = {
    {"record (timing)", tp_record_timing, raw_record_timing},
    {"record", tp_record_plain, raw_record_plain},
    {"query (completed)", tp_query, raw_query},
    {"synchronize (completed)", tp_synchronize, raw_synchronize},
    {"stream wait (reached)", tp_wait, raw_wait},
    {"elapsed time", tp_elapsed, raw_elapsed},
};
#define OP_COUNT (sizeof ops / sizeof ops[0])

/* ------------------------------------------------------------- fixtures */

static void tp_fixture_open(tp_fixture *f, const char *device)
{
    check_tp(tp_stream_create(&f->stream, device, 0), "tp_stream_create");
    check_tp(tp_stream_create(&f->other, device, 0), "tp_stream_create");
    check_tp(tp_event_create(&f->start, device, TP_EVENT_TIMING), "tp_event_create");
    check_tp(tp_event_create(&f->end, device, TP_EVENT_TIMING), "tp_event_create");
    check_tp(tp_event_create(&f->plain, device, TP_EVENT_DEFAULT), "tp_event_create");
}

static void tp_fixture_close(tp_fixture *f)
{
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
    check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
    check_tp(tp_event_destroy(f->plain), "tp_event_destroy");
    check_tp(tp_event_destroy(f->end), "tp_event_destroy");
    check_tp(tp_event_destroy(f->start), "tp_event_destroy");
    check_tp(tp_stream_destroy(f->other), "tp_stream_destroy");
    check_tp(tp_stream_destroy(f->stream), "tp_stream_destroy");
}

/* Both timing events recorded once more, in order, and reached; outside the timing. */
static void tp_fixture_settle(tp_fixture *f)
{
    check_tp(tp_stream_synchronize(f->other), "tp_stream_synchronize");
    check_tp(tp_event_record(f->start, f->stream), "tp_event_record");
    check_tp(tp_event_record(f->end, f->stream), "tp_event_record");
    check_tp(tp_stream_synchronize(f->stream), "tp_stream_synchronize");
}

static void raw_fixture_settle(raw_fixture *r)
{
    raw_wait_value(r, r->other, r->other_value);
    raw_wait_value(r, r->timeline, r->value);
    raw_submit(r, r->stamp[0], VK_NULL_HANDLE, 0, r->timeline, &r->value);
    r->start_value = r->value;
    raw_submit(r, r->stamp[1], VK_NULL_HANDLE, 0, r->timeline, &r->value);
    raw_wait_value(r, r->timeline, r->value);
}

static VkSemaphore raw_timeline(VkDevice device)
{
    VkSemaphore semaphore = VK_NULL_HANDLE;
    check_raw(vk_raw_timeline_create(device, &semaphore), "vkCreateSemaphore");
    return semaphore;
}

/* The physical device named `name` (tpevent's device), its compute family. */
static VkPhysicalDevice raw_physical(VkInstance instance, const char *name, uint32_t *family)
{
    VkPhysicalDevice all[64];
    uint32_t count = 64;
    check_raw(vkEnumeratePhysicalDevices(instance, &count, all), "vkEnumeratePhysicalDevices");
    for (uint32_t i = 0; i < count; i++) {
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(all[i], &properties);
        if (strcmp(properties.deviceName, name) != 0)
            continue;
        VkQueueFamilyProperties families[16];
        uint32_t family_count = 16;
        vkGetPhysicalDeviceQueueFamilyProperties(all[i], &family_count, families);
        for (uint32_t j = 0; j < family_count; j++)
            if (families[j].queueFlags & VK_QUEUE_COMPUTE_BIT) {
                *family = j;
                return all[i];
            }
    }
    fprintf(stderr, "tpevent_bench_vulkan: no physical device named %s with compute\n", name);
    exit(1);
}

static void raw_fixture_open(raw_fixture *r, const char *name)
{
    *r = (raw_fixture){0};
    VkApplicationInfo application = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo instance = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &application};
    check_raw(vkCreateInstance(&instance, NULL, &r->instance), "vkCreateInstance");
    uint32_t family = 0;
    VkPhysicalDevice physical = raw_physical(r->instance, name, &family);
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = family,
                                     .queueCount = 1,
                                     .pQueuePriorities = &priority};
    VkPhysicalDeviceVulkan12Features features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                 .timelineSemaphore = VK_TRUE};
    VkDeviceCreateInfo device = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                                 .pNext = &features,
                                 .queueCreateInfoCount = 1,
                                 .pQueueCreateInfos = &queue};
    check_raw(vkCreateDevice(physical, &device, NULL, &r->device), "vkCreateDevice");
    vkGetDeviceQueue(r->device, family, 0, &r->queue);
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family};
    check_raw(vkCreateCommandPool(r->device, &pool, NULL, &r->pool), "vkCreateCommandPool");
    VkQueryPoolCreateInfo queries = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2};
    check_raw(vkCreateQueryPool(r->device, &queries, NULL, &r->queries), "vkCreateQueryPool");
    VkCommandBufferAllocateInfo allocate = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = r->pool,
                                            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 2};
    check_raw(vkAllocateCommandBuffers(r->device, &allocate, r->stamp), "vkAllocateCommandBuffers");
    for (uint32_t i = 0; i < 2; i++) {
        VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                          .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT};
        check_raw(vkBeginCommandBuffer(r->stamp[i], &begin), "vkBeginCommandBuffer");
        vkCmdResetQueryPool(r->stamp[i], r->queries, i, 1);
        vkCmdWriteTimestamp(r->stamp[i], VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->queries, i);
        check_raw(vkEndCommandBuffer(r->stamp[i]), "vkEndCommandBuffer");
    }
    r->timeline = raw_timeline(r->device);
    r->other = raw_timeline(r->device);
}

static void raw_fixture_close(raw_fixture *r)
{
    check_raw(vkDeviceWaitIdle(r->device), "vkDeviceWaitIdle");
    vkDestroySemaphore(r->device, r->other, NULL);
    vkDestroySemaphore(r->device, r->timeline, NULL);
    vkDestroyQueryPool(r->device, r->queries, NULL);
    vkDestroyCommandPool(r->device, r->pool, NULL);
    vkDestroyDevice(r->device, NULL);
    vkDestroyInstance(r->instance, NULL);
}

/* ------------------------------------------------------------------ main */

static double time_tp_batch(void *fixture, size_t index, size_t batch)
{
    tp_fixture *f = fixture;
    tp_fixture_settle(f);
    uint64_t t0 = bench_now_ns();
    ops[index].tp_batch(f, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

static double time_raw_batch(void *fixture, size_t index, size_t batch)
{
    raw_fixture *r = fixture;
    raw_fixture_settle(r);
    uint64_t t0 = bench_now_ns();
    ops[index].raw_batch(r, batch);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)batch;
}

/* One device's table; the number of ops over budget. */
static int bench_device(const char *device, const bench_options *opt, bench_samples *samples)
{
    char name[256] = "?";
    check_tp(tp_device_name(device, name, sizeof name), "tp_device_name");
    tp_fixture f;
    raw_fixture r;
    tp_fixture_open(&f, device);
    raw_fixture_open(&r, name);
    bench_sides sides = {time_tp_batch, time_raw_batch, &f, &r};
    bench_run_rounds(&sides, opt->batch, samples);
    raw_fixture_close(&r);
    tp_fixture_close(&f);

    printf("tpevent Vulkan backend vs raw Vulkan on %s: %s\n", device, name);
    bench_print_table_head(opt->rounds, opt->batch, "median of the rounds' tpevent/raw");
    int over = 0;
    for (size_t o = 0; o < OP_COUNT; o++) {
        bench_summary summary = bench_summarize(samples, o);
        over += !bench_print_ratio_or_slack_row(ops[o].name, &summary, BUDGET_RATIO, BUDGET_SLACK_NS);
    }
    printf("\n%s\n\n", over ? "budget: missed (see above)" : "budget: met for every op");
    return over;
}

int main(int argc, char **argv)
{
    bench_options opt;
    if (!bench_parse_options(argc, argv, 100, 101, &opt)) {
        fprintf(stderr, "usage: %s [--device vulkan:N] [--batch N] [--rounds N] [--check]\n", argv[0]);
        return 2;
    }
    const char *reason = NULL;
    if (tp_backend_status("vulkan", &reason) != TP_OK) {
        printf("skipped: the Vulkan backend is not usable here: %s\n", reason);
        return EXIT_UNAVAILABLE;
    }
    int count = 0;
    check_tp(tp_device_count("vulkan", &count), "tp_device_count");
    bench_samples samples;
    if (!bench_samples_alloc(&samples, "tpevent_bench_vulkan", OP_COUNT, opt.rounds))
        return 1;
    int over = bench_each_device("vulkan", count, &opt, bench_device, &samples);
    bench_samples_free(&samples);
    return opt.check && over ? EXIT_OVER_BUDGET : 0;
}
