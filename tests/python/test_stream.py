"""tpevent.Stream: creation, each method and attribute, equality and hash."""

import gc
import threading
import time
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, need_devices, run


class StreamTests(unittest.TestCase):
    def test_create(self):
        s = tpevent.Stream(DEVICE_TYPE)
        self.assertIsInstance(s, tpevent.Stream)
        self.assertEqual(s.device, device(0))
        self.assertIsInstance(s.native_handle, int)
        self.assertIsInstance(s.priority, int)

    def test_create_keywords_and_priority(self):
        s = tpevent.Stream(device=DEVICE_TYPE, priority=-1)
        self.assertLessEqual(s.priority, 0)  # clamped to the backend's range
        self.assertEqual(tpevent.Stream(device=DEVICE_TYPE, priority=0).priority, 0)

    def test_no_device_means_current_device(self):
        self.assertEqual(tpevent.Stream().device, tpevent.current_device())

    def test_second_device(self):
        need_devices(self, 2)
        s = tpevent.Stream(device(1))
        self.assertEqual(s.device, device(1))
        self.assertEqual(s.record_event().device, device(1))

    def test_record_event_creates_a_timing_event(self):
        s = tpevent.Stream(DEVICE_TYPE)
        e = s.record_event()
        self.assertIsInstance(e, tpevent.Event)
        self.assertTrue(e.enable_timing)
        self.assertEqual(e.device, s.device)
        e.synchronize()
        self.assertTrue(e.query())

    def test_record_event_records_a_given_event(self):
        s = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(s):
            self.assertIs(s.record_event(e), e)
            self.assertFalse(e.query())
        with Gate(s):
            self.assertIs(s.record_event(event=e), e)
            self.assertFalse(e.query())
        self.assertFalse(s.record_event(None).query() is None)

    def test_record_is_record_event(self):
        s = tpevent.Stream(DEVICE_TYPE)
        e = s.record()
        self.assertTrue(e.enable_timing)
        mine = tpevent.Event(DEVICE_TYPE)
        self.assertIs(s.record(mine), mine)
        self.assertIs(s.record(event=mine), mine)

    def test_seed_timing_one_liner(self):
        s = tpevent.Stream(DEVICE_TYPE)
        ms = s.record_event().elapsed_time(s.record_event())
        self.assertGreaterEqual(ms, 0.0)

    def test_wait_event(self):
        s1, s2 = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        with Gate(s1) as gate:
            e = s1.record_event()
            self.assertIsNone(s2.wait_event(e))
            after = s2.record_event()
            self.assertFalse(after.query())
            self.assertFalse(s2.query())
            gate.open()
            s2.synchronize()
            self.assertTrue(after.query())

    def test_wait_stream(self):
        s1, s2 = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        with Gate(s1) as gate:
            self.assertIsNone(s2.wait_stream(s1))
            after = s2.record_event()
            self.assertFalse(after.query())
            gate.open()
            after.synchronize()
            self.assertTrue(s1.query())

    def other_backend(self):
        """A device type of another backend: the CPU for a GPU, else a usable GPU."""
        if DEVICE_TYPE != "cpu":
            return "cpu"
        for other in ("cuda", "hip"):
            if tpevent.is_available(other):
                return other
        self.skipTest("needs a second backend, and no GPU backend is usable here")

    def test_wait_event_across_backends_both_ways(self):
        # Issue 16: the same calls as on one backend (rule 6 across backends).
        other = self.other_backend()
        for source_type, waiting_type in ((other, DEVICE_TYPE), (DEVICE_TYPE, other)):
            source, waiting = tpevent.Stream(source_type), tpevent.Stream(waiting_type)
            with Gate(source) as gate:
                e = source.record_event()
                self.assertIsNone(waiting.wait_event(e))
                after = waiting.record_event()
                self.assertFalse(after.query())
                gate.open()
                after.synchronize()
                self.assertTrue(e.query())

    def test_wait_stream_across_backends(self):
        other = self.other_backend()
        source, waiting = tpevent.Stream(other), tpevent.Stream(DEVICE_TYPE)
        with Gate(source) as gate:
            self.assertIsNone(waiting.wait_stream(source))
            after = waiting.record_event()
            self.assertFalse(after.query())
            gate.open()
            after.synchronize()

    def test_ten_thousand_waits_across_backends_never_block(self):
        # Rule 17's window: a GPU stream waits on 10,000 CPU records, each released
        # by a Python host function (which needs the GIL); no wait_event blocks, and
        # the records are reached in order once the first host function lets go.
        other = self.other_backend()
        gpu_type = other if DEVICE_TYPE == "cpu" else DEVICE_TYPE
        source, waiting = tpevent.Stream("cpu"), tpevent.Stream(gpu_type)
        go, ran = threading.Event(), []
        watchdog = threading.Timer(10.0, go.set)  # a blocked wait fails, not hangs
        watchdog.start()
        try:
            source.launch_host_func(lambda: go.wait())
            e, longest = tpevent.Event("cpu"), 0.0
            for i in range(10000):
                source.launch_host_func(lambda i=i: ran.append(i))
                e.record(source)
                start = time.monotonic()
                waiting.wait_event(e)
                longest = max(longest, time.monotonic() - start)
            after = waiting.record_event()
            self.assertFalse(after.query())
            self.assertLess(longest, 3.0)
            go.set()
            after.synchronize()
        finally:
            watchdog.cancel()
            go.set()
        self.assertEqual(ran, list(range(10000)))

    def test_interprocess_event_across_backends_raises(self):
        other = self.other_backend()
        e = tpevent.Event(other, interprocess=True)
        with self.assertRaises(tpevent.Error) as caught:
            tpevent.Stream(DEVICE_TYPE).wait_event(e)
        self.assertEqual(caught.exception.status, "TP_ERR_UNSUPPORTED")
        self.assertIn("interprocess", str(caught.exception))

    def test_wait_stream_itself(self):
        s = tpevent.Stream(DEVICE_TYPE)
        s.wait_stream(s)
        s.synchronize()

    def test_query_and_synchronize(self):
        s = tpevent.Stream(DEVICE_TYPE)
        self.assertIs(s.query(), True)
        gate = Gate(s)
        self.assertIs(s.query(), False)
        gate.open()
        self.assertIsNone(s.synchronize())
        self.assertIs(s.query(), True)
        gate.close()

    def test_destroy_with_work_pending_is_safe(self):
        s = tpevent.Stream(DEVICE_TYPE)
        gate = Gate(s)
        e = s.record_event()
        del s
        gc.collect()
        self.assertFalse(e.query())
        gate.open()
        e.synchronize()
        self.assertTrue(e.query())

    def test_equality_and_hash(self):
        s = tpevent.Stream(DEVICE_TYPE)
        t = tpevent.Stream(DEVICE_TYPE)
        self.assertEqual(s, s)
        self.assertNotEqual(s, t)
        self.assertFalse(s == t)
        self.assertTrue(s != t)
        self.assertNotEqual(s, "stream")
        self.assertEqual(tpevent.default_stream(DEVICE_TYPE), tpevent.default_stream(DEVICE_TYPE))
        self.assertEqual(hash(tpevent.default_stream(DEVICE_TYPE)), hash(tpevent.default_stream(DEVICE_TYPE)))
        self.assertEqual(len({s, t, tpevent.default_stream(DEVICE_TYPE), tpevent.default_stream(DEVICE_TYPE)}), 3)

    def test_default_streams_of_two_devices_differ(self):
        need_devices(self, 2)
        self.assertNotEqual(tpevent.default_stream(device(0)), tpevent.default_stream(device(1)))

    def test_from_native(self):
        s = tpevent.Stream(DEVICE_TYPE)
        try:
            wrapped = tpevent.Stream.from_native(s.device, s.native_handle)
        except tpevent.Error as error:
            if error.status == "TP_ERR_UNSUPPORTED":
                self.skipTest(str(error))
            raise
        self.assertEqual(wrapped, s)
        self.assertEqual(hash(wrapped), hash(s))
        with Gate(s):
            self.assertFalse(wrapped.query())
        del wrapped  # leaves the stream alone
        s.record_event().synchronize()

    def test_from_native_bad_cpu_handle_raises(self):
        # Issue 18, item 6: these killed the interpreter with SIGSEGV. The CPU backend
        # knows its live streams; CUDA and HIP handles cannot be checked.
        if DEVICE_TYPE != "cpu":
            self.skipTest("only CPU native handles can be checked")
        for handle in (12345, -1, 2**64 - 1, 1 << 40):
            with self.assertRaises(ValueError):
                tpevent.Stream.from_native("cpu", handle)
        s = tpevent.Stream("cpu")
        handle = s.native_handle
        del s
        gc.collect()
        with self.assertRaises(ValueError):
            tpevent.Stream.from_native("cpu", handle)

    def test_repr(self):
        r = repr(tpevent.Stream(DEVICE_TYPE))
        self.assertIn("tpevent.Stream", r)
        self.assertIn(f"device='{device(0)}'", r)

    def test_namespace_stream_defaults_to_its_type(self):
        namespace = getattr(tpevent, DEVICE_TYPE)
        s = namespace.Stream()
        self.assertIsInstance(s, tpevent.Stream)
        self.assertIsInstance(s, namespace.Stream)
        self.assertEqual(s.device, device(0))
        self.assertEqual(namespace.Stream(0, priority=0).device, device(0))

    def test_subclass(self):
        class Mine(tpevent.Stream):
            pass

        s = Mine(DEVICE_TYPE)
        self.assertEqual(s.device, device(0))
        with s:
            self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)


if __name__ == "__main__":
    run()
