"""The notebooks' exercises: ``check("03-tiled", kernel=MatMulTiled)`` runs your answer on test
inputs, compares it with numpy (or with the device model), and says what is wrong and what to try.

Each check returns a ``Result``: true when the answer passes, and printed as a verdict with a hint
tied to the usual mistake (a missing ``__syncthreads()``, a wrong index, an unguarded last block,
a bank conflict, an uncoalesced access, ...). ``EXERCISES`` lists them with what each asks for.
"""
from __future__ import annotations

import contextlib
import inspect
import io
from dataclasses import dataclass

import numpy as np

from .errors import CudaError, KernelError


@dataclass
class Result:
    """The verdict of one check: ``passed``, what happened (``message``) and what to try (``hint``)."""

    exercise: str
    passed: bool
    message: str
    hint: str = ""

    def __bool__(self):
        return self.passed

    def __repr__(self):
        mark = "PASSED" if self.passed else "NOT YET"
        text = f"[{mark}] {self.exercise}: {self.message}"
        return text + (f"\nHint: {self.hint}" if self.hint else "")


class _Fail(Exception):
    def __init__(self, message, hint=""):
        super().__init__(message)
        self.message, self.hint = message, hint


EXERCISES: dict = {}


def exercise(name, asks):
    def register(fn):
        EXERCISES[name] = (asks, fn)
        return fn
    return register


def check(name: str, **answer) -> Result:
    """Check your answer to exercise ``name`` (see ``EXERCISES``): ``kernel=``, ``source=``, ..."""
    if name not in EXERCISES:
        raise KeyError(f"no exercise {name!r}; the exercises are {', '.join(EXERCISES)}")
    asks, fn = EXERCISES[name]
    try:
        inspect.signature(fn).bind(**answer)
    except TypeError:
        return Result(name, False, f"this check takes {asks}.", "Call it as in the notebook's exercise cell.")
    try:
        message = fn(**answer)
    except _Fail as f:
        return Result(name, False, f.message, f.hint)
    return Result(name, True, message)


# ---------------------------------------------------------------------------- helpers
BOUNDS_HINT = ("The grid has more threads than elements: the last blocks' extra threads must not touch memory. "
               "Return early (or skip the work) when the index is past the end.")


def _launch(kernel, grid, block, args, checks=("racecheck",), observers=(), bounds_hint=BOUNDS_HINT):
    """Launch under the given sanitizer checks; a kernel error or a race becomes a _Fail with a hint.

    memcheck is asked for explicitly, as compute-sanitizer runs it: an exercise's kernel that reads one
    element past the end fails its check, although a GPU (and cudalab's plain launch) would run it on."""
    from . import check as sanitize
    if not hasattr(kernel, "launch"):
        raise _Fail(f"expected a kernel (the name a %%cuda cell defines), got {type(kernel).__name__}.",
                    "Run the %%cuda cell first, then pass its kernel: check(..., kernel=MyKernel).")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), sanitize("memcheck", *checks):
        try:
            rec = kernel.launch(grid, block, args, observers=observers)
        except KernelError as e:
            f = e.findings[0] if e.findings else None
            where = str(e).splitlines()
            first = where[0] if where else str(e)
            if f is not None and f.kind == "memcheck":
                raise _Fail(f"the kernel stopped: {first} at line {f.line}, thread {f.thread} of block {f.block}.",
                            bounds_hint) from None
            if f is not None and f.kind == "watchdog":
                raise _Fail(f"the kernel ran too long: {first}", "Check that every loop ends "
                            "(the loop variable changes and the condition becomes false).") from None
            if f is not None and f.kind == "synccheck":
                raise _Fail(f"the kernel stopped: {first}", "__syncthreads() must be reached by every thread of "
                            "the block: do not put it inside an if that only some threads enter.") from None
            raise _Fail(f"the kernel stopped: {e}") from None
        except CudaError as e:
            raise _Fail(f"the launch failed: {e}", "Check the kernel's parameters: the check passes them "
                        "in the order the exercise gives.") from None
    races = [f for f in rec.findings if f.kind == "racecheck"]
    if races:
        f = races[0]
        hazard = f.details.get("hazard", "")
        first, second = f.details.get("lines", (None, None))
        why = {"RAW": "one thread reads shared memory before another thread of the block has written it",
               "WAR": "a thread overwrites shared memory that another thread of the block has not read yet",
               "WAW": "two threads write the same shared word"}.get(hazard, "threads of a block race")
        raise _Fail(f"racecheck found a {hazard} hazard between line {first} and line {second}: {why}.",
                    f"Put a __syncthreads() between line {first} and line {second}, where every thread of "
                    "the block reaches it.")
    uninit = [f for f in rec.findings if f.kind == "initcheck"]
    if uninit:
        f = uninit[0]
        raise _Fail(f"initcheck: line {f.line} reads memory nobody wrote (thread {f.thread} of block {f.block}).",
                    "A thread reads an element no thread stored: check which elements each thread writes "
                    "before the others read them, at the edges too.")
    return rec


