"""Rule 19 through the binding: a CUDA stream whose handle tpevent gave out (native_handle,
__cuda_stream__) outlives the tpevent Stream, for whoever still holds the handle.

HandlesOutliveTheirStream runs on the fake GPU in CI and on CUDA. The torch and CuPy
tests run on CUDA only (scripts/gpu-check.sh on the H200), each in a child process, so
that an abort inside torch (what this rule prevents) fails one test, not the file; each
skips with its reason where torch (with CUDA) or CuPy is missing. The file exits 77
(skipped) without a usable CUDA backend.
"""

import gc
import os
import subprocess
import sys
import textwrap
import unittest

os.environ.setdefault("TPEVENT_TEST_DEVICE_TYPE", "cuda")

import tpevent  # noqa: E402
from tpevent_testing import optional_cupy, optional_torch, run  # noqa: E402

torch, torch_reason = optional_torch()
cupy, cupy_reason = optional_cupy()

needs_torch = unittest.skipIf(torch_reason is not None, torch_reason or "")
needs_cupy = unittest.skipIf(cupy_reason is not None, cupy_reason or "")

STREAMS_IN_THE_LOOP = 10_000


def run_child(test, program, marker):
    """Runs `program` in a child interpreter; the test fails unless it exits 0 and
    prints `marker`. The child's output is shown, for the figures it prints."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True,
                          timeout=600)
    sys.stdout.write(done.stdout)
    test.assertEqual(done.returncode, 0, f"exit {done.returncode}: {done.stderr[-3000:]}")
    test.assertIn(marker, done.stdout)


class HandlesOutliveTheirStream(unittest.TestCase):
    def test_a_dropped_streams_handle_still_takes_work(self):
        s = tpevent.Stream("cuda")
        handle = s.native_handle
        s.launch_host_func(lambda: None)  # work pending at the drop (rule 9)
        del s
        gc.collect()
        # Whoever kept the handle (here tpevent itself, as a wrapper) records on it.
        kept = tpevent.Stream.from_native("cuda", handle)
        e = kept.record_event()
        e.synchronize()
        self.assertTrue(e.query())
        kept.synchronize()

    def test_later_streams_take_dropped_handles_again(self):
        handles = set()
        for _ in range(100):
            s = tpevent.Stream("cuda")
            handles.add(s.native_handle)
            s.synchronize()
            del s  # idle: the next Stream may take its native stream
        # Each Stream above found the previous one's native stream idle in the pool;
        # a few more may come from earlier tests' streams.
        self.assertLess(len(handles), 50, f"{len(handles)} native streams for 100 streams made one at a time")

    def test_a_handle_of_another_priority_is_not_taken(self):
        least, greatest = tpevent.Stream.priority_range("cuda")
        if least == greatest:
            self.skipTest("the device has one stream priority")
        s = tpevent.Stream("cuda", priority=greatest)
        handle = s.native_handle
        del s
        gc.collect()
        others = [tpevent.Stream("cuda", priority=least) for _ in range(8)]
        self.assertNotIn(handle, [o.native_handle for o in others])


@needs_torch
class TorchHoldsTheHandle(unittest.TestCase):
    def test_record_stream(self):
        # torch's test_cuda.py test_record_stream, on a tpevent stream taken in through
        # torch.cuda.ExternalStream; then the tpevent stream goes, and after it the pinned
        # block, whose free makes torch's host allocator record an event on that stream.
        program = """
            import gc, torch, tpevent

            def cycles_per_ms():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                torch.cuda._sleep(1000000)
                end.record()
                end.synchronize()
                return 1000000 / start.elapsed_time(end)

            cycles = cycles_per_ms()
            t = torch.tensor([1.0, 2.0, 3.0, 4.0]).pin_memory()
            result = torch.empty(4, device="cuda")
            s = tpevent.Stream("cuda")
            stream = torch.cuda.ExternalStream(s.native_handle)
            ptr = [None]

            def perform_copy():
                with torch.cuda.stream(stream):
                    tmp = t.cuda(non_blocking=True)
                    ptr[0] = tmp.data_ptr()
                torch.cuda.current_stream().wait_stream(stream)
                tmp.record_stream(torch.cuda.current_stream())
                torch.cuda._sleep(int(50 * cycles))  # delay the copy
                result.copy_(tmp)

            perform_copy()
            with torch.cuda.stream(stream):
                tmp2 = torch.empty(4, device="cuda")
                tmp2.zero_()
                assert tmp2.data_ptr() != ptr[0], "allocation re-used too soon"
            assert result.tolist() == [1, 2, 3, 4], result.tolist()

            del stream, s
            gc.collect()
            del t  # torch records an event on the dropped stream's handle
            gc.collect()
            torch.cuda.synchronize()
            again = torch.tensor([5.0]).pin_memory()  # the host allocator looks at its events
            torch.cuda.synchronize()
            print("record_stream passed")
        """
        run_child(self, program, "record_stream passed")

    def test_streams_made_and_dropped_each_used_by_a_pinned_copy(self):
        program = f"""
            import torch, tpevent

            target = torch.empty(4096, dtype=torch.uint8, device="cuda")
            handles = set()
            for i in range({STREAMS_IN_THE_LOOP}):
                s = tpevent.Stream("cuda")
                handles.add(s.native_handle)
                ext = torch.cuda.ExternalStream(s.native_handle)
                host = torch.full((4096,), i % 251, dtype=torch.uint8).pin_memory()
                ext.wait_stream(torch.cuda.current_stream())  # after the last copy into target
                with torch.cuda.stream(ext):
                    target.copy_(host, non_blocking=True)
                torch.cuda.current_stream().wait_stream(ext)
                del ext, s  # the tpevent stream goes first,
                del host  # then the pinned block: an event recorded on the stream
                if i % 1000 == 999:
                    assert int(target[-1]) == i % 251, (int(target[-1]), i % 251)
            torch.cuda.synchronize()
            print("{STREAMS_IN_THE_LOOP} streams, {{}} native streams".format(len(handles)))
        """
        run_child(self, program, f"{STREAMS_IN_THE_LOOP} streams")


@needs_cupy
class CupyHoldsTheHandle(unittest.TestCase):
    def test_pinned_copy_on_a_dropped_stream(self):
        # CuPy's ExternalStream keeps the raw handle; the tpevent stream goes while a
        # copy from pinned memory is on it, and CuPy records on the handle afterwards.
        program = f"""
            import gc, numpy, cupy, cupyx, tpevent

            n = 1 << 22
            host = cupyx.empty_pinned((n,), dtype=numpy.uint8)
            host[:] = 7
            dev = cupy.empty((n,), dtype=cupy.uint8)
            s = tpevent.Stream("cuda")
            cs = cupy.cuda.ExternalStream(s.native_handle)
            dev.set(host, stream=cs)  # asynchronous: the host memory is pinned
            del s
            gc.collect()
            cs.record().synchronize()
            cs.synchronize()
            assert cs.done
            del host
            gc.collect()
            assert int(dev.sum()) == 7 * n

            small = cupyx.empty_pinned((4096,), dtype=numpy.uint8)
            target = cupy.empty((4096,), dtype=cupy.uint8)
            handles = set()
            for i in range({STREAMS_IN_THE_LOOP}):
                s = tpevent.Stream("cuda")
                handles.add(s.native_handle)
                cs = cupy.cuda.ExternalStream(s.native_handle)
                small[:] = i % 251
                target.set(small, stream=cs)
                del s
                done = cs.record()  # on the handle of a dropped stream
                done.synchronize()
                del cs
            assert int(target[-1]) == ({STREAMS_IN_THE_LOOP} - 1) % 251
            cupy.cuda.Device().synchronize()
            print("cupy passed: {STREAMS_IN_THE_LOOP} streams, {{}} native streams".format(len(handles)))
        """
        run_child(self, program, "cupy passed")


if __name__ == "__main__":
    run()
