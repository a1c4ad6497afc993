"""Run the same buggy kernels under compute-sanitizer on a GPU and on cudalab's checks, and compare.

    python tools/sanitizer_gpu.py gpu OUTDIR      # on a machine with nvcc + compute-sanitizer: logs + results.json
    python tools/sanitizer_gpu.py report RESULTS  # anywhere: cudalab's findings, docs/sanitizer_comparison.md

Each case is a kernel (its source starts at line 1 of the program, so line numbers agree), the
arguments it gets and the sanitizer tool that should (or should not) find something. On the GPU a
small CUDA program with a main() allocates the buffers (cudaMalloc, cudaMemset when initialized),
launches once and is run under ``compute-sanitizer --tool <tool>``; findings are compared as
(kind, source lines).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

# args: ("T*", nbytes, "init" | "uninit" | "freed" | "null") for pointers, ("int", value) for ints
@dataclass
class SanCase:
    name: str
    tool: str
    source: str
    grid: int
    block: int
    args: tuple
    shared: int = 0
    note: str = ""


def P(t, n, state="init"):
    return (t, n, state)


CASES = [
    # ---------------------------------------------------------------- memcheck
    SanCase("global write past the end", "memcheck", """\
__global__ void k(float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = 1.0f;
}""", 1, 128, (P("float*", 256), ("int", 64))),
    SanCase("global read at index -1", "memcheck", """\
__global__ void k(int *a, int *b) {
    int i = threadIdx.x;
    b[i] = a[i - 1];
}""", 1, 32, (P("int*", 128), P("int*", 128))),
    SanCase("shared index past the array", "memcheck", """\
__global__ void k(int *a, int n) {
    __shared__ int s[32];
    s[threadIdx.x + n] = 1;
    a[threadIdx.x] = s[threadIdx.x];
}""", 1, 32, (P("int*", 128), ("int", 8192))),
    SanCase("dynamic shared memory too small", "memcheck", """\
__global__ void k(float *a) {
    extern __shared__ float s[];
    s[threadIdx.x] = 1.0f;
    a[threadIdx.x] = s[threadIdx.x];
}""", 1, 64, (P("float*", 256),), shared=128),
    SanCase("misaligned int store", "memcheck", """\
__global__ void k(char *a) {
    *(int *)(a + 1) = 1;
}""", 1, 1, (P("char*", 64),)),
    SanCase("null pointer", "memcheck", """\
__global__ void k(int *a) {
    a[threadIdx.x] = 1;
}""", 1, 32, (P("int*", 0, "null"),)),
    SanCase("freed buffer", "memcheck", """\
__global__ void k(int *a) {
    a[threadIdx.x] = 1;
}""", 1, 32, (P("int*", 128, "freed"),)),
    SanCase("local array index out of range", "memcheck", """\
__global__ void k(int *a, int n) {
    int loc[4];
    for (int i = 0; i < 4; i++) loc[i] = a[i];
    a[threadIdx.x] = loc[n];
}""", 1, 32, (P("int*", 128), ("int", 100000)),
            note="compute-sanitizer reported nothing and the launch succeeded (local arrays are not bounds-checked); "
                 "cudalab checks each thread's local memory"),
    SanCase("correct vector add", "memcheck", """\
__global__ void k(const float *a, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1.0f;
}""", 2, 64, (P("float*", 400), P("float*", 400), ("int", 100))),
    # ---------------------------------------------------------------- racecheck
    SanCase("reverse without __syncthreads", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    out[t] = s[63 - t];
}""", 1, 64, (P("int*", 256),)),
    SanCase("reverse with __syncthreads", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];
}""", 1, 64, (P("int*", 256),)),
    SanCase("overwrite after read", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];
    s[t] = 0;
}""", 1, 64, (P("int*", 256),)),
    SanCase("every thread writes s[0]", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[1];
    s[0] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[0];
}""", 1, 64, (P("int*", 256),)),
    SanCase("reduction without barrier in the loop", "racecheck", """\
__global__ void k(const float *in, float *out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}""", 2, 256, (P("float*", 2048), P("float*", 8))),
    SanCase("reduction with barrier", "racecheck", """\
__global__ void k(const float *in, float *out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}""", 2, 256, (P("float*", 2048), P("float*", 8))),
    SanCase("shared atomics", "racecheck", """\
__global__ void k(const int *in, int *out) {
    __shared__ int h[4];
    if (threadIdx.x < 4) h[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&h[in[threadIdx.x] & 3], 1);
    __syncthreads();
    if (threadIdx.x < 4) out[threadIdx.x] = h[threadIdx.x];
}""", 1, 64, (P("int*", 256), P("int*", 16))),
    SanCase("reading atomics before the barrier", "racecheck", """\
