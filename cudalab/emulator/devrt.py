"""Dynamic parallelism: kernels that launch kernels (CUDA's device runtime, CDP2 semantics).

Compiled with ``-rdc=true``, a ``kernel<<<g, b, s, stream>>>(args)`` in device code becomes calls
to the device runtime: ``__cudaCDP2GetParameterBufferV2(func, grid, block, shmem)`` hands out a
parameter buffer, the thread stores the arguments into it, and ``__cudaCDP2LaunchDeviceV2(buffer,
stream)`` launches. The other device-side runtime calls (``cudaStreamCreateWithFlags``,
``cudaGetLastError``, ``cudaMalloc``, ``cudaMemcpyAsync``, events, ...) are ``__cudaCDP2*`` calls
too. This module implements them for the emulator.

Semantics (CUDA Programming Guide, "CUDA Dynamic Parallelism", CDP2 since CUDA 12):

* A child grid may start any time after its launch and the parent cannot wait for it: device-side
  ``cudaDeviceSynchronize()`` is gone. So the emulator queues a grid's device-side work while the
  grid runs and runs it, in launch order, once the grid's last block has finished; work queued into
  ``cudaStreamTailLaunch`` runs after all of it (a tail launch starts when its parent and all the
  parent's other work are done). A grid is complete only when all its children are, so the host's
  launch returns after the whole tree has run, and ``printf`` output of every grid is in order.
* Every thread has its own last error (``cudaGetLastError``/``cudaPeekAtLastError``).
* Limits: at most ``cudaLimitDevRuntimePendingLaunchCount`` (2048 unless changed) launches may wait
  to start (``cudaErrorLaunchPendingCountExceeded``; an H100 ran 2051-2053 of 4096 children launched
  by one grid, as some start before their parent ends, the emulator exactly 2048); grids nest 256
  deep (``cudaErrorLaunchMaxDepthExceeded`` beyond; the H100 allowed at least that many, not the 24
  of the Programming Guide); a bad launch shape gives ``cudaErrorInvalidConfiguration``. The failed
  launch's parameter buffer is NULL, so the compiled code skips the launch, as on the GPU.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np

from ..errors import KernelError
from .launchtree import TimeUp, Tree
from .memory import GLOBAL_BASE

# The Programming Guide names 24 levels, but an H100 (CDP2, driver 580) ran 256 nested grids without an
# error (tools/cluster_cdp_gpu.py): the emulator allows as many and answers
# cudaErrorLaunchMaxDepthExceeded beyond.
MAX_DEPTH = 256
DEFAULT_PENDING = 2048            # cudaLimitDevRuntimePendingLaunchCount's default (runtime/core/properties.py)

# cudaError_t values the device runtime returns
SUCCESS, INVALID_VALUE, MEMORY_ALLOCATION, INVALID_CONFIGURATION = 0, 1, 2, 9
INVALID_DEVICE_FUNCTION, INVALID_RESOURCE_HANDLE, NOT_SUPPORTED = 98, 400, 801
MAX_DEPTH_EXCEEDED, PENDING_COUNT_EXCEEDED = 65, 69

# the special streams of device code (cuda_device_runtime_api.h)
STREAM_NULL, STREAM_LEGACY, STREAM_PER_THREAD, STREAM_TAIL, STREAM_FIRE_AND_FORGET = 0, 1, 2, 3, 4
STREAM_BASE = 0x5000_0000         # handles of streams created in device code
EVENT_BASE = 0x6000_0000


def readable(mangled: str) -> str:
    """A kernel's C++ name from its mangled one, good enough for messages (``cdp_kernel``)."""
    m = re.match(r"_Z(\d+)", mangled)
    if m:
        n = int(m.group(1))
        return mangled[m.end():m.end() + n]
    m = re.match(r"_ZN((?:\d+\w+?)+)E", mangled)
    if m:
        parts, rest = [], m.group(1)
        while rest:
            k = re.match(r"(\d+)", rest)
            if not k:
                break
            n = int(k.group(1))
            parts.append(rest[k.end():k.end() + n])
            rest = rest[k.end() + n:]
        return "::".join(parts) if parts else mangled
    return mangled


