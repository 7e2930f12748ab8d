#!/usr/bin/env python3
"""Per-call time of event operations from Python: tpevent against torch.cuda.Event
and cupy.cuda.Event, in one process.

For each operation (record, query, synchronize, wait, elapsed_time, creation) and
each implementation that is available here, times `--calls` calls written as a user
writes them (`e.record()`, `e.wait(s2)`), with timeit (the loop is compiled, GC is
off), `--repeats` times, and prints the median per call in ns. The implementations
take turns within each operation (run 1 of each, then run 2 of each, ...), so that
a shared machine's slow spell falls on all of them alike rather than on whichever
ran then (on an H100, tpevent's query read 373 ns in one spell and 177-305 ns in
others when each implementation ran all its runs in one go). The loop's own cost is
in every number; the "empty loop" row says how much it is.

tpevent runs on "cuda" where the CUDA backend is available and on "cpu" always.
PyTorch and CuPy run where they are installed and see a CUDA device; what is
missing is skipped, and the table says why. Nothing is asserted: this prints.

    PYTHONPATH=build/lib/python3.12/site-packages python3 bench/python/bench_events.py
"""

import argparse
import platform
import statistics
import sys
import timeit

OPS = [
    ("record", "record, timing off"),
    ("record_timing", "record, timing on"),
    ("query", "query, completed"),
    ("synchronize", "synchronize, completed"),
    ("wait", "stream wait"),
    ("elapsed", "elapsed_time"),
    ("create", "create + destroy"),
]


class Unavailable(Exception):
    """An implementation cannot run here; the message says why."""


def tpevent_setup(device_type):
    try:
        import tpevent
    except ImportError as error:
        raise Unavailable(f"cannot import tpevent: {error}") from None
    if not tpevent.is_available(device_type):
        reason = next(b.reason for b in tpevent.backends() if b.name == device_type)
        raise Unavailable(f"{device_type} backend unavailable: {reason}")
    namespace = getattr(tpevent, device_type)
    e = namespace.Event()
    et = namespace.Event(enable_timing=True)
    s2 = namespace.Stream()
    e1, e2 = namespace.Event(enable_timing=True), namespace.Event(enable_timing=True)
    for event in (e, et, e1, e2):
        event.record()
    e2.synchronize()
    e.synchronize()
    names = {"e": e, "et": et, "e1": e1, "e2": e2, "s2": s2, "Event": namespace.Event}
    statements = {
        "record": "e.record()",
        "record_timing": "et.record()",
        "query": "e.query()",
        "synchronize": "e.synchronize()",
        "wait": "e.wait(s2)",
        "elapsed": "e1.elapsed_time(e2)",
        "create": "Event()",
    }
    return names, statements, lambda: namespace.synchronize()


def torch_setup():
    try:
        import torch
    except ImportError as error:
        raise Unavailable(f"not installed ({error})") from None
    if not torch.cuda.is_available():
        raise Unavailable("torch.cuda.is_available() is False")
    e = torch.cuda.Event()
    et = torch.cuda.Event(enable_timing=True)
    s2 = torch.cuda.Stream()
    e1, e2 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for event in (e, et, e1, e2):
        event.record()
    torch.cuda.synchronize()
    names = {"e": e, "et": et, "e1": e1, "e2": e2, "s2": s2, "Event": torch.cuda.Event}
    statements = {
        "record": "e.record()",
        "record_timing": "et.record()",
        "query": "e.query()",
        "synchronize": "e.synchronize()",
        "wait": "e.wait(s2)",
        "elapsed": "e1.elapsed_time(e2)",
        "create": "Event()",
    }
    return names, statements, torch.cuda.synchronize


