"""PTX text -> IR (module, functions, instructions) and control flow; no numpy here."""
from .ir import Function, Instruction, Module, Param, Variable  # noqa: F401
from .parser import PtxSyntaxError, parse  # noqa: F401
