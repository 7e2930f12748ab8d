"""tpevent: device events and streams over CUDA, HIP, OpenCL, Vulkan and a CPU reference backend.

One API for marking points in streams of device work, waiting for them, ordering
streams against each other and timing the work between two points. The device
string picks the backend at run time: ``"cuda:1"`` is CUDA's device 1, ``"cuda"``
the thread's current CUDA device; ``tpevent.backends()`` lists the types.

The API is ``torch.cuda.Event``'s and ``torch.cuda.Stream``'s (CuPy's and
cuda.core's names too, where they mean the same: python/README.md)::

    >>> s = tpevent.Stream(device='cpu')
    >>> start = s.record_event()          # created with timing enabled
    >>> end = s.record_event()
    >>> start.elapsed_time(end) >= 0.0
    True

A namespace per device type (``tpevent.cuda``, ``tpevent.cpu``, ...) holds the same
classes and functions with the device type defaulted to its own
(``tpevent.cuda.Event()`` is an event of the current CUDA device), for code
written against ``torch.cuda``.

Errors: ``ValueError`` for a bad device string or argument, ``tpevent.Error`` (a
``RuntimeError``) for state and backend errors; both carry ``status``, the name of
the C library's status (``'TP_ERR_TIMING_DISABLED'``), and its message.
``tpevent.NotRecordedError`` (events not recorded) is both, as torch raises
``ValueError`` there.

Everything that runs per call (Event and Stream methods, creation) is C, in the
extension ``tpevent._tpevent``; this file only gathers the names.
"""

import atexit as _atexit
import contextlib as _contextlib
import sys as _sys

from . import _tpevent
from ._tpevent import (
    IPC_HANDLE_SIZE,
    BackendInfo,
    ClockInfo,
    Error,
    Event,
    NotRecordedError,
    Graph,
    Hold,
    Stream,
    __version__,
    backends,
    current_device,
    current_stream,
    default_stream,
    device_clock,
    device_count,
    is_available,
    set_device,
    set_stream,
    synchronize,
)

from ._measure import Comparison, Measurement, compare, do_bench, measure

# The namespaces, one per device type: the extension's, made from the one list of
# types (cmake/TpeventDeviceTypes.cmake), named by value in _tpevent._device_types.
globals().update({_type: getattr(_tpevent, _type) for _type in _tpevent._device_types})

# From here on host functions still pending are dropped, and CUDA/HIP streams are
# no longer destroyed: other libraries may use their handles during teardown.
_atexit.register(_tpevent._at_exit)


def get_elapsed_time(start_event, end_event):
    """The ms from ``start_event``'s record to ``end_event``'s, as CuPy's
    ``cupy.cuda.get_elapsed_time``: ``start_event.elapsed_time(end_event)``.

    >>> s = tpevent.Stream(device='cuda')
    >>> tpevent.get_elapsed_time(s.record_event(), s.record_event()) >= 0.0
    True
    """
    return start_event.elapsed_time(end_event)


def stream(stream):
    """Context manager that makes ``stream`` the current stream of its device.

    Inside the ``with`` block the stream is the calling thread's current stream
    of its device, and its device the current device; on exit both are
    restored. ``None`` does nothing, as in ``torch.cuda.stream``. The same as
    ``with stream:``. Another library's stream (``__cuda_stream__``, a
    ``torch.cuda.Stream``, a CuPy stream) is taken too.

    Example:

    >>> s = tpevent.Stream(device='cuda')
    >>> with tpevent.stream(s):
    ...     tpevent.current_stream('cuda') == s
    True
    """
    if stream is None:
        return _contextlib.nullcontext()
    if isinstance(stream, Stream):
        return stream
    try:
        return Stream.from_external(stream)  # __cuda_stream__, torch's, CuPy's
    except TypeError:
        raise TypeError(f"stream() expects a tpevent.Stream or None, not {type(stream).__name__}") from None


class graph:
    """Context manager that captures the work of its block into ``cuda_graph``.

    As ``torch.cuda.graph``: inside the block ``stream`` (default: a new side
    stream of the current device, as torch makes one) is the current stream of
    its device and captures; records and waits made on it, and on streams that
    join by waiting on events recorded inside, are captured, not run. Then
    ``cuda_graph.replay()`` runs them, as many times as asked. An
    ``Event(external=True)`` recorded inside answers, after each replay, for that
    replay's record.

    Example:

    >>> g = tpevent.Graph()
    >>> done = tpevent.Event('cpu', external=True)
    >>> s = tpevent.Stream('cpu')
    >>> with tpevent.graph(g, stream=s):
    ...     s.is_capturing()
    ...     done.record()
    True
    >>> g.replay(s)
    >>> s.synchronize()
    >>> done.query()
    True
    """

    def __init__(self, cuda_graph, stream=None):
        if not isinstance(cuda_graph, Graph):
            raise TypeError(f"graph() expects a tpevent.Graph, not {type(cuda_graph).__name__}")
        self.cuda_graph = cuda_graph
        self.capture_stream = stream

    def __enter__(self):
        if self.capture_stream is None:
            self.capture_stream = Stream()
        self.cuda_graph.capture_begin(self.capture_stream)
        try:
            self.capture_stream.__enter__()
        except BaseException:
            self.cuda_graph.capture_end()
            raise
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.capture_stream.__exit__(exc_type, exc, traceback)
        if exc_type is None:
            self.cuda_graph.capture_end()
            return False
        try:
            self.cuda_graph.capture_end()  # the capture ends (or is dropped) either way
        except Error:
            pass
        return False


