/*
 * Runs one test of this program again in a child process, with `mark_env` set in
 * its environment (the child's half of the test looks for it), and fails the test
 * unless the child prints "ready" and then ends with `exit_status` within
 * `seconds`: for the tests that a process exits with work held for good.
 */
#define _GNU_SOURCE /* environ, program_invocation_name */

#include "support.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void expect_child_exits(const char *device, const char *test, const char *mark_env, int exit_status, double seconds)
{
    expect_child_exits_with_peer(device, NULL, test, mark_env, exit_status, seconds);
}

void expect_child_exits_with_peer(const char *device, const char *peer, const char *test, const char *mark_env,
                                  int exit_status, double seconds)
{
    char mark[128];
    snprintf(mark, sizeof mark, "%s=1", mark_env);
    /* The environment with the child's mark added, and the same test again. */
    size_t count = 0;
    while (environ[count] != NULL)
        count++;
    char **child_env = calloc(count + 2, sizeof *child_env);
    CHECK(child_env != NULL);
    for (size_t i = 0; i < count; i++)
        child_env[i] = environ[i];
    child_env[count] = mark;
    /* The child runs as this process does, --unfinished too: what it cannot do on an
     * unfinished backend it skips, and so does this test (below). */
    char *child_argv[] = {
        "tpevent_conformance", "--device", (char *)device, "--test", (char *)test, NULL, NULL, NULL, NULL};
    int argc = 5;
    if (peer) {
        child_argv[argc++] = "--peer";
        child_argv[argc++] = (char *)peer;
    }
    if (test_unfinished_type() != NULL)
        child_argv[argc] = "--unfinished";
    int out[2];
    CHECK(pipe(out) == 0);
    posix_spawn_file_actions_t actions;
    CHECK(posix_spawn_file_actions_init(&actions) == 0);
    CHECK(posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO) == 0);
    CHECK(posix_spawn_file_actions_addclose(&actions, out[0]) == 0);
    pid_t child;
    /* This program as it was started (argv[0]), not /proc/self/exe: under valgrind
     * that is valgrind's own tool. */
    CHECK(posix_spawn(&child, program_invocation_name, &actions, NULL, child_argv, child_env) == 0);
    posix_spawn_file_actions_destroy(&actions);
    free(child_env);
    close(out[1]);

    /* Its output until it closes (at its end), then its status: both in time. */
    char said[512] = "";
    size_t length = 0;
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
        int left_ms = (int)((deadline - monotonic_seconds()) * 1000.0);
        struct pollfd p = {out[0], POLLIN, 0};
        int ready = left_ms > 0 ? poll(&p, 1, left_ms) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            kill(child, SIGKILL);
            (void)waitpid(child, NULL, 0);
            check_failed(__FILE__, __LINE__, "the child did not end within %.0f s of its exit (it said \"%s\")",
                         seconds, said);
        }
        ssize_t got = read(out[0], said + length, sizeof said - 1 - length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || length + (size_t)got >= sizeof said - 1)
            break;
        length += (size_t)got;
        said[length] = '\0';
    }
    close(out[0]);
    int status = 0;
    for (;;) {
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child)
            break;
        CHECK(done == 0);
        if (monotonic_seconds() > deadline) {
            kill(child, SIGKILL);
            (void)waitpid(child, NULL, 0);
            check_failed(__FILE__, __LINE__, "the child closed its output but did not end within %.0f s", seconds);
        }
        sleep_ms(5);
    }
    if (test_unfinished_type() != NULL && WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP) {
        printf("%s", said); /* its "skipped: <why>" */
        fflush(stdout);
        _Exit(TEST_SKIP);
    }
    CHECK_CONTAINS(said, "ready");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != exit_status)
        check_failed(__FILE__, __LINE__, "the child ended with %s %d, not exit status %d (it said \"%s\")",
                     WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), exit_status, said);
}
