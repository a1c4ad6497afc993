"""Warp matrix operations: the tensor-core probes against a Hopper GPU's answers, the fragment maps a
student sees, and the parts the corpus (tests/kernels/mma.py) does not reach.

The corpus holds the GPU-recorded kernels (wmma of every type and shape, mma.sync of every shape,
ldmatrix, stmatrix, cvt.rna.tf32); tools/mma_probe.py's saved answers pin down every wmma fragment
layout and the tensor cores' rounding with crafted inputs.
"""
import os
import sys

import numpy as np
import pytest

import cudalab
from cudalab.emulator import mma
from cudalab.errors import KernelError
from cudalab.widgets.tensorcore import fragment_map, render_svg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_emulator_answers_every_tensor_core_probe_as_the_gpu_did(capsys):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import mma_probe
    assert os.path.exists(mma_probe.SAVED)
    assert mma_probe.check() == 0, capsys.readouterr().out


def test_mma_m16n8k16_a_fragment_is_the_ptx_isa_table():
    """PTX ISA: a_i of lane l sits at row groupID (+8 for a2,a3,a6,a7), column 2*(l%4) + (i&1) (+8 for i >= 4)."""
    fm = fragment_map("mma.m16n8k16", "a", "f16")
    assert fm.shape == (16, 16)
    for lane in (0, 5, 31):
        g, t = lane >> 2, lane % 4
        want = [(g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)) for i in range(8)]
        assert fm.held_by(lane) == want
    assert (fm.copies == 1).all() and np.bincount(fm.lane.ravel()).tolist() == [8] * 32


@pytest.mark.parametrize("instruction,operand,type,held,copies", [
    ("wmma.m16n16k16", "a", "f16", 8, 2),        # sm_70's 16 halves: every element twice
    ("wmma.m16n16k16", "c", "f32", 8, 1),
    ("wmma.m8n32k16", "c", "f32", 8, 1),
    ("wmma.m16n16k8", "b", "tf32", 4, 1),
    ("wmma.m8n8k4", "a", "f64", 1, 1),
    ("mma.m16n8k32", "b", "s8", 8, 1),
    ("mma.m8n8k4", "c", "f64", 2, 1),
])
def test_every_element_has_a_home_and_every_lane_the_same_share(instruction, operand, type, held, copies):
    fm = fragment_map(instruction, operand, type)
    assert (fm.lane >= 0).all() and (fm.copies == copies).all()
    assert np.bincount(fm.lane.ravel(), minlength=32).tolist() == [held] * 32


def test_fragment_map_draws_and_names_bad_arguments():
    svg = render_svg(fragment_map("wmma.m16n16k16", "c"))
    assert svg.startswith("<svg") and svg.count("<rect") > 256 and "T31" in svg
    with pytest.raises(ValueError, match="mma.m16n8k16"):
        fragment_map("hmma.1688", "a")
    with pytest.raises(ValueError, match="operand"):
        fragment_map("mma.m16n8k16", "d")


def test_fragment_elements_a_kernel_reads_are_where_the_map_says():
    """wmma::load_matrix_sync of the matrix 0, 1, 2, ...: lane l's x[i] is the index of its element."""
    mod = cudalab.compile(r'''
#include <mma.h>
using namespace nvcuda;
__global__ void lanes(const float* m, float* out) {
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::load_matrix_sync(c, m, 16, wmma::mem_row_major);
  for (int i = 0; i < c.num_elements; ++i) out[threadIdx.x * c.num_elements + i] = c.x[i];
}''')
    out = np.zeros(256, np.float32)
    mod.get_kernel("lanes")[1, 32](np.arange(256, dtype=np.float32), out)
    fm = fragment_map("wmma.m16n16k16", "c")
    for lane in range(32):
        assert [divmod(int(v), 16) for v in out[8 * lane: 8 * lane + 8]] == fm.held_by(lane)


@pytest.mark.parametrize("bits,mode,want", [
    (0x3F801000, "rna", 0x3F802000),     # a tie: away from zero
    (0x3F801000, "rn", 0x3F800000),      # a tie: to even
    (0x3F803000, "rn", 0x3F804000),
    (0x3F801FFF, "rz", 0x3F800000),
    (0x7F7FF000, "rna", 0x7F800000),     # rounds up to infinity
    (0x7F800001, "rna", 0x7F800000),     # a NaN only loses its low 13 bits (measured on the GPU)
    (0xFFC01234, "rna", 0xFFC00000),
])
def test_cvt_to_tf32(bits, mode, want):
    got = mma.to_tf32(np.array([bits], np.uint32).view(np.float32), mode)
    assert int(got[0]) == want


def test_movmatrix_transposes_the_warps_8x8_matrix():
    """PTX ISA movmatrix: lane l holds row l/4, columns 2(l%4) and 2(l%4)+1; afterwards, of the transpose."""
    mod = cudalab.compile(r'''
__global__ void mov(const unsigned* in, unsigned* out) {
  unsigned r;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(r) : "r"(in[threadIdx.x]));
  out[threadIdx.x] = r;
}''')
    m = np.arange(64, dtype=np.uint32).reshape(8, 8)
    lanes = np.arange(32)
    words = m[lanes >> 2, 2 * (lanes % 4)] | (m[lanes >> 2, 2 * (lanes % 4) + 1] << 16)
    out = np.zeros(32, np.uint32)
    mod.get_kernel("mov")[1, 32](words.astype(np.uint32), out)
    t = m.T
    assert (out == (t[lanes >> 2, 2 * (lanes % 4)] | (t[lanes >> 2, 2 * (lanes % 4) + 1] << 16))).all()


LDMATRIX = r'''
__global__ void ld(unsigned* out, int stride) {
  __shared__ __align__(16) unsigned short s[1024];
  int l = threadIdx.x;
  for (int i = l; i < 1024; i += 32) s[i] = i;
  __syncwarp();
  unsigned r0, r1, r2, r3;
  unsigned p = static_cast<unsigned>(__cvta_generic_to_shared(&s[l * stride]));
  if (l < WHO)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p));
  out[l] = r0 ^ r1 ^ r2 ^ r3;
}'''


@pytest.mark.parametrize("stride,wavefronts", [(8, 4), (32, 16)])
def test_ldmatrix_counts_a_wavefront_per_matrix_and_its_bank_conflicts(stride, wavefronts):
    """Rows 16 bytes apart fill all 32 banks: one wavefront per 8x8 matrix. Rows 64 bytes apart put
    two rows on the same banks... four times: 4 wavefronts each."""
    k = cudalab.compile(LDMATRIX.replace("WHO", "32")).get_kernel("ld")
    rec = cudalab.profile(k, 1, 32, (cudalab.device_array(32, np.uint32), np.int32(stride)))
    assert rec.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == wavefronts


def test_ldmatrix_in_divergent_code_is_reported():
    k = cudalab.compile(LDMATRIX.replace("WHO", "16")).get_kernel("ld")
    with pytest.raises(KernelError, match="all 32 threads of a warp must execute it together, but only 16"):
        k[1, 32](cudalab.device_array(32, np.uint32), np.int32(8))


def test_profile_counts_tensor_core_instructions():
    k = cudalab.compile(r'''
#include <mma.h>
using namespace nvcuda;
__global__ void tiles(const half* a, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, a, 16);
  for (int k = 0; k < 3; ++k) wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + 256 * (threadIdx.x / 32), fc, 16, wmma::mem_row_major);
}''').get_kernel("tiles")
    a = cudalab.to_device(np.ones(256, np.float16))
    rec = cudalab.profile(k, 2, 64, (a, cudalab.device_array(1024, np.float32)))
    assert rec.metrics["smsp__inst_executed_pipe_tensor.sum"] == 3 * 4        # 3 per warp, 4 warps


def test_wmma_in_half_a_warp_is_reported():
    k = cudalab.compile(r'''
#include <mma.h>
using namespace nvcuda;
__global__ void half_warp(const half* a, float* c) {
  if (threadIdx.x < 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a, 16);
    c[threadIdx.x] = __half2float(fa.x[0]);
  }
}''').get_kernel("half_warp")
    with pytest.raises(KernelError, match=r"wmma at line 7 .* only 16 threads"):
        k[1, 32](np.ones(256, np.float16), np.zeros(32, np.float32))


