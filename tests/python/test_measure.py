"""tpevent.measure, tpevent.do_bench and python -m tpevent.timeit (rule 18).

The work is of known length: host functions that busy-wait d µs on the stream.
Every sample is at least d (>= 0.95 d); the fastest is at most 1.5 d + 300 µs. On
a loaded machine a busy-waiting thread is often descheduled when its wait ends,
which adds milliseconds to many samples (the median) but never takes time away,
and a host function written in Python takes the GIL for each call. Each
measurement is short (min_time of a few ms, max_noise large), so the file runs
in about two seconds. Under a sanitizer (its runtime preloaded into the
interpreter) a Python host function costs milliseconds more: only the lower bound
is checked there.
"""

import _thread
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest
from unittest import mock

import tpevent
from tpevent_testing import DEVICE_TYPE, run

D_US = 1000
SANITIZED = any(runtime in os.environ.get("LD_PRELOAD", "") for runtime in ("libasan", "libtsan"))


def at_most_the_fastest(us=D_US):
    """The bound of the fastest sample, in µs (see the module's docstring)."""
    return float("inf") if SANITIZED else 1.5 * us + 300


def busy_wait(us):
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


def quick(**options):
    """Few samples and any noise: the measurement stops after min_time."""
    return {"min_time": 0.005, "max_time": 5.0, "max_noise": 1e9, "min_samples": 10, **options}


