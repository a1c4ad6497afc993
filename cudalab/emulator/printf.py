"""Device ``printf``: format one lane's call from the format string and its packed argument buffer.

NVRTC lowers ``printf(fmt, ...)`` to ``vprintf(fmt, buf)`` where ``buf`` holds the arguments, each
aligned to its own size, floats promoted to double (CUDA C++ Programming Guide, "Formatted Output").
"""
from __future__ import annotations

import re
import struct

_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcspn%])")


def format_call(fmt: str, read_arg):
    """``read_arg(size, kind)`` returns the next argument (aligned read of ``size`` bytes)."""
    out = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(read_arg(4, "i"))
        if prec == "*":
            prec = str(read_arg(4, "i"))
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if conv in "di":
            size = 8 if length in ("l", "ll", "j", "z", "t") else 4
            v = read_arg(size, "i")
            if length == "hh":
                v = (v + 128) % 256 - 128
            elif length == "h":
                v = (v + 32768) % 65536 - 32768
            out.append((spec + "d") % v)
        elif conv in "ouxX":
            size = 8 if length in ("l", "ll", "j", "z", "t") else 4
            v = read_arg(size, "u")
            if length == "hh":
                v &= 0xFF
            elif length == "h":
                v &= 0xFFFF
            out.append((spec + conv) % v)
        elif conv in "eEfFgGaA":
            v = read_arg(8, "f")
            if conv in "aA":
                out.append(float.hex(v))
            else:
                s = (spec + conv) % v
                out.append(s.replace("inf", "inf").replace("nan", "nan"))
        elif conv == "c":
            out.append((spec + "c") % chr(read_arg(4, "u") & 0xFF))
        elif conv == "s":
            out.append((spec + "s") % read_arg(8, "s"))
        elif conv == "p":
            out.append("0x%x" % read_arg(8, "u"))
        else:
            out.append(m.group(0))
    out.append(fmt[pos:])
    return "".join(out)


class ArgReader:
    """Reads successive aligned arguments from one lane's argument bytes."""

    def __init__(self, raw: bytes, read_string):
        self.raw, self.off, self.read_string = raw, 0, read_string

    def __call__(self, size, kind):
        self.off = (self.off + size - 1) // size * size
        chunk = self.raw[self.off:self.off + size]
        self.off += size
        if len(chunk) < size:
            chunk = chunk + b"\0" * (size - len(chunk))
        if kind == "f":
            return struct.unpack("<d", chunk)[0]
        v = int.from_bytes(chunk, "little", signed=kind == "i")
        if kind == "s":
            return self.read_string(v)
        return v
