"""tpevent.measure, tpevent.do_bench and Measurement: the user's own work timed as
the device sees it (docs/design.md, rule 18), over the C library's tp_measure.

tp_measure holds the stream while it queues a timing record, a batch of calls of
``fn`` and a timing record, then lets it go: the device runs the batch back to
back, so the host's submission rate (a 2 µs kernel launched from Python reads
5-20 µs with events around each call) is not in the time.
"""

import contextlib
import math
import operator
import statistics
import sys
import time

from . import _tpevent
from ._tpevent import Error, Stream, current_stream


class Measurement:
    """What ``tpevent.measure`` answers. Times are per call, in seconds, as
    ``torch.utils.benchmark.Measurement``'s: ``median``, ``mean``, ``iqr``,
    ``min``, ``max``, ``stdev``, ``times`` (each sample's per-call time; a hot
    sample is a batch of ``batch`` calls run back to back, a cold one a single
    call; the first 65,536 samples) and ``cpu_time`` (the host's time per call
    inside ``fn``, which the device times do not count). ``noise`` is the
    samples' relative standard deviation (a fraction). ``calls`` counts the
    timed calls, ``samples`` the samples kept. ``held``: every sample ran under a
    hold; ``converged``: the median's 95 % confidence interval (``median_low``,
    ``median_high``) came within ``max_noise`` of it before ``max_time``;
    ``note`` says what was given up and why ('' if nothing). ``device``: the
    stream's, such as 'cuda:0'.

    ``floor`` (``floor_stdev`` its spread) is what a sample's own timing records
    cost beyond its calls' cadence, measured on the stream with the device's
    least work (an empty kernel, a marker, a host function that does nothing);
    ``floor / batch`` (cold: ``floor``) was taken off every sample, so that the
    times are the device's per-call cadence. ``raw_median`` is the median before.

    The device's SM clock while the stretches ran (CUDA: read by a kernel before and
    after each stretch, as nvbench reads it): ``sm_clock_mhz``, their median, None
    when the clock is unknown (the CPU, OpenCL, HIP: ``sm_clock_note`` says why);
    ``sm_clock_max_mhz`` the SM's maximum (NVML; None: unknown); of
    ``sm_clock_stretches`` read, ``sm_clock_low`` ran below ``clock_threshold`` of the
    maximum: flagged (the repr and the note count them), dropped with
    ``drop_low_clock=True``.
    """

    __slots__ = (
        "median",
        "mean",
        "min",
        "max",
        "stdev",
        "noise",
        "times",
        "cpu_time",
        "calls",
        "samples",
        "batch",
        "held",
        "converged",
        "cold",
        "note",
        "device",
        "floor",
        "floor_stdev",
        "raw_median",
        "median_low",
        "median_high",
        "sm_clock_mhz",
        "sm_clock_max_mhz",
        "sm_clock_stretches",
        "sm_clock_low",
        "sm_clock_note",
    )

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"Measurement() got unexpected fields {sorted(fields)}")

    # The measurement contract's names for three of the SM clock's fields.
    @property
    def clock_mhz(self):
        """``sm_clock_mhz``: the SM clock's median in MHz, None when unknown."""
        return self.sm_clock_mhz

    @property
    def clock_max_mhz(self):
        """``sm_clock_max_mhz``: the SM's maximum clock in MHz, None when unknown."""
        return self.sm_clock_max_mhz

    @property
    def throttled(self):
        """``sm_clock_low``: the stretches that ran below ``clock_threshold`` of the maximum."""
        return self.sm_clock_low

    @property
    def iqr(self):
        """The interquartile range of ``times``, in seconds."""
        if not self.times:
            return math.nan
        low, high = _quantile(self.times, [0.25, 0.75])
        return high - low

    def to_dict(self):
        """The fields (and ``iqr``) as a dict of plain values, for JSON."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields["times"] = list(self.times)
        fields["iqr"] = self.iqr
        return fields

    def __repr__(self):
        facts = [self.device, "held" if self.held else "not held"]
        if self.cold:
            facts.append("cold")
        if not self.converged:
            facts.append("not converged")
        facts.append(f"{self.samples} samples" if self.cold else f"{self.samples} samples × {self.batch}")
        if self.samples == 0:
            return f"no sample ({', '.join(facts)})"
        facts.append(f"floor {format_ns(self.floor * 1e9)}")
        if self.sm_clock_mhz is not None:
            facts.append(f"SM {self.sm_clock_mhz:.0f} MHz")
        if self.sm_clock_low:
            facts.append(f"{self.sm_clock_low} of {self.sm_clock_stretches} stretches at a low clock")
        median, low, high = (format_ns(t * 1e9) for t in (self.median, self.median_low, self.median_high))
        return f"{median} [{low}, {high}] ± {self.noise * 100:.2g} % ({', '.join(facts)})"

    def __str__(self):
        """The repr, and the note on a line of its own when there is one."""
        return repr(self) if not self.note else f"{self!r}\nnote: {self.note}"


def format_ns(ns):
    """A time in ns as text of 4 significant digits in s, ms, µs or ns, the unit chosen
    by its magnitude (a negative difference too); "-" for none. The comparison's table
    (results.py) prints with it too."""
    if not isinstance(ns, (int, float)) or not math.isfinite(ns):
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.4g} {unit}"
    return f"{ns:.4g} ns"


def _quantile(values, quantiles):
    """Linear interpolation between the closest ranks (numpy's and torch.quantile's
    default, and triton.testing's _quantile)."""
    ordered = sorted(values)
    last = len(ordered) - 1
    answer = []
    for q in quantiles:
        if not 0 <= q <= 1:
            raise ValueError(f"quantiles must be in the range [0, 1], not {q!r}")
        point = q * last
        lower = math.floor(point)
        upper = math.ceil(point)
        answer.append(ordered[lower] + (point - lower) * (ordered[upper] - ordered[lower]))
    return answer


def _seconds(name, value, *, zero_ok, unit="seconds"):
    """A finite time >= 0 (> 0 unless zero_ok): nan or inf would never end a wait."""
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not zero_ok):
        raise ValueError(f"{name} is {value!r}: it must be a finite number of {unit} {'>=' if zero_ok else '>'} 0")
    return seconds


