"""The streams timeline: copy engines, pageable vs pinned copies, the default stream, events."""
from dataclasses import replace

import pytest

from cudalab.device import profiles
from cudalab.device.timeline import Timeline, plot_gantt

MB = 1_000_000


def by_name(tl):
    return {r["name"]: r for r in tl.rows()}


def test_two_streams_overlap_copies_with_kernels():
    """The Guide's example: each stream copies its half in, runs the kernel, copies it back."""
    tl = Timeline("H100")                         # 50 GB/s pinned: 100 MB in 2000 us (+2 us latency)
    for s in (1, 2):
        tl.copy(100 * MB, "H2D", stream=s, pinned=True, name=f"in{s}")
        tl.kernel(f"k{s}", 1000.0, stream=s)
        tl.copy(100 * MB, "D2H", stream=s, pinned=True, name=f"out{s}")
    tl.synchronize()
    r = by_name(tl)
    assert r["in1"]["end"] == pytest.approx(2002.0)
    assert r["in2"]["start"] == r["in1"]["end"]               # one H2D engine: in2 waits for in1 ...
    assert r["in2"]["start"] < r["k1"]["end"]                 # ... while k1 runs: copy and kernel overlap
    assert r["k2"]["start"] == max(r["in2"]["end"], r["k1"]["end"])
    assert r["out1"]["start"] == r["k1"]["end"] and r["out1"]["engine"] == "copy engine D2H"
    assert r["cudaDeviceSynchronize"]["end"] == tl.end == r["out2"]["end"]
    assert tl.end < 2 * (2002 + 1000 + 2002)                  # faster than doing it all in order


def test_pageable_copies_block_the_host_and_go_slower():
    tl = Timeline("H100")
    tl.copy(50 * MB, "H2D", stream=1, name="pageable")        # half of 50 GB/s: 2000 us
    tl.kernel("k", 10.0, stream=2)                            # issued only after the copy returned
    r = by_name(tl)
    assert r["pageable"]["end"] == pytest.approx(2002.0)
    assert r["k"]["start"] == r["pageable"]["end"]


def test_pinned_async_copies_let_the_host_go_on():
    tl = Timeline("H100")
    tl.copy(50 * MB, "H2D", stream=1, pinned=True, name="pinned")
    tl.kernel("k", 10.0, stream=2)
    assert by_name(tl)["k"]["start"] == 0.0


def test_the_default_stream_waits_for_everything_and_everything_waits_for_it():
    tl = Timeline("A100")
    tl.kernel("a", 100.0, stream=1)
    tl.kernel("legacy", 10.0, stream=0)
    tl.kernel("b", 5.0, stream=2)
    r = by_name(tl)
    assert r["legacy"]["start"] == 100.0 and r["b"]["start"] == 110.0


def test_events_order_streams():
    tl = Timeline("A100")
    tl.kernel("produce", 300.0, stream=1)
    tl.record_event("done", stream=1)
    tl.copy(1 * MB, "H2D", stream=2, pinned=True, name="early")    # not waiting: runs at once
    tl.wait_event("done", stream=2)
    tl.kernel("consume", 50.0, stream=2)
    r = by_name(tl)
    assert r["done"]["start"] == 300.0 and r["early"]["start"] == 0.0
    assert r["consume"]["start"] == 300.0
    with pytest.raises(KeyError, match="never recorded"):
        tl.wait_event("nope", stream=3)


def test_one_copy_engine_serializes_both_directions():
    tl = Timeline(replace(profiles.get("A100"), copy_engines=1))
    tl.copy(1 * MB, "H2D", stream=1, pinned=True, name="up")
    tl.copy(1 * MB, "D2H", stream=2, pinned=True, name="down")
    r = by_name(tl)
    assert r["down"]["start"] == r["up"]["end"] and r["up"]["engine"] == "copy engine"


def test_a_bare_compute_capability_is_timed_as_its_device_properties_size_it():
    """cudaDeviceProp of "sm_86" says an A100's three copy engines (runtime/core/properties.py): its
    timeline overlaps the two directions as such a device does."""
    from cudalab.runtime.core.properties import device_properties
    tl = Timeline("sm_86")
    tl.copy(1 * MB, "H2D", stream=1, pinned=True, name="up")
    tl.copy(1 * MB, "D2H", stream=2, pinned=True, name="down")
    r = by_name(tl)
    assert device_properties(profiles.get("sm_86"), 0)["asyncEngineCount"] == 3
    assert r["down"]["start"] == r["up"]["start"] == 0.0 and r["up"]["engine"] == "copy engine H2D"


def test_host_work_and_stream_synchronize():
    tl = Timeline("H100")
    tl.kernel("k", 100.0, stream=1)
    tl.host(30.0, "prepare next batch")
    tl.synchronize(stream=1)
    rows = tl.rows()
    assert [r["kind"] for r in rows] == ["kernel", "host", "sync"]
    assert rows[2]["start"] == 30.0 and rows[2]["end"] == 100.0
    assert set(rows[0]) >= {"stream", "engine", "kind", "name", "start", "end"}


