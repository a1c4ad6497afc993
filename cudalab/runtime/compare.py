"""Run one launch on the emulator and on the real GPU and compare every output, bit for bit.

This is the differential test the project trusts the emulator by, offered to students too:
``cudalab.use("both")`` (or ``%%cuda --device both``) makes every launch run twice and report the
first elements where the two devices disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CudaError, LaunchError


@dataclass
class Difference:
    argument: int                 # index of the array argument
    count: int                    # elements that differ
    first: list = field(default_factory=list)   # [(index, emulator value, gpu value)]

    def __str__(self):
        shown = ", ".join(f"[{i}] emu={e!r} gpu={g!r}" for i, e, g in self.first)
        return f"argument {self.argument + 1}: {self.count} element(s) differ; first: {shown}"


@dataclass
class Comparison:
    kernel: str
    emu: object                   # LaunchRecord
    gpu: object                   # LaunchRecord
    differences: list

    @property
    def same(self) -> bool:
        return not self.differences

    def __repr__(self):
        if self.same:
            return f"<{self.kernel}: the emulator and the GPU agree on every output, bit for bit>"
        return f"<{self.kernel}: the emulator and the GPU differ:\n  " + "\n  ".join(map(str, self.differences)) + ">"


def _bits(a):
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    return a


def diff(emu_out, gpu_out, show: int = 5):
    """The Differences between two lists of output arrays (None entries are skipped)."""
    found = []
    for k, (e, g) in enumerate(zip(emu_out, gpu_out)):
        if e is None:
            continue
        be, bg = _bits(e).ravel(), _bits(g).ravel()
        bad = np.flatnonzero(be != bg)
        if bad.size:
            fe, fg = np.ravel(e), np.ravel(g)
            found.append(Difference(k, int(bad.size), [(int(i), fe[i].item(), fg[i].item()) for i in bad[:show]]))
    return found


def compare(kernel, grid, block, args=(), shared: int = 0) -> Comparison:
    """Launch ``kernel`` on the emulator and on the GPU with copies of the same numpy arguments."""
    from . import device as devices
    for a in args:
        if hasattr(a, "device_ptr"):
            raise LaunchError("to compare the emulator with the GPU, pass numpy arrays (each device gets its own "
                              "copy), not device arrays.", "cudaErrorInvalidValue")
    gpu = devices.get("gpu")            # raises NoGpuError with the reason when there is none
    emu = devices.get("emu")
    emu_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    gpu_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    rec_e = kernel.launch(grid, block, emu_args, shared=shared, device=emu)
    try:
        rec_g = kernel.launch(grid, block, gpu_args, shared=shared, device=gpu)
    except CudaError as e:
        raise CudaError(f"the emulator ran {kernel.name}, but the GPU refused it: {e}", e.code) from None
    outs_e = [a if isinstance(a, np.ndarray) else None for a in emu_args]
    outs_g = [a if isinstance(a, np.ndarray) else None for a in gpu_args]
    result = Comparison(kernel.name, rec_e, rec_g, diff(outs_e, outs_g))
    for host, e in zip(args, emu_args):     # the caller sees the emulator's results, as with one device
        if isinstance(host, np.ndarray) and host.flags.writeable:
            host[...] = e
    rec_e.reports["compare"] = result
    return result