def _noise(value):
    """max_noise: a fraction >= 0; inf never stops on noise."""
    noise = float(value)
    if math.isnan(noise) or noise < 0:
        raise ValueError(f"max_noise is {value!r}: it must be a fraction >= 0 (inf: never stop on noise)")
    return noise


def _stream_arg(stream):
    """A Stream for measure's stream argument: None is the current stream of the
    current device; another library's stream is wrapped."""
    if stream is None:
        return current_stream()
    if isinstance(stream, Stream):
        return stream
    try:
        return Stream.from_external(stream)
    except TypeError:
        raise TypeError(f"measure() expects a tpevent.Stream or None, not {type(stream).__name__}") from None


def _cuda_index(stream):
    """The CUDA device index of a stream, or None for a stream of another type."""
    device_type, _, index = stream.device.partition(":")
    return int(index or 0) if device_type == "cuda" else None


@contextlib.contextmanager
def _current(stream):
    """``stream`` is the current stream for tpevent and, on CUDA, for torch and CuPy
    when they are imported (so that ``lambda: a @ b`` lands on it); nothing here
    imports them."""
    with contextlib.ExitStack() as current:
        current.enter_context(stream)
        index = _cuda_index(stream)
        torch = sys.modules.get("torch") if index is not None else None
        if torch is not None and torch.cuda.is_available():
            device = torch.device("cuda", index)
            handle = stream.native_handle  # 0: the legacy default stream
            native = torch.cuda.ExternalStream(handle, device=device) if handle else torch.cuda.default_stream(device)
            current.enter_context(torch.cuda.stream(native))
        cupy = sys.modules.get("cupy") if index is not None else None
        if cupy is not None and cupy.cuda.is_available():
            current.enter_context(cupy.cuda.Device(index))
            current.enter_context(cupy.cuda.ExternalStream(stream.native_handle, index))
        yield stream


