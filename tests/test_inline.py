"""Calls copied into kernels (ptx/inline.py) and the carry flag as a register (ptx/carry.py).

Both exist so that native code covers code nvcc leaves with calls and carry chains: ``-G`` builds
(every ``__device__`` function a call) and CUDA's double-precision ``sin``/``cos``/``tan``/``pow``
(a call to a slow-path argument reduction made of ``mad.lo.cc``/``addc`` chains). Each test checks
the bytes against the code as it was before (``CUDALAB_INLINE=0``, the interpreter) or against
Python's own arithmetic, and that the compiled tier now runs the whole kernel natively.
"""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import compiled
from cudalab.emulator.engine import K_FUSED, K_REGION
from cudalab.runtime import device


def decoded(module, kernel):
    return module.program(device.current()).function(module.get_kernel(kernel).mangled)


def interpreted_pcs(module, kernel):
    """The kernel's instructions that the compiled tier leaves to the interpreter (besides its ret)."""
    fused = compiled._tier(decoded(module, kernel)).fused
    assert fused, "the kernel was not compiled"
    inside = set()
    for pc, (kind, _, _, end) in enumerate(fused.code):
        if kind in (K_FUSED, K_REGION):
            inside.update(range(pc, end))
    return [inst.text for pc, inst in enumerate(fused.func.insts) if pc not in inside and inst.opcode != "ret"]


def only_table_lookups_and_branches(texts):
    """Nothing interpreted but the special function unit's float64 approximations (rcp/rsqrt.approx.f64,
    looked up in mufu.py's tables, which stay interpreted like the float32 ones) and the branches
    around them: all the arithmetic, the carry chains included, is native."""
    return all(t.split()[0] in ("bra", "bra.uni", "rcp.approx.ftz.f64", "rsqrt.approx.f64", "rsqrt.approx.ftz.f64")
               for t in texts)


# a debug build keeps each __device__ function, and tan() itself, as a call
DEBUG_LOOP = r"""
__device__ double damped(double v, int k) { return v * 0.5 + tan(0.001 * k); }
__device__ float2 swap_scale(float2 p, float s) { return make_float2(p.y * s, p.x * s); }

extern "C" __global__ void WALK(double* out, float2* pts, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = i;
    for (int k = 0; k < steps; ++k) v = damped(v, k + i);
    out[i] = v;
    pts[i] = swap_scale(pts[i], 2.0f);
}
"""


def run_walk(monkeypatch, tier, inline, tag):
    monkeypatch.setenv("CUDALAB_TIER", tier)
    monkeypatch.setenv("CUDALAB_INLINE", inline)
    # (a kernel name of its own: decoded code is kept with the parsed PTX, which a comment would not change)
    m = cudalab.compile(DEBUG_LOOP.replace("WALK", tag), options=["-G"])
    out = np.zeros(64)
    pts = np.arange(128, dtype=np.float32).reshape(64, 2).copy()
    m.get_kernel(tag)[2, 32](out, pts, np.int32(50))
    return m, out, pts


def test_a_debug_build_s_device_functions_are_copied_into_the_kernel_and_run_natively(monkeypatch):
    before, out0, pts0 = run_walk(monkeypatch, "interp", "0", "walk_calls")
    assert any(i.opcode == "call" for i in decoded(before, "walk_calls").func.insts)
    after, out1, pts1 = run_walk(monkeypatch, "compiled", "1", "walk_inlined")
    assert not any(i.opcode == "call" for i in decoded(after, "walk_inlined").func.insts)
    assert out1.tobytes() == out0.tobytes() and pts1.tobytes() == pts0.tobytes()
    assert pts1[3].tolist() == [14.0, 12.0]
    assert only_table_lookups_and_branches(interpreted_pcs(after, "walk_inlined"))


RECURSIVE = r"""
__device__ __noinline__ int leaves(int n) { return n < 2 ? 1 : leaves(n - 1) + leaves(n - 2); }
__device__ __noinline__ int twice(int n) { return 2 * leaves(n); }
extern "C" __global__ void trees(int* out) { out[threadIdx.x] = twice(threadIdx.x % 16); }
"""


def leaves(n):
    return 1 if n < 2 else leaves(n - 1) + leaves(n - 2)


def test_recursion_stays_a_call_and_what_calls_it_is_still_copied():
    m = cudalab.compile(RECURSIVE)
    out = np.zeros(64, np.int32)
    m.get_kernel("trees")[1, 64](out)
    assert out.tolist() == [2 * leaves(n % 16) for n in range(64)]
    called = [i.text for i in decoded(m, "trees").func.insts if i.opcode == "call"]
    assert called and all("leaves" in text for text in called)      # twice() was copied, leaves() was not


