"""One clock (rule 13) from Python: Event.timestamp(), tpevent.device_clock(), and
elapsed_time of events of two devices or two backends, on the device type under
test."""

import time
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, need_devices, run

# Slack for CI's scheduling between two host-timed records, on top of the two
# devices' error_ns: the tight figure is the benchmark's, not a test's.
SLACK_NS = 2_000_000


def error_ns(dev):
    return tpevent.device_clock(dev).error_ns


def other_backend():
    """A device of another backend than the one under test, or None."""
    if DEVICE_TYPE != "cpu":
        return "cpu:0"
    for gpu in ("cuda", "hip"):
        if tpevent.is_available(gpu):
            return f"{gpu}:0"
    return None


class DeviceClockTests(unittest.TestCase):
    def test_fields(self):
        info = tpevent.device_clock(device(0))
        self.assertIsInstance(info, tpevent.ClockInfo)
        self.assertIsInstance(info.resolution_ns, int)
        self.assertIsInstance(info.error_ns, int)
        self.assertGreater(info.resolution_ns, 0)
        self.assertGreaterEqual(info.error_ns, 0)
        self.assertLess(info.error_ns, 1_000_000)
        self.assertEqual(tuple(info), (info.resolution_ns, info.error_ns))

    def test_default_and_namespace_device(self):
        namespace = getattr(tpevent, DEVICE_TYPE)
        self.assertGreater(namespace.device_clock().resolution_ns, 0)
        self.assertGreater(namespace.device_clock(0).resolution_ns, 0)
        self.assertGreater(tpevent.device_clock(device=device(0)).resolution_ns, 0)


class TimestampTests(unittest.TestCase):
    def setUp(self):
        self.stream = tpevent.Stream(device(0))
        self.e = error_ns(device(0))

    def test_within_the_host_bracket(self):
        event = tpevent.Event(device(0), enable_timing=True)
        for i in range(50):
            t0 = time.monotonic_ns()
            event.record(self.stream)
            event.synchronize()
            t1 = time.monotonic_ns()
            ns = event.timestamp()
            self.assertIsInstance(ns, int)
            self.assertGreaterEqual(ns, t0 - self.e, f"record {i}")
            self.assertLessEqual(ns, t1 + self.e, f"record {i}")

    def test_never_goes_backwards_and_never_changes(self):
        events = [self.stream.record_event() for _ in range(20)]
        self.stream.synchronize()
        stamps = [e.timestamp() for e in reversed(events)][::-1]
        self.assertEqual(stamps, sorted(stamps))
        time.sleep(0.002)
        self.stream.record_event().synchronize()
        self.assertEqual([e.timestamp() for e in events], stamps)

    def test_waits_for_a_record_not_reached(self):
        gate = Gate(self.stream)
        event = self.stream.record_event()
        self.assertFalse(event.query())
        opened = time.monotonic_ns()  # the record is reached after this
        gate.open()
        self.assertGreaterEqual(event.timestamp(), opened - self.e)
        gate.close()

    def test_is_a_method_without_arguments(self):
        event = self.stream.record_event()
        with self.assertRaises(TypeError):
            event.timestamp(1)


class ElapsedTimeAcrossClocksTests(unittest.TestCase):
    """elapsed_time of a pair around a 20 ms host sleep, on the host clock."""

    def check_pair(self, a, b):
        sa, sb = tpevent.Stream(a), tpevent.Stream(b)
        start = tpevent.Event(a, enable_timing=True)
        end = tpevent.Event(b, enable_timing=True)
        before_start = time.monotonic_ns()
        start.record(sa)
        start.synchronize()
        after_start = time.monotonic_ns()
        time.sleep(0.02)
        before_end = time.monotonic_ns()
        end.record(sb)
        end.synchronize()
        after_end = time.monotonic_ns()
        bound = error_ns(a) + error_ns(b) + SLACK_NS
        ms = start.elapsed_time(end)
        self.assertGreaterEqual(ms, (before_end - after_start - bound) / 1e6)
        self.assertLessEqual(ms, (after_end - before_start + bound) / 1e6)
        self.assertLess(end.elapsed_time(start), 0.0)  # end reached first that way
        want = (end.timestamp() - start.timestamp()) / 1e6
        self.assertAlmostEqual(ms, want, delta=abs(want) * 1e-6)

    def test_two_devices(self):
        need_devices(self, 2)
        self.check_pair(device(0), device(1))

    def test_two_backends(self):
        other = other_backend()
        if other is None:
            self.skipTest("needs a second backend, and no GPU backend is usable here")
        self.check_pair(device(0), other)
        self.check_pair(other, device(0))


if __name__ == "__main__":
    run()