def extern_call_reason(fname: str) -> str:
    """Why a call to an external function cannot run, for the UnsupportedError."""
    if fname in ("cudaDeviceSynchronize", "__cudaDeviceSynchronizeDeprecationAvoidance"):
        return ("cudaDeviceSynchronize() in device code (removed in CUDA 12: a parent grid cannot wait for its "
                "children; launch the work that needs their results into cudaStreamTailLaunch instead)")
    if fname.startswith("__cudaCDP2") or fname.startswith("cuda"):
        return f"the device runtime function {fname}"
    return f"a call to the external function {fname} (is it defined in another file? link it with -rdc=true)"


@dataclass
class Work:
    """One queued piece of device-side work."""

    kind: str                     # "launch", "copy" or "set"
    stream: int
    order: int
    func: str = ""
    grid: tuple = (1, 1, 1)
    block: tuple = (1, 1, 1)
    shared: int = 0
    params: bytes = b""
    args: tuple = ()              # copy: (dst, src, n); set: (dst, value, n)
    launcher: str = ""            # "thread (x,y,z) of block (x,y,z)" for messages


@dataclass
class _Buffer:
    func: str
    grid: tuple
    block: tuple
    shared: int
    size: int


class GridState:
    """The device-side work one grid has queued, and where the grid sits in the launch tree."""

    def __init__(self, program, stats, parent, kernel_name, timeout, observers, checks, wall_deadline=float("inf"),
                 pace=None):
        self.program, self.stats, self.parent = program, stats, parent
        self.kernel_name = kernel_name
        self.depth = parent.depth + 1 if parent is not None else 0
        self.root = parent.root if parent is not None else self
        self.checks = checks
        self.work: list = []
        self.buffers: dict = {}               # parameter buffer address -> _Buffer
        self.freed_later: list = []           # device-heap blocks freed while this grid's launches waited
        if parent is None:
            self.pending = 0                  # launches queued and not yet started (whole tree)
            # (the launch's clock, just read: pace.start; each read is a system call)
            self.deadline = (time.thread_time() if pace is None else pace.start) + timeout
            self.timeout = timeout
            self.wall_deadline = wall_deadline      # a whole program's time limit (time.monotonic())
            self.streams: set = set()
            self.events: set = set()
            self.pace = pace                    # the host launch's clock (pace.py)
            self.tree = None                    # its launch tree's progress and forecast, once it launches

    # ---------------------------------------------------------------- running the queue
    def finish(self):
        """Run what this grid queued: everything in launch order, then its tail launches; then free
        the device-heap blocks it freed meanwhile (``free_heap``). (One frame per level of the launch
        tree: 256 levels must fit Python's recursion limit.)"""
        if self.parent is None and self.work:
            self.tree = Tree(self.kernel_name, self.pace)
        if self.root.tree is not None:
            self.root.tree.grid_ran(self.depth, sum(w.kind == "launch" for w in self.work))
        if not self.work:
            return
        try:
            # measured on an H100: a device-side cudaMemsetAsync in the NULL stream was not seen by a child
            # grid and a cudaMemcpyAsync queued after it (tests/kernels sm90/cdp_device_memory_ops); memsets
            # therefore run after the grid's other work
            work = sorted(self.work, key=lambda w: (w.kind == "set", w.stream == STREAM_TAIL, w.order))
            self.work = []
            for w in work:
                if w.kind == "launch":
                    self.root.pending -= 1
                    self._run_child(w)
                elif w.kind == "copy":
                    dst, src, n = w.args
                    data = self.program.memory.data
                    data[dst - GLOBAL_BASE:dst - GLOBAL_BASE + n] = data[src - GLOBAL_BASE:src - GLOBAL_BASE + n]
                elif w.kind == "set":
                    dst, value, n = w.args
                    self.program.memory.data[dst - GLOBAL_BASE:dst - GLOBAL_BASE + n] = value & 0xFF
        finally:
            freed, self.freed_later = self.freed_later, []
            for addr in freed:
                self.program.memory.free(addr)

    def free_heap(self, addr: int):
        """Free a block of the device heap (device-side cudaFree or free()). A GPU's device heap stays
        mapped after a free, so a grid this one launched and that has not run yet still reads the
        block's bytes (a parent that frees its child's buffer right after the launch, as CDP1 code
        ported without its cudaDeviceSynchronize does, works on an H200): while launches wait, the block
        is freed once they have run. A second free is refused either way (``heap_freed``)."""
        if self.work:
            self.freed_later.append(int(addr))
        else:
            self.program.memory.free(int(addr))

    def heap_freed(self, addr: int) -> bool:
        """Whether ``addr`` was freed already and waits for the launches queued before its free."""
        state = self
        while state is not None:
            if int(addr) in state.freed_later:
                return True
            state = state.parent
        return False

    def _run_child(self, w: Work):
        from .engine import _launch as launch   # nested in a launch that handles a stop: no extra frame a level (256 levels)
        name = readable(w.func)
        root = self.root
        left = root.deadline - time.thread_time()
        where = (f"before {name} (launched by {w.launcher} of {self.kernel_name}, nesting depth {self.depth + 1}) "
                 "could start")
        try:
            if left <= 0:            # the watchdog covers the whole tree of grids, not each grid alone
                raise TimeUp()
            root.tree.child_starts(self.stats, root.timeout, root.wall_deadline)   # progress; a tree far too big stops
        except TimeUp:
            raise root.tree.timed_out(self.stats, root.timeout, root.deadline, where) from None
        started = self.stats.instructions
        entry = dict(kernel=name, grid=w.grid, block=w.block, shared=w.shared, depth=self.depth + 1,
                     parent=self.kernel_name, instructions=0,
                     stream={STREAM_TAIL: "tail", STREAM_FIRE_AND_FORGET: "fire-and-forget"}.get(
                         w.stream, "null" if w.stream in (STREAM_NULL, STREAM_PER_THREAD) else "stream"))
        self.stats.device_launches.append(entry)
        try:
            launch(self.program, w.func, w.grid, w.block, w.shared, w.params, observers=(), timeout=left,
                   kernel_name=name, checks=self.checks, wall_deadline=self.root.wall_deadline, _device_launch=self)
        except KernelError as e:
            note = (f"\n(The grid of {name} was launched from the device by {w.launcher} of kernel "
                    f"{self.kernel_name}, at nesting depth {self.depth + 1}.)")
            time_up = time.thread_time() > root.deadline or (root.pace is not None and
                                                             root.pace.wall_deadline < time.monotonic())
            if e.code == "cudaErrorLaunchTimeout" and time_up and not getattr(e, "tree", False):
                # the tree's time ran out while the child ran: the watchdog's (or time limit's) error is the tree's
                # (a child grid stopped early for its own size keeps its own message)
                err = root.tree.timed_out(self.stats, root.timeout, root.deadline,
                                          f"while {name} ran (nesting depth {self.depth + 1})")
                err.args = (f"{err.args[0]}\n(Where that grid was: {e.args[0]})",) + err.args[1:]
                raise err from None
            if note not in str(e.args[0]) and not getattr(e, "tree", False):
                e.args = (e.args[0] + note,) + e.args[1:]
            raise
        entry["instructions"] = self.stats.instructions - started     # its own and its descendants'


