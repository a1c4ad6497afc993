"""A program stopped by its time limit: the CPU-time limit's signal, and where the time went, told to the student.

Two limits stop a program on the emulator: its own time limit (``cudalab run --timeout``, wall
clock, checked by the server and by every launch) and the CPU-time limit of ``ulimit -t`` that a
grader or a shared machine sets. The latter used to end the process with SIGKILL and no word of
why; at its soft limit the kernel first sends SIGXCPU, which ``cpu_limit_stops`` turns into the
program's time running out there and then, so the student hears the same account as for
``--timeout`` (how far the kernel got, the launches so far). The hard limit, if higher, is the
time there is to say so.

A benchmark of many short launches (a timed loop per problem size) is stopped with no kernel too
long for the watchdog, so no launch's estimate says how long the program needs; ``time_spent``
counts its launches, their rate and the kernels that took the time, and, where its launches come
in runs of equal launches (kernel, shape, arguments) whose length repeats (a loop of 100 iterations per size), how much the run
it was in still needed.
"""
from __future__ import annotations

import contextlib
import resource
import signal
import socket
import sys
import threading
import time

from ..emulator import pace

PERIODS = 8         # the most launches one iteration of a repeated loop may make (scan's large arrays: 3)
LOOP_AT_LEAST = 10  # iterations of one loop of launches, at the stop, that make the program's time a loop's


class CpuLimitRanOut(socket.timeout):
    """The CPU-time limit ran out while the server waited for the program's next request."""


def _unraisable_hook(earlier):
    """``sys.unraisablehook`` that drops a ``CpuLimitRanOut`` raised while a finalizer ran (Python
    can only print it as "Exception ignored in ..."): the server's loop still stops the program
    at its next request, since ``ctx.deadline`` is already set; every other exception goes on."""
    def hook(unraisable):
        if not isinstance(unraisable.exc_value, CpuLimitRanOut):
            earlier(unraisable)
    return hook


@contextlib.contextmanager
def cpu_limit_stops(ctx):
    """While the server answers the program: SIGXCPU (``ulimit -t``'s soft limit, reached by
    this process) stops the running launch as its time limit would, or, with no launch running,
    the wait for the program's next request (``socket.timeout``, as the server's own deadline)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
    if soft == resource.RLIM_INFINITY or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ran_out(signum, frame):
        if ctx.cpu_limit is not None:       # the kernel repeats SIGXCPU each second up to the hard limit
            return
        ctx.cpu_limit, ctx.deadline = soft, time.monotonic()
        if not pace.stop_running():
            raise CpuLimitRanOut("the program's CPU-time limit ran out")

    before = signal.signal(signal.SIGXCPU, ran_out)
    hook, sys.unraisablehook = sys.unraisablehook, _unraisable_hook(sys.unraisablehook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        # once the limit has run out, its repeats (every CPU second) must not end the process before
        # it has said why: the hard limit does that, if the process does not end first
        signal.signal(signal.SIGXCPU, before if ctx.cpu_limit is None else signal.SIG_IGN)


def stopped_message(ctx, launches, timeout, calls=None, seconds: float = 0.0) -> str:
    """What cudalab says after stopping a program at its time limit (``ctx.stopped``: the
    message of the kernel it stopped, if one was running; ``calls``: the server's count of the
    program's runtime calls by request, over ``seconds`` of serving them)."""
    if ctx.cpu_limit is not None:
        limit, more = (f"used up its {ctx.limit_words()} and was stopped.",
                       "Give it more CPU time (a higher ulimit -t), or make the problem smaller.")
    else:
        limit, more = (f"ran longer than {timeout:g} s and was stopped.",
                       "Give it more time with `cudalab run --timeout SECONDS`, `%%cuda --timeout SECONDS` or "
                       "run_program(..., timeout=SECONDS), or make the problem smaller.")
    kernel = f"cudalab: {ctx.stopped}\n" if ctx.stopped else ""
    return (f"{kernel}cudalab: the program {limit}{time_spent(launches, bool(ctx.stopped))}"
            f"{calls_made(calls, seconds, launches)} {more}\n")


# the runtime calls behind the server's busiest requests, as a student wrote them
CALLS = {"copy": "cudaMemcpy/cudaMemcpyAsync", "copy2d": "cudaMemcpy2D", "memset": "cudaMemset",
         "event_record": "cudaEventRecord", "event_query": "cudaEventQuery", "event_sync": "cudaEventSynchronize",
         "stream_sync": "cudaStreamSynchronize", "stream_query": "cudaStreamQuery", "device_sync": "cudaDeviceSynchronize",
         "malloc": "cudaMalloc(Host)", "free": "cudaFree(Host)", "malloc_async": "cudaMallocAsync", "free_async": "cudaFreeAsync",
         "graph_launch": "cudaGraphLaunch", "launch": "kernel launches"}


def calls_made(calls, seconds: float, launches) -> str:
    """A benchmark of runtime calls rather than kernels (10^5 cudaMemcpyAsync of a few bytes per
    size, timed with the host's clock) finishes no kernel: how many calls it made, at what rate, and
    which, so the student can tell how far it got. Said only where the calls outnumber the launches
    tenfold (a launch benchmark's account is ``time_spent``'s)."""
    total = sum((calls or {}).values())
    if total < 1000 or total < 10 * len(launches):
        return ""
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:2]
    rate = f", about {total / seconds:,.0f} a second" if seconds > 0 else ""
    which = ", ".join(f"{CALLS.get(op, op)} {n:,}" for op, n in top)
    return (f" It had made {total:,} runtime calls{rate} ({which}): each is a request to the emulator, "
            "hundreds of times slower than a GPU's driver (a few microseconds a call there), so a loop of "
            "10^5 or 10^6 calls per data point needs minutes to hours here.")


