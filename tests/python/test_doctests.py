"""The seed's examples, as they stand in tpevent's docstrings, run as doctests.

Usage: test_doctests.py DEVICE_TYPE

The docstrings carry the seed's examples (tensorplay's Event documentation) as
written, with `tensorplay` read as `tpevent` and the typo `e_cuda.wait(s2)` read as
`e_cuda.wait(s2_cuda)`. They name device 'cuda'; for another device type the
examples run with that type in place of 'cuda'. Without the device type's backend
this prints why and exits 77 (skipped).
"""

import doctest
import sys

import tpevent
from tpevent_testing import SKIP_RETURN_CODE, exit_if_unavailable

# The seed's examples, line for line (tensorplay -> tpevent, s2 -> s2_cuda). Each
# must appear in a docstring, so the documentation keeps them.
SEED_EXAMPLES = {
    "Event": [
        ">>> event = tpevent.Event()",
        ">>> e_cuda = tpevent.Event(device='cuda')",
    ],
    "Event.elapsed_time": [
        ">>> s_cuda = tpevent.Stream(device='cuda')",
        ">>> e1_cuda = s_cuda.record_event()",
        ">>> e2_cuda = s_cuda.record_event()",
        ">>> ms = e1_cuda.elapsed_time(e2_cuda)",
    ],
    "Event.query": [
        ">>> s_cuda = tpevent.Stream(device='cuda')",
        ">>> e_cuda = s_cuda.record_event()",
        ">>> e_cuda.query()\nTrue",
    ],
    "Event.record": [
        ">>> e_cuda = tpevent.Event(device='cuda')",
        ">>> e_cuda.record()",
    ],
    "Event.synchronize": [
        ">>> s_cuda = tpevent.Stream(device='cuda')",
        ">>> e_cuda = s_cuda.record_event()",
        ">>> e_cuda.synchronize()",
    ],
    "Event.wait": [
        ">>> s1_cuda = tpevent.Stream(device='cuda')",
        ">>> s2_cuda = tpevent.Stream(device='cuda')",
        ">>> e_cuda = s1_cuda.record()",
        ">>> e_cuda.wait(s2_cuda)",
    ],
}

# Docstrings that must hold examples, and so run here.
MUST_HAVE_EXAMPLES = set(SEED_EXAMPLES) | {"tpevent", "Stream", "Stream.record_event", "Stream.record", "stream", "backends"}


class DeviceParser(doctest.DocTestParser):
    """Runs the examples on another device type than the 'cuda' they name."""

    def __init__(self, device_type):
        self.device_type = device_type

    def parse(self, string, name="<string>"):
        parts = super().parse(string, name)
        for part in parts:
            if isinstance(part, doctest.Example):
                part.source = part.source.replace("'cuda'", repr(self.device_type))
        return parts


def find_tests(device_type):
    finder = doctest.DocTestFinder(parser=DeviceParser(device_type), exclude_empty=True)
    tests = {}
    # The classes and the package's own functions are of module tpevent; the
    # extension's functions are of tpevent._tpevent.
    for module in (tpevent, tpevent._tpevent):
        for test in finder.find(module, module.__name__, globs={"tpevent": tpevent}):
            short = test.name.split(".", 1)[1] if "." in test.name else test.name
            short = short.removeprefix("_tpevent.")
            tests.setdefault(short, test)
    return tests


def check_seed_examples(tests):
    missing = []
    for name, lines in SEED_EXAMPLES.items():
        doc = tests[name].docstring if name in tests else ""
        for line in lines:
            if line not in doc:
                missing.append(f"{name}: {line!r}")
    return missing


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    device_type = sys.argv[1]
    exit_if_unavailable(device_type)

    tests = find_tests(device_type)
    problems = check_seed_examples(tests)
    with_examples = {name for name, test in tests.items() if test.examples}
    problems += [f"{name}: no examples found" for name in sorted(MUST_HAVE_EXAMPLES - with_examples)]

    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for name in sorted(tests):
        if not tests[name].examples:
            continue
        # Each docstring starts from the default stream and device, as a reader would.
        tpevent.set_stream(tpevent.default_stream(device_type))
        result = runner.run(tests[name])
        print(f"{name}: {result.attempted} examples, {result.failed} failed")
    summary = runner.summarize(verbose=False)
    for problem in problems:
        print(f"FAIL: {problem}")
    print(f"{summary.attempted - summary.failed} passed, {summary.failed + len(problems)} failed")
    if summary.failed or problems:
        return 1
    if summary.attempted == 0:
        print("no examples ran")
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    sys.exit(code if code != SKIP_RETURN_CODE else 1)
