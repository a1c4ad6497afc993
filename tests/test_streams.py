"""Streams, events and pinned memory from Python (numba.cuda's names): the emulator runs everything
at once, and the timeline says when it would have run on the device profile's GPU."""
import numpy as np
import pytest

import cudalab
from cudalab.errors import CudaError
from cudalab.widgets.streams import timeline_model

SRC = r"""
extern "C" __global__ void scale(float *a, int n, float f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * f + 1.0f;
}
"""
N, CHUNKS = 1 << 20, 4          # 4 MiB of floats in 4 chunks of 1 MiB


@pytest.fixture(scope="module")
def scale():
    return cudalab.compile(SRC).get_kernel("scale")


def simple_streams(scale, nstreams, host):
    """CUDA's simpleStreams sample: each chunk copied in, scaled, copied back, on its own stream."""
    host[:] = np.arange(N)
    n = N // CHUNKS
    with cudalab.record_timeline("A100") as tl:
        streams = [cudalab.stream() for _ in range(nstreams)]
        for c in range(CHUNKS):
            s, part = streams[c % nstreams], host[c * n:(c + 1) * n]
            d = cudalab.to_device(part, stream=s)
            scale[n // 256, 256, s](d, np.int32(n), np.float32(2.0))
            d.copy_to_host(part, stream=s)
        cudalab.synchronize()
    np.testing.assert_array_equal(host, np.arange(N, dtype=np.float32) * 2 + 1)
    return tl.rows()


def overlapping(rows, kind_a, kind_b):
    return [(a["name"], b["name"]) for a in rows if a["kind"] == kind_a
            for b in rows if b["kind"] == kind_b and a["start"] < b["end"] and b["start"] < a["end"]]


def test_four_streams_overlap_copies_with_kernels(scale):
    one = simple_streams(scale, 1, cudalab.pinned_array(N, np.float32))
    four = simple_streams(scale, 4, cudalab.pinned_array(N, np.float32))
    # 1 MiB over the A100's 25 GB/s link: 2 us + 41.9 us per copy; each kernel about 4 us
    copies = [r for r in four if r["kind"] in ("H2D", "D2H")]
    assert all(r["pinned"] and r["end"] - r["start"] == pytest.approx(2 + 2**20 / 25e3) for r in copies)
    assert [r["engine"] for r in copies[:2]] == ["copy engine H2D", "copy engine D2H"]
    assert one.end == pytest.approx(4 * (2 * 43.94 + 3.8), rel=0.01)       # all in order: 367 us
    assert four.end == pytest.approx(5 * 43.94 + 3.8, rel=0.01)           # H2D engine busy back to back: 224 us
    assert four.end < 0.65 * one.end
    assert overlapping(four, "kernel", "H2D") and overlapping(four, "H2D", "D2H")
    assert not overlapping(one, "kernel", "H2D")
    # the overlap widget's numbers (given the device's work: it counts the host's waiting as copying)
    on_device = [[r for r in rows if r["stream"] != "host"] for rows in (one, four)]
    assert timeline_model(on_device[1])["overlap"] > 0 == timeline_model(on_device[0])["overlap"]


def test_pageable_copies_block_the_host_so_streams_do_not_overlap(scale):
    rows = simple_streams(scale, 4, np.zeros(N, np.float32))         # plain numpy memory
    copies = [r for r in rows if r["kind"] in ("H2D", "D2H")]
    assert not any(r["pinned"] for r in copies)
    assert all(r["end"] - r["start"] == pytest.approx(2 + 2**20 / 12.5e3) for r in copies)   # half the rate
    assert not overlapping(rows, "kernel", "H2D") and not overlapping(rows, "H2D", "D2H")
    assert rows.end == pytest.approx(4 * (2 * 85.9 + 3.8), rel=0.01)


def test_pinned_copies_are_asynchronous_only_on_a_stream():
    h = cudalab.pinned_array(1 << 20, np.uint8)
    with cudalab.record_timeline("A100") as tl:
        cudalab.to_device(h)                                          # stream=0: numba's synchronous copy
        cudalab.to_device(h, stream=cudalab.default_stream())        # asynchronous on the default stream
        stream_query = cudalab.default_stream().query()
        cudalab.default_stream().synchronize()
    sync, async_, done = tl.rows()
    assert tl.model.host_time == done["end"] == async_["end"] == sync["end"] + (async_["end"] - async_["start"])
    assert stream_query is False                                      # the async copy was still running


def test_slices_of_pinned_memory_are_pinned_and_pinned_registers_for_a_block():
    from cudalab.runtime.streams import is_pinned
    h, plain = cudalab.pinned_array((4, 256), np.float32), np.zeros(1024, np.float32)
    assert is_pinned(h) and is_pinned(h[2]) and not is_pinned(h.copy()) and not is_pinned(plain)
    with cudalab.pinned(plain):
        assert is_pinned(plain[:10])
    assert not is_pinned(plain)


def test_pinned_memory_is_the_runtime_cores_one_registry_that_programs_register_in_too():
    from cudalab.runtime.streams import context
    host = context().pinned_host            # a whole program's cudaHostRegister/Unregister use the same class
    h = np.zeros(256, np.float32)
    start = h.ctypes.data
    with cudalab.pinned(h):
        assert host.holds(start, start + h.nbytes)
        with pytest.raises(CudaError, match="registered already") as e:
            host.register(start + 64, 16)   # cudaHostRegister of part of it
        assert e.value.code == "cudaErrorHostMemoryAlreadyRegistered"
    assert not host.holds(start)
    with pytest.raises(CudaError) as e:
        host.unregister(start)
    assert e.value.code == "cudaErrorHostMemoryNotRegistered"


def test_event_elapsed_time_is_the_models_span_between_the_records(scale):
    h = cudalab.pinned_array(N, np.float32)
    with cudalab.record_timeline("A100") as tl:
        s = cudalab.stream()
        start, end = cudalab.event(), cudalab.event()
        start.record(s)
        d = cudalab.to_device(h, stream=s)
        scale[N // 256, 256, s](d, np.int32(N), np.float32(3.0))
        d.copy_to_host(h, stream=s)
        end.record(s)
        with pytest.raises(cudalab.CudaError, match="has not happened yet") as e:
            start.elapsed_time(end)               # the host has not waited: CUDA says not ready
        assert e.value.code == "cudaErrorNotReady" and not end.query()
        end.synchronize()
        ms = start.elapsed_time(end)
    rows = tl.rows()
    first_copy, copy_back = rows[1], rows[-2]
    assert [r["kind"] for r in rows] == ["event", "H2D", "kernel", "D2H", "event"]
    assert ms == pytest.approx((copy_back["end"] - first_copy["start"]) / 1e3)
    kernel_ms = (rows[2]["end"] - rows[2]["start"]) / 1e3
    assert ms == pytest.approx(2 * (2 + 4 * 2**20 / 25e3) / 1e3 + kernel_ms)    # 4 MiB in and out at 25 GB/s
    assert rows[2]["model"] == "metrics" and rows[2]["limiter"] == "global"


def test_a_stream_can_wait_for_an_event_of_another(scale):
    h = cudalab.pinned_array(N, np.float32)
    d = cudalab.device_array(N, np.float32)
    with cudalab.record_timeline("A100") as tl:
        s1, s2 = cudalab.stream(), cudalab.stream()
        ready = cudalab.event()
        d.copy_to_device(h, stream=s1)
        ready.record(s1)
        ready.wait(s2)                                    # cudaStreamWaitEvent(s2, ready)
        scale[N // 256, 256, s2](d, np.int32(N), np.float32(1.0))
    copy, _, kernel = tl.rows()
    assert kernel["start"] == copy["end"] == ready.time


def test_events_that_cannot_be_timed_say_why():
    a, b = cudalab.event(), cudalab.event(timing=False)
    with pytest.raises(cudalab.CudaError, match="never recorded"):
        a.elapsed_time(a)
    a.record(), b.record()
    with pytest.raises(cudalab.CudaError, match="timing=False") as e:
        a.elapsed_time(b)
    assert e.value.code == "cudaErrorInvalidResourceHandle"


def test_the_default_stream_waits_for_every_stream_and_they_wait_for_it(scale):
    d = cudalab.device_array(N, np.float32)
    with cudalab.record_timeline("A100") as tl:
        s1, s2 = cudalab.stream(), cudalab.stream()
        for s in (s1, 0, s2):                              # 0 is the legacy default stream
            scale[N // 256, 256, s](d, np.int32(N), np.float32(1.0))
    first, legacy, last = tl.rows()
    assert (first["stream"], legacy["stream"], last["stream"]) == (s1.handle, 0, s2.handle)
    assert legacy["start"] == first["end"] and last["start"] == legacy["end"]


def test_a_launch_without_a_stream_goes_on_the_session_timeline(scale):
    cudalab.timeline(reset=True)
    a = np.ones(1000, np.float32)
    rec = scale[4, 256](a, np.int32(1000), np.float32(2.0))       # numpy arrays are copied in and back
    rows = cudalab.timeline()
    assert [(r["kind"], r["stream"], r.get("pinned")) for r in rows] == [
        ("H2D", 0, False), ("kernel", 0, None), ("D2H", 0, False)]
    assert rows[1]["model"] == "instructions only" and not rec.metrics    # no metrics outside record_timeline
    assert rows[1]["start"] == rows[0]["end"] and rows[2]["start"] == rows[1]["end"]
    assert len(cudalab.timeline(reset=True)) == 3 and cudalab.timeline() == []
    assert (a == 3).all()


def test_a_stream_that_is_not_a_stream_is_refused(scale):
    with pytest.raises(cudalab.CudaError, match="not a stream") as e:
        scale[1, 32, 7](np.zeros(32, np.float32), np.int32(32), np.float32(1.0))
    assert e.value.code == "cudaErrorInvalidResourceHandle"


def test_the_timeline_plots_as_a_gantt_chart(scale):
    import matplotlib
    matplotlib.use("Agg")
    rows = simple_streams(scale, 2, cudalab.pinned_array(N, np.float32))
    ax = rows.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["copy engine H2D", "SMs", "copy engine D2H", "host"]


@pytest.mark.gpu
def test_on_a_gpu_kernel_rows_carry_the_measured_time(scale):
    cudalab.use("gpu")
    try:
        d = cudalab.to_device(np.ones(N, np.float32))
        with cudalab.record_timeline("H100") as tl:
            start, end = cudalab.event(), cudalab.event()
            start.record()
            rec = scale[N // 256, 256](d, np.int32(N), np.float32(2.0))
            end.record()
            end.synchronize()
        kernel = tl.rows()[1]
        assert kernel["model"] == "measured" and kernel["end"] - kernel["start"] == pytest.approx(rec.gpu_time_ms * 1e3)
        assert start.elapsed_time(end) == pytest.approx(rec.gpu_time_ms)
        assert (d.copy_to_host() == 3).all()
    finally:
        cudalab.use("emu")


def test_a_stream_callback_runs_after_the_streams_work_on_another_thread_and_holds_up_what_follows(scale):
    """stream.add_callback (cudaStreamAddCallback): on a thread of the runtime's, after the kernel before
    it; the kernel after it starts when it has returned, and CUDA called from it is refused."""
    import threading
    d = cudalab.to_device(np.ones(1024, np.float32))
    calls = []

    def callback(stream, status, arg):
        calls.append((stream, status, arg, threading.current_thread() is threading.main_thread()))
        try:
            d.copy_to_host()
        except CudaError as e:
            calls.append(e.code)

    with cudalab.record_timeline("H100") as tl:
        s = cudalab.stream()
        scale[4, 256, s](d, np.int32(1024), np.float32(2.0))
        s.add_callback(callback, "tag")
        scale[4, 256, s](d, np.int32(1024), np.float32(2.0))
        s.synchronize()
    assert calls == [(s, 0, "tag", False), "cudaErrorNotPermitted"]
    first, host_fn, second = [r for r in tl.rows() if r["stream"] == s.handle]
    assert (first["kind"], host_fn["kind"], second["kind"]) == ("kernel", "host function", "kernel")
    assert host_fn["name"] == "callback"
    assert first["end"] <= host_fn["start"] and host_fn["end"] <= second["start"]
    assert d.copy_to_host()[0] == 7.0          # (1 * 2 + 1) * 2 + 1: both kernels ran, in order


def test_an_exception_in_a_stream_callback_reaches_the_caller():
    def callback(stream, status, arg):
        raise ValueError(f"bad input {arg}")

    with pytest.raises(ValueError, match="bad input 3"):
        cudalab.stream().add_callback(callback, 3)