def _elements(rng, kind, shape, typ):
    """Test operands: small integers (the samples' GEMMs), any bit pattern of the type (NaN,
    infinities, subnormals), or small integers with a few of those and signed zeros mixed in."""
    if kind == "int":
        return rng.integers(-3, 4, shape).astype(np.float64)
    if kind == "bits":
        u = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(np.uint32)
        u = {"f16": u >> np.uint32(16) << np.uint32(16), "bf16": u & np.uint32(0xFFFF0000),
             "tf32": u & np.uint32(0xFFFFE000), "f32": u}[typ]
        with np.errstate(invalid="ignore"):         # NaN payloads carried into float64
            if typ == "f16":
                return (u >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
            return u.view(np.float32).astype(np.float64)
    x = _elements(rng, "int", shape, typ)
    odd = rng.random(shape) < 0.05
    x[odd] = _elements(rng, "bits", shape, typ)[odd]
    zero = rng.random(shape) < 0.2
    x[zero] = np.where(rng.random(zero.sum()) < 0.5, -0.0, 0.0)
    return x


@pytest.mark.parametrize("typ", ["f16", "bf16", "tf32"])
@pytest.mark.parametrize("kind", ["int", "bits", "mixed"])
def test_the_bit_level_exactness_test_finds_what_the_float64_one_finds(typ, kind):
    """dot_float decides from float32 bits (a table for the inputs) which sums no alignment can cut;
    the float64 formulas are the reference, on integers, on random bits and on both mixed."""
    rng = np.random.default_rng(["f16", "bf16", "tf32"].index(typ) * 3 + ["int", "bits", "mixed"].index(kind))
    a, b = (_elements(rng, kind, (40, 16, 16), typ) for _ in range(2))
    c = _elements(rng, kind, (40, 16, 16), "f32")
    with np.errstate(all="ignore"):
        fast = mma._exact_elements(a, b, c, mma.EMIN[typ])
        reference = mma._exact_elements_f64(a, b, c, mma.EMIN[typ])
    assert fast is not None and (fast == reference).all()
    assert reference.any() if kind == "int" else not reference.all()


def test_truncation_to_float32_cuts_toward_zero_at_every_size():
    s = np.array([1.0 + 2.0 ** -30, -(1.0 + 2.0 ** -23 + 2.0 ** -40), 3.0 * 2.0 ** -140, -2.0 ** -160,
                  2.0 ** 128, 2.0 ** 128 - 2.0 ** 90, -0.0, np.nan])
    got = mma._truncate_f32(s)
    want = [1.0, -(1.0 + 2.0 ** -23), 3.0 * 2.0 ** -140, 0.0, np.inf, np.finfo(np.float32).max, -0.0, np.nan]
    assert np.array_equal(got, np.array(want, np.float32), equal_nan=True)
    assert not np.signbit(got[3])                   # a nonzero sum too small for float32 is +0


def test_a_batch_of_warps_multiplies_as_warps_one_by_one():
    """The matrix instructions gather every warp's fragments at once: each warp's D must be what that
    warp alone computes (integers, so the product is easy to check too)."""
    k = cudalab.compile(r'''
#include <mma.h>
using namespace nvcuda;
__global__ void tiles(const half* a, const half* b, float* c) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, a + 256 * w, 16);
  wmma::load_matrix_sync(fb, b + 256 * w, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + 256 * w, fc, 16, wmma::mem_row_major);
}''').get_kernel("tiles")
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-3, 4, (12, 16, 16)).astype(np.float16) for _ in range(2))
    c = np.zeros((12, 16, 16), np.float32)
    k[3, 128](a.ravel(), b.ravel(), c.reshape(-1))
    want = np.matmul(a.astype(np.float64), np.swapaxes(b, 1, 2).astype(np.float64)) + 1
    assert np.array_equal(c, want.astype(np.float32))


def _element_bits(rng, kind, shape, typ):
    """Raw element bits of test operands (_elements' kinds; integers: any bits of their width)."""
    if typ in ("s8", "u8", "s4", "u4", "s32"):
        return rng.integers(0, 1 << mma.BITS[typ], shape, dtype=np.uint64)
    if typ == "f64":
        x = rng.integers(-3, 4, shape).astype(np.float64)
        if kind != "int":
            u = rng.integers(0, 1 << 63, shape, dtype=np.uint64) | (rng.integers(0, 2, shape, dtype=np.uint64) << 63)
            odd = rng.random(shape) < (1.0 if kind == "bits" else 0.05)
            x[odd] = u.view(np.float64)[odd]
        return x.view(np.uint64)
    x = _elements(rng, kind, shape, typ)
    with np.errstate(invalid="ignore", over="ignore"):
        if typ == "f16":
            return x.astype(np.float16).view(np.uint16).astype(np.uint64)
        u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return u >> np.uint64(16) if typ == "bf16" else u


@pytest.mark.parametrize("form", [
    ("wmma", (16, 16, 16), "f16", "f32"), ("wmma", (16, 16, 16), "bf16", "f32"), ("wmma", (16, 16, 8), "tf32", "f32"),
    ("wmma", (8, 32, 16), "f16", "f32"), ("wmma", (8, 8, 4), "f64", "f64"), ("wmma", (16, 16, 16), "s8", "s32"),
    ("mma", (16, 8, 16), "bf16", "f32"), ("mma", (16, 8, 8), "tf32", "f32"), ("mma", (16, 8, 64), "s4", "s32"),
    ("mma", (16, 8, 32), "u8", "s32")])
@pytest.mark.parametrize("kind", ["int", "bits", "mixed"])
def test_the_compiled_loop_gives_the_numpy_paths_bits_for_every_warp_it_proves(form, kind):
    """mma_native answers a whole batch of warps at once where it can prove the tensor core's sum
    exact; every warp it answers must carry the bits mma.py's general path computes, small integers
    (the samples' GEMMs) must be answered, and random bits must leave some warps to the general path."""
    from cudalab.emulator import mma_native
    op, (m, n, k), atype, ctype = form
    rng = np.random.default_rng(abs(hash((form, kind))) % 1000)
    warps, block = 40, 4 if (op, atype) == ("wmma", "tf32") else None
    layout = mma.wmma_layout if op == "wmma" else (lambda use, *rest: mma.mma_layout(use, *rest))
    lay = {u: layout(u, m, n, k, t) for u, t in (("a", atype), ("b", atype), ("c", ctype))}
    dims = {"a": (m, k), "b": (k, n), "c": (m, n)}
    bits = {u: _element_bits(rng, kind, (warps,) + dims[u], atype if u != "c" else ctype) for u in "abc"}
    vals = {u: mma.values(bits[u], atype if u != "c" else ctype) for u in "abc"}
    rows, cols = lay["c"]
    with np.errstate(all="ignore"):
        want = mma.raw_bits(mma.multiply(vals["a"], vals["b"], vals["c"], atype, ctype, ctype, False, block))
    want = want[:, rows, cols].reshape(warps, -1)
    run = mma_native.plan({u: mma.matrix_places(*lay[u], dims[u]) for u in "abc"},
                          {u: lay[u][0].shape[1] for u in "abc"}, (rows * n + cols).ravel(),
                          (m, n, k), atype, atype, ctype, ctype, False, block)
    regs = {}
    for u in "abc":                 # each fragment's registers over the 40 warps' lanes, as a kernel holds them
        bits_u = mma.BITS[atype if u != "c" else ctype]
        words = mma.pack(bits[u][:, lay[u][0], lay[u][1]], bits_u).astype(np.uint64 if bits_u == 64 else np.uint32)
        regs[u] = tuple(np.ascontiguousarray(words[:, :, j].reshape(-1)) for j in range(words.shape[2]))
    d, ok = run(np.arange(warps), regs["a"], regs["b"], regs["c"])
    got = np.stack(d, axis=-1).reshape(warps, -1)
    assert (got[ok] == want[ok]).all()
    if ctype == "s32":
        assert ok.all()
    elif ctype == "f64":                # an fma chain of the CPU's: every warp whose values and D are finite
        finite = [np.isfinite(x.reshape(warps, -1)).all(axis=1) for x in (*vals.values(), want.view(np.float64))]
        assert ok.tolist() == (finite[0] & finite[1] & finite[2] & finite[3]).tolist()
    elif kind == "int":
        assert ok.sum() >= warps - 3
    else:
        assert not ok.all()


def test_the_compiled_loops_wait_until_the_numpy_path_has_answered_cold_warps(monkeypatch):
    """Loading numba costs 0.6 to 4.8 s once a process, so the first warp-level operations go the numpy
    path; after COLD_WARPS of them (or once the loops are loaded) the compiled loops answer."""
    from cudalab.emulator import mma_native
    monkeypatch.setattr(mma_native, "_loaded", False)
    monkeypatch.setattr(mma_native, "_numpy_warps", 0)
    monkeypatch.setattr(mma_native, "COLD_WARPS", 100)
    assert [mma_native.worth_loading(w) for w in (60, 40, 1)] == [False, False, True]
    monkeypatch.setattr(mma_native, "_numpy_warps", 0)
    monkeypatch.setattr(mma_native, "_loaded", True)
    assert mma_native.worth_loading(1)