def time_spent(launches, running: bool = False) -> str:
    """Where a stopped program's time went: its finished launches (``running``: the last record
    is the launch that was stopped), their rate, the kernels that took the time, and the rest of
    the run of launches it was in (``rest_of_run``)."""
    done = launches[:-1] if running and launches else launches
    if not done:
        return "" if running else " It had not finished any kernel yet."
    by_kernel: dict = {}
    for rec in done:
        n, t = by_kernel.get(rec.kernel, (0, 0.0))
        by_kernel[rec.kernel] = (n + 1, t + _seconds(rec))
    top = sorted(by_kernel.items(), key=lambda kv: -kv[1][1])[:3]
    total = sum(t for _, t in by_kernel.values())
    parts = ", ".join(f"{n:,} of {name} ({t:.1f} s{f', {_each(t / n)} each' if n > 1 else ''})"
                      for name, (n, t) in top)
    launched = f"{len(done):,} kernel launch{'es' if len(done) > 1 else ''}"
    per_second = len(done) / total if total > 0 else 0.0
    rate = f" ({per_second:,.0f} a second)" if per_second >= 10 else f" ({per_second:.2g} a second)"
    rate = rate if total > 0 and len(done) > 1 else ""
    return (f" It had run {launched}{' before it' if running else ''}, {total:.1f} s of the emulator's CPU time in all{rate}: "
            f"{parts}{', ...' if len(by_kernel) > 3 else ''}.{rest_of_run(launches, running) or in_a_loop(launches, running)}")


def _seconds(rec) -> float:
    """A launch's CPU seconds (the watchdog's clock: a busy machine's wait is not the program's)."""
    return getattr(rec, "cpu_time", 0.0) or getattr(rec, "wall_time", 0.0) or 0.0


def _each(seconds: float) -> str:
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def _shape(rec) -> tuple:
    return rec.kernel, tuple(rec.grid), tuple(rec.block), getattr(rec, "arguments", 0)


