/*
 * The CUDA driver's own IPC event handle (cuIpcGetEventHandle / cuIpcOpenEventHandle),
 * called directly, for tpevent_bench_ipc_wait --handle-across-namespaces: whether the
 * runtime's handle works for a child in other namespaces, apart from tpevent's own
 * checks on the handle (runtime_handle.c). The driver is loaded with dlopen, so that
 * the bench builds and runs where there is none.
 */
#ifndef TPEVENT_BENCH_IPC_RUNTIME_HANDLE_H
#define TPEVENT_BENCH_IPC_RUNTIME_HANDLE_H

#include <stdbool.h>
#include <stddef.h>

#define RUNTIME_HANDLE_SIZE 64 /* CUipcEventHandle */

/* The handle of `native` (a cudaEvent_t made with interprocess flags) on CUDA device
 * `index`; false with *why set where it cannot be had. */
bool runtime_handle_export(int index, void *native, unsigned char handle[RUNTIME_HANDLE_SIZE], char *why,
                           size_t why_size);

/* In the child: opens the handle on device `index` and says (printf) whether that
 * worked and whether the event it names is pending; *opaque for runtime_handle_finish. */
void runtime_handle_open(int index, const unsigned char handle[RUNTIME_HANDLE_SIZE], void **opaque);

/* Once the sender's record was reached: says whether the opened event shows it
 * within 10 s. */
void runtime_handle_finish(void *opaque);

#endif /* TPEVENT_BENCH_IPC_RUNTIME_HANDLE_H */
