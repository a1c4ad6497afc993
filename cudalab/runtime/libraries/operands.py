"""The device memory a library call reads and writes, as numpy views, and its row on the timeline.

cuBLAS and cuRAND name their operands the way BLAS does: a vector is a pointer, a length and an
increment; a matrix is a pointer, rows, columns and a leading dimension (column-major, element
(i, j) at ``A[i + j * lda]``). Each becomes a numpy view of the emulated device memory (the arena
a whole program shares with the emulator), checked first against the allocation table so that a
host pointer or a buffer too small for its operand is reported with the argument's name instead
of corrupting memory. Writes go through ``store``, which also tells initcheck the bytes now hold
data.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ...emulator.memory import GLOBAL_BASE


# cudaDataType_t (library_types.h) -> numpy type; CUDA_R_16BF (14) is stored as the top half of a float32
DATA_TYPES = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.int8, 4: np.complex64, 5: np.complex128,
              10: np.int32, 14: "bfloat16"}
CPU_FLOPS = 5e9      # what numpy's BLAS does per second on a shared CPU (4092^3 dgemm: about 40 s)


def bf16_load(view16: np.ndarray) -> np.ndarray:
    """bfloat16s (their 16 bits) as float32s."""
    return (view16.astype(np.uint32) << 16).view(np.float32)


def bf16_bits(values) -> np.ndarray:
    """float32s rounded to bfloat16 (to nearest even), as their 16 bits."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def storage(code: int) -> np.dtype:
    """How a cudaDataType_t's element is held in memory (bfloat16: its 16 bits)."""
    t = DATA_TYPES[code]
    return np.dtype(np.uint16) if t == "bfloat16" else np.dtype(t)


class LibraryError(Exception):
    """A library call refused: ``status`` is the library's own code (e.g. CUBLAS_STATUS_INVALID_VALUE)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class Operands:
    """Views of one context's device memory for the library call ``call`` (its name in messages)."""

    def __init__(self, ctx, call: str, failed_status: int):
        self.ctx, self.call, self.failed = ctx, call, failed_status
        self.arena = ctx.memory.arena

    def _check(self, name: str, addr: int, nbytes: int):
        a = self.arena.find(addr)
        if a is None or a.freed or addr < a.address or addr + nbytes > a.address + max(a.size, 1):
            raise LibraryError(f"{self.call}: {name} needs {nbytes:,} bytes of device memory at 0x{addr:x}, but the "
                               f"address is {self.arena.describe(addr, nbytes)}. Library routines take device "
                               "pointers (cudaMalloc) for their vectors and matrices.", self.failed)

    def view(self, name, addr, dtype, shape, strides, span_elements):
        """``shape`` elements at ``addr`` with ``strides`` (in elements), after checking that the
        ``span_elements`` they reach lie in one allocation (the library's status code if not)."""
        dtype = np.dtype(dtype)
        if min(shape, default=1) <= 0:
            return np.zeros(shape, dtype)
        self._check(name, addr, span_elements * dtype.itemsize)
        return np.ndarray(shape, dtype, buffer=self.arena.data, offset=addr - GLOBAL_BASE,
                          strides=tuple(s * dtype.itemsize for s in strides))

    def vector(self, name: str, addr: int, n: int, inc: int, dtype) -> np.ndarray:
        """x[0..n) with increment ``inc``; a negative increment walks backwards from the last element,
        as reference BLAS does (element i at x[(n - 1 - i) * |inc|])."""
        v = self.view(name, addr, dtype, (max(n, 0),), (abs(inc),), (n - 1) * abs(inc) + 1)
        return v[::-1] if inc < 0 else v

    def matrix(self, name: str, addr: int, rows: int, cols: int, ld: int, dtype) -> np.ndarray:
        """A column-major rows x cols matrix with leading dimension ``ld``."""
        return self.view(name, addr, dtype, (rows, cols), (1, ld), (cols - 1) * ld + rows)

    def array(self, name: str, addr: int, n: int, dtype) -> np.ndarray:
        """n contiguous elements (cuRAND's output, a pointer array of a batched call)."""
        return self.view(name, addr, dtype, (max(n, 0),), (1,), n)

    def store(self, view: np.ndarray, values):
        """Write ``values`` into ``view`` (rounded to its type) and mark those bytes initialized."""
        if view.size == 0:
            return
        view[...] = values
        base = self.arena.data.__array_interface__["data"][0]
        low, high = byte_bounds(view)
        a = self.arena.find(GLOBAL_BASE + low - base)
        if a is not None:
            a.mark_written(GLOBAL_BASE + low - base - a.address, GLOBAL_BASE + high - base - a.address)


