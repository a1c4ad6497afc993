"""cuBLAS's routines (the v2 API) as numpy reference implementations on the emulated device memory.

``run(ctx, "cublasSgemm_v2", stream, args, device_scalars)`` does what cuBLAS's routine does to the
device memory the emulator holds, checks its arguments as cuBLAS does (``LibraryError`` with
CUBLAS_STATUS_INVALID_VALUE, naming the argument), and puts one row named after the routine on the
stream's timeline. ``args`` maps the C parameter names of cublas_api.h (``transa``, ``m``, ``A``,
``lda``, ``alpha``, ...) to numbers; a scalar (alpha, beta) is ``("host", bytes)`` or
``("device", address)`` as the handle's pointer mode says. The result of a reduction (dot, nrm2,
asum, amax) comes back as bytes for a host ``result`` pointer and is written to device memory for a
device one.

The arithmetic is numpy's (its BLAS for products), in the routine's own precision: results match
cuBLAS within floating-point rounding, not bit for bit (a GPU sums in another order, and may use
tensor cores), TF32 aside: when the program asks for it (the handle's math mode, sent with every
call as ``mathMode``, or a fast compute type) the float32 inputs of a product are rounded as an
H200's cuBLAS rounds them (``precision``). cuBLAS's own kernels are not emulated, so a library call has no instruction
counts or profile, only its row on the timeline (``operands.on_timeline``).
"""
from __future__ import annotations

import re

import numpy as np

from . import precision
from .operands import (DATA_TYPES, LibraryError, Operands, affordable, bf16_bits, bf16_load, gemm_precision,
                       on_timeline)

SUCCESS, NOT_INITIALIZED, INVALID_VALUE, EXECUTION_FAILED, NOT_SUPPORTED = 0, 1, 7, 13, 15

# the letter(s) after "cublas": vector/matrix type, scalar type (alpha), result type (nrm2, asum)
TYPES = {"S": (np.float32,) * 3, "D": (np.float64,) * 3, "C": (np.complex64, np.complex64, np.float32),
         "Z": (np.complex128, np.complex128, np.float64), "H": (np.float16, np.float16, np.float16),
         "Cs": (np.complex64, np.float32, np.float32), "Zd": (np.complex128, np.float64, np.float64),
         "Sc": (np.complex64, np.complex64, np.float32), "Dz": (np.complex128, np.complex128, np.float64)}
# cublasComputeType_t -> the precision the products are summed in
COMPUTE_TYPES = {64: np.float16, 65: np.float16, 68: np.float32, 69: np.float32, 74: np.float32, 75: np.float32,
                 77: np.float32, 78: np.float32, 70: np.float64, 71: np.float64, 79: np.float64, 72: np.int32,
                 73: np.int32}
_NAME = re.compile(r"^cublas(?P<body>[A-Za-z0-9]+?)(?:_v2)?(?:_64)?$")


