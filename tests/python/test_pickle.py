"""Pickling: an interprocess event goes to a multiprocessing child (spawn and fork)
as its IPC handle, and the child waits for the record the parent made; any other
event, and streams, are refused with a TypeError that says why.

Fork runs on the CPU only: a child forked from a process that uses CUDA or HIP
cannot use the runtime. Spawn runs for every device type (on CUDA: the H200)."""

import multiprocessing
import pickle
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, run

# The most a step of the exchange may take; a hang fails the test instead.
STEP_SECONDS = 60


def child_waits(connection, event=None):
    """In the child: the event (a Process argument, else the first message) is the
    parent's, recorded behind a closed gate: not reached; once the parent opens the
    gate, reached."""
    try:
        if event is None:
            event = connection.recv()
        connection.send(("queried", event.query(), event.is_done, type(event).__name__, event.device))
        event.synchronize(timeout=STEP_SECONDS)
        connection.send(("waited", event.query()))
    except BaseException as error:  # the parent reports it
        connection.send(("error", f"{type(error).__name__}: {error}"))


class PickleTests(unittest.TestCase):
    def interprocess_event(self):
        event = tpevent.Event(DEVICE_TYPE, interprocess=True)
        try:
            event.ipc_handle()
        except tpevent.Error as error:
            if error.status == "TP_ERR_UNSUPPORTED":
                self.skipTest(f"the {DEVICE_TYPE} backend has no IPC: {error}")
            raise
        return event

    def receive(self, connection, child):
        # A child that died unpickling its arguments says nothing: do not wait it out.
        for _ in range(STEP_SECONDS * 10):
            if connection.poll(0.1) or not child.is_alive():
                break
        self.assertTrue(connection.poll(0), f"the child said nothing (exit code {child.exitcode})")
        message = connection.recv()
        self.assertNotEqual(message[0], "error", message)
        return message

    def exchange(self, start_method, as_argument):
        context = multiprocessing.get_context(start_method)
        parent_end, child_end = context.Pipe()
        stream = tpevent.Stream(DEVICE_TYPE)
        event = self.interprocess_event()
        with Gate(stream) as gate:
            event.record(stream)  # pending until the gate opens
            args = (child_end, event) if as_argument else (child_end,)
            child = context.Process(target=child_waits, args=args)
            child.start()
            try:
                if not as_argument:
                    parent_end.send(event)
                _, done, is_done, type_name, device = self.receive(parent_end, child)
                self.assertEqual((done, is_done), (False, False), "reached before the gate opened")
                self.assertEqual(type_name, "Event")
                self.assertEqual(device, event.device)
                gate.open()
                self.assertEqual(self.receive(parent_end, child), ("waited", True))
            finally:
                gate.open()
                child.join(STEP_SECONDS)
                if child.exitcode is None:
                    child.kill()
        self.assertEqual(child.exitcode, 0)

    def test_spawn_through_process_arguments(self):
        self.exchange("spawn", as_argument=True)

    def test_spawn_through_a_pipe(self):
        self.exchange("spawn", as_argument=False)

    @unittest.skipUnless(DEVICE_TYPE == "cpu", "a child forked from a process using CUDA or HIP cannot use it")
    def test_fork_through_a_pipe(self):
        # With fork the Process arguments are inherited, not pickled: the pipe pickles.
        self.exchange("fork", as_argument=False)

    @unittest.skipUnless(DEVICE_TYPE == "cpu", "a CUDA or HIP handle cannot be opened by its own process")
    def test_round_trip_in_one_process_is_the_same_event(self):
        stream = tpevent.Stream(DEVICE_TYPE)
        for cls in (tpevent.Event, getattr(tpevent, DEVICE_TYPE).Event):
            with self.subTest(cls=cls.__module__):
                event = cls(DEVICE_TYPE, interprocess=True)
                copy = pickle.loads(pickle.dumps(event))
                self.assertIs(type(copy), cls)
                self.assertTrue(copy.interprocess)
                with Gate(stream) as gate:
                    event.record(stream)
                    self.assertFalse(copy.query())
                    gate.open()
                    copy.synchronize(timeout=STEP_SECONDS)

    def test_other_events_and_streams_are_refused_saying_why(self):
        for event in (tpevent.Event(DEVICE_TYPE), tpevent.Event(DEVICE_TYPE, enable_timing=True)):
            with self.subTest(event=event):
                with self.assertRaises(TypeError) as caught:
                    pickle.dumps(event)
                message = str(caught.exception)
                self.assertIn("cannot pickle", message)
                self.assertIn("not interprocess", message)
                self.assertIn("interprocess=True", message)
        with self.assertRaisesRegex(TypeError, "cannot pickle"):
            pickle.dumps(tpevent.Stream(DEVICE_TYPE))
        closed = tpevent.Event(DEVICE_TYPE, interprocess=True)
        closed.close()
        with self.assertRaisesRegex(ValueError, "the event is closed"):
            pickle.dumps(closed)


if __name__ == "__main__":
    run()
