"""Widgets that show what the threads did, drawn from plain data (launch records, traces, timelines).

    rec = cudalab.widgets.trace(kernel, grid, block, (A, B, C, n))   # launch, recording each thread
    cudalab.widgets.show(rec, "banks", line=7)                       # one of WIDGETS
    rec = cudalab.widgets.pipeline(kernel, grid, block, (A, B))      # follow one block's async copies
    cudalab.widgets.show(rec, "pipeline")
    cudalab.widgets.fragment_map("mma.m16n8k16", "a")                 # which lane holds which element

Each widget is an ipywidgets box around one clickable SVG; its picture is also saved in the notebook
as HTML, so nbconvert, GitHub and nbviewer show it. ``cudalab.widgets.<name>.<name>_model`` builds
the plain data a picture draws, with no browser involved.
"""
from __future__ import annotations

from .asyncpipe import PipelineData, pipeline
from .observe import Trace, trace
from .tensorcore import FragmentMap, fragment_map

WIDGETS = {
    "threads": "ThreadExplorer", "tiling": "TilingExplorer", "banks": "BankConflicts",
    "coalescing": "Coalescing", "divergence": "Divergence", "heatmap": "MemoryHeatmap",
    "streams": "StreamOverlap", "occupancy": "OccupancyCalculator", "pipeline": "AsyncPipeline",
}


def _trace_of(obj):
    if isinstance(obj, Trace):
        return obj
    reports = getattr(obj, "reports", None)
    if reports and "threads" in reports:
        return reports["threads"]
    raise ValueError("This launch was run without recording what each thread did. Launch it with "
                     "cudalab.widgets.trace(kernel, grid, block, (args...)) and show that record.")


def show(obj, what: str = "threads", **options):
    """The widget ``what`` for ``obj``: a LaunchRecord from ``trace`` (or its Trace) for "threads",
    "tiling", "banks", "coalescing", "divergence", "heatmap"; timeline rows for "streams" (a list of
    rows, or a dict {title: rows} to compare); for "occupancy" a LaunchRecord (its block size and
    shared memory), a Kernel (its registers), or None; for "pipeline" a LaunchRecord from ``pipeline``.

    ``options`` go to the widget, e.g. ``show(rec, "banks", line=7, padded=True)``,
    ``show(rec, "threads", colour="written C")``, ``show(rec, "tiling", phase=2)``.
    """
    if what not in WIDGETS:
        raise ValueError(f"cudalab.widgets.show can draw {', '.join(WIDGETS)}; not {what!r}.")
    from . import live
    cls = getattr(live, WIDGETS[what])
    if what == "streams":
        if isinstance(obj, dict):
            return cls(*obj.values(), titles=list(obj), **options)
        return cls(obj, **options)
    if what == "occupancy":
        return cls(**_occupancy_options(obj, options))
    if what == "pipeline":
        data = obj if isinstance(obj, PipelineData) else getattr(obj, "reports", {}).get("pipeline")
        if data is None:
            raise ValueError("This launch was run without following its async copies. Launch it with "
                             "cudalab.widgets.pipeline(kernel, grid, block, (args...)) and show that record.")
        return cls(data, **options)
    return cls(_trace_of(obj), **options)


def _occupancy_options(obj, options):
    opts = dict(options)
    if hasattr(obj, "block") and hasattr(obj, "shared_bytes"):        # a LaunchRecord
        b = obj.block
        opts.setdefault("block_size", b[0] * b[1] * b[2])
        opts.setdefault("shared", obj.shared_bytes)
    elif hasattr(obj, "module") and hasattr(obj, "mangled"):          # a Kernel: its real registers
        from ..device import current
        from ..device.resources import kernel_resources
        res = kernel_resources(obj, current().arch)
        opts.setdefault("registers", res.registers)
        opts.setdefault("shared", res.static_shared)
    return opts


def __getattr__(name):
    if name in WIDGETS.values() or name == "SvgView":
        from . import live
        return getattr(live, name)
    raise AttributeError(name)


__all__ = ["FragmentMap", "PipelineData", "Trace", "WIDGETS", "fragment_map", "pipeline", "show", "trace",
           *WIDGETS.values()]