def test_a_lessons_one_warp_wmma_launch_answers_without_loading_numba():
    """Notebook 16's tiny_terms: one warp, one wmma.mma. Its first launch in a fresh process gives the
    tensor core's sum (1 + 16 * 1.5 * 2**-26 truncated to 1.0) without importing numba (0.6 s of CPU,
    4.8 s while numba's cache does not hold the loops yet)."""
    import subprocess
    code = r'''
import sys, numpy as np, cudalab
k = cudalab.compile(r"""
#include <mma.h>
using namespace nvcuda;
__global__ void tiny_terms(const half* a, const half* b, const float* c, float* d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(d, fc, 16, wmma::mem_row_major);
}""").get_kernel("tiny_terms")
d = np.zeros((16, 16), np.float32)
k[1, 32](np.full((16, 16), 2.0 ** -13, np.float16), np.full((16, 16), 1.5 * 2.0 ** -13, np.float16),
         np.ones((16, 16), np.float32), d)
print((d == 1.0).all(), "numba" in sys.modules)
'''
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def test_warps_that_left_early_do_not_stop_the_others_tiles_from_shared_memory(monkeypatch):
    """A warp that returns before its tile leaves the batch's other warps to the compiled loops
    (wmma.load from shared memory, mma) with only some lanes running: each tile is still its own."""
    from cudalab.emulator import mma_native
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)        # the compiled loops even for these 6 warps
    k = cudalab.compile(r'''
#include <mma.h>
using namespace nvcuda;
__global__ void tiles(const half* a, const half* b, float* c) {
  __shared__ half sa[4][256], sb[4][256];
  int w = threadIdx.x / 32, t = (blockIdx.x * 4 + w) * 256;
  for (int i = threadIdx.x % 32; i < 256; i += 32) { sa[w][i] = a[t + i]; sb[w][i] = b[t + i]; }
  if (w == 1) return;
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.5f);
  wmma::load_matrix_sync(fa, sa[w], 16);
  wmma::load_matrix_sync(fb, sb[w], 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + t, fc, 16, wmma::mem_row_major);
}''').get_kernel("tiles")
    rng = np.random.default_rng(7)
    a, b = (rng.integers(-3, 4, (8, 16, 16)).astype(np.float16) for _ in range(2))
    c = np.zeros((8, 16, 16), np.float32)
    k[2, 128](a.ravel(), b.ravel(), c.reshape(-1))
    want = np.matmul(a.astype(np.float64), np.swapaxes(b, 1, 2).astype(np.float64)) + 0.5
    ran = np.array([w % 4 != 1 for w in range(8)])
    assert np.array_equal(c[ran], want[ran].astype(np.float32)) and not c[~ran].any()


def test_the_compiled_loop_proves_each_element_on_its_own_top():
    """The tensor core aligns each element of D at its own largest exponent: in cudaTensorCoreGemm's
    first step C holds 2.18 next to 35.1 (C times beta/alpha), too fine a bit for the warp's largest
    but not for its own element. The compiled loop must answer such warps, with the numpy path's bits."""
    from cudalab.emulator import mma_native
    m = n = k = 16
    rng = np.random.default_rng(3)
    lay = {u: mma.wmma_layout(u, m, n, k, t, e) for u, t, e in (("a", "f16", 16), ("b", "f16", 16), ("c", "f32", None))}
    a, b = (rng.integers(0, 3, (4, 16, 16)).astype(np.float16) for _ in range(2))
    c = (rng.integers(2, 33, (4, 16, 16)) * np.float32(12 / 11)).astype(np.float32)
    want = mma.raw_bits(mma.multiply(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64), "f16", "f32", "f32",
                                     False))[:, lay["c"][0], lay["c"][1]].reshape(4, -1)
    regs = {}
    for u, x in (("a", a.view(np.uint16)), ("b", b.view(np.uint16)), ("c", c.view(np.uint32))):
        words = mma.pack(x.astype(np.uint64)[:, lay[u][0], lay[u][1]], 16 if u != "c" else 32).astype(np.uint32)
        regs[u] = tuple(np.ascontiguousarray(words[:, :, j].reshape(-1)) for j in range(words.shape[2]))
    run = mma_native.plan({u: mma.matrix_places(*lay[u], (16, 16)) for u in "abc"}, {u: lay[u][0].shape[1] for u in "abc"},
                          (lay["c"][0] * n + lay["c"][1]).ravel(), (m, n, k), "f16", "f16", "f32", "f32", False, None)
    d, ok = run(np.arange(4), regs["a"], regs["b"], regs["c"])
    assert ok.all()
    assert (np.stack(d, axis=-1).reshape(4, -1) == want).all()


CHAIN = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void chain(const half* a, const half* b, const float* c, float* d, int skew) {
  __shared__ half sa[2][512], sb[2][512];             // each warp's A (16 x 32) and B (32 x 16, by columns)
  int w = threadIdx.x / 32, t = blockIdx.x * 2 + w;
  for (int i = threadIdx.x % 32; i < 512; i += 32) { sa[w][i] = a[t * 512 + i]; sb[w][i] = b[t * 512 + i]; }
  __syncwarp();
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, c + t * 256, 16, wmma::mem_row_major);
  const half *pa = sa[w], *pb = sb[w] + (t == 5 ? skew : 0);