class MeasureTests(unittest.TestCase):
    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def launch(self, us=D_US):
        return lambda: self.stream.launch_host_func(busy_wait, us)

    def assert_about(self, m, us=D_US):
        self.assertGreaterEqual(m.min * 1e6, 0.95 * us)
        self.assertLessEqual(m.min * 1e6, at_most_the_fastest(us))
        self.assertGreaterEqual(m.median, m.min)

    def assert_not_held(self):
        """Work recorded now completes well before the watchdog of measure's last
        hold (10 stretches of a fn that sleeps 50 ms: 500 ms) could let it go."""
        began = time.monotonic()
        self.stream.record_event().synchronize(timeout=30)
        self.assertLess(time.monotonic() - began, 0.3)

    def test_known_length_hot(self):
        m = tpevent.measure(self.launch(), self.stream, **quick())
        self.assertIsInstance(m, tpevent.Measurement)
        self.assert_about(m)
        self.assertTrue(m.held, m.note)
        self.assertFalse(m.cold)
        self.assertGreaterEqual(m.samples, 10)
        self.assertEqual(m.calls, m.samples * m.batch)
        self.assertEqual(len(m.times), m.samples)
        self.assertLessEqual(m.min, m.median)
        self.assertLessEqual(m.median, m.max)
        self.assertEqual(m.device, self.stream.device)

    def test_given_batch(self):
        m = tpevent.measure(self.launch(), self.stream, **quick(batch=3))
        self.assertEqual(m.batch, 3)
        self.assertEqual(m.calls, 3 * m.samples)
        # The lower bound only: on the loaded fake GPU a held batch of Python host
        # functions runs well above d per call.
        self.assertGreaterEqual(m.min * 1e6, 0.95 * D_US)

    @unittest.skipIf(SANITIZED, "the CPU's cache flush (64 MB read per call) takes ~0.5 s each under a sanitizer")
    def test_known_length_cold(self):
        try:
            m = tpevent.measure(self.launch(), self.stream, **quick(cold=True))
        except tpevent.Error as unsupported:
            self.assertEqual(unsupported.status, "TP_ERR_UNSUPPORTED")
            self.skipTest(str(unsupported))
        self.assertTrue(m.cold)
        self.assert_about(m)  # the flush is outside the timed interval
        self.assertEqual(m.calls, m.samples)

    def test_without_a_hold(self):
        m = tpevent.measure(self.launch(), self.stream, **quick(hold=False))
        self.assertFalse(m.held)
        self.assertGreaterEqual(m.median * 1e6, 0.95 * D_US)

    def test_current_stream_inside_fn(self):
        seen = []

        def fn():
            seen.append(tpevent.current_stream(self.stream.device))
            self.launch()()

        with tpevent.stream(self.stream):
            m = tpevent.measure(fn, **quick())  # stream=None: the current stream
        self.assertEqual(m.device, self.stream.device)
        self.assertTrue(seen)
        self.assertTrue(all(s == self.stream for s in seen))

    def test_fn_that_synchronizes_is_measured_without_a_hold(self):
        def fn():
            self.launch(50)()
            self.stream.synchronize()

        began = time.monotonic()
        m = tpevent.measure(fn, self.stream, **quick(max_time=10.0))
        self.assertLess(time.monotonic() - began, 3.0)  # two watchdogs: 100 ms each, not max_time
        self.assertFalse(m.held)
        self.assertIn("holds in a row ran out", m.note)
        self.assertGreater(m.samples, 0)

    def raise_on_third_call(self, exception):
        """A fn whose third call (the first timed one: a warm-up and a calibration
        come first) raises, after 50 ms of host time in each call so that measure's
        watchdog is long."""
        calls = []

        def fn():
            calls.append(1)
            self.launch(10)()
            time.sleep(0.05)
            if len(calls) == 3:
                exception()

        return fn

    def test_exception_from_fn_propagates_and_the_stream_is_released(self):
        def raise_value_error():
            raise ValueError("from fn")

        with self.assertRaisesRegex(ValueError, "from fn"):
            tpevent.measure(self.raise_on_third_call(raise_value_error), self.stream, **quick())
        self.assert_not_held()

    def test_keyboard_interrupt_from_fn_propagates(self):
        def interrupt():
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            tpevent.measure(self.raise_on_third_call(interrupt), self.stream, **quick())
        self.assert_not_held()

    def test_ctrl_c_stops_a_measurement(self):
        def sigint():
            os.kill(os.getpid(), signal.SIGINT)

        with self.assertRaises(KeyboardInterrupt):
            tpevent.measure(self.raise_on_third_call(sigint), self.stream, **quick(min_time=60, max_time=60))
        self.assert_not_held()

    def test_capturing_stream_raises_before_fn_is_called(self):
        called = []
        with tpevent.graph(tpevent.Graph(), stream=self.stream):
            with self.assertRaises(tpevent.Error) as caught:
                tpevent.measure(lambda: called.append(1), self.stream)
        self.assertEqual(caught.exception.status, "TP_ERR_CAPTURING")
        self.assertEqual(called, [])

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            tpevent.measure(1)
        with self.assertRaises(TypeError):
            tpevent.measure(self.launch(), "not a stream")
        for options in ({"min_time": -1}, {"max_time": 0}, {"max_noise": -1}, {"min_samples": 0}, {"batch": -1}):
            with self.subTest(options=options), self.assertRaises(ValueError):
                tpevent.measure(self.launch(), self.stream, **options)

    def test_float_arguments_nan_inf_negative_are_value_errors(self):
        nan, inf = float("nan"), float("inf")
        for options in ({"min_time": nan}, {"min_time": inf}, {"max_time": nan}, {"max_time": inf},
                        {"max_time": -1}, {"max_noise": nan}):
            with self.subTest(options=options), self.assertRaisesRegex(ValueError, "must be"):
                tpevent.measure(self.launch(), self.stream, **options)

    def test_max_time_below_a_nanosecond_is_rounded_up_not_refused(self):
        # 1e-10 s was accepted as > 0, then truncated to the 0 ns tp_measure refuses.
        m = tpevent.measure(self.launch(), self.stream, min_time=0, max_time=1e-10, max_noise=1e9)
        self.assertEqual(m.samples, 1)
        self.assertIn("max_time", m.note)

    def test_cold_batch_of_2_to_the_60_is_cut_to_max_time(self):
        # Its events' sizes wrapped in tp_measure: realloc(p, 0), then writes to p.
        m = tpevent.measure(self.launch(10), self.stream, min_time=0, max_time=0.3, max_noise=1e9,
                            batch=2**60 + 1, cold=True)
        self.assertGreaterEqual(m.samples, 1)
        self.assertLess(m.batch, 2**60)
        self.assertIn("cut to", m.note)

    def test_ctrl_c_interrupts_a_wait_on_a_stream_held_elsewhere(self):
        # The warm-up waits for the stream, which another hold keeps for 30 s: the wait
        # runs the signal handlers between its slices, as Stream.synchronize does.
        timer = threading.Timer(0.3, _thread.interrupt_main)
        started = time.monotonic()
        with self.stream.hold(timeout=30):
            timer.start()
            with self.assertRaises(KeyboardInterrupt):
                tpevent.measure(self.launch(10), self.stream, **quick(min_time=60, max_time=60))
            took = time.monotonic() - started
        timer.join()
        self.stream.synchronize()
        self.assertLess(took, 15.0)
        self.assert_not_held()

    def test_trace_started_during_a_measurement_does_not_fail_it(self):
        # Call 3 is the first sample's first: its range was pushed before the trace.
        calls = []

        def fn():
            calls.append(1)
            if len(calls) == 3:
                tpevent.trace_start()
            self.stream.launch_host_func(busy_wait, 20)

        m = tpevent.measure(fn, self.stream, **quick(batch=2, min_samples=3))
        with tempfile.TemporaryDirectory() as folder:
            tpevent.trace_stop(os.path.join(folder, "trace.json"))
        self.assertGreaterEqual(m.samples, 3)

    def test_repr_and_to_dict(self):
        m = tpevent.measure(self.launch(), self.stream, **quick(batch=2))
        text = repr(m)
        self.assertRegex(text, r"^\d[\d.]* (µs|ms) \[\d[\d.]* (µs|ms|ns), \d[\d.]* (µs|ms)\] ± [\d.e+-]+ % \(.*floor ")
        self.assertIn(f"({m.device}, held", text)
        self.assertIn(f"{m.samples} samples × 2, floor ", text)
        fields = json.loads(json.dumps(m.to_dict()))
        self.assertEqual(fields["samples"], m.samples)
        self.assertEqual(fields["device"], m.device)
        self.assertGreaterEqual(fields["iqr"], 0)
        self.assertEqual(len(fields["times"]), m.samples)


