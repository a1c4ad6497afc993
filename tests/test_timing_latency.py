"""The timing model's latency side: a warp waits for each result it needs, so a kernel of long dependent
chains with few warps per scheduler is latency-bound, and kernels of other streams fill its wait.

An H100 ran tools/latency_gpu_probe.cu (its output: tools/latency_gpu_probe_h100.txt): every thread runs
a chain of dependent steps; one kernel alone, four in one stream, four on four streams. A lone warp's
cycles a step, and the four streams' speed-up over one stream, at 1 to 16 warps per scheduler:

=========================  ===========  ======  ======  ======  ======  ======
chain                      cycles/step  1       2       4       8       16
=========================  ===========  ======  ======  ======  ======  ======
xor, add                   11.4         1.95    1.37    1.09    1.06    1.03
xor, multiply              11.2         2.04    1.38    1.09    1.06    1.03
float fma                  5.2          2.53    1.67    1.10    1.09    1.05
shared pointer chase       30.6         3.24    3.17    1.81    1.01    1.01
global (256 MB) chase      751          3.91    3.91    3.89    2.03    1.01
=========================  ===========  ======  ======  ======  ======  ======

Before the latency side the model called all of these issue-bound (or memory-bound): the multiply-xor
chain at one warp per scheduler came out almost 3x too fast, the global chase 14x, and four streams of
the shared and global chases 1.0x to 2.0x faster than one. Now (timing18) the timeline says, for the
same table: 2.04 1.40 1.01 1.00 1.00; 2.04 1.40 1.01 1.00 1.00; 2.07 1.41 1.02 1.01 1.00;
3.69 3.69 1.98 1.04 1.00; 3.86 3.86 3.76 1.96 1.00. The histogram of a course's stream assignment (four chunks, each a copy in, 115 blocks of 256
threads hashing a character with 5,000 multiply-xor steps, a copy out) ran 1.69x to 1.90x faster on four
streams on the H100.
"""
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cudalab.device.profiles import get
from cudalab.device.timeline import Timeline, kernel_timing, place_blocks
from cudalab.ptx.chains import chain_cycles, loop_cycles
from cudalab.ptx.parser import parse
from cudalab.runtime.record import LaunchRecord

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tools" / "latency_gpu_probe.cu"
H100 = get("H100")


def gpu_cases():
    """The probe's 'chain' lines: {(kernel, threads, blocks per SM): {alone_ms, serial_ms, streams_ms, ...}}."""
    cases = {}
    for line in (ROOT / "tools" / "latency_gpu_probe_h100.txt").read_text().splitlines():
        if line.startswith(("chain ", "hist ")):
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            numbers = {k: float(v) for k, v in fields.items() if re.fullmatch(r"[\d.]+", v)}
            if line.startswith("chain"):
                cases[fields["kernel"], int(fields["threads"]), int(fields["blocks_per_sm"])] = numbers
            else:
                cases.setdefault("hist", []).append(numbers)       # three runs
    return cases


GPU = gpu_cases()


@pytest.fixture(scope="module")
def kernels():
    """The probe's kernels compiled for the emulator (the part of the file before its host side)."""
    import cudalab
    return cudalab.compile(PROBE.read_text().split("// ---- the host side")[0])


def per_thread_instructions(kernels, name, steps_arg, extra=()):
    """(a, b): a thread of ``name`` runs a + b x steps instructions (two emulated launches of one warp)."""
    counts = []
    for steps in (64, 128):
        rec = kernels.get_kernel(name).launch((1,), (32,), steps_arg(steps) + list(extra))
        counts.append(rec.thread_instructions / 32)
    b = (counts[1] - counts[0]) / 64
    return counts[0] - 64 * b, b, rec


STEPS = {"int": 20000, "imul": 20000, "ffma": 20000, "shared": 10000, "global": 1000}
NAMES = {"int": "chain_int", "imul": "chain_imul", "ffma": "chain_ffma", "shared": "chain_shared",
         "global": "chain_global"}


@pytest.fixture(scope="module")
def counted(kernels):
    """kernel -> (a, b, a launch record of it): its instructions a thread, and its PTX's chains."""
    import cudalab
    out = cudalab.to_device(np.zeros(1, np.uint32))
    nxt = cudalab.to_device(np.arange(32, dtype=np.uint32))       # each lane's chase stays on its word
    found = {}
    for kind, name in NAMES.items():
        extra = [nxt, out] if kind == "global" else [out]
        found[kind] = per_thread_instructions(kernels, name, lambda s: [np.int32(s)], extra)
    return found


