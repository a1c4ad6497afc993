"""A k-loop program (emulator/mma_runs.py) inside native code (emulator/compiled.py): the registers the
program reads must be there when it runs.

nvcc hoists a GEMM's tile addresses out of its k-loop, each a register of its own (``add.s64 %rd18,
%rd68, 96``). The program reads such tiles from the base register the adds lead back to, the constant
in the load's offset (mma_runs.constant_offsets), so the base is a register the program reads although
no instruction of it names the base. Native code stores only the registers that later instructions
name; tf32TensorCoreGemm's base (%rd68) was named by nothing but its adds, the program found it missing
at every call and its k-loop ran one instruction at a time (351 to 549 s of CPU for the sample, against
about 110). The kernel here has that shape: its A tiles are the base plus 32 and plus 64 bytes (inline
asm, so that the compiler cannot fold the constants into the loads), and nothing else reads the base.
"""
import numpy as np
import pytest

import cudalab

HOISTED_BASE = r'''
#include <mma.h>
using namespace nvcuda;
#define LD 24
template <int BYTES> __device__ const float* plus(const float* p) {   // p + BYTES, as nvcc hoists a tile's address
  const float* q;
  asm("add.s64 %0, %1, %2;" : "=l"(q) : "l"(p), "n"(BYTES));
  return q;
}
__global__ void chain(const float* a, const float* b, float* d, int reps) {
  extern __shared__ float sm[];             // A: 16 rows a warp, B: 32 columns; k 0..15 at 8..23 of each LD
  float* sb = sm + 4 * 16 * LD;
  for (int i = threadIdx.x; i < 4 * 16 * 16; i += blockDim.x) sm[i / 16 * LD + 8 + i % 16] = a[blockIdx.x * 1024 + i];
  for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) sb[i / 16 * LD + 8 + i % 16] = b[blockIdx.x * 512 + i];
  __syncthreads();
  const float* pa = sm + threadIdx.x / 32 * 16 * LD;
  const float* ta[2] = {plus<32>(pa), plus<64>(pa)};       // every A tile past the base: nothing else reads pa
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2];
  for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[j], 0.0f);
  for (int r = 0; r < reps; r++) {          // (a loop nvcc keeps: the A tiles' addresses are worked out before it)
#pragma unroll
  for (int k = 0; k < 2; k++) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, ta[k], LD);
#pragma unroll
    for (int j = 0; j < 2; j++) {
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
      wmma::load_matrix_sync(fb, sb + j * 16 * LD + 8 + 8 * k, LD);
      wmma::mma_sync(acc[j], fa, fb, acc[j]);
    }
  }
  __syncthreads();
  }
  for (int j = 0; j < 2; j++)
    wmma::store_matrix_sync(d + blockIdx.x * 2048 + threadIdx.x / 32 * 16 * 32 + j * 16, acc[j], 32, wmma::mem_row_major);
}'''

BLOCKS, REPS = 3, 4
K_LOOP_ROWS = 2 + 4 + 4         # a k-loop step's program: two A loads, four B loads, four mmas


def _run(monkeypatch, tier):
    """D of the kernel under CUDALAB_TIER=``tier`` with the compiled loops on from the first warp, and the
    program's runs: (its rows, the row each warp stopped at, its loads' base slots by operand)."""
    from cudalab.emulator import mma_native
    from cudalab.runtime import module
    monkeypatch.setattr(module, "_PARSED", {})      # decoded afresh: no native code of an earlier test's kernel
    monkeypatch.setenv("CUDALAB_TIER", tier)
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    monkeypatch.setattr(mma_native, "worth_loading", lambda warps: True)
    runs = []
    run = mma_native.Form.run

    def watched(self, warps, pos, ptrs, ops, *rest):
        run(self, warps, pos, ptrs, ops, *rest)
        loads = ops[ops[:, 0] == mma_native.LOAD]
        bases = {use: sorted(set(loads[loads[:, mma_native.OPERAND] == use, mma_native.BASE].tolist()))
                 for use in (0, 1)}
        runs.append((len(ops), pos.tolist(), bases))
    monkeypatch.setattr(mma_native.Form, "run", watched)
    rng = np.random.default_rng(20)
    a = rng.integers(-4, 5, (BLOCKS, 64, 16)).astype(np.float32)
    b = rng.integers(-4, 5, (BLOCKS, 32, 16)).astype(np.float32)
    d = np.zeros((BLOCKS, 64, 32), np.float32)
    k = cudalab.compile(HOISTED_BASE).get_kernel("chain")
    k[BLOCKS, 128, 0, (64 + 32) * 24 * 4](a.ravel(), b.ravel(), d.ravel(), np.int32(REPS))
    assert np.array_equal(d, REPS * a @ b.transpose(0, 2, 1))
    return d, runs