def _where(idx):
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _wrong(got, want, name, rtol=1e-4, atol=1e-4):
    """None when ``got`` matches ``want``; else a sentence naming how many and which elements are wrong."""
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol) if got.dtype.kind == "f" else got != want
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    first = tuple(idx[0])
    rows = ""
    if got.ndim == 2:
        rows = f" in rows {sorted(set(idx[:, 0].tolist()))[:6]}"[:-1] + (", ...]" if len(set(idx[:, 0].tolist())) > 6 else "]")
    return (f"{int(bad.sum())} of {got.size} elements of {name} are wrong{rows}; e.g. {name}{_where(first)} = "
            f"{got[first]:.6g}, expected {want[first]:.6g}.")


def _rng():
    return np.random.default_rng(2024)


# ---------------------------------------------------------------------------- 01 thread hierarchy
@exercise("01-matadd", "kernel=MatAdd, with MatAdd(const float* A, const float* B, float* C, int width, int height)")
def _matadd(kernel):
    width, height = 50, 37
    rng = _rng()
    A = rng.random((height, width), dtype=np.float32)
    B = rng.random((height, width), dtype=np.float32)
    C = np.full((height, width), np.nan, np.float32)
    grid = ((width + 15) // 16, (height + 15) // 16)
    _launch(kernel, grid, (16, 16), (A, B, C, np.int32(width), np.int32(height)), bounds_hint=(
        f"The grid is {grid[0] * 16} x {grid[1] * 16} threads for a {width} x {height} matrix: threads with "
        "col >= width or row >= height must not touch memory (if (col < width && row < height) ...)."))
    unwritten = np.isnan(C)
    if unwritten.any():
        r, c = np.argwhere(unwritten)[0]
        raise _Fail(f"{int(unwritten.sum())} elements of C were never written, e.g. C[{r}, {c}].",
                    "Every (row, col) needs its own thread: col = blockIdx.x * blockDim.x + threadIdx.x, "
                    "row = blockIdx.y * blockDim.y + threadIdx.y, element row * width + col.")
    bad = _wrong(C, A + B, "C")
    if bad:
        raise _Fail(bad, "Element (row, col) of a row-major matrix is at row * width + col (width, not height).")
    return f"C = A + B for a {height} x {width} matrix on a {grid[0]} x {grid[1]} grid of 16 x 16 blocks."


# ---------------------------------------------------------------------------- 02 memory
@exercise("02-reverse", "kernel=reverseBlocks, with reverseBlocks(int* d): each block of 64 threads reverses its 64 elements")
def _reverse(kernel):
    from .analysis.metrics import MetricsObserver
    d = np.arange(3 * 64, dtype=np.int32)
    want = d.reshape(3, 64)[:, ::-1].reshape(-1).copy()
    obs = MetricsObserver()
    rec = _launch(kernel, 3, 64, (d,), observers=[obs])
    if np.array_equal(d, np.arange(3 * 64)[::-1]):
        raise _Fail("the whole array came out reversed, but each block should reverse only its own 64 elements.",
                    "Thread t of block b reads s[blockDim.x - 1 - t] and writes d[b * blockDim.x + t].")
    bad = _wrong(d, want, "d")
    if bad:
        raise _Fail(bad, "Thread t stores d[i] into s[t]; after __syncthreads() it writes s[blockDim.x - 1 - t] to d[i], "
                    "with i = blockIdx.x * blockDim.x + t.")
    if rec.metrics.get("smsp__sass_inst_executed_op_shared_ld.sum", 0) == 0:
        raise _Fail("the result is right, but the kernel never reads shared memory.",
                    "In place in global memory, thread t may overwrite d[63 - t] before thread 63 - t has read it "
                    "(another warp!). Stage the block's elements in a __shared__ array.")
    return "each block reversed its 64 elements through shared memory, with no race."


# ---------------------------------------------------------------------------- 03 tiled MatMul
@exercise("03-tiled", "kernel=MatMulTiled, with MatMulTiled(const float* A, const float* B, float* C, int N), "
                      "N a multiple of TILE = 16, blocks of 16 x 16 threads")
def _tiled(kernel):
    rng = _rng()
    for N in (32, 48):
        A = rng.random((N, N), dtype=np.float32)
        B = rng.random((N, N), dtype=np.float32)
        C = np.zeros((N, N), np.float32)
        _launch(kernel, (N // 16, N // 16), (16, 16), (A, B, C, np.int32(N)), bounds_hint=(
            "A thread read or wrote outside the matrices: a tile of A starts at column t * TILE, a tile of B "
            "at row t * TILE, and the loop runs over N / TILE tiles."))
        want = A.astype(np.float64) @ B
        bad = _wrong(C, want, "C", rtol=1e-4)
        if not bad:
            continue
        if np.allclose(C, A.astype(np.float64) @ B.T, rtol=1e-4):
            hint = "You multiplied by B transposed: the tile of B is B[(t * TILE + threadIdx.y) * N + col]."
        elif np.allclose(C, A[:, :16].astype(np.float64) @ B[:16], rtol=1e-4):
            hint = "Only the first tile was added: loop t over all N / TILE tiles, adding each into the same sum."
        elif np.allclose(C, (A.astype(np.float64) @ B).T, rtol=1e-4):
            hint = "C came out transposed: row comes from blockIdx.y / threadIdx.y, col from blockIdx.x / threadIdx.x."
        else:
            hint = ("As[ty][tx] = A[row * N + t * TILE + tx]; Bs[ty][tx] = B[(t * TILE + ty) * N + col]; then "
                    "sum += As[ty][k] * Bs[k][tx] for k < TILE.")
        raise _Fail(f"N = {N}: {bad}", hint)
    return "C = A @ B for N = 32 and 48, and racecheck found no hazards."


# ---------------------------------------------------------------------------- 04 bank conflicts
def _metric(rec, name):
    return rec.metrics.get(name, 0)


@exercise("04-transpose", "kernel=transposeShared, with transposeShared(const float* in, float* out, int n), "
                          "blocks of 32 x 32 threads, n a multiple of 32")
def _transpose(kernel):
    from .analysis.metrics import MetricsObserver
    n = 64
    src = getattr(getattr(kernel, "module", None), "source", None)
    A = np.arange(n * n, dtype=np.float32).reshape(n, n)
    out = np.zeros_like(A)
    obs = MetricsObserver(src)
    rec = _launch(kernel, (n // 32, n // 32), (32, 32), (A, out, np.int32(n)), observers=[obs])
    bad = _wrong(out, A.T, "out")
    if bad:
        raise _Fail(bad, "Read the tile row by row (tile[ty][tx] = in[y * n + x]), then write it out from the "
                    "transposed block: x = blockIdx.y * 32 + tx, y = blockIdx.x * 32 + ty, out[y * n + x] = tile[tx][ty].")
    if _metric(rec, "smsp__sass_inst_executed_op_shared_ld.sum") == 0:
        raise _Fail("out = in^T, but without shared memory: one of the two global accesses walks down a column.",
                    "Stage a 32 x 32 tile in __shared__ memory so that both the load and the store are coalesced.")
    conflicts = sum(v for k, v in rec.metrics.items() if "bank_conflicts" in k)
    if conflicts:
        worst = obs.findings(1)
        raise _Fail(f"out = in^T, but shared memory had {conflicts:,} bank conflicts. {worst[0] if worst else ''}",
                    "Declare the tile as [32][33]: the extra column shifts each row by one bank.")
    req = _metric(rec, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    sec = _metric(rec, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    if req and sec > 4 * req:
        raise _Fail(f"out = in^T with no bank conflicts, but the stores take {sec / req:.0f} sectors per request (4 is ideal).",
                    "Write out[y * n + x] with x following threadIdx.x, and read the tile transposed instead.")
    return "out = in^T, with 0 bank conflicts and coalesced loads and stores (4 sectors per request)."


# ---------------------------------------------------------------------------- 05 coalescing
@exercise("05-coalesced", "kernel=scaleMatrix, with scaleMatrix(float* M, int width, int height, float s), "
                          "blocks of 32 x 8 threads")
def _coalesced(kernel):
    width = height = 64
    M = np.arange(width * height, dtype=np.float32).reshape(height, width)
    want = 3 * M
    rec = _launch(kernel, (width // 32, height // 8), (32, 8),
                  (M, np.int32(width), np.int32(height), np.float32(3)), observers=[_metrics()])
    bad = _wrong(M, want, "M")
    if bad:
        raise _Fail(bad, "Each element must be scaled once: M[row * width + col] *= s.")
    req = _metric(rec, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    sec = _metric(rec, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    if sec > 4 * req:
        raise _Fail(f"M is right, but each warp's load touches {sec / req:.0f} sectors of 32 bytes, where 4 would do.",
                    "The 32 threads of a warp differ in threadIdx.x: let threadIdx.x pick the column "
                    "(col = blockIdx.x * blockDim.x + threadIdx.x), so neighbours read neighbouring floats.")
    return f"M scaled, with {sec / req:.0f} sectors per request (ideal: 4 for 32 floats)."


def _metrics():
    from .analysis.metrics import MetricsObserver
    return MetricsObserver()


# ---------------------------------------------------------------------------- 06 reductions
@exercise("06-blocksum", "kernel=blockSum, with blockSum(const float* in, float* out, int n): "
                         "out[b] = the sum of block b's 256 elements")
def _blocksum(kernel):
    n, block = 1000, 256
    x = _rng().random(n, dtype=np.float32)
    nb = (n + block - 1) // block
    out = np.full(nb, np.nan, np.float32)
    _launch(kernel, nb, block, (x, out, np.int32(n)), bounds_hint=(
        "The last block has threads past n: they must add 0, not read in[i] (float v = i < n ? in[i] : 0.0f)."))
    padded = np.zeros(nb * block, np.float64)
    padded[:n] = x
    want = padded.reshape(nb, block).sum(1)
    bad = _wrong(out, want, "out", rtol=1e-4)
    if not bad:
        return f"the {nb} block sums are right (n = {n}, the last block partly full)."
    if np.isnan(out).any():
        hint = "One thread per block (threadIdx.x == 0) writes the block's total to out[blockIdx.x]."
    elif np.allclose(out, padded.reshape(nb, block)[:, :32].sum(1), rtol=1e-4):
        hint = ("Only warp 0's sum arrived: after the shuffles each warp has its own partial sum; put them in "
                "shared memory, __syncthreads(), and let warp 0 add them up.")
    else:
        hint = ("Halve the stride each step (for (int s = blockDim.x / 2; s > 0; s >>= 1)), only threads "
                "t < s add s[t + s], and every step ends with __syncthreads().")
    raise _Fail(bad, hint)


# ---------------------------------------------------------------------------- 07 atomics
@exercise("07-histogram", "kernel=histogram, with histogram(const unsigned int* data, int n, unsigned int* bins), "
                          "64 bins, values 0..63")
def _histogram(kernel):
    n = 5000
    data = _rng().integers(0, 64, n).astype(np.uint32)
    bins = np.zeros(64, np.uint32)
    _launch(kernel, (n + 255) // 256, 256, (data, np.int32(n), bins))
    want = np.bincount(data, minlength=64).astype(np.uint32)
    if np.array_equal(bins, want):
        return f"all 64 bins right for {n} values."
    total = int(bins.sum())
    if total < n:
        raise _Fail(f"the bins count {total} values, but there are {n}: updates were lost.",
                    "Threads of a warp that see the same value read the same count, add 1 and write it back, so "
                    "all but one increment is lost. Use atomicAdd(&bins[v], 1).")
    if total > n:
        raise _Fail(f"the bins count {total} values, but there are {n}: some were counted twice.",
                    "If each block keeps its own bins in shared memory, zero them first, and add each block's "
                    "bins to the global ones once (one thread per bin), after a __syncthreads().")
    raise _Fail(_wrong(bins.astype(np.int64), want.astype(np.int64), "bins"),
                "The count adds up, but lands in the wrong bins: the bin of data[i] is data[i] itself.")


# ---------------------------------------------------------------------------- 08 independent thread scheduling
@exercise("08-warpsum", "kernel=warpSum, with warpSum(const float* in, float* out): "
                        "blocks of 64 threads; out[b] = the sum of block b's 64 elements")
def _warpsum(kernel):
    x = np.arange(4 * 64, dtype=np.float32) % 7
    out = np.zeros(4, np.float32)
    _launch(kernel, 4, 64, (x, out))
    want = x.reshape(4, 64).sum(1)
    bad = _wrong(out, want, "out")
    if bad:
        raise _Fail(bad, "Since Volta, the lanes of a warp need not run in step (independent thread scheduling), "
                    "and without a barrier the compiler keeps s[t] in a register. In the last warp, separate "
                    "each step's read of s[t + offset] from its write with __syncwarp(), or use "
                    "__shfl_down_sync instead of shared memory.")
    return "the block sums are right: the last warp's steps are ordered by __syncwarp (or shuffles)."


# ---------------------------------------------------------------------------- 09 streams
OVERLAP_BYTES = 64 << 20      # 64 MiB in, 64 MiB out
OVERLAP_KERNEL_US = 2000.0


@exercise("09-overlap", "timeline=tl: a cudalab.device.timeline.Timeline (device 'A100') that copies 64 MiB in, "
                        "runs 2000 us of kernels and copies 64 MiB out, in under 60% of the serial time")
def _overlap(timeline):
    from .device.timeline import Timeline
    rows = timeline.rows()
    h2d = sum(r.get("bytes", 0) for r in rows if r["kind"] == "H2D")
    d2h = sum(r.get("bytes", 0) for r in rows if r["kind"] == "D2H")
    work = sum(r["end"] - r["start"] for r in rows if r["kind"] == "kernel")
    if h2d != OVERLAP_BYTES or d2h != OVERLAP_BYTES:
        raise _Fail(f"the copies move {h2d:,} bytes in and {d2h:,} out; the task is {OVERLAP_BYTES:,} each way.",
                    "Split the 64 MiB into chunks: each chunk's copy moves OVERLAP_BYTES // chunks bytes.")
    if abs(work - OVERLAP_KERNEL_US) > 1e-6:
        raise _Fail(f"the kernels run {work:g} us in total; the task is {OVERLAP_KERNEL_US:g} us.",
                    "Each chunk's kernel does its share: OVERLAP_KERNEL_US / chunks.")
    serial = Timeline(timeline.profile)
    serial.copy(OVERLAP_BYTES, "H2D")
    serial.kernel("k", OVERLAP_KERNEL_US)
    serial.copy(OVERLAP_BYTES, "D2H")
    serial.synchronize()
    ratio = timeline.end / serial.end
    if ratio < 0.6:
        return f"{timeline.end:,.0f} us instead of {serial.end:,.0f} us serially ({ratio:.0%})."
    streams = {r["stream"] for r in rows if r["kind"] in ("H2D", "D2H", "kernel")}
    if any(r["kind"] in ("H2D", "D2H") and not r.get("pinned") for r in rows):
        hint = ("A pageable copy makes the host wait, so nothing can be issued behind it, and it goes at half "
                "speed. Copy from pinned memory: pinned=True (cudaMallocHost + cudaMemcpyAsync).")
    elif streams <= {0}:
        hint = "Everything is in the default stream, which runs in order. Give each chunk its own stream (1, 2, 3, ...)."
    else:
        hint = ("Use more chunks, each with its copy in, kernel and copy out in one stream, so that one chunk's "
                "kernel runs while the next one's copy is on the copy engine.")
    raise _Fail(f"{timeline.end:,.0f} us, {ratio:.0%} of the serial {serial.end:,.0f} us; the goal is under 60%.", hint)


# ---------------------------------------------------------------------------- 10 occupancy
@exercise("10-occupancy", "kernel=k, block_size=n: the smallest block size (a multiple of 32) at which k reaches "
                          "its highest occupancy on the A100")
def _occupancy(kernel, block_size):
    from .device.occupancy import occupancy
    occ = occupancy(kernel, block_size, device="A100")
    best = max(row["occupancy"] for row in occ.curve)
    smallest = min(row["block_size"] for row in occ.curve if row["occupancy"] == best)
    if block_size % 32:
        raise _Fail(f"{block_size} threads is not a whole number of warps.",
                    f"Round up to a multiple of 32: the last warp of a block of {block_size} threads has idle lanes.")
    if occ.occupancy < best:
        raise _Fail(f"{block_size} threads per block: {occ.summary()}",
                    f"The limiter is {occ.limiter}. Try larger blocks: the best this kernel can do is {best:.0%}.")
    if block_size > smallest:
        raise _Fail(f"{block_size} threads reaches {best:.0%}, but so does a smaller block.",
                    "Walk down the curve (occupancy(...).curve) to the smallest block size with the same occupancy.")
    return f"{block_size} threads per block: {occ.summary()}"


# ---------------------------------------------------------------------------- 11 compute capabilities
QUESTIONS = {
    "max_threads_per_block": ("sm_80", "max_threads_per_block", "Maximum number of threads per block"),
    "max_warps_per_sm_86": ("sm_86", "max_warps_per_sm", "Maximum number of resident warps per SM"),
    "max_blocks_per_sm_75": ("sm_75", "max_blocks_per_sm", "Maximum number of resident blocks per SM"),
    "shared_per_sm_kb_80": ("sm_80", "shared_per_sm", "Maximum amount of shared memory per SM (KB)"),
}


@exercise("11-limits", f"answers={{...}}: a dict with the keys {', '.join(QUESTIONS)}")
def _limits(answers):
    from .device import profiles
    missing = [k for k in QUESTIONS if k not in answers]
    if missing:
        raise _Fail(f"no answer for {', '.join(missing)}.", "Fill in every key of the answers dict.")
    for key, (cc, attr, row) in QUESTIONS.items():
        want = getattr(profiles.get(cc), attr)
        if key.startswith("shared_per_sm_kb"):
            want //= 1024
        if answers[key] != want:
            raise _Fail(f"{key} = {answers[key]} is not right.",
                        f"Look up the row \"{row}\" of the technical specifications table, in the column for "
                        f"compute capability {cc[3]}.{cc[4]}; cudalab.device.profiles.get('{cc}') has it too.")
    return "all four limits match the Programming Guide's table."


# ---------------------------------------------------------------------------- 12 sanitizers
@exercise("12-fixed", "kernel=neighbourSum, with neighbourSum(const int* in, int* out, int n): "
                      "out[i] = in[i] + in[i + 1], and out[n - 1] = in[n - 1]")
def _fixed(kernel):
    n = 1000
    x = _rng().integers(0, 100, n).astype(np.int32)
    d_in = _to_device(x)
    d_out = _device_array(n, np.int32)
    _launch(kernel, (n + 255) // 256, 256, (d_in, d_out, np.int32(n)), checks=("racecheck", "initcheck"),
            bounds_hint="memcheck caught an access past the end: guard every in[...] and out[...] with the index "
                        "< n, the in[i + 1] too (it is past the end for the last element).")
    got = d_out.copy_to_host()
    want = x.copy()
    want[:-1] += x[1:]
    bad = _wrong(got, want, "out")
    if bad:
        raise _Fail(bad, "The last element has no right neighbour: out[n - 1] = in[n - 1].")
    return "memcheck, racecheck and initcheck are quiet, and out is right."


def _to_device(x):
    from .runtime.arrays import to_device
    return to_device(x)


def _device_array(n, dtype):
    from .runtime.arrays import device_array
    return device_array(n, dtype)


# ---------------------------------------------------------------------------- 13 whole programs
@exercise("13-program", "source=src: a whole program (int main) that adds a[i] = i and b[i] = 2 * i on the GPU "
                        "for n = 1000 and prints 'sum = <the sum of c>'")
def _program(source):
    from .programs import has_main, run_program_source
    if not has_main(source):
        raise _Fail("the source has no int main(): it is a kernel, not a program.",
                    "Write main: allocate with cudaMalloc, copy in with cudaMemcpy, launch, copy back, print.")
    try:
        res = run_program_source(source, timeout=60)
    except CudaError as e:
        raise _Fail(f"the program did not compile: {e}", "Fix the first error the compiler names.") from None
    printed = [line for line in res.stdout.splitlines() if line.startswith("sum =")]
    if not res.ok:
        raise _Fail(f"the program exited with code {res.returncode}. {res.stderr.strip()[-300:]}",
                    "Check each CUDA call's return value (the CHECK macro) to see which one failed.")
    if not res.launches:
        raise _Fail("the program launched no kernel.", "Launch it with kernel<<<blocks, threads>>>(...).")
    if not printed:
        raise _Fail("the program printed no line starting with 'sum ='.", 'printf("sum = %.0f\\n", sum);')
    value = printed[-1].split("=", 1)[1].strip()
    want = 3 * 999 * 1000 // 2
    try:
        ok = float(value) == want
    except ValueError:
        ok = False
    if not ok:
        hint = ("c is still zero on the host: copy it back with cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost) "
                "before summing." if value in ("0", "0.0", "0.000000") else
                "Copy c back (cudaMemcpyDeviceToHost) after the launch, and give every one of the 1000 elements "
                "a thread: blocks = (n + threads - 1) / threads, and the kernel skips i >= n.")
        raise _Fail(f"the program printed sum = {value}; expected {want}.", hint)
    return f"the program printed sum = {want} after {len(res.launches)} kernel launch(es)."


from . import puzzles  # noqa: E402,F401  (notebook 15's Python exercises register themselves)
