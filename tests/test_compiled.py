"""The compiled tier (emulator/compiled.py) gives the interpreter's bytes, errors and limits.

Every case runs twice, ``CUDALAB_TIER=interp`` and ``CUDALAB_TIER=compiled``, and every array must
come back with the same bytes (errors: the same message). The corpus sample below covers every
(opcode, modifiers) form the tier compiles anywhere in tests/kernels (a greedy set cover over the
planned groups of every case: tools/compiled_sample.py), so the suite stays short; ldu and red, which nvcc rarely emits,
have their own kernel.
"""
import contextlib
import dataclasses
import os
import re
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError
from cudalab.emulator import compiled

sys.path.insert(0, str(Path(__file__).parent))

# cases that together compile every (opcode, modifiers) form the tier compiles anywhere in
# tests/kernels (a greedy set cover over their planned groups, made 2026-11-26)
CORPUS_SAMPLE = [
    'address_space_predicates', 'array_of_structs_from_bytes', 'atomic_cas_winner_by_data',
    'atomic_exchange_unique_slots', 'bulk_copy_global_to_shared_sizes', 'byte_loads_sign_extension',
    'cdp_tail_launch_combines', 'cg_memcpy_async_wait_prior', 'constant_and_device_globals',
    'cp_async_ca_4_8_16_bytes', 'cp_async_ca_src_size_and_ignore_src', 'cuda_barrier_completion_function',
    'cuda_pipeline_block_scope_producer_consumer', 'cuda_pipeline_thread_scope_three_stages',
    'double_to_integers_all_modes', 'dpx_16x2', 'dynamic_shared_typed_views', 'elect_sync_divergent_masks',
    'f32_edge_pairs_arith', 'f32_edge_pairs_compare', 'f32_exact_library_functions', 'f32_math_library_ulp',
    'f32_rounding_functions', 'f32_rounding_mode_intrinsics', 'f64_edge_pairs_arith', 'f64_exact_functions',
    'f64_math_library', 'float2_and_double2_loads', 'float4_swizzle', 'float_double_atomic_add_exact_sums',
    'float_to_int32_all_modes', 'float_to_int64_all_modes', 'fp6_fp4_software_conversions',
    'generic_pointers_to_every_space', 'griddepcontrol_and_fences', 'half_math_approx', 'half_rounding_functions',
    'int4_and_longlong2_vectors', 'int64_atomic_family', 'int64_div_mod', 'int64_to_double_all_modes',
    'int_atomic_family', 'int_to_float_c_casts', 'last_block_done_reduction', 'ldg_and_cache_hint_loads',
    'local_array_dynamic_index', 'local_struct_copy_and_memcpy', 'min_max_abs_integer', 'mulhi_all_widths',
    'narrow_types_char_short', 'prime_sieve_trial_division', 'ptx_abs_neg_int_min',
    'ptx_div_rem_64bit_by_zero_and_overflow', 'ptx_integer_width_cvt', 'ptx_testp_and_set',
    'returned_values_are_a_permutation', 'scoped_atomics_block_and_system', 'shfl_partial_mask',
    'shfl_up_down_xor_widths', 'signed_div_mod', 'signed_unsigned_compare', 'spin_lock_one_thread_per_block',
    'struct_by_value_param', 'surf2d_read_widths', 'syncthreads_count_and_or', 'txq_width',
    'uchar4_saturating_pixels', 'volatile_shared_warp_reduce',
]


def both_tiers(run, monkeypatch, memcheck=True):
    """run() under each tier -> {tier: (error text or None, result)}; with memcheck asked for, as
    compute-sanitizer runs it, so that one element past an array's end (which a GPU runs, and cudalab
    only warns about by default) stops the kernel and both tiers must name the same line and thread."""
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        try:
            with cudalab.check(*(("memcheck",) if memcheck else ())):
                out[tier] = (None, run())
        except KernelError as e:        # addresses differ between the runs (fresh allocations)
            out[tier] = (re.sub(r"0x[0-9a-f]+", "0x...", str(e)), None)
    return out


def as_bytes(args):
    return [np.asarray(a).tobytes() if isinstance(a, np.ndarray) else None for a in args]


def _corpus():
    from kernels import cases
    return {c["name"]: c for c in cases()}


@pytest.mark.parametrize("name", CORPUS_SAMPLE)
def test_corpus_case_gives_the_same_bytes_in_both_tiers(name, monkeypatch):
    from kernels import TexArg
    from test_corpus import run_on_emulator
    case = _corpus()[name]

    def run():
        args = case["make"]()
        run_on_emulator(case, args)
        return as_bytes([a.result if isinstance(a, TexArg) else a for a in args])
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]


PTX_FORMS = r"""
__global__ void forms(unsigned* total, const unsigned* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v;
    asm volatile("ldu.global.u32 %0, [%1];" : "=r"(v) : "l"(x + i % 4));
    asm volatile("red.global.add.u32 [%0], %1;" :: "l"(total), "r"(v));
}
"""


def test_ptx_forms_nvcc_rarely_emits_give_the_same_bytes(monkeypatch):
    """ldu and red: no corpus case has them, the tier compiles them."""
    m = cudalab.compile(PTX_FORMS)

    def run():
        total = np.zeros(1, np.uint32)
        m.forms[4, 64](total, np.arange(1, 5, dtype=np.uint32), np.int32(250))
        return total.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] == (None, np.array([623], np.uint32).tobytes())


BFI_FORMS = r"""
__global__ void bfi_forms(unsigned* o32, unsigned long long* o64, const unsigned* a, const unsigned* b,
                          const unsigned long long* a64, const unsigned long long* b64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned pos = i % 70 + ((i % 3) << 8), len = (i / 70) % 70 + ((i % 5) << 8);   // only the low byte counts
    unsigned r;
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a[i]), "r"(b[i]), "r"(pos), "r"(len));
    o32[i] = r;
    unsigned long long r64;
    asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r64) : "l"(a64[i]), "l"(b64[i]), "r"(pos), "r"(len));
    o64[i] = r64;
}
"""


def _bfi(a, b, pos, length, width):
    """PTX ISA bfi: f = b; f[pos + i] = a[i] for i < len while pos + i < width."""
    pos, length = pos & 0xFF, length & 0xFF
    if pos >= width:
        return b
    field = ((1 << min(length, width - pos)) - 1) << pos
    return (b & ~field | (a << pos) & field) & ((1 << width) - 1)


