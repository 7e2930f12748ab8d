#!/usr/bin/env python3
"""Runs `tpevent devices --json` and checks it against tools/README.md: one JSON
object that `python3 -m json.tool` reads, its fields and their types, each backend
as `tpevent devices` (the table) shows it, and every device of each available
backend with its name and timer resolution.

    check_devices_json.py --tool TOOL [--cpu-devices N]
"""
import argparse
import re
import sys

import tool_json
from tool_json import check

TOP_FIELDS = {"version", "host", "backends", "devices"}
BACKEND_FIELDS = {"backend", "built", "built_in", "module_found", "loaded", "available",
                  "status", "reason", "module_path", "device_count", "runtime_version",
                  "driver_version"}
DEVICE_FIELDS = {"device", "backend", "name", "timer_resolution_ns", "cross_backend_wait", "clock_resolution_ns",
                 "clock_error_ns", "error", "hold_window"}


def table_rows(tool):
    """backend -> (available, reason or where from), from the table."""
    result = tool_json.run([tool, "devices"])
    check(result.returncode == 0, f"devices exited with {result.returncode}")
    rows = {}
    for line in result.stdout.splitlines():
        match = re.fullmatch(r"(cpu|cuda|hip|opencl|vulkan) +(yes|no) +(yes|no) +([0-9]+) +(available \((.*)\)|"
                             r"unavailable: (.*))", line)
        if match:
            rows[match.group(1)] = (match.group(5).startswith("available"),
                                    match.group(6) if match.group(6) is not None
                                    else match.group(7), int(match.group(4)))
    return rows


def check_backend(index, backend, table):
    where = f"backends[{index}]"
    if not check(isinstance(backend, dict) and set(backend) == BACKEND_FIELDS,
                 f"{where}: {backend!r:.300}, expected the fields {sorted(BACKEND_FIELDS)}"):
        return None
    name = backend["backend"]
    check(name == tool_json.BACKENDS[index], f"{where}: backend {name!r}, expected "
                                              f"{tool_json.BACKENDS[index]!r}")
    for field in ("built", "built_in", "module_found", "loaded", "available"):
        check(isinstance(backend[field], bool), f"{where}: {field} {backend[field]!r}")
    check(backend["built"] == (backend["built_in"] or backend["module_found"]),
          f"{where}: built is not built_in or module_found")
    check(tool_json.is_count(backend["device_count"]), f"{where}: device_count {backend['device_count']!r}")
    tool_json.check_versions(where, backend)
    if backend["available"]:
        check(backend["status"] == "TP_OK", f"{where}: available, status {backend['status']!r}")
        check(backend["reason"] is None, f"{where}: available, reason {backend['reason']!r}")
        check(backend["device_count"] >= 1, f"{where}: available with no device")
        check(backend["loaded"], f"{where}: available but not loaded")
    else:
        check(backend["status"] == "TP_ERR_BACKEND_UNAVAILABLE",
              f"{where}: unavailable, status {backend['status']!r}")
        check(isinstance(backend["reason"], str) and backend["reason"],
              f"{where}: unavailable without a reason: {backend['reason']!r}")
        check(backend["device_count"] == 0, f"{where}: unavailable with devices")
    if backend["built_in"]:
        check(backend["module_path"] is None, f"{where}: built in, module_path "
                                              f"{backend['module_path']!r}")
    else:
        check(backend["module_path"] is None or (isinstance(backend["module_path"], str)
                                                 and backend["module_path"].startswith("/")),
              f"{where}: module_path {backend['module_path']!r}")
    row = table.get(name)
    if check(row is not None, f"the table has no {name} row"):
        available, text, count = row
        check(available == backend["available"],
              f"{name}: the table says available={available}, the JSON {backend['available']}")
        check(count == backend["device_count"], f"{name}: the table says {count} devices, "
                                                f"the JSON {backend['device_count']}")
        if not available:
            check(text == backend["reason"], f"{name}: the table's reason {text!r} is not "
                                             f"the JSON's {backend['reason']!r}")
    return backend