# ------------------------------------------------------------------ helpers for the handlers

def _state(ex) -> GridState:
    return ex.grid_state


def _errors(ex):
    e = getattr(ex, "_devrt_error", None)
    if e is None:
        e = ex._devrt_error = np.zeros(ex.n, np.int32)
    return e


def _arg(ex, name, sel, dt=np.uint64, offset=0, count=1):
    buf = ex.fr.param_buffer(name)
    size = np.dtype(dt).itemsize
    raw = np.ascontiguousarray(buf[sel, offset:offset + size * count])
    return raw.view(dt).reshape(sel.size, count) if count > 1 else raw.view(dt)[:, 0]


def _ret(ex, rets, sel, values, dt=np.int32):
    if not rets:
        return
    buf = ex.fr.param_buffer(rets[0])
    v = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dt), (sel.size,)))
    buf[sel, 0:np.dtype(dt).itemsize] = v.view(np.uint8).reshape(sel.size, -1)


def _store(ex, inst, addrs, sel, values, dt):
    """Store one value per lane at generic addresses (a cudaStream_t* or void** out-parameter)."""
    from .memops import resolve, scatter
    dt = np.dtype(dt)
    values = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dt), (sel.size,)))
    for sp, buf, off, pos in resolve(ex, inst, "generic", np.asarray(addrs, np.uint64), sel, dt.itemsize, "st"):
        scatter(buf, off, dt, values if isinstance(pos, slice) else values[pos])


