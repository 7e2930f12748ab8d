"""python -m tpevent.timeit: ``python -m timeit``'s command line and answer, timed as
the device runs the statement (tpevent.measure).

    python -m tpevent.timeit [-n N] [-r R] [-u UNIT] [-s SETUP]... [-v] [-d DEVICE]
                             [--cold] [--json] [--samples] [STMT ...]

SETUP runs once (-s may be given several times, the lines joined), the STMT
arguments are the lines of one statement (default 'pass'), and both run in one
namespace of their own. The first line of the answer is timeit's ("N loops, best
of R: X usec per loop"), the second tpevent's (the median, its interval, the
device, held, converged); ``_EPILOG`` below, which --help prints, says what each
number is. With --json the answer is one summary dict (``_summary``).

On a CPU device the statement is the work: timeit's own compiled loop runs N
times inside one host function on the stream per sample (``measure_calls``), so
the answer agrees with ``python -m timeit``'s by construction. On a GPU the
statement submits the work, with the measured stream current for tpevent, torch
and CuPy. DEVICE defaults to tpevent's default device (TPEVENT_DEVICE, else CUDA
when available, else the CPU).

The module is ``timeit``, not ``measure``, so that importing it never hides the
function ``tpevent.measure``.
"""

import argparse
import gc
import itertools
import json
import linecache
import math
import os
import re
import sys
import time
import timeit as _timeit
import traceback

import tpevent
from tpevent import _measure, results

SCHEMA = results.SCHEMA

# timeit's units and its precision (main()'s): -u fixes the unit, else each time is
# scaled to the largest unit it reaches; 3 significant digits, one more per -v
# after the first.
_UNITS = {"nsec": 1e-9, "usec": 1e-6, "msec": 1e-3, "sec": 1.0}
_PRECISION = 3
_MIN_SAMPLES = 10  # tpevent.measure's default, which -r replaces

_EPILOG = """\
output:
  The first line is python -m timeit's: "N loops, best of R: X usec per loop".
  N is the loops (calls) per sample: -n, else chosen by tpevent so that a
  sample lasts well above the clock's resolution. The samples (at least -r,
  default %d, more until the median's interval reaches --max-noise after
  --min-time of timed device time, or --max-time passes) are grouped, in order,
  into R repeats of at least 0.2 s each, as timeit's autorange makes them; X is
  the fastest repeat's mean time per loop (timeit's "best of R"), in timeit's
  units and digits.
  The second line is tpevent's: the samples' median per loop, its 95 %%
  confidence interval, the device, "held" (every sample ran behind a hold of
  the stream, so its loops ran back to back) or "not held", "cold" (--cold: the
  last-level cache flushed before each call; then N is 1) or "hot", and
  "converged" (the interval reached --max-noise before --max-time) or not. A
  note, when tpevent has one, follows on a line of its own.

where the statement runs:
  On a CPU device the statement is the work: each sample is one host function
  on the stream, run on the stream's host thread, that runs timeit's own
  compiled loop N times (gc off, as timeit's), so one dispatch serves the batch
  and the protocol's floor, measured on the same stream, is subtracted. SETUP
  runs once, before the first sample; its names are the loop's locals, as in
  timeit. On a GPU the statement submits the work (kernels, copies) with the
  measured stream current for tpevent, torch and CuPy; the time is the
  device's. A statement that puts no work on the measured stream (on a GPU,
  Python alone) ends with an error line on stderr and exit status 1.

  -p/--process is refused: tpevent times the stream's work by the device's
  clock, never the process's CPU time (use python -m timeit -p for that).

exit status: 0; 1 when the statement raises or puts no work on the stream (the
traceback or the error on stderr); 2 for a bad option.
""" % (
    _MIN_SAMPLES
)