def measure(
    fn,
    stream=None,
    *,
    min_time=0.5,
    max_time=15.0,
    max_noise=0.005,
    min_samples=10,
    batch=None,
    cold=False,
    hold=True,
    host=False,
    clock_threshold=0.75,
    drop_low_clock=False,
):
    """Times the work ``fn()`` puts on ``stream`` as the device runs it, and
    answers a ``Measurement``.

    ``fn`` takes no arguments and submits one call's worth of work (kernel
    launches, copies, host functions); it is called for a warm-up, a calibration
    and then in batches. While it runs, ``stream`` (None: the current stream of
    the current device; another library's stream is taken too) is the current
    stream for tpevent and, on CUDA, for torch and CuPy when they are imported,
    so ``tpevent.measure(lambda: a @ b)`` times the matmul. On the CPU the work
    must be on the stream (``stream.launch_host_func``): what ``fn`` runs itself
    is the host's time, ``cpu_time``.

    Hot (default): each sample is a batch of calls queued behind a hold of the
    stream, so it runs back to back on the device; ``batch`` (None: chosen)
    calls per sample. ``cold=True``: the device's last-level cache is flushed
    before each call, and each call is a sample. Samples go on until their noise
    is at most ``max_noise`` after ``min_time`` seconds of timed device time and
    ``min_samples`` samples, or ``max_time`` seconds pass (``converged`` False).
    ``hold=False`` measures without a hold (the submission is in the times).
    Each sample's time has the protocol's floor (``Measurement.floor``) taken
    off, and stopping looks at the median's confidence interval.

    ``host=True``: ``fn`` is host work, run ``batch`` times inside one host
    function on the stream per sample (one per call cold), so that the launch
    is shared by the batch: how CPU work is timed (on a CPU device, what ``fn``
    runs itself is otherwise not on the stream, and a measurement of it ends at
    once with a note saying so).

    The SM clock is read around each stretch where the device can (CUDA): a
    stretch below ``clock_threshold`` (a fraction, default 0.75 as nvbench's) of the
    maximum clock is flagged, and dropped with ``drop_low_clock=True``; the first
    ones, while an idle clock ramps up, are the warm-up's, not kept.

    A ``fn`` that synchronizes the stream or blocks is not a hang: the hold runs
    out and that stretch is dropped; after two such in a row the rest is measured
    without a hold (``held`` False, said in ``note``). An exception from ``fn``, Ctrl-C
    included, propagates once the stream is released. A capturing stream is
    ``tpevent.Error`` (``TP_ERR_CAPTURING``) before ``fn`` is called.
    """
    if not callable(fn):
        raise TypeError(f"measure() expects a callable, not {type(fn).__name__}")
    if host:
        return measure_calls(
            _calls_of(fn),
            stream,
            min_time=min_time,
            max_time=max_time,
            max_noise=max_noise,
            min_samples=min_samples,
            batch=batch,
            cold=cold,
            hold=hold,
            clock_threshold=clock_threshold,
            drop_low_clock=drop_low_clock,
        )
    return _measured(fn, stream, min_time, max_time, max_noise, min_samples, batch, cold, hold, False,
                     clock_threshold, drop_low_clock)


def _calls_of(fn):
    """``fn`` as host work: ``run_calls(n)`` calls it ``n`` times."""

    def run_calls(n):
        for _ in range(n):
            fn()

    return run_calls


def measure_calls(
    run_calls,
    stream=None,
    *,
    min_time=0.5,
    max_time=15.0,
    max_noise=0.005,
    min_samples=10,
    batch=None,
    cold=False,
    hold=True,
    clock_threshold=0.75,
    drop_low_clock=False,
):
    """``measure(..., host=True)`` for work that runs its own loop:
    ``run_calls(n)`` runs ``n`` calls (``timeit.Timer(...).timeit``, say), once
    per sample inside one host function on the stream (``run_calls(0)`` for the
    floor). An exception from it propagates once the stream is released."""
    if not callable(run_calls):
        raise TypeError(f"measure_calls() expects a callable, not {type(run_calls).__name__}")
    return _measured(run_calls, stream, min_time, max_time, max_noise, min_samples, batch, cold, hold, True,
                     clock_threshold, drop_low_clock)


def _threshold(value):
    """clock_threshold: a fraction in [0, 1]."""
    threshold = float(value)
    if not 0 <= threshold <= 1:
        raise ValueError(f"clock_threshold is {value!r}: it must be a fraction in [0, 1]")
    return threshold


def _measured(fn, stream, min_time, max_time, max_noise, min_samples, batch, cold, hold, host, clock_threshold,
              drop_low_clock):
    clock_threshold = _threshold(clock_threshold)
    min_time = _seconds("min_time", min_time, zero_ok=True)
    max_time = _seconds("max_time", max_time, zero_ok=False)
    max_noise = _noise(max_noise)
    min_samples = operator.index(min_samples)
    batch = 0 if batch is None else operator.index(batch)
    stream = _stream_arg(stream)
    with _current(stream):
        answer = _tpevent._measure(
            stream, fn, min_time, max_time, max_noise, min_samples, batch, bool(cold), bool(hold), bool(host),
            clock_threshold, bool(drop_low_clock),
        )
    return _measurement(answer, stream.device)


