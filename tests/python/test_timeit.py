"""python -m tpevent.timeit reads as python -m timeit (issue 49 item 4): its options,
its first line, argparse's errors, --json's summary.

Each run is a subprocess on cpu:0, kept short (--max-time 1 at most, any noise), so
nothing here asserts a time: only what the command line says and how it says it.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

import tpevent
import tpevent.timeit as tpevent_timeit
from tpevent_testing import run

QUICK = ["-d", "cpu:0", "--min-time", "0.01", "--max-time", "1", "--max-noise", "1e9"]

# python -m timeit's line: "%d loop%s, best of %d: %.*g %s per loop".
TIMEIT_LINE = re.compile(
    r"^(?P<loops>\d+) loops?, best of (?P<repeat>\d+): "
    r"(?P<best>\d+(\.\d+)?(e[+-]\d+)?) (?P<unit>nsec|usec|msec|sec) per loop$"
)
TPEVENT_LINE = re.compile(
    r"^tpevent: median \S+ (?P<unit>nsec|usec|msec|sec) per loop.*, cpu:0, (not )?held, (hot|cold), "
)


def tpevent_timeit_run(*arguments, quick=True):
    command = [sys.executable, "-m", "tpevent.timeit", *(QUICK if quick else []), *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


class TimeitOutputTests(unittest.TestCase):
    def answer(self, *arguments):
        done = tpevent_timeit_run(*arguments)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.splitlines()

    def test_first_line_is_python_timeits(self):
        # The pattern is checked on python -m timeit's own line first.
        theirs = subprocess.run([sys.executable, "-m", "timeit", "-n", "3", "-r", "2", "pass"],
                                capture_output=True, text=True, timeout=60)
        self.assertRegex(theirs.stdout.splitlines()[0], TIMEIT_LINE)
        lines = self.answer("-s", "x = list(range(100))", "sum(x)")
        self.assertRegex(lines[0], TIMEIT_LINE)
        self.assertRegex(lines[1], TPEVENT_LINE)
        self.assertRegex(lines[1], r", (not )?converged$")

    def test_number_is_the_loops_per_sample(self):
        self.assertEqual(TIMEIT_LINE.match(self.answer("-n", "7", "pass")[0])["loops"], "7")
        self.assertTrue(self.answer("--number", "1", "pass")[0].startswith("1 loop, best of "))

    def test_repeat_is_the_least_samples(self):
        done = tpevent_timeit_run("--json", "-r", "25", "-n", "3", "--min-time", "0", "pass")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertGreaterEqual(json.loads(done.stdout)["samples"], 25)

    def test_best_of_repeats_of_a_fifth_of_a_second(self):
        # timeit's statistic: the samples grouped into repeats of at least 0.2 s (its
        # autorange), the least repeat's mean; not the least of ~1,000 short samples.
        done = tpevent_timeit_run("--json", "--min-time", "0.5", "sum(range(1000))")
        self.assertEqual(done.returncode, 0, done.stderr)
        summary = json.loads(done.stdout)
        self.assertLessEqual(summary["repeat"], summary["samples"])
        self.assertGreaterEqual(summary["best"], summary["min"])
        self.assertGreaterEqual(summary["repeat"], 1)

    def test_unit_fixes_both_lines_unit(self):
        for unit in ("nsec", "usec", "msec", "sec"):
            with self.subTest(unit=unit):
                option = ["-u", unit] if unit != "sec" else ["--unit", unit]
                lines = self.answer(*option, "pass")
                self.assertEqual(TIMEIT_LINE.match(lines[0])["unit"], unit)
                self.assertEqual(TPEVENT_LINE.match(lines[1])["unit"], unit)

    def test_setup_repeated_is_its_lines_joined_and_run_once(self):
        with tempfile.TemporaryDirectory() as folder:
            runs = os.path.join(folder, "runs")
            setup = ["-s", f"path = {runs!r}", "--setup", "open(path, 'a').write('setup ran\\n')"]
            summary = json.loads(tpevent_timeit_run("--json", *setup, "n = 1").stdout)
            with open(runs) as ran:
                self.assertEqual(ran.read(), "setup ran\n")  # once, not once per sample
        self.assertEqual(summary["setup"], "\n".join(setup[1::2]))
        self.assertGreater(summary["samples"], 1)

    def test_statement_lines_are_one_statement(self):
        summary = json.loads(tpevent_timeit_run("--json", "total = 0", "for i in range(3): total += i").stdout)
        self.assertEqual(summary["stmt"], "total = 0\nfor i in range(3): total += i")

    def test_verbose_prints_the_details_first(self):
        self.assertRegex(self.answer("pass")[0], TIMEIT_LINE)
        for option in (["-v"], ["--verbose", "--verbose"]):
            with self.subTest(option=option):
                lines = self.answer(*option, "pass")
                answer = next(i for i, line in enumerate(lines) if TIMEIT_LINE.match(line))
                self.assertRegex(lines[0], r"^\d+ samples of \d+ loops \(\d+ timed calls\), noise ")
                self.assertRegex(lines[1], r"^per loop: mean .*, min .*, max ")
                self.assertRegex(lines[2], r"^floor .* per sample, .* per loop taken off; median before it ")
                self.assertEqual(lines[answer - 1], "")
                self.assertRegex(lines[answer + 1], TPEVENT_LINE)

    def test_samples_only_with_the_option(self):
        lines = self.answer("-n", "2", "--samples", "pass")
        repeat = int(TIMEIT_LINE.match(lines[0])["repeat"])
        times = [float(line) for line in lines[2:] if not line.startswith("note:")]
        self.assertGreaterEqual(len(times), repeat)  # repeats group the samples
        self.assertTrue(all(line.startswith("note:") for line in self.answer("-n", "2", "pass")[2:]))

    def test_cold_is_one_loop_per_sample(self):
        lines = self.answer("--cold", "pass")
        self.assertTrue(lines[0].startswith("1 loop, best of "), lines[0])
        self.assertIn(", cold, ", lines[1])


class TimeitJsonTests(unittest.TestCase):
    def summary(self, *arguments):
        done = tpevent_timeit_run("--json", *arguments)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(len(done.stdout.splitlines()), 1)
        return json.loads(done.stdout)

    def test_summary_without_samples(self):
        summary = self.summary("-n", "4", "-s", "x = 2", "x * x")
        self.assertEqual(summary["schema"], "tpevent-results/1")
        self.assertNotIn("times", summary)
        self.assertEqual((summary["stmt"], summary["setup"], summary["number"]), ("x * x", "x = 2", 4))
        self.assertEqual(summary["number"], summary["batch"])
        self.assertLessEqual(summary["repeat"], summary["samples"])
        self.assertGreaterEqual(summary["best"], summary["min"])
        self.assertEqual(summary["device"], "cpu:0")
        for field in ("median", "noise", "held", "converged", "cold", "note", "calls", "cpu_time", "iqr"):
            self.assertIn(field, summary)

    def test_samples_with_the_option(self):
        summary = self.summary("-n", "4", "--samples", "pass")
        self.assertEqual(len(summary["times"]), min(summary["samples"], 65536))
        self.assertGreaterEqual(summary["best"], min(summary["times"]))  # a repeat's mean, not a sample


class TimeitCompareTests(unittest.TestCase):
    """--compare A B: tpevent.compare's verdict on two statements."""

    def test_twice_the_work_is_slower(self):
        done = tpevent_timeit_run("--compare", "--max-time", "5", "sum(range(2000))", "sum(range(8000))")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertRegex(lines[0], r"^b is [\d.]+ % ± [\d.e+-]+ % slower than a \(cpu:0, ")
        self.assertTrue(lines[1].startswith("a: tpevent: median "), lines[1])
        self.assertTrue(lines[2].startswith("b: tpevent: median "), lines[2])

    def test_json_is_the_comparison(self):
        done = tpevent_timeit_run("--compare", "--json", "--max-time", "5", "sum(range(2000))", "sum(range(8000))")
        self.assertEqual(done.returncode, 0, done.stderr)
        summary = json.loads(done.stdout)
        self.assertEqual(summary["schema"], "tpevent-results/1")
        self.assertEqual((summary["stmt_a"], summary["stmt_b"]), ("sum(range(2000))", "sum(range(8000))"))
        self.assertEqual(summary["verdict"], "slower")
        self.assertGreater(summary["low"], 1.0)
        self.assertNotIn("times", summary["a"])

    def test_one_statement_is_an_argparse_error(self):
        done = tpevent_timeit_run("--compare", "pass")
        self.assertEqual(done.returncode, 2)
        self.assertIn("--compare", done.stderr.splitlines()[-1])


