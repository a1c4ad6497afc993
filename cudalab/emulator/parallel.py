"""Batches of one launch on several cores at once, where the order they run in cannot show.

The engine runs a grid batch after batch (engine._run_batches). Blocks do not wait for each other
between grid syncs, and native code (compiled.py's groups and regions.py's regions, called through
ctypes) and the tensor-core loops (numba, nogil) release the GIL: a tiled matmul 1024 spends 99% of
its CPU time there. So two batches can run on two cores at once and a big launch takes about half the
wall time, where a core is free (course machines and mybinder have two or more).

The bytes must stay those of one batch after the other. They do wherever no block can see another's
work while the grid runs, and the emulator runs batches together only where that holds
(``independent``): no atomics or reductions but on the block's own shared memory (a float sum's
rounding depends on the order, an integer atomic's returned old values do too), no volatile accesses,
no acquire, release or relaxed ones and no fences beyond the block (blocks talking to each other: a
flag, a lock, a last-block-done count; ``.cta`` scope and proxy fences are the block's own), no calls (printf's order,
in-kernel malloc, launches from the device, recursion), no grid sync (a cooperative launch is one batch
anyway), and every store to global memory at an address that some definition derives from the block
index (a race lesson's ``*counter += 1`` by every block stays in order; a data race between blocks at
block-derived addresses, ``y[blockIdx.x / 2] = ...``, is undefined on a GPU and may end differently).
Interpreted batches hold the GIL for their Python, so only batches of native code or of the tensor-core
loops run beside others (engine._beside). Launches with observers (profile, racecheck,
memcheck's and synccheck's checks, widgets) and the compiled tier's check mode run in order too.

What a batch changes is its own (its Exec: registers, shared and local memory, SIMT stack, async-copy
and barrier state; compiled.py and regions.py keep their address tables per thread); what it counts
goes to a LaunchStats of its own, added to the launch's in block order (``merge``), so the instruction
counts, warnings and the first fault are those of one batch after the other: a fault in a late block is
reported only once every earlier batch has ended without one, and a later batch still running is
stopped. The watchdog times a launch by its busiest thread (pace.py: ``Pace.spent``): the launching
thread's CPU seconds plus the most one worker spent on the launch's batches (or all the workers' shared
out over ``cores()``, where threads outnumber cores). Not their sum: a tiled matmul 2048 that four
threads finish in 4 s was stopped at 10 s for its 16 s of CPU in all. Not wall time either: on a
loaded laptop or a shared 2-core server a good kernel is not blamed for waiting for a core, while a
spinning kernel spends CPU time and is stopped, and so does one waiting on the host (it spins on a flag
in mapped memory; a whole program's wall-clock limit, ``wall_deadline``, covers the rest). Each worker adds its own seconds (``run``), and a batch
runs against what its worker has left (``Pace.worker_left``), so a spinning batch stops on its own.

``workers()``: ``CUDALAB_THREADS`` (1: one batch at a time, as before), else the cores this process
may run on (``os.sched_getaffinity``), at most ``MAX_DEFAULT``.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..ptx.ir import leaves
from . import pace as _pace   # (system_seconds, per batch: imported here, not in run)

ENV = "CUDALAB_THREADS"
MAX_DEFAULT = 4                 # threads without CUDALAB_THREADS (each batch in flight holds its own memory)
IN_FLIGHT_BYTES = 512 << 20     # batches in flight hold at most this much memory (registers, shared, local)
MIN_SECONDS = 0.02              # a launch whose rest takes less (at its first batch's pace) stays on one thread

# special registers that differ between blocks: an address made from one is a block's own
BLOCK_SREGS = {"ctaid", "clusterid", "cluster_ctaid", "cluster_ctarank"}
# instructions through which blocks see each other's work, or whose order shows
ORDERED = {"sured", "call", "griddepcontrol", "multimem"}
ATOMIC = {"atom", "red"}                                 # ordered unless on a block's shared memory
FENCES = {"membar", "fence"}                            # ordered unless within the block (.cta) or a proxy fence
SCOPED = {"acquire", "release", "relaxed"}              # ordered at .gpu or .sys scope (or none given)
ORDERED_MODS = {"volatile", "mmio", "reduce"}
SPACES = ("global", "shared", "local", "param", "const")


# A container's CPU limit (a CFS quota): cgroup v2's "quota period" line, cgroup v1's two files. mybinder
# and Docker's --cpus limit a process this way while sched_getaffinity still names every core of the host.
CGROUP_V2 = "/sys/fs/cgroup/cpu.max"
CGROUP_V1 = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def _read(name: str) -> str:
    with open(name) as f:
        return f.read().strip()


@functools.lru_cache(maxsize=None)
def cpu_quota() -> int | None:
    """Whole CPUs the container's quota allows (at least 1), or None where there is no quota. Read
    once a process (every launch asks ``workers``)."""
    try:
        quota, _, period = _read(CGROUP_V2).partition(" ")
    except OSError:
        try:
            quota, period = (_read(name) for name in CGROUP_V1)
        except OSError:
            return None
    try:
        quota, period = int(quota), int(period or 100000)
    except ValueError:          # "max": no limit
        return None
    return max(1, quota // period) if quota > 0 and period > 0 else None


AFFINITY_FRESH = 1.0            # seconds a reading of the process's affinity is taken as still true
_AFFINITY = [0, float("-inf"), None]     # (cores, time.monotonic() when read, the function that read it)


def _affinity() -> int:
    """The cores of this process's affinity, read again after ``AFFINITY_FRESH`` seconds: a launch asks
    four to six times (``workers``, ``cores``), and each reading is a system call (1.3 us, of a small
    launch's 150)."""
    get = getattr(os, "sched_getaffinity", None)
    now = time.monotonic()
    if get is not None and _AFFINITY[2] is get and now - _AFFINITY[1] < AFFINITY_FRESH:
        return _AFFINITY[0]
    try:
        n = len(get(0)) if get is not None else os.cpu_count() or 1
    except OSError:
        n = os.cpu_count() or 1
    _AFFINITY[:] = [n, now, get]
    return n


def cores() -> int:
    """The cores this process may run on at once: its affinity, within the container's CPU quota."""
    n = _affinity()
    return max(1, min(n, cpu_quota() or n))


# os.environ keeps its names and values in ``_data`` (encoded, as ``encodekey`` makes them); every
# change through os.environ (monkeypatch.setenv, a notebook's %env) updates it
_ENVIRON_DATA = getattr(os.environ, "_data", None) if hasattr(os.environ, "encodekey") else None


@functools.lru_cache(maxsize=None)
def _environ_key(name: str):
    return os.environ.encodekey(name)


def environ_raw(name: str):
    """The environment variable ``name`` as os.environ stores it (bytes on POSIX; None where unset), read
    from os.environ's own dict: ``os.environ.get`` of a name that is not set raises and catches a KeyError
    inside (1.3 to 2 us), and a launch asks for CUDALAB_THREADS and CUDALAB_TIER several times each
    (``workers``, compiled.mode), which was a tenth of a null launch's cost. Read afresh at every call, so
    a change between launches takes effect at the next."""
    if _ENVIRON_DATA is None:
        return os.environ.get(name)
    return _ENVIRON_DATA.get(_environ_key(name))


def _asked() -> str:
    raw = environ_raw(ENV)
    return "" if raw is None else os.fsdecode(raw)


def workers() -> int:
    """Threads a launch's batches may run on: ``CUDALAB_THREADS`` if set (1 = one batch at a time),
    else the cores this process may use (its affinity, within the container's CPU quota), at most
    MAX_DEFAULT: on a one-CPU container a second thread would only hold a second batch's memory."""
    asked = _asked().strip()
    if asked:
        try:
            return max(1, min(int(asked), 64))
        except ValueError:
            return 1
    return min(cores(), MAX_DEFAULT)


def independent(df, program=None) -> str:
    """Why the order of ``df``'s blocks could show in its results ('' where it cannot): kept with the
    decoded function (every launch asks). ``program`` names the module's shared variables."""
    why = df.__dict__.get("_order_shows")
    if why is None:
        shared = {v.name for v in df.func.shared}
        if program is not None:
            shared |= {n for n, v in program.module.variables.items() if v.space == "shared"}
        why = df._order_shows = _order_shows(df.func, shared)
    return why


def _space(inst) -> str:
    for m in inst.mods:
        if m in SPACES or m.startswith("shared"):
            return "shared" if m.startswith("shared") else m
    return "generic"


def _ordered(inst) -> bool:
    mods = set(inst.mods)
    if inst.opcode in ORDERED or ORDERED_MODS & mods:
        return True
    if inst.opcode in FENCES:
        return "cta" not in mods and not any(m.startswith("proxy") for m in mods)
    return bool(SCOPED & mods) and not ({"cta"} & mods and not {"gpu", "sys", "cluster"} & mods)


def _reaching(insts, seeds) -> set:
    """Registers some definition of which reads a register of the set or an operand ``seeds`` says yes
    to (flow-insensitive: one such definition is enough)."""
    found = set()
    changed = True
    while changed:
        changed = False
        for inst in insts:
            ops = inst.operands
            if not ops or ops[0][0] not in ("reg", "vec", "pair"):
                continue
            dests = [o[1] for o in leaves(ops[:1]) if o[0] == "reg"]
            if all(d in found for d in dests):
                continue
            if seeds(inst) or any(o[0] == "reg" and o[1] in found for o in leaves(ops[1:])):
                found.update(dests)
                changed = True
    return found


def _order_shows(f, shared_symbols) -> str:
    insts = f.insts
    atomics = []
    for inst in insts:
        if inst.opcode in ATOMIC and _space(inst) != "shared":
            atomics.append(inst)
        elif _ordered(inst):
            return f"`{inst.text or inst.opcode}` ({inst.place})"
        if any(o[0] == "sreg" and o[1].startswith("envreg") for o in leaves(inst.operands)):
            return "grid sync"
    # registers whose value depends on the block index
    from_block = _reaching(insts, lambda i: any(o[0] == "sreg" and o[1] in BLOCK_SREGS for o in leaves(i.operands[1:])))
    # generic pointers into shared memory (wmma.store of a tile to shared memory through a generic address),
    # and registers that may hold any other pointer: a parameter's, a global variable's, one loaded from memory
    to_shared = _reaching(insts, lambda i: i.opcode == "cvta" and "to" not in i.mods and "shared" in i.mods
                          or any(o[0] == "sym" and o[1] in shared_symbols for o in leaves(i.operands[1:])))
    elsewhere = _reaching(insts, lambda i: i.opcode == "ld" or i.opcode == "cvta" and "shared" not in i.mods
                          or any(o[0] == "sym" and o[1] not in shared_symbols for o in leaves(i.operands[1:])))
    def into_shared(inst, regs):
        return _space(inst) == "generic" and regs and regs <= to_shared and not regs & elsewhere

    for inst in atomics:            # (an atomic on shared memory through a generic address is the block's own)
        mem = [o for o in inst.operands if o[0] == "mem"]
        if not mem or not into_shared(inst, {o[1] for o in leaves(mem[:1]) if o[0] == "reg"}):
            return f"`{inst.text or inst.opcode}` ({inst.place})"
    for inst in insts:
        writes = inst.opcode in ("st", "sust", "stmatrix") or inst.opcode == "wmma" and "store" in inst.mods \
            or inst.opcode == "cp"
        if not writes or not inst.operands or inst.operands[0][0] != "mem":
            continue
        if _space(inst) in ("shared", "local"):
            continue
        regs = {o[1] for o in leaves(inst.operands[:1]) if o[0] == "reg"}
        if regs & from_block:
            continue
        if into_shared(inst, regs):
            continue
        return f"a store to the same address in every block, `{inst.text or inst.opcode}` ({inst.place})"
    return ""


class Batch:
    """One batch of a launch and what running it left: its error, its CPU seconds. On a worker thread,
    ``budget()`` gives the CPU seconds it may run (``Pace.worker_left``) and ``clock`` is the launch's
    seconds per worker thread (``Pace.workers``), which the batch adds its own to."""

    __slots__ = ("ex", "run_df", "info", "nb", "budget", "clock", "error", "seconds", "user", "done", "ended")

    def __init__(self, ex, run_df, info, nb, budget=None, clock=None):
        self.ex, self.run_df, self.info, self.nb, self.budget, self.clock = ex, run_df, info, nb, budget, clock
        self.error = None
        self.seconds = self.user = 0.0
        self.ended = None       # the running thread's CPU clock at the batch's end
        self.done = None        # an Event, made where the batch goes to a worker thread (``submit``)


def run(batch: Batch, body, now: float | None = None):
    """Run ``body(batch)`` on this thread, keeping its error, its CPU seconds and, on a worker thread, its
    user seconds (the launching thread's pace leaves its system time out itself: pace.batch_done).
    ``now``: this thread's CPU clock, just read (each reading is a system call, about a microsecond, and
    a program launching a small kernel 10^5 times makes a dozen a launch); ``batch.ended`` is the clock
    at its end."""
    worker = batch.done is not None
    if batch.budget is not None:            # the launch's watchdog time left, on this thread's clock
        now = time.thread_time()
        batch.ex.deadline = now + batch.budget()
    sys0 = _pace.system_seconds() if worker else 0.0
    t0 = time.thread_time() if now is None else now
    try:
        body(batch)
    except BaseException as e:      # noqa: BLE001  (handed to the launch's thread, in block order)
        batch.error = e
    finally:
        batch.ended = time.thread_time()
        batch.seconds = batch.ended - t0
        if batch.clock is not None:         # (only this thread writes its own entry)
            me = threading.get_ident()
            batch.clock[me] = batch.clock.get(me, 0.0) + batch.seconds
        if worker:
            batch.user = max(batch.seconds - (_pace.system_seconds() - sys0), 0.1 * batch.seconds)
            batch.done.set()


_POOL = None
_POOL_OF = (0, 0)           # (process id, threads) the pool was made for
_POOL_LOCK = threading.Lock()


def submit(batch: Batch, body, threads: int):
    """Run ``batch`` on one of ``threads`` worker threads. A process forked after a launch (multiprocessing)
    has none of its parent's threads: it makes a pool of its own (the parent's would queue work forever)."""
    global _POOL, _POOL_OF
    with _POOL_LOCK:
        if _POOL is None or _POOL_OF != (os.getpid(), threads):
            if _POOL is not None and _POOL_OF[0] == os.getpid():
                _POOL.shutdown(wait=False)
            _POOL = ThreadPoolExecutor(threads, thread_name_prefix="cudalab-batch")
            _POOL_OF = (os.getpid(), threads)
        batch.done = threading.Event()
        _POOL.submit(run, batch, body)


def stop(batches):
    """Stop the batches still running (an earlier one faulted, or the launch was interrupted) and wait
    for them: none may write memory once the launch has returned."""
    for b in batches:
        b.ex.wall_deadline = float("-inf")
    for b in batches:
        b.done.wait()


def own_stats(stats, make):
    """A batch's own LaunchStats (``make()``), knowing the launch's warnings so far: a warning a batch
    repeats adds its threads to the launch's, as one batch after another does (``merge``), and a launch
    that has warned of a shared access past a block's size lets native code take such accesses
    (slack.shared_limit)."""
    own = make()
    for site, f in stats.warned.items():
        seen = copy.copy(f)
        seen.details = dict(f.details)
        if "threads" in seen.details:
            seen.details["threads"] = 0
        own.warned[site] = seen
    return own


def merge(stats, own):
    """Add a batch's own LaunchStats to the launch's, as if it had counted there after the batches
    before it: every field by its kind (numbers add, lists extend, dicts update), as the field's
    ``merge`` metadata says otherwise (engine.LaunchStats), so a counter added there merges too."""
    for f in dataclasses.fields(stats):
        how = f.metadata.get("merge")
        if how in ("launch", "warnings"):
            continue
        mine, theirs = getattr(stats, f.name), getattr(own, f.name)
        if isinstance(mine, list):
            mine.extend(theirs)
        elif isinstance(mine, dict):
            mine.update(theirs)
        else:
            setattr(stats, f.name, mine + theirs)
    _merge_warnings(stats, own)


def _merge_warnings(stats, own):
    """The findings of a batch's own LaunchStats after the launch's: a warning the launch has given
    already (by site, ``warned``) adds its threads to the launch's rather than appearing twice."""
    new = {id(f) for f in own.findings}
    for site, f in own.warned.items():
        if id(f) in new:
            continue
        have = stats.warned.get(site)
        if have is not None and "threads" in f.details and "threads" in have.details:
            have.details["threads"] += f.details["threads"]
    site_of = {id(f): site for site, f in own.warned.items()}
    for f in own.findings:
        site = site_of.get(id(f))
        if site is None:
            stats.findings.append(f)
            continue
        have = stats.warned.get(site)
        if have is None:
            stats.warned[site] = f
            stats.findings.append(f)
        elif "threads" in f.details and "threads" in have.details:
            have.details["threads"] += f.details["threads"]
