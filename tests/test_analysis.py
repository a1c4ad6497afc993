"""Bank conflicts, coalescing and divergence from synthetic emulator events: the rules, by example."""
from types import SimpleNamespace

import numpy as np
import pytest

from cudalab.analysis import (MetricsObserver, active_lane_histogram, bank_map, branch_outcome,
                              global_sectors, local_sectors, sector_map, shared_wavefronts)
from cudalab.emulator.events import BatchInfo, BranchEvent, InstructionEvent, MemoryEvent


def batch(blocks, threads):
    lanes_per_block = -(-threads // 32) * 32
    return BatchInfo(0, blocks, (blocks, 1, 1), (threads, 1, 1), threads, lanes_per_block)


def inst(index, line=None, text="", opcode="ld"):
    return SimpleNamespace(index=index, line=line, text=text, opcode=opcode)


def threads(blocks, nthreads):
    """Batch lanes of every thread, and each one's threadIdx.x."""
    b = batch(blocks, nthreads)
    tid = np.tile(np.arange(nthreads), blocks)
    lanes = np.repeat(np.arange(blocks), nthreads) * b.lanes_per_block + tid
    return b, lanes, tid


# ------------------------------------------------------------------ shared memory: 32-bit accesses
@pytest.mark.parametrize("stride, wavefronts", [(1, 8), (2, 16), (32, 256), (33, 8)])
def test_float_stride_in_shared(stride, wavefronts):
    # smem_stride in METRICS.md: 2 blocks x 128 threads load s[(t * stride) % 1056]
    b, lanes, t = threads(2, 128)
    r = shared_wavefronts(lanes, (t * stride) % 1056 * 4, 4)
    assert len(r.warps) == 8
    assert r.wavefronts.sum() == wavefronts
    assert r.bank_conflicts.sum() == wavefronts - 8


def test_broadcast_costs_one_wavefront():
    t = np.arange(32)
    assert shared_wavefronts(t, np.full(32, 20), 4).wavefronts.tolist() == [1]
    # two words, each read by 16 lanes, in the same bank: 2 wavefronts, not 32
    assert shared_wavefronts(t, np.where(t < 16, 0, 128), 4).wavefronts.tolist() == [2]


def test_bytes_of_one_word_share_it():
    t = np.arange(32)   # char s[t]: 4 lanes per word, 8 words in 8 banks
    assert shared_wavefronts(t, t, 1).wavefronts.tolist() == [1]


def test_transpose_tiles():
    # 32x32 block, each warp a row threadIdx.y; reading tile[threadIdx.x][threadIdx.y]
    b, lanes, tid = threads(1, 1024)
    tx, ty = tid % 32, tid // 32
    naive = shared_wavefronts(lanes, (tx * 32 + ty) * 4, 4)
    padded = shared_wavefronts(lanes, (tx * 33 + ty) * 4, 4)
    assert naive.wavefronts.sum() == 32 * 32 and naive.ways.max() == 32
    assert padded.wavefronts.sum() == 32 and padded.bank_conflicts.sum() == 0


def test_partially_active_warps():
    # warp 0: lanes 0..9 at stride 32 words (10-way); warp 1: only lane 40 active
    lanes = np.r_[np.arange(10), 40]
    r = shared_wavefronts(lanes, np.r_[np.arange(10) * 128, 0], 4)
    assert r.warps.tolist() == [0, 1]
    assert r.wavefronts.tolist() == [10, 1]
    assert r.ideal.tolist() == [1, 1]
    assert len(shared_wavefronts(np.zeros(0, np.int64), np.zeros(0, np.uint64), 4).warps) == 0


# ------------------------------------------------------------------ shared memory: 64 and 128 bits
@pytest.mark.parametrize("size, stride, wavefronts, ideal", [
    (8, 1, 2, 2),     # double s[t]: each half-warp fills the 32 banks once
    (8, 2, 4, 2),     # double s[2*t]: a half-warp's 16 doubles span 64 words, 2 per bank
    (8, 16, 32, 2),   # double s[16*t]: a half-warp hits the same 2 banks 16 times
    (16, 1, 4, 4),    # float4 s[t]: each quarter-warp fills the 32 banks once
    (16, 2, 8, 4),    # float4 s[2*t]: 2-way in every quarter-warp
])
def test_wide_accesses_go_in_phases(size, stride, wavefronts, ideal):
    t = np.arange(32)
    r = shared_wavefronts(t, t * stride * size, size)
    assert (r.wavefronts[0], r.ideal[0]) == (wavefronts, ideal)


def test_wide_access_phases_without_active_lanes_cost_nothing():
    # only the first half-warp runs a double load: 1 phase, 1 wavefront, no conflict
    t = np.arange(16)
    r = shared_wavefronts(t, t * 8, 8)
    assert (r.wavefronts[0], r.ideal[0]) == (1, 1)


def test_wide_broadcast():
    # every lane stores to the same double: one wavefront per half-warp
    r = shared_wavefronts(np.arange(32), np.zeros(32), 8)
    assert (r.wavefronts[0], r.bank_conflicts[0]) == (2, 0)
    # a load of one double by every lane is one wavefront on an H100 (neighbouring lanes pair up)
    r = shared_wavefronts(np.arange(32), np.zeros(32), 8, load=True)
    assert (r.wavefronts[0], r.bank_conflicts[0]) == (1, 0)


def test_bank_map_numbers_the_passes():
    t = np.arange(64)
    m = bank_map(t, (t % 32) * 2 * 4, 4, warp=1)   # stride 2: banks 0, 2, ..., 30, twice
    assert m.lane.tolist() == list(range(32))
    assert m.bank[:, 0].tolist() == [(2 * i) % 32 for i in range(32)]
    assert m.wavefront[:, 0].tolist() == [0] * 16 + [1] * 16
    assert m.wavefronts == 2
    wide = bank_map(t[:32], t[:32] * 16, 8, warp=0)  # double s[2*t]
    assert wide.bank.shape == (32, 2) and wide.wavefronts == 4
    assert wide.wavefront[[0, 8, 16, 24], 0].tolist() == [0, 1, 2, 3]


# ------------------------------------------------------------------ global memory
BASE = 1 << 20   # buffers start 256-byte aligned, as cudaMalloc's do


@pytest.mark.parametrize("stride, offset, sectors", [(1, 0, 256), (1, 1, 320), (32, 0, 2048), (2, 0, 512)])
def test_float_loads_stride_and_offset(stride, offset, sectors):
    # gmem_stride in METRICS.md: 16 blocks x 128 threads load in[t * stride + offset]
    b, lanes, tid = threads(16, 128)
    t = np.repeat(np.arange(16), 128) * 128 + tid
    r = global_sectors(lanes, BASE + (t * stride + offset) * 4, 4)
    assert r.requests == 64
    assert r.sectors.sum() == sectors
    assert r.ideal_sectors.sum() == 256


def test_sector_efficiency():
    t = np.arange(32)
    assert global_sectors(t, BASE + t * 4, 4).efficiency.tolist() == [1.0]
    assert global_sectors(t, BASE + t * 128, 4).efficiency.tolist() == [4 / 32]
    assert global_sectors(t, np.full(32, BASE), 4).sectors.tolist() == [1]     # broadcast


def test_wide_and_straddling_global_accesses():
    t = np.arange(32)
    assert global_sectors(t, BASE + t * 16, 16).sectors.tolist() == [16]        # float4: 512 bytes
    assert global_sectors(t[:1], np.array([BASE + 30]), 4).sectors.tolist() == [2]  # crosses a sector


def test_addresses_far_apart():
    # sectors 2**55 apart cannot be packed with the warp number in one int64: counted all the same
    r = global_sectors(np.array([0, 1, 32 * 1000]), np.array([BASE, 2**60, 2**60], np.uint64), 4)
    assert r.warps.tolist() == [0, 1000] and r.sectors.tolist() == [2, 1]


def test_local_memory_is_interleaved_per_thread():
    # every thread reads element 0 of its own local array: consecutive threads, consecutive words
    t = np.arange(32)
    assert local_sectors(t, np.zeros(32), 4).sectors.tolist() == [4]
    assert local_sectors(t, np.full(32, 8), 8).sectors.tolist() == [8]
    # each thread a different element (a dynamic index): scattered, like a strided global access
    assert local_sectors(t, t * 4, 4).sectors.tolist() == [32]


def test_sector_map():
    t = np.arange(32)
    m = sector_map(t, BASE + 4 + t * 4, 4, warp=0)
    assert m.sector.tolist() == [0] * 7 + [1] * 8 + [2] * 8 + [3] * 8 + [4]
    assert m.offset[:2].tolist() == [4, 8]
    assert len(m.sector_address) == 5 and m.sector_address[0] == BASE


# ------------------------------------------------------------------ divergence
def test_branch_split():
    lanes = np.arange(96)
    taken = np.r_[lanes[:32] % 2 == 0, np.ones(32, bool), np.zeros(32, bool)]   # odd/even in warp 0
    b = branch_outcome(lanes, taken)
    assert b.split.tolist() == [True, False, False]
    assert b.taken.tolist() == [16, 32, 0]


def test_active_lane_histogram():
    h = active_lane_histogram(np.r_[np.arange(32), 32 + np.arange(0, 32, 2)])
    assert h[32] == 1 and h[16] == 1 and h.sum() == 2


# ------------------------------------------------------------------ the observer
def feed(obs, *events):
    for ev in events:
        obs.on_instruction(ev)
        if isinstance(ev, MemoryEvent):
            obs.on_memory(ev)
        if isinstance(ev, BranchEvent):
            obs.on_branch(ev)


def test_observer_metrics_per_line_and_findings():
    src = "\n".join(["// kernel", "int i = threadIdx.x;", "if (i % 2) {", "  v = s[i * 32];", "}",
                     "out[i * 32] = v;"])
    b, lanes, t = threads(2, 64)
    obs = MetricsObserver(source=src)
    odd = lanes[t % 2 == 1]
    feed(obs,
         InstructionEvent(inst(0, 2, "mov.u32 %r1, %tid.x;", "mov"), lanes, b),
         BranchEvent(inst(1, 3, "@%p1 bra $L1;", "bra"), lanes, b, taken=t % 2 == 0),
         MemoryEvent(inst(2, 4, "ld.shared.f32 %f1, [%r2];"), odd, b, space="shared", kind="ld", size=4,
                     addresses=(t[t % 2 == 1] * 32 % 1024 * 4).astype(np.uint64)),
         MemoryEvent(inst(3, 6, "st.global.f32 [%rd1], %f1;", "st"), lanes, b, space="global", kind="st",
                     size=4, addresses=(BASE + t * 128).astype(np.uint64)))
    m = obs.metrics
    assert m["smsp__inst_executed.sum"] == 4 * 4
    assert m["smsp__thread_inst_executed.sum"] == 3 * 128 + 64
    assert m["smsp__thread_inst_executed_per_inst_executed.ratio"] == (3 * 128 + 64) / 16
    # 16 odd lanes per warp at s[i*32]: all in bank 0, i*32 % 1024 gives 16 distinct words
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 4 * 16
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 4 * 15
    assert m["smsp__sass_inst_executed_op_shared_ld.sum"] == 4
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 4 * 32
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 0

    rows = {r["line"]: r for r in obs.per_line()}
    assert rows[4]["source"] == "v = s[i * 32];"
    assert rows[4]["bank_conflicts"] == 60 and rows[4]["active_lanes"] == 16
    assert rows[3]["divergence"] == 1.0
    assert rows[6]["sectors_per_request"] == 32

    found = obs.findings()
    assert any(f.startswith("line 4: 16-way bank conflict on a shared load") for f in found)
    assert any(f.startswith("line 6: uncoalesced global store: 32.0 sectors per request where 4.0") for f in found)
    assert any(f.startswith("line 3: divergent branch: 4 of 4 warps") for f in found)
    assert obs.bank_map(2).wavefronts == 16
    assert len(obs.sector_map(3).sector_address) == 32


def test_small_blocks_are_not_divergence():
    # 16-thread blocks: every warp runs with 16 lanes, all it has
    b, lanes, t = threads(8, 16)
    obs = MetricsObserver()
    for i in range(10):
        feed(obs, InstructionEvent(inst(i, 1), lanes, b))
    assert obs.metrics["smsp__thread_inst_executed_per_inst_executed.ratio"] == 16
    assert obs.findings() == []


# ------------------------------------------------------------------ against a plain reference
def reference_wavefronts(lane_ids, addresses, size):
    """The rule, written the slow obvious way for one warp."""
    nphase = 1 if size <= 4 else 2 if size <= 8 else 4
    total = 0
    for p in range(nphase):
        banks = {}
        for lane, a in zip(lane_ids, addresses):
            if lane // (32 // nphase) == p:
                for w in range(a // 4, a // 4 + max(1, size // 4)):
                    banks.setdefault(w % 32, set()).add(w)
        total += max((len(v) for v in banks.values()), default=0)
    return total


def reference_sectors(addresses, size):
    return len({s for a in addresses for s in range(a // 32, (a + size - 1) // 32 + 1)})


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_random_patterns_match_the_reference(size):
    rng = np.random.default_rng(size)
    lanes = np.flatnonzero(rng.random(32 * 40) < 0.7)   # 40 warps, about 70% of lanes active
    span = rng.choice([1, 4, 40, 300], 40)[lanes // 32]       # broadcasts to scattered, per warp
    words = rng.integers(0, span)
    addresses = (words * size).astype(np.uint64)         # naturally aligned
    r = shared_wavefronts(lanes, addresses, size)
    g = global_sectors(lanes, BASE + addresses, size)
    for i, w in enumerate(r.warps):
        mine = lanes // 32 == w
        a = addresses[mine].astype(int).tolist()
        assert r.wavefronts[i] == reference_wavefronts((lanes[mine] % 32).tolist(), a, size)
        assert g.sectors[i] == reference_sectors([BASE + x for x in a], size)
