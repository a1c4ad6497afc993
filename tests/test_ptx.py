"""The PTX parser and control-flow analysis, on PTX that NVRTC really emits."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudalab.frontend.nvrtc import compile_to_ptx
from cudalab.ptx import PtxSyntaxError, parse
from cudalab.ptx.cfg import reconvergence

GCD = r'''
__device__ int gcd(int a, int b) { while (b != 0) { int t = a % b; a = b; b = t; } return a; }
__global__ void gcdk(const int* a, const int* b, int* out, int n) {
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i; __syncthreads();
  if (i < n) out[i] = gcd(a[i], b[i]) + s[63 - threadIdx.x];
}'''


def test_module_has_entry_params_shared_and_line_info():
    mod = parse(compile_to_ptx(GCD).ptx)
    (k,) = mod.entries
    assert k.name == "_Z4gcdkPKiS0_Pii"
    assert [p.type for p in k.params] == ["u64", "u64", "u64", "u32"]
    assert [v.size for v in k.shared] == [256]
    lines = {i.line for i in k.insts if i.line}
    assert {2, 5, 6, 7} <= lines            # each statement maps back to its line (gcd on line 2)
    assert any(i.opcode == "bar" for i in k.insts)


def test_branches_reconverge_at_their_immediate_post_dominator():
    mod = parse(compile_to_ptx(GCD).ptx)
    k = mod.entries[0]
    rc = reconvergence(k)
    for pc, r in rc.items():
        assert pc < r <= len(k.insts)
    # the `if (i < n)` guard's branch reconverges where the two paths meet, not at the end
    guard = next(i for i in k.insts if i.opcode == "bra" and i.guard)
    assert rc[guard.index] <= len(k.insts)


def test_operands_are_plain_tuples():
    mod = parse(".version 8.0\n.target sm_80\n.address_size 64\n"
                ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .pred %p<2>;\n"
                "ld.param.u64 %rd1, [p+8];\n@!%p1 add.s32 %r1, %r2, 0f3F800000;\n"
                "mov.b64 {%r1, %r2}, %rd1;\nret;\n}\n")
    k = mod.functions["k"]
    ld, add, mov, ret = k.insts
    assert ld.operands[1] == ("mem", ("sym", "p"), 8)
    assert add.guard == ("%p1", True) and add.operands[2] == ("imm", 0x3F800000, "f32")
    assert mov.operands[0][0] == "vec"


def test_garbage_names_its_ptx_line():
    with pytest.raises(PtxSyntaxError, match="PTX line"):
        parse(".version 8.0\n.target sm_80\n.foo bar baz;\n")


def test_compiling_opens_nvrtc_without_cuda_bindings():
    """NVRTC is called through ctypes (frontend/libnvrtc.py): cuda-bindings' driver module and
    cuda.pathfinder cost a notebook's first cell about a third of a second to import."""
    code = ("import sys, cudalab; m = cudalab.compile('__global__ void k(int* o) { o[0] = 1; }'); "
            "print('.entry' in m.ptx, 'cuda.bindings.driver' in sys.modules, 'cuda.pathfinder' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)))
    assert out.stdout.split() == ["True", "False", "False"], out.stderr
