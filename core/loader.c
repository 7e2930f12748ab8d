/*
 * Backend modules: where they are looked for, and how one is let in.
 *
 * Search order (the first file that exists is the one used; a broken file is
 * reported, not skipped, so that what runs never depends on what else happens to
 * be on the path):
 *   1. the folder of the core library itself (libtpevent.so), in the build tree and
 *      installed alike;
 *   2. each folder of TPEVENT_BACKEND_PATH, ':'-separated, in order.
 *
 * A module is dlopen'ed RTLD_LOCAL, asked for its one entry symbol, and its table
 * checked (ABI version, size, type, mandatory entries) before init is called. Every
 * failure leaves the backend unavailable with a reason naming the file and the cause.
 */
#include "core/internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool core_library_folder(char *folder, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)&tp_version_string, &info) || !info.dli_fname)
        return false;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return false;
    size_t len = (size_t)(slash - info.dli_fname);
    if (len + 1 > size)
        return false;
    memcpy(folder, info.dli_fname, len);
    folder[len] = '\0';
    return true;
}

static bool file_in_folder(const char *folder, size_t folder_len, const char *file, char *path,
                           size_t path_size)
{
    if (folder_len == 0)
        return false;
    int n = snprintf(path, path_size, "%.*s/%s", (int)folder_len, folder, file);
    return n > 0 && (size_t)n < path_size && access(path, F_OK) == 0;
}

bool tp_module_find(const char *file, char *path, size_t path_size)
{
    char folder[PATH_MAX];
    bool have_core_folder = core_library_folder(folder, sizeof folder);
    if (have_core_folder && file_in_folder(folder, strlen(folder), file, path, path_size))
        return true;

    const char *search = getenv("TPEVENT_BACKEND_PATH");
    for (const char *p = search; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (file_in_folder(p, len, file, path, path_size))
            return true;
        p = end ? end + 1 : p + len;
    }
    snprintf(path, path_size, "module not found (looked in %s, then TPEVENT_BACKEND_PATH=%s)",
             have_core_folder ? folder : "<core library folder unknown>", search ? search : "<unset>");
    return false;
}

tp_status tp_backend_check_table(const tp_backend *table, tp_device_type type, char *reason,
                                 size_t reason_size)
{
    if (!table) {
        snprintf(reason, reason_size, "entry returned no table");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->abi_version != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "speaks backend ABI version %u, this core speaks %u",
                 (unsigned)table->abi_version, (unsigned)TP_BACKEND_ABI_VERSION);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->size < sizeof(tp_backend)) {
        snprintf(reason, reason_size, "its table has %u bytes, this core needs %zu", (unsigned)table->size,
                 sizeof(tp_backend));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->type != type || !table->name || strcmp(table->name, tp_device_type_name(type)) != 0) {
        snprintf(reason, reason_size, "is the backend for '%s', not '%s'", table->name ? table->name : "?",
                 tp_device_type_name(type));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    /* What every backend must offer; the rest may be NULL (TP_ERR_UNSUPPORTED). */
    const char *missing = !table->init                 ? "init"
                          : !table->device_count       ? "device_count"
                          : !table->stream_default     ? "stream_default"
                          : !table->stream_create      ? "stream_create"
                          : !table->stream_destroy     ? "stream_destroy"
                          : !table->event_create       ? "event_create"
                          : !table->event_destroy      ? "event_destroy"
                          : !table->event_record       ? "event_record"
                          : !table->event_query        ? "event_query"
                          : !table->event_synchronize  ? "event_synchronize"
                          : !table->stream_wait_event  ? "stream_wait_event"
                                                       : NULL;
    if (missing) {
        snprintf(reason, reason_size, "its table has no '%s' entry", missing);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}

/* Writes "<path>: <cause>" into reason, keeping the cause the module or libdl gave. */
static tp_status unavailable(char *reason, size_t reason_size, const char *path, const char *cause)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", cause);
    snprintf(reason, reason_size, "%s: %s", path, copy);
    return TP_ERR_BACKEND_UNAVAILABLE;
}

tp_status tp_module_load(const char *path, tp_device_type type, const tp_backend **out, void **dl_handle,
                         char *reason, size_t reason_size)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *error = dlerror();
        return unavailable(reason, reason_size, path, error ? error : "dlopen failed");
    }
    void *symbol = dlsym(handle, TP_BACKEND_ENTRY_SYMBOL);
    if (!symbol) {
        dlclose(handle);
        return unavailable(reason, reason_size, path, "not a tpevent backend: no '" TP_BACKEND_ENTRY_SYMBOL
                                                      "' symbol");
    }
    tp_backend_entry_fn entry;
    memcpy(&entry, &symbol, sizeof entry); /* object-to-function pointer, as POSIX allows */

    char cause[1024] = "";
    const tp_backend *table = NULL;
    tp_status status = entry(TP_BACKEND_ABI_VERSION, &table, cause, sizeof cause);
    if (status == TP_OK)
        status = tp_backend_check_table(table, type, cause, sizeof cause);
    if (status != TP_OK) {
        dlclose(handle);
        return unavailable(reason, reason_size, path, cause[0] ? cause : "its entry refused to load");
    }
    /* From here the module may have started its runtime: it stays mapped even if
     * init fails, since unmapping code that left threads or handlers behind is
     * what would crash. */
    *dl_handle = handle;
    status = table->init(&tp_core_host, cause, sizeof cause);
    if (status != TP_OK)
        return unavailable(reason, reason_size, path, cause[0] ? cause : "init failed without a reason");
    *out = table;
    return TP_OK;
}
