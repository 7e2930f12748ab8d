#!/usr/bin/env python3
"""Runs `tpevent bench ... --json` and checks its output against the fields that
tools/README.md documents: one JSON object (`python3 -m json.tool` reads it), the
version, host and references, per device its name, timer resolution and the 8 ops
with their baselines, and every backend not run listed with its reason.

    check_bench_json.py --tool TOOL --iterations N [--expect-device D]... [--only]
                        [--expect-batched] [-- extra bench arguments]

--expect-device: that device must be in the output; --only: and no other (the run
names its devices, so every other backend is skipped as not asked for);
--expect-batched: a CPU query (a few ns) must have been timed in batches.
Without --only the backends not run are the unavailable ones, with the reasons that
`tpevent devices --json` gives.
"""
import argparse
import math
import sys

import tool_json
from tool_json import check, is_count, is_number

OPS = ["record", "record_timing", "query", "synchronize", "stream_wait",
       "elapsed_time", "create_destroy", "record_synchronize"]
TOP_FIELDS = {"schema", "tpevent_version", "producer", "version", "host", "iterations", "warmup",
              "references", "devices", "results", "skipped"}
RESULT_FIELDS = {"name", "device", "kind", "median_ns", "median_low_ns", "median_high_ns", "confidence",
                 "mean_ns", "min_ns", "max_ns", "stdev_ns", "noise", "n", "calls", "batch", "p99_ns",
                 "floor_ns", "sm_clock_mhz"}
DEVICE_FIELDS = {"device", "name", "timer_resolution_ns", "runtime_version",
                 "driver_version", "ops"}
OP_FIELDS = {"op", "batch", "median_ns", "p99_ns", "baseline", "baseline_kind",
             "baseline_batch", "baseline_median_ns", "baseline_p99_ns", "ratio", "overhead_ns"}
TRACING_FIELDS = {"untraced_median_ns", "added_ns", "ratio", "raw_untraced_ns", "raw_traced_ns",
                  "raw_ratio", "raw_after_stop_ns"}
REFERENCES = ["clock_gettime", "pthread_cond_round_trip"]
ONE_SECOND_NS = 1_000_000_000
NOT_ASKED = "not asked for (--device)"


def is_tenths(value):
    """Printed to 0.1 ns: what is left past the tenths is float noise."""
    return is_number(value) and abs(value * 10 - round(value * 10)) < 1e-6


def check_summary(where, entry, median, p99):
    if not check(is_tenths(entry[median]) and is_tenths(entry[p99]),
                 f"{where}: {median} {entry[median]!r} / {p99} {entry[p99]!r} are not ns "
                 "to 0.1"):
        return False
    check(0 <= entry[median] < ONE_SECOND_NS, f"{where}: {median} {entry[median]}")
    check(entry[p99] >= entry[median], f"{where}: {p99} below {median}")
    return True


def check_tracing(where, op):
    """--trace: the op's untraced run beside the traced one (the op's own fields), and
    the raw call in both runs and after the trace stopped, as the table prints them."""
    tracing = op["tracing"]
    if not check(isinstance(tracing, dict) and set(tracing) == TRACING_FIELDS,
                 f"{where}: tracing {tracing!r}, expected the fields {sorted(TRACING_FIELDS)}"):
        return
    untraced = tracing["untraced_median_ns"]
    if not check(is_tenths(untraced) and untraced > 0, f"{where}: untraced_median_ns {untraced!r}"):
        return
    check(math.isclose(tracing["added_ns"], op["median_ns"] - untraced, abs_tol=0.11),
          f"{where}: added_ns {tracing['added_ns']!r} is not median_ns - untraced_median_ns")
    # The ratio is of the unrounded medians: each printed one is off by up to 0.05 ns.
    slack = 0.05 / untraced + 0.05 / op["median_ns"] + 1e-3
    check(math.isclose(tracing["ratio"], op["median_ns"] / untraced, rel_tol=slack),
          f"{where}: ratio {tracing['ratio']!r} is not median_ns / untraced_median_ns")
    raw = [tracing[f] for f in ("raw_untraced_ns", "raw_traced_ns", "raw_ratio", "raw_after_stop_ns")]
    if op["baseline_kind"] == "host":
        check(raw == [None] * 4, f"{where}: raw calls {raw!r} with no runtime underneath")
    elif check(all(is_number(v) for v in raw), f"{where}: raw calls {raw!r} are not numbers"):
        check(math.isclose(tracing["raw_traced_ns"], op["baseline_median_ns"], abs_tol=0.11),
              f"{where}: raw_traced_ns is not the traced run's baseline_median_ns")


