/*
 * Module state: the core's services and the devices. OpenCL devices are numbered
 * across the ICD loader's platforms in its order, each platform's devices in its
 * order (docs/design.md, "Devices"); each gets one context, made at init, that every queue
 * and user event of the device lives in.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"
#include "common/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ocl_module {
    const tp_host *host;
    const tp_backend *table;
    ocl_device *devices;
    int device_count;
    bool verbose;               /* TPEVENT_OPENCL_VERBOSE: what init found, on stderr */
    int64_t forced_hold_window; /* TPEVENT_OPENCL_HOLD_WINDOW; 0: unset */
} ocl_module;

/* One per process: the module is loaded once, and its table takes no handle. */
static ocl_module module;

const tp_host *tp_ocl_host(void)
{
    return module.host;
}

const tp_backend *tp_ocl_table(void)
{
    return module.table;
}

int tp_ocl_device_count(void)
{
    return module.device_count;
}

ocl_device *tp_ocl_device(int index)
{
    return &module.devices[index];
}

const char *tp_ocl_error_name(cl_int error)
{
    switch (error) {
#define NAME(code) \
    case code:     \
        return #code
        NAME(CL_DEVICE_NOT_FOUND);
        NAME(CL_DEVICE_NOT_AVAILABLE);
        NAME(CL_OUT_OF_RESOURCES);
        NAME(CL_OUT_OF_HOST_MEMORY);
        NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
        NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        NAME(CL_INVALID_VALUE);
        NAME(CL_INVALID_PLATFORM);
        NAME(CL_INVALID_DEVICE);
        NAME(CL_INVALID_CONTEXT);
        NAME(CL_INVALID_QUEUE_PROPERTIES);
        NAME(CL_INVALID_COMMAND_QUEUE);
        NAME(CL_INVALID_EVENT_WAIT_LIST);
        NAME(CL_INVALID_EVENT);
        NAME(CL_INVALID_OPERATION);
#undef NAME
    case -1001: /* CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader */
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "an unknown OpenCL error";
    }
}

tp_status tp_ocl_fail(const char *call, const char *runtime_call, cl_int error)
{
    return module.host->fail(TP_ERR_BACKEND, "%s: %s: %s (%d)", call, runtime_call, tp_ocl_error_name(error),
                             (int)error);
}

cl_command_queue tp_ocl_queue_create(ocl_device *device, const char *call)
{
    cl_int error = CL_SUCCESS;
    cl_command_queue queue = clCreateCommandQueue(device->context, device->id, CL_QUEUE_PROFILING_ENABLE, &error);
    if (error != CL_SUCCESS) {
        tp_ocl_fail(call, "clCreateCommandQueue", error);
        return NULL;
    }
    return queue;
}

static void clock_init(ocl_clock *clock)
{
    pthread_mutex_init(&clock->lock, NULL);
    clock->queue = NULL;
    clock->first = clock->count = 0;
    clock->widest_half_width_ns = 0;
}

/* Rule 17's window of a device's streams (OCL_HOLD_WINDOW, or none on PoCL);
 * TPEVENT_OPENCL_HOLD_WINDOW sets it instead: CI runs the chain that joins holds
 * past the window (ocl_hold.c) on PoCL with it. */
static int64_t hold_window(bool pocl)
{
    if (module.forced_hold_window > 0)
        return module.forced_hold_window;
    return pocl ? INT64_MAX : OCL_HOLD_WINDOW;
}

/* TPEVENT_OPENCL_HOLD_WINDOW, from 1 to OCL_HOLD_WINDOW_MAX; any other value makes
 * the backend unavailable, with the variable, its value and the range as the
 * reason, rather than a window nobody asked for. */
static bool hold_window_setting_read(char *reason, size_t reason_size)
{
    uint64_t forced = 0;
    if (!tp_env_count("TPEVENT_OPENCL_HOLD_WINDOW", 1, OCL_HOLD_WINDOW_MAX, 0, &forced, reason, reason_size))
        return false;
    module.forced_hold_window = (int64_t)forced;
    return true;
}

/*
 * With TPEVENT_OPENCL_VERBOSE, what each platform answered, on stderr: a platform
 * skipped (no device, CL_DEVICE_NOT_FOUND) is otherwise silent, and one the ICD
 * loader could not start is not listed at all (the count and the loader's variables
 * show it). For a process that finds fewer devices than another with the same
 * environment (a test's re-spawned child, #34).
 */
static void platform_note(cl_platform_id platform, cl_int error, cl_uint count)
{
    if (!module.verbose)
        return;
    char name[256] = "?", version[256] = "?";
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof version, version, NULL);
    fprintf(stderr, "tpevent opencl (pid %ld): platform \"%s\" (%s): clGetDeviceIDs: %s, %u device%s\n", (long)getpid(),
            name, version, error == CL_SUCCESS ? "CL_SUCCESS" : tp_ocl_error_name(error), (unsigned)count,
            count == 1 ? "" : "s");
}

static void platforms_note(cl_int error, cl_uint count)
{
    if (!module.verbose)
        return;
    const char *filenames = getenv("OCL_ICD_FILENAMES"), *vendors = getenv("OCL_ICD_VENDORS");
    fprintf(
        stderr,
        "tpevent opencl (pid %ld): clGetPlatformIDs: %s, %u platform%s (OCL_ICD_FILENAMES=%s, OCL_ICD_VENDORS=%s)\n",
        (long)getpid(), error == CL_SUCCESS ? "CL_SUCCESS" : tp_ocl_error_name(error), (unsigned)count,
        count == 1 ? "" : "s", filenames ? filenames : "(unset)", vendors ? vendors : "(unset)");
}

