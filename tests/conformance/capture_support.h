/* What the capture tests share (rule 16): whether the device under test captures at
 * all, and whether its captures hold host functions. */
#ifndef TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H
#define TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H

#include "support.h"

/* A backend without capture skips, saying so. */
bool capture_supported(const char *device);

#define REQUIRE_CAPTURE(env)               \
    if (!capture_supported((env)->device)) \
    return TEST_SKIP

/* Host functions are the CPU's unit of work and are captured there; on CUDA and HIP,
 * rule 15's host functions inside a capture are refused with TP_ERR_CAPTURING. */
bool host_fns_captured(const char *device);

#endif /* TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H */
