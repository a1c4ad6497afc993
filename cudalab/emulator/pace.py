"""How far a launch has got and how long its whole grid would take on the emulator.

A GPU runs a grid of 262,144 blocks in a blink; the emulator, a few thousand times slower, would
take hours. Rather than let such a launch run into the watchdog (or the program's time limit), the
engine runs a small first batch of blocks (a sample, ``SAMPLE_SHARE`` times smaller than the
others), measures its thread-instructions and its rate, and extrapolates over the grid: a launch
that would clearly outlast its time is stopped at once, with the estimate and what to do. After
every batch the same numbers (``Progress``, plain data) go to the caller's progress hook, which
draws the progress bar (``cudalab/runtime/progress.py``); the watchdog's message tells them too.
Time is CPU time, as the watchdog's: on a busy shared machine a good kernel is not blamed for the
wait. A launch whose batches run on several threads at once (parallel.py) is timed by its busiest
thread: the launching thread's own CPU time plus the most any worker thread spent on its batches (or
the workers' sum shared out over the cores the process may use, where that is more: four threads on two
cores take twice as long as on four). That is about the wall time the launch takes on free cores, so
a launch that four threads finish in 4 s is not stopped at 10 s for the 16 s its threads spent in all,
and the estimates ("about N s on the emulator") are of the same time: the rest of the grid at the
latest batch's pace, shared out over the threads that will run it. Blocks are independent between grid
syncs, so a smaller first batch changes no result.
"""
from __future__ import annotations

import resource
import time
from dataclasses import asdict, dataclass

from ..errors import KernelError
from .findings import Finding

SAMPLE_SHARE = 32   # the first batch of a grid that needs several is this many times smaller
CLEARLY = 2.0       # stop early only when the estimate is this many times the time there is
ONE_TIME_COST = 5.0     # a batch this many times slower a block than the batch before paid a one-time cost

WAYS = ("make the problem smaller (fewer blocks, or fewer loop iterations per thread), "
            "give it more time (cudalab.set_watchdog(seconds) in Python, %%cuda --timeout SECONDS in a notebook, "
            "cudalab run --timeout SECONDS for a program), or run it on a real GPU (cudalab.use(\"gpu\"), "
            "%%cuda --device gpu, cudalab run --device gpu).")

# a program whose CPU-time limit ran low in its earlier launches (a benchmark's rounds doubling its size):
# the launch that meets it needs the program's limit raised, or less work before it, not fewer blocks
CPU_LIMIT_WAYS = ("give the program more CPU time (a higher ulimit -t), let it do less before this launch (fewer "
                  "rounds or sizes), or run it on a real GPU (cudalab run --device gpu).")
USED_UP = 0.25      # a launch needing at most this share of the whole CPU-time limit did not use it up alone
USED_BEFORE = "which its work before this launch used up"


@dataclass
class Progress:
    """How far one launch has got: what a progress bar shows and the watchdog's message tells."""

    kernel: str
    blocks_done: int
    blocks_total: int
    thread_instructions: int      # so far (one per thread per instruction it executed)
    seconds: float                # CPU seconds the launch has run
    estimated_seconds: float | None = None   # the whole grid at the latest batch's pace; None before one
    # after the small first batch only: the least the whole grid can take (each later batch takes at
    # least as long as it did); its pace per block (estimated_seconds) may overstate a light kernel's
    at_least_seconds: float | None = None
    # before any block has finished: the batch's thread-instructions counted from its control flow
    # alone (forecast.py), scaled to the grid
    forecast_thread_instructions: int | None = None
    forecast_partial: bool = False          # the count ran out of time: the grid needs more than that
    # thread-instructions of the finished batches alone (None: all of them): a launch stopped midway
    # through a batch has run part of it too, which the finished blocks must not be charged with
    finished_thread_instructions: int | None = None
    unit: str = "blocks"          # "grids": a launch tree's progress (launchtree.py), blocks_* counting grids
    # the finished blocks' work and the rest at the latest batch's work a block (as estimated_seconds is at
    # its pace): a grid whose first blocks do all the work is not charged with it block after block
    expected_thread_instructions: int | None = None

    @property
    def rate(self) -> float:
        """Thread-instructions per CPU second so far."""
        return self.thread_instructions / self.seconds if self.seconds > 0 else 0.0

    @property
    def estimated_thread_instructions(self) -> int | None:
        """The whole grid's thread-instructions, if every block does as much as those done so far."""
        if not self.blocks_done:
            return self.forecast_thread_instructions
        if self.expected_thread_instructions is not None:
            return self.expected_thread_instructions
        finished = self.thread_instructions if self.finished_thread_instructions is None \
            else self.finished_thread_instructions
        return round(finished * self.blocks_total / self.blocks_done)

    def describe(self) -> str:
        """For a student: how far it got and how fast."""
        share = f" ({100 * self.blocks_done / self.blocks_total:.2g}%)" if 0 < self.blocks_done < self.blocks_total else ""
        blocks = "block" if self.blocks_total == 1 else "blocks"
        text = (f"It had finished {self.blocks_done:,} of its {self.blocks_total:,} {blocks}{share} after "
                f"{self.seconds:.1f} s: {count(self.thread_instructions)} thread-instructions at "
                f"{count(self.rate)} a second.")
        return text

    def describe_estimate(self) -> str:
        """For a student: how much work the whole grid is, and how long it would take here."""
        if self.estimated_seconds is None or self.blocks_done >= self.blocks_total:
            return ""
        if self.forecast_partial:
            return (f"The whole grid needs more than {count(self.estimated_thread_instructions)} thread-instructions: "
                    f"more than {duration(self.estimated_seconds)} on the emulator.")
        low, high = self.at_least_seconds, self.estimated_seconds
        when = (f"between {duration(low)} and {duration(high)}" if low is not None and high > 1.5 * low
                else f"about {duration(high)}")
        return f"The whole grid needs about {count(self.estimated_thread_instructions)} thread-instructions: {when} on the emulator."


