/*
 * Backend modules: where they are looked for, and how one is let in.
 *
 * Search order (the first file that exists is the one used; a broken file is
 * reported, not skipped, so that what runs never depends on what else happens to
 * be on the path):
 *   1. the folder of the core library itself (libtpevent.so), in the build tree and
 *      installed alike;
 *   2. each folder of TPEVENT_BACKEND_PATH, ':'-separated, in order.
 *
 * A module is dlopen'ed RTLD_LOCAL, asked for its one entry symbol, and its table
 * checked (ABI version, size, type, mandatory entries) before init is called. Every
 * failure leaves the backend unavailable with a reason naming the file and the cause.
 *
 * What is not survived by default: a module whose constructors or init crash or
 * abort takes the process with it, since it runs in the process. With
 * TPEVENT_PROBE_MODULES=1 the core first loads and inits the module in a child
 * process (the tpevent-module-probe program, <core folder>/../libexec/tpevent/);
 * a module that dies there is never loaded here, and the reason names the signal.
 * A module that hangs in init hangs the probe too: the probe is given
 * TPEVENT_PROBE_TIMEOUT_MS (default 30000) and then killed and reported.
 */
#include "core/internal.h"
#include "common/clock.h"
#include "common/env.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The folder of the core library itself, absolute and canonical, resolved once, when
 * the library is loaded. dladdr answers the name the dynamic loader opened, and that
 * name is relative when libtpevent.so was found through a relative LD_LIBRARY_PATH
 * entry ("build/lib"): taken as it is after the program's chdir, it would name a
 * folder of the new current directory, and a libtpevent-cuda.so or a module probe
 * lying there would be loaded and run. At load time the current directory is still
 * the one the loader resolved that name against, so that is when it is resolved; a
 * relative name that cannot be resolved then leaves the folder unknown (modules are
 * then only looked for in TPEVENT_BACKEND_PATH), never relative.
 */
static struct {
    pthread_once_t once;
    bool known;
    char path[PATH_MAX];
} core_folder = {.once = PTHREAD_ONCE_INIT};

static void resolve_core_folder(void)
{
    Dl_info info;
    if (!dladdr((void *)&tp_version_string, &info) || !info.dli_fname)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return;
    char folder[PATH_MAX];
    size_t len = slash == info.dli_fname ? 1 : (size_t)(slash - info.dli_fname); /* "/libtpevent.so": "/" */
    if (len + 1 > sizeof folder)
        return;
    memcpy(folder, info.dli_fname, len);
    folder[len] = '\0';
    if (realpath(folder, core_folder.path)) {
        core_folder.known = true;
    } else if (folder[0] == '/') {
        /* Gone or unreadable since: still absolute, so it names no other folder. */
        memcpy(core_folder.path, folder, len + 1);
        core_folder.known = true;
    }
}

__attribute__((constructor)) static void resolve_core_folder_at_load(void)
{
    pthread_once(&core_folder.once, resolve_core_folder);
}

static bool core_library_folder(char *folder, size_t size)
{
    pthread_once(&core_folder.once, resolve_core_folder);
    if (!core_folder.known)
        return false;
    size_t len = strlen(core_folder.path);
    if (len + 1 > size)
        return false;
    memcpy(folder, core_folder.path, len + 1);
    return true;
}

static bool file_in_folder(const char *folder, size_t folder_len, const char *file, char *path, size_t path_size)
{
    if (folder_len == 0)
        return false;
    int n = snprintf(path, path_size, "%.*s/%s", (int)folder_len, folder, file);
    return n > 0 && (size_t)n < path_size && access(path, F_OK) == 0;
}

bool tp_module_find(const char *file, char *path, size_t path_size)
{
    char folder[PATH_MAX];
    bool have_core_folder = core_library_folder(folder, sizeof folder);
    if (have_core_folder && file_in_folder(folder, strlen(folder), file, path, path_size))
        return true;

    const char *search = tp_env("TPEVENT_BACKEND_PATH");
    for (const char *p = search; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (file_in_folder(p, len, file, path, path_size))
            return true;
        p = end ? end + 1 : p + len;
    }
    snprintf(path, path_size, "module not found (looked in %s, then TPEVENT_BACKEND_PATH=%s)",
             have_core_folder ? folder : "<core library folder unknown>", search ? search : "<unset>");
    return false;
}

