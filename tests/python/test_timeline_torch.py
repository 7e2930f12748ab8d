"""The timeline on the H200 (scripts/gpu-check.sh): a traced torch matmul loop on a
tpevent stream wrapping torch's stream, next to a CPU stream. The GPU ranges'
durations agree with torch.cuda.Event timing of the same work within 2% (medians),
and CPU and GPU slices come in the order the code made them. Prints the numbers.
Exits 77 (skipped) without torch, CUDA or tpevent's CUDA backend."""

import json
import os
import statistics
import sys
import tempfile
import unittest

import tpevent

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
import trace_rules  # noqa: E402 (tests/trace: the format's and Perfetto's rules)

try:
    import torch
except ImportError as missing:
    print(f"skipped: torch is not installed ({missing})")
    sys.exit(77)
if not torch.cuda.is_available() or not tpevent.is_available("cuda"):
    print("skipped: torch has no CUDA device, or tpevent's CUDA backend is unavailable")
    sys.exit(77)

ITERATIONS = 20
N = 4096


class TorchTimelineTests(unittest.TestCase):
    def test_matmul_loop_trace_agrees_with_torch_events(self):
        a = torch.randn(N, N, device="cuda")
        b = torch.randn(N, N, device="cuda")
        ts = torch.cuda.Stream()
        ps = tpevent.Stream.from_native("cuda", ts.cuda_stream)  # one wrapper: one track
        cpu = tpevent.Stream(device="cpu")
        with torch.cuda.stream(ts):
            for _ in range(3):
                a @ b  # warm-up: cuBLAS handles, clocks
        ts.synchronize()
        path = os.path.join(tempfile.mkdtemp(), "torch.json")
        torch_ms = []
        with tpevent.trace(path):
            pairs = []
            for i in range(ITERATIONS):
                with tpevent.range(f"host {i}", stream=cpu):
                    pass
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                with torch.cuda.stream(ts):
                    start.record(ts)
                    with tpevent.range(f"matmul {i}", stream=ps):
                        a @ b
                    end.record(ts)
                pairs.append((start, end))
            ts.synchronize()
            torch_ms = [s.elapsed_time(e) for s, e in pairs]
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
        self.assertEqual(trace_rules.check(trace)[0], [])
        events = trace["traceEvents"]
        slices = [e for e in events if e["ph"] == "X"]
        gpu = [e for e in slices if e["name"].startswith("matmul")]
        host = [e for e in slices if e["name"].startswith("host")]
        self.assertEqual(len(gpu), ITERATIONS)
        self.assertEqual(len(host), ITERATIONS)
        self.assertEqual(len({(e["pid"], e["tid"]) for e in gpu}), 1)
        trace_ms = [e["dur"] / 1000.0 for e in gpu]
        ratios = [t / r for t, r in zip(trace_ms, torch_ms)]
        print(f"trace ms  (median {statistics.median(trace_ms):.4f}): {[round(x, 4) for x in trace_ms]}")
        print(f"torch ms  (median {statistics.median(torch_ms):.4f}): {[round(x, 4) for x in torch_ms]}")
        print(f"ratio median {statistics.median(ratios):.5f}, min {min(ratios):.5f}, max {max(ratios):.5f}")
        median_ratio = statistics.median(trace_ms) / statistics.median(torch_ms)
        self.assertLess(abs(median_ratio - 1.0), 0.02, f"trace/torch medians {median_ratio}")
        # Order: each host slice starts before its matmul; matmuls one after another.
        for i in range(ITERATIONS):
            self.assertEqual(gpu[i]["name"], f"matmul {i}")
            self.assertLessEqual(host[i]["ts"], gpu[i]["ts"], f"host {i} after matmul {i}")
            if i:
                self.assertLessEqual(gpu[i - 1]["ts"] + gpu[i - 1]["dur"], gpu[i]["ts"] + 1e-3)
                self.assertLessEqual(host[i - 1]["ts"], host[i]["ts"])
        print(f"first host slice at {host[0]['ts']:.3f} us, first matmul at {gpu[0]['ts']:.3f} us, "
              f"last matmul ends {gpu[-1]['ts'] + gpu[-1]['dur']:.3f} us")


if __name__ == "__main__":
    unittest.main()
