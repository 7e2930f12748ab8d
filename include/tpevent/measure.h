/*
 * tpevent: measuring the user's own work as the device sees it (rule 18).
 * Part of the stable API; included by <tpevent/tpevent.h>, not on its own.
 *
 * Why a hold: timing records around work that the host submits one call at a time also
 * time the host's submission rate (a 2 us kernel launched back to back reads 3-10 us).
 * tp_measure holds the stream (tp_stream_hold) while it queues a timing record, a batch
 * of calls and a timing record, then lets the stream go: the device runs the batch back
 * to back, and the interval over it, divided by the batch, is the time of one call.
 */
#ifndef TPEVENT_MEASURE_H
#define TPEVENT_MEASURE_H

#ifndef TPEVENT_TPEVENT_H
#error "include <tpevent/tpevent.h>, which includes this header"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Puts one call's worth of work on `stream` (kernel launches, copies, host functions)
 * and returns; TP_OK, or a failure that stops the measurement. It runs on the thread
 * that called tp_measure, never concurrently with itself, and is also called for the
 * warm-up and the calibration. Work it runs itself, on the host, is not on the stream:
 * it is the measurement's cpu_ns, not its device time. It may synchronize the stream
 * or block (then that sample is dropped, and after two in a row the measurement goes on
 * without a hold, saying so in `note`); it must not destroy the stream.
 */
typedef tp_status (*tp_work_fn)(tp_stream *stream, void *arg);

/* tp_measure_options.flags, or-ed. */
enum tp_measure_flag {
    /* Before each timed call the device's last-level cache is flushed (outside the
     * timed interval): each call is timed on its own, as it runs after other work. */
    TP_MEASURE_COLD = 1u << 0,
    /* No hold: the interval also times the host's submission (what events around
     * work commonly measure); for work that must synchronize, or for comparison. */
    TP_MEASURE_NO_HOLD = 1u << 1,
    /* A stretch whose SM clock ran below sm_clock_threshold of the maximum is dropped,
     * not only flagged (tp_measurement.sm_clock_low counts it either way). */
    TP_MEASURE_DROP_LOW_CLOCK = 1u << 2,
};
#define TP_MEASURE_FLAGS_ALL \
    (TP_MEASURE_COLD | TP_MEASURE_NO_HOLD | TP_MEASURE_DROP_LOW_CLOCK) /* every flag this header knows */

/*
 * Options; `size` first, set by tp_measure_options_init to sizeof the struct this
 * header declares. A smaller `size` (a program built with an older header) reads the
 * fields that fit and the defaults for the rest. NULL options: the defaults.
 */
typedef struct tp_measure_options {
    size_t size;             /* sizeof(tp_measure_options) as the caller's header has it */
    int64_t min_time_ns;     /* timed device time before stopping may be considered; >= 0; default 0.5 s */
    int64_t max_time_ns;     /* wall clock of the whole call, warm-up included; > 0; default 15 s */
    double max_noise;        /* stop once the median's interval is within this of it (relative); >= 0; default 0.005 */
    int64_t min_samples;     /* >= 1; default 10 */
    int64_t batch;           /* calls per sample (hot) or per hold (cold); 0: chosen (default); >= 0; cut to the
                                stream's window and to max_time (the note says so) */
    unsigned flags;          /* TP_MEASURE_* */
    double *samples_ns;      /* optional: the per-call time of each sample, in order, the first samples_capacity */
    size_t samples_capacity; /* entries of samples_ns; 0 with samples_ns NULL */
    /* Optional: called with fn's arg, on the calling thread, about every 50 ms while
     * tp_measure waits for the device; a status other than TP_OK stops the measurement
     * with it, as fn's failure does, the message naming wait_check (Python runs its
     * signal handlers here, for Ctrl-C). */
    tp_status (*wait_check)(void *arg);
    /* Optional, host work: when set, fn is not called (it may be NULL) and each sample
     * (hot) or call (cold) is one host function on the stream that runs
     * host_work(arg, calls), `calls` calls of the work on the stream's host thread, so
     * that one launch is shared by the batch; a status other than TP_OK stops the
     * measurement with it. The floor is then a host function's (a CPU device's work). */
    tp_status (*host_work)(void *arg, int64_t calls);
    /* (Appended.) A stretch whose SM clock ran below this fraction of the device's
     * maximum SM clock is flagged (TP_MEASURE_DROP_LOW_CLOCK: dropped); in [0, 1],
     * default 0.75 (nvbench's); 0: none is. */
    double sm_clock_threshold;
} tp_measure_options;

/* Sets `size` and the defaults. */
TP_API tp_status tp_measure_options_init(tp_measure_options *options);

