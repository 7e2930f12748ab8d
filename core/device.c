/*
 * Device strings and the calling thread's current device.
 *
 * Grammar, strict on purpose (a typo must not silently pick another device):
 *     device := type [ ":" index ]
 *     type   := "cpu" | "cuda" | "hip"
 *     index  := "0" | [1-9][0-9]*        (below TP_MAX_DEVICES)
 */
#include "core/internal.h"
#include "common/env.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_NAME "cpu"
#define CUDA_NAME "cuda"
#define HIP_NAME "hip"

static const char *const type_names[TP_DEVICE_TYPE_COUNT] = {
    [TP_DEVICE_CPU] = CPU_NAME,
    [TP_DEVICE_CUDA] = CUDA_NAME,
    [TP_DEVICE_HIP] = HIP_NAME,
};

/*
 * TP_DEVICE_STRING_MAX holds the longest string tp_device_str can write: a type name
 * (or "?"), ':' and any int, whatever index it is given (tp_device_format only ever
 * writes indices below TP_MAX_DEVICES).
 */
#define LONGEST_INDEX ":-2147483648"
_Static_assert(INT_MIN == -2147483647 - 1, "LONGEST_INDEX is INT_MIN's text");
_Static_assert(sizeof CPU_NAME - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX &&
                   sizeof CUDA_NAME - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX &&
                   sizeof HIP_NAME - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX &&
                   sizeof "?" - 1 + sizeof LONGEST_INDEX <= TP_DEVICE_STRING_MAX,
               "TP_DEVICE_STRING_MAX is too small for a device string tp_device_str writes");

/* The order in which the default device is chosen when TPEVENT_DEVICE is unset. */
static const tp_device_type default_preference[TP_DEVICE_TYPE_COUNT] = {
    TP_DEVICE_CUDA, TP_DEVICE_HIP, TP_DEVICE_CPU};

const char *tp_device_type_name(tp_device_type type)
{
    if ((unsigned)type >= TP_DEVICE_TYPE_COUNT)
        return NULL;
    return type_names[type];
}

const char *tp_device_str(tp_device device, char buf[static TP_DEVICE_STRING_MAX])
{
    const char *name = tp_device_type_name(device.type);
    if (device.index == TP_DEVICE_INDEX_CURRENT)
        snprintf(buf, TP_DEVICE_STRING_MAX, "%s", name ? name : "?");
    else
        snprintf(buf, TP_DEVICE_STRING_MAX, "%s:%d", name ? name : "?", device.index);
    return buf;
}

tp_status tp_device_format(tp_device device, char *buf, size_t size)
{
    char text[TP_DEVICE_STRING_MAX];
    if (!buf || size == 0)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_format: buf is NULL or size is 0");
    if (!tp_device_type_name(device.type))
        return tp_fail(TP_ERR_INVALID_DEVICE, "tp_device_format: device type %d is not a tp_device_type",
                       (int)device.type);
    if (device.index < TP_DEVICE_INDEX_CURRENT || device.index >= TP_MAX_DEVICES)
        return tp_fail(TP_ERR_INVALID_DEVICE, "tp_device_format: index %d out of range", device.index);
    tp_device_str(device, text);
    if (strlen(text) >= size)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_format: \"%s\" needs %zu bytes, buf has %zu",
                       text, strlen(text) + 1, size);
    memcpy(buf, text, strlen(text) + 1);
    return TP_OK;
}

static const char expected_form[] =
    "expected \"<type>\" or \"<type>:<index>\" with type cpu, cuda or hip and a decimal index";

/* The type at the start of str, and where it ends (at ':' or the end), or NULL.
 * Written out by hand: device strings are parsed on every create, so no strlen,
 * strchr or memcmp on the way. */
static const char *match_type(const char *str, tp_device_type *type)
{
    for (int t = 0; t < TP_DEVICE_TYPE_COUNT; t++) {
        const char *name = type_names[t], *p = str;
        while (*name && *p == *name)
            p++, name++;
        if (*name == '\0' && (*p == ':' || *p == '\0')) {
            *type = (tp_device_type)t;
            return p;
        }
    }
    return NULL;
}

