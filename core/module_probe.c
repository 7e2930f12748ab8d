/*
 * tpevent-module-probe <module path> <backend name>
 *
 * Loads a backend module and runs its entry and init, in a process of its own, for
 * the core's TPEVENT_PROBE_MODULES mode: if a module crashes, aborts or hangs here,
 * the program that asked is left standing. Exits 0 if the module would be usable,
 * 3 if it reports itself unavailable (its reason on stdout), 2 on bad arguments.
 * Any other ending (a signal, or exit 1, which is how the sanitizers end a process
 * they caught) means the module took the process down.
 */
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    tp_device device;
    if (argc != 3 || tp_device_parse(argv[2], &device) != TP_OK || device.index != TP_DEVICE_INDEX_CURRENT) {
        fprintf(stderr, "usage: tpevent-module-probe <module path> <backend name>\n");
        return 2;
    }
    /* This process is the probe: it must load the module itself, not spawn another. */
    unsetenv("TPEVENT_PROBE_MODULES");
    const tp_backend *backend = NULL;
    void *handle = NULL;
    char reason[1024] = "";
    tp_status status = tp_module_load(argv[1], device.type, &backend, &handle, reason, sizeof reason);
    printf("%s%s%s\n", tp_status_name(status), reason[0] ? ": " : "", reason);
    return status == TP_OK ? 0 : 3;
}
