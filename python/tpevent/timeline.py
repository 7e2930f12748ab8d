"""Draws a tpevent trace (Chrome trace-event JSON, from tp_trace_stop or
``tpevent.trace``) as an SVG that any browser opens, for machines with no
Perfetto UI at hand. Standard library only.

    python -m tpevent.timeline run.json -o run.svg

One row per track (stream), grouped under its process (device); slices as named
rectangles (a colour per name; a name that does not fit is cut with an ellipsis,
and every slice has a tooltip), nested ranges drawn deeper in their row; each
wait's flow as an arrow between the slices it binds to; a time axis with ticks at
round times from the trace's first event.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

WIDTH = 1200
LABEL = 220  # the left column: track names
RIGHT = 40  # room right of the plot, for the last tick's label
ROW_LEVEL = 18  # height of one nesting level
HEAD = 22  # a process's heading
AXIS = 30
COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b8860b", "#b07aa1", "#ff6f91", "#9c755f",
          "#2f4b7c"]


def _attr(value):
    return escape(str(value), {'"': "&quot;"})


class TraceError(Exception):
    """A trace that cannot be read or drawn; the message says why, for the user."""


def _refuse_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(path):
    """The trace file at path, as the JSON object tp_trace_stop wrote."""
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
    """The trace's processes, threads, slices and flows; a flow is (out, in), each
    the slice it binds to (v2: the "X" carrying its bind_id; v1 "s"/"f": the
    innermost slice enclosing it on its track) or, for v1 with none, the point."""
    data = read_json(path)
    try:
        events = data["traceEvents"] if isinstance(data, dict) else data
        processes, threads, slices, v1, v2 = {}, {}, [], {}, {}
        for e in events:
            ph = e.get("ph")
            if ph == "M" and e.get("name") == "process_name":
                processes[e["pid"]] = e["args"]["name"]
            elif ph == "M" and e.get("name") == "thread_name":
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
            elif ph == "X":
                slices.append(e)
                if "bind_id" in e:
                    v2.setdefault(e["bind_id"], {"out": None, "in": []})
                    if e.get("flow_out"):
                        v2[e["bind_id"]]["out"] = e
                    if e.get("flow_in"):
                        v2[e["bind_id"]]["in"].append(e)
            elif ph in ("s", "f"):
                v1.setdefault(e["id"], {})[ph] = e
    except (KeyError, TypeError, AttributeError) as error:
        raise TraceError(f"cannot read {path}: not a Chrome trace-event file ({type(error).__name__}: {error})") \
            from None
    flows = [(f["out"], into) for f in v2.values() if f["out"] for into in f["in"]]
    flows += [(f["s"], f["f"]) for f in v1.values() if "s" in f and "f" in f]
    return processes, threads, slices, flows


def depths(slices):
    """The nesting depth of each slice on its track (slices in start order): the
    writer's args.depth where it gave one, else as the slices nest."""
    out, stacks = [], {}
    for s in slices:
        stack = stacks.setdefault((s["pid"], s["tid"]), [])
        while stack and stack[-1] <= s["ts"]:
            stack.pop()
        given = s.get("args", {}).get("depth") if isinstance(s.get("args"), dict) else None
        out.append(given if isinstance(given, int) and 0 <= given < 64 else len(stack))
        if s["dur"] > 0:
            stack.append(s["ts"] + s["dur"])
    return out


def round_step(span, count=8):
    """A tick step of 1, 2 or 5 times a power of ten, for about `count` ticks."""
    raw = span / count
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for k in (1, 2, 5, 10):
        if k * power >= raw:
            return k * power
    return 10 * power


def time_unit(step_us):
    """The unit (s, ms, us) and its size in us for an axis whose ticks are step_us apart."""
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if step_us >= scale:
            return unit, scale
    return "ns", 1e-3


def tick_label(value_us, step_us):
    """An axis label for value_us, with as many digits as ticks step_us apart need."""
    unit, scale = time_unit(step_us)
    digits = max(0, -math.floor(math.log10(step_us / scale) + 1e-9)) if step_us / scale < 1 else 0
    return f"{value_us / scale:.{digits}f} {unit}"


def name_colors(slices):
    """One colour per name, in order of first appearance: a palette, then hues a
    golden angle apart, so that no two names share one."""
    colors = {}
    for s in sorted((s for s in slices if s.get("cat") != "flow"), key=lambda s: s["ts"]):
        name = s.get("name", "")
        if name not in colors:
            n = len(colors)
            colors[name] = COLORS[n] if n < len(COLORS) else f"hsl({(n * 137.508) % 360:.1f},55%,50%)"
    return colors


def fitted(text, width, char_width=6.5):
    """The label that fits `width` px: whole, cut with an ellipsis, or none."""
    room = int((width - 6) / char_width)
    if len(text) <= room:
        return text
    return text[: room - 1] + "\u2026" if room >= 3 else ""


