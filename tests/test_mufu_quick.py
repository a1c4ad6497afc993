"""The special function unit's quick paths (emulator/mufu.py) give the same bits as its whole rules.

ex2, rcp, rsqrt, sqrt, lg2, sin and cos.approx take the ordinary lanes of a batch (a normal input whose answer is a normal
float) in a few integer passes and hand the others to the whole rule (``_*_every_case``). Both must agree
on every input; here on every exponent with both signs, the values at each edge, and whole binades where
the quick path's cases change (ex2 near its underflow, lg2 around 1 and 1/2, sin and cos around a
whole turn, below one step of the unit's fixed point and where every whole turn drops)."""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import mufu

PAIRS = {
    "ex2": (mufu.ex2_ftz, mufu._ex2_ftz_every_case),
    "rcp": (mufu.rcp_ftz, mufu._rcp_ftz_every_case),
    "rsqrt": (mufu.rsqrt_ftz, mufu._rsqrt_ftz_every_case),
    "sqrt": (mufu.sqrt_ftz, mufu._sqrt_ftz_every_case),
    "lg2": (mufu.lg2_ftz, mufu._lg2_ftz_every_case),
    "sin": (mufu.sin, mufu._sin_every_case),
    "cos": (mufu.cos, mufu._cos_every_case),
}


def _every_exponent(rng, per_exponent=512):
    """float32 bits: each of the 256 exponents with random fractions, positive and negative."""
    e = np.repeat(np.arange(256, dtype=np.uint32), per_exponent)
    f = rng.integers(0, 1 << 23, e.size, dtype=np.uint32)
    bits = (e << 23) | f
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


EDGES = np.array([0, 1, 0x7FFFFF, 0x800000, 0x800001, 0x3F800000, 0x3F7FFFFF, 0x3F000000, 0x40000000,
                  0x42FE0000, 0x42FFFFFF, 0x43000000, 0x7E800000, 0x7F000000, 0x7F7FFFFF, 0x7F800000,
                  0x7FC00000, 0x7F800001], np.uint32)


def _binade(first_bits, step=7):
    """Every 7th float of the binade that starts at ``first_bits``."""
    return np.uint32(first_bits) | np.arange(0, 1 << 23, step, dtype=np.uint32)


BINADES = {
    "ex2": [0xC2FC0000, 0xC2F80000, 0xBF800000, 0x3F800000, 0x42FC0000],   # -126.., -124.., -1.., 1.., 126..
    "rcp": [0x3F800000, 0x7E800000, 0x7D000000, 0x00800000],
    "rsqrt": [0x3F800000, 0x40000000, 0x00800000, 0x7F000000],
    "sqrt": [0x3F800000, 0x40000000, 0x00800000, 0x7F000000],
    "lg2": [0x3F800000, 0x3F000000, 0x3E800000, 0x40000000, 0x00800000, 0x7F000000],
    "sin": [0x40800000, 0x40C00000, 0x33000000, 0x4B000000],    # 4.., 6..6.28.., 2^-25.., 2^23..
    "cos": [0x40800000, 0x3FC00000, 0x33000000, 0x4C000000],
}


def _same(name, bits):
    quick, whole = PAIRS[name]
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        got, want = quick(x).view(np.uint32), whole(x).view(np.uint32)
    wrong = np.flatnonzero(got != want)
    assert wrong.size == 0, (f"{name}.approx of {bits[wrong[0]]:#010x}: quick path {got[wrong[0]]:#010x}, "
                             f"whole rule {want[wrong[0]]:#010x} ({wrong.size} inputs differ)")


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_quick_path_matches_the_whole_rule(name):
    rng = np.random.default_rng(18)
    _same(name, _every_exponent(rng))
    _same(name, np.concatenate([EDGES, EDGES | np.uint32(0x80000000)]))
    for first in BINADES[name]:
        _same(name, _binade(first))


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_quick_path_keeps_the_input_shape(name):
    quick, whole = PAIRS[name]
    x = np.array([[0.75, 3.0], [-2.5, 1e-40]], np.float32)
    with np.errstate(all="ignore"):
        got = quick(x)
        assert got.shape == (2, 2) and got.dtype == np.float32
        assert got.tobytes() == whole(x).tobytes()
        assert quick(np.float32(0.3)).tobytes() == whole(np.float32(0.3)).tobytes()
    column = np.arange(16, dtype=np.float32).reshape(4, 4)[:, 1] + 0.5     # not contiguous
    assert quick(column).tobytes() == whole(column).tobytes()