def test_bfi_every_position_and_length_gives_the_isa_bits_in_both_tiers(monkeypatch):
    """bfi.b32 and bfi.b64 (numba joins the halves of a shuffled 64-bit value with bfi.b64), with
    positions and lengths past the width, compiled (not left to the interpreter)."""
    m = cudalab.compile(BFI_FORMS)
    n = 70 * 70
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2))
    a64, b64 = (rng.integers(0, 2**64, n, dtype=np.uint64) for _ in range(2))

    def run():
        o32, o64 = np.zeros(n, np.uint32), np.zeros(n, np.uint64)
        m.bfi_forms[(n + 127) // 128, 128](o32, o64, a, b, a64, b64, np.int32(n))
        return o32.tobytes() + o64.tobytes()
    got = both_tiers(run, monkeypatch)
    i = np.arange(n)
    pos, length = i % 70 + ((i % 3) << 8), (i // 70) % 70 + ((i % 5) << 8)
    want32 = np.array([_bfi(int(x), int(y), int(p), int(q), 32) for x, y, p, q in zip(a, b, pos, length)], np.uint32)
    want64 = np.array([_bfi(int(x), int(y), int(p), int(q), 64) for x, y, p, q in zip(a64, b64, pos, length)],
                      np.uint64)
    assert got["compiled"] == got["interp"] == (None, want32.tobytes() + want64.tobytes())
    from cudalab.emulator.engine import K_FUSED
    from cudalab.runtime import device
    prog = m.program(device.current())
    fused = compiled._tier(prog.function(m.bfi_forms.mangled)).fused
    inside = set()
    for pc, (kind, _, _, end) in enumerate(fused.code):
        if kind == K_FUSED:
            inside.update(range(pc, end))
    bfis = [pc for pc, inst in enumerate(fused.func.insts) if inst.opcode == "bfi"]
    assert len(bfis) == 2 and set(bfis) <= inside


APPROX_FORMS = r"""
__global__ void approx(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], w = x[n - 1 - i], r[11];
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r[0]) : "f"(v));
    asm("ex2.approx.f32 %0, %1;" : "=f"(r[1]) : "f"(v));
    asm("sin.approx.f32 %0, %1;" : "=f"(r[2]) : "f"(v));
    asm("cos.approx.ftz.f32 %0, %1;" : "=f"(r[3]) : "f"(v));
    asm("lg2.approx.f32 %0, %1;" : "=f"(r[4]) : "f"(v));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r[5]) : "f"(v));
    asm("rcp.approx.f32 %0, %1;" : "=f"(r[6]) : "f"(v));
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r[7]) : "f"(v));
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(r[8]) : "f"(v));
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r[9]) : "f"(w), "f"(v));
    asm("div.approx.f32 %0, %1, %2;" : "=f"(r[10]) : "f"(w), "f"(v));
    for (int k = 0; k < 11; ++k) out[k * n + i] = r[k];
}
"""


def test_approximations_stay_interpreted_between_native_groups_with_the_units_bits(monkeypatch):
    """ex2, sin, cos, rcp, rsqrt, lg2 and div.approx, whose bits come from the GPU's tables
    (emulator/mufu.py), stay interpreted between native groups. Both tiers give the same bits over
    random bit patterns and the edges: zeros, subnormals, infinities, NaN, |x| around 128, results
    that turn subnormal."""
    from cudalab.emulator import mufu
    rng = np.random.default_rng(7)
    edges = np.float32([0.0, -0.0, 1e-40, -1e-40, np.inf, -np.inf, np.nan, 127.99, 128.0, -128.0, -126.5,
                        -140.25, -149.0, -150.0, 0.5, -0.5, 1.0, 3.14159])
    x = np.concatenate([edges, rng.integers(0, 2**32, 4096, dtype=np.uint32).view(np.float32),
                        rng.uniform(-160, 160, 4096).astype(np.float32)])
    n = x.size
    m = cudalab.compile(APPROX_FORMS)

    def run():
        out = np.zeros(11 * n, np.float32)
        m.approx[(n + 127) // 128, 128](out, x, np.int32(n))
        return out.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    out = np.frombuffer(got["compiled"][1], np.float32).reshape(11, n)
    assert out[0].tobytes() == mufu.ex2_ftz(x).tobytes()
    assert out[5].tobytes() == mufu.rcp_ftz(x).tobytes() and out[7].tobytes() == mufu.rsqrt_ftz(x).tobytes()
    assert out[4].tobytes() == mufu.lg2(x).tobytes()
    assert out[2].tobytes() == mufu.sin(x).tobytes() and out[3].tobytes() == mufu.cos(x).tobytes()
    from cudalab.emulator.engine import K_FUSED
    from cudalab.runtime import device
    fused = compiled._tier(m.program(device.current()).function(m.approx.mangled)).fused
    inside = set()
    for pc, (kind, _, _, end) in enumerate(fused.code):
        if kind == K_FUSED:
            inside.update(range(pc, end))
    tables = [pc for pc, inst in enumerate(fused.func.insts)
              if inst.opcode in ("ex2", "sin", "cos", "rcp", "rsqrt", "div", "lg2")]
    assert len(tables) == 11 and not set(tables) & inside
    assert inside


def test_fuzz_programs_give_the_same_bytes_in_both_tiers(monkeypatch):
    from cudalab.frontend.nvrtc import compile_to_ptx
    from fuzz.generator import batch_source, generate
    from fuzz.run import OPTIONS, emu_module, launch_emu
    progs = [generate(s, small=True) for s in range(910000, 910003)]
    mod = emu_module(compile_to_ptx(batch_source(progs), OPTIONS).ptx, [p.kernel for p in progs])
    for p in progs:
        got = both_tiers(lambda: {k: v.tobytes() for k, v in launch_emu(mod, p, p.make_args()).items()}, monkeypatch)
        assert got["compiled"] == got["interp"], p.seed


LARGE_PARAM = r"""
struct Table { int v[2000]; };
__global__ void pick(__grid_constant__ const Table t, int* out, int stride) {
    int s = 0;
    for (int i = threadIdx.x; i < 2000; i += stride) s += t.v[i];     // ld.param [%rd] in the loop
    out[threadIdx.x] = s + t.v[(threadIdx.x * 7) % 2000];
}
__global__ void past(__grid_constant__ const Table t, int* out, int i) {
    const int* p = t.v;
    out[threadIdx.x] = p[i + threadIdx.x];                            // lanes 30 and up read past the end
}
"""


def test_a_large_parameter_read_through_its_address_gives_the_same_bytes_and_errors(monkeypatch):
    """LargeKernelParameter's ``__grid_constant__`` struct: ld.param through a register is compiled;
    an address past the parameters bails out to the interpreter, whose message both tiers give."""
    m = cudalab.compile(LARGE_PARAM, options=["-arch=sm_90"])
    table = (np.arange(2000, dtype=np.int32) * 7 - 300).view(np.dtype((np.void, 8000)))[0]

    def run(kernel, last):
        out = np.zeros(40, np.int32)
        getattr(m, kernel)[1, 40](table, out, np.int32(last))
        return out.tobytes()
    got = both_tiers(lambda: run("pick", 40), monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    got = both_tiers(lambda: run("past", 1970), monkeypatch)
    assert got["compiled"] == got["interp"] and "past the end of the kernel's" in got["interp"][0]


def _conformance():
    here = Path(__file__).parent
    shared = here.parent.parent / "shared" / "conformance"
    sys.path.insert(0, str(shared if shared.is_dir() else here / "conformance_public"))
    from cases import CASES
    from run import run_cudalab
    return CASES, run_cudalab


@pytest.mark.parametrize("case", _conformance()[0], ids=lambda c: c["name"])
def test_conformance_case_gives_the_same_bytes_in_both_tiers(case, monkeypatch):
    run_cudalab = _conformance()[1]
    inputs = case["make"]()               # (random inputs: made once, copied for each tier)
    got = both_tiers(lambda: as_bytes(run_cudalab(case, [a.copy() if isinstance(a, np.ndarray) else a
                                                         for a in inputs])), monkeypatch)
    assert got["compiled"] == got["interp"]


# ---------------------------------------------------------------- memcheck, atomics, limits

OOB = r"""
__global__ void add(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1.0f;
}
__global__ void count(int* bins, const int* where, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[where[i]], 1);
}
"""


def test_out_of_bounds_is_reported_at_the_same_line_and_thread(monkeypatch):
    m = cudalab.compile(OOB)

    def run():
        a, c = cudalab.to_device(np.ones(100, np.float32)), cudalab.to_device(np.zeros(100, np.float32))
        m.add[1, 128](a, c, np.int32(128))
        return c.copy_to_host()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 4" in got["compiled"][0]


def test_a_read_just_past_the_end_warns_and_goes_on_alike_in_both_tiers(monkeypatch):
    """Without memcheck asked for, the 28 threads past the arrays' end run on as on a GPU: native code
    hands them to the interpreter, which warns once for the line, and both tiers write the same bytes."""
    m = cudalab.compile(OOB)
    warnings = {}

    def run():
        a, c = cudalab.to_device(np.arange(100, dtype=np.float32)), cudalab.to_device(np.zeros(100, np.float32))
        rec = m.add[1, 128](a, c, np.int32(128))
        warnings[os.environ["CUDALAB_TIER"]] = [(f.line, f.thread, f.details["access"], f.details["threads"])
                                               for f in rec.findings]
        return c.copy_to_host()
    got = both_tiers(run, monkeypatch, memcheck=False)
    assert got["compiled"][0] is None and got["interp"][0] is None
    assert (got["compiled"][1] == got["interp"][1]).all() and (got["interp"][1] == np.arange(100) + 1).all()
    assert warnings["compiled"] == warnings["interp"] == [(4, (100, 0, 0), "read", 28), (4, (100, 0, 0), "write", 28)]


def test_use_after_free_is_reported(monkeypatch):
    m = cudalab.compile(OOB)

    def run():
        a, c = cudalab.to_device(np.ones(64, np.float32)), cudalab.to_device(np.zeros(64, np.float32))
        a.free()
        m.add[1, 64](a, c, np.int32(64))
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and "use after free" in got["compiled"][0]


SCALE_SHARED = r"""
__global__ void scale(float* x, float k) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = x[i];
    __syncthreads();
    x[i] = tile[(threadIdx.x + 1) % blockDim.x] * k;
}
"""


def test_launches_again_see_new_arguments_memory_and_tier(monkeypatch):
    """The native context is kept from launch to launch (compiled._context): a new pointer, a new
    factor, a freed allocation and a change of CUDALAB_TIER between launches all take effect."""
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(SCALE_SHARED)
    host = np.arange(1024, dtype=np.float32)
    expect = {"a": host.copy(), "b": host.copy()}
    arrays = {"a": cudalab.to_device(host), "b": cudalab.to_device(host)}
    for name, k, tier in (("a", 2.0, "compiled"), ("b", 3.0, "compiled"), ("a", 1.5, "interp"), ("a", 0.5, "compiled")):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        assert compiled.mode() == tier
        m.scale[4, 256](arrays[name], np.float32(k))
        expect[name] = np.roll(expect[name].reshape(4, 256), -1, axis=1).reshape(-1) * np.float32(k)
    for name in "ab":
        assert np.array_equal(arrays[name].copy_to_host(), expect[name])
    arrays["a"].free()
    with pytest.raises(KernelError, match="use after free"):
        m.scale[4, 256](arrays["a"], np.float32(1.0))


def test_an_atomic_with_a_bad_address_runs_no_lane_twice(monkeypatch):
    """A compiled atomic never runs a lane twice. Lock step (the interpreter, a straight-line group)
    checks every lane's address before any lane adds; a region runs lane by lane, so the lanes
    before the bad one have added when it stops (memory after a fault is undefined on a GPU too)."""
    m = cudalab.compile(OOB)

    def run():
        bins = cudalab.to_device(np.zeros(4, np.int32))
        where = np.zeros(64, np.int32)
        where[40] = 1000                                # lane 40 is out of bounds
        try:
            m.count[1, 64](bins, where, np.int32(64))
        finally:
            return bins.copy_to_host()
    got = both_tiers(run, monkeypatch)
    assert np.frombuffer(got["interp"][1], np.int32).tolist() == [0, 0, 0, 0]
    assert np.frombuffer(got["compiled"][1], np.int32).tolist() in ([0, 0, 0, 0], [63, 0, 0, 0])


def test_the_watchdog_stops_a_compiled_kernel(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile("__global__ void spin(int* x) { int k = 0; while (x[0] == 0) { k += 3; } x[1] = k; }")
    cudalab.set_watchdog(0.5)
    try:
        with pytest.raises(KernelError) as e:
            m.spin[1, 32](np.zeros(2, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_interp_tier_never_compiles_and_auto_waits_for_big_or_slow_kernels(monkeypatch):
    built = []
    monkeypatch.setattr(compiled, "_build", lambda program, df: built.append(df.func.name))
    m = cudalab.compile("__global__ void inc(int* x) { x[threadIdx.x] += 1; }")
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    m.inc[1, 32](np.zeros(32, np.int32))
    assert built == []
    monkeypatch.delenv("CUDALAB_TIER")
    m.inc[1, 32](np.zeros(32, np.int32))          # a small new kernel: interpreted, nothing to wait for
    assert built == []
    m.inc[64, 1024](np.zeros(64 * 1024, np.int32))   # a big launch compiles, in the background
    for t in threading.enumerate():
        if t.name.startswith("cudalab compile"):
            t.join(30)
    assert built


def test_a_kernel_mostly_of_tensor_core_instructions_is_not_built():
    """wmma and mma stay interpreted (each one compiled loop over the batch's warps), so a GEMM kernel
    made mostly of them gains little from native code and would spend its CPU time on LLVM."""
    def kernel(opcodes):
        return types.SimpleNamespace(code=[(0, None, types.SimpleNamespace(opcode=o), 0) for o in opcodes])
    gemm = kernel(["wmma"] * 6 + ["add", "setp", "bra"])            # compute_gemm: 912 of 1,522 are wmma
    tile = kernel(["ld", "mul", "add", "st", "wmma", "ret"])       # one tile among ordinary work
    assert not compiled.worth_building(gemm, 100.0, lanes=compiled.AUTO_LANES)
    assert compiled.worth_building(tile, 0.0, lanes=compiled.AUTO_LANES)


def test_a_kernel_slow_to_build_waits_until_it_has_run_as_long_interpreted(monkeypatch):
    """A JIT's rule for big kernels (CUB's are thousands of instructions): build once the time
    spent interpreting, with what the launch's first batch says its other batches will take,
    reaches the build's estimated time; a small kernel builds on a big launch at once, as before."""
    built = []
    monkeypatch.setattr(compiled, "_build", lambda program, df: built.append(df.func.name))
    monkeypatch.setattr(compiled, "BUILD_SECONDS_PER_INSTRUCTION", 1000.0)     # "hours to build"
    m = cudalab.compile("__global__ void inc(int* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1; }")
    m.inc[64, 1024](np.zeros(64 * 1024, np.int32))      # a big launch: the interpreter runs it all
    assert built == []

    started = []
    monkeypatch.setattr(compiled, "_build_in_background", lambda program, df, st: started.append(df))
    monkeypatch.setattr(compiled, "BUILD_SECONDS_PER_INSTRUCTION", 0.01)
    big = types.SimpleNamespace(code=[None] * 300)      # 300 instructions: about 3 s to build
    small = types.SimpleNamespace(code=[None] * 30)
    assert compiled.worth_building(small, 0.0, lanes=compiled.AUTO_LANES)
    assert not compiled.worth_building(big, 0.0, lanes=compiled.AUTO_LANES)
    huge = types.SimpleNamespace(code=[None] * 30000)   # 5 minutes to build: after 5 s interpreted all the same
    assert not compiled.worth_building(huge, 4.0) and compiled.worth_building(huge, compiled.BUILD_AFTER_SECONDS)
    # ... unless a CPU-time limit (ulimit -t) ends the program before the build could finish
    monkeypatch.setattr(compiled.pace, "cpu_time_left", lambda: 60.0)
    assert not compiled.worth_building(huge, compiled.BUILD_AFTER_SECONDS)
    assert compiled.worth_building(small, 0.0, lanes=compiled.AUTO_LANES)
    monkeypatch.setattr(compiled.pace, "cpu_time_left", lambda: float("inf"))      # no limit again
    compiled.note_time(big, 1.0, program=object(), later=0.5)     # 1.5 s of 3: interpreted it stays
    assert started == []
    compiled.note_time(big, 1.0, program=object(), later=1.5)     # 2 s so far and 1.5 s to come
    assert started == [big]


def test_a_debug_builds_kernel_is_built_only_once_it_has_run_as_long_as_its_build(monkeypatch):
    """A -G build's kernels are thousands of PTX instructions (the reduce of a Thrust inner_product:
    10,766). Built after BUILD_AFTER_SECONDS interpreted as others are, that one started 39.5 s of LLVM
    after its one launch's 6.5 s, and the program waited for it at exit. So a kernel of a debug module
    builds only once it has run as long as its build, or where its launch would not finish within the
    watchdog interpreted; the same kernel built without -G builds as before."""
    from cudalab.emulator import engine
    started = []
    monkeypatch.setattr(compiled, "_build_in_background",       # (and a build that found nothing to compile)
                        lambda program, df, st: (started.append(st.debug), setattr(st, "fused", False)))
    monkeypatch.setattr(compiled, "BUILD_SECONDS_PER_INSTRUCTION", 1.0)          # builds far longer than
    monkeypatch.setattr(compiled, "DEBUG_BUILD_SECONDS_PER_INSTRUCTION", 1.0)    # the launch runs
    monkeypatch.setattr(compiled, "BUILD_AFTER_SECONDS", 0.0)    # (any interpreted time is "long" for others)
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 128)           # batches of 4 blocks: a launch's rest is known
    monkeypatch.setenv("CUDALAB_TIER", "auto")
    source = "__global__ void halve(float* x) { int i = blockIdx.x * blockDim.x + threadIdx.x; x[i] = x[i] * 0.5f; }"
    for flags, note in ((("-G",), "debug"), ((), "optimized")):
        x = cudalab.to_device(np.ones(32 * 128, np.float32))
        cudalab.compile(source.replace("0.5f", "0.25f" if flags else "0.5f"), flags).halve[32, 128](x)
        assert (x.copy_to_host() == (0.25 if flags else 0.5)).all()
    assert started == [False]                   # only the optimized build's kernel: the debug one stays interpreted
    # a debug kernel whose launch would outlast the watchdog interpreted is built all the same
    monkeypatch.setattr(compiled, "DEBUG_LAUNCH_SHARE", 0.0)
    x = cudalab.to_device(np.ones(32 * 128, np.float32))
    cudalab.compile(source.replace("0.5f", "0.125f"), ("-G",)).halve[32, 128](x)
    assert started == [False, True]
    # a launch's first, sample batch carries the interpreter's one-time costs: what it tells of the rest
    # does not start a debug kernel's build (the inner_product's reduce: 17 s told, 0.6 s run)
    started.clear()
    monkeypatch.setattr(compiled, "DEBUG_LAUNCH_SHARE", 0.9)
    monkeypatch.setattr(compiled.pace, "cpu_time_left", lambda: float("inf"))
    reduce = types.SimpleNamespace(code=[None] * 3, _tier=compiled._Tier(debug=True))     # 3 s to build
    compiled.note_time(reduce, 0.3, program=object(), later=17.0, sample=True)
    assert started == []
    compiled.note_time(reduce, 0.6, program=object(), later=3.0)        # a full batch's pace: 3.9 s in all
    assert started == [True]


def test_waiting_for_a_build_ends_when_the_programs_time_runs_out(monkeypatch):
    """NVIDIA's dxtc waited, in its first batch, for LLVM's build of its 3,300-instruction kernel
    when ulimit -t's soft limit came: the wait must end there (the launch then stops and says why),
    not when LLVM is done, which the hard limit never let happen ("lost the connection")."""
    slow = types.SimpleNamespace(code=[None] * 3300, _tier=compiled._Tier(building=True))
    launch = types.SimpleNamespace(wall_deadline=time.monotonic() + 60, batch=None)
    monkeypatch.setattr(compiled.pace, "RUNNING", [launch])
    threading.Timer(0.3, compiled.pace.stop_running).start()     # what the SIGXCPU handler does
    t0 = time.monotonic()
    compiled.wait_for_build(slow, seconds=30)
    assert time.monotonic() - t0 < 10
    assert compiled.building(slow)                      # LLVM goes on; the launch does not wait for it


def test_a_big_kernel_launched_again_waits_for_its_build_instead_of_running_interpreted(monkeypatch):
    """CUB's onesweep sort kernel builds for some 17 s of CPU once it has run 5 s interpreted; a
    program that sorts in a loop (cuda-samples' radixSortThrust) then ran it interpreted beside
    LLVM, several times the CPU of the native code it was waiting for. Once a big kernel has run
    as long as its build was due, its next launch waits, asleep, for the build; a kernel that has
    barely run (a notebook cell's first launches) still runs interpreted while LLVM works."""
    from cudalab.emulator.engine import DeviceMemory, Program
    monkeypatch.setenv("CUDALAB_TIER", "auto")
    monkeypatch.setattr(compiled.pace, "RUNNING", [])       # no launch whose time is up
    monkeypatch.setattr(compiled, "BUILD_SECONDS_PER_INSTRUCTION", 1000.0)      # a big kernel
    m = cudalab.compile("__global__ void bump(int* x) { x[threadIdx.x] += 1; }")
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel("bump").mangled)
    native = types.SimpleNamespace(name="the native code")

    def llvm_finishes(st):
        time.sleep(0.3)
        st.fused, st.building = native, False

    st = df._tier = compiled._Tier(building=True)       # its build is under way (decoded code is
    #                                                     shared with other tests' modules of this source)
    st.interp_seconds = 1.0                             # a few launches interpreted so far: not due yet
    assert compiled.pick(prog, df, (), 32) is df        # runs interpreted, as before
    st.interp_seconds = compiled.BUILD_AFTER_SECONDS    # as long as its build was due
    threading.Thread(target=llvm_finishes, args=(st,)).start()
    assert compiled.pick(prog, df, (), 32) is native    # waited for LLVM
    monkeypatch.setattr(compiled, "BUILD_SECONDS_PER_INSTRUCTION", 0.01)
    assert not compiled.hot(types.SimpleNamespace(code=[None] * 30), 100.0)   # a small kernel never waits


def test_import_does_not_load_llvm():
    code = "import sys, cudalab; print('llvmlite' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)))
    assert out.stdout.strip() == "False", out.stderr


# ---------------------------------------------------------------- regions: loops and branches, lane by lane

def region_spans(source, kernel):
    """The (start, end) pcs the tier runs as regions (emulator/regions.py) in ``kernel``."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program, _DecodeContext
    m = cudalab.compile(source)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel(kernel).mangled)
    info = compiled._compilable(df, _DecodeContext(df.func, prog.module, df.param_offsets))
    return regions.find(df, info, compiled.liveness(df)[1])


def same_in_both_tiers(monkeypatch, source, kernel, grid, block, make, counts=True):
    """Launch under each tier with fresh arguments; the arrays' bytes and (``counts``) the
    thread-instruction count must agree. Returns the compiled tier's arrays."""
    m = cudalab.compile(source)
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        args = make()
        rec = m.get_kernel(kernel)[grid, block](*args)
        out[tier] = ([a.tobytes() for a in args if isinstance(a, np.ndarray)], rec.thread_instructions if counts else 0)
    assert out["compiled"] == out["interp"]
    return args


SUM_ROWS = r"""
__global__ void sum_rows(const float* m, float* out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += m[r * cols + c];
    out[r] = s;
}
"""


def test_a_loop_runs_as_one_region_with_the_same_bytes_and_counts(monkeypatch):
    assert region_spans(SUM_ROWS, "sum_rows")
    rng = np.random.default_rng(5)
    mat = rng.random((300, 37), np.float32)
    same_in_both_tiers(monkeypatch, SUM_ROWS, "sum_rows", 3, 128,
                       lambda: [mat, np.zeros(300, np.float32), np.int32(300), np.int32(37)])


WARP_SUM_IN_GLOBAL = r"""
__global__ void warp_sum(int* data) {     // the last steps of a reduction, without __syncwarp
    int t = threadIdx.x;
    if (t < 32) {
        volatile int* v = data;
        v[t] += v[t + 32]; v[t] += v[t + 16]; v[t] += v[t + 8];
        v[t] += v[t + 4]; v[t] += v[t + 2]; v[t] += v[t + 1];
    }
}
"""


def test_the_warp_synchronous_idiom_on_volatile_global_memory_keeps_its_lock_step_sum(monkeypatch):
    data = np.arange(64, dtype=np.int32)
    args = same_in_both_tiers(monkeypatch, WARP_SUM_IN_GLOBAL, "warp_sum", 1, 64, lambda: [data.copy()])
    assert args[0][0] == data.sum()           # 2016, as a GPU's lock-step warp leaves it


COLLATZ = r"""
__global__ void collatz(const unsigned* start, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = start[i];
    int s = 0;
    while (x != 1) {                       // each thread loops its own number of times
        x = (x & 1) ? 3 * x + 1 : x >> 1;
        ++s;
    }
    steps[i] = s;
}
"""


def test_a_divergent_loop_gives_the_same_steps(monkeypatch):
    assert region_spans(COLLATZ, "collatz")
    start = np.arange(1, 1001, dtype=np.uint32)
    args = same_in_both_tiers(monkeypatch, COLLATZ, "collatz", 4, 256,
                              lambda: [start, np.zeros(1000, np.int32), np.int32(1000)])
    assert args[1][26] == 111                  # 27 takes 111 steps


GRID_STRIDE = r"""
__global__ void saxpy(float a, const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
"""


def test_a_grid_stride_loop_gives_the_same_bytes(monkeypatch):
    assert region_spans(GRID_STRIDE, "saxpy")
    rng = np.random.default_rng(6)
    x, y = rng.random(10000, np.float32), rng.random(10000, np.float32)
    same_in_both_tiers(monkeypatch, GRID_STRIDE, "saxpy", 8, 128, lambda: [np.float32(3), x, y.copy(), np.int32(10000)])


NESTED = r"""
__global__ void triangle(int* out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int i = 0; i < t % 17; ++i)          // trip counts differ between threads, at both levels
        for (int j = i; j < n; ++j)
            acc += (i * j) ^ t;
    if (acc & 1) acc = -acc; else acc += 7;
    out[t] = acc;
}
"""


def test_nested_loops_and_a_diamond_give_the_same_bytes(monkeypatch):
    assert region_spans(NESTED, "triangle")
    same_in_both_tiers(monkeypatch, NESTED, "triangle", 2, 96, lambda: [np.zeros(192, np.int32), np.int32(23)])


HANDOFF = r"""
__global__ void handoff(volatile int* flag, int* out) {
    int t = threadIdx.x;
    if (t == 0) {
        int turns = 0;
        while (flag[blockIdx.x] == 0) ++turns;   // waits for the block's last thread
        out[blockIdx.x] = turns > 0;
    } else if (t == blockDim.x - 1) {
        flag[blockIdx.x] = 1;
    }
}
"""


def test_a_thread_spinning_on_a_later_thread_is_handed_to_the_interpreter(monkeypatch):
    """Thread 0 runs first and spins; after engine.SPIN_LIMIT turns the region gives it back to
    the interpreter, the later threads run, and it sees the flag. (How often it spun depends on the
    schedule, as on a GPU: the instruction counts differ.)"""
    assert region_spans(HANDOFF, "handoff")
    args = same_in_both_tiers(monkeypatch, HANDOFF, "handoff", 2, 512,
                              lambda: [np.zeros(2, np.int32), np.zeros(2, np.int32)], counts=False)
    assert args[0].tolist() == [1, 1]


ENDLESS = r"""
__global__ void endless(const unsigned* start, int* steps) {
    unsigned x = start[threadIdx.x];
    int s = 0;
    while (x != 1) {                       // 0 never reaches 1
        x = (x & 1) ? 3 * x + 1 : x >> 1;
        ++s;
    }
    steps[threadIdx.x] = s;
}
"""


def test_an_endless_loop_in_a_region_meets_the_watchdog(monkeypatch):
    assert region_spans(ENDLESS, "endless")
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(ENDLESS)
    cudalab.set_watchdog(0.5)
    try:
        with pytest.raises(KernelError) as e:
            m.endless[1, 32](np.arange(32, dtype=np.uint32), np.zeros(32, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout"
    assert re.search(r"32 threads were still running, e.g. thread \(0,0,0\) of block \(0,0,0\) at line [56]\b",
                     str(e.value))


OOB_LOOP = r"""
__global__ void sums(const int* a, int* out, int len) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int s = 0;
    for (int k = 0; k < len; ++k)
        s += a[t * len + k];
    out[t] = s;
}
"""


def test_an_out_of_bounds_read_in_a_loop_names_the_line_and_thread(monkeypatch):
    assert region_spans(OOB_LOOP, "sums")
    m = cudalab.compile(OOB_LOOP)

    def run():
        a = cudalab.to_device(np.ones(64 * 5, np.int32))
        out = cudalab.to_device(np.zeros(65, np.int32))
        m.sums[1, 65](a, out, np.int32(5))         # thread 64 reads past a's end
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0]
    assert "line 6" in got["compiled"][0] and "thread (64,0,0)" in got["compiled"][0]


GANG_LOOPS = r"""
__global__ void axpy_sum(float a, const float* x, float* y, float* sums, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];             // each thread's own chain of float adds: order shows in the bits
        s += y[i];
    }
    sums[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void every_third(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = x[3 * i];                    // neighbouring threads read elements 3 apart
}
"""


def gangs_built(source, kernel, tmp_path, monkeypatch, args=None, grid=1, block=32):
    """The loop heads whose lanes the tier runs in gangs (regiongen.RegionBuilder._gang), as built
    into the native code of ``kernel`` (launched once, with ``args`` where given)."""
    from cudalab.emulator import regiongen
    heads = []
    real = regiongen.RegionBuilder._gang

    def recording(self, h, *rest):
        heads.append(h)
        return real(self, h, *rest)
    monkeypatch.setattr(regiongen.RegionBuilder, "_gang", recording)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    fresh = f"{kernel}_{tmp_path.name.replace('-', '_')}"         # (a kernel this process has not built)
    m = cudalab.compile(source.replace(kernel, fresh))
    if args is None:
        args = [np.float32(1), np.zeros(1, np.float32), np.zeros(1, np.float32),
                np.zeros(32, np.float32), np.int32(0)][-5 if kernel == "axpy_sum" else 2:]
    m.get_kernel(fresh)[grid, block](*args)
    return heads


@pytest.mark.parametrize("n", [32 * 1024, 32 * 1024 + 77])
def test_a_grid_stride_loop_runs_its_lanes_in_gangs_with_the_same_bytes_and_counts(n, tmp_path, monkeypatch):
    """Neighbouring threads run the loop's iterations side by side (regiongen._gang), one address
    check a gang; where n is not a multiple of the grid the last turn's threads leave the loop at
    different iterations, in the middle of their gangs."""
    assert gangs_built(GANG_LOOPS, "axpy_sum", tmp_path, monkeypatch)
    rng = np.random.default_rng(21)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    same_in_both_tiers(monkeypatch, GANG_LOOPS, "axpy_sum", 8, 128,
                       lambda: [np.float32(1.5), x, y.copy(), np.zeros(1024, np.float32), np.int32(n)])


def test_a_gang_whose_threads_read_apart_goes_on_thread_by_thread_with_the_same_bytes(tmp_path, monkeypatch):
    """A gang runs only where its threads' elements follow one another; x[3 * i] does not, so
    each thread goes on alone, as before gangs."""
    assert gangs_built(GANG_LOOPS, "every_third", tmp_path, monkeypatch)
    x = np.random.default_rng(22).random(3 * 9000, np.float32)
    args = same_in_both_tiers(monkeypatch, GANG_LOOPS, "every_third", 4, 64,
                              lambda: [x, np.zeros(9000, np.float32), np.int32(9000)])
    assert np.array_equal(args[1], x[::3])


def test_an_out_of_bounds_write_in_a_gang_names_the_line_and_thread(tmp_path, monkeypatch):
    """y is 40 elements short: the gang's check fails at the iteration that would write past it, its
    threads go on alone, and the first to fault is reported where the interpreter reports it."""
    assert gangs_built(GANG_LOOPS, "axpy_sum", tmp_path, monkeypatch)
    m = cudalab.compile(GANG_LOOPS)
    n = 8192

    def run():
        x, y = cudalab.to_device(np.ones(n, np.float32)), cudalab.to_device(np.ones(n - 40, np.float32))
        m.axpy_sum[4, 128](np.float32(2), x, y, cudalab.to_device(np.zeros(512, np.float32)), np.int32(n))
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 5" in got["compiled"][0]


def test_a_big_module_gets_the_short_pipeline_and_the_same_bytes(tmp_path, monkeypatch):
    """Past compiled.BIG_IR_BYTES of IR (thousands of unrolled instructions) a kernel is built with
    a few passes and a quicker code generator (compiled._optimize); here every module counts as big."""
    monkeypatch.setattr(compiled, "BIG_IR_BYTES", 0)
    assert gangs_built(GANG_LOOPS, "axpy_sum", tmp_path, monkeypatch)
    rng = np.random.default_rng(23)
    x, y = rng.random(5000, np.float32), rng.random(5000, np.float32)
    same_in_both_tiers(monkeypatch, GANG_LOOPS.replace("axpy_sum", "axpy_sum_big"), "axpy_sum_big", 4, 128,
                       lambda: [np.float32(0.5), x, y.copy(), np.zeros(512, np.float32), np.int32(5000)])


SMOOTH_UNROLLED = r"""
extern "C" __global__ void smooth9(const float* in, float* out, int n) {
    __shared__ float tile[128 + 8];
    int i = blockIdx.x * 128 + threadIdx.x;
    tile[threadIdx.x] = in[i];
    if (threadIdx.x < 8) tile[128 + threadIdx.x] = in[i + 128];
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 9; ++k) acc = fmaf(tile[threadIdx.x + k], 0.25f + 0.125f * k, acc);
    if (i < n) out[i] = acc;
}
"""


def test_a_module_with_a_huge_basic_block_gets_the_fast_code_generator(tmp_path, monkeypatch):
    """LLVM's code generation at opt=1 or 2 takes time that grows with a module's largest basic block
    (eScience's fully unrolled 17x17 convolution, a block of 23,807 instructions: 50 to 83 s; at opt=0,
    1.7 s). Past compiled.FAST_CODEGEN_BLOCK instructions the module is emitted at opt=0, and its
    kernel gives the same bytes as the interpreter; here every block counts as huge."""
    two = "define void @f(i32 %x) {\nentry:\n  %a = add i32 %x, 2\n  br label %next\nnext:\n  ret void\n}\n"
    assert compiled.largest_block(two) == 2                  # (the entry block: an add and a branch)
    j, real, machines = compiled._jit(), compiled._passes, []

    def passes(*args):                  # notes the target machine each module's code comes from
        mod, tm = real(*args)
        machines.append(tm)
        return mod, tm
    monkeypatch.setattr(compiled, "_passes", passes)
    monkeypatch.setattr(compiled, "FAST_CODEGEN_BLOCK", 0)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded
    x = np.random.default_rng(5).random(1024 + 8, np.float32)
    same_in_both_tiers(monkeypatch, SMOOTH_UNROLLED.replace("smooth9", "smooth9_fast"), "smooth9_fast", 8, 128,
                       lambda: [x, np.zeros(1024, np.float32), np.int32(1024)])
    assert machines and all(tm is j["tm_fast"] for tm in machines)        # the fast code generator's


def test_check_mode_runs_each_region_both_ways(monkeypatch):
    """CUDALAB_TIER=check runs every region natively and in the interpreter and compares them."""
    from cudalab.emulator import regions
    checked = []
    real = regions.Runner._check
    monkeypatch.setattr(regions.Runner, "_check", lambda self, *a: checked.append(self.r.start) or real(self, *a))
    start = np.arange(1, 301, dtype=np.uint32)
    got = {}
    for tier in ("interp", "check"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        steps = np.zeros(300, np.int32)
        cudalab.compile(COLLATZ).collatz[2, 256](start, steps, np.int32(300))
        got[tier] = steps
    assert checked and np.array_equal(got["check"], got["interp"])



# ---------------------------------------------------------------- regions with cuts: barriers and shuffles

def cut_spans(source, kernel):
    """The (start, end) pcs of the regions with cuts (regions.py, "Cuts") in ``kernel``."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program, _DecodeContext
    m = cudalab.compile(source)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel(kernel).mangled)
    info = compiled._compilable(df, _DecodeContext(df.func, prog.module, df.param_offsets))
    return regions.find(df, info, compiled.liveness(df)[1], regions.cuts(df, info))


WARP_SUMS = r"""
__global__ void warp_sums(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    int w = __shfl_xor_sync(0xffffffff, v, 3) - __shfl_up_sync(0xffffffff, v, 5)
            + __shfl_sync(0xffffffff, v, (threadIdx.x * 7) % 32, 16);
    out[2 * i] = v;
    out[2 * i + 1] = w;
}
"""


@pytest.mark.parametrize("block", [256, 96, 48])
def test_shuffles_run_warp_by_warp_with_the_same_bytes_and_counts(block, monkeypatch):
    """The whole kernel is one region; 48 threads a block leaves padding lanes in each block's
    second warp, so the region gives way to the groups there (the bytes are the same either way)."""
    spans = cut_spans(WARP_SUMS, "warp_sums")
    assert len(spans) == 1 and spans[0][0] == 0
    x = np.random.default_rng(7).integers(-1000, 1000, 1000).astype(np.int32)
    blocks = (1000 + block - 1) // block
    same_in_both_tiers(monkeypatch, WARP_SUMS, "warp_sums", blocks, block,
                       lambda: [x, np.zeros(2 * blocks * block, np.int32), np.int32(1000)])


VOTES = r"""
__global__ void votes(const int* x, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    unsigned half = threadIdx.x & 1 ? 0xaaaaaaaau : 0x55555555u;        // member masks differ by lane
    out[8 * i] = __ballot_sync(0xffffffff, v > 0);
    out[8 * i + 1] = __any_sync(half, v > 90) + 2 * __all_sync(half, v > -90) + 4 * __uni_sync(0xffffffff, v & 1);
    out[8 * i + 2] = __activemask();
    out[8 * i + 3] = __reduce_add_sync(0xffffffff, v);
    out[8 * i + 4] = __reduce_min_sync(half, v);
    out[8 * i + 5] = __reduce_max_sync(0xffffffff, (unsigned)v);
    out[8 * i + 6] = __reduce_or_sync(half, v) ^ __reduce_xor_sync(0xffffffff, v) + __reduce_and_sync(half, v);
}
"""


def test_votes_and_warp_reductions_run_in_a_region_with_the_same_bytes(monkeypatch):
    spans = cut_spans(VOTES, "votes")
    assert len(spans) == 1
    x = np.random.default_rng(9).integers(-100, 100, 256).astype(np.int32)
    x[32:64] = 5                                   # a warp where every vote agrees
    same_in_both_tiers(monkeypatch, VOTES, "votes", 2, 128, lambda: [x, np.zeros(8 * 256, np.uint32)])


RANKS = r"""
__global__ void ranks(const unsigned* keys, unsigned* rank, unsigned* peers, unsigned* masks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned digit = keys[i] & 15, lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    unsigned same = 0xffffffff;             // the lanes of this warp whose digit equals this lane's
    for (int bit = 0; bit < 4; bit++) {
        unsigned ones = __ballot_sync(0xffffffff, digit >> bit & 1);
        same &= digit >> bit & 1 ? ones : ~ones;
    }
    unsigned le, lt, ge, gt, eq;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(le));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
    asm("mov.u32 %0, %%lanemask_gt;" : "=r"(gt));
    asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
    __syncwarp();
    rank[i] = __popc(same & le) - 1;        // how many lanes below this one hold the same digit
    __syncwarp();
    peers[i] = 31 - __clz(same);            // the highest such lane, the one that would count them
    masks[i] = (le ^ lt) == eq && (ge ^ gt) == eq && (lt | ge) == 0xffffffff ? lane : 99;
}
"""


def test_a_warp_match_by_ballots_and_lane_masks_runs_as_one_region_with_the_same_bytes(monkeypatch):
    """CUB's radix sort ranks keys this way (a match-any of 8 ballots, then %lanemask_le): the
    lane masks and __syncwarp() keep the whole kernel one region with cuts."""
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(RANKS)
    code = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("ranks").mangled).code
    assert cut_spans(RANKS, "ranks") == [(0, len(code) - 1)]        # all of it but the final ret
    keys = np.random.default_rng(11).integers(0, 1 << 30, 256).astype(np.uint32)
    args = same_in_both_tiers(monkeypatch, RANKS, "ranks", 2, 128,
                              lambda: [keys, *(np.zeros(256, np.uint32) for _ in range(3))])
    digit = (keys & 15).reshape(-1, 32)
    below = [[int(np.sum(w[:j] == w[j])) for j in range(32)] for w in digit]
    top = [[int(np.flatnonzero(w == w[j])[-1]) for j in range(32)] for w in digit]
    assert args[1].tolist() == np.ravel(below).tolist() and args[2].tolist() == np.ravel(top).tolist()
    assert args[3].tolist() == list(range(32)) * 8


WARP0_THEN_ALL = r"""
__global__ void warp0_then_all(const int* x, int* out) {
    __shared__ int sums[32];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int v = x[i];
    if (t < 32) {                       // the first warp alone: a sum by shuffles
        int s = v;
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffff, s, o);
        sums[t] = s;
    }
    __syncthreads();
    unsigned above = __ballot_sync(0xffffffff, 32 * v > sums[0]);
    out[i] = __popc(above) + sums[t & 31];
}
"""


def test_a_region_with_cuts_ends_before_a_branch_on_the_thread_index_around_a_shuffle(monkeypatch):
    """``if (threadIdx.x < 32) { shuffles }`` parts every block of more than a warp, so a block
    would stop there and go on interpreted to the region's end; the region with the ballot
    starts after it instead."""
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(WARP0_THEN_ALL)
    code = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("warp0_then_all").mangled).code
    branch = next(pc for pc, c in enumerate(code) if c[2].opcode == "bra" and c[2].guard)
    vote = next(pc for pc, c in enumerate(code) if c[2].opcode == "vote")
    spans = cut_spans(WARP0_THEN_ALL, "warp0_then_all")
    assert any(branch < s <= vote < e for s, e in spans) and not any(s <= branch < e for s, e in spans)
    x = np.random.default_rng(12).integers(-50, 50, 512).astype(np.int32)
    same_in_both_tiers(monkeypatch, WARP0_THEN_ALL, "warp0_then_all", 4, 128,
                       lambda: [x, np.zeros(512, np.int32)])


HISTOGRAM = r"""
__global__ void histogram(const unsigned char* data, unsigned* hist, int n) {
    __shared__ unsigned local[256];
    int t = threadIdx.x;
    local[t] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    atomicAdd(&hist[t], local[t]);
}
"""


def test_a_kernel_with_barriers_runs_block_by_block_with_the_same_bytes_and_counts(monkeypatch):
    assert cut_spans(HISTOGRAM, "histogram")
    data = np.random.default_rng(8).integers(0, 256, 5000).astype(np.uint8)
    args = same_in_both_tiers(monkeypatch, HISTOGRAM, "histogram", 20, 256,
                              lambda: [data, np.zeros(256, np.uint32), np.int32(5000)])
    assert np.array_equal(args[1], np.bincount(data, minlength=256))


def test_a_region_with_cuts_has_a_version_for_1d_blocks_and_2d_blocks_run_the_general_one(tmp_path, monkeypatch):
    """The histogram reads only threadIdx.x: its region with cuts gets a second native version in
    which threadIdx.x is the lane loops' counter (regiongen.CutRegionBuilder.special), run where
    blockDim.y and .z are 1. Blocks of 64 x 4 threads run the general version: there threadIdx.x
    is the thread's offset modulo 64, and the 1-D version would zero and add all 256 bins."""
    from cudalab.emulator import regions
    calls = {"fn": 0, "fn_1d": 0}
    real_init = regions.Runner.__init__

    def counting(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        for name in calls:
            f = getattr(self, name)
            if f is not None:
                setattr(self, name, lambda *a, f=f, name=name: (calls.__setitem__(name, calls[name] + 1), f(*a))[1])
    monkeypatch.setattr(regions.Runner, "__init__", counting)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded
    source = HISTOGRAM.replace("histogram", "histogram_1d")   # (a kernel this process has not built)
    data = np.random.default_rng(9).integers(0, 256, 5000).astype(np.uint8)
    args = same_in_both_tiers(monkeypatch, source, "histogram_1d", 20, 256,
                              lambda: [data, np.zeros(256, np.uint32), np.int32(5000)])
    assert np.array_equal(args[1], np.bincount(data, minlength=256))
    assert calls["fn_1d"] and not calls["fn"]
    same_in_both_tiers(monkeypatch, source, "histogram_1d", 20, (64, 4),
                       lambda: [data, np.zeros(256, np.uint32), np.int32(5000)])
    assert calls["fn"]


SAXPY_IF = r"""
__global__ void saxpy_if(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
    else if (i < n + 40) y[i] = -1.0f;
}
"""


def built_regions(source, kernel, tmp_path, monkeypatch, block=128):
    """The regions (regions.Region) built into the native code of ``kernel``, after a launch."""
    from cudalab.emulator import regions
    built = []
    real_init = regions.Runner.__init__

    def recording(self, region, *args, **kwargs):
        built.append(region)
        real_init(self, region, *args, **kwargs)
    monkeypatch.setattr(regions.Runner, "__init__", recording)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    fresh = f"{kernel}_{tmp_path.name.replace('-', '_')}"     # (a kernel this process has not built)
    m = cudalab.compile(source.replace(kernel, fresh))
    m.get_kernel(fresh)[1, block](np.zeros(block, np.float32), np.zeros(block, np.float32), np.float32(1), np.int32(1))
    return built


def test_an_elementwise_kernel_runs_block_by_block_with_the_same_bytes_counts_and_errors(tmp_path, monkeypatch):
    """Straight code from the kernel's start (compiled._blockwise) is a region whose one cut is the
    start: its addresses are checked for a whole block at once. The last block's threads part at
    ``i < n`` (and at ``i < n + 40``); blocks of 48 threads leave padding lanes in each second warp;
    where y is too short, the first thread past its end is reported where the interpreter reports it."""
    assert [r.cuts for r in built_regions(SAXPY_IF, "saxpy_if", tmp_path, monkeypatch)] == [[[0, "start"]]]
    rng = np.random.default_rng(24)
    x, y = rng.random(1000, np.float32), rng.random(1100, np.float32)
    for block in (128, 48):
        args = same_in_both_tiers(monkeypatch, SAXPY_IF, "saxpy_if", 9 if block == 128 else 24, block,
                                  lambda: [x, y.copy(), np.float32(1.5), np.int32(1000)])
        assert np.allclose(args[1][:1000], 1.5 * x + y[:1000], rtol=1e-6)      # (nvcc contracts it to an fma)
        assert np.all(args[1][1000:1040] == -1) and np.array_equal(args[1][1040:], y[1040:])
    m = cudalab.compile(SAXPY_IF)

    def run():
        m.saxpy_if[8, 128](cudalab.to_device(x), cudalab.to_device(y[:900]), np.float32(2), np.int32(1000))
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 4" in got["compiled"][0]


TRANSPOSE = r"""
#define T 10
__global__ void transpose(const float* in, float* out, int w, int h) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
    if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
"""


def test_a_barrier_in_2d_blocks_with_padding_lanes_gives_the_same_bytes_and_counts(monkeypatch):
    """10x10 threads: each block is 100 threads in 128 lanes (a barrier needs no whole warps)."""
    assert cut_spans(TRANSPOSE, "transpose")
    a = np.random.default_rng(10).random((23, 37), np.float32)
    args = same_in_both_tiers(monkeypatch, TRANSPOSE, "transpose", (4, 3), (10, 10),
                              lambda: [a, np.zeros((37, 23), np.float32), np.int32(37), np.int32(23)])
    assert np.array_equal(args[1], a.T)


NAN_THEN_SHUFFLE = r"""
__global__ void nan_then_shuffle(const double* a, double* out, int* oob, int bad) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double v = a[t] * 2.0;                 // a NaN stops the thread in the native code
    v += __shfl_down_sync(0xffffffff, v, 1);
    out[t] = v + oob[t == bad ? 1 << 28 : t];     // 1 GiB past: no allocation near
}
"""


def test_a_thread_that_stops_before_a_shuffle_holds_its_block_at_the_shuffle(monkeypatch):
    """A float64 NaN hands its thread to the interpreter; its block's other threads wait at the
    shuffle for it (else they would read its register before it is written)."""
    assert cut_spans(NAN_THEN_SHUFFLE, "nan_then_shuffle")
    a = np.arange(128, dtype=np.float64)
    a[[5, 70]] = np.nan
    same_in_both_tiers(monkeypatch, NAN_THEN_SHUFFLE, "nan_then_shuffle", 2, 64,
                       lambda: [a, np.zeros(128), np.zeros(128, np.int32), np.int32(-1)])


def test_an_out_of_bounds_read_after_a_shuffle_names_the_line_and_thread(monkeypatch):
    m = cudalab.compile(NAN_THEN_SHUFFLE)

    def run():
        oob = cudalab.to_device(np.zeros(128, np.int32))
        m.nan_then_shuffle[2, 64](np.ones(128), np.zeros(128), oob, np.int32(77))
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0]
    assert "line 6" in got["compiled"][0] and "thread (13,0,0) in block (1,0,0)" in got["compiled"][0]


# ---------------------------------------------------------------- loops around cuts

def one_cut_region(source, kernel):
    """The kernel's regions with cuts; there is one, and it holds a loop (a backward jump)."""
    spans = cut_spans(source, kernel)
    assert len(spans) == 1
    return spans[0]


TREE_SUM = r"""
__global__ void tree_sum(const float* x, float* partial, int n) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}
"""


@pytest.mark.parametrize("block", [256, 64, 32])
def test_a_tree_reduction_loop_with_a_barrier_runs_natively_with_the_same_bytes_and_counts(block, monkeypatch):
    """The loop's trip count comes from blockDim: the whole block takes it as one, phase by phase
    (the loads of ``s[tid] += s[tid + stride]`` for every thread, then the stores)."""
    one_cut_region(TREE_SUM, "tree_sum")
    x = np.random.default_rng(11).random(3000, np.float32)
    blocks = (3000 + block - 1) // block
    m = cudalab.compile(TREE_SUM)
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        partial = np.zeros(blocks, np.float32)
        rec = m.tree_sum[blocks, block, 0, block * 4](x, partial, np.int32(3000))
        out[tier] = (partial.tobytes(), rec.thread_instructions)
    assert out["compiled"] == out["interp"]
    assert np.allclose(np.frombuffer(out["compiled"][0], np.float32).sum(), x.sum(), rtol=1e-4)


def test_a_tree_reductions_store_needs_no_address_check_of_its_own(tmp_path, monkeypatch):
    """In ``s[tid] += s[tid + stride]`` the store (a phase of its own, after every thread's loads)
    goes to the address the loads' phase checked for the whole block, so only that phase runs a
    check loop (regiongen._precheck); the sums stay the interpreter's."""
    from cudalab.emulator import regiongen
    from cudalab.emulator.engine import DeviceMemory, Program
    source = TREE_SUM.replace("tree_sum", "tree_sum_once")
    m = cudalab.compile(source)
    code = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("tree_sum_once").mangled).code
    (s, e), = cut_spans(source, "tree_sum_once")
    store = next(p for p in range(s, e) if code[p][2].text.startswith("st.shared")
                 and code[p - 1][2].text.startswith("add.f32"))
    loads = [p for p in range(s, store) if code[p][2].text.startswith("ld.shared")]
    checked = []
    real = regiongen.CutRegionBuilder._precheck

    def counting(self, pcs, v, resume, run, accesses, part):
        checked.extend(accesses)
        return real(self, pcs, v, resume, run, accesses, part)
    monkeypatch.setattr(regiongen.CutRegionBuilder, "_precheck", counting)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    x = np.random.default_rng(12).random(1024, np.float32)

    def run():
        partial = np.zeros(4, np.float32)
        m.tree_sum_once[4, 256, 0, 1024](x, partial, np.int32(1024))
        return partial.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert set(loads[-2:]) <= set(checked) and store not in checked


SHIFTED_PAIRS = r"""
__global__ void shifted_pairs(const float* x, float* out, int shift, int lag) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t + lag] = x[blockIdx.x * blockDim.x + t + shift];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t] + 2.0f * s[63 - t];
}
"""


@pytest.mark.parametrize("shift, lag, error, where", [
    (0, 0, None, None),
    (1, 0, "Invalid __global__ read of size 4 bytes", "thread (63,0,0) in block (1,0,0)"),
    (0, 1, "Invalid __shared__ write of size 4 bytes", "thread (63,0,0) in block (0,0,0)")])
def test_accesses_checked_for_the_whole_block_first_give_the_same_bytes_and_errors(shift, lag, error, where,
                                                                                    monkeypatch):
    """Both accesses before the barrier take their addresses from thread and block indices and
    parameters only, so the whole block's addresses are checked before the phase runs them
    unchecked (regions.prechecks). One thread's address past the end (the last block's last
    thread; every block's last thread in shared memory) sends its block to the interpreter from
    the segment's start: the same error, line and thread."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program
    (s, e), = cut_spans(SHIFTED_PAIRS, "shifted_pairs")
    m = cudalab.compile(SHIFTED_PAIRS)
    df = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("shifted_pairs").mangled)
    barrier = next(p for p in range(s, e) if df.code[p][2].opcode == "bar")
    checked, _ = regions.prechecks(df.code, list(range(s, barrier)), df.param_offsets)
    assert sorted(df.code[p][2].opcode for p in checked) == ["ld", "st"]
    x = np.random.default_rng(3).random(128, np.float32)

    def run():
        out = cudalab.to_device(np.zeros(128, np.float32))
        rec = m.shifted_pairs[2, 64](x, out, np.int32(shift), np.int32(lag))
        return out.copy_to_host().tobytes(), rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    if error is None:
        assert got["compiled"][0] is None
    else:
        assert error in got["compiled"][0] and "line 5" in got["compiled"][0]
        assert where in got["compiled"][0]


MIRRORED = r"""
__global__ void mirrored(const float* x, float* out, int n, int lag) {
    __shared__ float s[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = 0.0f;
    if (i + 1 < n) s[t] = x[i + 1];
    __syncthreads();
    float v = s[63 - t];
    s[t + lag] = v;
    __syncthreads();
    out[i] = s[t];
}
"""


def stopped_lanes(monkeypatch):
    """A list that collects, for each native region call, the lanes it handed to the interpreter."""
    from cudalab.emulator import regions
    real, out = regions.Runner._run, []

    def counting(self, ex, stack, ent):
        depth = len(stack)
        got = real(self, ex, stack, ent)
        out.append(sum(int(e[2].sum()) for e in stack[depth:]))
        return got
    monkeypatch.setattr(regions.Runner, "_run", counting)
    return out


@pytest.mark.parametrize("n, lag, error", [(128, 0, None), (129, 1, "Invalid __shared__ write of size 4 bytes")])
def test_a_failed_address_check_of_an_access_some_lanes_skip_runs_a_copy_checking_each_lane(n, lag, error, monkeypatch,
                                                                                              tmp_path):
    """With n = 128 the grid's last thread skips ``x[i + 1]``, but the check of the whole block's
    addresses counts it (x[n] is past the end), so that block runs the phase's copy whose accesses
    check each lane: natively still, with the interpreter's bytes and counts, no error. The store
    ``s[t + lag]`` starts the second phase of its segment (it conflicts with the load before it);
    with lag 1 each block's thread 63 writes past the array, and the threads waiting at the store
    go on interpreted, where the error names the line."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program
    (s, e), = cut_spans(MIRRORED, "mirrored")
    m = cudalab.compile(MIRRORED)
    df = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("mirrored").mangled)
    store = next(p for p in range(s, e) if df.code[p][2].opcode == "st" and df.code[p - 1][2].opcode == "add"
                 and df.code[p + 1][2].opcode == "bar")
    assert regions.prechecks(df.code, [store], df.param_offsets)[0] == [store]
    x = np.random.default_rng(4).random(n, np.float32)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    stops = stopped_lanes(monkeypatch)

    def run():
        out = cudalab.to_device(np.zeros(128, np.float32))
        rec = m.mirrored[2, 64](x, out, np.int32(n), np.int32(lag))
        return out.copy_to_host().tobytes(), rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    if error is None:
        want = np.concatenate([x[1:], [0]]).reshape(2, 64)[:, ::-1].ravel()
        assert got["compiled"][1][0] == want.astype(np.float32).tobytes()
        assert stops and not any(stops)           # both blocks ran natively to the region's end
    else:
        assert error in got["compiled"][0] and "line 10" in got["compiled"][0]
        assert "thread (63,0,0) in block (0,0,0)" in got["compiled"][0]


GUARDED_STEP = r"""
__global__ void guarded(const int* x, int* out, int bound) {
    __shared__ int s[512];
    int tid = threadIdx.x + threadIdx.y * blockDim.x;
    int t = threadIdx.x;
    s[tid] = x[blockIdx.x * blockDim.x * blockDim.y + tid];
    __syncthreads();
    for (int stride = 1; stride < blockDim.x * blockDim.y; stride <<= 1) {
        if (GUARD) s[tid] += 3 * s[tid ^ stride] + stride;
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x * blockDim.y + tid] = s[tid];
}
"""


@pytest.mark.parametrize("guard, block", [
    ("t < stride", (256, 1)), ("t >= stride", (100, 1)), ("stride > t", (128, 1)), ("t <= stride - 1", (96, 1)),
    ("(unsigned) t < (unsigned) bound", (64, 1)), ("t > bound", (100, 1)), ("t < 40", (256, 1)),
    ("t <= 40", (32, 1)), ("t < stride", (16, 8)), ("t == stride", (256, 1)), ("40 == t", (100, 1)),
    ("t == bound", (64, 1))])
def test_threads_a_guard_on_the_thread_index_sends_away_are_skipped_with_the_same_bytes_and_counts(
        guard, block, monkeypatch):
    """``if (threadIdx.x < stride)`` in a loop around a barrier: only the threads that stay run the
    segment natively (regions.tid_guard); the others are counted at once. A prefix, a suffix, one
    thread, an unsigned compare whose bound wraps, bounds outside the block, padding lanes (100 threads) and a
    2-D block (where the thread index is not the lane's offset: every lane runs) give the
    interpreter's bytes and instruction counts."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program
    source = GUARDED_STEP.replace("GUARD", guard)
    one_cut_region(source, "guarded")
    m = cudalab.compile(source)
    df = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("guarded").mangled)
    (s, e), = cut_spans(source, "guarded")
    bounds = regions.skeleton(df.code, s, e, [p for p in regions.cuts(df, {}) if s <= p < e])[0]
    uniform = regions.block_uniform(df, s, e, bounds)
    live_in = compiled.liveness(df)[0]
    assert any(regions.tid_guard(df, a, z, uniform, live_in) for a, z in regions.segments(s, e, bounds))
    threads = block[0] * block[1]
    x = np.random.default_rng(5).integers(-50, 50, 3 * threads).astype(np.int32)
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        y = np.zeros_like(x)
        rec = m.guarded[3, block](x, y, np.int32(-3))
        out[tier] = (y.tobytes(), rec.thread_instructions)
    assert out["compiled"] == out["interp"]


SHUFFLE_LOOP = r"""
__global__ void warp_sums(const int* x, int* out, int width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    for (int offset = width / 2; offset > 0; offset /= 2)      // not unrolled: width is a parameter
        v += __shfl_xor_sync(0xffffffff, v, offset);
    out[i] = v;
}
"""


@pytest.mark.parametrize("width", [32, 8, 1])
def test_a_shuffle_loop_runs_natively_with_the_same_bytes_and_counts(width, monkeypatch):
    one_cut_region(SHUFFLE_LOOP, "warp_sums")
    x = np.random.default_rng(12).integers(-1000, 1000, 512).astype(np.int32)
    args = same_in_both_tiers(monkeypatch, SHUFFLE_LOOP, "warp_sums", 4, 128,
                              lambda: [x, np.zeros(512, np.int32), np.int32(width)])
    want = x.reshape(-1, width).sum(axis=1).repeat(width) if width > 1 else x
    assert np.array_equal(args[1], want)


HILLIS_STEELE = r"""
__global__ void scan(const unsigned* in, unsigned* out, unsigned* racy, int n) {
    __shared__ unsigned s[256], r[256];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = r[t] = i < n ? in[i] : 0;
    for (int offset = 1; offset < blockDim.x; offset <<= 1) {
        __syncthreads();
        unsigned v = t >= offset ? s[t] + s[t - offset] : s[t];
        __syncthreads();
        s[t] = v;
        if (t >= offset) r[t] += r[t - offset];      // a race: lock step reads every old value first
    }
    if (i < n) { out[i] = s[t]; racy[i] = r[t]; }
}
"""


def test_a_scan_with_two_barriers_a_turn_and_a_racy_update_gives_the_lock_step_bytes(monkeypatch):
    """``r[t] += r[t - offset]`` has no barrier between its load and store: lock step loads for
    every thread before any stores, and so do phases (threads one by one would add up twice)."""
    one_cut_region(HILLIS_STEELE, "scan")
    x = np.random.default_rng(13).integers(0, 100, 700).astype(np.uint32)
    args = same_in_both_tiers(monkeypatch, HILLIS_STEELE, "scan", 3, 256,
                              lambda: [x, np.zeros(700, np.uint32), np.zeros(700, np.uint32), np.int32(700)])
    want = np.concatenate([np.cumsum(x[k:k + 256]) for k in range(0, 700, 256)]).astype(np.uint32)
    assert np.array_equal(args[1], want) and np.array_equal(args[2], want)



TWO_STORES_THEN_BARRIER = r"""
__global__ void two_stores(const unsigned* in, unsigned* out) {
    __shared__ unsigned s[512];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    unsigned a = in[i], b = a * 3u + t, at = 2u * t - (t & 1u);
    s[at] = 0u;           // thread t's zero lands where thread t - 1 stores its value (odd t)
    s[at + 1u] = a;       // so lock step's order shows: a second phase, after every zero
    __syncthreads();
    out[i] = s[(at + 3u) % 512u] + a + b + at;     // a, b, at: written in the first phase only
}
"""


def test_values_written_before_a_second_phase_reach_the_code_after_the_barrier(monkeypatch):
    """The two stores run as two phases (every thread's zero before any thread's value). The
    second phase writes no register: ``a``, ``b`` and ``at`` reach the last line from the arrays
    where the first phase left them (a later phase stores only what it writes itself)."""
    assert cut_spans(TWO_STORES_THEN_BARRIER, "two_stores")
    x = np.random.default_rng(15).integers(0, 1000, 512).astype(np.uint32)
    args = same_in_both_tiers(monkeypatch, TWO_STORES_THEN_BARRIER, "two_stores", 2, 256,
                              lambda: [x, np.zeros(512, np.uint32)])
    t = np.arange(256, dtype=np.uint32)
    at = 2 * t - (t & 1)
    want = []
    for blk in x.reshape(2, 256):
        s = np.zeros(512, np.uint32)
        s[at] = 0
        s[at + 1] = blk
        want.append(s[(at + 3) % 512] + blk + (blk * 3 + t) + at)
    assert np.array_equal(args[1], np.concatenate(want))

PER_BLOCK_TRIPS = r"""
__global__ void per_block(int* out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = t;
    for (int k = 0; k < blockIdx.x + 1; ++k) {      // the same in a block, not between blocks
        __syncthreads();
        int v = s[(t + 1) % blockDim.x];
        __syncthreads();
        s[t] = v + k;
    }
    out[blockIdx.x * blockDim.x + t] = s[t];
}
"""


def test_a_loop_whose_trip_count_differs_between_blocks_gives_the_same_bytes_and_counts(monkeypatch):
    one_cut_region(PER_BLOCK_TRIPS, "per_block")
    same_in_both_tiers(monkeypatch, PER_BLOCK_TRIPS, "per_block", 5, 128, lambda: [np.zeros(640, np.int32)])


CARRIED_ACROSS_BARRIERS = r"""
__global__ void carried(const double* x, double* out, int turns) {
    __shared__ double s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    double acc = x[i], keep = acc * 2.0;          // keep: written before the loop, read after it
    for (int k = 0; k < turns; ++k) {
        s[t] = acc;
        __syncthreads();
        acc = s[(t + 1) % blockDim.x] + acc * 0.5;  // a NaN here hands its thread to the interpreter
        __syncthreads();
    }
    out[i] = acc + keep + s[t];
}
"""


@pytest.mark.parametrize("budget", [1 << 22, 64])
def test_values_that_cross_barriers_reach_the_interpreter_where_a_block_leaves_native_code(budget, monkeypatch):
    """``acc`` and ``keep`` wait between segments in buffers of one block's threads, not in their
    arrays: where a thread stops (a float64 NaN), where the native code returns for the watchdog at
    the loop's head (a small budget: every turn) and at the region's end, the block's values must
    reach the arrays, and the next call must find them there."""
    from cudalab.emulator import regions
    one_cut_region(CARRIED_ACROSS_BARRIERS, "carried")
    monkeypatch.setattr(regions, "BUDGET", budget)
    x = np.random.default_rng(16).random(384)
    x[[3, 200]] = np.nan
    args = same_in_both_tiers(monkeypatch, CARRIED_ACROSS_BARRIERS, "carried", 3, 128,
                              lambda: [x, np.zeros(384), np.int32(6)])
    assert np.isnan(args[1]).sum() > 2 and np.isfinite(args[1][260:]).all()



def test_a_loop_counter_updated_after_a_store_is_a_segment_run_once_per_block():
    """``++k`` and ``k < blockIdx.x + 1`` give every thread of a block the same values, so after
    ``s[t] = v + k`` they start a segment of their own, which runs once per block instead of
    once per thread (the bytes and counts are lock step's: the test above)."""
    from llvmlite import ir
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(PER_BLOCK_TRIPS)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel("per_block").mangled)
    _, regions = compiled.plan(df, prog.module, ir.Module())
    region = next(r for r in regions if r.cuts)
    after_store = [b for b in region.bounds if df.code[b - 1][2].opcode == "st" and df.code[b][2].opcode == "add"]
    assert after_store

DIVERGENT_BARRIER_LOOP = r"""
__global__ void uneven(int* out, int odd_block) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    int turns = blockIdx.x == odd_block ? t % 3 : 2;   // one block's threads disagree
    for (int k = 0; k < turns; ++k) {
        __syncthreads();
        s[t] += s[63 - t];
    }
    out[blockIdx.x * 64 + t] = s[t] + turns;
}
"""


@pytest.mark.parametrize("odd_block", [-1, 1])
def test_a_block_whose_threads_disagree_at_a_loop_with_a_barrier_goes_to_the_interpreter(odd_block, monkeypatch):
    """The other blocks run natively; the disagreeing one stops at the branch and the interpreter
    runs it (its barrier is one a GPU may hang on; whatever the interpreter says, both tiers say)."""
    one_cut_region(DIVERGENT_BARRIER_LOOP, "uneven")
    m = cudalab.compile(DIVERGENT_BARRIER_LOOP)

    def run():
        out = np.zeros(192, np.int32)
        rec = m.uneven[3, 64](out, np.int32(odd_block))
        return out.tobytes(), rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]


BARRIER_FOREVER = r"""
__global__ void forever(int* x) {
    __shared__ int s[32];
    int k = 0;
    while (true) { s[threadIdx.x] = k++; __syncthreads(); x[threadIdx.x] = s[31 - threadIdx.x]; __syncthreads(); }
}
"""


def test_an_endless_loop_with_barriers_meets_the_watchdog(monkeypatch):
    one_cut_region(BARRIER_FOREVER, "forever")
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(BARRIER_FOREVER)
    cudalab.set_watchdog(0.5)
    try:
        with pytest.raises(KernelError) as e:
            m.forever[2, 32](np.zeros(32, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout"


BISECTION_STEP = r"""
__global__ void levels(const float* x, unsigned* out, float* lo, int rounds) {
    __shared__ float left[128], right[128];
    __shared__ unsigned count;
    int t = threadIdx.x;
    left[t] = x[blockIdx.x * 128 + t];
    right[t] = left[t] + 1.0f;
    if (t == 0) count = 0;
    for (int r = 0; r < rounds; ++r) {
        __syncthreads();
        float mid = 0.5f * (left[t] + right[(t + r) % 128]);
        if (mid > 0.5f) {                       // a diamond whose two sides write shared memory
            right[t] = mid;
            left[(t + 1) % 128] -= 0.25f;       // a race lock step decides: the else side runs first
        } else {
            left[t] = mid;
            right[(t + 3) % 128] += 0.5f;
        }
        unsigned ticket = atomicAdd(&count, 1u);    // its result is read: the threads' order shows
        out[(blockIdx.x * rounds + r) * 128 + t] = ticket;
    }
    lo[blockIdx.x * 128 + t] = left[t] - right[t];
}
"""


def test_a_loop_with_a_diamond_that_writes_shared_memory_and_a_ticket_atomic_gives_the_lock_step_bytes(monkeypatch):
    """Phases follow lock step's order (the taken side of a branch first), and an atomic whose
    result is read gets a phase of its own, so threads draw their tickets in lane order."""
    one_cut_region(BISECTION_STEP, "levels")
    x = np.random.default_rng(14).random(256, np.float32)
    same_in_both_tiers(monkeypatch, BISECTION_STEP, "levels", 2, 128,
                       lambda: [x, np.zeros(2 * 5 * 128, np.uint32), np.zeros(256, np.float32), np.int32(5)])


@pytest.mark.parametrize("source, kernel, grid, make", [
    (WARP_SUMS, "warp_sums", 2, lambda: [np.arange(512, dtype=np.int32), np.zeros(1024, np.int32), np.int32(512)]),
    (HILLIS_STEELE, "scan", 3, lambda: [np.arange(700, dtype=np.uint32), np.zeros(700, np.uint32),
                                         np.zeros(700, np.uint32), np.int32(700)]),   # a loop around barriers
])
def test_check_mode_runs_regions_with_cuts_both_ways(source, kernel, grid, make, monkeypatch):
    from cudalab.emulator import regions
    checked = []
    real = regions.Runner._check
    monkeypatch.setattr(regions.Runner, "_check", lambda self, *a: checked.append(self.r.cuts) or real(self, *a))
    got = {}
    for tier in ("interp", "check"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        args = make()
        cudalab.compile(source).get_kernel(kernel)[grid, 256](*args)
        got[tier] = args[1]
    assert any(checked) and np.array_equal(got["check"], got["interp"])



WARP_GROUPS = r"""
__global__ void warp_groups(const unsigned* x, unsigned* out) {
    __shared__ unsigned s[256];
    unsigned t = threadIdx.x, nt = blockDim.x;
    unsigned v = x[blockIdx.x * nt + t];
    unsigned parity = __match_any_sync(__activemask(), v & 1u);   // interpreted: the region starts after it
    unsigned after = nt - (t & ~31u);          // threads from this warp's first lane to the block's end
    s[t] = v ^ after;
    __syncthreads();
    v += s[(t + 7u) % nt];                     // reads t: the segment between the barriers loads it lane by lane
    __syncthreads();
    unsigned lanes = min(32u, after);          // the lanes this warp has (8 in a block of 200's last warp)
    unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
    out[2 * (blockIdx.x * nt + t)] = __match_any_sync(mask, v & 3u);
    out[2 * (blockIdx.x * nt + t) + 1] = parity;
}
"""


def test_a_value_computed_again_after_two_barriers_is_this_threads_own(monkeypatch):
    """``after`` comes from threadIdx.x (read before the region) and is computed again after the
    barriers instead of being kept. It was computed from the threadIdx.x the block's last thread
    left behind in the segment between the barriers, so every warp took the last warp's 8-lane
    mask for its match (fuzz seed 1893). Each group must hold its own lane and only lanes of
    its warp."""
    assert len(cut_spans(WARP_GROUPS, "warp_groups")) == 2     # before the first match, and from there to the second
    x = np.random.default_rng(15).integers(0, 1 << 30, 400).astype(np.uint32)
    _, out = same_in_both_tiers(monkeypatch, WARP_GROUPS, "warp_groups", 2, 200, lambda: [x, np.zeros(800, np.uint32)])
    groups = out[0::2]
    lane = np.arange(400) % 200 % 32
    assert np.all(groups >> lane.astype(np.uint32) & 1)
    assert np.all(groups[(np.arange(400) % 200) >= 192] < 256)    # the last warp's 8 lanes only
    assert np.any(groups[(np.arange(400) % 200) < 192] >= 256)    # the other warps' groups reach lane 8 and above


# ---------------------------------------------------------------- more instruction forms, compiled

def native_pcs(module, kernel):
    """pcs of ``kernel`` that the compiled tier runs as native code (inside a group or a region)."""
    from cudalab.emulator.engine import K_FUSED, K_REGION
    from cudalab.runtime import device
    fused = compiled._tier(module.program(device.current()).function(module.get_kernel(kernel).mangled)).fused
    assert fused, "the kernel was not compiled"
    inside = set()
    for pc, (kind, _, _, end) in enumerate(fused.code):
        if kind in (K_FUSED, K_REGION):
            inside.update(range(pc, end))
    return fused.func.insts, inside


def assert_native(module, kernel, opcodes):
    """Every instruction of ``opcodes`` in ``kernel`` runs natively (none is left to the interpreter)."""
    insts, inside = native_pcs(module, kernel)
    pcs = [pc for pc, inst in enumerate(insts) if inst.opcode in opcodes]
    assert {insts[pc].opcode for pc in pcs} == set(opcodes)
    left = [".".join((insts[pc].opcode,) + insts[pc].mods) for pc in pcs if pc not in inside]
    assert not left, f"interpreted: {left}"


BIT_FORMS = r"""
#define OP1(k, form, x) asm(form " %0, %1;" : "=r"(r) : "r"(x)); o[i * 16 + k] = r;
__global__ void bit_forms(const unsigned* a, const unsigned long long* a64, const unsigned* c,
                          unsigned* o, unsigned long long* o64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned x = a[i], y = a[(i * 7 + 3) % n], p = c[i], q = p >> 8, r;
    unsigned long long X = a64[i], R;
    OP1(0, "popc.b32", x) OP1(1, "clz.b32", x) OP1(2, "brev.b32", x)
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(q)); o[i * 16 + 3] = r;
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(p), "r"(q)); o[i * 16 + 4] = r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 5] = r;
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 6] = r;
    asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 7] = r;
    asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 8] = r;
    asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 9] = r;
    asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 10] = r;
    asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(p)); o[i * 16 + 11] = r;
    asm("popc.b64 %0, %1;" : "=r"(r) : "l"(X)); o[i * 16 + 12] = r;
    asm("clz.b64 %0, %1;" : "=r"(r) : "l"(X)); o[i * 16 + 13] = r;
    asm("brev.b64 %0, %1;" : "=l"(R) : "l"(X)); o64[i * 3] = R;
    asm("bfe.u64 %0, %1, %2, %3;" : "=l"(R) : "l"(X), "r"(p), "r"(q)); o64[i * 3 + 1] = R;
    asm("bfe.s64 %0, %1, %2, %3;" : "=l"(R) : "l"(X), "r"(p), "r"(q)); o64[i * 3 + 2] = R;
}
"""


def test_bit_instructions_give_the_same_bits_in_both_tiers_natively(monkeypatch):
    """popc, clz, brev, bfe (positions and lengths past the width, signed fill) and prmt (every
    mode, sign-replicating selectors) on edge values: the same bits both ways, none interpreted."""
    m = cudalab.compile(BIT_FORMS)
    rng = np.random.default_rng(7)
    n = 256
    edges = np.array([0, 1, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0x00010000, 0x80808080, 0x0000FFFF], np.uint32)
    a = np.concatenate([edges, rng.integers(0, 2**32, n - len(edges), dtype=np.uint32)])
    a64 = (a.astype(np.uint64) << np.uint64(32)) | rng.integers(0, 2**32, n, dtype=np.uint64)
    a64[:4] = [0, 1, 1 << 63, 2**64 - 1]
    i = np.arange(n, dtype=np.uint32)
    c = (i % 70) | ((i * 13 % 70) << 8) | (rng.integers(0, 2**16, n, dtype=np.uint32) << 16)   # pos | len << 8

    def run():
        o, o64 = np.zeros(n * 16, np.uint32), np.zeros(n * 3, np.uint64)
        m.bit_forms[n // 64, 64](a, a64, c, o, o64, np.int32(n))
        return o.tobytes() + o64.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1][:n * 64], np.uint32).reshape(n, 16)
    assert o[:4, 0].tolist() == [0, 1, 1, 32] and o[:4, 1].tolist() == [32, 31, 0, 0]
    assert_native(m, "bit_forms", ("popc", "clz", "brev", "bfe", "prmt"))


FLOAT_FORMS = r"""
#define TESTP(k, t, c, x) asm("{ .reg .pred p; testp." t " p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : c(x)); \
    bits |= r << k;
__global__ void float_forms(const float* x, const double* xd, const int* si, const long long* sl,
                            unsigned* tests, float* of, double* od, int* oi, long long* ol, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = x[i], b = x[(i * 7 + 3) % n], f;
    double A = xd[i], B = xd[(i * 7 + 3) % n], D;
    int k = si[i], s;
    long long K = sl[i], L;
    unsigned r, bits = 0;
    TESTP(0, "finite.f32", "f", a) TESTP(1, "infinite.f32", "f", a) TESTP(2, "number.f32", "f", a)
    TESTP(3, "notanumber.f32", "f", a) TESTP(4, "normal.f32", "f", a) TESTP(5, "subnormal.f32", "f", a)
    TESTP(6, "finite.f64", "d", A) TESTP(7, "infinite.f64", "d", A) TESTP(8, "number.f64", "d", A)
    TESTP(9, "notanumber.f64", "d", A) TESTP(10, "normal.f64", "d", A) TESTP(11, "subnormal.f64", "d", A)
    tests[i] = bits;
    asm("copysign.f32 %0, %1, %2;" : "=f"(f) : "f"(a), "f"(b)); of[i * 7] = f;
    asm("slct.f32.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(a), "f"(b), "f"(b)); of[i * 7 + 1] = f;
    asm("slct.f32.f32 %0, %1, %2, %3;" : "=f"(f) : "f"(b), "f"(a), "f"(a)); of[i * 7 + 2] = f;
    asm("slct.f32.s32 %0, %1, %2, %3;" : "=f"(f) : "f"(a), "f"(b), "r"(k)); of[i * 7 + 3] = f;
    asm("cvt.sat.f32.f32 %0, %1;" : "=f"(f) : "f"(a)); of[i * 7 + 4] = f;
    asm("cvt.ftz.sat.f32.f32 %0, %1;" : "=f"(f) : "f"(a)); of[i * 7 + 5] = f;
    asm("cvt.ftz.f32.f32 %0, %1;" : "=f"(f) : "f"(a)); of[i * 7 + 6] = f;
    asm("copysign.f64 %0, %1, %2;" : "=d"(D) : "d"(A), "d"(B)); od[i] = D;
    asm("cvt.sat.s8.s32 %0, %1;" : "=r"(s) : "r"(k)); oi[i * 6] = s;
    asm("cvt.sat.u8.s32 %0, %1;" : "=r"(s) : "r"(k)); oi[i * 6 + 1] = s;
    asm("cvt.sat.u16.u32 %0, %1;" : "=r"(s) : "r"(k)); oi[i * 6 + 2] = s;
    asm("cvt.sat.s32.u32 %0, %1;" : "=r"(s) : "r"(k)); oi[i * 6 + 3] = s;
    asm("cvt.sat.s32.s64 %0, %1;" : "=r"(s) : "l"(K)); oi[i * 6 + 4] = s;
    asm("cvt.sat.u32.u64 %0, %1;" : "=r"(s) : "l"(K)); oi[i * 6 + 5] = s;
    asm("cvt.sat.u64.s64 %0, %1;" : "=l"(L) : "l"(K)); ol[i * 2] = L;
    asm("cvt.sat.s64.u64 %0, %1;" : "=l"(L) : "l"(K)); ol[i * 2 + 1] = L;
}
"""

F32_EDGE_BITS = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0x3F7FFFFF, 0x3F800001, 0x7F800000,
                 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF]
F64_EDGE_BITS = [0, 1 << 63, 0x3FF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
                 0x7FF0000000000001, 1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF]


def test_float_tests_copysign_slct_and_saturating_cvt_give_the_same_bits_natively(monkeypatch):
    """testp (every property, f32 and f64), copysign (NaN payloads), slct (NaN, -0 and subnormal
    selectors), cvt.sat between floats and between integers of every signedness: NaN, infinities,
    subnormals and out-of-range integers give the same bits both ways, none interpreted."""
    m = cudalab.compile(FLOAT_FORMS)
    rng = np.random.default_rng(8)
    n = 128
    x = np.concatenate([np.array(F32_EDGE_BITS, np.uint32),
                        rng.integers(0, 2**32, n - len(F32_EDGE_BITS), dtype=np.uint32)]).view(np.float32)
    xd = np.concatenate([np.array(F64_EDGE_BITS, np.uint64),
                         rng.integers(0, 2**64, n - len(F64_EDGE_BITS), dtype=np.uint64)]).view(np.float64)
    int_edges = [0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, 65536, 2**31 - 1, -2**31]
    si = np.concatenate([np.array(int_edges, np.int32), rng.integers(-2**31, 2**31, n - 13, dtype=np.int32)])
    long_edges = [0, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1, -2**63]
    sl = np.concatenate([np.array(long_edges, np.int64), rng.integers(-2**63, 2**63 - 1, n - 10, dtype=np.int64)])

    def run():
        outs = [np.zeros(n, np.uint32), np.zeros(n * 7, np.float32), np.zeros(n, np.float64),
                np.zeros(n * 6, np.int32), np.zeros(n * 2, np.int64)]
        m.float_forms[n // 64, 64](x, xd, si, sl, *outs, np.int32(n))
        return b"".join(o.tobytes() for o in outs)
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    tests = np.frombuffer(got["interp"][1][:4 * n], np.uint32)
    assert tests[0] & 0x3F == 0b010101 and tests[12] & 0x3F == 0b100101       # 0 is normal; 1e-45 is not
    assert_native(m, "float_forms", ("testp", "copysign", "slct", "cvt"))


MORE_FORMS = r"""
__global__ void more_forms(const int* a, const float* x, unsigned* o, float* of, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = a[i], q = a[(i * 7 + 3) % n], s = a[(i * 5 + 1) % n];
    long long P = ((long long)p << 32) | (unsigned)q;
    unsigned r;
    asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(p)); o[i * 12] = r;
    asm("bfind.s32 %0, %1;" : "=r"(r) : "r"(p)); o[i * 12 + 1] = r;
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(p)); o[i * 12 + 2] = r;
    asm("bfind.s64 %0, %1;" : "=r"(r) : "l"(P)); o[i * 12 + 3] = r;
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(p), "r"(q), "r"(s)); o[i * 12 + 4] = r;
    asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(r) : "r"(p), "r"(q), "r"(s)); o[i * 12 + 5] = r;
    asm("max.s32.relu %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q)); o[i * 12 + 6] = r;
    asm("min.s32.relu %0, %1, %2;" : "=r"(r) : "r"(p), "r"(q)); o[i * 12 + 7] = r;
    asm("max.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(p), "r"(q), "r"(s)); o[i * 12 + 8] = r;
    asm("min.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(p), "r"(q), "r"(s)); o[i * 12 + 9] = r;
    unsigned short h;
    float f;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x[i])); o[i * 12 + 10] = h;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)p)); of[i] = f;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x[i])); o[i * 12 + 11] = r;
    unsigned short g = (unsigned short)q;
    asm("{ .reg .pred a, b; setp.ltu.f16 a|b, %1, %2; selp.u32 %0, 1, 2, a; @b add.u32 %0, %0, 4; }"
        : "=r"(r) : "h"((unsigned short)p), "h"(g)); o[i * 12 + 9] ^= r;
    asm("{ .reg .pred a; setp.eq.f16 a, %1, %2; selp.u32 %0, 8, 16, a; }" : "=r"(r) : "h"((unsigned short)p), "h"(h));
    o[i * 12 + 9] ^= r;
    unsigned short na, ab;
    asm("neg.f16 %0, %1;" : "=h"(na) : "h"((unsigned short)p));
    asm("abs.f16 %0, %1;" : "=h"(ab) : "h"(g));
    o[i * 12 + 8] ^= na << 16 | ab;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x[(i * 7 + 3) % n])); p = r;
    asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r) : "f"(x[(i * 5 + 1) % n])); o[i * 12 + 10] ^= r + p;
}
"""


def test_bfind_lop3_relu_min_max_and_half_conversions_give_the_same_bits_natively(monkeypatch):
    """bfind (signed, .shiftamt, 64-bit; 0 and -1 have no such bit), lop3, min/max .relu and with
    three inputs, cvt between f32 and f16 (rounding, overflow to infinity, subnormal halves, NaN)
    and to tf32 in its three roundings; setp, neg and abs on f16 (NaN, -0, subnormal halves)."""
    m = cudalab.compile(MORE_FORMS)
    rng = np.random.default_rng(9)
    n = 128
    edges = [0, -1, 1, 2**31 - 1, -2**31, 0x7C00, 0xFC00, 0x7C01, 0x7E00, 0x0001, 0x83FF, 0x3C00]  # last: f16 bits
    a = np.concatenate([np.array(edges, np.int32), rng.integers(-2**31, 2**31, n - len(edges), dtype=np.int32)])
    x = np.concatenate([np.array(F32_EDGE_BITS, np.uint32).view(np.float32),
                        np.array([65504, 65520, 65519.99, 6e-8, 2.98e-8, 1 + 2**-11, 1 + 3 * 2**-11], np.float32),
                        np.array([0x3F801000, 0x3F803000, 0x7F7FF000, 0xBF801000], np.uint32).view(np.float32),
                        rng.standard_normal(n - 27).astype(np.float32) * 1000])

    def run():
        o, of = np.zeros(n * 12, np.uint32), np.zeros(n, np.float32)
        m.more_forms[n // 64, 64](a, x, o, of, np.int32(n))
        return o.tobytes() + of.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1][:n * 48], np.uint32).reshape(n, 12)
    assert o[:3, 0].tolist() == [0xFFFFFFFF, 31, 0] and o[:3, 1].tolist() == [0xFFFFFFFF, 0xFFFFFFFF, 0]
    assert_native(m, "more_forms", ("bfind", "lop3", "min", "max", "cvt", "setp", "neg", "abs"))


APPROX_F64 = r"""
__global__ void approx_f64(const double* x, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x[i])); o[i * 2] = r;
    asm("rsqrt.approx.f64 %0, %1;" : "=d"(r) : "d"(x[i])); o[i * 2 + 1] = r;
}
"""


def test_float64_reciprocal_approximations_give_the_same_bits_in_both_tiers(monkeypatch):
    """rcp.approx.f64 and rsqrt.approx.f64 over zeros, infinities, subnormals (no flush on float64),
    negative inputs and random doubles. They are the special function unit's high-word answers from
    mufu.py's tables (an H200's bits), which stay interpreted like ex2/rcp/rsqrt.approx.f32."""
    m = cudalab.compile(APPROX_F64)
    rng = np.random.default_rng(10)
    n = 64
    x = np.concatenate([np.array(F64_EDGE_BITS, np.uint64).view(np.float64),
                        np.exp(rng.uniform(-700, 700, n - len(F64_EDGE_BITS)))])

    no_nan = np.where(np.isnan(x) | (x < 0), 2.0, x)      # a NaN result sends the whole group back

    def run():
        o, p = np.zeros(n * 2), np.zeros(n * 2)
        m.approx_f64[1, n](x, o)
        m.approx_f64[1, n](no_nan, p)
        return o.tobytes() + p.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1][n * 16:], np.float64).reshape(n, 2)
    assert o[2].tolist() == [1.0, 1.0] and o[7, 0] == np.inf           # 1/1; 1/(smallest subnormal) overflows
    insts, inside = native_pcs(m, "approx_f64")
    assert not [pc for pc, inst in enumerate(insts) if inst.opcode in ("rcp", "rsqrt") and pc in inside]


DIRECTED = r"""
#define OPS(T, c, k, x, y) \
    asm("add.rz." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k] = r; \
    asm("add.rm." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 1] = r; \
    asm("sub.rp." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 2] = r; \
    asm("sub.rm." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 3] = r; \
    asm("mul.rz." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 4] = r; \
    asm("mul.rm." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 5] = r; \
    asm("mul.rp." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 6] = r; \
    asm("div.rz." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 7] = r; \
    asm("div.rm." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 8] = r; \
    asm("div.rp." T " %0, %1, %2;" : "=" c(r) : c(x), c(y)); o[k + 9] = r;
__global__ void directed_f32(const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float r;
    o += i * 10;
    OPS("f32", "f", 0, a[i], b[i])
}
__global__ void directed_f64(const double* a, const double* b, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double r;
    o += i * 10;
    OPS("f64", "d", 0, a[i], b[i])
}
"""


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_directed_rounding_gives_the_same_bits_natively(dt, monkeypatch):
    """add, sub, mul and div rounded toward zero, down and up (interval arithmetic's __dadd_rd and
    friends): exact and inexact results, zero sums (-0 when rounding down), products and quotients
    that underflow or overflow, subnormals, infinities and NaN give the same bits both ways, and
    none of them is interpreted (lanes that need the interpreter's rules bail out to it)."""
    m = cudalab.compile(DIRECTED)
    rng = np.random.default_rng(11)
    ut = np.uint32 if dt == np.float32 else np.uint64
    edges = np.array(F32_EDGE_BITS if dt == np.float32 else F64_EDGE_BITS, ut).view(dt)
    edges = np.concatenate([edges, np.array([3, -1e-30, 1e30], dt)])
    pairs = len(edges) ** 2                       # every pair of edge values: overflow, inf - inf, x / 0, ...
    n = 768
    big = 120 if dt == np.float32 else 1000
    wide = (rng.standard_normal(n) * 2.0 ** rng.integers(-big, big, n)).astype(dt)
    a = np.concatenate([np.repeat(edges, len(edges)), wide[:n - pairs]])
    b = np.concatenate([np.tile(edges, len(edges)), rng.standard_normal(n - pairs).astype(dt)])
    b[-8:] = a[-8:]                               # x - x: an exact zero, -0 when rounding down
    b[-16:-8] = -a[-16:-8]
    b[-24:-16] = a[-24:-16] * dt(1 + 2.0 ** -20)  # near cancellation
    kernel = "directed_f32" if dt == np.float32 else "directed_f64"
    reruns = []
    run_on_interpreter = compiled._Runner._interpret
    monkeypatch.setattr(compiled._Runner, "_interpret", lambda self, ex: reruns.append(self) or
                        run_on_interpreter(self, ex))

    def run(x, y):
        o = np.zeros(len(x) * 10, dt)
        getattr(m, kernel)[len(x) // 64, 64](x, y, o)
        return o.tobytes()
    got = both_tiers(lambda: run(a, b), monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1], dt).reshape(n, 10)
    assert np.signbit(o[-1, 3]) and not np.signbit(o[-1, 2])     # x - x: -0 rounding down, +0 up
    q = o[pairs:n - 24]                           # random quotients: rounded down and up, one ulp apart
    assert (np.nextafter(q[:, 8], dt(np.inf)) == q[:, 9]).all()
    if dt == np.float64:       # a NaN made from numbers and float64 underflows bail out; the rest is native
        assert reruns
        reruns.clear()
        x = np.array([0, -0.0, 1, -3, 1e300, -1e300, np.finfo(dt).max, np.inf, -np.inf, np.nan], dt)
        y = np.array([1, -3, 1e150, -0.7, 5e-5, 7, np.inf, 2.5, 1e10, np.nan], dt)   # (x / inf is 0)
        xs, ys = np.repeat(x, len(y)), np.tile(y, len(x))
        x2, y2 = np.resize(xs, 128), np.resize(ys, 128)
        y2[np.isinf(y2) & (np.isinf(x2) | (x2 == 0))] = 2.0                   # (inf - inf, 0 * inf: NaN)
        got = both_tiers(lambda: run(x2, y2), monkeypatch)
        assert got["compiled"] == got["interp"]
    assert not reruns
    assert_native(m, kernel, ("add", "sub", "mul", "div"))


NAN_F64 = r"""
__global__ void nan_f64(const double* a, const double* b, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    o[i * 3] = a[i] + b[i];
    o[i * 3 + 1] = a[i] - b[i];
    o[i * 3 + 2] = a[i] * b[i];
}
"""


def test_a_float64_nan_operand_passes_through_natively_quieted(monkeypatch):
    """add, sub and mul.f64 with a NaN operand (a quiet one, a signalling one, a negative one: the
    empty intervals of interval arithmetic) give that NaN quieted, of two NaNs b's, the operand loaded
    later (an H100 gives 0x7ff8000000000000 and 0xfff8000000000123 for rows 11 and 9), natively: no group is rerun in the interpreter. A NaN made from numbers (inf - inf)
    still is."""
    m = cudalab.compile(NAN_F64)
    nans = np.array([0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123], np.uint64).view(np.float64)
    n = 64
    a = np.random.default_rng(12).standard_normal(n)
    b = a[::-1].copy()
    a[:3], b[3:6], a[6:9], b[6:9] = nans, nans, nans, nans                 # one NaN; the same NaN twice
    a[9:12], b[9:12] = nans, nans[::-1]                                    # two NaNs: b's
    reruns = []
    run_on_interpreter = compiled._Runner._interpret
    monkeypatch.setattr(compiled._Runner, "_interpret", lambda self, ex: reruns.append(self) or
                        run_on_interpreter(self, ex))

    def run(x, y):
        o = np.zeros(n * 3)
        m.nan_f64[1, n](x, y, o)
        return o.tobytes()
    got = both_tiers(lambda: run(a, b), monkeypatch)
    assert got["compiled"] == got["interp"] and not reruns
    assert_native(m, "nan_f64", ("add", "sub", "mul"))
    o = np.frombuffer(got["interp"][1], np.uint64).reshape(n, 3)
    assert o[1].tolist() == [0x7FF8000000000001] * 3 and o[3, 1] == 0x7FF8000000000000
    assert o[11].tolist() == [0x7FF8000000000000] * 3 and o[9].tolist() == [0xFFF8000000000123] * 3
    a2, b2 = a.copy(), b.copy()
    a2[20], b2[20] = np.inf, np.inf                                          # inf - inf: the interpreter's
    got = both_tiers(lambda: run(a2, b2), monkeypatch)
    assert got["compiled"] == got["interp"] and reruns


ONE_THREAD_LOOP = r"""
__global__ void serial_sum(const float* x, float* out, int n) {   // course code's k<<<1, 1>>>
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += x[i % 1024] * 0.5f + (i & 7);
    out[0] = s;
}
"""


def test_one_thread_looping_long_moves_to_native_code_in_the_middle_of_its_launch(tmp_path, monkeypatch):
    # a grid of one block is one batch: the per-batch choice alone kept it interpreted to the end
    # (34,000 instructions a second); now the batch goes on natively from the loop's next turn
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))          # nothing compiled yet
    monkeypatch.setattr(compiled, "AUTO_SECONDS", 0.01)
    moved = []
    real = compiled.upgrade_later

    def spy(*args, **kwargs):
        ask = real(*args, **kwargs)

        def asked(now):
            native = ask(now)
            if native is not None:
                moved.append(native)
            return native
        return ask and asked

    monkeypatch.setattr(compiled, "upgrade_later", spy)
    x = np.random.default_rng(1).random(1024, dtype=np.float32)
    outs = {}
    for tier in ("auto", "interp"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        out = np.zeros(1, np.float32)
        rec = cudalab.compile(ONE_THREAD_LOOP).serial_sum[1, 1](x, out, 6000)
        outs[tier] = (out.tobytes(), rec.thread_instructions)
    assert moved                                           # the auto run left the interpreter mid-launch
    assert outs["auto"] == outs["interp"]                  # the same bytes and the same instruction count


ONE_BLOCK_BARRIER_LOOP = r"""
__global__ void relax(float* v, int turns) {
    __shared__ float s[130];
    int t = threadIdx.x + 1;
    s[t] = v[t - 1];
    if (t == 1) { s[0] = 0.0f; s[129] = 1.0f; }
    for (int k = 0; k < turns; ++k) {            // one block, many turns: one batch, looping long
        __syncthreads();
        float next = 0.5f * (s[t - 1] + s[t + 1]);
        __syncthreads();
        s[t] = next;
    }
    v[t - 1] = s[t];
}
"""


def test_a_block_looping_long_around_barriers_moves_to_native_code_at_the_loop_head(tmp_path, monkeypatch):
    """The native code is ready mid-launch; the interpreter is inside the loop by then, and the
    region's loop head is a second way into it (regions.Runner.entry)."""
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))          # nothing compiled yet
    monkeypatch.setattr(compiled, "AUTO_SECONDS", 0.01)
    from cudalab.emulator import regions
    entered = []
    real = regions.Runner._run
    monkeypatch.setattr(regions.Runner, "_run", lambda self, *a: entered.append(self.entry) or real(self, *a))
    x = np.random.default_rng(2).random(128, np.float32)
    outs = {}
    for tier in ("auto", "interp"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        v = x.copy()
        rec = cudalab.compile(ONE_BLOCK_BARRIER_LOOP).relax[1, 128](v, np.int32(3000))
        outs[tier] = (v.tobytes(), rec.thread_instructions)
    start = one_cut_region(ONE_BLOCK_BARRIER_LOOP, "relax")[0]
    assert entered and entered[0] != start                 # went native at the loop head, mid-launch
    assert outs["auto"] == outs["interp"]


FTZ_FORMS = r"""
__global__ void ftz_forms(const float* a, const float* b, const float* c, float* o, unsigned* p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = a[i], y = b[i], z = c[i], r;
    unsigned u;
    o += i * 9;
    asm("add.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[0] = r;
    asm("sub.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[1] = r;
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[2] = r;
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(y), "f"(z)); o[3] = r;
    asm("min.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[4] = r;
    asm("max.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y)); o[5] = r;
    asm("neg.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); o[6] = r;
    asm("abs.ftz.f32 %0, %1;" : "=f"(r) : "f"(y)); o[7] = r;
    asm("{ .reg .f32 t; mul.ftz.f32 t, %1, %2; add.ftz.f32 %0, t, %3; }" : "=f"(r) : "f"(x), "f"(y), "f"(z));
    o[8] = r;
    asm("{ .reg .pred q; setp.lt.ftz.f32 q, %1, %2; selp.u32 %0, 1, 0, q; }" : "=r"(u) : "f"(x), "f"(y));
    p[i] = u;
}
"""


def tiny_floats(rng, n):
    """float32 values around the subnormal range (exponent field 0 to 2, either sign): where .ftz acts."""
    bits = (rng.integers(0, 3, n, dtype=np.uint32) << 23) | rng.integers(0, 1 << 23, n, dtype=np.uint32)
    return (bits | (rng.integers(0, 2, n, dtype=np.uint32) << 31)).view(np.float32)


def test_flush_to_zero_float32_forms_give_the_same_bits_natively(monkeypatch):
    """add, sub, mul, fma, min, max, neg, abs and setp with .ftz (what nvcc --use_fast_math writes on
    every float32 operation), and a mul.ftz that ptxas fuses into the add.ftz after it: subnormal
    sources and results become signed zeros, results that round up to the smallest normal from a
    value .ftz flushes are flushed (the interpreter decides those lanes), the same bits both ways."""
    m = cudalab.compile(FTZ_FORMS)
    rng = np.random.default_rng(11)
    n = 256
    as_f32 = lambda bits: np.array(bits, np.uint32).view(np.float32)        # noqa: E731
    # (a, b, c): the H100's two rounding edges (alu.below_tiny), then a subnormal plus zero
    a = np.concatenate([as_f32([0x00800000, 0x00800000, 0x00000001]), as_f32(F32_EDGE_BITS), tiny_floats(rng, 109),
                        rng.standard_normal(n - 128).astype(np.float32)])
    b = np.concatenate([as_f32([0x3F7FFFFF, 0xAEDBE6FF, 0x80000000]), tiny_floats(rng, 125),
                        rng.standard_normal(n - 128).astype(np.float32)])
    c = np.concatenate([as_f32([0, 0x00800000, 0]), tiny_floats(rng, n - 3)])

    def run():
        o, p = np.zeros(n * 9, np.float32), np.zeros(n, np.uint32)
        m.ftz_forms[n // 64, 64](a, b, c, o, p)
        return o.tobytes() + p.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1][:n * 36], np.uint32).reshape(n, 9)
    assert o[0, 2] == 0 and o[1, 3] == 0x00800000           # mul flushed; fma rounds to the smallest normal
    assert o[2, 0] == 0 and o[2, 6] == 0x80000000           # a subnormal plus +0 is +0; -(flushed) is -0
    assert_native(m, "ftz_forms", ("add", "sub", "mul", "fma", "min", "max", "neg", "abs", "setp"))