class SmClockTests(unittest.TestCase):
    """The device's SM clock in each measurement (issue 51, item 4): read on CUDA (the
    fake GPU models one), "clock unknown" and why elsewhere; stretches at a lowered
    clock flagged, dropped when asked (python.measure.fake_low_clock lowers the fake's)."""

    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def measure(self, **options):
        return tpevent.measure(lambda: self.stream.launch_host_func(busy_wait, 200), self.stream,
                               **quick(min_samples=12, **options))

    def test_clock_read_or_said_unknown(self):
        m = self.measure()
        fields = json.loads(json.dumps(m.to_dict()))
        if DEVICE_TYPE == "cuda":
            self.assertGreater(m.sm_clock_mhz, 0)
            self.assertGreaterEqual(m.sm_clock_stretches, 1)
            self.assertIn(f"SM {m.sm_clock_mhz:.0f} MHz", repr(m))
            self.assertEqual(fields["sm_clock_mhz"], m.sm_clock_mhz)
        else:
            self.assertIsNone(m.sm_clock_mhz)
            self.assertIsNone(fields["sm_clock_mhz"])
            self.assertTrue(m.sm_clock_note.startswith("clock unknown: "), m.sm_clock_note)
            self.assertEqual((m.sm_clock_stretches, m.sm_clock_low), (0, 0))
            self.assertNotIn(" MHz", repr(m))

    def test_clock_by_the_contracts_names(self):
        """clock_mhz, clock_max_mhz and throttled: sm_clock_mhz, sm_clock_max_mhz and
        sm_clock_low by the measurement contract's names."""
        m = self.measure()
        self.assertEqual((m.clock_mhz, m.clock_max_mhz, m.throttled),
                         (m.sm_clock_mhz, m.sm_clock_max_mhz, m.sm_clock_low))
        self.assertEqual(m.clock_mhz is None, DEVICE_TYPE != "cuda")

    def test_repr_counts_the_stretches_at_a_low_clock(self):
        m = self.measure()
        fields = {name: getattr(m, name) for name in m.__slots__}
        fields.update(sm_clock_mhz=1980.0, sm_clock_max_mhz=1980.0, sm_clock_stretches=12, sm_clock_low=4)
        self.assertIn("SM 1980 MHz, 4 of 12 stretches at a low clock", repr(tpevent.Measurement(**fields)))

    def test_threshold_out_of_range_is_a_value_error(self):
        for bad in (-0.5, 1.5, float("nan")):
            with self.subTest(bad=bad):
                with self.assertRaises(ValueError):
                    self.measure(clock_threshold=bad)

    @unittest.skipUnless(os.environ.get("TPEVENT_FAKE_SM_CLOCK_LOW_EVERY"),
                         "the fake GPU's clock is not lowered here (python.measure.fake_low_clock lowers it)")
    def test_stretches_at_a_low_clock_flagged_or_dropped(self):
        m = self.measure()
        self.assertGreater(m.sm_clock_low, 0)
        self.assertIn(f"{m.sm_clock_low} of {m.sm_clock_stretches} stretches at a low clock", repr(m))
        self.assertIn("flagged, kept", m.note)
        self.assertEqual(m.samples, m.sm_clock_stretches)
        dropped = self.measure(drop_low_clock=True)
        self.assertGreater(dropped.sm_clock_low, 0)
        self.assertIn("dropped", dropped.note)
        self.assertEqual(dropped.samples, dropped.sm_clock_stretches - dropped.sm_clock_low)
        # A threshold of 0 flags nothing.
        self.assertEqual(self.measure(clock_threshold=0).sm_clock_low, 0)


