"""``cudalab.check(...)``: which extra checks run with each emulated launch, and their observers.

    with cudalab.check("racecheck", "initcheck"):   # for the launches inside the block
        k[grid, block](...)
    cudalab.check("racecheck")                       # from now on
    cudalab.check()                                  # back to the default checks

memcheck (bad addresses, alignment) and synccheck (__syncthreads() in divergent code) always run in
the emulator and stop the kernel where a GPU would fault. An out-of-bounds access a GPU runs (just
past an array's end, inside a block's shared allocation unit: emulator/slack.py) is a warning and the
kernel goes on, as on a GPU; ``check("memcheck")`` makes it stop there too, as compute-sanitizer's
memcheck does. So with a ``__syncthreads()`` that some threads of a warp reach while the others skip
it (to rejoin them after it, or to another ``__syncthreads()``): a GPU since Volta runs it, the emulator
warns and goes on, and ``check("synccheck")`` stops there, where compute-sanitizer's synccheck reports it. racecheck and initcheck are opt-in because they follow every access. Their findings
do not stop the kernel: they go into ``LaunchRecord.findings`` and are printed as warnings.
"""
from __future__ import annotations

import sys

from ...emulator import slack
from ...errors import CudaError
from .initcheck import InitcheckObserver, mark_all_written
from .racecheck import RacecheckObserver

CHECKS = ("memcheck", "racecheck", "initcheck", "synccheck")
ALWAYS_ON = ("memcheck", "synccheck")
_active: set = set()


class check:
    """Turn sanitizer checks on for the session, or for a ``with`` block."""

    def __init__(self, *names: str):
        unknown = [n for n in names if n not in CHECKS]
        if unknown:
            raise CudaError(f"unknown check {unknown[0]!r}: cudalab.check takes any of {', '.join(CHECKS)}.",
                            "cudaErrorInvalidValue")
        self.previous = set(_active)
        _set(names)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.previous)

    def __repr__(self):
        on = sorted(set(ALWAYS_ON) | _active)
        words = [f"{c} (stops at accesses a GPU runs too)" if c == "memcheck" and c in _active else c for c in on]
        return f"<cudalab checks on: {', '.join(words)}>"


def _set(names):
    """The checks asked for; memcheck named among them stops at every access memcheck reports."""
    _active.clear()
    _active.update(names)
    slack.strict = "memcheck" in _active
    slack.strict_sync = "synccheck" in _active


def active() -> set:
    """The checks on now (memcheck and synccheck always are)."""
    return set(ALWAYS_ON) | _active


def observers_for(program) -> list:
    """Observers for one emulated launch of ``program`` under the active checks (the runtime calls
    this for every launch: without initcheck, it marks device memory as written instead)."""
    obs = []
    if "racecheck" in _active:
        obs.append(Reporting(RacecheckObserver()))
    if "initcheck" in _active:
        for addr in program.globals.values():       # __device__ variables start zeroed (static storage)
            program.memory.allocs[addr].mark_written(0, program.memory.allocs[addr].size)
        obs.append(Reporting(InitcheckObserver(program.memory)))
    else:
        mark_all_written(program.memory)
    return obs


class Reporting:
    """Wraps a check's observer: forwards every event, and at the end of the launch adds its findings
    to the launch's and prints them (the kernel ran to the end: these are warnings, not errors)."""

    def __init__(self, inner):
        self.inner = inner
        self.on_launch_start = inner.on_launch_start
        self.on_batch_start = inner.on_batch_start
        self.on_instruction = inner.on_instruction
        self.on_memory = inner.on_memory
        self.on_branch = inner.on_branch
        self.on_barrier = inner.on_barrier
        self.on_async = inner.on_async

    def on_launch_end(self, stats):
        self.inner.on_launch_end(stats)
        found = self.inner.findings
        stats.findings.extend(found)
        for f in found:
            n = f.details.get("hazards") or f.details.get("threads") or 1
            more = f" ({n} {'hazards' if 'hazards' in f.details else 'threads'})" if n > 1 else ""
            sys.stderr.write(f"cudalab {f.kind} warning{more}: {f.message}\n")
        if found:
            sys.stderr.flush()
