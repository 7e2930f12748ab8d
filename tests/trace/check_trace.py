"""Runs a trace scenario (trace_scenarios.c) and checks the Chrome trace it wrote
with Python's json module: slices nest on each track, ts never goes backwards on a
track, each wait's flow runs from the recording stream to the waiting one, and
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


def fail(message):
    print("FAILED:", message)
    sys.exit(1)


def ns(us):
    return round(us * 1000)


def check_slices(slices, tracks):
    by_track = {}
    for s in slices:
        if s["dur"] < 0:
            fail(f"negative dur: {s}")
        by_track.setdefault((s["pid"], s["tid"]), []).append(s)
    for key, items in by_track.items():
        if key not in tracks:
            fail(f"slice on a track with no thread_name: {key}")
        stack, last_ts = [], None
        for s in items:  # in the order written: the order of their starts
            start, end = ns(s["ts"]), ns(s["ts"]) + ns(s["dur"])
            if last_ts is not None and start < last_ts:
                fail(f"ts goes backwards on track {key}: {s['name']} at {start} after {last_ts}")
            last_ts = start
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                fail(f"{s['name']!r} [{start}, {end}] overlaps its parent {stack[-1][2]!r} "
                     f"ending {stack[-1][1]} on track {key}")
            if s["args"]["depth"] != len(stack):
                fail(f"{s['name']!r}: args.depth {s['args']['depth']}, nested {len(stack)} deep")
            stack.append((start, end, s["name"]))
    return by_track


def inside_a_slice(point, by_track):
    items = by_track.get((point["pid"], point["tid"]), [])
    t = ns(point["ts"])
    return any(ns(s["ts"]) <= t <= ns(s["ts"]) + ns(s["dur"]) for s in items)


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
    events = trace["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    for (pid, _tid) in tracks:
        if pid not in processes:
            fail(f"track of pid {pid} has no process_name")
    slices = [e for e in events if e["ph"] == "X"]
    by_track = check_slices(slices, tracks)
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
    if scenario == "errors" and [s["name"] for s in slices] != ["again"]:
        fail(f"the trace after the errors has {[s['name'] for s in slices]}")

    # Flows: one "s" and one "f" per id, start no later than end, from the recording
    # stream's track to the waiting stream's, both inside a slice of their track.
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    if set(starts) != set(ends):
        fail(f"flow ids do not match: {sorted(starts)} vs {sorted(ends)}")
    native_of = {key: args["native"] for key, args in tracks.items()}
    got = []
    for fid, s in starts.items():
        f = ends[fid]
        if f.get("bp") != "e":
            fail(f"flow {fid}'s end does not bind to its enclosing slice")
        if ns(s["ts"]) > ns(f["ts"]):
            fail(f"flow {fid} runs backwards: {s['ts']} > {f['ts']}")
        for point in (s, f):
            if (point["pid"], point["tid"]) not in tracks:
                fail(f"flow {fid} on an unnamed track")
            if scenario != "run" and not inside_a_slice(point, by_track):
                fail(f"flow {fid}'s {point['ph']} at {point['ts']} is inside no slice of its track")
        got.append((native_of[(s["pid"], s["tid"])], native_of[(f["pid"], f["tid"])]))
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
        if len(rects) != len(slices):
            fail(f"{len(rects)} slice rects for {len(slices)} slices")
        arrows = [l for l in root.iter(ns_svg + "line") if "flow" in l.get("class", "").split()]
        if len(arrows) != len(got):
            fail(f"{len(arrows)} flow arrows for {len(got)} flows")
        print(f"ok: {out}: {len(rects)} slice rects, {len(arrows)} flow arrows")


if __name__ == "__main__":
    main()
