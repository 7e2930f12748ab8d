/*
 * Whether a process still runs, and since when: what both backends' interprocess
 * events use to tell a live peer from one that is gone or whose pid was reused.
 * Header-only (static inline), so that the core library and each backend module,
 * and a static build that links them all together, each get their own copy with
 * no symbol to clash. Its test builds it with failures on demand
 * (tests/backend/process_faults.h).
 *
 * Failing to look is never "gone" (issue 18): at the descriptor limit, or short of
 * memory, /proc/<pid>/stat cannot be opened, and a live peer declared dead drops
 * waits and fails queries. Only a definite answer (no such pid: ESRCH / ENOENT; a
 * zombie, an exiting process, another start time) is "gone"; anything else is
 * "alive, unknown". The calling process is always alive, without a look.
 *
 * Two ways to watch a peer (tp_process_watch):
 *  - a pidfd (pidfd_open, Linux 5.3+), opened once when the peer becomes known and
 *    checked with poll(): readable once the process has exited. It names one
 *    process, not a pid, so a pid reused by a later process, even within one clock
 *    tick, does not fool it; a check needs no new descriptor. Right after opening
 *    it the start time is read, so the pidfd is known to name the process the
 *    handle meant (the peer could have died and its pid been reused before).
 *  - the fallback, where pidfd_open is missing (ENOSYS) or could not be opened
 *    (descriptor limit): kill(pid, 0) (no descriptor: ESRCH = gone) and then the
 *    (pid, start time) pair of /proc/<pid>/stat. What it cannot see: a peer killed
 *    and its pid reused by a process started in the same clock tick (10 ms with
 *    USER_HZ 100) passes for the peer, and a wait on it may then never end.
 */
#ifndef TPEVENT_COMMON_PROCESS_H
#define TPEVENT_COMMON_PROCESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's PF_EXITING (include/linux/sched.h), in field 9 of /proc/<pid>/stat.
 * It is set as soon as a process starts to exit (SIGKILL included), while the
 * driver may still take a while to tear its contexts down. */
#define TP_PROC_FLAG_EXITING 0x4u

/* What a look at a process found. */
typedef enum tp_process_state {
    TP_PROCESS_GONE = 0,    /* definitely: no such pid, a zombie, exiting, another start time */
    TP_PROCESS_RUNNING = 1, /* it runs (start time known) */
    TP_PROCESS_UNKNOWN = 2, /* could not look (descriptor limit, memory, ...): take it as alive */
} tp_process_state;

/*
 * Reads /proc/<pid>/stat: TP_PROCESS_RUNNING with the start time, TP_PROCESS_GONE
 * if there is none by that pid (never was, exited, exiting, a zombie waiting to be
 * reaped: none of these reaches a record), TP_PROCESS_UNKNOWN if it could not look.
 */
static inline tp_process_state tp_process_look(int32_t pid, uint64_t *start_time)
{
    if (pid <= 0)
        return TP_PROCESS_GONE;
    char path[32], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? TP_PROCESS_GONE : TP_PROCESS_UNKNOWN;
    ssize_t length;
    do
        length = read(fd, text, sizeof text - 1);
    while (length < 0 && errno == EINTR);
    int read_errno = errno;
    close(fd);
    if (length < 0)
        return read_errno == ESRCH || read_errno == ENOENT ? TP_PROCESS_GONE : TP_PROCESS_UNKNOWN;
    if (length == 0)
        return TP_PROCESS_GONE; /* the process went between open and read */
    text[length] = '\0';
    /* Field 2 is the command's name in parentheses, which may hold spaces and
     * parentheses itself: field 3 starts after the last ')'. */
    const char *p = strrchr(text, ')');
    if (!p)
        return TP_PROCESS_UNKNOWN;
    p++;
    while (*p == ' ')
        p++;
    char state = *p++;
    if (state == 'Z' || state == 'X' || state == 'x')
        return TP_PROCESS_GONE;
    if (state == '\0')
        return TP_PROCESS_UNKNOWN;
    for (int field = 4; field <= 22; field++) {
        char *end;
        unsigned long long value = strtoull(p, &end, 10);
        if (end == p)
            return TP_PROCESS_UNKNOWN;
        if (field == 9 && (value & TP_PROC_FLAG_EXITING))
            return TP_PROCESS_GONE;
        if (field == 22) {
            *start_time = value;
            return TP_PROCESS_RUNNING;
        }
        p = end;
    }
    return TP_PROCESS_UNKNOWN;
}

/* The start time of a process known to run; false if it is gone or /proc could
 * not tell (callers that must tell those apart use tp_process_look). */
static inline bool tp_process_running(int32_t pid, uint64_t *start_time)
{
    return tp_process_look(pid, start_time) == TP_PROCESS_RUNNING;
}

/* A process as another process knows it: the pid and, so that a pid reused by a
 * later process is not taken for it, its start time (clock ticks after boot,
 * field 22 of /proc/<pid>/stat). */
typedef struct tp_process_id {
    int32_t pid;
    uint64_t start_time;
} tp_process_id;

