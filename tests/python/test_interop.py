"""Interop with the real torch, CuPy and cuda.core on a CUDA device (issue 19; run by
scripts/gpu-check.sh on the H200). The file exits 77 (skipped) without a usable CUDA
backend; each test skips with its reason where torch (with CUDA), CuPy or cuda.core
is missing. test_interop_duck.py checks the same conventions with stand-ins, on the
CPU and the fake GPU."""

import importlib
import os
import statistics
import subprocess
import sys
import textwrap
import time
import unittest

os.environ.setdefault("TPEVENT_TEST_DEVICE_TYPE", "cuda")

import tpevent  # noqa: E402
from tpevent_testing import Gate, optional_cupy, optional_torch, run  # noqa: E402

torch, torch_reason = optional_torch()
cupy, cupy_reason = optional_cupy()



def import_cuda_core():
    """cuda.core's module with Device, Stream and Event: cuda.core itself from 1.0 on,
    cuda.core.experimental before (where `import cuda.core` works but has no Device).
    (module, None), or (None, why not); an error other than ImportError is returned
    as the reason too, and fails the tests instead of skipping them."""
    reasons = []
    for name in ("cuda.core", "cuda.core.experimental"):
        try:
            module = importlib.import_module(name)
        except ImportError as missing:
            reasons.append(f"{name}: {missing}")
            continue
        except Exception as broken:  # installed, but does not load: a failure, not a skip
            return None, broken
        if hasattr(module, "Device"):
            return module, None
        reasons.append(f"{name} has no Device")
    return None, "cuda.core is not installed (" + "; ".join(reasons) + ")"


cuda_core, cuda_core_reason = import_cuda_core()

needs_torch = unittest.skipIf(torch_reason is not None, torch_reason or "")
needs_cupy = unittest.skipIf(cupy_reason is not None, cupy_reason or "")
needs_cuda_core = unittest.skipIf(isinstance(cuda_core_reason, str), str(cuda_core_reason))

CUDA_SUCCESS, CUDA_ERROR_NOT_READY = 0, 600


