"""``import pycuda.autoprimaryctx``: device 0's primary context made current for the importing thread
(what numba and PyCUDA share; on the emulated device it is the same as pycuda.autoinit's)."""
from __future__ import annotations

from . import driver

driver.init()
device = driver.Device(0)
context = device.retain_primary_context()
context.push()
