"""What the binding's tests share: the device type under test, the skip rule, and a
gate that keeps a stream busy until the test opens it.

Each test file runs for one device type, TPEVENT_TEST_DEVICE_TYPE (default
"cpu"). When that backend is unavailable, run() prints the reason and exits with
77, which CTest reports as skipped.
"""

import ctypes
import os
import sys
import unittest

import tpevent

DEVICE_TYPE = os.environ.get("TPEVENT_TEST_DEVICE_TYPE", "cpu")
SKIP_RETURN_CODE = 77


def backend_reason(device_type):
    for info in tpevent.backends():
        if info.name == device_type:
            return info.reason
    return f"unknown device type {device_type!r}"


def exit_if_unavailable(device_type=DEVICE_TYPE):
    if not tpevent.is_available(device_type):
        print(f"SKIP: the {device_type} backend is unavailable: {backend_reason(device_type)}")
        sys.exit(SKIP_RETURN_CODE)


def run():
    """unittest.main() for the device type under test, or exit 77 without it."""
    exit_if_unavailable()
    unittest.main(verbosity=2)


def optional_torch():
    """torch and None, or None and why its CUDA tests cannot run here."""
    try:
        import torch
    except ImportError as missing:
        return None, f"torch is not installed ({missing})"
    return torch, None if torch.cuda.is_available() else "torch has no CUDA device"


def optional_cupy():
    """CuPy and None, or None and why its CUDA tests cannot run here."""
    try:
        import cupy
    except ImportError as missing:
        return None, f"CuPy is not installed ({missing})"
    try:
        return cupy, None if cupy.cuda.runtime.getDeviceCount() > 0 else "CuPy sees no CUDA device"
    except Exception as failed:  # no driver: CuPy raises its own CUDARuntimeError
        return None, f"CuPy cannot use CUDA ({failed})"


def device(index=None):
    return DEVICE_TYPE if index is None else f"{DEVICE_TYPE}:{index}"


def need_devices(test, count):
    available = tpevent.device_count(DEVICE_TYPE)
    if available < count:
        test.skipTest(f"needs {count} {DEVICE_TYPE} devices, {available} here (TPEVENT_CPU_DEVICES sets the CPU's)")


def _loaded_library_path():
    """The libtpevent the extension loaded (whatever its SONAME says)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "/libtpevent.so" in path:
                return path
    raise RuntimeError("libtpevent is not loaded by the extension")


# The C library, already loaded by the extension: the same copy, not a second one.
_lib = ctypes.CDLL(_loaded_library_path())
_lib.tp_stream_from_native.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_void_p]
_lib.tp_stream_launch_host_fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_lib.tp_stream_destroy.argtypes = [ctypes.c_void_p]
_lib.tp_last_error.restype = ctypes.c_char_p
_libc = ctypes.CDLL(None, use_errno=True)
_libc.sem_init.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint]
_libc.sem_post.argtypes = [ctypes.c_void_p]
_libc.sem_destroy.argtypes = [ctypes.c_void_p]
_SEM_WAIT = ctypes.cast(_libc.sem_wait, ctypes.c_void_p).value


class Gate:
    """Work on a stream that does not finish until open() is called.

    The binding offers no way to submit host work (there is no kernel to launch on
    a CPU), so the test reaches the C API with ctypes: it enqueues sem_wait(&sem) as
    a host function on the stream, and open() posts the semaphore. sem_wait has the
    signature of a host function, void fn(void *), but for its return value.
    """

    def __init__(self, stream):
        self._sem = ctypes.create_string_buffer(64)  # sizeof(sem_t) is 32 on Linux
        if _libc.sem_init(self._sem, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "sem_init")
        self._stream = stream
        self._opened = False
        wrapper = ctypes.c_void_p()
        status = _lib.tp_stream_from_native(ctypes.byref(wrapper), stream.device.encode(), stream.native_handle)
        if status != 0:
            raise RuntimeError(_lib.tp_last_error().decode())
        try:
            status = _lib.tp_stream_launch_host_fn(wrapper, _SEM_WAIT, ctypes.addressof(self._sem))
            if status != 0:
                raise RuntimeError(_lib.tp_last_error().decode())
        finally:
            _lib.tp_stream_destroy(wrapper)

    def open(self):
        if not self._opened:
            self._opened = True
            _libc.sem_post(self._sem)

    def close(self):
        """Opens the gate and waits until the stream is past it, so that the
        semaphore can be freed."""
        self.open()
        self._stream.synchronize()
        _libc.sem_destroy(self._sem)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