def count(x: float) -> str:
    """1,234,567 -> '1.23 million': big counts as a student reads them aloud."""
    for size, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if x >= size:
            return f"{x / size:.3g} {word}"
    return f"{x:,.0f}"


def duration(seconds: float) -> str:
    """3.2 -> '3 s', 5400 -> '1.5 hours', 2e6 -> '23 days'."""
    for size, word in ((86400 * 365, "years"), (86400, "days"), (3600, "hours"), (60, "minutes")):
        if seconds >= 2 * size:
            n = seconds / size
            return f"{n:.1f} {word}" if n < 10 else f"{n:.0f} {word}"
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.2g} s"


RUNNING: list = []  # the Paces of the launches running now (a device launch's inside its parent's)


def stop_running() -> bool:
    """The program's time ran out from outside the launch (a signal: the CPU-time limit of
    ``ulimit -t``): every running launch stops at its next deadline check, as when its program's
    time limit passes, and says how far it got. False when no launch was running."""
    for pace in RUNNING:
        pace.wall_deadline = float("-inf")
        for ex in [pace.batch, *getattr(pace, "in_flight", ())]:
            if ex is not None:
                ex.wall_deadline = float("-inf")
    return bool(RUNNING)


def system_seconds() -> float:
    """This thread's CPU time in the kernel of the OS so far (0 where Linux's per-thread usage is not
    available)."""
    who = getattr(resource, "RUSAGE_THREAD", None)
    return resource.getrusage(who).ru_stime if who is not None else 0.0


def not_counted_by_running(seconds: float):
    """``seconds`` of this thread's CPU went to building code on a launch's first use of it (numba
    compiling a tensor-core loop for a new shape: ~10 s, more on a busy machine), not to the kernel:
    no running launch's watchdog counts them (a fuzz program's one wmma, after other launches had
    loaded the loops, was stopped at 10 s having run 512 instructions)."""
    for pace in RUNNING:
        pace.not_counted(seconds)
        for ex in {id(x): x for x in (pace.batch, *getattr(pace, "in_flight", ())) if x is not None}.values():
            ex.deadline += seconds


def time_is_up() -> bool:
    """Has a running launch's program run out of time (its time limit, or the CPU-time limit's
    signal: ``stop_running``)? A thread waiting for something else (the compiled tier's build) asks."""
    now = time.monotonic()
    return any(p.wall_deadline < now for p in RUNNING)


def cpu_time_left() -> float:
    """CPU seconds this process has before the soft limit of ``ulimit -t`` (a grader's, a shared
    machine's, tools/samples_check.py's) ends it; infinity without one. A launch that clearly needs
    more is stopped early with its estimate instead of running into it."""
    soft = resource.getrlimit(resource.RLIMIT_CPU)[0]
    return float("inf") if soft == resource.RLIM_INFINITY else soft - time.process_time()