for _namespace in (getattr(_tpevent, _type) for _type in _tpevent._device_types):
    _namespace.stream = stream
    _namespace.get_elapsed_time = get_elapsed_time
    _namespace.graph = graph
    _namespace.Graph = Graph
    # `import tpevent.cuda` and `from tpevent.cuda import Event` work like a submodule.
    _sys.modules[f"{__name__}.{_namespace.__name__.rpartition('.')[2]}"] = _namespace
del _namespace

__all__ = [
    "BackendInfo",
    "ClockInfo",
    "Comparison",
    "Error",
    "Event",
    "Graph",
    "Hold",
    "IPC_HANDLE_SIZE",
    "Measurement",
    "NotRecordedError",
    "Stream",
    "backends",
    "compare",
    "current_device",
    "current_stream",
    "default_stream",
    "device_clock",
    "device_count",
    "do_bench",
    "get_elapsed_time",
    "graph",
    "is_available",
    "measure",
    "range",
    "range_pop",
    "range_push",
    "set_device",
    "set_stream",
    "stream",
    "synchronize",
    "trace",
    "trace_start",
    "trace_stop",
]
__all__ += _tpevent._device_types  # the namespaces


# ------------------------------------------------------------------ timeline

# Bumped by every trace_start and trace_stop made from Python: a range entered in
# one trace (or before any) and left in another pops nothing (its push was not in
# the trace now running).
_trace_generation = 0


def range_push(name, stream=None):
    """Opens a range named ``name`` on ``stream`` (None: the current stream of the
    current device). Does nothing while no trace runs. See ``tpevent.range``."""
    _tpevent._range_push(name, stream)


def range_pop(stream=None):
    """Closes the range pushed last on ``stream`` (None: the current stream of the
    current device). Does nothing while no trace runs; while one runs, a stream with
    no range open is ``ValueError``."""
    _tpevent._range_pop(stream)


def trace_start():
    """Starts collecting a trace (one at a time: ``ValueError`` if one runs)."""
    global _trace_generation
    _tpevent._trace_start()
    _trace_generation += 1


def trace_stop(path):
    """Stops the trace, waits for its records and writes it to ``path`` as Chrome
    trace-event JSON (Perfetto, chrome://tracing, ``python -m tpevent.timeline``).
    A path that cannot be written is ``ValueError``; the trace stops all the same."""
    global _trace_generation
    _trace_generation += 1
    _tpevent._trace_stop(path)


class range:
    """A named range on a stream, as a context manager or a decorator.

    >>> with tpevent.range("matmul"):          # the current stream
    ...     pass
    >>> @tpevent.range("step", stream=None)
    ... def step():
    ...     pass

    While a trace runs (``tpevent.trace``), the range is two timing records on
    the stream (its start from the host clock, its length from the device's own
    clock) and becomes a slice of that stream's track; nested ranges nest. While
    none runs it records nothing. ``stream``: a Stream, another library's stream,
    or None for the current stream of the current device when the block is
    entered.
    """

    __slots__ = ("name", "stream", "_entered")

    def __init__(self, name, stream=None):
        if not isinstance(name, str):
            raise TypeError(f"range name must be a str, not {type(name).__name__}")
        self.name = name
        self.stream = stream
        self._entered = []

    def __enter__(self):
        s = self.stream if self.stream is not None else current_stream()
        _tpevent._range_push(self.name, s)
        self._entered.append((s, _trace_generation))
        return self

    def __exit__(self, *exc):
        s, generation = self._entered.pop()
        if generation == _trace_generation:
            _tpevent._range_pop(s)
        return False

    def __call__(self, func):
        import functools

        name, stream = self.name, self.stream

        @functools.wraps(func)
        def ranged(*args, **kwargs):
            with range(name, stream):
                return func(*args, **kwargs)

        return ranged


@_contextlib.contextmanager
def trace(path):
    """Collects a trace of the ``with`` block and writes it to ``path`` (Chrome
    trace-event JSON) on exit, after waiting for its records::

        with tpevent.trace("run.json"):
            with tpevent.range("step"):
                ...

    Open it in https://ui.perfetto.dev or chrome://tracing, or draw it with
    ``python -m tpevent.timeline run.json -o run.svg``.
    """
    trace_start()
    try:
        yield path
    finally:
        trace_stop(path)
