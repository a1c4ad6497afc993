"""Device ``printf``: format one lane's call from the format string and its packed argument buffer.

NVRTC lowers ``printf(fmt, ...)`` to ``vprintf(fmt, buf)`` where ``buf`` holds the arguments, each
aligned to its own size, floats promoted to double (CUDA C++ Programming Guide, "Formatted Output").
"""
from __future__ import annotations

import math
import re
import struct

_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcspn%])")


def format_call(fmt: str, read_arg):
    """``read_arg(size, kind)`` returns the next argument (aligned read of ``size`` bytes).

    The driver formats device printf on the host much as glibc does (an H200's output of
    tests/printf/formats.py): ``%a`` is glibc's shortest hexadecimal form, a negative NaN prints
    ``-nan``, ``%#o`` and ``%#x`` follow C, ``%p`` of a null pointer is ``(nil)``. A precision
    given as ``.*`` is not understood: the conversion is printed as it stands."""
    out = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if prec == "*":
            out.append(m.group(0))
            continue
        if width == "*":
            width = str(read_arg(4, "i"))
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        if conv in "diouxX":
            size = 8 if length in ("l", "ll", "j", "z", "t") else 4
            v = read_arg(size, "i" if conv in "di" else "u")
            if length == "hh":
                v = (v + 128) % 256 - 128 if conv in "di" else v & 0xFF
            elif length == "h":
                v = (v + 32768) % 65536 - 32768 if conv in "di" else v & 0xFFFF
            out.append(_integer(v, flags, width, prec, conv))
        elif conv in "eEfFgGaA":
            v = read_arg(8, "f")
            out.append(_floating(v, flags, width, prec, conv, spec))
        elif conv == "c":
            out.append((spec + "c") % chr(read_arg(4, "u") & 0xFF))
        elif conv == "s":
            out.append((spec + "s") % read_arg(8, "s"))
        elif conv == "p":
            v = read_arg(8, "u")
            out.append(_pad("0x%x" % v if v else "(nil)", flags, width))
        else:
            out.append(m.group(0))
    out.append(fmt[pos:])
    return "".join(out)


def _pad(text, flags, width, zero_after=0):
    """Pad ``text`` to ``width``: spaces on the left, on the right with '-', or zeros after the first
    ``zero_after`` characters (sign, 0x) with '0'."""
    w = int(width or 0)
    if len(text) >= w:
        return text
    if "-" in flags:
        return text.ljust(w)
    if "0" in flags and zero_after >= 0:
        return text[:zero_after] + "0" * (w - len(text)) + text[zero_after:]
    return text.rjust(w)


def _integer(v, flags, width, prec, conv):
    """C's integer conversions: a precision is the least number of digits (and ``%.0d`` of 0 prints
    none); ``#`` gives octal a leading 0 and nonzero hex 0x."""
    digits = "" if prec is not None and int(prec) == 0 and v == 0 else \
        format(abs(v), {"d": "d", "i": "d", "u": "d", "o": "o", "x": "x", "X": "X"}[conv])
    if prec is not None:
        digits = digits.rjust(int(prec), "0")
    prefix = ""
    if conv in "di":
        prefix = "-" if v < 0 else "+" if "+" in flags else " " if " " in flags else ""
    elif "#" in flags and conv == "o" and not digits.startswith("0"):
        digits = "0" + digits
    elif "#" in flags and conv in "xX" and v != 0:
        prefix = "0" + conv
    return _pad(prefix + digits, flags, width, len(prefix) if prec is None else -1)


def _floating(v, flags, width, prec, conv, spec):
    sign = "-" if math.copysign(1.0, v) < 0 else "+" if "+" in flags else " " if " " in flags else ""
    if math.isnan(v) or math.isinf(v):
        word = "nan" if math.isnan(v) else "inf"
        return _pad(sign + (word.upper() if conv.isupper() else word), flags.replace("0", ""), width)
    if conv in "aA":
        text = sign + _hex_float(abs(v), prec, "#" in flags)
        text = text.upper() if conv == "A" else text
        return _pad(text, flags, width, len(sign) + 2)
    return (spec + conv) % v


def _hex_float(v, prec, alt):
    """glibc's %a of a non-negative finite double: 0x1.<hex>p<exp> with trailing zeros dropped, 0x0.<hex>p-1022
    for subnormals; a precision rounds the 52-bit fraction to that many digits (ties to even), and a
    carry shows as a leading 2 (``%.0a`` of 0.1 is 0x2p-4)."""
    bits = struct.unpack("<Q", struct.pack("<d", v))[0]
    exp, frac = bits >> 52, bits & ((1 << 52) - 1)
    lead, e = (1, exp - 1023) if exp else (0, -1022 if frac else 0)
    if prec is not None and int(prec) < 13:
        drop = 4 * (13 - int(prec))
        keep, rest = frac >> drop, frac & ((1 << drop) - 1)
        half = 1 << (drop - 1)
        if rest > half or (rest == half and keep & 1):
            keep += 1
        if keep >> (4 * int(prec)):             # the carry reaches the leading digit
            lead, keep = lead + 1, keep & ((1 << (4 * int(prec))) - 1)
        digits = format(keep, "x").rjust(int(prec), "0") if int(prec) else ""
    else:
        digits = format(frac, "013x").rstrip("0")
        if prec is not None:
            digits = digits.ljust(int(prec), "0")
    point = "." if digits or alt else ""
    return f"0x{lead}{point}{digits}p{e:+d}"


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