/* The platform's devices appended to `module`, each with its context. */
static cl_int add_platform_devices(cl_platform_id platform, char *reason, size_t reason_size)
{
    cl_uint count = 0;
    cl_int error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &count);
    platform_note(platform, error, count);
    if (error == CL_DEVICE_NOT_FOUND || count == 0)
        return CL_SUCCESS;
    if (error != CL_SUCCESS)
        return error;
    /* Past TP_MAX_DEVICES none is kept: the runtime's count sizes nothing larger. */
    if (count > (cl_uint)(TP_MAX_DEVICES - module.device_count))
        count = (cl_uint)(TP_MAX_DEVICES - module.device_count);
    if (count == 0)
        return CL_SUCCESS;
    cl_device_id *ids = calloc(count, sizeof *ids);
    ocl_device *grown = realloc(module.devices, (size_t)(module.device_count + (int)count) * sizeof *grown);
    if (!ids || !grown) {
        free(ids);
        if (grown)
            module.devices = grown;
        snprintf(reason, reason_size, "opencl: out of memory listing devices");
        return CL_OUT_OF_HOST_MEMORY;
    }
    module.devices = grown;
    error = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids, NULL);
    for (cl_uint i = 0; error == CL_SUCCESS && i < count && module.device_count < TP_MAX_DEVICES; i++) {
        ocl_device *device = &module.devices[module.device_count];
        *device = (ocl_device){.index = module.device_count, .platform = platform, .id = ids[i]};
        clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof device->platform_name, device->platform_name, NULL);
        clGetDeviceInfo(ids[i], CL_DEVICE_NAME, sizeof device->name, device->name, NULL);
        bool pocl = strcmp(device->platform_name, "Portable Computing Language") == 0;
        device->submitted_marker_means_idle = pocl;
        device->hold_window = hold_window(pocl);
        cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
        device->context = clCreateContext(properties, 1, &ids[i], NULL, NULL, &error);
        if (error != CL_SUCCESS) {
            snprintf(reason, reason_size, "opencl: clCreateContext for %s (%s): %s", device->name,
                     device->platform_name, tp_ocl_error_name(error));
            break;
        }
        clock_init(&device->clock);
        pthread_mutex_init(&device->lock, NULL);
        module.device_count++;
    }
    free(ids);
    return error;
}

/*
 * The Khronos ICD loader (Ubuntu's libOpenCL, the H200's) splits OCL_ICD_FILENAMES
 * and OPENCL_LAYERS in place, in the process's own environment: it writes '\0' over
 * each ':' of getenv's string ("the input string may be modified", loader/icd.c's
 * loader_get_next_path). Every process started afterwards then inherits the first
 * entry alone: on the H200 a child found PoCL and not NVIDIA's OpenCL. Its first
 * call (which is when it splits them) is the one below, so the bytes are copied
 * before and written back after, into the same string. Debian's ocl-icd copies the
 * string and leaves it alone. getenv, not tp_env: the environment's own bytes.
 */
static const char *const loader_variables[] = {"OCL_ICD_FILENAMES", "OPENCL_LAYERS"};
enum { LOADER_VARIABLES = sizeof loader_variables / sizeof loader_variables[0] };

typedef struct loader_variable {
    char *value; /* getenv's string: the environment's bytes; NULL if unset */
    char *kept;  /* a copy (NULL if unset or out of memory: then left as it is) */
} loader_variable;

static void loader_environment_keep(loader_variable kept[LOADER_VARIABLES])
{
    for (int i = 0; i < LOADER_VARIABLES; i++) {
        kept[i].value = getenv(loader_variables[i]);
        kept[i].kept = kept[i].value ? strdup(kept[i].value) : NULL;
    }
}

static void loader_environment_restore(loader_variable kept[LOADER_VARIABLES])
{
    for (int i = 0; i < LOADER_VARIABLES; i++) {
        /* Only into the very string the loader wrote into, which was that long. */
        if (kept[i].kept && getenv(loader_variables[i]) == kept[i].value)
            memcpy(kept[i].value, kept[i].kept, strlen(kept[i].kept));
        free(kept[i].kept);
    }
}

tp_status tp_ocl_module_init(const tp_host *host, const tp_backend *table, char *reason, size_t reason_size)
{
    module.host = host;
    module.table = table;
    module.verbose = tp_env("TPEVENT_OPENCL_VERBOSE") != NULL;
    if (!hold_window_setting_read(reason, reason_size))
        return TP_ERR_BACKEND_UNAVAILABLE;
    cl_uint count = 0;
    loader_variable kept[LOADER_VARIABLES];
    loader_environment_keep(kept);
    cl_int error = clGetPlatformIDs(0, NULL, &count);
    loader_environment_restore(kept);
    platforms_note(error, count);
    if (error != CL_SUCCESS || count == 0) {
        snprintf(reason, reason_size,
                 "opencl: no OpenCL platform (clGetPlatformIDs: %s; the ICD loader found no driver in "
                 "/etc/OpenCL/vendors or OCL_ICD_FILENAMES; on Debian, pocl-opencl-icd is one)",
                 error != CL_SUCCESS ? tp_ocl_error_name(error) : "0 platforms");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    cl_platform_id *platforms = calloc(count, sizeof *platforms);
    if (!platforms) {
        snprintf(reason, reason_size, "opencl: out of memory listing platforms");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    error = clGetPlatformIDs(count, platforms, NULL);
    for (cl_uint i = 0; error == CL_SUCCESS && i < count; i++)
        error = add_platform_devices(platforms[i], reason, reason_size);
    free(platforms);
    if (error != CL_SUCCESS) {
        if (reason[0] == '\0')
            snprintf(reason, reason_size, "opencl: listing devices: %s", tp_ocl_error_name(error));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}
