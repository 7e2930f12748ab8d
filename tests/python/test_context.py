"""Current streams: `with stream:`, tpevent.stream(), set_stream(), current_stream()
and default_stream(), and the lifetime of a stream while it is current."""

import gc
import unittest
import weakref

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, need_devices, run


class ContextTests(unittest.TestCase):
    def setUp(self):
        self.default = tpevent.default_stream(DEVICE_TYPE)
        tpevent.set_stream(self.default)

    def tearDown(self):
        tpevent.set_stream(self.default)

    def test_current_starts_as_default(self):
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    def test_with_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with s as entered:
            self.assertIs(entered, s)
            self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
            if tpevent.current_device() == s.device:
                self.assertIs(tpevent.current_stream(), s)
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    def test_record_inside_with_uses_the_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE)
        with Gate(s):
            with s:
                e.record()  # the current stream: s, which is held by the gate
            self.assertFalse(e.query())
        e.synchronize()
        self.assertTrue(e.query())

    def test_tpevent_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with tpevent.stream(s) as entered:
            self.assertIs(entered, s)
            self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    def test_tpevent_stream_none_does_nothing(self):
        with tpevent.stream(None):
            self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)
        namespace = getattr(tpevent, DEVICE_TYPE)
        with namespace.stream(None):
            pass

    def test_nested_and_restored_in_order(self):
        a, b = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        with a:
            with b:
                self.assertIs(tpevent.current_stream(DEVICE_TYPE), b)
                with a:
                    self.assertIs(tpevent.current_stream(DEVICE_TYPE), a)
                self.assertIs(tpevent.current_stream(DEVICE_TYPE), b)
            self.assertIs(tpevent.current_stream(DEVICE_TYPE), a)
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    def test_restored_when_the_block_raises(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with self.assertRaises(KeyError):
            with s:
                raise KeyError("inside")
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    def test_restores_a_stream_set_before(self):
        before, inner = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        tpevent.set_stream(before)
        with inner:
            self.assertIs(tpevent.current_stream(DEVICE_TYPE), inner)
        self.assertIs(tpevent.current_stream(DEVICE_TYPE), before)

    def test_other_device_is_untouched(self):
        need_devices(self, 2)
        other_default = tpevent.default_stream(device(1))
        s = tpevent.Stream(device(0))
        with s:
            self.assertIs(tpevent.current_stream(device(0)), s)
            self.assertEqual(tpevent.current_stream(device(1)), other_default)
            t = tpevent.Stream(device(1))
            with t:
                self.assertIs(tpevent.current_stream(device(0)), s)
                self.assertIs(tpevent.current_stream(device(1)), t)
            self.assertEqual(tpevent.current_stream(device(1)), other_default)

    def test_set_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)
        self.assertIsNone(tpevent.set_stream(s))
        self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
        self.assertIsNone(tpevent.set_stream(None))  # nothing, as in torch
        self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
        tpevent.set_stream(self.default)
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), self.default)

    # Settled with torch's behaviour (issue 19): torch.cuda.set_stream makes the
    # stream's device current, and torch.cuda.StreamContext (`with stream:`) does
    # too inside the block, restoring the device it found on exit.
    def test_set_stream_makes_its_device_current(self):
        need_devices(self, 2)
        tpevent.set_device(device(0))
        tpevent.set_stream(tpevent.Stream(device(1)))
        self.assertEqual(tpevent.current_device(), device(1))
        tpevent.set_stream(tpevent.default_stream(device(1)))
        tpevent.set_device(device(0))

    def test_with_stream_makes_its_device_current_and_restores_it(self):
        need_devices(self, 2)
        tpevent.set_device(device(0))
        s = tpevent.Stream(device(1))
        with s:
            self.assertEqual(tpevent.current_device(), device(1))
            self.assertEqual(tpevent.Event().device, device(1))
            self.assertIs(tpevent.current_stream(), s)
            with tpevent.Stream(device(0)):
                self.assertEqual(tpevent.current_device(), device(0))
            self.assertEqual(tpevent.current_device(), device(1))
        self.assertEqual(tpevent.current_device(), device(0))

    def test_with_stream_of_another_type_restores_both_devices(self):
        other = "cuda" if DEVICE_TYPE == "cpu" else "cpu"
        if not tpevent.is_available(other):
            self.skipTest(f"needs the {other} backend too")
        tpevent.set_device(f"{other}:0")
        before = tpevent.Event(DEVICE_TYPE).device
        with tpevent.Stream(device(tpevent.device_count(DEVICE_TYPE) - 1)) as s:
            self.assertEqual(tpevent.current_device(), s.device)
        self.assertEqual(tpevent.current_device(), f"{other}:0")
        self.assertEqual(tpevent.Event(DEVICE_TYPE).device, before)
        tpevent.set_device(device(0))

    def test_a_current_stream_outlives_its_last_reference(self):
        s = tpevent.Stream(DEVICE_TYPE)
        watch = weakref.ref(s)
        native = s.native_handle
        tpevent.set_stream(s)
        del s
        gc.collect()
        self.assertIsNotNone(watch())
        current = tpevent.current_stream(DEVICE_TYPE)
        self.assertIs(current, watch())
        self.assertEqual(current.native_handle, native)
        current.record_event().synchronize()  # usable: not destroyed
        del current
        tpevent.set_stream(self.default)  # no longer current: now it goes
        gc.collect()
        self.assertIsNone(watch())

    def test_a_temporary_stream_in_with(self):
        with tpevent.Stream(DEVICE_TYPE):
            e = tpevent.current_stream(DEVICE_TYPE).record_event()
            gc.collect()
            tpevent.Event(DEVICE_TYPE).record()
        e.synchronize()

    def test_default_stream(self):
        d = tpevent.default_stream(DEVICE_TYPE)
        self.assertEqual(d.device, device(0))
        self.assertEqual(d, tpevent.default_stream(device=device(0)))
        d.record_event().synchronize()
        del d
        gc.collect()
        # Wrappers of the default stream never destroy it.
        tpevent.default_stream(DEVICE_TYPE).record_event().synchronize()

    def test_namespace_functions(self):
        namespace = getattr(tpevent, DEVICE_TYPE)
        self.assertEqual(namespace.current_stream(), self.default)
        self.assertIsInstance(namespace.default_stream(), namespace.Stream)
        self.assertEqual(namespace.default_stream(), self.default)
        self.assertEqual(namespace.default_stream(0), self.default)
        s = namespace.Stream()
        with namespace.stream(s):
            self.assertIs(namespace.current_stream(), s)
        namespace.set_stream(s)
        self.assertIs(namespace.current_stream(), s)


if __name__ == "__main__":
    run()
