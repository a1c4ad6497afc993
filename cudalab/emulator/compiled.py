"""The compiled tier: straight-line runs of a kernel's instructions as native code, same schedule.

The interpreter runs one instruction over every active lane, then the next. This tier keeps that
schedule and only changes *how* a run of instructions executes: a **group** of consecutive
instructions inside one basic block becomes one native function (``llvmgen``, through llvmlite)
that runs, lane by lane, all of the group's instructions. Control flow, barriers, calls, warp
instructions and everything the generator does not know stay with the interpreter, entry by entry,
so a kernel is never "unsupported" here: it just has fewer groups.

Why running a group lane by lane equals lock step: instructions on registers only touch their own
lane; a group holds no two memory instructions where one writes a state space the other reads or
writes (local memory is per thread and never conflicts), so no lane can see another lane's effect
earlier or later than in lock step; and an atomic runs in lane order either way. Where the native
code meets something it will not decide itself (an address memcheck would report, a float64 NaN),
it *bails out*: registers the group both read and wrote are restored and the group runs again in
the interpreter, which gives the exact result or the exact error message. A group that starts with
an atomic checks every lane's address first (an atomic must not run twice).

Loops and branches go further as *regions* (``regions.py``: each lane on its own through a whole
stretch of control flow; ``CUDALAB_REGIONS=0`` turns them off); the groups inside a region still
serve the lanes that leave the region's native code early.

Used only when nothing observes the launch (observers need per-instruction events). The tier is
chosen by ``CUDALAB_TIER`` (see ``mode`` and ``pick``): by default a kernel compiles in the
background once a launch is big or the kernel has spent ``AUTO_SECONDS`` in the interpreter, so no
launch waits for LLVM. Native code and the group list are cached on disk by the kernel's
``fingerprint``. A big module's first machine code comes from LLVM's fast code generator
(``QUICK_IR_BYTES``); a kernel that keeps running gets the better code later, from a child process
(``better_code.py``, ``note_native``).
"""
from __future__ import annotations

import atexit
import ctypes
import dataclasses
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path

import numpy as np

from ..ptx.ir import leaves
from . import pace, slack
from .parallel import environ_raw

AUTO_LANES = 1 << 15            # a launch this big compiles at once (the interpreter would take ~0.1 s+)
WHOLE_KERNEL_LANES = 1 << 19     # lanes per batch when one native region runs the whole kernel (batch_lanes)
AUTO_SECONDS = 0.2              # interpreter CPU time after which a kernel is compiled
# LLVM's time per PTX instruction of a kernel, roughly (on a busy 2-core machine, CUB's reduce of 418
# instructions took 12 s, its scan of 912 8 s, its onesweep radix sort of 2927 40 s): a kernel that
# would cost more than it has run interpreted waits (worth_building)
BUILD_SECONDS_PER_INSTRUCTION = 0.01
CHEAP_BUILD_SECONDS = 1.0       # a kernel that builds this fast builds on AUTO_LANES or AUTO_SECONDS alone
# ... and one that has run this long interpreted builds whatever its size: a launch must go native
# well before the watchdog's default 10 s (the build's time is not the watchdog's)
BUILD_AFTER_SECONDS = 5.0
# A -G (debug) build's kernels: nvcc leaves every variable in its own register or local slot and every
# __device__ function a call, so a kernel is thousands of PTX instructions (CUB's reduce of a Thrust
# inner_product: 10,766, its LLVM build 39.5 s of CPU, 3.7 ms an instruction: the rate for them). Such a
# kernel is built only once its interpreted time, with what its launch has left, reaches that build's
# estimate, or when its launch would not finish within the watchdog interpreted (DEBUG_LAUNCH_SHARE of
# it): not after BUILD_AFTER_SECONDS. That inner_product over 2^20 floats ran its reduce 6.5 s interpreted,
# started the build then, and the program waited at exit for LLVM (wait_for_builds): 49 s of CPU, 10 of
# them with CUDALAB_TIER=interp
DEBUG_BUILD_SECONDS_PER_INSTRUCTION = 0.004
DEBUG_LAUNCH_SHARE = 0.9
REMAT_MOST = 4                  # uniform values a region with cuts computes again rather than loads (_segments)
OPT_LEVEL = 1                   # LLVM -O1: as fast as -O2 on these straight-line loops, compiles faster
# a kernel's IR of more bytes than this gets a short pipeline instead (_optimize). It was 4 MB, which
# put CUB's onesweep sort kernel (9.7 MB) and its select and unique kernels (5 to 8.5 MB) on the short
# list: built in a third of -O1's time (about 18 s against 42 s, its first launch with the build, load
# 13 on 2 cores), but each onesweep pass of a 2^22-pair sort then took 0.81 s instead of 0.33 (-O1's
# module pipeline: its loop vectorizer or its inliner; -O1's function passes alone, 0.73 s). A kernel that big is built only once it
# has run 5 s interpreted (worth_building), so it is one a program launches again and again:
# cuda-samples' radixSortThrust launches it 400 times
BIG_IR_BYTES = 16 << 20
# its passes, in order (llvmlite's add_NAME_pass). Not NewGVN, which this list held at first: on CUB's
# onesweep sort kernel (3,229 PTX instructions, 9.7 MB of IR) it fails an assertion of LLVM's
# ("Seem to have processed the same Value a lot") that aborts the whole process
BIG_PASSES = ("sroa", "instruction_combine", "simplify_cfg", "instruction_combine", "dead_code_elimination")
# a module of more IR than this is built without LLVM's loop unroller (on in its -O1 pipeline), which
# copied its loops four times, code generation then compiling every copy: CUB's radix histogram
# kernel (2.4 MB of IR, 4.2 MB after the passes with the unroller, 3.2 without) built in 14.8 s of
# CPU, 9.0 s without. Smaller modules (a student's kernels, built in a second) keep it: a shared-
# memory histogram ran 10% faster unrolled. The loop vectorizer stays on everywhere: without it the
# 16x16 tiled matmul 256 took twice as long (its phases' loops over a block's threads)
UNROLL_IR_BYTES = 1 << 20
# a module with a basic block of more instructions than this (in the IR the tier writes, before the
# passes: largest_block) gets LLVM's fast code generator (the target machine at opt=0: fast instruction
# selection and register allocation) after its usual passes. The time of -O1/-O2 code generation grows
# with the size of a module's largest block, not with the module's (the greedy register allocator and
# CodeGenPrepare walk a block's live values again and again): eScience's tiled 17x17 convolution, every
# loop unrolled (a block of 23,807 instructions; 11,085 after the passes), took 83 s of code generation
# at opt=2 and 1.7 s at opt=0 (its launches then 1.6 times as long: 0.39 -> 0.64 s). The passes stay
# -O1's: on the short list (BIG_PASSES) its build took 17 s less and its launch 3.3 times as long
# (bench/README.md, codegen10). A 32x32 tiled product unrolled 16 times (10,070; 5,032 after: 11.5 s at opt=2) and CUB's onesweep sort kernel (3,122; 1,518 after,
# though 180,000 instructions in all) stay below it and are built as before
FAST_CODEGEN_BLOCK = 16000
# A module of more IR than this gets its first machine code from the fast code generator (opt=0) after
# the usual passes, and the usual code (opt=2, or BIG_IR_BYTES' opt=1) only once the kernel has run
# natively about as long as that build is expected to take (note_native: a JIT's usual rule), in a child
# process (better_code.py) from the passes' output kept as bitcode; later batches and launches pick it
# up (pick). Code generation at opt=2 costs about 1.7 s a MB of IR (more with a huge block, below), so
# a smaller module is built once, as before: opt=0 code runs slower (the 16x16 tiled matmul's, 225 KB:
# its launches 2.4 times as long, 0.044 against 0.018 s at 256, for 0.34 s less of build), and a kernel
# launched a few times would lose more than its first launch saves (bench/README.md, "Quick code first").
QUICK_IR_BYTES = 1 << 20
# the better code's build, as a multiple of the quick one's code generation (measured: the 16x16 tiled
# matmul 0.39 / 0.05 s, the 32x32 one unrolled 16 times 11.5 / 0.9 s; eScience's convolution, a block
# over FAST_CODEGEN_BLOCK, 83 / 1.7 s)
BETTER_COST = 12.0
BETTER_COST_HUGE_BLOCK = 50.0
# the better code's level: opt=1, not 2. Measured on three big modules (bench/build_levels.py; CPU s, each
# level's code generation from the same optimized module): opt=1's code ran as fast as opt=2's or faster
# (cuRAND's loops 0.0174 against 0.0218 s a launch of 1024 threads, the unrolled 32x32 matmul 512 0.107
# against 0.257, CUB's block sort 0.082 against 0.092) for the same build (2.7 / 2.4 s, 9.6 / 9.5, 1.19 / 1.21)
BETTER_OPT = 1
# lanes per batch while a kernel runs quick code (batch_lanes): a launch's first, sample batch then tells
# its pace, which starts the better build (note_native), and the next batch may wait for it (_wait_for_better)
# where a whole-kernel batch of WHOLE_KERNEL_LANES would run to its end at the quick pace
QUICK_BATCH_LANES = 1 << 14
_CFUNC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_RFUNC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, *[ctypes.c_void_p] * 7)     # regiongen's signature


def mode() -> str:
    """CUDALAB_TIER: ``interp``, ``compiled``, ``auto`` (default) or ``check`` (compiled, and every
    group also run in the interpreter and compared: a debugging aid, slow).

    Read afresh at every call, so that a change a test or a user makes between launches takes effect
    at the next one, but from os.environ's own dict: ``os.environ.get`` of a name that is not set
    raises and catches a KeyError inside (1.3 us), and every launch asks several times (``pick``,
    ``upgrade_later``, each native region's run), which was a tenth of a null launch's cost."""
    raw = environ_raw("CUDALAB_TIER")
    m = _MODES.get(raw)
    if m is None:
        text = (os.fsdecode(raw) if raw is not None else "auto").strip().lower()
        m = _MODES[raw] = text if text in ("interp", "compiled", "auto", "check") else "auto"
    return m


_MODES: dict = {}       # raw CUDALAB_TIER value -> mode


def _regions_on() -> bool:
    """CUDALAB_REGIONS=0 turns regions off (regions.py): groups only, as before them."""
    return os.environ.get("CUDALAB_REGIONS", "1").strip() != "0"


def cache_dir() -> Path:
    """``native/`` in cudalab's cache folder (``$CUDALAB_CACHE`` or ~/.cache/cudalab, as programs/build.py)."""
    return Path(os.environ.get("CUDALAB_CACHE") or Path.home() / ".cache" / "cudalab") / "native"


@dataclasses.dataclass
class _Tier:
    """What the tier knows about one decoded kernel: time spent interpreted, its fused code."""
    interp_seconds: float = 0.0
    fused: object = None            # DecodedFunction with K_FUSED entries, False: nothing to compile
    building: bool = False          # a background compile is under way
    looked_on_disk: bool = False    # the disk cache was searched (once: a benchmark launches a null kernel 10^5 times)
    debug: object = None            # the kernel is of a -G build (its module's .target says debug; None: not asked yet)
    native_seconds: float = 0.0     # CPU time the kernel has run in its quick native code (note_native)
    better: object = None           # the child process building its better code (better_code.py), once started
    quick_rest: float = 0.0         # what the launch had left after its last quick batch, at that batch's pace
    better_since: float = 0.0       # when the better build started (time.monotonic)


