/*
 * The Vulkan backend without a driver: the loader finds no ICD (VK_ICD_FILENAMES
 * names none, set before the module loads), and the backend is unavailable with the
 * reason, which every use of a vulkan device returns; a machine with a driver lists
 * its devices (lavapipe in CI).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <tpevent/tpevent.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool module_missing(tp_status status, const char *reason)
{
    if (status != TP_OK && reason && strstr(reason, "module not found")) {
        printf("skipped: the vulkan backend is not built: %s\n", reason);
        return true;
    }
    return false;
}

TEST(vulkan_without_a_driver_is_unavailable_with_the_reason)
{
    /* Both names: the loader of Debian 12 reads VK_ICD_FILENAMES, later ones VK_DRIVER_FILES. */
    CHECK(setenv("VK_ICD_FILENAMES", "/nonexistent/tpevent-no-such-icd.json", 1) == 0);
    CHECK(setenv("VK_DRIVER_FILES", "/nonexistent/tpevent-no-such-icd.json", 1) == 0);
    const char *reason = NULL;
    tp_status status = tp_backend_status("vulkan", &reason);
    if (module_missing(status, reason))
        return TEST_SKIP;
    printf("reason: %s\n", reason ? reason : "(none)");
    CHECK_STATUS(status, TP_ERR_BACKEND_UNAVAILABLE);
    CHECK(reason && strstr(reason, "vulkan: ") &&
          (strstr(reason, "no Vulkan driver") || strstr(reason, "found no device")));
    tp_stream *stream = NULL;
    CHECK_STATUS(tp_stream_create(&stream, "vulkan:0", 0), TP_ERR_BACKEND_UNAVAILABLE);
    CHECK(strstr(tp_last_error(), "no Vulkan driver") || strstr(tp_last_error(), "found no device"));
    int count = -1;
    CHECK_OK(tp_device_count("vulkan", &count));
    CHECK(count == 0);
    return 0;
}

TEST(vulkan_lists_its_devices_by_name)
{
    const char *reason = NULL;
    tp_status status = tp_backend_status("vulkan", &reason);
    if (module_missing(status, reason))
        return TEST_SKIP;
    if (status != TP_OK) {
        printf("skipped: the vulkan backend is unavailable: %s\n", reason ? reason : "?");
        return TEST_SKIP;
    }
    int count = 0;
    CHECK_OK(tp_device_count("vulkan", &count));
    CHECK(count >= 1);
    for (int i = 0; i < count; i++) {
        char device[TP_DEVICE_STRING_MAX], name[256] = "";
        snprintf(device, sizeof device, "vulkan:%d", i);
        CHECK_OK(tp_device_name(device, name, sizeof name));
        printf("%s: %s\n", device, name);
        CHECK(name[0] != '\0');
    }
    return 0;
}

/* TPEVENT_VULKAN_VERBOSE: each physical device the loader listed, on stderr, with the
 * device string it became or why it was left out. */
TEST(vulkan_verbose_names_each_physical_device)
{
    CHECK(setenv("TPEVENT_VULKAN_VERBOSE", "1", 1) == 0);
    char path[] = "/tmp/tpevent-vulkan-verbose-XXXXXX";
    int file = mkstemp(path);
    CHECK(file >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    CHECK(saved >= 0 && dup2(file, STDERR_FILENO) >= 0);
    const char *reason = NULL;
    tp_status status = tp_backend_status("vulkan", &reason);
    fflush(stderr);
    CHECK(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    char said[4096] = "";
    ssize_t length = pread(file, said, sizeof said - 1, 0);
    close(file);
    unlink(path);
    said[length > 0 ? length : 0] = '\0';
    if (module_missing(status, reason))
        return TEST_SKIP;
    if (status != TP_OK) {
        printf("skipped: the vulkan backend is unavailable: %s\n", reason ? reason : "?");
        return TEST_SKIP;
    }
    printf("%s", said);
    char name[256] = "";
    CHECK_OK(tp_device_name("vulkan:0", name, sizeof name));
    CHECK(strstr(said, "tpevent vulkan (pid ") && strstr(said, name) && strstr(said, ": vulkan:0\n"));
    return 0;
}
