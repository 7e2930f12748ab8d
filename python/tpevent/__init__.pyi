# Type stubs of the tpevent package (PEP 561): the extension's names, and what
# tpevent/__init__.py adds (tests/python/test_stubs.py compares them with the module).
from typing import Any, Callable, ContextManager, Dict, Iterable, List, Optional, Sequence, TypeVar, Union

_F = TypeVar("_F", bound=Callable[..., Any])

from ._tpevent import (
    IPC_HANDLE_SIZE as IPC_HANDLE_SIZE,
    BackendInfo as BackendInfo,
    ClockInfo as ClockInfo,
    Error as Error,
    Event as Event,
    Graph as Graph,
    Hold as Hold,
    NotRecordedError as NotRecordedError,
    Stream as Stream,
    __version__ as __version__,
    _Namespace,
    _StreamLike,
    backends as backends,
    current_device as current_device,
    current_stream as current_stream,
    default_stream as default_stream,
    device_clock as device_clock,
    device_count as device_count,
    is_available as is_available,
    set_device as set_device,
    set_stream as set_stream,
    synchronize as synchronize,
)

# The namespaces, one per device type (tpevent._tpevent._device_types): tpevent.cuda,
# tpevent.cpu, ... (not written out here, so that a new type needs no line).
def __getattr__(name: str) -> _Namespace: ...


def stream(stream: Optional[_StreamLike]) -> ContextManager[Optional[Stream]]: ...
def get_elapsed_time(start_event: Event, end_event: Event) -> float: ...


class graph:
    cuda_graph: Graph
    capture_stream: Optional[_StreamLike]
    def __init__(self, cuda_graph: Graph, stream: Optional[_StreamLike] = None) -> None: ...
    def __enter__(self) -> "graph": ...
    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> bool: ...

def range_push(name: str, stream: Optional[_StreamLike] = None) -> None: ...
def range_pop(stream: Optional[_StreamLike] = None) -> None: ...
def trace_start() -> None: ...
def trace_stop(path: str) -> None: ...
def trace(path: str) -> ContextManager[str]: ...


class range:
    name: str
    stream: Optional[_StreamLike]
    def __init__(self, name: str, stream: Optional[_StreamLike] = None) -> None: ...
    def __enter__(self) -> "range": ...
    def __exit__(self, *exc: object) -> bool: ...
    def __call__(self, func: _F) -> _F: ...


class Measurement:
    median: float
    mean: float
    min: float
    max: float
    stdev: float
    noise: float
    times: List[float]
    cpu_time: float
    calls: int
    samples: int
    batch: int
    held: bool
    converged: bool
    cold: bool
    note: str
    device: str
    floor: float
    floor_stdev: float
    raw_median: float
    median_low: float
    median_high: float
    sm_clock_mhz: Optional[float]
    sm_clock_max_mhz: Optional[float]
    sm_clock_stretches: int
    sm_clock_low: int
    sm_clock_note: str
    def __init__(self, **fields: Any) -> None: ...
    @property
    def clock_mhz(self) -> Optional[float]: ...
    @property
    def clock_max_mhz(self) -> Optional[float]: ...
    @property
    def throttled(self) -> int: ...
    @property
    def iqr(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]: ...


def measure(fn: Callable[[], Any], stream: Optional[_StreamLike] = None, *, min_time: float = 0.5,
            max_time: float = 15.0, max_noise: float = 0.005, min_samples: int = 10, batch: Optional[int] = None,
            cold: bool = False, hold: bool = True, host: bool = False, clock_threshold: float = 0.75,
            drop_low_clock: bool = False) -> Measurement: ...
class Comparison:
    ratio: float
    low: float
    high: float
    confidence: float
    min_effect: float
    verdict: str
    pairs: int
    a: Measurement
    b: Measurement
    def __init__(self, **fields: Any) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...


def compare(a: Callable[[], Any], b: Callable[[], Any], stream: Optional[_StreamLike] = None, *,
            min_time: float = 0.0, max_time: float = 15.0, min_samples: int = 10, confidence: float = 0.95,
            min_effect: float = 0.005, cold: bool = False, hold: bool = True, host: bool = False,
            clock_threshold: float = 0.75, drop_low_clock: bool = False) -> Comparison: ...
def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Optional[Iterable[Any]] = None,
             quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean", *,
             stream: Optional[_StreamLike] = None, cold: Optional[bool] = None) -> Union[float, List[float]]: ...


__all__: list[str]
