#!/usr/bin/env python3
"""Instructions per call from tpevent_bench_instructions' callgrind dumps, split by part.

Usage: instructions_table.py ROOT:DUMPS [ROOT:DUMPS]
  ROOT   the source tree the measured library was built from (its files are told
         apart by their path under it)
  DUMPS  the folder of callgrind's dumps (--callgrind-out-file=DUMPS/cg.out)
One side: its table. Two (before, after): both side by side with the difference.

Each op was dumped twice, after N and after 2N calls ("<op>/<count>"); per call is
(Ir(2N) - Ir(N)) / N. Only the calling thread's dumps are read (thread 1). An
instruction's part is its source file's (an inlined one's too): core (core/,
common/, the CPU backend), the GPU backend (backends/gpu, backends/cuda and the
runtime mapping header runtime_fake.h wherever it lives), the fake driver
(tests/gpu_fake), the program's own loop (bench/). The C library's and the loader's
instructions go to the part that called into them (their inclusive cost), so that
"tpevent" below is tpevent's own code and what it asks of libc (locks, malloc).
"""
import os
import re
import sys
from collections import defaultdict


def part_of(path, root):
    if os.path.basename(path) == "runtime_fake.h":
        return "gpu"  # the mapping of rt_* onto the fake driver, tpevent's side
    if path.endswith("/bench/callgrind/instructions_bench.c"):
        return "bench"  # one program measures every tree: it is this tree's
    if "/tests/gpu_fake/" in path:
        return "fake"  # a tree older than the fake runtime runs this tree's driver
    if not path.startswith(root + "/"):
        return "other"
    rel = path[len(root) + 1 :]
    if rel.startswith(("core/", "common/", "backends/common/", "backends/cpu/", "include/")):
        return "core"
    if rel.startswith(("backends/gpu/", "backends/cuda/")):
        return "gpu"
    return "other"


TRIGGER = "desc: Trigger: Client Request: "
NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def read_dump(path, root):
    """(trigger name, thread, {part: Ir}) of one callgrind output file."""
    files = {}
    costs = defaultdict(int)
    trigger, thread = None, None
    fn_file = cur_file = callee_file = None
    next_is_call = False

    def name(value):
        m = NAMED.match(value)
        if not m:
            return value
        if m.group(2) is not None:
            files[m.group(1)] = m.group(2)
        return files.get(m.group(1), "???")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                here = part_of(cur_file or "???", root)
                if next_is_call:
                    callee = part_of(callee_file or fn_file or "???", root)
                    # Calls into code outside the tree count for the caller; calls
                    # within the tree are counted where their instructions are.
                    if callee == "other" and here != "other":
                        costs[here] += cost
                    next_is_call = False
                    callee_file = None
                elif here != "other":
                    costs[here] += cost
                else:
                    costs["libc-self"] += cost
                continue
            key, _, value = line.partition("=")
            if key == "fl":
                fn_file = cur_file = name(value)
            elif key in ("fi", "fe"):
                cur_file = name(value)
            elif key == "fn":
                cur_file = fn_file
            elif key in ("cfi", "cfl"):
                callee_file = name(value)
            elif key == "calls":
                next_is_call = True
            elif line.startswith(TRIGGER):
                trigger = line[len(TRIGGER) :]
            elif line.startswith("thread: "):
                thread = int(line.split()[1])
            elif line.startswith("summary: "):
                costs["total"] = int(line.split()[1])
    return trigger, thread, costs


def per_call(dumps, root):
    """{op: {part: Ir per call}} from the N and 2N dumps of each op."""
    runs = defaultdict(dict)
    for entry in sorted(os.listdir(dumps)):
        trigger, thread, costs = read_dump(os.path.join(dumps, entry), root)
        if trigger and "/" in trigger and thread in (None, 1):
            op, count = trigger.rsplit("/", 1)
            runs[op][int(count)] = costs
    table = {}
    for op, by_count in runs.items():
        if len(by_count) != 2:
            continue
        n, n2 = sorted(by_count)
        a, b = by_count[n], by_count[n2]
        row = {k: (b.get(k, 0) - a.get(k, 0)) / (n2 - n) for k in set(a) | set(b)}
        table[op] = row
    return table


def shares(row):
    total = row.get("total", 0) or 1
    own = row.get("core", 0) + row.get("gpu", 0)
    return "%5.0f (core %4.0f, gpu %4.0f) | fake %5.0f | loop %3.0f | %3.0f%%" % (
        own,
        row.get("core", 0),
        row.get("gpu", 0),
        row.get("fake", 0),
        row.get("bench", 0),
        100.0 * own / total,
    )


OPS = (
    "record_timing_off",
    "record_timing_on",
    "query_completed",
    "synchronize_completed",
    "stream_wait",
    "elapsed_time",
    "create_destroy",
    "record_synchronize_idle",
)


def main(argv):
    sides = []
    for arg in argv[1:]:
        root, _, dumps = arg.rpartition(":")
        sides.append(per_call(dumps, os.path.realpath(root)))
    if len(sides) == 1:
        print("%-24s %9s   %s" % ("op", "Ir/call", "tpevent's own (core, gpu backend) | fake driver | loop | own share"))
        for op in OPS:
            if op in sides[0]:
                row = sides[0][op]
                print("%-24s %9.1f   %s" % (op, row.get("total", 0), shares(row)))
        return 0
    before, after = sides
    print("Ir per call: all the calling thread's | tpevent's own (core + GPU backend, with the libc they call)")
    print("%-24s %8s %8s %8s | %7s %7s %7s" % ("op", "before", "after", "diff", "before", "after", "diff"))
    for op in OPS:
        if op not in before or op not in after:
            continue
        b, a = before[op], after[op]
        tb, ta = b.get("total", 0), a.get("total", 0)
        ob, oa = b.get("core", 0) + b.get("gpu", 0), a.get("core", 0) + a.get("gpu", 0)
        print("%-24s %8.1f %8.1f %+8.1f | %7.1f %7.1f %+7.1f" % (op, tb, ta, ta - tb, ob, oa, oa - ob))
    for label, side in (("before", before), ("after", after)):
        print("\n%s, split per call: tpevent's own (core, gpu backend) | fake driver | loop | own share" % label)
        for op in OPS:
            if op in side:
                print("  %-24s %9.1f   %s" % (op, side[op].get("total", 0), shares(side[op])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
