/*
 * The runtime behind a GPU device, for tests that call it as another library would
 * (foreign_capture.c, native_stream.c): the fake GPU module's exported tables, or
 * CUDA's driver API (libcuda.so.1).
 */
#ifndef TPEVENT_TESTS_CONFORMANCE_NATIVE_RUNTIME_H
#define TPEVENT_TESTS_CONFORMANCE_NATIVE_RUNTIME_H

#include <stdbool.h>

/* `symbol` of the fake GPU module this process loaded as "cuda"; NULL where the
 * module loaded is not the fake (or none is). */
const void *fake_gpu_symbol(const char *symbol);

/* The CUDA driver's library, opened once; NULL after printing "skipped: why". */
void *cuda_driver_open(void);

#endif /* TPEVENT_TESTS_CONFORMANCE_NATIVE_RUNTIME_H */
