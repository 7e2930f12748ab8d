"""Interop without torch or CuPy (issue 19): duck-typed stand-ins for their streams and
events, the CUDA stream protocol, native handles, priority ranges and host functions
from Python. Runs on the CPU and, in CI, on the fake GPU as device type "cuda"
(tests/gpu_fake); test_interop.py runs the same against the real libraries."""

import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import types
import unittest
import weakref

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, run

IS_CPU = DEVICE_TYPE == "cpu"


def torch_device(name):
    kind, _, index = name.partition(":")
    return types.SimpleNamespace(type=kind, index=int(index) if index else None)


class ProtocolStream:
    """cuda.core / numba style: a __cuda_stream__ method returning (version, handle)."""

    def __init__(self, stream):
        self._handle = stream.native_handle
        self.device = torch_device(stream.device)

    def __cuda_stream__(self):
        return (0, self._handle)


class PropertyProtocolStream(ProtocolStream):
    """Early cuda.core: __cuda_stream__ as a property."""

    @property
    def __cuda_stream__(self):
        return (0, self._handle)


class TorchLikeStream:
    def __init__(self, stream):
        self.cuda_stream = stream.native_handle
        self.device = torch_device(stream.device)


class CupyLikeStream:
    def __init__(self, stream):
        self.ptr = stream.native_handle
        self.device_id = int(stream.device.partition(":")[2])


class CupyLikeEvent:
    def __init__(self, handle):
        self.ptr = handle


class TorchLikeEvent:
    def __init__(self, handle):
        self.cuda_event = handle


class StreamsTakenIn(unittest.TestCase):
    def kinds(self, stream):
        return [ProtocolStream(stream), PropertyProtocolStream(stream), TorchLikeStream(stream)] + (
            [] if IS_CPU else [CupyLikeStream(stream)]
        )

    def test_every_kind_is_a_stream_argument(self):
        s = tpevent.Stream(DEVICE_TYPE)
        for foreign in self.kinds(s):
            with self.subTest(kind=type(foreign).__name__):
                wrapped = tpevent.Stream.from_external(foreign)
                self.assertEqual(wrapped, s)
                self.assertEqual(wrapped.device, s.device)
                e = tpevent.Event(s.device)
                with Gate(s):
                    e.record(foreign)  # goes on s
                    self.assertFalse(e.query())
                e.synchronize()
                other = tpevent.Stream(s.device)
                other.wait_stream(foreign)
                e.wait(foreign)
                tpevent.Event(s.device).record(stream=foreign)
                with tpevent.stream(foreign):
                    self.assertEqual(tpevent.current_stream(s.device), s)
                tpevent.set_stream(foreign)
                self.assertEqual(tpevent.current_stream(s.device), s)
                tpevent.set_stream(tpevent.default_stream(s.device))

    def test_the_foreign_object_is_kept_alive_by_its_wrapper(self):
        s = tpevent.Stream(DEVICE_TYPE)
        foreign = ProtocolStream(s)
        watch = weakref.ref(foreign)
        wrapped = tpevent.Stream.from_external(foreign)
        del foreign
        gc.collect()
        self.assertIsNotNone(watch())
        del wrapped
        gc.collect()
        self.assertIsNone(watch())

    def test_not_a_stream(self):
        e = tpevent.Event(DEVICE_TYPE)
        with self.assertRaisesRegex(TypeError, "record\\(\\) expects a tpevent.Stream or None.*__cuda_stream__"):
            e.record(object())
        with self.assertRaises(TypeError):
            tpevent.Stream.from_external(3)
        with self.assertRaises(TypeError):
            tpevent.stream(object())

        class BadProtocol:
            def __cuda_stream__(self):
                return 7

        with self.assertRaisesRegex(TypeError, "version, handle"):
            e.record(BadProtocol())

    def test_a_tpevent_stream_is_itself(self):
        s = tpevent.Stream(DEVICE_TYPE)
        self.assertIs(tpevent.Stream.from_external(s), s)