tp_status tp_backend_check_table(const tp_backend *table, tp_device_type type, char *reason, size_t reason_size)
{
    if (!table) {
        snprintf(reason, reason_size, "entry returned no table");
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->abi_version != TP_BACKEND_ABI_VERSION) {
        snprintf(reason, reason_size, "speaks backend ABI version %u, this core speaks %u",
                 (unsigned)table->abi_version, (unsigned)TP_BACKEND_ABI_VERSION);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->size < sizeof(tp_backend)) {
        snprintf(reason, reason_size, "its table has %u bytes, this core needs %zu", (unsigned)table->size,
                 sizeof(tp_backend));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    if (table->type != type || !table->name || strcmp(table->name, tp_device_type_name(type)) != 0) {
        snprintf(reason, reason_size, "is the backend for '%s', not '%s'", table->name ? table->name : "?",
                 tp_device_type_name(type));
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    /* What every backend must offer; the rest may be NULL (TP_ERR_UNSUPPORTED). */
    const char *missing = !table->init                ? "init"
                          : !table->device_count      ? "device_count"
                          : !table->stream_default    ? "stream_default"
                          : !table->stream_create     ? "stream_create"
                          : !table->stream_destroy    ? "stream_destroy"
                          : !table->event_create      ? "event_create"
                          : !table->event_destroy     ? "event_destroy"
                          : !table->event_record      ? "event_record"
                          : !table->event_query       ? "event_query"
                          : !table->event_synchronize ? "event_synchronize"
                          : !table->stream_wait_event ? "stream_wait_event"
                          : !table->event_elapsed     ? "event_elapsed"
                                                      : NULL;
    if (missing) {
        snprintf(reason, reason_size, "its table has no '%s' entry", missing);
        return TP_ERR_BACKEND_UNAVAILABLE;
    }
    return TP_OK;
}

/* Writes "<path>: <cause>" into reason, keeping the cause the module or libdl gave. */
static tp_status unavailable(char *reason, size_t reason_size, const char *path, const char *cause)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", cause);
    snprintf(reason, reason_size, "%s: %s", path, copy);
    return TP_ERR_BACKEND_UNAVAILABLE;
}

/* The cause of a failed dlopen of `path`, in words: where the module is there but a
 * library it needs (its runtime: ROCm's libamdhip64.so.5 for HIP) is not, glibc's
 * "libamdhip64.so.5: cannot open shared object file: ..." names neither the module nor
 * what is wrong, so that case is said plainly; anything else is libdl's own words. */
static const char *dlopen_failure_cause(const char *error, const char *path, char *cause, size_t cause_size)
{
    static const char not_found[] = ": cannot open shared object file";
    if (!error)
        return "dlopen failed";
    const char *end = strstr(error, not_found);
    size_t path_len = strlen(path);
    bool module_itself = strncmp(error, path, path_len) == 0 && error + path_len == end;
    if (!end || module_itself)
        return error;
    snprintf(cause, cause_size,
             "it needs the shared library %.*s (its runtime), which is not installed or not on the library "
             "path (%s)",
             (int)(end - error), error, error);
    return cause;
}

extern char **environ;

static bool probe_requested(void)
{
    const char *probe = tp_env("TPEVENT_PROBE_MODULES");
    return probe && strcmp(probe, "0") != 0;
}

/* How long a probe may take to load and init a module: 30 s unless
 * TPEVENT_PROBE_TIMEOUT_MS says, from 1 ms to an hour (wait_for_probe counts
 * milliseconds in a long). False, with the refusal in `reason`, for a value
 * outside that: the module is then neither probed nor loaded. */
#define PROBE_TIMEOUT_MS_DEFAULT 30000
#define PROBE_TIMEOUT_MS_MAX 3600000

static bool probe_timeout_ms(long *timeout_ms, char *reason, size_t reason_size)
{
    uint64_t ms;
    char refusal[160];
    bool valid = tp_env_count("TPEVENT_PROBE_TIMEOUT_MS", 1, PROBE_TIMEOUT_MS_MAX, PROBE_TIMEOUT_MS_DEFAULT, &ms,
                              refusal, sizeof refusal);
    *timeout_ms = (long)ms;
    if (!valid)
        snprintf(reason, reason_size, "TPEVENT_PROBE_MODULES is set but %s: not probed, not loaded", refusal);
    return valid;
}

/* Waits for the probe, killing it once the timeout has passed. */
static int wait_for_probe(pid_t pid, long timeout_ms, bool *timed_out)
{
    int wstatus = 0;
    *timed_out = false;
    for (long waited_ms = 0;; waited_ms += 5) {
        pid_t done = waitpid(pid, &wstatus, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR))
            return wstatus;
        if (waited_ms >= timeout_ms && !*timed_out) {
            *timed_out = true;
            kill(pid, SIGKILL);
        }
        tp_sleep_ns(5 * 1000 * 1000);
    }
}

