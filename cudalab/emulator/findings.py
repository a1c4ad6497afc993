"""Findings: what a check saw, as plain data (compute-sanitizer's report, one record per problem)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Finding:
    kind: str                      # "memcheck", "racecheck", "synccheck", "initcheck", "assert", "trap", "watchdog", ...
    message: str                   # one paragraph, for a student
    kernel: str = ""
    line: int | None = None        # CUDA source line
    block: tuple | None = None     # blockIdx (x, y, z)
    thread: tuple | None = None    # threadIdx (x, y, z)
    address: int | None = None
    details: dict = field(default_factory=dict)

    def __str__(self):
        return self.message
