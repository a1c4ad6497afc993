"""Device memory as the CUDA runtime sees it: allocations of each kind over the emulator's arena,
registered host ranges, and the checks cudaMemcpy/cudaMemset/cudaFree make, with CUDA's codes.

Kinds: ``device`` (cudaMalloc, cudaMallocPitch), ``managed`` (cudaMallocManaged and
``__managed__`` variables), ``host`` (cudaMallocHost/cudaHostAlloc: pinned, mapped), ``pool``
(cudaMallocAsync and memory pools) and ``graph`` (graph memory nodes). Every kind lives in the
one arena (``emulator.memory.DeviceMemory``), so memcheck sees them all and a whole program
maps them at the same addresses. Page-locked host memory outside the arena (``PinnedHost``: what
a program registers with cudaHostRegister, the Python API's pinned arrays) is only recorded: copies
from and to it count as pinned on the timeline.
"""
from __future__ import annotations

from ...emulator.memory import GLOBAL_BASE, DeviceMemory
from ...errors import CudaError

LABEL = {"device": "cudaMalloc", "managed": "cudaMallocManaged", "host": "cudaMallocHost",
         "pool": "cudaMallocAsync", "graph": "a graph memory node"}
# the call that frees each kind of allocation, for a program that called another one
FREED_BY = {"device": "cudaFree", "managed": "cudaFree", "host": "cudaFreeHost", "pool": "cudaFreeAsync (or cudaFree)"}
KINDS = ("H2H", "H2D", "D2H", "D2D", "default")     # cudaMemcpyKind 0..4
MEMORY_TYPE = {"host": 1, "device": 2, "managed": 3, "pool": 2, "graph": 2}   # cudaMemoryType


class PinnedHost:
    """Page-locked host ranges outside the arena, one registry for whole programs (cudaHostRegister)
    and the Python API (``cudalab.pinned_array``, ``cudalab.pinned()``)."""

    def __init__(self):
        self.ranges: dict = {}           # key -> (start, end); a registration's key is its start address

    def holds(self, start: int, end: int | None = None) -> bool:
        """Are the bytes from ``start`` to ``end`` (one byte if None) page-locked?"""
        end = start + 1 if end is None else end
        return any(lo <= start and end <= hi for lo, hi in self.ranges.values())

    def register(self, addr: int, size: int):
        """cudaHostRegister, with CUDA's check."""
        if any(lo < addr + size and addr < hi for lo, hi in self.ranges.values()):
            raise CudaError(f"cudaHostRegister(0x{addr:x}, {size}): part of that range is registered already.",
                            "cudaErrorHostMemoryAlreadyRegistered")
        self.ranges[addr] = (addr, addr + int(size))

    def unregister(self, addr: int):
        if self.ranges.pop(addr, None) is None:
            raise CudaError(f"cudaHostUnregister(0x{addr:x}): no range registered with cudaHostRegister starts "
                            "there.", "cudaErrorHostMemoryNotRegistered")

    def pin(self, start: int, end: int, key):
        """A range of the Python API, under a key of its own: numpy may hand a freed pinned array's
        address to a new array before the old one's finalizer has run."""
        self.ranges[key] = (start, end)

    def unpin(self, key):
        self.ranges.pop(key, None)