def check_op(where, op, expected_key, device_type, expect_batched, traced):
    fields = OP_FIELDS | {"tracing"} if traced else OP_FIELDS
    if not check(isinstance(op, dict) and set(op) == fields,
                 f"{where}: fields {sorted(op) if isinstance(op, dict) else op!r}, "
                 f"expected {sorted(fields)}"):
        return
    if traced:
        check_tracing(where, op)
    check(op["op"] == expected_key, f"{where}: op {op['op']!r}, expected {expected_key!r}")
    for field in ("batch", "baseline_batch"):
        check(is_count(op[field]) and 1 <= op[field] <= 1024, f"{where}: {field} {op[field]!r}")
    sums = check_summary(where, op, "median_ns", "p99_ns") and \
        check_summary(where, op, "baseline_median_ns", "baseline_p99_ns")
    if sums:
        check(op["median_ns"] > 0, f"{where}: median_ns {op['median_ns']}")
        check(math.isclose(op["overhead_ns"], op["median_ns"] - op["baseline_median_ns"],
                           abs_tol=0.11),
              f"{where}: overhead_ns {op['overhead_ns']!r} is not median_ns - "
              f"baseline_median_ns = {op['median_ns'] - op['baseline_median_ns']:.1f}")
    check(op["baseline_kind"] in ("native", "host"),
          f"{where}: baseline_kind {op['baseline_kind']!r}")
    ratio = op["ratio"]
    if op["baseline_kind"] == "host":
        # No runtime underneath: an empty call, timed in the same batches.
        check(op["baseline"] == "empty_call", f"{where}: host baseline {op['baseline']!r}")
        check(op["baseline_batch"] == op["batch"],
              f"{where}: baseline batch {op['baseline_batch']} is not the op's {op['batch']}")
        check(ratio is None, f"{where}: ratio {ratio!r} against an empty call")
    else:
        check(isinstance(op["baseline"], str) and op["baseline"].startswith(device_type),
              f"{where}: native baseline {op['baseline']!r} is not a {device_type} call")
        # The backend times its calls one by one: tpevent's are too, alike.
        check(op["batch"] == 1 and op["baseline_batch"] == 1,
              f"{where}: batches {op['batch']}/{op['baseline_batch']} against a native call")
        if sums and op["baseline_median_ns"] == 0:
            check(ratio is None, f"{where}: ratio {ratio!r} with a baseline of 0 ns")
        elif check(is_number(ratio), f"{where}: ratio {ratio!r} is not a number") and sums:
            expected = op["median_ns"] / op["baseline_median_ns"]
            check(math.isclose(ratio, expected, rel_tol=1e-3, abs_tol=1e-4),
                  f"{where}: ratio {ratio} is not median_ns / baseline_median_ns "
                  f"= {expected:.4f}")
    if device_type == "cpu":
        check(op["baseline_kind"] == "host", f"{where}: the CPU has no native baseline")
        if expect_batched and expected_key == "query":
            check(op["batch"] > 1, f"{where}: a CPU query (a few ns) was not batched")


def check_device(index, device, expect_batched, traced):
    where = f"devices[{index}]"
    if not check(isinstance(device, dict) and set(device) == DEVICE_FIELDS,
                 f"{where}: fields {sorted(device) if isinstance(device, dict) else device!r}, "
                 f"expected {sorted(DEVICE_FIELDS)}"):
        return None
    name = device["device"]
    match = tool_json.DEVICE_STRING.fullmatch(name) if isinstance(name, str) else None
    if not check(match, f"{where}: device {name!r} is not a resolved device string"):
        return None
    check(device["name"] is None or (isinstance(device["name"], str) and device["name"]),
          f"{where}: name {device['name']!r}")
    resolution = device["timer_resolution_ns"]
    check(resolution is None or (is_tenths(resolution) and 0 < resolution < ONE_SECOND_NS),
          f"{where}: timer_resolution_ns {resolution!r}")
    tool_json.check_versions(where, device)
    ops = device["ops"]
    if check(isinstance(ops, list) and [o.get("op") if isinstance(o, dict) else o
                                        for o in ops] == OPS,
             f"{where}: ops {ops!r:.200} are not {OPS}"):
        for op_index, op in enumerate(ops):
            check_op(f"{where} ({name}) {OPS[op_index]}", op, OPS[op_index], match.group(1),
                     expect_batched, traced)
    return name


def check_references(references):
    if not check(isinstance(references, list) and
                 [r.get("what") if isinstance(r, dict) else r for r in references] == REFERENCES,
                 f"references {references!r:.200} are not {REFERENCES}"):
        return
    for reference in references:
        where = f"references ({reference['what']})"
        if check(set(reference) == {"what", "batch", "median_ns", "p99_ns"},
                 f"{where}: fields {sorted(reference)}"):
            check(is_count(reference["batch"]) and reference["batch"] >= 1,
                  f"{where}: batch {reference['batch']!r}")
            if check_summary(where, reference, "median_ns", "p99_ns"):
                check(reference["median_ns"] > 0, f"{where}: median_ns 0")


