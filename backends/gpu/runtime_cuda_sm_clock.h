/*
 * The CUDA mapping's SM clock part, included by runtime_cuda.h for gpu_sm_clock.c alone
 * (GPU_SM_CLOCK_MAPPING): tp_measure's SM clock (rule 18), read as nvbench reads it. A
 * kernel of one thread per SM, loaded as PTX, in which the block on SM 0 writes %clock64
 * (SM 0's cycles) and %globaltimer (ns) to a mark in mapped host memory; NVML, through
 * dlopen("libnvidia-ml.so.1") when present, gives the SM's maximum clock and the
 * throttle reasons (one instant: no clock of a stretch). runtime_hip.h and
 * runtime_fake.h define the same names.
 */
#if defined(GPU_SM_CLOCK_MAPPING) && !defined(TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_SM_CLOCK_H)
#define TPEVENT_BACKENDS_GPU_RUNTIME_CUDA_SM_CLOCK_H

#include <dlfcn.h>
#include <pthread.h>

#define RT_SM_CLOCK_SUPPORTED 1
#define RT_SM_CLOCK_MAKE_CALLS                                                                            \
    "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount), cudaLibraryLoadData, cudaLibraryGetKernel, " \
    "cudaFuncGetAttributes"
#define RT_SM_CLOCK_LAUNCH_CALL "cudaLaunchKernel"
typedef struct rt_sm_clock_kernel {
    cudaKernel_t kernel;
    int blocks;
} rt_sm_clock_kernel;
static const char rt_sm_clock_ptx[] =
    ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry tpevent_sm_clock(.param .u64 out)\n{\n"
    "  .reg .pred %p;\n  .reg .b32 %r<2>;\n  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %smid;\n  setp.ne.u32 %p, %r1, 0;\n  @%p bra DONE;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u64 %rd3, %clock64;\n  mov.u64 %rd2, %globaltimer;\n"
    "  st.volatile.global.u64 [%rd1], %rd3;\n  st.volatile.global.u64 [%rd1+8], %rd2;\n"
    "DONE:\n  ret;\n}\n";
/* Loaded now, not at its first launch (a lazy load may wait for every stream of the
 * context: gpu_empty.c's reason). The device is current. */
static inline rt_error rt_sm_clock_kernel_make(int device, rt_sm_clock_kernel *k)
{
    rt_error e = cudaDeviceGetAttribute(&k->blocks, cudaDevAttrMultiProcessorCount, device);
    cudaLibrary_t library;
    if (e == RT_SUCCESS)
        e = cudaLibraryLoadData(&library, rt_sm_clock_ptx, NULL, NULL, 0, NULL, NULL, 0);
    if (e == RT_SUCCESS)
        e = cudaLibraryGetKernel(&k->kernel, library, "tpevent_sm_clock");
    struct cudaFuncAttributes attributes;
    return e != RT_SUCCESS ? e : cudaFuncGetAttributes(&attributes, (const void *)k->kernel);
}
/* One block per SM, so that one lands on SM 0 (nvbench's way): mark[0] its cycles, mark[1] the ns. */
static inline rt_error rt_sm_clock_launch(const rt_sm_clock_kernel *k, rt_stream s, rt_device_ptr mark)
{
    void *out = (void *)(uintptr_t)mark;
    void *args[] = {&out};
    return cudaLaunchKernel((const void *)k->kernel, (dim3){(unsigned)k->blocks, 1, 1}, (dim3){1, 1, 1}, args, 0, s);
}

/* NVML, by dlopen: its few calls, resolved once. */
typedef struct rt_nvml {
    void *library;
    int (*device_by_pci_bus_id)(const char *bus_id, void **device);
    int (*max_clock)(void *device, int type, unsigned *mhz);
    int (*throttle_reasons)(void *device, unsigned long long *reasons);
    char why[128]; /* why NVML is not there */
} rt_nvml;
static rt_nvml rt_nvml_state;
static pthread_once_t rt_nvml_once = PTHREAD_ONCE_INIT;
static void rt_nvml_open(void)
{
    rt_nvml *n = &rt_nvml_state;
    n->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = n->library ? (int (*)(void))dlsym(n->library, "nvmlInit_v2") : NULL;
    n->device_by_pci_bus_id = n->library ? (int (*)(const char *, void **))dlsym(n->library,
                                                                                 "nvmlDeviceGetHandleByPciBusId_v2")
                                         : NULL;
    n->max_clock = n->library ? (int (*)(void *, int, unsigned *))dlsym(n->library, "nvmlDeviceGetMaxClockInfo") : NULL;
    n->throttle_reasons = n->library ? (int (*)(void *, unsigned long long *))dlsym(
                                           n->library, "nvmlDeviceGetCurrentClocksThrottleReasons")
                                     : NULL;
    if (!n->library)
        snprintf(n->why, sizeof n->why, "libnvidia-ml.so.1: %s", dlerror());
    else if (!init || !n->device_by_pci_bus_id || !n->max_clock)
        snprintf(n->why, sizeof n->why,
                 "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetMaxClockInfo");
    else if (init() != 0)
        snprintf(n->why, sizeof n->why, "nvmlInit_v2 failed");
    if (n->why[0])
        n->max_clock = NULL;
}
/* NVML's device for the CUDA device (by PCI bus id: NVML's order is not CUDA's); NULL, *why set, without. */
static inline void *rt_nvml_device(int device, const char **why)
{
    pthread_once(&rt_nvml_once, rt_nvml_open);
    *why = rt_nvml_state.why;
    char bus_id[32];
    void *handle = NULL;
    if (!rt_nvml_state.max_clock)
        return NULL;
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess ||
        rt_nvml_state.device_by_pci_bus_id(bus_id, &handle) != 0) {
        *why = "NVML has no device of its PCI bus id";
        return NULL;
    }
    return handle;
}
/* The SM's maximum clock in MHz (NVML_CLOCK_SM; without NVML, the runtime's peak
 * clock, cudaDevAttrClockRate); 0 with `note` saying why. */