class Call:
    """One routine's arguments, its device memory and what it returns to the host."""

    def __init__(self, ctx, routine: str, stream: int, args: dict, device_scalars: bool, types):
        self.ctx, self.routine, self.stream, self.args = ctx, routine, stream, args
        self.device_scalars = device_scalars
        self.data, self.scalar_type, self.result_type = (np.dtype(t) for t in types)
        self.memory = Operands(ctx, shown_name(routine), EXECUTION_FAILED)
        self.returned = b""
        # the handle's cublasMath_t, and NVIDIA_TF32_OVERRIDE=0 in the program's environment (the shim's)
        self.math_mode, self.tf32_off = args.pop("mathMode", 0), args.pop("tf32Override", 1) == 0

    def __getitem__(self, name):
        return self.args[name]

    def invalid(self, name: str, why: str):
        position = list(self.args).index(name) + 1 if name in self.args else "?"   # the handle is 0
        raise LibraryError(f"{shown_name(self.routine)}: {name} = {self.args.get(name)} {why} (parameter {position}), so cuBLAS "
                           "returns CUBLAS_STATUS_INVALID_VALUE and does nothing.", INVALID_VALUE)

    def require(self, ok: bool, name: str, why: str):
        if not ok:
            self.invalid(name, why)

    def scalar(self, name: str, dtype=None):
        """alpha or beta: the value behind a host pointer, or read from device memory."""
        dtype = np.dtype(dtype or self.scalar_type)
        where, value = self.args[name]
        if where == "host":
            return np.frombuffer(value, dtype, 1)[0]
        return self.memory.array(name, value, 1, dtype)[0]

    def result(self, value, dtype=None):
        """A reduction's result: to the host pointer (bytes back to the program) or to device memory."""
        value = np.asarray(value, dtype or self.result_type).reshape(1)
        if self.device_scalars:
            self.memory.store(self.memory.array("result", self["result"], 1, value.dtype), value)
        else:
            self.returned = value.tobytes()

    def op(self, which: str):
        """transa/transb/trans: CUBLAS_OP_N, _T or _C."""
        t = self[which]
        self.require(t in (0, 1, 2), which, "is not CUBLAS_OP_N, CUBLAS_OP_T or CUBLAS_OP_C")
        return t

    def vector(self, name, n, inc_name, dtype=None):
        return self.memory.vector(name, self[name], n, self[inc_name], dtype or self.data)

    def timeline(self, flops, nbytes):
        on_timeline(self.ctx, self.stream, shown_name(self.routine), flops, nbytes)


def shown_name(routine: str) -> str:
    """The routine as a program calls it: cublasSgemm_v2 -> cublasSgemm (cublas_v2.h's macros)."""
    return routine.replace("_v2", "")


def _apply(t: int, a: np.ndarray) -> np.ndarray:
    return a if t == 0 else a.T if t == 1 else a.conj().T


# ---------------------------------------------------------------------------------------- level 1
def axpy(c: Call):
    n = c["n"]
    if n <= 0:
        return
    x, y = c.vector("x", n, "incx"), c.vector("y", n, "incy")
    alpha = c.scalar("alpha")
    c.memory.store(y, y + alpha * x)
    c.timeline(2 * n, 3 * n * c.data.itemsize)


def scal(c: Call):
    n = c["n"]
    if n <= 0 or c["incx"] <= 0:
        return
    x = c.vector("x", n, "incx")
    c.memory.store(x, c.scalar("alpha") * x)
    c.timeline(n, 2 * n * c.data.itemsize)


# A reduction over no elements writes no result (an H200's cuBLAS 13 leaves *result as it was for
# dot and amax with n = 0), where reference BLAS would return 0.
def _dot(c: Call, conjugate: bool):
    n = c["n"]
    if n <= 0:
        return
    x, y = c.vector("x", n, "incx"), c.vector("y", n, "incy")
    c.result(np.vdot(x, y) if conjugate else np.dot(x, y), c.data)
    c.timeline(2 * n, 2 * n * c.data.itemsize)


def dot(c: Call):
    _dot(c, False)


def dotc(c: Call):
    _dot(c, True)


def nrm2(c: Call):
    n = c["n"]
    if n <= 0 or c["incx"] <= 0:
        return
    x = c.vector("x", n, "incx")
    c.result(np.sqrt(np.sum(np.abs(x).astype(np.float64) ** 2)))
    c.timeline(2 * n, n * c.data.itemsize)


def asum(c: Call):
    """Sum of |x_i|; for complex vectors |re| + |im|, as BLAS defines it."""
    n = c["n"]
    if n <= 0 or c["incx"] <= 0:
        return
    x = c.vector("x", n, "incx")
    c.result(np.sum(np.abs(x.real) + np.abs(x.imag)) if np.iscomplexobj(x) else np.sum(np.abs(x)))
    c.timeline(n, n * c.data.itemsize)


def _extreme(c: Call, pick):
    """amax/amin: the 1-based index of the first largest (smallest) |re| + |im|."""
    n, dtype = c["n"], np.int64 if c.args.get("_64") else np.int32
    if n <= 0 or c["incx"] <= 0:
        return
    x = c.vector("x", n, "incx")
    size = np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)
    c.result(int(pick(size)) + 1, dtype)
    c.timeline(n, n * c.data.itemsize)