#pragma unroll
  for (int k = 0; k < 2; ++k) {                        // unrolled: load, load, mma, load, load, mma
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::load_matrix_sync(fa, pa + 16 * k, 32);
    wmma::load_matrix_sync(fb, pb + 16 * k, 32);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d + t * 256, acc, 16, wmma::mem_row_major);
}'''


def _chain_inputs():
    """8 warps' A (16 x 32), B (32 x 16, by columns) and C: small integers in the even warps, random
    halves (whose sums the alignment cuts) in the odd ones; C a multiple of 12/11, as cudaTensorCoreGemm's."""
    rng = np.random.default_rng(11)
    small = (np.arange(8) % 2 == 0)[:, None, None]
    a, b = (np.where(small, rng.integers(-3, 4, (8, 16, 32)), rng.standard_normal((8, 16, 32))).astype(np.float16)
            for _ in range(2))
    return a, b, (rng.integers(0, 9, (8, 16, 16)) * np.float32(12 / 11)).astype(np.float32)


def _chain_product(a, b, c):
    """CHAIN's D by the tensor core's rule (mma.multiply), its two k=16 steps one after the other."""
    want = c.astype(np.float64)
    for s in (slice(0, 16), slice(16, 32)):
        want = mma.multiply(a[:, :, s].astype(np.float64), np.swapaxes(b[:, :, s], 1, 2).astype(np.float64), want,
                            "f16", "f32", "f32", False).astype(np.float64)
    return want.astype(np.float32)


def _program_stops(monkeypatch):
    """The compiled loops even for a few warps (COLD_WARPS 0), and a list that gets, for each run of a
    program, (its rows, the row each warp stopped at)."""
    from cudalab.emulator import mma_native
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    stops = []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        run(self, warps, pos, ptrs, ops, *rest)
        stops.append((len(ops), pos.tolist()))
    monkeypatch.setattr(mma_native.Form, "run", watched)
    return stops


def _one_by_one_then_as_one_program(monkeypatch, source, a, b, c):
    """Runs the kernel ``chain`` of ``source`` on eight warps' tiles twice, mma by mma and then with its
    k-loop as one program; both must give the same bits. Returns the program's stops (_program_stops)."""
    from cudalab.emulator import mma_native
    k = cudalab.compile(source).get_kernel("chain")
    got = []
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        stops = _program_stops(monkeypatch) if got else []
        d = np.zeros((8, 16, 16), np.float32)
        k[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel())
        got.append(d.view(np.uint32).copy())
    assert np.array_equal(got[0], got[1])
    return stops


def test_an_unrolled_k_loop_runs_as_one_program_with_every_instructions_bits(monkeypatch):
    """nvcc unrolls a GEMM's k-loop into a straight line of wmma.load and wmma.mma, which the emulator
    runs warp by warp as one program in a compiled loop (emulator/mma_runs.py). Warps of small integers
    are proven exact there; warps of random halves stop at their first mma, the numpy path sums them
    term by term, and the program goes on; every warp gets the bits of the two mmas one after the other."""
    stops = _program_stops(monkeypatch)
    a, b, c = _chain_inputs()
    d = np.zeros((8, 16, 16), np.float32)
    cudalab.compile(CHAIN).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), np.int32(0))
    assert np.array_equal(d.view(np.uint32), _chain_product(a, b, c).view(np.uint32))
    # load, load, mma, load, load, mma: the even warps ran all six rows, the odd ones stopped at the mma
    assert stops[0] == (6, [6, 2, 6, 2, 6, 2, 6, 2])


def test_a_bad_address_inside_a_program_is_reported_as_the_load_alone_reports_it(monkeypatch):
    """A wmma.load out of shared memory's bounds stops its warp's program; the load's own path then
    names the thread and address as when the instructions run one by one."""
    from cudalab.emulator import mma_native
    a, b, c = _chain_inputs()
    k = cudalab.compile(CHAIN).get_kernel("chain")
    said = []
    for worth in (lambda warps: True, lambda warps: False):       # as one program, then one by one
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        with pytest.raises(KernelError) as e:
            k[4, 64](a.ravel(), b.ravel(), c.ravel(), np.zeros(8 * 256, np.float32), np.int32(4000))
        said.append(str(e.value))
    assert said[0] == said[1] and "shared" in said[0]


def test_an_accumulator_chain_stopped_at_its_second_mma_hands_its_d_over(monkeypatch):
    """The two mmas of CHAIN's k-loop are one accumulator chain (the second's C is the first's D):
    inside the compiled loop the first D is not written to registers, the second reads it from the
    loop, and the fragments, fresh registers that nothing after the k-loop reads, are decoded as they
    are loaded and not written either. A warp whose second product is not proven exact (small
    integers in k < 16, random halves after) stops there: the first D and the fragments must reach
    their registers before the numpy path sums the second."""
    from cudalab.emulator import mma_native
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    seen = []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        run(self, warps, pos, ptrs, ops, *rest)
        loads = ops[:, 0] == mma_native.LOAD
        seen.append((np.where(loads, 0, ops[:, mma_native.CARRY]).tolist(),
                     np.where(loads, ops[:, mma_native.QUIET], 0).tolist(), pos.tolist()))
    monkeypatch.setattr(mma_native.Form, "run", watched)
    a, b, c = _chain_inputs()
    late = (np.arange(8) % 4 == 3)[:, None, None]          # warps 3 and 7: integers, then random halves
    a[:, :, :16] = np.where(late, a[(np.arange(8) + 1) % 8, :, :16], a[:, :, :16])
    b[:, :, :16] = np.where(late, b[(np.arange(8) + 1) % 8, :, :16], b[:, :, :16])
    d = np.zeros((8, 16, 16), np.float32)
    cudalab.compile(CHAIN).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), np.int32(0))
    assert np.array_equal(d.view(np.uint32), _chain_product(a, b, c).view(np.uint32))
    carried, quiet, stops = seen[0]
    assert carried == [0, 0, 0, 0, 0, 1]              # load, load, mma, load, load, mma (carrying the first's D)
    assert quiet == [1, 1, 0, 1, 1, 0]
    assert stops == [6, 2, 6, 5, 6, 2, 6, 5]


@pytest.mark.parametrize("skew, first_stops", [(0, [6, 2, 6, 2, 6, 2, 6, 2]), (-1, [0] * 8)])
def test_a_program_takes_generic_addresses_of_shared_memory_and_leaves_others_to_the_load(monkeypatch, skew,
                                                                                          first_stops):
    """Where the compiler cannot tell a tile's pointer is shared memory (bf16TensorCoreGemm's), wmma.load
    takes a generic address. The program reads it from shared memory when it points there (the even
    warps run all six rows); pointing into global memory (skew -1 here), every warp stops at the first
    load, whose own path reads global memory, and the bits are the same."""
    stops = _program_stops(monkeypatch)
    source = CHAIN.replace("const half *pa = sa[w], *pb = sb[w] + (t == 5 ? skew : 0);",
                           "const half *pa = skew < 0 ? a + t * 512 : sa[w], *pb = skew < 0 ? b + t * 512 : sb[w];")
    assert source != CHAIN
    a, b, c = _chain_inputs()
    d = np.zeros((8, 16, 16), np.float32)
    cudalab.compile(source).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), np.int32(skew))
    assert np.array_equal(d.view(np.uint32), _chain_product(a, b, c).view(np.uint32))
    assert stops[0] == (6, first_stops)


def test_building_the_compiled_loop_is_not_the_kernels_time(monkeypatch):
    """numba compiles a tensor-core loop on its first call (about 10 s from a cold cache, more on a busy
    machine), inside whatever launch first needs it. That is not the kernel's time: a launch of a few
    hundred instructions must not meet the watchdog while the loop is built (here a first call that
    spends 1.5 s of CPU, under a watchdog of 1 s)."""
    import time
    from cudalab.emulator import mma_native
    from cudalab.runtime import device
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    real = mma_native.kernels

    class SlowFirstCall:
        def __init__(self, f):
            self.f, self.overloads = f, {}

        def __call__(self, *args):
            if not self.overloads:
                end = time.thread_time() + 1.5
                while time.thread_time() < end:
                    pass
                self.overloads["built"] = True
            return self.f(*args)
    slow = {}
    monkeypatch.setattr(mma_native, "kernels",
                        lambda shape, block: slow.setdefault((shape, block), {
                            kind: SlowFirstCall(f) for kind, f in real(shape, block).items()}))
    monkeypatch.setattr(device, "WATCHDOG_SECONDS", 1.0)
    monkeypatch.setenv("CUDALAB_TIER", "interp")        # the loop below interpreted, the clock looked at
    a, b, c = _chain_inputs()
    d = np.zeros((8, 16, 16), np.float32)
    # after the k-loop, a thousand more instructions: the watchdog looks at the clock every 512
    source = CHAIN.replace("wmma::store_matrix_sync(d + t * 256, acc, 16, wmma::mem_row_major);",
                           "wmma::store_matrix_sync(d + t * 256, acc, 16, wmma::mem_row_major);\n"
                           "  for (int i = 0; i < 2000; ++i) __syncwarp();")
    cudalab.compile(source).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), np.int32(0))
    assert slow, "the compiled loop was not used"
    assert np.array_equal(d.view(np.uint32), _chain_product(a, b, c).view(np.uint32))


TF32_CHAIN = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void chain(const float* a, const float* b, const float* c, float* d) {
  __shared__ float sa[2][512], sb[2][512];            // each warp's A (16 x 32) and B (32 x 16, by columns)
  int w = threadIdx.x / 32, t = blockIdx.x * 2 + w;
  for (int i = threadIdx.x % 32; i < 512; i += 32) { sa[w][i] = a[t * 512 + i]; sb[w][i] = b[t * 512 + i]; }
  __syncwarp();
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(acc, c + t * 256, 16, wmma::mem_row_major);
#pragma unroll
  for (int k = 0; k < 4; ++k) {                        // as tf32TensorCoreGemm: each element rounded to tf32
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::load_matrix_sync(fa, sa[w] + 8 * k, 32);
    for (int e = 0; e < fa.num_elements; e++) fa.x[e] = wmma::__float_to_tf32(fa.x[e]);
    wmma::load_matrix_sync(fb, sb[w] + 8 * k, 32);
    for (int e = 0; e < fb.num_elements; e++) fb.x[e] = wmma::__float_to_tf32(fb.x[e]);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d + t * 256, acc, 16, wmma::mem_row_major);
}'''


def test_a_tf32_k_loop_rounds_its_fragments_inside_the_program(monkeypatch):
    """tf32TensorCoreGemm rounds every loaded element with __float_to_tf32 (a cvt.rna.tf32.f32 between
    movs) before its mma. Those movs and cvts are rows of the k-loop's program (LANE rows), so the loop
    stays one program; the bits are the instructions' one by one: small integers plus 2**-11, whose
    rounding to tf32 shows (ties away from zero), in the even warps, random floats (summed term by term
    after their stop) in the odd ones. An element's four instructions (mov, the inline asm's cvt and mov,
    the mov into the mma's fragment) are one row, run lane by lane: as four, they cost the loop more
    than the mmas did. A warp that stops at an mma reads its fragment from the registers the joined
    rows write."""
    rng = np.random.default_rng(5)
    small = (np.arange(8) % 2 == 0)[:, None, None]
    a, b = (np.where(small, rng.integers(-3, 4, (8, 16, 32)) * (1 + 2.0 ** -11), rng.standard_normal((8, 16, 32)))
            .astype(np.float32) for _ in range(2))
    c = (rng.integers(0, 9, (8, 16, 16)) * np.float32(12 / 11)).astype(np.float32)
    stops = _one_by_one_then_as_one_program(monkeypatch, TF32_CHAIN, a, b, c)
    rows = stops[0][0]
    assert rows > 4 * 3 + 16, "the k-loop's loads, conversions and mmas are not one program"
    assert rows == 1 + 4 * (2 + 8 + 1), "the load of C, then per k step: 2 loads, 8 elements' roundings, the mma"
    # the program starts at the load of C from global memory, which every warp leaves to the load's own
    # path; from there warps run to the end, or stop at an mma whose sums are not proven exact (the odd
    # ones at their first)
    assert stops[0][1] == [0] * 8
    assert rows in stops[1][1] and all(p < rows for p in stops[1][1][1::2])


