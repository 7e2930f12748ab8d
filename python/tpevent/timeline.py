"""Draws a tpevent trace (Chrome trace-event JSON, from tp_trace_stop or
``tpevent.trace``) as an SVG that any browser opens, for machines with no
Perfetto UI at hand. Standard library only.

    python -m tpevent.timeline run.json -o run.svg

One row per track (stream), grouped under its process (device); slices as named
rectangles, nested ranges drawn deeper in their row; each wait's flow as an
arrow from the record to the waiting stream; a time axis in ms from the trace's
first event.
"""
import argparse
import json
import sys
from xml.sax.saxutils import escape

WIDTH = 1200
LABEL = 220  # the left column: track names
ROW_LEVEL = 18  # height of one nesting level
HEAD = 22  # a process's heading
AXIS = 30
COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]


def _attr(value):
    return escape(str(value), {'"': "&quot;"})


class TraceError(Exception):
    """A trace that cannot be read or drawn; the message says why, for the user."""


def _refuse_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(path):
    # Bytes that are not UTF-8 (names written by tpevent before 0.3, or by another
    # writer) are drawn as U+FFFD rather than refused: the rest of the trace is good.
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return json.load(f, parse_constant=_refuse_constant)
    except OSError as error:
        raise TraceError(f"cannot read {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise TraceError(f"cannot read {path}: invalid JSON: {error.msg} at line {error.lineno} "
                         f"column {error.colno}") from None
    except (ValueError, RecursionError) as error:
        raise TraceError(f"cannot read {path}: invalid JSON: {error}") from None


def load(path):
    data = read_json(path)
    try:
        events = data["traceEvents"] if isinstance(data, dict) else data
        processes, threads, slices, flows = {}, {}, [], {}
        for e in events:
            ph = e.get("ph")
            if ph == "M" and e.get("name") == "process_name":
                processes[e["pid"]] = e["args"]["name"]
            elif ph == "M" and e.get("name") == "thread_name":
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
            elif ph == "X":
                slices.append(e)
            elif ph in ("s", "f"):
                flows.setdefault(e["id"], {})[ph] = e
    except (KeyError, TypeError, AttributeError) as error:
        raise TraceError(f"cannot read {path}: not a Chrome trace-event file ({type(error).__name__}: {error})") \
            from None
    return processes, threads, slices, flows


def depths(slices):
    """The nesting depth of each slice on its track (slices in start order)."""
    out, stacks = [], {}
    for s in slices:
        stack = stacks.setdefault((s["pid"], s["tid"]), [])
        while stack and stack[-1] <= s["ts"]:
            stack.pop()
        out.append(len(stack))
        stack.append(s["ts"] + s["dur"])
    return out


