/*
 * A min-heap of deadlines: what a timer thread sleeps by (rule 17's watchdog,
 * core/hold.c). Adding, removing any node (a timer cancelled before it fires) and
 * removing the earliest cost O(log n), and finding the earliest O(1), so a thread
 * that watches tens of thousands of timers neither wakes late nor makes each new
 * one dear. Nodes are intrusive: the caller embeds a tp_deadline_node in what it
 * times and finds its struct back from the node (offsetof); the node keeps its index
 * in the heap, which is what makes removal O(log n). Equal deadlines come out in no
 * particular order. Not thread-safe: the caller locks. Header-only, as the rest of
 * common.
 */
#ifndef TPEVENT_COMMON_DEADLINE_HEAP_H
#define TPEVENT_COMMON_DEADLINE_HEAP_H

#include "common/array.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A node's index when it is in no heap. */
#define TP_DEADLINE_NOT_QUEUED SIZE_MAX

typedef struct tp_deadline_node {
    int64_t deadline_ns;
    size_t index; /* in the heap's array; TP_DEADLINE_NOT_QUEUED when in none */
} tp_deadline_node;

typedef struct tp_deadline_heap {
    tp_deadline_node **nodes; /* nodes[0] is the earliest; a parent is never later than its children */
    size_t count;
    size_t capacity;
} tp_deadline_heap;

#define TP_DEADLINE_HEAP_INIT \
    {                         \
        NULL, 0, 0            \
    }

static inline void tp_deadline_node_init(tp_deadline_node *node, int64_t deadline_ns)
{
    node->deadline_ns = deadline_ns;
    node->index = TP_DEADLINE_NOT_QUEUED;
}

/* Whether the node is in `heap`: its index says so, and the heap agrees, so that a
 * node of another heap (or of a heap emptied by tp_deadline_heap_forget_all) is not. */
static inline bool tp_deadline_heap_holds(const tp_deadline_heap *heap, const tp_deadline_node *node)
{
    return node->index < heap->count && heap->nodes[node->index] == node;
}

/* The node with the earliest deadline, NULL when the heap is empty. */
static inline tp_deadline_node *tp_deadline_heap_earliest(const tp_deadline_heap *heap)
{
    return heap->count ? heap->nodes[0] : NULL;
}

static inline void tp_deadline_heap_place(tp_deadline_heap *heap, tp_deadline_node *node, size_t index)
{
    heap->nodes[index] = node;
    node->index = index;
}

/* Moves the node at `index` towards the root while it is earlier than its parent. */
static inline void tp_deadline_heap_sift_up(tp_deadline_heap *heap, size_t index)
{
    tp_deadline_node *node = heap->nodes[index];
    while (index > 0) {
        size_t parent = (index - 1) / 2;
        if (heap->nodes[parent]->deadline_ns <= node->deadline_ns)
            break;
        tp_deadline_heap_place(heap, heap->nodes[parent], index);
        index = parent;
    }
    tp_deadline_heap_place(heap, node, index);
}

/* Moves the node at `index` towards the leaves while a child is earlier. */
static inline void tp_deadline_heap_sift_down(tp_deadline_heap *heap, size_t index)
{
    tp_deadline_node *node = heap->nodes[index];
    for (;;) {
        size_t child = 2 * index + 1;
        if (child >= heap->count)
            break;
        if (child + 1 < heap->count && heap->nodes[child + 1]->deadline_ns < heap->nodes[child]->deadline_ns)
            child++;
        if (node->deadline_ns <= heap->nodes[child]->deadline_ns)
            break;
        tp_deadline_heap_place(heap, heap->nodes[child], index);
        index = child;
    }
    tp_deadline_heap_place(heap, node, index);
}

/* Adds a node that is in no heap; false, the heap unchanged, when out of memory. */
static inline bool tp_deadline_heap_add(tp_deadline_heap *heap, tp_deadline_node *node)
{
    if (heap->count == SIZE_MAX - 1 ||
        !tp_array_grow(&heap->nodes, &heap->capacity, heap->count + 1, sizeof *heap->nodes))
        return false;
    heap->nodes[heap->count] = node;
    node->index = heap->count++;
    tp_deadline_heap_sift_up(heap, node->index);
    return true;
}

/* Takes the node out of the heap, wherever it is; a node it does not hold is left
 * alone. Gives back half the array once a quarter of it is used, so that a burst of
 * timers does not keep its memory for good (a failed shrink keeps the array). */
static inline void tp_deadline_heap_remove(tp_deadline_heap *heap, tp_deadline_node *node)
{
    if (!tp_deadline_heap_holds(heap, node))
        return;
    size_t index = node->index;
    tp_deadline_node *last = heap->nodes[--heap->count];
    node->index = TP_DEADLINE_NOT_QUEUED;
    if (last != node) {
        tp_deadline_heap_place(heap, last, index);
        if (index > 0 && last->deadline_ns < heap->nodes[(index - 1) / 2]->deadline_ns)
            tp_deadline_heap_sift_up(heap, index);
        else
            tp_deadline_heap_sift_down(heap, index);
    }
    if (heap->capacity > TP_ARRAY_FIRST && heap->count < heap->capacity / 4 &&
        tp_array_resize(&heap->nodes, heap->capacity / 2, sizeof *heap->nodes))
        heap->capacity /= 2;
}

/* Empties the heap without touching its nodes: the child of a fork, whose nodes are
 * the parent's. The array is kept for the next adds. */
static inline void tp_deadline_heap_forget_all(tp_deadline_heap *heap)
{
    heap->count = 0;
}

#endif /* TPEVENT_COMMON_DEADLINE_HEAP_H */