def pick(program, df, observers, lanes, cluster_size=1):
    """The DecodedFunction to run: ``df`` itself (interpreted) or its fused copy.

    ``auto`` makes a launch wait for LLVM only where the kernel is big and has run interpreted long
    enough already (``hot``): a kernel worth compiling (``worth_building``: a
    launch of AUTO_LANES lanes or AUTO_SECONDS of interpreter time, for a small kernel; interpreter
    time as long as its build, for a big one) compiles in a background thread while the
    interpreter goes on; later batches and launches pick the native code up when it is ready. Code
    in the disk cache loads at once. ``compiled`` and ``check`` compile before running."""
    if observers or cluster_size > 1 or not df.func.is_entry:
        return df
    m = mode()
    if m == "interp":
        return df
    st = _tier(df)
    if st.debug is None:
        st.debug = "debug" in (getattr(program.module, "target", "") or "")
    if st.better and st.better.poll() is None:
        # the launch's rest at the quick code's pace: after its last batch, or at the kernel's last native pace
        _wait_for_better(st, st.quick_rest or df.__dict__.get("_native_pace", 0.0) * lanes)
    if st.better and st.better.poll() is not None:
        _take_better(program, df, st)
    if st.fused is None:
        if m != "auto" or not st.building and _on_disk_once(df, st):
            _compile(program, df, st, raise_errors=m == "check")
        elif not st.building and worth_building(df, st.interp_seconds, lanes):
            _build_in_background(program, df, st)
        if st.building and hot(df, st.interp_seconds):
            wait_for_build(df)
    return st.fused or df


def ready(df, observers, cluster_size=1):
    """``pick``'s answer where it has nothing to do (its native code is built and no better code is on
    the way), without its steps, else None (ask ``pick``). The engine reads the CPU clock around a
    ``pick`` that may compile; this one it takes without (launch19)."""
    st = df.__dict__.get("_tier")
    if st is None or not st.fused or st.better is not None or st.debug is None or observers or cluster_size > 1 \
            or not df.func.is_entry or mode() == "interp":
        return None
    return st.fused


def hot(df, interp_seconds: float) -> bool:
    """Is a big kernel (over CHEAP_BUILD_SECONDS to build) whose build is under way one that has run
    interpreted as long as the rule for building it asks (``worth_building``)? Then its next launch
    waits, asleep, for the native code instead of running interpreted beside LLVM: a kernel launched
    that often will be launched again, and interpreted it costs several times the CPU. cuda-samples'
    radixSortThrust, from a cold cache, ran 23 of its 400 onesweep passes interpreted (0.53 s of CPU
    each, native 0.21 s) while LLVM built that kernel; waiting, 10. A small kernel, built after one big launch (``AUTO_LANES``), is not hot:
    a notebook cell's next launch does not wait for LLVM."""
    cost = build_seconds(df)
    return cost > CHEAP_BUILD_SECONDS and interp_seconds >= (cost if _debug(df) else min(cost, BUILD_AFTER_SECONDS))


def build_seconds(df) -> float:
    """About how long LLVM takes to build ``df``'s native code (CPU seconds)."""
    return len(df.code) * (DEBUG_BUILD_SECONDS_PER_INSTRUCTION if _debug(df) else BUILD_SECONDS_PER_INSTRUCTION)


def _debug(df) -> bool:
    """Whether ``df``'s kernel is known to be of a -G build (``pick`` reads its module's .target once)."""
    st = df.__dict__.get("_tier")
    return st is not None and bool(st.debug)


def worth_building(df, interp_seconds: float, lanes: int = 0, too_long: bool = False) -> bool:
    """Should auto mode build the native code of a kernel that has run (and will run, as far as a
    launch's first batches tell) ``interp_seconds`` interpreted? As soon as it is big or has run
    AUTO_SECONDS, if it builds in a second or so; a big one only once its interpreted time has
    reached its build time (a JIT's usual rule) or BUILD_AFTER_SECONDS. Why: Thrust's and CUB's
    kernels are thousands of instructions; a thrust::sort of 10^6 keys ran its onesweep kernels in
    5 s interpreted while LLVM spent 15 to 40 s on them in the background (and the interpreter
    waited for its share of the CPU and the GIL). Never a build that would outlast the CPU time a
    limit (``ulimit -t``) leaves the program: cuda-samples' radixSortThrust spent 70 of its 120 s
    on a build of CUB's kernels that the limit ended before it could run. A -G build's kernel: only once
    it has run as long as its build, or ``too_long`` (its launch would not finish within the watchdog
    interpreted): DEBUG_BUILD_SECONDS_PER_INSTRUCTION."""
    if _mostly_tensor_core(df):
        return False
    cost = build_seconds(df)
    if cost <= CHEAP_BUILD_SECONDS:
        due = lanes >= AUTO_LANES or interp_seconds >= AUTO_SECONDS
    elif _debug(df):
        due = interp_seconds >= cost or too_long
    else:
        due = interp_seconds >= min(cost, BUILD_AFTER_SECONDS)
    return due and cost <= pace.cpu_time_left()        # the limit asked only once a build is due


# warp matrix instructions stay interpreted (each is already one compiled loop over the batch's warps,
# mma_native.py); the tier compiles the instructions around them
TENSOR_CORE = frozenset({"wmma", "mma", "ldmatrix", "stmatrix", "movmatrix"})


def _mostly_tensor_core(df) -> bool:
    """Are at least half of the kernel's instructions tensor-core ones? Then native code would speed up only
    the lesser half, and not by much: the cuda-samples' GEMMs (912 of compute_gemm's 1,522
    instructions are wmma) spend their time in those instructions. A 1024^3 copy of
    cudaTensorCoreGemm ran in 4.0 s with its native code loaded and 4.4 s interpreted (CPU time of
    the launch), while the build took 31 s of CPU, and 7.4 s of it in a launch that ended first."""
    share = df.__dict__.get("_tensor_core_share") if hasattr(df, "__dict__") else None
    if share is None:
        insts = [c[2] for c in df.code if isinstance(c, tuple)]
        share = sum(i.opcode in TENSOR_CORE for i in insts) / max(len(insts), 1)
        df.__dict__["_tensor_core_share"] = share
    return share >= 0.5


def _build_in_background(program, df, st):
    st.building = True
    threading.Thread(target=_compile, args=(program, df, st), daemon=True,
                     name=f"cudalab compile {df.func.name}").start()


def upgrade_later(program, df, observers, cluster_size=1, limit: float = 10.0):
    """For a batch the interpreter runs (``pick`` gave ``df``): what the interpreter asks, with this
    thread's CPU clock, while the batch runs; it returns the native code once it is ready, else None.

    Why: ``pick`` decides per batch, and a small grid is one batch, so a single thread looping a
    million times (``k<<<1, 1>>>``, common in course code) stayed interpreted to the end. Once the
    batch alone has run AUTO_SECONDS the kernel is compiled in the background, and the interpreter
    carries on in the native code from the instruction it is at (the fused code has the same
    instruction numbering; entries inside a group are the interpreter's own, and a loop inside a
    region is a region of its own too: regions._loop_entries). ``limit``: the launch's watchdog; a -G
    build's kernel builds here once the batch has run DEBUG_LAUNCH_SHARE of it (a Thrust inner_product's
    reduce, one batch of 6.5 s interpreted, built for 39.5 s after its fifth)."""
    if observers or cluster_size > 1 or not df.func.is_entry or mode() != "auto":
        return None
    st = _tier(df)
    if st.fused is False:
        return None
    start = time.thread_time()

    def ask(now: float):
        if st.fused:
            return st.fused
        if st.fused is None and not st.building and worth_building(
                df, st.interp_seconds + now - start, too_long=now - start >= DEBUG_LAUNCH_SHARE * limit):
            _build_in_background(program, df, st)
            # wait asleep (no watchdog time): the interpreter would hold the GIL against the build's
            # Python half, and a batch this long gains more from native code than it loses waiting
            wait_for_build(df)
            return st.fused or None
        return None
    return ask


_ENGINE = None          # the engine module, once batch_lanes has imported it