__global__ void k(const int *in, int *out) {
    __shared__ int h[4];
    if (threadIdx.x < 4) h[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&h[in[threadIdx.x] & 3], 1);
    if (threadIdx.x < 4) out[threadIdx.x] = h[threadIdx.x];
}""", 1, 64, (P("int*", 256), P("int*", 16)),
            note="compute-sanitizer's racecheck does not report hazards with atomics; the read can still see a "
                 "partial count on a GPU, so cudalab keeps this one"),
    SanCase("neighbour in the same warp after __syncwarp", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncwarp();
    out[t] = s[t ^ 1];
}""", 1, 64, (P("int*", 256),)),
    SanCase("neighbour in the same warp, no __syncwarp", "racecheck", """\
__global__ void k(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    out[t] = s[t ^ 1];
}""", 1, 64, (P("int*", 256),), note="intra-warp: cudalab's racecheck checks between warps only"),
    # ---------------------------------------------------------------- initcheck
    SanCase("read of a never-written buffer", "initcheck", """\
__global__ void k(const int *a, int *out) {
    out[threadIdx.x] = a[threadIdx.x] + 1;
}""", 1, 64, (P("int*", 256, "uninit"), P("int*", 256))),
    SanCase("read of an initialized buffer", "initcheck", """\
__global__ void k(const int *a, int *out) {
    out[threadIdx.x] = a[threadIdx.x] + 1;
}""", 1, 64, (P("int*", 256), P("int*", 256))),
    SanCase("write then read in one kernel", "initcheck", """\
__global__ void k(int *a, int *out) {
    a[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = a[threadIdx.x] + 1;
}""", 1, 64, (P("int*", 256, "uninit"), P("int*", 256))),
    SanCase("atomicAdd on a never-written counter", "initcheck", """\
__global__ void k(int *count) {
    atomicAdd(count, 1);
}""", 1, 32, (P("int*", 4, "uninit"),)),
    # ---------------------------------------------------------------- synccheck
    SanCase("__syncthreads() in an if", "synccheck", """\
__global__ void k(int *a) {
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    a[threadIdx.x] = 1;
}""", 1, 64, (P("int*", 256),)),
    SanCase("__syncthreads() after an early return", "synccheck", """\
__global__ void k(int *a, int n) {
    if (threadIdx.x >= n) return;
    __syncthreads();
    a[threadIdx.x] = 1;
}""", 1, 64, (P("int*", 256), ("int", 48)), note="the common `if (i >= n) return;` pattern: a false alarm in cudalab (returned threads still count "
                 "as waiting elsewhere; the emulator should treat them as exited)"),
    SanCase("__syncthreads() in a loop of varying length", "synccheck", """\
__global__ void k(int *a) {
    for (int i = 0; i < threadIdx.x / 32; i++)
        __syncthreads();
    a[threadIdx.x] = 1;
}""", 1, 64, (P("int*", 256),),
            note="synccheck looks for divergence inside a warp; here whole warps differ, and warp 0's exit "
                 "releases the barrier. cudalab counts a whole warp that ends without meeting a barrier as "
                 "exited too"),
    SanCase("__syncthreads() in a loop that half warps leave", "synccheck", """\
__global__ void k(int *a) {
    for (int i = 0; i < threadIdx.x / 16; i++)
        __syncthreads();
    a[threadIdx.x] = 1;
}""", 1, 64, (P("int*", 256),)),
    SanCase("__syncwarp() in an if", "synccheck", """\
__global__ void k(int *a) {
    if (threadIdx.x < 16) __syncwarp();
    a[threadIdx.x] = 1;
}""", 1, 32, (P("int*", 128),)),
]


