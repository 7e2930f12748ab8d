/*
 * common/process.h built for its test: the same code, with its two ways of failing
 * to look made to happen on demand, so that production builds carry no hook. Set
 * tp_process_test_open_errno to make the next looks at /proc/<pid>/stat fail as at
 * the descriptor limit (EMFILE), tp_process_test_pidfd_errno to make pidfd_open
 * fail as on a kernel without it (ENOSYS); 0 looks for real.
 */
#ifndef TPEVENT_TESTS_BACKEND_PROCESS_FAULTS_H
#define TPEVENT_TESTS_BACKEND_PROCESS_FAULTS_H

/* Declared before the renaming below, so that only process.h's calls are renamed. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static int tp_process_test_open_errno;
static int tp_process_test_pidfd_errno;

static inline int tp_process_test_open(const char *path, int flags)
{
    if (tp_process_test_open_errno) {
        errno = tp_process_test_open_errno;
        return -1;
    }
    return open(path, flags);
}

/* process.h's one system call is pidfd_open(pid, flags). */
static inline long tp_process_test_syscall(long number, ...)
{
    va_list args;
    va_start(args, number);
    pid_t pid = va_arg(args, pid_t);
    int flags = va_arg(args, int);
    va_end(args);
    if (tp_process_test_pidfd_errno) {
        errno = tp_process_test_pidfd_errno;
        return -1;
    }
    return syscall(number, pid, flags);
}

#define open tp_process_test_open
#define syscall tp_process_test_syscall
#include "common/process.h"
#undef open
#undef syscall

#endif /* TPEVENT_TESTS_BACKEND_PROCESS_FAULTS_H */
