/*
 * Pointer tables: fixed-size entries found by a pointer (a native event, say),
 * in O(1) however many there are. Open addressing, linear probing, at most half
 * full; removal moves the later entries of a probe run back (no tombstones), and
 * the last removal frees slots grown past the first TP_ARRAY_FIRST, so that a
 * burst of thousands leaves nothing behind while one entry at a time allocates
 * once. Not locked: the owner locks.
 *
 * Each entry starts with its key, a non-NULL pointer (NULL marks a free slot);
 * the rest is the owner's. An entry's address is valid until the next insert or
 * remove.
 */
#ifndef TPEVENT_COMMON_POINTER_TABLE_H
#define TPEVENT_COMMON_POINTER_TABLE_H

#include "common/array.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tp_pointer_table {
    unsigned char *slots;
    size_t entry_size;
    size_t capacity; /* 0 or a power of two */
    size_t count;
} tp_pointer_table;

/* An empty table of entries of type `entry_type` (its first member the key). */
#define TP_POINTER_TABLE_INIT(entry_type) \
    {                                     \
        NULL, sizeof(entry_type), 0, 0    \
    }

static inline const void *tp_pointer_table_key_at(const unsigned char *entry)
{
    const void *key;
    memcpy(&key, entry, sizeof key);
    return key;
}

/* A key's first slot to look at: its bits mixed (the low bits of heap addresses
 * are alike; murmur3's finalizer), masked to the table. */
static inline size_t tp_pointer_table_home(const void *key, size_t capacity)
{
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & (capacity - 1);
}

/* The entry of `key`, or NULL. */
static inline void *tp_pointer_table_find(const tp_pointer_table *table, const void *key)
{
    if (table->capacity == 0)
        return NULL;
    size_t mask = table->capacity - 1;
    for (size_t i = tp_pointer_table_home(key, table->capacity);; i = (i + 1) & mask) { /* ends: half empty */
        unsigned char *entry = table->slots + i * table->entry_size;
        const void *found = tp_pointer_table_key_at(entry);
        if (found == key)
            return entry;
        if (!found)
            return NULL;
    }
}

/* The free slot of `slots` where `key` goes. */
static inline unsigned char *tp_pointer_table_slot_for(unsigned char *slots, size_t entry_size, size_t capacity,
                                                       const void *key)
{
    size_t i = tp_pointer_table_home(key, capacity);
    while (tp_pointer_table_key_at(slots + i * entry_size))
        i = (i + 1) & (capacity - 1);
    return slots + i * entry_size;
}

/* A new entry for `key`, which is not in the table: zeroed but for its key. NULL
 * when out of memory (the table is left as it was). */
static inline void *tp_pointer_table_insert(tp_pointer_table *table, const void *key)
{
    if ((table->count + 1) * 2 > table->capacity) {
        size_t capacity = table->capacity ? table->capacity * 2 : TP_ARRAY_FIRST;
        unsigned char *slots = calloc(capacity, table->entry_size);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < table->capacity; i++) {
            const unsigned char *entry = table->slots + i * table->entry_size;
            const void *moved = tp_pointer_table_key_at(entry);
            if (moved)
                memcpy(tp_pointer_table_slot_for(slots, table->entry_size, capacity, moved), entry, table->entry_size);
        }
        free(table->slots);
        table->slots = slots;
        table->capacity = capacity;
    }
    unsigned char *entry = tp_pointer_table_slot_for(table->slots, table->entry_size, table->capacity, key);
    memcpy(entry, &key, sizeof key);
    table->count++;
    return entry;
}

/* Removes an entry tp_pointer_table_find or _insert returned. */
static inline void tp_pointer_table_remove(tp_pointer_table *table, void *entry_ptr)
{
    size_t size = table->entry_size, mask = table->capacity - 1;
    size_t hole = (size_t)((unsigned char *)entry_ptr - table->slots) / size;
    memset(table->slots + hole * size, 0, size);
    for (size_t i = (hole + 1) & mask;; i = (i + 1) & mask) {
        unsigned char *entry = table->slots + i * size;
        const void *key = tp_pointer_table_key_at(entry);
        if (!key)
            break;
        size_t home = tp_pointer_table_home(key, table->capacity);
        /* It stays if its home lies cyclically in (hole, i]. */
        bool stays = hole <= i ? hole < home && home <= i : hole < home || home <= i;
        if (!stays) {
            memcpy(table->slots + hole * size, entry, size);
            memset(entry, 0, size);
            hole = i;
        }
    }
    if (--table->count == 0 && table->capacity > TP_ARRAY_FIRST) {
        free(table->slots);
        table->slots = NULL;
        table->capacity = 0;
    }
}

#endif /* TPEVENT_COMMON_POINTER_TABLE_H */
