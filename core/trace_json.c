/*
 * Writes a collected trace (core/trace.c) as Chrome trace-event JSON, the format
 * Perfetto and chrome://tracing open:
 *
 *   {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}
 *
 *   - "M" process_name per device (pid: 1, 2, ... in order of first sight) and
 *     thread_name per stream (tid: 1, 2, ..., unique in the file), with the
 *     stream's native handle, device and priority in args;
 *   - "X" per range, in the order pushed: ts and dur in us with ns precision, on
 *     CLOCK_MONOTONIC: ts is tp_event_timestamp of its start record, dur
 *     tp_event_elapsed_time of its two records (the device's own clock);
 *   - "s"/"f" ("bp":"e") per wait, with one id, from the mark before the record
 *     waited for to the mark after the wait.
 *
 * Slices of one track must nest (DESIGN.md, pitfalls). On one clock they do by
 * construction; where a device's two clocks (host-clock start, device-clock
 * duration) disagree by a few ns, a slice is moved inside its parent and after its
 * previous sibling, and args.adjusted_ns says by how much. A flow whose start would
 * come after its end (two devices' clocks, within their error_ns) starts at its end.
 */
#include "core/trace.h"
#include "common/clock.h"

#include <inttypes.h>
#include <stdlib.h>

typedef struct span {
    int64_t start, end;
    int depth;
    bool written;
} span;

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF); 0 if there is none. */
static int utf8_length(const unsigned char *s)
{
    int n = s[0] < 0x80                    ? 1
            : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
            : s[0] >= 0xe0 && s[0] <= 0xef ? 3
            : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                           : 0;
    unsigned char low = 0x80, high = 0xbf; /* the second byte's range */
    if (s[0] == 0xe0)
        low = 0xa0;
    else if (s[0] == 0xed)
        high = 0x9f;
    else if (s[0] == 0xf0)
        low = 0x90;
    else if (s[0] == 0xf4)
        high = 0x8f;
    for (int i = 1; i < n; i++)
        if (s[i] < (i == 1 ? low : 0x80) || s[i] > (i == 1 ? high : 0xbf))
            return 0;
    return n;
}

/* A JSON string. JSON is UTF-8: a byte that does not start a well-formed sequence
 * (a name in Latin-1, a cut multi-byte character) is written as U+FFFD. */
static void put_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_length(s);
        if (n == 0)
            fputs("\\ufffd", f), n = 1;
        else if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s < 0x20 || *s == 0x7f)
            fprintf(f, "\\u%04x", *s);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n;
    }
    fputc('"', f);
}

/* ns as us with three decimals, exactly. */
static void put_us(FILE *f, int64_t ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

/* Waits for the trace's own event (never NULL) until the deadline at most. The
 * core's timed wait also refuses at once a wait from a host function on the
 * record's stream that the record comes after (rule 15). */
static tp_status reached(tp_event *event, uint64_t deadline_ns)
{
    uint64_t now = tp_now_ns();
    tp_status status = tp_event_synchronize_for(event, now < deadline_ns ? (int64_t)(deadline_ns - now) : 0);
    if (status == TP_ERR_NOT_READY)
        status = tp_fail(TP_ERR_NOT_READY,
                         "tp_trace_stop: a record of the trace was not reached within the time allowed "
                         "(TPEVENT_TRACE_STOP_TIMEOUT_MS; is a host function holding its stream?): the trace is "
                         "dropped");
    return status;
}

static tp_status reached_time(tp_event *event, uint64_t deadline_ns, int64_t *ns)
{
    tp_status status = reached(event, deadline_ns);
    return status == TP_OK ? tp_event_timestamp(event, ns) : status;
}

/* The range's span on its device, moved inside its parent and after its previous
 * sibling (both computed before it: they were pushed earlier). */
static tp_status range_span(const trace_state *t, size_t i, uint64_t deadline_ns, span *spans, int64_t *adjusted)
{
    const trace_range *r = &t->ranges[i];
    int64_t start = 0;
    float ms = 0;
    tp_status status = reached_time(r->start, deadline_ns, &start);
    if (status == TP_OK)
        status = reached(r->end, deadline_ns);
    if (status == TP_OK)
        status = tp_event_elapsed_time(r->start, r->end, &ms);
    if (status != TP_OK)
        return status;
    double ns = (double)ms * 1e6;
    int64_t end = start + (int64_t)(ns + (ns < 0 ? -0.5 : 0.5)), s = start, e = end;
    /* Nested in the nearest enclosing range written (one pushed inside a capture
     * is left out). */
    uint32_t parent = r->parent;
    while (parent != TRACE_NONE && !spans[parent].written)
        parent = t->ranges[parent].parent;
    if (parent != TRACE_NONE) {
        s = s < spans[parent].start ? spans[parent].start : s;
        e = e > spans[parent].end ? spans[parent].end : e;
    }
    if (r->prev != TRACE_NONE && spans[r->prev].written && s < spans[r->prev].end)
        s = spans[r->prev].end;
    if (e < s)
        e = s;
    spans[i] = (span){s, e, parent == TRACE_NONE ? 0 : spans[parent].depth + 1, true};
    *adjusted = (s - start) + (end - e);
    return TP_OK;
}

static void put_head(FILE *f, const char *ph, int pid, uint32_t tid, int64_t ts)
{
    fprintf(f, ",\n{\"ph\":\"%s\",\"pid\":%d,\"tid\":%" PRIu32 ",\"ts\":", ph, pid, tid + 1);
    put_us(f, ts);
}

static void put_metadata(FILE *f, const trace_state *t, const int *pids, const bool *used)
{
    bool named[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES] = {{false}};
    for (size_t i = 0; i < t->track_count; i++) {
        const trace_track *track = &t->tracks[i];
        if (!used[i])
            continue;
        char device[TP_DEVICE_STRING_MAX], name[256] = "";
        tp_device_str(track->device, device);
        if (!named[track->device.type][track->device.index]) {
            named[track->device.type][track->device.index] = true;
            if (!track->backend->device_name ||
                track->backend->device_name(track->device.index, name, sizeof name) != TP_OK)
                name[0] = '\0';
            char label[300];
            snprintf(label, sizeof label, "%s%s%s", device, name[0] ? " " : "", name);
            fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pids[i]);
            put_string(f, label);
            fprintf(f, "}}");
            fprintf(f,
                    ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"sort_index\":%d}}",
                    pids[i], pids[i]);
        }
        const char *what = (track->kind & TP_STREAM_DEFAULT)    ? "default stream"
                           : (track->kind & TP_STREAM_BORROWED) ? "wrapped stream"
                                                                : "stream";
        char label[128];
        snprintf(label, sizeof label, "%s %s %p", device, what, track->native);
        fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%zu,\"args\":{\"name\":", pids[i],
                i + 1);
        put_string(f, label);
        fprintf(f, ",\"native\":\"%p\",\"device\":\"%s\",\"priority\":%d}}", track->native, device, track->priority);
        fprintf(f,
                ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%zu,"
                "\"args\":{\"sort_index\":%zu}}",
                pids[i], i + 1, i + 1);
    }
}

