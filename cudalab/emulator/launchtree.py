"""How far a tree of device-launched grids has got, and how big it will be.

A kernel whose threads launch kernels (dynamic parallelism, devrt.py) grows its work while it
runs: each of a grid's 1,024 threads may launch a 1,024-thread child, whose threads launch more.
One grid's blocks (pace.py) say nothing about that; the tree's shape does. The emulator runs a
tree depth first, so the first grid of every level finishes early: the children launched per grid
at each depth (the branching) are known long before most grids have run. From them this module
forecasts the whole tree (the grids at depth d+1 are those at depth d times their branching), and
from the CPU time per grid so far, how long it would take. A level whose grids have not finished
yet may launch more: the forecast is then a lower bound. The host launch's watchdog (its root's
``Pace``) covers the tree: a tree that would clearly outlast its time stops early with the
forecast and what to do, as one big grid does, and the progress bar counts grids.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from ..errors import KernelError
from .findings import Finding
from .pace import CLEARLY, WAYS, Progress, count, cpu_time_left, duration

SETTLE = 0.5            # CPU seconds (or a tenth of the watchdog, if less) before a tree is judged
FEW = 8                 # a tree stopped while a grid ran: fewer grids done give no time a grid
REPORT_EVERY = 0.1      # CPU seconds between progress reports (a child grid may take 1 ms)


class TimeUp(Exception):
    """The program's time ran out (pace.stop_running): devrt raises the tree's error."""


@dataclass
class TreeProgress:
    """How far a launch tree has got: grids run, grids waiting, the forecast of the whole tree."""

    kernel: str
    grids_done: int               # grids whose blocks have run (the host's grid included)
    grids_waiting: int            # launched from the device, not yet started
    thread_instructions: int
    seconds: float
    branching: list = field(default_factory=list)    # per depth: (grids run, children they launched)
    estimated_grids: int | None = None
    estimated_seconds: float | None = None
    whole: bool = True            # False: a level not yet run may launch more (a lower bound)

    @property
    def rate(self) -> float:
        return self.thread_instructions / self.seconds if self.seconds > 0 else 0.0

    def describe(self) -> str:
        each = self.seconds / max(self.grids_done, 1)
        each = "" if self.estimated_seconds is None else \
            f" ({duration(each) if each >= 1 else f'{1000 * each:.2g} ms'} a grid)"
        grids = "grid" if self.grids_done == 1 else "grids"
        return (f"It had run {self.grids_done:,} {grids} of its launch tree, with {self.grids_waiting:,} more launched and "
                f"waiting, after {self.seconds:.2g} s: {count(self.thread_instructions)} thread-instructions at "
                f"{count(self.rate)} a second{each}.")

    def describe_estimate(self) -> str:
        if self.estimated_grids is None:
            return ""
        per = [f"{children / run:,.4g}" if children else "none" for run, children in self.branching if run]
        shape = ", ".join(f"{n} at depth {d}" for d, n in enumerate(per[:-1]))
        shape = f"{shape} and {per[-1]} at depth {len(per) - 1}" if shape else f"{per[-1]} at depth 0"
        if self.estimated_seconds is None:
            return (f"Each grid launched on average {shape}: at that branching the tree has "
                    f"{'about' if self.whole else 'at least'} {count(self.estimated_grids)} grids.")
        if self.whole:
            return (f"Each grid launched on average {shape}: at that branching the tree has about "
                    f"{count(self.estimated_grids)} grids, about {duration(self.estimated_seconds)} on the emulator.")
        return (f"Each grid launched on average {shape}, and the deepest of them have not run yet (they may launch "
                f"more): the tree has at least {count(self.estimated_grids)} grids, at least "
                f"{duration(self.estimated_seconds)} on the emulator.")


class Tree:
    """The launch tree of one host launch (kept by its root ``devrt.GridState``)."""

    def __init__(self, kernel: str, pace):
        self.kernel, self.pace = kernel, pace
        self.start = pace.start if pace is not None else time.thread_time()
        self.branching: list = []       # per depth: [grids whose blocks have run, children they launched]
        self.started = 1                # grids started (the host's own)
        self.reported = self.start

    def grid_ran(self, depth: int, children: int):
        """A grid at ``depth`` has run its blocks and launched ``children`` grids."""
        while len(self.branching) <= depth:
            self.branching.append([0, 0])
        self.branching[depth][0] += 1
        self.branching[depth][1] += children

    def forecast(self) -> tuple:
        """(grids in the whole tree, whole): each depth's grids times their branching so far."""
        total = level = 1.0
        for run, children in self.branching:
            if not run:
                return total, False
            level *= children / run
            if not level:
                return total, True
            total += level
        return total, False        # the deepest grids launched, and none of their children has run

    def progress(self, stats, now: float) -> TreeProgress:
        done = sum(run for run, _ in self.branching)
        launched = 1 + sum(children for _, children in self.branching)
        spent = now - self.start
        p = TreeProgress(self.kernel, done, launched - self.started, stats.thread_instructions, spent,
                         [tuple(b) for b in self.branching])
        if done and spent > 0:
            grids, p.whole = self.forecast()
            p.estimated_grids = max(round(grids), launched)
            p.estimated_seconds = spent * p.estimated_grids / done
        return p

    def child_starts(self, stats, timeout: float, wall_deadline: float):
        """Before a child grid starts: report progress; stop the tree if it would clearly outlast its
        time (``timeout`` of CPU, the program's ``wall_deadline``, ``ulimit -t``)."""
        self.started += 1
        now = time.thread_time()
        if self.pace is not None and self.pace.wall_deadline < time.monotonic():
            raise TimeUp()
        if now - self.start < min(SETTLE, 0.1 * timeout):
            return
        p = None
        if self.pace is not None and self.pace.report is not None and now - self.reported >= REPORT_EVERY:
            self.reported = now
            p = self.progress(stats, now)
            if p.estimated_grids:
                self.pace.report(Progress(self.kernel, p.grids_done, p.estimated_grids, p.thread_instructions,
                                          p.seconds, unit="grids"))
        if not self.trusted():
            return
        p = p or self.progress(stats, now)
        if p.estimated_seconds is None:
            return
        limit = None
        if p.estimated_seconds > CLEARLY * timeout:
            limit = f"its limit of {timeout:g} s"
        elif p.estimated_seconds - p.seconds > CLEARLY * (wall_deadline - time.monotonic()):
            limit = "the program's time limit"
        elif p.estimated_seconds - p.seconds > CLEARLY * cpu_time_left():
            limit = f"the {duration(max(cpu_time_left(), 0))} left of the CPU-time limit (ulimit -t)"
        if limit:
            raise self.error(f"The kernel {self.kernel} and the grids it launched from the device were stopped early: "
                             f"they would run far beyond {limit}. {p.describe()} {p.describe_estimate()} "
                             f"To run it anyway: {WAYS}", p)

    def trusted(self) -> bool:
        """Whether the branching is measured on enough grids to stop a tree for it: two grids of each
        depth that launched (all of them where there are fewer), so one grid's branch is not taken for all."""
        launched = 1
        for run, children in self.branching:
            if run < min(2, launched):
                return False
            launched = children
            if not children:
                return True
        return False

    def timed_out(self, stats, timeout: float, deadline: float, where: str) -> KernelError:
        """The watchdog's error for a tree (or the program's time limit's): how far it got and the
        forecast. ``where``: the grid about to start, or running, when it stopped."""
        p = self.progress(stats, time.thread_time())
        if where.startswith("while") and p.grids_done < FEW:
            p.estimated_seconds = None      # the grid still running is most of the time: no pace a grid yet
        why = (f"ran for more than {timeout:g} s and were stopped by the watchdog" if time.thread_time() > deadline
               else "were stopped when the program's time limit ran out")
        return self.error(f"The kernel {self.kernel} and the grids it launched from the device {why} {where}. "
                          f"{p.describe()} {p.describe_estimate()} Does the recursion ever stop? If it is just slow: "
                          f"{WAYS}", p)

    def error(self, msg: str, p: TreeProgress) -> KernelError:
        msg = " ".join(msg.split())
        err = KernelError(msg, "cudaErrorLaunchTimeout", [Finding("watchdog", msg, self.kernel,
                                                                     details={"progress": asdict(p)})])
        err.progress = p
        err.tree = True             # devrt adds no "launched by" note: the message is the whole tree's
        return err