def _measurement(answer, device):
    """The C answer's dict as a Measurement (seconds)."""
    return Measurement(
        median=answer["median_ns"] / 1e9,
        mean=answer["mean_ns"] / 1e9,
        min=answer["min_ns"] / 1e9,
        max=answer["max_ns"] / 1e9,
        stdev=answer["stdev_ns"] / 1e9,
        noise=answer["noise"],
        times=[t / 1e9 for t in answer["times_ns"]],
        cpu_time=answer["cpu_ns"] / 1e9,
        calls=answer["calls"],
        samples=answer["samples"],
        batch=answer["batch"],
        held=answer["held"],
        converged=answer["converged"],
        cold=answer["cold"],
        note=answer["note"],
        device=device,
        floor=answer["floor_ns"] / 1e9,
        floor_stdev=answer["floor_stdev_ns"] / 1e9,
        raw_median=answer["raw_median_ns"] / 1e9,
        median_low=answer["median_low_ns"] / 1e9,
        median_high=answer["median_high_ns"] / 1e9,
        sm_clock_mhz=answer["sm_clock_mhz"] or None,
        sm_clock_max_mhz=answer["sm_clock_max_mhz"] or None,
        sm_clock_stretches=answer["sm_clock_stretches"],
        sm_clock_low=answer["sm_clock_low"],
        sm_clock_note=answer["sm_clock_note"],
    )


# ------------------------------------------------------------------ compare


class Comparison:
    """What ``tpevent.compare(a, b)`` answers: is b faster than a. ``ratio`` is b's
    time per call over a's (the median over interleaved pairs of stretches), ``low``
    and ``high`` its interval at ``confidence`` (valid however often it was looked
    at); ``verdict`` is 'faster', 'slower' or 'same' (b relative to a; 'same' when
    the whole interval lies within ``min_effect`` of 1) or 'undecided' (``max_time``
    came first). ``a`` and ``b`` are the two Measurements, ``pairs`` the pairs of
    stretches taken."""

    __slots__ = ("ratio", "low", "high", "confidence", "min_effect", "verdict", "pairs", "a", "b")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"Comparison() got unexpected fields {sorted(fields)}")

    def to_dict(self):
        """The fields as plain values, a and b as their to_dict(), for JSON."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields["a"], fields["b"] = self.a.to_dict(), self.b.to_dict()
        return fields

    def __repr__(self):
        facts = f"({self.a.device}, {'held' if self.a.held and self.b.held else 'not held'}, " \
                f"{self.confidence * 100:.3g} %, {self.pairs} pairs)"
        change = (self.ratio - 1) * 100
        spread = (self.high - self.low) / 2 * 100
        if self.verdict == "same":
            return f"b is the same as a within {self.min_effect * 100:.3g} %: {change:+.2g} % ± {spread:.2g} % {facts}"
        if self.verdict == "undecided":
            return f"undecided: b is {change:+.2g} % ± {spread:.2g} % against a {facts}"
        return f"b is {abs(change):.3g} % ± {spread:.2g} % {self.verdict} than a {facts}"


def compare_calls(run_a, run_b, stream=None, **settings):
    """``compare(..., host=True)`` for work that runs its own loop, as
    ``measure_calls``: ``run_a(n)`` and ``run_b(n)`` each run n calls."""
    return compare(run_a, run_b, stream, _loops=True, **settings)


def compare(
    a,
    b,
    stream=None,
    *,
    min_time=0.0,
    max_time=15.0,
    min_samples=10,
    confidence=0.95,
    min_effect=0.005,
    cold=False,
    hold=True,
    host=False,
    clock_threshold=0.75,
    drop_low_clock=False,
    _loops=False,
):
    """Is ``b`` faster than ``a``: both timed as ``measure`` does, in alternating
    stretches on one stream (A, B, A, B ...) so that a clock ramping up or a
    neighbour's load hits both alike, and answered as a ``Comparison``: the ratio
    of b's time to a's with its interval at ``confidence`` and a verdict at
    ``min_effect`` (see Comparison). The interval is looked at after 8, 16, 32 ...
    pairs, each look spending a share of the error, so that the verdict keeps its
    confidence however early it comes. ``host=True``: a and b are host work, a
    sample's calls run in one host function, as ``measure(host=True)``;
    ``clock_threshold`` and ``drop_low_clock`` as measure's."""
    if not callable(a) or not callable(b):
        raise TypeError("compare() expects two callables")
    min_time = _seconds("min_time", min_time, zero_ok=True)
    max_time = _seconds("max_time", max_time, zero_ok=False)
    min_samples = operator.index(min_samples)
    clock_threshold = _threshold(clock_threshold)
    confidence, min_effect = float(confidence), float(min_effect)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence!r}")
    if not 0 < min_effect < 1:
        raise ValueError(f"min_effect must be in (0, 1), not {min_effect!r}")
    stream = _stream_arg(stream)
    with _current(stream):
        if host and not _loops:
            a, b = _calls_of(a), _calls_of(b)
        answer = _tpevent._compare(
            stream, a, b, min_time, max_time, min_samples, confidence, min_effect, bool(cold), bool(hold),
            bool(host or _loops), clock_threshold, bool(drop_low_clock),
        )
    return Comparison(
        ratio=answer["ratio"],
        low=answer["low"],
        high=answer["high"],
        confidence=answer["confidence"],
        min_effect=min_effect,
        verdict=answer["verdict"],
        pairs=answer["pairs"],
        a=_measurement(answer["a"], stream.device),
        b=_measurement(answer["b"], stream.device),
    )


