"""Stream queues: a program's launches wait in their streams until the host needs them done.

A GPU runs a kernel when its stream gets to it, while the host goes on: cudaStreamQuery answers
cudaErrorNotReady, host code between the launch and cudaStreamSynchronize overlaps the kernel,
and a kernel may wait for a flag in mapped or managed memory that the host sets after the launch
(cuda-samples' UnifiedMemoryPerf spins ``while (*latch < 1)`` until the host writes 1 just before
synchronizing). So a whole program's launch (``Context.launch``) is queued as ``Work`` in its
stream, and so is the event record or event wait issued behind it, and every host function (it
runs on a thread of the runtime's when its turn comes: ``Context.run_host_function``); the work runs
when the host needs it: a synchronization (stream, event, device, a blocking copy), a second query
about it, or an operation the host side carries out itself (a copy, a memset, which run at once
after the work they follow). Work runs in issue order, and only the work that the needed
work follows: the same stream's earlier work, the legacy default stream's implicit
synchronization with blocking streams (Programming Guide, "Implicit Synchronization"), events a
stream waits for. An error of a queued kernel surfaces at the call that ran it, as an
asynchronous error does at the next synchronization on a GPU.

The timeline places each piece of work at the host time it was issued, so when it ran here
changes no modeled time. The Python API launches at once (its launch records are returned) and
never queues anything, so its calls take the paths below with nothing waiting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ...errors import CudaError


@dataclass(eq=False)
class Work:
    """A kernel launch, event record or event wait issued to ``stream`` that has not run yet."""

    stream: object                      # context.Stream
    run: Callable
    after: list = field(default_factory=list)       # Work that must run first
    issued: float = 0.0                 # the host's time on the timeline when the work was issued
    asked: set = field(default_factory=set)         # the queries that found it waiting
    done: bool = False
    host_bound: bool = False            # a kernel handed page-locked or managed memory: it may wait for the host


class StreamQueues:
    """The Context mixin that queues stream work (see the module docstring)."""

    def _init_feature(self):
        self.pending: list = []         # Work not run yet, in issue order
        self.last_work: dict = {}       # Stream -> the latest Work issued to it
        self.running_work = None        # the Work running now (a graph launch's event nodes run in its place)

    def follows(self, s) -> list:
        """The pending work that work issued to ``s`` now must follow: the stream's own, and the
        legacy default stream's implicit synchronization (stream 0 waits for every blocking stream,
        and a blocking stream waits for stream 0; non-blocking streams wait for neither)."""
        lasts = [self.last_work.get(s)]
        if s.handle == 0:
            lasts += [w for t, w in self.last_work.items() if not t.non_blocking]
        elif not s.non_blocking:
            lasts.append(self.last_work.get(self.streams[0]))
        return [w for w in dict.fromkeys(lasts) if w is not None and not w.done]

    def enqueue(self, s, run: Callable, wait: bool = False, after=(), host_bound: bool = False) -> Work:
        """Issue ``run`` to stream ``s``: it runs now unless ``wait`` (a kernel) or work it follows
        (``follows(s)`` and ``after``) is still pending; then it runs when the host needs it. Issued by
        work that is running (a graph's event record node), it runs at once, in that work's place."""
        if self.running_work is not None:
            run()
            return self.running_work
        w = Work(s, run, self.follows(s) + [a for a in after if a is not None and not a.done], self.timeline.host_time,
                 host_bound=host_bound)
        self.last_work[s] = w
        if wait or w.after:
            self.pending.append(w)
        else:
            w.done = True
            run()
        return w

    def waiting(self, works) -> list:
        """``works`` and all pending work they follow, in issue order."""
        need, todo = set(), [w for w in works if w is not None and not w.done]
        while todo:
            w = todo.pop()
            if w not in need:
                need.add(w)
                todo += [a for a in w.after if not a.done]
        return [w for w in self.pending if w in need]

    def finish(self, works):
        """Run the pending work that ``works`` need, and them, in issue order, each placed on the
        timeline at the time it was issued. A failure (a kernel's error) is raised after the rest
        of the work ran, as the error of the call that needed it."""
        failed, todo = None, self.waiting(works)
        if todo:
            need = set(todo)
            self.pending = [w for w in self.pending if w not in need]
        for w in todo:
            w.done = True
            tl = self.timeline
            now, tl.host_time = tl.host_time, w.issued
            self.running_work = w
            try:
                w.run()
            except CudaError as e:
                failed = failed or e
            finally:
                tl.host_time, self.running_work = now, None
        if failed is not None:
            raise failed

    def finish_all(self):
        """Everything queued runs: cudaDeviceSynchronize, and the calls that synchronize implicitly
        (cudaFree, cudaDeviceSetLimit, cudaDeviceReset, ...)."""
        self.finish(list(self.pending))

    def settle(self):
        """The host touched a page-locked buffer that a queued copy writes or reads (the shim guards those
        pages while the copy waits: programs/shim/stackguard.c): a GPU would have run the copy meanwhile,
        so the queued work runs now, without synchronizing anything. Not a kernel handed page-locked or
        managed memory, nor what follows it: it may spin on a flag the host has yet to set (cuda-samples'
        UnifiedMemoryPerf), and on a GPU the copy behind it has not run either."""
        held = set()
        for w in self.pending:
            if w.host_bound or any(a in held for a in w.after):
                held.add(w)
        self.finish([w for w in self.pending if w not in held])

    def still_running(self, works, query) -> bool:
        """cudaStreamQuery / cudaEventQuery (``query``: the stream or event asked about) about pending
        work: the first time this query finds it, the work has just been queued and the GPU is at it
        (not ready, and the host goes on: it may be about to set the flag a kernel waits for); the
        same query again (a polling loop) runs the work, and the timeline says whether its time has
        passed."""
        need = self.waiting(works)
        if any(query not in w.asked for w in need):
            for w in need:
                w.asked.add(query)
            return True
        self.finish(need)
        return False