def _where(ex, lane):
    b, t = ex.where(int(lane))
    return f"thread ({t[0]},{t[1]},{t[2]}) of block ({b[0]},{b[1]},{b[2]})"


def _set_error(ex, sel, codes):
    err = _errors(ex)
    codes = np.broadcast_to(np.asarray(codes, np.int32), (sel.size,))
    failed = codes != SUCCESS
    err[sel[failed]] = codes[failed]
    return codes


# ------------------------------------------------------------------ the device runtime functions

def _param_buffer_v2(ex, inst, rets, args):
    """__cudaCDP2GetParameterBufferV2(func, grid, block, shmem) -> void* (NULL when the launch
    cannot happen; the thread's last error says why)."""
    sel = ex.idx
    st = _state(ex)
    funcs = _arg(ex, args[0], sel)
    grids = _arg(ex, args[1], sel, np.uint32, count=3)
    blocks = _arg(ex, args[2], sel, np.uint32, count=3)
    shmem = _arg(ex, args[3], sel, np.uint32)
    out = np.zeros(sel.size, np.uint64)
    codes = np.zeros(sel.size, np.int32)
    for k in range(sel.size):
        out[k], codes[k] = _new_buffer(ex, st, int(funcs[k]), tuple(int(x) for x in grids[k]),
                                       tuple(int(x) for x in blocks[k]), int(shmem[k]))
    _set_error(ex, sel, codes)
    _ret(ex, rets, sel, out, np.uint64)


def _shape_fits(attributes: dict, grid, block) -> bool:
    """A device-side launch's shape within the device's limits: cudaDevAttrMaxThreadsPerBlock (1),
    MaxBlockDimX..Z (2-4), MaxGridDimX..Z (5-7); a Program the runtime did not bind checks only for zeros."""
    most = [attributes.get(a) for a in range(1, 8)]
    shape = (block[0] * block[1] * block[2], *block, *grid)
    return min(grid + block) >= 1 and all(m is None or v <= m for v, m in zip(shape, most))


def _new_buffer(ex, st, func_addr, grid, block, shared):
    name = ex.program.func_at.get(func_addr)
    if name is None or name not in ex.program.module.functions or not ex.program.module.functions[name].is_entry:
        return 0, INVALID_DEVICE_FUNCTION
    if st.depth + 1 >= MAX_DEPTH:
        return 0, MAX_DEPTH_EXCEEDED
    if not _shape_fits(ex.program.device_attributes, grid, block):
        return 0, INVALID_CONFIGURATION
    if st.root.pending >= ex.program.device_limits.get(4, DEFAULT_PENDING):
        return 0, PENDING_COUNT_EXCEEDED
    df = ex.program.function(name)
    size = max([df.param_offsets[p.name] + p.size for p in df.func.params] or [0])
    addr = ex.mem.alloc(max(size, 8), label="device launch parameters")
    st.buffers[addr] = _Buffer(name, grid, block, shared, size)
    st.root.pending += 1          # a launch slot is taken when its parameter buffer is handed out
    return addr, SUCCESS