class TimeitErrorTests(unittest.TestCase):
    def assert_argparse_error(self, *arguments, naming):
        done = tpevent_timeit_run(*arguments, "pass")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(done.stdout, "")
        self.assertNotIn("Traceback", done.stderr)
        errors = [line for line in done.stderr.splitlines() if "error:" in line]
        self.assertEqual(len(errors), 1, done.stderr)
        self.assertIn(naming, errors[0])

    def test_bad_values(self):
        cases = [
            (["-n", "-1"], "-n/--number"),
            (["--number", "many"], "-n/--number"),
            (["-r", "0"], "-r/--repeat"),
            (["--repeat", "1.5"], "-r/--repeat"),
            (["-u", "psec"], "-u/--unit"),
            (["-d", "bogus"], "-d/--device"),
            (["--max-noise", "nan"], "--max-noise"),
            (["--bogus"], "--bogus"),
        ]
        for arguments, naming in cases:
            with self.subTest(arguments=arguments):
                self.assert_argparse_error(*arguments, naming=naming)

    def test_process_time_is_refused_saying_why(self):
        for option in ("-p", "--process"):
            with self.subTest(option=option):
                self.assert_argparse_error(option, naming="process's CPU time")

    def test_help_explains_both_lines_and_the_cpu(self):
        done = tpevent_timeit_run("--help", quick=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = " ".join(done.stdout.split())
        for words in ('"N loops, best of R: X usec per loop"', "The second line is tpevent's",
                      "confidence interval", "stream's host thread", "timeit's own compiled loop",
                      "-p/--process is refused", "--number", "--repeat", "--unit", "--setup", "--verbose"):
            self.assertIn(words, text)

    def test_statement_that_raises_is_timeits_traceback_and_exit_1(self):
        done = tpevent_timeit_run("-s", "d = {}", "d['missing']")
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("KeyError: 'missing'", done.stderr)
        self.assertIn("d['missing']", done.stderr)  # the statement's line, as timeit shows it
        done = tpevent_timeit_run("1 +")
        self.assertEqual(done.returncode, 1)
        self.assertIn("SyntaxError", done.stderr)

    def test_no_work_on_the_stream_is_an_error_line_and_exit_1(self):
        # On a CPU device the statement is the stream's work, so this answer comes
        # from a GPU: a statement of Python alone. Its Measurement is stood in here.
        note = "fn put no work on the measured stream (its device time is within the floor's noise)"
        idle = types.SimpleNamespace(converged=False, note=note, samples=3, held=True, cold=False)
        stdout, stderr = io.StringIO(), io.StringIO()
        with mock.patch.object(tpevent_timeit, "_run", return_value=idle), \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = tpevent_timeit.main(["-d", "cpu:0", "pass"])
        self.assertEqual(status, 1)
        self.assertEqual(stdout.getvalue(), "")
        self.assertEqual(stderr.getvalue(), f"python -m tpevent.timeit: error: {note}\n")


if __name__ == "__main__":
    assert tpevent.is_available("cpu")
    run()