def amax(c: Call):
    _extreme(c, np.argmax)


def amin(c: Call):
    _extreme(c, np.argmin)


def copy(c: Call):
    n = c["n"]
    if n <= 0:
        return
    c.memory.store(c.vector("y", n, "incy"), c.vector("x", n, "incx"))
    c.timeline(0, 2 * n * c.data.itemsize)


def swap(c: Call):
    n = c["n"]
    if n <= 0:
        return
    x, y = c.vector("x", n, "incx"), c.vector("y", n, "incy")
    old = x.copy()
    c.memory.store(x, y)
    c.memory.store(y, old)
    c.timeline(0, 4 * n * c.data.itemsize)


# ---------------------------------------------------------------------------------------- level 2
def gemv(c: Call):
    """y = alpha op(A) x + beta y, A an m x n matrix."""
    t, m, n = c.op("trans"), c["m"], c["n"]
    c.require(m >= 0, "m", "is negative")
    c.require(n >= 0, "n", "is negative")
    c.require(c["lda"] >= max(1, m), "lda", f"is less than max(1, m) = {max(1, m)}")
    c.require(c["incx"] != 0, "incx", "is zero")
    c.require(c["incy"] != 0, "incy", "is zero")
    if m == 0 or n == 0:
        return
    a = c.memory.matrix("A", c["A"], m, n, c["lda"], c.data)
    rows, cols = (m, n) if t == 0 else (n, m)
    x, y = c.vector("x", cols, "incx"), c.vector("y", rows, "incy")
    _update(c, y, _apply(t, a) @ x)
    c.timeline(2 * m * n, (m * n + m + 2 * n) * c.data.itemsize)


def _update(c: Call, out: np.ndarray, product: np.ndarray):
    """out = alpha * product + beta * out; with beta == 0, out is not read (BLAS: a NaN there stays out)."""
    alpha, beta = c.scalar("alpha"), c.scalar("beta")
    value = alpha * product if beta == 0 else alpha * product + beta * out
    c.memory.store(out, value)


def _ger(c: Call, conjugate: bool):
    """A = alpha x y^T + A (y conjugated for gerc)."""
    m, n = c["m"], c["n"]
    c.require(m >= 0, "m", "is negative")
    c.require(n >= 0, "n", "is negative")
    c.require(c["incx"] != 0, "incx", "is zero")
    c.require(c["incy"] != 0, "incy", "is zero")
    c.require(c["lda"] >= max(1, m), "lda", f"is less than max(1, m) = {max(1, m)}")
    if m == 0 or n == 0:
        return
    x, y = c.vector("x", m, "incx"), c.vector("y", n, "incy")
    a = c.memory.matrix("A", c["A"], m, n, c["lda"], c.data)
    c.memory.store(a, a + c.scalar("alpha") * np.outer(x, y.conj() if conjugate else y))
    c.timeline(2 * m * n, 2 * m * n * c.data.itemsize)


def ger(c: Call):
    _ger(c, False)


def gerc(c: Call):
    _ger(c, True)


# ---------------------------------------------------------------------------------------- level 3
def _gemm_shapes(c: Call):
    ta, tb = c.op("transa"), c.op("transb")
    m, n, k = c["m"], c["n"], c["k"]
    for name in ("m", "n", "k"):
        c.require(c[name] >= 0, name, "is negative")
    a_rows, b_rows = (m if ta == 0 else k), (k if tb == 0 else n)
    c.require(c["lda"] >= max(1, a_rows), "lda", f"is less than the rows of the stored A, max(1, {a_rows})")
    c.require(c["ldb"] >= max(1, b_rows), "ldb", f"is less than the rows of the stored B, max(1, {b_rows})")
    c.require(c["ldc"] >= max(1, m), "ldc", f"is less than max(1, m) = {max(1, m)}")
    return ta, tb, m, n, k, (a_rows, k + m - a_rows), (b_rows, k + n - b_rows)


