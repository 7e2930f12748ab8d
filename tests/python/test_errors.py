"""Every error path: which exception, which status, the C library's message."""

import re
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, device, need_devices, run


# What a message from Python never shows: the C API's function and flag names, and
# the design's rule numbers (python/src/messages.c).
C_WORDS = re.compile(r"\btp_[a-z]|\bTP_EVENT_|\brule \d")


class PythonWordsTests(unittest.TestCase):
    def check_words(self, call, fragment):
        with self.assertRaises((tpevent.Error, ValueError)) as caught:
            call()
        message = str(caught.exception)
        self.assertIsNone(C_WORDS.search(message), message)
        self.assertIn(fragment, message)
        self.assertFalse(message.startswith(("tp_", ":", " ")), message)
        return message

    def test_capture_errors(self):
        s, other = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        outside = other.record_event()  # a plain event, recorded outside the capture
        ipc = tpevent.Event(DEVICE_TYPE, interprocess=True)
        g = tpevent.Graph()
        g.capture_begin(s)
        try:
            self.check_words(s.synchronize, "is capturing")
            self.check_words(s.query, "is capturing")
            self.check_words(lambda: s.wait_event(outside), "external=True")
            inside = s.record_event()
            self.check_words(inside.synchronize, "still open")
            self.check_words(lambda: ipc.record(s), "interprocess events cannot be captured")
        finally:
            g.capture_end()

    def test_state_errors(self):
        never = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        self.check_words(never.timestamp, "never recorded")
        self.check_words(lambda: tpevent.Event(DEVICE_TYPE).ipc_handle(), "interprocess=True")
        closed = tpevent.Event(DEVICE_TYPE)
        closed.close()
        self.assertEqual(self.check_words(closed.query, "closed"), "the event is closed")
        if DEVICE_TYPE == "cpu":
            self.check_words(lambda: tpevent.Event.from_native("cpu", 1234), "cuda and hip events")
            self.check_words(lambda: tpevent.Stream.from_native("cpu", 1234), "not a live cpu stream")

    def test_docstrings_speak_python(self):
        objects = [tpevent, tpevent.Event, tpevent.Stream, tpevent.Graph, tpevent.Error, tpevent.cuda,
                   tpevent.ClockInfo, tpevent.BackendInfo]
        for cls in (tpevent.Event, tpevent.Stream, tpevent.Graph):
            objects += [getattr(cls, n) for n in dir(cls) if not n.startswith("_")]
        objects += [getattr(tpevent, n) for n in tpevent.__all__ if n != "IPC_HANDLE_SIZE"]
        for obj in objects:
            with self.subTest(obj=obj):
                doc = obj.__doc__ or ""
                self.assertIsNone(re.search(r"\bseed\b|\brule \d", doc), doc)


class ErrorTypeTests(unittest.TestCase):
    def test_error_is_a_runtime_error_with_a_status(self):
        self.assertTrue(issubclass(tpevent.Error, RuntimeError))
        self.assertIsNone(tpevent.Error("x").status)
        self.assertIs(tpevent.cuda.Error, tpevent.Error)