FAST_MATH = r"""
__global__ void weighted(const float* x, const float* w, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += x[k] * w[(k + i) % n];
    o[i] = fmaxf(s, x[i]) - 0.5f * x[i];
}
"""


def test_a_kernel_built_with_fast_math_runs_natively_with_the_same_bytes(monkeypatch):
    """nvcc --use_fast_math (Ansorge's book builds every program so) makes each float32 operation .ftz:
    the loop's fma and the max and sub after it run as native code, not one interpreted instruction
    at a time, with the interpreter's bytes (subnormal inputs included)."""
    m = cudalab.compile(FAST_MATH, options=("--use_fast_math",))
    assert "fma.rn.ftz.f32" in m.ptx
    rng = np.random.default_rng(12)
    n = 128
    x = np.concatenate([tiny_floats(rng, 32), rng.standard_normal(n - 32).astype(np.float32)])
    w = np.concatenate([rng.standard_normal(n - 32).astype(np.float32), tiny_floats(rng, 32)])

    def run():
        o = np.zeros(n, np.float32)
        m.weighted[2, 64](x, w, o, np.int32(n))
        return o.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    assert_native(m, "weighted", ("fma", "max"))


BIASED_SUMS = r"""
__device__ float BIAS[4];
__global__ void NAME(const float* x, float* out, int n) {
    __shared__ float s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int k = 0; k < n; k++) v += x[(i + k) % 128];
    s[threadIdx.x] = v;
    __syncthreads();
    out[i] = s[63 - threadIdx.x] + BIAS[i % 4];
}
"""


