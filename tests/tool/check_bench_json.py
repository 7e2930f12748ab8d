#!/usr/bin/env python3
"""Runs `tpevent bench ... --json` and checks its output against the fields that
tools/README.md documents.

    check_bench_json.py --tool TOOL --iterations N [--expect-device D]... [--only]
                        [-- extra bench arguments]

--expect-device: that device must be in the output; --only: and no other.
"""
import argparse
import json
import math
import re
import subprocess
import sys

OPS = ["record", "record_timing", "query", "synchronize", "stream_wait",
       "elapsed_time", "create_destroy", "record_synchronize"]
TOP_FIELDS = {"version", "iterations", "warmup", "devices"}
DEVICE_FIELDS = {"device", "name", "ops"}
OP_FIELDS = {"op", "median_ns", "p99_ns", "baseline", "baseline_kind",
             "baseline_median_ns", "baseline_p99_ns", "ratio"}
ONE_SECOND_NS = 1_000_000_000

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def refuse_constant(name):
    raise ValueError(f"non-JSON constant {name}")


def check_op(where, op, expected_key, device_type):
    if not check(isinstance(op, dict) and set(op) == OP_FIELDS,
                 f"{where}: fields {sorted(op) if isinstance(op, dict) else op!r}, "
                 f"expected {sorted(OP_FIELDS)}"):
        return
    check(op["op"] == expected_key, f"{where}: op {op['op']!r}, expected {expected_key!r}")
    counts = [check(is_count(op[field]), f"{where}: {field} {op[field]!r} is not a count of ns")
              for field in ("median_ns", "p99_ns", "baseline_median_ns", "baseline_p99_ns")]
    if all(counts):
        check(0 < op["median_ns"] < ONE_SECOND_NS, f"{where}: median_ns {op['median_ns']}")
        check(op["p99_ns"] >= op["median_ns"], f"{where}: p99_ns below median_ns")
        check(op["baseline_p99_ns"] >= op["baseline_median_ns"],
              f"{where}: baseline_p99_ns below baseline_median_ns")
        check(op["baseline_median_ns"] < ONE_SECOND_NS,
              f"{where}: baseline_median_ns {op['baseline_median_ns']}")
    check(isinstance(op["baseline"], str) and op["baseline"] != "",
          f"{where}: baseline {op['baseline']!r}")
    check(op["baseline_kind"] in ("native", "host"),
          f"{where}: baseline_kind {op['baseline_kind']!r}")
    if device_type == "cpu":
        # The CPU has no runtime underneath: the tool's host baselines.
        expected = "pthread_cond_round_trip" if expected_key == "record_synchronize" \
            else "clock_gettime"
        check(op["baseline"] == expected and op["baseline_kind"] == "host",
              f"{where}: cpu baseline {op['baseline']!r}/{op['baseline_kind']!r}, "
              f"expected {expected!r}/'host'")
    elif op["baseline_kind"] == "native":
        check(op["baseline"].startswith(device_type),
              f"{where}: native baseline {op['baseline']!r} is not a {device_type} call")
    ratio = op["ratio"]
    if is_count(op["baseline_median_ns"]) and op["baseline_median_ns"] == 0:
        check(ratio is None, f"{where}: ratio {ratio!r} with a baseline of 0 ns")
    elif check(isinstance(ratio, (int, float)) and not isinstance(ratio, bool),
               f"{where}: ratio {ratio!r} is not a number") and is_count(op["median_ns"]):
        expected_ratio = op["median_ns"] / op["baseline_median_ns"]
        check(math.isclose(ratio, expected_ratio, rel_tol=1e-3, abs_tol=1e-4),
              f"{where}: ratio {ratio} is not median_ns / baseline_median_ns "
              f"= {expected_ratio:.4f}")


def check_device(index, device):
    where = f"devices[{index}]"
    if not check(isinstance(device, dict) and set(device) == DEVICE_FIELDS,
                 f"{where}: fields {sorted(device) if isinstance(device, dict) else device!r}, "
                 f"expected {sorted(DEVICE_FIELDS)}"):
        return None
    name = device["device"]
    match = re.fullmatch(r"(cpu|cuda|hip):(0|[1-9][0-9]*)", name) if isinstance(name, str) \
        else None
    if not check(match, f"{where}: device {name!r} is not a resolved device string"):
        return None
    check(device["name"] is None or (isinstance(device["name"], str) and device["name"]),
          f"{where}: name {device['name']!r}")
    ops = device["ops"]
    if check(isinstance(ops, list) and [o.get("op") if isinstance(o, dict) else o
                                        for o in ops] == OPS,
             f"{where}: ops {ops!r:.200} are not {OPS}"):
        for op_index, op in enumerate(ops):
            check_op(f"{where} ({name}) {OPS[op_index]}", op, OPS[op_index], match.group(1))
    return name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--expect-device", action="append", default=[])
    parser.add_argument("--only", action="store_true")
    parser.add_argument("bench_args", nargs="*")
    args = parser.parse_args()

    command = [args.tool, "bench", "--iterations", str(args.iterations), "--json",
               *args.bench_args]
    run = subprocess.run(command, capture_output=True, text=True, timeout=240)
    print("command:", " ".join(command))
    print("exit:", run.returncode)
    print("--- stdout\n" + run.stdout + "--- stderr\n" + run.stderr + "---")
    if run.returncode != 0:
        print("FAIL: bench exited with", run.returncode)
        return 1

    try:
        report = json.loads(run.stdout, parse_constant=refuse_constant)
    except ValueError as error:
        print("FAIL: stdout is not one JSON document:", error)
        return 1

    version = subprocess.run([args.tool, "--version"], capture_output=True, text=True,
                             timeout=60).stdout.strip()
    if check(isinstance(report, dict) and set(report) == TOP_FIELDS,
             f"top-level fields {sorted(report) if isinstance(report, dict) else report!r}, "
             f"expected {sorted(TOP_FIELDS)}"):
        check(f"tpevent {report['version']}" == version,
              f"version {report['version']!r} differs from --version {version!r}")
        check(isinstance(report["version"], str)
              and re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", report["version"]),
              f"version {report['version']!r}")
        check(report["iterations"] == args.iterations,
              f"iterations {report['iterations']!r}, expected {args.iterations}")
        check(is_count(report["warmup"]) and report["warmup"] <= args.iterations,
              f"warmup {report['warmup']!r}")
        devices = report["devices"]
        if check(isinstance(devices, list) and devices, f"devices {devices!r} is not a list "
                                                          "of at least one device"):
            names = [check_device(i, device) for i, device in enumerate(devices)]
            check(len(set(names)) == len(names), f"a device is listed twice: {names}")
            for expected in args.expect_device:
                check(expected in names, f"device {expected} missing from {names}")
            if args.only:
                check(set(names) == set(args.expect_device),
                      f"devices {names}, expected only {args.expect_device}")

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
