"""operands.address_reader: a [reg+offset] operand's addresses for the running lanes."""
import types

import numpy as np

from cudalab.emulator.operands import address_reader


def _reader(regtype, offset):
    func = types.SimpleNamespace(regs={"%rd1": regtype}, params=[], body_params={})
    return address_reader(("mem", ("reg", "%rd1", False), offset), func, None)


def test_every_lane_gets_its_address_in_an_array_of_its_own():
    """With every lane of the batch running (ex.idx is 0..n-1) a 64-bit base with no offset is copied,
    not gathered lane by lane (a GEMM's cp.async reads two addresses of every lane): the values are
    the register's, and a caller that changes them leaves the register as it was."""
    regs = np.arange(1000, 1008, dtype=np.uint64)
    ex = types.SimpleNamespace(fr=types.SimpleNamespace(regs={"%rd1": regs}))
    got = _reader("u64", 0)(ex, np.arange(8))
    assert np.array_equal(got, regs) and got is not regs
    got += np.uint64(1)
    assert np.array_equal(regs, np.arange(1000, 1008))
    assert np.array_equal(_reader("u64", 16)(ex, np.arange(8)), regs + np.uint64(16))
    assert np.array_equal(_reader("u64", 0)(ex, np.array([1, 5])), [1001, 1005])     # some lanes: gathered
    narrow = types.SimpleNamespace(fr=types.SimpleNamespace(regs={"%rd1": np.array([4, 0xFFFFFFF0], np.uint32)}))
    assert _reader("u32", 0x20)(narrow, np.arange(2)).tolist() == [0x24, 0x10]         # 32 bits wrap
