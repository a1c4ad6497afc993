"""Where the tensor core cuts products below float32's range: bf16 mma.sync / wmma with tiny products.

Every D element of a probe is alike (A and B vary along k only), so the fragment layouts do not
matter and one number per warp says what the hardware did:

* ``uniform``: sixteen equal products x*y (a subnormal, a normal or two mid-range factors) on C = +-0,
  +-2**-149, 2**-127, 2**-126, 1.5 * 2**-126, 2**-120 or 1.0, both instruction forms;
* ``cut``: fifteen products cancelling to an exact negative sum (-2**-149, -2**-140 or -2**-130 each)
  and one small positive product s = 2**-150 ... 2**-167 on C = +0, -0 or 2**-149: the sum's
  truncation shows whether s was kept, so where the cut lies; and fuzz seed 1908's tile (subnormal
  factors on both sides) with the small products scaled down step by step.

    python tools/bf16_probe.py OUT.npz        # on the GPU machine
    python tools/bf16_probe.py --check        # here: the emulator against tests/fuzz/bf16_probe_h200.npz
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools"))
SAVED = os.path.join(ROOT, "tests", "fuzz", "bf16_probe_h200.npz")

FORMS = {"mma": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", {"d": 4, "a": 4, "b": 2, "c": 4}),
         "wmma": ("wmma.mma.sync.aligned.col.row.m16n16k16.f32.bf16.bf16.f32", {"d": 8, "a": 4, "b": 4, "c": 8})}
WIDE = {"d": False, "a": False, "b": False, "c": False}


def bf16(v):
    b = int(np.float32(v).view(np.uint32))
    assert b & 0xFFFF == 0, f"{v} is not a bf16 value"
    return b >> 16


def uniform_configs():
    """(x, y, c): A all x, B all y, C all c."""
    out = []
    cs = [0.0, -0.0, 2.0 ** -149, -2.0 ** -149, 2.0 ** -127, 2.0 ** -126, 1.5 * 2.0 ** -126, 2.0 ** -120]
    for j in range(1, 11):
        mant = 1.5 if j % 2 else 1.0              # products sign * mant * 2**-(149 + j)
        for sign in (1, -1):
            for x, y in ((2.0 ** -133, 2.0 ** -(16 + j)), (2.0 ** -126, 2.0 ** -(23 + j)), (2.0 ** -75, 2.0 ** -(74 + j))):
                out += [(sign * x, mant * y, c) for c in cs]
    out += [(sign * 2.0 ** -12, 1.5 * 2.0 ** -(12 + j), 1.0) for j in range(1, 11) for sign in (1, -1)]
    return out


def cut_configs():
    """(a[16], b[16], c): A's columns and B's rows by k."""
    out = []
    for big_b in (-2.0 ** -23, -2.0 ** -14, -2.0 ** -4):
        for c in (0.0, -0.0, 2.0 ** -149):
            out += [([2.0 ** -126] * 16, [big_b] * 15 + [2.0 ** -j], c) for j in range(24, 42)]
    for c in (0.0, -0.0):
        out += [([2.0 ** -133, 1.5 * 2.0 ** -131] * 8, [1.828125 * 2.0 ** -(21 + m), -1.40625 * 2.0 ** -11] * 8, c)
                for m in range(12)]
    return out


def uniform_inputs(form):
    counts = FORMS[form][1]
    rows = [[bf16(x) * 0x10001] * counts["a"] + [bf16(y) * 0x10001] * counts["b"]
            + [int(np.float32(c).view(np.uint32))] * counts["c"] for x, y, c in uniform_configs()]
    return np.array(rows, np.uint64)[:, None, :].repeat(32, axis=1)


def cut_inputs():
    from cudalab.emulator import mma
    counts = FORMS["mma"][1]
    _, ka = mma.mma_layout("a", 16, 8, 16, "bf16")         # A's column (k) of each lane's element
    kb, _ = mma.mma_layout("b", 16, 8, 16, "bf16")         # B's row (k)
    rows = []
    for a, b, c in cut_configs():
        ea = np.vectorize(lambda k: bf16(a[k]))(ka).astype(np.uint64)
        eb = np.vectorize(lambda k: bf16(b[k]))(kb).astype(np.uint64)
        cw = np.full((32, counts["c"]), int(np.float32(c).view(np.uint32)), np.uint64)
        rows.append(np.concatenate([mma.pack(ea, 16), mma.pack(eb, 16), cw], axis=1))
    return np.stack(rows)


def run(launch):
    """{"uniform_mma", "uniform_wmma", "cut_mma": D words (configs, 32, registers)} from ``launch``."""
    from fuzz_locate import replay_module
    out = {}
    for name, form, inp in [("uniform_mma", "mma", uniform_inputs("mma")), ("uniform_wmma", "wmma", uniform_inputs("wmma")),
                            ("cut_mma", "mma", cut_inputs())]:
        text, counts = FORMS[form]
        dst = np.zeros((inp.shape[0], 32, counts["d"]), np.uint64)
        res = launch(replay_module(text, counts, WIDE), "replay", (inp.shape[0],), (32,), 0, [inp, dst])
        out[name] = (np.asarray(res[1], np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return out


def check(path=SAVED):
    """The configurations whose D the emulator gives otherwise than the GPU did: {probe: [index, ...]}."""
    from fuzz_locate import emu_launch
    saved = np.load(path)
    got = run(emu_launch(2))
    return {k: np.flatnonzero((got[k] != saved[k]).any(axis=(1, 2))).tolist() for k in got
            if (got[k] != saved[k]).any()}


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        print(check() or "the emulator gives the GPU's D for every configuration")
    else:
        from fuzz_locate import gpu_launch
        np.savez_compressed(sys.argv[1], **run(gpu_launch))
        print("wrote", sys.argv[1])
