"""tpevent: device events and streams over CUDA, HIP and a CPU reference backend.

One API for marking points in streams of device work, waiting for them, ordering
streams against each other and timing the work between two points. The device
string picks the backend at run time: ``"cpu"``, ``"cuda:1"``, ``"hip:0"``.

The API is the seed's (TensorPlay's, itself modelled on ``torch.cuda.Event``)::

    >>> s = tpevent.Stream(device='cpu')
    >>> start = s.record_event()          # created with timing enabled
    >>> end = s.record_event()
    >>> start.elapsed_time(end) >= 0.0
    True

``tpevent.cuda``, ``tpevent.hip`` and ``tpevent.cpu`` hold the same classes and
functions with the device type defaulted to theirs (``tpevent.cuda.Event()`` is an
event of the current CUDA device), for code written against ``torch.cuda``.

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

cpu = _tpevent.cpu
cuda = _tpevent.cuda
hip = _tpevent.hip

# From here on host functions still pending are dropped, and CUDA/HIP streams are
# no longer destroyed: other libraries may use their handles during teardown.
_atexit.register(_tpevent._at_exit)


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


for _namespace in (cpu, cuda, hip):
    _namespace.stream = stream
    _namespace.graph = graph
    _namespace.Graph = Graph
    # `import tpevent.cuda` and `from tpevent.cuda import Event` work like a submodule.
    _sys.modules[f"{__name__}.{_namespace.__name__.rpartition('.')[2]}"] = _namespace
del _namespace

__all__ = [
    "BackendInfo",
    "ClockInfo",
    "Error",
    "Event",
    "IPC_HANDLE_SIZE",
    "NotRecordedError",
    "Stream",
    "backends",
    "cpu",
    "cuda",
    "current_device",
    "current_stream",
    "default_stream",
    "device_clock",
    "device_count",
    "hip",
    "is_available",
    "set_device",
    "set_stream",
    "stream",
    "synchronize",
]
