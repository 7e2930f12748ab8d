"""The rules a Chrome trace-event JSON file must follow for Perfetto and chrome://tracing
to show it as its writer meant: the format's records, slices that nest on each track,
and flows that bind to the slices they were written for. check(trace) answers the
problems found ([] for none); `trace_rules.py FILE...` (or `--under DIR`) checks files,
`trace_rules.py --self-test` the rules themselves.

The flow rules are Perfetto's JSON importer's, as read in google/perfetto:
  src/trace_processor/importers/json/json_trace_parser_impl.cc
      ParseJsonPacket: 's' -> FlowTracker::Begin(track), 'f' -> End(track,
      bind_enclosing_slice = "bp" == "e"); 'X' -> SliceTracker::Scoped, then
      MaybeAddFlow: "bind_id" with "flow_out" -> Begin, "flow_in" -> End(bind
      enclosing), neither -> stat flow_without_direction.
  src/trace_processor/importers/common/flow_tracker.cc
      Begin/End(track) bind to GetTopmostSliceOnTrack, the innermost slice still on
      the track's stack, and with none count flow_no_enclosing_slice and drop the
      flow; a second Begin of one id is flow_duplicate_id; an End read before its
      Begin is flow_end_without_start (dropped); an 'f' without "bp":"e" binds to the
      next slice that begins on its track.
  src/trace_processor/importers/common/slice_tracker.cc
      MaybeCloseStack: a slice leaves its track's stack only when a later slice
      begins at or after its end, so a flow read after a slice ended but before the
      next one began would bind to the ended one.
Events are read in timestamp order (the importer sorts them); at equal timestamps in
the order written.
"""
import json
import os
import sys

METADATA = {"process_name": "name", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}


def ns(us):
    return round(us * 1000)


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def record_problems(events):
    problems = []
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            problems.append(f"record {i} has no phase: {e}")
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            problems.append(f"record {i} has no integer pid and tid: {e}")
        ph = e["ph"]
        if ph == "M":
            key = METADATA.get(e.get("name"))
            if key is None or not isinstance(e.get("args"), dict) or key not in e["args"]:
                problems.append(f"record {i} is not a metadata record of the format: {e}")
        elif ph == "X":
            if not is_number(e.get("ts")) or not is_number(e.get("dur")) or e["dur"] < 0:
                problems.append(f"record {i}: an X needs a ts and a dur >= 0: {e}")
            if not isinstance(e.get("name"), str):
                problems.append(f"record {i}: an X needs a name: {e}")
            if "bind_id" in e and not (e.get("flow_in") or e.get("flow_out")):
                problems.append(f"record {i}: bind_id with neither flow_in nor flow_out (flow_without_direction)")
        elif ph in ("s", "f"):
            if not is_number(e.get("ts")) or "id" not in e:
                problems.append(f"record {i}: a flow event needs a ts and an id: {e}")
        else:
            problems.append(f"record {i}: phase {ph!r} is not one this checker knows")
    return problems


def track_problems(events):
    problems = []
    threads = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    processes = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    for e in events:
        if e.get("ph") != "M" and (e.get("pid"), e.get("tid")) not in threads:
            problems.append(f"{e.get('name')!r} on track {(e.get('pid'), e.get('tid'))}, which has no thread_name")
    for pid, _ in threads:
        if pid not in processes:
            problems.append(f"tracks of pid {pid} have no process_name")
    return problems


def replay(events):
    """Reads the events as Perfetto's importer does; answers (problems, slices with
    their depth, flows as (out slice, in slice) pairs)."""
    problems, flows = [], []
    order = sorted((e for e in events if e.get("ph") in ("X", "s", "f")),
                   key=lambda e: ns(e["ts"]))  # stable: equal timestamps in the order written
    stacks, begun, pending = {}, {}, {}
    for e in order:
        track, ts = (e["pid"], e["tid"]), ns(e["ts"])
        stack = stacks.setdefault(track, [])
        if e["ph"] == "X":
            end = ts + ns(e["dur"])
            while stack and stack[-1]["end"] <= ts:
                stack.pop()
            if stack and end > stack[-1]["end"]:
                problems.append(f"{e['name']!r} [{ts}, {end}] overlaps {stack[-1]['event']['name']!r} "
                                f"[{stack[-1]['start']}, {stack[-1]['end']}] on track {track}: not nested")
            depth = len(stack)
            if e.get("cat") == "range" and e.get("args", {}).get("depth", depth) != depth:
                problems.append(f"{e['name']!r}: args.depth {e['args']['depth']}, nested {depth} deep")
            top = {"event": e, "start": ts, "end": end}
            stack.append(top)
            for fid in pending.pop(track, []):
                flows.append((begun[fid], e))
            if "bind_id" in e and e.get("flow_out"):
                if e["bind_id"] in begun:
                    problems.append(f"flow {e['bind_id']} begins twice (flow_duplicate_id)")
                begun[e["bind_id"]] = e
            if "bind_id" in e and e.get("flow_in"):
                if e["bind_id"] in begun:
                    flows.append((begun[e["bind_id"]], e))
                else:
                    problems.append(f"flow {e['bind_id']}'s flow_in at {ts} is read before its flow_out "
                                    "(flow_end_without_start): dropped")
            continue
        fid = ("v1", e["id"], e.get("cat"), e.get("name"))
        top = stack[-1] if stack else None
        if e["ph"] == "f" and e.get("bp") != "e":
            problems.append(f"flow {e['id']}'s end has no \"bp\":\"e\": it binds to the next slice, not its own")
            pending.setdefault(track, []).append(fid)
            continue
        if top is None:
            problems.append(f"flow {e['id']}'s {e['ph']!r} at {ts} on track {track}: no slice to bind to "
                            "(flow_no_enclosing_slice): dropped")
            continue
        if not top["start"] <= ts <= top["end"]:
            problems.append(f"flow {e['id']}'s {e['ph']!r} at {ts} on track {track} binds to "
                            f"{top['event']['name']!r} [{top['start']}, {top['end']}], which does not enclose it")
        if e["ph"] == "s":
            if fid in begun:
                problems.append(f"flow {e['id']} begins twice (flow_duplicate_id)")
            begun[fid] = top["event"]
        elif fid in begun:
            flows.append((begun[fid], top["event"]))
        else:
            problems.append(f"flow {e['id']}'s end is read before its start (flow_end_without_start): dropped")
    return problems, flows


