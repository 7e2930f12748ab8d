#include "cu_driver.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

bench_cu cu;

const char bench_cu_empty_ptx[] =
    ".version 7.8\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry empty()\n"
    "{\n"
    "    ret;\n"
    "}\n";

bool bench_cu_load(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        return false;
    *(void **)&cu.init = dlsym(library, "cuInit");
    *(void **)&cu.device_get = dlsym(library, "cuDeviceGet");
    *(void **)&cu.primary_ctx_retain = dlsym(library, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.ctx_set_current = dlsym(library, "cuCtxSetCurrent");
    *(void **)&cu.module_load_data = dlsym(library, "cuModuleLoadData");
    *(void **)&cu.module_get_function = dlsym(library, "cuModuleGetFunction");
    *(void **)&cu.module_unload = dlsym(library, "cuModuleUnload");
    *(void **)&cu.mem_alloc = dlsym(library, "cuMemAlloc_v2");
    *(void **)&cu.mem_free = dlsym(library, "cuMemFree_v2");
    *(void **)&cu.memcpy_dtoh = dlsym(library, "cuMemcpyDtoH_v2");
    *(void **)&cu.launch_kernel = dlsym(library, "cuLaunchKernel");
    *(void **)&cu.get_error_name = dlsym(library, "cuGetErrorName");
    return cu.init && cu.device_get && cu.primary_ctx_retain && cu.ctx_set_current && cu.module_load_data &&
           cu.module_get_function && cu.module_unload && cu.mem_alloc && cu.mem_free && cu.memcpy_dtoh &&
           cu.launch_kernel && cu.get_error_name;
}

const char *bench_cu_error_name(CUresult result)
{
    const char *name = "?";
    cu.get_error_name(result, &name);
    return name;
}

CUresult bench_cu_primary_context_current(const char *device, const char **failed_call)
{
    const char *colon = strchr(device, ':');
    CUdevice cu_device;
    CUcontext context;
    CUresult result;
    if ((result = cu.init(0)) != CUDA_SUCCESS)
        *failed_call = "cuInit";
    else if ((result = cu.device_get(&cu_device, colon ? atoi(colon + 1) : 0)) != CUDA_SUCCESS)
        *failed_call = "cuDeviceGet";
    else if ((result = cu.primary_ctx_retain(&context, cu_device)) != CUDA_SUCCESS)
        *failed_call = "cuDevicePrimaryCtxRetain";
    else if ((result = cu.ctx_set_current(context)) != CUDA_SUCCESS)
        *failed_call = "cuCtxSetCurrent";
    return result;
}