def test_gantt_chart():
    import matplotlib
    matplotlib.use("Agg")
    tl = Timeline("H100")
    tl.copy(10 * MB, "H2D", stream=1, pinned=True)
    tl.kernel("k", 100.0, stream=1)
    tl.record_event("e", stream=1)
    ax = plot_gantt(tl.rows())
    assert len(ax.patches) == 2 and [t.get_text() for t in ax.get_yticklabels()][0] == "copy engine H2D"
    ax = tl.plot(by="stream")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stream 1"]


@pytest.mark.parametrize("programmatic, waits_at, start, end, waiting", [
    (False, 0.5, 100.0, 180.0, None),          # plain stream order: after the first kernel's end
    (True, 0.5, 25.0, 140.0, [65.0, 100.0]),   # starts at the trigger; its second half waits for the end
    (True, None, 25.0, 105.0, None)])          # never waits: nothing of it depends on the first kernel
def test_a_programmatic_dependent_launch_starts_when_the_kernel_before_it_triggers(programmatic, waits_at, start, end,
                                                                                   waiting):
    tl = Timeline("H100")
    tl.kernel("producer", 100.0, stream=1, triggers_at=0.25)       # every block triggered a quarter through
    row = tl.kernel("consumer", 80.0, stream=1, programmatic=programmatic, waits_at=waits_at)
    assert (row["start"], row["end"]) == (start, end)
    assert row.get("pdl", {}).get("waiting") == waiting
    assert tl.stream_end(1) == end
    tl.kernel("next", 10.0, stream=1)
    assert by_name(tl)["next"]["start"] == end                   # later work waits for both, as usual


def test_a_programmatic_launch_after_a_kernel_that_never_triggers_waits_for_its_end():
    tl = Timeline("H100")
    tl.kernel("producer", 100.0, stream=1)
    assert tl.kernel("consumer", 80.0, stream=1, programmatic=True, waits_at=0.5)["start"] == 100.0


def test_gantt_chart_draws_the_overlap_and_the_wait():
    import matplotlib
    matplotlib.use("Agg")
    tl = Timeline("H100")
    tl.kernel("producer", 100.0, stream=1, triggers_at=0.25)
    tl.kernel("consumer", 80.0, stream=1, programmatic=True, waits_at=0.5)
    ax = tl.plot()
    bars = [(p.get_x(), p.get_width(), round(p.get_height(), 2)) for p in ax.patches]
    # producer and consumer overlap: each in its half of the SMs lane (upper, lower), then the consumer's wait
    assert bars == [(0.0, 100.0, 0.3), (25.0, 115.0, 0.3), (65.0, 35.0, 0.3)]
    assert [round(p.get_y() + p.get_height() / 2, 2) for p in ax.patches] == [-0.15, 0.15, 0.15]
    assert [line.get_xdata()[0] for line in ax.lines] == [25.0]                  # the trigger


def test_streams_scaling_program_overlaps_like_the_h100():
    """examples/streams_scaling.cu on the emulator: the job gets faster with 2 and 4 streams, as it
    did on an H100 (docs/streams_h100.md: speed-ups 1.40-1.58x and 1.56-1.75x)."""
    import re
    from pathlib import Path
    from cudalab.programs import run_program
    out = run_program(Path(__file__).resolve().parents[1] / "examples" / "streams_scaling.cu").stdout
    one, two, four = (float(x) for x in re.search(r"1 stream ([\d.]+) ms, 2 streams ([\d.]+) ms, "
                                                  r"4 streams ([\d.]+) ms", out).groups())
    assert one > two > four
    h100 = {2: 1.50, 4: 1.62}                       # mean of the three H100 runs
    for streams, t in ((2, two), (4, four)):
        ratio = (one / t) / h100[streams]
        assert 0.5 <= ratio <= 2.0
    assert "Result = PASS" in out


def test_a_kernels_static_shared_memory_limits_its_blocks_per_sm_at_every_launch():
    """(launch19) The estimate of a launch timed by its instruction count is kept for the next launch
    of the same shape; the blocks per SM its __shared__ arrays allow are kept with it, and a launch
    with less static shared memory is not given the first one's limit."""
    from cudalab.device import current
    from cudalab.device.timeline import kernel_timing
    from cudalab.runtime.record import LaunchRecord

    def rec(static):
        r = LaunchRecord("k", (1024, 1, 1), (256, 1, 1), 0, "emu", static_shared=static)
        r.thread_instructions, r.instructions, r.global_bytes_per_instruction = 1 << 22, 4096, 1.0
        return r

    profile = current()
    free = kernel_timing(rec(0), profile).per_sm
    big = [kernel_timing(rec(40 * 1024), profile).per_sm for _ in range(2)]
    assert big[0] == big[1] < free
    assert kernel_timing(rec(0), profile).per_sm == free
