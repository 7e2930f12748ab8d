/*
 * Unit tests: backends and devices — tp_backend_status, tp_device_count, the
 * current device and what TPEVENT_DEVICE and TPEVENT_CPU_DEVICES do to it.
 * CMake runs these with TPEVENT_CPU_DEVICES=2 and TPEVENT_DEVICE unset unless a
 * test's name says otherwise (see CMakeLists.txt).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static void check_device(tp_device device, tp_device_type type, int index)
{
    if (device.type != type || device.index != index)
        check_failed(__FILE__, __LINE__, "device is type %d index %d, expected %d %d", (int)device.type, device.index,
                     (int)type, index);
}

static void check_current_device(tp_device_type type, int index)
{
    tp_device current;
    CHECK_OK(tp_current_device(&current));
    check_device(current, type, index);
}

static void require_env(const char *name, const char *value)
{
    const char *actual = getenv(name);
    if (value == NULL ? actual != NULL : (actual == NULL || strcmp(actual, value) != 0))
        check_failed(__FILE__, __LINE__, "run this test with %s=%s (CMake sets it)", name, value ? value : "(unset)");
}

/* A GPU backend that is not usable here, for the tests of what that refuses;
 * NULL if both are usable. */
static const char *unavailable_gpu_backend(void)
{
    if (tp_backend_status("hip", NULL) != TP_OK)
        return "hip";
    if (tp_backend_status("cuda", NULL) != TP_OK)
        return "cuda";
    return NULL;
}

/* ------------------------------------------------------- backend status */

TEST(backend_status_cpu_available)
{
    const char *reason = "untouched";
    CHECK_OK(tp_backend_status("cpu", &reason));
    return 0;
}

static void check_gpu_backend_status(const char *type)
{
    const char *reason = NULL;
    tp_status status = tp_backend_status(type, &reason);
    if (status == TP_OK) {
        int count = 0;
        CHECK_OK(tp_device_count(type, &count));
        CHECK(count > 0);
        return;
    }
    CHECK_STATUS(status, TP_ERR_BACKEND_UNAVAILABLE);
    CHECK(reason != NULL && reason[0] != '\0');
    printf("%s: %s\n", type, reason);
}

TEST(backend_status_cuda_usable_or_says_why)
{
    check_gpu_backend_status("cuda");
    return 0;
}

TEST(backend_status_hip_usable_or_says_why)
{
    check_gpu_backend_status("hip");
    return 0;
}

TEST(backend_status_unknown_type)
{
    static const char *const unknown[] = {"cdua", "gpu", "CPU"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        CHECK_STATUS(tp_backend_status(unknown[i], NULL), TP_ERR_INVALID_DEVICE);
        CHECK_ERROR_MENTIONS(unknown[i]);
    }
    CHECK_STATUS(tp_backend_status("", NULL), TP_ERR_INVALID_DEVICE);
    return 0;
}

TEST(backend_status_unknown_type_gives_reason)
{
    /* The header: "otherwise TP_ERR_BACKEND_UNAVAILABLE (or TP_ERR_INVALID_DEVICE
     * for an unknown type) and, if reason is not NULL, a ... string saying why". */
    const char *reason = NULL;
    CHECK_STATUS(tp_backend_status("cdua", &reason), TP_ERR_INVALID_DEVICE);
    CHECK(reason != NULL && reason[0] != '\0');
    return 0;
}

typedef struct status_answer {
    const char *type;
    tp_status status;
    const char *reason;
} status_answer;

static void *ask_backend_status(void *arg)
{
    status_answer *answer = arg;
    answer->status = tp_backend_status(answer->type, &answer->reason);
    return NULL;
}

TEST(backend_status_same_answer_from_racing_threads)
{
    /* The first use loads the module; threads racing to it get one answer. */
    enum { threads = 8 };
    static const char *const types[] = {"cuda", "hip", "cpu"};
    pthread_t thread[threads];
    status_answer answers[threads];
    for (int i = 0; i < threads; i++) {
        answers[i] = (status_answer){types[i % 3], TP_ERR_BACKEND, NULL};
        CHECK(pthread_create(&thread[i], NULL, ask_backend_status, &answers[i]) == 0);
    }
    for (int i = 0; i < threads; i++)
        CHECK(pthread_join(thread[i], NULL) == 0);
    for (int i = 0; i < threads; i++) {
        status_answer again = {answers[i].type, TP_ERR_BACKEND, NULL};
        ask_backend_status(&again);
        CHECK(answers[i].status == again.status);
        if (again.status != TP_OK) {
            CHECK(answers[i].reason != NULL && again.reason != NULL);
            CHECK(strcmp(answers[i].reason, again.reason) == 0);
        }
    }
    return 0;
}