def test_the_same_kernel_under_other_names_loads_the_native_code_built_before(tmp_path, monkeypatch):
    """Native code is found by the kernel's body, not its names (compiled.fingerprint): a second
    program whose kernel, variable and labels are named otherwise (one more kernel before it, as
    CUB's kernels are named after the architectures a build asks for) runs the code the first
    built, reading its own variable by name."""
    first = BIASED_SUMS.replace("NAME", "first_sums")
    second = ("__global__ void before(int* p) { if (p[0] > 1) p[0] = 0; }\n"
              + BIASED_SUMS.replace("NAME", "second_sums").replace("BIAS", "OFFSET"))
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    built = []
    real = compiled.plan
    monkeypatch.setattr(compiled, "plan", lambda *a: built.append(a[0].func.name) or real(*a))
    x = np.random.default_rng(5).random(128, np.float32)
    outs = []
    for source, kernel, variable, bias in ((first, "first_sums", "BIAS", 1.0), (second, "second_sums", "OFFSET", 100.0)):
        m = cudalab.compile(source)
        m.get_global(variable).copy_to_device(np.full(4, bias, np.float32))
        out = np.zeros(128, np.float32)
        m.get_kernel(kernel)[2, 64](x, out, np.int32(5))
        outs.append(out)
    assert len(built) == 1 and "first_sums" in built[0]           # the second program built nothing
    sums = np.array([sum(x[(i + k) % 128] for k in range(5)) for i in range(128)], np.float32)
    want = sums.reshape(2, 64)[:, ::-1].ravel()
    assert np.allclose(outs[0], want + 1.0) and np.allclose(outs[1], want + 100.0)


