"""The PTX IR: a module of variables and functions, each function a flat list of instructions.

Plain data only (no numpy): the emulator decodes it, the analysis reads it, tests build it by hand.
Operands are small tuples so that decoding can switch on ``op[0]``:

    ("reg", name, negated)        %r1, !%p2
    ("sreg", name, component)     %tid.x -> ("sreg", "tid", "x"); %laneid -> ("sreg", "laneid", "")
    ("imm", value, kind)          kind: "int" | "f32" (value = bit pattern) | "f64" (bit pattern)
    ("sym", name)                 a variable, a label or a function
    ("mem", base, offset)         [%rd1+4] -> ("mem", ("reg", "%rd1", False), 4); [sym+8] base is ("sym", ..)
                                  [%rd1, {%f1, %f2}] (textures, surfaces) -> ("mem", ("vec", (handle, coords)), 0)
    ("vec", (op, op, ...))        {%r1, %r2}
    ("pair", op, op)              %r25|%p4 (a result and its predicate)
    ("list", (op, ...))           the parenthesised argument lists of call
"""
from __future__ import annotations

from dataclasses import dataclass, field

TYPES = {
    "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64", "b128",
    "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "pred", "tf32", "e4m3", "e5m2",
}


@dataclass
class Instruction:
    opcode: str                   # "add", "ld", "setp", ...
    mods: tuple                   # every dotted modifier in order: ("global", "u32")
    operands: tuple
    guard: tuple | None = None    # ("%p1", negated)
    line: int | None = None       # source line (from .loc), None where the compiler says line 0
    file: int | None = None
    text: str = ""
    index: int = 0                # position in the function's instruction list
    elsewhere: tuple | None = None    # (file name, line) for a line of another file (an included .cu, a header)

    @property
    def place(self) -> str:
        """Where the instruction comes from, as messages say it: "line 12" of the source (PTX file 1),
        "line 12 of scan.cuh" of another file, or "an unknown line"."""
        if self.line:
            return f"line {self.line}"
        if self.elsewhere:
            return f"line {self.elsewhere[1]} of {self.elsewhere[0]}"
        return "an unknown line"

    @property
    def types(self) -> tuple:
        """The type modifiers in order (cvt has two: destination, source)."""
        return tuple(m for m in self.mods if m in TYPES)

    @property
    def type(self) -> str | None:
        t = self.types
        return t[-1] if t else None

    def has(self, *mods) -> bool:
        return any(m in self.mods for m in mods)


@dataclass
class Variable:
    """A module- or function-level variable in a state space (.global, .const, .shared, .local)."""

    name: str
    space: str
    type: str
    size: int                     # bytes (0 for `extern .shared x[]`)
    align: int
    init: bytes | None = None
    extern: bool = False
    # (offset, symbol) pairs: initializers that hold the address of another variable (generic)
    relocs: tuple = ()


@dataclass
class Param:
    name: str
    type: str
    size: int
    align: int
    ptr: bool = False


@dataclass
class Function:
    name: str
    is_entry: bool
    params: list = field(default_factory=list)          # [Param]
    returns: list = field(default_factory=list)         # [Param]
    regs: dict = field(default_factory=dict)             # name -> type
    locals: list = field(default_factory=list)          # [Variable] (.local depots)
    shared: list = field(default_factory=list)          # [Variable] demoted to function scope
    body_params: dict = field(default_factory=dict)     # name -> Param (.param inside the body)
    insts: list = field(default_factory=list)            # [Instruction]
    labels: dict = field(default_factory=dict)           # label -> instruction index
    extern: bool = False                                  # declared only (vprintf, __assertfail)
    directives: dict = field(default_factory=dict)       # .maxntid, .reqntid, ...

    @property
    def local_size(self) -> int:
        return sum(v.size for v in self.locals)


@dataclass
class Module:
    version: str = ""
    target: str = ""
    address_size: int = 64
    variables: dict = field(default_factory=dict)        # name -> Variable (global/const/shared)
    functions: dict = field(default_factory=dict)        # name -> Function
    files: dict = field(default_factory=dict)             # .file index -> path

    @property
    def entries(self) -> list:
        return [f for f in self.functions.values() if f.is_entry]


def leaves(ops):
    """The operands inside ``ops``, nested ones included (a vector's elements, a memory operand's base,
    both halves of a pair, a call's argument lists), in order: what a pass over registers or symbols walks."""
    for o in ops:
        if o[0] in ("vec", "list"):
            yield from leaves(o[1])
        elif o[0] == "pair":
            yield from leaves((o[1], o[2]))
        elif o[0] == "mem":
            if o[1] is not None:
                yield from leaves((o[1],))
        else:
            yield o


def call_parts(inst: Instruction) -> tuple:
    """(target, return operands, argument operands) of a ``call``: the target is ("sym", name), or
    the ("reg", ...) holding a function address for a call through a pointer."""
    rets, target, args = [], None, []
    for o in inst.operands:
        if target is None and o[0] in ("sym", "reg"):
            target = o
        elif o[0] == "list":
            (args if target is not None else rets).extend(o[1])
    return target, rets, args
