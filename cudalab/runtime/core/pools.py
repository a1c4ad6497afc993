"""Memory pools and the stream-ordered allocator (cudaMallocAsync, cudaFreeAsync, cudaMemPool*).

A pool hands out allocations in stream order and keeps freed blocks for reuse instead of giving
them back at once (CUDA Programming Guide, "Stream Ordered Memory Allocator"):

* a block freed with cudaFreeAsync is reused by a later cudaMallocAsync of the same size in the
  same stream; in another stream only when ``cudaMemPoolReuseAllowOpportunistic`` is on and the
  free has happened on the timeline;
* at a synchronization (cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize) the
  pool gives cached blocks back until it holds no more than ``cudaMemPoolAttrReleaseThreshold``
  (0 by default: everything free goes back); cudaMemPoolTrimTo does the same on demand;
* reserved memory grows in granules of 32 MiB, as an H100 reserves graph memory
  (tests/runtime_api/h100/graphs_captured.out); ``used`` counts the bytes of live allocations.

Each allocation is its own block in the emulator's arena, so memcheck bounds it exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import CudaError

GRANULE = 32 << 20

# cudaMemPoolAttr
REUSE_FOLLOW_EVENT_DEPENDENCIES, REUSE_ALLOW_OPPORTUNISTIC, REUSE_ALLOW_INTERNAL_DEPENDENCIES = 1, 2, 3
RELEASE_THRESHOLD, RESERVED_CURRENT, RESERVED_HIGH, USED_CURRENT, USED_HIGH = 4, 5, 6, 7, 8
ATTRIBUTE_NAMES = {1: "cudaMemPoolReuseFollowEventDependencies", 2: "cudaMemPoolReuseAllowOpportunistic",
                   3: "cudaMemPoolReuseAllowInternalDependencies", 4: "cudaMemPoolAttrReleaseThreshold",
                   5: "cudaMemPoolAttrReservedMemCurrent", 6: "cudaMemPoolAttrReservedMemHigh",
                   7: "cudaMemPoolAttrUsedMemCurrent", 8: "cudaMemPoolAttrUsedMemHigh"}


def granules(nbytes: int) -> int:
    return -(-nbytes // GRANULE) * GRANULE


@dataclass
class MemPool:
    handle: int
    location: int = 0                 # the device it allocates on
    threshold: int = 0
    reuse: dict = field(default_factory=lambda: {1: 1, 2: 1, 3: 1})
    live: dict = field(default_factory=dict)       # address -> size
    cached: list = field(default_factory=list)     # [address, size, stream, free time (us)]
    reserved: int = 0
    reserved_high: int = 0
    used_high: int = 0
    access: int = 3                   # cudaMemAccessFlagsProtReadWrite for its own device

    @property
    def used(self) -> int:
        return sum(self.live.values())

    def _reserve(self):
        held = self.used + sum(c[1] for c in self.cached)
        if held > self.reserved:
            self.reserved = granules(held)
        self.reserved_high = max(self.reserved_high, self.reserved)
        self.used_high = max(self.used_high, self.used)

    def allocate(self, memory, size: int, stream, now: float, stream_end) -> int:
        """A block of ``size`` bytes for ``stream``: a cached one when the reuse rules allow."""
        for k, (addr, n, s, freed_at) in enumerate(self.cached):
            if n == size and (s == stream or (self.reuse[REUSE_ALLOW_OPPORTUNISTIC] and freed_at <= now)):
                del self.cached[k]
                self.live[addr] = size
                self._reserve()
                return addr
        addr = memory.alloc(size, "pool")
        self.live[addr] = size
        self._reserve()
        return addr

    def release(self, addr: int, stream, when: float):
        """cudaFreeAsync: the block goes back to the pool when ``stream`` reaches the free."""
        size = self.live.pop(addr)
        self.cached.append([addr, size, stream, when])

    def trim(self, memory, keep: int):
        """Give cached blocks back until the pool reserves no more than ``keep`` bytes (or none are cached)."""
        while self.cached and granules(self.used + sum(c[1] for c in self.cached)) > keep:
            addr = self.cached.pop()[0]
            memory.free(addr, kinds=("pool",), call="cudaMemPoolTrimTo")
        self.reserved = granules(self.used + sum(c[1] for c in self.cached))

    def synchronized(self, memory):
        """A synchronization: memory beyond the release threshold goes back to the device."""
        if self.reserved > self.threshold:
            self.trim(memory, self.threshold)

    def destroy(self, memory):
        for addr in list(self.live) + [c[0] for c in self.cached]:
            memory.free(addr, kinds=("pool",), call="cudaMemPoolDestroy")
        self.live.clear()
        self.cached.clear()

    # ------------------------------------------------------------------ attributes
    def get(self, attr: int) -> int:
        values = {RELEASE_THRESHOLD: self.threshold, RESERVED_CURRENT: self.reserved,
                  RESERVED_HIGH: self.reserved_high, USED_CURRENT: self.used, USED_HIGH: self.used_high}
        if attr in self.reuse:
            return self.reuse[attr]
        if attr not in values:
            raise CudaError(f"cudaMemPoolGetAttribute: {attr} is not a cudaMemPoolAttr.", "cudaErrorInvalidValue")
        return values[attr]

    def set(self, attr: int, value: int):
        if attr in self.reuse:
            self.reuse[attr] = int(bool(value))
        elif attr == RELEASE_THRESHOLD:
            self.threshold = int(value)
        elif attr in (RESERVED_HIGH, USED_HIGH):
            if value != 0:
                raise CudaError(f"cudaMemPoolSetAttribute({ATTRIBUTE_NAMES[attr]}): a high-water mark can only be "
                                "reset, to 0.", "cudaErrorInvalidValue")
            if attr == RESERVED_HIGH:
                self.reserved_high = self.reserved
            else:
                self.used_high = self.used
        else:
            name = ATTRIBUTE_NAMES.get(attr, f"attribute {attr}")
            raise CudaError(f"cudaMemPoolSetAttribute: {name} cannot be set.", "cudaErrorInvalidValue")


@dataclass
class GraphMemory:
    """Memory of graph allocation nodes (cudaDeviceGetGraphMemAttribute). An instantiated graph that
    has run holds its allocations' granules; cudaDeviceGraphMemTrim takes them back once the graph
    is destroyed, or once every allocation it left unfreed was freed outside it (what NVIDIA's
    graphMemoryFootprint sample shows: freeing alone does not shrink the footprint)."""

    used: int = 0
    reserved: int = 0
    used_high: int = 0
    reserved_high: int = 0
    held: dict = field(default_factory=dict)          # exec handle -> bytes it holds
    outstanding: dict = field(default_factory=dict)   # allocation address -> exec handle that left it unfreed
    releasable: set = field(default_factory=set)      # execs whose memory a trim may take back

    def launched(self, exec_handle: int, nbytes: int, unfreed):
        if exec_handle not in self.held:
            self.held[exec_handle] = granules(nbytes)
            self.used += self.held[exec_handle]
        self.releasable.discard(exec_handle)
        for addr in unfreed:
            self.outstanding[addr] = exec_handle
        self.reserved = max(self.reserved, self.used)
        self.used_high = max(self.used_high, self.used)
        self.reserved_high = max(self.reserved_high, self.reserved)

    def freed(self, addr: int):
        """A graph allocation freed outside its graph."""
        e = self.outstanding.pop(addr, None)
        if e is not None and e not in self.outstanding.values():
            self.releasable.add(e)

    def destroyed(self, exec_handle: int):
        for addr in [a for a, e in self.outstanding.items() if e == exec_handle]:
            del self.outstanding[addr]
        if exec_handle in self.held:
            self.releasable.add(exec_handle)

    def trim(self):
        for e in self.releasable:
            self.used -= self.held.pop(e, 0)
        self.releasable.clear()
        self.reserved = self.used

    def get(self, attr: int) -> int:
        # cudaGraphMemAttributeType: 0 used current, 1 used high, 2 reserved current, 3 reserved high
        return (self.used, self.used_high, self.reserved, self.reserved_high)[attr]
