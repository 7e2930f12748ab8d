/*
 * Times a host-to-device and a device-to-host copy with tpevent's events on "cuda:0".
 *
 * The program owns its CUDA stream, as an existing CUDA code base would;
 * tp_stream_from_native wraps it so that tpevent's events can be recorded on it
 * around the cudaMemcpyAsync calls. On a machine where the CUDA backend cannot be used
 * (no driver, no GPU, tpevent built without it) it says why and exits 0: that is a
 * normal outcome, not an error.
 */
#include <tpevent/tpevent.h>

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>

#define COPY_BYTES ((size_t)64 << 20)

static int tp_failed(const char *what, tp_status status)
{
    fprintf(stderr, "time_cuda_copy: %s: %s: %s\n", what, tp_status_name(status), tp_last_error());
    return 1;
}

static int cuda_failed(const char *what, cudaError_t error)
{
    fprintf(stderr, "time_cuda_copy: %s: %s: %s\n", what, cudaGetErrorName(error), cudaGetErrorString(error));
    return 1;
}

/* Records start, copies, records end, waits, and prints the rate. */
static int time_copy(const char *name, tp_stream *stream, cudaStream_t native, tp_event *start, tp_event *end,
                     void *dst, const void *src, enum cudaMemcpyKind kind)
{
    tp_status status;
    cudaError_t error;
    if ((status = tp_event_record(start, stream)) != TP_OK)
        return tp_failed("tp_event_record", status);
    if ((error = cudaMemcpyAsync(dst, src, COPY_BYTES, kind, native)) != cudaSuccess)
        return cuda_failed("cudaMemcpyAsync", error);
    if ((status = tp_event_record(end, stream)) != TP_OK)
        return tp_failed("tp_event_record", status);
    if ((status = tp_event_synchronize(end)) != TP_OK)
        return tp_failed("tp_event_synchronize", status);
    float ms = 0;
    if ((status = tp_event_elapsed_time(start, end, &ms)) != TP_OK)
        return tp_failed("tp_event_elapsed_time", status);
    if (ms <= 0) {
        fprintf(stderr, "time_cuda_copy: %s: elapsed time %.6f ms is not positive\n", name, ms);
        return 1;
    }
    printf("%s: %zu MiB in %.3f ms, %.1f GB/s\n", name, COPY_BYTES >> 20, ms, (double)COPY_BYTES / ((double)ms * 1e6));
    return 0;
}

int main(void)
{
    const char *reason = NULL;
    if (tp_backend_status("cuda", &reason) != TP_OK) {
        printf("cuda unavailable: %s\n", reason);
        return 0;
    }

    cudaError_t error;
    if ((error = cudaSetDevice(0)) != cudaSuccess)
        return cuda_failed("cudaSetDevice", error);
    cudaStream_t native;
    if ((error = cudaStreamCreateWithFlags(&native, cudaStreamNonBlocking)) != cudaSuccess)
        return cuda_failed("cudaStreamCreateWithFlags", error);
    void *host = NULL, *device = NULL;
    if ((error = cudaMallocHost(&host, COPY_BYTES)) != cudaSuccess)
        return cuda_failed("cudaMallocHost", error);
    if ((error = cudaMalloc(&device, COPY_BYTES)) != cudaSuccess)
        return cuda_failed("cudaMalloc", error);

    tp_status status;
    tp_stream *stream = NULL;
    tp_event *start = NULL, *end = NULL;
    if ((status = tp_stream_from_native(&stream, "cuda:0", native)) != TP_OK)
        return tp_failed("tp_stream_from_native", status);
    if ((status = tp_event_create(&start, "cuda:0", TP_EVENT_TIMING)) != TP_OK ||
        (status = tp_event_create(&end, "cuda:0", TP_EVENT_TIMING)) != TP_OK)
        return tp_failed("tp_event_create", status);

    char name[128] = "?";
    tp_device_name("cuda:0", name, sizeof name);
    printf("cuda:0: %s\n", name);

    int failed = time_copy("warm-up  host->device", stream, native, start, end, device, host, cudaMemcpyHostToDevice) ||
                 time_copy("copy     host->device", stream, native, start, end, device, host, cudaMemcpyHostToDevice) ||
                 time_copy("copy     device->host", stream, native, start, end, host, device, cudaMemcpyDeviceToHost);

    tp_event_destroy(start);
    tp_event_destroy(end);
    tp_stream_destroy(stream); /* the wrapper only: the native stream is ours */
    cudaStreamDestroy(native);
    cudaFree(device);
    cudaFreeHost(host);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