def _param_buffer_v1(ex, inst, rets, args):
    """__cudaCDP2GetParameterBuffer(alignment, size): a buffer the later LaunchDevice names."""
    sel = ex.idx
    sizes = _arg(ex, args[1], sel)
    out = np.array([ex.mem.alloc(max(int(s), 8), label="device launch parameters") for s in sizes.tolist()], np.uint64)
    _ret(ex, rets, sel, out, np.uint64)


def _launch_v2(ex, inst, rets, args):
    """__cudaCDP2LaunchDeviceV2(buffer, stream) -> cudaError_t."""
    sel = ex.idx
    bufs = _arg(ex, args[0], sel)
    streams = _arg(ex, args[1], sel)
    codes = np.array([_enqueue(ex, inst, int(lane), int(b), int(s), None)
                      for lane, b, s in zip(sel.tolist(), bufs.tolist(), streams.tolist())], np.int32)
    _ret(ex, rets, sel, _set_error(ex, sel, codes))


def _launch_v1(ex, inst, rets, args):
    """__cudaCDP2LaunchDevice(func, buffer, grid, block, shmem, stream) -> cudaError_t."""
    sel = ex.idx
    st = _state(ex)
    funcs, bufs = _arg(ex, args[0], sel), _arg(ex, args[1], sel)
    grids = _arg(ex, args[2], sel, np.uint32, count=3)
    blocks = _arg(ex, args[3], sel, np.uint32, count=3)
    shmem, streams = _arg(ex, args[4], sel, np.uint32), _arg(ex, args[5], sel)
    codes = []
    for k, lane in enumerate(sel.tolist()):
        addr, code = _new_buffer(ex, st, int(funcs[k]), tuple(int(x) for x in grids[k]),
                                 tuple(int(x) for x in blocks[k]), int(shmem[k]))
        if code:
            codes.append(code)
            continue
        ex.mem.data[addr - GLOBAL_BASE:addr - GLOBAL_BASE + st.buffers[addr].size] = \
            ex.mem.data[int(bufs[k]) - GLOBAL_BASE:int(bufs[k]) - GLOBAL_BASE + st.buffers[addr].size]
        codes.append(_enqueue(ex, inst, lane, addr, int(streams[k]), None))
    _ret(ex, rets, sel, _set_error(ex, sel, np.array(codes, np.int32)))


def _known_stream(st, s):
    return s in (STREAM_NULL, STREAM_PER_THREAD, STREAM_TAIL, STREAM_FIRE_AND_FORGET) or s in st.root.streams


def _enqueue(ex, inst, lane, addr, stream, _):
    st = _state(ex)
    b = st.buffers.pop(addr, None)
    if b is None:
        return INVALID_VALUE
    if not _known_stream(st, stream):
        ex.mem.free(addr)
        st.root.pending -= 1
        return INVALID_RESOURCE_HANDLE
    params = ex.mem.data[addr - GLOBAL_BASE:addr - GLOBAL_BASE + b.size].tobytes()
    ex.mem.free(addr)
    st.work.append(Work("launch", stream, len(st.work), b.func, b.grid, b.block, b.shared, params,
                        launcher=_where(ex, lane)))
    return SUCCESS