class HostWorkTests(unittest.TestCase):
    """host=True and measure_calls: a sample's calls in one host function."""

    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def test_host_work_times_each_call_not_its_launch(self):
        calls = []

        def fn():
            calls.append(1)
            busy_wait(500)  # the fake GPU's host-function floor is noisy: a call of its own size

        m = tpevent.measure(fn, self.stream, host=True, batch=8, **quick())
        self.assertEqual(m.batch, 8)
        self.assertGreaterEqual(len(calls), m.calls + 2)  # warm-up and calibration besides
        # The median: each sample has the floor's share taken off, and the floor of a
        # host function (the fake GPU's starts up to 1 ms late) is a noisy median.
        self.assertGreaterEqual(m.median * 1e6, 0.8 * 500)
        self.assertEqual(m.cpu_time, 0)  # nothing ran in fn on the caller's thread
        self.assertGreaterEqual(m.floor, 0)
        self.assertLessEqual(m.median_low, m.median)
        self.assertLessEqual(m.median, m.median_high)
        self.assertGreaterEqual(m.raw_median, m.median)
        for name in ("floor", "floor_stdev", "raw_median", "median_low", "median_high"):
            self.assertIn(name, m.to_dict())

    def test_measure_calls_runs_the_loop_it_is_given(self):
        counts = []

        def run_calls(n):
            counts.append(n)
            for _ in range(n):
                busy_wait(300)

        m = tpevent._measure.measure_calls(run_calls, self.stream, **quick())
        self.assertIn(0, counts)  # the floor's: the loop around no call
        self.assertIn(m.batch, counts)
        self.assertGreaterEqual(m.median * 1e6, 0.8 * 300)

    def test_exception_in_host_work_propagates(self):
        def run_calls(n):
            if n > 1:
                raise ZeroDivisionError("from the host function")

        with self.assertRaises(ZeroDivisionError):
            tpevent._measure.measure_calls(run_calls, self.stream, **quick())
        self.stream.synchronize()

    def test_no_work_on_the_stream_answers_at_once(self):
        started = time.monotonic()
        m = tpevent.measure(lambda: busy_wait(50), self.stream, min_time=0.5, max_time=60)
        self.assertLess(time.monotonic() - started, 20)
        self.assertFalse(m.converged)
        self.assertIn("put no work on the", m.note)
        self.assertIn("host=True", m.note)