SCALE = r"""
__global__ void scale(const float* x, float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}
"""


def test_a_big_module_keeps_each_lane_loop_as_written(monkeypatch):
    """A group's native function loops over the active lanes. LLVM's -O1 pipeline unrolled that
    loop four times: copies that code generation then had to compile, which in a module of
    megabytes of IR (CUB's kernels) cost more than they gained (compiled.UNROLL_IR_BYTES; CUB's
    radix histogram kernel built in 14.8 s of CPU, 9.0 s without). Here every module counts as
    big: after the passes, the index arithmetic ``blockIdx.x * blockDim.x`` is there at most as
    often as generated."""
    from llvmlite import ir
    from cudalab.emulator.engine import DeviceMemory, Program
    monkeypatch.setenv("CUDALAB_REGIONS", "0")             # groups only: each a loop over the lanes
    monkeypatch.setattr(compiled, "UNROLL_IR_BYTES", 0)
    m = cudalab.compile(SCALE)
    prog = Program(m.ptx_module, DeviceMemory())
    sink = ir.Module()
    compiled.plan(prog.function(m.get_kernel("scale").mangled), prog.module, sink)
    generated = str(sink)
    optimized = str(compiled._passes(compiled._jit(), generated, gangs=False)[0])
    assert "llvm.loop.unroll" not in optimized
    assert 0 < optimized.count(" = mul ") <= generated.count(" = mul ")


