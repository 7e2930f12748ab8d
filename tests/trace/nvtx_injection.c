/*
 * An NVTX tool, as Nsight Systems is one, for tool_ranges.c: NVTX v3 loads it from
 * NVTX_INJECTION64_PATH at the process's first NVTX call and calls
 * InitializeInjectionNvtx2, which fills NVTX's function tables with the handlers
 * below. Each handler appends a line to the file TPEVENT_NVTX_LOG names:
 *   push <name>          nvtxRangePushA
 *   pop                  nvtxRangePop
 *   stream <name>        nvtxNameCudaStreamA
 * (the interface: nvtx3/nvtxDetail/nvtxTypes.h, NvtxExportTableCallbacks).
 */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_line(const char *what, const char *name)
{
    const char *path = getenv("TPEVENT_NVTX_LOG");
    if (!path)
        return;
    pthread_mutex_lock(&log_lock);
    FILE *file = fopen(path, "a");
    if (file) {
        fprintf(file, "%s%s%s\n", what, name ? " " : "", name ? name : "");
        fclose(file);
    }
    pthread_mutex_unlock(&log_lock);
}

static int range_push(const char *name)
{
    log_line("push", name);
    return 0;
}

static int range_pop(void)
{
    log_line("pop", NULL);
    return 0;
}

static void name_stream(void *stream, const char *name)
{
    (void)stream;
    log_line("stream", name);
}

static void set_handler(const NvtxExportTableCallbacks *callbacks, NvtxCallbackModule module, unsigned id,
                        NvtxFunctionPointer handler)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (callbacks->GetModuleFunctionTable(module, &table, &size) && table && id < size && table[id])
        *table[id] = handler;
}

/* What NVTX looks up in the library it loads. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    const NvtxExportTableCallbacks *callbacks = get_export_table(NVTX_ETID_CALLBACKS);
    if (!callbacks)
        return 0;
    set_handler(callbacks, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)range_push);
    set_handler(callbacks, NVTX_CB_MODULE_CORE, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)range_pop);
    set_handler(callbacks, NVTX_CB_MODULE_CUDART, NVTX_CBID_CUDART_NameCudaStreamA, (NvtxFunctionPointer)name_stream);
    log_line("attached", NULL);
    return 1;
}
