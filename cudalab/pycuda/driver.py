"""pycuda.driver on cudalab: the device, contexts, memory, copies, streams, events and kernel launches.

The device is the selected device profile (``cudalab.set_device``), a context is a name for the one
emulated device, ``mem_alloc`` takes emulated device memory, and a ``Function`` launches a kernel of a
``SourceModule`` on the emulator. Arguments go as PyCUDA packs them: numpy scalars by value (their own
type), device memory (``DeviceAllocation``, a ``GPUArray``, anything with ``gpudata`` or
``__cuda_array_interface__``) and ``In``/``Out``/``InOut`` host arrays as pointers, any other numpy
array or record by its bytes. A plain Python number is PyCUDA's TypeError, as on a GPU (``prepare``
gives the types instead).
"""
from __future__ import annotations

import re
import struct
import threading

import numpy as np

from .. import errors as _errors

from ..pykernels import host
from ..runtime import streams
from ..runtime.arrays import DeviceArray
from ..runtime.letgo import lets_arguments_go


# The emulator is not written for threads (a launch in one thread while another grew the device memory,
# when growing moved it, lost the launch's writes): PyCUDA programs start threads that each make a
# context, allocate, launch and copy (the book's multi-kernel_multi-thread), so the device work of
# PyCUDA's calls goes one at a time. Results are the same as a GPU's; threads gain no speed, as there
# is one CPU emulator.
_DEVICE = threading.RLock()


def one_at_a_time(function):
    """``function`` with the device to itself (see _DEVICE)."""
    import functools

    @functools.wraps(function)
    def locked(*args, **kwargs):
        with _DEVICE:
            return function(*args, **kwargs)
    return locked


class Error(Exception):
    """PyCUDA's base error."""


class LogicError(Error):
    pass


class LaunchError(Error):
    pass


class CompileError(Error, _errors.CompileError):
    """PyCUDA's compile error (``pycuda.driver.CompileError``, also cudalab's CompileError): the
    compiler's words with the program's lines in the message, ``stderr`` the compiler's log, as PyCUDA
    keeps it (``msg``, ``stdout``, ``command_line`` too)."""

    def __init__(self, msg, command_line="nvrtc", stdout=None, stderr=None):
        _errors.CompileError.__init__(self, msg, log=stderr or "")
        self.msg, self.command_line, self.stdout, self.stderr = msg, command_line, stdout, stderr


class MemoryError(Error, _errors.CudaError):     # noqa: A001  (PyCUDA's name)
    """PyCUDA's out-of-memory error (``cuMemAlloc failed: out of memory``), also cudalab's CudaError with
    CUDA's code, so a program that catches either catches it (a memory pool frees what it holds and
    tries again on it)."""

    code = "cudaErrorMemoryAllocation"

    def __str__(self):
        return self.args[0]


class RuntimeError(Error):          # noqa: A001  (PyCUDA's name)
    pass


for _error in (Error, LogicError, LaunchError, CompileError, MemoryError, RuntimeError):
    _error.__module__ = "pycuda.driver"     # a traceback names them as PyCUDA's lessons show them


def init(flags=0):
    """cuInit: nothing to start (the emulated device is always there)."""


def get_version():
    return (13, 0, 0)


def get_driver_version():
    return 13000


# ---------------------------------------------------------------------- the device and its attributes
class _Named(int):
    """An enum value that prints as its name (``str(device_attribute.WARP_SIZE)`` is 'WARP_SIZE', as
    PyCUDA's do; Python's IntEnum prints the number)."""

    def __new__(cls, value, name):
        self = super().__new__(cls, value)
        self.name = name
        return self

    def __str__(self):
        return self.name

    __repr__ = __str__


def _driver_names(aliases: bool = False):
    """CUdevice_attribute numbers -> the driver's names without CU_DEVICE_ATTRIBUTE_ (PyCUDA's names):
    each number's own name (``MAX_SHARED_MEMORY_PER_BLOCK`` for 8), or with ``aliases`` a list of
    (number, name) with the older names too (``SHARED_MEMORY_PER_BLOCK``). The runtime's cudaDevAttr
    numbers are the same; where cuda-bindings is missing the runtime's camel-case names are written
    in capitals."""
    try:
        from cuda.bindings import driver
        prefix = "CU_DEVICE_ATTRIBUTE_"
        pairs = [(int(getattr(driver.CUdevice_attribute, n)), n[len(prefix):])
                 for n in dir(driver.CUdevice_attribute) if n.startswith(prefix)]
        if aliases:
            return pairs
        return {number: driver.CUdevice_attribute(number).name[len(prefix):] for number, _ in pairs}
    except Exception:       # noqa: BLE001
        import re
        from ..runtime.core.properties import ATTRIBUTE_NAMES
        names = {number: re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper() for name, number in ATTRIBUTE_NAMES.items()}
        return list(names.items()) if aliases else names


class device_attribute:                     # noqa: N801  (PyCUDA's name)
    """PyCUDA's device attributes: ``device_attribute.MULTIPROCESSOR_COUNT`` and so on."""


_OWN_NAMES = _driver_names()
for _number, _name in _driver_names(aliases=True):      # an older name is the same attribute, named as its number's own
    setattr(device_attribute, _name, _Named(_number, _OWN_NAMES[_number]))


