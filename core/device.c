/*
 * The calling thread's current device, and device strings resolved to a device and
 * its backend (device_string.c parses them); the public calls on a device.
 */
#include "core/internal.h"
#include "common/env.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The order in which the default device is chosen when TPEVENT_DEVICE is unset: the
 * list's (cmake/TpeventDeviceTypes.cmake). */
static const tp_device_type default_preference[TP_DEVICE_TYPE_COUNT] = TP_DEVICE_TYPE_PREFERENCE;

static tp_status check_index(tp_device device, const char *str, int count)
{
    char text[TP_DEVICE_STRING_MAX];
    if (device.index < count)
        return TP_OK;
    return tp_fail(TP_ERR_INVALID_DEVICE, "device index %d out of range in \"%s\": %s has %d device%s", device.index,
                   str ? str : tp_device_str(device, text), tp_device_type_name(device.type), count,
                   count == 1 ? "" : "s");
}

/* ------------------------------------------------------ current device */

/*
 * The process-wide default comes from TPEVENT_DEVICE or, failing that, from which
 * backends are usable. It is decided once: a program's default device must not
 * change under it because a driver came up later.
 */
static struct {
    pthread_once_t once;
    tp_status status;
    tp_device device;
    char message[512];
} process_default = {.once = PTHREAD_ONCE_INIT};

static void decide_process_default(void)
{
    const char *env = tp_env("TPEVENT_DEVICE");
    if (env) {
        tp_device device;
        process_default.status = tp_device_parse(env, &device);
        if (process_default.status != TP_OK) {
            snprintf(process_default.message, sizeof process_default.message, "TPEVENT_DEVICE=%s: %s", env,
                     tp_last_error());
            return;
        }
        if (device.index == TP_DEVICE_INDEX_CURRENT)
            device.index = 0;
        /* Checked now, so that every call that falls back to the default says why
         * the variable is wrong rather than failing later on a device it names. */
        const tp_backend *backend;
        int count = 0;
        process_default.status = tp_backend_acquire(device.type, &backend, &count);
        if (process_default.status == TP_OK)
            process_default.status = check_index(device, env, count);
        if (process_default.status != TP_OK) {
            snprintf(process_default.message, sizeof process_default.message, "TPEVENT_DEVICE=%s: %s", env,
                     tp_last_error());
            return;
        }
        process_default.device = device;
        return;
    }
    for (int i = 0; i < TP_DEVICE_TYPE_COUNT; i++) {
        const tp_backend *backend;
        if (tp_backend_acquire(default_preference[i], &backend, NULL) == TP_OK) {
            process_default.device = (tp_device){default_preference[i], 0};
            return;
        }
    }
    process_default.status = TP_ERR_BACKEND_UNAVAILABLE;
    snprintf(process_default.message, sizeof process_default.message, "no backend is available, not even cpu: %s",
             tp_last_error());
}

static tp_status get_process_default(tp_device *out)
{
    pthread_once(&process_default.once, decide_process_default);
    if (process_default.status != TP_OK)
        return tp_fail(process_default.status, "%s", process_default.message);
    *out = process_default.device;
    return TP_OK;
}

/*
 * Per thread: the current type, and the current index of each type. Zero-initialised
 * thread storage means "not set": indices are stored plus one.
 */
static _Thread_local struct {
    bool type_set;
    tp_device_type type;
    int index_plus_one[TP_DEVICE_TYPE_COUNT];
} thread_device;

/*
 * The type TPEVENT_DEVICE names, read once; TP_DEVICE_TYPE_COUNT when it is unset,
 * empty or no device string. Whatever else the process default is, its index is 0.
 */
static struct {
    pthread_once_t once;
    tp_device_type type;
} env_device_type = {.once = PTHREAD_ONCE_INIT, .type = TP_DEVICE_TYPE_COUNT};

