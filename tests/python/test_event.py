"""tpevent.Event: creation, each method and attribute, on the device type under test."""

import inspect
import os
import signal
import tempfile
import threading
import time
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, need_devices, run


class CreationTests(unittest.TestCase):
    def test_defaults(self):
        e = tpevent.Event(device=DEVICE_TYPE)
        self.assertIsInstance(e, tpevent.Event)
        self.assertFalse(e.enable_timing)
        self.assertFalse(e.blocking)
        self.assertFalse(e.interprocess)

    def test_flags_are_kept(self):
        e = tpevent.Event(DEVICE_TYPE, enable_timing=True, blocking=True)
        self.assertTrue(e.enable_timing)
        self.assertTrue(e.blocking)
        self.assertFalse(e.interprocess)
        e = tpevent.Event(DEVICE_TYPE, interprocess=True)
        self.assertTrue(e.interprocess)
        self.assertFalse(e.enable_timing)

    def test_flags_take_any_truth_value(self):
        self.assertTrue(tpevent.Event(DEVICE_TYPE, enable_timing=1).enable_timing)
        self.assertFalse(tpevent.Event(DEVICE_TYPE, enable_timing=[]).enable_timing)

    def test_device_attribute_has_an_index(self):
        self.assertEqual(tpevent.Event(device=device(0)).device, device(0))
        self.assertEqual(tpevent.Event(device=DEVICE_TYPE).device, device(0))

    def test_no_device_means_current_device(self):
        self.assertEqual(tpevent.Event().device, tpevent.current_device())

    def test_int_device_is_an_index_of_the_current_type(self):
        tpevent.set_device(device(0))
        self.assertEqual(tpevent.Event(0).device, device(0))

    def test_second_device(self):
        need_devices(self, 2)
        self.assertEqual(tpevent.Event(device=device(1)).device, device(1))

    def test_device_like_object(self):
        class FakeTorchDevice:
            type = DEVICE_TYPE
            index = 0

        self.assertEqual(tpevent.Event(FakeTorchDevice()).device, device(0))
        FakeTorchDevice.index = None
        self.assertEqual(tpevent.Event(FakeTorchDevice()).device, device(0))

    def test_keyword_only_flags(self):
        with self.assertRaises(TypeError):
            tpevent.Event(DEVICE_TYPE, True)

    def test_unknown_keyword(self):
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'enable_timings'"):
            tpevent.Event(DEVICE_TYPE, enable_timings=True)

    def test_device_twice(self):
        with self.assertRaisesRegex(TypeError, "multiple values"):
            tpevent.Event(DEVICE_TYPE, device=DEVICE_TYPE)

    def test_signature(self):
        self.assertEqual(
            str(inspect.signature(tpevent.Event)),
            "(device=None, *, enable_timing=False, blocking=False, interprocess=False, external=False)",
        )

    def test_subclass(self):
        class Mine(tpevent.Event):
            def __init__(self, device=None, **kwargs):
                self.extra = "kept"

        e = Mine(DEVICE_TYPE, enable_timing=True)
        self.assertEqual(e.extra, "kept")
        self.assertTrue(e.enable_timing)
        e.record()
        e.synchronize()

    def test_repr(self):
        r = repr(tpevent.Event(DEVICE_TYPE, enable_timing=True))
        self.assertIn("tpevent.Event", r)
        self.assertIn(f"device='{device(0)}'", r)
        self.assertIn("enable_timing=True", r)

    def test_many_events_come_and_go(self):
        for _ in range(10000):
            tpevent.Event(DEVICE_TYPE).record()


