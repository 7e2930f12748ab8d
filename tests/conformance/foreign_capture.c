/* See foreign_capture.h. */
#include "foreign_capture.h"
#include "native_runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------- CUDA's driver API */

typedef int (*cu_begin_fn)(void *stream, int mode);
typedef int (*cu_end_fn)(void *stream, void **graph);
typedef int (*cu_instantiate_fn)(void **exec, void *graph, unsigned long long flags);
typedef int (*cu_launch_fn)(void *exec, void *stream);
typedef int (*cu_destroy_fn)(void *object);

static struct {
    cu_begin_fn begin;
    cu_end_fn end;
    cu_instantiate_fn instantiate;
    cu_launch_fn launch;
    cu_destroy_fn exec_destroy, graph_destroy;
} cu;

static int cu_end_and_instantiate(void *stream, void **exec)
{
    void *graph = NULL;
    int e = cu.end(stream, &graph);
    if (e != 0)
        return e;
    e = cu.instantiate(exec, graph, 0);
    (void)cu.graph_destroy(graph);
    return e;
}

static void cu_exec_destroy(void *exec)
{
    (void)cu.exec_destroy(exec);
}

static bool find_cuda_driver(foreign_capture *out)
{
    void *driver = cuda_driver_open();
    if (!driver)
        return false;
    cu.begin = (cu_begin_fn)dlsym(driver, "cuStreamBeginCapture_v2");
    cu.end = (cu_end_fn)dlsym(driver, "cuStreamEndCapture");
    cu.instantiate = (cu_instantiate_fn)dlsym(driver, "cuGraphInstantiateWithFlags");
    cu.launch = (cu_launch_fn)dlsym(driver, "cuGraphLaunch");
    cu.exec_destroy = (cu_destroy_fn)dlsym(driver, "cuGraphExecDestroy");
    cu.graph_destroy = (cu_destroy_fn)dlsym(driver, "cuGraphDestroy");
    if (!cu.begin || !cu.end || !cu.instantiate || !cu.launch || !cu.exec_destroy || !cu.graph_destroy) {
        printf("skipped: the CUDA driver lacks the capture calls this test needs\n");
        return false;
    }
    *out = (foreign_capture){"CUDA driver", {cu.begin, cu_end_and_instantiate, cu.launch, cu_exec_destroy}};
    return true;
}

/* ------------------------------------------------------------------- entry */

bool foreign_capture_find(const char *device, foreign_capture *out)
{
    if (strncmp(device, "cuda", 4) != 0) {
        printf(
            "skipped: %s: foreign captures are CUDA's (the fake GPU's too) in this test; on the CPU every capture "
            "is tpevent's own\n",
            device);
        return false;
    }
    const foreign_capture_calls *fake = fake_gpu_symbol(FOREIGN_CAPTURE_FAKE_SYMBOL);
    if (fake) {
        *out = (foreign_capture){"fake GPU", *fake};
        return true;
    }
    return find_cuda_driver(out);
}
