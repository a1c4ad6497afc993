"""Comparing what programs print: emulator vs expected file vs real GPU, timings aside.

Examples print measured times only on lines starting with ``time:`` and numbers that differ
between GPUs (name, SM count, memory) on lines starting with ``device:``; both are left out.
"""
from __future__ import annotations

import difflib


def comparable(stdout: str, keep_device: bool = False) -> str:
    """The lines of ``stdout`` that must match: without ``time:`` (and ``device:``) lines."""
    drop = ("time:",) if keep_device else ("time:", "device:")
    return "".join(l for l in stdout.splitlines(keepends=True) if not l.startswith(drop))


def diff(expected: str, actual: str, name: str = "program") -> str:
    """A unified diff of the comparable lines; empty when they agree."""
    return "".join(difflib.unified_diff(comparable(expected).splitlines(keepends=True),
                                        comparable(actual).splitlines(keepends=True),
                                        f"{name} (emulator)", f"{name} (GPU)"))