static void read_env_device_type(void)
{
    const char *env = tp_env("TPEVENT_DEVICE");
    tp_device device;
    /* Not tp_device_parse, which would set this thread's last error for a bad value
     * that the caller of "cpu" never asked about. */
    if (env && tp_device_type_of(env, &device.type))
        env_device_type.type = device.type;
}

static tp_status current_index_of(tp_device_type type, int *index)
{
    if (thread_device.index_plus_one[type]) {
        *index = thread_device.index_plus_one[type] - 1;
        return TP_OK;
    }
    /*
     * Not set on this thread: the process default's index if it is of this type,
     * else 0. Only a TPEVENT_DEVICE of this type can make the default's index
     * anything but 0, and deciding the default without it loads the cuda and hip
     * modules in turn: a device string of one type never loads another type's module,
     * so the default is only looked at when the variable names this type (and then
     * deciding it loads this type's backend alone).
     */
    *index = 0;
    pthread_once(&env_device_type.once, read_env_device_type);
    if (env_device_type.type != type)
        return TP_OK;
    tp_device fallback = {TP_DEVICE_CPU, 0};
    if (get_process_default(&fallback) == TP_OK && fallback.type == type)
        *index = fallback.index;
    return TP_OK;
}

static tp_status current_device(tp_device *out)
{
    if (TP_UNLIKELY(!thread_device.type_set)) {
        /* The thread starts on the process default, which never changes: adopt it
         * once, so that later calls are thread-local reads. */
        tp_device fallback = {TP_DEVICE_CPU, 0};
        tp_status status = get_process_default(&fallback);
        if (status != TP_OK)
            return status;
        thread_device.type_set = true;
        thread_device.type = fallback.type;
        if (!thread_device.index_plus_one[fallback.type])
            thread_device.index_plus_one[fallback.type] = fallback.index + 1;
    }
    out->type = thread_device.type;
    return current_index_of(out->type, &out->index);
}

/*
 * The last device string this thread resolved to a usable device with an explicit
 * index, and what it resolved to. Programs name the same device over and over
 * ("cuda:0" on every create); a byte compare of the cached copy skips the parse and
 * the registry. Safe to keep: a backend found usable stays so for the process.
 */
#define RESOLVED_TEXT_MAX 16
static _Thread_local struct {
    char text[RESOLVED_TEXT_MAX];
    size_t length; /* of text; 0: nothing cached */
    tp_device device;
    const tp_backend *backend;
} thread_resolved;

/* str equals the cached text (an empty cache matches nothing). libc's strcmp: it
 * reads no byte of str past its NUL, and compares a short string in a few vector
 * steps where a byte loop took 44 instructions for "cuda:0" (callgrind). */
static bool matches_resolved(const char *str)
{
    return thread_resolved.length != 0 && strcmp(str, thread_resolved.text) == 0;
}

static void remember_resolved(const char *str, tp_device device, const tp_backend *backend)
{
    size_t len = strnlen(str, RESOLVED_TEXT_MAX);
    if (len == RESOLVED_TEXT_MAX)
        return;
    memcpy(thread_resolved.text, str, len + 1);
    thread_resolved.length = len;
    thread_resolved.device = device;
    thread_resolved.backend = backend;
}

/* A device string not cached, or NULL: parsed, or the thread's current device. */
TP_NOINLINE static tp_status resolve_uncached(const char *str, tp_device *device, const tp_backend **backend)
{
    tp_status status;
    bool explicit_index = false;
    if (str) {
        status = tp_device_parse(str, device);
        explicit_index = status == TP_OK && device->index != TP_DEVICE_INDEX_CURRENT;
        if (status == TP_OK && !explicit_index)
            status = current_index_of(device->type, &device->index);
    } else {
        status = current_device(device);
    }
    if (status != TP_OK)
        return status;
    int count = 0;
    status = tp_backend_acquire(device->type, backend, &count);
    if (TP_UNLIKELY(status != TP_OK))
        return status;
    if (TP_UNLIKELY(device->index >= count))
        return check_index(*device, str, count);
    if (explicit_index) /* "cuda" follows the thread's current index: not cached */
        remember_resolved(str, *device, *backend);
    return TP_OK;
}

