"""Rule 16 under torch.cuda.graph: tpevent events on wrapped torch streams inside
someone else's capture. Needs PyTorch with CUDA and tpevent's CUDA backend; skips
(exit 77) with the reason otherwise.

  - a two-stream fork/join made with tpevent events inside torch.cuda.graph,
    replayed 1000 times, the result checked after each replay;
  - a range between two Event(external=True) records inside the graph: after each
    replay its elapsed_time agrees with torch's own external-event timing of the
    same range (torch.cuda.Event(enable_timing=True, external=True)) within 5% or
    20 us;
  - tpevent host functions inside the graph (#37), replayed 1000 times: each runs
    once per replay, in stream order with torch's work between them (two external
    records bracket it);
  - a host function inside the graph calls tpevent (records on another stream and
    waits): it runs on a tpevent thread, not CUDA's callback thread, where runtime
    calls are not permitted.
"""

import sys
import time
import unittest

from tpevent_testing import SKIP_RETURN_CODE

try:
    import torch
except ImportError as error:  # pragma: no cover - depends on the machine
    print(f"SKIP: PyTorch is not installed ({error})")
    sys.exit(SKIP_RETURN_CODE)

import tpevent

if not torch.cuda.is_available():
    print("SKIP: torch.cuda.is_available() is False")
    sys.exit(SKIP_RETURN_CODE)
if not tpevent.is_available("cuda"):
    print(f"SKIP: tpevent's cuda backend is unavailable: {tpevent.backends()}")
    sys.exit(SKIP_RETURN_CODE)

DEVICE = f"cuda:{torch.cuda.current_device()}"


def wrap(torch_stream):
    return tpevent.Stream.from_native(DEVICE, torch_stream.cuda_stream)


class TorchCaptureTests(unittest.TestCase):
    def test_fork_join_replayed_1000_times(self):
        s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
        t0, t1 = wrap(s0), wrap(s1)
        fork, join = tpevent.Event(DEVICE), tpevent.Event(DEVICE)
        x = torch.zeros(1 << 20, device=DEVICE)
        y = torch.zeros_like(x)
        out = torch.zeros_like(x)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s0):
            self.assertTrue(t0.is_capturing())
            x.add_(1.0)  # on s0
            fork.record(t0)
            t1.wait_event(fork)  # s1 joins the capture
            self.assertTrue(t1.is_capturing())
            with torch.cuda.stream(s1):
                y.copy_(x)
                y.mul_(2.0)
            join.record(t1)
            t0.wait_event(join)  # joined back
            out.copy_(y)
            out.add_(x)  # 3x, only right if s1's work came first
        self.assertFalse(t0.is_capturing() or t1.is_capturing())
        x.zero_()
        torch.cuda.synchronize()
        for i in range(1, 1001):
            g.replay()
            torch.cuda.current_stream().synchronize()
            self.assertEqual(out[0].item(), 3.0 * i, f"replay {i}")
            self.assertEqual(out[-1].item(), 3.0 * i, f"replay {i}")
        # tpevent's events are usable again outside the graph.
        fork.record(t0)
        fork.synchronize()
        self.assertTrue(fork.query())

    def test_external_range_agrees_with_torch(self):
        s0 = torch.cuda.Stream()
        t0 = wrap(s0)
        a = torch.randn(2048, 2048, device=DEVICE)
        with torch.cuda.stream(s0):
            for _ in range(3):
                a @ a  # cuBLAS warm-up before the capture
        torch.cuda.synchronize()
        start, end = (tpevent.Event(DEVICE, enable_timing=True, external=True) for _ in range(2))
        torch_start, torch_end = (torch.cuda.Event(enable_timing=True, external=True) for _ in range(2))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s0):
            torch_start.record()
            start.record(t0)
            b = a
            for _ in range(10):
                b = b @ a
            end.record(t0)
            torch_end.record()
        for replay in range(20):
            g.replay()
            torch.cuda.synchronize()
            self.assertTrue(end.query())
            ours = start.elapsed_time(end)
            theirs = torch_start.elapsed_time(torch_end)
            self.assertGreater(theirs, 0.0)
            self.assertLessEqual(abs(ours - theirs), max(0.05 * theirs, 0.020),
                                 f"replay {replay}: tpevent {ours} ms, torch {theirs} ms")
        self.assertLess(start.timestamp(), end.timestamp())

    def test_host_functions_run_once_per_replay_in_order(self):
        s0 = torch.cuda.Stream()
        t0 = wrap(s0)
        x = torch.zeros(1 << 20, device=DEVICE)
        op_start, op_end = (tpevent.Event(DEVICE, enable_timing=True, external=True) for _ in range(2))
        log = []  # (name, CLOCK_MONOTONIC ns when it ran), appended by the host functions

        def logging(name):
            return lambda: log.append((name, time.monotonic_ns()))

        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s0):
            t0.launch_host_func(logging("before"))
            op_start.record(t0)
            x.add_(1.0)  # torch's work, between the two host functions
            op_end.record(t0)
            t0.launch_host_func(logging("after"))
        self.assertEqual(log, [])  # captured, not run
        x.zero_()
        torch.cuda.synchronize()
        e = tpevent.device_clock(DEVICE).error_ns
        replays = 1000
        for i in range(1, replays + 1):
            with torch.cuda.stream(s0):
                g.replay()
            t0.synchronize(timeout=30.0)
            self.assertEqual(len(log), 2 * i, f"replay {i}: {log[-4:]}")
            (first, ran_first), (second, ran_second) = log[-2:]
            self.assertEqual((first, second), ("before", "after"), f"replay {i}")
            # Stream order: "before" returned before torch's work began, "after"
            # began once it was done (the records' timestamps, rule 13's bound: the
            # map's error now, which a wider anchor taken since may have raised).
            e = max(e, tpevent.device_clock(DEVICE).error_ns)
            self.assertLessEqual(ran_first, op_start.timestamp() + e, f"replay {i}, error_ns {e}")
            self.assertGreaterEqual(ran_second, op_end.timestamp() - e, f"replay {i}, error_ns {e}")
        self.assertEqual([name for name, _ in log], ["before", "after"] * replays)
        self.assertEqual(x[0].item(), float(replays))

    def test_host_function_in_a_replay_may_call_tpevent(self):
        s0 = torch.cuda.Stream()
        t0 = wrap(s0)
        other = tpevent.Stream(DEVICE)
        mark = tpevent.Event(DEVICE)
        outcomes = []  # per run: True, or what failed

        def record_on_other_stream_and_wait():
            try:
                mark.record(other)
                mark.synchronize(timeout=10.0)
                outcomes.append(mark.query())
            except Exception as error:  # noqa: BLE001 - reported by the test, not lost
                outcomes.append(repr(error))

        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s0):
            t0.launch_host_func(record_on_other_stream_and_wait)
        self.assertEqual(outcomes, [])
        for i in range(1, 101):
            with torch.cuda.stream(s0):
                g.replay()
            t0.synchronize(timeout=30.0)
            self.assertEqual(outcomes, [True] * i, f"replay {i}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
