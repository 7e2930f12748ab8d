/*
 * common/deadline_heap.h, tested on its own: the min-heap of deadlines under rule
 * 17's watchdog. Random adds and removes (of the earliest and of any node) against a
 * model, a plain array searched in full: the earliest is always the model's, every
 * node knows its place, and nothing is lost or kept twice.
 */
#include "common/deadline_heap.h"

#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { NODES = 2000 };

typedef struct model {
    tp_deadline_node nodes[NODES];
    bool queued[NODES]; /* what the heap should hold */
    size_t queued_count;
    uint64_t random;
} model;

/* xorshift64: the same sequence on every run, so that a failure repeats. */
static uint64_t next_random(model *m)
{
    m->random ^= m->random << 13;
    m->random ^= m->random >> 7;
    m->random ^= m->random << 17;
    return m->random;
}

static void model_init(model *m, uint64_t seed)
{
    m->random = seed;
    m->queued_count = 0;
    for (int i = 0; i < NODES; i++) {
        tp_deadline_node_init(&m->nodes[i], 0);
        m->queued[i] = false;
    }
}

/* The heap agrees with the model: the same nodes, each at the index it says, no
 * parent later than its child, and the earliest one of the model's earliest. */
static void check_agrees(const tp_deadline_heap *heap, const model *m)
{
    CHECK(heap->count == m->queued_count);
    CHECK(heap->count <= heap->capacity);
    int64_t earliest = INT64_MAX;
    for (int i = 0; i < NODES; i++) {
        CHECK(tp_deadline_heap_holds(heap, &m->nodes[i]) == m->queued[i]);
        if (!m->queued[i])
            CHECK(m->nodes[i].index == TP_DEADLINE_NOT_QUEUED);
        else if (m->nodes[i].deadline_ns < earliest)
            earliest = m->nodes[i].deadline_ns;
    }
    for (size_t index = 1; index < heap->count; index++)
        CHECK(heap->nodes[(index - 1) / 2]->deadline_ns <= heap->nodes[index]->deadline_ns);
    if (heap->count == 0)
        CHECK(tp_deadline_heap_earliest(heap) == NULL);
    else
        CHECK(tp_deadline_heap_earliest(heap)->deadline_ns == earliest);
}

/* A random step: add a node not queued (deadlines from a small range, so that
 * equal ones are common), remove the earliest, or remove any queued node. */
static void random_step(tp_deadline_heap *heap, model *m, int add_percent)
{
    size_t pick = (size_t)(next_random(m) % NODES);
    int what = (int)(next_random(m) % 100);
    if (what < add_percent && !m->queued[pick]) {
        m->nodes[pick].deadline_ns = (int64_t)(next_random(m) % 500) - 100;
        CHECK(tp_deadline_heap_add(heap, &m->nodes[pick]));
        m->queued[pick] = true;
        m->queued_count++;
    } else if (what < add_percent + (100 - add_percent) / 2 && heap->count > 0) {
        tp_deadline_node *earliest = tp_deadline_heap_earliest(heap);
        tp_deadline_heap_remove(heap, earliest);
        m->queued[earliest - m->nodes] = false;
        m->queued_count--;
    } else {
        tp_deadline_heap_remove(heap, &m->nodes[pick]); /* a node not queued: left alone */
        if (m->queued[pick])
            m->queued_count--;
        m->queued[pick] = false;
    }
}

/* ---------------------------------------------------------------- tests */

TEST(deadline_heap_random_adds_and_removes_agree_with_a_model)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        tp_deadline_heap heap = TP_DEADLINE_HEAP_INIT;
        model m;
        model_init(&m, seed * 0x9E3779B97F4A7C15u);
        /* Filling (mostly adds), churning, then draining (mostly removes), so that the
         * heap grows past its first capacity and shrinks back. */
        const int add_percents[] = {90, 50, 10};
        for (int phase = 0; phase < 3; phase++)
            for (int step = 0; step < 6000; step++) {
                random_step(&heap, &m, add_percents[phase]);
                if (step % 97 == 0)
                    check_agrees(&heap, &m);
            }
        check_agrees(&heap, &m);
        free(heap.nodes);
    }
    return 0;
}

TEST(deadline_heap_gives_the_deadlines_back_in_order)
{
    tp_deadline_heap heap = TP_DEADLINE_HEAP_INIT;
    model m;
    model_init(&m, 42);
    for (int i = 0; i < NODES; i++) {
        m.nodes[i].deadline_ns = (int64_t)(next_random(&m) % 1000);
        CHECK(tp_deadline_heap_add(&heap, &m.nodes[i]));
    }
    int64_t last = INT64_MIN;
    for (int i = 0; i < NODES; i++) {
        tp_deadline_node *earliest = tp_deadline_heap_earliest(&heap);
        CHECK(earliest != NULL && earliest->deadline_ns >= last);
        last = earliest->deadline_ns;
        tp_deadline_heap_remove(&heap, earliest);
        CHECK(earliest->index == TP_DEADLINE_NOT_QUEUED);
    }
    CHECK(tp_deadline_heap_earliest(&heap) == NULL);
    CHECK(heap.capacity <= 2 * TP_ARRAY_FIRST); /* given back as it drained */
    free(heap.nodes);
    return 0;
}

/* A fork's child forgets the parent's nodes without touching them, and its own
 * adds then work from an empty heap. */
TEST(deadline_heap_forget_all_leaves_the_nodes_alone)
{
    tp_deadline_heap heap = TP_DEADLINE_HEAP_INIT;
    tp_deadline_node parents[3], own;
    for (int i = 0; i < 3; i++) {
        tp_deadline_node_init(&parents[i], 10 - i);
        CHECK(tp_deadline_heap_add(&heap, &parents[i]));
    }
    tp_deadline_heap_forget_all(&heap);
    CHECK(tp_deadline_heap_earliest(&heap) == NULL);
    tp_deadline_node_init(&own, 20);
    CHECK(tp_deadline_heap_add(&heap, &own));
    for (int i = 0; i < 3; i++) {
        CHECK(!tp_deadline_heap_holds(&heap, &parents[i]));
        tp_deadline_heap_remove(&heap, &parents[i]); /* not the heap's: nothing happens */
    }
    CHECK(tp_deadline_heap_earliest(&heap) == &own && heap.count == 1);
    free(heap.nodes);
    return 0;
}
