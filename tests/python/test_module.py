"""Module functions: devices, backends, synchronize, the namespaces and the package."""

import importlib
import inspect
import os
import subprocess
import sys
import unittest

import tpevent
from tpevent_testing import DEVICE_TYPE, Gate, device, need_devices, run


class BackendTests(unittest.TestCase):
    def test_backends_lists_each_backend(self):
        infos = tpevent.backends()
        self.assertEqual([info.name for info in infos], ["cpu", "cuda", "hip", "opencl", "vulkan"])
        for info in infos:
            with self.subTest(backend=info.name):
                self.assertIsInstance(info, tpevent.BackendInfo)
                self.assertIsInstance(info.available, bool)
                self.assertEqual(info.available, tpevent.is_available(info.name))
                self.assertEqual(info.device_count, tpevent.device_count(info.name))
                if info.available:
                    self.assertIsNone(info.reason)
                    self.assertGreaterEqual(info.device_count, 1)
                else:
                    self.assertIsInstance(info.reason, str)
                    self.assertTrue(info.reason)
                    self.assertEqual(info.device_count, 0)
        cpu = infos[0]
        self.assertTrue(cpu.available)
        self.assertTrue(cpu.built_in)
        self.assertEqual(cpu.device_count, int(os.environ.get("TPEVENT_CPU_DEVICES", "1")))

    def test_backend_info_is_a_named_tuple(self):
        name, available, reason, count, built_in, module_path = tpevent.backends()[0]
        self.assertEqual(name, "cpu")

    def test_is_available(self):
        self.assertIs(tpevent.is_available(DEVICE_TYPE), True)
        self.assertIs(tpevent.is_available(type=DEVICE_TYPE), True)
        self.assertIs(getattr(tpevent, DEVICE_TYPE).is_available(), True)
        self.assertIsInstance(tpevent.is_available(), bool)

    def test_device_count(self):
        count = tpevent.device_count(DEVICE_TYPE)
        self.assertGreaterEqual(count, 1)
        self.assertEqual(getattr(tpevent, DEVICE_TYPE).device_count(), count)
        self.assertEqual(tpevent.device_count(type=DEVICE_TYPE), count)

    def test_cpu_devices_from_the_environment(self):
        env = dict(os.environ, TPEVENT_CPU_DEVICES="3")
        out = subprocess.run(
            [sys.executable, "-c", "import tpevent; print(tpevent.device_count('cpu'))"],
            env=env, capture_output=True, text=True, check=True,
        )
        self.assertEqual(out.stdout.strip(), "3")


class DeviceTests(unittest.TestCase):
    def tearDown(self):
        tpevent.set_device(device(0))

    def test_set_and_current_device(self):
        tpevent.set_device(device(0))
        self.assertEqual(tpevent.current_device(), device(0))
        need_devices(self, 2)
        tpevent.set_device(device(1))
        self.assertEqual(tpevent.current_device(), device(1))
        self.assertEqual(tpevent.Event().device, device(1))
        self.assertEqual(tpevent.Stream().device, device(1))
        self.assertEqual(tpevent.current_stream().device, device(1))
        tpevent.set_device(DEVICE_TYPE)  # a type alone keeps the index
        self.assertEqual(tpevent.current_device(), device(1))

    def test_set_device_int_and_namespace(self):
        tpevent.set_device(device(0))
        tpevent.set_device(0)
        self.assertEqual(tpevent.current_device(), device(0))
        getattr(tpevent, DEVICE_TYPE).set_device(0)
        self.assertEqual(tpevent.current_device(), device(0))

    def test_current_device_from_environment(self):
        env = dict(os.environ, TPEVENT_DEVICE=device(0))
        out = subprocess.run(
            [sys.executable, "-c", "import tpevent; print(tpevent.current_device())"],
            env=env, capture_output=True, text=True, check=True,
        )
        self.assertEqual(out.stdout.strip(), device(0))

    def test_synchronize(self):
        s = tpevent.Stream(DEVICE_TYPE)
        gate = Gate(s)
        e = s.record_event()
        gate.open()
        self.assertIsNone(tpevent.synchronize(DEVICE_TYPE))
        self.assertTrue(e.query())
        tpevent.synchronize()
        tpevent.synchronize(device=device(0))
        getattr(tpevent, DEVICE_TYPE).synchronize()
        gate.close()


class PackageTests(unittest.TestCase):
    def test_names(self):
        for name in tpevent.__all__:
            self.assertTrue(hasattr(tpevent, name), name)
        self.assertEqual(tpevent.__version__.count("."), 2)

    def test_namespaces_import_as_submodules(self):
        for name in ("cpu", "cuda", "hip", "opencl", "vulkan"):
            module = importlib.import_module(f"tpevent.{name}")
            self.assertIs(module, getattr(tpevent, name))
            for attribute in ("Event", "Stream", "Error", "current_stream", "default_stream", "set_stream",
                              "stream", "synchronize", "device_count", "is_available", "set_device"):
                self.assertTrue(hasattr(module, attribute), f"tpevent.{name}.{attribute}")
            self.assertTrue(issubclass(module.Event, tpevent.Event))
            self.assertTrue(issubclass(module.Stream, tpevent.Stream))
            self.assertEqual(module.Event.__module__, f"tpevent.{name}")
        from tpevent.cuda import Event  # noqa: F401

    def test_every_public_object_is_documented(self):
        objects = [tpevent.Event, tpevent.Stream, tpevent.Error, tpevent.BackendInfo, tpevent.stream]
        objects += [getattr(tpevent.Event, n) for n in dir(tpevent.Event) if not n.startswith("_")]
        objects += [getattr(tpevent.Stream, n) for n in dir(tpevent.Stream) if not n.startswith("_")
                    or n in ("__enter__", "__exit__")]
        objects += [getattr(tpevent, n) for n in tpevent.__all__ if n != "IPC_HANDLE_SIZE"]
        for obj in objects:
            doc = inspect.getdoc(obj)
            self.assertTrue(doc and len(doc) > 20, f"{obj!r} has no docstring")

    def test_docstrings_say_what_the_issue_asks(self):
        self.assertIn("same as record_event()", tpevent.Stream.record.__doc__)
        self.assertIn("timing enabled", tpevent.Stream.record_event.__doc__)
        self.assertIn("timing enabled", tpevent.Event.elapsed_time.__doc__)
        self.assertIn("GIL is released", tpevent.Event.synchronize.__doc__)

    def test_gil_released_in_blocking_calls(self):
        # Checked by behaviour in test_event.py (synchronize, elapsed_time) and
        # test_threads.py; here: the extension is the C one, not a Python stand-in.
        self.assertTrue(tpevent._tpevent.__file__.endswith(".so"))
        self.assertEqual(type(tpevent.Event.record).__name__, "method_descriptor")


if __name__ == "__main__":
    run()
