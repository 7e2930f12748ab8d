/*
 * backend_probe LIBDIR cpu=HOW cuda=HOW hip=HOW opencl=HOW
 *
 * Checks what an installed tpevent says of each backend against what the build
 * had, HOW being:
 *   builtin  linked into the library: built_in, loaded, and usable or a reason;
 *   module   a module installed in LIBDIR: module_found, its path in LIBDIR (so the
 *            core found it next to itself, with no TPEVENT_BACKEND_PATH), and usable
 *            or a reason that is not "module not found";
 *   absent   not built: not built in, no module found, unavailable with a reason.
 * The CPU backend must also be usable: one event pair is timed on it; so is one on
 * opencl:0 when OpenCL is built in and usable (PoCL in CI: the static library's
 * OpenCL backend at work).
 * Prints one line per backend; exits 1 on the first mismatch.
 */
#define _XOPEN_SOURCE 700

#include <tpevent/tpevent.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mismatch(const char *backend, const char *what)
{
    fprintf(stderr, "backend_probe: %s: %s\n", backend, what);
    return 1;
}

/* True if `path` is a file in folder `dir`, after resolving links and "..". */
static int in_folder(const char *path, const char *dir)
{
    char real_path[PATH_MAX], real_dir[PATH_MAX];
    if (!realpath(path, real_path) || !realpath(dir, real_dir))
        return 0;
    size_t n = strlen(real_dir);
    return strncmp(real_path, real_dir, n) == 0 && real_path[n] == '/' && !strchr(real_path + n + 1, '/');
}

static int check_backend(const char *name, const char *how, const char *libdir)
{
    tp_backend_info info;
    if (tp_backend_get_info(name, &info) != TP_OK)
        return mismatch(name, tp_last_error());
    printf(
        "%-4s expected %-7s built_in=%d module_found=%d loaded=%d status=%s devices=%d module=\"%s\" "
        "reason=\"%s\"\n",
        name, how, info.built_in, info.module_found, info.loaded, tp_status_name(info.status), info.device_count,
        info.module_path, info.reason);
    int usable = info.status == TP_OK;
    if (!usable && info.reason[0] == '\0')
        return mismatch(name, "unavailable without a reason");
    if (strcmp(how, "builtin") == 0) {
        if (!info.built_in || !info.loaded)
            return mismatch(name, "expected built in (and loaded)");
    } else if (strcmp(how, "module") == 0) {
        if (info.built_in)
            return mismatch(name, "expected a module, found it built in");
        if (!info.module_found)
            return mismatch(name, "its module was not found next to the installed library");
        if (!in_folder(info.module_path, libdir))
            return mismatch(name, "the module used is not the one installed in LIBDIR");
        if (strstr(info.reason, "module not found"))
            return mismatch(name, "reason says the module was not found");
    } else if (strcmp(how, "absent") == 0) {
        if (info.built_in || info.module_found || usable)
            return mismatch(name, "expected absent (not built)");
    } else {
        return mismatch(name, "usage: HOW is builtin, module or absent");
    }
    return 0;
}

static int time_on(const char *device)
{
    tp_event *start = NULL, *end = NULL;
    float ms = -1;
    if (tp_event_create(&start, device, TP_EVENT_TIMING) != TP_OK ||
        tp_event_create(&end, device, TP_EVENT_TIMING) != TP_OK || tp_event_record(start, NULL) != TP_OK ||
        tp_event_record(end, NULL) != TP_OK || tp_event_synchronize(end) != TP_OK ||
        tp_event_elapsed_time(start, end, &ms) != TP_OK || ms < 0)
        return mismatch(device, tp_last_error());
    tp_event_destroy(start);
    tp_event_destroy(end);
    printf("%s timed an empty interval: %.6f ms\n", device, ms);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: backend_probe LIBDIR cpu=HOW cuda=HOW hip=HOW opencl=HOW\n");
        return 2;
    }
    printf("tpevent %s\n", tp_version_string());
    for (int i = 2; i < argc; i++) {
        char name[16];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof name) {
            fprintf(stderr, "backend_probe: bad argument '%s'\n", argv[i]);
            return 2;
        }
        memcpy(name, argv[i], (size_t)(eq - argv[i]));
        name[eq - argv[i]] = '\0';
        if (check_backend(name, eq + 1, argv[1]))
            return 1;
    }
    if (time_on("cpu:0"))
        return 1;
    tp_backend_info opencl;
    bool opencl_usable = tp_backend_get_info("opencl", &opencl) == TP_OK && opencl.status == TP_OK;
    return opencl_usable && opencl.built_in ? time_on("opencl:0") : 0;
}