def _split_barrier_cases():
    """The corpus's split-barrier kernels (tests/kernels/split_barrier.py, recorded on an H100 too):
    parts of a warp at different barriers while the others write; synccheck's view of the same code."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from kernels.split_barrier import KERNELS
    sizes = {"early_return": (1, 64, (256, 256, 256)), "if_else": (1, 64, (256, 256)),
             "skip_then_write": (1, 64, (256, 768)), "loop_trips": (1, 64, (256, 256)),
             "named_halves": (1, 128, (512, 512)), "named_halves_unaligned": (1, 128, (512, 512)),
             "count_split": (1, 64, (256,)), "own_tails": (1, 64, (256, 512)), "leavers_write": (1, 64, (256, 256))}
    hang = ("the H100 hangs here (compute-sanitizer timed out after 20 s, nothing reported); cudalab stops with "
            "the hang, which it words as a synccheck finding")
    notes = {"count_split": hang, "own_tails": hang,
             "named_halves_unaligned": "the H100 stops with an illegal instruction (so does cudalab), synccheck is silent"}
    return [SanCase(f"split barrier: {name}", "synccheck", KERNELS[name].strip("\n").replace(f"void {name}(", "void k("),
                    grid, block, tuple(P("int*", n) for n in nbytes), note=notes.get(name, ""))
            for name, (grid, block, nbytes) in sizes.items()]


CASES += _split_barrier_cases()


# ------------------------------------------------------------------ the GPU side

def program(case: SanCase) -> str:
    """The case's kernel (from line 1) and a main() that sets up its arguments and launches it once."""
    setup, call, after = [], [], []
    for k, a in enumerate(case.args):
        if a[0] == "int":
            call.append(str(a[1]))
            continue
        t, n, state = a
        if state == "null":
            setup.append(f"    {t} p{k} = 0;")
        else:
            setup.append(f"    {t} p{k}; cudaMalloc((void **)&p{k}, {n});")
            if state in ("init", "freed"):
                setup.append(f"    cudaMemset(p{k}, 0, {n});")
            if state == "freed":
                setup.append(f"    cudaFree(p{k});")
            else:
                after.append(f"    cudaFree(p{k});")
        call.append(f"p{k}")
    return (case.source + "\n\n#include <cstdio>\nint main() {\n" + "\n".join(setup) +
            f"\n    k<<<{case.grid}, {case.block}, {case.shared}>>>({', '.join(call)});\n"
            "    cudaError_t e = cudaDeviceSynchronize();\n"
            '    printf("launch: %s\\n", cudaGetErrorName(e));\n' + "\n".join(after) + "\n    return 0;\n}\n")


def slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def tool_path(name):
    return shutil.which(name) or next((p for p in (f"/usr/local/cuda/bin/{name}",) if os.path.exists(p)), name)


def run_on_gpu(case: SanCase, outdir: str) -> dict:
    base = os.path.join(outdir, slug(case.name))
    with open(base + ".cu", "w") as f:
        f.write(program(case))
    comp = subprocess.run([tool_path("nvcc"), "-lineinfo", "-arch=native", "-o", base, base + ".cu"],
                          capture_output=True, text=True)
    if comp.returncode:
        return {"name": case.name, "error": "nvcc: " + comp.stderr[-2000:]}
    try:
        r = subprocess.run([tool_path("compute-sanitizer"), "--tool", case.tool, "--print-limit", "50", base],
                           capture_output=True, text=True, timeout=int(os.environ.get("SANITIZER_TIMEOUT_S", 120)))
        log = r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        log = (e.stdout or b"").decode(errors="replace") + "\n[timed out after " + os.environ.get("SANITIZER_TIMEOUT_S", "120") + " s]"
    return {"name": case.name, "tool": case.tool, "log": log}


SKIP = re.compile(r"(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|Target application|Program hit|No errors)")
LINE = re.compile(r"(?:\bat\b|Device Frame:).*? in [\w.\-]+\.cu:(\d+)")
ACCESS = re.compile(r"(Read|Write) access at .*? in [\w.\-]+\.cu:(\d+)")


def parse(log: str, tool: str) -> list:
    """compute-sanitizer's report -> one dict per reported error: what (its first line), severity,
    lines (source lines in the program's .cu, device frames included) and, for races, the accesses."""
    found, cur = [], None
    for raw in log.splitlines():
        if not raw.startswith("========="):
            continue
        body = raw[9:]
        if body.startswith(" ") and not body.startswith("     "):
            text = body.strip()
            if not text or SKIP.match(text):
                cur = None
                continue
            sev, _, rest = text.partition(": ") if text.startswith(("Error: ", "Warning: ")) else ("Error", "", text)
            cur = {"kind": tool, "what": rest, "severity": sev, "lines": [], "accesses": []}
            found.append(cur)
        if cur is None or "Host Frame" in body:
            continue
        cur["lines"] += [int(x) for x in LINE.findall(body)]
        cur["accesses"] += [(k, int(n)) for k, n in ACCESS.findall(body)]
    return [f for f in found if f["lines"]]


def gpu_main(outdir):
    import tempfile
    os.makedirs(outdir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="sanitizer_")
    with ThreadPoolExecutor(8) as pool:
        only = [o for o in os.environ.get("SANITIZER_ONLY", "").split("|") if o]   # parts of names: only those
        results = list(pool.map(lambda c: run_on_gpu(c, work), [c for c in CASES if not only or any(o in c.name for o in only)]))
    versions = {t: subprocess.run([tool_path(t), "--version"], capture_output=True, text=True).stdout[-300:]
                for t in ("nvcc", "compute-sanitizer")}
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"versions": versions, "results": results}, f, indent=1)
    for r in results:
        print(f"== {r['name']}\n{r.get('log', r.get('error'))[-1500:]}")


# ------------------------------------------------------------------ cudalab's side and the comparison

