"""measure_gpu.py's SM clock part (issue 51, item 4): the clock tpevent.measure reads
around each stretch, after the GPU has idled (the H100 lent here idles at 345 MHz
against a 1,980 MHz maximum), beside nvidia-smi's instant reading.

Printed: the measurement (its repr names the clock and the stretches at a low clock),
its sm_clock_* fields and notes (the maximum's source, the warm-up, NVML's throttle
reasons), the same with drop_low_clock=True, and nvidia-smi's clocks before and after.
Budgets: the clock is read on CUDA; its median is at least 75 % of a known maximum.
"""

import subprocess
import time

import compare_gpu  # beside this file: the spin kernel's launcher

IDLE_SECONDS = 5.0
SPIN_US = 20.0


def nvidia_smi_clocks():
    """nvidia-smi's SM clock now and its maximum, or why not."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks_event_reasons.active",
                               "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        return done.stdout.strip().splitlines()[0] if done.returncode == 0 and done.stdout.strip() else done.stderr
    except (OSError, subprocess.TimeoutExpired) as failed:
        return f"nvidia-smi: {failed}"


def describe(name, m):
    print(f"    {name}: {m!r}")
    print(f"        sm_clock_mhz {m.sm_clock_mhz}, max {m.sm_clock_max_mhz}, {m.sm_clock_stretches} stretches, "
          f"{m.sm_clock_low} low")
    print(f"        sm_clock_note: {m.sm_clock_note}")
    if m.note:
        print(f"        note: {m.note}")


def clock_check(ctx, spin_kernel):
    tpevent, torch, stream, budgets = ctx["tpevent"], ctx["torch"], ctx["stream"], ctx["budgets"]
    kernel = ctx.get("kernel") or spin_kernel(torch)
    fn = compare_gpu.spin_launcher(kernel, stream.cuda_stream, SPIN_US * 1000)
    torch.cuda.synchronize()
    time.sleep(IDLE_SECONDS)
    print(f"SM clock, a {SPIN_US} us spin kernel after {IDLE_SECONDS} s idle; nvidia-smi (sm, max, reasons) "
          f"before: {nvidia_smi_clocks()}")
    with torch.cuda.stream(stream):
        m = tpevent.measure(fn, stream, min_time=0.2, max_time=5.0)
        dropped = tpevent.measure(fn, stream, min_time=0.2, max_time=5.0, drop_low_clock=True)
    print(f"    nvidia-smi after: {nvidia_smi_clocks()}")
    describe("measure", m)
    describe("measure(drop_low_clock=True)", dropped)
    read = m.sm_clock_mhz is not None
    up = read and m.sm_clock_max_mhz is not None and m.sm_clock_mhz >= 0.75 * m.sm_clock_max_mhz
    print(f"    {budgets.check('SM clock read on cuda', read)} {budgets.check('SM clock >= 75 % of its maximum', up)}")