@pytest.fixture
def native(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded from an older build
    return lambda: _run(monkeypatch, "compiled")


def test_the_kernels_a_tiles_come_from_a_base_that_nothing_else_reads():
    """The premise of the tests below, checked on the PTX: each A load reads a register that an add of an
    immediate made from one base, and no instruction names that base but its own write and those adds."""
    from cudalab.emulator.decode import _regs
    from cudalab.ptx import parser
    f = parser.parse(cudalab.compile(HOISTED_BASE).ptx).functions["_Z5chainPKfS0_Pfi"]
    writer = {inst.operands[0][1]: inst for inst in f.insts if inst.operands and inst.operands[0][0] == "reg"}
    tiles = {inst.operands[1][1][1] for inst in f.insts if inst.opcode == "wmma" and inst.mods[:2] == ("load", "a")}
    adds = [writer[x] for x in tiles]
    assert len(tiles) == 2 and all(x.opcode == "add" and x.operands[2][0] == "imm" for x in adds)
    (base,) = {x.operands[1][1] for x in adds}
    naming = [inst for inst in f.insts if base in {r for o in inst.operands for r in _regs(o)}]
    assert sorted(x.index for x in naming) == sorted(x.index for x in (writer[base], *adds))


def test_a_k_loop_whose_tile_base_nothing_names_runs_as_one_program_in_native_code(native, monkeypatch):
    """In native code the k-loop still runs as one compiled program for every warp, to its end, and
    gives the interpreter's answer (it used to run one instruction at a time: no program run at all)."""
    want, _ = _run(monkeypatch, "interp")
    got, runs = native()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert runs and all(rows == K_LOOP_ROWS for rows, _, _ in runs), "the k-loop ran one instruction at a time"
    assert all(pos == [rows] * len(pos) for rows, pos, _ in runs), "every warp ran the whole program"


def test_native_code_hands_the_program_the_base_its_tiles_are_read_from(native):
    """Native code stores the base for the program (compiled.hidden_reads): both A loads read their tiles
    from that one register, the constants in their offsets, as the interpreter's batches do (a batch
    without the base runs the program unfolded: one register for each tile)."""
    _, runs = native()
    assert runs and all(len(bases[0]) == 1 for _, _, bases in runs), \
        "the A tiles are read through the registers the adds wrote, not from their base"


def test_a_batch_without_the_base_runs_the_program_unfolded_not_one_instruction_at_a_time(native, monkeypatch):
    """Native code that does not store the base (as before compiled.hidden_reads; code built by anything
    else that does not know of it) leaves the program a batch without it: the program then runs as it
    would with no base folded, each A tile through its own register, whole, for every warp."""
    from cudalab.emulator import compiled
    monkeypatch.setattr(compiled, "hidden_reads", lambda df, pc: frozenset())
    want, _ = _run(monkeypatch, "interp")
    got, runs = native()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert runs and all(rows == K_LOOP_ROWS and pos == [rows] * len(pos) for rows, pos, _ in runs)
    assert all(len(bases[0]) == 2 for _, _, bases in runs), "the A tiles through the registers the adds wrote"
