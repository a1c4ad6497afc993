"""Python's cycle collector while a program is served: the long-lived objects frozen out of its scans.

Every collection of the oldest generation walks every object the process holds: the parsed and
decoded program, its native code's wrappers, cudalab's modules. A program that makes thousands of
small launches makes enough short-lived objects for a few such walks per thousand launches, each tens
of milliseconds: NCI's axpy_overlapped (9,180 launches with three copies each) spent 0.31 s of its
2.9 s in four of them, and 0.45 s in the collector in all. What exists when serving begins is
frozen (``gc.freeze``: left out of every collection), and so again is what lived through the 10th,
100th and 1,000th request and every 10,000th after, each time after a collection of the young
generations, so that no fresh garbage is frozen with them (the launch records and timeline rows a long
program keeps are the bulk of it). With that, its oldest-generation walks took 0.02 s. Serving ends
with ``gc.unfreeze``: a notebook that runs program after program collects what they left as before.
"""
from __future__ import annotations

import gc

FREEZE_AFTER = frozenset({10, 100, 1000})     # requests answered; then every FREEZE_EVERY
FREEZE_EVERY = 10000


class FrozenWhileServing:
    """``with FrozenWhileServing() as frozen: ... frozen.answered()`` after each request."""

    def __enter__(self):
        self.requests = 0
        gc.freeze()
        return self

    def answered(self):
        self.requests += 1
        if self.requests in FREEZE_AFTER or self.requests % FREEZE_EVERY == 0:
            gc.collect(1)
            gc.freeze()

    def __exit__(self, *exc):
        gc.unfreeze()
        return False