class MethodTests(unittest.TestCase):
    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def tearDown(self):
        self.stream.synchronize()

    def test_query_never_recorded_is_true(self):
        self.assertIs(tpevent.Event(DEVICE_TYPE).query(), True)

    def test_synchronize_never_recorded_returns(self):
        self.assertIsNone(tpevent.Event(DEVICE_TYPE).synchronize())

    def test_record_on_current_stream(self):
        e = tpevent.Event(DEVICE_TYPE)
        self.assertIsNone(e.record())
        e.synchronize()
        self.assertTrue(e.query())

    def test_record_on_given_stream_positional_and_keyword(self):
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(self.stream) as gate:
            e.record(self.stream)
            self.assertFalse(e.query())
            gate.open()
            e.synchronize()
            self.assertTrue(e.query())
        with Gate(self.stream):
            e.record(stream=self.stream)
            self.assertFalse(e.query())
        e.record(stream=None)

    def test_record_replaces_the_previous_record(self):
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(self.stream):
            e.record(self.stream)
            self.assertFalse(e.query())
            e.record(tpevent.Stream(DEVICE_TYPE))  # an idle stream
            e.synchronize()
            self.assertTrue(e.query())

    def test_query_does_not_block(self):
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(self.stream):
            e.record(self.stream)
            start = time.monotonic()
            for _ in range(1000):
                self.assertFalse(e.query())
            self.assertLess(time.monotonic() - start, 5.0)

    def test_synchronize_waits_and_releases_the_gil(self):
        e = tpevent.Event(DEVICE_TYPE)
        gate = Gate(self.stream)
        e.record(self.stream)
        # Opened by another Python thread: it can only run while synchronize() has
        # released the GIL. The clock starts before the timer does, so the gate opens
        # 0.2 s after it at the earliest however late this thread gets the CPU back
        # (read after opener.start(), a thread descheduled there for 50 ms saw the
        # wait as shorter than 0.15 s).
        opener = threading.Timer(0.2, gate.open)
        start = time.monotonic()
        opener.start()
        e.synchronize()
        self.assertGreaterEqual(time.monotonic() - start, 0.15)
        self.assertTrue(e.query())
        opener.join()
        gate.close()

    def test_blocking_event_synchronize(self):
        e = tpevent.Event(DEVICE_TYPE, blocking=True)
        gate = Gate(self.stream)
        e.record(self.stream)
        opener = threading.Timer(0.1, gate.open)
        opener.start()
        e.synchronize()
        self.assertTrue(e.query())
        opener.join()
        gate.close()

    def test_wait_orders_another_stream(self):
        other = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(self.stream) as gate:
            e.record(self.stream)
            self.assertIsNone(e.wait(other))
            after = other.record_event()
            self.assertFalse(after.query())
            gate.open()
            after.synchronize()
            self.assertTrue(e.query())

    def test_wait_keyword_and_current_stream(self):
        other = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(self.stream):
            e.record(self.stream)
            e.wait(stream=other)
            self.assertFalse(other.query())
            with other:
                e.wait()  # the current stream is `other` here
        other.synchronize()

    def test_wait_uses_the_record_at_the_time_of_the_call(self):
        other = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE)
        e.record(tpevent.Stream(DEVICE_TYPE))
        e.synchronize()
        e.wait(other)  # waits for a record already reached
        with Gate(self.stream):
            e.record(self.stream)  # a later record does not change that wait
            after = other.record_event()
            after.synchronize()
            self.assertTrue(after.query())

    def test_wait_never_recorded_does_nothing(self):
        other = tpevent.Stream(DEVICE_TYPE)
        tpevent.Event(DEVICE_TYPE).wait(other)
        other.synchronize()
        self.assertTrue(other.query())

    def test_elapsed_time(self):
        start = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        end = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        start.record(self.stream)
        time.sleep(0.02)
        end.record(self.stream)
        ms = start.elapsed_time(end)
        self.assertIsInstance(ms, float)
        self.assertGreaterEqual(ms, 0.0)
        self.assertLessEqual(end.elapsed_time(start), 0.0)

    def test_elapsed_time_measures_stream_work(self):
        start = self.stream.record_event()
        gate = Gate(self.stream)
        end = self.stream.record_event()
        time.sleep(0.05)
        gate.open()
        ms = start.elapsed_time(end)
        self.assertGreaterEqual(ms, 40.0)
        gate.close()

    def test_elapsed_time_waits_for_records_not_reached(self):
        start = self.stream.record_event()
        gate = Gate(self.stream)
        end = self.stream.record_event()
        self.assertFalse(end.query())
        opener = threading.Timer(0.1, gate.open)
        opener.start()
        ms = start.elapsed_time(end)  # waits with the GIL released
        self.assertTrue(end.query())
        self.assertGreaterEqual(ms, 50.0)
        opener.join()
        gate.close()

    def test_elapsed_time_of_the_same_event_is_zero(self):
        e = self.stream.record_event()
        self.assertEqual(e.elapsed_time(e), 0.0)

    def test_ipc_handle_round_trip(self):
        e = tpevent.Event(DEVICE_TYPE, interprocess=True)
        try:
            handle = e.ipc_handle()
        except tpevent.Error as error:
            if error.status == "TP_ERR_UNSUPPORTED":
                self.skipTest(f"the {DEVICE_TYPE} backend has no IPC: {error}")
            raise
        self.assertIsInstance(handle, bytes)
        self.assertEqual(len(handle), tpevent.IPC_HANDLE_SIZE)
        if DEVICE_TYPE in ("cuda", "hip"):
            # The runtime cannot open a handle in the process that exported it; the
            # library says so instead of failing in the runtime (the two-process
            # round trip is tests/ipc's).
            with self.assertRaisesRegex(ValueError, "exported by this process"):
                tpevent.Event.from_ipc_handle(None, handle)
            return
        opened = tpevent.Event.from_ipc_handle(None, handle)
        self.assertEqual(opened.device, e.device)
        opened_too = tpevent.Event.from_ipc_handle(DEVICE_TYPE, bytearray(handle))
        self.assertIsInstance(opened_too, tpevent.Event)
        with Gate(self.stream) as gate:
            e.record(self.stream)
            gate.open()
            opened.synchronize()
            self.assertTrue(opened.query())

    def test_methods_are_fast_call(self):
        # The per-call paths take no tuple or dict of arguments.
        for name in ("record", "wait"):
            self.assertEqual(str(inspect.signature(getattr(tpevent.Event, name))), "(self, /, stream=None)")
        for name in ("query", "ipc_handle"):
            self.assertEqual(str(inspect.signature(getattr(tpevent.Event, name))), "(self, /)")
        self.assertEqual(str(inspect.signature(tpevent.Event.synchronize)), "(self, /, timeout=None)")