TEST(backend_info_cpu)
{
    tp_backend_info info;
    memset(&info, 0, sizeof info);
    CHECK_OK(tp_backend_get_info("cpu", &info));
    CHECK(info.name != NULL && strcmp(info.name, "cpu") == 0);
    CHECK(info.built_in);
    CHECK(info.loaded);
    CHECK(info.status == TP_OK);
    CHECK(info.reason != NULL && info.reason[0] == '\0');
    CHECK(info.module_path != NULL);
    CHECK(info.device_count == 2);
    return 0;
}

static void check_backend_info_agrees(const char *type)
{
    tp_backend_info info;
    memset(&info, 0, sizeof info);
    CHECK_OK(tp_backend_get_info(type, &info));
    const char *reason = NULL;
    tp_status status = tp_backend_status(type, &reason);
    int count = -1;
    CHECK_OK(tp_device_count(type, &count));
    CHECK(info.name != NULL && strcmp(info.name, type) == 0);
    CHECK(info.status == status);
    CHECK(info.device_count == count);
    CHECK(info.reason != NULL && info.module_path != NULL);
    if (status == TP_OK) {
        CHECK(info.loaded);
        CHECK(info.reason[0] == '\0');
    } else {
        CHECK(strcmp(info.reason, reason) == 0);
        CHECK(info.device_count == 0);
    }
}

TEST(backend_info_agrees_with_backend_status)
{
    check_backend_info_agrees("cuda");
    check_backend_info_agrees("hip");
    check_backend_info_agrees("cpu");
    return 0;
}

