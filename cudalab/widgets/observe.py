"""Record what each thread did (lines, memory accesses, barrier phases) as plain data the widgets draw.

``trace(kernel, grid, block, args)`` launches a kernel on the emulator with a ``ThreadTrace`` observer
and returns the LaunchRecord with ``rec.reports["threads"]``: a ``Trace`` of numpy arrays. Big
launches are sampled: every thread of up to ``max_blocks`` blocks (spread over the grid) is recorded
in detail; per-element read/write counts of the global arrays cover every block.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..analysis.divergence import branch_outcome
from ..emulator.events import Observer

SPACES = ("global", "shared", "local", "const", "param")
KINDS = ("ld", "st", "atom", "red")
_ITEMSIZE = {"char": 1, "bool": 1, "short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "int": 4,
             "unsigned": 4, "float": 4, "uint": 4, "double": 8, "long": 8, "int2": 8, "float2": 8,
             "float4": 16, "int4": 16}


@dataclass
class ArrayInfo:
    """A global array the kernel was given: where it lives and what it holds after the launch."""

    name: str
    address: int
    shape: tuple
    dtype: str
    values: np.ndarray | None = None

    @property
    def itemsize(self):
        return np.dtype(self.dtype).itemsize

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class SharedVar:
    """A ``__shared__`` array of the kernel: byte offset in the block's shared memory and shape."""

    name: str
    offset: int
    nbytes: int
    itemsize: int
    shape: tuple