def launch_record(counted, kind, threads, per_sm, chains=True):
    a, b, rec = counted[kind]
    blocks = per_sm * H100.sms
    return LaunchRecord(NAMES[kind], (blocks, 1, 1), (threads, 1, 1), 0, "emu",
                        thread_instructions=int((a + b * STEPS[kind]) * blocks * threads),
                        global_bytes_per_instruction=rec.global_bytes_per_instruction,
                        chain_cycles=rec.chain_cycles if chains else (),
                        static_shared=4096 if kind == "shared" else 0)


def timeline_ms(rec, streams):
    """Four launches of ``rec`` on ``streams`` (one stream repeated, or four) between legacy-stream events."""
    t = kernel_timing(rec, H100)
    tl = Timeline("H100")
    tl.record_event("start", 0)
    for s in streams:
        tl.kernel(rec.kernel, t.us, stream=s, blocks=t.blocks, per_sm=t.per_sm, share=t.share)
    tl.record_event("stop", 0)
    return (tl.event_time("stop") - tl.event_time("start")) / 1e3


def estimates(counted, kind, threads, per_sm, chains=True):
    rec = launch_record(counted, kind, threads, per_sm, chains)
    alone = kernel_timing(rec, H100).us / 1e3
    serial, split = timeline_ms(rec, [1] * 4), timeline_ms(rec, [1, 2, 3, 4])
    return {"alone_ms": alone, "serial_ms": serial, "streams_ms": split, "speedup": serial / split}


SHAPES = [(128, 1), (256, 1), (256, 2), (256, 4), (256, 8)]


def test_a_lone_warp_waits_out_each_step_of_its_chain():
    """The probe's loops, unrolled four times by NVRTC: a step's instructions (with a quarter of the loop's
    counter, compare and branch) take what its chain's latencies add up to, as on the H100."""
    ptx = parse(_ptx_of_probe())
    per_step = {"int": 15 / 4, "imul": 15 / 4, "ffma": 7 / 4, "shared": 15 / 4, "global": 15 / 4}
    for kind, name in NAMES.items():
        f = next(f for n, f in ptx.functions.items() if name in n)
        cycles = chain_cycles(f)[1] * per_step[kind]
        assert cycles == pytest.approx(GPU[(kind, 128, 1)]["cycles_per_step"], rel=0.12), kind


def _ptx_of_probe():
    import cudalab
    return cudalab.compile(PROBE.read_text().split("// ---- the host side")[0]).ptx


