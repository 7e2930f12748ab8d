/*
 * Where modules come from when the core library was found through a relative path
 * (issue 18, item 4). CTest runs this program in tests/loader with
 * LD_LIBRARY_PATH=isolated, a relative entry, so that the dynamic loader opens the
 * isolated copy of the core as "isolated/libtpevent.so" (the program checks that it
 * did). The program then makes a folder D that holds what a hostile current
 * directory could hold, chdirs into it, and asks for the hip backend:
 *
 *   chdir_test module <fake module>
 *       D/isolated/libtpevent-hip.so is a copy of a module whose constructor leaves
 *       D/constructor_ran. The core's folder is the real isolated folder, which has
 *       no hip module: hip must be unavailable, "module not found" with an absolute
 *       folder, and the copy in D never loaded.
 *   chdir_test probe
 *       D/libexec/tpevent/tpevent-module-probe is a script that leaves D/probe_ran.
 *       With TPEVENT_PROBE_MODULES=1 and TPEVENT_BACKEND_PATH at a module whose init
 *       fails, the real probe (<real core folder>/../libexec) must be the one run:
 *       the reason is the module's own, and the script never ran.
 */
#define _GNU_SOURCE

#include <tpevent/tpevent.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static void die(const char *what, const char *path)
{
    fprintf(stderr, "chdir_test: %s %s: %s\n", what, path, strerror(errno));
    exit(2);
}

static void make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        die("mkdir", path);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        die("open", from);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0)
        die("create", to);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            die("write", to);
    if (n < 0)
        die("read", from);
    close(in);
    close(out);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("write", path);
    close(fd);
}

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The relative folder the dynamic loader found the core in ("isolated"). */
static void core_folder_as_loaded(char *folder, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)&tp_version_string, &info) || !info.dli_fname || !strrchr(info.dli_fname, '/')) {
        fprintf(stderr, "chdir_test: dladdr gives no path for the core library\n");
        exit(2);
    }
    if (info.dli_fname[0] == '/') {
        fprintf(stderr,
                "chdir_test: the core was loaded as %s, an absolute path: run this test with a "
                "relative LD_LIBRARY_PATH (CMake does), or it tests nothing\n",
                info.dli_fname);
        exit(2);
    }
    snprintf(folder, size, "%.*s", (int)(strrchr(info.dli_fname, '/') - info.dli_fname), info.dli_fname);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "module") != 0 && strcmp(argv[1], "probe") != 0) ||
        (strcmp(argv[1], "module") == 0 && argc < 3)) {
        fprintf(stderr, "usage: %s module <fake module> | probe\n", argv[0]);
        return 2;
    }
    bool module_case = strcmp(argv[1], "module") == 0;
    char folder[PATH_MAX], fake_module[PATH_MAX] = "";
    core_folder_as_loaded(folder, sizeof folder);
    if (module_case && !realpath(argv[2], fake_module))
        die("realpath", argv[2]);

    char dir[] = "/tmp/tpevent-chdir-XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp", dir);
    char path[PATH_MAX + 128], module_copy[2 * PATH_MAX] = "", probe_copy[2 * PATH_MAX] = "";
    snprintf(path, sizeof path, "%s/%s", dir, folder);
    make_dir(path);
    if (module_case) {
        snprintf(module_copy, sizeof module_copy, "%s/%s/libtpevent-hip.so", dir, folder);
        copy_file(fake_module, module_copy, 0700);
    } else {
        snprintf(path, sizeof path, "%s/%s/../libexec", dir, folder);
        make_dir(path);
        snprintf(path, sizeof path, "%s/%s/../libexec/tpevent", dir, folder);
        make_dir(path);
        snprintf(probe_copy, sizeof probe_copy, "%s/tpevent-module-probe", path);
        write_file(probe_copy, "#!/bin/sh\n: > probe_ran\nexit 0\n", 0700);
    }
    if (chdir(dir) != 0)
        die("chdir", dir);

    tp_backend_info info;
    CHECK(tp_backend_get_info("hip", &info) == TP_OK, "%s", tp_last_error());
    printf("hip: %s; module %s; reason: %s\n", tp_status_name(info.status),
           info.module_path[0] ? info.module_path : "(none)", info.reason);
    CHECK(info.module_path[0] == '\0' || info.module_path[0] == '/', "module path %s is relative", info.module_path);
    CHECK(strncmp(info.module_path, dir, strlen(dir)) != 0, "module %s taken from the current directory",
          info.module_path);
    if (module_case) {
        CHECK(!exists("constructor_ran"), "the module in the current directory was loaded: its constructor ran");
        CHECK(info.status == TP_ERR_BACKEND_UNAVAILABLE, "hip is %s", tp_status_name(info.status));
        CHECK(strstr(info.reason, "module not found (looked in /") != NULL,
              "the reason names no absolute core folder: %s", info.reason);
    } else {
        CHECK(!exists("probe_ran"), "the module probe in the current directory ran");
        CHECK(strstr(info.reason, "hipErrorNoDevice") != NULL, "the real probe did not pass the module on: %s",
              info.reason);
    }

    remove("constructor_ran");
    remove("probe_ran");
    if (module_copy[0])
        remove(module_copy);
    if (probe_copy[0]) {
        remove(probe_copy);
        snprintf(path, sizeof path, "%s/%s/../libexec/tpevent", dir, folder);
        rmdir(path);
        snprintf(path, sizeof path, "%s/%s/../libexec", dir, folder);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/%s", dir, folder);
    rmdir(path);
    if (chdir("/") != 0 || rmdir(dir) != 0)
        fprintf(stderr, "chdir_test: %s left behind: %s\n", dir, strerror(errno));
    return failures ? 1 : 0;
}