def _finite(text):
    """A finite number >= 0 for the time and noise options (nan would never end)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number >= 0")
    return value


def _count(least):
    """An integer >= least, for -n (0: chosen, as timeit's) and -r."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{text!r}: it must be >= {least}")
        return value

    return parse


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tpevent.timeit",
        description="Time a Python statement's work as the device runs it (tpevent.measure), "
        "with python -m timeit's options and answer.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    timeit_options = parser.add_argument_group("python -m timeit's options")
    timeit_options.add_argument("-n", "--number", type=_count(0), default=0, metavar="N",
                                help="loops per sample (default 0: chosen by tpevent)")
    timeit_options.add_argument("-r", "--repeat", type=_count(1), metavar="R",
                                help=f"samples, at least (default {_MIN_SAMPLES})")
    timeit_options.add_argument("-u", "--unit", choices=tuple(_UNITS),
                                help="the unit of the times (default: scaled to each)")
    timeit_options.add_argument("-s", "--setup", action="append", default=[], metavar="S",
                                help="run once first (default 'pass'; may be repeated, the lines joined)")
    timeit_options.add_argument("-v", "--verbose", action="count", default=0,
                                help="print the measurement's details first; repeated, one more digit")
    timeit_options.add_argument("-p", "--process", action="store_true",
                                help="refused: tpevent times the device's clock, not the process's CPU time")
    own = parser.add_argument_group("tpevent's options")
    own.add_argument("-d", "--device", help="the device (default: tpevent's default device)")
    own.add_argument("--cold", action="store_true", help="flush the device's last-level cache before each call")
    own.add_argument("--json", action="store_true", help="print a summary as one JSON object (schema %s, docs/measure.md: python -m "
                          "tpevent.compare reads it)" % SCHEMA)
    own.add_argument("--name", help="the --json entry's name, by which python -m tpevent.compare matches two "
                                     "runs (default: the statement; with --compare, NAME/a and NAME/b)")
    own.add_argument("--samples", action="store_true",
                     help="add each sample's time per loop (seconds): with --json as \"times\", else one per line")
    own.add_argument("--min-time", type=_finite, default=1.0,
                     help="seconds of timed device time (default 1: five repeats of 0.2 s, as timeit's)")
    own.add_argument("--max-time", type=_finite, default=15.0, help="seconds of wall clock at most (default 15)")
    own.add_argument("--max-noise", type=_finite, default=0.005,
                     help="the median's interval to reach, relative (default 0.005)")
    own.add_argument("--compare", action="store_true",
                     help="time two statements, A and B (the two arguments), in alternating stretches and say "
                          "whether B is faster than A (tpevent.compare): its verdict, ratio and interval")
    parser.add_argument("stmt", nargs="*", default=["pass"], help="the statement, one line per argument")
    return parser


# timeit.template's loop (CPython's Lib/timeit.py), in a generator so that the setup
# runs once and the statement still reads its names as the loop's locals. Each send
# of an iterator runs the loop over it and answers its time, as timeit's inner().
_TEMPLATE = """
def inner(_timer):
    {setup}
    _it = yield
    while True:
        _t0 = _timer()
        for _i in _it:
            {stmt}
            pass
        _t1 = _timer()
        _it = yield _t1 - _t0
"""
_SOURCE_NAME = "<timeit-src>"  # timeit's, so that tracebacks read as its do


class _Loop:
    """``run_calls(n)`` for measure_calls: timeit's compiled loop, n loops of the
    statement with gc off (as ``timeit.Timer.timeit``), on whichever thread calls it."""

    def __init__(self, stmt, setup, namespace):
        for source in (stmt, setup, setup + "\n" + stmt):  # timeit's checks: each alone, then together
            compile(source, _SOURCE_NAME, "exec")
        source = _TEMPLATE.format(stmt=_timeit.reindent(stmt, 12), setup=_timeit.reindent(setup, 4))
        linecache.cache[_SOURCE_NAME] = (len(source), None, source.split("\n"), _SOURCE_NAME)
        made = {}
        exec(compile(source, _SOURCE_NAME, "exec"), namespace, made)
        self._loop = made["inner"](time.perf_counter)
        next(self._loop)  # the setup, here, before any sample

    def __call__(self, calls):
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            return self._loop.send(itertools.repeat(None, calls))
        finally:
            if gc_was_on:
                gc.enable()


def _submitter(stmt, setup, namespace):
    """The work function on a GPU: the statement submits the device's work."""
    exec(compile(setup, "<setup>", "exec"), namespace)
    code = compile(stmt, "<stmt>", "exec")
    return lambda: exec(code, namespace)


def _run(options, stream, stmt, setup):
    """The Measurement of the statement on ``stream``, as the options say."""
    settings = {
        "min_time": options.min_time,
        "max_time": options.max_time,
        "max_noise": options.max_noise,
        "min_samples": options.repeat or _MIN_SAMPLES,
        "batch": options.number or None,
        "cold": options.cold,
    }
    namespace = {"__name__": "__tpevent_timeit__"}
    if stream.device.startswith("cpu"):
        return _measure.measure_calls(_Loop(stmt, setup, namespace), stream, **settings)
    return tpevent.measure(_submitter(stmt, setup, namespace), stream, **settings)


def _compare(options, stream, stmt_a, stmt_b, setup):
    """The Comparison of B against A on ``stream``, each with the setup in a namespace
    of its own."""
    settings = {"max_time": options.max_time, "min_samples": options.repeat or _MIN_SAMPLES, "cold": options.cold}
    sides = [(stmt, {"__name__": "__tpevent_timeit__"}) for stmt in (stmt_a, stmt_b)]
    if stream.device.startswith("cpu"):
        return _measure.compare_calls(*(_Loop(stmt, setup, ns) for stmt, ns in sides), stream, **settings)
    return tpevent.compare(*(_submitter(stmt, setup, ns) for stmt, ns in sides), stream, **settings)


def _compare_main(options, stream, setup):
    """--compare: the verdict, then each side's tpevent line (or --json: the comparison)."""
    stmt_a, stmt_b = options.stmt
    try:
        compared = _compare(options, stream, stmt_a, stmt_b, setup)
    except Exception:
        traceback.print_exc()
        return 1
    if options.json:
        names = (f"{options.name}/a", f"{options.name}/b") if options.name else (stmt_a, stmt_b)
        entries = [results.measurement_entry(name, side, setup=setup, samples=options.samples)
                   for name, side in zip(names, (compared.a, compared.b))]
        summary = results.document("tpevent.timeit --compare", entries, [compared.a.device],
                                   stmt_a=stmt_a, stmt_b=stmt_b, setup=setup)
        summary.update(compared.to_dict())
        for side in ("a", "b"):
            if not options.samples:
                del summary[side]["times"]
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    precision = _PRECISION + max(options.verbose - 1, 0)
    print(repr(compared))
    for name, measured in (("a", compared.a), ("b", compared.b)):
        print(f"{name}: {_tpevent_line(measured, options.unit, precision)}")
    return 0


def _no_work(measured):
    """tpevent found no work of the statement on the stream (its note says so)."""
    return not measured.converged and re.search(r"\bno work\b", measured.note, re.IGNORECASE) is not None


def _unit_for(seconds, unit):
    """timeit's choice: -u's unit, else the largest unit the time reaches (nsec below)."""
    if unit is not None:
        return unit
    return max((name for name in _UNITS if seconds >= _UNITS[name]), key=_UNITS.get, default="nsec")


def _format_time(seconds, unit, precision):
    """timeit's format_time."""
    unit = _unit_for(seconds, unit)
    return "%.*g %s" % (precision, seconds / _UNITS[unit], unit)


def _loops(measured):
    """Loops per sample: the batch hot, one call cold."""
    return 1 if measured.cold else measured.batch


# A repeat of python -m timeit lasts at least this (its autorange's 0.2 s).
_REPEAT_SECONDS = 0.2


def _best_of_repeats(measured):
    """timeit's statistic: the samples, in order, grouped into repeats of at least
    0.2 s (its autorange), each repeat's time per loop its mean; the least of
    them, and how many. The least of ~1,000 short samples read 5-9 % below timeit's
    best on a shared machine (a different statistic: timeit's own loops, timed
    1 ms at a time, did the same); the medians agreed within 1-4 %."""
    times, loops = measured.times, _loops(measured)
    if not times:
        return measured.min, measured.samples
    means, total, count = [], 0.0, 0
    for t in times:
        total, count = total + t, count + 1
        if total * loops >= _REPEAT_SECONDS:
            means.append(total / count)
            total, count = 0.0, 0
    if count and not means:
        means.append(total / count)
    return min(means), len(means)


def _timeit_line(measured, unit, precision):
    loops = _loops(measured)
    best, repeats = _best_of_repeats(measured)
    return "%d loop%s, best of %d: %s per loop" % (
        loops, "s" if loops != 1 else "", repeats, _format_time(best, unit, precision))


def _tpevent_line(measured, unit, precision):
    unit = _unit_for(measured.median, unit)  # the interval in the median's unit
    median = _format_time(measured.median, unit, precision)
    scale = _UNITS[unit]
    low, high = measured.median_low / scale, measured.median_high / scale
    interval = " (95 %% interval %.*g to %.*g %s)" % (precision, low, precision, high, unit)
    facts = [
        measured.device,
        "held" if measured.held else "not held",
        "cold" if measured.cold else "hot",
        "converged" if measured.converged else "not converged",
    ]
    if measured.sm_clock_mhz:  # where the device's SM clock was read (CUDA)
        facts.insert(3, f"SM {measured.sm_clock_mhz:.0f} MHz" +
                     (f" ({measured.sm_clock_low} stretches low)" if measured.sm_clock_low else ""))
    return f"tpevent: median {median} per loop{interval}, {', '.join(facts)}"


def _details(measured, unit, precision):
    """-v's lines, before the answer (as timeit's -v prints its raw times first)."""
    def seconds(value):
        return _format_time(value, unit, precision)

    return [
        f"{measured.samples} samples of {_loops(measured)} loops ({measured.calls} timed calls), "
        f"noise {measured.noise * 100:.{precision}g} %",
        f"per loop: mean {seconds(measured.mean)}, stdev {seconds(measured.stdev)}, "
        f"min {seconds(measured.min)}, max {seconds(measured.max)}"
        + (f"; host time in fn {seconds(measured.cpu_time)}" if measured.cpu_time > 0 else ""),
        f"floor {seconds(measured.floor)} ± {seconds(measured.floor_stdev)} per sample, "
        f"{seconds(measured.floor / _loops(measured))} per loop taken off; median before it {seconds(measured.raw_median)}",
        "",
    ]


def _summary(measured, stmt, setup, with_samples, name=None):
    """--json's object: the saved results' document (tpevent.results: the version, the
    host, the device, one entry named by the statement), then timeit's numbers and
    Measurement.to_dict()'s fields (its per-sample "times" only with --samples)."""
    entry = results.measurement_entry(name or stmt, measured, setup=setup, samples=with_samples)
    best, repeats = _best_of_repeats(measured)
    summary = results.document(
        "tpevent.timeit", [entry], [measured.device],
        stmt=stmt,
        setup=setup,
        number=_loops(measured),
        repeat=repeats,
        best=best,
    )
    summary.update(measured.to_dict())
    if not with_samples:
        del summary["times"]
    return summary


def main(argv=None):
    """python -m tpevent.timeit: python -m timeit's command line, timed by tpevent.measure."""
    parser = _parser()
    options = parser.parse_args(argv)
    if options.process:
        parser.error("argument -p/--process: tpevent times the stream's work by the device's clock, "
                     "not the process's CPU time; use python -m timeit -p for that")
    if options.max_time == 0:
        parser.error("argument --max-time: it must be > 0")
    try:
        stream = tpevent.Stream(options.device if options.device is not None else tpevent.current_device())
    except (ValueError, tpevent.Error) as failure:  # argparse's way: one line, exit 2
        parser.error(f"argument -d/--device: {failure}")
    setup = "\n".join(options.setup) or "pass"
    sys.path.insert(0, os.curdir)  # as timeit: the setup may import the current directory's modules
    if options.compare:
        if len(options.stmt) != 2:
            parser.error("argument --compare: give two statements, A and B")
        return _compare_main(options, stream, setup)
    stmt = "\n".join(options.stmt) or "pass"
    try:
        measured = _run(options, stream, stmt, setup)
    except Exception:  # timeit's way: the traceback, exit 1
        traceback.print_exc()
        return 1
    if _no_work(measured):
        print(f"{parser.prog}: error: {measured.note}", file=sys.stderr)
        return 1
    precision = _PRECISION + max(options.verbose - 1, 0)
    if options.json:
        print(json.dumps(_summary(measured, stmt, setup, options.samples, options.name), ensure_ascii=False))
        return 0
    if options.verbose:
        print("\n".join(_details(measured, options.unit, precision)))
    print(_timeit_line(measured, options.unit, precision))
    print(_tpevent_line(measured, options.unit, precision))
    if measured.note:
        print(f"note: {measured.note}")
    if options.samples:
        print("\n".join(repr(t) for t in measured.times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