class Memory:
    """The allocation table of one context over a DeviceMemory arena."""

    def __init__(self, arena: DeviceMemory, pinned_host: PinnedHost | None = None):
        self.arena = arena
        self.kinds: dict = {}            # allocation address -> kind
        self.pinned_host = pinned_host if pinned_host is not None else PinnedHost()

    # ------------------------------------------------------------------ allocation
    def alloc(self, size: int, kind: str = "device", label: str | None = None, scratch: bool = False) -> int:
        try:
            addr = self.arena.alloc(int(size), label=label or LABEL[kind], scratch=scratch, host=kind == "host")
        except CudaError as e:
            raise CudaError(e.args[0], "cudaErrorMemoryAllocation") from None
        self.kinds[addr] = kind
        return addr

    def free(self, addr: int, kinds=("device", "managed"), call: str = "cudaFree"):
        """Free the allocation that starts at ``addr`` if it is of one of ``kinds``."""
        have = self.kinds.get(addr)
        freed = self.arena.allocs.get(addr)        # the last allocation made at this address
        if freed is not None and freed.freed:
            raise CudaError(f"{call}(0x{addr:x}): this {freed.size}-byte allocation was freed already, and a second "
                            "free fails (cudaErrorInvalidValue). A C++ object whose destructor frees its memory is "
                            "freed twice when it is copied, as when it is passed to a kernel by value.",
                            "cudaErrorInvalidValue")
        if have is not None and have not in kinds and have in FREED_BY and not self.arena.allocs[addr].freed:
            # a live allocation of another kind: the program called the other free (cudaFree of a
            # cudaMallocHost buffer, a mix-up the name cudaFreeHost invites)
            raise CudaError(f"{call}(0x{addr:x}): this {self.arena.allocs[addr].size:,}-byte allocation was made by "
                            f"{LABEL[have]}, and {FREED_BY[have]} frees it, not {call} (cudaErrorInvalidValue; "
                            "the memory stays allocated).", "cudaErrorInvalidValue")
        if have not in kinds or self.arena.allocs[addr].freed:
            want = " or ".join(LABEL[k] for k in kinds)
            raise CudaError(f"{call}(0x{addr:x}): that is not the start of a live {want} allocation "
                            f"(the address is {self.arena.describe(addr, 1)}).", "cudaErrorInvalidValue")
        self.arena.free(addr)
        del self.kinds[addr]

    def adopt(self, addr: int, kind: str):
        """Memory the emulator made itself (a ``__managed__`` variable) gets a kind."""
        self.kinds[addr] = kind

    def kind_at(self, addr: int) -> str | None:
        """The kind of the live allocation containing ``addr`` (None outside every allocation)."""
        a = self.arena.find(addr)
        if a is None or a.freed or not a.address <= addr < a.address + max(a.size, 1):
            return None
        return self.kinds.get(a.address, "device")

    def in_arena(self, addr: int, n: int = 1) -> bool:
        return GLOBAL_BASE <= addr and addr + n <= GLOBAL_BASE + self.arena.capacity

    def check(self, addr: int, n: int, what: str):
        """``n`` bytes at ``addr`` must lie inside one live allocation (else CUDA says invalid argument)."""
        a = self.arena.find(addr)
        if a is None or a.freed or addr < a.address or addr + n > a.address + max(a.size, 1):
            raise CudaError(f"{what}: {n:,} bytes at 0x{addr:x} do not fit in device memory (the address is "
                            f"{self.arena.describe(addr, n)}).", "cudaErrorInvalidValue")

    def pinned(self, addr: int) -> bool:
        """Is host address ``addr`` page-locked (cudaMallocHost'ed, registered or in the arena)?"""
        return self.in_arena(addr) or self.pinned_host.holds(addr)

    def info(self) -> tuple:
        """(free, total) bytes, as cudaMemGetInfo says."""
        used = sum(a.size for a in self.arena.allocs.values() if not a.freed and not a.host)
        return self.arena.limit - used, self.arena.limit

    def pointer_type(self, addr: int) -> int:
        """cudaPointerGetAttributes' type: 0 unregistered host memory, 1 host, 2 device, 3 managed."""
        if not self.in_arena(addr):
            return 1 if self.pinned(addr) else 0
        kind = self.kind_at(addr)
        return MEMORY_TYPE.get(kind or "device", 2)

    # ------------------------------------------------------------------ copies
    def direction(self, dst: int, src: int, kind: int, call: str = "cudaMemcpy") -> str:
        """"H2D", "D2H", "D2D" or "H2H" for a copy of cudaMemcpyKind ``kind``, checked as CUDA does."""
        src_dev, dst_dev = self.in_arena(src), self.in_arena(dst)
        actual = ("D" if src_dev else "H") + "2" + ("D" if dst_dev else "H")
        if kind == 4:
            return actual
        if kind not in (0, 1, 2, 3):
            raise CudaError(f"{call}: {kind} is not a cudaMemcpyKind (use cudaMemcpyHostToDevice, "
                            "cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice, cudaMemcpyHostToHost or "
                            "cudaMemcpyDefault).", "cudaErrorInvalidMemcpyDirection")
        want = KINDS[kind]
        if (want[0] == "D" and not src_dev) or (want[2] == "D" and not dst_dev):
            side = "source" if want[0] == "D" and not src_dev else "destination"
            name = ("HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice")[kind]
            raise CudaError(f"{call} with cudaMemcpy{name}: the {side} is not device memory. Check the "
                            "order (dst, src, bytes, kind) and the kind.", "cudaErrorInvalidValue")
        return want

    def check_copy(self, dst: int, src: int, n: int, kind: int, call: str = "cudaMemcpy", rows=1, dpitch=0,
                   spitch=0) -> str:
        """Check a (2D) copy's device sides; returns its direction."""
        for addr, what in ((dst, "destination"), (src, "source")):
            if not addr:
                raise CudaError(f"{call}: the {what} pointer is NULL (was it allocated?).", "cudaErrorInvalidValue")
        direction = self.direction(dst, src, kind, call)
        for addr, pitch, what in ((src, spitch, "source"), (dst, dpitch, "destination")):
            if self.in_arena(addr):
                self.check(addr, pitch * (rows - 1) + n, f"{call} {what}")
        return direction