def _product(c: Call, ta, tb, a, b, compute):
    """op(A) op(B) summed in the compute precision (half products summed in float32, as tensor cores do),
    float32 inputs rounded to TF32 first when the call asks for TF32 (``precision.uses_tf32``)."""
    if precision.uses_tf32(c.args.get("computeType", precision.COMPUTE_32F), c.math_mode, c.tf32_off):
        a, b = precision.inputs(a, True), precision.inputs(b, True)
    accumulate = np.float32 if np.dtype(compute) == np.float16 else compute
    if np.issubdtype(np.dtype(compute), np.integer):
        accumulate = np.int64
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        accumulate = np.result_type(accumulate, np.complex64)
    return _apply(ta, a.astype(accumulate)) @ _apply(tb, b.astype(accumulate))


def _batched_gemm(c: Call, batches, load=None, store_type=None, compute=None, scalar_type=None, inputs=None):
    """C_i = alpha op(A_i) op(B_i) + beta C_i for each batch's (A, B, C) addresses; ``inputs``: A's and
    B's type where it is not C's (cublasGemmEx), which sets the rate the timeline counts the products at."""
    ta, tb, m, n, k, a_shape, b_shape = _gemm_shapes(c)
    if m == 0 or n == 0:
        return
    count = len(batches)
    affordable(c.ctx, shown_name(c.routine), 2 * m * n * k * count,
               f"{count} product{'s' * (count != 1)} of {m} x {k} by {k} x {n}", EXECUTION_FAILED)
    load = load or (lambda name, addr, shape, ld: c.memory.matrix(name, addr, *shape, ld, c.data))
    compute = compute or (np.float32 if c.data == np.float16 else c.data)
    for a_addr, b_addr, c_addr in batches:
        out = load("C", c_addr, (m, n), c["ldc"])
        product = (_product(c, ta, tb, load("A", a_addr, a_shape, c["lda"]), load("B", b_addr, b_shape, c["ldb"]),
                            compute) if k else np.zeros((m, n), compute))
        alpha, beta = c.scalar("alpha", scalar_type), c.scalar("beta", scalar_type)
        value = alpha * product if beta == 0 else alpha * product + beta * out.astype(product.dtype)
        (store_type or c.memory.store)(out, value)
    tf32 = precision.uses_tf32(c.args.get("computeType", precision.COMPUTE_32F), c.math_mode, c.tf32_off)
    on_timeline(c.ctx, c.stream, shown_name(c.routine), 2 * m * n * k * count,
                (m * k + k * n + 2 * m * n) * c.data.itemsize * count, gemm_precision(inputs or c.data, tf32))


def gemm(c: Call):
    _batched_gemm(c, [(c["A"], c["B"], c["C"])])


def gemmStridedBatched(c: Call):
    count = c["batchCount"]
    c.require(count >= 0, "batchCount", "is negative")
    step = np.dtype(c.data).itemsize
    _batched_gemm(c, [(c["A"] + i * c["strideA"] * step, c["B"] + i * c["strideB"] * step,
                       c["C"] + i * c["strideC"] * step) for i in range(count)])


def _pointer_arrays(c: Call, names=("Aarray", "Barray", "Carray")):
    """The device arrays of device pointers a gemmBatched call takes, read from device memory."""
    count = c["batchCount"]
    c.require(count >= 0, "batchCount", "is negative")
    arrays = [c.memory.array(name, c[name], count, np.uint64) for name in names]
    return [tuple(int(p[i]) for p in arrays) for i in range(count)]


def gemmBatched(c: Call):
    _batched_gemm(c, _pointer_arrays(c))


def geam(c: Call):
    """C = alpha op(A) + beta op(B), m x n (cuBLAS's extension for transposes and sums)."""
    ta, tb, m, n = c.op("transa"), c.op("transb"), c["m"], c["n"]
    c.require(m >= 0, "m", "is negative")
    c.require(n >= 0, "n", "is negative")
    if m == 0 or n == 0:
        return
    a = c.memory.matrix("A", c["A"], *((m, n) if ta == 0 else (n, m)), c["lda"], c.data)
    b = c.memory.matrix("B", c["B"], *((m, n) if tb == 0 else (n, m)), c["ldb"], c.data)
    out = c.memory.matrix("C", c["C"], m, n, c["ldc"], c.data)
    alpha, beta = c.scalar("alpha"), c.scalar("beta")
    c.memory.store(out, alpha * _apply(ta, a) + beta * _apply(tb, b))
    c.timeline(3 * m * n, 3 * m * n * c.data.itemsize)