def check_device(index, device, backends):
    where = f"devices[{index}]"
    if not check(isinstance(device, dict) and set(device) == DEVICE_FIELDS,
                 f"{where}: {device!r:.300}, expected the fields {sorted(DEVICE_FIELDS)}"):
        return None
    match = tool_json.DEVICE_STRING.fullmatch(device["device"]) \
        if isinstance(device["device"], str) else None
    if not check(match, f"{where}: device {device['device']!r}"):
        return None
    check(device["backend"] == match.group(1), f"{where}: backend {device['backend']!r}")
    backend = backends.get(match.group(1))
    check(backend is not None and backend["available"]
          and int(match.group(2)) < backend["device_count"],
          f"{where}: {device['device']} is not a device of an available backend")
    check(isinstance(device["name"], str) and device["name"],
          f"{where}: name {device['name']!r}")
    resolution = device["timer_resolution_ns"]
    check(resolution is None or (tool_json.is_number(resolution) and 0 < resolution < 1e9),
          f"{where}: timer_resolution_ns {resolution!r}")
    check(device["error"] is None, f"{where}: error {device['error']!r}")
    check(isinstance(device["cross_backend_wait"], str) and device["cross_backend_wait"],
          f"{where}: cross_backend_wait {device['cross_backend_wait']!r}")
    # tp_stream_hold_window (rule 17): unbounded (null) on the CPU, Vulkan (holds wait in
    # the stream's worker) and PoCL (its queues have no bound), a positive count on a GPU
    # and other OpenCL platforms.
    window = device["hold_window"]
    unbounded = device["backend"] in ("cpu", "vulkan") or "Portable Computing Language" in device["name"]
    check(window is None if unbounded else isinstance(window, int) and window > 0,
          f"{where}: hold_window {window!r}")
    # tp_device_clock (rule 13): a positive step and a bound of at least 0 (the CPU's is 0).
    resolution, error = device["clock_resolution_ns"], device["clock_error_ns"]
    check(isinstance(resolution, (int, float)) and resolution > 0, f"{where}: clock_resolution_ns {resolution!r}")
    check(isinstance(error, (int, float)) and 0 <= error < 1e6, f"{where}: clock_error_ns {error!r}")
    if match.group(1) == "cpu":
        check(tool_json.is_number(resolution), f"{where}: a CPU device without a resolution")
        check(device["name"].startswith("CPU"), f"{where}: name {device['name']!r}")
    return device["device"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--cpu-devices", type=int, default=1)
    args = parser.parse_args()

    report = tool_json.devices_report(args.tool, sys.executable)
    table = table_rows(args.tool)
    if report is not None and check(set(report) == TOP_FIELDS,
                                    f"top-level fields {sorted(report)}, "
                                    f"expected {sorted(TOP_FIELDS)}"):
        tool_json.check_version(report, args.tool)
        tool_json.check_host(report["host"])
        backends = {}
        if check(isinstance(report["backends"], list) and len(report["backends"]) == len(tool_json.BACKENDS),
                 f"backends {report['backends']!r:.200} is not a list of {len(tool_json.BACKENDS)}"):
            for index, entry in enumerate(report["backends"]):
                backend = check_backend(index, entry, table)
                if backend is not None:
                    backends[backend["backend"]] = backend
        cpu = backends.get("cpu")
        check(cpu is not None and cpu["available"] and cpu["built_in"]
              and cpu["device_count"] == args.cpu_devices,
              f"cpu: {cpu!r:.200}, expected built in and {args.cpu_devices} devices")
        if check(isinstance(report["devices"], list), "devices is not a list"):
            names = [check_device(i, d, backends) for i, d in enumerate(report["devices"])]
            expected = [f"{name}:{index}" for name in tool_json.BACKENDS if name in backends
                        for index in range(backends[name]["device_count"])]
            check(names == expected, f"devices {names}, expected {expected}")

    for failure in tool_json.failures:
        print("FAIL:", failure)
    return 1 if tool_json.failures else 0


if __name__ == "__main__":
    sys.exit(main())
