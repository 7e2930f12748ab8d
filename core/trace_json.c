/*
 * Writes a collected trace (core/trace.c) as Chrome trace-event JSON, the format
 * Perfetto and chrome://tracing open:
 *
 *   {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}
 *
 *   - "M" process_name per device (pid: 1, 2, ... in order of first sight) and
 *     thread_name per stream (tid: 1, 2, ..., unique in the file): the name
 *     tp_stream_set_name gave it, else "stream N"; its native handle, device and
 *     priority in args;
 *   - "X" per range, in the order pushed: ts and dur in us with ns precision, on
 *     CLOCK_MONOTONIC: ts is tp_event_timestamp of its start record, dur
 *     tp_event_elapsed_time of its two records (the device's own clock);
 *   - per wait, a flow from the mark before the record waited for to the mark
 *     after the wait: an "X" slice of no length at each mark ("record", "wait"),
 *     bound by v2 flow fields ("bind_id", "flow_out" / "flow_in").
 *
 * Why v2 flows on slices of their own: Perfetto's JSON importer
 * (src/trace_processor/importers/json/json_trace_parser_impl.cc, MaybeAddFlow, and
 * importers/common/flow_tracker.cc, FlowTracker::Begin/End) binds a v1 "s" or "f"
 * ("bp":"e") to the slice open on its track when it is read, and drops one with
 * none (stat flow_no_enclosing_slice); a mark often lies between the user's ranges
 * (a wait just before a push, a record just after a pop). A v2 flow binds to the
 * very "X" event that carries its bind_id; one "flow_out" and any number of
 * "flow_in" share it, since the record's mark may be waited on by several streams.
 * Chrome's own JSON writer emits flows this way, and chrome://tracing reads them.
 *
 * Slices of one track must nest (docs/design.md, pitfalls). On one clock they do by
 * construction; where a device's two clocks (host-clock start, device-clock
 * duration) disagree by a few ns, a slice is moved inside its parent and after its
 * previous sibling, and args.adjusted_ns says by how much; a mark's slice goes inside
 * the range open at its record and after the range closed before it, the same way.
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

/* [*s, *e] moved inside the nearest enclosing range written (one pushed inside a
 * capture is left out) and after the previous sibling, if written; its depth. */
static int nest(const trace_state *t, const span *spans, uint32_t parent, uint32_t prev, int64_t *s, int64_t *e)
{
    while (parent != TRACE_NONE && !spans[parent].written)
        parent = t->ranges[parent].parent;
    int64_t low = parent != TRACE_NONE ? spans[parent].start : INT64_MIN;
    int64_t high = parent != TRACE_NONE ? spans[parent].end : INT64_MAX;
    if (prev != TRACE_NONE && spans[prev].written && spans[prev].end > low)
        low = spans[prev].end; /* inside the same parent: at most high */
    *s = *s < low ? low : *s > high ? high : *s;
    *e = *e > high ? high : *e < *s ? *s : *e;
    return parent == TRACE_NONE ? 0 : spans[parent].depth + 1;
}

/* The range's span on its device, nested (its parent and previous sibling were
 * pushed earlier: their spans are known). */
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
    int depth = nest(t, spans, r->parent, r->prev, &s, &e);
    spans[i] = (span){s, e, depth, true};
    *adjusted = (s - start) + (end - e);
    return TP_OK;
}

/* The mark's slice: at its record, nested as a range pushed there would be, and no
 * earlier than `after` where that nesting allows: Perfetto reads events in time
 * order and drops a flow_in read before its flow_out (flow_end_without_start), which
 * two devices' clocks (within their error_ns) could otherwise cause. */
static tp_status mark_span(const trace_state *t, const trace_mark *m, const span *spans, int64_t after,
                           uint64_t deadline_ns, span *out)
{
    int64_t at = 0;
    tp_status status = reached_time(m->event, deadline_ns, &at);
    if (status != TP_OK)
        return status;
    at = at > after ? at : after;
    int64_t e = at;
    int depth = nest(t, spans, m->parent, m->prev, &at, &e);
    *out = (span){at, at, depth, true};
    return TP_OK;
}

typedef struct json_out {
    FILE *f;
    bool any; /* a record was written: the next one needs a comma */
} json_out;

static void put_head(json_out *out, const char *ph, int pid, uint32_t tid, int64_t ts)
{
    fprintf(out->f, "%s{\"ph\":\"%s\",\"pid\":%d,\"tid\":%" PRIu32 ",\"ts\":", out->any ? ",\n" : "\n", ph, pid,
            tid + 1);
    put_us(out->f, ts);
    out->any = true;
}

static void put_metadata_head(json_out *out, const char *name, int pid, size_t tid)
{
    fprintf(out->f, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%zu,\"args\":{", out->any ? ",\n" : "\n", name,
            pid, tid);
    out->any = true;
}

static void put_process(json_out *out, const trace_track *track, int pid)
{
    char device[TP_DEVICE_STRING_MAX], name[256] = "", label[300];
    tp_device_str(track->device, device);
    if (!track->backend->device_name || track->backend->device_name(track->device.index, name, sizeof name) != TP_OK)
        name[0] = '\0';
    snprintf(label, sizeof label, "%s%s%s", device, name[0] ? " " : "", name);
    put_metadata_head(out, "process_name", pid, 0);
    fprintf(out->f, "\"name\":");
    put_string(out->f, label);
    fprintf(out->f, "}}");
    put_metadata_head(out, "process_sort_index", pid, 0);
    fprintf(out->f, "\"sort_index\":%d}}", pid);
}