class Device:
    """The emulated device (the selected profile): there is one, device 0."""

    def __init__(self, number=0):
        if int(number) != 0:
            raise LogicError(f"cuDeviceGet failed: invalid device ordinal ({number}): cudalab emulates one device, 0")
        self.number = 0

    @staticmethod
    def count() -> int:
        return 1

    def name(self) -> str:
        return host.get_current_device().name

    def compute_capability(self) -> tuple:
        return tuple(host.get_current_device().compute_capability)

    def total_memory(self) -> int:
        return int(host.current_context().get_memory_info().total)

    def pci_bus_id(self) -> str:
        return "0000:00:00.0"

    def get_attributes(self) -> dict:
        """Every attribute the profile defines, keyed by PyCUDA's ``device_attribute`` values."""
        values = streams.context().attributes
        return {getattr(device_attribute, name): values[number] for number, name in _driver_names().items()
                if number in values}

    def get_attribute(self, attribute) -> int:
        values = streams.context().attributes
        if int(attribute) not in values:
            raise LogicError(f"cuDeviceGetAttribute failed: invalid value (attribute {attribute} is not defined "
                             "by the emulated device's profile)")
        return values[int(attribute)]

    def __getattr__(self, name):
        # dev.MAX_THREADS_PER_BLOCK, and as PyCUDA upper-cases the name, dev.clock_rate
        attribute = getattr(device_attribute, name.upper(), None) if not name.startswith("_") else None
        if attribute is None:
            raise AttributeError(f"pycuda.driver.Device has no attribute {name!r}")
        return self.get_attribute(attribute)

    def make_context(self, flags=0) -> "Context":
        context = Context(self)
        context.push()
        return context

    def retain_primary_context(self) -> "Context":
        return Context(self)

    def __eq__(self, other):
        return isinstance(other, Device)

    def __hash__(self):
        return 0

    def __repr__(self):
        return f"<pycuda.driver.Device {self.name()!r} (cudalab's emulated device 0)>"


class Context:
    """A context on the emulated device. There is one device and one memory, so a context only marks
    that the calling thread may use the device: PyCUDA keeps a stack of current contexts per thread
    (``make_context`` and ``push`` put one on it, ``pop`` takes it off, ``import pycuda.autoinit`` makes
    the main thread's), and memory, modules and launches without one are its LogicError, as on a GPU."""

    _threads = threading.local()

    def __init__(self, device=None):
        self.device = device or Device(0)

    @classmethod
    def _stack(cls) -> list:
        if not hasattr(cls._threads, "stack"):
            cls._threads.stack = []
        return cls._threads.stack

    @staticmethod
    def synchronize():
        """Wait for all the device's work (cuCtxSynchronize)."""
        _need_context("cuCtxSynchronize")
        host.synchronize()

    @staticmethod
    def get_device() -> Device:
        return Device(0)

    @classmethod
    def get_current(cls):
        stack = cls._stack()
        return stack[-1] if stack else None

    @classmethod
    def pop(cls):
        stack = cls._stack()
        if not stack:
            raise LogicError("cuCtxPopCurrent failed: invalid device context - no context is current in this thread")
        stack.pop()

    def push(self):
        Context._stack().append(self)

    def detach(self):
        stack = Context._stack()
        if self in stack:
            stack.remove(self)

    _cache_config = 0
    _shared_config = 0

    @staticmethod
    def set_cache_config(config):
        """cuCtxSetCacheConfig: kept and answered back; the emulator's L1 and shared memory do not change."""
        Context._cache_config = int(config)

    @staticmethod
    def get_cache_config() -> int:
        return Context._cache_config

    @staticmethod
    def set_shared_config(config):
        """cuCtxSetSharedMemConfig (bank size): kept and answered back, as on GPUs since Volta, where it does nothing."""
        Context._shared_config = int(config)

    @staticmethod
    def get_shared_config() -> int:
        return Context._shared_config

    @staticmethod
    def get_limit(limit) -> int:
        """cuCtxGetLimit (``limit.MALLOC_HEAP_SIZE``...): the emulated device's value."""
        return int(streams.device_limit(int(limit)))

    @staticmethod
    def set_limit(limit, value):
        """cuCtxSetLimit: kernels launched later see it (the device heap, printf's buffer, nesting depth)."""
        streams.set_device_limit(int(limit), int(value))


class ctx_flags:                    # noqa: N801  (PyCUDA's name: make_context's flags, CUctx_flags)
    SCHED_AUTO, SCHED_SPIN, SCHED_YIELD, SCHED_BLOCKING_SYNC, SCHED_MASK = 0, 1, 2, 4, 7
    MAP_HOST, LMEM_RESIZE_TO_MAX, FLAGS_MASK = 8, 16, 31


class shared_config:                # noqa: N801
    DEFAULT_BANK_SIZE, FOUR_BYTE_BANK_SIZE, EIGHT_BYTE_BANK_SIZE = 0, 1, 2