/* The cached case inline and the rest a tail call, so that a hit needs no frame. */
tp_status tp_device_resolve(const char *str, tp_device *device, const tp_backend **backend)
{
    if (str && TP_LIKELY(matches_resolved(str))) {
        *device = thread_resolved.device;
        *backend = thread_resolved.backend;
        return TP_OK;
    }
    return resolve_uncached(str, device, backend);
}

tp_status tp_set_device(const char *str)
{
    tp_device device;
    const tp_backend *backend;
    if (!str)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_set_device: device string is NULL");
    tp_status status = tp_device_resolve(str, &device, &backend);
    if (status != TP_OK)
        return status;
    thread_device.type_set = true;
    thread_device.type = device.type;
    thread_device.index_plus_one[device.type] = device.index + 1;
    return TP_OK;
}

tp_status tp_current_device(tp_device *out)
{
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_current_device: out is NULL");
    tp_device device;
    tp_status status = current_device(&device);
    if (status == TP_OK)
        *out = device;
    return status;
}

tp_status tp_device_count(const char *type, int *count)
{
    if (!type || !count)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_count: %s is NULL", type ? "count" : "type");
    tp_device device;
    tp_status status = tp_device_parse(type, &device);
    if (status != TP_OK)
        return status;
    if (device.index != TP_DEVICE_INDEX_CURRENT)
        return tp_fail(TP_ERR_INVALID_DEVICE, "tp_device_count wants a device type, not \"%s\"", type);
    const tp_backend *backend;
    if (tp_backend_acquire(device.type, &backend, count) != TP_OK)
        *count = 0;
    return TP_OK;
}

tp_status tp_device_synchronize(const char *str)
{
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->device_synchronize)
        return tp_fail(TP_ERR_UNSUPPORTED, "%s backend does not support device_synchronize", backend->name);
    return backend->device_synchronize(device.index);
}

tp_status tp_device_name(const char *str, char *buf, size_t size)
{
    tp_device device;
    const tp_backend *backend;
    if (!buf || size == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_name: buf is NULL or size is 0");
    tp_status status = tp_device_resolve(str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->device_name)
        return tp_fail(TP_ERR_UNSUPPORTED, "%s backend does not support device_name", backend->name);
    return backend->device_name(device.index, buf, size);
}

/* ------------------------------------------------------ diagnostics */

tp_status tp_native_sample(const char *device_str, tp_native_op op, uint64_t *samples_ns, size_t count)
{
    tp_device device;
    const tp_backend *backend;
    if (!samples_ns || count == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_native_sample: samples_ns is NULL or count is 0");
    if ((unsigned)op >= TP_NATIVE_OP_COUNT)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_native_sample: unknown op %d", (int)op);
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->native_sample)
        return tp_fail(TP_ERR_UNSUPPORTED, "%s backend has no native runtime to sample", backend->name);
    return backend->native_sample(device.index, op, samples_ns, count);
}

tp_status tp_device_wait_mechanism(const char *device_str, char *buf, size_t size)
{
    tp_device device;
    const tp_backend *backend;
    if (!buf || size == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_wait_mechanism: buf is NULL or size is 0");
    tp_status status = tp_device_resolve(device_str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->wait_mechanism)
        return tp_unsupported(backend, "waits on records of other backends");
    return backend->wait_mechanism(device.index, buf, size);
}

/* Rule 13: the device's timer resolution and calibration. */
tp_status tp_device_clock(const char *str, tp_clock_info *info)
{
    if (!info)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_clock: info is NULL");
    tp_device device;
    const tp_backend *backend;
    tp_status status = tp_device_resolve(str, &device, &backend);
    if (status != TP_OK)
        return status;
    if (!backend->device_clock)
        return tp_unsupported(backend, "tp_device_clock");
    return backend->device_clock(device.index, info);
}
