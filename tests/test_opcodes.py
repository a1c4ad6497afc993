"""Which instructions of the PTX ISA the emulator runs: the table in tests/ptx_opcodes.py, checked.

Every instruction of the ISA's index has an example there. The ones marked RUNS must decode (the
emulator has their semantics); every other one must stop with cudaErrorNotSupported and a message
that names the instruction, never with a Python error from the emulator's insides. When ptxas is
installed (the nvidia-cuda-nvcc wheel), every example must also be real PTX for its target.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from ptx_opcodes import NOT_YET, OPCODES, RUNS, kernel_ptx  # noqa: E402

from cudalab.emulator.memory import DeviceMemory  # noqa: E402
from cudalab.errors import UnsupportedError  # noqa: E402


def decode(ptx):
    """Parse and decode every instruction of the probe kernel, as a launch would."""
    from cudalab.emulator.engine import Program
    from cudalab.frontend.nvrtc import CompiledSource
    from cudalab.runtime.module import Module
    module = Module(CompiledSource(source="", ptx=ptx, options=(), log=""))
    Program(module.ptx_module, DeviceMemory()).function("probe")


def _head(line):
    return re.match(r"[\w:]+(?:\.[\w:]+)?", line).group(0)


@pytest.mark.parametrize("name,line,target", [pytest.param(n, ln, t, id=n) for n, ln, t, s in OPCODES if s == RUNS])
def test_instruction_runs(name, line, target):
    decode(kernel_ptx([(name, line, target, RUNS)], target))


@pytest.mark.parametrize("name,line,target", [pytest.param(n, ln, t, id=n) for n, ln, t, s in OPCODES if s == NOT_YET])
def test_instruction_not_supported_names_it(name, line, target):
    try:
        decode(kernel_ptx([(name, line, target, NOT_YET)], target))
    except UnsupportedError as e:
        assert e.code == "cudaErrorNotSupported"
        opcode = line.split(".")[0].split()[0]
        assert opcode in str(e), f"the message does not name {opcode}: {e}"
    else:
        pytest.fail(f"{name} now decodes: move it to RUNS in tests/ptx_opcodes.py")


def test_the_table_covers_the_isa_index():
    """Every section of the ISA's instruction index is in the table, and rows are not repeated."""
    names = [n for n, _, _, _ in OPCODES]
    assert len(names) == len(set(names))
    heads = {n.split(".")[0] for n in names}
    for family in ("add", "mad", "fns", "szext", "bmsk", "testp", "tanh", "lop3", "prmt", "ld", "st", "multimem",
                   "cvt", "cvta", "mapa", "getctarank", "cp", "tensormap", "tex", "tld4", "txq", "istypep", "suld",
                   "sust", "sured", "suq", "brx", "call", "bar", "barrier", "membar", "fence", "atom", "red",
                   "vote", "match", "activemask", "redux", "griddepcontrol", "elect", "mbarrier",
                   "clusterlaunchcontrol", "wmma", "mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05",
                   "stacksave", "stackrestore", "alloca", "vadd", "vmad", "vset4", "brkpt", "nanosleep",
                   "pmevent", "trap", "setmaxnreg"):
        assert family in heads, family
    runs = sum(s == RUNS for *_, s in OPCODES)
    assert runs >= 182          # a floor that only rises: 182 of 219 run after the warp matrix operations landed


def _ptxas():
    here = shutil.which("ptxas")
    if here:
        return here
    try:
        import nvidia
        for base in nvidia.__path__:
            p = os.path.join(base, "cu13", "bin", "ptxas")
            if os.path.exists(p):
                return p
    except ImportError:
        pass
    return None


@pytest.mark.parametrize("target", sorted({t for _, _, t, _ in OPCODES}))
def test_examples_are_real_ptx(target, tmp_path):
    """ptxas assembles every example for its target: the table describes the real ISA."""
    ptxas = _ptxas()
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    rows = [r for r in OPCODES if r[2] == target]
    bad = []
    for row in rows:
        f = tmp_path / "probe.ptx"
        f.write_text(kernel_ptx([row], target))
        r = subprocess.run([ptxas, f"-arch={target}", str(f), "-o", os.devnull], capture_output=True, text=True)
        if r.returncode:
            bad.append(f"{row[0]}: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else r.returncode}")
    assert not bad, "\n".join(bad)