def check_skipped(skipped, benchmarked_types, only, tool):
    """Every backend is either benchmarked or skipped, with its reason."""
    if not check(isinstance(skipped, list), f"skipped {skipped!r} is not a list"):
        return
    reasons = {}
    for index, entry in enumerate(skipped):
        if check(isinstance(entry, dict) and set(entry) == {"backend", "reason"},
                 f"skipped[{index}]: {entry!r}"):
            check(isinstance(entry["reason"], str) and entry["reason"],
                  f"skipped[{index}]: reason {entry['reason']!r}")
            check(entry["backend"] not in reasons, f"{entry['backend']} skipped twice")
            reasons[entry["backend"]] = entry["reason"]
    for backend in tool_json.BACKENDS:
        check((backend in benchmarked_types) != (backend in reasons),
              f"{backend}: benchmarked {backend in benchmarked_types}, skipped "
              f"{backend in reasons}: it must be one of the two")
    if only:
        for backend, reason in reasons.items():
            check(reason == NOT_ASKED, f"{backend}: skipped with {reason!r}, expected "
                                       f"{NOT_ASKED!r}")
        return
    # Every device of every available backend is run: a backend is skipped because
    # the library says it is unavailable, and says so in the same words.
    devices = tool_json.devices_report(tool, sys.executable)
    if devices is None:
        return
    for entry in devices.get("backends", []):
        backend = entry.get("backend")
        if entry.get("available"):
            check(backend not in reasons, f"{backend} is available but skipped: "
                                          f"{reasons.get(backend)!r}")
        else:
            expected = f"unavailable: {entry.get('reason')}"
            check(reasons.get(backend) == expected,
                  f"{backend}: skipped with {reasons.get(backend)!r}, expected {expected!r}")


def check_results(report, iterations):
    """The saved results (docs/measure.md, schema tpevent-results/1): one entry per
    device and op, in the devices' order, each op's median with its interval."""
    check(report["schema"] == "tpevent-results/1", f"schema {report['schema']!r}")
    check(report["tpevent_version"] == report["version"], f"tpevent_version {report['tpevent_version']!r}")
    check(report["producer"] == "tpevent bench", f"producer {report['producer']!r}")
    results = report["results"]
    expected = [(device.get("device"), op["op"]) for device in report["devices"] for op in device.get("ops", [])]
    if not check(isinstance(results, list) and [(r.get("device"), r.get("name")) for r in results] == expected,
                 f"results {results!r} are not one entry per device and op"):
        return
    ops = {(device["device"], op["op"]): op for device in report["devices"] for op in device["ops"]}
    for entry in results:
        where = f"results {entry['device']} {entry['name']}"
        if not check(set(entry) == RESULT_FIELDS, f"{where}: fields {sorted(entry)}"):
            continue
        op = ops[(entry["device"], entry["name"])]
        check(entry["median_low_ns"] <= entry["median_ns"] <= entry["median_high_ns"],
              f"{where}: interval {entry['median_low_ns']} {entry['median_ns']} {entry['median_high_ns']}")
        check(math.isclose(entry["median_ns"], op["median_ns"], abs_tol=0.051), f"{where}: median differs from ops'")
        check(entry["min_ns"] <= entry["median_ns"] <= entry["max_ns"], f"{where}: min/max")
        check(entry["n"] == iterations and entry["batch"] == op["batch"] and entry["calls"] == iterations * op["batch"],
              f"{where}: n {entry['n']}, batch {entry['batch']}, calls {entry['calls']}")
        check(entry["kind"] == "host" and entry["floor_ns"] is None and entry["sm_clock_mhz"] is None,
              f"{where}: kind {entry['kind']!r}, floor {entry['floor_ns']!r}, clock {entry['sm_clock_mhz']!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--expect-device", action="append", default=[])
    parser.add_argument("--only", action="store_true")
    parser.add_argument("--expect-batched", action="store_true")
    parser.add_argument("bench_args", nargs="*")
    args = parser.parse_args()
    traced = any(a == "--trace" or a.startswith("--trace=") for a in args.bench_args)

    command = [args.tool, "bench", "--iterations", str(args.iterations), "--json",
               *args.bench_args]
    result = tool_json.run(command)
    if result.returncode != 0:
        print("FAIL: bench exited with", result.returncode)
        return 1
    report = tool_json.parse_document(result.stdout, sys.executable)
    if report is not None and check(set(report) == TOP_FIELDS,
                                    f"top-level fields {sorted(report)}, "
                                    f"expected {sorted(TOP_FIELDS)}"):
        tool_json.check_version(report, args.tool)
        tool_json.check_host(report["host"])
        check(report["iterations"] == args.iterations,
              f"iterations {report['iterations']!r}, expected {args.iterations}")
        check(is_count(report["warmup"]) and report["warmup"] <= args.iterations,
              f"warmup {report['warmup']!r}")
        check_references(report["references"])
        devices = report["devices"]
        names = []
        if check(isinstance(devices, list) and devices, f"devices {devices!r} is not a list "
                                                          "of at least one device"):
            names = [check_device(i, device, args.expect_batched, traced)
                     for i, device in enumerate(devices)]
            check(len(set(names)) == len(names), f"a device is listed twice: {names}")
            for expected in args.expect_device:
                check(expected in names, f"device {expected} missing from {names}")
            if args.only:
                check(set(names) == set(args.expect_device),
                      f"devices {names}, expected only {args.expect_device}")
        types = {name.split(":")[0] for name in names if name}
        check_skipped(report["skipped"], types, args.only, args.tool)
        check_results(report, args.iterations)

    for failure in tool_json.failures:
        print("FAIL:", failure)
    return 1 if tool_json.failures else 0


if __name__ == "__main__":
    sys.exit(main())