# ------------------------------------------------------------------ do_bench

_RETURN_MODES = ("min", "max", "mean", "median", "all")


def _bench_stream(stream):
    """do_bench's stream: None is torch's current CUDA stream when torch is imported
    (triton times on it), else tpevent's current stream."""
    if stream is not None:
        return _stream_arg(stream)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return Stream.from_external(torch.cuda.current_stream())
    return current_stream()


def _warm_up(fn, stream, warmup_ms):
    """At least one call, then calls for ``warmup_ms`` of wall clock, each waited for
    (triton: max(1, warmup / estimate) calls)."""
    deadline = time.perf_counter() + warmup_ms / 1e3
    with _current(stream):
        while True:
            fn()
            stream.synchronize()
            if time.perf_counter() >= deadline:
                return


def _summarize(times, quantiles, return_mode):
    # As triton.testing's _summarize_statistics (triton-lang/triton,
    # python/triton/testing.py): quantiles win over return_mode, one quantile is
    # a float, "all" is the list.
    if quantiles is not None:
        answer = _quantile(times, quantiles)
        return answer[0] if len(answer) == 1 else answer
    if return_mode == "all":
        return times
    if return_mode == "mean":
        return statistics.mean(times)
    if return_mode == "median":
        return statistics.median(times)
    return min(times) if return_mode == "min" else max(times)


def do_bench(
    fn,
    warmup=25,
    rep=100,
    grad_to_none=None,
    quantiles=None,
    return_mode="mean",
    *,
    stream=None,
    cold=None,
):
    """``triton.testing.do_bench`` measured tpevent's way: the same arguments and
    answer (ms per call; ``quantiles`` a list of them, one quantile a float;
    ``return_mode`` 'min', 'max', 'mean', 'median' or 'all', the list), so that
    a triton user switches by an import.

    ``warmup`` ms of calls first, then ``tpevent.measure`` for ``rep`` ms of timed
    device time (``min_time``; at most max(1 s, 3 ``rep``) in all, as triton's
    ``rep`` bounds its time), each call with ``.grad = None`` set on each tensor
    of ``grad_to_none`` first, as triton does. ``cold`` (None: True on a GPU, as
    triton's L2 flush; False on a CPU device, whose last-level cache is the
    host's own: flushing it evicts the interpreter and the dispatch too, and a
    100 µs Python host function read 171 µs): the device's last-level cache is
    flushed before each call. The times are the measurement's samples, the
    floor taken off. ``stream`` (None: torch's current CUDA stream
    when torch is imported, else tpevent's current stream).
    """
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(map(repr, _RETURN_MODES))}, not {return_mode!r}")
    warmup = _seconds("warmup", warmup, zero_ok=True, unit="ms")
    rep_seconds = _seconds("rep", rep, zero_ok=True, unit="ms") / 1e3
    stream = _bench_stream(stream)
    if cold is None:  # triton's L2 flush, on a device whose cache is its own
        cold = not stream.device.startswith("cpu")

    def call():
        if grad_to_none is not None:
            for tensor in grad_to_none:
                tensor.grad = None
        fn()

    _warm_up(fn, stream, warmup)
    # rep bounds the wall clock, as triton's estimate (flush included) does: the timed
    # device time of cold work much shorter than its flush never reached rep (a CPU
    # no-op ran 10 s); a third of max_time at least goes to the samples.
    max_time = max(1.0, 3 * rep_seconds)
    timed = measure(call, stream, min_time=rep_seconds, max_time=max_time, max_noise=math.inf, cold=cold)
    if not timed.times:
        raise Error(f"do_bench: no sample was kept ({timed.note})")
    return _summarize([t * 1e3 for t in timed.times], quantiles, return_mode)
