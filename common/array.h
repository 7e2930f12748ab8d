/*
 * Growing arrays: the one way tpevent makes room in an array it appends to (a
 * capture's nodes, a pool's spare events, a trace's records). Capacity doubles from
 * TP_ARRAY_FIRST, so appends cost O(1) amortized and an array that does not outgrow
 * what it held before allocates nothing; sizes are overflow-checked. On failure the
 * array and its capacity are left as they were, so the caller's own out-of-memory
 * path decides what happens. Rings and hash tables rearrange their items as they
 * grow and do it their own way.
 */
#ifndef TPEVENT_COMMON_ARRAY_H
#define TPEVENT_COMMON_ARRAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TP_ARRAY_FIRST 16u

/* Reallocates the array *items (a T **, given as void *) to exactly `count` items
 * of `item_size` bytes; false, *items untouched, when out of memory. */
static inline bool tp_array_resize(void *items, size_t count, size_t item_size)
{
    if (item_size && count > SIZE_MAX / item_size)
        return false;
    void *array;
    memcpy(&array, items, sizeof array); /* a T * read as the void * it converts to */
    void *moved = realloc(array, count * item_size);
    if (!moved)
        return false;
    memcpy(items, &moved, sizeof moved);
    return true;
}

/* Makes room for `needed` items in *items, whose capacity is *capacity: nothing
 * when there is, else the capacity doubled (from TP_ARRAY_FIRST) until it fits. */
static inline bool tp_array_grow(void *items, size_t *capacity, size_t needed, size_t item_size)
{
    if (needed <= *capacity)
        return true;
    size_t grown = *capacity ? *capacity : TP_ARRAY_FIRST;
    while (grown < needed)
        grown = grown > SIZE_MAX / 2 ? needed : grown * 2;
    if (!tp_array_resize(items, grown, item_size))
        return false;
    *capacity = grown;
    return true;
}

#endif /* TPEVENT_COMMON_ARRAY_H */