class StreamsGivenOut(unittest.TestCase):
    def test_cuda_stream_protocol(self):
        s = tpevent.Stream(DEVICE_TYPE)
        self.assertEqual(s.cuda_stream, s.native_handle)
        if DEVICE_TYPE != "cuda":
            self.assertFalse(hasattr(s, "__cuda_stream__"))
            return
        self.assertEqual(s.__cuda_stream__(), (0, s.native_handle))
        # A consumer of the protocol takes it back: tpevent itself is one.
        self.assertEqual(tpevent.Stream.from_external(s.__cuda_stream__.__self__), s)

    @unittest.skipIf(IS_CPU, "the CPU's default stream is a CPU stream, not 0")
    def test_default_stream_handle_is_zero(self):
        d = tpevent.default_stream(DEVICE_TYPE)
        self.assertEqual(d.native_handle, 0)  # as torch's and CuPy's default streams
        self.assertEqual(tpevent.Stream.from_native(DEVICE_TYPE, 0), d)
        if DEVICE_TYPE == "cuda":
            self.assertEqual(d.__cuda_stream__(), (0, 0))
        self.assertEqual(tpevent.Stream.from_external(TorchLikeStream(d)), d)
        e = tpevent.Event(DEVICE_TYPE)
        e.record(TorchLikeStream(d))
        e.synchronize()

    def test_priority_range(self):
        least, greatest = tpevent.Stream.priority_range(DEVICE_TYPE)
        self.assertLessEqual(greatest, least)
        self.assertEqual(getattr(tpevent, DEVICE_TYPE).Stream.priority_range(), (least, greatest))
        self.assertEqual(tpevent.Stream.priority_range(device=device(0)), (least, greatest))
        self.assertEqual(tpevent.Stream(DEVICE_TYPE, priority=greatest - 100).priority, greatest)
        self.assertEqual(tpevent.Stream(DEVICE_TYPE, priority=least + 100).priority, least)
        if IS_CPU:
            self.assertEqual((least, greatest), (0, -2))


class NativeEvents(unittest.TestCase):
    def test_native_handle_and_aliases(self):
        e = tpevent.Event(DEVICE_TYPE)
        self.assertEqual(e.native_handle, 0)  # no native event before the first record
        e.record()
        e.synchronize()
        self.assertEqual(e.native_handle, e.cuda_event)
        self.assertEqual(e.native_handle, e.event_id)
        if IS_CPU:
            self.assertEqual(e.native_handle, 0)
        else:
            self.assertNotEqual(e.native_handle, 0)

    @unittest.skipUnless(IS_CPU, "the CPU has no native events")
    def test_from_native_on_the_cpu_is_unsupported(self):
        with self.assertRaises(tpevent.Error) as caught:
            tpevent.Event.from_native(DEVICE_TYPE, 1234)
        self.assertEqual(caught.exception.status, "TP_ERR_UNSUPPORTED")
        self.assertIn("only cuda and hip events can be wrapped", str(caught.exception))
        self.assertNotIn("tp_event", str(caught.exception))  # the traceback names the method

    @unittest.skipIf(IS_CPU, "the CPU has no native events")
    def test_from_native_takes_ints_and_events_of_other_libraries(self):
        s = tpevent.Stream(DEVICE_TYPE)
        owner = s.record_event()
        owner.synchronize()
        handle = owner.native_handle
        for given in (handle, TorchLikeEvent(handle), CupyLikeEvent(handle)):
            with self.subTest(given=type(given).__name__):
                wrapper = tpevent.Event.from_native(device=DEVICE_TYPE, handle=given)
                self.assertEqual(wrapper.native_handle, handle)
                self.assertTrue(wrapper.enable_timing)
                with Gate(s):
                    wrapper.record(s)  # on the owner's native event: the owner sees it
                    self.assertFalse(owner.query())
                wrapper.synchronize()
                self.assertTrue(owner.query())
                end = s.record_event()
                self.assertGreaterEqual(wrapper.elapsed_time(end), 0.0)
        with self.assertRaisesRegex(ValueError, "record it first"):
            tpevent.Event.from_native(DEVICE_TYPE, TorchLikeEvent(0))
        with self.assertRaises(TypeError):
            tpevent.Event.from_native(DEVICE_TYPE, "handle")
        torch_event = TorchLikeEvent(handle)
        watch = weakref.ref(torch_event)
        wrapper = tpevent.Event.from_native(DEVICE_TYPE, torch_event)
        del torch_event
        gc.collect()
        self.assertIsNotNone(watch())  # kept while its native event is in use
        del wrapper
        gc.collect()
        self.assertIsNone(watch())

    def test_events_are_weak_referenceable(self):
        e = tpevent.Event(DEVICE_TYPE)
        watch = weakref.ref(e)
        self.assertIs(watch(), e)
        del e
        gc.collect()
        self.assertIsNone(watch())
        namespaced = getattr(tpevent, DEVICE_TYPE).Event()
        self.assertIs(weakref.ref(namespaced)(), namespaced)

    def test_from_ipc_handle_takes_keywords(self):
        e = tpevent.Event(DEVICE_TYPE, interprocess=True)
        try:
            imported = tpevent.Event.from_ipc_handle(device=None, handle=e.ipc_handle())
        except ValueError as refused:  # CUDA refuses a handle exported by this very process
            self.assertEqual(refused.status, "TP_ERR_INVALID_ARGUMENT")
        else:
            self.assertEqual(imported.device, e.device)
        with self.assertRaises(TypeError):
            tpevent.Event.from_ipc_handle(device=None, handle=e.ipc_handle(), extra=1)


