"""tpevent.Graph, tpevent.graph(), Event(external=True), Stream.is_capturing() (rule 16)."""

import gc
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, run


def capturing_status(test, call):
    with test.assertRaises(tpevent.Error) as caught:
        call()
    test.assertEqual(caught.exception.status, "TP_ERR_CAPTURING")
    test.assertIn("captur", str(caught.exception))


class GraphTests(unittest.TestCase):
    def setUp(self):
        # tpevent.graph() without a stream captures on a side stream of the
        # current device, as torch.cuda.graph does: make that the tested device
        # (on a machine with a GPU the default current device is the GPU).
        previous = tpevent.current_device()
        tpevent.set_device(DEVICE_TYPE)
        self.addCleanup(tpevent.set_device, previous)
    def test_external_flag(self):
        self.assertTrue(tpevent.Event(DEVICE_TYPE, external=True).external)
        self.assertFalse(tpevent.Event(DEVICE_TYPE).external)
        self.assertTrue(tpevent.Event(device=DEVICE_TYPE, enable_timing=True, external=True).enable_timing)

    def test_capture_and_replay_many_times(self):
        g = tpevent.Graph()
        self.assertIsNone(g.device)
        s = tpevent.Stream(DEVICE_TYPE)
        done = tpevent.Event(DEVICE_TYPE, enable_timing=True, external=True)
        self.assertFalse(s.is_capturing())
        with tpevent.graph(g, stream=s):
            self.assertTrue(s.is_capturing())
            self.assertTrue(g.capturing)
            self.assertEqual(tpevent.current_stream(s.device), s)
            done.record()  # the current stream inside the block
        self.assertFalse(s.is_capturing())
        self.assertEqual(g.device, device(0))
        previous = 0
        for _ in range(50):
            g.replay(s)
            s.synchronize()
            self.assertTrue(done.query())
            stamp = done.timestamp()
            self.assertGreaterEqual(stamp, previous)
            previous = stamp

    def test_captured_python_host_function_runs_at_every_replay(self):
        # A callback launched into a capture is called by each replay, so it must
        # outlive the first one (it was freed after it: the second replay crashed).
        # Every backend that captures captures host functions (#37).
        g = tpevent.Graph()
        s = tpevent.Stream(DEVICE_TYPE)
        calls = []
        with tpevent.graph(g, stream=s):
            s.launch_host_func(calls.append, "launch_host_func")
            s.add_callback(lambda stream, status, arg: calls.append(arg), "add_callback")
        self.assertEqual(calls, [])  # captured, not run
        for _ in range(3):
            g.replay(s)
            s.synchronize()
        self.assertEqual(calls, ["launch_host_func", "add_callback"] * 3)

    def test_replay_defaults_to_the_current_stream(self):
        g = tpevent.Graph()
        done = tpevent.Event(DEVICE_TYPE, external=True)
        with tpevent.graph(g):  # a side stream of its own
            done.record()
        other = tpevent.Stream(DEVICE_TYPE)
        with other:
            with Gate(other) as gate:
                g.replay()
                self.assertFalse(done.query())
                gate.open()
                other.synchronize()
        self.assertTrue(done.query())

    def test_capturing_stream_and_event_refuse(self):
        g = tpevent.Graph()
        s = tpevent.Stream(DEVICE_TYPE)
        e = tpevent.Event(DEVICE_TYPE, enable_timing=True)
        g.capture_begin(s)
        try:
            e.record(s)
            capturing_status(self, s.query)
            capturing_status(self, s.synchronize)
            capturing_status(self, e.query)
            capturing_status(self, e.synchronize)
            capturing_status(self, e.timestamp)
            capturing_status(self, lambda: tpevent.Graph().capture_begin(s))
        finally:
            g.capture_end()
        self.assertTrue(e.query())  # a record inside a graph is none outside it

    def test_fork_join(self):
        g = tpevent.Graph()
        origin, side = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        fork, join = tpevent.Event(DEVICE_TYPE), tpevent.Event(DEVICE_TYPE)
        side_done = tpevent.Event(DEVICE_TYPE, enable_timing=True, external=True)
        end = tpevent.Event(DEVICE_TYPE, enable_timing=True, external=True)
        with tpevent.graph(g, stream=origin):
            fork.record(origin)
            side.wait_event(fork)
            self.assertTrue(side.is_capturing())
            side_done.record(side)
            join.record(side)
            origin.wait_event(join)
            end.record(origin)
        self.assertFalse(side.is_capturing())
        for _ in range(20):
            g.replay(origin)
            origin.synchronize()
            self.assertGreaterEqual(side_done.elapsed_time(end), 0.0)

    def test_unjoined_stream_refused(self):
        g = tpevent.Graph()
        origin, side = tpevent.Stream(DEVICE_TYPE), tpevent.Stream(DEVICE_TYPE)
        fork = tpevent.Event(DEVICE_TYPE)
        g.capture_begin(origin)
        fork.record(origin)
        side.wait_event(fork)
        with self.assertRaises(tpevent.Error) as caught:
            g.capture_end()
        self.assertEqual(caught.exception.status, "TP_ERR_CAPTURING")
        self.assertIn(hex(side.native_handle), str(caught.exception))
        self.assertFalse(origin.is_capturing() or side.is_capturing())
        self.assertFalse(g.capturing)
        with self.assertRaises(RuntimeError):
            g.replay(origin)

    def test_misuse(self):
        g = tpevent.Graph()
        with self.assertRaises(RuntimeError):
            g.capture_end()
        with self.assertRaises(RuntimeError):
            g.replay()
        with self.assertRaises(TypeError):
            tpevent.graph(object())
        with self.assertRaises(TypeError):
            g.capture_begin(stream=3)

    def test_graph_collected_mid_capture_frees_the_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)
        g = tpevent.Graph()
        g.capture_begin(s)
        del g
        gc.collect()
        self.assertFalse(s.is_capturing())
        s.synchronize()

    def test_reset_with_replays_pending(self):
        g = tpevent.Graph()
        s = tpevent.Stream(DEVICE_TYPE)
        done = tpevent.Event(DEVICE_TYPE, external=True)
        with tpevent.graph(g, stream=s):
            done.record(s)
        with Gate(s) as gate:
            g.replay(s)
            g.replay(s)
            g.reset()  # rule 9: the replays run on
            self.assertFalse(done.query())
            gate.open()
            s.synchronize()
        self.assertTrue(done.query())

    def test_namespaces(self):
        self.assertIs(tpevent.cuda.graph, tpevent.graph)
        self.assertIs(tpevent.cpu.Graph, tpevent.Graph)


if __name__ == "__main__":
    run()
