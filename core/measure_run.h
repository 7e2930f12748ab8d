/*
 * One tp_measure call (rule 18), shared by its files, each calling only those before
 * it:
 *   measure_options.c  the options: defaults, the caller's checked
 *   measure_samples.c  the samples and their statistics
 *   measure_host.c     host work: a sample's calls in one host function
 *   measure_clock.c    the SM clock around each stretch (the backend's sm_clock)
 *   measure_window.h   how many calls a stretch may queue within the stream's window
 *   measure_stretch.c  a stretch: the hold, its records and calls, its samples
 *   measure_floor.c    the floor: what a sample's own records cost, on the least work
 *   measure.c          the call: warm-up, calibration, loop, answer
 *   measure_compare.c  two calls interleaved, and their ratio's verdict
 * Internal.
 */
#ifndef TPEVENT_CORE_MEASURE_RUN_H
#define TPEVENT_CORE_MEASURE_RUN_H

#include "core/internal.h"
#include "core/measure_samples.h"

#include "common/compiler.h"

/* What a stretch queues for each of its calls. */
typedef enum measure_work {
    MEASURE_WORK_FN,    /* the caller's fn, or its host_work in host functions */
    MEASURE_WORK_EMPTY, /* the floor's: the device's least work (or a host function) */
} measure_work;

/* The shape of a stretch. */
typedef enum measure_shape {
    MEASURE_SHAPE_BATCH,    /* a record, the calls, a record: one sample */
    MEASURE_SHAPE_PER_CALL, /* per call: (a flush when cold,) a record, the call, a record */
} measure_shape;

/* Host work's state (measure_host.c), and one host function's argument: it runs
 * `calls` calls. */
typedef struct measure_host_state measure_host_state;
typedef struct measure_host_call {
    measure_host_state *state;
    int64_t calls;
} measure_host_call;

typedef struct measure_run {
    tp_stream *stream;
    tp_work_fn fn;
    void *arg;
    tp_measure_options options;
    char device[TP_DEVICE_STRING_MAX];
    bool cold;
    bool holding;             /* false with TP_MEASURE_NO_HOLD, or once run_outs_max holds ran out */
    int run_outs;             /* holds that ran out since the last one released in time */
    int64_t dropped;          /* stretches dropped because their hold ran out */
    int64_t ran_out_ns;       /* the watchdog of the last hold that ran out */
    int64_t started_ns;       /* CLOCK_MONOTONIC at the call */
    int64_t wait_deadline_ns; /* when a wait for the device gives up (a stream held elsewhere) */
    bool wait_ran_out;        /* a wait reached wait_deadline_ns */
    int64_t window;           /* tp_stream_hold_window */
    int64_t timer_step_ns;    /* tp_device_clock's resolution; 0 if unknown */
    int64_t batch;
    double stretch_host_ns; /* the last stretch's host time: its watchdog's scale */
    int64_t watchdog_ns;    /* the last hold's */
    tp_event **events;      /* pairs: [2i] before call i (per call) or the batch, [2i + 1] after */
    double *stretch_ns;     /* pairs entries: a stretch's samples */
    int64_t pairs;
    measure_host_state *host; /* with options.host_work, else NULL */
    /* The floor (measure_floor.c): a sample's own cost, its spread over the floor's
     * rounds, and the least work's time per call in a batch. */
    double floor_ns, floor_stdev_ns, empty_ns;
    bool floor_given;        /* by the caller (a comparison's second side): not measured */
    double flush_ns;         /* cold: the warm-up's flush, timed */
    bool floor_flush;        /* cold: the floor's per-call samples follow a flush too */
    bool no_work;            /* an early stretch found fn put nothing on the stream */
    int64_t stretches_kept;  /* in the loop */
    measure_samples samples; /* per call, before the floor is subtracted */
    int64_t calls, timed_ns;
    double cpu_ns; /* in fn, over the timed calls */
    char note[TP_MEASURE_NOTE_MAX];
    /* The SM clock (measure_clock.c): the backend's reader (NULL: unknown, clock_note
     * says why), read around each stretch of fn once `clock_on`. */
    const tp_sm_clock_ops *clock_ops;
    tp_sm_clock *clock;
    bool clock_on;          /* from the calibration's end */
    bool clock_pending;     /* a mark queued that no read since has seen the stream pass */
    bool clock_warm;        /* the warm-up is over (measure.c) */
    int64_t clock_on_ns;    /* when clock_on was set */
    int64_t clock_warm_ups; /* stretches not kept for a low clock, before the first kept */
    double clock_warm_from_mhz;
    double clock_max_mhz;      /* 0: unknown */
    double stretch_clock_mhz;  /* the last clocked stretch's; 0: not read */
    double clock_low_min_mhz;  /* the lowest flagged stretch's */
    int64_t clock_low;         /* stretches flagged */
    measure_samples clock_mhz; /* each clocked stretch's, the warm-up's aside */
    char clock_note[TP_MEASURE_NOTE_MAX];
} measure_run;

