"""Which launches of a whole program the profiler counts, chosen as Nsight Compute chooses them.

A profiled launch runs in the interpreter with an observer on every instruction (the counts have to be
exact), 5 to 30 times slower than the compiled tier. A program that times its kernel over hundreds of
launches would take hours that way, where its student wants one launch's table. ``ncu`` has the same
problem and the same answer, which students meet in every Nsight Compute tutorial:

    ncu --kernel-name reduce --launch-skip 2 --launch-count 1 ./a.out

``--kernel-name`` (``-k``) picks the kernels by name (``regex:`` before a regular expression),
``--launch-skip`` (``-s``) passes over the first N launches that match, ``--launch-count`` (``-c``)
profiles at most N. The launches left out run as in ``cudalab run``: no observers, native code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class LaunchSelection:
    kernel: str | None = None        # a kernel's name, or "regex:" and a regular expression
    skip: int = 0                    # matching launches passed over first
    count: int | None = None         # at most this many profiled (None: every one after the skip)
    matched: int = 0                 # matching launches seen so far

    def wants(self, name: str) -> bool:
        """Is this launch of kernel ``name`` (``reduce<256>``, as the launch record names it) one to profile?
        Counts it among the matching launches when it matches."""
        if not self.names(name):
            return False
        self.matched += 1
        k = self.matched - self.skip            # 1 for the first launch after the skipped ones
        return k >= 1 and (self.count is None or k <= self.count)

    def names(self, name: str) -> bool:
        """Does ``--kernel-name`` name this kernel? ncu matches the function's name without its template
        arguments and parameters (``reduce`` matches ``reduce<256>``), or the whole of it."""
        if self.kernel is None:
            return True
        if self.kernel.startswith("regex:"):
            return re.search(self.kernel[len("regex:"):], name) is not None
        return self.kernel in (name, base_name(name))

    @property
    def everything(self) -> bool:
        return self.kernel is None and self.skip == 0 and self.count is None

    def describe(self) -> str:
        """The choice in ncu's words, for the line that says which launches were left out."""
        words = []
        if self.kernel is not None:
            words.append(f"--kernel-name {self.kernel}")
        if self.skip:
            words.append(f"--launch-skip {self.skip}")
        if self.count is not None:
            words.append(f"--launch-count {self.count}")
        return " ".join(words)


def base_name(name: str) -> str:
    """``ns::reduce<256, float>`` -> ``reduce``: the name without namespaces and template arguments."""
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "<" and depth == 1:
            cut = i
            break
    return name[:cut].rsplit("::", 1)[-1]
