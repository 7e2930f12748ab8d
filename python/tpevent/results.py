"""Saved results, schema "tpevent-results/1" (docs/measure.md, "Saved results"), and
their comparison: what ``python -m tpevent.timeit --json`` and ``tpevent bench
--json`` write, and what ``python -m tpevent.compare OLD.json NEW.json`` reads.

A document is one JSON object: ``schema``, ``tpevent_version``, ``producer``,
``host``, ``devices`` (each with its name, runtime and driver versions, clock) and
``results``, one entry per measured thing: ``name``, ``device``, the median per call
and its confidence interval (``median_ns``, ``median_low_ns``, ``median_high_ns``,
``confidence``), the spread (``stdev_ns``, ``noise``), ``n`` samples, the floor, the
SM clock, and the samples when asked. A producer may add fields of its own beside
these (timeit's flat summary, bench's ``ops``); a reader ignores what it does not know.

The comparison matches entries by name, device and hot/cold, and decides each from
the two medians' intervals: the ratio new/old lies in [new_low / old_high,
new_high / old_low] whenever both intervals hold their medians (each at 95 %, both at
about 90 % for independent runs); ``same`` when that interval lies within 1 ±
min_effect, ``faster``/``slower`` when wholly below/above it, else ``undecided`` --
the rule ``tpevent.compare`` uses within one run.
"""

import json
import math
import platform
import time

from ._measure import format_ns  # the one formatter of times: the table's and Measurement's

SCHEMA = "tpevent-results/1"
CONFIDENCE = 0.95  # of the medians' intervals, tp_measure's and the tool's
MIN_EFFECT = 0.02  # the compare command's default: two runs apart share no drift

VERDICTS = ("faster", "slower", "same", "undecided")


# ------------------------------------------------------------------ writing


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip() or None
    except OSError:
        pass
    return None


def host_info():
    """The machine, as the tool's ``host`` (tools/README.md), and the interpreter."""
    uname = platform.uname()
    libc, libc_version = platform.libc_ver()
    return {
        "system": uname.system or None,
        "release": uname.release or None,
        "machine": uname.machine or None,
        "libc": f"{libc} {libc_version}" if libc == "glibc" else None,
        "cpu": _cpu_model(),
        "clock_resolution_ns": round(time.get_clock_info("monotonic").resolution * 1e9),
        "python": platform.python_version(),
    }


def _cuda_driver_version():
    """The NVIDIA driver's version and the CUDA version it supports ("570.86.15, CUDA
    12.8"), read from the driver's own libraries where they load; None elsewhere (the
    library itself reports no versions yet: tools/README.md)."""
    import ctypes

    parts = []
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        text = ctypes.create_string_buffer(80)
        if nvml.nvmlInit_v2() == 0 and nvml.nvmlSystemGetDriverVersion(text, len(text)) == 0:
            parts.append(text.value.decode())
    except (OSError, AttributeError):
        pass
    try:
        version = ctypes.c_int(0)
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0 and version.value:
            parts.append(f"CUDA {version.value // 1000}.{version.value % 1000 // 10}")
    except (OSError, AttributeError):
        pass
    return ", ".join(parts) or None


def device_info(device):
    """One ``devices`` entry: the name and clock of a device string such as 'cuda:0', and
    on CUDA the driver's version as the driver tells it. The runtime's version is not
    reported (the library does not tell it yet: tools/README.md): null."""
    from . import _tpevent

    info = {"device": device, "name": None, "runtime_version": None, "driver_version": None,
            "clock_resolution_ns": None, "clock_error_ns": None}
    try:
        info["name"] = _tpevent._device_name(device)
        clock = _tpevent.device_clock(device)
        info["clock_resolution_ns"], info["clock_error_ns"] = clock.resolution_ns, clock.error_ns
    except Exception:  # a device that answered a measurement answers these; never fail the output for them
        pass
    if device.startswith("cuda"):
        info["driver_version"] = _cuda_driver_version()
    return info


def measurement_entry(name, measured, *, setup=None, samples=False):
    """A ``results`` entry of a tpevent Measurement (times in ns)."""
    entry = {
        "name": name,
        "device": measured.device,
        "kind": "device",
        "median_ns": measured.median * 1e9,
        "median_low_ns": measured.median_low * 1e9,
        "median_high_ns": measured.median_high * 1e9,
        "confidence": CONFIDENCE,
        "mean_ns": measured.mean * 1e9,
        "min_ns": measured.min * 1e9,
        "max_ns": measured.max * 1e9,
        "stdev_ns": measured.stdev * 1e9,
        "noise": measured.noise,
        "n": measured.samples,
        "calls": measured.calls,
        "batch": measured.batch,
        "floor_ns": measured.floor * 1e9,
        "held": measured.held,
        "converged": measured.converged,
        "cold": measured.cold,
        "note": measured.note,
        "sm_clock_mhz": measured.sm_clock_mhz,
        "sm_clock_max_mhz": measured.sm_clock_max_mhz,
        "sm_clock_stretches": measured.sm_clock_stretches,
        "sm_clock_low": measured.sm_clock_low,
        "sm_clock_note": measured.sm_clock_note,
    }
    if setup is not None:
        entry["setup"] = setup
    if samples:
        entry["samples_ns"] = [t * 1e9 for t in measured.times]
    return entry


