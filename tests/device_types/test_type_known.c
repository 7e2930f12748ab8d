/*
 * Prints what the core it was loaded with says of a device type: the status of
 * tp_backend_get_info, and on success whether the backend is loaded, its device
 * count and its module's path; else tp_last_error(). check_test_type.cmake runs it
 * against the main core and the test core.
 *
 *   tpevent_test_type_known <type>
 */
#include <tpevent/tpevent.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <type>\n", argv[0]);
        return 2;
    }
    tp_backend_info info;
    tp_status status = tp_backend_get_info(argv[1], &info);
    printf("status: %s\n", tp_status_name(status));
    if (status != TP_OK) {
        printf("error: %s\n", tp_last_error());
        return 0;
    }
    printf("loaded: %d\ndevices: %d\nmodule: %s\nreason: %s\n", info.loaded ? 1 : 0, info.device_count,
           info.module_path, info.reason);
    return 0;
}