LANE_ZERO_STORE = r"""
__global__ void warp_totals(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    int t = threadIdx.x;
    if (GUARD) out[i / STEP] = v + (t & 3);
}
"""


@pytest.mark.parametrize("guard, step, block, n", [
    ("(threadIdx.x & 31) == 0", 32, 256, 2048), ("!(threadIdx.x & 31)", 32, 96, 500), ("(t & 7) == 0", 8, 64, 640),
    ("t % warpSize == 0", 32, (32, 2), 1024), ("t % 32 == 0", 32, 256, 2047), ("t % 16 == 0", 16, 128, 1000)])
def test_a_warp_first_lane_guard_after_shuffles_runs_only_those_lanes_with_the_same_bytes_and_counts(
        guard, step, block, n, monkeypatch, tmp_path):
    """``if ((threadIdx.x & 31) == 0) out[w] = v`` after a shuffle reduction: the guard starts a
    segment of its own (compiled._guard_splits), whose native loop steps through every 32nd lane
    only (regions.tid_guard's lane mask; regiongen._narrowed), the others counted at once. Masks and
    remainders (``% warpSize`` is a ``rem`` by PTX's WARP_SZ), blocks of 8, 4 and 3 warps, a 2-D block
    (where every lane runs the segment) and grids whose last warp reads past n give the
    interpreter's bytes and instruction counts, with no lane handed to the interpreter."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program
    source = LANE_ZERO_STORE.replace("GUARD", guard).replace("STEP", str(step))
    m = cudalab.compile(source)
    df = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("warp_totals").mangled)
    (s, e), = cut_spans(source, "warp_totals")
    live_in = compiled.liveness(df)[0]
    cut_pcs = [p for p in regions.cuts(df, {}) if s <= p < e]
    bounds = regions.skeleton(df.code, s, e, cut_pcs)[0]
    uniform = regions.block_uniform(df, s, e, bounds)
    split = compiled._guard_splits(df, s, e, bounds, uniform, live_in)
    guards = [regions.tid_guard(df, a, z, uniform, live_in) for a, z in regions.segments(s, e, split)]
    assert [g["step"] for g in guards if g] == [step]
    threads = block if isinstance(block, int) else block[0] * block[1]
    blocks = (n + threads - 1) // threads
    x = np.random.default_rng(7).integers(-1000, 1000, blocks * threads).astype(np.int32)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    stops = stopped_lanes(monkeypatch)

    def run():
        out = cudalab.to_device(np.full(blocks * threads // step, -1, np.int32))
        rec = m.warp_totals[blocks, block](cudalab.to_device(x[:n]), out, np.int32(n))
        return out.copy_to_host().tobytes(), rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    assert stops and not any(stops)


GUARDED_ADD = r"""
__global__ void guarded_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def test_pointers_a_kernel_reads_under_a_branch_load_once_so_neighbouring_lanes_access_one_vector():
    """``if (i < n) c[i] = a[i] + b[i]``: PTX loads the parameters a, b and c under the branch.
    Loaded there, each lane's load was conditional, LLVM could not hoist it out of the lane loop,
    and the three accesses became gathers and a scatter of unrelated pointers; loaded once in the
    entry block (llvmgen._param_value), they are masked vector loads and stores of neighbouring
    elements."""
    from llvmlite import ir
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(GUARDED_ADD)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel("guarded_add").mangled)
    sink = ir.Module(name="guarded_add")
    groups, regions = compiled.plan(df, prog.module, sink)
    assert regions and regions[0].one_d
    mod, _ = compiled._passes(compiled._jit(), str(sink), False)
    one_d = str(mod.get_function(regions[0].one_d))
    assert "masked.load" in one_d and "masked.store" in one_d
    assert "masked.gather" not in one_d and "masked.scatter" not in one_d


