"""python -m tpevent.timeit: a statement timed as the device runs it (tpevent.measure).

    python -m tpevent.timeit [-d DEVICE] [-s SETUP] [--cold] [--json] STMT...

It reads as ``python -m timeit`` does: SETUP runs once (-s may be given several
times, the lines joined), the STMT arguments are the lines of one statement
(default 'pass'), and both run in one namespace of their own. On a GPU the
statement submits the work (``-s "import torch; a = torch.rand(4096, 4096,
device='cuda')" "a @ a"``); it runs with the measured stream current for tpevent,
torch and CuPy. On a CPU device the statement is the work itself: each call runs
it as a host function on the stream, which is how CPU work gets on a stream.
The answer is the Measurement's repr (and its note), or with --json its
``to_dict()``. DEVICE defaults to tpevent's default device (TPEVENT_DEVICE, else
CUDA when available, else the CPU).

The module is ``timeit``, not ``measure``, so that importing it never hides the
function ``tpevent.measure``.
"""

import argparse
import json
import math
import sys

import tpevent


def _finite(text):
    """A finite number >= 0 for the time and noise options (nan would never end)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number >= 0")
    return value


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tpevent.timeit",
        description="Time a Python statement's work as the device runs it (tpevent.measure).",
    )
    parser.add_argument("-d", "--device", help="the device (default: tpevent's default device)")
    parser.add_argument("-s", "--setup", action="append", default=[], help="run once first (may be repeated)")
    parser.add_argument("--cold", action="store_true", help="flush the device's last-level cache before each call")
    parser.add_argument("--json", action="store_true", help="print the measurement as JSON")
    parser.add_argument("--min-time", type=_finite, default=0.5, help="seconds of timed device time (default 0.5)")
    parser.add_argument("--max-time", type=_finite, default=15.0, help="seconds of wall clock at most (default 15)")
    parser.add_argument("--max-noise", type=_finite, default=0.005, help="relative noise to reach (default 0.005)")
    parser.add_argument("stmt", nargs="*", default=["pass"], help="the statement, one line per argument")
    return parser


class _HostStatement:
    """The statement as a host function on a CPU stream. An exception there cannot
    reach the caller, who has moved on: it is kept and raised by the next call."""

    def __init__(self, code, namespace, stream):
        self._code = code
        self._namespace = namespace
        self._stream = stream
        self._failure = None

    def _run(self):
        if self._failure is None:
            try:
                exec(self._code, self._namespace)
            except BaseException as failure:  # raised again on the caller's thread
                self._failure = failure

    def raise_failure(self):
        if self._failure is not None:
            raise self._failure

    def __call__(self):
        self.raise_failure()
        self._stream.launch_host_func(self._run)


def _work(stmt, setup, stream):
    """The work function: the compiled statement, on a CPU device as a host function."""
    namespace = {"__name__": "__tpevent_timeit__"}
    exec(compile(setup, "<setup>", "exec"), namespace)
    code = compile(stmt, "<stmt>", "exec")
    if stream.device.startswith("cpu"):
        return _HostStatement(code, namespace, stream)
    return lambda: exec(code, namespace)


def main(argv=None):
    parser = _parser()
    options = parser.parse_args(argv)
    if options.max_time == 0:
        parser.error("argument --max-time: it must be > 0")
    try:
        stream = tpevent.Stream(options.device if options.device is not None else tpevent.current_device())
    except (ValueError, tpevent.Error) as failure:  # argparse's way: one line, exit 2
        parser.error(f"argument -d/--device: {failure}")
    work = _work("\n".join(options.stmt), "\n".join(options.setup) or "pass", stream)
    measured = tpevent.measure(
        work,
        stream,
        min_time=options.min_time,
        max_time=options.max_time,
        max_noise=options.max_noise,
        cold=options.cold,
    )
    if isinstance(work, _HostStatement):
        stream.synchronize()
        work.raise_failure()
    print(json.dumps(measured.to_dict(), ensure_ascii=False) if options.json else measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
