"""Which device runs the launches: the emulator (default) or a real GPU, and its device memory.

``cudalab.use("emu" | "gpu")`` picks one (environment variable ``CUDALAB_DEVICE`` sets the start);
both speak the same small interface (alloc, free, write, read, launch) so the host API above does
not care which one it talks to.
"""
from __future__ import annotations

import os

from ..emulator.memory import DEVICE_MEMORY, DeviceMemory
from ..errors import CudaError
from .core.memory import Memory

WATCHDOG_SECONDS = 10.0


class EmuDevice:
    """The emulated GPU: a device memory arena with the runtime core's allocation table (the one
    whole programs use: ``runtime.core.memory``); programs are built per module on demand."""

    kind = "emu"
    name = "cudalab emulator"

    def __init__(self, memory_limit: int = DEVICE_MEMORY):
        self.memory = DeviceMemory(limit=memory_limit)
        self.allocations = Memory(self.memory)

    def alloc(self, nbytes: int, label: str = "", scratch: bool = False):
        """``scratch``: held for one launch only (memory.DeviceMemory.alloc)."""
        return self.allocations.alloc(nbytes, "device", label or None, scratch=scratch)

    def free(self, ptr):
        self.allocations.free(int(ptr), kinds=("device",), call="free")

    def write(self, ptr, array):
        self.memory.write(ptr, array)

    def read(self, ptr, nbytes):
        return self.memory.read(ptr, nbytes)

    def read_into(self, ptr, out):
        """Copy ``out.size`` bytes at ``ptr`` into the uint8 array ``out``."""
        self.memory.read_into(ptr, out)


class GpuDevice:
    """A real NVIDIA GPU through cudalab.gpu.backend (cuda.core)."""

    kind = "gpu"

    def __init__(self):
        from ..gpu import backend
        if not backend.available():
            backend.device_info()          # raises NoGpuError with the reason
        self.backend = backend
        self.info = backend.device_info()
        self.name = self.info.name
        self._buffers: dict = {}

    def alloc(self, nbytes: int, label: str = "", scratch: bool = False):
        buf = self.backend.GpuBuffer(max(int(nbytes), 1))
        self._buffers[buf.ptr] = buf
        return buf.ptr

    def free(self, ptr):
        if self._buffers.pop(int(ptr), None) is None:
            raise CudaError(f"cannot free pointer 0x{int(ptr):x}: it is not a live allocation.", "cudaErrorInvalidValue")

    def buffer(self, ptr):
        return self._buffers[int(ptr)]

    def adopt(self, buf):
        """Track memory the driver owns (a module's __constant__/__device__ variable)."""
        self._buffers.setdefault(int(buf.ptr), buf)

    def write(self, ptr, array):
        self._buffers[int(ptr)].copy_from_host(array)

    def read(self, ptr, nbytes):
        import numpy as np
        out = np.empty(self._buffers[int(ptr)].nbytes, np.uint8)
        self._buffers[int(ptr)].copy_to_host(out)
        return out[:nbytes]


_devices: dict = {}
_current = [None]


def _make(kind: str):
    if kind not in ("emu", "gpu"):
        raise CudaError(f"unknown device {kind!r}: use 'emu' (the emulator) or 'gpu' (a real NVIDIA GPU).",
                        "cudaErrorInvalidDevice")
    dev = _devices.get(kind)
    if dev is None:
        dev = _devices[kind] = EmuDevice() if kind == "emu" else GpuDevice()
    return dev


_both = [False]


def use(kind: str):
    """Run launches on ``"emu"`` (the emulator), ``"gpu"`` (a real NVIDIA GPU) or ``"both"`` (each
    launch runs on both and the outputs are compared bit for bit)."""
    both = kind == "both"
    if both:
        _make("gpu")              # fail now, with the reason, if there is no GPU
        kind = "emu"
    _current[0] = _make(kind)
    _both[0] = both
    return _current[0]


def comparing() -> bool:
    return _both[0]


def current():
    if _current[0] is None:
        use(os.environ.get("CUDALAB_DEVICE", "emu"))
    return _current[0]


def get(kind: str):
    return _make(kind)


def reset():
    """Forget every device and its memory (tests, and cudaDeviceReset)."""
    _devices.clear()
    _current[0] = None
    _both[0] = False


def set_watchdog(seconds: float):
    """Stop emulated kernels that run longer than ``seconds`` of CPU time (default 10; a launch whose
    batches run on several threads, its busiest thread's: emulator/pace.py); a launch whose
    first blocks show it would clearly take longer is stopped at once, with the estimate."""
    global WATCHDOG_SECONDS
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        raise CudaError(f"set_watchdog() takes a number of seconds, not {seconds!r}.", "cudaErrorInvalidValue") from None
    if not value > 0:
        raise CudaError(f"the watchdog limit must be more than 0 seconds, not {seconds!r}.", "cudaErrorInvalidValue")
    WATCHDOG_SECONDS = value
