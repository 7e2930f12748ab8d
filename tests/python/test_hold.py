"""Stream.hold() (rule 17): a context manager that holds the stream's later work."""

import time
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, run


class HoldTests(unittest.TestCase):
    def test_work_after_the_hold_waits_for_the_exit(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with s.hold() as h:
            self.assertIsInstance(h, tpevent.Hold)
            after = s.record_event()
            time.sleep(0.02)
            self.assertFalse(after.query())
            self.assertFalse(h.released)
        self.assertTrue(h.released)
        after.synchronize()

    def test_released_on_an_exception_which_still_propagates(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with self.assertRaises(KeyError):
            with s.hold(timeout=0.01):
                after = s.record_event()
                time.sleep(0.05)  # the watchdog lets go: the KeyError still wins
                raise KeyError("from the block")
        after.synchronize()

    def test_watchdog_lets_go_and_release_says_so(self):
        s = tpevent.Stream(DEVICE_TYPE)
        h = s.hold(timeout=0.05)
        after = s.record_event()
        after.synchronize(timeout=30)
        with self.assertRaises(tpevent.Error) as caught:
            h.release()
        self.assertEqual(caught.exception.status, "TP_ERR_NOT_READY")
        self.assertIn("ran out after 50 ms", str(caught.exception))
        h.release()  # again: nothing

    def test_release_by_hand_and_twice(self):
        s = tpevent.Stream(DEVICE_TYPE)
        h = s.hold()
        after = s.record_event()
        h.release()
        h.release()
        after.synchronize()

    def test_collected_unreleased_lets_the_stream_go(self):
        s = tpevent.Stream(DEVICE_TYPE)
        s.hold()  # dropped at once
        s.record_event().synchronize(timeout=30)

    def test_bad_timeout(self):
        s = tpevent.Stream(DEVICE_TYPE)
        with self.assertRaises(TypeError):
            s.hold(timeout="1")
        with self.assertRaises(ValueError):
            s.hold(timeout=-1)
        with self.assertRaises(TypeError):
            s.hold(1, 2)


if __name__ == "__main__":
    run()