class limit:                        # noqa: N801  (PyCUDA's name; CUlimit's numbers are cudaLimit's)
    STACK_SIZE = _Named(0, "STACK_SIZE")
    PRINTF_FIFO_SIZE = _Named(1, "PRINTF_FIFO_SIZE")
    MALLOC_HEAP_SIZE = _Named(2, "MALLOC_HEAP_SIZE")
    DEV_RUNTIME_SYNC_DEPTH = _Named(3, "DEV_RUNTIME_SYNC_DEPTH")
    DEV_RUNTIME_PENDING_LAUNCH_COUNT = _Named(4, "DEV_RUNTIME_PENDING_LAUNCH_COUNT")
    MAX_L2_FETCH_GRANULARITY = _Named(5, "MAX_L2_FETCH_GRANULARITY")


class func_cache:                   # noqa: N801
    PREFER_NONE, PREFER_SHARED, PREFER_L1, PREFER_EQUAL = range(4)


class event_flags:                  # noqa: N801
    DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS = 0, 1, 2, 4


def _need_context(call: str):
    """PyCUDA's error for device work in a thread with no current context (a program that forgot
    ``import pycuda.autoinit``), worded as PyCUDA's with what to write."""
    if Context.get_current() is None:
        raise LogicError(f"{call} failed: invalid device context - no currently active context? (PyCUDA needs one "
                         "in each thread that uses the GPU: import pycuda.autoinit, or ctx = "
                         "pycuda.driver.Device(0).make_context() ... ctx.pop())")


def mem_get_info() -> tuple:
    """(free, total) bytes of the emulated device."""
    _need_context("cuMemGetInfo")
    info = host.current_context().get_memory_info()
    return int(info.free), int(info.total)


# ---------------------------------------------------------------------- memory
class DeviceAllocation:
    """Device memory from ``mem_alloc``: ``int(a)`` is its address (kernels take it as a pointer)."""

    def __init__(self, nbytes):
        _need_context("cuMemAlloc")
        try:
            self._memory = DeviceArray((max(int(nbytes), 1),), np.uint8)
        except _errors.CudaError as e:
            if e.code != "cudaErrorMemoryAllocation":
                raise
            raise MemoryError(f"cuMemAlloc failed: out of memory ({e.args[0]})") from None
        self.size = int(nbytes)

    def __int__(self):
        return int(self._memory.device_ptr)

    __index__ = __int__

    def __add__(self, offset):
        return int(self) + int(offset)

    __radd__ = __add__

    def free(self):
        if self._memory is not None:
            self._memory.free()
            self._memory = None

    def as_buffer(self, size, offset=0):
        return bytes(_device().read(int(self) + offset, size))

    def __repr__(self):
        return f"<DeviceAllocation of {self.size} bytes at 0x{int(self):x}>"


class DevicePointer(int):
    """A GPUArray's ``gpudata``: its device address (a kernel takes it as a pointer), which keeps the
    array alive while it is held."""

    def __new__(cls, value, owner):
        self = super().__new__(cls, value)
        self.owner = owner
        return self

    def free(self):
        pass


@one_at_a_time
def mem_alloc(nbytes) -> DeviceAllocation:
    return DeviceAllocation(nbytes)


def mem_alloc_like(ary) -> DeviceAllocation:
    return DeviceAllocation(ary.nbytes)


def mem_alloc_pitch(width, height, access_size):
    pitch = (int(width) + 511) // 512 * 512
    return DeviceAllocation(pitch * int(height)), pitch


def _device():
    from ..runtime import device
    return device.current()


class PointerHolderBase:
    """PyCUDA's base for an object that holds device memory of its own (another library's buffer): a
    subclass defines ``get_pointer()``, and kernels, copies and GPUArrays take the object as that address."""

    def get_pointer(self) -> int:
        raise NotImplementedError("a PointerHolderBase subclass defines get_pointer(), the device address it holds")

    def __int__(self):
        return int(self.get_pointer())

    def __index__(self):
        return int(self.get_pointer())

    def as_buffer(self, size, offset=0):
        raise NotImplementedError("as_buffer: cudalab's emulated memory is not a host buffer")


def _address(x) -> int:
    """A device address from what PyCUDA takes for one: an int, a DeviceAllocation, a GPUArray, a
    PointerHolderBase."""
    if isinstance(x, DeviceArray):
        return int(x.device_ptr)
    if hasattr(x, "gpudata"):
        return int(x.gpudata)
    if isinstance(x, PointerHolderBase):
        return int(x.get_pointer())
    return int(x)


def _timeline_copy(nbytes, direction, stream=None, host_array=None, blocking=True):
    """The copy's row on the stream (pageable host memory: the host waits; page-locked: it may not)."""
    if nbytes:
        pinned = host_array is not None and streams.is_pinned(host_array)
        streams.context().transfer(int(nbytes), direction, streams._core_stream(stream or 0), pinned=pinned,
                                   sync=blocking or not pinned, name=f"{direction} {int(nbytes):,} B (PyCUDA)")


def _in_memory_order(a):
    """A Fortran-ordered array as the C-ordered view of the same memory (its transpose): PyCUDA copies an
    array's buffer, its bytes in memory order, so a kernel indexing ``x + w * y`` reads a column-major
    matrix as its columns. Other arrays as they are."""
    if isinstance(a, np.ndarray) and a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous:
        return a.T
    return a