def batch_lanes(program, df, observers, lanes, cluster_size=1):
    """Lanes per batch: the interpreter's ``engine.LANE_BUDGET`` (its numpy arrays stay in cache),
    or ``WHOLE_KERNEL_LANES`` where one native region runs the whole kernel (regions.py): native
    code goes lane by lane whatever the batch, so a bigger one only saves the Python work each
    batch costs (register arrays, the context, the SIMT stack), which is most of a short kernel's
    time. ``engine.launch`` keeps the batch's register arrays within ``engine.BATCH_BYTES`` either way."""
    global _ENGINE
    if _ENGINE is None:         # (engine imports this module: imported at the first launch, once)
        from . import engine as _ENGINE
    BATCH_BYTES, K_REGION, LANE_BUDGET = _ENGINE.BATCH_BYTES, _ENGINE.K_REGION, _ENGINE.LANE_BUDGET
    run = pick(program, df, observers, lanes, cluster_size)
    code = run.code
    if run is not df and run.__dict__.get("_better"):
        # quick code, its better code not in yet: a batch cannot change code while it runs (_wait_for_better)
        return QUICK_BATCH_LANES
    if run is df:
        return LANE_BUDGET
    known = run.__dict__.get("_whole_region")         # (asked once per code list, not at every launch)
    if known is None or known[0] is not code:
        known = run._whole_region = (code, code[0][0] == K_REGION and all(c[2].opcode in ("ret", "exit")
                                                                          for c in code[code[0][3]:]))
    if not known[1]:
        return LANE_BUDGET
    return max(LANE_BUDGET, min(WHOLE_KERNEL_LANES, BATCH_BYTES // (8 * max(len(df.func.regs), 1))))


def _compile(program, df, st, raise_errors=False):
    try:
        with _BUILD_LOCK:                # LLVM's global context: one build at a time
            fused = _build(program, df) or False
    except Exception:           # noqa: BLE001  (no LLVM, or LLVM refused the code: the interpreter runs it)
        if raise_errors:
            raise
        fused = False
    st.fused = fused


_BUILD_LOCK = threading.Lock()


def wait_for_builds():
    """At exit, let a background compile finish first: LLVM runs in its thread without the GIL, and
    tearing down the interpreter (and LLVM's globals) under it crashed the process after the
    program's last line (SIGSEGV, or an LLVM assertion). Holding the lock keeps later ones out.
    No time limit: a build ends on its own (31 s of CPU for the largest seen, a tensor-core GEMM,
    more on a loaded machine), and the 60 s limit this had let the teardown crash under one."""
    _BUILD_LOCK.acquire()


atexit.register(wait_for_builds)


# how many times faster than the interpreter native code runs, at most (vector add ~13x, loops more):
# a launch too long even at that pace is stopped on the interpreter's estimate without waiting for LLVM
NATIVE_GAIN = 20.0


def building(df) -> bool:
    """Is the kernel's native code being built in the background (auto mode's first launches)?"""
    st = df.__dict__.get("_tier")
    return bool(st and st.building and st.fused is None)


def native_next(df) -> bool:
    """Will the kernel's next batch run native code that the batch just run (interpreted) did not:
    is it being built, or did its build finish while that batch ran? A small kernel builds in a
    fraction of a second, often inside the launch's first, small batch: judged at that batch's
    interpreted pace, CodeSamples' 08_Reductions (100 million float atomicAdds to one variable, 1 s
    native) was stopped as needing 17 minutes."""
    st = df.__dict__.get("_tier")
    return bool(st and (st.building or st.fused))


def wait_for_build(df, seconds: float = 120.0):
    """Wait (asleep: no CPU time of this thread, so no watchdog time) for the background build, or
    until the program's time is up: LLVM's thread goes on spending the process's CPU time, and
    dxtc, waiting here for its 3,300-instruction kernel when ``ulimit -t`` ran out, never stopped
    itself before the hard limit killed it (the program heard "lost the connection")."""
    end = time.monotonic() + seconds
    while building(df) and time.monotonic() < end and not pace.time_is_up():
        time.sleep(0.02)


def note_time(df, seconds, program=None, later: float = 0.0, too_long: bool = False, sample: bool = False):
    """Interpreter time of a batch, for the auto mode's rule (worth_building); ``later``: what the
    launch's remaining batches will take interpreted at this batch's pace; ``too_long``: whether the
    launch would then outlast DEBUG_LAUNCH_SHARE of its watchdog. A launch that will run long enough in
    all builds now, in the background, as a big one did before (``program``). Not on a launch's first,
    ``sample`` batch for a -G build's kernel, unless ``too_long``: the interpreter's one-time costs are in
    its pace (a Thrust inner_product's reduce over 2^18 floats: 0.27 s for its sample, 17 s told for the
    rest, which took 0.6; over 2^20 floats the build was started so)."""
    st = _tier(df)
    st.interp_seconds += seconds
    if sample and st.debug and not too_long:
        return
    if (program is not None and later > 0 and st.fused is None and not st.building and mode() == "auto"
            and worth_building(df, st.interp_seconds + later, too_long=too_long)):
        _build_in_background(program, df, st)


def note_native(df, run_df, seconds: float, later: float = 0.0):
    """CPU seconds a batch ran ``run_df``, the kernel's native code; ``later``: what the launch's remaining
    batches will take at its pace. Quick code (``QUICK_IR_BYTES``) that has run, in this program and the
    runs before it (``ran``, kept in the disk cache at exit), or will have by the launch's end, as long as
    its better code would take to build gets that build started, in a child process (better_code.py): a
    kernel launched once or briefly never pays for it. Where another process is building it already (the
    program run again while its last run's build goes on), the child starts at once and waits for that one."""
    better = run_df.__dict__.get("_better")
    if better is None:          # (the usual code: a dictionary look-up is all a launch pays)
        return
    st = _tier(df)
    if st.fused is not run_df:
        return
    st.quick_rest = later           # (a next batch may wait for the better build: _wait_for_better)
    if st.better is not None:
        return
    if not st.native_seconds:
        _QUICK.append((os.getpid(), st, better))
    st.native_seconds += seconds
    if (st.native_seconds + better.get("ran", 0.0) + later < better["seconds"]
            and not (st.native_seconds == seconds and _locked(better["key"]))):
        return
    st.better = _start_better(better)
    if st.better is None:
        run_df._better = None
        return
    st.better_since = time.monotonic()
    _CHILDREN.append(st.better)


def _start_better(better):
    """The child process that builds ``better``'s code (better_code.py), in a session of its own, so that
    it outlives the program where ``end_children`` leaves it to finish; None where it cannot start."""
    try:
        child = subprocess.Popen([sys.executable, str(Path(__file__).with_name("better_code.py")), str(cache_dir()),
                                  better["key"], str(better["opt"]), str(BETTER_CAP * better["seconds"] + 10)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
    except OSError:
        return None
    child.pid_of_parent, child.key, child.seconds = os.getpid(), better["key"], better["seconds"]
    return child


# a better build's CPU time is capped at this many times its estimate (and 10 s more): the estimate is
# BETTER_COST times the quick code generation, and the builds measured took 0.6 to 1.2 times it
BETTER_CAP = 4.0


def _locked(key) -> bool:
    """Does another process hold the better build's lock for ``key`` (better_code.py)?"""
    try:
        with open(cache_dir() / f"{key}.better.lock", "rb") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:             # no lock file: nobody builds it
        pass
    return False


def _wait_for_better(st, rest: float):
    """Before a batch of a launch whose rest, at the quick code's pace, is longer than the better build has
    left to run: wait for that build, asleep (no watchdog time), while waiting still pays. A batch cannot
    change code while it runs, and quick code runs 1.7 to 11 times as long (bench/README.md, quick15): a
    65,536-thread curand_init with cuRAND's loops, one batch at opt=0's pace, was stopped by the watchdog at
    10 s; in batches of QUICK_BATCH_LANES that wait, its later launches ran opt=1's code in 0.8 s.

    Both sides are CPU seconds: the build's expected cost less the CPU time the child has had
    (``_child_cpu_seconds``), against the rest, which the quick code would need of the same cores. The
    wait ends when the child ends, or once the child has had ``rest`` CPU seconds during it (the quick code
    would have finished in that time), or on the launch's time limit. On a busy machine both get a share
    of a core, so wall time judged the build unfairly: the wait used to compare the rest with the wall time
    since the build started and waited at most the rest in wall seconds, so at quick15's load of 19 to 24
    the batch gave up before the build was done and ran the slow quick code."""
    child = st.better
    if getattr(child, "pid_of_parent", None) != os.getpid():
        return
    had = _child_cpu_seconds(child, st)
    if rest <= child.seconds - had:
        return
    start, wall_end = had, time.monotonic() + WAIT_WALL_FACTOR * rest
    while child.poll() is None and not pace.time_is_up():
        time.sleep(0.02)
        if _child_cpu_seconds(child, st) - start >= rest or time.monotonic() >= wall_end:
            break


# at most this many times the launch's rest in wall seconds, whatever the child's CPU time says (a child that
# gets no CPU at all, stopped or starved, is not waited for forever)
WAIT_WALL_FACTOR = 20.0


def _child_cpu_seconds(child, st) -> float:
    """The CPU seconds (user and system) the better build's child has used so far, from /proc/PID/stat;
    where that cannot be read (not Linux), the wall time since it started."""
    try:
        with open(f"/proc/{child.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return time.monotonic() - st.better_since


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


_CHILDREN: list = []        # better_code.py processes of this process (end_children)
_QUICK: list = []           # (process id, tier state, its quick code's better entry) of kernels that ran quick code


def _take_better(program, df, st):
    """The child building the better code has ended, its code in the disk cache (better_code.py puts it
    there): load it into the kernel (the next batch runs it); where the child failed, the quick code
    stays. Not while another kernel's build holds LLVM (``_BUILD_LOCK``): a later batch asks again."""
    child = st.better
    if getattr(child, "pid_of_parent", None) != os.getpid():
        st.better = False       # a forked process: the child is its parent's (False: none again for this kernel)
        return
    if not _BUILD_LOCK.acquire(blocking=False):
        return
    try:
        _load_better(program, df, st, child)
    finally:
        _BUILD_LOCK.release()


def _load_better(program, df, st, child):
    st.better = False
    if child in _CHILDREN:
        _CHILDREN.remove(child)
    if child.returncode != 0 or not _promoted(child.key):
        return
    try:
        fused = _build(program, df)
    except Exception:           # noqa: BLE001  (LLVM refused the object: the quick code goes on)
        return
    if fused:
        st.fused = fused


def _promoted(key) -> bool:
    """Does the disk cache hold ``key``'s better code now (its entry without ``better``)? Not where the
    entry is gone (the cache cleared meanwhile): the kernel is not built again for that."""
    try:
        return "better" not in json.loads((cache_dir() / f"{key}.json").read_text())
    except (OSError, ValueError):
        return False


# at a program's end, quick code that has run (in it and the runs before) this share of its better build's
# estimate gets that build, left to finish after the program (end_children): a program run once is
# usually run again. sortingNetworks' sort kernel ran 12 s a run against an estimate of 16 s
EXIT_SHARE = 0.5


def after_exit() -> bool:
    """May better builds outlive the program (``CUDALAB_BUILD_AFTER_EXIT``, on unless 0)? The tests turn it
    off (conftest.py): nothing of theirs may be left running after them."""
    return os.environ.get("CUDALAB_BUILD_AFTER_EXIT", "1").strip() != "0"


def end_children():
    """At a program's end (atexit; ``cudalab``'s entry calls it before its quick exit). A better build
    under way is left to finish and put its code in the disk cache (better_code.py), and quick code that
    has run ``EXIT_SHARE`` of its build's estimate gets its build started so, so that the program's next
    run has the better code; the time the quick code has run is kept in the cache otherwise
    (``note_native`` adds it up). Not past the program's CPU-time limit (``ulimit -t``: nothing is
    started after a program stopped by it, nor a build its limit would not have left time for) nor with
    ``after_exit`` off: then a build under way is ended, its half-written file removed."""
    mine = [c for c in _CHILDREN if getattr(c, "pid_of_parent", None) == os.getpid()]
    quick = [(st, better) for pid, st, better in _QUICK if pid == os.getpid() and st.better is None]   # (not a fork's)
    _CHILDREN[:] = [c for c in _CHILDREN if c not in mine]
    _QUICK.clear()
    left = pace.cpu_time_left()
    if not after_exit() or left <= 0:
        for child in mine:
            if child.poll() is None:
                child.kill()
                child.wait()
        _remove_partial(mine)
        return
    for st, better in quick:
        ran = better.get("ran", 0.0) + st.native_seconds
        if ran >= EXIT_SHARE * better["seconds"] and better["seconds"] <= left:
            st.better = _start_better(better) or False
            if st.better:
                _LEFT.append(st.better)
        else:
            _keep_ran(better["key"], ran)


_LEFT: list = []            # better builds end_children left running (tests wait for them)


def _remove_partial(children):
    for tmp in cache_dir().glob("*.better.o.*.tmp") if children else ():
        try:
            pid = int(tmp.name.split(".")[-2])
            if any(c.pid == pid for c in children):
                tmp.unlink(missing_ok=True)
        except (ValueError, OSError):
            pass


def _keep_ran(key, ran: float):
    """The quick code of ``key`` has run ``ran`` CPU seconds in all: kept in its cache entry's ``better``."""
    folder = cache_dir()
    try:
        meta = json.loads((folder / f"{key}.json").read_text())
        if not meta.get("better"):
            return
        meta["better"]["ran"] = round(ran, 3)
        tmp = folder / f"{key}.json.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(meta))
        tmp.replace(folder / f"{key}.json")
    except (OSError, ValueError):
        pass


atexit.register(end_children)


def _tier(df):
    st = df.__dict__.get("_tier")
    if st is None:
        st = df._tier = _Tier()
    return st


# ------------------------------------------------------------------ planning groups

@dataclasses.dataclass
class Group:
    start: int
    end: int                    # exclusive
    regs: list                  # register names, pointer-table order
    restore: list               # registers read and written: restored before a bail-out rerun
    writes: set                 # registers the group writes
    outputs: set                # registers stored without being read: every lane run gets a new value
    stored: list                # registers the group stores (written and live after it)
    symbols: list
    name: str
    check_name: str | None      # address pre-check of a leading atomic
    params: list                # pcs of the ld.param instructions of rematerialized registers


_READ_ONLY = ("param", "const")


def _access(inst):
    """(classes, writes) of a memory instruction: classes of memory it may touch across lanes."""
    from .memops import _space
    op = inst.opcode
    if op in ("tex", "tld4", "suld", "sust"):   # texels are device memory (texture_native)
        return ("global",), op == "sust"
    if op in ("ld", "ldu", "st", "atom", "red"):
        sp = _space(inst)
        if sp in _READ_ONLY or sp == "local":
            return (), False
        classes = ("global", "shared") if sp == "generic" else ("shared",) if sp == "shared" else ("global",)
        return classes, op != "ld" and op != "ldu"
    return (), False


_WRITES_FIRST = {"mov", "cvta", "add", "sub", "mul", "mad", "fma", "div", "rem", "sqrt", "rsqrt", "rcp", "and",
                 "or", "xor", "not", "shl", "shr", "neg", "abs", "min", "max", "setp", "selp", "cvt", "ld", "ldu",
                 "atom", "shfl", "vote", "activemask", "redux", "tex", "tld4", "suld"}


def _regs(o):
    from .decode import _regs as regs_of
    return set(regs_of(o))


def live_after(df):
    """Per instruction index, the registers that may be read after it (backward dataflow over the
    CFG). A group stores only those: the others are dead temporaries. Over-approximates: an unknown
    instruction defines nothing and reads every register it names; None where control flow is
    not plain (brx.idx), so everything is stored."""
    return liveness(df)[1]


def liveness(df):
    """(live_in, live_out) per instruction index (see live_after); (None, None) with brx.idx."""
    if "_liveness" in df.__dict__:
        return df._liveness
    f = df.func
    n = len(f.insts)
    uses, defs, succ = [], [], []
    for i, inst in enumerate(f.insts):
        ops = inst.operands
        if inst.opcode == "brx":
            df._liveness = (None, None)
            return df._liveness
        writes = inst.opcode in _WRITES_FIRST and ops and ops[0][0] in ("reg", "vec", "pair")
        d = _regs(ops[0]) if writes else set()
        u = set()
        for o in (ops[1:] if writes else ops):
            u |= _regs(o)
        if inst.guard:
            u.add(inst.guard[0])
            d = set()                       # a guarded write may not happen: the old value lives on
        u |= hidden_reads(df, i)
        uses.append(u)
        defs.append(d)
        nxt = []
        if inst.opcode == "bra":
            nxt.append(f.labels[ops[0][1]])
            if inst.guard:
                nxt.append(i + 1)
        elif inst.opcode in ("ret", "exit", "trap") and not inst.guard:
            pass
        else:
            nxt.append(i + 1)
        succ.append([s for s in nxt if s < n])
    # sets as bits of Python ints: a kernel of 35,000 registers and 5,000 instructions (cuda-samples'
    # cudaTensorCoreGemm) held 2 x 5,000 sets of thousands of names, over 12 GB; as bits, 40 MB
    bit = {r: 1 << k for k, r in enumerate(f.regs)}
    for r in set().union(*uses, *defs) - bit.keys():
        bit[r] = 1 << len(bit)
    mask = lambda names: sum(bit[r] for r in names)     # noqa: E731
    uses, defs = [mask(u) for u in uses], [mask(d) for d in defs]
    live_in, out = [0] * n, [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            o = 0
            for s in succ[i]:
                o |= live_in[s]
            li = uses[i] | (o & ~defs[i])
            if li != live_in[i] or o != out[i]:
                live_in[i], out[i] = li, o
                changed = True
    names = list(bit)
    df._liveness = (_Live(live_in + [0], names), _Live(out, names))    # live_in[n]: the function's end
    return df._liveness


class _Live:
    """Registers live at each instruction, kept as bits (``liveness``); indexing gives a frozenset."""

    def __init__(self, bits: list, names: list):
        self.bits, self.names = bits, np.array(names, object)
        self._sets = {}         # i -> the frozenset, made once: planning CUB's onesweep kernel asked 400,000 times

    def __len__(self):
        return len(self.bits)

    def __getitem__(self, i) -> frozenset:
        got = self._sets.get(i)
        if got is None:
            x = self.bits[i]
            on = np.unpackbits(np.frombuffer(x.to_bytes((x.bit_length() + 7) // 8, "little"), np.uint8),
                               bitorder="little") if x else ()
            got = self._sets[i] = frozenset(self.names[np.flatnonzero(on)]) if x else frozenset()
        return got


def hidden_reads(df, pc) -> frozenset:
    """Registers that the entry at ``pc`` of ``df.code`` reads although its instruction names none of them:
    a k-loop program (mma_runs.Run) reads its tiles from the base register its loads' addresses lead
    back to (``Run.folded``), which only the adds before the loop name. Liveness counts them as read
    there, so native code that runs those adds stores the base for the program: left out,
    tf32TensorCoreGemm's program found its base missing at every call in native code."""
    return getattr(df.code[pc][1], "hidden_reads", frozenset()) if pc < len(df.code) else frozenset()


def _signature(inst, f, d):
    """What decides whether the generator takes an instruction and whether it can bail out: its
    opcode, modifiers, guard, and its operands' kinds and register types (not their names)."""
    def op(o):
        k = o[0]
        if k == "reg":
            return (k, f.regs.get(o[1]), o[2])
        if k == "imm":
            return (k, o[2])
        if k == "sym":
            return (k, o[1] in d.param_offsets, o[1] in ("WARP_SZ", "_"), o[1] if o[1] in ("WARP_SZ", "_") else "")
        if k == "mem":
            return (k, None if o[1] is None else op(o[1]))
        if k in ("vec", "list"):
            return (k, tuple(op(x) for x in o[1]))
        if k == "pair":
            return (k, op(o[1]), op(o[2]))
        return o                         # special registers: by name
    return (inst.opcode, inst.mods, inst.guard is not None and f.regs.get(inst.guard[0]),
            tuple(op(o) for o in inst.operands), inst.opcode in ("add", "sub") and dec_contraction(inst, d) is not None)


def dec_contraction(inst, d):
    from .decode import _contraction
    return _contraction(inst, d)


def _compilable(df, d):
    """pc -> can bail out, for every instruction the generator takes (one trial per signature). Not the
    instructions inside a fused run of wmma instructions (mma_runs: a K_FUSED entry whose aux is its end):
    the run executes them as its own interpreted rows and jumps past their entries, so a group there
    would never run, yet _rematerialized would count its reads as compiled and leave a kernel
    parameter's register unstored for the run's address arithmetic to read (a null pointer)."""
    from llvmlite import ir
    from . import llvmgen as lg
    from .decode import DECODERS, _nop
    from .engine import K_FUSED, K_NORMAL
    f = df.func
    in_runs = set()
    for pc, (kind, _, _, end) in enumerate(df.code):
        if kind == K_FUSED:
            in_runs.update(range(pc + 1, end))
    scratch = ir.Module(name="scratch")
    scratch_find = lg.find_function(scratch)
    info = {}                                   # pc -> can bail out (present: compilable)
    trial = None                                # one scratch builder takes every trial until one fails
    tried = {}                                  # instruction signature -> can bail out, None: not compilable
    for pc in range(len(df.code)):
        kind, _, inst, _ = df.code[pc]
        if kind != K_NORMAL or inst.opcode not in lg.GENERATORS or pc in in_runs:
            continue
        if inst.opcode in ("membar", "fence") and DECODERS.get(inst.opcode) is not _nop:
            continue
        sig = _signature(inst, f, d)
        if sig not in tried:
            if trial is None:
                trial = lg.GroupBuilder(scratch, f"t{pc}", f, d, [], scratch_find)
            bails = trial.bails
            try:
                trial.emit(inst)
                tried[sig] = trial.bails > bails
            except Exception:   # noqa: BLE001  (lg.Skip, or a form the generator misreads: interpret it)
                trial, tried[sig] = None, None
        if tried[sig] is not None:
            info[pc] = tried[sig]
    return info


def plan(df, module, sink):
    """Split the kernel into regions (regions.py) and groups and emit each into ``sink`` (an
    llvmlite module). Instructions the generator refuses stay interpreted. -> (groups, regions)"""
    from . import llvmgen as lg
    from . import regions as rg
    from .engine import _DecodeContext
    f = df.func
    d = _DecodeContext(f, module, df.param_offsets)
    n = len(df.code)
    info = _compilable(df, d)
    live_in, live = liveness(df)
    spans, cuts = [], {}
    if _regions_on():
        cuts = rg.cuts(df, info)
        with_cuts = rg.find(df, _cut_info(df, d, info, cuts), live, cuts) if cuts else []
        starts = {s for s, _ in with_cuts}        # (one region per start: the one with cuts goes further)
        spans = [sp for sp in rg.find(df, info, live) if sp[0] not in starts] + with_cuts
    boundaries = set(f.labels.values()) | set(df.reconv.values())
    for s, e in spans:
        boundaries |= {s, e}
    find = lg.find_function(sink)
    extents = []
    pc = 0
    while pc < n:
        if pc not in info:
            pc += 1
            continue
        reads, writes = set(), set()
        end, bails = pc, False
        atomic = df.code[pc][2].opcode in ("atom", "red")
        while end in info and (end == pc or end not in boundaries):
            inst = df.code[end][2]
            classes, wr = _access(inst)
            if any(c in writes or (wr and c in reads) for c in classes):
                break
            if end != pc and (inst.opcode in ("atom", "red", "shfl") or atomic and info[end]):
                break             # atomics and shuffles start their group; nothing may bail out after an atomic
            bails = bails or info[end]
            (writes if wr else reads).update(classes)
            end += 1
        extents.append((pc, end, bails, atomic))
        pc = end
    in_regions = set()
    for s, e in spans:
        in_regions.update(range(s, e))
    remat = _rematerialized(df, extents, d, in_regions)
    remat_pcs = [k for k in range(n) if df.code[k][2] in remat.values()]
    groups, symbols = [], []
    for pc, end, bails, atomic in extents:
        name = f"g{pc}"
        gb = lg.GroupBuilder(sink, name, f, d, symbols, find, remat=remat)
        for k in range(pc, end):
            gb.emit(df.code[k][2])
        gb.finish(None if live is None else live[end - 1])
        check = None
        if atomic:
            check = f"c{pc}"
            cb = lg.GroupBuilder(sink, check, f, d, symbols, find, regs=gb.regs, check_only=True, remat=remat)
            cb.emit(df.code[pc][2])
            cb.finish()
        # only registers the native code stores can differ after a bail-out (the others stay in SSA)
        restore = sorted(gb.loaded & set(gb.stored)) if bails and not atomic else []
        groups.append(Group(pc, end, gb.regs, restore, gb.written, set(gb.stored) - gb.loaded, gb.stored,
                            symbols, name, check, list(remat_pcs)))
    regions = []
    plain = [(s2, e2) for s2, e2 in spans if not any(p in cuts for p in range(s2, e2))]
    for s, e in spans:
        # (a loop's own region, entered only where the interpreter is inside the loop, goes without gangs;
        # but not one inside a region with cuts only, whose threads stop before a branch that parts them:
        # eigenvalues' `if (tid < active) for (k ...)`, a Sturm count over a chunk, runs in this region)
        inner = any(s2 < s < e2 for s2, e2 in plain)
        held = [[p, cuts[p]] for p in range(s, e) if p in cuts]
        r = None
        blockwise = [] if held else _blockwise(df, s, e)
        if blockwise:
            r = _emit_region(df, d, s, e, live_in, live, symbols, sink, find, blockwise)
        if r is None:       # (or thread by thread, where block by block is refused)
            r = _emit_region(df, d, s, e, live_in, live, symbols, sink, find, held, gangs=not inner)
        if r is not None:
            regions.append(r)
    return groups, regions


def _cut_info(df, d, info, cuts):
    """``info`` (``_compilable``: pc -> may bail out) with what only a region with cuts runs natively, each
    of ``CUT_HOOKS`` adding its instructions in turn: the instruction table given to ``regions.find`` for
    those regions. Groups and regions without cuts are planned on ``info`` alone."""
    for hook in CUT_HOOKS:
        info = hook(df, d, info, cuts)
    return info


def _with_copies(df, d, info, cuts):
    """``info`` plus the cp.async, commit and wait instructions native code runs inside a region with
    cuts (async_native: a queue per block); groups and regions without cuts leave them to asyncops."""
    from . import async_native
    copies = async_native.eligible(df)
    return {**info, **copies} if copies else info


# the special function unit's instructions a region with cuts computes from mufu.py's tables (llvmgen._ex2,
# _rsqrt_table, _rcp_table): libdevice's expf ends with ex2.approx, a tiled n-body's rsqrtf is rsqrt.approx,
# --use_fast_math's 1.0f / x rcp.approx.ftz
TABLE_LOOKUPS = frozenset({"ex2", "rsqrt", "rcp"})


def _with_table_lookups(df, d, info, cuts):
    """``info`` with the ex2.approx and rsqrt.approx instructions (``TABLE_LOOKUPS``) that lie inside a loop around cuts (a barrier loop) and
    that a region with cuts may compute natively (llvmgen._ex2, ``tables``), for finding those regions.
    Interpreted, such an instruction ended the region at every turn of the loop: a Monte Carlo
    assignment's 100,000 rounds of ``__syncthreads()``, each with an ``expf`` (bench/README.md, lanes17
    round). Groups and regions without cuts leave it to the interpreter's gather over the batch."""
    from llvmlite import ir
    from . import llvmgen as lg
    from .engine import K_BRA, K_NORMAL
    code = df.code
    loops = [(code[p][3], p) for p in range(len(code))
             if code[p][0] == K_BRA and code[p][3] <= p and any(code[p][3] <= q <= p for q in cuts)]
    extra = {}
    for pc, (kind, _, inst, _) in enumerate(code):
        if kind != K_NORMAL or pc in info or inst.opcode not in TABLE_LOOKUPS or not any(h <= pc <= t for h, t in loops):
            continue
        scratch = ir.Module(name="scratch")
        trial = lg.GroupBuilder(scratch, f"t{pc}", df.func, d, [], lg.find_function(scratch))
        trial.tables = True
        try:
            trial.emit(inst)
        except Exception:   # noqa: BLE001  (lg.Skip: another form; it stays interpreted)
            continue
        extra[pc] = trial.bails > 0
    return {**info, **extra} if extra else info


# (df, d, info, cuts) -> info: the instructions a region with cuts takes beyond the generator's own (_cut_info)
CUT_HOOKS = (_with_copies, _with_table_lookups)


def _blockwise(df, s, e):
    """A kernel's region of straight code from its first instruction (if/else diamonds, no loops:
    an elementwise ``if (i < n) c[i] = a[i] + b[i]``) runs block by block as a region with cuts does
    (regiongen.CutRegionBuilder), its one cut the kernel's start ("start": every thread of the
    block is there): its addresses are checked for the whole block at once (regions.prechecks),
    and in 1-D blocks threadIdx.x is the lane loops' counter (_one_d_version), where thread by
    thread (RegionBuilder) each access looks its allocation up and threadIdx is read from an array.
    Loops stay with RegionBuilder (turns, gangs). -> its cuts, or [] to build it thread by thread."""
    from .engine import K_BRA
    code = df.code
    if s != 0 or not df.func.is_entry or any(code[p][0] == K_BRA and code[p][3] <= p for p in range(s, e)):
        return []
    return [[s, "start"]]


def _emit_region(df, d, s, e, live_in, live_out, symbols, sink, find, cuts=(), gangs=True):
    """A region's function into ``sink`` (tried in a scratch module first: the generator may
    still refuse something there, and a half-built function would spoil the module). ``cuts``:
    [[pc, kind], ...] inside it (regions.py, "Cuts"); ``gangs``: may its loops run lanes in gangs."""
    from llvmlite import ir
    from . import llvmgen as lg
    from . import regions as rg
    from .engine import K_BRA, SPIN_LIMIT
    from . import async_native
    from .regiongen import CutRegionBuilder, RegionBuilder
    code = df.code
    named = rg.named(code, s, e)
    written = rg.defined(code, s, e) & named
    cols = {name: k for k, name in enumerate(sorted(written))}
    inputs = sorted(live_in[s] & named)
    outputs = sorted(live_in[e] & written)
    segs, stops, stored, bounds, remat_at = (
        _segments(df, d, s, e, [p for p, _ in cuts], live_in, named, outputs, live_out) if cuts
        else ([], {}, set(), [], {}))
    if not cuts:
        for p in range(s, e):
            live = sorted(live_in[p] & written)
            if live:
                stops[p] = live
        stored = set(outputs)
    stops = {p: [[name, cols[name]] for name in live] for p, live in stops.items()}
    generic = rg.restricts_generic(code, s, e)
    turns = rg.turn_loops(code, s, e, live_out) if not cuts else []
    gangs = rg.gang_loops(code, s, e, turns, df.param_offsets) if gangs else {}
    name = f"r{s}"

    warps = [True]          # (warpvec: runs of shuffle segments as vectors, unless they fail to build)
    uniform = rg.uniform_defs(df, df.param_offsets, s, e) if cuts else {}     # (read only: every attempt's)
    copies = async_native.holds_copies(code, s, e)

    def attempt(target, gangs, one_d=False, two_d=False):
        scratch = target is not sink
        rb = (CutRegionBuilder if cuts else RegionBuilder)(
            target, name + ("_1d" if one_d else "_2d" if two_d else ""), df.func, d,
            list(symbols) if scratch else symbols,
            lg.find_function(target) if scratch else find, code, s, e, live_in, SPIN_LIMIT, generic)
        rb.one_d, rb.two_d = one_d, two_d
        rb.copies = bool(cuts) and copies
        rb.warp_vectors = warps[0]
        if two_d:       # (the general version's table order: the Runner passes both one table)
            rb.regs, rb.reg_slot = list(regs_of_general), {r: k for k, r in enumerate(regs_of_general)}
        if cuts:
            rb.build_cuts(named, segs, cols, uniform)
        else:
            rb.build(named, inputs, outputs, cols, turns, gangs)
        return rb
    # tried in a scratch module first (the generator may still refuse something there, and a
    # half-built function would spoil the module); with gangs, then without (a gang's body may bail out)
    for tried, warps[0] in [(g, w) for g in ([gangs, {}] if gangs else [{}]) for w in ((True, False) if cuts else (True,))]:
        try:
            attempt(ir.Module(name="scratch"), tried)
        except Exception:   # noqa: BLE001  (lg.Skip: the lanes run this stretch interpreted)
            continue
        break
    else:
        return None
    rb = attempt(sink, tried)
    regs_of_general = tuple(rb.regs)
    one_d = ""
    if cuts and _one_d_version(code, s, e):
        try:
            same = attempt(ir.Module(name="scratch"), tried, one_d=True).regs == rb.regs
        except Exception:   # noqa: BLE001  (no second version: the general one runs every block)
            same = False
        if same:
            one_d = attempt(sink, tried, one_d=True).fn.name
    two_d = _rows_version(code, s, e, cuts, uniform, rb.regs,
                          lambda: attempt(ir.Module(name="scratch"), tried, two_d=True),
                          lambda: attempt(sink, tried, two_d=True))
    return rg.Region(s, e, name, rb.regs, outputs, symbols, len(cols), bool(turns),
                     # (a buffered register's array is written only where the block leaves native code)
                     sorted([p, c] for p, c in stops.items()), sorted((stored | set(getattr(rb, "buffered", ()))) - live_in[s]),
                     [list(c) for c in cuts],
                     [int(b) for b in bounds], sorted({int(code[p][3]) for p in bounds if code[p][0] == K_BRA
                                                      and code[p][3] <= p and code[p][3] > s}),
                     sorted([int(p), [int(q) for q in qs]] for p, qs in remat_at.items()), sorted(int(h) for h in tried),
                     one_d, two_d, copies=bool(cuts) and copies)


ONE_D_MOST = 300        # PTX instructions of a region with cuts that gets a second version for 1-D blocks


def _rows_version(code, s, e, cuts, uniform, regs, scratch, build) -> str:
    """The name of the region's version for blocks of rows (regiongen.CutRegionBuilder._rows:
    threadIdx.x the inner lane loop's counter, threadIdx.y the outer one's), or "": built for a
    region with cuts that reads ``%tid.y`` and not ``%tid.z`` (a 2-D tile's ``As[ty][tx]``), of at
    most ``ONE_D_MOST`` instructions, where the version names the same registers as the general
    one (the Runner passes both the same table)."""
    tids = _threadidx_read([code[p][2] for p in range(s, e)] + list(uniform.values()))  # (and what segments compute again)
    if not cuts or e - s > ONE_D_MOST or "y" not in tids or "z" in tids:
        return ""
    try:
        if scratch().regs != regs:
            return ""
    except Exception:   # noqa: BLE001  (no such version: the general one runs every block)
        return ""
    return build().fn.name


def _one_d_version(code, s, e) -> bool:
    """Does a region with cuts get a second native version for blocks of one dimension
    (regiongen.CutRegionBuilder.special: threadIdx.x as the lane loops' counter, so they
    vectorize)? Where it reads ``%tid.x`` and no other component of threadIdx (a kernel that reads
    ``%tid.y`` is launched with 2-D blocks), and is small: the second version doubles the region's
    build time, which for a CUB kernel's thousands of instructions is many seconds."""
    return e - s <= ONE_D_MOST and _threadidx_read(code[p][2] for p in range(s, e)) == {"x"}


def _threadidx_read(insts) -> set:
    """The components of threadIdx ("x", "y", "z") that ``insts`` read (``%tid.x`` ...)."""
    return {o[2] for inst in insts for o in inst.operands
            if isinstance(o, tuple) and len(o) > 2 and o[0] == "sreg" and o[1] == "tid"}


def _segments(df, d, s, e, cut_pcs, live_in, named, outputs, live_out):
    """What CutRegionBuilder.build_cuts needs per segment of a region with cuts (see there), the
    registers saved where a thread stops at each pc, and the registers the function stores."""
    from . import regions as rg
    from .engine import K_BRA
    code = df.code
    bounds, jumps = rg.uniform_jumps(df, s, e, cut_pcs, live_out)
    uniform = rg.uniform_defs(df, df.param_offsets, s, e)
    in_loops = {q for p in jumps if code[p][3] <= p for q in range(code[p][3], p + 1)}
    # (and those defined before the region, on every path to it: rg.uniform_defs; computed again,
    # threadIdx among their sources makes an address one LLVM can follow in the 1-D and rows versions)
    inside = {r: inst.index for r, inst in uniform.items()
              if s <= inst.index < e and inst.index not in in_loops or inst.index < s}
    # a value is computed again from the values it is computed from that are computed again too, or
    # else from their arrays (CutRegionBuilder._recompute): those must be ones the region never
    # writes, since a register written inside it holds its array's value only where it is live
    written = rg.defined(code, s, e)
    while True:
        fed = {r for r, inst in uniform.items() if r in inside
               and any(x in written and x not in inside for o in inst.operands[1:] for x in _regs(o))}
        if not fed:
            break
        for r in fed:
            del inside[r]
    block_uniform = rg.block_uniform(df, s, e, bounds)
    bounds = _uniform_tails(code, s, e, bounds, jumps, block_uniform)
    bounds = _guard_splits(df, s, e, bounds, block_uniform, live_in)
    sources = {rg.cross_source(code, c) for c in cut_pcs} - {None}
    kept = set(outputs) | sources                 # uniform registers that still go through the arrays

    long = set()

    def closure(names, before):
        """``names`` and the uniform registers they are computed from, in definition order."""
        out, todo = set(), [r for r in names if r in inside and inside[r] < before and r not in long]
        while todo:
            r = todo.pop()
            if r not in out:
                out.add(r)
                todo += [x for o in uniform[r].operands[1:] for x in _regs(o) if x in inside]
        return sorted(out, key=inside.get)
    # a value that takes more than REMAT_MOST instructions to compute again goes through its array
    # (one load); the values it is computed from may still be computed again
    long = {r for r in inside if len(closure([r], e)) > REMAT_MOST}
    kept |= long
    before = {r for r, pc in inside.items() if pc < s}      # (their arrays hold them: nothing to save)
    unstored = set(inside) - kept
    segs, stops, stored, remat_at = [], {}, set(), {}
    for a, z in rg.segments(s, e, bounds):
        # where a block stops (at a segment's start: a jump its threads disagree on, a failed
        # address check; at its end: a thread stopped in it), the uniform values live there that
        # no array holds are computed by the interpreter for it (regions.Runner._rematerialize)
        for pc in (a, z) if z != e else (a,):
            live = sorted(set(closure(live_in[pc] & set(inside), pc)) & live_in[pc] - kept - before)
            if live:
                remat_at[pc] = [inside[r] for r in closure(live, pc)]
                stored |= set(live)
        if a in jumps:
            inst = code[a][2]
            segs.append(dict(first=a, end=z, jump=code[a][3], guard=inst.guard))
            continue
        src = rg.cross_source(code, a) if a in cut_pcs else None
        here = rg.named(code, a + 1, z) | (rg.named(code, a, a + 1) - {src}) if src else rg.named(code, a, z)
        defined = rg.defined(code, a, z) & named
        remat = closure(live_in[a] & here, a)
        parts = rg.phases(code, a, z, src, df.reconv, live_out)
        order = [q for part in parts for q in part]
        pos = {q: k for k, q in enumerate(order)}
        phases, all_remat = [], set(remat)
        for k, part in enumerate(parts):
            # where lanes may wait for this phase: its first pc, and pcs that earlier phases lead to
            here_pcs = set(part)
            into = {code[p][3] for p in pos if p not in here_pcs and code[p][0] == K_BRA}
            into |= {p + 1 for p in pos if p not in here_pcs and (code[p][0] != K_BRA or code[p][2].guard is not None)}
            lands = {part[0]} | (here_pcs & into)
            resume = []
            for q in sorted(lands, key=pos.get) if k else ():
                rq = closure(live_in[q] & here, q)
                all_remat |= set(rq)
                resume.append(dict(pc=q, inputs=sorted((live_in[q] & here) - set(rq)), remat=rq))
            phases.append(dict(pcs=part, first=pos[part[0]] if part else len(order), resume=resume))
        seg = dict(first=a, end=z, inputs=sorted((live_in[a] & here) - set(remat)), defined=defined, remat=remat,
                   outputs=sorted(live_in[z] & defined - unstored), phases=phases, unstored=sorted(unstored),
                   pos=pos, narrow=rg.tid_guard(df, a, z, block_uniform, live_in),
                   same=sorted((live_in[a] & here) & block_uniform - set(remat)),
                   uniform=len(parts) == 1 and all(_computes_uniform(code[p], block_uniform, p == a) for p in range(a, z)))
        if seg["narrow"] and seg["narrow"]["U"][0] == "reg" and seg["narrow"]["U"][1] not in seg["inputs"]:
            seg["narrow"] = None        # (U is read from the first thread's array: only one the segment loads)
        segs.append(seg)
        stored |= set(seg["outputs"])
        for p in range(a, z):
            live = sorted(live_in[p] & (defined | all_remat - before))
            if live:
                stops[p] = live
    return segs, stops, stored, bounds, remat_at


def _uniform_tails(code, s, e, bounds, jumps, uniform):
    """``bounds`` plus the start of each segment's tail of block-uniform arithmetic before a jump
    (a loop's ``offset <<= 1; offset < size``, behind a scan's shared-memory store): split off,
    it is a segment of its own that runs once per block (CutRegionBuilder._once) where each
    thread computed it, stored it and counted the loop's guard. Only where no branch of the
    segment passes the split (every thread runs the tail, as before)."""
    from . import regions as rg
    from .engine import K_BRA
    out = set(bounds)
    for a, z in rg.segments(s, e, bounds):
        if z not in jumps:
            continue
        u = z
        while u - 1 > a and _computes_uniform(code[u - 1], uniform, False):
            u -= 1
        if u < z and not any(code[p][0] == K_BRA and code[p][3] is not None and p < u < code[p][3]
                             for p in range(a, u)):
            out.add(u)
    return sorted(out)


def _guard_splits(df, s, e, bounds, uniform, live_in):
    """``bounds`` plus the pc where a thread-index guard that sends threads to the segment's end
    begins inside a segment (regions.tid_guard: ``v += __shfl_down_sync(..., v, 1); if ((threadIdx.x
    & 31) == 0) out[w] = v``; ``s[tid] = x; if (tid < 32) ...``): split off, the guarded part is a
    segment of its own that starts with the guard, which runs natively for the threads that stay
    only (CutRegionBuilder._narrowed), where before every thread of the block went through it
    and tested it. Only where no branch of the segment passes the split (every thread reaches the
    guard, as before); the registers live across it wait in the block's buffers as at any bound."""
    from . import regions as rg
    from .engine import K_BRA
    code = df.code
    out = set(bounds)
    for a, z in rg.segments(s, e, bounds):
        for u in range(a + 1, z - 2):
            if code[u][2].opcode not in ("setp", "and", "rem") or code[u][2].guard:
                continue
            if any(code[p][0] == K_BRA and code[p][3] is not None and p < u < code[p][3] for p in range(a, u)):
                break           # (a branch passes it: so does every later pc's split)
            if rg.tid_guard(df, u, z, uniform, live_in) is not None:
                out.add(u)
                break
    return sorted(out)


def _computes_uniform(entry, uniform, first):
    """Does a code entry only compute a block-uniform register (regions.block_uniform: every
    definition of it is uniform arithmetic), or is it the barrier a segment starts with?"""
    from . import regions as rg
    from .engine import K_NORMAL
    kind, _, inst, _ = entry
    if first and inst.opcode in ("bar", "barrier"):
        return True
    dest = rg.defined([entry], 0, 1)
    return kind == K_NORMAL and inst.opcode != "ld" and not inst.guard and bool(dest) and dest <= uniform


def _rematerialized(df, extents, d, in_regions=()):
    """Registers that hold a kernel parameter (one unguarded ``ld.param`` in the entry block, the
    register's only definition) and that only compiled groups read: every group reads the parameter
    again instead of the register's array, and nothing stores it (a uniform value per lane is
    memory traffic for nothing). A bail-out rerun loads them first (_Runner._interpret)."""
    f = df.func
    inside = set()
    for start, end, _, _ in extents:
        inside.update(range(start, end))
    inside -= set(in_regions)                   # a region's stops hand its registers to the interpreter
    first_jump = min([i for i in f.labels.values()] + [i.index for i in f.insts if i.opcode in ("bra", "brx", "call")]
                     + [len(f.insts)])
    named_outside, defs = set(), {}
    for inst in f.insts:
        ops = inst.operands
        if ops:
            for r in _regs(ops[0]):
                defs[r] = defs.get(r, 0) + 1
        if inst.index not in inside:
            for o in ops:
                named_outside |= _regs(o)
            if inst.guard:
                named_outside.add(inst.guard[0])
        named_outside |= hidden_reads(df, inst.index)
    out = {}
    for inst in f.insts[:first_jump]:
        ops = inst.operands
        if (inst.opcode == "ld" and not inst.guard and inst.index in inside and ops[0][0] == "reg"
                and "param" in inst.mods and ops[1][1] and ops[1][1][0] == "sym" and ops[1][1][1] in d.param_offsets
                and defs.get(ops[0][1]) == 1 and ops[0][1] not in named_outside):
            out[ops[0][1]] = inst
    return out


# ------------------------------------------------------------------ native code

_JIT: dict = {}


def _jit():
    if not _JIT:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()

        def machine(opt=2):
            return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                                features=llvm.get_host_cpu_features().flatten(), opt=opt)
        # an execution engine takes ownership of its target machine (and frees it with itself), so
        # each engine gets its own; "tm" only optimizes and emits object code ("tm_big": big modules,
        # "tm_fast": modules with a huge basic block, FAST_CODEGEN_BLOCK)
        _JIT.update(llvm=llvm, tm=machine(), tm_big=machine(1), tm_fast=machine(0), machine=machine)
    return _JIT


def fingerprint(df) -> str:
    """What the native code of a kernel depends on: its instructions, registers, parameters' offsets
    and labels' positions, the registers k-loop programs read unnamed (``hidden_reads``: native code
    stores them), and this tier's own source (a changed generator never loads old code).
    Not the names of the kernel, its parameters, labels and variables (``symbol_tokens``): native
    code reads a parameter at its offset and a variable's address from a table filled by name at
    launch. So a kernel built once serves every program that has the same body under other
    names: CUB's kernels live in a namespace named after the architectures a build asks for
    (cuda-samples build for nine, ``cub::_V_300200_SM_800``; for sm_90 alone, ``..._SM_900``), and
    a label's name counts the functions before it in the module."""
    if "_fingerprint" not in df.__dict__:
        f = df.func
        tokens = symbol_tokens(df)
        from .warpvec import enabled as warp_vectors
        h = hashlib.sha256(_tier_version().encode() + _regions_on().to_bytes(1, "little")
                           + warp_vectors().to_bytes(1, "little"))
        h.update(repr((f.is_entry, sorted(f.regs.items()), sorted(df.param_offsets.values()),
                       sorted(f.labels.values()))).encode())
        for i in f.insts:
            h.update(repr((i.opcode, i.mods, _renamed(i.operands, tokens), i.guard)).encode())
        # (what native code stores depends on the programs' folded bases too: mma_runs may fold otherwise)
        h.update(repr([(pc, sorted(hidden_reads(df, pc))) for pc in range(len(df.code)) if hidden_reads(df, pc)]).encode())
        df._fingerprint = h.hexdigest()[:32]
    return df._fingerprint


# symbols the generator reads by name (llvmgen: the warp size, the sink "_")
_OWN_NAMES = ("WARP_SZ", "_")


def symbol_tokens(df) -> dict:
    """name -> token for every symbol a kernel's instructions name: a parameter by its offset, a
    label by its instruction's index, any other (variables, functions) by its order of first use.
    The disk cache keeps tokens where native code lists symbols (``Group.symbols``), so that code
    found under a fingerprint serves a kernel that names them otherwise."""
    if "_symbol_tokens" not in df.__dict__:
        out = {name: f"%param{offset}" for name, offset in df.param_offsets.items()}
        out.update((name, f"%label{pc}") for name, pc in df.func.labels.items())

        for inst in df.func.insts:
            for o in leaves(inst.operands):
                if o[0] == "sym" and o[1] not in out and o[1] not in _OWN_NAMES:
                    out[o[1]] = f"%symbol{len(out)}"
        df._symbol_tokens = out
    return df._symbol_tokens


def _renamed(operands, tokens):
    """Operands with every symbol's name replaced by its token (``symbol_tokens``)."""
    def one(o):
        if o[0] == "sym":
            return ("sym", tokens.get(o[1], o[1]))
        if o[0] in ("vec", "list"):
            return (o[0], tuple(one(x) for x in o[1]))
        return tuple(one(x) if isinstance(x, tuple) else x for x in o)
    return tuple(one(o) for o in operands)


_VERSION: list = []


def _tier_version():
    if not _VERSION:
        here = Path(__file__).parent
        sources = ("compiled.py", "llvmgen.py", "regions.py", "regiongen.py", "better_code.py", "texture_native.py",
                   "texture.py", "warpvec.py", "async_native.py")
        _VERSION.append(hashlib.sha256(b"".join((here / n).read_bytes() for n in sources))
                        .hexdigest())
    return _VERSION[0]


def _on_disk_once(df, st) -> bool:
    """Compiled before (by this or an earlier process): loading it costs milliseconds. Asked at a
    kernel's first launch only; a kernel not there then is built, if ever, by this process."""
    if st.looked_on_disk:
        return False
    st.looked_on_disk = True
    return (cache_dir() / f"{fingerprint(df)}.json").exists()


def _build(program, df):
    """The kernel's fused code: groups and regions planned, generated and optimized by LLVM, or
    loaded from the disk cache; None when no instruction can be compiled."""
    from . import regions as rg
    from .engine import K_FUSED, K_REGION
    j = _jit()
    key = fingerprint(df)
    meta_path, obj_path = cache_dir() / f"{key}.json", cache_dir() / f"{key}.o"
    try:
        meta = json.loads(meta_path.read_text())
        names = {token: name for name, token in symbol_tokens(df).items()}
        symbols = [names.get(token, token) for token in meta["symbols"]]     # (one list: _context reads one)
        groups = [Group(**dict(g, writes=set(g["writes"]), outputs=set(g["outputs"]), symbols=symbols))
                  for g in meta["groups"]]
        regions = [rg.Region(**dict(r, symbols=symbols)) for r in meta["regions"]]
        obj = obj_path.read_bytes()
        better = meta.get("better")
        if better and not (cache_dir() / f"{key}.bc").exists():
            better = None
    except (OSError, ValueError, TypeError, KeyError):
        groups, obj = None, None
    if groups is None:
        from llvmlite import ir
        sink = ir.Module(name="cudalab_kernel")
        groups, regions = plan(df, program.module, sink)
        if not groups and not regions:
            return None
        obj, bitcode, better = _machine_code(j, str(sink), any(r.gangs for r in regions))
        _save(key, groups, regions, obj, symbol_tokens(df), better, bitcode)
    if not groups and not regions:
        return None
    engine = load_object(j, obj)
    code = list(df.code)
    for g in groups:
        fn = _CFUNC(engine.get_function_address(g.name))
        check = _CFUNC(engine.get_function_address(g.check_name)) if g.check_name else None
        first = dataclasses.replace(df.code[g.start][2], guard=None)    # the group evaluates its guards
        code[g.start] = (K_FUSED, _Runner(g, fn, check, df.code), first, g.end)
    fns = {r.name: (_RFUNC(engine.get_function_address(r.name)),
                    _RFUNC(engine.get_function_address(r.one_d)) if r.one_d else None,
                    _RFUNC(engine.get_function_address(r.two_d)) if r.two_d else None) for r in regions}
    for r in regions:
        fn, fn_1d, fn_2d = fns[r.name]
        code[r.start] = (K_REGION, rg.Runner(r, fn, code[r.start], df.code, df, fn_1d=fn_1d, fn_2d=fn_2d),
                         df.code[r.start][2], r.end)
    for r in regions:
        fn, fn_1d, fn_2d = fns[r.name]
        for h in r.heads:
            if code[h][0] != K_REGION:
                code[h] = (K_REGION, rg.Runner(r, fn, code[h], df.code, df, entry=h, fn_1d=fn_1d, fn_2d=fn_2d),
                           df.code[h][2], r.end)
    fused = dataclasses.replace(df, code=code)
    fused._engine = engine
    fused._better = dict(better, key=key) if better else None      # quick code: how to get the better (note_native)
    return fused


def _machine_code(j, text, gangs):
    """(object code, bitcode, better) of the module ``text``: its usual code (``_optimize``; bitcode and
    better None), or for a module over ``QUICK_IR_BYTES`` the fast code generator's, with the optimized
    module as bitcode and what its better code needs: the level (``opt``) and the CPU seconds its build
    is expected to take (``seconds``)."""
    mod, tm = _passes(j, text, gangs)
    if len(text) <= QUICK_IR_BYTES:
        return tm.emit_object(mod), None, None
    huge = tm is j["tm_fast"]
    opt = BETTER_OPT
    bitcode = mod.as_bitcode()          # (before code generation, which changes the module)
    t0 = time.thread_time()
    obj = j["tm_fast"].emit_object(mod)
    took = time.thread_time() - t0
    return obj, bitcode, dict(opt=opt, seconds=took * (BETTER_COST_HUGE_BLOCK if huge else BETTER_COST))


def _optimize(j, text, gangs):
    """Object code of the module ``text``. For a kernel of thousands of unrolled PTX instructions
    LLVM's -O1 pipeline takes a minute (a 32x32 tiled product unrolled 16 times, 2,000 PTX lines and
    7.7 MB of IR: 42 s of passes, 20 s of code generation here): a module over ``BIG_IR_BYTES``
    gets the passes that matter for this code (``BIG_PASSES``: registers out of memory, instruction
    combining, control flow) and -O1 code generation instead, about 20 s in all, its
    product's launch as fast within the noise. ``gangs``: LLVM's SLP vectorizer packs a gang's
    lanes (regiongen._gang); elsewhere it would only cost build time. ``UNROLL_IR_BYTES``: see there."""
    mod, tm = _passes(j, text, gangs)
    return tm.emit_object(mod)


def largest_block(text: str) -> int:
    """The instructions of the largest basic block of the LLVM IR ``text``: what predicts the time of
    LLVM's code generation (``FAST_CODEGEN_BLOCK``). An instruction is an indented line; labels,
    function headers and closing braces start at the margin (20 ms for 6 MB of IR)."""
    best = run = 0
    for line in text.split("\n"):
        if line.startswith("  "):
            run += 1
        else:
            best, run = max(best, run), 0
    return max(best, run)


def parse_module(j, text, tm):
    """The LLVM IR ``text`` parsed and verified, for this process's CPU and ``tm``'s data layout."""
    llvm = j["llvm"]
    mod = llvm.parse_assembly(text)
    mod.verify()
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(tm.target_data)
    return mod


def function_passes(j, mod, pb, names):
    """The function passes ``names`` (llvmlite's add_NAME_pass) run over each function ``mod`` defines:
    a few cheap passes where the whole pipeline would take longer than the code saves."""
    fpm = j["llvm"].create_new_function_pass_manager()
    for name in names:
        getattr(fpm, f"add_{name}_pass")()
    for fn in mod.functions:
        if not fn.is_declaration:
            fpm.run(fn, pb)


def load_object(j, obj):
    """An execution engine holding the object code ``obj`` (its own target machine: the engine frees it)."""
    llvm = j["llvm"]
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), j["machine"]())
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


def _passes(j, text, gangs):
    """The module ``text`` parsed and optimized (``_optimize``), and the target machine for its code."""
    llvm = j["llvm"]
    big = len(text) > BIG_IR_BYTES
    tm = j["tm_big" if big else "tm"]
    mod = parse_module(j, text, tm)
    tuning = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
    tuning.slp_vectorization = gangs
    tuning.loop_unrolling = len(text) <= UNROLL_IR_BYTES
    pb = llvm.create_pass_builder(tm, tuning)
    if big:
        function_passes(j, mod, pb, BIG_PASSES)
    else:
        pb.getModulePassManager().run(mod, pb)
    # (the passes plan for the usual target machine; only the code comes from the fast one)
    return mod, j["tm_fast"] if largest_block(text) > FAST_CODEGEN_BLOCK else tm


def _save(key, groups, regions, obj, tokens, better=None, bitcode=None):
    """Object code and group list into the cache (written whole, then renamed: concurrent
    processes never read half a file), symbols as their tokens (``symbol_tokens``); quick code keeps
    its module's bitcode beside it and ``better`` in the list (``_machine_code``), so that a later
    process that runs it long enough builds the better code too. A read-only home only loses the cache."""
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        symbols = (groups or regions)[0].symbols
        meta = dict(symbols=[tokens.get(name, name) for name in symbols],
                    groups=[dict(dataclasses.asdict(g), writes=sorted(g.writes), outputs=sorted(g.outputs), symbols=[])
                            for g in groups], regions=[dict(dataclasses.asdict(r), symbols=[]) for r in regions])
        if better:
            meta["better"] = better
        files = ((".bc", bitcode),) if bitcode is not None else ()
        for suffix, data in (*files, (".o", obj), (".json", json.dumps(meta).encode())):
            tmp = folder / f"{key}{suffix}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            tmp.replace(folder / f"{key}{suffix}")
    except OSError:
        pass


_PAD = None           # index of "pad" in llvmgen.CTX (set on first use)


class _Runner:
    """Calls one group's native function over the active lanes; reruns it interpreted on a bail-out."""

    def __init__(self, group, fn, check, code):
        global _PAD
        from .llvmgen import SLOT
        _PAD = SLOT["pad"]
        self.g, self.fn, self.check, self.code = group, fn, check, code
        self._threads = threading.local()       # the table and addresses of each thread's batches

    def _mine(self):
        """The calling thread's address table and the addresses it has asked of numpy: batches of one
        launch may run on several threads at once (parallel.py), each with its own registers, so one
        table shared by them would hand a thread's native code another batch's arrays."""
        me = getattr(self._threads, "state", None)
        if me is None:
            me = self._threads.state = _RunnerState(len(self.g.regs))
        return me

    def __call__(self, ex):
        g = self.g
        regs = ex.fr.regs
        me = self._mine()
        table, seen = me.table, me.seen
        idx = ex.idx if ex.idx.dtype == np.int64 else ex.idx.astype(np.int64)
        every = ex.ridx is None            # every lane, padding included (see llvmgen.CTX)
        copies, fresh = [], []
        for k, name in enumerate(g.regs):
            if name[0] == "@":           # read across lanes: as it was before the group (a shuffle's source)
                arr = regs[name[1:]]
                if name[1:] in g.writes:
                    arr = arr.copy()
                    copies.append(arr)
            else:
                arr = regs.get(name)
                if arr is None and every and name in g.outputs:
                    arr = regs.take(name, zeroed=False)
                    fresh.append(arr)
                elif arr is None:
                    arr = regs[name]
            if arr is not seen[k]:
                seen[k] = arr
                table[k] = arr.ctypes.data
        ctx = _context(ex, g.symbols)
        if ctx is not me.ctx:
            me.ctx, me.ctx_ptr, me.checking = ctx, ctx.ctypes.data, mode() == "check"
        if every:
            count, lanes = ex.n, 0
            ctx[_PAD] = ex.n != idx.size
        else:
            if idx is not me.idx:
                me.idx, me.idx_ptr = idx, idx.ctypes.data
            count, lanes = idx.size, me.idx_ptr
            ctx[_PAD] = 0
        args = (count, lanes, me.table_ptr, me.ctx_ptr)
        if self.check is not None and self.check(*args):
            return self._interpret(ex)
        if me.checking:
            return self._check(ex, args)
        saved = [(name, regs[name].copy()) for name in g.restore]
        if self.fn(*args):
            if self.check is not None:
                raise RuntimeError("compiled atomic group bailed out after its address check")
            for name, arr in saved:
                regs[name][:] = arr
            for arr in fresh:            # not zeroed for the native run: as Regs would hand them out
                arr.fill(0)
            self._interpret(ex)

    def _check(self, ex, args):
        """Run the group natively and interpreted from the same state; raise where they differ."""
        regs = ex.fr.regs
        before = {k: v.copy() for k, v in regs.items()}
        spaces = (ex.mem.data, ex.shared, ex.local)
        mem_before = [a.copy() for a in spaces]
        bailed = bool(self.fn(*args))
        native = {k: regs[k].copy() for k in self.g.stored}
        mem_native = [a.copy() for a in spaces]
        for k, v in before.items():
            regs[k][:] = v
        for a, b in zip(spaces, mem_before):
            a[:] = b
        self._interpret(ex)
        if bailed:
            return
        lanes = ex.idx
        for k, v in native.items():
            if not np.array_equal(v[lanes], regs[k][lanes]):
                bad = lanes[v[lanes] != regs[k][lanes]][0]
                raise AssertionError(f"compiled group {self.g.start}-{self.g.end} ({self.code[self.g.start][2].text}) "
                                     f"wrote {k}={v[bad]} in lane {bad}, the interpreter {regs[k][bad]}"
                                     f"{' (bailed out)' if bailed else ''}")
        for name, a, b in zip(("global", "shared", "local"), mem_native, spaces):
            if not np.array_equal(a, b):
                raise AssertionError(f"compiled group {self.g.start}-{self.g.end} changed {name} memory differently")

    def _interpret(self, ex):
        """The group's instructions in the interpreter, as run_function runs K_NORMAL entries
        (after the kernel parameters that no group stores are loaded into their registers)."""
        for pc in self.g.params:
            self.code[pc][1](ex)
        for pc in range(self.g.start, self.g.end):
            _, fn, inst, _ = self.code[pc]
            gd = inst.guard
            if gd is None:
                fn(ex)
                continue
            pv = ex.fr.regs[gd[0]][ex.idx]
            if gd[1]:
                pv = ~pv
            if pv.all():
                fn(ex)
            elif pv.any():
                ex.run_on(ex.idx[pv], fn, ex)


class _RunnerState:
    """What a group's runner keeps between calls on one thread: the table of its registers' addresses
    (``seen``: the arrays they are of) and, asked of numpy once rather than on every call
    (``.ctypes.data`` costs microseconds, and a loop calls a group once per iteration), the table's
    address, the batch context's and the tier's mode (per batch), the lane list's (per list)."""

    def __init__(self, nregs):
        self.table = np.zeros(max(nregs, 1), np.uint64)
        self.seen = [None] * nregs
        self.table_ptr = self.table.ctypes.data
        self.ctx = self.ctx_ptr = self.idx = self.idx_ptr = None
        self.checking = False


def _address(a):
    """The address of a numpy array's first byte. A ctypes char over its buffer costs a quarter of
    ``.ctypes.data`` or ``__array_interface__`` (0.2 against 0.8 us), and a launch asks for about
    twenty (registers, context, scratch); read-only and empty arrays have no such buffer."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):
        return a.__array_interface__["data"][0]


_GEO_ADDRESSES: dict = {}


def _geometry_addresses(ex):
    """Addresses of the batch geometry's lane arrays (engine._geometry: shared by every batch of a
    shape, so looked up once per shape)."""
    key = id(ex.lane_block)
    hit = _GEO_ADDRESSES.get(key)
    if hit is None or hit[0] is not ex.lane_block:
        if len(_GEO_ADDRESSES) > 32:
            _GEO_ADDRESSES.clear()
        geo = [np.ascontiguousarray(a) for a in (ex.lane_block, ex.thread_linear, *ex._tid, ex.valid.view(np.uint8))]
        names = ("lane_block", "thread", "tid_x", "tid_y", "tid_z", "valid")
        hit = _GEO_ADDRESSES[key] = (ex.lane_block, geo, {n: _address(a) for n, a in zip(names, geo)})
    return hit[2]


MAX_CTX_TEMPLATES = 64     # batch shapes whose ctx template a kernel keeps (a launch's batches, a few launch shapes)


def _symbol_address(ex, name):
    """A symbol's address in the batch, or that of the special function unit's table that native
    ex2.approx reads (``mufu ex2``: llvmgen._ex2; mufu.table, loaded once and kept)."""
    if name.startswith("mufu "):
        from . import mufu
        return _address(mufu.table(name.split()[1]))
    return ex.symbol_address(name)


def _context(ex, symbols):
    """The int64 ctx array of llvmgen.CTX for this batch (rebuilt when memory moved or changed).

    A new array each batch (a group's runner keeps what it derived from the one it saw), copied from
    a template of the kernel's for this batch shape: the same memory (the very array), symbol
    addresses, batch shape and geometry. Filling it afresh (a 30-name dict, ten array addresses) was
    a third of a small kernel's launch: a 2^10-element vector add's 87 of 240 us. What a launch
    changes without changing its shape is written into the copy: the batch's own shared and local
    memory, the parameter bytes and the allocation bounds (a launch on arguments just copied to the
    device has new pointers and new bounds: with those in the template's key, every such launch
    built its templates afresh, 100 to 150 us of a 2^20-thread launch)."""
    mem = ex.mem
    c = getattr(ex, "_native_ctx", None)
    bounds = mem.bounds()
    limit = slack.shared_limit(ex)
    if c is not None and c[1] is mem.data and c[2] is bounds and c[4] == limit:
        return c[0]
    addrs = [_symbol_address(ex, s) for s in symbols]
    b = ex.batch
    shape = (tuple(symbols), tuple(addrs), b.first_block, b.nblocks, b.grid, b.block, ex.lanes_per_block,
             ex.shared_stride, ex.shared_size, ex.local_stride)
    # one template per batch shape (a launch of several batches starts each at its own first block:
    # keeping only the last one rebuilt it at every batch of every launch, 40 us each)
    kept = ex.kernel.__dict__.setdefault("_native_ctx_templates", {})
    last = kept.get(shape)
    if last is None or last[0] is not mem.data or last[1] is not ex.lane_block:
        if len(kept) >= MAX_CTX_TEMPLATES:
            kept.clear()
        last = kept[shape] = (mem.data, ex.lane_block) + _context_template(ex, symbols, addrs) + (None,)
    template, keep, again = last[2], last[3], last[4]
    kp = _kparam_array(ex)
    textures = _textures(mem)
    # the batch's shared and local memory are the same buffers as the last batch of this shape had (a
    # kernel launched in a loop takes its last launch's, engine._zeroed: views of one array from its
    # start), with the same parameters, bounds, textures and tier: that batch's ctx, as it was filled
    # (the copy and its seven addresses, 5 us of a small launch: launch19). Native code only reads a ctx.
    shared_owner, local_owner = _owner(ex.shared), _owner(ex.local)
    m = mode()
    if again is not None and again[1]() is shared_owner and again[2]() is local_owner and again[3] is kp \
            and again[4] is bounds and again[5] == limit and again[6] is textures and again[7] == m \
            and again[8] == (ex.shared.size, ex.local.size, len(ex.kparams)):
        ctx = again[0]
    else:
        ctx = template.copy()
        at = _CTX_SLOTS
        ctx[at[0]], ctx[at[1]] = _address(ex.shared), _address(ex.local)
        ctx[at[2]], ctx[at[3]] = _address(kp), len(ex.kparams)
        ctx[at[4]], ctx[at[5]], ctx[at[6]] = _address(bounds[0]), _address(bounds[1]), bounds[0].size
        if limit != ex.shared_size:
            ctx[at[7]] = limit
        if textures is not None:        # (_CTX_SLOTS is set: _context made its template first)
            ctx[at[8]], ctx[at[9]] = _address(textures), len(textures)
        kept[shape] = last[:4] + ((ctx, weakref.ref(shared_owner), weakref.ref(local_owner), kp, bounds, limit,
                                   textures, m, (ex.shared.size, ex.local.size, len(ex.kparams))),)
    ex._native_ctx = (ctx, mem.data, bounds, keep, limit, kp, textures)
    return ctx


def _owner(a):
    """The array that owns ``a``'s memory (``a`` itself, or what it is a view of)."""
    return a if a.base is None else a.base


_TEXTURE_NATIVE = None      # the texture_native module, once _textures has imported it
# (shared, local, kparams, nkparams, starts, ends, nbounds, shared_size, textures, ntextures): llvmgen.SLOT's,
# set at first use, so that a launch imports nothing (a test's texture objects left in memory made every later
# launch import llvmgen for the textures' slots: found by tests/test_launch_cost.py in CI)
_CTX_SLOTS = ()


def _textures(mem):
    """The texture objects' table of ``mem`` (texture_native: tex in native code), or None for none."""
    global _TEXTURE_NATIVE
    if _TEXTURE_NATIVE is None:         # (imported once: an import in a function costs 1 to 3 us a call)
        from . import texture_native as _TEXTURE_NATIVE
    return _TEXTURE_NATIVE.table(mem)


def _kparam_array(ex):
    """The launch's parameter bytes as the native code reads them: room for every parameter the
    kernel declares (native code loads each in its entry block, llvmgen._param_value), zeros past
    the bytes a launch did not send. The kernel keeps its last launch's (its batches share it)."""
    last = ex.kernel.__dict__.get("_native_kparams")
    if last is not None and last[0] == ex.kparams:
        return last[1]
    end = max([off + p.size for p in ex.kernel.func.params if (off := ex.kernel.param_offsets.get(p.name)) is not None]
              + [len(ex.kparams), 8])
    kp = np.zeros(end, np.uint8)
    kp[:len(ex.kparams)] = np.frombuffer(ex.kparams, np.uint8) if ex.kparams else ()
    ex.kernel._native_kparams = (ex.kparams, kp)
    return kp


def _context_template(ex, symbols, addrs):
    """(ctx, arrays it points into) of ``_context``, all but what ``_context`` writes itself."""
    global _CTX_SLOTS
    from . import llvmgen as lg
    if not _CTX_SLOTS:
        _CTX_SLOTS = tuple(lg.SLOT[n] for n in ("shared", "local", "kparams", "nkparams", "starts", "ends", "nbounds",
                                                "shared_size", "textures", "ntextures"))
    mem = ex.mem
    ctx = np.zeros(len(lg.CTX), np.int64)
    keep = [mem.data]
    syms = np.array(addrs or [0], np.uint64)
    keep += [syms]
    b = ex.batch
    gx, gy, _ = b.grid
    if gy == 1 and b.grid[2] == 1:          # (one row of blocks: blockIdx.x is the block number)
        zero = np.zeros(b.nblocks, np.uint32)
        cta = [np.arange(b.first_block, b.first_block + b.nblocks, dtype=np.uint32), zero, zero]
    else:
        blk = b.first_block + np.arange(b.nblocks, dtype=np.int64)
        cta = [np.ascontiguousarray(v, np.uint32) for v in (blk % gx, (blk // gx) % gy, blk // (gx * gy))]
    keep += cta
    vals = dict(mem=_address(mem.data), kparams=0, shared=0,
                shared_stride=ex.shared_stride, shared_size=ex.shared_size, local=0,
                local_stride=ex.local_stride, starts=0, ends=0,
                nbounds=0, lpb=ex.lanes_per_block, first_block=b.first_block,
                bx=b.block[0], by=b.block[1], bz=b.block[2], gx=b.grid[0], gy=b.grid[1], gz=b.grid[2],
                syms=_address(syms), cta_x=_address(cta[0]), cta_y=_address(cta[1]), cta_z=_address(cta[2]),
                pad=0, nkparams=0, textures=0, ntextures=0, **_geometry_addresses(ex))
    ctx[:] = [vals[name] - (1 << 64) if vals[name] >= 1 << 63 else vals[name] for name in lg.CTX]
    return ctx, keep
