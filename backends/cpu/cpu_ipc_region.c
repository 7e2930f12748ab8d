/*
 * Where an interprocess event's shared record state lives, and its lifetime.
 *
 * The region is a memfd: it has no name in any file system, so nothing of it
 * can be left behind however the processes end, SIGKILL included; the kernel
 * frees it with the last descriptor and mapping. Another process opens
 * it through /proc/<pid>/fd/<fd> of a process that holds it, which the kernel
 * allows to processes of the same user (the check that guards reading the other
 * process's memory). The handle's payload says which pid and descriptor, the pid's
 * start time (so that a pid reused by another process is not taken for the
 * exporter) and a random token that the region must hold.
 *
 * An event handed over a Unix socket (tp_event_ipc_send) needs none of this: the
 * receiver gets the descriptor itself (SCM_RIGHTS), across PID, IPC and mount
 * namespaces, and checks it the same way (tp_cpu_ipc_adopt).
 *
 * Opening looks before it leaps: the descriptor a handle names may by now be
 * anything, so its link, type, size and seals are checked before it is mapped,
 * and the region's magic, layout and token after.
 */
#include "backends/cpu/cpu_ipc.h"
#include "common/ipc_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The memfd's name, as readlink shows it ("/memfd:tpevent-cpu-event (deleted)"). */
#define CPU_IPC_MEMFD_NAME "tpevent-cpu-event"
#define CPU_IPC_MEMFD_LINK "/memfd:" CPU_IPC_MEMFD_NAME

/* The inode of this process's PID namespace, which tells apart equal pids of two
 * containers; 0 where /proc cannot say. */
static uint64_t pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/*
 * Liveness that needs no pid (common/ipc_file.h): each handle holds an OFD lock on a
 * byte of its own past the region, on an open file description of its own
 * (memfd_create's, an open of /proc/<pid>/fd, or a received one reopened:
 * tp_cpu_ipc_adopt). A receiver holds the sender's description only until it has
 * reopened its own; one that could not (no /proc) keeps it, takes no lock and never
 * judges (it would see the sender's lock as its own), and the sender is then never
 * taken for gone.
 */
bool tp_cpu_ipc_owner_gone(const cpu_ipc *ipc, uint64_t offset)
{
    return ipc->lock_offset != 0 && tp_ipc_liveness_lock_free(ipc->fd, offset);
}

/* `own`: fd is an open file description of this handle's alone, fit to lock. */
static tp_status ipc_wrap(int fd, cpu_ipc_region *region, const tp_process_id *self, bool own, const char *operation,
                          cpu_ipc **out)
{
    cpu_ipc *ipc = calloc(1, sizeof *ipc);
    if (!ipc) {
        munmap(region, CPU_IPC_REGION_SIZE);
        close(fd);
        return tp_cpu_host()->fail(TP_ERR_OUT_OF_MEMORY, "%s: out of memory", operation);
    }
    atomic_init(&ipc->refs, 1);
    ipc->fd = fd;
    ipc->region = region;
    ipc->self = *self;
    ipc->self_pid_ns = pid_namespace();
    ipc->exporter = (tp_process_watch){.id = {0, 0}, .pidfd = -1};
    atomic_init(&ipc->next_liveness_check_ns, 0);
    atomic_init(&ipc->dead_ticket, 0);
    ipc->lock_offset = 0;
    if (own)
        ipc->lock_offset = tp_ipc_liveness_lock(fd);
    *out = ipc;
    return TP_OK;
}