SUBNORMAL_KERNEL = r"""
__global__ void unit(const float* x, float* e, float* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = x[i], p, q;
        asm("ex2.approx.f32 %0, %1;" : "=f"(p) : "f"(a));
        asm("rcp.approx.f32 %0, %1;" : "=f"(q) : "f"(a));
        e[i] = p;
        r[i] = q;
    }
}
"""


def test_without_ftz_subnormal_answers_are_rounded_to_nearest():
    """Without .ftz the unit was not measured below the normals: ex2 of -130 and 1/2^127 come out as
    the exact answers rounded (subnormal floats); the lanes around them keep the unit's own bits."""
    x = np.array([-130.0, -126.5, -125.0, -3.0, 0.5, 2.0 ** 127, 2.0 ** 125, -(2.0 ** 126), 1e-40, 7.0],
                 np.float32)
    k = cudalab.compile(SUBNORMAL_KERNEL).get_kernel("unit")
    dx, de, dr = cudalab.to_device(x), cudalab.device_array(x.size, np.float32), cudalab.device_array(x.size, np.float32)
    k[1, 32](dx, de, dr, np.int32(x.size))
    e, r = de.copy_to_host(), dr.copy_to_host()
    assert e[0] == np.float32(2.0 ** -130) and e[1] == np.exp2(np.float64(-126.5)).astype(np.float32)
    assert r[5] == np.float32(2.0 ** -127) and r[7] == np.float32(-(2.0 ** -126))
    assert e[8] == 1.0 and r[8] == np.inf                 # 1/1e-40 is beyond the floats
    normal = [2, 3, 4, 9]
    assert e[normal].tobytes() == mufu._ex2_ftz_every_case(x[normal]).tobytes()
    assert r[normal + [6]].tobytes() == mufu._rcp_ftz_every_case(x[normal + [6]]).tobytes()


def test_decoded_tables_are_kept_in_the_cache_folder_and_mapped(monkeypatch, tmp_path):
    """A table is decoded once per machine: the first process writes it to cudalab's cache folder, the
    next maps that file (read-only, the same bits); where the folder cannot be written it is made anyway."""
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path / "cache"))
    made = []

    def make():
        made.append(1)
        return np.arange(1000, dtype=np.uint32) * np.uint32(2654435761)
    first = mufu._decoded("probe", make)
    again = mufu._decoded("probe", make)
    assert made == [1] and again.tobytes() == first.tobytes()
    assert not again.flags.writeable and not first.flags.writeable
    assert [p.name for p in (tmp_path / "cache" / "mufu").iterdir()] == [f"{mufu._npz_key()}-probe.npy"]
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("CUDALAB_CACHE", str(blocked))
    assert mufu._decoded("probe", make).tobytes() == first.tobytes() and made == [1, 1]


@pytest.mark.parametrize("name", ["ex2", "rcp", "rsqrt", "lg2", "sin", "cos"])
def test_a_big_batch_compiled_in_one_pass_gives_numpys_bits(name, monkeypatch):
    """From mufu.LOOP_LANES lanes on, once a process has run mufu.LOOP_AFTER lanes of them, ex2, rcp, rsqrt,
    lg2, sin and cos's quick paths run as one compiled pass (mufu_loops); before, as numpy's passes. Both on the same inputs: every exponent, the edges (repeated
    to a big batch's size) and a binade where the cases change."""
    quick, _ = PAIRS[name]
    edges = np.tile(np.concatenate([EDGES, EDGES | np.uint32(0x80000000)]), 200)
    bits = np.concatenate([_every_exponent(np.random.default_rng(20)), edges, _binade(BINADES[name][0], 3)])
    assert bits.size >= mufu.LOOP_LANES
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        monkeypatch.setattr(mufu, "_lanes_run", [mufu.LOOP_AFTER])          # as after a few big launches
        compiled = quick(x).view(np.uint32).copy()
        monkeypatch.setattr(mufu, "_lanes_run", [0])                        # as in a fresh process
        numpy = quick(x).view(np.uint32)
    wrong = np.flatnonzero(compiled != numpy)
    assert wrong.size == 0, (f"{name}.approx of {bits[wrong[0]]:#010x}: compiled {compiled[wrong[0]]:#010x}, "
                             f"numpy {numpy[wrong[0]]:#010x} ({wrong.size} inputs differ)")


def test_the_compiled_pass_waits_until_the_process_has_run_millions_of_lanes(monkeypatch):
    monkeypatch.setattr(mufu, "_lanes_run", [0])
    big = mufu.LOOP_LANES
    firsts = [mufu._loops(big) for _ in range(mufu.LOOP_AFTER // big)]
    assert not any(firsts) and mufu._loops(big)             # numpy's passes first, then the compiled one
    assert not mufu._loops(big - 1)                         # a small batch never takes it
