"""Run PTX on a real NVIDIA GPU through NVIDIA's cuda.core: load, launch, move memory, time.

The runtime wraps this module behind ``cudalab.use("gpu")``; it stays plain so that each piece can be
tested alone::

    available() -> bool                       a driver and a GPU answer? Fast, cached, never raises
    device_info() -> DeviceInfo               name, compute capability, arch ("sm_90"), driver's CUDA
                                              version, newest PTX ISA the driver JIT-compiles
    synchronize() -> None                     wait until the GPU has finished all work

    GpuBuffer(nbytes)                         device memory, freed when garbage collected
    GpuBuffer.from_host(array) -> GpuBuffer   allocate and copy an array in
    buf.ptr: int, buf.nbytes: int             device address and size
    buf.copy_from_host(array) -> None         the array's bytes must fit the buffer
    buf.copy_to_host(out=None) -> ndarray     fills ``out`` (default: a new uint8 array of nbytes),
                                              waits for the copy, returns ``out``

    GpuModule(ptx: str)                       loads PTX text (the driver JIT-compiles it)
    mod.ptx: str                              the PTX the driver got (see "PTX versions")
    mod.lowered_from: str | None              the PTX's own ``.version`` if it was lowered, else None
    mod.kernels: list[str]                    mangled names of its ``.entry`` functions
    mod.globals: list[str]                    its ``__constant__`` / ``__device__`` variables
    mod.param_types(name) -> list[str]        PTX types of a kernel's parameters: "u64", "f32", "b8[12]"
    mod.launch(name, grid, block, shared_bytes=0, args=()) -> float
        ``name`` is the mangled (lowered) name; grid and block are an int or a tuple of up to 3;
        ``args`` holds a GpuBuffer for each pointer (passed as its address) and numbers (numpy
        scalars or Python numbers, converted to the parameter's PTX type; a struct or __half by
        value as a numpy scalar of the same size). Waits for the kernel and returns its run time in
        milliseconds, measured with CUDA events around it on the stream.
    mod.global_ptr(name) -> (address, nbytes) a __constant__ / __device__ variable's device memory
    mod.global_buffer(name) -> GpuBuffer      the same memory as a buffer to copy to or from

PTX versions: NVRTC stamps its PTX with its own ISA version (NVRTC 13.5 writes ``.version 9.5``) and
a driver JIT-compiles only the versions it knows (a CUDA 13.0 driver: up to 9.0). Kernels written for
a course use nothing that new, so when the PTX's version is newer than the driver's, the ``.version``
line is lowered to the driver's and nothing else changes: the GPU runs the same instructions as the
emulator. If the PTX does use something newer, the driver refuses it and the error says what to
install. (Compiling to SASS instead would hide the PTX that both backends are meant to share.)

Errors are cudalab.errors classes with a sentence a student can act on: NoGpuError without a GPU,
LaunchError when a launch or load is refused, KernelError when a running kernel faults.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import CudaError, KernelError, LaunchError, NoGpuError

# ---------------------------------------------------------------- the device


@lru_cache(maxsize=1)
def _why_no_gpu() -> str:
    """'' when the driver answers and has a GPU, else the reason, as part of a sentence."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return "the cuda-bindings package is not installed (pip install cuda-bindings)"
    try:
        (err,) = driver.cuInit(0)
        count = driver.cuDeviceGetCount()[1] if err == driver.CUresult.CUDA_SUCCESS else 0
    except Exception:  # cuda.pathfinder raises when libcuda.so, the driver, is not installed
        return "this machine has no NVIDIA driver"
    if err != driver.CUresult.CUDA_SUCCESS:
        return f"the NVIDIA driver did not start ({err.name})"
    return "" if count else "the NVIDIA driver sees no GPU"


def available() -> bool:
    """True when an NVIDIA driver and at least one GPU are present. Cached; never raises."""
    return not _why_no_gpu()


@lru_cache(maxsize=1)
def _device():
    why = _why_no_gpu()
    if why:
        raise NoGpuError(f"No NVIDIA GPU can be used here: {why}. Run on the emulator with "
                         "cudalab.use('emu'), or open this notebook on a machine with an NVIDIA GPU.")
    from cuda.core import Device
    device = Device(0)
    device.set_current()
    return device


