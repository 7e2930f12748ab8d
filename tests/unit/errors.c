/* Unit tests: status names, descriptions, the version, and tp_last_error's
 * per-thread messages. */
#include <pthread.h>
#include <stdio.h>

#include "check.h"

TEST(status_name_of_every_status)
{
    static const struct {
        tp_status status;
        const char *name;
    } expected[] = {
        {TP_OK, "TP_OK"},
        {TP_ERR_INVALID_ARGUMENT, "TP_ERR_INVALID_ARGUMENT"},
        {TP_ERR_INVALID_DEVICE, "TP_ERR_INVALID_DEVICE"},
        {TP_ERR_BACKEND_UNAVAILABLE, "TP_ERR_BACKEND_UNAVAILABLE"},
        {TP_ERR_NOT_RECORDED, "TP_ERR_NOT_RECORDED"},
        {TP_ERR_NOT_READY, "TP_ERR_NOT_READY"},
        {TP_ERR_TIMING_DISABLED, "TP_ERR_TIMING_DISABLED"},
        {TP_ERR_DEVICE_MISMATCH, "TP_ERR_DEVICE_MISMATCH"},
        {TP_ERR_UNSUPPORTED, "TP_ERR_UNSUPPORTED"},
        {TP_ERR_OUT_OF_MEMORY, "TP_ERR_OUT_OF_MEMORY"},
        {TP_ERR_BACKEND, "TP_ERR_BACKEND"},
        {TP_ERR_CAPTURING, "TP_ERR_CAPTURING"},
    };
    CHECK(sizeof expected / sizeof expected[0] == TP_STATUS_COUNT);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const char *name = tp_status_name(expected[i].status);
        if (name == NULL || strcmp(name, expected[i].name) != 0)
            check_failed(__FILE__, __LINE__, "tp_status_name(%d) is \"%s\", expected \"%s\"", (int)expected[i].status,
                         name ? name : "(null)", expected[i].name);
    }
    return 0;
}

TEST(status_name_of_unknown_status)
{
    CHECK(strcmp(tp_status_name((tp_status)TP_STATUS_COUNT), "TP_ERR_UNKNOWN") == 0);
    CHECK(strcmp(tp_status_name((tp_status)-1), "TP_ERR_UNKNOWN") == 0);
    CHECK(strcmp(tp_status_name((tp_status)100000), "TP_ERR_UNKNOWN") == 0);
    return 0;
}

TEST(status_description_of_every_status)
{
    for (int s = 0; s < TP_STATUS_COUNT; s++) {
        const char *text = tp_status_description((tp_status)s);
        CHECK(text != NULL && text[0] != '\0');
        /* A description, not the name again. */
        CHECK(strcmp(text, tp_status_name((tp_status)s)) != 0);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(text, tp_status_description((tp_status)t)) != 0);
    }
    CHECK(tp_status_description((tp_status)TP_STATUS_COUNT) != NULL);
    CHECK(tp_status_description((tp_status)-1) != NULL);
    return 0;
}

TEST(version_string_matches_header)
{
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", TPEVENT_VERSION_MAJOR, TPEVENT_VERSION_MINOR,
             TPEVENT_VERSION_PATCH);
    CHECK(tp_version_string() != NULL);
    CHECK(strcmp(tp_version_string(), expected) == 0);
    return 0;
}

TEST(last_error_empty_before_any_failure)
{
    const char *message = tp_last_error();
    CHECK(message != NULL);
    CHECK(message[0] == '\0');
    return 0;
}

TEST(last_error_kept_by_successful_calls)
{
    tp_device device;
    CHECK_STATUS(tp_device_parse("cdua:0", &device), TP_ERR_INVALID_DEVICE);
    char before[512];
    snprintf(before, sizeof before, "%s", tp_last_error());
    CHECK(before[0] != '\0');

    CHECK_OK(tp_device_parse("cpu:0", &device));
    tp_event *event = NULL;
    CHECK_OK(tp_event_create(&event, "cpu:0", TP_EVENT_TIMING));
    bool done = false;
    CHECK_OK(tp_event_query(event, &done));
    CHECK_OK(tp_event_destroy(event));
    CHECK(strcmp(tp_last_error(), before) == 0);
    return 0;
}

TEST(last_error_replaced_by_next_failure)
{
    tp_device device;
    CHECK_STATUS(tp_device_parse("cdua:0", &device), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cdua:0\"");
    CHECK_STATUS(tp_device_parse("cpu:x", &device), TP_ERR_INVALID_DEVICE);
    CHECK_ERROR_MENTIONS("\"cpu:x\"");
    CHECK(strstr(tp_last_error(), "cdua") == NULL);
    return 0;
}

typedef struct thread_errors {
    char seen_at_start[256];
    char seen_after_own_failure[256];
} thread_errors;

static void *fail_in_other_thread(void *arg)
{
    thread_errors *errors = arg;
    tp_device device;
    snprintf(errors->seen_at_start, sizeof errors->seen_at_start, "%s", tp_last_error());
    CHECK_STATUS(tp_device_parse("hip:x", &device), TP_ERR_INVALID_DEVICE);
    snprintf(errors->seen_after_own_failure, sizeof errors->seen_after_own_failure, "%s", tp_last_error());
    return NULL;
}

TEST(last_error_is_per_thread)
{
    tp_device device;
    CHECK_STATUS(tp_device_parse("cdua:0", &device), TP_ERR_INVALID_DEVICE);

    thread_errors errors;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fail_in_other_thread, &errors) == 0);
    CHECK(pthread_join(thread, NULL) == 0);

    /* The other thread did not see this thread's failure, and this thread does not
     * see the other's. */
    CHECK(errors.seen_at_start[0] == '\0');
    CHECK_CONTAINS(errors.seen_after_own_failure, "\"hip:x\"");
    CHECK_ERROR_MENTIONS("\"cdua:0\"");
    CHECK(strstr(tp_last_error(), "hip:x") == NULL);
    return 0;
}
