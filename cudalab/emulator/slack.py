"""Out-of-bounds accesses a GPU does not fault on: warned about, then run on (as on a GPU).

A GPU checks an address against what is *mapped*, not against the allocation the program meant:
a read one element past the end of a cudaMalloc'd array, or past a block's shared array but inside
its allocation unit, runs on and gives the bytes there. compute-sanitizer's memcheck reports the
same access. So cudalab, by default, says once per instruction what memcheck would report (a
``Finding`` with ``details["warning"]``) and goes on; with memcheck asked for explicitly
(``cudalab run --check memcheck``, ``cudalab.check("memcheck")``: ``strict``) it stops the kernel
there, as compute-sanitizer does. Anything farther is a fault on both and stops the kernel.

Measured on an H200 (driver 580, ``tools/oob_probe.cu``, output in ``tools/oob_probe_h200.txt``; one
access per process):

- global: cudaMalloc(1000) is followed by mapped memory: reads 1 KiB to 64 MiB past its end, 4 KiB
  before its start, and writes 1 MiB past ran; two cudaMalloc(1000) in a row are 1,024 bytes apart
  (512-byte rounding), 2 MiB allocations adjacent, 3 MiB ones 4 MiB apart; a read 2 MiB - 4 bytes
  past a 2 MiB allocation ran and 2 MiB past it faulted, as 2 MiB past a 64 MiB one. The emulator's
  arena follows every allocation with its rounding to 512 bytes and a 512-byte red zone, or above 1 MiB
  with the rest of its last 2 MiB page (memory.padded_size): an access that lies in that padding is one
  a GPU runs (``mapped``, its first case). Farther, it lands in another allocation (silent on both), or in memory
  no live allocation holds, which ``mapped`` sorts as the probe does: within ``POOL_AFTER`` (64 MiB)
  past a small allocation (at most 1 MiB) or ``POOL_BEFORE`` (4 KiB) before one, it is the pool that
  allocation came from, which a GPU maps whole: a warning, and the kernel goes on. A big allocation
  has its own pages: past its last one (its padding) is a fault, as on the H200; so is an address no
  allocation is near (null, 4 GiB past). Such a read gives the arena's bytes there, zeros outside
  the arena (before its first allocation, past its end); a write lands in the arena, and is dropped
  outside it (the arena never grows for it).
- freed memory: on a GPU a small freed block stays in the mapped pool, so even a use after free runs
  there; compute-sanitizer reports it, and it is nearly always a bug the student wants stopped at, so
  cudalab keeps it a fault: an access that touches a block the program freed (cudaFree) is a use
  after free, unless the same access has other lanes inside the live allocation just below the
  block or in its padding: then it is an overrun running off that allocation into its freed
  neighbour (the Handbook's testScan), which a GPU runs, and a warning. (A use after free through
  the old pointer has no lane in a live allocation.) Blocks the runtime freed itself (the device
  copies of a launch's numpy arguments) are pool memory: the program never held their pointers.
- shared: a block's shared memory (static and dynamic together) starts at offset 1,024 of its window
  and is allocated in ``SHARED_UNIT``-byte units: with 100 bytes declared, reads at 100..124 ran and
  at 128 faulted; with 1,296, up to 1,404 ran and 1,408 faulted (``%total_smem_size`` said 128 and
  1,408); 4,096 bytes faulted at 4,096.
- local: reads 32 bytes to 16 MiB past a 32-byte local array ran (the thread's local window is
  large). The emulator keeps only the thread's frame; past it, up to ``LOCAL_STACK`` bytes (CUDA's
  default per-thread stack) reads give zeros and writes are dropped, with the warning; farther is
  the stack-overflow fault as before.
- constant: reads up to 1 MiB past a __constant__ array ran. Constant variables live in the arena,
  so the global rule applies (their padding).
"""
from __future__ import annotations

import sys

import numpy as np

from .memory import GLOBAL_BASE, LARGE

SHARED_UNIT = 128       # a block's shared memory is allocated in units of this many bytes (H200, above)
LOCAL_STACK = 1024      # cudaLimitStackSize's default: local bytes per thread a GPU always provides
POOL_AFTER = 64 << 20   # mapped memory past a small allocation (reads 64 MiB past a 1,000-byte one ran)
POOL_BEFORE = 4 << 10   # and before it (a read 4 KiB before one ran)

strict = False          # memcheck asked for explicitly: such accesses stop the kernel (analysis/sanitizer/check.py)
strict_sync = False     # synccheck asked for explicitly: a barrier a warp reaches split stops the kernel (engine.py)


def shared_allocation(shared_size: int) -> int:
    """The bytes a block's shared memory really occupies: its size rounded up to the unit."""
    return (shared_size + SHARED_UNIT - 1) // SHARED_UNIT * SHARED_UNIT


def shared_limit(ex) -> int:
    """The shared bytes native code lets a block touch unchecked: its declared size, or, once this
    launch has warned of a read or write past it (inside the allocation unit, which the interpreter
    found), the whole unit. Native code hands every access past the limit to the interpreter, which
    warns and goes on; a kernel whose every block reads a little past its tile (a 3x3 stencil's
    halo off by one row) then ran interpreted block after block, 16 times slower than native. After
    the first warning the lesson is told; the rest of the launch runs at native pace, reading and
    writing the unit's bytes as the interpreter would. Under ``strict`` (memcheck asked for) such an
    access stops the kernel, so the limit stays the declared size."""
    size = ex.shared_size
    if strict or not ex.stats.warned or not any(site[2] == "shared" for site in ex.stats.warned):
        return size
    return shared_allocation(size)