class CompareTests(unittest.TestCase):
    """tpevent.compare: is b faster than a (host functions of known length)."""

    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def launch(self, us):
        return lambda: self.stream.launch_host_func(busy_wait, us)

    def test_twice_as_long_is_slower(self):
        c = tpevent.compare(self.launch(500), self.launch(1000), self.stream, max_time=10, min_effect=0.02)
        self.assertEqual(c.verdict, "slower", repr(c))
        self.assertLessEqual(c.low, c.ratio)
        self.assertLessEqual(c.ratio, c.high)
        self.assertGreater(c.low, 1.02)
        self.assertIn("slower than a", repr(c))
        fields = json.loads(json.dumps(c.to_dict()))
        self.assertEqual(fields["verdict"], "slower")
        self.assertEqual(fields["a"]["device"], c.a.device)

    def test_half_as_long_is_faster(self):
        c = tpevent.compare(self.launch(1000), self.launch(500), self.stream, max_time=10, min_effect=0.02)
        self.assertEqual(c.verdict, "faster", repr(c))

    def test_host_work_twice_as_long_is_slower_and_itself_not(self):
        c = tpevent.compare(lambda: busy_wait(100), lambda: busy_wait(200), self.stream, host=True, max_time=10,
                            min_effect=0.02)
        self.assertEqual(c.verdict, "slower", repr(c))
        c = tpevent.compare(lambda: busy_wait(100), lambda: busy_wait(100), self.stream, host=True, max_time=3,
                            min_effect=0.02, confidence=0.99)
        self.assertIn(c.verdict, ("same", "undecided"), repr(c))

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            tpevent.compare(self.launch(10), 1)
        for options in ({"confidence": 1.0}, {"min_effect": 0}, {"max_time": 0}):
            with self.subTest(options=options), self.assertRaises(ValueError):
                tpevent.compare(self.launch(10), self.launch(10), self.stream, **options)

    def test_exception_in_b_propagates(self):
        def b():
            raise ZeroDivisionError("b")

        with self.assertRaises(ZeroDivisionError):
            tpevent.compare(self.launch(10), b, self.stream, max_time=5)
        self.stream.synchronize()


class Grad:
    grad = "kept"


class DoBenchTests(unittest.TestCase):
    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)
        self.fn = lambda: self.stream.launch_host_func(busy_wait, D_US)

    def bench(self, **options):
        with tpevent.stream(self.stream):  # stream=None: tpevent's current stream (no torch here)
            return tpevent.do_bench(self.fn, warmup=1, rep=3, cold=False, **options)

    def test_return_modes_in_ms(self):
        times = self.bench(return_mode="all")
        self.assertIsInstance(times, list)
        self.assertGreaterEqual(len(times), 10)
        for mode in ("min", "max", "mean", "median"):
            with self.subTest(mode=mode):
                ms = self.bench(return_mode=mode)
                self.assertIsInstance(ms, float)
                self.assertGreaterEqual(ms, 0.95 * D_US / 1e3)
                if mode == "min":  # see the module's docstring
                    self.assertLessEqual(ms * 1e3, at_most_the_fastest())
        with self.assertRaises(ValueError):
            self.bench(return_mode="average")

    def test_quantiles(self):
        one = self.bench(quantiles=[0.5])
        self.assertIsInstance(one, float)
        low, high = self.bench(quantiles=[0.2, 0.8])
        self.assertLessEqual(low, high)
        with self.assertRaises(ValueError):
            self.bench(quantiles=[1.5])

    def test_warmup_and_rep_nan_inf_negative_are_value_errors(self):
        # warmup=nan never ended: its deadline compared false with every time.
        for options in ({"warmup": float("nan")}, {"warmup": float("inf")}, {"warmup": -1},
                        {"rep": float("nan")}, {"rep": float("inf")}, {"rep": -1}):
            with self.subTest(options=options), self.assertRaisesRegex(ValueError, "must be"):
                tpevent.do_bench(self.fn, stream=self.stream, cold=False, **{"warmup": 1, "rep": 3, **options})

    def test_grad_to_none_before_each_call(self):
        tensor = Grad()
        seen = []

        def fn():
            seen.append(tensor.grad)
            tensor.grad = "used"
            self.fn()

        with tpevent.stream(self.stream):
            tpevent.do_bench(fn, warmup=0, rep=2, grad_to_none=[tensor], cold=False)
        # The warm-up calls fn alone, as triton's; every timed call sees None.
        self.assertEqual(seen[0], "kept")
        self.assertGreaterEqual(seen.count(None), 10)
        self.assertEqual(seen[-1], None)

    def test_cold_and_rep_as_min_time(self):
        # The measurement itself: a cold one on the CPU flushes 64 MB before each call.
        with mock.patch.object(tpevent._measure, "measure", wraps=tpevent.measure) as measure:
            tpevent.do_bench(self.fn, warmup=0, rep=2, stream=self.stream, cold=False)
            self.assertFalse(measure.call_args.kwargs["cold"])
            measure.side_effect = RuntimeError("measured")
            with self.assertRaisesRegex(RuntimeError, "measured"):
                tpevent.do_bench(self.fn, warmup=0, rep=20, stream=self.stream)
        # Cold by default on a GPU, as triton; hot on a CPU device (its cache is the host's).
        self.assertEqual(measure.call_args.kwargs["cold"], not self.stream.device.startswith("cpu"))
        self.assertEqual(measure.call_args.kwargs["min_time"], 0.02)
        self.assertEqual(measure.call_args.kwargs["max_time"], 1.0)  # rep bounds the wall clock