@one_at_a_time
def memcpy_htod(dest, src, stream=None, _blocking=True):
    """Copy a host array (or any buffer) to device address ``dest``."""
    src = _in_memory_order(src)
    data = memoryview(np.ascontiguousarray(src)).cast("B") if isinstance(src, np.ndarray) else memoryview(src).cast("B")
    _device().write(_address(dest), bytes(data))
    _timeline_copy(len(data), "H2D", stream, src if isinstance(src, np.ndarray) else None, _blocking)


@one_at_a_time
def memcpy_dtoh(dest, src, stream=None, _blocking=True):
    """Copy device memory at ``src`` into the host array ``dest`` (its size in bytes)."""
    view = _in_memory_order(np.asarray(dest))
    raw = _device().read(_address(src), view.nbytes)
    view.reshape(-1).view(np.uint8)[:] = np.frombuffer(bytes(raw), np.uint8)
    _timeline_copy(view.nbytes, "D2H", stream, view, _blocking)


def memcpy_htod_async(dest, src, stream=None):
    memcpy_htod(dest, src, stream, _blocking=False)


def memcpy_dtoh_async(dest, src, stream=None):
    memcpy_dtoh(dest, src, stream, _blocking=False)


@one_at_a_time
def memcpy_dtod(dest, src, size, stream=None):
    _device().write(_address(dest), bytes(_device().read(_address(src), int(size))))
    if size:
        streams.context().transfer(int(size), "D2D", streams._core_stream(stream or 0), pinned=False,
                                   sync=False, name=f"D2D {int(size):,} B (PyCUDA)")


memcpy_dtod_async = memcpy_dtod


class Memcpy2D:
    """cuMemcpy2D: ``height`` rows of ``width_in_bytes`` bytes between host arrays, device memory (pitched
    memory from ``mem_alloc_pitch``) and CUDA arrays (``Array``, ``np_to_array``): each side set with
    ``set_src_host``/``set_src_device``/``set_src_array`` (``set_dst_...``), its ``*_pitch`` in bytes
    (an array's is its own) and its ``*_x_in_bytes``/``*_y`` offset."""

    _call = "cuMemcpy2D"

    def __init__(self):
        self.src_x_in_bytes = self.src_y = self.dst_x_in_bytes = self.dst_y = 0
        self.src_pitch = self.dst_pitch = self.width_in_bytes = self.height = 0
        self._src = self._dst = None

    def set_src_host(self, ary):
        self._src = ("H", ary)

    def set_src_device(self, ptr):
        self._src = ("D", _address(ptr))

    def set_src_array(self, ary):
        self._src = ("A", ary)

    def set_dst_host(self, ary):
        self._dst = ("H", ary)

    def set_dst_device(self, ptr):
        self._dst = ("D", _address(ptr))

    def set_dst_array(self, ary):
        self._dst = ("A", ary)

    def _box(self) -> tuple:
        return int(self.width_in_bytes), int(self.height), 1

    def _side(self, which: str, box) -> tuple:
        """(kind, host bytes or device address, row pitch, slice pitch) of the source or destination,
        the address at the box's first byte."""
        kind, target = getattr(self, f"_{which}")
        x, y, z = (int(getattr(self, f"{which}_{k}", 0)) for k in ("x_in_bytes", "y", "z"))
        width, rows, depth = box
        if kind == "A":
            address, pitch, slice_pitch = target._region(x, y, z, width, rows, depth, self._call)
            return "D", address, pitch, slice_pitch
        pitch = int(getattr(self, f"{which}_pitch") or width)
        if pitch < width:
            raise LogicError(f"{self._call} failed: invalid argument - {which}_pitch ({pitch}) is smaller than "
                             f"width_in_bytes ({width})")
        slice_pitch = pitch * int(getattr(self, f"{which}_height", 0) or rows)
        start = z * slice_pitch + y * pitch + x
        if kind == "H":     # the array's bytes in memory order (an F-ordered matrix's too)
            return "H", np.asarray(target).ravel(order="K").view(np.uint8)[start:], pitch, slice_pitch
        return "D", target + start, pitch, slice_pitch

    @one_at_a_time
    def __call__(self, aligned=False, stream=None):
        if self._src is None or self._dst is None:
            raise LogicError(f"{self._call} failed: set the source and the destination first (set_src_host, "
                             "set_src_device or set_src_array; set_dst_host, set_dst_device or set_dst_array)")
        box = self._box()
        (skind, src, spitch, sslice), (dkind, dst, dpitch, dslice) = self._side("src", box), self._side("dst", box)
        width, rows, depth = box
        for z in range(depth):
            for r in range(rows):
                at = z * sslice + r * spitch
                row = src[at:at + width] if skind == "H" else _device().read(src + at, width)
                at = z * dslice + r * dpitch
                if dkind == "H":
                    dst[at:at + width] = np.frombuffer(bytes(row), np.uint8)
                else:
                    _device().write(dst + at, bytes(row))
        host = self._src[1] if skind == "H" else self._dst[1] if dkind == "H" else None
        _timeline_copy(width * rows * depth, f"{skind}2{dkind}", stream,
                       host if isinstance(host, np.ndarray) else None, blocking=stream is None)


