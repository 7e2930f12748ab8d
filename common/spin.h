/*
 * Spin-then-sleep, the one way every wait of tpevent that does not sleep at once is
 * written (the core's timed and cross-backend waits, the CPU backend's synchronize,
 * the GPU backend's host-function threads): spin on the condition for TP_SPIN_NS,
 * then sleep the waiter's own way, in pauses from TP_PAUSE_FIRST_NS doubling up to
 * TP_PAUSE_LONGEST_NS where the waiter polls between sleeps.
 * The includer defines _POSIX_C_SOURCE (200809L) before any system header.
 */
#ifndef TPEVENT_COMMON_SPIN_H
#define TPEVENT_COMMON_SPIN_H

#include "common/clock.h"

#include <stdbool.h>
#include <stdint.h>

/* How long a wait spins before it sleeps: long enough to catch what is a few us
 * away (a worker about to finish a short task, an idle GPU stream reaching a record)
 * without a futex or driver round trip, short enough that a wait for long work costs
 * its thread nothing measurable. */
#define TP_SPIN_NS 20000u

/* The sleeps of a polling wait: the first as long as the spin, each next one twice
 * the last, none over 1 ms, so that a record is seen at most 1 ms late and a long
 * wait costs well under 1% of a CPU. */
#define TP_PAUSE_FIRST_NS TP_SPIN_NS
#define TP_PAUSE_LONGEST_NS 1000000u

static inline uint64_t tp_pause_next(uint64_t pause_ns)
{
    return pause_ns * 2 < TP_PAUSE_LONGEST_NS ? pause_ns * 2 : TP_PAUSE_LONGEST_NS;
}

/*
 * The spin half: true as soon as reached(arg) is, false once `spin_ns` went by
 * without it (the caller then sleeps its own way). A clock read costs about as much
 * as 20 pauses, so the deadline is looked at once every 64 spins.
 */
static inline bool tp_spin_until(bool (*reached)(const void *arg), const void *arg, uint64_t spin_ns)
{
    uint64_t deadline = tp_now_ns() + spin_ns;
    for (unsigned spins = 1;; spins++) {
        if (reached(arg))
            return true;
        tp_cpu_relax();
        if (spins % 64 == 0 && tp_now_ns() >= deadline)
            return false;
    }
}

#endif /* TPEVENT_COMMON_SPIN_H */
