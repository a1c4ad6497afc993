"""`cudalab run --why-slow`: which instructions kept a kernel in the interpreter, and why.

A student whose program is slow on the emulator sees, per kernel, its launches and CPU time, the share of
its work the (slower) interpreter ran and, for the lines that ran there, the compiled tier's reason."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.emulator import why_slow

ROOT = Path(__file__).resolve().parents[1]

# a loop around __sinf: sin.approx takes the GPU's special-function-unit bits from tables (mufu.py),
# which the compiled tier leaves to the interpreter; the plain loop beside it compiles whole
KERNELS = r"""
extern "C" __global__ void wobble(float *x, int n, int turns)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < turns; k++)
        v = __sinf(v) + 0.5f;
    x[i] = v;
}

extern "C" __global__ void scale(float *x, int n, int turns)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < turns; k++)
        v = v * 0.5f + 1.0f;
    x[i] = v;
}
"""


@pytest.fixture
def counting(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    monkeypatch.setattr(why_slow, "ON", True)
    why_slow.reset()
    yield
    why_slow.reset()


def test_an_instruction_left_to_the_interpreter_is_named_with_its_line_and_reason(counting):
    m = cudalab.compile(KERNELS)
    x = cudalab.to_device(np.linspace(0, 1, 4096, dtype=np.float32))
    for _ in range(3):
        m.wobble[32, 128](x, np.int32(4096), np.int32(20))
    text = why_slow.report()
    lines = text.splitlines()
    wobble = next(k for k in lines if k.startswith("- wobble"))
    assert "3 launches" in wobble
    # the loop's body runs in the interpreter: the report says how much, then the __sinf line first
    assert "ran in the interpreter" in text
    place = next(k for k in lines if "sin.approx" in k)
    assert place.strip().startswith("line 8:") and "special function unit" in place
    assert lines.index(place) == lines.index(wobble) + 2
    # the branches before the loop are said to be cheap
    assert any(k.strip().startswith("line 5:") and "costs little" in k for k in lines)


def test_a_kernel_wholly_in_native_code_is_said_to_be(counting):
    m = cudalab.compile(KERNELS)
    x = cudalab.to_device(np.linspace(0, 1, 4096, dtype=np.float32))
    m.scale[32, 128](x, np.int32(4096), np.int32(20))
    text = why_slow.report()
    assert "- scale: 1 launch," in text
    assert "of its thread-instructions ran in native code" in text
    assert "interpreter" not in text.split("- scale", 1)[1].split("\n")[1]


BARRIER_LOOP = r"""
extern "C" __global__ void halves(float *x, int rounds)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];
    for (int r = 0; r < rounds; r++) {
        __syncthreads();
        float v = s[(t + 1) & 127];
        __syncthreads();
        s[t] = 0.5f * (s[t] + v);
    }
    x[blockIdx.x * 128 + t] = s[t];
}
"""


def test_a_barrier_a_loop_repeats_outside_native_regions_is_said_to_run_every_turn(counting, monkeypatch):
    monkeypatch.setenv("CUDALAB_REGIONS", "0")          # (no regions: the loop's barriers stay interpreted)
    m = cudalab.compile(BARRIER_LOOP)
    x = cudalab.to_device(np.linspace(0, 1, 4 * 128, dtype=np.float32))
    m.halves[4, 128](x, np.int32(30))
    text = why_slow.report()
    assert "- halves: 1 launch," in text
    assert "inside a loop (lines 7 to 11) that is not one native region" in text and "every turn" in text


def test_nothing_is_counted_unless_asked(monkeypatch):
    monkeypatch.setattr(why_slow, "ON", False)
    why_slow.reset()
    m = cudalab.compile(KERNELS)
    x = cudalab.to_device(np.zeros(256, np.float32))
    m.scale[2, 128](x, np.int32(256), np.int32(1))
    assert why_slow.report() == "cudalab --why-slow: no kernel ran on the emulator."


def test_the_cli_prints_the_report_after_the_program(tmp_path):
    src = tmp_path / "wobble.cu"
    src.write_text(KERNELS.replace('extern "C" __global__ void scale', '__global__ void unused') + r"""
#include <cstdio>
int main()
{
    float *x;
    cudaMalloc(&x, 1024 * sizeof(float));
    cudaMemset(x, 0, 1024 * sizeof(float));
    wobble<<<8, 128>>>(x, 1024, 8);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
""")
    r = subprocess.run([sys.executable, "-m", "cudalab.cli", "run", "--why-slow", str(src.name)], cwd=tmp_path,
                       capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": str(ROOT),
                                                            "CUDALAB_TIER": "compiled"}, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("done")
    assert "cudalab --why-slow: 1 kernel ran" in r.stderr
    assert "- wobble: 1 launch," in r.stderr and "sin.approx" in r.stderr


def test_a_kernel_that_ran_before_its_native_code_was_built_is_not_blamed_on_its_lines():
    # a short program's kernels run once, interpreted, while LLVM builds their native code in the
    # background: the report says so, and lists no lines as if the code's shape kept them interpreted
    k = why_slow.KernelTime("scanBlocks", df=None, program=None, launches=1, batches=1, seconds=0.003,
                            interp_seconds=0.003, thread_instructions=5000, interpreted={7: 5000})
    lines = why_slow._kernel_lines(k, total=0.003)
    assert lines[0].startswith("- scanBlocks: 1 launch, 0.00 s")
    assert "ran without native code" in lines[1] and "0.00 s came before that" in lines[1]
    assert len(lines) == 2
    why_slow._KERNELS[id(k)] = k
    try:
        assert "that is quick, nothing here needs speeding up" in why_slow.report().splitlines()[0]
    finally:
        why_slow.reset()


def test_many_short_launches_from_a_cuda_graph_are_not_told_to_become_a_graph(tmp_path):
    # courses20: a lesson captures a loop of one-thread launches into a graph and replays it; the advice for
    # many short launches ("or a CUDA graph") must not send the student to what the program already does
    src = tmp_path / "chain.cu"
    src.write_text(r"""
#include <cstdio>
__global__ void step(long long* a, int i) { a[i] = a[2 * i] + a[2 * i + 1]; }
int main()
{
    const int n = 128;
    long long host[2 * n] = {0}, *a;
    for (int i = 0; i < n; ++i) host[n + i] = i + 1;
    cudaMalloc(&a, sizeof host);
    cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = n - 1; i >= 1; --i) step<<<1, 1, 0, s>>>(a, i);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    long long sum;
    cudaMemcpy(&sum, a + 1, sizeof sum, cudaMemcpyDeviceToHost);
    printf("%lld\n", sum);
    return 0;
}
""")
    r = subprocess.run([sys.executable, "-m", "cudalab.cli", "run", "--why-slow", str(src.name)], cwd=tmp_path,
                       capture_output=True, text=True, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(128 * 129 // 2)
    assert "- step: 127 launches" in r.stderr
    assert "127 of them a CUDA graph's kernel nodes" in r.stderr and "(or a CUDA graph)" not in r.stderr