def cudalab_findings(case: SanCase) -> list:
    import numpy as np
    import cudalab
    args = []
    for a in case.args:
        if a[0] == "int":
            args.append(a[1])
        elif a[2] == "null":
            args.append(None)
        else:
            d = cudalab.to_device(np.zeros(a[1], np.uint8)) if a[2] != "uninit" else cudalab.device_array(a[1], np.uint8)
            if a[2] == "freed":
                d.free()
            args.append(d)
    mod = cudalab.compile(case.source)
    extra = (case.tool,) if case.tool in ("racecheck", "initcheck", "memcheck") else ()
    with cudalab.check(*extra):
        try:
            rec = mod.k[case.grid, case.block, 0, case.shared](*args)
            found = rec.findings
        except cudalab.KernelError as e:
            found = e.findings
    return [f for f in found if f.kind == case.tool]


def _race(a, b):
    return "race " + " / ".join(f"{k} {n}" for k, n in sorted((a, b)))


def _access(head):
    """'Invalid __global__ write of size 4 bytes' -> '__global__ write' (cudalab says 'Misaligned' where
    compute-sanitizer says 'Invalid ... is misaligned': the comparison keeps the space and the access)."""
    m = re.search(r"(__\w+__) (memory )?(read|write|atomic)", head)
    return f"{'uninitialized ' if head.startswith('Uninitialized') else ''}{m.group(1)} {m.group(3)}" if m else head


def summarize_gpu(found, tool, severity="Error"):
    out = set()
    for f in found:
        if f["severity"] != severity:
            continue
        if tool == "racecheck":
            first, *others = f["accesses"]
            out.update(_race(first, o) for o in others)
        elif tool == "synccheck":
            out.add(f"barrier error line {f['lines'][-1]}")
        else:
            out.add(f"{_access(f['what'])} line {f['lines'][-1]}")
    return sorted(out)


def summarize_cudalab(found, tool):
    out = set()
    for f in found:
        if tool == "racecheck":
            first, second = re.match(r"Race reported between (\w+) access at .*? and (\w+) access", f.message).groups()
            l1, l2 = f.details["lines"]
            out.add(_race((first, l1), (second, l2)))
        elif tool == "synccheck":
            out.add(f"barrier error line {f.line}")
        else:
            out.add(f"{_access(f.message.splitlines()[0])} line {f.line}")
    return sorted(out)


def compare(results_path):
    """[(case, compute-sanitizer's findings, compute-sanitizer's warnings, cudalab's findings)] per case."""
    with open(results_path) as f:
        gpu = {r["name"]: r for r in json.load(f)["results"]}
    out = []
    for case in CASES:
        found = parse(gpu[case.name]["log"], case.tool)
        out.append((case, summarize_gpu(found, case.tool), summarize_gpu(found, case.tool, "Warning"),
                    summarize_cudalab(cudalab_findings(case), case.tool)))
    return out


def report_main(results_path, doc="docs/sanitizer_comparison.md"):
    rows, match = [], 0
    for case, g, warn, c in compare(results_path):
        same = g == c
        match += same
        note = "; ".join([case.note] * bool(case.note) + [f"(warning: {w})" for w in warn])
        rows.append(f"| {case.name} | {case.tool} | {'<br>'.join(g) or 'none'} | {'<br>'.join(c) or 'none'} | "
                    f"{'yes' if same else '**no**'} | {note} |")
    with open(doc, "w") as f:
        f.write(_DOC.format(n=len(CASES), match=match, rows="\n".join(rows)))
    print(f"{match} of {len(CASES)} cases match")


_DOC = """# cudalab's checks against compute-sanitizer

Each buggy (or correct) kernel below ran once on an NVIDIA H100 under `compute-sanitizer --tool <tool>`
(CUDA 13.0, `nvcc -lineinfo`) and once on cudalab's emulator with `cudalab.check(<tool>)` (synccheck
always runs there, and so does memcheck, which without `cudalab.check("memcheck")` only warns about an
access a GPU runs, such as one element past an array's end). Findings are compared by kind and source line; for races, by the two
accesses (Read/Write and line), in either order; compute-sanitizer's warnings (same-warp races) are shown in
the note column, since cudalab's racecheck looks at races between warps only. The GPU's logs are in
`tools/sanitizer_gpu_results.json`; regenerate with `python tools/sanitizer_gpu.py gpu OUTDIR` on a GPU
machine, then `python tools/sanitizer_gpu.py report OUTDIR/results.json` anywhere.

**{match} of {n} cases match.**

| kernel | tool | compute-sanitizer | cudalab | match | note |
| --- | --- | --- | --- | --- | --- |
{rows}
"""

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gpu", "report"):
        sys.exit(__doc__)
    (gpu_main if sys.argv[1] == "gpu" else report_main)(sys.argv[2])
