"""Thread block clusters and distributed shared memory (compute capability 9.0, PTX ISA 7.8+).

A cluster is a small group of blocks (at most 8, or 16 with the non-portable opt-in) that run at the
same time on one GPC: they can read and write each other's shared memory and wait for each other at
``barrier.cluster``. A kernel gets its cluster shape from ``__cluster_dims__(x, y, z)`` (PTX
``.reqnctapercluster``) or from the launch (``cudaLaunchKernelEx`` with
``cudaLaunchAttributeClusterDimension``; here ``kernel.launch(..., cluster=(x, y, z))``). Without
either, every block is a cluster of one, as on the GPU.

How the emulator does it:

* **Batches hold whole clusters.** Blocks are numbered linearly (x fastest); a batch is a run of
  consecutive blocks whose length is a multiple of the *cluster unit*: ``cx`` blocks when clusters are
  one row high, ``gx * cy`` blocks (whole rows of clusters) when they are taller, ``gx * gy * cz``
  when they are deeper. Every block of a cluster therefore sits in the batch's one shared buffer.
* **Addresses.** A ``.shared::cluster`` address is 32 bits: bit 31 set marks a mapped address, bits
  24..27 hold the target block's rank in its cluster and bits 0..23 the byte offset in that block's
  shared memory. A plain shared offset (bit 31 clear) means the executing block's own shared memory,
  which is what the PTX ISA says a ``.shared::cta`` address means in the ``.shared::cluster`` window.
  Generic addresses of distributed shared memory are the shared window plus this 32-bit value, so
  ``cvta`` and ``mapa.u64`` stay consistent with ``mapa.shared::cluster``.
* **barrier.cluster** is checked, not scheduled: blocks of a batch run in lock step, so every store
  before the barrier has happened before any load after it, provided every thread of the cluster
  reaches the barrier together. Threads that would have to wait for others that took another path
  stop the kernel with an error that says so (the emulator cannot park them).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import KernelError, LaunchError, UnsupportedError
from . import warp  # noqa: F401  (its barrier decoder is wrapped below)
from .decode import DECODERS, Unsupported, op
from .events import BarrierEvent, MemoryEvent
from .findings import Finding
from .memory import SHARED_WINDOW, WINDOW_SIZE
from .operands import reader, writer

MAPPED = 0x8000_0000              # bit 31: a mapped (distributed) shared address
RANK_SHIFT = 24
OFFSET_MASK = (1 << RANK_SHIFT) - 1
PORTABLE_CLUSTER = 8              # blocks per cluster any cluster-capable GPU runs
MAX_CLUSTER = 16                  # with cudaFuncAttributeNonPortableClusterSizeAllowed (H100)
MAX_BATCH_LANES = 1 << 20         # a cluster unit may make a batch this big (like cooperative launches)


@dataclass(frozen=True)
class ClusterShape:
    dims: tuple = (1, 1, 1)
    explicit: bool = False        # launched with a cluster (attribute or __cluster_dims__)

    @property
    def size(self) -> int:
        return self.dims[0] * self.dims[1] * self.dims[2]


NO_CLUSTER = ClusterShape()


def _dim3(v, what, kernel):
    if isinstance(v, (int, np.integer)):
        t = (int(v),)
    elif isinstance(v, (tuple, list)) and 1 <= len(v) <= 3 and all(isinstance(x, (int, np.integer)) for x in v):
        t = tuple(int(x) for x in v)
    else:
        raise LaunchError(f"{kernel}: the {what} must be an int or a tuple of 1 to 3 ints, like 2 or (2, 1, 1); "
                          f"got {v!r}.", "cudaErrorInvalidValue")
    return t + (1,) * (3 - len(t))


def launch_shape(func, grid, cluster, kernel: str, non_portable: bool = False, cc=(9, 0)) -> ClusterShape:
    """The cluster shape of a launch, checked as the driver checks it.

    ``func`` is the kernel's ir.Function (its ``.reqnctapercluster``/``.explicitcluster`` directives
    come from ``__cluster_dims__``); ``cluster`` the launch attribute or None."""
    compiled = func.directives.get("reqnctapercluster")
    need = "explicitcluster" in func.directives
    if cluster is None and compiled is None:
        if need:
            raise LaunchError(f"{kernel} was compiled with __cluster_dims__() and no size, so it must be launched with "
                              "a cluster size: kernel.launch(..., cluster=(x, y, z)) (cudaLaunchKernelEx with "
                              "cudaLaunchAttributeClusterDimension).", "cudaErrorInvalidClusterSize")
        return NO_CLUSTER
    if cc < (9, 0):
        raise LaunchError(f"{kernel}: thread block clusters need compute capability 9.0 (an H100); the selected "
                          f"device has {cc[0]}.{cc[1]}. Pick one with cudalab.set_device('H100').",
                          "cudaErrorNotSupported")
    dims = _dim3(cluster, "cluster size", kernel) if cluster is not None else None
    if compiled is not None:
        cdims = tuple(compiled) + (1,) * (3 - len(compiled))
        if dims is not None and dims != cdims:
            raise LaunchError(f"{kernel} was compiled with __cluster_dims__{cdims}, but the launch asks for clusters "
                              f"of {dims}. Leave the launch's cluster size out (or make them equal).",
                              "cudaErrorInvalidClusterSize")
        dims = cdims
    if any(x < 1 for x in dims):
        raise LaunchError(f"{kernel}: every cluster dimension must be at least 1, but the cluster is {dims}.",
                          "cudaErrorInvalidClusterSize")
    size = dims[0] * dims[1] * dims[2]
    limit = MAX_CLUSTER if non_portable else PORTABLE_CLUSTER
    if size > limit:
        how = ("" if non_portable else " (16 after cudaFuncSetAttribute(kernel, "
               "cudaFuncAttributeNonPortableClusterSizeAllowed, 1))")
        raise LaunchError(f"{kernel}: a cluster may have at most {limit} blocks{how}, but {dims} has {size}.",
                          "cudaErrorInvalidClusterSize")
    for axis, (g, c) in enumerate(zip(grid, dims)):
        if g % c:
            raise LaunchError(f"{kernel}: gridDim.{'xyz'[axis]} = {g} is not a multiple of the cluster's "
                              f"{'xyz'[axis]} size {c}: a grid is made of whole clusters. Round the grid up to a "
                              f"multiple of {c} (and let the extra blocks do nothing).",
                              "cudaErrorInvalidClusterSize")
    return ClusterShape(dims, True)


def cluster_unit(grid, shape: ClusterShape) -> int:
    """How many consecutive (linear) blocks hold whole clusters: batches are multiples of this."""
    cx, cy, cz = shape.dims
    gx, gy, _ = grid
    if cz > 1:
        return gx * gy * cz
    if cy > 1:
        return gx * cy
    return cx


def batch_blocks(bpb: int, grid, shape: ClusterShape, lanes_per_block: int, kernel: str) -> int:
    """Round the engine's blocks-per-batch to whole cluster units (see the module docstring)."""
    if shape.size == 1:
        return bpb
    unit = cluster_unit(grid, shape)
    if unit * lanes_per_block > MAX_BATCH_LANES:
        raise UnsupportedError(
            f"{kernel}: the emulator runs the blocks of a cluster together, and with clusters of {shape.dims} in a "
            f"grid {tuple(grid)} wide that takes {unit:,} blocks at once, too many. Make the grid narrower in x, or "
            "the clusters one block high (cluster=(n, 1, 1)).")
    return max(unit, bpb // unit * unit)


# ------------------------------------------------------------------ per-batch geometry

def _coords(ex):
    """(bx, by, bz) of each lane's block, cached on the Exec."""
    c = getattr(ex, "_cl_coords", None)
    if c is None:
        b = ex.batch
        gx, gy, _ = b.grid
        blk = b.first_block + ex.lane_block
        c = ex._cl_coords = (blk % gx, (blk // gx) % gy, blk // (gx * gy))
    return c


def shape_of(ex) -> ClusterShape:
    return getattr(ex, "cluster", None) or NO_CLUSTER


def rank_of(ex):
    """%cluster_ctarank of every lane."""
    r = getattr(ex, "_cl_rank", None)
    if r is None:
        cx, cy, _ = shape_of(ex).dims
        x, y, z = _coords(ex)
        r = ex._cl_rank = ((x % cx) + (y % cy) * cx + (z % shape_of(ex).dims[2]) * cx * cy).astype(np.int64)
    return r


def block_positions(ex):
    """positions[p, r]: batch position of the block of rank r in the cluster of the block at position p."""
    pos = getattr(ex, "_cl_pos", None)
    if pos is None:
        b = ex.batch
        shape = shape_of(ex)
        cx, cy, cz = shape.dims
        gx, gy, _ = b.grid
        blk = b.first_block + np.arange(b.nblocks, dtype=np.int64)
        x, y, z = blk % gx, (blk // gx) % gy, blk // (gx * gy)
        ox, oy, oz = x - x % cx, y - y % cy, z - z % cz
        r = np.arange(shape.size, dtype=np.int64)
        rx, ry, rz = r % cx, (r // cx) % cy, r // (cx * cy)
        target = (ox[:, None] + rx) + (oy[:, None] + ry) * gx + (oz[:, None] + rz) * gx * gy
        pos = ex._cl_pos = target - b.first_block
    return pos


def special(ex, name, axis):
    """The cluster special registers (PTX ISA 10.x): %clusterid, %nclusterid, %cluster_ctaid,
    %cluster_nctaid, %cluster_ctarank, %cluster_nctarank, %is_explicit_cluster."""
    shape = shape_of(ex)
    dims = shape.dims
    if name == "is_explicit_cluster":
        return np.bool_(shape.explicit)
    if name == "cluster_nctarank":
        return np.uint32(shape.size)
    if name == "cluster_ctarank":
        return rank_of(ex).astype(np.uint32) if shape.size > 1 else np.uint32(0)
    if axis is None:
        raise Unsupported(f"special register %{name} without .x/.y/.z")
    if name == "cluster_nctaid":
        return np.uint32(dims[axis])
    if name == "nclusterid":
        return np.uint32(ex.batch.grid[axis] // dims[axis])
    c = _coords(ex)[axis]
    if name == "clusterid":
        return (c // dims[axis]).astype(np.uint32)
    if name == "cluster_ctaid":
        return (c % dims[axis]).astype(np.uint32) if dims[axis] > 1 else np.uint32(0)
    raise Unsupported(f"special register %{name}")


# ------------------------------------------------------------------ mapa, getctarank

def _encode(rank, offset):
    return (np.uint64(MAPPED) | (np.asarray(rank).astype(np.uint64) << np.uint64(RANK_SHIFT))
            | (np.asarray(offset).astype(np.uint64) & np.uint64(OFFSET_MASK)))


def _decode_addr(ex, sel, a):
    """(rank, offset) of 32-bit shared::cluster addresses ``a`` of lanes ``sel``."""
    a = np.asarray(a).astype(np.uint64)
    mapped = (a & np.uint64(MAPPED)) != 0
    own = rank_of(ex)[sel] if shape_of(ex).size > 1 else np.zeros(sel.size, np.int64)
    rank = np.where(mapped, ((a >> np.uint64(RANK_SHIFT)) & np.uint64(0x7F)).astype(np.int64), own)
    return rank, a & np.uint64(OFFSET_MASK), mapped


def _check_rank(ex, inst, sel, rank, what):
    bad = (rank < 0) | (rank >= shape_of(ex).size)
    if bad.any():
        lane = int(sel[np.flatnonzero(bad)[0]])
        r = int(rank[np.flatnonzero(bad)[0]])
        ex.stop(lane, "memcheck", "cudaErrorIllegalAddress", inst, lambda b, t: (
            f"{what} at line {inst.line} in kernel {ex.kernel_name} (thread {t} of block {b}) names block rank {r}, "
            f"but the cluster has {shape_of(ex).size} block(s) (ranks 0..{shape_of(ex).size - 1}). "
            "Use cluster.num_blocks() / %cluster_nctarank for the bound."))


@op("mapa")
def _mapa(inst, d):
    """mapa{.shared::cluster}.u32/u64 d, a, rank: the address of the same variable in block ``rank``
    of the cluster (cooperative_groups' cluster.map_shared_rank)."""
    generic = "shared::cluster" not in inst.mods
    t = inst.type
    w = writer(inst.operands[0], t, d.func)
    ra = reader(inst.operands[1], t, d.func, d)
    rr = reader(inst.operands[2], "u32", d.func, d)

    def run(ex):
        sel = ex.idx
        a = np.broadcast_to(np.asarray(ra(ex, sel)).astype(np.uint64), sel.shape)
        rank = np.broadcast_to(np.asarray(rr(ex, sel)).astype(np.int64), sel.shape)
        _check_rank(ex, inst, sel, rank, "mapa (cluster.map_shared_rank)")
        if generic:
            inside = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
            if not inside.all():
                lane = int(sel[np.flatnonzero(~inside)[0]])
                addr = int(a[np.flatnonzero(~inside)[0]])
                ex.stop(lane, "memcheck", "cudaErrorIllegalAddress", inst, lambda b, th: (
                    f"mapa (cluster.map_shared_rank) at line {inst.line} in kernel {ex.kernel_name} (thread {th} of "
                    f"block {b}) was given 0x{addr:x}, which is not a __shared__ address. Only shared memory can be "
                    "mapped to another block of the cluster."))
            out = np.uint64(SHARED_WINDOW) + _encode(rank, a - np.uint64(SHARED_WINDOW))
        else:
            out = _encode(rank, a)
        w(ex, sel, out)
    return run


@op("getctarank")
def _getctarank(inst, d):
    """getctarank{.shared::cluster}.u32/u64 d, a: the rank of the block whose shared memory ``a``
    points into (cooperative_groups' cluster.query_shared_rank)."""
    generic = "shared::cluster" not in inst.mods
    t = inst.type
    w = writer(inst.operands[0], "u32", d.func)
    ra = reader(inst.operands[1], t, d.func, d)

    def run(ex):
        sel = ex.idx
        a = np.broadcast_to(np.asarray(ra(ex, sel)).astype(np.uint64), sel.shape)
        if generic:
            a = a - np.uint64(SHARED_WINDOW)
        rank, _, _ = _decode_addr(ex, sel, a)
        w(ex, sel, rank.astype(np.uint32))
    return run


# ------------------------------------------------------------------ shared::cluster accesses

def resolve_shared(ex, inst, space, addrs, sel, size, kind):
    """memops.resolve's hook for shared addresses: None when every address is the block's own
    (plain shared), else the group list for mapped (distributed) addresses.

    ``space`` is "shared" for ``.shared``/``.shared::cta`` (only the own block may be named),
    "shared::cluster" for ``.shared::cluster`` and generic accesses."""
    if not (addrs & np.uint64(MAPPED)).any():
        return None
    rank, off, _ = _decode_addr(ex, sel, addrs)
    _check_rank(ex, inst, sel, rank, "A distributed shared memory access")
    if space == "shared":
        own = rank_of(ex)[sel] if shape_of(ex).size > 1 else np.zeros(sel.size, np.int64)
        other = rank != own
        if other.any():
            k = np.flatnonzero(other)[0]
            ex.fault(inst, "shared", kind, sel[other], addrs[other], size,
                     f"is block rank {int(rank[k])}'s shared memory, which a .shared::cta access cannot reach "
                     "(only .shared::cluster or generic accesses can)")
    limit = ex.shared_size
    bad = off > np.uint64(limit - size) if limit >= size else np.ones(off.shape, bool)
    if bad.any():
        ex.fault(inst, "shared", kind, sel[bad], addrs[bad], size,
                 f"is out of bounds of the {limit}-byte shared memory of block rank {int(rank[np.flatnonzero(bad)[0]])} "
                 "of the cluster")
    if size > 1:
        mis = (off & np.uint64(size - 1)) != 0
        if mis.any():
            ex.fault(inst, "shared", kind, sel[mis], addrs[mis], size, f"is not aligned to {size} bytes",
                     code="cudaErrorMisalignedAddress")
    pos = block_positions(ex)[ex.lane_block[sel], rank]
    full = pos.astype(np.uint64) * np.uint64(ex.shared_stride) + off
    if ex.observers:
        ex.emit(MemoryEvent(inst, sel, ex.batch, "shared::cluster", kind, size, addrs))
    return [("shared", ex.shared, full, slice(None))]


def _normalised(inst, drop):
    """The instruction with the state-space modifier ``drop`` (shared::cta) read as plain .shared."""
    return replace(inst, mods=tuple("shared" if m == drop else m for m in inst.mods))


def _wrap_space_decoder(name):
    """Let an existing decoder (cvta, isspacep) take .shared::cta / .shared::cluster: both name the
    shared window of the generic space (a mapped address keeps its rank bits)."""
    base = DECODERS[name]

    def dec(inst, d):
        for m in ("shared::cta", "shared::cluster"):
            if m in inst.mods:
                return base(_normalised(inst, m), d)
        return base(inst, d)
    DECODERS[name] = dec


for _name in ("cvta", "isspacep"):
    _wrap_space_decoder(_name)


# ------------------------------------------------------------------ barrier.cluster

def _wrap_barrier():
    base = DECODERS["barrier"]

    def dec(inst, d):
        if "cluster" in inst.mods:
            return _barrier_cluster(inst, d)
        return base(inst, d)
    DECODERS["barrier"] = dec


def _barrier_cluster(inst, d):
    """barrier.cluster.arrive{.release|.relaxed}{.aligned} / barrier.cluster.wait{.acquire}{.aligned}.

    Arrival is counted per thread; a wait needs every live thread of its cluster to have arrived.
    In lock step that holds when the whole cluster runs the barrier together (the usual
    ``cluster.sync()``); where some threads took another path the emulator cannot let these wait
    for them, and says so."""
    arrive = "arrive" in inst.mods
    wait = "wait" in inst.mods or not arrive

    def run(ex):
        if ex.observers:
            ex.emit(BarrierEvent(inst, ex.idx, ex.batch))
        arrived = getattr(ex, "_cl_arrived", None)
        if arrived is None:
            arrived = ex._cl_arrived = np.zeros(ex.n, np.int8)
        sel = ex.idx
        if arrive:
            again = arrived[sel] > 0
            if again.any():
                lane = int(sel[np.flatnonzero(again)[0]])
                ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
                    f"barrier.cluster.arrive at line {inst.line} in kernel {ex.kernel_name}: thread {t} of block {b} "
                    "arrived twice without waiting in between (cluster.barrier_arrive() needs a "
                    "cluster.barrier_wait() before the next arrive)."))
            arrived[sel] = 1
        if wait:
            _check_all_arrived(ex, inst, arrived)
            not_yet = arrived[sel] == 0
            if not_yet.any():
                lane = int(sel[np.flatnonzero(not_yet)[0]])
                ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
                    f"barrier.cluster.wait at line {inst.line} in kernel {ex.kernel_name}: thread {t} of block {b} "
                    "waits without having arrived (call cluster.barrier_arrive() first, or cluster.sync())."))
            arrived[sel] = 0
    return run


def _check_all_arrived(ex, inst, arrived):
    """Every non-exited thread of each cluster that has a thread here must have arrived."""
    shape = shape_of(ex)
    sel = ex.idx
    blocks = np.unique(ex.lane_block[sel])
    members = np.unique(block_positions(ex)[blocks].ravel()) if shape.size > 1 else blocks
    live = ~ex.exited & ex.valid
    # threads parked on their way to the kernel's final ret count as exited (as for __syncthreads)
    if ex.depth == 0 and getattr(ex, "kernel_stack", None):
        from .engine import K_EXIT, K_RET
        code = ex.kernel.code
        for pc, _, m in ex.kernel_stack:
            if pc >= len(code) or (code[pc][0] in (K_RET, K_EXIT) and code[pc][2].guard is None):
                live = live & ~m
    in_cluster = np.isin(ex.lane_block, members)
    missing = live & in_cluster & (arrived == 0)
    if missing.any():
        lane = int(np.flatnonzero(missing)[0])
        block, thread = ex.where(lane)
        line = f"line {inst.line}" if inst.line else "a cluster barrier"
        msg = (f"Cluster barrier at {line} in kernel {ex.kernel_name}: thread ({thread[0]},{thread[1]},{thread[2]}) "
               f"of block ({block[0]},{block[1]},{block[2]}) has not arrived while others of its cluster wait. "
               "Every thread of every block in the cluster must reach cluster.sync() (the emulator runs threads in "
               "lock step and cannot let the others wait for threads on another path). Move cluster.sync() out of "
               "the if/loop.")
        raise KernelError(msg, "cudaErrorLaunchFailure",
                          [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread)])


_wrap_barrier()
