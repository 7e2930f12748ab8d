/*
 * The CUDA driver's IPC event handle, called directly (runtime_handle.h). The few
 * driver types are written out here (the bench builds without the toolkit); the
 * functions come from libcuda.so.1 by dlsym.
 */
#define _GNU_SOURCE

#include "runtime_handle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef int cu_result; /* CUresult: 0 success, 600 not ready */
typedef struct cu_ctx *cu_context;
typedef struct cu_event *cu_event;
typedef struct {
    char reserved[RUNTIME_HANDLE_SIZE];
} cu_ipc_event_handle;

#define CU_SUCCESS 0
#define CU_NOT_READY 600

typedef struct driver {
    cu_result (*init)(unsigned);
    cu_result (*device_get)(int *, int);
    cu_result (*primary_ctx_retain)(cu_context *, int);
    cu_result (*ctx_set_current)(cu_context);
    cu_result (*ipc_get_event_handle)(cu_ipc_event_handle *, cu_event);
    cu_result (*ipc_open_event_handle)(cu_event *, cu_ipc_event_handle);
    cu_result (*event_query)(cu_event);
    cu_result (*get_error_name)(cu_result, const char **);
} driver;

/* The driver with device `index`'s primary context current on this thread. */
static bool driver_open(int index, driver *d, char *why, size_t why_size)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(why, why_size, "no libcuda.so.1: %s", dlerror());
        return false;
    }
    static const char *const names[] = {"cuInit",          "cuDeviceGet",         "cuDevicePrimaryCtxRetain",
                                        "cuCtxSetCurrent", "cuIpcGetEventHandle", "cuIpcOpenEventHandle",
                                        "cuEventQuery",    "cuGetErrorName"};
    void **slots[] = {(void **)&d->init,
                      (void **)&d->device_get,
                      (void **)&d->primary_ctx_retain,
                      (void **)&d->ctx_set_current,
                      (void **)&d->ipc_get_event_handle,
                      (void **)&d->ipc_open_event_handle,
                      (void **)&d->event_query,
                      (void **)&d->get_error_name};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *slots[i] = dlsym(library, names[i]);
        if (!*slots[i]) {
            snprintf(why, why_size, "libcuda.so.1 has no %s", names[i]);
            return false;
        }
    }
    int device = 0;
    cu_context context = NULL;
    cu_result r = d->init(0);
    if (r == CU_SUCCESS)
        r = d->device_get(&device, index);
    if (r == CU_SUCCESS)
        r = d->primary_ctx_retain(&context, device);
    if (r == CU_SUCCESS)
        r = d->ctx_set_current(context);
    if (r != CU_SUCCESS) {
        const char *name = "?";
        d->get_error_name(r, &name);
        snprintf(why, why_size, "the driver's primary context of device %d: %s", index, name);
        return false;
    }
    return true;
}

static const char *error_name(const driver *d, cu_result r)
{
    const char *name = "unknown error";
    d->get_error_name(r, &name);
    return name;
}

bool runtime_handle_export(int index, void *native, unsigned char handle[RUNTIME_HANDLE_SIZE], char *why,
                           size_t why_size)
{
    driver d;
    if (!driver_open(index, &d, why, why_size))
        return false;
    cu_ipc_event_handle h;
    cu_result r = d.ipc_get_event_handle(&h, (cu_event)native);
    if (r != CU_SUCCESS) {
        snprintf(why, why_size, "cuIpcGetEventHandle: %s", error_name(&d, r));
        return false;
    }
    memcpy(handle, h.reserved, RUNTIME_HANDLE_SIZE);
    return true;
}

typedef struct opened {
    driver d;
    cu_event event;
} opened;

void runtime_handle_open(int index, const unsigned char handle[RUNTIME_HANDLE_SIZE], void **opaque)
{
    static opened o; /* one per child process */
    char why[256];
    *opaque = NULL;
    if (!driver_open(index, &o.d, why, sizeof why)) {
        printf("  the driver's own handle: cannot tell: %s\n", why);
        return;
    }
    cu_ipc_event_handle h;
    memcpy(h.reserved, handle, RUNTIME_HANDLE_SIZE);
    cu_result r = o.d.ipc_open_event_handle(&o.event, h);
    if (r != CU_SUCCESS) {
        printf("  the driver's own handle (cuIpcOpenEventHandle): refused: %s\n", error_name(&o.d, r));
        return;
    }
    r = o.d.event_query(o.event);
    printf("  the driver's own handle (cuIpcOpenEventHandle): opened; the sender's held record is %s\n",
           r == CU_NOT_READY ? "pending (right)"
           : r == CU_SUCCESS ? "reached (wrong: it is held)"
                             : error_name(&o.d, r));
    *opaque = &o;
}

void runtime_handle_finish(void *opaque)
{
    opened *o = opaque;
    if (!o)
        return;
    struct timespec pause = {0, 1000000};
    cu_result r = CU_NOT_READY;
    for (int i = 0; i < 10000 && r == CU_NOT_READY; i++) {
        r = o->d.event_query(o->event);
        if (r == CU_NOT_READY)
            nanosleep(&pause, NULL);
    }
    printf("  the driver's own handle, once the sender's record was reached: %s\n", r == CU_SUCCESS ? "reached"
                                                                                    : r == CU_NOT_READY
                                                                                        ? "still pending after 10 s"
                                                                                        : error_name(&o->d, r));
}
