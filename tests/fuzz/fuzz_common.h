/* Helpers the fuzz targets share. */
#ifndef TPEVENT_TESTS_FUZZ_COMMON_H
#define TPEVENT_TESTS_FUZZ_COMMON_H

#include <stdbool.h>

#include <tpevent/tpevent.h>

#include "fuzz_target.h"

/* Sets TPEVENT_CPU_DEVICES=2 unless set; call before the first tpevent call. */
void fuzz_prepare_environment(void);

/* True for a value of the tp_status enum. */
bool fuzz_status_is_known(tp_status status);

/* A failed call says why: the thread's message is not empty. */
#define FUZZ_REQUIRE_FAILURE_EXPLAINED() FUZZ_REQUIRE(tp_last_error()[0] != '\0')

#endif /* TPEVENT_TESTS_FUZZ_COMMON_H */
