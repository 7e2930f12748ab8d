/* What the tests of two devices or two backends share (rules 7 and 13 across
 * devices): a check run on a pair of devices, and two events, one of each. */
#ifndef TPEVENT_TESTS_CONFORMANCE_DEVICE_PAIR_H
#define TPEVENT_TESTS_CONFORMANCE_DEVICE_PAIR_H

#include "support.h"

/* A check of a pair of devices, run on the device and its peer (two devices) or
 * on the device and another backend's; skipped, saying why, where there is none. */
typedef void pair_check(const char *a, const char *b);

int on_peer(const test_env *env, pair_check *check);
int on_other_backend(const test_env *env, pair_check *check);

/* Two events, one of each device, each with a stream of its own device. */
typedef struct pair {
    tp_stream *streams[2];
    tp_event *events[2];
} pair;

pair pair_create(const char *a, const char *b, unsigned flags_a, unsigned flags_b);
void pair_destroy(pair *p);

#endif /* TPEVENT_TESTS_CONFORMANCE_DEVICE_PAIR_H */
