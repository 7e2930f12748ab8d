/*
 * common/process.h (issue 18 items 1-2), tested on its own: how a peer
 * process is watched. A real pid reuse within one clock tick cannot be staged
 * here; what is tested is that the pidfd path tells a live child from one that
 * exited, that the pidfd keeps naming the process it was opened for (it says
 * "gone" for a child that exited even though the (pid, start time) pair is faked
 * to look alive), that the fallback without pidfd_open (ENOSYS) still works, and
 * that a look that fails (EMFILE) never answers "gone".
 */
#define _GNU_SOURCE
#include "process_faults.h" /* common/process.h, with failures on demand */

#include "check.h"

#include <signal.h>
#include <sys/wait.h>

/* A child that sleeps until killed. */
static pid_t start_sleeper(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

static tp_process_id id_of(pid_t pid)
{
    tp_process_id id = {.pid = (int32_t)pid};
    /* /proc may not show the new child's start time at once: retry. */
    for (int i = 0; i < 1000 && !tp_process_running(id.pid, &id.start_time); i++)
        usleep(1000);
    CHECK(id.start_time != 0);
    return id;
}

static void kill_and_reap(pid_t pid)
{
    CHECK(kill(pid, SIGKILL) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
}

TEST(process_pidfd_tells_live_from_exited)
{
    pid_t pid = start_sleeper();
    tp_process_id id = id_of(pid);
    tp_process_watch watch;
    CHECK(tp_process_watch_open(&watch, &id) == TP_PROCESS_RUNNING);
    if (watch.pidfd < 0) {
        printf("skipped: no pidfd_open here (%s)\n", strerror(errno));
        kill_and_reap(pid);
        return TEST_SKIP;
    }
    CHECK(tp_process_watch_alive(&watch));
    /* The pidfd needs no look at /proc: alive even at the descriptor limit. */
    tp_process_test_open_errno = EMFILE;
    CHECK(tp_process_watch_alive(&watch));
    tp_process_test_open_errno = 0;

    CHECK(kill(pid, SIGKILL) == 0);
    bool gone = false;
    for (int i = 0; i < 5000 && !gone; i++) {
        gone = !tp_process_watch_alive(&watch);
        if (!gone)
            usleep(1000);
    }
    CHECK(gone); /* exited, not yet reaped: a zombie */
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(!tp_process_watch_alive(&watch)); /* reaped */
    tp_process_watch_close(&watch);
    CHECK(watch.pidfd == -1);
    return 0;
}

/* What the pidfd sees and the (pid, start time) pair cannot. A watch is opened
 * on a live child, which then exits; its pid reused by a live process started in
 * the same tick is staged by giving the watch that process's (pid, start time),
 * here this test's own. The pair then looks alive (the fallback, pidfd -1, says
 * so, as it would after a real reuse); the pidfd still says gone. */
TEST(process_pidfd_is_not_fooled_by_the_pair)
{
    pid_t pid = start_sleeper();
    tp_process_id id = id_of(pid);
    tp_process_watch watch;
    CHECK(tp_process_watch_open(&watch, &id) == TP_PROCESS_RUNNING);
    if (watch.pidfd < 0) {
        kill_and_reap(pid);
        printf("skipped: no pidfd_open here\n");
        return TEST_SKIP;
    }
    kill_and_reap(pid);
    tp_process_id reused;
    CHECK(tp_process_self(&reused));
    watch.id = reused;
    CHECK(!tp_process_watch_alive(&watch));
    tp_process_watch fallback = {.id = reused, .pidfd = -1};
    CHECK(tp_process_watch_alive(&fallback)); /* what the pair alone would answer */
    tp_process_watch_close(&watch);
    return 0;
}

TEST(process_fallback_without_pidfd_open)
{
    tp_process_test_pidfd_errno = ENOSYS;
    pid_t pid = start_sleeper();
    tp_process_id id = id_of(pid);
    tp_process_watch watch;
    CHECK(tp_process_watch_open(&watch, &id) == TP_PROCESS_RUNNING);
    CHECK(watch.pidfd == -1);
    CHECK(tp_process_watch_alive(&watch));
    /* A different start time: another process with that pid. */
    tp_process_id other = {.pid = id.pid, .start_time = id.start_time + 1};
    CHECK(!tp_process_is(&other));
    CHECK(kill(pid, SIGKILL) == 0);
    bool gone = false;
    for (int i = 0; i < 5000 && !gone; i++) {
        gone = !tp_process_watch_alive(&watch);
        if (!gone)
            usleep(1000);
    }
    CHECK(gone); /* a zombie or exiting: /proc says so */
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(!tp_process_watch_alive(&watch)); /* reaped: kill(pid, 0) says ESRCH */
    tp_process_watch_close(&watch);
    tp_process_test_pidfd_errno = 0;
    return 0;
}

TEST(process_failed_look_is_not_gone)
{
    tp_process_test_pidfd_errno = ENOSYS;
    pid_t pid = start_sleeper();
    tp_process_id id = id_of(pid);
    tp_process_id self;
    CHECK(tp_process_self(&self));

    tp_process_test_open_errno = EMFILE;
    uint64_t start_time = 0;
    CHECK(tp_process_look(id.pid, &start_time) == TP_PROCESS_UNKNOWN);
    CHECK(tp_process_is(&id));
    tp_process_watch watch;
    CHECK(tp_process_watch_open(&watch, &id) != TP_PROCESS_GONE);
    CHECK(tp_process_watch_alive(&watch));
    /* The calling process: alive, and its identity known, without a look. */
    CHECK(tp_process_is(&self));
    tp_process_id again;
    CHECK(tp_process_self(&again));
    CHECK(again.pid == self.pid && again.start_time == self.start_time);
    tp_process_test_open_errno = ENOMEM;
    CHECK(tp_process_is(&id));
    tp_process_test_open_errno = 0;

    kill_and_reap(pid);
    /* A pid nobody has: gone for sure, whatever /proc says (kill: ESRCH). */
    tp_process_test_open_errno = EMFILE;
    CHECK(!tp_process_is(&id));
    tp_process_test_open_errno = 0;
    CHECK(!tp_process_is(&id));
    tp_process_watch_close(&watch);
    tp_process_test_pidfd_errno = 0;
    return 0;
}
