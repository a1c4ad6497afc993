"""Double-precision atomicAdd runs in native code with the interpreter's bits.

A float64 atomicAdd's sum depends on the order of the adds (rounding), and its NaNs on which operand
was one: the interpreter adds lane after lane in lane order, ``v + old`` (of two NaNs the added value's
payload, quieted; inf + -inf gives x86's default NaN). The compiled tier used to leave every float64
atomic to the interpreter, and with it the loop around it (jacobiCudaGraphs' `atomicAdd(&b_shared[..],
-rowThreadSum)` after a warp's shuffle reduction, 8 rows a block). Both tiers must give the same bytes:
the sums, the old values each thread got back, in shared and global memory, in loops and outside."""
import re

import numpy as np
import pytest

import cudalab
from cudalab.emulator import compiled
from cudalab.emulator.engine import K_NORMAL
from cudalab.errors import KernelError
from cudalab.runtime import device

SOURCE = r"""
extern "C" __global__ void sums(double *g, double *olds, const double *v, int per)
{
    __shared__ double s[4];
    int t = threadIdx.x;
    int me = blockIdx.x * blockDim.x + t;
    if (t < 4) s[t] = g[blockIdx.x * 4 + t];          // start values (NaNs and infinities among them)
    __syncthreads();
    for (int k = 0; k < per; k++) {
        double x = v[me * per + k];
        olds[me * per + k] = atomicAdd(&s[(t + k) & 3], x);
        atomicAdd(&g[1024 + ((t * 7 + k) & 15)], x);
    }
    __syncthreads();
    if (t < 4) g[blockIdx.x * 4 + t] = s[t];
}

extern "C" __global__ void once(double *g, double *olds, const double *v)
{
    int me = blockIdx.x * blockDim.x + threadIdx.x;
    olds[me] = atomicAdd(&g[me & 7], v[me]);
}
"""

NAN_BITS = [0x7FF0000000000001, 0xFFF0000000000123, 0x7FF8000000000456, 0xFFF8000000000789]


def _values(rng, n):
    """Magnitudes far apart (so that the order of the adds shows in the rounding), zeros, infinities
    of both signs and NaNs with payloads, signalling and quiet."""
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 13, n)
    pick = rng.random(n)
    v[pick < 0.02] = np.inf
    v[(pick >= 0.02) & (pick < 0.04)] = -np.inf
    v[(pick >= 0.04) & (pick < 0.06)] = 0.0
    nans = (pick >= 0.06) & (pick < 0.08)
    v[nans] = np.array(NAN_BITS, np.uint64)[rng.integers(0, 4, int(nans.sum()))].view(np.float64)
    return v


def _tiers(run, monkeypatch):
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        try:
            out[tier] = run()
        except KernelError as e:
            out[tier] = re.sub(r"0x[0-9a-f]+", "0x...", str(e))
    return out


@pytest.mark.parametrize("finite", [True, False], ids=["numbers", "with_nans_and_infinities"])
def test_double_atomic_adds_in_a_loop_give_the_interpreters_bytes(finite, monkeypatch):
    m = cudalab.compile(SOURCE)
    rng = np.random.default_rng(16 if finite else 17)
    blocks, threads, per = 6, 64, 5
    v = _values(rng, blocks * threads * per)
    start = _values(rng, 1024 + 16)
    if finite:
        v = np.where(np.isfinite(v), v, 1.5)
        start = np.where(np.isfinite(start), start, -2.5)

    def run():
        g = cudalab.to_device(start)
        olds = cudalab.device_array(v.size, np.float64)
        m.sums[blocks, threads](g, olds, cudalab.to_device(v), np.int32(per))
        return g.copy_to_host().tobytes() + olds.copy_to_host().tobytes()
    got = _tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    if not finite:      # NaNs did pass through the sums (not all quietly replaced by one)
        words = np.frombuffer(got["compiled"], np.uint64)
        assert len({int(w) for w in words if (w & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000}) > 2


def test_a_double_atomic_outside_loops_gives_each_thread_its_old_value(monkeypatch):
    m = cudalab.compile(SOURCE)
    rng = np.random.default_rng(5)
    v = _values(rng, 8 * 128)
    start = np.array([1.0, -0.0, np.inf, -np.inf, 1e300, -1e300, 3.0, *np.array(NAN_BITS[:1], np.uint64)
                     .view(np.float64)])

    def run():
        g = cudalab.to_device(start)
        olds = cudalab.device_array(v.size, np.float64)
        m.once[8, 128](g, olds, cudalab.to_device(v))
        return g.copy_to_host().tobytes() + olds.copy_to_host().tobytes()
    got = _tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]


def test_the_double_atomics_are_in_native_code(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(SOURCE)
    g = cudalab.to_device(np.zeros(1040))
    m.once[1, 64](g, cudalab.device_array(64, np.float64), cudalab.to_device(np.ones(64)))
    df = m.program(device.current()).function("once")
    fused = compiled._tier(df).fused
    atoms = [pc for pc, inst in enumerate(df.func.insts) if inst.opcode in ("atom", "red")]
    assert atoms and all(fused.code[pc][0] != K_NORMAL for pc in atoms)


FLOAT_LOOP = r"""
extern "C" __global__ void spread(float *g, const float *v, int per)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    int me = blockIdx.x * blockDim.x + t;
    s[t] = v[me];
    __syncthreads();
    for (int k = 0; k < per; k++)
        atomicAdd(&g[(t * 7 + k) & 15], s[(t + k) & 63] * (k + 1));
    __syncthreads();
}
"""


def test_a_float_atomic_in_global_memory_in_a_loop_between_barriers_keeps_lock_steps_order(monkeypatch):
    """A region with barriers runs block after block: in a loop, block 0's turns would all come before
    block 1's first, where lock step adds turn by turn across the blocks; the rounding shows it."""
    m = cudalab.compile(FLOAT_LOOP)
    rng = np.random.default_rng(3)
    v = (rng.standard_normal(6 * 64) * 10.0 ** rng.integers(-6, 7, 6 * 64)).astype(np.float32)

    def run():
        g = cudalab.to_device(np.zeros(16, np.float32))
        m.spread[6, 64](g, cudalab.to_device(v), np.int32(5))
        return g.copy_to_host().tobytes()
    got = _tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
