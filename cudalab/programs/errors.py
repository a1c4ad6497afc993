"""CUDA runtime error codes: enum value, name and ``cudaGetErrorString`` text, as CUDA 13's.

One table for both sides: the Python emulator answers with the numbers, and the shim's
``cudaGetErrorString``/``cudaGetErrorName`` are generated from it (``c_table``).
"""
from __future__ import annotations

ERRORS = [
    (0, "cudaSuccess", "no error"),
    (1, "cudaErrorInvalidValue", "invalid argument"),
    (2, "cudaErrorMemoryAllocation", "out of memory"),
    (3, "cudaErrorInitializationError", "initialization error"),
    (4, "cudaErrorCudartUnloading", "driver shutting down"),
    (9, "cudaErrorInvalidConfiguration", "invalid configuration argument"),
    (12, "cudaErrorInvalidPitchValue", "invalid pitch argument"),
    (13, "cudaErrorInvalidSymbol", "invalid device symbol"),
    (16, "cudaErrorInvalidHostPointer", "invalid host pointer"),
    (17, "cudaErrorInvalidDevicePointer", "invalid device pointer"),
    (21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (52, "cudaErrorMissingConfiguration", "__global__ function call is not configured"),
    (65, "cudaErrorLaunchMaxDepthExceeded", "launch would exceed maximum depth of nested launches"),
    (69, "cudaErrorLaunchPendingCountExceeded",
     "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount"),
    (98, "cudaErrorInvalidDeviceFunction", "invalid device function"),
    (100, "cudaErrorNoDevice", "no CUDA-capable device is detected"),
    (101, "cudaErrorInvalidDevice", "invalid device ordinal"),
    (200, "cudaErrorInvalidKernelImage", "device kernel image is invalid"),
    (209, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"),
    (400, "cudaErrorInvalidResourceHandle", "invalid resource handle"),
    (500, "cudaErrorSymbolNotFound", "named symbol not found"),
    (600, "cudaErrorNotReady", "device not ready"),
    (700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"),
    (701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"),
    (702, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"),
    (710, "cudaErrorAssert", "device-side assert triggered"),
    (712, "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (715, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"),
    (716, "cudaErrorMisalignedAddress", "misaligned address"),
    (718, "cudaErrorInvalidPc", "invalid program counter"),
    (719, "cudaErrorLaunchFailure", "unspecified launch failure"),
    (720, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (800, "cudaErrorNotPermitted", "operation not permitted"),
    (801, "cudaErrorNotSupported", "operation not supported"),
    (912, "cudaErrorInvalidClusterSize", "a kernel launch error has occurred due to cluster misconfiguration"),
    (999, "cudaErrorUnknown", "unknown error"),
]

CODE = {name: code for code, name, _ in ERRORS}

# Errors after which the context is unusable: every later call returns them (CUDA's "sticky" errors).
STICKY = {"cudaErrorIllegalAddress", "cudaErrorAssert", "cudaErrorLaunchFailure", "cudaErrorLaunchTimeout",
          "cudaErrorIllegalInstruction", "cudaErrorMisalignedAddress", "cudaErrorInvalidPc"}


def code_of(name: str) -> int:
    """The enum value of a CUDA error name (cudaErrorUnknown for a name this table lacks)."""
    return CODE.get(name, CODE["cudaErrorUnknown"])


def c_table() -> str:
    """The table as C, for the shim's cudaGetErrorString and cudaGetErrorName."""
    rows = ",\n".join(f'    {{{code}, "{name}", "{text}"}}' for code, name, text in ERRORS)
    return ("static const struct { int code; const char *name, *text; } ERRORS[] = {\n" + rows + "\n};\n")