class TimedSynchronizeTests(unittest.TestCase):
    """Issue 18, item 8: synchronize(timeout=...) and Ctrl-C during a long wait."""

    def test_timeout_raises_and_event_completes_later(self):
        s = tpevent.Stream(DEVICE_TYPE)
        for blocking in (False, True):
            e = tpevent.Event(DEVICE_TYPE, blocking=blocking)
            with Gate(s) as gate:
                e.record(s)
                start = time.monotonic()
                with self.assertRaises(TimeoutError) as caught:
                    e.synchronize(timeout=0.2)
                self.assertGreaterEqual(time.monotonic() - start, 0.19)
                self.assertIn("ran out", str(caught.exception))
                with self.assertRaises(TimeoutError):
                    e.synchronize(0)
                with self.assertRaises(TimeoutError):
                    s.synchronize(timeout=0.05)
                self.assertFalse(e.query())
                gate.open()
                e.synchronize(timeout=10.0)
                self.assertTrue(e.query())
            s.synchronize(timeout=10)

    def test_timeout_on_done_or_unrecorded_returns(self):
        e = tpevent.Event(DEVICE_TYPE)
        self.assertIsNone(e.synchronize(timeout=0))
        self.assertIsNone(e.synchronize(timeout=None))
        s = tpevent.Stream(DEVICE_TYPE)
        e.record(s)
        e.synchronize()
        self.assertIsNone(e.synchronize(timeout=0))
        self.assertIsNone(s.synchronize(timeout=0.0))
        self.assertIsNone(s.synchronize())

    def test_bad_timeouts(self):
        e = tpevent.Event(DEVICE_TYPE)
        s = tpevent.Stream(DEVICE_TYPE)
        for obj in (e, s):
            with self.assertRaises(ValueError):
                obj.synchronize(timeout=-1)
            with self.assertRaises(ValueError):
                obj.synchronize(float("nan"))
            with self.assertRaises(TypeError):
                obj.synchronize(timeout="1")
            with self.assertRaises(TypeError):
                obj.synchronize(timeout=True)
            with self.assertRaises(TypeError):
                obj.synchronize(1, 2)
            with self.assertRaises(TypeError):
                obj.synchronize(time=1)
            obj.synchronize(timeout=1e300)  # as good as forever

    @unittest.skipUnless(hasattr(signal, "setitimer"), "needs signal.setitimer")
    def test_sigint_interrupts_a_long_synchronize(self):
        s = tpevent.Stream(DEVICE_TYPE)
        for blocking in (False, True):
            e = tpevent.Event(DEVICE_TYPE, blocking=blocking)
            with Gate(s):
                e.record(s)
                for wait in (e.synchronize, s.synchronize):
                    killer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
                    start = time.monotonic()
                    killer.start()
                    try:
                        with self.assertRaises(KeyboardInterrupt):
                            wait()
                    finally:
                        killer.join()
                    self.assertLess(time.monotonic() - start, 1.2)
                    self.assertFalse(e.query())  # still pending, still usable
            self.assertTrue(e.query())
            e.synchronize(timeout=10)

    def interrupted_within_a_second(self, wait):
        killer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
        start = time.monotonic()
        killer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                wait()
        finally:
            killer.join()
        self.assertLess(time.monotonic() - start, 1.1)

    def test_sigint_interrupts_every_wait_for_a_record(self):
        # Issue 31 item 4: elapsed_time, timestamp, tpevent.synchronize(device) and
        # the exit of tpevent.trace() wait for records that a gate holds back.
        s = tpevent.Stream(DEVICE_TYPE)
        start, end = tpevent.Event(DEVICE_TYPE, enable_timing=True), tpevent.Event(DEVICE_TYPE, enable_timing=True)
        start.record(s)
        path = os.path.join(tempfile.mkdtemp(), "interrupted.json")
        with Gate(s):
            end.record(s)
            self.interrupted_within_a_second(lambda: start.elapsed_time(end))
            self.interrupted_within_a_second(end.timestamp)
            self.interrupted_within_a_second(lambda: tpevent.synchronize(s.device))

            def traced():
                with tpevent.trace(path):
                    with tpevent.range("held", stream=s):
                        pass

            self.interrupted_within_a_second(traced)
            self.assertFalse(end.query())
        self.assertGreaterEqual(start.elapsed_time(end), 0.0)
        # The interrupted stop ends in the background once the gate is open; then
        # the next trace starts.
        deadline = time.monotonic() + 10
        while True:
            try:
                tpevent.trace_start()
                break
            except ValueError:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
        tpevent.trace_stop(path)
        self.assertTrue(os.path.exists(path))


class NamespaceEventTests(unittest.TestCase):
    def test_namespace_event_defaults_to_its_type(self):
        namespace = getattr(tpevent, DEVICE_TYPE)
        e = namespace.Event(enable_timing=True)
        self.assertIsInstance(e, tpevent.Event)
        self.assertIsInstance(e, namespace.Event)
        self.assertEqual(e.device, device(0))
        self.assertTrue(e.enable_timing)
        self.assertEqual(namespace.Event(0).device, device(0))
        self.assertEqual(namespace.Event(device(0)).device, device(0))

    def test_namespace_event_second_device(self):
        need_devices(self, 2)
        namespace = getattr(tpevent, DEVICE_TYPE)
        self.assertEqual(namespace.Event(1).device, device(1))
        namespace.set_device(1)
        try:
            self.assertEqual(namespace.Event().device, device(1))
        finally:
            namespace.set_device(0)


if __name__ == "__main__":
    run()
