/* What the model test's files share: the runner, which holds a sequence's real objects
 * next to the model (model.h) that says what they must have done. */
#ifndef TPEVENT_TESTS_MODEL_RUNNER_H
#define TPEVENT_TESTS_MODEL_RUNNER_H

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

#define TEST_SKIP 77
#define EVENTUALLY_SECONDS 10.0
#define SEQUENCE_WATCHDOG_SECONDS 120
/* Gates per sequence: each opens once, for good, so a sequence needs several to
 * keep something blocked most of the time. */
#define MODEL_GATES 12
#define MAX_OPS 1000
#define TRACE_WIDTH 96

typedef struct real_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool open;
} real_gate;

typedef struct runner runner;

/* The argument of one host function launched: which model item it is. */
typedef struct host_call {
    runner *runner;
    int item;
    int gate; /* -1: a plain host function */
} host_call;

struct runner {
    const char *devices[2]; /* the device under test and its peer (NULL: none) */
    tp_device_type types[2];
    int64_t error_ns[2]; /* tp_device_clock's, for the order on the host clock */
    bool no_ipc[2];      /* TP_EVENT_INTERPROCESS is TP_ERR_UNSUPPORTED there (OpenCL, rule 8) */
    bool independent_host_threads;
    bool verbose;
    uint64_t base_seed;
    uint64_t seed; /* of this sequence */
    uint64_t rng;
    int sequence;

    model *m;
    tp_stream *streams[MODEL_MAX_STREAMS];
    tp_event *events[MODEL_MAX_EVENTS];
    real_gate gates[MODEL_MAX_GATES];
    host_call calls[MODEL_MAX_ITEMS];

    /* Model items in the order their host functions ran. */
    pthread_mutex_t log_lock;
    int log[MODEL_MAX_ITEMS];
    int log_count;

    /* The main thread's working copies of the log, for the checks. */
    int snapshot[MODEL_MAX_ITEMS];
    int rank[MODEL_MAX_ITEMS];

    char trace[MAX_OPS + 16][TRACE_WIDTH];
    int trace_count;
};

typedef enum op_kind {
    OP_HOST_FN,
    OP_GATE,
    OP_RECORD,
    OP_RECORD_CURRENT,
    OP_RECORD_NEW_EVENT,
    OP_WAIT_EVENT,
    OP_WAIT_STREAM,
    OP_CREATE_EVENT,
    OP_DESTROY_EVENT,
    OP_CREATE_STREAM,
    OP_DESTROY_STREAM,
    OP_OPEN_GATE,
    OP_SET_CURRENT,
    OP_QUERY_EVENT,
    OP_SYNC_EVENT,
    OP_SYNC_STREAM,
    OP_SYNC_DEVICE,
    OP_CHECKPOINT,
    OP_KIND_COUNT
} op_kind;

/* model_runner.c: reporting, the watchdog, time, random choices, host functions and the real calls. */

/* Prints the failure and the sequence's operations so far, with the command line that replays it; exits 1. */
_Noreturn void fail(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds an operation to the sequence's trace (printed with --verbose). */
void trace(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define EXPECT_STATUS(r, call, expected)                                                                              \
    do {                                                                                                              \
        tp_status got_ = (call);                                                                                      \
        tp_status want_ = (expected);                                                                                 \
        if (got_ != want_)                                                                                            \
            fail((r), "%s:%d: %s returned %s, the model expects %s", __FILE__, __LINE__, #call, tp_status_name(got_), \
                 tp_status_name(want_));                                                                              \
    } while (0)

#define EXPECT_OK(r, call) EXPECT_STATUS(r, call, TP_OK)

const char *device_name_of(const runner *r, int device);

void on_watchdog(int signo);

void watch(runner *r, unsigned seconds, const char *what);

/* Around a call the model says returns. */
void blocking_call(runner *r, const char *what);

void blocking_call_returned(runner *r);

double monotonic_seconds(void);

void sleep_us(long us);

int random_below(runner *r, int bound);

int device_count(const runner *r);

/* A random index among those that pass `pick`, or -1. */
int random_stream(runner *r, int device, bool allow_default);

int random_event(runner *r);

/* A random gate: a closed one if `closed` (-1 if none is left), else any. */
int random_gate(runner *r, bool closed);

int default_stream_of(const runner *r, int device);

void host_call_run(void *arg);

void gate_open(real_gate *g);

/* The log as it is now; *count entries. */
int snapshot_log(runner *r, int *log);

bool item_is_logged(const model_item *item);

void describe_item(const model *m, int item, char *buf, size_t size);

bool real_event_done(runner *r, int event);

bool real_stream_idle(runner *r, int stream);

/* model_checks.c: the backend checked against the model. */

void checkpoint(runner *r);

/* Everything with a clock below `clock` has run: after a synchronize (rule 5). */
void check_ran_up_to(runner *r, const int clock[MODEL_MAX_STREAMS], const char *what);

/* A call that blocks may be made if the model says it returns: the CPU always
 * runs unblocked work; other backends only with no gate closed on a queued item. */
bool may_block_on(runner *r, bool done_in_model);

/* model_ops.c: the operations, on both. */

op_kind pick_op(runner *r);

void create_stream(runner *r, int device);

void create_event(runner *r, int device, unsigned flags);

void perform(runner *r, op_kind op);

#endif /* TPEVENT_TESTS_MODEL_RUNNER_H */
