"""`pytest` with no arguments also runs every notebook under nbval, in this environment's Python."""
import os
from pathlib import Path

import pytest


def pytest_configure(config):
    # progress bars appear for launches over 2 s: outputs (and notebooks' cells, whose kernels inherit
    # this) would depend on the machine's speed; tests that check the bars turn them on themselves
    os.environ.setdefault("CUDALAB_PROGRESS", "0")
    # better builds (compiled.end_children) end with the test process, and with the programs tests run:
    # nothing a test started may be left running after it
    os.environ["CUDALAB_BUILD_AFTER_EXIT"] = "0"
    opt = config.option
    if not getattr(opt, "nbval_lax", True):      # --nbval-lax given: respect it
        opt.nbval = True
    if hasattr(opt, "nbval_current_env"):
        opt.nbval_current_env = True             # the kernel is this venv's Python, not a stored kernelspec
        if opt.nbval_sanitize_with is None:
            opt.nbval_sanitize_with = str(Path(__file__).parent / "notebooks" / "sanitize.cfg")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``pytest -n auto`` (pytest-xdist) hands out whole files: a notebook's cells must run in order in
    one kernel (nbval), and a module-scoped fixture (a test file's built programs) is built once."""
    from xdist.scheduler import LoadFileScheduling
    return LoadFileScheduling(config, log)
