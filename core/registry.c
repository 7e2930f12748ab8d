/*
 * The list of backends (as SDL lists its video drivers), one per device type: how
 * to get its table (built in, or a module to load), and, once asked for, whether it
 * is usable and why not.
 *
 * A backend is loaded on first use and its verdict is final for the life of the
 * process: a module is loaded at most once, and a failure is reported the same way
 * every time it is asked. The fast path (already loaded) is one acquire load.
 */
#include "core/internal.h"
#include "core/builtin_backends.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#ifndef TPEVENT_MODULE_SUFFIX
#define TPEVENT_MODULE_SUFFIX ".so"
#endif

enum slot_state { SLOT_UNTRIED = 0, SLOT_READY, SLOT_UNAVAILABLE };

/* A slot's name is its type's (tp_device_type_name): the module file, the messages
 * and tp_backend_info use it. */
typedef struct backend_slot {
    tp_backend_entry_fn builtin_entry; /* NULL: loaded from a module */

    _Atomic int state;         /* enum slot_state; written once, under registry_lock */
    const tp_backend *backend; /* valid once state == SLOT_READY */
    int device_count;
    bool module_found;
    void *dl_handle;
    char module_path[PATH_MAX];
    char reason[1024];
} backend_slot;

#define SLOT_OF(upper, name, value, kind) [value] = {.builtin_entry = TP_BUILTIN_ENTRY_##upper},
static backend_slot slots[TP_DEVICE_TYPE_COUNT] = {TP_DEVICE_TYPES(SLOT_OF)};
#undef SLOT_OF

__attribute__((visibility("hidden"))) atomic_bool tp_range_tools_flag;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static int type_loading = -1; /* under registry_lock: the slot start_slot is starting */

static tp_status start_builtin(backend_slot *slot, tp_device_type type)
{
    const tp_backend *table = NULL;
    tp_status status = slot->builtin_entry(TP_BACKEND_ABI_VERSION, &table, slot->reason, sizeof slot->reason);
    if (status != TP_OK)
        return status;
    status = tp_backend_check_table(table, type, slot->reason, sizeof slot->reason);
    if (status != TP_OK)
        return status;
    status = table->init(&tp_core_host, slot->reason, sizeof slot->reason);
    if (status != TP_OK)
        return TP_ERR_BACKEND_UNAVAILABLE;
    slot->backend = table;
    return TP_OK;
}