static inline double rt_sm_clock_max_mhz(int device, char *note, size_t size)
{
    const char *why = "";
    void *handle = rt_nvml_device(device, &why);
    unsigned mhz = 0;
    if (handle && rt_nvml_state.max_clock(handle, 1 /* NVML_CLOCK_SM */, &mhz) != 0)
        why = "nvmlDeviceGetMaxClockInfo failed";
    if (handle && mhz > 0) {
        snprintf(note, size, "maximum SM clock %u MHz (NVML)", mhz);
        return mhz;
    }
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess && khz > 0) {
        snprintf(note, size, "maximum SM clock %d MHz (cudaDevAttrClockRate; NVML: %s)", khz / 1000, why);
        return khz / 1000;
    }
    snprintf(note, size, "maximum SM clock unknown (NVML: %s; cudaDevAttrClockRate: none): no stretch can be flagged",
             why);
    return 0;
}
/* NVML's throttle reasons now, in words; "" without NVML. */
static inline void rt_sm_clock_reasons(int device, char *out, size_t size)
{
    static const char *const names[] = {"GPU idle",
                                        "applications clocks setting",
                                        "software power cap",
                                        "hardware slowdown",
                                        "sync boost",
                                        "software thermal slowdown",
                                        "hardware thermal slowdown",
                                        "hardware power brake",
                                        "display clock setting"};
    const char *why = "";
    void *handle = rt_nvml_device(device, &why);
    unsigned long long reasons = 0;
    out[0] = '\0';
    if (!handle || !rt_nvml_state.throttle_reasons || rt_nvml_state.throttle_reasons(handle, &reasons) != 0)
        return;
    size_t used = (size_t)snprintf(out, size, "NVML's throttle reasons now:");
    for (unsigned i = 0; i < sizeof names / sizeof names[0] && used < size; i++)
        if (reasons & (1ull << i))
            used += (size_t)snprintf(out + used, size - used, " %s,", names[i]);
    if (used < size && out[used - 1] == ',')
        out[used - 1] = '\0';
    else if (used < size && reasons == 0)
        snprintf(out + used, size - used, " none");
}

#endif /* GPU_SM_CLOCK_MAPPING */