# 128-bit sums and differences, and a 64 x 32-bit product, through the carry flag (inline asm, as
# CUDA's own extended-precision code is written)
CARRIES = r"""
extern "C" __global__ void WIDE(const unsigned* a, const unsigned* b, unsigned* sum, unsigned* diff,
                                const unsigned long long* x, const unsigned long long* y,
                                unsigned long long* sum64, unsigned* prod, unsigned* kept) {
    int i = threadIdx.x;
    const unsigned* p = a + 4 * i;
    const unsigned* q = b + 4 * i;
    unsigned* s = sum + 4 * i;
    unsigned* d = diff + 4 * i;
    asm("add.cc.u32 %0, %4, %8;\n\taddc.cc.u32 %1, %5, %9;\n\taddc.cc.u32 %2, %6, %10;\n\taddc.u32 %3, %7, %11;"
        : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3])
        : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "r"(q[0]), "r"(q[1]), "r"(q[2]), "r"(q[3]));
    asm("sub.cc.u32 %0, %4, %8;\n\tsubc.cc.u32 %1, %5, %9;\n\tsubc.cc.u32 %2, %6, %10;\n\tsubc.u32 %3, %7, %11;"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "r"(q[0]), "r"(q[1]), "r"(q[2]), "r"(q[3]));
    unsigned long long lo, hi;
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u64 %1, %4, %5;" : "=l"(lo), "=l"(hi)
        : "l"(x[2 * i]), "l"(y[2 * i]), "l"(x[2 * i + 1]), "l"(y[2 * i + 1]));
    sum64[2 * i] = lo;
    sum64[2 * i + 1] = hi;
    unsigned r0, r1, r2;
    asm("mul.lo.u32 %0, %3, %5;\n\tmul.hi.u32 %1, %3, %5;\n\tmad.lo.cc.u32 %1, %4, %5, %1;\n\tmadc.hi.u32 %2, %4, %5, 0;"
        : "=r"(r0), "=r"(r1), "=r"(r2) : "r"(p[0]), "r"(p[1]), "r"(q[0]));
    prod[3 * i] = r0;
    prod[3 * i + 1] = r1;
    prod[3 * i + 2] = r2;
    // a guarded add.cc: lanes whose guard is off keep the flag the first add set (a carry of 1)
    unsigned c, unused;
    asm("{\n\t.reg .pred odd;\n\tsetp.ne.u32 odd, %3, 0;\n\tadd.cc.u32 %1, 0xffffffff, 1;\n\t"
        "@odd add.cc.u32 %1, %2, 0;\n\taddc.u32 %0, 0, 0;\n\t}" : "=r"(c), "=r"(unused) : "r"(p[0]), "r"(i & 1));
    kept[i] = c;
}
"""


def words(v, n, bits=32):
    return [(v >> (bits * k)) & ((1 << bits) - 1) for k in range(n)]


def number(ws, bits=32):
    return sum(int(w) << (bits * k) for k, w in enumerate(ws))


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_carry_chains_give_python_s_big_integer_results(monkeypatch, tier):
    monkeypatch.setenv("CUDALAB_TIER", tier)
    rng = np.random.default_rng(7)
    n = 64
    a = rng.integers(0, 1 << 32, 4 * n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, 4 * n, dtype=np.uint64).astype(np.uint32)
    a[:8] = 0xFFFFFFFF                          # carries all the way up, and borrows all the way down
    b[4:8] = 0
    x = rng.integers(0, 1 << 63, 2 * n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    y = rng.integers(0, 1 << 63, 2 * n, dtype=np.uint64) * np.uint64(2)
    args = [a, b, np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint32), x, y, np.zeros(2 * n, np.uint64),
            np.zeros(3 * n, np.uint32), np.zeros(n, np.uint32)]
    m = cudalab.compile(CARRIES.replace("WIDE", f"wide_{tier}"))
    m.get_kernel(f"wide_{tier}")[1, n](*args)
    s, d, s64, prod, kept = args[2], args[3], args[6], args[7], args[8]
    for i in range(n):
        pa, qb = number(a[4 * i:4 * i + 4]), number(b[4 * i:4 * i + 4])
        assert number(s[4 * i:4 * i + 4]) == (pa + qb) % (1 << 128)
        assert number(d[4 * i:4 * i + 4]) == (pa - qb) % (1 << 128)
        px, qy = number(x[2 * i:2 * i + 2], 64), number(y[2 * i:2 * i + 2], 64)
        assert number(s64[2 * i:2 * i + 2], 64) == (px + qy) % (1 << 128)
        assert number(prod[3 * i:3 * i + 3]) == number(a[4 * i:4 * i + 2]) * int(b[4 * i])
        # odd lanes: the guarded add of a[4i] + 0 carries nothing; even lanes keep the first carry
        assert kept[i] == (0 if i & 1 else 1)
    flagged = [i.text for i in decoded(m, f"wide_{tier}").func.insts if i.opcode in ("addc", "subc", "madc") or "cc" in i.mods]
    assert flagged == []
    if tier == "compiled":
        assert interpreted_pcs(m, f"wide_{tier}") == []