def test_a_guarded_load_counts_its_lanes_instructions_in_32_bits():
    """``int v = i < n ? x[i] : 0`` before a shuffle reduction, in 1-D blocks: the lanes'
    instruction counts differ with the guard, so the segment's lane loop sums them and keeps their
    maximum (the launch's thread-instruction count and longest path). In 64 bits a vector held 8
    lanes' counts; a lane's count in a phase is at most the phase's length, so they are kept in 32
    bits, 16 lanes a vector, and added to the call's 64-bit totals after the loop (regiongen
    ``_phase_lanes``). The counts stay the interpreter's (the shuffle tests compare them)."""
    from llvmlite import ir
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(LANE_ZERO_STORE.replace("GUARD", "(t & 31) == 0").replace("STEP", "32"))
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel("warp_totals").mangled)
    sink = ir.Module(name="warp_totals")
    groups, regions = compiled.plan(df, prog.module, sink)
    mod, _ = compiled._passes(compiled._jit(), str(sink), False)
    one_d = "".join(str(mod.get_function(r.one_d)) for r in regions if r.one_d)
    assert re.search(r"reduce\.add\.v(8|16)i32", one_d) and not re.search(r"reduce\.(add|smax)\.v\d+i64", one_d)


def test_a_kernel_whose_native_pace_is_known_starts_without_a_sample_batch(monkeypatch, tmp_path):
    """A grid of several native batches starts with a small sample batch (pace.py), whose estimate
    can stop a launch that would clearly outlast the watchdog. Once the kernel's native code has run
    a whole launch, its pace is known: a grid far within the watchdog at that pace skips the sample
    (engine._pace_known) and runs as two batches, not three, with the same bytes; a grid that
    would take a good share of the watchdog at that pace keeps its sample."""
    from cudalab.emulator import engine
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile(GUARDED_ADD)
    n = 1 << 20
    a, b = np.random.default_rng(3).random((2, n), np.float32)
    batches = []
    real = engine.BatchInfo.__init__

    def counting(self, first, nb, *rest):
        batches.append(nb)
        real(self, first, nb, *rest)
    monkeypatch.setattr(engine.BatchInfo, "__init__", counting)
    outs = []
    for _ in range(2):
        batches.clear()
        c = cudalab.to_device(np.zeros(n, np.float32))
        m.guarded_add[n // 256, 256](a, b, c, np.int32(n))
        outs.append((list(batches), c.copy_to_host()))
    assert len(outs[0][0]) == 3 and outs[0][0][0] < outs[0][0][1]       # a sample, then two full batches
    assert len(outs[1][0]) == 2 and sum(outs[1][0]) == n // 256
    assert np.array_equal(outs[1][1], a + b) and np.array_equal(outs[0][1], outs[1][1])
    monkeypatch.setattr(engine, "KNOWN_PACE_SHARE", 1e-9)
    batches.clear()
    m.guarded_add[n // 256, 256](a, b, cudalab.to_device(np.zeros(n, np.float32)), np.int32(n))
    assert len(batches) == 3


def test_a_build_that_finished_during_the_first_batch_is_counted_on_for_the_rest(tmp_path, monkeypatch):
    """A small kernel's native code often builds inside the launch's first, small batch. That batch ran
    interpreted, so its pace says nothing of the batches that follow: 100 million float atomicAdds
    (CodeSamples' 08_Reductions, 1 s native) were stopped as needing 17 minutes. Here the first batch
    is made slow on purpose and the build finishes before it ends: the launch must go on natively."""
    from cudalab.emulator import engine
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))          # nothing built before
    monkeypatch.setenv("CUDALAB_TIER", "auto")
    monkeypatch.setattr(compiled, "_build_in_background", lambda program, df, st: setattr(st, "building", True))
    interpreted = engine.run_function
    batches = []

    def first_batch_slow_and_built_meanwhile(ex, df, *args, **kwargs):
        result = interpreted(ex, df, *args, **kwargs)
        st = compiled._tier(df)
        if not batches and st.building:
            batches.append(df)
            spin = time.thread_time() + 0.5
            while time.thread_time() < spin:         # an interpreted batch 0.5 s long ...
                pass
            compiled._compile(ex.program, df, st)   # ... during which LLVM finished
            st.building = False
        return result
    monkeypatch.setattr(engine, "run_function", first_batch_slow_and_built_meanwhile)
    m = cudalab.compile("__global__ void inc(int* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1; }")
    cudalab.set_watchdog(1.0)         # at the first batch's pace, the grid needs several seconds
    try:
        x = cudalab.to_device(np.zeros(4096 * 256, np.int32))
        m.inc[4096, 256](x)
    finally:
        cudalab.set_watchdog(10)
    assert batches and compiled._tier(batches[0]).fused
    assert np.all(x.copy_to_host() == 1)


