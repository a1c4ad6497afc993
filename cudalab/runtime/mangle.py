"""Read a kernel's C++ parameter types back from its Itanium-mangled name (``_Z6vecAddPKfS0_Pfi``).

PTX only says ``.u64`` for both a pointer and a ``long``; the mangled name says which, so launch
errors can say "argument 3 is an int* but you passed a float". Handles what kernels use: builtin
types, pointers, const/volatile/restrict, substitutions, named structs and template arguments.
Anything unexpected returns None and the launcher falls back to the PTX types.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

BUILTIN = {
    "v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
    "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
    "x": "long long", "y": "unsigned long long", "f": "float", "d": "double", "e": "long double",
    "w": "wchar_t", "n": "__int128", "o": "unsigned __int128", "Dh": "__half", "DF16_": "_Float16",
    "DF16b": "__bf16", "Ds": "char16_t", "Di": "char32_t", "Dn": "std::nullptr_t",
}
NUMPY = {
    "bool": "bool", "char": "int8", "signed char": "int8", "unsigned char": "uint8", "short": "int16",
    "unsigned short": "uint16", "int": "int32", "unsigned int": "uint32", "long": "int64",
    "unsigned long": "uint64", "long long": "int64", "unsigned long long": "uint64", "float": "float32",
    "double": "float64", "__half": "float16", "_Float16": "float16",
}


@dataclass(frozen=True)
class CType:
    name: str            # "int", "float*", "const float*", "MyStruct"
    pointer: bool
    base: str            # the pointee (or the type itself): "float"
    numpy: str | None    # numpy dtype name of the value (scalar) or pointee (pointer)


class _Parser:
    def __init__(self, s):
        self.s, self.i, self.subs = s, 0, []

    def peek(self, n=1):
        return self.s[self.i:self.i + n]

    def take(self, n=1):
        t = self.s[self.i:self.i + n]
        self.i += n
        return t

    def number(self):
        m = re.match(r"\d+", self.s[self.i:])
        if not m:
            raise ValueError("number expected")
        self.i += m.end()
        return int(m.group(0))

    def source_name(self):
        n = self.number()
        return self.take(n)

    def skip_template_args(self):
        assert self.take() == "I"
        depth = 1
        while depth:
            c = self.take()
            if not c:
                raise ValueError("unterminated template args")
            if c == "I":
                depth += 1
            elif c == "E":
                depth -= 1
            elif c == "L":           # literal: L <type> <value> E
                while self.take() != "E":
                    pass

    def name(self):
        """The function's name; returns whether it was a template (its return type follows)."""
        if self.peek() == "N":
            self.take()
            template = False
            while self.peek() != "E":
                if self.peek() == "I":
                    self.skip_template_args()
                    template = True
                elif self.peek() in ("K", "V", "r"):
                    self.take()
                elif self.peek() == "S":
                    self.substitution()
                    template = False
                else:
                    self.source_name()
                    template = False
            self.take()
            return template
        self.source_name()
        if self.peek() == "I":
            self.skip_template_args()
            return True
        return False

    def substitution(self):
        assert self.take() == "S"
        if self.peek() == "_":
            self.take()
            return self.subs[0]
        if self.peek() in "tsaiod":     # std:: abbreviations
            self.take()
            return CType("std", False, "std", None)
        m = re.match(r"([0-9A-Z]*)_", self.s[self.i:])
        if not m:
            raise ValueError("bad substitution")
        self.i += m.end()
        k = int(m.group(1), 36) + 1 if m.group(1) else 0
        return self.subs[k]

    def type(self):
        c = self.peek()
        for code in ("DF16_", "DF16b", "Dh", "Ds", "Di", "Dn"):
            if self.s.startswith(code, self.i):
                self.i += len(code)
                b = BUILTIN[code]
                return CType(b, False, b, NUMPY.get(b))
        if c in BUILTIN and c != "D":
            self.take()
            b = BUILTIN[c]
            return CType(b, False, b, NUMPY.get(b))
        if c == "P":
            self.take()
            inner = self.type()
            t = CType(inner.name + "*", True, inner.name, inner.numpy)
            self.subs.append(t)
            return t
        if c in ("K", "V", "r"):
            quals = ""
            while self.peek() in ("K", "V", "r"):
                q = self.take()
                quals += {"K": "const ", "V": "volatile ", "r": ""}[q]
            inner = self.type()
            t = CType(quals + inner.name, inner.pointer, inner.base, inner.numpy)
            self.subs.append(t)
            return t
        if c == "R" or c == "O":
            self.take()
            inner = self.type()
            t = CType(inner.name + "&", True, inner.name, inner.numpy)
            self.subs.append(t)
            return t
        if c == "S":
            t = self.substitution()
            if self.peek() == "I":
                self.skip_template_args()
            return t
        if c == "N" or c.isdigit():
            start = self.i
            if c == "N":
                self.take()
                while self.peek() != "E":
                    if self.peek() == "I":
                        self.skip_template_args()
                    else:
                        self.source_name()
                self.take()
            else:
                self.source_name()
                if self.peek() == "I":
                    self.skip_template_args()
            name = self.s[start:self.i]
            t = CType(re.sub(r"^\d+", "", name), False, name, None)
            self.subs.append(t)
            return t
        raise ValueError(f"type code {c!r}")


def param_types(mangled: str):
    """The C++ parameter types of a mangled kernel name, or None if it is not mangled/readable."""
    if not mangled.startswith("_Z"):
        return None
    p = _Parser(mangled)
    p.i = 2
    try:
        template = p.name()
        if template:
            p.type()          # a function template's return type comes first
        out = []
        while p.i < len(p.s):
            if p.peek() == ".":
                break
            t = p.type()
            if t.name == "void" and not out and p.i >= len(p.s):
                break
            out.append(t)
        return out
    except (ValueError, IndexError, AssertionError):
        return None
