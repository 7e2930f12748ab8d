/*
 * The device's event clock on CLOCK_MONOTONIC (rule 13): tp_event_timestamp and
 * tp_device_clock.
 *
 * CUDA and HIP only give the milliseconds between two events of one device, as a
 * float. So a device keeps anchors: native timing events recorded on an idle
 * stream of its own, each bracketed by host clock reads (t0 before the record, t1
 * once a spin on its query sees it reached: 6.2 us wide at p50 on the H200), the
 * narrowest of ANCHOR_TRIES taken, its host time the bracket's middle (off by at
 * most half its width).
 *
 * The map from the device's clock to the host's is piecewise linear, and each part
 * of it is fixed once a conversion has used it, so a record converted twice gets the
 * same time, and records of one stream never go backwards (the map only rises).
 * Segment k starts at anchor k, at the host time the map had reached there
 * (continuity), which differs from the anchor's own measurement by a residual; the
 * segment's first SLEW_NS then rise at the drift rate plus what corrects that
 * residual, and the rest at the drift rate alone. While segment k is the newest,
 * that extrapolation is all there is, and the conversions it gives fix it up to the
 * furthest record converted (`committed_ns`). Anchor k+1 closes the segment: from
 * the committed point on it becomes the line to anchor k+1's measurement. A record
 * is converted from the segment it lies in, forward from the segment's anchor
 * (elapsed(anchor, record) >= 0), or backwards from the oldest anchor kept when it
 * lies before all of them.
 *
 * Why the line, and not the extrapolation, across a closed segment: a record is
 * reached before its conversion takes the anchor after it, so after a pause of a
 * process's timestamps (tens of seconds of other work) the first record lies in
 * the segment before that new anchor. Extrapolated through the pause, it was off by
 * the drift times the pause: 391 us before its own record call on an H100 after
 * 45 s (issue 47), however narrow the anchors. Interpolated, it is off by no more
 * than the anchors at both ends.
 *
 * Why anchors are taken often: the device's clock ran 8.7 ppm fast against
 * CLOCK_MONOTONIC on the H200 (+174 us after 20 s; -1.4 ppm on another day), and
 * the float of cudaEventElapsedTime steps by 1.95 us 16 s from its reference. A
 * conversion takes a new anchor when the latest is older than ANCHOR_PERIOD_NS: a
 * record converted in the newest segment is then rarely far from its start (the
 * float's step 200 ms away: 15 ns; uncorrected drift over 200 ms: 1.7 us). The
 * drift rate is taken between anchors at least RATE_BASELINE_NS apart (their
 * brackets' error over that baseline is under 1 ppm); until there are such, between
 * the two furthest apart once they are RATE_FIRST_BASELINE_NS apart (the rate's
 * error then moves a record at most 0.4 of a half-bracket in ANCHOR_PERIOD_NS, which
 * error_ns holds); before that, it is 1.
 *
 * Not a hot path: one mutex per device around the map.
 */
#include "backends/gpu/gpu_internal.h"
#include "common/clock.h"

#include <stdlib.h>

#define ANCHOR_TRIES 5
#define ANCHOR_PERIOD_NS 200000000.0 /* 200 ms */
#define RATE_BASELINE_NS 5e9         /* 5 s */
#define RATE_FIRST_BASELINE_NS 1e9   /* 1 s */
#define SLEW_NS 100000000.0          /* 100 ms of device time */
/* A try whose record is not reached within this is given up (its event goes back
 * to the pool pending), and an anchor whose bracket is wider than twice
 * ANCHOR_MAX_HALF_WIDTH_NS is not kept once there is one: streams share the
 * device's hardware queues (CUDA_DEVICE_MAX_CONNECTIONS), so an anchor's record may
 * wait behind another stream's held work; its bracket's middle is then off by half
 * its width (a model test on the H200 saw a record 0.57 ms early so). The map
 * then runs on from the anchors it has, and a later conversion tries again. */
#define ANCHOR_SPIN_LIMIT_NS 1000000u
#define ANCHOR_MAX_HALF_WIDTH_NS 20000
#define ANCHOR_RETRY_NS 10000000u
/* A map whose latest anchor is older than this has a segment too long to be left
 * open: the next anchor is had like the first (anchor_needed), since a record in
 * that segment can only be as right as the anchor that closes it, and the drift
 * over the segment (391 us after 45 s at 8.7 ppm) is more than most brackets. */
