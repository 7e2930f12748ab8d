/*
 * Hazard slots: how a thread that reads an event's latest record (query,
 * synchronize, wait, elapsed) keeps a record that replaces it from releasing the
 * marker under it (rule 10), at the cost of one fence per read.
 *
 * A reader publishes the record it is about to use in its thread's slot, then
 * loads `latest` again: if it is still the same, a recorder that replaced it
 * after that load will see the slot; if not, the reader retries with the new one.
 * A recorder exchanges `latest`, then looks through every slot: a record that no
 * slot holds is released at once, else it waits on the event's retired stack for a
 * later record (ocl_event.c). Both sides are sequentially consistent (the store
 * before the reader's load, the exchange before the recorder's loads), so one of
 * them sees the other.
 *
 * The per-event count of readers this replaces took two atomic adds per read (four
 * for elapsed): ~13 ns of a ~16 ns PoCL query, ~18 ns of a ~7 ns elapsed
 * (bench/opencl). A slot store is one locked instruction, its clear a plain store.
 *
 * Slots are made once per thread that reads, linked into one list that is only
 * ever pushed to, and given back at the thread's exit (a pthread key's destructor)
 * for the next new thread: the recorder's walk is as long as the most threads that
 * read at once. The thread's slot pointer is an initial-exec thread-local: a
 * dynamic TLS block in a dlopened module crashes LeakSanitizer's thread walk
 * (ocl_host_fn.c), the static one does not, and it costs no call.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl_internal.h"

#include <stdlib.h>

static _Atomic(ocl_reader_slot *) all_slots;
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;
static bool slot_key_made;

__attribute__((tls_model("initial-exec"))) _Thread_local ocl_reader_slot *tp_ocl_my_slot;

static void slot_give_back(void *slot_arg)
{
    ocl_reader_slot *slot = slot_arg;
    tp_ocl_my_slot = NULL;
    atomic_store_explicit(&slot->in_use, false, memory_order_release);
}

static void slot_key_create(void)
{
    slot_key_made = pthread_key_create(&slot_key, slot_give_back) == 0;
}

/* A slot given back by a thread that exited, or NULL. */
static ocl_reader_slot *slot_reuse(void)
{
    for (ocl_reader_slot *slot = atomic_load_explicit(&all_slots, memory_order_acquire); slot; slot = slot->next) {
        bool free_slot = false;
        if (!atomic_load_explicit(&slot->in_use, memory_order_relaxed))
            if (atomic_compare_exchange_strong_explicit(&slot->in_use, &free_slot, true, memory_order_acquire,
                                                        memory_order_relaxed))
                return slot;
    }
    return NULL;
}

/* Out of memory for a slot of its own, a thread reads through this one, one
 * such thread at a time (tp_ocl_read_leave unlocks). */
static ocl_reader_slot shared_slot = {.in_use = true, .shared = true};
static pthread_mutex_t shared_slot_lock = PTHREAD_MUTEX_INITIALIZER;

ocl_reader_slot *tp_ocl_reader_slot_make(void)
{
    pthread_once(&slot_key_once, slot_key_create);
    ocl_reader_slot *slot = slot_key_made ? slot_reuse() : NULL;
    if (!slot) {
        slot = calloc(1, sizeof *slot);
        if (!slot) {
            pthread_mutex_lock(&shared_slot_lock);
            return &shared_slot;
        }
        atomic_init(&slot->in_use, true);
        ocl_reader_slot *head = atomic_load_explicit(&all_slots, memory_order_relaxed);
        do
            slot->next = head;
        while (!atomic_compare_exchange_weak_explicit(&all_slots, &head, slot, memory_order_release,
                                                      memory_order_relaxed));
    }
    /* Without a key the slot is never given back: one slot per thread, kept. */
    if (slot_key_made)
        (void)pthread_setspecific(slot_key, slot);
    tp_ocl_my_slot = slot;
    return slot;
}

void tp_ocl_shared_slot_leave(void)
{
    pthread_mutex_unlock(&shared_slot_lock);
}

bool tp_ocl_record_in_use(const ocl_record *record)
{
    for (int i = 0; i < OCL_HAZARDS; i++)
        if (atomic_load_explicit(&shared_slot.hazard[i], memory_order_seq_cst) == record)
            return true;
    for (ocl_reader_slot *slot = atomic_load_explicit(&all_slots, memory_order_acquire); slot; slot = slot->next)
        for (int i = 0; i < OCL_HAZARDS; i++)
            if (atomic_load_explicit(&slot->hazard[i], memory_order_seq_cst) == record)
                return true;
    return false;
}
