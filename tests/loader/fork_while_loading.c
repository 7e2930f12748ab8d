/*
 * fork() while another thread loads a backend module (issue 31, items 1 and 6: a
 * lock held at the fork). A thread asks for the hip backend, whose module (from
 * TPEVENT_BACKEND_PATH, the INIT_HANGS flaw) hangs in init, holding the registry's
 * lock for good; the process forks. The child must get hip's verdict at once,
 * unavailable with the reason, and use the cpu backend; alarm() bounds it.
 */
#define _POSIX_C_SOURCE 200809L

#include <tpevent/tpevent.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *load_hip(void *unused)
{
    (void)unused;
    const char *reason = NULL;
    (void)tp_backend_status("hip", &reason); /* never returns: init hangs */
    return NULL;
}

static int child_main(void)
{
    alarm(10);
    const char *reason = NULL;
    tp_status status = tp_backend_status("hip", &reason);
    printf("child: hip: %s: %s\n", tp_status_name(status), reason ? reason : "(null)");
    if (status != TP_ERR_BACKEND_UNAVAILABLE || !reason || !strstr(reason, "forked"))
        return 1;
    tp_stream *stream = NULL;
    tp_event *event = NULL;
    if (tp_stream_create(&stream, "cpu", 0) != TP_OK || tp_event_create(&event, "cpu", 0) != TP_OK ||
        tp_event_record(event, stream) != TP_OK || tp_event_synchronize(event) != TP_OK)
        return 2;
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *reason = NULL;
    if (tp_backend_status("cpu", &reason) != TP_OK) /* loaded before: not the one in progress */
        return 3;
    pthread_t thread;
    if (pthread_create(&thread, NULL, load_hip, NULL) != 0)
        return 3;
    struct timespec wait = {0, 200 * 1000000L}; /* the thread is inside the module's init by then */
    nanosleep(&wait, NULL);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(child_main());
    int status = 0;
    if (waitpid(child, &status, 0) != child)
        return 3;
    printf("child ended: %s %d\n", WIFEXITED(status) ? "exit" : "signal",
           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    _exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1); /* the loading thread never ends */
}