#define ANCHOR_STALE_NS 1000000000u
/* For the first anchor only, which nothing can replace: how long it may take. */
#define FIRST_ANCHOR_LIMIT_NS 1000000000u
/* How long the first anchor's tries go on, in rounds of ANCHOR_TRIES, for a bracket
 * within ANCHOR_MAX_HALF_WIDTH_NS. Other processes' work on the GPU (their contexts
 * take turns) can hold an idle stream's record for hundreds of us: in gpu-check's
 * parallel tests on the H100, a trace's first anchor put the GPU's times 80 us
 * early (tests/python/test_timeline_torch.py). */
#define FIRST_ANCHOR_NARROW_NS 100000000u

/* Spread of the float step and of the drift rate's error, besides the anchors'. */
#define CLOCK_ERROR_FLOOR_NS 1000

typedef struct clock_anchor {
    rt_event native;  /* a timing event of the device's TIMING pool */
    double map_ns;    /* the map's host time at this anchor */
    double device_ns; /* device time since the first anchor (sum of segment lengths) */
    double host_ns;   /* the bracket's middle */
    double slew_rate; /* host ns per device ns over the segment's first SLEW_NS */
    double rate;      /* host ns per device ns after that */
    /* Device ns after this anchor up to which conversions have used the map; past
     * that, once the next anchor closes the segment, the line to it at tail_rate
     * (0: the segment is open, the newest). */
    double committed_ns;
    double tail_rate;
    int64_t half_width_ns;
    /* host_ns - map_ns, corrected by the slew, or the extrapolation's error at the
     * previous segment's committed point where that is larger: what a conversion
     * near this anchor may be off by, besides the brackets. */
    int64_t residual_ns;
} clock_anchor;

struct gpu_clock {
    pthread_mutex_t lock;
    rt_stream stream;                        /* idle but for anchors */
    clock_anchor anchors[GPU_CLOCK_ANCHORS]; /* a ring: oldest at `first` */
    int first, count;
    uint64_t next_try_ns; /* after an anchor could not be had: not before then */
    uint64_t anchors_made;
};

static clock_anchor *anchor_at(gpu_clock *clock, int i)
{
    return &clock->anchors[(clock->first + i) % GPU_CLOCK_ANCHORS];
}

static rt_error elapsed_ns(rt_event from, rt_event to, double *ns)
{
    float ms = 0.0f;
    rt_error e = rt_event_elapsed(&ms, from, to);
    *ns = (double)ms * 1e6;
    return e;
}

/* ------------------------------------------------------------- anchors */

/* One bracketed record on the clock's stream; RT_ERROR_NOT_READY if it was not
 * reached within `limit_ns`. */
static rt_error bracket(gpu_clock *clock, rt_event native, uint64_t limit_ns, uint64_t *t0, uint64_t *t1)
{
    *t0 = tp_now_ns();
    rt_error e = rt_event_record(native, clock->stream);
    if (e != RT_SUCCESS)
        return e;
    uint64_t limit = *t0 + limit_ns;
    while ((e = rt_event_query(native)) == RT_ERROR_NOT_READY) {
        if (tp_now_ns() > limit)
            return e;
        tp_cpu_relax();
    }
    *t1 = tp_now_ns();
    return e;
}

/* The narrowest of ANCHOR_TRIES brackets, and of more until `narrow_until_ns`
 * while none is within ANCHOR_MAX_HALF_WIDTH_NS, into *out (native, host_ns,
 * width); TP_ERR_NOT_READY (no message) if none was reached in time. */
static tp_status measure_anchor(gpu_device *device, gpu_clock *clock, uint64_t limit_ns, uint64_t narrow_until_ns,
                                clock_anchor *out)
{
    rt_event best = NULL;
    uint64_t best_width = UINT64_MAX;
    for (int i = 0;
         i < ANCHOR_TRIES || (best_width > 2 * (uint64_t)ANCHOR_MAX_HALF_WIDTH_NS && tp_now_ns() < narrow_until_ns);
         i++) {
        rt_event native;
        tp_status status = gpu_pool_take(device, TP_EVENT_TIMING, &native);
        if (status != TP_OK)
            break;
        uint64_t t0 = 0, t1 = 0;
        rt_error e = bracket(clock, native, limit_ns, &t0, &t1);
        if (e == RT_SUCCESS && t1 - t0 < best_width) {
            if (best)
                gpu_pool_give(device, TP_EVENT_TIMING, best, false);
            best = native;
            best_width = t1 - t0;
            out->host_ns = (double)t0 + (double)(t1 - t0) / 2;
        } else {
            gpu_pool_give(device, TP_EVENT_TIMING, native, e != RT_SUCCESS);
            if (e != RT_SUCCESS && e != RT_ERROR_NOT_READY)
                return gpu_fail_call(RT_CALL("EventRecord"), e);
        }
    }
    if (!best)
        return TP_ERR_NOT_READY;
    out->native = best;
    out->half_width_ns = (int64_t)(best_width + 1) / 2;
    return TP_OK;
}

