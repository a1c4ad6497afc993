"""The live widgets: ipywidgets controls around one clickable SVG (an anywidget), redrawn in Python.

Every widget draws with the same ``render_svg``/``details_html`` as its static picture, and its
``_repr_mimebundle_`` carries that picture as ``text/html`` too, so a saved notebook shows it where
no widget manager runs (nbconvert, GitHub, nbviewer).
"""
from __future__ import annotations

import anywidget
import ipywidgets as W
import traitlets as T

from . import asyncpipe, banks, coalescing, divergence, heatmap, hierarchy, occupancy, streams, tiling

# The whole front end: draw the SVG the kernel sends; a click on an element with data-pick tells Python.
_ESM = """
function render({ model, el }) {
  const draw = () => { el.innerHTML = model.get("svg"); };
  draw();
  model.on("change:svg", draw);
  let clicks = 0;
  el.addEventListener("click", (e) => {
    const t = e.target.closest("[data-pick]");
    if (!t) return;
    clicks += 1;
    model.set("picked", t.getAttribute("data-pick") + "|" + clicks);
    model.save_changes();
  });
}
export default { render };
"""


class SvgView(anywidget.AnyWidget):
    """An SVG picture whose elements marked ``data-pick`` can be clicked."""

    _esm = _ESM
    _css = ".cudalab-svg svg { max-width: 100%; height: auto; }"
    svg = T.Unicode("").tag(sync=True)
    picked = T.Unicode("").tag(sync=True)


class _Picture(W.VBox):
    """Controls, the picture, and a details panel; subclasses say which picture module draws."""

    picture = None    # module with render_svg(model) and details_html(model)

    def __init__(self, controls=()):
        self.view = SvgView()
        self.view.add_class("cudalab-svg")
        self.info = W.HTML()
        super().__init__([W.HBox(list(controls)), self.view, self.info])
        self.view.observe(lambda change: self.pick(change["new"].split("|")[0]), "picked")
        self.refresh()

    def build(self) -> dict:
        raise NotImplementedError

    def refresh(self, *_):
        self.model = self.build()
        self.view.svg = self.picture.render_svg(self.model)
        self.info.value = self.picture.details_html(self.model)

    def pick(self, what: str):
        """A click on the picture: ``what`` is the element's data-pick string."""

    def static_html(self) -> str:
        return f"<div class='cudalab-widget'>{self.view.svg}{self.info.value}</div>"

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/html"] = self.static_html()
        return data


def _watch(widget, *controls):
    for c in controls:
        c.observe(widget.refresh, "value")


class ThreadExplorer(_Picture):
    """Grid, blocks, warps and threads of a launch; click a block, then a thread."""

    picture = hierarchy

    def __init__(self, trace, block=0, thread=0, colour="warp", values=None):
        self.trace, self.values = trace, values
        self.block, self.thread = int(block), int(thread)
        choices = hierarchy.colour_choices(trace) + (["your values"] if values is not None else [])
        self.colour = W.Dropdown(options=choices, value="your values" if values is not None else colour,
                                 description="colour by")
        super().__init__([self.colour])
        _watch(self, self.colour)

    def build(self):
        custom = self.colour.value == "your values"
        return hierarchy.hierarchy_model(self.trace, self.block, self.thread,
                                         "your values" if custom else self.colour.value,
                                         self.values if custom else None)

    def pick(self, what):
        kind, _, value = what.partition(":")
        if kind == "b":
            self.block = int(value)
        elif kind == "t":
            self.thread = int(value)
        self.refresh()


class TilingExplorer(_Picture):
    """Barrier phase by barrier phase: the tiles a block copies to shared memory and what a thread reads."""

    picture = tiling

    def __init__(self, trace, phase=0, block=0, thread=0):
        self.trace = trace
        self.phase = W.IntSlider(value=phase, min=0, max=tiling.phases(trace) - 1, description="phase")
        self.block = W.Dropdown(options=[(f"block {b}", k) for k, b in enumerate(trace.blocks)], value=block,
                                description="block")
        self.thread = W.IntSlider(value=thread, min=0, max=trace.threads_per_block - 1, description="thread")
        super().__init__([self.phase, self.block, self.thread])
        _watch(self, self.phase, self.block, self.thread)

    def build(self):
        return tiling.tiling_model(self.trace, self.phase.value, self.block.value, self.thread.value)

    def pick(self, what):
        kind, _, rest = what.partition(":")
        if kind == "s":
            name, _, elem = rest.rpartition(":")
            t = tiling.writer_of(self.trace, self.phase.value, self.block.value, name, int(elem))
            if t is not None:
                self.thread.value = t