def test_a_tf32_k_loops_roundings_are_done_by_its_loads(monkeypatch):
    """The __float_to_tf32 of each loaded element (a LANE row) is folded into its wmma.load: the load
    rounds the words it read (ROUND) and decodes the mma's fragment from them, and the LANE rows are
    skipped, so neither the loaded registers nor the rounded ones are written (nothing else reads them).
    Warps 3 and 7 stop at their third mma (row 33: small integers before, random floats after): the skipped
    rows and quiet loads before the stop must reach their registers for the mma's own path, and those
    after it run as written. The bits are the instructions' one by one."""
    from cudalab.emulator import mma_native
    seen = []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        seen.append(ops.copy())
        run(self, warps, pos, ptrs, ops, *rest)
    monkeypatch.setattr(mma_native.Form, "run", watched)
    rng = np.random.default_rng(8)
    a, b = (rng.integers(-3, 4, (8, 16, 32)) * np.float32(1 + 2.0 ** -11) for _ in range(2))
    late = (np.arange(8) % 4 == 3)[:, None, None]
    a[:, :, 16:], b[:, :, 16:] = (np.where(late, rng.standard_normal((8, 16, 16)), x[:, :, 16:]) for x in (a, b))
    a, b = a.astype(np.float32), b.astype(np.float32)
    c = (rng.integers(0, 9, (8, 16, 16)) * np.float32(12 / 11)).astype(np.float32)
    stops = _one_by_one_then_as_one_program(monkeypatch, TF32_CHAIN, a, b, c)
    assert stops[0][1] == [0] * 8
    assert [p for p in stops[1][1][3::4]] == [33, 33] and min(stops[1][1][0:3] + stops[1][1][4:7]) > 33
    ops = max(seen, key=len)
    loads = np.flatnonzero((ops[:, 0] == mma_native.LOAD) & (ops[:, mma_native.ROUND] > 0))
    lanes = np.flatnonzero(ops[:, 0] == mma_native.LANE)
    assert len(loads) == 8 and (ops[loads, mma_native.ROUND] == mma_native.TF32_RNA + 1).all()
    assert (ops[loads, mma_native.QUIET] == 1).all() and (ops[lanes, mma_native.LFRAGMENT] >= 0).all()


def test_dmma_fma_chains_run_compiled_for_any_finite_values():
    """DMMA is an fma chain in k order per element of D, and the compiled loop runs it with the CPU's own
    fused multiply-add, eight columns of D a vector: every warp whose A, B, C and D are finite gets the
    numpy fma chain's bits, whatever the values. Here small integers into a C scaled by beta / alpha (the
    sample's data), random doubles whose products need all 106 bits, and tiny ones whose products and
    sums are subnormal. A NaN or infinity among the inputs, or a D that overflows, is left to the numpy
    chain (the H100's choice among NaN payloads is not the CPU's)."""
    from cudalab.emulator import mma_native
    m, n, k = 8, 8, 4
    warps = 16
    rng = np.random.default_rng(3)
    lay = {u: mma.wmma_layout(u, m, n, k, "f64") for u in "abc"}
    dims = {"a": (m, k), "b": (k, n), "c": (m, n)}
    vals = {"a": rng.integers(-2, 3, (warps, m, k)).astype(np.float64),
            "b": rng.integers(-2, 3, (warps, k, n)).astype(np.float64),
            "c": rng.integers(0, 3, (warps, m, n)) * (1.2 / 1.1)}
    for u in "abc":
        vals[u][8:12] = rng.standard_normal((4, *dims[u]))
    vals["a"][10:12] *= 2.0 ** -540                   # products about 2**-1080: subnormal, as are the sums
    vals["b"][10:12] *= 2.0 ** -540
    vals["c"][10:12] *= 2.0 ** -1070
    vals["a"][12, 3, 1] = np.nan
    vals["b"][13, 2, 5] = -np.inf
    vals["c"][14, 7, 7] = np.inf
    vals["a"][15], vals["b"][15] = 1e200, 1e200       # finite inputs, a D that overflows
    rows, cols = lay["c"]
    want = mma.raw_bits(mma.multiply(vals["a"], vals["b"], vals["c"], "f64", "f64", "f64", False))
    want = want[:, rows, cols].reshape(warps, -1)
    tiny = want[10:12].view(np.float64)
    assert ((tiny != 0) & (np.abs(tiny) < 2.0 ** -1022)).any(), "some D subnormal"
    run = mma_native.plan({u: mma.matrix_places(*lay[u], dims[u]) for u in "abc"},
                          {u: lay[u][0].shape[1] for u in "abc"}, (rows * n + cols).ravel(),
                          (m, n, k), "f64", "f64", "f64", "f64", False, None)
    regs = {u: tuple(np.ascontiguousarray(vals[u][:, lay[u][0], lay[u][1]].view(np.uint64)[:, :, j].reshape(-1))
                     for j in range(lay[u][0].shape[1])) for u in "abc"}
    d, ok = run(np.arange(warps), regs["a"], regs["b"], regs["c"])
    assert ok.tolist() == [True] * 12 + [False] * 4
    assert (np.stack(d, axis=-1).reshape(warps, -1)[ok] == want[ok]).all()


BF16_CHAIN = r'''
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
__global__ void chain(const float* a, const float* b, const float* c, float* d) {
  __shared__ __nv_bfloat16 sa[2][16 * 96], sb[2][16 * 96];   // each warp's A (16 x 96) and B (96 x 16, by columns)
  int w = threadIdx.x / 32, t = blockIdx.x * 2 + w;
  for (int i = threadIdx.x % 32; i < 16 * 96; i += 32) {
    sa[w][i] = __float2bfloat16(a[t * 16 * 96 + i]);
    sb[w][i] = __float2bfloat16(b[t * 16 * 96 + i]);
  }
  __syncwarp();
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, c + t * 256, 16, wmma::mem_row_major);
  for (int e = 0; e < acc.num_elements; e++) acc.x[e] *= 1.2f;          // as bf16TensorCoreGemm's beta
#pragma unroll
  for (int k = 0; k < 6; ++k) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::load_matrix_sync(fa, sa[w] + 16 * k, 96);
    wmma::load_matrix_sync(fb, sb[w] + 16 * k, 96);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d + t * 256, acc, 16, wmma::mem_row_major);
}'''


def test_a_long_bf16_chain_proven_from_bounds_has_every_instructions_bits(monkeypatch):
    """An accumulator chain of bf16TensorCoreGemm's kind: C scaled by beta (full float32 significands),
    small integers in A and B, so each mma's D is its exact sum cut toward zero. Along a chain the
    compiled loop proves each mma from bounds it carries (mma_loops.mma_bounded: |D| and D's lowest set
    bit), not from D's elements; where those bounds are too coarse (warps 1 and 5: C zero and one element
    1024 in every slab of A and B, so the bound on |D| outgrows what D holds) the elements' own test answers,
    without a stop; random floats (warps 3 and 7) stop at their first mma for the numpy path. Every warp
    gets the bits of the six mmas one after the other."""
    rng = np.random.default_rng(7)
    kind = np.arange(8) % 4                           # 0, 2: small integers; 1: with 1024s; 3: random
    a, b = (np.where((kind == 3)[:, None, None], rng.standard_normal((8, 16, 96)),
                     rng.integers(0, 3, (8, 16, 96))).astype(np.float32) for _ in range(2))
    a[kind == 1, 3, ::16] = b[kind == 1, 5, ::16] = 1024
    c = np.where((kind == 1)[:, None, None], 0, rng.integers(0, 3, (8, 16, 16))).astype(np.float32)
    stops = _one_by_one_then_as_one_program(monkeypatch, BF16_CHAIN, a, b, c)
    rows, pos = stops[0]
    assert rows >= 18 and [p == rows for p in pos] == [True, True, True, False] * 2


def test_a_tf32_chain_whose_sums_are_float32s_adds_in_float32_and_gives_plus_zero(monkeypatch):
    """Where C, every product and every partial sum of an mma are multiples of one power of two below
    2**24 of it (the samples' small integers), each hardware step's cut keeps the exact sum: the
    compiled loop then sums D = C + A B in float32 straight into the chain's values, over both tf32
    steps at once (mma_loops.mma_bounded). Warp 0's row 3 is -0 in C and A, so every term is -0: float32
    gives -0 + -0 = -0, the tensor core +0. Warp 1's C is near 2**25, so its sums are not float32s and
    each step cuts them toward zero (the float64 path); warp 2 rounds to tf32 as it loads; warp 3's
    random floats stop at the first mma for the numpy path. The bits are the instructions' one by one."""
    from cudalab.emulator import mma_native
    rng = np.random.default_rng(12)
    kind = np.arange(8) % 4
    a, b = (rng.integers(0, 3, (8, 16, 32)).astype(np.float32) for _ in range(2))
    c = rng.integers(0, 9, (8, 16, 16)).astype(np.float32)
    a[kind == 0, 3], c[kind == 0, 3] = -0.0, -0.0
    c[kind == 1] = 2.0 ** 25 + 4 * rng.integers(0, 9, (2, 16, 16))
    a[kind == 2] *= np.float32(1 + 2.0 ** -11)
    a[kind == 3], b[kind == 3] = rng.standard_normal((2, 16, 32)), rng.standard_normal((2, 16, 32))
    stops = _one_by_one_then_as_one_program(monkeypatch, TF32_CHAIN, a, b, c)
    rows, pos = stops[1]
    assert [p == rows for p in pos] == [True, True, True, False] * 2
    d = np.ones((8, 16, 16), np.float32)
    monkeypatch.setattr(mma_native, "worth_loading", lambda warps: True)
    cudalab.compile(TF32_CHAIN).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel())
    assert (d[kind == 0, 3].view(np.uint32) == 0).all(), "an exact zero is +0"
    exact = c[kind == 1].astype(np.float64) + a[kind == 1].astype(np.float64) @ np.swapaxes(b[kind == 1], 1, 2)
    assert (d[kind == 1] != exact).any() and (d[kind == 1] <= exact).all(), "above 2**25 the cut shows"