def _stream_create(ex, inst, rets, args):
    """__cudaCDP2StreamCreateWithFlags(cudaStream_t*, flags): a new (non-blocking) device stream."""
    sel = ex.idx
    st = _state(ex)
    ptrs = _arg(ex, args[0], sel)
    handles = np.zeros(sel.size, np.uint64)
    codes = np.zeros(sel.size, np.int32)
    for k in range(sel.size):
        # the Programming Guide asks for cudaStreamNonBlocking, but an H100 also accepts
        # cudaStreamDefault (measured: cudaSuccess, tests/kernels sm90/cdp_launch_errors)
        h = STREAM_BASE + len(st.root.streams) + 1
        st.root.streams.add(h)
        handles[k] = h
    ok = codes == SUCCESS
    if ok.any():
        _store(ex, inst, ptrs[ok], sel[ok], handles[ok], np.uint64)
    _ret(ex, rets, sel, _set_error(ex, sel, codes))


def _stream_destroy(ex, inst, rets, args):
    sel = ex.idx
    st = _state(ex)
    hs = _arg(ex, args[0], sel)
    codes = np.array([SUCCESS if int(h) in st.root.streams else INVALID_RESOURCE_HANDLE for h in hs.tolist()], np.int32)
    _ret(ex, rets, sel, _set_error(ex, sel, codes))


def _event_create(ex, inst, rets, args):
    sel = ex.idx
    st = _state(ex)
    ptrs = _arg(ex, args[0], sel)
    handles = np.array([EVENT_BASE + len(st.root.events) + k + 1 for k in range(sel.size)], np.uint64)
    st.root.events.update(int(h) for h in handles)
    _store(ex, inst, ptrs, sel, handles, np.uint64)
    _ret(ex, rets, sel, SUCCESS)


def _success(ex, inst, rets, args):
    """Event record/wait/destroy: ordering the emulator's sequential queue already gives."""
    _ret(ex, rets, ex.idx, SUCCESS)


def _get_last_error(ex, inst, rets, args):
    sel = ex.idx
    err = _errors(ex)
    _ret(ex, rets, sel, err[sel])
    err[sel] = 0


def _peek_last_error(ex, inst, rets, args):
    _ret(ex, rets, ex.idx, _errors(ex)[ex.idx])


def _answers(value: int):
    """A device runtime call that stores one fixed int: the device (0), the device count (1), the
    runtime version (13000, CUDA 13.0)."""
    def handler(ex, inst, rets, args):
        sel = ex.idx
        _store(ex, inst, _arg(ex, args[0], sel), sel, value, np.int32)
        _ret(ex, rets, sel, SUCCESS)
    return handler


def _device_attribute(ex, inst, rets, args):
    """cudaDeviceGetAttribute in device code: the device's answers are the host's (Program.device_attributes),
    and a number the host does not know is cudaErrorInvalidValue here too."""
    sel = ex.idx
    ptrs = _arg(ex, args[0], sel)
    attrs = _arg(ex, args[1], sel, np.int32).tolist()
    table = ex.program.device_attributes
    vals = np.array([table.get(int(a), 0) for a in attrs], np.int64).astype(np.int32)
    _store(ex, inst, ptrs, sel, vals, np.int32)
    codes = np.array([SUCCESS if int(a) in table else INVALID_VALUE for a in attrs], np.int32)
    _ret(ex, rets, sel, _set_error(ex, sel, codes))


def _device_limit(ex, inst, rets, args):
    sel = ex.idx
    ptrs = _arg(ex, args[0], sel)
    limits = _arg(ex, args[1], sel, np.int32)
    table = ex.program.device_limits          # the host's cudaDeviceGetLimit values (cudaLimit -> value)
    _store(ex, inst, ptrs, sel, np.array([table.get(int(x), 0) for x in limits.tolist()], np.uint64), np.uint64)
    _ret(ex, rets, sel, SUCCESS)


DEFAULT_HEAP = 8 << 20             # cudaLimitMallocHeapSize's default (runtime/core/properties.py)
HEAP_LABEL = "device malloc"