tp_status tp_cpu_ipc_create(unsigned flags, const char *operation, cpu_ipc **out)
{
    const tp_host *host = tp_cpu_host();
    tp_process_id self;
    if (!tp_process_self(&self))
        return host->fail(TP_ERR_BACKEND, "%s: cannot read this process's start time from /proc/self/stat", operation);
    bool sizing_failed;
    int fd = tp_ipc_sealed_memfd(CPU_IPC_MEMFD_NAME, CPU_IPC_REGION_SIZE, &sizing_failed);
    if (fd < 0 && sizing_failed)
        return host->fail(TP_ERR_BACKEND, "%s: sizing an interprocess event's shared memory: %s", operation,
                          strerror(errno));
    if (fd < 0)
        return host->fail(TP_ERR_BACKEND, "%s: memfd_create for an interprocess event: %s", operation, strerror(errno));
    cpu_ipc_region *region = mmap(NULL, CPU_IPC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (region == MAP_FAILED) {
        int err = errno;
        close(fd);
        return host->fail(TP_ERR_BACKEND, "%s: mmap of an interprocess event's shared memory: %s", operation,
                          strerror(err));
    }
    /* The memfd starts zeroed: no channel used, never recorded. */
    memcpy(region->magic, CPU_IPC_MAGIC, sizeof region->magic);
    region->layout_version = CPU_IPC_LAYOUT_VERSION;
    region->size = CPU_IPC_REGION_SIZE;
    region->token = tp_ipc_random_token();
    region->flags = flags & TP_EVENT_BLOCKING;
    int err = tp_ipc_shared_mutex_init(&region->lock);
    if (err != 0) {
        munmap(region, CPU_IPC_REGION_SIZE);
        close(fd);
        return host->fail(TP_ERR_BACKEND, "%s: a process-shared robust mutex: %s", operation, strerror(err));
    }
    return ipc_wrap(fd, region, &self, true, operation, out);
}

void tp_cpu_ipc_ref(cpu_ipc *ipc)
{
    atomic_fetch_add_explicit(&ipc->refs, 1, memory_order_relaxed);
}

void tp_cpu_ipc_unref(cpu_ipc *ipc)
{
    if (atomic_fetch_sub_explicit(&ipc->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* The lock is not destroyed: other processes may be using it. */
    munmap(ipc->region, CPU_IPC_REGION_SIZE);
    close(ipc->fd); /* and with it the lock: this handle is gone */
    tp_process_watch_close(&ipc->exporter);
    free(ipc);
}

/* Why /proc/<pid>/fd/<fd> could not be opened, as the import's error. */
static TP_COLD tp_status open_failed(const char *who, int err, int32_t pid, int32_t fd)
{
    const tp_host *host = tp_cpu_host();
    switch (err) {
    case ENOENT:
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the exporting process (pid %d) no longer holds the event's shared memory "
                          "(descriptor %d): was the event destroyed?",
                          who, (int)pid, (int)fd);
    case EACCES:
    case EPERM:
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: cannot open descriptor %d of pid %d: %s (cpu events can be shared between "
                          "processes of one user only)",
                          who, (int)fd, (int)pid, strerror(err));
    case EMFILE:
    case ENFILE:
    case ENOMEM:
        return host->fail(TP_ERR_BACKEND, "%s: opening descriptor %d of pid %d: %s", who, (int)fd, (int)pid,
                          strerror(err));
    default:
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: cannot open descriptor %d of pid %d: %s", who, (int)fd,
                          (int)pid, strerror(err));
    }
}

/*
 * Maps `fd` once it is known to be an event's shared memory: a regular file of the
 * region's size sealed against shrinking (nobody can then cut the mapping short
 * under this process, which would be SIGBUS), and, mapped, the region's magic,
 * layout and `token`. `what` names the descriptor in messages. Leaves fd open.
 */
static tp_status region_map(const char *who, int fd, const char *what, uint64_t token, cpu_ipc_region **out)
{
    const tp_host *host = tp_cpu_host();
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)CPU_IPC_REGION_SIZE || seals < 0 ||
        !(seals & F_SEAL_SHRINK))
        return host->fail(TP_ERR_INVALID_ARGUMENT, "%s: %s is not an event's shared memory (size or seals differ)", who,
                          what);
    cpu_ipc_region *region = mmap(NULL, CPU_IPC_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (region == MAP_FAILED)
        return host->fail(TP_ERR_BACKEND, "%s: mmap of the event's shared memory: %s", who, strerror(errno));
    if (memcmp(region->magic, CPU_IPC_MAGIC, sizeof region->magic) != 0 ||
        region->layout_version != CPU_IPC_LAYOUT_VERSION || region->size != CPU_IPC_REGION_SIZE ||
        region->token != token) {
        munmap(region, CPU_IPC_REGION_SIZE);
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: the shared memory at %s is not the event named (token or layout differs: the "
                          "event was destroyed and its descriptor reused, or another build of tpevent?)",
                          who, what);
    }
    *out = region;
    return TP_OK;
}

