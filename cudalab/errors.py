"""Errors a student can read: each names what happened, where, and what to try.

Names follow the CUDA runtime's error enum (``cudaErrorInvalidConfiguration`` ...) so that what a
student learns here matches what ``cudaGetErrorString`` says on a real GPU.
"""
from __future__ import annotations


class CudaError(Exception):
    """Base of every error cudalab raises on purpose; ``.code`` is CUDA's enum name."""

    code = "cudaErrorUnknown"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code:
            self.code = code

    def __str__(self):
        return f"{self.code}: {self.args[0]}" if self.code else self.args[0]


class CompileError(CudaError):
    """The CUDA C++ did not compile; the message is the compiler's, with the cell's line numbers."""

    code = ""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class LaunchError(CudaError):
    """A launch was refused before any thread ran (bad shape, bad arguments, too much shared memory)."""

    code = "cudaErrorInvalidValue"


class KernelError(CudaError):
    """A kernel stopped while running (bad address, trap, assert, watchdog); ``.findings`` has the details."""

    code = "cudaErrorLaunchFailure"

    def __init__(self, message: str, code: str | None = None, findings=()):
        super().__init__(message, code)
        self.findings = list(findings)


class UnsupportedError(CudaError):
    """The PTX uses something the emulator does not implement yet; names the instruction and line."""

    code = "cudaErrorNotSupported"


class MemoryError_(CudaError):
    code = "cudaErrorMemoryAllocation"


class NoGpuError(CudaError):
    code = "cudaErrorNoDevice"