def document(producer, results, devices, **fields):
    """A whole document: the schema's fields, then the producer's own ``fields``."""
    from . import __version__

    doc = {
        "schema": SCHEMA,
        "tpevent_version": __version__,
        "producer": producer,
        "host": host_info(),
        "devices": [device_info(device) for device in dict.fromkeys(devices)],
        "results": list(results),
    }
    doc.update(fields)
    return doc


# ------------------------------------------------------------------ reading


class ResultsError(ValueError):
    """A file that is not a tpevent-results/1 document, saying which and why."""


def load(path):
    """The document at ``path`` with its entries checked; ResultsError otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as failure:
        raise ResultsError(f"{path}: {failure}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ResultsError(f"{path}: schema {found!r}, expected {SCHEMA!r}")
    results = doc.get("results")
    if not isinstance(results, list):
        raise ResultsError(f"{path}: no 'results' list")
    for i, entry in enumerate(results):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or \
                not isinstance(entry.get("device"), str):
            raise ResultsError(f"{path}: results[{i}] has no name and device")
    return doc


def _keyed(results):
    """{(name, device, cold, occurrence): entry}: the k-th entry of one name, device and
    hotness (timeit --compare A A writes two) matches the other file's k-th."""
    keyed, seen = {}, {}
    for entry in results:
        base = (entry["name"], entry["device"], bool(entry.get("cold", False)))
        seen[base] = seen.get(base, 0) + 1
        keyed[base + (seen[base],)] = entry
    return keyed


def _interval(entry):
    values = [entry.get(field) for field in ("median_ns", "median_low_ns", "median_high_ns")]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return None
    return values


def verdict(old, new, min_effect):
    """(ratio, low, high, verdict) of new against old, by the medians' intervals."""
    old_interval, new_interval = _interval(old), _interval(new)
    if old_interval is None or new_interval is None or old_interval[0] <= 0:
        return math.nan, math.nan, math.nan, "undecided"
    (old_median, old_low, old_high), (new_median, new_low, new_high) = old_interval, new_interval
    ratio = new_median / old_median
    low = new_low / old_high if old_high > 0 else math.inf
    high = new_high / old_low if old_low > 0 else math.inf
    if low >= 1 - min_effect and high <= 1 + min_effect:
        return ratio, low, high, "same"
    if high < 1 - min_effect:
        return ratio, low, high, "faster"
    if low > 1 + min_effect:
        return ratio, low, high, "slower"
    return ratio, low, high, "undecided"


def _clock_change(old, new):
    """"SM clock A -> B MHz" when both runs read their device's SM clock and it moved by
    more than min_effect's default (a verdict across two clocks is the clock's as much
    as the work's), else None."""
    a, b = old.get("sm_clock_mhz"), new.get("sm_clock_mhz")
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0 and b > 0):
        return None
    return f"SM clock {a:.0f} -> {b:.0f} MHz" if abs(b / a - 1) > MIN_EFFECT else None


def compare(old_doc, new_doc, min_effect=MIN_EFFECT):
    """The rows of a comparison: one per entry of either document, matched ones with
    their verdict, the others 'only in old' / 'only in new'."""
    old, new = _keyed(old_doc["results"]), _keyed(new_doc["results"])
    rows = []
    for key in list(old) + [k for k in new if k not in old]:
        name, device, cold, _ = key
        row = {"name": name, "device": device, "cold": cold, "old": old.get(key), "new": new.get(key)}
        if row["old"] is not None and row["new"] is not None:
            ratio, low, high, row["verdict"] = verdict(row["old"], row["new"], min_effect)
            row["clock"] = _clock_change(row["old"], row["new"])
            # JSON has no NaN or infinity: an unknown bound is null.
            row["ratio"], row["low"], row["high"] = (v if math.isfinite(v) else None for v in (ratio, low, high))
        else:
            row["ratio"] = row["low"] = row["high"] = None
            row["verdict"] = "only in old" if row["new"] is None else "only in new"
            row["clock"] = None
        rows.append(row)
    return rows


def _percent(ratio):
    return "-" if ratio is None or not math.isfinite(ratio) else f"{(ratio - 1) * 100:+.2f} %"


def table(rows, min_effect):
    """The rows as text, nvbench_compare's columns: old and new medians, the change,
    the change's interval, the verdict."""
    header = ("name", "device", "old median", "new median", "change", "interval", "verdict")
    lines = [header]
    for row in rows:
        old, new = row["old"] or {}, row["new"] or {}
        name = row["name"] + (" (cold)" if row["cold"] else "")
        interval = "-" if row["low"] is None else f"[{_percent(row['low'])}, {_percent(row['high'])}]"
        verdict_text = row["verdict"] + (f" ({row['clock']})" if row["clock"] else "")
        lines.append((name, row["device"], format_ns(old.get("median_ns")), format_ns(new.get("median_ns")),
                      _percent(row["ratio"]), interval, verdict_text))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    counts = {v: sum(row["verdict"] == v for row in rows) for v in VERDICTS + ("only in old", "only in new")}
    text.append(f"{len(rows)} entries, min_effect {min_effect * 100:g} %: " +
                ", ".join(f"{count} {v}" for v, count in counts.items() if count or v in VERDICTS))
    return "\n".join(text)