class BadDeviceTests(unittest.TestCase):
    def check_invalid_device(self, call, *fragments):
        with self.assertRaises(ValueError) as caught:
            call()
        self.assertNotIsInstance(caught.exception, tpevent.Error)
        self.assertEqual(caught.exception.status, "TP_ERR_INVALID_DEVICE")
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_unknown_type(self):
        self.check_invalid_device(
            lambda: tpevent.Event(device="cdua:0"), "unknown device type 'cdua'", "(known: cpu, cuda, hip, opencl, vulkan)"
        )

    def test_malformed_strings(self):
        for text in ("", "cpu:", "cpu:-1", "cpu:+1", "cpu:01", "cpu:0x1", " cpu", "cpu:0 ", "CPU", "cpu:64"):
            with self.subTest(device=text):
                self.check_invalid_device(lambda: tpevent.Event(device=text))
                self.check_invalid_device(lambda: tpevent.Stream(device=text))

    def test_index_out_of_range(self):
        count = tpevent.device_count(DEVICE_TYPE)
        self.check_invalid_device(lambda: tpevent.Event(device(count)), "out of range")
        self.check_invalid_device(lambda: tpevent.Stream(device(count)), "out of range")
        self.check_invalid_device(lambda: tpevent.current_stream(device(count)))
        self.check_invalid_device(lambda: tpevent.default_stream(device(count)))
        self.check_invalid_device(lambda: tpevent.synchronize(device(count)))
        self.check_invalid_device(lambda: tpevent.set_device(device(count)))

    def test_module_functions_check_devices(self):
        self.check_invalid_device(lambda: tpevent.current_stream("gpu"))
        self.check_invalid_device(lambda: tpevent.default_stream("gpu"))
        self.check_invalid_device(lambda: tpevent.synchronize("gpu"))
        self.check_invalid_device(lambda: tpevent.set_device("gpu"))
        self.check_invalid_device(lambda: tpevent.device_count("gpu"))
        self.check_invalid_device(lambda: tpevent.is_available("gpu"))
        self.check_invalid_device(lambda: tpevent.device_count("cpu:0"), "wants a device type")

    def test_negative_int_device_is_the_current_device(self):
        # As torch's device index -1: the current device (of the namespace's type).
        self.assertEqual(tpevent.Event(-1).device, tpevent.current_device())
        ns = getattr(tpevent, DEVICE_TYPE)
        self.assertEqual(ns.Event(-1).device, ns.Event().device)
        self.assertEqual(ns.Stream(-5).device, ns.Stream().device)
        before = tpevent.current_device()
        tpevent.set_device(-1)  # torch's set_device(-1): nothing changes
        ns.set_device(-1)
        self.assertEqual(tpevent.current_device(), before)
        with self.assertRaisesRegex(ValueError, "out of range"):
            tpevent.Event(64)

    def test_null_character(self):
        with self.assertRaisesRegex(ValueError, "null character"):
            tpevent.Event("cpu\0:1")

    def test_null_character_in_a_device_object_or_type(self):
        # The C API reads a string up to its first NUL: 'cpu\x00junk' must not pass
        # for 'cpu', from any of the ways a device or a device type comes in.
        class FakeDevice:
            def __init__(self, type, index):
                self.type = type
                self.index = index

        for index in (None, 0):
            with self.subTest(index=index):
                with self.assertRaisesRegex(ValueError, "null character"):
                    tpevent.Event(FakeDevice("cpu\0junk", index))
                with self.assertRaisesRegex(ValueError, "null character"):
                    tpevent.Stream(FakeDevice("cpu\0junk", index))
                with self.assertRaisesRegex(ValueError, "null character"):
                    tpevent.set_device(FakeDevice("cpu\0junk", index))
        for call in (tpevent.device_count, tpevent.is_available):
            with self.subTest(call=call.__name__):
                with self.assertRaisesRegex(ValueError, "null character"):
                    call("cpu\0junk")
        # The same objects without the NUL are accepted.
        tpevent.Event(FakeDevice("cpu", 0))
        self.assertGreater(tpevent.device_count("cpu"), 0)

    def test_namespace_refuses_another_type(self):
        other = "cuda" if DEVICE_TYPE != "cuda" else "cpu"
        namespace = getattr(tpevent, DEVICE_TYPE)
        with self.assertRaisesRegex(ValueError, f"tpevent.{DEVICE_TYPE} expects a {DEVICE_TYPE} device"):
            namespace.Event(other)
        with self.assertRaisesRegex(ValueError, f"expects a {DEVICE_TYPE} device"):
            namespace.Stream(other)
        with self.assertRaisesRegex(ValueError, f"expects a {DEVICE_TYPE} device"):
            namespace.current_stream(other)

    def test_wrong_types(self):
        with self.assertRaisesRegex(TypeError, "device must be"):
            tpevent.Event(1.5)
        with self.assertRaisesRegex(TypeError, "device must be"):
            tpevent.Event(True)
        with self.assertRaises(TypeError):
            tpevent.Stream(DEVICE_TYPE, priority="high")
        with self.assertRaisesRegex(TypeError, "set_device"):
            tpevent.set_device(None)
        with self.assertRaises(TypeError):
            tpevent.device_count(0)

    def test_device_clock_bad_device(self):
        for text in ("cdua:0", f"{DEVICE_TYPE}:64", "cpu:x"):
            with self.subTest(device=text):
                self.check_invalid_device(lambda: tpevent.device_clock(text), text.partition(":")[0])
        with self.assertRaises(TypeError):
            tpevent.device_clock(1.5)


