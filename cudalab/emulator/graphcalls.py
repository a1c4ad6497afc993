"""Device-side CUDA graph calls: ``cudaGraphSetConditional(handle, value)`` from a kernel.

A conditional node (``cudaGraphCondTypeIf``/``While``/``Switch``) decides from its handle's value
whether its body runs; kernels of the graph set that value with this call (CUDA C++ Programming
Guide, "Conditional Graph Nodes"). The values live in ``program.graph_conditionals`` (handle ->
value), a dict the runtime core shares with every Program it runs; calls from lanes of one launch
are applied in lane order (racing calls are undefined behaviour on a GPU).
"""
from __future__ import annotations

import numpy as np

from .engine import DEVICE_FUNCTIONS


def _set_conditional(ex, inst, rets, args):
    sel = ex.idx
    handles = np.ascontiguousarray(ex.fr.param_buffer(args[0])[sel, 0:8]).view(np.uint64)[:, 0]
    values = np.ascontiguousarray(ex.fr.param_buffer(args[1])[sel, 0:4]).view(np.uint32)[:, 0]
    table = getattr(ex.program, "graph_conditionals", None)
    if table is None:
        table = ex.program.graph_conditionals = {}
    for h, v in zip(handles.tolist(), values.tolist()):
        table[int(h)] = int(v)


DEVICE_FUNCTIONS["cudaGraphSetConditional"] = _set_conditional
