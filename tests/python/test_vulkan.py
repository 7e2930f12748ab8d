"""The binding on the Vulkan backend (issue 54): tpevent.Event("vulkan") and the
tpevent.vulkan namespace, timing of a host function between two records, the
timestamp on time.monotonic_ns()'s clock (rule 13), and the native handles as
integers (the device's VkQueue, the latest record's timeline VkSemaphore). Exits 77,
with the reason, where the backend is unavailable (no Vulkan driver)."""

import os
import time
import unittest

os.environ.setdefault("TPEVENT_TEST_DEVICE_TYPE", "vulkan")

import tpevent  # noqa: E402
from tpevent_testing import run  # noqa: E402


class VulkanBinding(unittest.TestCase):
    def test_event_of_the_type_and_of_the_namespace(self):
        import tpevent.vulkan

        self.assertEqual(tpevent.Event("vulkan").device, "vulkan:0")
        self.assertIsInstance(tpevent.vulkan.Event(), tpevent.Event)
        self.assertEqual(tpevent.vulkan.device_count(), tpevent.device_count("vulkan"))

    def test_host_function_between_two_records_is_timed(self):
        stream = tpevent.Stream("vulkan:0")
        start = tpevent.Event("vulkan:0", enable_timing=True)
        end = tpevent.Event("vulkan:0", enable_timing=True)
        start.record(stream)
        stream.launch_host_func(lambda: time.sleep(0.02))
        end.record(stream)
        end.synchronize()
        ms = start.elapsed_time(end)
        # The host function's 20 ms, and less than a busy machine's second.
        self.assertGreaterEqual(ms, 19.0)
        self.assertLess(ms, 1000.0)

    def test_timestamp_is_on_the_monotonic_clock(self):
        stream = tpevent.Stream("vulkan:0")
        event = tpevent.Event("vulkan:0", enable_timing=True)
        error = tpevent.device_clock("vulkan:0").error_ns
        before = time.monotonic_ns()
        event.record(stream)
        event.synchronize()
        after = time.monotonic_ns()
        self.assertGreaterEqual(event.timestamp(), before - error)
        self.assertLessEqual(event.timestamp(), after + error)

    def test_native_handles_are_integers(self):
        stream = tpevent.Stream("vulkan:0")
        self.assertIsInstance(stream.native_handle, int)
        self.assertNotEqual(stream.native_handle, 0)
        event = tpevent.Event("vulkan:0")
        self.assertEqual(event.native_handle, 0)  # never recorded
        event.record(stream)
        self.assertIsInstance(event.native_handle, int)
        self.assertNotEqual(event.native_handle, 0)


if __name__ == "__main__":
    run()
