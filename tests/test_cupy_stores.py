"""The CuPy stand-in stores a whole result in one write: a C- or Fortran-ordered array is written
byte for byte in its own layout without reading it first (a 2 GB ``cp.ones`` in a lesson cost three
passes over 2 GB before), while a strided view keeps the bytes between its elements."""
import numpy as np


READ_BYTES = r'''
extern "C" __global__ void read_bytes(const float *x, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = x[i];
}'''


def _count_reads(monkeypatch, array):
    reads = []
    original = type(array.device).read
    monkeypatch.setattr(type(array.device), "read", lambda self, ptr, n: reads.append(n) or original(self, ptr, n))
    return reads


def test_a_whole_array_is_written_without_reading_it_first(cp, monkeypatch):
    a = cp.empty((64, 32), cp.float32)
    reads = _count_reads(monkeypatch, a)
    a[...] = 3.0
    assert reads == []
    assert a.get().tolist() == np.full((64, 32), 3.0).tolist()


def test_a_fortran_ordered_array_keeps_its_layout_in_device_memory(cp):
    f = cp.asfortranarray(cp.zeros((2, 3), cp.float32))
    f[...] = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = cp.zeros(6, cp.float32)
    cp.RawKernel(READ_BYTES, "read_bytes")((1,), (8,), (f, out, np.int32(6)))
    assert out.get().tolist() == [0, 3, 1, 4, 2, 5]          # column after column, as CuPy lays it out
    assert f.get().tolist() == [[0, 1, 2], [3, 4, 5]]


def test_a_strided_view_keeps_the_elements_between_its_own(cp, monkeypatch):
    b = cp.zeros((3, 4), cp.float32)
    column = b[:, 1]
    reads = _count_reads(monkeypatch, b)
    column[...] = 7
    assert reads                                              # a view with gaps is read, changed, written
    b.T[2] = 5
    assert b.get().tolist() == [[0, 7, 5, 0]] * 3
