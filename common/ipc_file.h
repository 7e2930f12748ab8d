/*
 * The shared memory file of an interprocess event, as both backends make and watch
 * it (backends/cpu/cpu_ipc_region.c, backends/gpu/gpu_ipc_page.c): a memfd sealed
 * at its size, a random token that names it, the mutex in it that every process
 * takes, and the liveness locks its handles hold on it. Header-only (static inline), as process.h. The includer defines
 * _GNU_SOURCE (memfd_create, OFD locks).
 *
 * Liveness that needs no pid: each handle holds an OFD lock on a byte of its own
 * past the file's data, on an open file description of its own. Any process,
 * whatever its PID namespace, sees the byte locked while the handle lives and free
 * once its process is gone: the kernel drops the lock with the description's last
 * descriptor.
 */
#ifndef TPEVENT_COMMON_IPC_FILE_H
#define TPEVENT_COMMON_IPC_FILE_H

#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* The file's mutex, shared by every process that maps it: process-shared, and
 * robust, so that a process killed while holding it does not block the others.
 * 0 or an errno value. */
static inline int tp_ipc_shared_mutex_init(pthread_mutex_t *mutex)
{
    pthread_mutexattr_t attr;
    int err = pthread_mutexattr_init(&attr);
    if (err != 0)
        return err;
    err = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (err == 0)
        err = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    if (err == 0)
        err = pthread_mutex_init(mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    return err;
}

/* Takes it; false where it is unusable. A holder that died leaves what it wrote
 * consistent at each step (the callers' rule for every write under it), so the
 * lock is taken on as is. */
static inline bool tp_ipc_shared_mutex_lock(pthread_mutex_t *mutex)
{
    int err = pthread_mutex_lock(mutex);
    if (err == EOWNERDEAD) {
        pthread_mutex_consistent(mutex);
        err = 0;
    }
    return err == 0;
}

/* Where the handles' locks are: past the data, a byte each, picked at random. */
#define TP_IPC_LOCK_BASE (UINT64_C(1) << 20)
#define TP_IPC_LOCK_SPAN (UINT64_C(1) << 40)

/* Random and never 0. Where entropy is not ready this early in boot a weaker one
 * will do: the token guards against stale handles, not against an adversary. */
static inline uint64_t tp_ipc_random_token(void)
{
    uint64_t token = 0;
    if (getrandom(&token, sizeof token, GRND_NONBLOCK) != (ssize_t)sizeof token)
        token = tp_now_ns() * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)getpid() << 32 ^ (uintptr_t)&token;
    return token ? token : 1;
}

/*
 * A memfd of `size` bytes, sealed at that size so that no process can shrink it
 * under the others' mappings (which would kill them with SIGBUS). -1 with errno set
 * where it could not be made; *sizing_failed then tells a memfd made and not sized
 * or sealed (closed again) from one that memfd_create refused.
 */
static inline int tp_ipc_sealed_memfd(const char *name, off_t size, bool *sizing_failed)
{
    *sizing_failed = false;
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, size) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        *sizing_failed = true;
        return -1;
    }
    return fd;
}

/* Takes a lock on a byte of fd's own past the data (fd: an open file description of
 * this handle's alone): its offset, or 0 where none could be taken. */
static inline uint64_t tp_ipc_liveness_lock(int fd)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        uint64_t offset = TP_IPC_LOCK_BASE + tp_ipc_random_token() % TP_IPC_LOCK_SPAN;
        struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)offset, .l_len = 1};
        if (fcntl(fd, F_OFD_SETLK, &lock) == 0)
            return offset;
    }
    return 0;
}

/* Whether the lock at `offset` is free, its handle gone. Another description's lock
 * shows as a conflict, a lock of fd's own would not: the caller leaves its own out.
 * False for an offset that is no lock's, and where it cannot look: failing to look
 * is never "gone". */
static inline bool tp_ipc_liveness_lock_free(int fd, uint64_t offset)
{
    if (offset < TP_IPC_LOCK_BASE)
        return false;
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t)offset, .l_len = 1};
    return fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type == F_UNLCK;
}

/* A received descriptor's description is the sender's: reopened (through
 * /proc/self/fd) as one of this handle's own, to lock, so that the sender's lock
 * goes with the sender and this one's with this process. *fd becomes the new
 * descriptor, the old one closed; false, *fd as it was, where it cannot (no /proc). */
static inline bool tp_ipc_reopen_own(int *fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", *fd);
    int own = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (own < 0)
        return false;
    close(*fd);
    *fd = own;
    return true;
}

#endif /* TPEVENT_COMMON_IPC_FILE_H */
