/*
 * common/pointer_table.h, tested on its own: the table behind the GPU pool's pinned
 * natives (one per pending wait of an OpenCL stream on a CUDA record: thousands).
 * Every key in the table is found with its entry, every other is not, through
 * growth and removals in any order (which move later entries of a probe run back);
 * and the last removal frees grown slots, but keeps the first ones.
 */
#include "common/pointer_table.h"

#include "check.h"

typedef struct entry {
    const void *key;
    int value;
} entry;

enum { KEYS = 5000 };

/* Distinct, non-NULL keys in the shape of heap addresses (16-byte steps, alike in
 * their low bits), from the addresses of one array's items. */
static char key_space[KEYS * 16];

static const void *key_of(int i)
{
    return &key_space[i * 16];
}

/* splitmix64, for a reproducible shuffle. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void shuffle(int *order, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_random(&seed) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Each key i is in the table with value i exactly where present[i]. */
static bool table_matches(const tp_pointer_table *table, const bool *present, int n)
{
    size_t count = 0;
    for (int i = 0; i < n; i++) {
        const entry *found = tp_pointer_table_find(table, key_of(i));
        if (present[i] != (found != NULL) || (found && found->value != i))
            return false;
        count += present[i];
    }
    return table->count == count;
}

TEST(pointer_table_finds_every_key_through_growth)
{
    tp_pointer_table table = TP_POINTER_TABLE_INIT(entry);
    static bool present[KEYS];
    CHECK(tp_pointer_table_find(&table, key_of(0)) == NULL);
    for (int i = 0; i < KEYS; i++) {
        entry *added = tp_pointer_table_insert(&table, key_of(i));
        CHECK(added != NULL && added->key == key_of(i) && added->value == 0);
        added->value = i;
        present[i] = true;
        if (i % 97 == 0 || i == KEYS - 1)
            CHECK(table_matches(&table, present, KEYS));
    }
    CHECK(table.capacity >= 2 * (size_t)KEYS);
    for (int i = 0; i < KEYS; i++)
        tp_pointer_table_remove(&table, tp_pointer_table_find(&table, key_of(i)));
    CHECK(table.count == 0 && table.slots == NULL && table.capacity == 0);
    return 0;
}

TEST(pointer_table_removals_in_any_order_keep_the_rest_found)
{
    static int order[KEYS];
    static bool present[KEYS];
    for (uint64_t seed = 1; seed <= 4; seed++) {
        tp_pointer_table table = TP_POINTER_TABLE_INIT(entry);
        for (int i = 0; i < KEYS; i++) {
            entry *added = tp_pointer_table_insert(&table, key_of(i));
            CHECK(added != NULL);
            added->value = i;
            present[i] = true;
        }
        shuffle(order, KEYS, seed);
        for (int k = 0; k < KEYS; k++) {
            entry *found = tp_pointer_table_find(&table, key_of(order[k]));
            CHECK(found != NULL && found->value == order[k]);
            tp_pointer_table_remove(&table, found);
            present[order[k]] = false;
            if (k % 211 == 0)
                CHECK(table_matches(&table, present, KEYS));
        }
        CHECK(table.count == 0 && table.slots == NULL);
    }
    return 0;
}

/* Inserts and removals interleaved, as pins and unpins come: the table never holds
 * more than a window of keys, and stays right throughout. */
TEST(pointer_table_interleaved_inserts_and_removals_stay_right)
{
    static bool present[KEYS];
    enum { WINDOW = 300 };
    tp_pointer_table table = TP_POINTER_TABLE_INIT(entry);
    uint64_t seed = 7;
    for (int i = 0; i < KEYS; i++) {
        entry *added = tp_pointer_table_insert(&table, key_of(i));
        CHECK(added != NULL);
        added->value = i;
        present[i] = true;
        if (i >= WINDOW) { /* one of the window's keys, at random */
            int victim = i - (int)(next_random(&seed) % WINDOW);
            while (!present[victim])
                victim++;
            tp_pointer_table_remove(&table, tp_pointer_table_find(&table, key_of(victim)));
            present[victim] = false;
        }
        if (i % 101 == 0)
            CHECK(table_matches(&table, present, i + 1));
    }
    CHECK(table_matches(&table, present, KEYS));
    CHECK(table.count == WINDOW && table.capacity <= 4 * (size_t)WINDOW);
    for (int i = 0; i < KEYS; i++)
        if (present[i])
            tp_pointer_table_remove(&table, tp_pointer_table_find(&table, key_of(i)));
    CHECK(table.slots == NULL);
    return 0;
}

/* One entry at a time, as one pin at a time comes: the first slots are made once
 * and kept. */
TEST(pointer_table_one_entry_at_a_time_allocates_once)
{
    tp_pointer_table table = TP_POINTER_TABLE_INIT(entry);
    entry *added = tp_pointer_table_insert(&table, key_of(0));
    CHECK(added != NULL);
    unsigned char *slots = table.slots;
    tp_pointer_table_remove(&table, added);
    CHECK(table.count == 0 && table.slots == slots && table.capacity == TP_ARRAY_FIRST);
    CHECK(tp_pointer_table_find(&table, key_of(0)) == NULL);
    for (int i = 1; i < 100; i++) {
        CHECK((added = tp_pointer_table_insert(&table, key_of(i))) != NULL);
        CHECK(table.slots == slots && tp_pointer_table_find(&table, key_of(i)) == added);
        tp_pointer_table_remove(&table, added);
    }
    free(table.slots);
    return 0;
}
