/*
 * The OpenCL backend leaves the ICD loader's variables as they were: the Khronos
 * loader splits OCL_ICD_FILENAMES in place, in the process's environment, and a
 * process started afterwards inherited its first entry alone (on the H200, PoCL
 * without NVIDIA's OpenCL; backends/opencl/ocl_device.c). Debian's ocl-icd leaves
 * the variable alone, so in CI this holds either way; on the H200 it is the check.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <tpevent/tpevent.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(opencl_leaves_the_loaders_variables_as_they_were)
{
    /* Two entries, so that a split shows at the ':'. The second names no library:
     * a loader skips what it cannot open. */
    const char *before = getenv("OCL_ICD_FILENAMES");
    char value[4096];
    snprintf(value, sizeof value, "%s:%s", before ? before : "libpocl.so.2", "libtpevent-no-such-icd.so");
    CHECK(setenv("OCL_ICD_FILENAMES", value, 1) == 0);
    const char *reason = NULL;
    if (tp_backend_status("opencl", &reason) != TP_OK) {
        printf("skipped: the opencl backend is unavailable: %s\n", reason ? reason : "?");
        return TEST_SKIP;
    }
    const char *after = getenv("OCL_ICD_FILENAMES");
    if (!after || strcmp(after, value) != 0)
        check_failed(__FILE__, __LINE__, "OCL_ICD_FILENAMES was \"%s\" before the backend loaded, \"%s\" after", value,
                     after ? after : "(unset)");
    return 0;
}