/* Loads and inits the module in a child process first; false if that died. */
static bool probe_survives(const char *path, tp_device_type type, char *reason, size_t reason_size)
{
    char folder[PATH_MAX], probe[PATH_MAX + 64];
    long timeout_ms;
    if (!probe_timeout_ms(&timeout_ms, reason, reason_size))
        return false;
    if (!core_library_folder(folder, sizeof folder)) {
        snprintf(reason, reason_size, "TPEVENT_PROBE_MODULES is set but the core library's folder is unknown");
        return false;
    }
    snprintf(probe, sizeof probe, "%s/../libexec/tpevent/tpevent-module-probe", folder);
    char *argv[] = {probe, (char *)path, (char *)tp_device_type_name(type), NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int err = posix_spawn(&pid, probe, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) {
        snprintf(reason, reason_size, "TPEVENT_PROBE_MODULES is set but %.300s cannot run: %s", probe, strerror(err));
        return false;
    }
    bool timed_out;
    int wstatus = wait_for_probe(pid, timeout_ms, &timed_out);
    if (timed_out) {
        snprintf(reason, reason_size,
                 "hung in init while probed in a separate process (killed after %ld ms); "
                 "not loaded",
                 timeout_ms);
        return false;
    }
    if (WIFSIGNALED(wstatus)) {
        snprintf(reason, reason_size, "crashed while probed in a separate process (signal %d: %s); not loaded",
                 WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
        return false;
    }
    /* 0: usable; 3: it reports itself unavailable, and loading it here gives the same
     * reason. Anything else is how a sanitizer or the module itself ended it. */
    int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    if (code != 0 && code != 3) {
        snprintf(reason, reason_size, "crashed while probed in a separate process (it exited with %d); not loaded",
                 code);
        return false;
    }
    return true;
}

/* dlopen opens whatever the path names: a FIFO blocks it until a writer comes
 * (forever), a character device reads without end. Only a regular file (through
 * links, as dlopen follows them) is let through; what is swapped in between this
 * look and dlopen was put there by whoever owns the folder, who could have put a
 * module there as well. */
static const char *not_a_regular_file(const char *path, char *cause, size_t cause_size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(cause, cause_size, "cannot be looked at: %s", strerror(errno));
        return cause;
    }
    if (S_ISREG(st.st_mode))
        return NULL;
    const char *what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a file";
    snprintf(cause, cause_size, "not a regular file (%s): not loaded", what);
    return cause;
}

tp_status tp_module_load(const char *path, tp_device_type type, const tp_backend **out, void **dl_handle, char *reason,
                         size_t reason_size)
{
    char cause_of_file[256];
    const char *refused = not_a_regular_file(path, cause_of_file, sizeof cause_of_file);
    if (refused)
        return unavailable(reason, reason_size, path, refused);
    char cause_of_probe[512];
    if (probe_requested() && !probe_survives(path, type, cause_of_probe, sizeof cause_of_probe))
        return unavailable(reason, reason_size, path, cause_of_probe);

    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        char cause[1024];
        return unavailable(reason, reason_size, path, dlopen_failure_cause(dlerror(), path, cause, sizeof cause));
    }
    void *symbol = dlsym(handle, TP_BACKEND_ENTRY_SYMBOL);
    if (!symbol) {
        dlclose(handle);
        return unavailable(reason, reason_size, path, "not a tpevent backend: no '" TP_BACKEND_ENTRY_SYMBOL "' symbol");
    }
    tp_backend_entry_fn entry;
    memcpy(&entry, &symbol, sizeof entry); /* object-to-function pointer, as POSIX allows */

    char cause[1024] = "";
    const tp_backend *table = NULL;
    tp_status status = entry(TP_BACKEND_ABI_VERSION, &table, cause, sizeof cause);
    if (status == TP_OK)
        status = tp_backend_check_table(table, type, cause, sizeof cause);
    if (status != TP_OK) {
        dlclose(handle);
        return unavailable(reason, reason_size, path, cause[0] ? cause : "its entry refused to load");
    }
    /* From here the module may have started its runtime: it stays mapped even if
     * init fails, since unmapping code that left threads or handlers behind is
     * what would crash. */
    *dl_handle = handle;
    status = table->init(&tp_core_host, cause, sizeof cause);
    if (status != TP_OK)
        return unavailable(reason, reason_size, path, cause[0] ? cause : "init failed without a reason");
    *out = table;
    return TP_OK;
}