def render(processes, threads, slices, flows):
    slices = sorted(slices, key=lambda s: (s["pid"], s["tid"], s["ts"], -s["dur"]))
    level = depths(slices)
    tracks = sorted(set(threads) | {(s["pid"], s["tid"]) for s in slices})
    rows_of = {}
    for s, d in zip(slices, level):
        key = (s["pid"], s["tid"])
        rows_of[key] = max(rows_of.get(key, 1), d + 1)
    points = [s["ts"] for s in slices] + [s["ts"] + s["dur"] for s in slices]
    points += [p["ts"] for f in flows.values() for p in f.values()]
    t0, t1 = (min(points), max(points)) if points else (0.0, 1.0)
    span = (t1 - t0) or 1.0
    plot = WIDTH - LABEL - 20

    def x(ts):
        return LABEL + (ts - t0) / span * plot

    out, y, top = [], AXIS, {}
    last_pid = None
    for key in tracks:
        if key[0] != last_pid:
            last_pid = key[0]
            out.append(f'<text class="process" x="4" y="{y + 15}">{escape(processes.get(key[0], f"pid {key[0]}"))}</text>')
            y += HEAD
        top[key] = y
        height = rows_of.get(key, 1) * ROW_LEVEL
        out.append(f'<rect class="track" x="{LABEL}" y="{y}" width="{plot}" height="{height}"/>')
        out.append(f'<text class="thread" x="12" y="{y + 13}">{escape(threads.get(key, f"tid {key[1]}"))}</text>')
        y += height + 6
    for s, d in zip(slices, level):
        key = (s["pid"], s["tid"])
        sx, w = x(s["ts"]), max(s["dur"] / span * plot, 0.5)
        sy = top[key] + d * ROW_LEVEL + 1
        name = escape(s.get("name", ""))
        color = COLORS[sum(s.get("name", "").encode("utf-8", "replace")) % len(COLORS)]  # one color per name
        out.append(f'<g><title>{name}: {s["dur"]:.3f} us at {s["ts"] - t0:.3f} us</title>'
                   f'<rect class="slice" x="{sx:.2f}" y="{sy}" width="{w:.2f}" height="{ROW_LEVEL - 2}" '
                   f'fill="{color}"/>')
        if w > 30:
            out.append(f'<text class="name" x="{sx + 3:.2f}" y="{sy + 12}">{name[: int(w / 7)]}</text>')
        out.append("</g>")
    for fid in sorted(flows, key=str):
        f = flows[fid]
        if "s" not in f or "f" not in f:
            continue
        a, b = f["s"], f["f"]
        ya = top.get((a["pid"], a["tid"]), AXIS) + ROW_LEVEL / 2
        yb = top.get((b["pid"], b["tid"]), AXIS) + ROW_LEVEL / 2
        out.append(f'<line class="flow" x1="{x(a["ts"]):.2f}" y1="{ya}" x2="{x(b["ts"]):.2f}" y2="{yb}" '
                   f'marker-end="url(#arrow)"><title>wait {_attr(fid)}</title></line>')
    # The axis: five ticks, in ms from the first event.
    axis = [f'<line class="axis" x1="{LABEL}" y1="{AXIS - 8}" x2="{LABEL + plot}" y2="{AXIS - 8}"/>']
    for k in range(6):
        tx = LABEL + plot * k / 5
        axis.append(f'<line class="axis" x1="{tx:.1f}" y1="{AXIS - 12}" x2="{tx:.1f}" y2="{AXIS - 4}"/>')
        axis.append(f'<text class="tick" x="{tx:.1f}" y="{AXIS - 14}">{span * k / 5 / 1000:.3f} ms</text>')
    height = y + 10
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">\n'
            '<style>.track{fill:#f4f4f4}.slice{stroke:#222;stroke-width:0.5}.name{fill:#fff}'
            '.flow{stroke:#c00;stroke-width:1.5}.axis{stroke:#444}.tick{text-anchor:middle;fill:#444}'
            '.process{font-weight:bold}</style>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c00"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fff"/>\n')
    return head + "\n".join(axis + out) + "\n</svg>\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tpevent.timeline", description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="a Chrome trace-event JSON file (tp_trace_stop, tpevent.trace)")
    parser.add_argument("-o", "--output", help="the SVG to write (default: the trace's name with .svg)")
    args = parser.parse_args(argv)
    output = args.output or (args.trace[:-5] if args.trace.endswith(".json") else args.trace) + ".svg"
    try:
        processes, threads, slices, flows = load(args.trace)
        try:
            svg = render(processes, threads, slices, flows)
        except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as error:
            raise TraceError(f"cannot draw {args.trace}: a slice or flow lacks a field or has a bad value "
                             f"({type(error).__name__}: {error})") from None
        try:
            with open(output, "w", encoding="utf-8", errors="replace") as f:  # lone surrogates
                f.write(svg)
        except OSError as error:
            raise TraceError(f"cannot write {output}: {error.strerror or error}") from None
    except TraceError as error:
        print(f"tpevent.timeline: {error}", file=sys.stderr)
        return 2
    print(f"{output}: {len(slices)} slices, {len(flows)} flows, {len(threads)} tracks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