class HostFunctions(unittest.TestCase):
    def test_launch_host_func_and_add_callback(self):
        s = tpevent.Stream(DEVICE_TYPE)
        calls = []
        with Gate(s):
            s.launch_host_func(lambda: calls.append(("plain", threading.get_ident())))
            s.launch_host_func(calls.append, "cupy-style arg")
            s.add_callback(lambda stream, status, arg: calls.append((stream, status, arg)), 42)
            e = s.record_event()
            self.assertEqual(calls, [])  # held behind the gate, in order
        e.synchronize()
        self.assertEqual(len(calls), 3)
        self.assertEqual(calls[0][0], "plain")
        self.assertNotEqual(calls[0][1], threading.get_ident())  # on the stream's host thread
        self.assertEqual(calls[1], "cupy-style arg")
        self.assertEqual(calls[2], (s, 0, 42))
        self.assertIs(calls[2][0], s)

    def test_an_exception_is_reported_and_the_stream_runs_on(self):
        s = tpevent.Stream(DEVICE_TYPE)
        reported = []
        old_hook = sys.unraisablehook
        sys.unraisablehook = reported.append
        try:

            def fails():
                raise KeyError("from a host function")

            s.launch_host_func(fails)
            after = []
            s.launch_host_func(after.append, 1)
            s.synchronize()
        finally:
            sys.unraisablehook = old_hook
        self.assertEqual(after, [1])
        self.assertEqual(len(reported), 1)
        self.assertIsInstance(reported[0].exc_value, KeyError)
        self.assertIs(reported[0].object, fails)

    def test_bad_arguments(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with self.assertRaisesRegex(TypeError, "callable"):
            s.launch_host_func(3)
        with self.assertRaises(TypeError):
            s.add_callback(print)  # CuPy's signature: callback and arg

    def run_program(self, body):
        program = textwrap.dedent(
            f"""
            import sys, tpevent
            from tpevent_testing import Gate
            DEVICE = {DEVICE_TYPE!r}
            """
        ) + textwrap.dedent(body)
        # The program exits with streams (and their workers) alive, as it is meant
        # to: under ThreadSanitizer that is a "thread leak" report, not a fault.
        env = dict(os.environ)
        env["TSAN_OPTIONS"] = (env.get("TSAN_OPTIONS", "") + " report_thread_leaks=0").strip()
        return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, env=env)

    def test_callbacks_pending_at_exit_are_dropped(self):
        with tempfile.TemporaryDirectory() as folder:
            marker = os.path.join(folder, "ran")
            done = self.run_program(
                f"""
                s = tpevent.Stream(DEVICE)
                gate = Gate(s)  # never opened: the callback is still pending at exit
                s.launch_host_func(lambda: open({marker!r}, "w").close())
                t = tpevent.Stream(DEVICE)
                t.launch_host_func(print, "runs before exit")
                t.synchronize()
                """
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("runs before exit", done.stdout)
            self.assertFalse(os.path.exists(marker))

    def test_streams_alive_at_exit(self):
        done = self.run_program(
            """
            keep = [tpevent.Stream(DEVICE) for _ in range(4)]
            e = keep[0].record_event()
            keep[1].launch_host_func(lambda: None)
            handles = [tpevent.Stream.from_external(type("S", (), {"cuda_stream": s.native_handle,
                       "device": s.device})()) for s in keep]
            """
        )
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    run()