DMMA_CHAIN = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void chain(const double* a, const double* b, const double* c, double* d) {
  __shared__ double sa[2][8 * 16], sb[2][16 * 16];      // each warp's A (8 x 16) and B (16 x 16, by columns)
  int w = threadIdx.x / 32, t = blockIdx.x * 2 + w;
  for (int i = threadIdx.x % 32; i < 8 * 16; i += 32) sa[w][i] = a[t * 8 * 16 + i];
  for (int i = threadIdx.x % 32; i < 16 * 16; i += 32) sb[w][i] = b[t * 16 * 16 + i];
  __syncwarp();
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc[2];
  for (int j = 0; j < 2; j++) wmma::load_matrix_sync(acc[j], c + t * 128 + 8 * j, 16, wmma::mem_row_major);
#pragma unroll
  for (int k = 0; k < 4; ++k) {                   // as dmmaTensorCoreGemm: each A fragment read by two mmas
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb[2];
    wmma::load_matrix_sync(fa, sa[w] + 4 * k, 16);
    for (int j = 0; j < 2; j++) {
      wmma::load_matrix_sync(fb[j], sb[w] + 8 * 16 * j + 4 * k, 16);
      wmma::mma_sync(acc[j], fa, fb[j], acc[j]);
    }
  }
  for (int j = 0; j < 2; j++) wmma::store_matrix_sync(d + t * 128 + 8 * j, acc[j], 16, wmma::mem_row_major);
}'''


def test_a_dmma_k_loop_decodes_each_fragment_once_and_keeps_its_chains(monkeypatch):
    """dmmaTensorCoreGemm's unrolled k-loop as one program (f64 m8n8k4): each A fragment is read by two
    mmas and decoded once, and each accumulator's D stays in the compiled loop as the next mma's C. Small
    integers into a C of full significands (kind 0) and random doubles (kind 2) run to the end; kind 1
    gets a NaN in A's third k step, so its warps stop there with both chains' D not yet in their
    registers, which the stop writes before the numpy fma chain takes that mma; kind 3's products
    overflow at once and stop at the first mma. Every warp gets the bits of the instructions one by one."""
    from cudalab.emulator import mma_native
    rng = np.random.default_rng(13)
    kind = np.arange(8) % 4
    a, b = rng.integers(-2, 3, (8, 8, 16)).astype(np.float64), rng.integers(-2, 3, (8, 16, 16)).astype(np.float64)
    c = rng.integers(0, 3, (8, 8, 16)) * (1.2 / 1.1)
    a[kind == 1, 2, 9] = np.nan
    a[kind == 2], b[kind == 2] = rng.standard_normal((2, 8, 16)), rng.standard_normal((2, 16, 16))
    a[kind == 3], b[kind == 3] = 1e200, -1e200
    k = cudalab.compile(DMMA_CHAIN).get_kernel("chain")
    got = []
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        stops = _program_stops(monkeypatch) if got else []
        d = np.zeros((8, 8, 16))
        k[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel())
        got.append(d.view(np.uint64).copy())
    assert np.array_equal(got[0], got[1])
    rows, pos = [s for s in stops if len(s[1]) == 8][-1]        # (the loads of C from global memory stop every warp)
    assert [p == rows for p in pos] == [True, False, True, False] * 2
    assert pos[3] < pos[1] < rows


STRIDED_CHAIN = CHAIN.replace(
    "__shared__ half sa[2][512], sb[2][512];             // each warp's A (16 x 32) and B (32 x 16, by columns)",
    "__shared__ half sa[2][16 * 48], sb[2][16 * 48];     // each warp's A and B, rows (columns) ld apart")\
    .replace("for (int i = threadIdx.x % 32; i < 512; i += 32) { sa[w][i] = a[t * 512 + i]; sb[w][i] = b[t * 512 + i]; }",
             "int ld = t % 3 == 1 ? 48 : 32;                      // (a different row stride in some warps)\n"
             "  for (int i = threadIdx.x % 32; i < 512; i += 32) {\n"
             "    sa[w][i / 32 * ld + i % 32] = a[t * 512 + i]; sb[w][i / 32 * ld + i % 32] = b[t * 512 + i]; }")\
    .replace("wmma::load_matrix_sync(fa, pa + 16 * k, 32);", "wmma::load_matrix_sync(fa, pa + 16 * k, ld);")\
    .replace("wmma::load_matrix_sync(fb, pb + 16 * k, 32);", "wmma::load_matrix_sync(fb, pb + 16 * k, ld);")\
    .replace(", int skew", "").replace(" + (t == 5 ? skew : 0)", "")


def test_tiles_of_another_row_stride_in_some_warps_are_read_where_they_lie(monkeypatch):
    """A k-loop's load whose fragment only its mma reads is read straight into the matrix the mma
    multiplies (mma_loops.load_planned): element by element from the warp's tile, at offsets worked out
    from the load's tables and its row stride once, then reused while the stride stays. Here warps 1, 4
    and 7 keep their tiles 48 elements a row apart, the others 32: each warp's offsets must be its own,
    and the bits those of the instructions one by one."""
    assert STRIDED_CHAIN.count(", ld);") == 2 and "16 * 48" in STRIDED_CHAIN and "skew" not in STRIDED_CHAIN
    a, b, c = _chain_inputs()
    stops = _one_by_one_then_as_one_program(monkeypatch, STRIDED_CHAIN, a, b, c)
    assert stops[0][1][::2] == [6] * 4, "the warps of small integers ran the whole program"
    d = np.zeros((8, 16, 16), np.float32)
    cudalab.compile(STRIDED_CHAIN).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel())
    assert np.array_equal(d.view(np.uint32), _chain_product(a, b, c).view(np.uint32))


LONE_MMA = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void lone(const half* a, const half* b, float* c, int iters) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::load_matrix_sync(fa, a + w * 256, 16);
  wmma::load_matrix_sync(fb, b + w * 256, 16);
  wmma::fill_fragment(fc, 0);
  for (int i = 0; i < iters; ++i) wmma::mma_sync(fc, fa, fb, fc);     // (not unrolled: each mma alone)
  wmma::store_matrix_sync(c + w * 256, fc, 16, wmma::mem_row_major);
}'''


def test_an_mma_alone_and_a_k_loop_program_share_one_compiled_loop(monkeypatch):
    """numba compiles a loop once for each signature it is called with, and an array's signature says
    whether it may be written: an mma alone (no loads) once passed a writable stand-in for the batch's
    block bases, which are read-only, and so built the whole loop a second time (25 s of CPU in a
    one-thread run of bf16TensorCoreGemm's 2048^3 copy). Both paths now call one compiled loop."""
    from cudalab.emulator import mma_native
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    a, b, c = _chain_inputs()
    cudalab.compile(CHAIN).get_kernel("chain")[4, 64](a.ravel(), b.ravel(), c.ravel(),
                                                       np.zeros(8 * 256, np.float32), np.int32(0))
    x = np.random.default_rng(3).integers(-2, 3, 8 * 256).astype(np.float16)
    cudalab.compile(LONE_MMA).get_kernel("lone")[4, 64](x, x, np.zeros(8 * 256, np.float32), np.int32(3))
    floats = mma_native.kernels((16, 16, 16), 16)["floats"]
    assert len(floats.signatures) == 1, floats.signatures


