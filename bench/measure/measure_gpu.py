"""tpevent.measure against the truth and the usual ways of timing GPU work (issue 30).

Run by scripts/gpu-check.sh on the H200: ``python3 bench/measure/measure_gpu.py``.

The work is one thread that logs ``%globaltimer`` when it starts and spins until d us
have passed (PTX text loaded through the driver API with ctypes: no kernel compiler).
Per d, side by side in one run, per call in us:

  truth            the GPU's own start-to-start cadence of back-to-back launches, from
                   the kernels' log, the stream held while 64 are queued
  tpevent.measure  defaults (hot, held, 0.5 s, 0.5 % noise)
  tpevent.do_bench triton's signature and answer, tpevent's way (cold by default)
  triton do_bench  triton.testing.do_bench, its defaults (an L2 flush and events per call)
  torch Timer      torch.utils.benchmark.Timer.blocked_autorange(min_run_time=0.5)
  raw events       torch.cuda.Event around 64 launches, no hold (what most code does)

then each one's noise (relative standard deviation of its samples) and the seconds it
took, tpevent.measure's seconds to 0.5 % noise with min_time 0, and cold against hot on
a read that fits in L2. Prints; asserts nothing on time.
"""

import ctypes
import statistics
import sys
import time

SPIN_PTX = b"""
.version 7.8
.target sm_75
.address_size 64
.visible .entry spin(.param .u64 log, .param .u64 counter, .param .u64 ns)
{
    .reg .pred %p<2>;
    .reg .b64 %rd<12>;
    mov.u64 %rd1, %globaltimer;
    ld.param.u64 %rd2, [log];
    ld.param.u64 %rd3, [counter];
    ld.param.u64 %rd4, [ns];
    atom.add.u64 %rd5, [%rd3], 1;
    and.b64 %rd6, %rd5, 4095;
    shl.b64 %rd7, %rd6, 3;
    add.s64 %rd8, %rd2, %rd7;
    st.u64 [%rd8], %rd1;
    add.s64 %rd9, %rd1, %rd4;
$Lspin:
    mov.u64 %rd10, %globaltimer;
    setp.lt.u64 %p1, %rd10, %rd9;
    @%p1 bra $Lspin;
    ret;
}
\0"""

TRUTH_LAUNCHES = 64


class SpinKernel:
    """The logging spin kernel on torch's CUDA context, launched with one ctypes call."""

    def __init__(self, torch):
        self.torch = torch
        self.cu = ctypes.CDLL("libcuda.so.1")
        torch.zeros(1, device="cuda")  # torch's context current on this thread
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.cu.cuModuleLoadData(ctypes.byref(module), SPIN_PTX), "cuModuleLoadData")
        self._check(self.cu.cuModuleGetFunction(ctypes.byref(function), module, b"spin"), "cuModuleGetFunction")
        self.function = function
        self.log = torch.zeros(4096, dtype=torch.int64, device="cuda")
        self.counter = torch.zeros(1, dtype=torch.int64, device="cuda")
        self._log_ptr = ctypes.c_uint64(self.log.data_ptr())
        self._counter_ptr = ctypes.c_uint64(self.counter.data_ptr())
        self.ns = ctypes.c_uint64(0)
        self._params = (ctypes.c_void_p * 3)(ctypes.addressof(self._log_ptr), ctypes.addressof(self._counter_ptr),
                                             ctypes.addressof(self.ns))
        launch = self.cu.cuLaunchKernel
        launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        launch.restype = ctypes.c_int
        self._launch = launch

    @staticmethod
    def _check(result, what):
        if result != 0:
            raise RuntimeError(f"{what} failed: CUresult {result}")

    def launcher(self, stream_handle):
        """fn() that launches the kernel once on the stream."""
        launch, function, params = self._launch, self.function, self._params

        def fn():
            launch(function, 1, 1, 1, 1, 1, 1, 0, stream_handle, params, None)

        return fn