#define TP_MEASURE_NOTE_MAX 256 /* bytes of tp_measurement.note, its NUL included */

/*
 * The answer. The caller sets `size` (sizeof the struct it has, at least
 * offsetof(tp_measurement, calls) + sizeof(int64_t)); tpevent writes only up to it.
 * Times are per call, in ns, of the samples kept (a sample dropped because its hold
 * ran out is not among them).
 */
typedef struct tp_measurement {
    size_t size;     /* the caller's sizeof(tp_measurement) */
    int64_t calls;   /* timed calls (warm-up, calibration and dropped samples excluded) */
    int64_t samples; /* samples kept: hot, one per held batch; cold, one per call */
    int64_t batch;   /* calls per sample (hot) or per hold (cold) */
    double median_ns, mean_ns, min_ns, max_ns, stdev_ns; /* the samples' statistics, the floor's share taken off */
    double noise;                                        /* stdev / mean of the samples (nvbench's "stdrel") */
    double cpu_ns;                                       /* host time per timed call spent inside fn */
    bool held;                                           /* every sample kept ran under a hold */
    bool converged; /* the median's interval within max_noise after min_time and min_samples, before max_time */
    bool cold;      /* measured with TP_MEASURE_COLD */
    char note[TP_MEASURE_NOTE_MAX]; /* what was given up and why; "" if nothing */
    /* The protocol's floor: what a sample's own timing records cost beyond its calls'
     * cadence, measured on the stream with the device's least work; floor / batch is
     * subtracted from each sample (floor cold), never below 0. */
    double floor_ns, floor_stdev_ns; /* the floor and its spread over the floor's rounds */
    double raw_median_ns;            /* the median before the floor was subtracted */
    /* The median's confidence interval (95 %, order statistics): converged means its
     * half-width is within max_noise of the median. */
    double median_low_ns, median_high_ns; /* its bounds */
    /* (Appended: a caller's smaller size gets the fields above.) The device's SM clock
     * while the stretches ran, read as nvbench reads it: on CUDA a kernel records
     * %clock64 and %globaltimer before and after each stretch, and a stretch's clock is
     * their cycles over their ns. 0: unknown, sm_clock_note says why (the CPU, OpenCL
     * and HIP have none to read); never guessed. Three fields have a second name, the
     * measurement contract's: clock_mhz, clock_max_mhz and throttled (one field each). */
    union {
        double sm_clock_mhz; /* the clocked stretches' median (the warm-up's aside), in MHz */
        double clock_mhz;
    };
    union {
        double sm_clock_max_mhz; /* the SM's maximum clock (NVML, else the runtime's peak), 0: unknown (none flagged) */
        double clock_max_mhz;
    };
    int64_t sm_clock_stretches; /* stretches whose clock was read, the warm-up's aside */
    union {
        int64_t sm_clock_low; /* of them, below sm_clock_threshold of the maximum: flagged (and counted in
                                 `note`), dropped with TP_MEASURE_DROP_LOW_CLOCK */
        int64_t throttled;
    };
    char sm_clock_note[TP_MEASURE_NOTE_MAX]; /* "clock unknown: <why>" with sm_clock_mhz 0; else where the
                                                maximum came from, and the throttle reasons of a low clock */
} tp_measurement;

/*
 * Times fn's work on `stream` (NULL: the current stream of the current device), rule 18.
 * Hot (default): per sample, hold, a timing record, `batch` calls, a timing record,
 * release; one sample is the interval over the batch divided by it. The batch is chosen
 * from a calibration call so that a sample lasts well above the device's timer
 * resolution and stays within the stream's window (tp_stream_hold_window). Cold
 * (TP_MEASURE_COLD): per hold, `batch` times: a flush of the last-level cache, a timing
 * record, the call, a timing record; each pair is one sample. Before the calibration,
 * the floor (a sample's own cost beyond its calls' cadence) is measured on the stream with
 * the device's least work; floor / batch (the floor, cold) is taken off every sample, so
 * the answer is the device's per-call cadence. Samples continue until, after min_time_ns
 * of timed device time and min_samples samples, the median's 95 % interval is within
 * max_noise of it (converged), or max_time_ns passes (TP_OK, converged false, the note
 * saying which criterion was not met); at least one sample is kept, however short
 * max_time. A first stretch whose samples are within the floor's noise ends the call at
 * once: fn put no work on the stream (converged false, said in `note`). An
 * explicit batch whose calls (and flushes), timed by the calibration, would run past
 * max_time is cut to fit, said in `note`; no call is queued past max_time but a sample's
 * first. Each wait for the device ends max_time + max(max_time, 10 s) after the call (a
 * stream held elsewhere): with samples kept, TP_OK with those; without,
 * TP_ERR_NOT_READY. A
 * hold that runs out (measure's own watchdog: max(100 ms, 10 samples' length); fn
 * synchronized the stream, blocked, or filled its queue, or the host stalled) drops its
 * sample and the next is held again; after two in a row the rest is measured without a
 * hold. Both are said in `note`; so is device time far below the host's time in fn
 * (work run inside fn rather than put on the stream). While a trace runs, each sample is
 * a range "tp_measure" on the stream whose marks lie outside the timed interval.
 * Where the device's SM clock can be read (CUDA), it is read before and after each
 * stretch of fn, outside the timed interval (sm_clock_*): stretches below
 * sm_clock_threshold of the maximum are flagged in `note` (dropped with
 * TP_MEASURE_DROP_LOW_CLOCK), and the first such stretches are a warm-up, not kept.
 * Errors: fn or out NULL, bad options (a field out of its range, unknown flag bits):
 * TP_ERR_INVALID_ARGUMENT; a capturing stream: TP_ERR_CAPTURING, before fn is called;
 * cold on a backend that cannot flush its cache: TP_ERR_UNSUPPORTED. fn failing: the
 * hold is released and fn's status is returned with fn's message (tp_last_error as fn
 * left it), `out` holding what was measured until then.
 */
