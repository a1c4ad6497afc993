"""The progress bar of a long launch: blocks done of the grid, the rate and the time left (tqdm).

A launch that is still running after ``SHOW_AFTER`` seconds gets a bar, updated after every batch
of blocks from the engine's ``Progress`` records (emulator/pace.py): a widget in a notebook
(tqdm.auto), a line on stderr in a terminal. Short launches show nothing. Programs' kernels run in
this process (programs/server.py), so their bar goes to this process's stderr, never into the
program's stdout. Off with ``cudalab.set_progress(False)`` or ``CUDALAB_PROGRESS=0``.
"""
from __future__ import annotations

import os
import sys
import time

SHOW_AFTER = 2.0        # seconds a launch runs before its bar appears
_setting = None         # set_progress(): True, False, or None (the environment decides)


def set_progress(on: bool | None = True):
    """Show progress bars for long launches (True), never (False), or as CUDALAB_PROGRESS says
    (None; the default: bars in notebooks and terminals, none when stderr is a file or a pipe)."""
    global _setting
    if on is not None and not isinstance(on, bool):
        from ..errors import CudaError
        raise CudaError(f"set_progress() takes True, False or None, not {on!r}.", "cudaErrorInvalidValue")
    _setting = on


def enabled() -> bool:
    if _setting is not None:
        return _setting
    env = os.environ.get("CUDALAB_PROGRESS", "").strip().lower()
    if env:
        return env not in ("0", "no", "off", "false")
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Bar:
    """The hook ``engine.launch(progress=...)`` calls after each batch; draws nothing until the
    launch has run ``SHOW_AFTER`` seconds, and only while blocks remain and bars are on. Close it
    when the launch ends, however it ends."""

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.t0 = time.monotonic()
        self.bar = None

    def quiet(self, blocks_done: int, blocks_total: int) -> bool:
        """Would a call now draw nothing (no bar yet, and the launch has ended or is too young for one)?
        Then the engine need not make the Progress record for it (pace.Pace.batch_done)."""
        return self.bar is None and (blocks_done >= blocks_total or time.monotonic() - self.t0 < SHOW_AFTER)

    def __call__(self, p):
        if self.bar is None:
            if time.monotonic() - self.t0 < SHOW_AFTER or p.blocks_done >= p.blocks_total or not enabled():
                return
            from tqdm.auto import tqdm
            # delay: drawn first by the refresh below, already showing the blocks done
            self.bar = tqdm(total=p.blocks_total, desc=self.kernel, unit=f" {p.unit}", smoothing=0, file=sys.stderr,
                            dynamic_ncols=True, delay=1e-9)
            self.bar.start_t -= time.monotonic() - self.t0     # the rate and ETA count from the launch's start
        if self.bar.total != p.blocks_total:      # a launch tree's forecast of its grids changes as it grows
            self.bar.total = p.blocks_total
        self.bar.set_postfix_str(f"{_short(p.rate)} thread-instructions/s", refresh=False)
        self.bar.n = p.blocks_done       # with no update() calls, tqdm's rate is blocks done / time since start
        if p.blocks_done < p.blocks_total:
            self.bar.refresh()           # (the last state is drawn by close())

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _short(x: float) -> str:
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= size:
            return f"{x / size:.1f}{unit}"
    return f"{x:.0f}"