def truth_us(tpevent, torch, kernel, stream, fn):
    """The GPU's start-to-start cadence of TRUTH_LAUNCHES launches queued behind a hold."""
    rounds = []
    for _ in range(5):
        kernel.counter.zero_()
        with tpevent.Stream.from_external(stream).hold():
            for _ in range(TRUTH_LAUNCHES):
                fn()
        stream.synchronize()
        starts = sorted(kernel.log[:TRUTH_LAUNCHES].tolist())
        rounds.append((starts[-1] - starts[0]) / (TRUTH_LAUNCHES - 1) / 1e3)
    return statistics.median(rounds)


def noise(times):
    return statistics.stdev(times) / statistics.mean(times) if len(times) > 1 and statistics.mean(times) > 0 else 0.0


def timed(call):
    began = time.perf_counter()
    value = call()
    return value, time.perf_counter() - began


def raw_events_us(torch, stream, fn, d_us):
    launches = max(8, min(64, int(20000 / max(d_us, 1))))
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(launches):
            fn()
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / launches)
    return statistics.median(times), noise(times)


def row(name, value_us, noise_fraction, seconds, truth):
    diff = value_us - truth
    print(f"    {name:18s} {value_us:10.3f} {diff:+9.3f} {noise_fraction * 100:8.2f}% {seconds:8.2f}")


def main():
    try:
        import torch
    except ImportError as e:
        print(f"skipped: torch cannot be imported ({e})")
        return 0
    if not torch.cuda.is_available():
        print("skipped: torch sees no CUDA device")
        return 0
    import tpevent
    try:
        import triton.testing as triton_testing
    except ImportError as e:
        triton_testing = None
        print(f"triton cannot be imported ({e}): no triton column")
    from torch.utils.benchmark import Timer

    kernel = SpinKernel(torch)
    stream = torch.cuda.Stream()
    fn = kernel.launcher(stream.cuda_stream)
    print(f"tpevent.measure on {torch.cuda.get_device_name()}: a one-thread kernel spinning d us "
          "(per call, us; diff against the truth)")
    with torch.cuda.stream(stream):
        for d_us in (0, 2, 5, 20, 100, 1000):
            kernel.ns.value = d_us * 1000
            fn()
            stream.synchronize()
            truth = truth_us(tpevent, torch, kernel, stream, fn)
            print(f"d = {d_us} us: truth {truth:.3f} us")
            print(f"    {'method':18s} {'per call':>10s} {'diff':>9s} {'noise':>9s} {'seconds':>8s}")
            m, seconds = timed(lambda: tpevent.measure(fn, stream))
            row("tpevent.measure", m.median * 1e6, m.noise, seconds, truth)
            print(f"        {m!r}{'  note: ' + m.note if m.note else ''}")
            fast, seconds = timed(lambda: tpevent.measure(fn, stream, min_time=0.0))
            print(f"        to {fast.noise * 100:.2f} % noise with min_time 0: {seconds:.3f} s "
                  f"({fast.samples} samples x {fast.batch}, converged {fast.converged})")
            times, seconds = timed(lambda: tpevent.do_bench(fn, return_mode="all"))
            row("tpevent.do_bench", statistics.mean(times) * 1e3, noise(times), seconds, truth)
            if triton_testing is not None:
                times, seconds = timed(lambda: triton_testing.do_bench(fn, return_mode="all"))
                row("triton do_bench", statistics.mean(times) * 1e3, noise(times), seconds, truth)
            blocked, seconds = timed(lambda: Timer(stmt="fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.5))
            row("torch Timer", blocked.median * 1e6, noise(blocked.times), seconds, truth)
            (value, raw_noise), seconds = timed(lambda: raw_events_us(torch, stream, fn, d_us))
            row("raw events", value, raw_noise, seconds, truth)

        x = torch.randn(4 * 1024 * 1024, device="cuda")  # 16 MB: fits in the L2
        read = lambda: torch.sum(x)  # noqa: E731
        hot = tpevent.measure(read, stream)
        cold = tpevent.measure(read, stream, cold=True)
        print("a 16 MB read (torch.sum), which fits in L2:")
        print(f"    hot  {hot!r}")
        print(f"    cold {cold!r}")
        print(f"    cold / hot: {cold.median / hot.median:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