class Memcpy3D(Memcpy2D):
    """cuMemcpy3D: ``depth`` slices of ``height`` rows of ``width_in_bytes`` bytes; a host or device side's
    slices lie ``*_height`` rows apart, and ``*_z`` picks the first one (a CUDA array's are its own)."""

    _call = "cuMemcpy3D"

    def __init__(self):
        super().__init__()
        self.src_z = self.dst_z = self.src_height = self.dst_height = self.depth = 0
        self.src_lod = self.dst_lod = 0

    def _box(self) -> tuple:
        return int(self.width_in_bytes), int(self.height), int(self.depth or 1)


@one_at_a_time
def memset_d8(dest, value, count):
    _device().write(_address(dest), bytes([int(value) & 0xFF]) * int(count))


@one_at_a_time
def memset_d32(dest, value, count):
    _device().write(_address(dest), struct.pack("<I", int(value) & 0xFFFFFFFF) * int(count))


@one_at_a_time
def to_device(ary) -> DeviceAllocation:
    """A new allocation holding a copy of the host array."""
    alloc = mem_alloc(ary.nbytes)
    memcpy_htod(alloc, ary)
    return alloc


@one_at_a_time
def from_device(devptr, shape, dtype, order="C"):
    out = np.empty(shape, dtype, order=order)
    memcpy_dtoh(out, devptr)
    return out


def from_device_like(devptr, other_ary):
    """A host array shaped like ``other_ary`` holding the bytes at ``devptr`` (PyCUDA's keyword names:
    ``from_device_like(devptr=a_gpu, other_ary=a)``)."""
    return from_device(devptr, other_ary.shape, other_ary.dtype)


class HostAllocation:
    """The bytes under a mapped page-locked array (``ary.base``): ``get_device_pointer()`` is the address
    kernels use for the same bytes (zero-copy memory)."""

    def get_device_pointer(self) -> int:
        return int(self._memory.device_ptr)


class ManagedAllocation(HostAllocation):
    """The bytes under a managed array (``managed_empty``): the host reads and writes them where they
    are, and a kernel given the array itself gets their device address, as PyCUDA passes it."""

    def __int__(self):
        return self.get_device_pointer()

    def attach(self, mem_flags, stream=None):
        """cuStreamAttachMemAsync: one memory on the emulator, so nothing moves."""


@one_at_a_time
def _mapped(shape, dtype, order, kind=HostAllocation, call="cuMemHostAlloc"):
    """Host memory kernels read and write where it is (cuMemHostAlloc with DEVICEMAP): bytes of the
    emulated device's memory that numpy sees directly, possible because the Python API's arena never
    moves (it grows inside address space reserved once)."""
    import ctypes
    _need_context(call)
    memory = getattr(_device(), "memory", None)
    nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
    if memory is None or getattr(memory, "_reserved", None) is None:
        raise LogicError(f"{call} failed: memory that the host and kernels share needs the emulated device's "
                         "memory reserved in one piece, which this machine's memory settings did not allow")
    block = DeviceArray((nbytes,), np.uint8)
    from ..emulator.memory import GLOBAL_BASE
    address = memory.data.ctypes.data + block.device_ptr - GLOBAL_BASE
    # a buffer over those bytes that numpy keeps as the array's base (a ctypes array, with PyCUDA's method)
    owner_type = type(kind.__name__, (ctypes.c_uint8 * nbytes, kind), {})
    owner = owner_type.from_address(address)
    owner._memory = block
    return np.ndarray(shape, dtype, buffer=owner, order=order)


def pagelocked_empty(shape, dtype, order="C", mem_flags=0):
    """Page-locked host memory (numba's pinned array): its copies go at the pinned rate, asynchronously.
    With ``host_alloc_flags.DEVICEMAP`` it is mapped: kernels use it through ``ary.base.get_device_pointer()``."""
    if int(mem_flags) & host_alloc_flags.DEVICEMAP:
        return _mapped(shape, dtype, order)
    return host.pinned_array(shape, dtype, order=order)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0):
    out = pagelocked_empty(shape, dtype, order, mem_flags)
    out[...] = 0
    return out


def pagelocked_empty_like(ary, mem_flags=0):
    return pagelocked_empty(ary.shape, ary.dtype, mem_flags=mem_flags)


def pagelocked_zeros_like(ary, mem_flags=0):
    return pagelocked_zeros(ary.shape, ary.dtype, mem_flags=mem_flags)


def managed_empty(shape, dtype, order="C", mem_flags=0):
    """Managed (unified) memory, cuMemAllocManaged: a numpy array the host uses directly and kernels
    take as it is (its ``base`` is a ManagedAllocation; ``Context.synchronize()`` before the host reads
    what a kernel wrote, as on a GPU)."""
    return _mapped(shape, dtype, order, ManagedAllocation, "cuMemAllocManaged")


def managed_zeros(shape, dtype, order="C", mem_flags=0):
    out = managed_empty(shape, dtype, order, mem_flags)
    out[...] = 0
    return out


def managed_empty_like(ary, mem_flags=0):
    return managed_empty(ary.shape, ary.dtype, "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C",
                         mem_flags)


def managed_zeros_like(ary, mem_flags=0):
    out = managed_empty_like(ary, mem_flags)
    out[...] = 0
    return out


def aligned_empty(shape, dtype, order="C", alignment=4096):
    """Host memory aligned to ``alignment`` bytes (for register_host_memory), a plain numpy array."""
    nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
    raw = np.empty(nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes].view(dtype).reshape(shape, order=order)


