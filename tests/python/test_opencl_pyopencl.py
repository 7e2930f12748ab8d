"""tpevent on pyopencl's own queue and events (issue 34): a pyopencl kernel timed
by tpevent events recorded around it on a Stream wrapped from pyopencl's queue,
against pyopencl's profiling of the same kernel; a pyopencl event wrapped with
Event.from_native. The file exits 77 (skipped), with the reason, without a usable
OpenCL backend or without pyopencl; CI installs Debian's python3-pyopencl, so on PoCL
it runs."""

import os
import sys
import unittest

os.environ.setdefault("TPEVENT_TEST_DEVICE_TYPE", "opencl")

import tpevent  # noqa: E402
from tpevent_testing import SKIP_RETURN_CODE, run  # noqa: E402

try:
    import numpy
    import pyopencl as cl
    missing = None
except ImportError as error:
    cl = None
    missing = f"pyopencl or numpy is not installed ({error})"

# A few ms of dependent arithmetic per work item on PoCL's CPU device.
KERNEL = """
__kernel void spin(__global float *out, int iterations)
{
    float x = (float)get_global_id(0);
    for (int i = 0; i < iterations; i++)
        x = x * 0.9999f + 1.0f;
    out[get_global_id(0)] = x;
}
"""
ITEMS = 64
ITERATIONS = 200000


class PyopenclQueue(unittest.TestCase):
    def setUp(self):
        # pyopencl's context on the device of tpevent's opencl:0, matched by cl_device_id.
        own = tpevent.Stream("opencl:0")
        device = cl.CommandQueue.from_int_ptr(own.native_handle, retain=True).device
        self.context = cl.Context([device])
        self.queue = cl.CommandQueue(self.context, device,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.program = cl.Program(self.context, KERNEL).build()
        self.out = cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY, ITEMS * 4)
        self.stream = tpevent.Stream.from_native("opencl:0", self.queue.int_ptr)

    def tearDown(self):
        # The wrapper first: the queue is pyopencl's, and must outlive it.
        del self.stream
        self.queue.finish()

    def spin(self):
        return self.program.spin(self.queue, (ITEMS,), None, self.out, numpy.int32(ITERATIONS))

    def test_events_around_a_kernel_time_it_as_pyopencl_does(self):
        self.spin().wait()  # warm-up: the kernel's first launch
        start = tpevent.Event("opencl:0", enable_timing=True)
        end = tpevent.Event("opencl:0", enable_timing=True)
        start.record(self.stream)
        kernel = self.spin()
        end.record(self.stream)
        end.synchronize()
        kernel_ms = (kernel.profile.end - kernel.profile.start) / 1e6
        ms = start.elapsed_time(end)
        self.assertGreater(kernel_ms, 0.1)
        # The records bracket the kernel on the in-order queue, so tpevent's span holds
        # it; loosely bounded above (PoCL schedules commands on its own threads).
        self.assertGreaterEqual(ms, kernel_ms * 0.999, f"tpevent {ms:.3f} ms, pyopencl {kernel_ms:.3f} ms")
        self.assertLess(ms, kernel_ms * 2 + 20, f"tpevent {ms:.3f} ms, pyopencl {kernel_ms:.3f} ms")

    def test_a_pyopencl_event_wraps_read_only(self):
        start = tpevent.Event("opencl:0", enable_timing=True)
        start.record(self.stream)
        kernel = self.spin()
        wrapped = tpevent.Event.from_native("opencl:0", kernel.int_ptr)
        wrapped.synchronize()
        self.assertTrue(wrapped.query())
        self.assertEqual(wrapped.native_handle, kernel.int_ptr)
        # Its time is the kernel's end: after the start's by the kernel's length at least.
        kernel_ms = (kernel.profile.end - kernel.profile.start) / 1e6
        self.assertGreaterEqual(start.elapsed_time(wrapped), kernel_ms * 0.999)
        with self.assertRaises(tpevent.Error):
            wrapped.record(self.stream)


if __name__ == "__main__":
    if cl is None:
        print(f"SKIP: {missing}")
        sys.exit(SKIP_RETURN_CODE)
    run()
