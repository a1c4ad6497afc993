"""A kernel of many registers over a big grid runs in batches small enough for a student's
notebook: the emulator keeps one register array per PTX register per lane, and a kernel of
thousands of registers (cuda-samples' cudaTensorCoreGemm: 35,000) over 2^17 lanes would need
gigabytes; its batches get fewer blocks instead (engine.BATCH_BYTES)."""
import tracemalloc

import numpy as np

import cudalab
from cudalab.emulator import engine

# 128 values kept in registers at once (the unrolled local array), then summed in pairs: 270 PTX registers
MANY_REGISTERS = r"""
__global__ void many(const float *x, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[128];
#pragma unroll
    for (int k = 0; k < 128; k++) v[k] = x[i] * (k + 1);
    float s = 0;
#pragma unroll
    for (int k = 0; k < 128; k++) s += v[k] * v[127 - k];
    out[i] = s;
}
"""


def test_a_kernel_with_many_registers_over_a_big_grid_stays_within_the_batch_budget(monkeypatch):
    budget = 16 << 20
    monkeypatch.setattr(engine, "BATCH_BYTES", budget)
    monkeypatch.setenv("CUDALAB_TIER", "interp")        # the interpreter makes each register on first use
    n = 1 << 17
    mod = cudalab.compile(MANY_REGISTERS)
    x, out = cudalab.to_device(np.arange(n, dtype=np.float32) % 4), cudalab.device_array(n, np.float32)
    mod.many[1, 256](x, out)                            # decoded and warm: only the batches are measured
    program = next(iter(mod._programs.values()))
    per_lane = engine.register_bytes(program.function(mod.many.mangled))
    assert per_lane * n > 8 * budget                    # in one batch of 2^17 lanes: over 140 MB of registers
    tracemalloc.start()
    try:
        mod.many[n // 256, 256](x, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * budget                            # (152 MB without the budget)
    pairs = sum((k + 1) * (128 - k) for k in range(128))
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(n) % 4) ** 2 * pairs)
