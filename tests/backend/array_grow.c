/*
 * common/array.h, tested on its own: the growing array every part of tpevent appends
 * through. Capacity doubles from TP_ARRAY_FIRST and only when needed, so an array
 * that does not outgrow itself is never reallocated; a size that would overflow is
 * refused before anything is allocated, the array and its capacity left as they
 * were. (Failures of realloc itself are injected by tests/alloc.)
 */
#include "common/array.h"

#include "check.h"

TEST(array_grow_doubles_from_first_and_only_when_needed)
{
    int *items = NULL;
    size_t capacity = 0;
    CHECK(tp_array_grow(&items, &capacity, 1, sizeof *items));
    CHECK(items != NULL && capacity == TP_ARRAY_FIRST);
    for (int i = 0; i < (int)capacity; i++)
        items[i] = i;
    int *before = items;
    CHECK(tp_array_grow(&items, &capacity, TP_ARRAY_FIRST, sizeof *items));
    CHECK(items == before && capacity == TP_ARRAY_FIRST);
    CHECK(tp_array_grow(&items, &capacity, TP_ARRAY_FIRST + 1, sizeof *items));
    CHECK(capacity == 2 * TP_ARRAY_FIRST);
    CHECK(tp_array_grow(&items, &capacity, 5 * TP_ARRAY_FIRST, sizeof *items));
    CHECK(capacity == 8 * TP_ARRAY_FIRST);
    for (int i = 0; i < (int)TP_ARRAY_FIRST; i++)
        CHECK(items[i] == i);
    free(items);
    return 0;
}

TEST(array_grow_refuses_a_size_that_overflows)
{
    double *items = NULL;
    size_t capacity = 0;
    CHECK(tp_array_grow(&items, &capacity, 4, sizeof *items));
    double *before = items;
    CHECK(!tp_array_grow(&items, &capacity, SIZE_MAX / 2 + 2, sizeof *items));
    CHECK(items == before && capacity == TP_ARRAY_FIRST);
    CHECK(!tp_array_resize(&items, SIZE_MAX / sizeof *items + 1, sizeof *items));
    CHECK(items == before);
    free(items);
    return 0;
}

TEST(array_resize_keeps_the_items_it_keeps)
{
    char *items = NULL;
    CHECK(tp_array_resize(&items, 3, 1));
    memcpy(items, "abc", 3);
    CHECK(tp_array_resize(&items, 5, 1));
    CHECK(memcmp(items, "abc", 3) == 0);
    free(items);
    return 0;
}