def runs(launches) -> list:
    """The launches cut into runs, each the repeats of one iteration of a loop: (first index,
    iteration length in launches, iterations), in order. A run is the longest stretch that repeats
    its first ``p`` launches (kernels, shapes and arguments), for the smallest ``p`` (up to ``PERIODS``) that
    repeats at all; a launch that starts no repeat is a run of one."""
    keys = [_shape(r) for r in launches]
    found, i = [], 0
    while i < len(keys):
        period = next((p for p in range(1, PERIODS + 1) if keys[i:i + p] == keys[i + p:i + 2 * p]), None)
        if period is None:
            found.append((i, 1, 1))
            i += 1
            continue
        end = i + 2 * period
        while end < len(keys) and keys[end] == keys[end - period]:
            end += 1
        found.append((i, period, (end - i) // period))
        i += (end - i) // period * period
    return found


def rest_of_run(launches, running: bool = False) -> str:
    """When the runs before the last one (the last two of its iteration length that repeat at all:
    UnifiedMemoryPerf warms up with two single launches before each loop of 20) had the same number
    of iterations, the last run, stopped short of it, probably has as many (unless more than ``PERIODS``
    runs came between: NCI's axpy_overlapped, one launch an iteration at first, then 306 that
    ``runs`` cannot see as one iteration, was told "about 0 s"): how many it had left and, at its
    finished launches' pace, how long they need (``running``: the last record is a launch stopped
    midway). Else ""."""
    cut = runs(launches)
    if len(cut) < 3:
        return ""
    first, period, iterations = cut[-1]
    same = [n for _, p, n in cut[:-1] if p == period and n > 1]     # (not the launches between loops)
    if len(same) < 2 or same[-1] != same[-2] or same[-1] <= iterations or same[-1] < 3:
        return ""
    last_loop = max(k for k, (_, p, n) in enumerate(cut[:-1]) if p == period and n > 1)
    if len(cut) - 1 - last_loop > PERIODS:      # many single launches since (a loop of more than PERIODS): no pattern
        return ""
    done = launches[first:len(launches) - running]
    seconds = sum(_seconds(r) for r in done)
    if not done or seconds <= 0:
        return ""
    per_launch = seconds / len(done)
    left = same[-1] * period - len(done)
    kind = launches[first].kernel if period == 1 else f"{period} launches ({launches[first].kernel}, ...)"
    return (f" Its launches came in runs of {same[-1]} iterations of {kind}, each run the same launches "
            f"over and over (as a loop timed once per problem size makes them); the run it was in had finished {len(done) // period} of "
            f"them: the rest of that run alone needs about {left * per_launch:.0f} s at its pace so far "
            f"({_each(per_launch * period)} an iteration), and what comes after it is not known.")


def in_a_loop(launches, running: bool = False) -> str:
    """A program stopped inside a long loop of the same launches (a Jacobi solver's 16,494 iterations
    to convergence, a transpose timed 100 times) whose length nothing before it tells (``rest_of_run``
    needs two earlier loops of one length): how many iterations it had run, what one costs here, and
    so what the rest needs, the one thing the emulator cannot know being how many iterations the
    program makes (a count in its source, a convergence test). Where an earlier loop of the same
    launches per iteration ran to its end (the same solver over a second kernel), "if it makes as many
    as that one" gives the time left. Else ""."""
    finished = launches[:len(launches) - running]
    cut = runs(finished)
    k = len(cut) - 1
    # launches after the last whole iteration, fewer than an iteration (ping-pong buffers' first launch of
    # the next), are a run of their own to ``runs``: they belong to the loop before them
    while k > 0 and cut[k][2] == 1 and len(finished) - cut[k][0] < cut[k - 1][1]:
        k -= 1
    if k < 0:
        return ""
    first, period, iterations = cut[k]
    done = finished[first:first + period * iterations]
    cut = cut[:k + 1]
    seconds = sum(_seconds(r) for r in done)
    if iterations < LOOP_AT_LEAST or seconds <= 0:
        return ""
    each = seconds / iterations
    names = list(dict.fromkeys(r.kernel for r in launches[first:first + period]))
    kind = (names[0] if period == 1 else f"{period} launches of {names[0]}" if len(names) == 1   # (ping-pong buffers)
            else f"{period} launches ({', '.join(names[:2])}{', ...' if len(names) > 2 else ''})")
    text = (f" It was in a loop, the same launch{'es' if period > 1 else ''} over and over: {iterations:,} iterations of "
            f"{kind} so far, {_each(each)} an iteration here ({seconds:.1f} s).")
    before = [(i, n) for i, p, n in cut[:-1] if p == period and n > iterations]
    if before:
        i, n = before[-1]
        if launches[i].kernel != launches[first].kernel:
            text += (f" If it makes as many as the loop before it ({n:,} iterations of {launches[i].kernel}), "
                     f"the rest of this one needs about {pace.duration((n - iterations) * each)} at this pace.")
    scale = 10
    while scale * each < 30 and scale < 10 ** 7:
        scale *= 10
    return (text + f" How many iterations it makes is the program's own (a count in its source, a test for "
            f"convergence): every {scale:,} more need about {pace.duration(scale * each)} here, where a GPU takes "
            f"microseconds an iteration; fewer iterations or a smaller problem fit.")
