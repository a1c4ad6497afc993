"""The ``nvtx`` package's annotations for programs written for a GPU (NVIDIA's courses mark their
phases with ``@nvtx.annotate`` for Nsight Systems): cudalab.numba.install() puts this module in its
place when the package is not installed. cudalab's timeline has no named ranges, so the
annotations mark nothing; the program runs as it would without a profiler attached."""
from __future__ import annotations

import contextlib


class annotate(contextlib.ContextDecorator):        # noqa: N801  (the package's name)
    """``with nvtx.annotate("phase"):`` or ``@nvtx.annotate("phase")``: a range that marks nothing."""

    def __new__(cls, message=None, *args, **kwargs):
        if callable(message):               # ``@nvtx.annotate`` without parentheses: the function itself
            return cls()(message)
        return super().__new__(cls)

    def __init__(self, message=None, color=None, domain=None, category=None, payload=None):
        self.message = message

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def push_range(message=None, color=None, domain=None, category=None, payload=None):
    pass


def pop_range(domain=None):
    pass


def start_range(message=None, color=None, domain=None, category=None, payload=None):
    return 0


def end_range(range_id):
    pass


def mark(message=None, color=None, domain=None, category=None, payload=None):
    pass
