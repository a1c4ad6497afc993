"""The C heap of the process that serves a program: freed kernel-sized arrays are kept for reuse.

A launch allocates its batches' register arrays (2 to 12 MB each at half a million lanes, tens
of them at once) and frees them all when it ends. glibc's malloc hands memory above its *trim
threshold* back to the system at that moment (the threshold follows the largest block freed, 64 MB
at most), so the next launch of a program that launches in a loop (a benchmark's 100 identical
launches) gets fresh pages and takes a page fault on every 4 KB it touches: scan's 3,300 launches
took 3.3 million faults, 13% of its CPU time, all of it system time. Keeping up to ``KEEP_BYTES``
at the top of the heap, and serving arrays of up to ``FROM_HEAP_BYTES`` from it, makes a repeated
launch touch the pages the last one used.
"""
from __future__ import annotations

import ctypes

KEEP_BYTES = 256 << 20          # freed heap memory kept (engine.BATCH_BYTES: one batch's state)
FROM_HEAP_BYTES = 32 << 20      # arrays up to this size come from the heap (glibc's own largest)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3       # malloc.h


def keep_freed_memory() -> bool:
    """Set the heap's thresholds (glibc's ``mallopt``); False where the C library has none (macOS,
    musl): there memory goes back as before."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # (setting the trim threshold turns glibc's own adjustment of both off: set both)
    return bool(mallopt(_M_MMAP_THRESHOLD, FROM_HEAP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, KEEP_BYTES))