def render(processes, threads, slices, flows):
    """The SVG drawing of a trace's processes, tracks, slices and flows, as a string."""
    slices = sorted(slices, key=lambda s: (s["pid"], s["tid"], s["ts"], -s["dur"]))
    level = depths(slices)
    depth_of = {id(s): d for s, d in zip(slices, level)}
    tracks = sorted(set(threads) | {(s["pid"], s["tid"]) for s in slices})
    rows_of = {}
    for s, d in zip(slices, level):
        key = (s["pid"], s["tid"])
        rows_of[key] = max(rows_of.get(key, 1), d + 1)
    points = [s["ts"] for s in slices] + [s["ts"] + s["dur"] for s in slices]
    points += [p["ts"] for f in flows for p in f]
    t0, t1 = (min(points), max(points)) if points else (0.0, 1.0)
    span = (t1 - t0) or 1.0
    plot = WIDTH - LABEL - RIGHT
    colors = name_colors(slices)

    def x(ts):
        return LABEL + (ts - t0) / span * plot

    out, y, top = [], AXIS, {}
    last_pid = None
    for key in tracks:
        if key[0] != last_pid:
            last_pid = key[0]
            process = processes.get(key[0], f"pid {key[0]}")
            out.append(f'<text class="process" x="4" y="{y + 15}"><title>{escape(process)}</title>'
                       f'{escape(fitted(process, WIDTH - 8))}</text>')
            y += HEAD
        top[key] = y
        height = rows_of.get(key, 1) * ROW_LEVEL
        thread = threads.get(key, f"tid {key[1]}")
        out.append(f'<rect class="track" x="{LABEL}" y="{y}" width="{plot}" height="{height}"/>')
        out.append(f'<text class="thread" x="12" y="{y + 13}"><title>{escape(thread)}</title>'
                   f'{escape(fitted(thread, LABEL - 14))}</text>')
        y += height + 6

    def mid(s):  # the middle of a slice's row
        return top[(s["pid"], s["tid"])] + depth_of.get(id(s), 0) * ROW_LEVEL + ROW_LEVEL / 2

    # Slices under a pixel wide that follow one another in a row are drawn as one grey
    # rectangle (data-slices: how many), so that a trace of a million ranges is a
    # picture of its width, not a million rectangles.
    dense = {}  # (track, depth) -> [x0, x1, count, {name: count}, y]

    def draw_dense(group):
        x0, x1, count, names, sy = group
        top_names = ", ".join(f"{n} ({k})" for n, k in sorted(names.items(), key=lambda i: -i[1])[:5])
        out.append(f'<g><title>{count} slices under a pixel each: {escape(top_names)}</title>'
                   f'<rect class="slice dense" data-slices="{count}" x="{x0:.2f}" y="{sy}" '
                   f'width="{max(x1 - x0, 0.5):.2f}" height="{ROW_LEVEL - 2}" fill="#888"/></g>')

    for s, d in zip(slices, level):
        key = (s["pid"], s["tid"])
        sx, sy = x(s["ts"]), top[key] + d * ROW_LEVEL + 1
        name = s.get("name", "")
        tip = f"{escape(name)}: {s['dur']:.3f} us at {s['ts'] - t0:.3f} us"
        if s.get("cat") == "flow" and s["dur"] == 0:  # a flow's end: a small mark
            out.append(f'<path class="mark" d="M{sx:.2f},{sy + 3} l3,6 l-3,6 l-3,-6 z"><title>{tip}</title></path>')
            continue
        w = s["dur"] / span * plot
        group = dense.get((key, d))
        if w < 1 and group and sx <= group[1] + 1:
            group[1], group[2] = max(group[1], sx + w), group[2] + 1
            group[3][name] = group[3].get(name, 0) + 1
            continue
        if group:
            draw_dense(dense.pop((key, d)))
        if w < 1:
            dense[(key, d)] = [sx, sx + w, 1, {name: 1}, sy]
            continue
        out.append(f'<g><title>{tip}</title>'
                   f'<rect class="slice" x="{sx:.2f}" y="{sy}" width="{w:.2f}" height="{ROW_LEVEL - 2}" '
                   f'fill="{colors[name]}"/>')
        label = fitted(name, w)
        if label:
            out.append(f'<text class="name" x="{sx + 3:.2f}" y="{sy + 12}">{escape(label)}</text>')
        out.append("</g>")
    for group in dense.values():
        draw_dense(group)
    for a, b in flows:
        ya = mid(a) if a.get("ph") == "X" else top.get((a["pid"], a["tid"]), AXIS) + ROW_LEVEL / 2
        yb = mid(b) if b.get("ph") == "X" else top.get((b["pid"], b["tid"]), AXIS) + ROW_LEVEL / 2
        label = f"wait: {threads.get((a['pid'], a['tid']), '?')} -> {threads.get((b['pid'], b['tid']), '?')}"
        out.append(f'<line class="flow" x1="{x(a["ts"]):.2f}" y1="{ya}" x2="{x(b["ts"]):.2f}" y2="{yb}" '
                   f'marker-end="url(#arrow)"><title>{escape(label)}</title></line>')
    # The axis: ticks at round times from the first event; labels kept inside the picture.
    step = round_step(span)
    axis = [f'<line class="axis" x1="{LABEL}" y1="{AXIS - 8}" x2="{LABEL + plot}" y2="{AXIS - 8}"/>']
    k = 0
    while k * step <= span * (1 + 1e-9):
        tx = x(t0 + k * step)
        axis.append(f'<line class="axis" x1="{tx:.1f}" y1="{AXIS - 12}" x2="{tx:.1f}" y2="{AXIS - 4}"/>')
        axis.append(f'<text class="tick" x="{tx:.1f}" y="{AXIS - 14}">{tick_label(k * step, step)}</text>')
        k += 1
    height = y + 10
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">\n'
            '<style>.track{fill:#f4f4f4}.slice{stroke:#222;stroke-width:0.5}.name{fill:#fff}'
            '.flow{stroke:#c00;stroke-width:1.5}.mark{fill:#c00}.axis{stroke:#444}'
            '.tick{text-anchor:middle;fill:#444}.process{font-weight:bold}</style>\n'
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c00"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fff"/>\n')
    return head + "\n".join(axis + out) + "\n</svg>\n"


def main(argv=None):
    """python -m tpevent.timeline TRACE [-o SVG]: draws a trace as an SVG."""
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
    ranges = [s for s in slices if s.get("cat") != "flow"]  # not the flows' own slices
    print(f"{output}: {len(ranges)} slices, {len(flows)} flows, {len(threads)} tracks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