class UnavailableBackendTests(unittest.TestCase):
    def unavailable_type(self):
        for info in tpevent.backends():
            if not info.available:
                return info
        self.skipTest("every backend is available here")

    def test_event_and_stream_of_an_unavailable_backend(self):
        info = self.unavailable_type()
        for make in (tpevent.Event, tpevent.Stream, tpevent.default_stream, tpevent.current_stream):
            with self.subTest(make=make.__name__):
                with self.assertRaises(tpevent.Error) as caught:
                    make(info.name)
                self.assertEqual(caught.exception.status, "TP_ERR_BACKEND_UNAVAILABLE")
                self.assertIn(info.name, str(caught.exception))
        self.assertFalse(tpevent.is_available(info.name))
        self.assertEqual(tpevent.device_count(info.name), 0)


class StateErrorTests(unittest.TestCase):
    def check_error(self, call, status, fragment=None):
        with self.assertRaises(tpevent.Error) as caught:
            call()
        self.assertEqual(caught.exception.status, status)
        if fragment:
            self.assertIn(fragment, str(caught.exception))
        return caught.exception

    def test_elapsed_time_timing_disabled(self):
        s = tpevent.Stream(DEVICE_TYPE)
        plain = tpevent.Event(DEVICE_TYPE)
        timed = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        plain.record(s)
        timed.record(s)
        self.check_error(lambda: plain.elapsed_time(timed), "TP_ERR_TIMING_DISABLED", "start event")
        self.check_error(lambda: timed.elapsed_time(plain), "TP_ERR_TIMING_DISABLED", "end event")

    def test_timing_disabled_is_checked_before_not_recorded(self):
        self.check_error(
            lambda: tpevent.Event(DEVICE_TYPE).elapsed_time(tpevent.Event(DEVICE_TYPE)), "TP_ERR_TIMING_DISABLED"
        )

    def test_elapsed_time_not_recorded(self):
        s = tpevent.Stream(DEVICE_TYPE)
        recorded = s.record_event()
        never = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        self.check_error(lambda: recorded.elapsed_time(never), "TP_ERR_NOT_RECORDED")
        self.check_error(lambda: never.elapsed_time(recorded), "TP_ERR_NOT_RECORDED")
        # torch raises ValueError here, tpevent raised RuntimeError: both catch it.
        for base in (ValueError, RuntimeError, tpevent.Error, tpevent.NotRecordedError):
            with self.assertRaises(base) as caught:
                never.elapsed_time(recorded)
        self.assertNotIn("tp_event", str(caught.exception))  # Python's names, not C's

    def test_elapsed_time_of_two_devices_is_timed_on_the_host_clock(self):
        # Rule 7 revised: no TP_ERR_DEVICE_MISMATCH, but the difference of the two
        # timestamps (rule 13), negative the other way round.
        need_devices(self, 2)
        a = tpevent.Stream(device(0)).record_event()
        b = tpevent.Stream(device(1)).record_event()
        forward = a.elapsed_time(b)
        self.assertEqual(forward, -b.elapsed_time(a))
        self.assertAlmostEqual(forward, (b.timestamp() - a.timestamp()) / 1e6, delta=abs(forward) * 1e-6 + 1e-9)

    def test_timestamp_raises_what_elapsed_time_raises(self):
        s = tpevent.Stream(DEVICE_TYPE)
        plain = tpevent.Event(DEVICE_TYPE)
        self.check_error(plain.timestamp, "TP_ERR_TIMING_DISABLED")  # even never recorded
        plain.record(s)
        self.check_error(plain.timestamp, "TP_ERR_TIMING_DISABLED")
        never = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        self.check_error(never.timestamp, "TP_ERR_NOT_RECORDED", "never recorded")
        self.check_error(lambda: never.elapsed_time(never), "TP_ERR_NOT_RECORDED")


    def test_record_on_a_stream_of_another_device(self):
        need_devices(self, 2)
        e = tpevent.Event(device(0))
        s = tpevent.Stream(device(1))
        self.check_error(lambda: e.record(s), "TP_ERR_DEVICE_MISMATCH", "recorded on a stream of")
        self.check_error(lambda: s.record_event(e), "TP_ERR_DEVICE_MISMATCH")

    def test_a_stream_of_any_device_may_wait(self):
        need_devices(self, 2)
        e = tpevent.Stream(device(0)).record_event()
        s = tpevent.Stream(device(1))
        e.wait(s)
        s.wait_event(e)
        s.synchronize()

    def test_interprocess_with_timing(self):
        with self.assertRaises(ValueError) as caught:
            tpevent.Event(DEVICE_TYPE, enable_timing=True, interprocess=True)
        self.assertEqual(caught.exception.status, "TP_ERR_INVALID_ARGUMENT")
        self.assertEqual(str(caught.exception), "enable_timing and interprocess cannot both be True")

    def test_ipc_handle_of_a_plain_event(self):
        with self.assertRaises(ValueError) as caught:
            tpevent.Event(DEVICE_TYPE).ipc_handle()
        self.assertEqual(caught.exception.status, "TP_ERR_INVALID_ARGUMENT")

    def test_from_ipc_handle_bad_bytes(self):
        with self.assertRaisesRegex(ValueError, "IPC handle is 128 bytes"):
            tpevent.Event.from_ipc_handle(None, b"short")
        with self.assertRaises(ValueError) as caught:
            tpevent.Event.from_ipc_handle(None, bytes(tpevent.IPC_HANDLE_SIZE))
        self.assertEqual(caught.exception.status, "TP_ERR_INVALID_ARGUMENT")
        with self.assertRaises(TypeError):
            tpevent.Event.from_ipc_handle(None, "not bytes")

    def test_wrong_argument_types(self):
        e = tpevent.Event(DEVICE_TYPE)
        s = tpevent.Stream(DEVICE_TYPE)
        cases = [
            (lambda: e.record(e), "record() expects a tpevent.Stream or None"),
            (lambda: e.record(stream=1), "record() expects a tpevent.Stream"),
            (lambda: e.record(s, s), "at most 1 argument"),
            (lambda: e.record(s, stream=s), "multiple values"),
            (lambda: e.record(strm=s), "unexpected keyword argument 'strm'"),
            (lambda: e.wait(e), "wait() expects a tpevent.Stream"),
            (lambda: e.elapsed_time(s), "elapsed_time() expects a tpevent.Event"),
            (lambda: e.elapsed_time(None), "elapsed_time() expects a tpevent.Event"),
            (lambda: s.record_event(s), "record_event() expects a tpevent.Event"),
            (lambda: s.record(1), "record() expects a tpevent.Event"),
            (lambda: s.wait_event(None), "wait_event() expects a tpevent.Event"),
            (lambda: s.wait_stream(None), "wait_stream() expects a tpevent.Stream, not NoneType"),
            (lambda: tpevent.set_stream(e), "set_stream() expects a tpevent.Stream"),
            (lambda: tpevent.stream(e), "stream() expects a tpevent.Stream or None"),
            (lambda: e.query(1), "takes no arguments"),
        ]
        for call, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(TypeError) as caught:
                    call()
                self.assertIn(message, str(caught.exception))

    def test_no_pickling(self):
        import copy
        import pickle

        for obj in (tpevent.Event(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)):
            with self.subTest(obj=obj):
                with self.assertRaisesRegex(TypeError, "cannot pickle"):
                    pickle.dumps(obj)
                with self.assertRaisesRegex(TypeError, "cannot pickle"):
                    copy.copy(obj)

    def test_exit_without_enter(self):
        with self.assertRaisesRegex(RuntimeError, "without a matching __enter__"):
            tpevent.Stream(DEVICE_TYPE).__exit__(None, None, None)


if __name__ == "__main__":
    run()