def cupy_setup():
    try:
        import cupy
    except ImportError as error:
        raise Unavailable(f"not installed ({error})") from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise Unavailable("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise Unavailable(f"no CUDA device ({error})") from None
    e = cupy.cuda.Event(disable_timing=True)
    et = cupy.cuda.Event()
    s2 = cupy.cuda.Stream(non_blocking=True)
    e1, e2 = cupy.cuda.Event(), cupy.cuda.Event()
    for event in (e, et, e1, e2):
        event.record()
    cupy.cuda.Device().synchronize()
    names = {
        "e": e, "et": et, "e1": e1, "e2": e2, "s2": s2,
        "Event": cupy.cuda.Event, "get_elapsed_time": cupy.cuda.get_elapsed_time,
    }
    statements = {
        "record": "e.record()",
        "record_timing": "et.record()",
        "query": "e.done",  # CuPy's query is a property
        "synchronize": "e.synchronize()",
        "wait": "s2.wait_event(e)",
        "elapsed": "get_elapsed_time(e1, e2)",
        "create": "Event(disable_timing=True)",  # creates the CUDA event at once
    }
    return names, statements, lambda: cupy.cuda.Device().synchronize()


def warm_up(statement, names, calls, settle):
    timeit.Timer(statement, globals=names).timeit(max(1, calls // 10))  # pools, lazy native events, caches
    settle()


def time_once(statement, names, calls, settle):
    ns = timeit.Timer(statement, globals=names).timeit(calls) / calls * 1e9
    settle()  # records queued by this run do not slow the next
    return ns


def set_up(setups):
    """[(label, names, statements, settle)] of the implementations that run here, and
    {label: reason} of those that do not."""
    ready, unavailable = [], {}
    for label, setup in setups:
        try:
            names, statements, settle = setup()
        except Unavailable as reason:
            unavailable[label] = str(reason)
            continue
        except Exception as error:  # noqa: BLE001 - a broken install is reported, not fatal
            unavailable[label] = f"setup failed: {type(error).__name__}: {error}"
            continue
        ready.append((label, names, statements, settle))
    return ready, unavailable


def measure_interleaved(ready, calls, repeats):
    """{label: {op: ns}}: for each operation, the implementations take turns run by run;
    the median of each one's runs (or the error it raised)."""
    results = {label: {} for label, *_ in ready}
    for op, _ in OPS:
        samples = {}
        for label, names, statements, settle in ready:
            try:
                warm_up(statements[op], names, calls, settle)
                samples[label] = []
            except Exception as error:  # noqa: BLE001
                results[label][op] = f"{type(error).__name__}: {error}"
        for _ in range(repeats):
            for label, names, statements, settle in ready:
                if label not in samples:
                    continue
                try:
                    samples[label].append(time_once(statements[op], names, calls, settle))
                except Exception as error:  # noqa: BLE001
                    results[label][op] = f"{type(error).__name__}: {error}"
                    del samples[label]
        for label, values in samples.items():
            results[label][op] = statistics.median(values)
        print(f"  {op:<14} done", file=sys.stderr)
    return results


def format_cell(value):
    if isinstance(value, float):
        return f"{value:,.0f}"
    return "error"


def print_table(columns, calls, repeats, empty_loop):
    print(f"Per-call time from Python, ns (median of {repeats} interleaved runs of {calls} calls;"
          f" Python {platform.python_version()}; the loop itself: {empty_loop:.0f} ns)")
    print()
    measured = [(label, result) for label, result in columns if isinstance(result, dict)]
    header = f"{'operation':<24}" + "".join(f"{label:>20}" for label, _ in measured)
    torch_result = dict(columns).get("torch.cuda.Event")
    tp_cuda = dict(columns).get("tpevent cuda")
    compare = isinstance(torch_result, dict) and isinstance(tp_cuda, dict)
    if compare:
        header += f"{'torch / tpevent':>18}"
    print(header)
    print("-" * len(header))
    for op, title in OPS:
        row = f"{title:<24}" + "".join(f"{format_cell(result[op]):>20}" for _, result in measured)
        if compare and isinstance(tp_cuda[op], float) and isinstance(torch_result[op], float):
            row += f"{torch_result[op] / tp_cuda[op]:>17.2f}x"
        print(row)
    errors = [(label, op, result[op]) for label, result in measured for op, _ in OPS
              if not isinstance(result[op], float)]
    for label, op, message in errors:
        print(f"error: {label} {op}: {message}")
    for label, result in columns:
        if not isinstance(result, dict):
            print(f"skipped: {label}: {result}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50000, help="calls per run (default 50000)")
    parser.add_argument("--repeats", type=int, default=7, help="runs per operation (default 7)")
    parser.add_argument("--quick", action="store_true", help="a few calls, to check the script runs")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.repeats = 200, 2

    setups = [
        ("tpevent cuda", lambda: tpevent_setup("cuda")),
        ("torch.cuda.Event", torch_setup),
        ("cupy.cuda.Event", cupy_setup),
        ("tpevent cpu", lambda: tpevent_setup("cpu")),
    ]
    ready, unavailable = set_up(setups)
    results = measure_interleaved(ready, args.calls, args.repeats)
    columns = [(label, results.get(label, unavailable.get(label))) for label, _ in setups]
    empty_loop = statistics.median(time_once("pass", {}, args.calls, lambda: None) for _ in range(args.repeats))
    print_table(columns, args.calls, args.repeats, empty_loop)
    # The CPU column must exist wherever tpevent is built; anything else may be absent.
    return 0 if isinstance(dict(columns)["tpevent cpu"], dict) else 1


if __name__ == "__main__":
    sys.exit(main())
