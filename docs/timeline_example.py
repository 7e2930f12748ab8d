"""A small CPU+GPU timeline for the README: a CPU stage, a GPU stage that waits for
it, and a CPU stage that waits for the GPU, with nested ranges. The GPU's work is
torch matmuls where torch has a GPU, else a 3 ms host function on the GPU stream (the
fake GPU of the tests does no arithmetic), so that its ranges have length."""
import sys, time
import tpevent

out = sys.argv[1]
cpu = tpevent.Stream("cpu:0", name="host")
gpu = tpevent.Stream("cuda:0", name="GPU work")
try:
    import torch
    a = torch.randn(2048, 2048, device="cuda")
except Exception:
    torch = None
with tpevent.trace(out):
    for step in range(3):
        with tpevent.range(f"step {step}", stream=cpu):
            with tpevent.range("prepare", stream=cpu):
                cpu.launch_host_func(time.sleep, 0.002)
            ready = cpu.record_event()
        gpu.wait_event(ready)
        with tpevent.range("compute", stream=gpu):
            if torch is not None:
                ext = torch.cuda.ExternalStream(gpu.cuda_stream)
                with torch.cuda.stream(ext):
                    for _ in range(4):
                        a = a @ a
                        a = a / a.norm()
            else:
                gpu.launch_host_func(time.sleep, 0.003)
        done = gpu.record_event()
        cpu.wait_event(done)
        with tpevent.range("consume", stream=cpu):
            cpu.launch_host_func(time.sleep, 0.001)
    cpu.synchronize(); gpu.synchronize()
print("wrote", out)