def aligned_zeros(shape, dtype, order="C", alignment=4096):
    out = aligned_empty(shape, dtype, order, alignment)
    out[...] = 0
    return out


def aligned_empty_like(ary, alignment=4096):
    return aligned_empty(ary.shape, ary.dtype, alignment=alignment)


def aligned_zeros_like(ary, alignment=4096):
    return aligned_zeros(ary.shape, ary.dtype, alignment=alignment)


def register_host_memory(ary, flags=0):
    return ary


class host_alloc_flags:             # noqa: N801
    PORTABLE, DEVICEMAP, WRITECOMBINED = 1, 2, 4


class mem_attach_flags:             # noqa: N801
    GLOBAL, HOST, SINGLE = 1, 2, 4


# ---------------------------------------------------------------------- arguments a launch copies
class ArgumentHandler:
    """A host array a launch copies to the device and (``Out``, ``InOut``) back."""

    def __init__(self, array):
        self.array = array

    def get_device_alloc(self):
        return _in_memory_order(self.array)


class In(ArgumentHandler):
    """Copied to the device before the launch, not back."""

    def get_device_alloc(self):
        view = _in_memory_order(np.atleast_1d(self.array)).view()    # (a numpy scalar too: PyCUDA copies its bytes in)
        view.flags.writeable = False            # the launch copies a read-only array in only
        return view


class Out(ArgumentHandler):
    """Copied back to the host after the launch."""


class InOut(ArgumentHandler):
    """Copied in before the launch and back after it."""


# ---------------------------------------------------------------------- streams and events
class Stream(host.Stream):
    """A CUDA stream on cudalab's timeline."""

    def __init__(self, flags=0):
        super().__init__()

    def is_done(self) -> bool:
        return self.query()

    def wait_for_event(self, event):
        event.wait(self)


class Event(streams.Event):
    """A CUDA event: ``record(stream)``, ``synchronize()``, ``time_since(earlier)`` in milliseconds."""

    def __init__(self, flags=0):
        super().__init__(timing=not (int(flags) & event_flags.DISABLE_TIMING))

    def record(self, stream=None):
        super().record(stream or 0)
        return self

    def synchronize(self):
        super().synchronize()
        return self

    def time_since(self, earlier) -> float:
        return _elapsed(earlier, self)

    def time_till(self, later) -> float:
        return _elapsed(self, later)


def _elapsed(start: Event, end: Event) -> float:
    """cuEventElapsedTime in milliseconds; an event the GPU has not reached yet is PyCUDA's error
    (cuEventElapsedTime failed: device not ready), with what to call first in PyCUDA's words."""
    try:
        return start.elapsed_time(end)
    except _errors.CudaError as e:
        if "cudaErrorNotReady" not in str(e):
            raise
        raise LogicError("cuEventElapsedTime failed: device not ready - an event has not been reached yet as far "
                         "as the host can tell (a launch returns at once; the GPU records the event after the "
                         "work before it). Call end.synchronize() after end.record() and before time_till or "
                         "time_since.") from None


# ---------------------------------------------------------------------- modules and functions
def _arg(k, a):
    """A launch argument as PyCUDA packs it (see the module docstring)."""
    if isinstance(a, (np.number, np.bool_)):
        return a
    if isinstance(a, DeviceArray):
        return a
    if isinstance(a, (DeviceAllocation, DevicePointer)):
        return np.uint64(int(a))
    if isinstance(a, ArgumentHandler):
        return a.get_device_alloc()
    if isinstance(a, np.void):
        return bytes(memoryview(np.ascontiguousarray(a)).cast("B")) if a.dtype.itemsize else a
    if isinstance(a, np.ndarray) and isinstance(a.base, ManagedAllocation):
        return np.uint64(int(a.base))                               # managed memory: its address
    if isinstance(a, np.ndarray):
        return bytes(np.ascontiguousarray(a).view(np.uint8))       # by value: its bytes, as PyCUDA passes it
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        return np.uint64(cai["data"][0])
    if hasattr(a, "gpudata"):
        return np.uint64(int(a.gpudata))
    raise TypeError(f"invalid type on parameter #{k} (0-based): PyCUDA passes numpy scalars, device memory "
                    f"and In/Out/InOut arrays, not {type(a).__name__} {a!r}; write np.int32({a!r}) or "
                    "np.float32(...) as the kernel's parameter type is (or give the types with prepare())")


def _shape(dims, what):
    dims = tuple(int(d) for d in dims) if isinstance(dims, (tuple, list)) else (int(dims),)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {dims}")
    return dims