TILED_PRODUCT = r"""
#define TILE 16
__global__ void product(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = sum;
}
"""


def test_a_module_of_cub_sort_size_keeps_the_loop_vectorizer():
    """CUB's onesweep sort kernel is 9.7 MB of IR. Over 4 MB it was built with the short pass list,
    without -O1's loop vectorizer (or inliner), and each pass of a 2^22-pair sort took 0.81 s of CPU
    instead of 0.33 s; cuda-samples' radixSortThrust launches it 400 times. A module that size now gets -O1
    (compiled.BIG_IR_BYTES): here a tiled product's IR, padded with comment lines to 9 MB, still has
    its lanes' loops vectorized as when it is small."""
    from llvmlite import ir
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(TILED_PRODUCT)
    prog = Program(m.ptx_module, DeviceMemory())
    sink = ir.Module()
    compiled.plan(prog.function(m.get_kernel("product").mangled), prog.module, sink)
    small = str(sink)
    big = small + ";\n" * (9 << 19)                     # 9 MB of IR text, as CUB's kernels
    assert len(big) > 9 << 20
    for text in (small, big):
        assert "vector.body" in str(compiled._passes(compiled._jit(), text, gangs=False)[0])


OFFSET_ROWS = r"""
__global__ void offset_rows(const float* x, float* out, unsigned a, unsigned b, int c) {
    __shared__ float s[64];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = x[(long long)(int)(i + a) - (long long)(int)(i + b) + (int)i + c];
    __syncthreads();
    out[2 * i + 1] = s[63 - threadIdx.x];
}
"""


def test_which_addresses_are_affine_in_the_thread_index():
    """regions.affine: the slope in bytes per thread of each access the whole-block check takes,
    where it is a constant: the x read steps by 4, ``s[threadIdx.x]`` by 4, the mirrored
    ``s[63 - threadIdx.x]`` by -4 and ``out[2 * i + 1]`` by 8. Values widened to 64 bits on the way
    (``(long long)(int)(i + a)``, each a line in threadIdx.x modulo 2^32) are checked at run time:
    neither may wrap between the first and the last thread."""
    from cudalab.emulator import regions
    from cudalab.emulator.engine import DeviceMemory, Program
    m = cudalab.compile(OFFSET_ROWS)
    df = Program(m.ptx_module, DeviceMemory()).function(m.get_kernel("offset_rows").mangled)
    (s, e), = cut_spans(OFFSET_ROWS, "offset_rows")
    code = df.code
    accesses, part = regions.prechecks(code, [p for p in range(s, e) if code[p][2].opcode != "bar"], df.param_offsets)
    slopes, widened = regions.affine([code[p][2] for p in part], accesses, code, set())
    assert {code[p][2].text.split()[0]: k for p, k in slopes.items()} == {
        "ld.global.f32": 4, "st.shared.f32": 4, "ld.shared.f32": -4, "st.global.f32": 8}
    assert len(widened) >= 2
    shl = dataclasses.replace(code[s][2], opcode="shl", mods=("b32",), guard=None,
                              operands=(("reg", "%r9", False), ("sreg", "tid", "x"), ("imm", 3, "int")))
    by_reg = dataclasses.replace(shl, opcode="mul", mods=("lo", "s32"),
                                 operands=(("reg", "%r9", False), ("sreg", "tid", "x"), ("reg", "%r1", False)))
    masked = dataclasses.replace(shl, opcode="and", operands=(("reg", "%r9", False), ("sreg", "tid", "x"), ("imm", 7, "int")))
    assert regions.affine([shl], [], code, set()) == ({}, {})
    assert regions.affine([by_reg], [], code, {"%r1"}) is None          # threadIdx.x times a runtime value
    assert regions.affine([masked], [], code, set()) is None            # not a line


@pytest.mark.parametrize("a, b, c, thread", [(0, 0, 0, None), (2**31 - 40, 2**31 - 20, 20, 20)])
def test_affine_addresses_are_checked_at_the_first_and_last_thread_unless_they_wrap(a, b, c, thread, monkeypatch,
                                                                                    tmp_path):
    """In a 1-D block the whole-block check of an address that is a line in threadIdx.x takes the
    first and the last thread's (regiongen._closed_form) instead of every thread's. With a and b
    near INT_MAX, ``(int)(i + b)`` wraps at thread 20 and ``(int)(i + a)`` at thread 40: threads 0
    and 63 of block 0 read x[0] and x[63], while threads 20 to 39 read 2^32 elements further on.
    The wrap check of the widened values sends the block to the check loop and the interpreter,
    where memcheck names line 5 and thread 20, as the interpreter alone does."""
    from cudalab.emulator import regions
    real, lines = regions.affine, []

    def recording(*args):
        got = real(*args)
        lines.append(got is not None)
        return got
    monkeypatch.setattr(regions, "affine", recording)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    name = f"offset_rows_{a}"                  # (a kernel this process has not built)
    m = cudalab.compile(OFFSET_ROWS.replace("offset_rows", name))
    x = np.random.default_rng(16).random(256, np.float32)

    def run():
        out = cudalab.to_device(np.zeros(512, np.float32))
        rec = m.get_kernel(name)[4, 64](x, out, np.uint32(a), np.uint32(b), np.int32(c))
        return out.copy_to_host().tobytes(), rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert any(lines)
    if thread is None:
        want = np.zeros(512, np.float32)
        want[1::2] = x.reshape(4, 64)[:, ::-1].ravel()
        assert got["compiled"][1][0] == want.tobytes()
    else:
        assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 5" in got["compiled"][0]
        assert f"thread ({thread},0,0) in block (0,0,0)" in got["compiled"][0]


def test_a_region_keeps_its_scratch_array_for_the_next_call_unless_lanes_stopped(monkeypatch, tmp_path):
    """Each native region call gets an int64 array for its counters and for the rows of lanes that
    stop (tens of megabytes of address space for a batch of 2^19 lanes, which only stopped lanes
    touch). A call where no lane stopped leaves it to the next one (regions.Runner._scratch); a call
    where lanes stopped (here the fifth block, whose x[i] runs past the end with n too big) lets it
    go, not to hold the pages their rows were written to. The bytes are the interpreter's either way."""
    import gc
    from cudalab.emulator import regions
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    source = WARP_SUMS.replace("warp_sums", "warp_sums_kept")       # (a kernel this process has not built)
    m = cudalab.compile(source)
    x = np.random.default_rng(17).integers(-1000, 1000, 1024).astype(np.int32)

    def whole_kernel():
        runner, = [o for o in gc.get_objects() if isinstance(o, regions.Runner) and o.entry == 0
                   and "warp_sums_kept" in o.plain.func.name]
        return runner

    def launch(n):
        out = np.zeros(2560, np.int32)
        m.warp_sums_kept[5, 256](x, out, np.int32(n))
        return out
    want = {n: launch(n) for n in (1024, 1088)}     # the interpreter's (x[1024..1087]: in x's padding)
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    assert np.array_equal(launch(1024), want[1024])
    kept = whole_kernel().spare
    assert len(kept) == 1
    first = kept[0]
    assert np.array_equal(launch(1024), want[1024])
    assert len(kept) == 1 and kept[0] is first
    assert np.array_equal(launch(1088), want[1088])
    assert not kept