def test_a_dmma_k_loops_tiles_are_read_into_the_loop_and_written_at_a_stop(monkeypatch):
    """dmmaTensorCoreGemm's k-loop loads each A and B fragment from a tile of shared memory that every
    lane of the warp points at, and only the k-loop's mmas read it: the program reads the tile straight
    into the matrix the mma multiplies (mma_loops.tile_at) and writes no registers (QUIET). Warps 1 and 5
    stop at their third k step (an infinity in B there): the fragments loaded before the stop
    must then reach their registers for the numpy fma chain, and every warp has the instructions' bits."""
    from cudalab.emulator import mma_native
    seen = []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        seen.append(ops.copy())
        run(self, warps, pos, ptrs, ops, *rest)
    monkeypatch.setattr(mma_native.Form, "run", watched)
    rng = np.random.default_rng(17)
    a, b = rng.integers(-2, 3, (8, 8, 16)).astype(np.float64), rng.integers(-2, 3, (8, 16, 16)).astype(np.float64)
    c = rng.integers(0, 3, (8, 8, 16)) * (1.2 / 1.1)
    late = np.arange(8) % 4 == 1
    b[late, 3, 10] = np.inf
    k = cudalab.compile(DMMA_CHAIN).get_kernel("chain")
    got = []
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        stops = _program_stops(monkeypatch) if got else []
        d = np.zeros((8, 8, 16))
        k[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel())
        got.append(d.view(np.uint64).copy())
    assert np.array_equal(got[0], got[1])
    rows, pos = [s for s in stops if len(s[1]) == 8][-1]
    assert [p == rows for p in pos] == [True, False, True, True] * 2
    ops = max(seen, key=len)
    loads = np.flatnonzero((ops[:, 0] == mma_native.LOAD) & (ops[:, mma_native.FRAGMENT] >= 0))
    assert len(loads) == 4 * 3, "each k step's A and two B fragments"
    assert (ops[loads, mma_native.QUIET] == 1).all()


def test_float32_products_as_vectors_add_each_row_of_a_times_b():
    """mma_loops.vproduct, the float32 A B of the compiled loops, keeps each row of D in one LLVM vector
    and adds a splat of A's element times B's row for each k: for small integers (every partial sum
    exact) it must give numpy's product, over part of k too (a hardware step), and added into D."""
    import numba
    from cudalab.emulator import mma_loops

    @numba.njit
    def step(av, bv, out, k0, k1):
        mma_loops.vproduct(av, bv, out, 16, 16, 16, k0, k1, False)

    @numba.njit
    def into(av, bv, out):
        mma_loops.vproduct(av, bv, out, 32, 8, 16, 0, 16, True)

    rng = np.random.default_rng(5)
    a, b = (rng.integers(-3, 4, (16, 16)).astype(np.float32) for _ in range(2))
    out = np.full(256, 7, np.float32)
    step(a.ravel(), b.ravel(), out, 4, 12)
    assert np.array_equal(out.reshape(16, 16), a[:, 4:12] @ b[4:12])
    a, b, d = rng.integers(-3, 4, (32, 16)), rng.integers(-3, 4, (16, 8)), rng.integers(-9, 9, (32, 8))
    out = d.astype(np.float32).ravel()
    into(a.astype(np.float32).ravel(), b.astype(np.float32).ravel(), out)
    assert np.array_equal(out.reshape(32, 8), d + a @ b)


def test_vector_products_in_doubles_are_fma_chains_in_k_order():
    """mma_loops.vproduct on float64 arrays (dmma's compiled loop): each element of D is C followed by
    one fused multiply-add per k, in k order, each rounded once, as dtypes.fma_f64 computes it term by
    term: random doubles (no sum exact), tiny ones whose products and sums are subnormal, and C = 0."""
    import numba
    from cudalab.emulator import mma_loops
    from cudalab.emulator.dtypes import fma_f64

    @numba.njit
    def into(av, bv, out):
        mma_loops.vproduct(av, bv, out, 8, 8, 4, 0, 4, True)

    rng = np.random.default_rng(8)
    for scale, c_scale in ((1.0, 1.0), (2.0 ** -540, 2.0 ** -1070), (1.0, 0.0)):
        a, b = rng.standard_normal((8, 4)) * scale, rng.standard_normal((4, 8)) * scale
        c = rng.standard_normal((8, 8)) * c_scale
        want = c.copy()
        for kk in range(4):
            want = fma_f64(np.repeat(a[:, kk:kk + 1], 8, axis=1), np.repeat(b[kk:kk + 1], 8, axis=0), want)
        out = c.ravel().copy()
        into(a.ravel(), b.ravel(), out)
        assert np.array_equal(out.view(np.uint64), want.ravel().view(np.uint64)), scale
        if scale == 1.0 and c_scale == 1.0:
            plain = c + a[:, 0:1] * b[0:1] + a[:, 1:2] * b[1:2] + a[:, 2:3] * b[2:3] + a[:, 3:4] * b[3:4]
            assert (want != plain).any(), "rounded products would give other bits"


DMMA_HOISTED = r'''
#include <mma.h>
using namespace nvcuda;
#define LD 20
__global__ void chain(const double* a, const double* b, double* d, int reps) {
  extern __shared__ double sm[];            // A: 16 rows of k, then B: 32 columns of k, each LD doubles apart
  double* sb = sm + 16 * LD;
  for (int i = threadIdx.x; i < 16 * 16; i += blockDim.x) sm[i / 16 * LD + i % 16] = a[blockIdx.x * 256 + i];
  for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) sb[i / 16 * LD + i % 16] = b[blockIdx.x * 512 + i];
  __syncthreads();
  int w = threadIdx.x / 32;                 // warp w: rows 8w..8w+7 of A times all 32 columns of B
  const double* pa = sm + w * 8 * LD;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc[4];
  for (int j = 0; j < 4; j++) wmma::fill_fragment(acc[j], 0.0);
  for (int r = 0; r < reps; r++) {          // (a loop nvcc keeps: the tiles' addresses are hoisted before it)
#pragma unroll
  for (int k = 0; k < 4; k++) {
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, pa + 4 * k, LD);
#pragma unroll
    for (int j = 0; j < 4; j++) {
      wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
      wmma::load_matrix_sync(fb, sb + (j * 8 + (w % 2) * 0) * LD + 4 * k, LD);
      wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
  }
  __syncthreads();
  }
  for (int j = 0; j < 4; j++)
    wmma::store_matrix_sync(d + blockIdx.x * 512 + w * 8 * 32 + j * 8, acc[j], 32, wmma::mem_row_major);
}'''


def test_a_k_loops_tile_addresses_hoisted_into_registers_are_read_from_their_one_base(monkeypatch):
    """nvcc hoists a k-loop's tile addresses out of the loop around it, each a register of its own
    (add.s64 %rd4, %rd3, 32; dmmaTensorCoreGemm's 96 tiles a step come through 81 registers). The
    program reads each tile from the base register the adds lead back to, with the constant in its
    offset (mma_runs.constant_offsets): here A's four registers are one base and B's loads another,
    two registers for all twenty loads; and the bits are those of the instructions one by one."""
    from cudalab.emulator import mma_native
    rng = np.random.default_rng(14)
    blocks, reps = 6, 3
    a, b = rng.integers(-3, 4, (blocks, 16, 16)).astype(np.float64), rng.integers(-3, 4, (blocks, 32, 16)).astype(np.float64)
    k = cudalab.compile(DMMA_HOISTED).get_kernel("chain")
    got, programs = [], []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        programs.append(ops.copy())
        return run(self, warps, pos, ptrs, ops, *rest)
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
        monkeypatch.setattr(mma_native.Form, "run", watched)
        d = np.zeros((blocks, 16, 32))
        k[blocks, 64, 0, (16 + 32) * 20 * 8](a.ravel(), b.ravel(), d.ravel(), np.int32(reps))
        got.append(d.copy())
    assert np.array_equal(got[0].view(np.uint64), got[1].view(np.uint64))
    assert np.array_equal(got[1], reps * a @ b.transpose(0, 2, 1))
    ops = programs[-1]
    loads = ops[ops[:, 0] == mma_native.LOAD]
    assert len(loads) == 20 and len(set(loads[:, mma_native.BASE].tolist())) == 2
    a_loads = loads[loads[:, mma_native.OPERAND] == 0]
    assert len(set(a_loads[:, mma_native.BASE].tolist())) == 1
    assert (a_loads[:, mma_native.OFFSET] - a_loads[0, mma_native.OFFSET]).tolist() == [0, 32, 64, 96]  # k steps


def test_fma_rows_sums_c_apart_from_d_and_says_whether_d_is_finite():
    """mma_loops.fma_rows (dmma's compiled loop since dmma round 14): D = C + A B with C and D in separate
    arrays (or the same one), each element an fma chain in k order as dtypes.fma_f64 computes it; it
    answers whether every element of D is finite, and a D that overflows or a NaN in C says False."""
    import numba
    from cudalab.emulator import mma_loops
    from cudalab.emulator.dtypes import fma_f64

    @numba.njit
    def rows(av, bv, cin, out):
        return mma_loops.fma_rows(av, bv, cin, out, 8, 8, 4)

    rng = np.random.default_rng(14)
    for scale, c_scale in ((1.0, 1.0), (2.0 ** -540, 2.0 ** -1070), (1.0, 0.0)):
        a, b = rng.standard_normal((8, 4)) * scale, rng.standard_normal((4, 8)) * scale
        c = rng.standard_normal((8, 8)) * c_scale
        want = c.copy()
        for kk in range(4):
            want = fma_f64(np.repeat(a[:, kk:kk + 1], 8, axis=1), np.repeat(b[kk:kk + 1], 8, axis=0), want)
        cin, out = c.ravel().copy(), np.full(64, 7.0)
        assert rows(a.ravel(), b.ravel(), cin, out)
        assert np.array_equal(out.view(np.uint64), want.ravel().view(np.uint64)), scale
        assert np.array_equal(cin, c.ravel()), "C is only read"
        assert rows(a.ravel(), b.ravel(), cin, cin)            # in place: C read whole before D is written
        assert np.array_equal(cin.view(np.uint64), want.ravel().view(np.uint64))
    c, out, big = np.zeros(64), np.zeros(64), np.ones(32)
    c[17] = big[8] = np.finfo(np.float64).max                 # C[2, 1] and A[2, 0]
    assert not rows(big, np.ones(32), c, out)                 # D[2, 1] = max + max + 3: infinite
    assert np.isinf(out[17])
    c[17] = np.nan
    assert not rows(np.ones(32), np.ones(32), c, out)
    c[17] = 0.0
    assert rows(np.ones(32), np.ones(32), c, out) and (out == 4.0).all()


