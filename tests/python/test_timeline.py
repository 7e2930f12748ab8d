"""tpevent.range (context manager, decorator) and tpevent.trace, on the CPU."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import tpevent

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
import trace_rules  # noqa: E402 (tests/trace: the format's and Perfetto's rules)


class TimelineTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "run.json")

    def tearDown(self):
        # Every trace a test wrote follows the format's and Perfetto's rules.
        if os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as f:
                problems, _ = trace_rules.check(json.load(f))
            self.assertEqual(problems, [])

    def load(self):
        with open(self.path, encoding="utf-8") as f:
            return json.load(f)["traceEvents"]

    def test_with_range_and_decorator_nest(self):
        s = tpevent.Stream(device="cpu:1")

        @tpevent.range("decorated", stream=s)
        def step(n):
            with tpevent.range("inner", stream=s):
                return n * 2

        with tpevent.trace(self.path) as path:
            self.assertEqual(path, self.path)
            with tpevent.range("outer", stream=s):
                self.assertEqual(step(3), 6)
                self.assertEqual(step(4), 8)
            with tpevent.range("current"):
                pass
        slices = [e for e in self.load() if e["ph"] == "X"]
        names = [e["name"] for e in slices]
        self.assertEqual(names, ["outer", "decorated", "inner", "decorated", "inner", "current"])
        self.assertEqual([e["args"]["depth"] for e in slices], [0, 1, 2, 1, 2, 0])
        self.assertEqual(step.__name__, "step")

    def test_ranges_outside_a_trace_do_nothing(self):
        with tpevent.range("nothing"):
            pass
        tpevent.range_pop()  # no trace: does nothing
        with tpevent.range("entered before"):
            with tpevent.trace(self.path):
                pass  # leaving "entered before" during no trace pops nothing
        self.assertEqual([e for e in self.load() if e["ph"] == "X"], [])

    def test_range_left_after_its_trace_pops_nothing(self):
        r = tpevent.range("spans the stop")
        tpevent.trace_start()
        r.__enter__()
        tpevent.trace_stop(self.path)  # closes it
        tpevent.trace_start()
        r.__exit__(None, None, None)  # not in this trace: no pop, no error
        tpevent.trace_stop(self.path)
        self.assertEqual([e for e in self.load() if e["ph"] == "X"], [])

    def test_errors(self):
        with self.assertRaises(ValueError):
            tpevent.trace_stop(self.path)  # none running
        with tpevent.trace(self.path):
            with self.assertRaises(ValueError):
                tpevent.trace_start()  # one at a time
            with self.assertRaises(ValueError) as caught:
                tpevent.range_pop()
            self.assertIn("no range is open", str(caught.exception))
        bad = os.path.join(self.dir, "missing", "run.json")
        with self.assertRaises(ValueError) as caught:
            with tpevent.trace(bad):
                pass
        self.assertIn(bad, str(caught.exception))
        with self.assertRaises(TypeError):
            tpevent.range(42)

    def test_wait_draws_a_flow(self):
        a, b = tpevent.Stream(device="cpu:0"), tpevent.Stream(device="cpu:1")
        with tpevent.trace(self.path):
            with tpevent.range("produce", stream=a):
                e = a.record_event()
            with tpevent.range("consume", stream=b):
                b.wait_event(e)
        events = self.load()
        # One v2 flow (tests/trace/trace_rules.py says why): a "record" slice with
        # flow_out on a's track, a "wait" slice with flow_in on b's, one bind_id.
        ends = [e for e in events if e["ph"] == "X" and "bind_id" in e]
        self.assertEqual(sorted((e["name"], "flow_out" in e) for e in ends), [("record", True), ("wait", False)])
        self.assertEqual(len({e["bind_id"] for e in ends}), 1)

    def test_stream_names_are_track_names(self):
        a, b = tpevent.Stream(device="cpu:0", name="loader"), tpevent.Stream(device="cpu:0")
        self.assertEqual((a.name, b.name), ("loader", None))
        with tpevent.trace(self.path):
            b.name = "compute"
            for stream in (a, b):
                with tpevent.range("work", stream=stream):
                    pass
            b.name = None  # the track keeps no name: "stream N"
        names = {e["args"]["name"] for e in self.load() if e["ph"] == "M" and e["name"] == "thread_name"}
        self.assertIn("loader", names)
        self.assertEqual(len([n for n in names if n.startswith("stream ")]), 1)
        self.assertIsNone(b.name)
        with self.assertRaises(TypeError):
            a.name = 5


class TimelineToolTests(unittest.TestCase):
    """python -m tpevent.timeline: a bad input is a message and exit status 2, never
    a traceback."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tool(self, *args):
        return subprocess.run([sys.executable, "-m", "tpevent.timeline", *args], cwd=self.dir,
                              capture_output=True, text=True, timeout=120)

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w", encoding="utf-8") as f:
            f.write(text)
        return name

    def check_refused(self, done, message, exact=True):
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(done.stdout, "")
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        if exact:
            self.assertEqual(done.stderr, f"tpevent.timeline: {message}\n")
        else:  # the end is json's or Python's own words, which change between versions
            self.assertTrue(done.stderr.startswith(f"tpevent.timeline: {message}"), done.stderr)

    def test_missing_file(self):
        self.check_refused(self.tool("missing.json"), "cannot read missing.json: No such file or directory")

    def test_invalid_json(self):
        done = self.tool(self.write("bad.json", "{not json"))
        self.check_refused(done, "cannot read bad.json: invalid JSON: ", exact=False)
        self.assertTrue(done.stderr.endswith(" at line 1 column 2\n"), done.stderr)

    def test_not_a_trace(self):
        self.check_refused(self.tool(self.write("list.json", "[1, 2]")),
                           "cannot read list.json: not a Chrome trace-event file (", exact=False)

    def test_output_that_cannot_be_written(self):
        self.check_refused(self.tool(self.write("empty.json", "[]"), "-o", "no/such/folder.svg"),
                           "cannot write no/such/folder.svg: No such file or directory")

    def test_names_not_utf8_are_drawn(self):
        trace = ('{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"s"}},'
                 '{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"NAME","args":{}}]}')
        for name, raw in (("latin1.json", trace.replace("NAME", "caf\xe9").encode("latin-1")),
                          ("surrogate.json", trace.replace("NAME", "\\ud800").encode())):
            with open(os.path.join(self.dir, name), "wb") as f:
                f.write(raw)
            done = self.tool(name)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("1 slices", done.stdout)

    def test_hostile_values_are_refused(self):
        trace = ('{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":DUR,"name":NAME,"args":{}}]}')
        for name, text in (("huge.json", trace.replace("DUR", "1" + "0" * 400).replace("NAME", '"a"')),
                           ("nan.json", trace.replace("DUR", "NaN").replace("NAME", '"a"')),
                           ("name.json", trace.replace("DUR", "1").replace("NAME", "5")),
                           ("deep.json", "[" * 100000 + "]" * 100000)):
            self.check_refused(self.tool(self.write(name, text)), "cannot ", exact=False)

    def test_a_trace_is_drawn(self):
        with tpevent.trace(os.path.join(self.dir, "run.json")):
            with tpevent.range("step", stream=tpevent.Stream(device="cpu")):
                pass
        done = self.tool("run.json")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("run.svg: 1 slices", done.stdout)
        with open(os.path.join(self.dir, "run.svg"), encoding="utf-8") as f:
            self.assertIn("<svg", f.read())


if __name__ == "__main__":
    unittest.main()