class ProtocolStream:
    """What cuda.core, numba and CuPy give out: __cuda_stream__() -> (version, handle)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


@needs_torch
class TorchTests(unittest.TestCase):
    def setUp(self):
        self.a = torch.randn(4096, 4096, device="cuda")
        self.b = torch.randn(4096, 4096, device="cuda")

    def test_torch_streams_are_taken_directly(self):
        ts = torch.cuda.Stream()
        self.assertEqual(tpevent.Stream.from_external(ts).native_handle, ts.cuda_stream)
        e = tpevent.Event("cuda")
        with torch.cuda.stream(ts):
            self.a @ self.b
        e.record(ts)  # after the matmul, on torch's stream
        e.synchronize()
        self.assertTrue(ts.query())
        tpevent.Stream("cuda").wait_stream(ts)
        with tpevent.stream(ts):
            self.assertEqual(tpevent.current_stream("cuda").native_handle, ts.cuda_stream)

    def test_protocol_object_is_taken_directly(self):
        ts = torch.cuda.Stream()
        e = tpevent.Event("cuda")
        with torch.cuda.stream(ts):
            self.a @ self.b
        e.record(ProtocolStream(ts.cuda_stream))
        e.synchronize()
        self.assertTrue(ts.query())

    def test_default_stream_handle_is_torchs(self):
        d = tpevent.default_stream("cuda")
        self.assertEqual(d.native_handle, torch.cuda.default_stream().cuda_stream)
        self.assertEqual(d.native_handle, 0)
        self.assertEqual(tpevent.Stream.from_external(torch.cuda.default_stream()), d)
        self.assertEqual(tpevent.Stream.from_native("cuda", 0), d)

    def test_priority_range_agrees_with_torch(self):
        least, greatest = tpevent.Stream.priority_range("cuda")
        torch_least, torch_greatest = torch.cuda.Stream.priority_range()
        self.assertEqual(least, torch_least)
        self.assertLessEqual(greatest, torch_greatest)  # torch caps its range at its pool count

    def test_timing_torch_matmuls_agrees_with_torch_events(self):
        ts = torch.cuda.Stream()
        with torch.cuda.stream(ts):
            for _ in range(3):
                self.a @ self.b  # warm-up: cuBLAS handles, clocks
        ratios = []
        for _ in range(7):
            t_start, t_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            p_start, p_end = tpevent.Event("cuda", enable_timing=True), tpevent.Event("cuda", enable_timing=True)
            with torch.cuda.stream(ts):
                t_start.record(ts)
                p_start.record(ts)
                for _ in range(20):
                    self.a @ self.b
                p_end.record(ts)
                t_end.record(ts)
            t_end.synchronize()
            ratios.append(p_start.elapsed_time(p_end) / t_start.elapsed_time(t_end))
        median = statistics.median(ratios)
        print(f"\ntpevent/torch.cuda.Event elapsed ratio over 20 matmuls, median of 7: {median:.5f} "
              f"(min {min(ratios):.5f}, max {max(ratios):.5f})")
        self.assertLess(abs(median - 1.0), 0.02, f"tpevent/torch elapsed ratios {ratios}")

    def test_torch_event_taken_in_by_from_native(self):
        ts = torch.cuda.Stream()
        te = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(ts):
            te.record(ts)  # torch makes its native event at the first record
            self.a @ self.b
        wrapped = tpevent.Event.from_native("cuda", te)
        self.assertEqual(wrapped.native_handle, te.cuda_event)
        end = tpevent.Event("cuda", enable_timing=True)
        end.record(ts)
        self.assertGreater(wrapped.elapsed_time(end), 0.0)
        # A record through the wrapper goes on torch's event: torch sees it.
        with torch.cuda.stream(ts):
            self.a @ self.b
        wrapped.record(ts)
        wrapped.synchronize()
        self.assertTrue(te.query())

    def test_native_handle_in_torchs_names(self):
        e = tpevent.Event("cuda")
        self.assertEqual((e.native_handle, e.cuda_event, e.event_id), (0, 0, 0))
        e.record()
        self.assertNotEqual(e.cuda_event, 0)
        self.assertEqual(e.cuda_event, e.event_id)

    def test_elapsed_time_of_unrecorded_events_raises_value_error(self):
        with self.assertRaises(ValueError):  # torch.cuda.Event raises ValueError here
            tpevent.Event("cuda", enable_timing=True).elapsed_time(tpevent.Event("cuda", enable_timing=True))

    def test_launch_host_func_after_torch_work(self):
        ts = torch.cuda.Stream()
        seen = []
        with torch.cuda.stream(ts):
            c = self.a @ self.b
        tp = tpevent.Stream.from_external(ts)
        tp.launch_host_func(seen.append, "after matmul")
        tp.add_callback(lambda stream, status, arg: seen.append((status, arg)), 7)
        tp.synchronize()
        self.assertEqual(seen, ["after matmul", (0, 7)])
        self.assertEqual(c.shape, (4096, 4096))

    def test_external_stream_used_by_torch_at_exit(self):
        # The H200 crash: torch's host allocator recorded an event on a tpevent stream
        # that finalization had destroyed (SIGSEGV in cudaEventRecordWithFlags).
        program = textwrap.dedent(
            """
            import torch, tpevent
            s = tpevent.Stream("cuda")
            ext = torch.cuda.ExternalStream(s.native_handle)
            with torch.cuda.stream(ext):
                for _ in range(8):
                    x = torch.empty(1 << 24, dtype=torch.uint8, pin_memory=True).to("cuda", non_blocking=True)
                total = int(x.sum())
            print("copied", total)
            """
        )
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, f"exit {done.returncode}: {done.stderr[-2000:]}")
        self.assertIn("copied", done.stdout)


@needs_cupy
class CupyTests(unittest.TestCase):
    def test_cupy_streams_are_taken_directly(self):
        cs = cupy.cuda.Stream(non_blocking=True)
        self.assertEqual(tpevent.Stream.from_external(cs).native_handle, cs.ptr)
        with cs:
            x = cupy.arange(1 << 24, dtype=cupy.float32).sum()
        e = tpevent.Event("cuda")
        e.record(cs)
        e.synchronize()
        self.assertTrue(cs.done)
        self.assertGreater(float(x), 0.0)

    def test_tpevent_stream_taken_by_cupy(self):
        s = tpevent.Stream("cuda")
        self.assertEqual(s.__cuda_stream__(), (0, s.native_handle))
        try:
            cs = cupy.cuda.Stream.from_external(s)  # through __cuda_stream__ (CuPy 13+)
        except (AttributeError, TypeError):
            cs = cupy.cuda.ExternalStream(s.native_handle)  # older CuPy: the raw handle
        self.assertEqual(cs.ptr, s.native_handle)
        with cs:
            y = cupy.ones(1 << 20).sum()
        s.record_event().synchronize()
        self.assertEqual(float(y), float(1 << 20))

    def test_native_event_used_by_cupy(self):
        s = tpevent.Stream("cuda")
        e = s.record_event()
        self.assertIn(cupy.cuda.runtime.eventQuery(e.native_handle), (CUDA_SUCCESS, CUDA_ERROR_NOT_READY))
        e.synchronize()
        self.assertEqual(cupy.cuda.runtime.eventQuery(e.native_handle), CUDA_SUCCESS)
        cs = cupy.cuda.Stream(non_blocking=True)
        cupy.cuda.runtime.streamWaitEvent(cs.ptr, e.native_handle)
        cs.synchronize()

    def test_cupy_event_taken_in_by_from_native(self):
        cs = cupy.cuda.Stream(non_blocking=True)
        ce = cupy.cuda.Event()
        ce.record(cs)
        wrapped = tpevent.Event.from_native("cuda", ce)
        self.assertEqual(wrapped.native_handle, ce.ptr)
        wrapped.synchronize()
        self.assertTrue(ce.done)


def cuda_core_timing_options():
    """cuda.core's EventOptions with timing on: timing_enabled from 1.0, enable_timing
    before."""
    try:
        return cuda_core.EventOptions(timing_enabled=True)
    except TypeError:
        return cuda_core.EventOptions(enable_timing=True)


@needs_cuda_core
class CudaCoreTests(unittest.TestCase):
    """cuda.core 1.x (Device, Stream, Event at the top level) or the experimental
    module: each library takes the other's streams, events recorded by one on the
    other's stream are ordered and seen by both, and tpevent's cuda.core names
    (sync, is_done, wait, end - start) agree with cuda.core's."""

    def setUp(self):
        if cuda_core_reason is not None:
            self.fail(f"cuda.core does not load: {cuda_core_reason!r}")
        self.device = cuda_core.Device(0)
        self.device.set_current()
        tpevent.set_device("cuda:0")

    def test_cuda_core_takes_a_tpevent_stream(self):
        s = tpevent.Stream("cuda:0")
        cs = self.device.create_stream(s)  # through __cuda_stream__; cuda.core keeps s alive
        self.assertEqual(int(cs.handle), s.native_handle)
        self.assertEqual(tuple(cs.__cuda_stream__()), s.__cuda_stream__())
        other = self.device.create_stream()
        with Gate(s) as gate:
            recorded = cs.record()  # cuda.core's event, on tpevent's stream, behind the gate
            other.wait(s)  # cuda.core waits on tpevent's stream itself (__cuda_stream__)
            after = tpevent.Event("cuda:0")
            after.record(other)  # tpevent records on cuda.core's stream
            self.assertFalse(recorded.is_done)
            self.assertFalse(after.query())
            gate.open()
            recorded.sync()
            after.sync()
        self.assertTrue(recorded.is_done)
        self.assertTrue(after.is_done)
        cs.sync()

    def test_tpevent_takes_a_cuda_core_stream_and_event(self):
        cs = self.device.create_stream()
        wrapped = tpevent.Stream.from_external(cs)
        self.assertEqual(wrapped.native_handle, int(cs.handle))
        self.assertEqual(wrapped.device, "cuda:0")
        s = tpevent.Stream("cuda:0")
        with Gate(wrapped) as gate:
            e = tpevent.Event("cuda:0")
            e.record(cs)
            ce = cs.record()
            native = tpevent.Event.from_native("cuda:0", int(ce.handle))  # cuda.core's event, taken in
            s.wait(cs)  # Stream.wait with a stream of cuda.core's
            after = s.record_event()
            self.assertEqual((e.query(), native.query(), after.is_done, ce.is_done), (False, False, False, False))
            gate.open()
            for event in (e, native, after):
                event.sync()
        self.assertTrue(ce.is_done)
        self.assertTrue(native.done)

    def test_subtraction_agrees_with_cuda_core(self):
        s = tpevent.Stream("cuda:0")
        cs = self.device.create_stream(s)
        timing = cuda_core_timing_options()
        core_start = cs.record(options=timing)
        start = s.record_event()
        s.launch_host_func(time.sleep, 0.05)  # 50 ms of the stream's time between the records
        end = s.record_event()
        core_end = cs.record(options=timing)
        end.sync()  # with the GIL released, so that the host function can run
        core_end.sync()
        ms, core_ms = end - start, core_end - core_start
        print(f"\ntpevent end - start {ms:.3f} ms, cuda.core's {core_ms:.3f} ms")
        self.assertEqual(ms, tpevent.get_elapsed_time(start, end))
        self.assertGreater(ms, 45.0)
        self.assertGreaterEqual(core_ms, ms - 0.01)  # cuda.core's records bracket tpevent's
        self.assertLess(core_ms - ms, 2.0)


class HostFunctionTests(unittest.TestCase):
    def test_launch_host_func_on_cuda_and_cpu(self):
        for name in ("cuda", "cpu"):
            with self.subTest(device=name):
                s = tpevent.Stream(name)
                seen = []
                s.launch_host_func(seen.append, name)
                s.launch_host_func(lambda: seen.append("no arg"))
                s.synchronize()
                self.assertEqual(seen, [name, "no arg"])


if __name__ == "__main__":
    run()
