"""Event.send(sock) and Event.recv(sock): an interprocess event handed over a Unix
socket, in one process and to a child process (started with exec, as a CUDA process
must be), and the errors, which name the socket and the reason."""

import os
import socket
import subprocess
import sys
import threading
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, run

STEP_SECONDS = 60

# The child: receives the event, says whether it is pending, waits on it on a
# stream of its own and records it there, then says "recorded".
CHILD = r"""
import socket, sys, tpevent
sock = socket.socket(fileno=int(sys.argv[1]))
event = tpevent.Event.recv(sock)
sock.sendall(b"p" if not event.query() else b"x")
stream = tpevent.Stream(event.device)
event.wait(stream)
event.record(stream)
event.synchronize(timeout=60)
sock.sendall(b"r")
"""


class SocketTests(unittest.TestCase):
    def interprocess_event(self):
        event = tpevent.Event(DEVICE_TYPE, interprocess=True)
        first, second = socket.socketpair()
        with first, second:
            try:
                event.send(first)
            except tpevent.Error as error:
                if error.status == "TP_ERR_UNSUPPORTED":
                    self.skipTest(f"the {DEVICE_TYPE} backend cannot hand events over a socket: {error}")
                raise
        return event

    def test_in_one_process_both_handles_are_one_event(self):
        event = self.interprocess_event()
        first, second = socket.socketpair()
        with first, second:
            event.send(first)
            received = tpevent.Event.recv(second)
            self.assertTrue(received.interprocess)
            self.assertEqual(received.device, event.device)
            stream = tpevent.Stream(DEVICE_TYPE)
            with Gate(stream) as gate:
                event.record(stream)
                self.assertFalse(received.query())
                gate.open()
                received.synchronize(timeout=STEP_SECONDS)
            with Gate(stream) as gate:
                received.record(stream)
                self.assertFalse(event.query())
                gate.open()
                event.synchronize(timeout=STEP_SECONDS)

    def test_a_child_process_waits_and_records_back(self):
        event = self.interprocess_event()
        mine, theirs = socket.socketpair()
        stream = tpevent.Stream(DEVICE_TYPE)
        with mine, theirs, Gate(stream) as gate:
            event.record(stream)  # pending until the gate opens
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(theirs.fileno())], pass_fds=[theirs.fileno()]
            )
            try:
                event.send(mine)
                mine.settimeout(STEP_SECONDS)
                self.assertEqual(mine.recv(1), b"p", "the child saw the record reached before the gate opened")
                gate.open()
                self.assertEqual(mine.recv(1), b"r")
                event.synchronize(timeout=STEP_SECONDS)
                self.assertTrue(event.query())
            finally:
                gate.open()
                self.assertEqual(child.wait(STEP_SECONDS), 0)

    def test_errors_name_the_socket_and_the_reason(self):
        first, second = socket.socketpair()
        with first, second:
            plain = tpevent.Event(DEVICE_TYPE)
            with self.assertRaises(ValueError) as caught:
                plain.send(first)
            self.assertIn(repr(first), str(caught.exception))
            self.assertIn("INTERPROCESS", str(caught.exception).upper())
            first.sendall(b"not an event".ljust(128, b"\0"))
            with self.assertRaises(ValueError) as caught:
                tpevent.Event.recv(second)
            self.assertIn(repr(second), str(caught.exception))
            self.assertIn("bad magic", str(caught.exception))
            second.settimeout(0.05)
            with self.assertRaisesRegex(TimeoutError, "no event received"):
                tpevent.Event.recv(second)
        event = self.interprocess_event()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as inet:
            with self.assertRaisesRegex(ValueError, "AF_UNIX"):
                event.send(inet)
        with self.assertRaises((TypeError, ValueError)):
            event.send("not a socket")
        read_end, write_end = os.pipe()
        try:
            with self.assertRaisesRegex(ValueError, "not a socket"):
                event.send(write_end)
        finally:
            os.close(read_end)
            os.close(write_end)

    def test_a_timeout_of_centuries_waits_as_a_blocking_socket(self):
        # 9.223372e9 s fits a socket's timeout, and its ns an int64: their deadline,
        # now + timeout, does not (it ran over and recv timed out at once).
        event = self.interprocess_event()
        first, second = socket.socketpair()
        with first, second:
            second.settimeout(9.223372e9)
            sender = threading.Timer(0.2, event.send, (first,))
            sender.start()
            try:
                received = tpevent.Event.recv(second)
            finally:
                sender.join()
            self.assertTrue(received.interprocess)


if __name__ == "__main__":
    run()