# ------------------------------------------------------------------------------ mixed precision (*Ex)
def _ex(c: Call, batches):
    types = {}
    for name in ("A", "B", "C"):
        code = c[f"{name}type"]
        c.require(code in DATA_TYPES, f"{name}type", "is a data type cudalab's cuBLAS does not handle")
        types[name] = DATA_TYPES[code]
    c.require(c["computeType"] in COMPUTE_TYPES, "computeType", "is not a cublasComputeType_t cudalab handles")
    compute = np.dtype(COMPUTE_TYPES[c["computeType"]])
    complex_c = types["C"] in (np.complex64, np.complex128)
    scalar = np.result_type(compute, np.complex64) if complex_c else compute

    def load(name, addr, shape, ld):
        t = types[name]
        if t == "bfloat16":
            return bf16_load(c.memory.matrix(name, addr, *shape, ld, np.uint16))
        return c.memory.matrix(name, addr, *shape, ld, t)

    def store(out, value):
        if types["C"] == "bfloat16":
            raw = c.memory.matrix("C", c["C"], out.shape[0], out.shape[1], c["ldc"], np.uint16)
            return c.memory.store(raw, bf16_bits(value))
        if np.issubdtype(out.dtype, np.integer):
            value = np.clip(np.rint(value.real if np.iscomplexobj(value) else value), np.iinfo(out.dtype).min,
                            np.iinfo(out.dtype).max)
        c.memory.store(out, value)

    c.data = np.dtype(np.uint16) if types["C"] == "bfloat16" else np.dtype(types["C"])
    _batched_gemm(c, batches, load, store, compute, scalar,
                  np.dtype(np.uint16) if types["A"] == "bfloat16" else np.dtype(types["A"]))


def GemmEx(c: Call):
    _ex(c, [(c["A"], c["B"], c["C"])])


def GemmStridedBatchedEx(c: Call):
    count = c["batchCount"]
    c.require(count >= 0, "batchCount", "is negative")
    size = {n: (2 if DATA_TYPES.get(c[f"{n}type"]) == "bfloat16" else np.dtype(DATA_TYPES.get(c[f"{n}type"], np.uint8)).itemsize)
            for n in "ABC"}
    _ex(c, [(c["A"] + i * c["strideA"] * size["A"], c["B"] + i * c["strideB"] * size["B"],
             c["C"] + i * c["strideC"] * size["C"]) for i in range(count)])


def GemmBatchedEx(c: Call):
    _ex(c, _pointer_arrays(c))


def gemmEx(c: Call):
    """cublasSgemmEx and cublasCgemmEx: GemmEx without a compute type, as cuBLAS had before cublasGemmEx took
    one; the letter's precision is it (float32, complex float32), with alpha and beta of that type. A, B and C
    may still be half, bfloat16 or float (Oxford's tensor-core practical multiplies half matrices into a float
    one with cublasSgemmEx); TF32 comes from the math mode, as for CUBLAS_COMPUTE_32F."""
    c.args["computeType"] = precision.COMPUTE_32F
    _ex(c, [(c["A"], c["B"], c["C"])])


# routine (without type letters, _v2 and _64) -> (implementation, the type prefixes it comes in)
def _lu(a: np.ndarray, pivoting: bool):
    """LAPACK's getrf on one n x n matrix, in place: P A = L U (L unit lower, stored below U); the
    1-based row each step swapped in, and info, the 1-based column of the first exactly zero pivot
    (0 if none; the factorization goes on past it, as LAPACK's does)."""
    n, info = a.shape[0], 0
    rows = np.arange(1, n + 1, dtype=np.int32)
    for j in range(n):
        if pivoting:
            p = j + int(np.argmax(np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)))   # BLAS's |re| + |im|
            rows[j] = p + 1
            a[[j, p]] = a[[p, j]]
        if a[j, j] == 0:
            info = info or j + 1
            continue
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return rows, info


