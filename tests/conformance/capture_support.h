/* What the capture tests share (rule 16): whether the device under test captures at
 * all. A device that captures captures rule 15's host functions too, on every
 * backend: the tests expect them to run once per launch everywhere. */
#ifndef TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H
#define TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H

#include "support.h"

/* A backend without capture skips, saying so. */
bool capture_supported(const char *device);

#define REQUIRE_CAPTURE(env)               \
    if (!capture_supported((env)->device)) \
    return TEST_SKIP

#endif /* TPEVENT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H */