def test_a_copy_loop_waits_for_each_load_before_its_store_and_the_next_load_waits_for_the_store():
    ptx = parse(r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry copy(.param .u64 a, .param .u64 b, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u32 %r2, [n];
    mov.u32 %r1, %tid.x;
$L_loop:
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %r3, [%rd4];
    add.s64 %rd5, %rd2, %rd3;
    st.global.f32 [%rd5], %r3;
    add.s32 %r1, %r1, 1024;
    setp.lt.u32 %p1, %r1, %r2;
    @%p1 bra $L_loop;
    ret;
}
""")
    body = ptx.functions["copy"].insts[4:12]
    assert [i.opcode for i in body] == ["mul", "add", "ld", "add", "st", "add", "setp", "bra"]
    from cudalab.ptx.chains import DRAM, INT, L2
    # address (multiply, add), the load's latency, then the store; the next load waits for the store
    assert loop_cycles(body, DRAM) == pytest.approx(2 * INT + DRAM + 1)
    assert loop_cycles(body, L2) == pytest.approx(2 * INT + L2 + 1)
    independent = [i for i in body if i.opcode != "st"]       # without the store, loads pipeline: issue-bound
    assert loop_cycles(independent, DRAM) < 20


@pytest.mark.parametrize("kind", list(NAMES))
@pytest.mark.parametrize("threads, per_sm", SHAPES)
def test_the_timeline_times_the_probes_chains_as_the_h100_did(counted, kind, threads, per_sm):
    """One kernel alone within 40% of the H100's time; four on one stream likewise; four streams' speed-up
    over one stream within 35% (1.0x to 3.9x on the H100). Where the model is weakest: where issue and
    latency meet (4 warps per scheduler) it takes the larger, the GPU a little more than either; and it
    counts PTX instructions, so the FMA chain's loop (1.75 a step) seems to issue slower than the H100's
    SASS did (1.32 cycles a step at 16 warps per scheduler): 34% too slow there."""
    gpu = GPU[(kind, threads, per_sm)]
    est = estimates(counted, kind, threads, per_sm)
    assert est["alone_ms"] == pytest.approx(gpu["alone_ms"], rel=0.4)
    assert est["serial_ms"] == pytest.approx(gpu["serial_ms"], rel=0.4)
    assert est["speedup"] == pytest.approx(gpu["speedup"], rel=0.35)


def test_without_the_latency_side_the_chains_came_out_too_fast(counted):
    """What the model said before (no chains on the record): the multiply-xor chain at one warp per
    scheduler almost 3x faster than the H100 ran it, the shared-memory chase 7x, the global one 14x."""
    for kind, faster in (("imul", 2.5), ("shared", 6), ("global", 12)):
        before = estimates(counted, kind, 128, 1, chains=False)["alone_ms"]
        assert before < GPU[(kind, 128, 1)]["alone_ms"] / faster, kind


def test_a_memory_kernels_latency_mixes_l2_and_dram_by_its_traffic():
    """A kernel whose loads mostly hit L2 (a naive matrix multiply rereads rows and columns) waits for L2,
    one that streams from DRAM for DRAM: the launch's DRAM segments over its sectors say which."""
    from cudalab.device.timing import estimate
    rec = SimpleNamespace(grid=(132, 1, 1), block=(128, 1, 1), shared_bytes=0, metrics={}, chain_cycles=(10.0, 100.0))
    base = {"smsp__inst_executed.sum": 132 * 4 * 10**5, "l1tex__t_sectors_pipe_lsu_mem_global.sum": 10**6}
    streaming = estimate(rec, "H100", metrics={**base, "cudalab__dram_segments_global.sum": 10**6 / 2})
    cached = estimate(rec, "H100", metrics={**base, "cudalab__dram_segments_global.sum": 10**6 / 2,
                                            "cudalab__footprint_bytes": 10**5})
    assert streaming.limiter == cached.limiter == "latency"
    # all of the streaming kernel's 32 MB come from DRAM; 100 kB of the cached one's (its footprint)
    assert streaming.parts_us["latency"] / cached.parts_us["latency"] == pytest.approx(100 / (10 + 90 * 1e5 / 32e6))


def test_a_latency_bound_kernel_leaves_the_rest_of_the_device_to_other_streams():
    from cudalab.device.timing import estimate
    rec = SimpleNamespace(grid=(132, 1, 1), block=(256, 1, 1), shared_bytes=0, metrics={}, chain_cycles=(3.0, 3.0))
    est = estimate(rec, "H100", metrics={"smsp__inst_executed.sum": 132 * 8 * 10**5})
    # 8 warps an SM, 2 a scheduler: each issues every 3rd cycle, so the schedulers are busy 2/3 of the time
    assert est.limiter == "latency"
    assert est.device_share == pytest.approx(2 / 3 * est.parts_us["latency"] / est.time_us)    # (not the launch)
    rec.grid = (132 * 4, 1, 1)              # 8 warps a scheduler hide the chain: issue-bound, all of it
    est = estimate(rec, "H100", metrics={"smsp__inst_executed.sum": 132 * 32 * 10**5})
    assert est.limiter == "issue" and est.device_share == pytest.approx(1.0, rel=0.01)


def test_the_histogram_of_four_chunks_gains_from_four_streams_as_on_the_h100(kernels):
    """The probe's 'hist' case on the timeline: copies in and out, a memset, and the hashing kernel (its
    instructions counted by the emulator at a few rounds and scaled to 5,000), on one stream, then four.
    The H100, three runs: 0.190 to 0.210 ms and 0.109 to 0.112 ms, 1.69x to 1.90x; the kernel 0.038 ms."""
    import cudalab
    runs = GPU["hist"]
    gpu = {k: sorted(r[k] for r in runs)[1] for k in runs[0]}       # the median of three
    text = cudalab.to_device(np.frombuffer(b"streams" * 8, dtype=np.uint8)[:32].copy())     # a character a thread
    bins = cudalab.to_device(np.zeros(256, np.uint32))
    a, b, rec = per_thread_instructions(kernels, "hist_chain", lambda s: [text, np.int32(32), np.int32(s)],
                                        [bins])
    threads = 115 * 256
    big = LaunchRecord("hist_chain", (115, 1, 1), (256, 1, 1), 0, "emu",
                       thread_instructions=int((a + b * 5000) * threads), chain_cycles=rec.chain_cycles,
                       global_bytes_per_instruction=rec.global_bytes_per_instruction, static_shared=1024)
    t = kernel_timing(big, H100)
    assert t.us / 1e3 == pytest.approx(gpu["kernel_ms"], rel=0.35)

    def run(streams):
        tl = Timeline("H100")
        for s in streams:
            tl.stream(s)
        tl.record_event("start", 0)
        for s in streams:
            tl.copy(threads, "H2D", stream=s, pinned=True)
            tl.memset(1024, stream=s)
            tl.kernel("hist_chain", t.us, stream=s, blocks=t.blocks, per_sm=t.per_sm, share=t.share)
            tl.copy(1024, "D2H", stream=s, pinned=True)
        tl.record_event("stop", 0)
        return (tl.event_time("stop") - tl.event_time("start")) / 1e3
    one, four = run([1, 1, 1, 1]), run([1, 2, 3, 4])
    assert one == pytest.approx(gpu["one_stream_ms"], rel=0.35)
    assert one / four == pytest.approx(gpu["speedup"], rel=0.25)


def test_a_kernel_lasts_as_long_as_its_longest_threads_chain():
    """A course's word count hashes each word that starts at a thread's character 5,000 times a letter: a few
    lanes of a warp work, the rest wait. Thread instructions over 32 average those few over the warp; the
    launch's longest thread (the emulator's count of each batch's longest path) says how long the warp runs.
    The real program (jose-perales/jhu-gpu-programming, module 6) ran its 256-block kernel in 0.80 ms on an
    H100; the timeline had said 0.03 ms."""
    import cudalab
    src = r"""
    extern "C" __global__ void few_hash(const unsigned *words, unsigned *out) {
        unsigned h = 2166136261u;
        if (threadIdx.x % 8 == 0)                       // a word starts at every 8th character
            for (unsigned r = 0; r < words[threadIdx.x] * 500; r++) { h ^= r; h *= 16777619u; }
        out[threadIdx.x] = h;
    }"""
    k = cudalab.compile(src).get_kernel("few_hash")
    lengths = np.zeros(256, np.uint32)
    lengths[::8] = 3
    lengths[40] = 9                                      # one long word
    out = cudalab.to_device(np.zeros(256, np.uint32))
    rec = k.launch((1,), (256,), [cudalab.to_device(lengths), out])
    assert rec.longest_path > 9 * 500 * 3                # its thread: 9 x 500 steps of about 3.75 instructions
    assert rec.longest_path > 4 * rec.thread_instructions / 256
    est = kernel_timing(rec, H100)
    steps = 9 * 500 * 11.2 / 1.98e3                      # the long word's chain: 11.2 cycles a step (the probe's)
    assert est.us == pytest.approx(steps + 2.0, rel=0.2)     # and the launch


def test_a_kernel_that_waits_on_its_clock_is_not_timed_by_its_spin_loops_chain():
    """The emulator's spin loop turns as fast as the host runs it: its count says nothing of a GPU's clock."""
    from cudalab.device.timing import estimate
    rec = SimpleNamespace(grid=(1, 1, 1), block=(32, 1, 1), shared_bytes=0, metrics={}, chain_cycles=(3.0, 3.0),
                          longest_path=10**7, clock_wait_us=2000.0)
    est = estimate(rec, "H100", metrics={"smsp__inst_executed.sum": 10**7})
    assert "latency" not in est.parts_us


def test_the_estimate_says_why_a_latency_bound_kernel_is_slow():
    from cudalab.device.timing import estimate
    rec = SimpleNamespace(grid=(132, 1, 1), block=(32, 1, 1), shared_bytes=0, metrics={}, chain_cycles=(11.0, 11.0))
    text = estimate(rec, "H100", metrics={"smsp__inst_executed.sum": 132 * 10**5}).summary()
    assert "limited by latency" in text and "more warps per SM" in text


def test_a_whole_programs_four_streams_of_hash_kernels_overlap():
    """The probe's 'hist' run as a program (the emulator counts, the runtime core's timeline times): on the
    default A100 profile four streams ran 1.05x faster than one before the latency side, now about 2x,
    each kernel latency-bound by its multiply-xor chain (an H100 ran them 1.69x to 1.90x faster)."""
    from cudalab.device import current, set_device
    from cudalab.programs import run_program
    before = current().name
    set_device("A100")          # the program runs on this process's profile: pinned, whatever a test before chose
    try:
        r = run_program(PROBE, args=["hist", "5000", "1"], timeout=300)
    finally:
        set_device(before)
    assert r.returncode == 0, r.stderr
    line = next(line for line in r.stdout.splitlines() if line.startswith("hist "))
    fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    assert fields["counted"] == "117760"
    assert 1.5 < float(fields["speedup"]) < 2.5


@pytest.mark.parametrize("line, cycles", [
    ("add.s32 %r1, %r2, %r3;", "INT"), ("mul.lo.s32 %r1, %r2, 7;", "INT"), ("fma.rn.f32 %f1, %f2, %f3, %f4;", "FP32"),
    ("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", "FP64"), ("ex2.approx.f32 %f1, %f2;", "MUFU"),
    ("div.rn.f32 %f1, %f2, %f3;", "DIVISION"), ("div.s32 %r1, %r2, %r3;", "INT_DIVISION"),
    ("ld.shared.u32 %r1, [%r2];", "SHARED"), ("ld.global.u32 %r1, [%rd1];", "GLOBAL"), ("ld.u32 %r1, [%rd1];", "GLOBAL"),
    ("ld.local.u32 %r1, [%rd1];", "LOCAL"), ("mov.u32 %r1, %r2;", 0.0), ("shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;", "SHUFFLE"),
])
def test_each_kind_of_instruction_has_its_latency(line, cycles):
    from cudalab.ptx import chains
    ptx = parse(f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
    .reg .b32 %r<4>;
    .reg .f32 %f<5>;
    .reg .f64 %fd<5>;
    .reg .b64 %rd<2>;
    {line}
    ret;
}}""")
    want = 123.0 if cycles == "GLOBAL" else getattr(chains, cycles) if isinstance(cycles, str) else cycles
    assert chains.latency(ptx.functions["k"].insts[0], 123.0) == want


def test_blocks_that_find_too_little_throughput_left_start_slower_rather_than_wait():
    """place_blocks, plain data: a kernel holds 75% of the device's throughput (a quarter of its slots) until
    100 us; the next one's 132 blocks need 30% and find the slots free. They start at once, in the 25%
    left, 1.2x slower (60 us, not 50), ending long before the 150 us that waiting for room would take.
    Left only 2%, they do 6 us of their work by 100 us, then the rest at full speed: 144 us, still
    before 150; left nothing, they wait."""
    busy = [[0.0, 100.0, 0.25, 0.75, "first"]]
    assert place_blocks(busy, 10.0, 132, 1056, 50.0, 0.30) == [(10.0, 70.0, 132, pytest.approx(0.25))]
    busy = [[0.0, 100.0, 0.25, 0.98, "first"]]
    assert place_blocks(busy, 10.0, 132, 1056, 50.0, 0.30) == [(10.0, 100.0, 132, pytest.approx(0.02)),
                                                                (100.0, pytest.approx(144.0), 132, 0.30)]
    busy = [[0.0, 100.0, 0.25, 1.0, "first"]]
    assert place_blocks(busy, 10.0, 132, 1056, 50.0, 0.30) == [(100.0, 150.0, 132)]
    # future groups of earlier kernels (starting after this one's blocks would end) are no obstacle
    assert place_blocks([[500.0, 600.0, 1.0, 1.0, "later"]], 0.0, 10, 1056, 50.0, 0.5) == [(0.0, 50.0, 10)]


@pytest.mark.parametrize("threads, per_sm", SHAPES)
def test_a_chase_that_l2_holds_waits_for_l2_not_dram(counted, threads, per_sm):
    """The global chase again, its lines in a 4 MB cycle (the probe's 'l2'): the H100 took 329 cycles a step,
    not 750. A launch's metrics say how much of its traffic DRAM serves (its footprint fits L2: 4 MB of
    its 68 to 1,081 MB of sectors), so the model waits for L2: times within 15%, four streams' speed-up
    within 35% (3.8x to 1.0x)."""
    gpu = GPU[("l2", threads, per_sm)]
    rec = launch_record(counted, "global", threads, per_sm)
    warp_steps = rec.thread_instructions / 32 / (counted["global"][0] / STEPS["global"] + counted["global"][1])
    sectors = warp_steps * 4                                        # a warp reads one 128-byte line a step
    rec.metrics = {"smsp__inst_executed.sum": rec.thread_instructions / 32,
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": sectors,
                   "cudalab__dram_segments_global.sum": sectors / 2, "cudalab__footprint_bytes": 4 << 20}
    alone = kernel_timing(rec, H100).us / 1e3
    assert alone == pytest.approx(gpu["alone_ms"], rel=0.15)
    serial, split = timeline_ms(rec, [1] * 4), timeline_ms(rec, [1, 2, 3, 4])
    assert serial / split == pytest.approx(gpu["speedup"], rel=0.35)