class TorchStream:
    def __init__(self, cuda_stream, device):
        self.cuda_stream = cuda_stream
        self.device = device


def fake_torch(streams):
    """A module that stands for torch (no torch here): its current CUDA stream is
    streams[-1], and torch.cuda.stream(s) pushes s for its block."""
    torch = types.ModuleType("torch")

    @contextlib.contextmanager
    def stream(s):
        streams.append(s)
        try:
            yield s
        finally:
            streams.pop()

    torch.device = lambda device_type, index: f"{device_type}:{index}"
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True,
        ExternalStream=lambda handle, device: TorchStream(handle, device),
        default_stream=lambda device: TorchStream(0, device),
        current_stream=lambda: streams[-1],
        stream=stream,
    )
    return torch


class TorchCurrentStreamTests(unittest.TestCase):
    """With torch imported, fn runs with the measured stream current for torch too
    (on CUDA), and do_bench's stream=None is torch's current stream."""

    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)
        self.streams = [TorchStream(self.stream.native_handle, self.stream.device)]
        self.seen = []
        self.fn = lambda: (self.seen.append(self.streams[-1]), self.stream.launch_host_func(busy_wait, 10))

    def test_measured_stream_is_torch_current_on_cuda(self):
        with mock.patch.dict(sys.modules, {"torch": fake_torch(self.streams)}):
            tpevent.measure(self.fn, self.stream, **quick())
        self.assertTrue(self.seen)
        if DEVICE_TYPE == "cuda":
            self.assertTrue(all(s.cuda_stream == self.stream.native_handle for s in self.seen))
            self.assertTrue(all(s.device == self.stream.device for s in self.seen))
        else:  # torch is not told of streams of other devices
            self.assertTrue(all(s is self.streams[0] for s in self.seen))
        self.assertEqual(len(self.streams), 1)

    @unittest.skipUnless(DEVICE_TYPE == "cuda", "torch's current stream is a CUDA stream")
    def test_do_bench_measures_on_torch_current_stream(self):
        with mock.patch.dict(sys.modules, {"torch": fake_torch(self.streams)}):
            ms = tpevent.do_bench(self.fn, warmup=0, rep=1, cold=False, return_mode="min")
        self.assertGreater(ms, 0)
        self.assertTrue(all(s.cuda_stream == self.stream.native_handle for s in self.seen))


@unittest.skipUnless(DEVICE_TYPE == "cpu" and not SANITIZED, "python -m tpevent.timeit runs once, on the CPU, unsanitized")
class TimeitTests(unittest.TestCase):
    def test_json_on_the_cpu(self):
        stmt = ["end = time.perf_counter_ns() + 1_000_000", "while time.perf_counter_ns() < end: pass"]
        options = ["-d", "cpu", "-s", "import time", "--json", "--min-time", "0.005", "--max-noise", "1e9"]
        done = subprocess.run([sys.executable, "-m", "tpevent.timeit", *options, *stmt], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        fields = json.loads(done.stdout)
        self.assertGreaterEqual(fields["min"] * 1e6, 0.95 * D_US)
        self.assertLessEqual(fields["min"] * 1e6, at_most_the_fastest())
        self.assertGreaterEqual(fields["median"], fields["min"])
        self.assertTrue(fields["held"])
        self.assertEqual(fields["device"], "cpu:0")

    def test_bad_device_and_options_are_argparse_errors(self):
        # argparse's way: usage, one line of error, exit 2; not a traceback.
        for options in (["-d", "bogus"], ["--max-time", "nan"], ["--min-time", "-1"], ["--max-time", "0"]):
            with self.subTest(options=options):
                done = subprocess.run([sys.executable, "-m", "tpevent.timeit", *options, "pass"],
                                      capture_output=True, text=True, timeout=60)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertNotIn("Traceback", done.stderr)
                self.assertEqual(len([line for line in done.stderr.splitlines() if "error:" in line]), 1)


if __name__ == "__main__":
    run()