TEST(backend_info_unknown_type)
{
    tp_backend_info info;
    memset(&info, 0xab, sizeof info);
    CHECK_STATUS(tp_backend_get_info("cdua", &info), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("cdua");
    return 0;
}

TEST(device_name_of_cpu_devices)
{
    char first[128] = "", second[128] = "";
    CHECK_OK(tp_device_name("cpu:0", first, sizeof first));
    CHECK_OK(tp_device_name("cpu:1", second, sizeof second));
    CHECK(first[0] != '\0' && second[0] != '\0');
    CHECK(strcmp(first, second) != 0);
    return 0;
}

TEST(device_name_bad_device)
{
    char buf[64] = "untouched";
    CHECK_STATUS(tp_device_name("cpu:x", buf, sizeof buf), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cpu:x\"");
    CHECK_STATUS(tp_device_name("cpu:5", buf, sizeof buf), TP_ERR_INVALID_DEVICE);
    CHECK(strcmp(buf, "untouched") == 0);
    return 0;
}

/* --------------------------------------------------------- device count */

TEST(device_count_cpu_default_is_one)
{
    require_env("TPEVENT_CPU_DEVICES", NULL);
    int count = -1;
    CHECK_OK(tp_device_count("cpu", &count));
    CHECK(count == 1);
    return 0;
}

TEST(device_count_cpu_from_env)
{
    require_env("TPEVENT_CPU_DEVICES", "2");
    int count = -1;
    CHECK_OK(tp_device_count("cpu", &count));
    CHECK(count == 2);
    return 0;
}

/* Empty means unset, for every TPEVENT_* variable (README, environment variables). */
TEST(env_empty_cpu_devices_is_unset)
{
    require_env("TPEVENT_CPU_DEVICES", "");
    const char *reason = NULL;
    CHECK_OK(tp_backend_status("cpu", &reason));
    int count = -1;
    CHECK_OK(tp_device_count("cpu", &count));
    CHECK(count == 1);
    return 0;
}

TEST(device_count_of_unavailable_backend_is_zero)
{
    const char *type = unavailable_gpu_backend();
    if (type == NULL) {
        printf("skipped: both GPU backends are usable here\n");
        return TEST_SKIP;
    }
    int count = -1;
    CHECK_OK(tp_device_count(type, &count));
    CHECK(count == 0);
    return 0;
}

TEST(device_count_unknown_type)
{
    int count = -1;
    CHECK_STATUS(tp_device_count("cdua", &count), TP_ERR_INVALID_DEVICE);
    CHECK(count == -1);
    CHECK_ERROR_MENTIONS("cdua");
    return 0;
}

/* ------------------------------------------------------- current device */

TEST(current_device_default_is_first_available)
{
    require_env("TPEVENT_DEVICE", NULL);
    static const struct {
        const char *name;
        tp_device_type type;
    } order[] = {{"cuda", TP_DEVICE_CUDA}, {"hip", TP_DEVICE_HIP}, {"cpu", TP_DEVICE_CPU}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        int count = 0;
        CHECK_OK(tp_device_count(order[i].name, &count));
        if (tp_backend_status(order[i].name, NULL) == TP_OK && count > 0) {
            check_current_device(order[i].type, 0);
            return 0;
        }
    }
    check_failed(__FILE__, __LINE__, "not even the CPU backend is available");
}

TEST(env_empty_device_is_unset)
{
    /* As current_device_default_is_first_available: TPEVENT_DEVICE="" is no device
     * string to parse (and fail on), it is the variable unset. */
    require_env("TPEVENT_DEVICE", "");
    static const struct {
        const char *name;
        tp_device_type type;
    } order[] = {{"cuda", TP_DEVICE_CUDA}, {"hip", TP_DEVICE_HIP}, {"cpu", TP_DEVICE_CPU}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (tp_backend_status(order[i].name, NULL) == TP_OK) {
            check_current_device(order[i].type, 0);
            tp_event *event = NULL;
            CHECK_OK(tp_event_create(&event, NULL, TP_EVENT_DEFAULT));
            CHECK_OK(tp_event_destroy(event));
            return 0;
        }
    }
    check_failed(__FILE__, __LINE__, "not even the CPU backend is available");
}

TEST(current_device_from_env)
{
    require_env("TPEVENT_DEVICE", "cpu:1");
    check_current_device(TP_DEVICE_CPU, 1);
    tp_event *event = NULL;
    tp_device device;
    CHECK_OK(tp_event_create(&event, NULL, TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_device(event, &device));
    check_device(device, TP_DEVICE_CPU, 1);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(current_device_env_invalid)
{
    require_env("TPEVENT_DEVICE", "cdua:0");
    tp_device device = {TP_DEVICE_HIP, 42};
    CHECK_STATUS(tp_current_device(&device), TP_ERR_INVALID_DEVICE);
    CHECK(device.type == TP_DEVICE_HIP && device.index == 42);
    CHECK_ERROR_MENTIONS("TPEVENT_DEVICE");
    CHECK_ERROR_MENTIONS("cdua:0");
    return 0;
}

TEST(current_device_env_invalid_fails_null_device_calls)
{
    require_env("TPEVENT_DEVICE", "cdua:0");
    tp_event *event = NULL;
    CHECK_STATUS(tp_event_create(&event, NULL, TP_EVENT_DEFAULT), TP_ERR_INVALID_DEVICE);
    CHECK(event == NULL);
    CHECK_ERROR_MENTIONS("TPEVENT_DEVICE");
    /* A call that names its device does not care. */
    CHECK_OK(tp_event_create(&event, "cpu:0", TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(current_device_env_out_of_range)
{
    /* Refused as tp_set_device("cpu:9") is, not handed out as current. */
    require_env("TPEVENT_DEVICE", "cpu:9");
    tp_device device;
    CHECK_STATUS(tp_current_device(&device), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("TPEVENT_DEVICE");
    CHECK_ERROR_MENTIONS("cpu:9");
    return 0;
}

TEST(current_device_env_explicit_set_wins)
{
    /* tp_set_device replaces the environment's choice, even an invalid one. */
    require_env("TPEVENT_DEVICE", "cdua:0");
    CHECK_OK(tp_set_device("cpu:1"));
    check_current_device(TP_DEVICE_CPU, 1);
    return 0;
}

TEST(set_device_changes_current_device)
{
    CHECK_OK(tp_set_device("cpu:1"));
    check_current_device(TP_DEVICE_CPU, 1);
    CHECK_OK(tp_set_device("cpu:0"));
    check_current_device(TP_DEVICE_CPU, 0);
    return 0;
}

static void *current_device_of_new_thread(void *arg)
{
    tp_device *out = arg;
    CHECK_OK(tp_set_device("cpu:0"));
    CHECK_OK(tp_current_device(out));
    return NULL;
}

TEST(set_device_is_per_thread)
{
    CHECK_OK(tp_set_device("cpu:1"));
    tp_device theirs = {TP_DEVICE_HIP, 42};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, current_device_of_new_thread, &theirs) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    check_device(theirs, TP_DEVICE_CPU, 0);
    check_current_device(TP_DEVICE_CPU, 1);
    return 0;
}

static void *default_device_of_new_thread(void *arg)
{
    tp_device *out = arg;
    CHECK_OK(tp_current_device(out));
    return NULL;
}

TEST(set_device_not_seen_by_new_thread)
{
    require_env("TPEVENT_DEVICE", "cpu:0");
    CHECK_OK(tp_set_device("cpu:1"));
    tp_device theirs = {TP_DEVICE_HIP, 42};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, default_device_of_new_thread, &theirs) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    check_device(theirs, TP_DEVICE_CPU, 0);
    return 0;
}

TEST(set_device_without_index_keeps_index)
{
    CHECK_OK(tp_set_device("cpu:1"));
    CHECK_OK(tp_set_device("cpu"));
    check_current_device(TP_DEVICE_CPU, 1);
    return 0;
}

TEST(set_device_refused_leaves_current)
{
    CHECK_OK(tp_set_device("cpu:1"));
    CHECK_STATUS(tp_set_device("cpu:9"), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("cpu:9");
    check_current_device(TP_DEVICE_CPU, 1);
    CHECK_STATUS(tp_set_device("bogus"), TP_ERR_INVALID_DEVICE);
    check_current_device(TP_DEVICE_CPU, 1);
    return 0;
}

TEST(set_device_unavailable_backend)
{
    const char *type = unavailable_gpu_backend();
    if (type == NULL) {
        printf("skipped: both GPU backends are usable here\n");
        return TEST_SKIP;
    }
    char device[16];
    snprintf(device, sizeof device, "%s:0", type);
    CHECK_OK(tp_set_device("cpu:1"));
    CHECK_STATUS(tp_set_device(device), TP_ERR_BACKEND_UNAVAILABLE);
    CHECK_ERROR_MENTIONS(type);
    check_current_device(TP_DEVICE_CPU, 1);
    return 0;
}

TEST(device_without_index_uses_current_index)
{
    CHECK_OK(tp_set_device("cpu:1"));
    tp_event *event = NULL;
    tp_device device;
    CHECK_OK(tp_event_create(&event, "cpu", TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_device(event, &device));
    check_device(device, TP_DEVICE_CPU, 1);
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(null_device_is_current_device)
{
    CHECK_OK(tp_set_device("cpu:1"));
    tp_event *event = NULL;
    tp_stream *stream = NULL;
    tp_device device;
    CHECK_OK(tp_event_create(&event, NULL, TP_EVENT_DEFAULT));
    CHECK_OK(tp_event_device(event, &device));
    check_device(device, TP_DEVICE_CPU, 1);
    CHECK_OK(tp_stream_create(&stream, NULL, 0));
    CHECK_OK(tp_stream_device(stream, &device));
    check_device(device, TP_DEVICE_CPU, 1);

    tp_stream *by_null = NULL, *by_name = NULL, *current = NULL;
    CHECK_OK(tp_stream_default(NULL, &by_null));
    CHECK_OK(tp_stream_default("cpu:1", &by_name));
    CHECK(by_null == by_name);
    CHECK_OK(tp_stream_current(NULL, &current));
    CHECK(current == by_name);
    CHECK_OK(tp_stream_destroy(stream));
    CHECK_OK(tp_event_destroy(event));
    return 0;
}

TEST(current_device_env_out_of_range_named_in_errors)
{
    /* A call that falls back on the environment's device says where it came from. */
    require_env("TPEVENT_DEVICE", "cpu:9");
    tp_event *event = NULL;
    CHECK_STATUS(tp_event_create(&event, NULL, TP_EVENT_DEFAULT), TP_ERR_INVALID_DEVICE);
    CHECK(event == NULL);
    CHECK_ERROR_MENTIONS("cpu:9");
    CHECK_ERROR_MENTIONS("TPEVENT_DEVICE");
    return 0;
}

/* Strings of exactly their size, so that ASan sees a read past the NUL. */
static char *exact_copy(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = malloc(size);
    CHECK(copy != NULL);
    memcpy(copy, text, size);
    return copy;
}

TEST(device_string_cache_matches_whole_strings_only)
{
    /* core/device.c keeps the last device string a thread resolved: a string that
     * shares its start, longer or shorter, is resolved on its own, and none is read
     * past its NUL. */
    tp_stream *zero = NULL, *one = NULL, *seen = NULL;
    CHECK_OK(tp_stream_default("cpu:0", &zero));
    CHECK_OK(tp_stream_default("cpu:1", &one));
    CHECK(zero != one);
    char *longer = exact_copy("cpu:10"), *shorter = exact_copy("cpu:"), *bare = exact_copy("cpu");
    char *same = exact_copy("cpu:1");
    CHECK_STATUS(tp_stream_default(longer, &seen), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("cpu:10");
    CHECK_OK(tp_stream_default(same, &seen));
    CHECK(seen == one);
    CHECK(tp_stream_default(shorter, &seen) != TP_OK);
    CHECK_OK(tp_set_device("cpu:0"));
    CHECK_OK(tp_stream_default(bare, &seen));
    CHECK(seen == zero);
    CHECK_OK(tp_stream_default(same, &seen));
    CHECK(seen == one);
    free(longer);
    free(shorter);
    free(bare);
    free(same);
    return 0;
}