/*
 * The calling process's identity; false only if /proc could not tell its start
 * time the first time it was asked in this process. Read once per process (a
 * child after fork reads its own), so that it still answers at the descriptor
 * limit.
 */
static inline bool tp_process_self(tp_process_id *self)
{
    static _Atomic int32_t cached_pid;
    static _Atomic uint64_t cached_start;
    int32_t pid = (int32_t)getpid();
    self->pid = pid;
    if (atomic_load_explicit(&cached_pid, memory_order_acquire) == pid) {
        self->start_time = atomic_load_explicit(&cached_start, memory_order_relaxed);
        return true;
    }
    if (!tp_process_running(pid, &self->start_time))
        return false;
    atomic_store_explicit(&cached_start, self->start_time, memory_order_relaxed);
    atomic_store_explicit(&cached_pid, pid, memory_order_release);
    return true;
}

/*
 * What the fallback can tell about `process`, with no pidfd: the calling process
 * is running without a look; kill(pid, 0) answers ESRCH for no such pid (no
 * descriptor needed); /proc then tells a zombie, an exiting process or another
 * start time.
 */
static inline tp_process_state tp_process_state_of(const tp_process_id *process)
{
    if (process->pid <= 0)
        return TP_PROCESS_GONE;
    if (process->pid == (int32_t)getpid()) {
        /* This very process, unless the id is of an earlier process that had
         * this pid: only the cached start time can tell, and it needs no look. */
        tp_process_id self;
        if (tp_process_self(&self) && self.start_time != process->start_time)
            return TP_PROCESS_GONE;
        return TP_PROCESS_RUNNING;
    }
    if (kill((pid_t)process->pid, 0) != 0 && errno == ESRCH)
        return TP_PROCESS_GONE;
    uint64_t start_time = 0;
    tp_process_state state = tp_process_look(process->pid, &start_time);
    if (state == TP_PROCESS_RUNNING && start_time != process->start_time)
        return TP_PROCESS_GONE;
    return state;
}

/* Whether `process` may still run: false only when it is known gone. */
static inline bool tp_process_is(const tp_process_id *process)
{
    return tp_process_state_of(process) != TP_PROCESS_GONE;
}

/* ------------------------------------------------------------ watches */

/* A peer watched for its whole life: its id and, where the kernel has them, a
 * pidfd opened when it became known (-1: the fallback). */
typedef struct tp_process_watch {
    tp_process_id id;
    int pidfd;
} tp_process_watch;

/* -1 and errno where there is no pidfd. */
static inline int tp_pidfd_open(int32_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/*
 * Starts watching `id`: TP_PROCESS_GONE if it is known gone already (no pidfd
 * kept), else the watch is set (with a pidfd where one could be opened; the
 * calling process needs none). Close it with tp_process_watch_close.
 */
static inline tp_process_state tp_process_watch_open(tp_process_watch *watch, const tp_process_id *id)
{
    watch->id = *id;
    watch->pidfd = -1;
    if (id->pid <= 0)
        return TP_PROCESS_GONE;
    if (id->pid == (int32_t)getpid())
        return tp_process_state_of(id);
    int fd = tp_pidfd_open(id->pid);
    if (fd < 0) {
        if (errno == ESRCH)
            return TP_PROCESS_GONE;
        /* ENOSYS (an older kernel), EMFILE, ...: the fallback. */
        return tp_process_state_of(id);
    }
    /* The pidfd names whichever process has the pid now: make sure it is the one
     * meant, now that it can no longer change under us. */
    tp_process_state state = tp_process_state_of(id);
    if (state == TP_PROCESS_GONE) {
        close(fd);
        return state;
    }
    watch->pidfd = fd;
    return state;
}

/* Whether the watched process may still run: false only when it is known gone. */
static inline bool tp_process_watch_alive(const tp_process_watch *watch)
{
    if (watch->pidfd < 0)
        return tp_process_is(&watch->id);
    struct pollfd pfd = {.fd = watch->pidfd, .events = POLLIN};
    int n;
    do
        n = poll(&pfd, 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0 || (pfd.revents & POLLNVAL))
        return true; /* could not look: alive, unknown */
    return !(pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

static inline void tp_process_watch_close(tp_process_watch *watch)
{
    if (watch->pidfd >= 0)
        close(watch->pidfd);
    watch->pidfd = -1;
}

/* How often a waiter on another process's record looks whether that process still
 * runs: the bound on noticing that it died, at the cost of a look each time. Both
 * backends' interprocess events use it. */
#define TP_LIVENESS_PERIOD_NS 20000000u

/*
 * Throttles those looks for calls made in a loop (query): true when a look is due
 * at `now` (ns), and then moves the next one a period on. Of threads racing at the
 * same moment one wins the look; the others take the last answer.
 */
static inline bool tp_liveness_due(_Atomic uint64_t *next_check_ns, uint64_t now)
{
    uint64_t next = atomic_load_explicit(next_check_ns, memory_order_relaxed);
    return now >= next && atomic_compare_exchange_strong_explicit(next_check_ns, &next, now + TP_LIVENESS_PERIOD_NS,
                                                                  memory_order_relaxed, memory_order_relaxed);
}

#endif /* TPEVENT_COMMON_PROCESS_H */