class Call:
    """One library call: its arguments by their C names (a descriptor's fields as ``desc.field``), and
    its device memory, typed by cudaDataType_t codes (cuSPARSE's and cuBLASLt's calls build on it)."""

    def __init__(self, ctx, routine: str, stream: int, args: dict, device_scalars: bool, failed_status: int):
        self.ctx, self.routine, self.stream, self.args = ctx, routine, stream, args
        self.device_scalars = device_scalars
        self.memory = Operands(ctx, routine, failed_status)

    def __getitem__(self, name):
        return self.args[name]

    def scalar(self, name: str, dtype):
        """alpha or beta: the value behind a host pointer, or read from device memory."""
        where, value = self.args[name]
        if where == "host":
            return np.frombuffer(value, dtype, 1)[0]
        return self.memory.array(name, value, 1, dtype)[0]

    def load(self, name, addr, code, shape, strides, span) -> np.ndarray:
        """Values of cudaDataType ``code`` (``Operands.view``'s other arguments; bfloat16 widened to float32)."""
        view = self.memory.view(name, addr, storage(code), shape, strides, span)
        return bf16_load(view) if DATA_TYPES[code] == "bfloat16" else view

    def store(self, name, addr, code, shape, strides, span, values):
        """``values`` written as cudaDataType ``code`` (bfloat16 rounded to nearest even)."""
        view = self.memory.view(name, addr, storage(code), shape, strides, span)
        self.memory.store(view, bf16_bits(values) if DATA_TYPES[code] == "bfloat16" else values)


def gemm_precision(inputs, tf32: bool = False) -> str:
    """The precision (``Profile.math_rate``'s key) of a product whose A and B are ``inputs`` (a numpy dtype or a
    cudaDataType's storage dtype): a program that times cublasHgemm against cublasSgemm, or a
    cuBLASLt FP16 matmul against an FP32 one, sees the tensor cores' speed-up a GPU shows."""
    kind = np.dtype(inputs)
    if kind.itemsize == 2 and kind.kind in "fu":          # float16, or bfloat16 held as its 16 bits (storage)
        return "half"
    if kind in (np.float64, np.complex128):
        return "double"
    return "tf32" if tf32 else "single"


def on_timeline(ctx, stream: int, name: str, flops: float, nbytes: float, precision: str = "single"):
    """The call's row on the stream's timeline, named as the library routine ("cublasSgemm"), timed
    as the slower of its arithmetic at the device's peak for ``precision`` (``Profile.math_rate``) and its
    bytes at DRAM bandwidth: the library's own kernels are not emulated, so this is an estimate of a
    well-tuned one."""
    from ...device.timing import DRAM_EFFICIENCY, LAUNCH_OVERHEAD_US
    s = ctx.stream(stream)
    if s.handle == 0:
        ctx.legacy_stream_used(name)
    p = ctx.profile.sized()
    peak = p.fp32_flops() * p.math_rate(precision)
    bandwidth = (p.memory_bandwidth_gbs or 1000) * 1e9 * DRAM_EFFICIENCY
    us = LAUNCH_OVERHEAD_US + max(flops / peak, nbytes / bandwidth) * 1e6
    row = ctx.timeline.kernel(name, us, stream=s.handle)
    row["model"], row["library"] = "library call (not emulated instruction by instruction)", True
    return row


def affordable(ctx, name: str, flops: float, what: str, failed_status: int):
    """Refuse a call whose arithmetic would take this CPU longer than a kernel may run (the watchdog,
    or the program's time limit): numpy cannot be stopped halfway, so it is told at once, as the
    watchdog tells a GPU-sized kernel, instead of hanging the program."""
    from ..device import WATCHDOG_SECONDS
    limit = max(WATCHDOG_SECONDS, ctx.time_limit or 0)
    seconds = flops / CPU_FLOPS
    if seconds > limit:
        raise LibraryError(f"{name}: {what} is {flops / 1e9:,.0f} GFLOP, about {seconds:,.0f} s of this CPU, beyond the "
                           f"{limit:g} s a kernel may run here, so cudalab does not compute it (it is GPU-sized) and "
                           "returns an error. Use smaller sizes, or run the program on a real GPU (--device gpu).",
                           failed_status)