static tp_status unknown_type(const char *str)
{
    size_t type_len = strcspn(str, ":");
    if (type_len == 0)
        return tp_fail(TP_ERR_INVALID_DEVICE, "missing device type in \"%s\": %s", str, expected_form);
    return tp_fail(TP_ERR_INVALID_DEVICE, "unknown device type '%.*s' in \"%s\" (known: cpu, cuda, hip)",
                   (int)type_len, str, str);
}

static tp_status parse_index(const char *whole, const char *digits, int *index)
{
    if (*digits == '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "missing device index after ':' in \"%s\": %s", whole,
                       expected_form);
    if (*digits == '+' || *digits == '-')
        return tp_fail(TP_ERR_INVALID_DEVICE, "signed device index in \"%s\": %s", whole, expected_form);
    long value = 0;
    const char *p = digits;
    for (; *p >= '0' && *p <= '9'; p++) {
        value = value * 10 + (*p - '0');
        if (value >= TP_MAX_DEVICES)
            return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" is too large (at most %d)", whole,
                           TP_MAX_DEVICES - 1);
    }
    if (p == digits)
        return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" is not a decimal number: %s", whole,
                       expected_form);
    if (*p != '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "unexpected '%c' after the device index in \"%s\": %s", *p,
                       whole, expected_form);
    if (digits[0] == '0' && p - digits > 1)
        return tp_fail(TP_ERR_INVALID_DEVICE, "device index in \"%s\" has a leading zero: %s", whole,
                       expected_form);
    *index = (int)value;
    return TP_OK;
}

tp_status tp_device_parse(const char *str, tp_device *out)
{
    if (!str)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_parse: device string is NULL");
    if (!out)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_device_parse: out is NULL");
    if (*str == '\0')
        return tp_fail(TP_ERR_INVALID_DEVICE, "empty device string: %s", expected_form);

    tp_device device = {.index = TP_DEVICE_INDEX_CURRENT};
    const char *rest = match_type(str, &device.type);
    if (!rest)
        return unknown_type(str);
    tp_status status = TP_OK;
    if (*rest == ':')
        status = parse_index(str, rest + 1, &device.index);
    if (status != TP_OK)
        return status;
    *out = device;
    return TP_OK;
}

static tp_status check_index(tp_device device, const char *str, int count)
{
    char text[TP_DEVICE_STRING_MAX];
    if (device.index < count)
        return TP_OK;
    return tp_fail(TP_ERR_INVALID_DEVICE, "device index %d out of range in \"%s\": %s has %d device%s",
                   device.index, str ? str : tp_device_str(device, text), type_names[device.type], count,
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
            snprintf(process_default.message, sizeof process_default.message, "TPEVENT_DEVICE=%s: %s",
                     env, tp_last_error());
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
    snprintf(process_default.message, sizeof process_default.message,
             "no backend is available, not even cpu: %s", tp_last_error());
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
    /* Parsed by hand rather than by tp_device_parse, which would set this thread's
     * last error for a bad value that the caller of "cpu" never asked about. */
    if (env && match_type(env, &device.type))
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
    tp_device device;
    const tp_backend *backend;
} thread_resolved;

/* str equals the cached text (never empty: an empty cache matches nothing). Stops
 * at the first difference, so no byte of str past its NUL is read. */
static bool matches_resolved(const char *str)
{
    const char *cached = thread_resolved.text;
    const char *p = cached;
    while (*p && *p == *str)
        p++, str++;
    return *p == '\0' && *str == '\0' && p != cached;
}

static void remember_resolved(const char *str, tp_device device, const tp_backend *backend)
{
    size_t len = strnlen(str, RESOLVED_TEXT_MAX);
    if (len == RESOLVED_TEXT_MAX)
        return;
    memcpy(thread_resolved.text, str, len + 1);
    thread_resolved.device = device;
    thread_resolved.backend = backend;
}

tp_status tp_device_resolve(const char *str, tp_device *device, const tp_backend **backend)
{
    if (str && TP_LIKELY(matches_resolved(str))) {
        *device = thread_resolved.device;
        *backend = thread_resolved.backend;
        return TP_OK;
    }
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
