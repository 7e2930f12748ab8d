/*
 * A device string of one type never loads another type's module (docs/design.md, plugins;
 * issue 18 item 7). This program links the main libtpevent.so, which has the real
 * libtpevent-cuda.so and libtpevent-hip.so beside it when they were built, uses the
 * device type given on the command line in every call that takes a device string
 * with no index ("cpu": the thread's current index of that type), and checks that no
 * module or runtime of another type got mapped into the process. CTest runs it with
 * TPEVENT_DEVICE unset and set to each type.
 *
 *   one_type_test <type> [<expected index of "<type>">]
 *
 * At the end it asks for the other types itself, so that it sees their modules
 * mapped where they exist: the check that they were not mapped before then is no
 * check at all when the names it looks for never show up.
 */
#define _GNU_SOURCE

#include <tpevent/tpevent.h>

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            failures++;                                                              \
        }                                                                            \
    } while (0)

/* What loading each GPU type maps: its module, and the runtime that pulls in. */
static const char *const mapped_by_type[][3] = {
    {"cpu", NULL, NULL},
    {"cuda", "libtpevent-cuda", "libcuda.so"},
    {"hip", "libtpevent-hip", "libamdhip64"},
};
enum { type_count = sizeof mapped_by_type / sizeof mapped_by_type[0] };

typedef struct search {
    const char *needle;
    const char *found;
} search;

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    search *s = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (strncmp(base, s->needle, strlen(s->needle)) == 0) {
        s->found = name;
        return 1;
    }
    return 0;
}

static const char *mapped(const char *needle)
{
    search s = {needle, NULL};
    dl_iterate_phdr(find_object, &s);
    return s.found;
}

/* Fails for each module or runtime of a type other than `type` that is mapped. */
static void check_no_other_type(const char *type, const char *after)
{
    for (int t = 0; t < type_count; t++) {
        if (strcmp(mapped_by_type[t][0], type) == 0)
            continue;
        for (int i = 1; i < 3; i++) {
            const char *needle = mapped_by_type[t][i];
            const char *found = needle ? mapped(needle) : NULL;
            CHECK(found == NULL, "after %s, a \"%s\" call mapped %s (of the %s backend)", after, type, found,
                  mapped_by_type[t][0]);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <type> [<expected index>]\n", argv[0]);
        return 2;
    }
    const char *type = argv[1];
    int expected_index = argc > 2 ? atoi(argv[2]) : 0;
    const char *env = getenv("TPEVENT_DEVICE");
    printf("type %s, TPEVENT_DEVICE=%s\n", type, env ? env : "(unset)");

    /* Each call that takes a device string, with the type alone; the type's own
     * backend may be unusable here (no GPU), so only the mappings are checked. */
    tp_event *event = NULL;
    tp_status status = tp_event_create(&event, type, TP_EVENT_TIMING);
    printf("tp_event_create(\"%s\"): %s\n", type, status == TP_OK ? "TP_OK" : tp_last_error());
    check_no_other_type(type, "tp_event_create");
    if (status == TP_OK) {
        tp_device device;
        CHECK(tp_event_device(event, &device) == TP_OK, "%s", tp_last_error());
        CHECK(device.index == expected_index, "\"%s\" is index %d, expected %d", type, device.index, expected_index);
        CHECK(tp_event_record(event, NULL) == TP_OK, "%s", tp_last_error());
        CHECK(tp_event_synchronize(event) == TP_OK, "%s", tp_last_error());
        CHECK(tp_event_destroy(event) == TP_OK, "%s", tp_last_error());
    }
    tp_stream *stream = NULL;
    if (tp_stream_create(&stream, type, 0) == TP_OK)
        CHECK(tp_stream_destroy(stream) == TP_OK, "%s", tp_last_error());
    check_no_other_type(type, "tp_stream_create");
    if (tp_stream_current(type, &stream) == TP_OK)
        CHECK(tp_stream_synchronize(stream) == TP_OK, "%s", tp_last_error());
    (void)tp_stream_default(type, &stream);
    check_no_other_type(type, "tp_stream_current and tp_stream_default");
    (void)tp_device_synchronize(type);
    (void)tp_set_device(type);
    check_no_other_type(type, "tp_device_synchronize and tp_set_device");
    int count = -1;
    CHECK(tp_device_count(type, &count) == TP_OK, "%s", tp_last_error());
    (void)tp_backend_status(type, NULL);
    tp_backend_info info;
    CHECK(tp_backend_get_info(type, &info) == TP_OK, "%s", tp_last_error());
    check_no_other_type(type, "tp_device_count, tp_backend_status and tp_backend_get_info");

    /* The control: the other types' modules do show up once asked for, where they
     * were built and their runtime is installed. */
    for (int t = 0; t < type_count; t++) {
        if (strcmp(mapped_by_type[t][0], type) == 0 || !mapped_by_type[t][1])
            continue;
        CHECK(tp_backend_get_info(mapped_by_type[t][0], &info) == TP_OK, "%s", tp_last_error());
        const char *found = mapped(mapped_by_type[t][1]);
        printf("control: asked for %s: module %s %s\n", mapped_by_type[t][0],
               info.module_path[0] ? info.module_path : "(none)", found ? "mapped" : "not mapped");
        if (info.module_found && info.loaded)
            CHECK(found != NULL, "the %s module is loaded but dl_iterate_phdr does not show %s", mapped_by_type[t][0],
                  mapped_by_type[t][1]);
    }
    return failures ? 1 : 0;
}