/* The drift rate (see the top of the file): between the new anchor and the newest
 * one at least RATE_BASELINE_NS before it; else the oldest, once it is
 * RATE_FIRST_BASELINE_NS before; else the previous segment's. */
static double drift_rate(gpu_clock *clock, const clock_anchor *next)
{
    for (int i = clock->count - 1; i >= 0; i--) {
        const clock_anchor *base = anchor_at(clock, i);
        double device_span = next->device_ns - base->device_ns;
        if (device_span >= RATE_BASELINE_NS || (i == 0 && device_span >= RATE_FIRST_BASELINE_NS))
            return (next->host_ns - base->host_ns) / device_span;
    }
    return anchor_at(clock, clock->count - 1)->rate;
}

/* The newest segment's extrapolation: its host time `ns` device ns after anchor
 * `a` (ns may be negative only before the oldest anchor). */
static double map_open(const clock_anchor *a, double ns)
{
    if (ns < 0)
        return a->map_ns + ns * a->rate;
    double slewed = ns < SLEW_NS ? ns : SLEW_NS;
    return a->map_ns + slewed * a->slew_rate + (ns - slewed) * a->rate;
}

/* The map's host time `ns` device ns after anchor `a`. */
static double map_from(const clock_anchor *a, double ns)
{
    if (a->tail_rate > 0 && ns > a->committed_ns)
        return map_open(a, a->committed_ns) + (ns - a->committed_ns) * a->tail_rate;
    return map_open(a, ns);
}

/* Closes the segment from `last` to `next`, `segment` device ns long: past what
 * conversions have used, the line to next's measurement, rising at no less than
 * half the drift rate and no more than twice it (what that leaves is next's
 * residual, slewed away). Answers the extrapolation's error at the committed point,
 * as far as the line from last's measurement to next's tells. */
static double segment_close(clock_anchor *last, const clock_anchor *next, double segment)
{
    double committed = last->committed_ns < segment ? last->committed_ns : segment;
    double at_committed = map_open(last, committed);
    double rest = segment - committed;
    double line = rest > 0 ? (next->host_ns - at_committed) / rest : last->rate;
    double low = last->rate / 2, high = last->rate * 2;
    last->committed_ns = committed;
    last->tail_rate = line < low ? low : line > high ? high : line;
    double truth = last->host_ns + (segment > 0 ? (next->host_ns - last->host_ns) * (committed / segment) : 0);
    return at_committed - truth;
}

/* Under the lock: an anchor that nothing before it can stand in for (the first, or
 * a stale map's): tries for a narrow bracket for FIRST_ANCHOR_NARROW_NS, then,
 * if none was reached, with FIRST_ANCHOR_LIMIT_NS to reach one; the narrowest is
 * kept however wide. TP_ERR_NOT_READY (no message) if none was reached. */
static tp_status anchor_needed(gpu_device *device, gpu_clock *clock, clock_anchor *out)
{
    tp_status status = measure_anchor(device, clock, ANCHOR_SPIN_LIMIT_NS, tp_now_ns() + FIRST_ANCHOR_NARROW_NS, out);
    if (status == TP_ERR_NOT_READY)
        status = measure_anchor(device, clock, FIRST_ANCHOR_LIMIT_NS, 0, out);
    return status;
}

/* Under the lock: the first anchor, which must be had. */
static tp_status first_anchor(gpu_device *device, gpu_clock *clock, clock_anchor *out)
{
    tp_status status = anchor_needed(device, clock, out);
    if (status == TP_ERR_NOT_READY)
        return gpu.host->fail(TP_ERR_BACKEND,
                              "tp_event_timestamp: %s:%d reached none of its clock's records on an idle stream "
                              "within %u ms (its hardware queue held by other streams' work?)",
                              RT_BACKEND_NAME, device->index, FIRST_ANCHOR_LIMIT_NS / 1000000u);
    return status;
}

/* Under the lock: a new anchor at the end of the ring, the oldest given up if it
 * is full. TP_OK without one when none was narrow enough: the map runs on. A
 * stale map's anchor is tried for as long as the first's, and kept however wide. */