static tp_status start_module(backend_slot *slot, tp_device_type type)
{
    char file[64];
    snprintf(file, sizeof file, "libtpevent-%s%s", tp_device_type_name(type), TPEVENT_MODULE_SUFFIX);
    char found[PATH_MAX];
    slot->module_found = tp_module_find(file, found, sizeof found);
    if (!slot->module_found) {
        /* `found` says where it looked. */
        snprintf(slot->reason, sizeof slot->reason, "%s: %.900s", file, found);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    snprintf(slot->module_path, sizeof slot->module_path, "%s", found);
    return tp_module_load(slot->module_path, type, &slot->backend, &slot->dl_handle, slot->reason, sizeof slot->reason);
}

/* Runs once per slot, under registry_lock. */
static void start_slot(backend_slot *slot, tp_device_type type)
{
    tp_status status = slot->builtin_entry ? start_builtin(slot, type) : start_module(slot, type);
    if (status == TP_OK) {
        int count = 0;
        status = slot->backend->device_count(&count);
        if (status != TP_OK)
            snprintf(slot->reason, sizeof slot->reason, "device_count failed: %s", tp_last_error());
        else if (count <= 0)
            snprintf(slot->reason, sizeof slot->reason, "%s: no device", tp_device_type_name(type));
        if (status != TP_OK || count <= 0) {
            slot->backend = NULL;
            status = TP_ERR_BACKEND_UNAVAILABLE;
        }
        slot->device_count = count;
    }
    if (status == TP_OK && slot->backend->tool_attached && slot->backend->tool_attached())
        atomic_store_explicit(&tp_range_tools_flag, true, memory_order_relaxed);
    if (status != TP_OK)
        slot->reason[sizeof slot->reason - 1] = '\0';
    else
        slot->reason[0] = '\0';
    atomic_store_explicit(&slot->state, status == TP_OK ? SLOT_READY : SLOT_UNAVAILABLE, memory_order_release);
}

/* First use of a backend: loads it. Kept out of line so that the fast path of
 * started_slot is a load and a compare. */
TP_COLD static void start_slot_once(backend_slot *slot, tp_device_type type)
{
    pthread_mutex_lock(&registry_lock);
    if (atomic_load_explicit(&slot->state, memory_order_relaxed) == SLOT_UNTRIED) {
        type_loading = (int)type;
        start_slot(slot, type);
        type_loading = -1;
    }
    pthread_mutex_unlock(&registry_lock);
}

/* fork(): a backend that another thread was loading at that moment (the lock held,
 * its module's init half done, perhaps inside its runtime) is unavailable in the
 * child, with the reason, rather than started again there or waited for forever. */
static void forget_load_in_progress_after_fork(void)
{
    if (pthread_mutex_trylock(&registry_lock) != 0 && type_loading >= 0) {
        backend_slot *slot = &slots[type_loading];
        snprintf(slot->reason, sizeof slot->reason,
                 "%s: another thread was loading this backend when the process forked: not usable in this child",
                 tp_device_type_name((tp_device_type)type_loading));
        atomic_store_explicit(&slot->state, SLOT_UNAVAILABLE, memory_order_release);
    }
    (void)pthread_mutex_init(&registry_lock, NULL);
    type_loading = -1;
}

__attribute__((constructor)) static void register_registry_fork_handler(void)
{
    (void)pthread_atfork(NULL, NULL, forget_load_in_progress_after_fork);
}

static inline backend_slot *started_slot(tp_device_type type)
{
    backend_slot *slot = &slots[type];
    if (TP_UNLIKELY(atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_UNTRIED))
        start_slot_once(slot, type);
    return slot;
}

tp_status tp_backend_acquire(tp_device_type type, const tp_backend **out, int *device_count)
{
    backend_slot *slot = started_slot(type);
    if (TP_LIKELY(atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_READY)) {
        *out = slot->backend;
        if (device_count)
            *device_count = slot->device_count;
        return TP_OK;
    }
    return tp_fail(TP_ERR_BACKEND_UNAVAILABLE, "%s backend unavailable: %s", tp_device_type_name(type), slot->reason);
}

static tp_status parse_type_only(const char *type, const char *caller, tp_device_type *out)
{
    tp_device device;
    *out = (tp_device_type)0; /* set on every path: gcc -O2 cannot see that tp_fail never returns TP_OK */
    if (!type)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "%s: type is NULL", caller);
    tp_status status = tp_device_parse(type, &device);
    if (status != TP_OK)
        return status;
    if (device.index != TP_DEVICE_INDEX_CURRENT)
        return tp_fail(TP_ERR_INVALID_DEVICE, "%s wants a backend name (" TP_KNOWN_DEVICE_TYPE_NAMES "), not \"%s\"",
                       caller, type);
    *out = device.type;
    return TP_OK;
}

tp_status tp_backend_status(const char *type, const char **reason)
{
    tp_device_type device_type;
    tp_status status = parse_type_only(type, "tp_backend_status", &device_type);
    if (status != TP_OK) {
        if (reason)
            *reason = "not a backend name (known: " TP_KNOWN_DEVICE_TYPE_NAMES ")";
        return status;
    }
    backend_slot *slot = started_slot(device_type);
    if (atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_READY) {
        if (reason)
            *reason = "";
        return TP_OK;
    }
    if (reason)
        *reason = slot->reason;
    return tp_fail(TP_ERR_BACKEND_UNAVAILABLE, "%s backend unavailable: %s", tp_device_type_name(device_type),
                   slot->reason);
}

tp_status tp_backend_get_info(const char *type, tp_backend_info *info)
{
    tp_device_type device_type;
    if (!info)
        return tp_fail(TP_ERR_INVALID_ARGUMENT, "tp_backend_get_info: info is NULL");
    tp_status status = parse_type_only(type, "tp_backend_get_info", &device_type);
    if (status != TP_OK)
        return status;
    backend_slot *slot = started_slot(device_type);
    bool ready = atomic_load_explicit(&slot->state, memory_order_acquire) == SLOT_READY;
    *info = (tp_backend_info){
        .name = tp_device_type_name(device_type),
        .built_in = slot->builtin_entry != NULL,
        .module_found = slot->module_found,
        .loaded = slot->builtin_entry != NULL || slot->dl_handle != NULL,
        .status = ready ? TP_OK : TP_ERR_BACKEND_UNAVAILABLE,
        .reason = slot->reason,
        .module_path = slot->module_path,
        .device_count = ready ? slot->device_count : 0,
    };
    return TP_OK;
}