class Function:
    """A kernel of a module: ``f(*args, block=(x, y, z), grid=(x, y), stream=None, shared=0)``."""

    def __init__(self, kernel):
        self._kernel = kernel
        self._formats = None

    @lets_arguments_go
    def __call__(self, *args, block=None, grid=(1, 1), stream=None, shared=0, texrefs=(), time_kernel=False):
        if block is None:
            raise ValueError("must specify block size")
        return self._launch(_shape(grid, "grid"), _shape(block, "block"), [_arg(k, a) for k, a in enumerate(args)],
                            stream, shared, time_kernel)

    @one_at_a_time
    def _launch(self, grid, block, args, stream, shared, time_kernel=False):
        _need_context("cuLaunchKernel")
        start = end = None
        if time_kernel:
            start, end = Event().record(stream), Event()
        self._kernel[grid, block, stream or 0, int(shared)](*args)
        if time_kernel:
            end.record(stream).synchronize()
            return end.time_since(start) / 1000.0        # seconds, as PyCUDA's time_kernel gives them
        return None

    # prepared calls: the argument types given once, as struct format characters ("PPii")
    def prepare(self, arg_types, block=None, shared=None, texrefs=()):
        if isinstance(arg_types, str):
            self._formats = list(arg_types)
        else:
            self._formats = [np.dtype(t).char if not isinstance(t, str) else t for t in arg_types]
        self._prepared_block = block
        return self

    def _prepared_args(self, args):
        if self._formats is None:
            raise LogicError("call prepare(arg_types) before prepared_call")
        out = []
        for k, (fmt, a) in enumerate(zip(self._formats, args)):
            if fmt == "P":
                out.append(a if isinstance(a, DeviceArray) else np.uint64(_address(a)))
            elif isinstance(a, (DeviceArray, DeviceAllocation)):
                out.append(_arg(k, a))
            else:
                out.append(np.array(a, dtype=np.dtype(fmt))[()])
        return out

    @lets_arguments_go
    def prepared_call(self, grid, block, *args, shared_size=0):
        self._launch(_shape(grid, "grid"), _shape(block, "block"), self._prepared_args(args), None, shared_size)

    @lets_arguments_go
    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self._launch(_shape(grid, "grid"), _shape(block, "block"), self._prepared_args(args), stream, shared_size)

    @lets_arguments_go
    def prepared_timed_call(self, grid, block, *args, shared_size=0):
        seconds = self._launch(_shape(grid, "grid"), _shape(block, "block"), self._prepared_args(args), None,
                               shared_size, time_kernel=True)
        return lambda: seconds

    def set_block_shape(self, x, y=1, z=1):
        self._prepared_block = (x, y, z)

    def set_cache_config(self, config):
        pass

    def set_shared_size(self, nbytes):
        pass

    def get_attribute(self, attribute):
        return getattr(self, str(attribute).lower())

    @property
    def num_regs(self):
        return int(self._resource("registers"))

    @property
    def shared_size_bytes(self):
        return int(self._resource("shared"))

    @property
    def local_size_bytes(self):
        return int(self._resource("local"))

    @property
    def const_size_bytes(self):
        return 0

    @property
    def max_threads_per_block(self):
        return int(streams.device_attribute("MaxThreadsPerBlock"))

    def _resource(self, what):
        return getattr(self._kernel.resources(), {"shared": "static_shared"}.get(what, what))


class function_attribute:           # noqa: N801
    MAX_THREADS_PER_BLOCK = _Named(0, "MAX_THREADS_PER_BLOCK")
    SHARED_SIZE_BYTES = _Named(1, "SHARED_SIZE_BYTES")
    CONST_SIZE_BYTES = _Named(2, "CONST_SIZE_BYTES")
    LOCAL_SIZE_BYTES = _Named(3, "LOCAL_SIZE_BYTES")
    NUM_REGS = _Named(4, "NUM_REGS")


class Module:
    """A compiled module: ``get_function(name)``, ``get_global(name)`` -> (address, bytes)."""

    def __init__(self, module):
        _need_context("cuModuleLoadDataEx")
        self._module = module

    def get_function(self, name) -> Function:
        return Function(self._module.get_kernel(name))

    def get_global(self, name) -> tuple:
        array = self._module.get_global(name)
        return np.uint64(array.device_ptr), int(array.nbytes)

    def get_texref(self, name):
        """The module's ``texture<T, dim> name;`` (texrefs.py: bound with set_array or set_address)."""
        from . import texrefs
        found = texrefs.find(self, name)
        if found is None:
            raise LogicError(f"cuModuleGetTexRef failed: named symbol not found - the module declares no texture "
                             f"reference {name!r} (a file-scope texture<float, 2> {name}; in the SourceModule)")
        return found

    def get_surfref(self, name):
        """The module's ``surface<void, dim> name;`` (texrefs.py: bound with set_array)."""
        from . import texrefs
        found = texrefs.find(self, name, texrefs.SurfaceReference)
        if found is None:
            raise LogicError(f"cuModuleGetSurfRef failed: named symbol not found - the module declares no surface "
                             f"reference {name!r} (a file-scope surface<void, 2> {name}; in the SourceModule)")
        return found


def _ptx_module(ptx: str, name: str) -> Module:
    """A module from PTX text (what ``nvcc -ptx`` writes and ``pycuda.compiler.compile`` returns here)."""
    from ..frontend.nvrtc import CompiledSource
    from ..runtime.module import Module as CudaModule
    return Module(CudaModule(CompiledSource(source="", ptx=ptx, options=(), log="", filename=name)))


def _machine_code(what: str):
    from ..errors import UnsupportedError
    return UnsupportedError(f"{what} is machine code for a real GPU (a cubin or fatbin), which the emulated device "
                            "cannot run: build PTX instead (nvcc -ptx kernel.cu, or pycuda.compiler.compile(source)) "
                            "and load that, or give the CUDA C++ to SourceModule")


def _is_ptx(text: str) -> bool:
    return ".version" in text and ".target" in text


