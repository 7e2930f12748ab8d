"""What check_devices_json.py and check_bench_json.py share: running the tool,
reading its JSON strictly, and the checks of the fields both commands print
(version, host, backend versions), as tools/README.md documents them."""
import json
import re
import subprocess

BACKENDS = ["cpu", "cuda", "hip", "opencl", "vulkan"]
HOST_FIELDS = {"system", "release", "machine", "libc", "cpu", "clock_resolution_ns"}
DEVICE_STRING = re.compile(r"(cpu|cuda|hip|opencl|vulkan):(0|[1-9][0-9]*)")

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def refuse_constant(name):
    raise ValueError(f"non-JSON constant {name}")


def run(command, **kwargs):
    """Runs the command, prints what it did; returns the CompletedProcess."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, **kwargs)
    print("command:", " ".join(command))
    print("exit:", result.returncode)
    print("--- stdout\n" + result.stdout + "--- stderr\n" + result.stderr + "---")
    return result


def parse_document(text, python):
    """One JSON object on one line and a newline, which `python -m json.tool` reads
    too; None (failure recorded) otherwise."""
    if not check(text.endswith("\n") and text.count("\n") == 1,
                 "stdout is not one line and a newline"):
        return None
    try:
        document = json.loads(text, parse_constant=refuse_constant)
    except ValueError as error:
        check(False, f"stdout is not one JSON document: {error}")
        return None
    tool = subprocess.run([python, "-m", "json.tool"], input=text, capture_output=True,
                          text=True, timeout=60)
    check(tool.returncode == 0, f"python3 -m json.tool refused it: {tool.stderr}")
    if not check(isinstance(document, dict), f"the document is a {type(document).__name__}"):
        return None
    return document


def tool_version(tool):
    return subprocess.run([tool, "--version"], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def check_version(document, tool):
    version = document.get("version")
    check(isinstance(version, str) and re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version),
          f"version {version!r}")
    check(f"tpevent {version}" == tool_version(tool),
          f"version {version!r} differs from --version {tool_version(tool)!r}")


def check_host(host):
    if not check(isinstance(host, dict) and set(host) == HOST_FIELDS,
                 f"host: {host!r:.200}, expected the fields {sorted(HOST_FIELDS)}"):
        return
    for field in ("system", "release", "machine"):
        check(isinstance(host[field], str) and host[field], f"host.{field} {host[field]!r}")
    for field in ("libc", "cpu"):
        check(host[field] is None or (isinstance(host[field], str) and host[field]),
              f"host.{field} {host[field]!r}")
    check(host["clock_resolution_ns"] is None or is_count(host["clock_resolution_ns"]),
          f"host.clock_resolution_ns {host['clock_resolution_ns']!r}")


def check_versions(where, entry):
    """The library does not report runtime and driver versions yet: null, or a
    string once it does."""
    for field in ("runtime_version", "driver_version"):
        value = entry.get(field)
        check(value is None or (isinstance(value, str) and value), f"{where}: {field} {value!r}")


def devices_report(tool, python):
    """`tpevent devices --json`, parsed (None after a failure)."""
    result = run([tool, "devices", "--json"])
    if not check(result.returncode == 0, f"devices --json exited with {result.returncode}"):
        return None
    return parse_document(result.stdout, python)
