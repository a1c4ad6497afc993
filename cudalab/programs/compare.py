"""Comparing what programs print: emulator vs expected file vs real GPU, timings aside.

Examples print measured times only on lines starting with ``time:`` and numbers that differ
between GPUs (name, SM count, memory) on lines starting with ``device:``; both are left out.
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path


def comparable(stdout: str, keep_device: bool = False) -> str:
    """The lines of ``stdout`` that must match: without ``time:`` (and ``device:``) lines."""
    drop = ("time:",) if keep_device else ("time:", "device:")
    return "".join(l for l in stdout.splitlines(keepends=True) if not l.startswith(drop))


def diff(expected: str, actual: str, name: str = "program") -> str:
    """A unified diff of the comparable lines; empty when they agree."""
    return "".join(difflib.unified_diff(comparable(expected).splitlines(keepends=True),
                                        comparable(actual).splitlines(keepends=True),
                                        f"{name} (emulator)", f"{name} (GPU)"))


def link_options(source: Path) -> list:
    """The libraries a test program names on a first-lines comment ``// link: -lcuda -lnvrtc``: what its nvcc
    command needs beyond the runtime, the same for the emulator and for a GPU."""
    head = "".join(Path(source).read_text().splitlines(keepends=True)[:5])
    m = re.search(r"^// link: (.*)$", head, re.M)
    return m.group(1).split() if m else []
