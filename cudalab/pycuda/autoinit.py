"""``import pycuda.autoinit``: a context on the emulated device for the importing thread, as PyCUDA
makes one on device 0 (``pycuda.autoinit.device``, ``pycuda.autoinit.context``)."""
from __future__ import annotations

from . import driver

driver.init()
device = driver.Device(0)
context = device.make_context()