static tp_status put_flows(FILE *f, const trace_state *t, const int *pids, uint64_t deadline_ns)
{
    for (size_t i = 0; i < t->flow_count; i++) {
        const trace_mark *from = &t->marks[t->flows[i].from], *to = &t->marks[t->flows[i].to];
        int64_t from_ns = 0, to_ns = 0;
        tp_status status = reached_time(from->event, deadline_ns, &from_ns);
        if (status == TP_OK)
            status = reached_time(to->event, deadline_ns, &to_ns);
        if (status != TP_OK)
            return status;
        put_head(f, "s", pids[from->track], from->track, from_ns < to_ns ? from_ns : to_ns);
        fprintf(f, ",\"name\":\"wait\",\"cat\":\"wait\",\"id\":%zu}", i + 1);
        put_head(f, "f", pids[to->track], to->track, to_ns);
        fprintf(f, ",\"bp\":\"e\",\"name\":\"wait\",\"cat\":\"wait\",\"id\":%zu}", i + 1);
    }
    return TP_OK;
}

tp_status tp_trace_write_json(const trace_state *t, FILE *f, uint64_t deadline_ns)
{
    size_t n = t->track_count;
    span *spans = calloc(t->range_count + 1, sizeof *spans);
    int *pids = calloc(n + 1, sizeof *pids);
    bool *used = calloc(n + 1, sizeof *used);
    if (!spans || !pids || !used) {
        free(spans), free(pids), free(used);
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_trace_stop: out of memory writing the trace");
    }
    /* One pid per device, in order of first sight. */
    int next_pid = 1;
    for (size_t i = 0; i < n; i++) {
        pids[i] = 0;
        for (size_t j = 0; j < i && !pids[i]; j++)
            if (t->tracks[j].device.type == t->tracks[i].device.type &&
                t->tracks[j].device.index == t->tracks[i].device.index)
                pids[i] = pids[j];
        if (!pids[i])
            pids[i] = next_pid++;
    }
    for (size_t i = 0; i < t->range_count; i++)
        if (t->ranges[i].start && t->ranges[i].end)
            used[t->ranges[i].track] = true;
    for (size_t i = 0; i < t->flow_count; i++)
        used[t->marks[t->flows[i].from].track] = used[t->marks[t->flows[i].to].track] = true;

    fprintf(f,
            "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\",\"writer\":\"tpevent %s\","
            "\"max_ranges\":%zu,\"dropped_ranges\":%zu,\"dropped_marks\":%zu},"
            "\n\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"tpevent\",\"pid\":0,\"tid\":0,\"args\":{}}",
            tp_version_string(), t->max_ranges, t->dropped_ranges, t->dropped_marks);
    put_metadata(f, t, pids, used);
    tp_status status = TP_OK;
    for (size_t i = 0; i < t->range_count && status == TP_OK; i++) {
        const trace_range *r = &t->ranges[i];
        int64_t adjusted = 0;
        if (!r->start || !r->end)
            continue; /* inside a capture, or open when its stream was destroyed */
        status = range_span(t, i, deadline_ns, spans, &adjusted);
        if (status != TP_OK)
            break;
        put_head(f, "X", pids[r->track], r->track, spans[i].start);
        fprintf(f, ",\"dur\":");
        put_us(f, spans[i].end - spans[i].start);
        fprintf(f, ",\"name\":");
        put_string(f, t->names + r->name);
        fprintf(f, ",\"cat\":\"range\",\"args\":{\"depth\":%d", spans[i].depth);
        if (adjusted)
            fprintf(f, ",\"adjusted_ns\":%" PRId64, adjusted);
        fprintf(f, "}}");
    }
    if (status == TP_OK)
        status = put_flows(f, t, pids, deadline_ns);
    fprintf(f, "\n]}\n");
    free(spans), free(pids), free(used);
    return status;
}
