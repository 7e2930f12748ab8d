"""measure_gpu.py's compare part: tpevent.compare on its spin kernels (issue 51)."""

import ctypes
import statistics


COMPARE_TRIALS = 20
COMPARE_US = 20.0


def spin_launcher(kernel, stream_handle, ns):
    """fn() that launches the spin kernel for `ns` with parameters of its own."""
    value = ctypes.c_uint64(int(ns))
    log, counter = ctypes.c_uint64(kernel.log.data_ptr()), ctypes.c_uint64(kernel.counter.data_ptr())
    params = (ctypes.c_void_p * 3)(ctypes.addressof(log), ctypes.addressof(counter), ctypes.addressof(value))
    launch, function = kernel._launch, kernel.function

    def fn():
        launch(function, 1, 1, 1, 1, 1, 1, 0, stream_handle, params, None)

    fn.keep = (value, log, counter, params)  # alive as long as fn
    return fn


def compare_trials(ctx, spin_kernel, timed):
    """tpevent.compare on spin kernels of d = 20 us: A against the same A, and against
    A + 1 % (the budgets: same in 19 of 20, slower in 19 of 20, each under 2 s)."""
    tpevent, torch, stream, budgets = ctx["tpevent"], ctx["torch"], ctx["stream"], ctx["budgets"]
    kernel = ctx.get("kernel") or spin_kernel(torch)
    handle = stream.cuda_stream
    a = spin_launcher(kernel, handle, COMPARE_US * 1000)
    same = spin_launcher(kernel, handle, COMPARE_US * 1000)
    slower = spin_launcher(kernel, handle, COMPARE_US * 1010)
    print(f"tpevent.compare, {COMPARE_TRIALS} trials each, d = {COMPARE_US} us (min_effect 0.5 %, 95 %):")
    with torch.cuda.stream(stream):
        for name, b, wanted in (("A vs A", same, "same"), ("A vs A + 1 %", slower, "slower")):
            verdicts, seconds, ratios = [], [], []
            for _ in range(COMPARE_TRIALS):
                c, took = timed(lambda: tpevent.compare(a, b, stream, max_time=5.0))
                verdicts.append(c.verdict)
                seconds.append(took)
                ratios.append(c.ratio)
            right = verdicts.count(wanted)
            counts = ", ".join(f"{v} {verdicts.count(v)}" for v in ("same", "slower", "faster", "undecided"))
            print(f"    {name:14s} {counts}; ratio median {statistics.median(ratios):.4f}; "
                  f"seconds median {statistics.median(seconds):.2f}, max {max(seconds):.2f}  "
                  f"{budgets.check(f'compare {name}: {wanted} >= 19/20', right >= 19)} "
                  f"{budgets.check(f'compare {name}: < 2 s', max(seconds) < 2.0)}")
            print(f"        last: {c!r}")