/* The track's name: the stream's, else "stream N" ("default stream"). */
static void put_thread(json_out *out, const trace_state *t, size_t i, int pid)
{
    const trace_track *track = &t->tracks[i];
    char device[TP_DEVICE_STRING_MAX], label[32];
    tp_device_str(track->device, device);
    if (track->kind & TP_STREAM_DEFAULT)
        snprintf(label, sizeof label, "default stream");
    else
        snprintf(label, sizeof label, "stream %" PRIu32, track->number);
    put_metadata_head(out, "thread_name", pid, i + 1);
    fprintf(out->f, "\"name\":");
    put_string(out->f, track->name != TRACE_NONE ? t->names + track->name : label);
    fprintf(out->f, ",\"native\":\"%p\",\"device\":\"%s\",\"priority\":%d,\"wrapped\":%s}}", track->native, device,
            track->priority, (track->kind & TP_STREAM_BORROWED) ? "true" : "false");
    put_metadata_head(out, "thread_sort_index", pid, i + 1);
    fprintf(out->f, "\"sort_index\":%zu}}", i + 1);
}

static void put_metadata(json_out *out, const trace_state *t, const int *pids, const bool *used)
{
    bool named[TP_DEVICE_TYPE_COUNT][TP_MAX_DEVICES] = {{false}};
    for (size_t i = 0; i < t->track_count; i++) {
        const trace_track *track = &t->tracks[i];
        if (!used[i])
            continue;
        if (!named[track->device.type][track->device.index]) {
            named[track->device.type][track->device.index] = true;
            put_process(out, track, pids[i]);
        }
        put_thread(out, t, i, pids[i]);
    }
}

static void put_mark(json_out *out, const trace_mark *m, const span *place, const int *pids, bool record,
                     uint32_t bind_id)
{
    put_head(out, "X", pids[m->track], m->track, place->start);
    fprintf(out->f,
            ",\"dur\":0.000,\"name\":\"%s\",\"cat\":\"flow\",\"bind_id\":%" PRIu32
            ",\"%s\":true,"
            "\"args\":{\"depth\":%d}}",
            record ? "record" : "wait", bind_id, record ? "flow_out" : "flow_in", place->depth);
}

/* A slice per mark a flow refers to: the record's once (however many waits flow
 * from it), with bind_id its mark's number + 1; the wait's with the same. */
static tp_status put_flows(json_out *out, const trace_state *t, const span *spans, const int *pids,
                           uint64_t deadline_ns)
{
    span *placed = calloc(t->mark_count + 1, sizeof *placed);
    if (!placed)
        return tp_fail(TP_ERR_OUT_OF_MEMORY, "tp_trace_stop: out of memory writing the trace");
    tp_status status = TP_OK;
    for (size_t i = 0; i < t->flow_count && status == TP_OK; i++) {
        uint32_t from = t->flows[i].from, to = t->flows[i].to;
        if (!placed[from].written &&
            (status = mark_span(t, &t->marks[from], spans, INT64_MIN, deadline_ns, &placed[from])) == TP_OK)
            put_mark(out, &t->marks[from], &placed[from], pids, true, from + 1);
        if (status == TP_OK &&
            (status = mark_span(t, &t->marks[to], spans, placed[from].start, deadline_ns, &placed[to])) == TP_OK)
            put_mark(out, &t->marks[to], &placed[to], pids, false, from + 1);
    }
    free(placed);
    return status;
}

tp_status tp_trace_wait_records(const trace_state *t, uint64_t deadline_ns)
{
    tp_status status = TP_OK;
    for (size_t i = 0; i < t->range_count && status == TP_OK; i++)
        if (t->ranges[i].start && t->ranges[i].end && (status = reached(t->ranges[i].start, deadline_ns)) == TP_OK)
            status = reached(t->ranges[i].end, deadline_ns);
    for (size_t i = 0; i < t->flow_count && status == TP_OK; i++)
        if ((status = reached(t->marks[t->flows[i].from].event, deadline_ns)) == TP_OK)
            status = reached(t->marks[t->flows[i].to].event, deadline_ns);
    return status;
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
            "\n\"traceEvents\":[",
            tp_version_string(), t->max_ranges, t->dropped_ranges, t->dropped_marks);
    json_out out = {f, false};
    put_metadata(&out, t, pids, used);
    tp_status status = TP_OK;
    for (size_t i = 0; i < t->range_count && status == TP_OK; i++) {
        const trace_range *r = &t->ranges[i];
        int64_t adjusted = 0;
        if (!r->start || !r->end)
            continue; /* inside a capture, or open when its stream was destroyed */
        status = range_span(t, i, deadline_ns, spans, &adjusted);
        if (status != TP_OK)
            break;
        put_head(&out, "X", pids[r->track], r->track, spans[i].start);
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
        status = put_flows(&out, t, spans, pids, deadline_ns);
    fprintf(f, "\n]}\n");
    free(spans), free(pids), free(used);
    return status;
}