def heap_alloc(ex, sizes, zero_is_null=True) -> np.ndarray:
    """Blocks of the device heap for malloc() and a kernel's cudaMalloc, one per size; 0 (NULL) where
    the block would take the heap's live bytes past cudaLimitMallocHeapSize (8 MiB unless the host
    raised it with cudaDeviceSetLimit before the launch), as a GPU answers a heap that is used up:
    malloc(16 << 20) in a kernel is NULL until the host asks for a bigger heap (an H200, in
    tests/kernels/guide.py). A size of 0 gives NULL with ``zero_is_null``; malloc(0) gives a pointer
    on the H200, so malloc passes False."""
    limit = int(ex.program.device_limits.get(2, DEFAULT_HEAP))
    live = sum(a.size for a in ex.mem.allocs.values() if a.label == HEAP_LABEL and not a.freed)
    out = []
    for s in (int(x) for x in sizes):
        if s == 0 and zero_is_null or live + s > limit:
            out.append(0)
            continue
        out.append(ex.mem.alloc(s, label=HEAP_LABEL))
        live += s
    return np.array(out, np.uint64)


def _malloc(ex, inst, rets, args):
    sel = ex.idx
    ptrs, sizes = _arg(ex, args[0], sel), _arg(ex, args[1], sel)
    got = heap_alloc(ex, sizes.tolist())
    _store(ex, inst, ptrs, sel, got, np.uint64)
    codes = np.where((got == 0) & (np.asarray(sizes) != 0), MEMORY_ALLOCATION, SUCCESS).astype(np.int32)
    _ret(ex, rets, sel, _set_error(ex, sel, codes))


def _free(ex, inst, rets, args):
    sel = ex.idx
    codes = []
    for p in _arg(ex, args[0], sel).tolist():
        a = ex.mem.allocs.get(int(p))
        if p == 0:
            codes.append(SUCCESS)
        elif a is None or a.freed or a.label != "device malloc" or _state(ex).heap_freed(p):
            codes.append(INVALID_VALUE)
        else:
            _state(ex).free_heap(int(p))
            codes.append(SUCCESS)
    _ret(ex, rets, sel, _set_error(ex, sel, np.array(codes, np.int32)))


def _memcpy_async(ex, inst, rets, args):
    """cudaMemcpyAsync(dst, src, n, kind, stream): queued in stream order, like a launch."""
    sel = ex.idx
    st = _state(ex)
    dst, src, n = _arg(ex, args[0], sel), _arg(ex, args[1], sel), _arg(ex, args[2], sel)
    streams = _arg(ex, args[4], sel)
    codes = []
    for k in range(sel.size):
        d, s, c = int(dst[k]), int(src[k]), int(n[k])
        ok = c == 0 or bool(ex.mem.valid(np.array([d, s], np.uint64), c).all())
        if not ok or not _known_stream(st, int(streams[k])):
            codes.append(INVALID_VALUE)
            continue
        st.work.append(Work("copy", int(streams[k]), len(st.work), args=(d, s, c)))
        codes.append(SUCCESS)
    _ret(ex, rets, sel, _set_error(ex, sel, np.array(codes, np.int32)))


def _memset_async(ex, inst, rets, args):
    sel = ex.idx
    st = _state(ex)
    dst, val, n = _arg(ex, args[0], sel), _arg(ex, args[1], sel, np.int32), _arg(ex, args[2], sel)
    streams = _arg(ex, args[3], sel)
    codes = []
    for k in range(sel.size):
        d, c = int(dst[k]), int(n[k])
        if (c and not bool(ex.mem.valid(np.array([d], np.uint64), c).all())) or not _known_stream(st, int(streams[k])):
            codes.append(INVALID_VALUE)
            continue
        st.work.append(Work("set", int(streams[k]), len(st.work), args=(d, int(val[k]), c)))
        codes.append(SUCCESS)
    _ret(ex, rets, sel, _set_error(ex, sel, np.array(codes, np.int32)))


