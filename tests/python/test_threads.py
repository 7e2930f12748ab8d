"""Several Python threads at once: shared events and streams, per-thread current
streams, creation and destruction, and blocking calls that let others run."""

import threading
import time
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, run

THREADS = 8
ROUNDS = 300


def run_threads(target, count=THREADS):
    """Runs target(index) on `count` threads started together; re-raises the first
    failure in the calling thread."""
    barrier = threading.Barrier(count)
    failures = []

    def body(index):
        try:
            barrier.wait()
            target(index)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        if thread.is_alive():
            raise AssertionError("a thread did not finish in 120 s")
    if failures:
        raise failures[0]


class ThreadTests(unittest.TestCase):
    def test_each_thread_its_own_stream_and_events(self):
        def work(index):
            s = tpevent.Stream(DEVICE_TYPE)
            for _ in range(ROUNDS):
                start = s.record_event()
                end = s.record_event()
                self.assertGreaterEqual(start.elapsed_time(end), 0.0)
                end.synchronize()
                self.assertTrue(end.query())

        run_threads(work)

    def test_shared_event_recorded_queried_and_waited_on(self):
        shared = tpevent.Event(DEVICE_TYPE)
        streams = [tpevent.Stream(DEVICE_TYPE) for _ in range(THREADS)]

        def work(index):
            s = streams[index]
            for round_ in range(ROUNDS):
                if index % 2 == 0:
                    shared.record(s)
                else:
                    shared.query()
                    shared.wait(s)
                if round_ % 50 == 0:
                    shared.synchronize()
            s.synchronize()

        run_threads(work)
        shared.synchronize()
        self.assertTrue(shared.query())

    def test_shared_stream(self):
        s = tpevent.Stream(DEVICE_TYPE)

        def work(index):
            mine = tpevent.Event(DEVICE_TYPE, enable_timing=True)
            for _ in range(ROUNDS):
                s.record_event(mine)
                s.wait_event(mine)
                s.query()
            s.synchronize()

        run_threads(work)

    def test_current_stream_is_per_thread(self):
        default = tpevent.default_stream(DEVICE_TYPE)

        def work(index):
            s = tpevent.Stream(DEVICE_TYPE)
            for _ in range(50):
                with s:
                    self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
                    tpevent.Event(DEVICE_TYPE).record()
                    time.sleep(0)  # let the others switch theirs meanwhile
                    self.assertIs(tpevent.current_stream(DEVICE_TYPE), s)
                self.assertEqual(tpevent.current_stream(DEVICE_TYPE), default)
            tpevent.set_stream(s)  # current when the thread ends: released with it

        run_threads(work)
        self.assertEqual(tpevent.current_stream(DEVICE_TYPE), default)

    def test_create_and_destroy_from_many_threads(self):
        def work(index):
            for _ in range(ROUNDS):
                s = tpevent.Stream(DEVICE_TYPE)
                events = [tpevent.Event(DEVICE_TYPE, enable_timing=bool(i % 2)) for i in range(4)]
                for e in events:
                    e.record(s)
                del s  # destroyed with records possibly pending
                events[-1].synchronize()

        run_threads(work)

    def test_blocked_threads_do_not_block_the_others(self):
        held = tpevent.Stream(DEVICE_TYPE)
        gate = Gate(held)
        event = held.record_event()
        waiting = []
        done = []

        def waiter(index):
            waiting.append(index)
            event.synchronize()  # blocks until the gate opens, GIL released
            done.append(event.query())

        threads = [threading.Thread(target=waiter, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        # This thread keeps running Python while the waiters block.
        deadline = time.monotonic() + 30
        while len(waiting) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        s = tpevent.Stream(DEVICE_TYPE)
        for _ in range(100):
            s.record_event().synchronize()
        self.assertFalse(event.query())
        gate.open()
        for thread in threads:
            thread.join(30)
            self.assertFalse(thread.is_alive())
        self.assertEqual(done, [True] * 4)
        gate.close()


if __name__ == "__main__":
    run()
