"""What the widgets read from a Python kernel's source: its ``cuda.shared.array`` declarations.

numba names a kernel's shared arrays ``_cudapy_smem_<n>`` in PTX, numbered in the order it lowers
them, which is their order in the function; the source gives each its Python name, shape and dtype.
"""
from __future__ import annotations

import ast

import numpy as np


def _constants(tree) -> dict:
    """Module-level ``NAME = <int>`` (a tile size like ``TPB = 16``)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            out.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return out


def _value(node, consts):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, consts) for e in node.elts)
    return None


def _dtype(node):
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    try:
        return np.dtype(name)
    except TypeError:
        return None


def shared_arrays(source: str, kernel: str) -> list:
    """[(name, shape or None, numpy dtype or None)] for each ``x = cuda.shared.array(shape, dtype)`` in
    the function ``kernel``, in source order; [] when the source cannot be read as Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    consts = _constants(tree)
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    out = []
    for node in ast.walk(func) if func is not None else ():
        call = getattr(node, "value", None)
        if not (isinstance(node, ast.Assign) and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "array" and getattr(call.func.value, "attr", None) == "shared"):
            continue
        kw = {k.arg: k.value for k in call.keywords}
        shape = kw.get("shape", call.args[0] if call.args else None)
        dtype = kw.get("dtype", call.args[1] if len(call.args) > 1 else None)
        shape = _value(shape, consts) if shape is not None else None
        shape = (shape,) if isinstance(shape, int) else shape
        name = node.targets[0].id if isinstance(node.targets[0], ast.Name) else None
        out.append((node.lineno, name, shape if shape and all(isinstance(s, int) for s in shape) else None,
                    _dtype(dtype) if dtype is not None else None))
    return [row[1:] for row in sorted(out, key=lambda row: row[0])]     # ast.walk goes breadth first
