"""Runs a trace scenario (trace_scenarios.c) and checks the Chrome trace it wrote
with Python's json module: the format's rules and Perfetto's (trace_rules.py: every
record of the format, slices nested on each track, every flow bound to its own
slices), ranges written in the order of their starts, each wait's flow from the
recording stream to the waiting one, tracks named as the program named them, and
(--svg) python -m tpevent.timeline draws it as well-formed SVG, one rect per slice.

  check_trace.py EXE OUTDIR SCENARIO [ARGS...] [--svg]
  check_trace.py --run OUT.json COMMAND...    (a command that writes OUT.json, such as
                                              tpevent bench --trace OUT.json)
"""
import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import trace_rules


def fail(message):
    print("FAILED:", message)
    sys.exit(1)


def ns(us):
    return round(us * 1000)


def check_ranges_in_order(slices):
    last = {}
    for s in slices:
        key, start = (s["pid"], s["tid"]), ns(s["ts"])
        if s["cat"] == "range" and start < last.get(key, start):
            fail(f"ts goes backwards on track {key}: {s['name']} at {start} after {last[key]}")
        last[key] = start


def main():
    args = sys.argv[1:]
    svg = "--svg" in args
    args = [a for a in args if a != "--svg"]
    if args[0] == "--run":
        scenario, path, command = "run", args[1], args[2:]
        os.makedirs(os.path.dirname(path), exist_ok=True)
    else:
        exe, outdir, scenario, rest = args[0], args[1], args[2], args[3:]
        os.makedirs(outdir, exist_ok=True)
        path = os.path.join(outdir, f"{scenario}{'-' + '-'.join(rest).replace(':', '') if rest else ''}.json")
        target = outdir if scenario == "errors" else path
        command = [exe, scenario, target, *rest]
    exe = command[0]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        fail(f"{exe} {scenario} exited with {run.returncode}")
    if scenario == "errors":
        path = os.path.join(outdir, "after_errors.json")
    lines = run.stdout.split("\n")
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)  # valid JSON, or this raises
    if trace.get("displayTimeUnit") != "ns" or not isinstance(trace.get("traceEvents"), list):
        fail("not a Chrome trace object")
    problems, flows = trace_rules.check(trace)
    for p in problems[:20]:
        print("problem:", p)
    if problems:
        fail(f"{len(problems)} problems by the format's and Perfetto's rules (trace_rules.py)")
    events = trace["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    slices = [e for e in events if e["ph"] == "X" and e["cat"] == "range"]
    check_ranges_in_order(slices)
    expected = [l.split()[1] for l in lines if l.startswith("slices ")]
    if expected and expected[0] != "any" and len(slices) != int(expected[0]):
        fail(f"{len(slices)} slices, expected {expected[0]}")
    names = [l.split()[1:] for l in lines if l.startswith("names ")]
    if names and sorted(s["name"] for s in slices) != sorted(names[0]):
        fail(f"slices {[s['name'] for s in slices]}, expected {names[0]}")
    if scenario == "empty" and [e for e in events if e["ph"] != "M"]:
        fail("an empty trace has events")
    if scenario == "run" and not slices:
        fail("the command's trace has no slices")
    if scenario == "errors" and [a["name"] for a in tracks.values()] != ["stream 1"]:
        fail(f"the stream whose name was forgotten has the track {list(tracks.values())}, not 'stream 1'")
    if scenario == "errors" and [s["name"] for s in slices] != ["again"]:
        fail(f"the trace after the errors has {[s['name'] for s in slices]}")

    # Flows: each from the recording stream's track to the waiting stream's, no
    # earlier than it on one device (one clock).
    native_of = {key: args["native"] for key, args in tracks.items()}
    got = []
    for out, into in flows:
        if out["pid"] == into["pid"] and ns(out["ts"]) > ns(into["ts"]):
            fail(f"flow {out.get('bind_id')} runs backwards: {out['ts']} > {into['ts']}")
        got.append((native_of[(out["pid"], out["tid"])], native_of[(into["pid"], into["tid"])]))
    for line in (l for l in lines if l.startswith("track ")):
        native, name = line.split(" ", 2)[1:]
        named = [args["name"] for args in tracks.values() if args["native"].lower() == native.lower()]
        if named != [name]:
            fail(f"the track of stream {native} is named {named}, expected {name!r}")
    want = [tuple(l.split()[1:3]) for l in lines if l.startswith("flow ")]
    if scenario in ("ranges", "capture"):
        normal = lambda pairs: sorted((a.lower(), b.lower()) for a, b in pairs)
        if normal(got) != normal(want):
            fail(f"flows {got}, expected {want}")
        names = [s["name"] for s in slices]
        if scenario == "ranges" and 'other "device" \\ café\t' not in names:
            fail(f"a name with quotes, a backslash, a tab and UTF-8 did not come back: {names}")
    print(f"ok: {len(slices)} slices, {len(got)} flows, {len(tracks)} tracks, {len(processes)} processes")

    if svg:
        out = path[:-5] + ".svg"
        env = dict(os.environ)
        # The drawing is standard library only: run its file, so that the package's
        # C extension is not loaded (a sanitizer build's needs its runtime preloaded).
        # `python -m tpevent.timeline` runs this same file.
        package = importlib.util.find_spec("tpevent")
        script = os.path.join(package.submodule_search_locations[0], "timeline.py")
        run = subprocess.run([sys.executable, script, path, "-o", out],
                             capture_output=True, text=True, env=env, timeout=60)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            fail("tpevent.timeline failed")
        root = ET.parse(out).getroot()  # well-formed XML, or this raises
        ns_svg = "{http://www.w3.org/2000/svg}"
        if root.tag != ns_svg + "svg":
            fail(f"root element is {root.tag}")
        rects = [r for r in root.iter(ns_svg + "rect") if "slice" in r.get("class", "").split()]
        drawn = sum(int(r.get("data-slices", "1")) for r in rects)  # a grey rect: slices under a pixel
        if drawn != len(slices):
            fail(f"{len(rects)} slice rects drawing {drawn} slices, for {len(slices)} slices")
        arrows = [l for l in root.iter(ns_svg + "line") if "flow" in l.get("class", "").split()]
        if len(arrows) != len(got):
            fail(f"{len(arrows)} flow arrows for {len(got)} flows")
        print(f"ok: {out}: {len(rects)} slice rects for {drawn} slices, {len(arrows)} flow arrows")


if __name__ == "__main__":
    main()