static tp_status anchor_add(gpu_device *device, gpu_clock *clock, bool stale)
{
    clock_anchor next = {0};
    tp_status status;
    if (clock->count == 0)
        status = first_anchor(device, clock, &next);
    else if (stale)
        status = anchor_needed(device, clock, &next);
    else
        status = measure_anchor(device, clock, ANCHOR_SPIN_LIMIT_NS, 0, &next);
    if (status == TP_ERR_NOT_READY)
        return TP_OK;
    if (status != TP_OK)
        return status;
    if (clock->count > 0 && !stale && next.half_width_ns > ANCHOR_MAX_HALF_WIDTH_NS) {
        gpu_pool_give(device, TP_EVENT_TIMING, next.native, false);
        return TP_OK;
    }
    if (clock->count == 0) {
        next.map_ns = next.host_ns;
        next.rate = next.slew_rate = 1.0;
    } else {
        clock_anchor *last = anchor_at(clock, clock->count - 1);
        double segment = 0;
        rt_error e = elapsed_ns(last->native, next.native, &segment);
        if (e != RT_SUCCESS) {
            gpu_pool_give(device, TP_EVENT_TIMING, next.native, false);
            return gpu_fail_call(RT_EVENT_ELAPSED_CALL, e);
        }
        next.device_ns = last->device_ns + segment;
        next.rate = drift_rate(clock, &next);
        double committed_error = segment_close(last, &next, segment);
        next.map_ns = map_from(last, segment);
        double residual = next.host_ns - next.map_ns;
        double error = committed_error < 0 ? -committed_error : committed_error;
        double residual_size = residual < 0 ? -residual : residual;
        next.residual_ns = (int64_t)(error > residual_size ? error : residual_size);
        /* The map never falls: a residual too large to slew away in SLEW_NS is
         * taken at half the rate's pace, and what is left by the next anchor. */
        double slew_rate = next.rate + residual / SLEW_NS;
        next.slew_rate = slew_rate > next.rate / 2 ? slew_rate : next.rate / 2;
    }
    if (clock->count == GPU_CLOCK_ANCHORS) {
        gpu_pool_give(device, TP_EVENT_TIMING, anchor_at(clock, 0)->native, false);
        clock->first = (clock->first + 1) % GPU_CLOCK_ANCHORS;
        clock->count--;
    }
    *anchor_at(clock, clock->count++) = next;
    clock->anchors_made++;
    return TP_OK;
}

/* ------------------------------------------------------------- the clock */

static pthread_mutex_t clock_creation_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device's clock, made on first need, with the device current. */
static tp_status device_clock(gpu_device *device, gpu_clock **out)
{
    gpu_clock *clock = atomic_load_explicit(&device->clock, memory_order_acquire);
    if (TP_LIKELY(clock)) {
        *out = clock;
        return TP_OK;
    }
    tp_status status = TP_OK;
    pthread_mutex_lock(&clock_creation_lock);
    clock = atomic_load_explicit(&device->clock, memory_order_relaxed);
    if (!clock) {
        clock = calloc(1, sizeof *clock);
        rt_error e = clock ? rt_stream_create(&clock->stream, device->greatest_priority) : RT_SUCCESS;
        if (!clock) {
            status = gpu.host->fail(TP_ERR_OUT_OF_MEMORY, "tp_event_timestamp: out of memory");
        } else if (e != RT_SUCCESS) {
            free(clock);
            clock = NULL;
            status = gpu_fail_call(RT_CALL("StreamCreateWithPriority"), e);
        } else {
            pthread_mutex_init(&clock->lock, NULL);
            atomic_store_explicit(&device->clock, clock, memory_order_release);
        }
    }
    pthread_mutex_unlock(&clock_creation_lock);
    *out = clock;
    return status;
}

/* Under the lock: an anchor younger than ANCHOR_PERIOD_NS last. */
static tp_status anchors_fresh(gpu_device *device, gpu_clock *clock)
{
    uint64_t now = tp_now_ns();
    double age = clock->count > 0 ? (double)now - anchor_at(clock, clock->count - 1)->host_ns : 0;
    if (clock->count > 0 && (age < ANCHOR_PERIOD_NS || now < clock->next_try_ns))
        return TP_OK;
    uint64_t made = clock->anchors_made;
    tp_status status = anchor_add(device, clock, age >= ANCHOR_STALE_NS);
    if (status == TP_OK && clock->anchors_made == made)
        clock->next_try_ns = now + ANCHOR_RETRY_NS; /* none narrow enough: not again at once */
    return status;
}

