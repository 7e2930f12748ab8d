/*
 * tp_range_push/pop and tp_stream_set_name reach the runtime's profiling tools (issue
 * 32): on a CUDA device (the fake GPU in CI, cuda:0 on the H200) with an NVTX tool
 * attached (nvtx_injection.c, through NVTX_INJECTION64_PATH, as Nsight Systems
 * attaches), whether or not a tpevent trace runs. The tool's log (TPEVENT_NVTX_LOG)
 * must then read, in order: the two pushes, the two pops, and on real CUDA the
 * stream's name.
 *
 * Usage: tpevent_trace_tool_ranges DEVICE LOG   (exit 77: the device is unusable)
 */
#include <tpevent/tpevent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    fprintf(stderr, "tool_ranges: %s (%s)\n", what, tp_last_error());
    return 1;
}

/* The log's lines, in order, joined by '|'. */
static void read_log(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    FILE *file = fopen(path, "r");
    char line[256];
    while (file && fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = '\0';
        if (strlen(out) + strlen(line) + 2 < size) {
            strcat(out, out[0] ? "|" : "");
            strcat(out, line);
        }
    }
    if (file)
        fclose(file);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *device = argv[1], *log = argv[2];
    remove(log);
    tp_stream *stream = NULL;
    if (tp_stream_create(&stream, device, 0) != TP_OK) {
        printf("skipped: %s\n", tp_last_error());
        return 77;
    }
    if (tp_stream_set_name(stream, "consumer") != TP_OK)
        return fail("tp_stream_set_name");
    if (tp_range_push(stream, "step") != TP_OK || tp_range_push(stream, "load") != TP_OK)
        return fail("tp_range_push");
    if (tp_range_pop(stream) != TP_OK || tp_range_pop(stream) != TP_OK)
        return fail("tp_range_pop");
    /* While a trace runs too: the tool gets the range, and the trace has it. */
    if (tp_trace_start() != TP_OK || tp_range_push(stream, "traced") != TP_OK || tp_range_pop(stream) != TP_OK)
        return fail("a range while a trace runs");
    char trace_path[512];
    snprintf(trace_path, sizeof trace_path, "%s.json", log);
    if (tp_trace_stop(trace_path) != TP_OK)
        return fail("tp_trace_stop");
    remove(trace_path);
    if (tp_stream_destroy(stream) != TP_OK)
        return fail("tp_stream_destroy");

    char got[1024];
    read_log(log, got, sizeof got);
    const char *named = strncmp(device, "cuda", 4) == 0 && getenv("TOOL_RANGES_FAKE") == NULL ? "stream consumer|" : "";
    char want[512];
    snprintf(want, sizeof want, "attached|%spush step|push load|pop|pop|push traced|pop", named);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "tool_ranges: the tool's log reads\n  %s\nnot\n  %s\n", got, want);
        return 1;
    }
    printf("the tool saw: %s\n", got);
    return 0;
}