def _stream():
    """Every copy and launch goes on one stream, so they happen in the order they were asked for."""
    return _device().default_stream


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: tuple   # (9, 0)
    arch: str                   # "sm_90": what NVRTC's --gpu-architecture takes for this GPU
    driver_version: tuple       # CUDA version of the driver, (13, 0)
    max_ptx_isa: tuple          # newest PTX ISA the driver JIT-compiles, (9, 0)
    multiprocessors: int


@lru_cache(maxsize=1)
def device_info() -> DeviceInfo:
    device = _device()
    from cuda.bindings import driver
    version = _checked(driver.cuDriverGetVersion())
    cc = tuple(device.compute_capability)
    return DeviceInfo(device.name, cc, f"sm_{cc[0]}{cc[1]}", divmod(version // 10, 100),
                      max_ptx_isa(version), device.properties.multiprocessor_count)


def synchronize() -> None:
    with _cuda_errors("Waiting for the GPU", KernelError):
        _device().sync()


# ---------------------------------------------------------------- errors a student can read

_HINTS = {
    "CUDA_ERROR_ILLEGAL_ADDRESS": "a thread read or wrote memory outside every allocation "
                                  "(an index past the end of an array?)",
    "CUDA_ERROR_MISALIGNED_ADDRESS": "a thread accessed memory at an address that is not a multiple "
                                     "of the access size",
    "CUDA_ERROR_ASSERT": "an assert() in the kernel failed",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": "a thread executed an illegal instruction (a trap?)",
    "CUDA_ERROR_LAUNCH_FAILED": "the kernel stopped with an error (a trap or a bad address)",
    "CUDA_ERROR_LAUNCH_TIMEOUT": "the kernel ran too long and the driver stopped it",
    "CUDA_ERROR_HARDWARE_STACK_ERROR": "a thread overflowed its call stack (deep recursion?)",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": "a block of this size needs more registers than a "
                                          "multiprocessor has; use fewer threads per block",
    "CUDA_ERROR_INVALID_VALUE": "a value is out of range; a block has at most 1024 threads (z at "
                                "most 64), grid y and z are at most 65535, and dynamic shared "
                                "memory above 48 KiB needs cudaFuncSetAttribute",
    "CUDA_ERROR_OUT_OF_MEMORY": "the GPU has not enough free memory for this",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "the PTX targets a newer GPU than this one; compile for "
                                    "this GPU's architecture (device_info().arch)",
    "CUDA_ERROR_INVALID_PTX": "the driver could not compile this PTX",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "the PTX is newer than this driver understands",
}
# After these the CUDA context is broken for good (CUDA Programming Guide: "sticky" errors); the
# emulated runtime's list is the same one in runtime names (runtime/core/errors.py STICKY).
_STICKY = {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ASSERT",
           "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT",
           "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_INVALID_ADDRESS_SPACE"}
# Runtime-API names (what cudaGetErrorName says) where they are not the driver's name in camel case.
_RUNTIME_NAMES = {"CUDA_ERROR_OUT_OF_MEMORY": "cudaErrorMemoryAllocation",
                  "CUDA_ERROR_LAUNCH_FAILED": "cudaErrorLaunchFailure",
                  "CUDA_ERROR_NO_BINARY_FOR_GPU": "cudaErrorNoKernelImageForDevice"}


def _runtime_name(driver_name: str) -> str:
    words = driver_name[len("CUDA_ERROR_"):].split("_")
    return _RUNTIME_NAMES.get(driver_name, "cudaError" + "".join(w.capitalize() for w in words))


@contextmanager
def _cuda_errors(what: str, error=CudaError):
    """Turn a CUDA_ERROR_* from cuda.core or cuda.bindings into a cudalab error that says what to do."""
    try:
        yield
    except CudaError:
        raise
    except Exception as e:
        found = re.search(r"CUDA_ERROR_[A-Z0-9_]+", str(e))
        if not found:
            raise
        name = found.group(0)
        message = f"{what} failed on the GPU: {_HINTS.get(name, str(e))}."
        if name in _STICKY:
            error = KernelError
            message += (" After this error the GPU cannot run anything more in this process: restart "
                        "the Python kernel. To see which thread and line did it, run the kernel on "
                        "the emulator (cudalab.use('emu')).")
        raise error(message, _runtime_name(name)) from e


def _checked(result):
    """A cuda.bindings call returns (CUresult, values...): raise on an error, else give the values."""
    from cuda.bindings import driver
    err, *values = result
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{err.name}: {driver.cuGetErrorString(err)[1].decode()}")
    return values[0] if len(values) == 1 else tuple(values)


# ---------------------------------------------------------------- PTX text (no GPU needed)

_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.M)
_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)")
_GLOBAL = re.compile(r"^\s*(?:\.(?:visible|extern|weak)\s+)*\.(?:global|const)\s+(?:\.align\s+\d+\s+)?"
                     r"\.\w+\s+([A-Za-z_][\w$]*)", re.M)


