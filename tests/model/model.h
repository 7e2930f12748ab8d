/*
 * A reference model of the twelve rules (docs/design.md), small enough to be obviously
 * right, that says what a backend must have done after a sequence of operations.
 *
 * Each stream is a FIFO of items: host functions, gates (host functions that
 * block until the test opens them), records and waits. An item can complete once
 * every item before it on its stream has (rule 12); a gate also needs its gate
 * open, a wait needs its target stream to have completed a given number of items.
 * Records and waits are snapshots taken when they are submitted (rules 3 and 6):
 * an event's latest record is "stream S, its first N items", and a wait waits for
 * the record that was latest when it was submitted. Settling the model completes
 * everything that can complete; what is left is blocked by a closed gate, and stays
 * blocked until the test opens one, so "not done" is as observable as "done".
 *
 * For the order checks, every item carries a vector clock: for each stream, how
 * many of its items must have completed before this one may start.
 */
#ifndef TPEVENT_TESTS_MODEL_H
#define TPEVENT_TESTS_MODEL_H

#include <stdbool.h>

#include <tpevent/tpevent.h>

#define MODEL_MAX_STREAMS 16
#define MODEL_MAX_EVENTS 16
#define MODEL_MAX_GATES 16
#define MODEL_MAX_ITEMS 1024

typedef enum model_item_kind {
    MODEL_HOST_FN, /* runs at once when reached */
    MODEL_GATE,    /* runs when reached and its gate is open */
    MODEL_RECORD,  /* an event's record point */
    MODEL_WAIT,    /* completes when wait_stream has completed wait_count items */
} model_item_kind;

typedef struct model_item {
    model_item_kind kind;
    int stream;
    int position; /* on its stream, from 0 */
    int gate;     /* MODEL_GATE */
    int event;    /* MODEL_RECORD */
    int wait_stream, wait_count;
    /* Per stream: items that completed before this one may start (start) and that
     * have completed once it has (end). */
    int start_clock[MODEL_MAX_STREAMS];
    int end_clock[MODEL_MAX_STREAMS];
} model_item;

typedef struct model_stream {
    int device; /* 0: the device under test, 1: the peer */
    bool alive; /* its handle not destroyed; its items run on regardless (rule 9) */
    bool is_default;
    int items[MODEL_MAX_ITEMS];
    int length;
    int completed;                /* items completed, after model_settle */
    int clock[MODEL_MAX_STREAMS]; /* what has completed once all its items have */
} model_stream;

typedef struct model_event {
    bool alive;
    int device;
    unsigned flags;
    bool recorded;
    int stream, count; /* the latest record: reached once `stream` completed `count` items */
} model_event;

typedef struct model {
    model_stream streams[MODEL_MAX_STREAMS];
    int stream_count;
    model_event events[MODEL_MAX_EVENTS];
    int event_count;
    bool gate_open[MODEL_MAX_GATES];
    int gate_count;
    model_item items[MODEL_MAX_ITEMS];
    int item_count;
    int current[2]; /* the current stream per device (rule 11) */
} model;

void model_init(model *m, int gate_count);

/* Returns the new stream's index. The first stream of each device is its default
 * stream and becomes its current stream. */
int model_add_stream(model *m, int device, bool is_default);
void model_destroy_stream(model *m, int stream);

/* TP_ERR_INVALID_ARGUMENT for INTERPROCESS|TIMING (rule 8), with *event -1. */
tp_status model_create_event(model *m, int device, unsigned flags, int *event);
void model_destroy_event(model *m, int event);

/* Each returns the new item's index. */
int model_host_fn(model *m, int stream);
int model_gate(model *m, int stream, int gate);

/* Rule 1: TP_ERR_DEVICE_MISMATCH, and nothing changes, for another device's stream. */
tp_status model_record(model *m, int event, int stream);
void model_wait_event(model *m, int stream, int event);
void model_wait_stream(model *m, int stream, int other);
void model_open_gate(model *m, int gate);

/* Completes everything that can complete. */
void model_settle(model *m);

/* After model_settle. */
bool model_item_done(const model *m, int item);
bool model_event_done(const model *m, int event);
bool model_stream_idle(const model *m, int stream);
/* A gate that is closed has an item queued (which blocks its stream). */
bool model_gate_pending(const model *m);

/* Rule 7's answer for elapsed_time(start, end), once settled, if every record the
 * model calls reached has been reached; of one event, tp_event_timestamp's too.
 * Events of two devices or backends are timed too (on the host clock, rule 13). */
tp_status model_elapsed(const model *m, int start, int end);

/* True if `then`'s latest record cannot be reached before `first`'s: on one
 * stream, or ordered through waits. Then elapsed_time(first, then) >= 0, and
 * first's timestamp <= then's, up to the devices' error_ns on the host clock. */
bool model_record_precedes(const model *m, int first, int then);

/* Clock of "everything the event's latest record depends on has completed". */
void model_event_clock(const model *m, int event, int clock[MODEL_MAX_STREAMS]);

#endif /* TPEVENT_TESTS_MODEL_H */
