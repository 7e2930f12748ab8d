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


for _namespace in (cpu, cuda, hip):
    _namespace.stream = stream
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