def max_ptx_isa(cuda_version: int) -> tuple:
    """Newest PTX ISA a driver JIT-compiles, from cuDriverGetVersion's 1000 * major + 10 * minor.

    PTX ISA x.y came with CUDA (x + 4).y (PTX ISA, "Release History"), except in CUDA 12: ISA 8.5
    served CUDA 12.5 and 12.6, and CUDA 12.8 brought ISA 8.7.
    """
    major, minor = divmod(cuda_version // 10, 100)
    if major == 12 and minor > 5:
        minor = 5 if minor < 8 else minor - 1
    return major - 4, minor


def lower_ptx_version(ptx: str, limit: tuple) -> tuple:
    """(PTX with its ``.version`` at most ``limit``, the original version if it was lowered else None)."""
    found = _VERSION.search(ptx)
    if found is None or (int(found[1]), int(found[2])) <= tuple(limit):
        return ptx, None
    return (ptx[:found.start(1)] + f"{limit[0]}.{limit[1]}" + ptx[found.end(2):],
            f"{found[1]}.{found[2]}")


def param_types(ptx: str, name: str) -> list:
    """PTX types of a kernel's parameters, in order: "u64", "f32", "b8[12]" (a struct by value)."""
    for entry, params in _ENTRY.findall(ptx):
        if entry == name:
            types = []
            for decl in filter(None, (p.strip() for p in params.split(","))):
                scalar = re.search(r"\.([usbf](?:8|16|32|64))\b", decl).group(1)
                array = re.search(r"\[(\d+)\]$", decl)
                types.append(f"{scalar}[{array[1]}]" if array else scalar)
            return types
    raise LaunchError(f"This module has no kernel named {name!r}; "
                      f"its kernels are: {', '.join(e for e, _ in _ENTRY.findall(ptx)) or 'none'}.")


def kernel_arg(value, ptx_type: str, where: str):
    """One launch argument as the numpy scalar whose bytes the parameter expects."""
    if isinstance(value, GpuBuffer):
        if ptx_type not in ("u64", "s64", "b64"):
            raise LaunchError(f"{where} is device memory (a pointer), but the kernel's parameter "
                              f"is a .{ptx_type} number.")
        return np.uint64(value.ptr)
    struct = re.fullmatch(r"b8\[(\d+)\]", ptx_type)
    if struct:  # a struct, vector or __half by value: pass its bytes as one unsigned integer
        size = int(struct[1])
        if not isinstance(value, np.generic) or value.nbytes != size:
            raise LaunchError(f"{where} is passed by value as {size} bytes; give a numpy scalar of "
                              f"that size (np.float16 for __half, a structured np.void for a struct).")
        if size not in (1, 2, 4, 8):
            raise LaunchError(f"{where} is a {size}-byte struct by value, which the GPU backend "
                              "cannot pass yet; pass a pointer to it instead.")
        return np.frombuffer(value.tobytes(), f"u{size}")[0]
    bits = int(ptx_type[1:])
    if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        raise LaunchError(f"{where} is a {type(value).__name__}; pass device memory (a GpuBuffer) "
                          "for a pointer and a number for anything else.")
    if ptx_type[0] == "f":
        # as its bits: a float scalar handed to cuda.core as a float may pass through a C double,
        # which quiets a signalling NaN (0x7f800001 arrived as 0x7fc00001 in the fuzz run of 2026-11-23)
        as_float = np.dtype(f"f{bits // 8}").type(value)
        return np.frombuffer(as_float.tobytes(), f"u{bits // 8}")[0]
    if isinstance(value, (float, np.floating)):
        raise LaunchError(f"{where} is a floating-point number, but the kernel's parameter is an "
                          f"integer (.{ptx_type}).")
    number = int(value)
    if not -(1 << (bits - 1)) <= number < (1 << bits):
        raise LaunchError(f"{where} = {number} does not fit the kernel's {bits}-bit integer parameter.")
    # PTX does not tell int from unsigned (NVRTC declares an `int` parameter .u32): pass the bits.
    return np.dtype(f"u{bits // 8}").type(number % (1 << bits))


def _dim3(v) -> tuple:
    return (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)


# ---------------------------------------------------------------- memory


class GpuBuffer:
    """``nbytes`` bytes of GPU memory at address ``ptr``."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        with _cuda_errors(f"Allocating {self.nbytes} bytes"):
            # cuda.core allocates stream-ordered on the stream every copy and launch uses
            self._owner = _device().memory_resource.allocate(max(self.nbytes, 1), stream=_stream())
        self.ptr = int(self._owner.handle)

    @classmethod
    def from_host(cls, array) -> GpuBuffer:
        array = np.ascontiguousarray(array)
        buf = cls(array.nbytes)
        buf.copy_from_host(array)
        return buf

    @classmethod
    def _view(cls, ptr: int, nbytes: int, owner) -> GpuBuffer:
        """Memory that belongs to something else (a module's global), kept alive by ``owner``."""
        buf = cls.__new__(cls)
        buf.ptr, buf.nbytes, buf._owner = int(ptr), int(nbytes), owner
        return buf

    def _fits(self, array: np.ndarray, direction: str):
        if array.nbytes > self.nbytes:
            raise CudaError(f"Cannot copy {array.nbytes} bytes {direction} a {self.nbytes}-byte GPU "
                            "buffer.", "cudaErrorInvalidValue")

    def copy_from_host(self, array) -> None:
        src = np.ascontiguousarray(array)
        self._fits(src, "into")
        from cuda.bindings import driver
        with _cuda_errors("Copying to the GPU"):
            # From pageable memory this returns once `src` is staged (CUDA driver API, "API sync
            # behavior"), so the caller may change `src` right away.
            _checked(driver.cuMemcpyHtoDAsync(self.ptr, src.ctypes.data, src.nbytes, _stream().handle))

    def copy_to_host(self, out=None) -> np.ndarray:
        out = np.empty(self.nbytes, np.uint8) if out is None else out
        if not (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable):
            raise CudaError("copy_to_host needs a writeable, C-contiguous numpy array to fill.",
                            "cudaErrorInvalidValue")
        self._fits(out, "out of")
        from cuda.bindings import driver
        with _cuda_errors("Copying from the GPU", KernelError):
            stream = _stream()
            _checked(driver.cuMemcpyDtoHAsync(out.ctypes.data, self.ptr, out.nbytes, stream.handle))
            stream.sync()
        return out

    def __repr__(self):
        return f"GpuBuffer(nbytes={self.nbytes}, ptr={self.ptr:#x})"


# ---------------------------------------------------------------- modules and launches


class GpuModule:
    """A PTX module loaded on the GPU; kernels are launched by their mangled names."""

    def __init__(self, ptx: str):
        from cuda.core import ObjectCode
        info = device_info()
        self.ptx, self.lowered_from = lower_ptx_version(ptx, info.max_ptx_isa)
        self.kernels = [name for name, _ in _ENTRY.findall(self.ptx)]
        self.globals = [name for name in _GLOBAL.findall(self.ptx) if not name.startswith("$")]
        self._code = ObjectCode.from_ptx(self.ptx.encode())   # bytes: a str would be a file name
        if _DEVICE_RUNTIME.search(self.ptx):
            self._code = _link_device_runtime(self._code, info.arch)
        self._kernels = {}
        try:
            with _cuda_errors("Loading the PTX", LaunchError):
                self._library = self._code.handle   # loads it now: the driver JIT-compiles the PTX here
        except LaunchError as e:
            if e.code != "cudaErrorUnsupportedPtxVersion":
                raise
            have = "{}.{}".format(*info.max_ptx_isa)
            raise LaunchError(
                f"The PTX (ISA {self.lowered_from or have}) uses something newer than this GPU "
                f"driver (CUDA {'{}.{}'.format(*info.driver_version)}, PTX ISA up to {have}) can "
                "compile. Install the NVRTC that matches the driver (pip install "
                f"'nvidia-cuda-nvrtc=={info.driver_version[0]}.{info.driver_version[1]}.*') or "
                "update the NVIDIA driver.", e.code) from e

    def param_types(self, name: str) -> list:
        return param_types(self.ptx, name)

    def _kernel(self, name: str):
        if name not in self._kernels:
            self.param_types(name)   # a student-readable error for an unknown name
            with _cuda_errors(f"Loading kernel {name}", LaunchError):
                self._kernels[name] = self._code.get_kernel(name)
        return self._kernels[name]

    def launch(self, name: str, grid, block, shared_bytes: int = 0, args=(), cluster=None) -> float:
        """Run a kernel (cooperatively when it uses grid.sync(), as numba.cuda does); ``cluster``
        (x, y, z) launches thread block clusters, ``grid`` still counting blocks."""
        from cuda.core import EventOptions, LaunchConfig, launch
        kernel = self._kernel(name)
        types = self.param_types(name)
        if len(args) != len(types):
            raise LaunchError(f"Kernel {name} takes {len(types)} arguments, but the launch gave "
                              f"{len(args)}.")
        values = [kernel_arg(a, t, f"argument {i} of {name}") for i, (a, t) in enumerate(zip(args, types))]
        stream, timed = _stream(), EventOptions(timing_enabled=True)
        with _cuda_errors(f"Launching {name}", LaunchError):
            extra = {"is_cooperative": True} if _uses_grid_sync(self.ptx, name) else {}
            config = (LaunchConfig(grid=_dim3(grid), block=_dim3(block), shmem_size=int(shared_bytes), **extra)
                      if cluster is None else _cluster_config(_dim3(grid), _dim3(block), _dim3(cluster),
                                                              int(shared_bytes), extra))
            start = stream.record(options=timed)
            launch(stream, config, kernel, *values)
            end = stream.record(options=timed)
        with _cuda_errors(f"Running {name}", KernelError):
            end.sync()
        return float(end - start)

    def launch_packed(self, name: str, grid, block, shared_bytes: int, params: bytes, cluster=None) -> float:
        """Run a kernel from its packed parameter buffer (the driver's CU_LAUNCH_PARAM_BUFFER_POINTER):
        how structs of any size by value reach it (``__grid_constant__`` parameters of up to 32,764
        bytes), which cuda.core's argument list cannot pass. ``params`` is laid out as the driver
        lays out parameters (runtime.launch.marshal), pointers as device addresses."""
        import ctypes
        from cuda.bindings import driver
        from cuda.core import EventOptions
        kernel = self._kernel(name)
        stream, timed = _stream(), EventOptions(timing_enabled=True)
        g, b = _dim3(grid), _dim3(block)
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = g
        config.blockDimX, config.blockDimY, config.blockDimZ = b
        config.sharedMemBytes = int(shared_bytes)
        config.hStream = driver.CUstream(int(stream.handle))
        attrs = []
        if cluster is not None:
            a = driver.CUlaunchAttribute()
            a.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = _dim3(cluster)
            attrs.append(a)
        if _uses_grid_sync(self.ptx, name):
            a = driver.CUlaunchAttribute()
            a.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
            a.value.cooperative = 1
            attrs.append(a)
        config.attrs, config.numAttrs = attrs, len(attrs)
        raw = ctypes.create_string_buffer(bytes(params), max(len(params), 1))
        size = ctypes.c_size_t(len(params))
        extra = (ctypes.c_void_p * 5)(int(driver.CU_LAUNCH_PARAM_BUFFER_POINTER), ctypes.addressof(raw),
                                      int(driver.CU_LAUNCH_PARAM_BUFFER_SIZE), ctypes.addressof(size),
                                      int(driver.CU_LAUNCH_PARAM_END))
        with _cuda_errors(f"Launching {name}", LaunchError):
            start = stream.record(options=timed)
            _checked(driver.cuLaunchKernelEx(config, kernel.handle, None, ctypes.addressof(extra)))
            end = stream.record(options=timed)
        with _cuda_errors(f"Running {name}", KernelError):
            end.sync()
        return float(end - start)

    def global_ptr(self, name: str) -> tuple:
        if name not in self.globals:
            raise CudaError(f"This module has no __constant__ or __device__ variable named {name!r}; "
                            f"it has: {', '.join(self.globals) or 'none'}.", "cudaErrorInvalidSymbol")
        from cuda.bindings import driver
        with _cuda_errors(f"Finding {name} on the GPU"):
            ptr, nbytes = _checked(driver.cuLibraryGetGlobal(self._library, name.encode()))
        return int(ptr), int(nbytes)

    def global_buffer(self, name: str) -> GpuBuffer:
        return GpuBuffer._view(*self.global_ptr(name), owner=self)


# device-runtime calls: dynamic parallelism (__cudaCDP2*) and numba.cuda's grid.sync() (cudaCG*)
_DEVICE_RUNTIME = re.compile(r"\.extern\s+\.func\s*(?:\([^)]*\)\s*)?(?:__cudaCDP2|cudaCG)")


def devrt_library() -> str:
    """libcudadevrt.a, the device runtime dynamic parallelism links against: the CUDA toolkit's
    that matches the driver first (/usr/local/cuda), else the one in NVIDIA's pip wheels."""
    import os
    candidates = []
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates += [os.path.join(home, "lib64", "libcudadevrt.a"), os.path.join(home, "lib", "libcudadevrt.a")]
    try:
        import nvidia
        for base in nvidia.__path__:
            candidates += [os.path.join(base, sub, "lib", "libcudadevrt.a") for sub in ("cu13", "cuda_runtime")]
    except ImportError:
        pass
    for c in candidates:
        if os.path.exists(c):
            return c
    raise LaunchError("This code launches kernels from the GPU (dynamic parallelism), which needs the device "
                      "runtime library libcudadevrt.a; none was found (install nvidia-cuda-runtime or a CUDA "
                      "toolkit).", "cudaErrorNotSupported")


def _link_device_runtime(code, arch: str):
    """PTX that calls the device runtime (kernels launched from the GPU, numba's grid.sync()), linked
    with libcudadevrt."""
    from cuda.core import Linker, LinkerOptions, ObjectCode
    with open(devrt_library(), "rb") as f:
        lib = ObjectCode.from_library(f.read())
    with _cuda_errors("Linking the device runtime (dynamic parallelism)", LaunchError):
        return Linker(code, lib, options=LinkerOptions(arch=arch)).link("cubin")


def _cluster_config(grid, block, cluster, shmem, extra):
    """A LaunchConfig for thread block clusters. cuda.core counts the grid in clusters (since 0.4);
    the result is checked against the driver config it makes, so either convention works."""
    from cuda.core import LaunchConfig
    for g, c in zip(grid, cluster):
        if g % c:
            raise LaunchError(f"gridDim {grid} is not a multiple of the cluster size {cluster}.",
                              "cudaErrorInvalidClusterSize")
    clusters = tuple(g // c for g, c in zip(grid, cluster))
    config = LaunchConfig(grid=clusters, cluster=cluster, block=block, shmem_size=shmem, **extra)
    try:
        from cuda.core._launch_config import _to_native_launch_config
        if int(_to_native_launch_config(config).gridDimX) != grid[0]:
            config = LaunchConfig(grid=grid, cluster=cluster, block=block, shmem_size=shmem, **extra)
    except (ImportError, AttributeError):
        pass
    return config


def _uses_grid_sync(ptx: str, name: str) -> bool:
    """cooperative_groups' grid.sync() reads its workspace from %envreg1/2 (numba.cuda's asks the
    device runtime, cudaCGGetIntrinsicHandle), which only a cooperative launch fills in."""
    start = ptx.find(f".entry {name}(")
    if start < 0:
        return False
    end = ptx.find(".entry ", start + 8)
    body = ptx[start:end if end > 0 else len(ptx)]
    return "%envreg" in body or "cudaCGGetIntrinsicHandle" in body