@dataclass
class Trace:
    """What the sampled threads of one launch did, as plain arrays.

    Threads are numbered in the sample: ``sample_thread = k * threads_per_block + t`` for the k-th
    sampled block (``blocks[k]``, a linear block index) and linear thread ``t`` of the block; sampled
    warps likewise ``k * warps_per_block + w``.

    ``access``: one row per lane of each memory instruction: columns ``event`` (index into
    ``events``), ``thread`` (sample thread), ``phase`` (barriers the thread had passed) and
    ``address`` (byte offset in shared memory, device address in global).
    ``events``: one row per executed memory instruction: ``inst``, ``line``, ``space``, ``kind``,
    ``size`` (SPACES/KINDS codes), and ``text`` (list of PTX texts).
    ``lines``/``executed``: source lines, and a (sample threads x lines) bool matrix.
    ``warp_mask``/``warp_insts``/``thread_insts``: (sample warps x lines) lanes that ran each line
    (bit per lane), warp-level instructions and thread instructions.
    ``reads``/``writes``/``writer``/``reader``: per global array, per element over *all* blocks:
    counts, and the last block that wrote / first block that read it (-1: none).
    """

    kernel: str
    grid: tuple
    block: tuple
    total_blocks: int
    blocks: np.ndarray
    source: list
    arrays: dict
    shared: dict
    events: dict
    access: dict
    lines: np.ndarray
    executed: np.ndarray
    warp_mask: np.ndarray
    warp_insts: np.ndarray
    thread_insts: np.ndarray
    branches: dict            # line -> [warp executions, split warp executions]
    reads: dict
    writes: dict
    writer: dict
    reader: dict
    barriers: int = 0
    cluster: tuple = (1, 1, 1)     # thread block cluster shape (sm_90); (1, 1, 1): none

    @property
    def threads_per_block(self):
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self):
        return -(-self.threads_per_block // 32)

    @property
    def sampled(self):
        return len(self.blocks) < self.total_blocks

    @property
    def note(self):
        """A sentence for the pictures when the launch was sampled (else '')."""
        if not self.sampled:
            return ""
        return (f"Sampled: {len(self.blocks)} of {self.total_blocks:,} blocks were recorded thread by thread "
                f"(blocks {', '.join(map(str, self.blocks[:6]))}{', ...' if len(self.blocks) > 6 else ''}).")

    def source_line(self, line):
        if line is not None and 1 <= line <= len(self.source):
            return self.source[line - 1].strip()
        return ""

    def block_index(self, linear):
        """blockIdx (x, y, z) of a linear block index."""
        gx, gy, _ = self.grid
        return (linear % gx, linear // gx % gy, linear // (gx * gy))

    def thread_index(self, linear):
        """threadIdx (x, y, z) of a linear thread index in its block."""
        bx, by, _ = self.block
        return (linear % bx, linear // bx % by, linear // (bx * by))

    def element(self, address):
        """(array name, flat element index) of a global address, or (None, -1)."""
        for a in self.arrays.values():
            off = int(address) - a.address
            if 0 <= off < a.size * a.itemsize:
                return a.name, off // a.itemsize
        return None, -1

    def shared_element(self, offset):
        """(shared array name, flat element index) of a shared-memory byte offset, or (None, -1)."""
        for v in self.shared.values():
            if v.offset <= offset < v.offset + v.nbytes:
                return v.name, (int(offset) - v.offset) // v.itemsize
        return None, -1

    def lanes(self, thread):
        """Sample threads -> pseudo batch lanes (each sampled block padded to whole warps), so that
        ``lane >> 5`` is a sampled warp, as the analysis functions expect."""
        thread = np.asarray(thread, np.int64)
        return thread // self.threads_per_block * (self.warps_per_block * 32) + thread % self.threads_per_block

    def instructions(self, space):
        """Memory instructions of a space that ran: list of (inst index, line, PTX text), in order."""
        seen = {}
        for e in np.flatnonzero(self.events["space"] == SPACES.index(space)):
            seen.setdefault(int(self.events["inst"][e]), (int(self.events["line"][e]), self.events["text"][e]))
        return [(i, line, text) for i, (line, text) in sorted(seen.items())]

    def pick_instruction(self, space, inst=None, line=None):
        """The instruction index to show: ``inst`` if given, else the first of ``line``, else the first."""
        insts = self.instructions(space)
        if not insts:
            raise ValueError(f"no {space}-memory instruction ran in the recorded threads of {self.kernel}.")
        if inst is not None:
            if inst not in [i for i, _, _ in insts]:
                raise ValueError(f"instruction {inst} is not a {space}-memory instruction that ran; "
                                 f"these did: {', '.join(str(i) for i, _, _ in insts)}.")
            return inst
        if line is not None:
            for i, ln, _ in insts:
                if ln == line:
                    return i
            lines = sorted({ln for _, ln, _ in insts})
            raise ValueError(f"line {line} has no {space}-memory access that ran; lines that do: "
                             f"{', '.join(map(str, lines))}.")
        return insts[0][0]

    def warp_access(self, inst, block=0, warp=0, occurrence=0):
        """One warp's execution of memory instruction ``inst``: (lane ids 0..31, addresses, bytes per
        lane, how many times this warp ran it). ``block`` is a position in ``blocks``."""
        rows = np.flatnonzero(self.events["inst"][self.access["event"]] == inst)
        thread = self.access["thread"][rows]
        tpb = self.threads_per_block
        rows = rows[(thread // tpb == block) & (thread % tpb // 32 == warp)]
        events = np.unique(self.access["event"][rows])
        if len(events) == 0:
            raise ValueError(f"warp {warp} of block {self.blocks[block]} never ran instruction {inst}.")
        e = events[min(occurrence, len(events) - 1)]
        rows = rows[self.access["event"][rows] == e]
        return (self.access["thread"][rows] % tpb % 32, self.access["address"][rows],
                int(self.events["size"][e]), len(events))

    def rows(self, space=None, line=None, kind=None):
        """Boolean mask over ``access`` rows of the given space name / source line / kind name."""
        ev = self.access["event"]
        keep = np.ones(len(self.events["inst"]), bool)
        if space is not None:
            keep &= self.events["space"] == SPACES.index(space)
        if line is not None:
            keep &= self.events["line"] == line
        if kind is not None:
            keep &= self.events["kind"] == KINDS.index(kind)
        return keep[ev]


def sample_blocks(total: int, max_blocks: int) -> np.ndarray:
    """Which blocks to record: all of them, or ``max_blocks`` spread evenly (first and last included)."""
    if total <= max_blocks:
        return np.arange(total)
    return np.unique(np.linspace(0, total - 1, max_blocks).round().astype(np.int64))


class _LineAcc:
    """Per source line, for one batch: which lanes ran it, per-warp masks and counts."""

    def __init__(self, nlanes):
        nwarps = nlanes // 32
        self.executed = np.zeros(nlanes, bool)
        self.mask = np.zeros(nwarps, np.int64)
        self.warp_insts = np.zeros(nwarps, np.int64)
        self.thread_insts = np.zeros(nwarps, np.int64)


class ThreadTrace(Observer):
    """Emulator observer that builds a ``Trace``. ``arrays``: ArrayInfo of the global arguments."""

    def __init__(self, arrays=(), max_blocks: int = 16):
        self.arrays = {a.name: a for a in arrays}
        self.max_blocks = max_blocks
        self.events = {k: [] for k in ("inst", "line", "space", "kind", "size", "text")}
        self.access = {k: [] for k in ("event", "thread", "phase", "address")}
        self.lines: dict = {}      # line -> list of (sample thread ids, sample warp ids, _LineAcc)
        self.branches: dict = {}
        self.reads = {n: np.zeros(a.size, np.int64) for n, a in self.arrays.items()}
        self.writes = {n: np.zeros(a.size, np.int64) for n, a in self.arrays.items()}
        self.writer = {n: np.full(a.size, -1, np.int64) for n, a in self.arrays.items()}
        self.reader = {n: np.full(a.size, -1, np.int64) for n, a in self.arrays.items()}
        self.barriers = 0
        self._acc: dict = {}
        self._batch = None

    # ------------------------------------------------------------------ hooks
    def on_launch_start(self, launch):
        self.grid, self.block = tuple(launch["grid"]), tuple(launch["block"])
        self.cluster = tuple(launch.get("cluster", (1, 1, 1)))
        self.kernel = launch["kernel"]
        self.total_blocks = self.grid[0] * self.grid[1] * self.grid[2]
        self.blocks = sample_blocks(self.total_blocks, self.max_blocks)
        pos = np.full(self.total_blocks, -1, np.int64)
        pos[self.blocks] = np.arange(len(self.blocks))
        self._block_pos = pos

    def on_batch_start(self, batch):
        self._flush()
        self._batch = batch
        n = batch.nblocks * batch.lanes_per_block
        lanes = np.arange(n)
        k = self._block_pos[batch.block_of(lanes)]
        t = batch.thread_of(lanes)
        valid = (k >= 0) & (t < batch.threads_per_block)
        self._keep = valid
        self._sample_thread = np.where(valid, k * batch.threads_per_block + t, -1)
        wpb = batch.lanes_per_block // 32
        self._sample_warp = np.where(k[::32] >= 0, k[::32] * wpb + t[::32] // 32, -1)
        self._phase = np.zeros(n, np.int64)
        self._block_of = batch.block_of(lanes)

    def on_instruction(self, ev):
        lanes = ev.lanes[self._keep[ev.lanes]]
        if len(lanes) == 0:
            return
        acc = self._acc.get(ev.inst.line)
        if acc is None:
            acc = self._acc[ev.inst.line] = _LineAcc(len(self._keep))
        acc.executed[lanes] = True
        warp = lanes >> 5
        starts = np.flatnonzero(np.r_[True, warp[1:] != warp[:-1]])
        w = warp[starts]
        acc.mask[w] |= np.bitwise_or.reduceat(np.left_shift(1, lanes & 31), starts)
        acc.warp_insts[w] += 1
        acc.thread_insts[w] += np.diff(np.r_[starts, len(lanes)])

    def on_memory(self, ev):
        if len(ev.lanes) == 0:
            return
        space = ev.space
        if space == "global" and self.arrays:
            self._count(ev)
        keep = self._keep[ev.lanes]
        if not keep.any():
            return
        lanes = ev.lanes[keep]
        event = len(self.events["inst"])
        for k, v in (("inst", ev.inst.index), ("line", ev.inst.line if ev.inst.line is not None else -1),
                     ("space", SPACES.index(space)), ("kind", KINDS.index(ev.kind)), ("size", ev.size),
                     ("text", ev.inst.text)):
            self.events[k].append(v)
        self.access["event"].append(np.full(len(lanes), event, np.int64))
        self.access["thread"].append(self._sample_thread[lanes])
        self.access["phase"].append(self._phase[lanes])
        self.access["address"].append(np.asarray(ev.addresses, np.uint64).astype(np.int64)[keep])

    def on_branch(self, ev):
        keep = self._keep[ev.lanes]
        if not keep.any():
            return
        b = branch_outcome(ev.lanes[keep], np.asarray(ev.taken)[keep])
        row = self.branches.setdefault(ev.inst.line, [0, 0])
        row[0] += len(b.warps)
        row[1] += int(b.split.sum())

    def on_barrier(self, ev):
        if "warp" in ev.inst.mods:       # __syncwarp is not a block-wide phase boundary
            return
        self._phase[ev.lanes] += 1
        self.barriers = max(self.barriers, int(self._phase.max(initial=0)))

    def on_launch_end(self, launch):
        self._flush()

    # ------------------------------------------------------------------ helpers
    def _count(self, ev):
        addresses = np.asarray(ev.addresses, np.uint64).astype(np.int64)
        for name, a in self.arrays.items():
            off = addresses - a.address
            inside = (off >= 0) & (off < a.size * a.itemsize)
            if not inside.any():
                continue
            per = max(1, ev.size // a.itemsize)
            elem = (off[inside] // a.itemsize)[:, None] + np.arange(per)
            block = np.broadcast_to(self._block_of[ev.lanes[inside]][:, None], elem.shape)
            ok = elem < a.size
            elem, block = elem[ok], block[ok]
            if ev.kind != "st":
                np.add.at(self.reads[name], elem, 1)
                unread = self.reader[name][elem] < 0
                self.reader[name][elem[unread]] = block[unread]
            if ev.kind != "ld":
                np.add.at(self.writes[name], elem, 1)
                self.writer[name][elem] = block

    def _flush(self):
        """Move the finished batch's per-line accumulators into sample-numbered lists."""
        if self._batch is None:
            return
        threads = self._sample_thread
        warps = self._sample_warp
        for line, acc in self._acc.items():
            t = np.flatnonzero(acc.executed)
            w = np.flatnonzero(acc.warp_insts)
            self.lines.setdefault(line, []).append(
                (threads[t], warps[w], acc.mask[w], acc.warp_insts[w], acc.thread_insts[w]))
        self._acc = {}

    def result(self, source="", shared=None) -> Trace:
        """The Trace of the launch (call after it ended)."""
        nthreads = len(self.blocks) * self.block[0] * self.block[1] * self.block[2]
        wpb = -(-(self.block[0] * self.block[1] * self.block[2]) // 32)
        nwarps = len(self.blocks) * wpb
        lines = np.array(sorted(line for line in self.lines if line is not None), np.int64)
        col = {int(line): i for i, line in enumerate(lines)}
        executed = np.zeros((nthreads, len(lines)), bool)
        mask = np.zeros((nwarps, len(lines)), np.int64)
        winsts = np.zeros((nwarps, len(lines)), np.int64)
        tinsts = np.zeros((nwarps, len(lines)), np.int64)
        for line, parts in self.lines.items():
            if line is None:
                continue
            c = col[line]
            for t, w, m, wi, ti in parts:
                executed[t, c] = True
                mask[w, c] |= m
                winsts[w, c] += wi
                tinsts[w, c] += ti
        ev = {k: (np.array(v, np.int64) if k != "text" else list(v)) for k, v in self.events.items()}
        acc = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in self.access.items()}
        return Trace(self.kernel, self.grid, self.block, self.total_blocks, self.blocks,
                     source.splitlines(), self.arrays, shared or {}, ev, acc, lines, executed, mask, winsts,
                     tinsts, {k: tuple(v) for k, v in self.branches.items() if k is not None},
                     self.reads, self.writes, self.writer, self.reader, self.barriers,
                     getattr(self, "cluster", (1, 1, 1)))


# ---------------------------------------------------------------------- launching with a trace
def parameter_names(source: str, kernel: str, count: int) -> list:
    """The kernel's parameter names as written in the source (``arg0``... where they can't be found)."""
    base = re.escape(kernel.split("<")[0])
    m = (re.search(rf"__global__[^;{{]*?\b{base}\s*\(([^)]*)\)", source or "")
         or re.search(rf"^\s*def\s+{base}\s*\(([^)]*)\)", source or "", re.M))      # a Python kernel
    names = []
    if m:
        for p in m.group(1).split(","):
            words = re.findall(r"[A-Za-z_]\w*", p.split("=")[0])
            if words:
                names.append(words[-1])
    if len(names) != count:
        names = [f"arg{k}" for k in range(count)]
    return names


def _demangle_shared(name: str) -> str:
    """``_ZZ6matmulPKfS0_PfiE2As`` -> ``As`` (a function-local static), else the name itself."""
    m = re.search(r"E(\d+)(\w+)$", name)
    if name.startswith("_ZZ") and m and len(m.group(2)) >= int(m.group(1)):
        return m.group(2)[:int(m.group(1))]
    return name


def _defines(source):
    consts = {}
    for m in re.finditer(r"#define\s+(\w+)\s+([^\n]+)", source):
        consts[m.group(1)] = m.group(2).strip()
    for m in re.finditer(r"(?:constexpr|const)\s+(?:int|unsigned|size_t|auto)\s+(\w+)\s*=\s*([^;]+);", source):
        consts[m.group(1)] = m.group(2).strip()
    return consts


def _eval_dim(expr, consts, depth=0):
    for name, val in consts.items():
        expr = re.sub(rf"\b{name}\b", f"({val})", expr)
    if not re.fullmatch(r"[\d\s()+\-*/%]+", expr):
        return None
    try:
        return int(eval(expr.replace("/", "//"), {"__builtins__": {}}))   # digits and operators only
    except (SyntaxError, ZeroDivisionError):
        return None


def _python_shared(kernel, source: str) -> dict:
    """A Python kernel's ``_cudapy_smem_<n>`` -> (name, shape, dtype) from its cuda.shared.array lines."""
    if getattr(kernel, "source_language", "cuda") != "python":
        return {}
    from ..pykernels.source import shared_arrays
    mangled = sorted((v for v in kernel.module.ptx_module.variables if v.startswith("_cudapy_smem_")),
                     key=lambda v: int(v.rsplit("_", 1)[1]))
    declared = shared_arrays(source, kernel.name)
    if len(declared) != len(mangled):
        return {}
    return {m: (d[0] or m, d[1], d[2]) for m, d in zip(mangled, declared)}


def shared_vars(kernel, source: str) -> dict:
    """The kernel's ``__shared__`` arrays with offsets from the emulator's layout and shapes from the source."""
    from ..emulator.engine import shared_layout
    from ..runtime import device as devices
    prog = kernel.module.program(devices.current())
    layout, _, _ = shared_layout(prog, prog.function(kernel.mangled), 0)
    consts = _defines(source)
    out = {}
    python = _python_shared(kernel, source)
    for mangled, offset in layout.items():
        var = kernel.module.ptx_module.variables[mangled]
        if mangled in python:
            name, shape, dtype = python[mangled]
            itemsize = dtype.itemsize if dtype is not None else 4
            if shape is None or int(np.prod(shape)) * itemsize != var.size:
                shape = (max(var.size // itemsize, 1),)
            out[name] = SharedVar(name, offset, var.size, itemsize, tuple(shape))
            continue
        name = _demangle_shared(mangled)
        m = re.search(rf"__shared__\s+(?:[\w:]+\s+)*?([\w:]+)\s+{re.escape(name)}\s*((?:\[[^\]]*\]\s*)+)", source)
        itemsize, shape = 4, None
        if m:
            itemsize = _ITEMSIZE.get(m.group(1).split("::")[-1], 4)
            dims = [_eval_dim(d, consts) for d in re.findall(r"\[([^\]]*)\]", m.group(2))]
            if all(dims) and int(np.prod(dims)) * itemsize == var.size:
                shape = tuple(dims)
        out[name] = SharedVar(name, offset, var.size, itemsize, shape or (max(var.size // itemsize, 1),))
    return out


def trace(kernel, grid, block, args=(), shared: int = 0, max_blocks: int = 16, shapes=None, cluster=None):
    """Launch ``kernel`` on the emulator recording what each thread does; returns its LaunchRecord
    with ``rec.reports["threads"]`` (a Trace) and ``rec.reports["lines"]`` (per-line metrics).

    Numpy arrays are copied to the device and back as a plain launch does. ``shapes`` gives an array
    argument the shape the pictures use (by parameter name), e.g. ``{"A": (64, 64)}`` when the kernel
    gets flat pointers. ``cluster=(x, y, z)`` launches thread block clusters (compute capability 9.0).
    """
    from ..analysis.metrics import MetricsObserver
    from ..runtime import device as devices
    from ..runtime.arrays import DeviceArray, to_device
    if devices.current().kind != "emu":
        raise RuntimeError("cudalab.widgets.trace runs on the emulator; call cudalab.use('emu') first "
                           "(a real GPU cannot tell us what each thread did).")
    from ..runtime.module import specialized
    kernel = specialized(kernel, args)
    source = kernel.module.source
    names = parameter_names(source, kernel.name, len(args))
    shapes = shapes or {}
    dev_args, infos, copies = [], [], []
    for name, a in zip(names, args):
        if isinstance(a, np.ndarray) and a.ndim > 0:
            d = to_device(a)
            copies.append((a, d))
            a = d
        if isinstance(a, DeviceArray):
            infos.append(ArrayInfo(name, a.device_ptr, tuple(shapes.get(name, a.shape)), str(a.dtype)))
        dev_args.append(a)
    tracer = ThreadTrace(infos, max_blocks=max_blocks)
    metrics = MetricsObserver(source)
    try:
        rec = kernel.launch(grid, block, tuple(dev_args), shared=shared, observers=[tracer, metrics], cluster=cluster)
    finally:
        for host, d in copies:
            if host.flags.writeable:
                host[...] = d.copy_to_host()
    by_name = {info.name: info for info in infos}
    for name, a in zip(names, dev_args):
        if name in by_name:
            by_name[name].values = a.copy_to_host().reshape(by_name[name].shape)
    for _, d in copies:
        d.free()
    rec.reports["threads"] = tracer.result(source, shared_vars(kernel, source))
    rec.reports["lines"] = metrics.per_line()
    rec.reports["instructions"] = metrics.per_instruction()
    return rec