class Pace:
    """The clock of one launch: its batches, its deadlines, its progress and estimate."""

    def __init__(self, kernel: str, blocks_total: int, timeout: float, wall_deadline: float, stats, report=None):
        self.kernel, self.blocks_total, self.timeout, self.stats = kernel, blocks_total, timeout, stats
        self.start = self.began = time.thread_time()    # this thread's CPU clock (start: moved by not_counted)
        self.ended = None           # that clock at the end of the launch's last batch, if it ran on this thread
        # CPU seconds each worker thread has spent on this launch's batches (thread id -> seconds; each
        # worker adds its own, parallel.run), and the cores they share (parallel.cores): beside_seconds
        self.workers = {}
        self.cores = 1
        self.ways = 1               # threads the grid's remaining native batches run on (estimates share them out)
        self.wall_deadline = wall_deadline              # a whole program's time limit (time.monotonic())
        self.report = report                            # progress hook: called with a Progress after each batch
        self.batch = None                               # the running batch's executor (its own deadlines)
        self.in_flight = []         # the executors of batches running on other threads (engine, parallel.py)
        self.finished_instructions = None               # thread-instructions when the latest batch finished
        self.expected = None        # the grid's thread-instructions at the latest batch's work a block
        self.blocks_done = 0
        self.per_batch = blocks_total
        self.estimate = self.at_least = None
        self.sample_of = None       # blocks per batch the sample is a share of (default: the batches')
        self.known_pace = False     # the kernel's pace is known (engine.KNOWN_PACE_SHARE): no sample batch
        self.forecast = None        # the grid's thread-instructions from a batch's skeleton (forecast.py)
        self.forecast_partial = False
        self.fitted = None          # after a batch: whether its estimate fitted the time there is
        self.per_block = None       # after a batch: its CPU seconds a block
        # the sample alone said "stop": the next blocks run as a second sample first (second_opinion)
        self.second_sample = False
        self.system_at_start = None     # this thread's system CPU time when the batch began (batches sets it)

    @property
    def deadline(self) -> float:
        """The watchdog on this thread's CPU clock: what the launch has left once its workers' time is
        counted (``spent``)."""
        return self.start + self.timeout - self.beside_seconds()

    def beside_seconds(self) -> float:
        """What the launch's batches on worker threads add to its time: the busiest worker's CPU seconds,
        or all of theirs shared out over the cores, where that is more (threads outnumbering cores)."""
        spent = list(self.workers.values())         # (a worker may add itself meanwhile)
        return max(max(spent), sum(spent) / max(self.cores, 1)) if spent else 0.0

    def spent(self, now: float | None = None) -> float:
        """The launch's time so far, as the watchdog counts it: this thread's CPU seconds (``now``: its
        clock, if just read) and its workers' (``beside_seconds``)."""
        return (time.thread_time() if now is None else now) - self.start + self.beside_seconds()

    def cpu_seconds(self, now: float | None = None) -> float:
        """CPU seconds of every thread of the launch (what it cost the machine, not how long it took);
        ``now``: this thread's CPU clock, if just read."""
        return (time.thread_time() if now is None else now) - self.start + sum(list(self.workers.values()))

    def total_cpu(self, now: float | None = None) -> float:
        """CPU seconds of every thread since the launch began (``now``: this thread's CPU clock, if just
        read): a launch record's ``cpu_time``, which a stopped program's account adds up. This thread's
        clock alone missed the batches run on worker threads: BlackScholes, stopped at 300 s of CPU after
        346 launches, was told to have spent "4.4 s of the emulator's CPU time in all"."""
        return (time.thread_time() if now is None else now) - self.began + sum(list(self.workers.values()))

    def worker_left(self, own: float) -> float:
        """On a worker thread, as its batch starts: the CPU seconds that batch may run before the launch's
        time (``own``: the launching thread's seconds when it sent the batch) reaches the watchdog."""
        import threading
        mine = self.workers.get(threading.get_ident(), 0.0)
        all_of_them = sum(list(self.workers.values()))
        return min(self.timeout - own - mine, max(self.cores, 1) * (self.timeout - own) - all_of_them)

    def batches(self, per_batch: int, whole=lambda n: n):
        """(first block, blocks) of each batch; when the grid needs several, the first is a sample of
        ``per_batch // SAMPLE_SHARE`` blocks (``whole`` rounds it to blocks that must run together)."""
        first = 0
        self.per_batch = per_batch
        if self.blocks_total > per_batch and not self.known_pace:
            sample = whole(max(1, min(per_batch, self.sample_of or per_batch) // SAMPLE_SHARE))
            if sample < per_batch:
                self.system_at_start = system_seconds()
                yield 0, sample
                first = sample
                if self.second_sample and first < self.blocks_total:     # (batch_done asked for it)
                    self.system_at_start = system_seconds()
                    yield first, min(sample, self.blocks_total - first)
                    first += min(sample, self.blocks_total - first)
        for start in range(first, self.blocks_total, per_batch):
            if start + per_batch < self.blocks_total:       # (the last batch's serves no estimate: batch_done)
                self.system_at_start = system_seconds()
            yield start, min(per_batch, self.blocks_total - start)

    def progress(self, now: float | None = None) -> Progress:
        """How far the launch has got (``now``: this thread's CPU clock, if just read)."""
        return Progress(self.kernel, self.blocks_done, self.blocks_total, self.stats.thread_instructions,
                        self.spent(now), self.estimate, self.at_least,
                        self.forecast, self.forecast_partial, self.finished_instructions,
                        expected_thread_instructions=None if self.forecast is not None else self.expected)

    def forecast_seconds(self) -> float:
        """The CPU seconds the skeleton of a batch may take to count its work
        (forecast.py): a tenth of the watchdog, within 0.25 s to 2 s (and 4 times that of wall time)."""
        return min(2.0, max(0.25, 0.1 * self.timeout))

    def forecast_batch(self, blocks: int, count, least: float = 1.0):
        """Before any block has finished: ``count(seconds)`` gives (thread-instructions, whole) of the
        running batch of ``blocks`` blocks, or None; the grid's estimate is that, scaled to the grid,
        at the rate the launch has run so far (a lower bound if not ``whole``). Counting is not the
        kernel's time. ``least``: a lower bound (a partial count) must be this many times the work
        done to be told (a count that leaves out the waits at a lock: barely above it says nothing)."""
        spent = self.spent()
        rate = self.stats.thread_instructions / spent if spent > 0 else 0.0
        t0 = time.thread_time()
        # a program whose time is up waits on the count: then it counts only briefly
        got = count(self.forecast_seconds() if time.monotonic() <= self.wall_deadline else 0.25)
        self.not_counted(time.thread_time() - t0)
        if not got or not got[0] or rate <= 0:
            return
        if not got[1] and got[0] * self.blocks_total / blocks <= least * self.stats.thread_instructions:
            return          # a partial count below the work already done says nothing (a kernel spinning)
        if got[0] * self.blocks_total / blocks < self.stats.thread_instructions:
            return          # nor does a whole one: the skeleton missed what steers a loop the threads are still in
        self.forecast = round(got[0] * self.blocks_total / blocks)
        self.forecast_partial = not got[1]
        self.estimate = self.forecast / rate
        self.at_least = None

    def forecast_threads(self, finished: int, threads: int):
        """Before any block has finished, and with no whole count of the batch (``forecast_batch``):
        ``finished`` of the grid's ``threads`` threads have ended. Native code runs a batch's threads
        one after another (a region, regions.py), not in step as the interpreter does, so a block of
        long loops can stop at the watchdog with many of its threads done: the grid needs the work
        so far at that share (a little less: the threads still running did part of theirs)."""
        spent = self.spent()
        done = self.stats.thread_instructions
        if not finished or self.blocks_done or spent <= 0 or not done:
            return
        self.forecast = round(done * threads / finished)
        self.forecast_partial = False
        self.estimate = self.forecast / (done / spent)
        self.at_least = None

    def not_counted(self, seconds: float):
        """Time spent on something other than the kernel (compiling it to native code): the watchdog
        and the estimate leave it out."""
        self.start += seconds

    def time_is_up(self, now: float | None = None) -> bool:
        """Has the launch run past its watchdog or its program's time limit (``now``: this thread's CPU
        clock, if just read)?"""
        return self.spent(now) > self.timeout or time.monotonic() > self.wall_deadline

    def batch_done(self, blocks: int, batch_seconds: float, speedup: float = 1.0, now: float | None = None,
                   ways: int = 1):
        """``blocks`` more blocks are done, their batch took ``batch_seconds`` of CPU time: update the
        estimate, tell the hook, and stop the launch now if it would clearly outlast its time even
        ``speedup`` times faster (the batch ran interpreted while native code for it is being built).
        ``now``: this thread's CPU clock when the batch ended (reading it is a system call, and a
        program launching a small kernel 10^4 times reads it at every batch). ``ways``: the threads the
        rest of the grid will run on at once (``self.ways`` for native batches, parallel.py): the estimate
        is of the launch's time, which they share."""
        self.blocks_done += blocks
        before = self.finished_instructions or 0
        self.finished_instructions = self.stats.thread_instructions
        left = self.blocks_total - self.blocks_done
        self.expected = self.finished_instructions + round(left * (self.finished_instructions - before) / blocks)
        now = time.thread_time() if now is None else now
        spent = self.spent(now)
        # the kernel's pace is its user time: system time in a batch is the OS mapping fresh device
        # memory on its first touch (a 1 GiB array written the first time: about a second, spread
        # over the first batches that write it), paid once, not by the batches after
        if left and self.system_at_start is not None:     # (the last batch's pace serves no estimate)
            batch_seconds = max(batch_seconds - (system_seconds() - self.system_at_start), 0.1 * batch_seconds)
        ways = max(1, ways)
        self.estimate = spent + left * batch_seconds / blocks / ways
        # a small batch pays the same per-instruction overheads as a full one: it bounds a full
        # batch's time from below, and its time per block overstates a light kernel's several times
        rounds = -(-(-(-left // self.per_batch)) // ways)      # batches left, ``ways`` at a time
        self.at_least = spent + rounds * batch_seconds if blocks < self.per_batch else None
        # (a Progress record is made only for a hook that draws it, or a stop that tells it: a bar that
        # shows nothing yet says so, and a program launching a small kernel 10^5 times makes none)
        quiet = getattr(self.report, "quiet", None)
        p = None
        if self.report is not None and not (quiet is not None and quiet(self.blocks_done, self.blocks_total)):
            p = self.progress(now)
            self.report(p)
        if not left:
            return
        # (the clock as read at the batch's end: each read is a system call)
        if self.time_is_up(now):
            raise self.timed_out()
        too_long = self.clearly_too_long(speedup, now)
        # One batch that contradicts the one before it is not enough to stop: a first full batch may pay
        # once for what the next ones do not (the first touch of a fresh 1 GiB allocation's pages: a
        # DLI transpose's 504 blocks took 1.7 s after a 4-block sample's 1 ms, then 7 ms a batch;
        # stopped as 'about 2.2 minutes', the launch took 5.3 s). It stops at the next batch if that
        # one agrees.
        # (A batch far slower a block than the one before, which fitted, is that; a steady pace is not.)
        per_block, self.per_block = self.per_block, batch_seconds / blocks
        fitted_before, self.fitted = self.fitted, not self.clearly_too_long(now=now)
        once = fitted_before and per_block is not None and self.per_block > ONE_TIME_COST * per_block
        if too_long and not once and not self.second_opinion(blocks, batch_seconds):
            raise self.stopped_early(p or self.progress(now), *too_long)

    def second_opinion(self, blocks: int, batch_seconds: float) -> bool:
        """Should a stop that the sample batch alone decided wait for a second sample (the next blocks,
        as many)? The sample's blocks stand for the whole grid, but they are the grid's *first* blocks,
        and a kernel whose work is in its first threads (``if (n < 1024)`` over 781,250 blocks of 128:
        CudaSteps' stream.cu, 8 blocks of 100,000 turns) made every later block look as long: "10.6
        trillion thread-instructions, between 93 minutes and 2.1 days" for a launch of about a billion.
        A second sample whose blocks agree confirms the stop; blocks far lighter let the launch go on,
        estimated at their pace. Only where the second sample fits well within the time left (a
        sample that took most of it stops the launch at once, as before)."""
        if self.second_sample or blocks >= self.per_batch or self.blocks_done != blocks:
            return False
        spent = self.spent()
        left = min(self.timeout - spent, self.wall_deadline - time.monotonic(), cpu_time_left())
        if batch_seconds > left / 2:
            return False
        self.second_sample = True
        return True

    def clearly_too_long(self, speedup: float = 1.0, now: float | None = None) -> tuple | None:
        """(by whom, which limit) when the estimate, ``speedup`` times faster, clearly outlasts the
        time there is, else None (``now``: this thread's CPU clock, if just read)."""
        if self.estimate is None:
            return None
        spent = self.spent(now)
        least = (self.estimate if self.at_least is None else self.at_least) / speedup
        if least > CLEARLY * self.timeout:
            return "by the watchdog", f"its limit of {self.timeout:g} s"
        wall_left = self.wall_deadline - time.monotonic()
        if least - spent > CLEARLY * wall_left:
            return "", f"the {duration(max(wall_left, 0))} left of the program's time limit"
        cpu_left = cpu_time_left()
        if least - spent > CLEARLY * cpu_left:
            soft = resource.getrlimit(resource.RLIMIT_CPU)[0]
            if soft != resource.RLIM_INFINITY and least <= USED_UP * soft:     # the launch alone fits: what ran
                # before it took the limit
                return "", (f"the {duration(max(cpu_left, 0))} left of the program's CPU-time limit (ulimit -t, "
                            f"{soft:g} s), {USED_BEFORE}")
            return "", f"the {duration(max(cpu_left, 0))} left of the CPU-time limit (ulimit -t)"
        return None

    def surely_fits(self) -> bool:
        """Does the grid fit its time even at the latest batch's pace per block (which overstates a light
        kernel's after the small sample), with the time spent so far? Then no batch will stop it early,
        and the batches after it may run together on several threads (parallel.py)."""
        if self.estimate is None:
            return False
        spent = self.spent()
        return (self.estimate <= self.timeout and self.estimate - spent <= self.wall_deadline - time.monotonic()
                and self.estimate - spent <= cpu_time_left())

    def stopped_early(self, p: Progress, by: str, limit: str) -> KernelError:
        # (a limit the program's earlier launches used up is not this kernel's to shorten)
        ways = CPU_LIMIT_WAYS if limit.endswith(USED_BEFORE) else WAYS
        msg = (f"The kernel {self.kernel} was stopped {by + ' ' if by else ''}early: it would run far beyond {limit}. "
               f"{p.describe()} {p.describe_estimate()} To run it anyway: {ways}")
        return self.error(msg, p)

    def timed_out(self, where: str = "", line=None, waiting: str = "", getting_on: bool | None = None) -> KernelError:
        """The watchdog's error: how far the kernel got, where its threads were, what to do.
        ``waiting``: what its threads were waiting on (a lock, a flag: engine.waiting_on), and
        ``getting_on`` whether that wait let threads through (slow) or not (stuck)."""
        p = self.progress()
        limit = (f"ran for more than {self.timeout:g} s and was stopped by the watchdog"
                 if self.spent() > self.timeout or time.monotonic() <= self.wall_deadline else "was stopped when the program's time limit ran out")
        msg = f"The kernel {self.kernel} {limit}. {p.describe()} {p.describe_estimate()}".rstrip()
        if p.estimated_seconds is None and not p.blocks_done:
            msg += " " + self.cannot_tell()
        if waiting:
            msg += " " + waiting
        # blocks that ended give a pace: a launch stopped within the time that pace needs for the whole grid
        # (a program's CPU limit running out in its seventh 4-second histogram) is slow, not stuck
        on_pace = p.blocks_done > 0 and p.estimated_seconds is not None and p.seconds <= CLEARLY * p.estimated_seconds
        if getting_on:
            msg += (f" {where}" if where else "") + f" It is slow, not stuck. To let it finish: {WAYS}"
        elif where and self.forecast is None and not on_pace:
            msg += f" {where} Does a loop there ever end? If the kernel is just slow: {WAYS}"
        elif where:                          # its loops do end: the estimate counted them, or its blocks ended
            msg += f" {where} To let it finish: {WAYS}"
        else:
            msg += f" To let it finish: {WAYS}"
        return self.error(msg, p, line)

    def cannot_tell(self) -> str:
        """Why a launch stopped before any block ended has no estimate: the blocks of a batch run
        together, in lock step, so none ends before the others, and the skeleton (forecast.py) could
        not count what its loops still had ahead (they wait on memory the kernel itself writes)."""
        together = ("its one block had not ended" if self.blocks_total == 1 else
                    f"{'both' if self.blocks_total == 2 else f'all {self.blocks_total:,}'} of its blocks run together, as one batch, so none ends before the others"
                    if self.per_batch >= self.blocks_total else
                    f"the {min(self.per_batch, self.blocks_total):,} blocks of its first batch run together, "
                    "so none ends before the others")
        return (f"How long the whole grid would take cannot be told: {together}, and the work its threads "
                "still had ahead could not be counted from its loops.")

    def error(self, msg: str, p: Progress, line=None) -> KernelError:
        err = KernelError(msg, "cudaErrorLaunchTimeout", [Finding("watchdog", msg, self.kernel, line,
                                                                     details={"progress": asdict(p)})])
        err.progress = p
        return err
