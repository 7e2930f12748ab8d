/* Helpers the fuzz targets share. */
#ifndef TPEVENT_TESTS_FUZZ_COMMON_H
#define TPEVENT_TESTS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tpevent/tpevent.h>

#include "fuzz_target.h"

/* Sets TPEVENT_CPU_DEVICES=2 unless set; call before the first tpevent call. */
void fuzz_prepare_environment(void);

/* True for a value of the tp_status enum. */
bool fuzz_status_is_known(tp_status status);

/* FNV-1a over bytes, from hash (2166136261 to start): the core's checksum of
 * handles and socket messages, written out so that the targets do not trust the
 * code they test for it. */
uint32_t fuzz_fnv1a(uint32_t hash, const unsigned char *bytes, size_t length);

/* Little-endian, as the handles and messages hold their numbers. */
void fuzz_put_u32(unsigned char *p, uint32_t v);
uint32_t fuzz_get_u32(const unsigned char *p);

/* An event that came in (imported or received) is of a CPU device and can be
 * queried, recorded, synchronized and waited on. A record of our own, on an idle
 * default stream, is reached at once: after it synchronize cannot wait on whatever
 * the payload pointed at. */
void fuzz_use_cpu_event(tp_event *event);

/* A failed call says why: the thread's message is not empty. */
#define FUZZ_REQUIRE_FAILURE_EXPLAINED() FUZZ_REQUIRE(tp_last_error()[0] != '\0')

#endif /* TPEVENT_TESTS_FUZZ_COMMON_H */