def getrfBatched(c: Call):
    """LU factorization of batchSize n x n matrices (simpleCUBLAS_LU); P = NULL factors without pivoting."""
    n, count = c["n"], c["batchSize"]
    c.require(n >= 0, "n", "is negative")
    c.require(c["lda"] >= max(1, n), "lda", "is less than max(1, n)")
    c.require(count >= 0, "batchSize", "is negative")
    matrices = [int(p) for p in c.memory.array("A", c["A"], count, np.uint64)] if count else []
    pivots = c.memory.array("P", c["P"], n * count, np.int32) if c["P"] and n * count else None
    infos = c.memory.array("info", c["info"], count, np.int32) if count else None
    for i, addr in enumerate(matrices):
        view = c.memory.matrix("A", addr, n, n, c["lda"], c.data)
        a = view.astype(c.data, copy=True)
        rows, info = _lu(a, pivots is not None)
        c.memory.store(view, a)
        if pivots is not None:
            c.memory.store(pivots[i * n:(i + 1) * n], rows)
        c.memory.store(infos[i:i + 1], np.int32(info))
    c.timeline(2 / 3 * n ** 3 * count, 2 * n * n * c.data.itemsize * count)


ROUTINES = {
    "axpy": (axpy, "SDCZ"), "scal": (scal, ("S", "D", "C", "Z", "Cs", "Zd")), "dot": (dot, "SD"),
    "dotu": (dot, "CZ"), "dotc": (dotc, "CZ"), "nrm2": (nrm2, ("S", "D", "Sc", "Dz")),
    "asum": (asum, ("S", "D", "Sc", "Dz")), "amax": (amax, "SDCZ"), "amin": (amin, "SDCZ"),
    "copy": (copy, "SDCZ"), "swap": (swap, "SDCZ"), "gemv": (gemv, "SDCZ"), "ger": (ger, "SD"),
    "geru": (ger, "CZ"), "gerc": (gerc, "CZ"), "gemm": (gemm, "SDCZH"),
    "gemmStridedBatched": (gemmStridedBatched, "SDCZH"), "gemmBatched": (gemmBatched, "SDCZH"),
    "geam": (geam, "SDCZ"), "GemmEx": (GemmEx, ("",)), "GemmStridedBatchedEx": (GemmStridedBatchedEx, ("",)),
    "GemmBatchedEx": (GemmBatchedEx, ("",)), "gemmEx": (gemmEx, "SC"), "getrfBatched": (getrfBatched, "SDCZ"),
}


def routine(name: str):
    """(implementation, type letters) for a cuBLAS function name, or None when cudalab lacks it.
    Names are read every way their letters allow (cublasScopy is S + copy, cublasScasum Sc + asum)."""
    m = _NAME.match(name)
    if not m:
        return None
    body = m.group("body")
    amax = re.match(r"I([sdcz])(am(?:ax|in))$", body)
    splits = [(amax.group(1).upper(), amax.group(2))] if amax else \
        [(body[:i], body[i:]) for i in (2, 1, 0) if body[:i] in TYPES or i == 0]
    for letters, op in splits:
        found = ROUTINES.get(op)
        if found is not None and letters in tuple(found[1]):
            return found[0], letters
    return None


def run(ctx, name: str, stream: int, args: dict, device_scalars: bool) -> bytes:
    """Run the cuBLAS routine ``name`` (see the module docstring); returns the bytes of a host result."""
    found = routine(name)
    if found is None:
        raise LibraryError(f"{name} is not one of the cuBLAS routines cudalab implements.", NOT_SUPPORTED)
    fn, letters = found
    call = Call(ctx, name, stream, args, device_scalars, TYPES.get(letters, (np.float32,) * 3))
    if name.endswith("_64"):
        call.args["_64"] = 1
    fn(call)
    return call.returned
