"""cupyx.profiler on cudalab: ``benchmark`` times a function on the modeled timeline (GPU times are
what the emulator's model says the device would take; CPU times are this machine's, emulation
included), ``time_range`` marks nothing."""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np


@dataclass
class _PerfCaseResult:
    """CuPy's benchmark result: ``cpu_times`` (seconds, one per run) and ``gpu_times`` (seconds, one
    row per device: here one)."""

    name: str
    cpu_times: np.ndarray
    gpu_times: np.ndarray

    def __str__(self):
        def stat(t):
            return (f"{t.mean() * 1e6:>10.3f} us   +/- {t.std() * 1e6:>6.3f} (min: {t.min() * 1e6:>9.3f} / "
                    f"max: {t.max() * 1e6:>9.3f}) us")
        return f"{self.name:<20s}:    CPU:{stat(self.cpu_times)}     GPU-0:{stat(self.gpu_times[0])}"

    def to_str(self, show_gpu=True):
        return str(self)


def benchmark(func, args=(), kwargs=None, n_repeat=10000, *, name=None, n_warmup=10, max_duration=np.inf,
              devices=None):
    """Run ``func(*args, **kwargs)`` n_warmup times, then up to n_repeat times (stopping after
    ``max_duration`` seconds of this machine's time), timing each run between two events on the
    current stream."""
    from ..cupy.cuda import Event, get_current_stream
    kwargs = kwargs or {}
    for _ in range(n_warmup):
        func(*args, **kwargs)
    cpu, gpu = [], []
    started = time.perf_counter()
    for _ in range(n_repeat):
        start, end = Event(), Event()
        t = time.perf_counter()
        start.record(get_current_stream())
        func(*args, **kwargs)
        end.record(get_current_stream())
        end.synchronize()
        cpu.append(time.perf_counter() - t)
        gpu.append(start.elapsed_time(end) / 1e3)
        if time.perf_counter() - started >= max_duration:
            break
    return _PerfCaseResult(name or getattr(func, "__name__", "function"), np.array(cpu), np.array([gpu]))


@contextlib.contextmanager
def time_range(message=None, color_id=None, argb_color=None, sync=False):
    """An NVTX range (it marks nothing on cudalab's timeline); ``@time_range()`` decorates too."""
    yield




def load_ipython_extension(ipython):
    """``%load_ext cupyx.profiler``: the ``%gpu_timeit`` line and ``%%gpu_timeit`` cell magic, which
    times a statement with ``benchmark`` (options ``-n``/``--n-repeat``, ``-w``/``--n-warmup``,
    ``--max-duration``, with benchmark's defaults) and prints its result line."""
    import argparse
    import inspect
    import shlex
    import textwrap

    defaults = {k: p.default for k, p in inspect.signature(benchmark).parameters.items()
                if p.default is not inspect.Parameter.empty}
    parser = argparse.ArgumentParser(prog="%gpu_timeit", add_help=False)
    parser.add_argument("-n", "--n-repeat", type=int, default=defaults["n_repeat"])
    parser.add_argument("-w", "--n-warmup", type=int, default=defaults["n_warmup"])
    parser.add_argument("--max-duration", type=float, default=defaults["max_duration"])

    def gpu_timeit(line, cell=None, local_ns=None):
        words = shlex.split(line)
        options = []                    # the options come first; the rest of a line is the statement
        while words and words[0].startswith("-"):
            options.append(words.pop(0))
            if options[-1] in ("-n", "--n-repeat", "-w", "--n-warmup", "--max-duration") and words:
                options.append(words.pop(0))
        opts = parser.parse_args(options)
        namespace = ipython.user_ns
        if cell is None:
            code = compile(line[line.index(words[0]):] if words else "None", "<gpu_timeit>", "eval")
            run = lambda: eval(code, namespace, local_ns)          # noqa: E731
        else:
            code = compile(textwrap.dedent(cell), "<gpu_timeit>", "exec")
            run = lambda: exec(code, namespace, local_ns)          # noqa: E731
        print(benchmark(run, n_repeat=opts.n_repeat, n_warmup=opts.n_warmup, max_duration=opts.max_duration,
                        name="run"))

    from IPython.core.magic import needs_local_scope
    ipython.register_magic_function(needs_local_scope(gpu_timeit), "line_cell", "gpu_timeit")