def test_double_sin_and_pow_kernels_run_natively_with_the_interpreter_s_bytes(monkeypatch):
    """CUDA's sin and pow on doubles call functions made of carry chains (their argument
    reductions): with both changes the whole kernel is one native region."""
    src = r"""extern "C" __global__ void WAVE(const double* x, double* y, int n) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            y[i] = sin(x[i]) + pow(x[i], 1.5); }
    """
    xs = np.concatenate([np.random.default_rng(3).uniform(0, 1e6, 500), [3e9, 1e300, 7.5e15, 0.0]])
    got = {}
    for tier, inline in (("interp", "0"), ("compiled", "1")):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        monkeypatch.setenv("CUDALAB_INLINE", inline)
        m = cudalab.compile(src.replace("WAVE", f"wave_{tier}"))
        y = np.zeros(xs.size)
        m.get_kernel(f"wave_{tier}")[2, 128](xs, y, np.int32(xs.size))
        got[tier] = y
    assert got["compiled"].tobytes() == got["interp"].tobytes()
    assert np.allclose(got["compiled"][:-4], np.sin(xs[:-4]) + xs[:-4] ** 1.5, rtol=1e-14)
    assert only_table_lookups_and_branches(interpreted_pcs(m, "wave_compiled"))


# a debug build reaches __shared__ arrays and a kernel's pointers through generic addresses
DEBUG_REDUCTION = r"""
extern "C" __global__ void block_sums(const float* x, float* total, int n) {
    extern __shared__ float part[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    part[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) part[t] += part[t + half];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, part[0]);
}
extern "C" __global__ void past_the_tile(float* out) {
    __shared__ float tile[32];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x + 1];
}
"""


def test_a_debug_build_s_generic_accesses_get_their_space_and_run_natively(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(DEBUG_REDUCTION, options=["-G"])
    generic = [i.text for i in m.ptx_module.functions["block_sums"].insts if i.opcode in ("ld", "st", "atom")
               and not any(s in i.mods for s in ("shared", "global", "param", "local"))]
    assert len(generic) >= 4          # nvcc -G: the tile, x[i] and the atomic all through generic addresses
    left = [i.text for i in decoded(m, "block_sums").func.insts if i.opcode in ("ld", "st", "atom", "red")
            and not any(s in i.mods for s in ("shared", "global", "param", "local"))]
    assert left == []
    x = np.arange(1000, dtype=np.float32) % 7
    total = np.zeros(1, np.float32)
    m.get_kernel("block_sums")[8, 128, 0, 512](x, total, np.int32(1000))
    assert total[0] == x.sum()
    assert interpreted_pcs(m, "block_sums") == []


def test_a_debug_build_s_bad_shared_index_is_still_named_at_its_line():
    m = cudalab.compile(DEBUG_REDUCTION, options=["-G"])
    with pytest.raises(cudalab.KernelError, match=r"(?s)Invalid __shared__ read of size 4 bytes.*line 17 in kernel past_the_tile.*out of bounds"):
        m.get_kernel("past_the_tile")[1, 32](np.zeros(32, np.float32))


# a shared array's generic address kept in global memory, read back and moved by a byte offset the
# kernel is given: the parameter does not make that pointer a global one
POINTER_IN_MEMORY = r"""
extern "C" __global__ void through_table(int** table, unsigned long long byte_offset, int* out) {
    __shared__ int s[32];
    s[threadIdx.x] = 100 + threadIdx.x;
    if (threadIdx.x == 0) table[0] = s;
    __syncthreads();
    int* p = (int*)((char*)table[0] + byte_offset);
    out[threadIdx.x] = p[threadIdx.x % 8];
}
"""


def test_a_pointer_read_from_memory_plus_a_parameter_keeps_its_generic_access():
    m = cudalab.compile(POINTER_IN_MEMORY, options=["-G"])
    out = np.zeros(32, np.int32)
    m.get_kernel("through_table")[1, 32](np.zeros(1, np.uint64), np.uint64(8), out)
    assert out.tolist() == [102 + t % 8 for t in range(32)]
