/*
 * The checks of the fake GPU's single-file test programs (counter_refused_test.c,
 * graph_launch_failure_test.c, sm_clock_test.c): a failed check prints where and what,
 * counts in `failures` and lets the program go on, so that one run reports them all.
 * Each program includes this once and ends with `return failures ? 1 : 0`.
 */
#ifndef TPEVENT_TESTS_GPU_FAKE_EXPECT_H
#define TPEVENT_TESTS_GPU_FAKE_EXPECT_H

#include <stdio.h>

#include "tpevent/tpevent.h"

static int failures;

#define EXPECT(cond)                                                \
    do {                                                            \
        if (!(cond)) {                                              \
            printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                             \
        }                                                           \
    } while (0)

#define EXPECT_OK(call)                                                                  \
    do {                                                                                 \
        tp_status status_ = (call);                                                      \
        if (status_ != TP_OK) {                                                          \
            printf("FAIL: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, tp_last_error()); \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

#endif /* TPEVENT_TESTS_GPU_FAKE_EXPECT_H */