/* Under the lock: the host time of a reached record. */
static tp_status convert(gpu_clock *clock, rt_event record, int64_t *ns)
{
    double offset = 0;
    for (int i = clock->count - 1; i >= 0; i--) {
        clock_anchor *a = anchor_at(clock, i);
        rt_error e = elapsed_ns(a->native, record, &offset);
        if (e != RT_SUCCESS)
            return e == RT_ERROR_NOT_READY ? TP_ERR_NOT_READY : gpu_fail_call(RT_EVENT_ELAPSED_CALL, e);
        if (i == clock->count - 1 && offset > a->committed_ns)
            a->committed_ns = offset; /* the open segment is fixed up to here now */
        if (offset >= 0 || i == 0) {
            *ns = (int64_t)(map_from(a, offset) + 0.5); /* host times are positive: rounds */
            return TP_OK;
        }
    }
    return TP_ERR_NOT_READY; /* no anchor: not reached here */
}

/* With the device current, under nothing. */
static tp_status clock_enter(gpu_device *device, rt_guard *guard, gpu_clock **clock)
{
    rt_error e = rt_guard_enter(guard, device->context, RT_NEED_DEVICE);
    if (e != RT_SUCCESS)
        return gpu_fail_call(RT_CALL("SetDevice"), e);
    tp_status status = device_clock(device, clock);
    if (status != TP_OK) {
        rt_guard_leave(guard);
        return status;
    }
    pthread_mutex_lock(&(*clock)->lock);
    status = anchors_fresh(device, *clock);
    if (status != TP_OK) {
        pthread_mutex_unlock(&(*clock)->lock);
        rt_guard_leave(guard);
    }
    return status;
}

static void clock_leave(gpu_clock *clock, rt_guard *guard)
{
    pthread_mutex_unlock(&clock->lock);
    rt_guard_leave(guard);
}

tp_status gpu_event_timestamp(tp_event *base, int64_t *ns)
{
    gpu_event *event = gpu_as_event(base);
    if (!gpu_event_recorded(event))
        return TP_ERR_NOT_READY;
    rt_event native = gpu_event_native(event);
    /* Reached first: an anchor is then taken after the record, never before it. */
    rt_error e = rt_event_query(native);
    if (e != RT_SUCCESS)
        return e == RT_ERROR_NOT_READY ? TP_ERR_NOT_READY : gpu_fail_call(RT_CALL("EventQuery"), e);
    gpu_device *device = gpu_event_device(event);
    rt_guard guard;
    gpu_clock *clock;
    tp_status status = clock_enter(device, &guard, &clock);
    if (status != TP_OK)
        return status;
    status = convert(clock, native, ns);
    clock_leave(clock, &guard);
    return status;
}

tp_status gpu_device_clock(int index, tp_clock_info *info)
{
    gpu_device *device = &gpu.devices[index];
    tp_status status = gpu_device_open(device);
    if (status != TP_OK)
        return status;
    rt_guard guard;
    gpu_clock *clock;
    status = clock_enter(device, &guard, &clock);
    if (status != TP_OK)
        return status;
    /* The widest bracket and the largest residual of the anchors kept: what a
     * conversion between them may be off by. */
    int64_t half_width = 0, residual = 0;
    for (int i = 0; i < clock->count; i++) {
        const clock_anchor *a = anchor_at(clock, i);
        half_width = a->half_width_ns > half_width ? a->half_width_ns : half_width;
        int64_t r = llabs(a->residual_ns);
        residual = r > residual ? r : residual;
    }
    clock_leave(clock, &guard);
    info->resolution_ns = RT_EVENT_RESOLUTION_NS;
    info->error_ns = half_width + residual + CLOCK_ERROR_FLOOR_NS;
    return TP_OK;
}

/* ------------------------------------------------------ elapsed time */

/* cudaEventElapsedTime failed for two recorded events of one device, both with
 * TIMING: "not reached" is then rule 7's answer already (core/backend.h). Which of
 * the two is not known here: nothing of the call is kept across it. */
TP_COLD tp_status gpu_elapsed_failed(rt_error e)
{
    if (e == RT_ERROR_NOT_READY)
        return gpu.host->fail(TP_ERR_NOT_READY,
                              "tp_event_elapsed_time: the start or the end event's record is not reached yet");
    return gpu_fail_call(RT_EVENT_ELAPSED_CALL, e);
}
