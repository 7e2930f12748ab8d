/*
 * tp_measure's floor (rule 18): what a sample costs beyond the calls it times, which
 * every sample carries once and which is taken off it, so that the answer is the
 * device's per-call cadence, hot or cold, whatever the batch.
 *
 * A sample's two timing records are not free: between them, the device also runs the
 * records themselves and the start of the first call after one (the H100: a
 * record, an empty kernel and a record read 3.78-3.87 us, where empty kernels back to
 * back ran one every 1.9 us on the H200, README's truth at d = 0). A hot sample carries that once per batch, a cold one once per call
 * (cold - hot read 2.0-2.2 us at every kernel length from 0 to 1 ms).
 *
 * It is measured on the run's stream with the least work the device runs as a call
 * (the backend's stream_launch_empty: an empty kernel, a marker; where it has none, a
 * host function that does nothing), in rounds of two held stretches:
 *   per call, F of them:  b = floor + c  (one call between two records)
 *   a batch of N:         h = c + floor / N
 * so that floor = (b - h) N / (N - 1); h itself, the least work's time per call in a batch,
 * is what a call on the stream costs at least (measure.c's test for no work).
 * The floor is the median of the rounds', its spread their median absolute deviation. Cold,
 * each per-call sample follows a flush, as the measured calls do: cold(least work) -
 * hot(least work) (without, cold read 1.2-1.6 us above hot on an H100 for kernels of
 * 2-20 us, a flush's tail the unflushed floor did not see).
 *
 * In host mode (options.host_work) a sample's calls run in one host function, whose
 * launch and return are a sample's own cost as much as the records are: the floor is
 * then the whole of b for a host function of no calls (host_work(arg, 0)).
 */
#include "core/measure_run.h"
#include "core/measure_window.h"

#include <stdlib.h>
#include <string.h>

#define FLOOR_ROUNDS 5
/* A round's stretch lengths: F samples of one call each, a batch of N calls; within
 * the stream's window (measure_window.h: five ops a call in the first, six when
 * flushed; one in the second). */
static const int64_t floor_per_call_max = 32;
static const int64_t floor_batch_max = 128;
/* Cold, the per-call stretch's flushes take about this much at most. */
static const double cold_floor_flush_ns = 2 * 1000 * 1000;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *values, int64_t n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

/* One held stretch of the least work, retried while its hold runs out (the next is
 * then unheld after two); *per_call_ns: the samples' median. */
static tp_status floor_stretch(measure_run *run, measure_shape shape, int64_t calls, double *per_call_ns)
{
    bool kept = false;
    int64_t queued = 0;
    double cpu_ns = 0;
    tp_status status = TP_OK;
    while (status == TP_OK && !kept)
        status = measure_stretch(run, MEASURE_WORK_EMPTY, shape, calls, run->stretch_ns, &queued, &cpu_ns, &kept);
    if (status == TP_OK)
        *per_call_ns = median_of(run->stretch_ns, shape == MEASURE_SHAPE_PER_CALL ? queued : 1);
    return status;
}

/* One round's floor and least work's cadence. */
static tp_status floor_round(measure_run *run, int64_t per_call, int64_t batch, double *floor_ns, double *empty_ns)
{
    double b = 0, h = 0;
    tp_status status = floor_stretch(run, MEASURE_SHAPE_PER_CALL, per_call, &b);
    if (status != TP_OK || run->options.host_work) {
        *floor_ns = b;
        *empty_ns = 0;
        return status;
    }
    if ((status = floor_stretch(run, MEASURE_SHAPE_BATCH, batch, &h)) != TP_OK)
        return status;
    double n = (double)batch;
    *floor_ns = (b - h) * n / (n - 1.0);
    *empty_ns = h; /* the least work's time per call in a batch, its floor's share in: never 0 */
    return TP_OK;
}

tp_status measure_floor(measure_run *run)
{
    /* Cold, each per-call sample follows a flush: as many as 2 ms of flushes allow (a
     * GPU's take tens of us); none where one flush takes longer (the CPU's 64 MB read
     * takes milliseconds, seconds under TSan, and a cold call's own flush dwarfs the floor). */
    int64_t flushes = run->flush_ns > 0 ? (int64_t)(cold_floor_flush_ns / run->flush_ns) : floor_per_call_max;
    run->floor_flush = run->cold && flushes >= 1;
    /* At least one sample of one call, and a batch of two: the fake GPU's window is 10 ops. */
    int64_t per_call = measure_window_calls(run->window, MEASURE_FLOOR_OWN_OPS_PER_HOLD,
                                            measure_ops_per_call(run->floor_flush));
    if (per_call > floor_per_call_max)
        per_call = floor_per_call_max;
    if (run->floor_flush && per_call > flushes)
        per_call = flushes;
    int64_t batch = measure_window_calls(run->window, MEASURE_FLOOR_OWN_OPS_PER_HOLD, 1);
    batch = batch < 2 ? 2 : batch < floor_batch_max ? batch : floor_batch_max;
    run->floor_ns = run->floor_stdev_ns = run->empty_ns = 0;
    tp_status status = measure_events_reserve(run, per_call);
    double floors[FLOOR_ROUNDS], empties[FLOOR_ROUNDS];
    /* The floor's holds that run out are the floor's: they neither drop the user's
     * stretches nor make them unheld. */
    bool holding = run->holding;
    size_t noted = strlen(run->note);
    for (int r = 0; r < FLOOR_ROUNDS && status == TP_OK; r++)
        status = floor_round(run, per_call, batch, &floors[r], &empties[r]);
    run->holding = holding;
    run->run_outs = 0;
    run->dropped = 0;
    run->note[noted] = '\0';
    if (status != TP_OK)
        return status;
    /* The spread is the rounds' median absolute deviation, scaled to a normal's
     * standard deviation: one round stalled by the host (TSan on a loaded CI) made a
     * standard deviation of milliseconds, and 100 us of work read as within the floor's
     * noise. */
    double floor_ns = median_of(floors, FLOOR_ROUNDS), empty_ns = median_of(empties, FLOOR_ROUNDS);
    double deviations[FLOOR_ROUNDS];
    for (int r = 0; r < FLOOR_ROUNDS; r++)
        deviations[r] = floors[r] > floor_ns ? floors[r] - floor_ns : floor_ns - floors[r];
    run->floor_stdev_ns = 1.4826 * median_of(deviations, FLOOR_ROUNDS);
    run->floor_ns = floor_ns > 0 ? floor_ns : 0;
    run->empty_ns = empty_ns > 0 ? empty_ns : 0;
    return TP_OK;
}

double measure_floor_share(const measure_run *run)
{
    return run->cold ? run->floor_ns : run->floor_ns / (double)(run->batch > 0 ? run->batch : 1);
}