def _error_text(name_not_string):
    def handler(ex, inst, rets, args):
        from ..runtime.core.errors import ERRORS
        sel = ex.idx
        codes = _arg(ex, args[0], sel, np.int32)
        table = getattr(ex.program, "_devrt_strings", None)
        if table is None:
            table = ex.program._devrt_strings = {}
        out = []
        for c in codes.tolist():
            key = (c, name_not_string)
            if key not in table:
                row = next((r for r in ERRORS if r[0] == c), (c, "cudaErrorUnknown", "unknown error"))
                text = (row[1] if name_not_string else row[2]).encode() + b"\0"
                addr = ex.mem.alloc(len(text), label="device runtime string")
                ex.mem.write(addr, text)
                table[key] = addr
            out.append(table[key])
        _ret(ex, rets, sel, np.array(out, np.uint64), np.uint64)
    return handler


GRID_HANDLE = "cudaCGGetIntrinsicHandle"


def _cg_grid_handle(ex, inst, rets, args):
    """cudaCGGetIntrinsicHandle(scope): the grid-sync workspace of a cooperative launch (numba.cuda's
    ``cg.this_grid()`` calls it; C++'s grid_group reads the same handle from %envreg1/2)."""
    _ret(ex, rets, ex.idx, ex.grid_workspace, np.uint64)


def _cg_synchronize(ex, inst, rets, args):
    """cudaCGSynchronize(handle, flags): ``grid.sync()``. A kernel that asks for the handle runs all its
    blocks in one batch, in lock step (engine.uses_grid_sync), so every store before the call is done
    before any load after it; what is left is synccheck: every live thread of the grid must be here."""
    from .events import BarrierEvent
    if ex.observers:
        ex.emit(BarrierEvent(inst, ex.idx, ex.batch))
    ex.check_barrier(inst, grid=True)
    _ret(ex, rets, ex.idx, SUCCESS)


HANDLERS = {
    GRID_HANDLE: _cg_grid_handle,
    "cudaCGSynchronize": _cg_synchronize,
    "__cudaCDP2GetParameterBufferV2": _param_buffer_v2,
    "__cudaCDP2GetParameterBuffer": _param_buffer_v1,
    "__cudaCDP2LaunchDeviceV2": _launch_v2,
    "__cudaCDP2LaunchDevice": _launch_v1,
    "__cudaCDP2StreamCreateWithFlags": _stream_create,
    "__cudaCDP2StreamDestroy": _stream_destroy,
    "__cudaCDP2StreamWaitEvent": _success,
    "__cudaCDP2EventCreateWithFlags": _event_create,
    "__cudaCDP2EventRecord": _success,
    "__cudaCDP2EventRecordWithFlags": _success,
    "__cudaCDP2EventDestroy": _success,
    "__cudaCDP2GetLastError": _get_last_error,
    "__cudaCDP2PeekAtLastError": _peek_last_error,
    "__cudaCDP2GetErrorName": _error_text(True),
    "__cudaCDP2GetErrorString": _error_text(False),
    "__cudaCDP2GetDevice": _answers(0),
    "__cudaCDP2GetDeviceCount": _answers(1),
    "__cudaCDP2RuntimeGetVersion": _answers(13000),
    "__cudaCDP2DeviceGetAttribute": _device_attribute,
    "__cudaCDP2DeviceGetLimit": _device_limit,
    "__cudaCDP2Malloc": _malloc,
    "__cudaCDP2Free": _free,
    "__cudaCDP2MemcpyAsync": _memcpy_async,
    "__cudaCDP2MemsetAsync": _memset_async,
}
for _n in list(HANDLERS):
    if _n.endswith(("LaunchDeviceV2", "LaunchDevice", "EventRecord", "EventRecordWithFlags", "StreamWaitEvent",
                    "MemcpyAsync", "MemsetAsync")):
        HANDLERS[_n + "_ptsz"] = HANDLERS[_n]     # the per-thread-default-stream spellings

