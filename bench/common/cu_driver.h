/*
 * The CUDA driver API, from libcuda.so.1 at run time, for the benchmarks that launch
 * PTX kernels of their own (bench/cuda/hold_bench.c, bench/cuda/graph_raw_bench.c,
 * bench/trace/ncu_ranges.c): a machine without a driver builds them and they skip
 * (exit 77), as the rest of the suite does.
 */
#ifndef TPEVENT_BENCH_CU_DRIVER_H
#define TPEVENT_BENCH_CU_DRIVER_H

#include <cuda.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct bench_cu {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
    CUresult (*get_error_name)(CUresult, const char **);
} bench_cu;

/* The calls, once bench_cu_load said true. */
extern bench_cu cu;

/* PTX of a kernel `empty` that returns at once. */
extern const char bench_cu_empty_ptx[];

/* Loads libcuda.so.1 and every call above; false where it or one of them is missing. */
bool bench_cu_load(void);

/* The driver's name of `result`, or "?". */
const char *bench_cu_error_name(CUresult result);

/* Makes the primary context of `device` ("cuda:N"; "cuda": 0), the one tpevent's
 * streams are of, current on this thread. Where a call fails, its result and
 * *failed_call its name. */
CUresult bench_cu_primary_context_current(const char *device, const char **failed_call);

#endif /* TPEVENT_BENCH_CU_DRIVER_H */
