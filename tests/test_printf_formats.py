"""Device printf's text, line by line, against what an H200 printed for the same kernel
(tests/printf/formats.py; its output in tests/printf/formats_h100.txt, recorded with CuPy and
denormals kept)."""
import sys
from pathlib import Path

import cudalab

HERE = Path(__file__).parent / "printf"
sys.path.insert(0, str(HERE))
import formats  # noqa: E402

# Lines where the GPU's driver printed something other than C's printf would, not modelled:
# %hu of 70000 printed 26739 (and alone, not the low 16 bits), and %zu, %zd, %jd and %td printed
# the conversion itself when alone on a line but a number in a longer format in an earlier run.
NOT_COMPARED = ("short:", "size_t:", "ssize:", "intmax:", "ptrdiff:")


def test_printf_formats_as_the_gpu_prints_them(capfd):
    kernel = cudalab.compile(formats.SOURCE).get_kernel("formats")
    kernel[formats.GRID, formats.BLOCK](*formats.arguments())
    cudalab.synchronize()
    got = capfd.readouterr().out.splitlines()
    want = (HERE / "formats_h100.txt").read_text().splitlines()
    assert len(got) == len(want)
    differ = [(g, w) for g, w in zip(got, want) if g != w and not w.startswith(NOT_COMPARED)]
    assert not differ, "\n".join(f"got  {g}\nwant {w}" for g, w in differ)


def test_hex_floats_negative_nan_and_alternate_forms():
    """The conversions that Python's % formatting does differently from C's printf."""
    from cudalab.emulator.printf import format_call
    args = iter([0.1, 1.0, -float("nan"), 8, 0, 0, 0])
    line = format_call("%.0a %#a %e %#o %#x [%.0d] %p", lambda size, kind: next(args))
    assert line == "0x2p-4 0x1.p+0 -nan 010 0 [] (nil)"