def warn(ex, inst, space, kind, lanes, addrs, size, why=None):
    """Record that ``lanes`` made an access memcheck reports and a GPU runs: one Finding per
    instruction and launch (the threads of later batches are counted into it, those the interpreter
    runs: a shared access inside the unit that native code takes after the first warning,
    ``shared_limit``, is not counted)."""
    site = (id(inst), kind, space)
    seen = ex.stats.warned
    f = seen.get(site)
    if f is not None:
        f.details["threads"] += len(lanes)
        return
    f = ex.access_finding(inst, space, kind, lanes, addrs, size, why, counted=False)
    f.details["warning"] = True
    did = "the read gave whatever bytes are there" if kind == "ld" else "the write landed there"
    f.message += (f"\n    A GPU does not stop at this access ({_reason(space)}), so the kernel went on and {did}; "
                  "compute-sanitizer's memcheck reports it as an error. Test the index against the array's "
                  "size; run with --check memcheck (cudalab.check(\"memcheck\")) to stop here.")
    seen[site] = f
    ex.stats.findings.append(f)


def _reason(space):
    return {"shared": f"a block's shared memory is allocated in {SHARED_UNIT}-byte units",
            "local": "the thread's stack holds the address",
            }.get(space, "allocations are rounded up, and small ones come from a larger pool that is all mapped")


def is_warning(f) -> bool:
    return bool(f.details.get("warning"))


def new_warnings(findings, said: set) -> list:
    """The warnings of ``findings`` not said yet (``said``: the sites already told, kept by the
    caller per program), so a kernel launched in a loop warns once."""
    out = []
    for f in findings:
        if not is_warning(f):
            continue
        key = (f.kernel, f.line, f.details.get("space"), f.details.get("access"))
        if key in said:
            continue
        said.add(key)
        out.append(f)
    return out


def text(f, worded=None) -> str:
    """A warning as a student reads it."""
    n = f.details.get("threads", 1)
    more = f" ({n} threads)" if n > 1 else ""
    msg = worded(f.message) if worded else f.message
    return f"cudalab {f.kind} warning{more}: {msg}"


def say(findings, said: set, worded=None, out=None):
    """Print the warnings of ``findings`` not said yet to stderr (the Python API's launches)."""
    fresh = new_warnings(findings, said)
    if fresh:
        out = out or sys.stderr
        for f in fresh:
            out.write(text(f, worded) + "\n")
        out.flush()


def mapped(mem, addrs, size, live) -> np.ndarray:
    """Per address (each in no live allocation): memory a GPU would have mapped there, so that it
    runs the access (the module's docstring: the pool around small allocations, a big one's last
    page). ``live``: the addresses of the same access that are inside live allocations (an overrun
    into a freed block counts only when it runs off one of those or off the padding after one)."""
    starts, pads = mem.padded_bounds()
    n = starts.size
    if not n:
        return np.zeros(addrs.shape, bool)
    ends = mem.bounds()[1]
    small = (ends - starts) <= np.uint64(LARGE)
    end = addrs + np.uint64(size)
    k = np.searchsorted(starts, addrs, side="right") - 1
    kk = np.maximum(k, 0)
    below = (k >= 0) & (end > addrs)        # (an address at the top of the 64-bit space wraps: no)
    padding = below & (end <= pads[kk])
    # the pool a small allocation comes from: POOL_AFTER bytes past it, POOL_BEFORE before it
    after = below & small[kk] & (end <= pads[kk] + np.uint64(POOL_AFTER))
    kn = np.minimum(k + 1, n - 1)
    before = (k + 1 < n) & small[kn] & (addrs + np.uint64(POOL_BEFORE) >= starts[kn])
    freed = _in_freed(mem, addrs, end)
    overrun = np.zeros(addrs.shape, bool)
    if freed.any():
        # into a freed block from the live allocation just below it: other lanes of the same access
        # are inside that allocation or its padding (a native tier hands over only the lanes outside
        # every allocation, so the padding's lanes are the ones seen here)
        anchors = np.concatenate([live, addrs[padding]])
        if anchors.size:
            ran_off = np.searchsorted(starts, anchors, side="right") - 1
            overrun = freed & below & np.isin(k, ran_off)
    return padding | overrun | ((after | before) & ~freed)


def _in_freed(mem, addrs, end) -> np.ndarray:
    """Per access [addr, end): does it touch a block the program freed (cudaFree) that no
    allocation holds again? (The runtime's own freed scratch blocks are pool memory: the program
    never held their pointers.)"""
    holes = mem.freed_holes()
    if not holes:
        return np.zeros(addrs.shape, bool)
    lo = np.array([o for o, _ in holes], np.uint64) + np.uint64(GLOBAL_BASE)
    hi = lo + np.array([s for _, s in holes], np.uint64)
    k = np.searchsorted(lo, end, side="left") - 1      # the last hole that starts before the access ends
    kk = np.maximum(k, 0)
    return (k >= 0) & (addrs < hi[kk])