class jit_input_type:               # noqa: N801  (PyCUDA's name: CUjitInputType)
    CUBIN = _Named(0, "CUBIN")
    PTX = _Named(1, "PTX")
    FATBINARY = _Named(2, "FATBINARY")
    OBJECT = _Named(3, "OBJECT")
    LIBRARY = _Named(4, "LIBRARY")


# The device runtime's library, which kernels that launch kernels link (``-lcudadevrt``): the emulator
# answers its calls itself, so linking it adds nothing
_DEVICE_RUNTIME = re.compile(r"(^|[\\/])(lib)?cudadevrt(_static)?\.(a|lib)$")


class Linker:
    """cuLink*: PTX of several modules (each built with ``-rdc=true``) linked into one, whose kernels may
    call each other's device functions and launch each other's kernels, as nvlink joins them
    (cudalab/ptx/link.py). Cubins, objects and fatbins are machine code the emulator cannot run."""

    def __init__(self, message_handler=None, options=None, log_verbose=False):
        _need_context("cuLinkCreate")
        self._ptx: list = []
        self.message_handler = message_handler

    def add_data(self, data, input_type, name="unknown"):
        if int(input_type) != jit_input_type.PTX:
            raise _machine_code(f"Linker.add_data({name!r}) of input type {int(input_type)}")
        text = data.decode("utf-8", errors="replace") if isinstance(data, (bytes, bytearray)) else str(data)
        if not _is_ptx(text.rstrip("\0")):
            raise LogicError(f"cuLinkAddData failed: {name!r} is not PTX (no .version and .target lines)")
        self._ptx.append(text.rstrip("\0"))
        return self

    def add_file(self, filename, input_type):
        if int(input_type) == jit_input_type.LIBRARY and _DEVICE_RUNTIME.search(str(filename)):
            return self
        if int(input_type) != jit_input_type.PTX:
            raise _machine_code(f"Linker.add_file({str(filename)!r})")
        with open(filename, "rb") as f:
            return self.add_data(f.read(), input_type, str(filename))

    def link_module(self) -> Module:
        from ..ptx.link import link
        if not self._ptx:
            raise LogicError("cuLinkComplete failed: nothing to link (add PTX with add_data or add_file first)")
        return _ptx_module(link(self._ptx), "linked.ptx")


def module_from_buffer(buffer, options=(), message_handler=None) -> Module:
    """cuModuleLoadDataEx: a module from PTX bytes or text (``pycuda.compiler.compile``'s answer, a
    ``.ptx`` file's contents). ``options`` (jit_option pairs) change nothing on the emulator."""
    data = buffer.encode() if isinstance(buffer, str) else bytes(buffer)
    if data[:4] == b"\x7fELF" or data[:4] == b"\x50\xed\x55\xba":          # an ELF cubin, a fatbin
        raise _machine_code("module_from_buffer's buffer")
    text = data.rstrip(b"\0").decode("utf-8", errors="replace")
    if not _is_ptx(text):
        raise LogicError("cuModuleLoadDataEx failed: the buffer is not PTX (no .version and .target lines); "
                         "give module_from_buffer the PTX that nvcc -ptx or pycuda.compiler.compile made")
    _need_context("cuModuleLoadDataEx")
    return _ptx_module(text, "buffer.ptx")


def module_from_file(path) -> Module:
    """cuModuleLoad: a module from a ``.ptx`` file (``nvcc -ptx kernel.cu``), or, as cudalab's own
    convenience, from a file of CUDA C++ source; a cubin or fatbin is refused (the emulator runs PTX)."""
    from ..runtime.module import compile as compile_cuda
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] in (b"\x7fELF", b"\x50\xed\x55\xba"):
        raise _machine_code(f"module_from_file({str(path)!r})")
    text = data.decode("utf-8", errors="replace")
    _need_context("cuModuleLoad")
    if _is_ptx(text):
        return _ptx_module(text, str(path))
    return Module(compile_cuda(text))


class jit_option:                   # noqa: N801  (PyCUDA's name: CUjit_option, for module_from_buffer's options)
    MAX_REGISTERS, THREADS_PER_BLOCK, WALL_TIME, INFO_LOG_BUFFER = 0, 1, 2, 3
    INFO_LOG_BUFFER_SIZE_BYTES, ERROR_LOG_BUFFER, ERROR_LOG_BUFFER_SIZE_BYTES = 4, 5, 6
    OPTIMIZATION_LEVEL, TARGET_FROM_CUCONTEXT, TARGET, FALLBACK_STRATEGY = 7, 8, 9, 10


# CUDA arrays (cudalab/pycuda/arrays.py): what np_to_array and matrix_to_array make for texture lessons
from .arrays import (Array, ArrayDescriptor, ArrayDescriptor3D, array3d_flags, array_format,  # noqa: E402,F401
                     dtype_to_array_format, gpuarray_to_array, make_multichannel_2d_array, matrix_to_array, np_to_array)
from .texrefs import (TRSA_OVERRIDE_FORMAT, TRSF_NORMALIZED_COORDINATES, TRSF_READ_AS_INTEGER,  # noqa: E402,F401
                      TRSF_SRGB, SurfaceReference, TextureReference, address_mode, bind_array_to_texref,
                      filter_mode, matrix_to_texref)