TP_API tp_status tp_measure(tp_stream *stream, tp_work_fn fn, void *arg, const tp_measure_options *options,
                            tp_measurement *out);

/* Is B faster than A: tp_measure_compare's answer, b relative to a. */
typedef enum tp_verdict {
    TP_UNDECIDED = 0, /* max_time passed first */
    TP_SAME = 1,      /* the ratio's whole interval within 1 +- min_effect */
    TP_FASTER = 2,    /* wholly below 1 - min_effect */
    TP_SLOWER = 3,    /* wholly above 1 + min_effect */
} tp_verdict;

/* Options of a comparison; `size` first, set by tp_compare_options_init. `measure` is
 * last, so that it may grow (tp_measure_options' fields are appended): a caller's
 * smaller `size` has a smaller `measure`, read as tp_measure reads one. */
typedef struct tp_compare_options {
    size_t size;                /* sizeof(tp_compare_options) as the caller's header has it */
    double confidence;          /* of the ratio's interval, in (0, 1); default 0.95 */
    double min_effect;          /* the least relative difference that is not `same`, > 0; default 0.005 */
    tp_measure_options measure; /* both sides' (samples_ns unused; host_work gets arg_a, arg_b); max_time: the whole */
} tp_compare_options;

/* Sets `size` and the defaults (measure's with min_time 0: the verdict decides). */
TP_API tp_status tp_compare_options_init(tp_compare_options *options);

/* tp_measure_compare's answer; `size` first, set by the caller. The two measurements
 * are last, so that they may grow (tp_measurement's fields are appended): each is
 * half of what a caller's `size` leaves past offsetof(tp_comparison, a), written as
 * tp_measure writes one of that size. */
typedef struct tp_comparison {
    size_t size;                  /* the caller's sizeof(tp_comparison) */
    double ratio;                 /* b / a per call: the median over interleaved pairs of stretches */
    double ratio_low, ratio_high; /* its interval at `confidence`, valid under the repeated looks */
    double confidence;            /* the options' */
    int64_t pairs;                /* pairs of stretches (one of A's, then one of B's) */
    int verdict;                  /* a tp_verdict */
    tp_measurement a, b;          /* each side's measurement (their `size` is set by tpevent) */
} tp_comparison;

/*
 * Is B faster than A: fn_a and fn_b measured as tp_measure would (hold, floor, cold
 * when asked), in alternating stretches on one stream (A, B, A, B...), so that what
 * drifts (a clock, a neighbour's load) drifts for both. The ratio of B's stretch to the
 * A stretch before it, per call: their median, with its order-statistics interval, looked
 * at after 8, 16, 32... pairs, each look at a level that spends (1 - confidence) / 2^(j+1)
 * of the error (so that the looks together keep `confidence`). The first look whose
 * interval lies wholly within 1 +- min_effect answers TP_SAME, wholly below or above
 * TP_FASTER or TP_SLOWER; max_time passing first answers TP_UNDECIDED with the last
 * interval. Errors as tp_measure's; a confidence or min_effect out of range:
 * TP_ERR_INVALID_ARGUMENT.
 */
TP_API tp_status tp_measure_compare(tp_stream *stream, tp_work_fn fn_a, void *arg_a, tp_work_fn fn_b, void *arg_b,
                                    const tp_compare_options *options, tp_comparison *out);

#ifdef __cplusplus
}
#endif

#endif /* TPEVENT_MEASURE_H */