/* Opens and checks the region a payload names; the payload itself is checked. */
static tp_status region_open(const char *who, int32_t pid, int32_t fd, uint64_t token, int *out_fd,
                             cpu_ipc_region **out)
{
    const tp_host *host = tp_cpu_host();
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, (int)fd);

    /* Look before opening: the descriptor may now be anything (a device, a
     * terminal), and opening some files does things. */
    ssize_t length = readlink(path, target, sizeof target - 1);
    if (length < 0)
        return open_failed(who, errno, pid, fd);
    target[length] = '\0';
    size_t prefix = strlen(CPU_IPC_MEMFD_LINK);
    if (strncmp(target, CPU_IPC_MEMFD_LINK, prefix) != 0 || (target[prefix] != '\0' && target[prefix] != ' '))
        return host->fail(TP_ERR_INVALID_ARGUMENT,
                          "%s: descriptor %d of pid %d is \"%s\", not an event's shared memory", who, (int)fd, (int)pid,
                          target);

    int mine = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (mine < 0)
        return open_failed(who, errno, pid, fd);
    char what[64];
    snprintf(what, sizeof what, "descriptor %d of pid %d", (int)fd, (int)pid);
    tp_status status = region_map(who, mine, what, token, out);
    if (status != TP_OK) {
        close(mine);
        return status;
    }
    *out_fd = mine;
    return TP_OK;
}

tp_status tp_cpu_ipc_open(const cpu_ipc_name *name, const char *operation, cpu_ipc **out)
{
    tp_process_id self;
    if (!tp_process_self(&self))
        return tp_cpu_host()->fail(TP_ERR_BACKEND, "%s: cannot read this process's start time from /proc/self/stat",
                                   operation);
    int fd = -1;
    cpu_ipc_region *region = NULL;
    tp_status status = region_open(operation, name->holder.pid, name->fd, name->token, &fd, &region);
    if (status != TP_OK)
        return status;
    status = ipc_wrap(fd, region, &self, true, operation, out);
    if (status == TP_OK && name->holder.pid != self.pid)
        (void)tp_process_watch_open(&(*out)->exporter, &name->holder);
    return status;
}

cpu_ipc_name tp_cpu_ipc_name_of(const cpu_ipc *ipc)
{
    return (cpu_ipc_name){.holder = ipc->self, .fd = ipc->fd, .token = ipc->region->token};
}

unsigned tp_cpu_ipc_flags(const cpu_ipc *ipc)
{
    return ipc->region->flags;
}

tp_status tp_cpu_ipc_adopt(int fd, uint64_t token, const char *operation, cpu_ipc **out)
{
    tp_process_id self;
    if (!tp_process_self(&self)) {
        close(fd);
        return tp_cpu_host()->fail(TP_ERR_BACKEND, "%s: cannot read this process's start time from /proc/self/stat",
                                   operation);
    }
    cpu_ipc_region *region = NULL;
    tp_status status = region_map(operation, fd, "the descriptor received", token, &region);
    if (status != TP_OK) {
        close(fd);
        return status;
    }
    bool own = tp_ipc_reopen_own(&fd);
    return ipc_wrap(fd, region, &self, own, operation, out);
}

int tp_cpu_ipc_descriptor(const cpu_ipc *ipc)
{
    return ipc->fd;
}
