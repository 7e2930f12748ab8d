"""Saved results (schema tpevent-results/1, docs/measure.md) and python -m
tpevent.compare (issue 51, item 3): produced by python -m tpevent.timeit --json and
tpevent bench --json, read back, compared entry by entry.

Subprocesses on cpu:0, short and with any noise: the verdicts asserted are those of
work four times longer, or of a file against itself, which a loaded machine keeps.
TPEVENT_TOOL names the tpevent tool (CTest sets it where the tool has --json).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import tpevent
from tpevent import results
from tpevent_testing import run

QUICK = ["-d", "cpu:0", "--min-time", "0.05", "--max-time", "2", "--max-noise", "1e9"]


def python_m(module, *arguments):
    return subprocess.run([sys.executable, "-m", module, *arguments], capture_output=True, text=True, timeout=120)


class Files(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def write(self, name, doc):
        with open(self.path(name), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return self.path(name)

    def timeit_json(self, name, *arguments):
        done = python_m("tpevent.timeit", *QUICK, "--json", *arguments)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(done.stdout)
        return self.path(name)

    def compare(self, old, new, *options):
        done = python_m("tpevent.compare", *options, "--json", old, new)
        self.assertIn(done.returncode, (0, 1), done.stderr)
        return done.returncode, json.loads(done.stdout)["rows"]


class TimeitRoundTripTests(Files):
    """timeit --json written, read back, compared: the same statement under two setups."""

    def test_four_times_the_work_is_slower_and_fails_ci_when_asked(self):
        old = self.timeit_json("old.json", "--name", "sum", "-s", "n = 2000", "sum(range(n))")
        new = self.timeit_json("new.json", "--name", "sum", "-s", "n = 8000", "sum(range(n))")
        doc = results.load(new)
        self.assertEqual(doc["schema"], "tpevent-results/1")
        self.assertEqual(doc["tpevent_version"], tpevent.__version__)
        self.assertEqual(doc["producer"], "tpevent.timeit")
        self.assertEqual([d["device"] for d in doc["devices"]], ["cpu:0"])
        self.assertEqual(doc["devices"][0]["name"], "CPU (virtual device 0)")
        (entry,) = doc["results"]
        self.assertEqual((entry["name"], entry["device"], entry["setup"]), ("sum", "cpu:0", "n = 8000"))
        self.assertLessEqual(entry["median_low_ns"], entry["median_ns"])
        self.assertLessEqual(entry["median_ns"], entry["median_high_ns"])
        self.assertAlmostEqual(entry["median_ns"], doc["median"] * 1e9, delta=1e-3)
        self.assertNotIn("samples_ns", entry)
        status, (row,) = self.compare(old, new)
        self.assertEqual((status, row["name"], row["verdict"]), (0, "sum", "slower"))
        self.assertGreater(row["low"], 1.02)
        status, (row,) = self.compare(new, old)
        self.assertEqual(row["verdict"], "faster")
        self.assertEqual(self.compare(old, new, "--fail-on-slower")[0], 1)
        self.assertEqual(self.compare(new, old, "--fail-on-slower")[0], 0)

    def test_a_file_against_itself_is_never_faster_or_slower(self):
        old = self.timeit_json("old.json", "--samples", "sum(range(500))")
        with open(old, encoding="utf-8") as f:
            entry = json.load(f)["results"][0]
        self.assertEqual(len(entry["samples_ns"]), entry["n"])
        status, (row,) = self.compare(old, old, "--fail-on-slower")
        self.assertEqual(status, 0)
        self.assertIn(row["verdict"], ("same", "undecided"))
        self.assertAlmostEqual(row["ratio"], 1.0)

    def test_table_names_each_entry_and_counts_verdicts(self):
        old = self.timeit_json("old.json", "pass")
        done = python_m("tpevent.compare", old, old)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(lines[0].split()[:4], ["name", "device", "old", "median"])
        self.assertTrue(lines[1].startswith("pass "), lines[1])
        self.assertRegex(lines[-1], r"^1 entries, min_effect 2 %: ")

    def test_compare_json_carries_both_statements(self):
        done = python_m("tpevent.timeit", *QUICK, "--compare", "--json", "--name", "s",
                        "sum(range(1000))", "sum(range(4000))")
        self.assertEqual(done.returncode, 0, done.stderr)
        path = self.write("both.json", json.loads(done.stdout))
        names = [entry["name"] for entry in results.load(path)["results"]]
        self.assertEqual(names, ["s/a", "s/b"])
        status, rows = self.compare(path, path)
        self.assertEqual([row["name"] for row in rows], ["s/a", "s/b"])


@unittest.skipUnless(os.environ.get("TPEVENT_TOOL"), "TPEVENT_TOOL is not set: the tool is not built with --json")
class ToolRoundTripTests(Files):
    def bench_json(self, name):
        done = subprocess.run([os.environ["TPEVENT_TOOL"], "bench", "--device", "cpu:0", "--iterations", "300",
                               "--json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        return self.write(name, json.loads(done.stdout))

    def test_two_bench_runs_match_op_by_op(self):
        old, new = self.bench_json("old.json"), self.bench_json("new.json")
        doc = results.load(old)
        self.assertEqual(doc["producer"], "tpevent bench")
        status, rows = self.compare(old, new)
        self.assertEqual(status, 0)  # no --fail-on-slower
        self.assertEqual([row["name"] for row in rows], [op["op"] for op in doc["devices"][0]["ops"]])
        for row in rows:
            self.assertIn(row["verdict"], results.VERDICTS)
        status, rows = self.compare(old, old)
        self.assertTrue(all(row["verdict"] in ("same", "undecided") for row in rows), rows)


def entry(name, median, half, device="cpu:0", **more):
    return {"name": name, "device": device, "median_ns": median, "median_low_ns": median - half,
            "median_high_ns": median + half, **more}


class VerdictTests(Files):
    """The rule, on entries made here: the ratio's interval [new_low / old_high,
    new_high / old_low] against 1 ± min_effect."""

    def verdict(self, old, new, min_effect=0.02):
        return results.verdict(old, new, min_effect)[3]

    def test_rule(self):
        old = entry("k", 100.0, 0.5)
        self.assertEqual(self.verdict(old, entry("k", 100.5, 0.5)), "same")
        self.assertEqual(self.verdict(old, entry("k", 110.0, 1.0)), "slower")
        self.assertEqual(self.verdict(old, entry("k", 90.0, 1.0)), "faster")
        self.assertEqual(self.verdict(old, entry("k", 103.0, 2.0)), "undecided")  # [1.0, 1.05]: across the edge
        self.assertEqual(self.verdict(old, entry("k", 100.0, 5.0)), "undecided")  # too wide for same
        self.assertEqual(self.verdict(entry("k", 0.0, 0.0), entry("k", 1.0, 0.1)), "undecided")  # no ratio

    def test_matching_by_name_device_and_hotness(self):
        old = self.write("old.json", {"schema": results.SCHEMA, "results": [
            entry("k", 100, 0.5), entry("k", 100, 0.5, device="cpu:1"), entry("k", 100, 0.5, cold=True),
            entry("gone", 5, 0.1)]})
        new = self.write("new.json", {"schema": results.SCHEMA, "results": [
            entry("k", 200, 1, device="cpu:1"), entry("k", 100, 0.5), entry("k", 50, 1, cold=True),
            entry("added", 5, 0.1)]})
        status, rows = self.compare(old, new, "--fail-on-slower")
        verdicts = {(r["name"], r["device"], r["cold"]): r["verdict"] for r in rows}
        self.assertEqual(verdicts, {("k", "cpu:0", False): "same", ("k", "cpu:1", False): "slower",
                                    ("k", "cpu:0", True): "faster", ("gone", "cpu:0", False): "only in old",
                                    ("added", "cpu:0", False): "only in new"})
        self.assertEqual(status, 1)

    def test_a_moved_sm_clock_is_said_beside_the_verdict(self):
        old = self.write("old.json", {"schema": results.SCHEMA, "results": [
            entry("k", 100, 0.5, sm_clock_mhz=1980.0), entry("j", 100, 0.5, sm_clock_mhz=1980.0)]})
        new = self.write("new.json", {"schema": results.SCHEMA, "results": [
            entry("k", 130, 0.5, sm_clock_mhz=1410.0), entry("j", 100, 0.5, sm_clock_mhz=1975.0)]})
        status, rows = self.compare(old, new)
        self.assertEqual([(r["verdict"], r["clock"]) for r in rows],
                         [("slower", "SM clock 1980 -> 1410 MHz"), ("same", None)])
        done = python_m("tpevent.compare", old, new)
        self.assertIn("slower (SM clock 1980 -> 1410 MHz)", done.stdout)

    def test_unknown_bounds_are_json_null(self):
        old = self.write("old.json", {"schema": results.SCHEMA, "results": [entry("k", 0.0, 0.0)]})
        done = python_m("tpevent.compare", "--json", old, old)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("NaN", done.stdout)
        self.assertNotIn("Infinity", done.stdout)
        self.assertEqual(json.loads(done.stdout)["rows"][0]["verdict"], "undecided")

    def test_a_summary_without_results_is_a_usage_error(self):
        # timeit's flat summary before the results list (never released) is not read.
        flat = {"schema": results.SCHEMA, "stmt": "x", "device": "cpu:0", "median": 1e-6,
                "median_low": 0.995e-6, "median_high": 1.005e-6, "samples": 10, "cold": False}
        old = self.write("old.json", flat)
        with self.assertRaisesRegex(results.ResultsError, "no 'results' list"):
            results.load(old)
        done = python_m("tpevent.compare", old, old)
        self.assertEqual(done.returncode, 2)
        self.assertIn("no 'results' list", done.stderr)

    def test_table_and_measurement_print_times_alike(self):
        # One formatter (results.format_ns) for the comparison's table and Measurement's repr.
        cases = {23740.0: "23.74 µs", -1500.0: "-1.5 µs", 2.5e6: "2.5 ms", -3e9: "-3 s", 12.0: "12 ns",
                 None: "-", float("nan"): "-"}
        for ns, text in cases.items():
            with self.subTest(ns=ns):
                self.assertEqual(results.format_ns(ns), text)
        old = self.write("old.json", {"schema": results.SCHEMA, "results": [entry("k", 23740.0, 10.0)]})
        table = results.table(results.compare(results.load(old), results.load(old)), results.MIN_EFFECT)
        self.assertIn("23.74 µs", table.splitlines()[1])
        m = tpevent.measure(lambda: sum(range(300)), tpevent.Stream("cpu:0"), host=True, max_time=1)
        median, low, high = (results.format_ns(t * 1e9) for t in (m.median, m.median_low, m.median_high))
        self.assertTrue(repr(m).startswith(f"{median} [{low}, {high}] ± "), repr(m))

    def test_not_a_results_file_is_a_usage_error(self):
        cases = {"bad.json": "{not json", "other.json": json.dumps({"schema": "nvbench/1"}),
                 "list.json": "[]", "noname.json": json.dumps({"schema": results.SCHEMA, "results": [{}]})}
        for name, text in cases.items():
            with self.subTest(name=name):
                with open(self.path(name), "w", encoding="utf-8") as f:
                    f.write(text)
                done = python_m("tpevent.compare", self.path(name), self.path(name))
                self.assertEqual(done.returncode, 2)
                self.assertIn(name, done.stderr.splitlines()[-1])
        done = python_m("tpevent.compare", "--min-effect", "1.5", self.path("bad.json"), self.path("bad.json"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("--min-effect", done.stderr)

    def test_importing_the_module_keeps_the_function(self):
        import tpevent.compare  # noqa: F401  the package's attribute becomes the module

        self.assertTrue(callable(tpevent.compare))
        compared = tpevent.compare(lambda: sum(range(300)), lambda: sum(range(1200)), tpevent.Stream("cpu:0"),
                                   host=True, max_time=1)
        self.assertIsInstance(compared, tpevent.Comparison)


if __name__ == "__main__":
    run()