/* ---------------------------------------------------------- measure_host.c */

/* The host work's state, run->host; TP_ERR_OUT_OF_MEMORY. */
tp_status measure_host_open(measure_run *run);
/* Launches a host function that runs host_work(arg, calls) (0 for the floor's: the
 * cost of a host function and host_work's own around no call). */
tp_status measure_host_launch(measure_run *run, int64_t calls);
/* TP_OK, or host_work's first failure (with its message) once it has failed. */
tp_status measure_host_status(const measure_run *run);
/* At tp_measure's return: host_work is never called again; waits only for a call in
 * progress. The state is freed now or by the last host function still queued. */
void measure_host_close(measure_run *run);

/* -------------------------------------------------------- measure_clock.c */

/* The stream's SM clock reader, once the stream's first work is done: run->clock, its
 * maximum, or clock_note saying why the clock is unknown. Never fails a measurement. */
void measure_clock_open(measure_run *run);
/* On a clocked stretch (a reader open, clock_on; measure_stretch.c decides): queues
 * mark `which` (0 before the stretch, 1 after). */
tp_status measure_clock_mark(measure_run *run, int which);
/* Once the stream has passed the clocked stretch's marks: run->stretch_clock_mhz (0:
 * a mark not written). */
void measure_clock_read(measure_run *run);
/* The stretch's clock is below the threshold of a known maximum. */
bool measure_clock_low(const measure_run *run, double mhz);
/* Keeps the last stretch's clock; true when it is to be dropped (low, and the
 * options ask so). */
bool measure_clock_keep(measure_run *run);
/* Writes why the clock was low now (the backend's words) into clock_note. */
void measure_clock_explain(measure_run *run);
void measure_clock_close(measure_run *run);

/* ------------------------------------------------------- measure_stretch.c */

int64_t measure_now(void);
bool measure_past_max_time(const measure_run *run);

/* Adds a sentence to the note ("; " between two). */
void measure_note(measure_run *run, const char *fmt, ...) TP_PRINTF(2, 3);

/* At least `pairs` pairs of timing events of the stream's device, and as many entries
 * of stretch_ns; the sizes checked. */
tp_status measure_events_reserve(measure_run *run, int64_t pairs);
void measure_events_free(measure_run *run);

/* Waits for the event's latest record (NULL: the stream's work) until the wait's
 * deadline, the caller's wait_check between slices. */
tp_status measure_wait(measure_run *run, tp_event *event);

/* Queues one call of `work`; in host mode a host function running
 * host_work(arg, calls), `calls` 1 or the batch (0 for the floor's work). */
tp_status measure_call(measure_run *run, measure_work work, int64_t calls);

/*
 * One stretch of up to `batch` calls of `work` in `shape` (a flush before each call
 * when the run is cold and the work fn's), *queued of them, under a hold unless the
 * run no longer holds. *kept: its per-call samples (one for a batch, *queued per call),
 * as the device timed them, are in samples_ns; false when its hold ran out (dropped).
 * *cpu_ns: the host's time in fn.
 */
tp_status measure_stretch(measure_run *run, measure_work work, measure_shape shape, int64_t batch, double *samples_ns,
                          int64_t *queued, double *cpu_ns, bool *kept);

/* -------------------------------------------------------- measure_floor.c */

/*
 * Measures the floor on the run's stream: run->floor_ns, floor_stdev_ns, empty_ns.
 * Before the calibration; the events it needs are reserved.
 */
tp_status measure_floor(measure_run *run);

/* What the floor takes off a sample of the run (floor / batch hot, the floor cold). */
double measure_floor_share(const measure_run *run);

/* -------------------------------------------------------------- measure.c */

/* A run of fn on the stream (NULL: the current one) with the caller's options
 * (checked), its clock from `started_ns`: the stream's checks and first events.
 * On failure the run may hold what measure_run_close frees (run->stream set when
 * the stream was found). */
tp_status measure_run_open(measure_run *run, tp_stream *stream, tp_work_fn fn, void *arg,
                           const tp_measure_options *options, int64_t started_ns);
/* The warm-up, the floor and the calibration: the batch. */
tp_status measure_run_calibrate(measure_run *run);
/* One stretch, its samples kept (*kept of them: 0 when its hold ran out). Sets
 * run->no_work when an early stretch finds fn put nothing on the stream. */
tp_status measure_run_step(measure_run *run, int64_t *kept);
/* A wait that ran out with samples kept drops only the last stretch: TP_OK and a
 * note; any other status as it is. */
tp_status measure_run_dropped_last(measure_run *run, tp_status status);
/* What was measured, into the caller's struct up to its size, with its notes. */
tp_status measure_run_answer(measure_run *run, tp_measurement *out);
void measure_run_close(measure_run *run);

#endif /* TPEVENT_CORE_MEASURE_RUN_H */