def check(trace):
    """The problems of a trace (a parsed JSON object), and the flows Perfetto would draw."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["not a trace object with a traceEvents list"], []
    problems = record_problems(trace["traceEvents"])
    # The rest is judged on the records of the format (the others reported above).
    events = [e for e in trace["traceEvents"] if not record_problems([e])]
    problems += track_problems(events)
    replayed, flows = replay(events)
    return problems + replayed, flows


def self_test():
    """The rules on small traces: tpevent's before issue 32 (a record not of the format,
    flows outside the slices of their tracks), and the faults each rule is for."""
    def meta(pid, tid):
        return [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "p"}},
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "t"}}]

    def x(tid, ts, dur, name, **more):
        return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name, "cat": "range", **more}

    tracks = meta(1, 1) + meta(1, 2)
    old = [{"ph": "M", "name": "tpevent", "pid": 0, "tid": 0, "args": {}}] + tracks + [
        x(1, 1.0, 2.0, "produce"), {"ph": "s", "pid": 1, "tid": 1, "ts": 3.5, "id": 1, "name": "wait", "cat": "wait"},
        {"ph": "f", "pid": 1, "tid": 2, "ts": 4.0, "bp": "e", "id": 1, "name": "wait", "cat": "wait"},
        x(2, 4.5, 1.0, "consume")]
    good = tracks + [x(1, 1.0, 2.0, "produce"), x(1, 2.0, 0, "record", bind_id=1, flow_out=True),
                     x(2, 4.0, 0, "wait", bind_id=1, flow_in=True), x(2, 4.0, 1.0, "consume"),
                     x(2, 5.0, 0, "wait", bind_id=1, flow_in=True)]
    cases = [("tpevent 0.3's trace", old, ["not a metadata record", "does not enclose", "no slice to bind to"]),
             ("v2 flows on their own slices", good, []),
             ("slices that overlap", tracks + [x(1, 1.0, 2.0, "a"), x(1, 2.0, 2.0, "b")], ["not nested"]),
             ("a flow_in before its flow_out", tracks + [x(1, 5.0, 0, "r", bind_id=7, flow_out=True),
                                                          x(2, 4.0, 0, "w", bind_id=7, flow_in=True)],
              ["flow_end_without_start"]),
             ("a bind_id with no direction", tracks + [x(1, 5.0, 0, "r", bind_id=7)], ["flow_without_direction"]),
             ("a slice on an unnamed track", meta(1, 1) + [x(3, 1.0, 1.0, "a")], ["has no thread_name"])]
    failed = False
    for what, events, expected in cases:
        problems, flows = check({"traceEvents": events})
        found = all(any(e in p for p in problems) for e in expected) and (problems == []) == (expected == [])
        print(f"{'ok' if found else 'FAILED'}: {what}: {len(problems)} problems, {len(flows)} flows bound")
        for p in problems if not found else []:
            print("   ", p)
        failed = failed or not found
    return 1 if failed else 0


def main(args):
    """trace_rules.py FILE... | --under DIR: the files named, or every *.json under DIR."""
    paths = args
    if args == ["--self-test"]:
        return self_test()
    if args[:1] == ["--under"]:
        import glob
        paths = sorted(glob.glob(os.path.join(args[1], "**", "*.json"), recursive=True))
    failed = False
    for path in paths:
        with open(path, encoding="utf-8") as f:
            problems, flows = check(json.load(f))
        for p in problems[:20]:
            print(f"{path}: {p}")
        if len(problems) > 20:
            print(f"{path}: ... {len(problems) - 20} more problems")
        print(f"{path}: {'FAILED' if problems else 'ok'}: {len(problems)} problems, {len(flows)} flows bound")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
