"""CuPy's and cuda.core's names for tpevent's methods (python/README.md, "Names"):
each does what the tpevent name does, and the README's table names only what
exists."""

import os
import re
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, run

README = os.path.join(os.path.dirname(__file__), "..", "..", "python", "README.md")


class EventNameTests(unittest.TestCase):
    def setUp(self):
        self.stream = tpevent.Stream(DEVICE_TYPE)

    def test_subtraction_is_elapsed_time(self):
        start = self.stream.record_event()
        end = self.stream.record_event()
        self.assertEqual(end - start, start.elapsed_time(end))
        self.assertEqual(start - end, end.elapsed_time(start))
        self.assertIsInstance(end - start, float)
        self.assertEqual(tpevent.get_elapsed_time(start, end), start.elapsed_time(end))
        self.assertEqual(getattr(tpevent, DEVICE_TYPE).get_elapsed_time(start, end), end - start)
        for other in (1, 1.0, None, self.stream):
            with self.subTest(other=other):
                with self.assertRaises(TypeError):
                    end - other
                with self.assertRaises(TypeError):
                    other - end
        with self.assertRaises(tpevent.NotRecordedError):
            tpevent.Event(DEVICE_TYPE, enable_timing=True) - start

    def test_sync_is_synchronize(self):
        self.assertIs(tpevent.Event.__dict__["sync"], tpevent.Event.__dict__["synchronize"])
        self.assertIs(tpevent.Stream.__dict__["sync"], tpevent.Stream.__dict__["synchronize"])
        with Gate(self.stream) as gate:
            e = self.stream.record_event()
            with self.assertRaises(TimeoutError):
                e.sync(timeout=0)
            gate.open()
            e.sync()
            self.stream.sync()

    def test_is_done_and_done_are_query(self):
        with Gate(self.stream) as gate:
            e = self.stream.record_event()
            self.assertEqual((e.query(), e.is_done, e.done, self.stream.done), (False, False, False, False))
            gate.open()
            e.synchronize()
            self.stream.synchronize()
            self.assertEqual((e.query(), e.is_done, e.done, self.stream.done), (True, True, True, True))
        self.assertIs(tpevent.Event(DEVICE_TYPE).is_done, True)  # never recorded: done, as query()

    def test_close(self):
        e = self.stream.record_event()
        end = self.stream.record_event()
        e.close()
        e.close()  # twice: nothing more
        self.assertIn("closed", repr(e))
        calls = [e.query, e.synchronize, e.sync, e.record, e.wait, e.timestamp, e.ipc_handle,
                 lambda: e.is_done, lambda: e.native_handle, lambda: e.enable_timing,
                 lambda: e.elapsed_time(end), lambda: end.elapsed_time(e), lambda: end - e,
                 lambda: self.stream.wait_event(e), lambda: self.stream.wait(e), lambda: self.stream.record_event(e)]
        for call in calls:
            with self.subTest(call=call):
                with self.assertRaises(ValueError) as caught:
                    call()
                self.assertIn("event is closed", str(caught.exception))
        self.assertIsInstance(self.stream.record_event() - end, float)  # the other events go on


class StreamNameTests(unittest.TestCase):
    def test_wait_takes_an_event_or_a_stream(self):
        producer, consumer = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        with Gate(producer) as gate:
            e = producer.record_event()
            consumer.wait(e)
            after_event = consumer.record_event()
            self.assertFalse(after_event.query())
            gate.open()
            after_event.synchronize()
        with Gate(producer) as gate:
            consumer.wait(producer)
            after_stream = consumer.record_event()
            self.assertFalse(after_stream.query())
            gate.open()
            after_stream.synchronize()

    def test_wait_refuses_anything_else(self):
        s = tpevent.Stream(DEVICE_TYPE)
        for other in (None, 1, "cpu"):
            with self.subTest(other=other):
                with self.assertRaisesRegex(TypeError, r"wait\(\) expects"):
                    s.wait(other)


class ReadmeTableTests(unittest.TestCase):
    def test_every_name_in_the_table_exists(self):
        with open(README, encoding="utf-8") as f:
            text = f.read()
        table = text[text.index("| tpevent |"):]
        table = table[: table.index("\n\n")]
        rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
        self.assertGreater(len(rows), 10)
        for row in rows:
            for name in re.findall(r"`((?:Event|Stream|tpevent)\.[a-z_]+)", row.split("|")[1]):
                owner, _, attribute = name.partition(".")
                with self.subTest(name=name):
                    self.assertTrue(hasattr(getattr(tpevent, owner) if owner != "tpevent" else tpevent, attribute))


if __name__ == "__main__":
    run()