def test_tile_fragments_of_side_by_side_runs_are_read_without_offsets():
    """mma_loops.line_stride finds a fragment's layout in its tile (row_major A: m runs of k doubles;
    col_major B: n runs of k, one a column), and read_lines reads it so, as read_doubles does through
    the offsets; anything else (a row_major B's offsets) has no stride."""
    import numba
    from cudalab.emulator import mma_loops

    @numba.njit
    def both(tile, offs, lines, across):
        stride = mma_loops.line_stride(offs, lines, 4, across)
        by_lines, by_offs = np.zeros(32), np.zeros(32)
        at = tile.ctypes.data
        ok = True
        if stride >= 0:
            ok = mma_loops.read_lines(at + offs[0], stride, by_lines, lines, 4, across)
        return stride, ok, by_lines, mma_loops.read_doubles(at, offs, 32, by_offs), by_offs

    tile = np.arange(8 * 68, dtype=np.float64)                # a shared tile 68 doubles a row (the sample's)
    t = np.arange(32)
    a_offs = ((t // 4) * 68 + t % 4 + 8) * 8                  # A (8 x 4), row_major, from column 8
    b_offs = ((t % 8) * 68 + t // 8) * 8                      # B (4 x 8), col_major: column j is a run
    for offs, across in ((a_offs, False), (b_offs, True)):
        stride, ok, by_lines, fine, by_offs = both(tile, offs.astype(np.int64), 8, across)
        assert stride == 68 * 8 and ok and fine
        assert np.array_equal(by_lines, by_offs) and np.array_equal(by_offs, tile[offs // 8])
    row_b = ((t // 8) * 68 + t % 8) * 8                       # B row_major: 4 runs of 8, not 8 of 4
    assert both(tile, row_b.astype(np.int64), 8, True)[0] == -1
    tile[68 + 9] = np.inf
    stride, ok, _, fine, _ = both(tile, a_offs.astype(np.int64), 8, False)
    assert stride >= 0 and not ok and not fine


def test_c_bounds_reads_the_largest_magnitude_and_lowest_set_bit_from_the_bits():
    """mma_loops.c_bounds, without branches or tables: the largest magnitude, the exponent of the lowest
    set bit over C's nonzero elements (a zero bounds nothing), and whether every element is finite."""
    import numba
    from cudalab.emulator import mma_loops
    bounds = numba.njit(lambda s: mma_loops.c_bounds(s, s.size))
    c = np.array([0.0, -0.0, 3.0, -40.5, 1.5 * 2.0 ** -140, 2.0 ** 100, 0.75], np.float32).astype(np.float64)
    assert bounds(c) == (2.0 ** 100, -141, True)        # 1.5 * 2**-140: bits 2**-140 and 2**-141
    assert bounds(np.zeros(8)) == (0.0, mma_loops.FAR, True)
    assert bounds(np.array([1.0, np.inf]))[2] is False and bounds(np.array([np.nan, 2.0]))[2] is False


def test_an_unmanaged_view_is_the_same_memory_and_keeps_no_count():
    """mma_loops.unmanaged gives the compiled loops their arrays with no reference count (numba's atomic
    counts at every view were a fifth of the bf16 sample's CPU): the view writes the array it came from,
    and its own views are arrays like any other's. keep_alive holds the loop's own arrays to its end."""
    import numba
    from cudalab.emulator import mma_loops

    @numba.njit
    def fill(a):
        own = np.arange(6.0)
        held = (own,)
        view, mine = mma_loops.unmanaged(a), mma_loops.unmanaged(own)
        for i in range(view.shape[0]):
            row = view[i]
            row[:] = mine[i] + mine[i + 1]
        total = mine[1:4].sum()
        mma_loops.keep_alive(held)
        return total

    a = np.zeros((3, 4))
    assert fill(a) == 6.0
    assert np.array_equal(a, [[1.0] * 4, [3.0] * 4, [5.0] * 4])


DMMA_BETA_PART = DMMA_CHAIN.replace("double* d) {", "double* d, double beta) {").replace(
    "16, wmma::mem_row_major);\n#pragma unroll",
    "16, wmma::mem_row_major);\n"
    "  for (int j = 0; j < 2; j++) for (int e = 0; e < acc[j].num_elements; e++) acc[j].x[e] *= beta;\n"
    "  if (t != 6) {                                   // (warp 6 keeps C: the k-loop runs for seven warps)\n"
    "#pragma unroll").replace("      wmma::mma_sync(acc[j], fa, fb[j], acc[j]);\n    }\n  }\n",
                              "      wmma::mma_sync(acc[j], fa, fb[j], acc[j]);\n    }\n  }\n  }\n")


def test_a_dmma_k_loop_of_random_doubles_with_c_scaled_by_beta_in_part_of_the_warps(monkeypatch):
    """The sample's shape of work, in small: C read and scaled by beta in the kernel (its mul.f64 before the
    k-loop), then four k steps of random doubles (no sum exact) for seven of the eight warps, warp 6 passing
    the k-loop by. The compiled fma chains run every warp that enters to the end and give the bits of the
    instructions one by one."""
    from cudalab.emulator import mma_native
    assert DMMA_BETA_PART.count("*= beta") == 1 and "if (t != 6)" in DMMA_BETA_PART
    rng = np.random.default_rng(21)
    a, b, c = rng.standard_normal((8, 8, 16)), rng.standard_normal((8, 16, 16)), rng.standard_normal((8, 8, 16))
    k = cudalab.compile(DMMA_BETA_PART).get_kernel("chain")
    got = []
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        stops = _program_stops(monkeypatch) if got else []
        d = np.zeros((8, 8, 16))
        k[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), np.float64(1.2 / 1.1))
        got.append(d.view(np.uint64).copy())
    assert np.array_equal(got[0], got[1])
    rows, pos = max(stops, key=lambda s: s[0])
    assert len(pos) == 7 and pos == [rows] * 7, "seven warps ran the whole k-loop compiled"
    assert np.array_equal(d[6], c[6] * (1.2 / 1.1)), "warp 6's D is its C scaled"


CONSTANT_OFFSETS_PTX = r"""
.version 7.0
.target sm_80
.address_size 64
.visible .entry f(.param .u64 p)
{
  .reg .b64 %rd<10>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [p];
  add.s64 %rd2, %rd1, 16;
  add.s64 %rd3, %rd2, 32;
  setp.eq.u64 %p1, %rd1, 0;
  add.s64 %rd5, %rd1, 8;
  @%p1 add.s64 %rd5, %rd1, 24;
  add.s64 %rd6, %rd1, 40;
  add.s64 %rd7, %rd6, 8;
  add.s64 %rd6, %rd6, 1;
$L__BB0_1:
  add.s64 %rd8, %rd1, 64;
  add.s64 %rd9, %rd8, -4;
  st.u64 [%rd9], %rd3;
  ret;
}
"""


def test_constant_offsets_follow_adds_of_immediates_only_where_they_still_hold():
    """mma_runs.constant_offsets: at an instruction, which registers are another plus a constant. Chains
    add up (rd3 = rd1 + 48, rd9 = rd1 + 60 inside the loop's block); a register written twice (one write
    guarded), or whose source is written after it, is left out; an add before a label counts only where
    it and its source are each written once in the kernel."""
    from cudalab.emulator import mma_runs
    from cudalab.ptx import parser
    f = parser.parse(CONSTANT_OFFSETS_PTX).functions
    f = f["f"] if isinstance(f, dict) else f[0]
    labels = set(f.labels.values())
    st = next(i for i, inst in enumerate(f.insts) if inst.opcode == "st")
    got = mma_runs.constant_offsets(f, st, labels)
    assert got["%rd3"] == ("%rd1", 48) and got["%rd2"] == ("%rd1", 16) and got["%rd9"] == ("%rd1", 60)
    assert "%rd5" not in got and "%rd7" not in got and "%rd6" not in got