class _WarpAccess(_Picture):
    """Shared pieces of the bank and sector widgets: pick an instruction, a block, a warp, an execution."""

    space = ""

    def __init__(self, trace, line=None, inst=None, block=0, warp=0, extra=()):
        self.trace = trace
        insts = trace.instructions(self.space)
        chosen = trace.pick_instruction(self.space, inst, line)
        self.inst = W.Dropdown(options=[(f"line {ln}: {text.split()[0]}", i) for i, ln, text in insts], value=chosen,
                               description="access")
        self.block = W.Dropdown(options=[(f"block {b}", k) for k, b in enumerate(trace.blocks)], value=block,
                                description="block")
        self.warp = W.IntSlider(value=warp, min=0, max=trace.warps_per_block - 1, description="warp")
        self.occurrence = W.IntSlider(value=0, min=0, max=0, description="execution")
        super().__init__([W.VBox([W.HBox([self.inst, self.block]), W.HBox([self.warp, self.occurrence, *extra])])])
        _watch(self, self.inst, self.block, self.warp, self.occurrence, *extra)

    def refresh(self, *_):
        super().refresh()
        self.occurrence.max = max(self.model["occurrences"] - 1, 0)

    def args(self):
        return dict(inst=self.inst.value, block=self.block.value, warp=self.warp.value,
                    occurrence=self.occurrence.value)


class BankConflicts(_WarpAccess):
    """32 lanes against 32 banks for one warp's shared access; 'pad rows' shows the [N][N+1] fix."""

    picture, space = banks, "shared"

    def __init__(self, trace, line=None, inst=None, block=0, warp=0, padded=False):
        self.padded = W.Checkbox(value=padded, description="pad rows (+1 word)")
        super().__init__(trace, line, inst, block, warp, extra=[self.padded])

    def build(self):
        return banks.banks_model(self.trace, padded=self.padded.value, **self.args())


class Coalescing(_WarpAccess):
    """One warp's global access against 32-byte sectors and 128-byte lines."""

    picture, space = coalescing, "global"

    def build(self):
        return coalescing.coalescing_model(self.trace, **self.args())


class Divergence(_Picture):
    """Which lanes of a warp ran which lines; click a warp's bar to see it."""

    picture = divergence

    def __init__(self, trace, block=0, warp=0):
        self.trace, self.warp_id = trace, block * trace.warps_per_block + warp
        super().__init__()

    def build(self):
        block, warp = divmod(self.warp_id, self.trace.warps_per_block)
        return divergence.divergence_model(self.trace, block, warp)

    def pick(self, what):
        kind, _, value = what.partition(":")
        if kind == "w":
            self.warp_id = int(value)
            self.refresh()


class MemoryHeatmap(_Picture):
    """Reads and writes per element of each global array, and which block wrote or first read it."""

    picture = heatmap

    def __init__(self, trace, array=None, mode="reads"):
        self.trace = trace
        self.array = W.Dropdown(options=list(trace.arrays), value=array or next(iter(trace.arrays)),
                                description="array")
        self.mode = W.Dropdown(options=heatmap.MODES, value=mode, description="show")
        super().__init__([self.array, self.mode])
        _watch(self, self.array, self.mode)

    def build(self):
        return heatmap.heatmap_model(self.trace, self.array.value, self.mode.value)


class StreamOverlap(_Picture):
    """Gantt charts of one or more timelines on one time axis (e.g. 1 stream vs 4)."""

    picture = streams

    def __init__(self, *timelines, titles=()):
        self.timelines = [streams.timeline_model(rows, title) for rows, title in
                          zip(timelines, list(titles) + [""] * len(timelines))]
        super().__init__()

    def build(self):
        return self.timelines


class OccupancyCalculator(_Picture):
    """Sliders for block size, registers and shared memory; the limiting resource in red."""

    picture = occupancy

    def __init__(self, block_size=256, registers=32, shared=0, device=None, cluster=1):
        from ..device import current, profiles
        self.cluster = W.IntSlider(value=cluster, min=1, max=16, description="blocks/cluster")   # sm_90 devices
        self.block_size = W.IntSlider(value=block_size, min=32, max=1024, step=32, description="threads/block")
        self.registers = W.IntSlider(value=registers, min=1, max=255, description="registers")
        self.shared = W.IntSlider(value=shared, min=0, max=100 * 1024, step=512, description="shared B")
        names = profiles.list()
        self.device = W.Dropdown(options=names, value=device if device in names else current().name,
                                 description="device")
        super().__init__([W.VBox([W.HBox([self.block_size, self.registers]), W.HBox([self.shared, self.device]),
                                  self.cluster])])
        _watch(self, self.block_size, self.registers, self.shared, self.device, self.cluster)

    def build(self):
        return occupancy.occupancy_model(self.block_size.value, self.registers.value, self.shared.value,
                                         self.device.value, self.cluster.value)

    def pick(self, what):
        kind, _, value = what.partition(":")
        if kind == "bs":
            self.block_size.value = int(value)


class AsyncPipeline(_Picture):
    """An async-copy pipeline by warp and stage; click a cell: what that warp issued and waited for."""

    picture = asyncpipe

    def __init__(self, data, stage=None, warp=None):
        self.data, self.stage, self.warp = data, stage, warp
        super().__init__()

    def build(self):
        return asyncpipe.pipeline_model(self.data, self.stage, self.warp)

    def pick(self, what):
        kind, stage, warp = what.split(":")
        if kind == "c":
            self.stage, self.warp = int(stage), int(warp)
            self.refresh()
