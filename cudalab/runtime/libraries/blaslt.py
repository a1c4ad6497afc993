"""cuBLASLt's matmul (D = epilogue(alpha op(A) op(B) + beta C + bias)) as a numpy reference implementation.

``run(ctx, "cublasLtMatmul", stream, args, device_scalars)`` computes on the device memory the
emulator holds; ``"cublasLtMatmulAlgoGetHeuristic"`` checks the same arguments without computing,
as cuBLASLt's heuristic refuses what no algorithm can do. The descriptors live in the shim
(``programs/shim/cublasLt.c``), which sends their fields with the call: the matmul descriptor as
``desc.compute``, ``desc.scale``, ``desc.transa``, ``desc.transb``, ``desc.epilogue``,
``desc.bias``, ``desc.bias_type``, ``desc.bias_batch_stride``, ``desc.aux``, ``desc.aux_ld``,
``desc.aux_type``, ``desc.aux_batch_stride``; each matrix layout (A, B, C, D) as ``A.type``,
``A.order``, ``A.rows``, ``A.cols``, ``A.ld``, ``A.batch_count``, ``A.batch_offset``; the pointers as
``A``, ``B``, ``C``, ``D``.

Products are summed in the compute type (float32 for half and bfloat16 data, as tensor cores do;
with CUBLAS_COMPUTE_32F_FAST_TF32, _FAST_16F or _FAST_16BF the float32 inputs are first rounded to
TF32, as an H200's cuBLAS does: ``precision``), and the result is rounded once to D's type: results
match cuBLASLt within floating-point rounding.
GELU is the tanh approximation cuBLASLt uses.
"""
from __future__ import annotations

import numpy as np

from . import operands, precision
from .blas import COMPUTE_TYPES, EXECUTION_FAILED, INVALID_VALUE, NOT_SUPPORTED, SUCCESS  # noqa: F401 (the server's)
from .operands import DATA_TYPES, LibraryError, affordable, gemm_precision, on_timeline, storage

ORDER_COL, ORDER_ROW = 0, 1
RELU, BIAS, GELU, AUX, BGRAD, DGELU, BGRADA, BGRADB = 2, 4, 32, 128, 16, 64, 256, 512
# cublasLtEpilogue_t values cudalab computes (DEFAULT is 1); the ReLU bit-mask ones (RELU_AUX, DRELU) it lacks
EPILOGUES = {1: "DEFAULT", 2: "RELU", 4: "BIAS", 6: "RELU_BIAS", 32: "GELU", 36: "GELU_BIAS", 160: "GELU_AUX",
             164: "GELU_AUX_BIAS", 192: "DGELU", 208: "DGELU_BGRAD", 256: "BGRADA", 512: "BGRADB"}


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def gelu_grad(x):
    inner = np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)
    t = np.tanh(inner)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x * x)


class Call(operands.Call):
    """One cublasLtMatmul's arguments and device memory (``operands.Call``), with cuBLASLt's refusals."""

    def __init__(self, ctx, routine: str, stream: int, args: dict, device_scalars: bool):
        self.tf32_off = args.pop("tf32Override", 1) == 0     # NVIDIA_TF32_OVERRIDE=0 (the shim's environment)
        super().__init__(ctx, routine, stream, args, device_scalars, EXECUTION_FAILED)

    def refuse(self, why: str, status=INVALID_VALUE):
        answer = "CUBLAS_STATUS_INVALID_VALUE" if status == INVALID_VALUE else "CUBLAS_STATUS_NOT_SUPPORTED"
        raise LibraryError(f"{self.routine}: {why}, so cuBLASLt returns {answer}.", status)

    def data_type(self, name: str, code: int):
        if code not in DATA_TYPES or DATA_TYPES[code] in (np.int8, np.int32):
            self.refuse(f"{name}'s type {code} is not one cudalab's cuBLASLt handles (f16, bf16, f32, f64 and "
                        "complex f32/f64)", NOT_SUPPORTED)
        return code

    def matrix(self, name: str, batch: int) -> tuple:
        """(load, store) of layout ``name``'s matrix ``batch`` (rows x cols, in its order)."""
        rows, cols, ld, order = (self[f"{name}.{k}"] for k in ("rows", "cols", "ld", "order"))
        code = self.data_type(name, self[f"{name}.type"])
        addr = self[name] + batch * self[f"{name}.batch_offset"] * storage(code).itemsize
        strides = (1, ld) if order == ORDER_COL else (ld, 1)
        span = (cols - 1) * ld + rows if order == ORDER_COL else (rows - 1) * ld + cols
        where = (name, addr, code, (rows, cols), strides, span)
        return (lambda: self.load(*where)), (lambda values: self.store(*where, values))

    def vector(self, name: str, addr: int, code: int, n: int, batch: int, stride: int) -> tuple:
        """(load, store) of the bias: ``n`` elements of type ``code``, batch ``batch``."""
        at = addr + batch * stride * storage(self.data_type(name, code)).itemsize
        where = (name, at, code, (n,), (1,), n)
        return (lambda: self.load(*where)), (lambda values: self.store(*where, values))


def _stored_shape(c: Call, name: str) -> tuple:
    return c[f"{name}.rows"], c[f"{name}.cols"]


def _shapes(c: Call):
    """m, n, k and the batch count, after cuBLASLt's checks of the layouts against each other."""
    for name in "ABCD":
        rows, cols, ld, order = (c[f"{name}.{k}"] for k in ("rows", "cols", "ld", "order"))
        if order not in (ORDER_COL, ORDER_ROW):
            c.refuse(f"{name}'s layout order {order} is not CUBLASLT_ORDER_COL or _ROW", NOT_SUPPORTED)
        if ld < max(1, rows if order == ORDER_COL else cols):
            c.refuse(f"{name}'s leading dimension {ld} is less than its {'rows' if order == ORDER_COL else 'columns'}")
    ta, tb = c["desc.transa"], c["desc.transb"]
    for name, t in (("transa", ta), ("transb", tb)):
        if t not in (0, 1, 2):
            c.refuse(f"CUBLASLT_MATMUL_DESC_{name.upper()} = {t} is not CUBLAS_OP_N, _T or _C")
    m, n = _stored_shape(c, "D")
    a_rows, a_cols = _stored_shape(c, "A")
    b_rows, b_cols = _stored_shape(c, "B")
    k = a_cols if ta == 0 else a_rows
    op_a, op_b = (a_rows, a_cols)[::1 if ta == 0 else -1], (b_rows, b_cols)[::1 if tb == 0 else -1]
    if op_a[0] != m or op_b[1] != n or op_b[0] != k or _stored_shape(c, "C") != (m, n):
        c.refuse(f"op(A) is {op_a[0]} x {op_a[1]} and op(B) {op_b[0]} x {op_b[1]}, which do not give D's "
                 f"{m} x {n} (C is {c['C.rows']} x {c['C.cols']})")
    batches = {c[f"{name}.batch_count"] for name in "ABCD"}
    if len(batches) != 1:
        c.refuse(f"the layouts' batch counts differ ({', '.join(str(c[f'{x}.batch_count']) for x in 'ABCD')})")
    return ta, tb, m, n, k, batches.pop()


def _types(c: Call):
    """(the dtype products are summed in, scale dtype) from the descriptor, checked against the data types
    (CUBLAS_COMPUTE_16F sums in float32, as tensor cores do)."""
    compute, scale = c["desc.compute"], c["desc.scale"]
    if compute not in COMPUTE_TYPES or COMPUTE_TYPES[compute] == np.int32:
        c.refuse(f"compute type {compute} is not one cudalab's cuBLASLt handles (CUBLAS_COMPUTE_16F, _32F and its "
                 "fast variants, _64F)", NOT_SUPPORTED)
    for name in "ABCD":
        c.data_type(name, c[f"{name}.type"])
    if c["C.type"] != c["D.type"]:
        c.refuse("C and D have different types", NOT_SUPPORTED)
    complex_data = any(DATA_TYPES[c[f"{x}.type"]] in (np.complex64, np.complex128) for x in "ABCD")
    compute_type = np.dtype(np.float32 if COMPUTE_TYPES[compute] == np.float16 else COMPUTE_TYPES[compute])
    if complex_data:
        compute_type = np.result_type(compute_type, np.complex64)
    return compute_type, np.dtype(DATA_TYPES.get(scale, np.float32))


def _epilogue(c: Call, pointers: bool) -> int:
    """The epilogue, and (``pointers``: at cublasLtMatmul, not at the heuristic) the pointers it needs."""
    e = c["desc.epilogue"]
    if e not in EPILOGUES:
        c.refuse(f"epilogue {e} is not one cudalab's cuBLASLt computes ({', '.join(EPILOGUES.values())})",
                 NOT_SUPPORTED)
    if e in (BGRADA, BGRADB) and (c["desc.transa"], c["desc.transb"]) != (0, 1):
        c.refuse(f"CUBLASLT_EPILOGUE_{EPILOGUES[e]} is computed only with TRANSA = CUBLAS_OP_N and TRANSB = CUBLAS_OP_T "
                 "(the backward pass's dweight; an H200 refuses other transposes)", NOT_SUPPORTED)
    if not pointers:
        return e
    if e & (BIAS | BGRAD | BGRADA | BGRADB) and not c["desc.bias"]:
        c.refuse(f"epilogue CUBLASLT_EPILOGUE_{EPILOGUES[e]} needs CUBLASLT_MATMUL_DESC_BIAS_POINTER")
    if e & AUX and (not c["desc.aux"] or c["desc.aux_ld"] < c["D.rows"]):
        c.refuse(f"epilogue CUBLASLT_EPILOGUE_{EPILOGUES[e]} needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER and an "
                 f"EPILOGUE_AUX_LD of at least D's rows ({c['D.rows']})")
    return e


def _apply(t: int, a: np.ndarray) -> np.ndarray:
    return a if t == 0 else a.T if t == 1 else a.conj().T


def MatmulAlgoGetHeuristic(c: Call):
    """Everything cublasLtMatmul checks; an algorithm exists when nothing is refused."""
    _shapes(c)
    _types(c)
    _epilogue(c, pointers=False)


def Matmul(c: Call):
    ta, tb, m, n, k, batches = _shapes(c)
    compute, scale = _types(c)
    e = _epilogue(c, pointers=True)
    affordable(c.ctx, c.routine, 2 * m * n * k * batches, f"{batches} product(s) of {m} x {k} by {k} x {n}",
               EXECUTION_FAILED)
    alpha, beta = c.scalar("alpha", scale), c.scalar("beta", scale)
    tf32 = precision.uses_tf32(c["desc.compute"], 0, c.tf32_off)
    bias_type = c["desc.bias_type"] if c["desc.bias_type"] >= 0 else c["D.type"]
    aux_type = c["desc.aux_type"] if c["desc.aux_type"] >= 0 else c["D.type"]
    for i in range(batches):
        load_a, _ = c.matrix("A", i)
        load_b, _ = c.matrix("B", i)
        load_c, _ = c.matrix("C", i)
        _, store_d = c.matrix("D", i)
        op_a, op_b = _apply(ta, load_a().astype(compute)), _apply(tb, load_b().astype(compute))
        value = alpha * (precision.inputs(op_a, tf32) @ precision.inputs(op_b, tf32))
        if beta != 0:
            value = value + beta * load_c().astype(compute)
        bias = c.vector("bias", c["desc.bias"], bias_type, n if e == BGRADB else m, i, c["desc.bias_batch_stride"])
        # the aux matrix: m x n, column-major with its own leading dimension
        aux = ("aux", c["desc.aux"] + i * c["desc.aux_batch_stride"] * storage(c.data_type("aux", aux_type)).itemsize,
               aux_type, (m, n), (1, c["desc.aux_ld"]), (n - 1) * c["desc.aux_ld"] + m)
        if e & BIAS:
            value = value + bias[0]().astype(compute)[:, None]
        if e in (BGRADA, BGRADB):
            bias[1](op_a.sum(axis=1) if e == BGRADA else op_b.sum(axis=0))
        if e & DGELU:
            value = value * gelu_grad(c.load(*aux).astype(compute))
            if e & BGRAD:
                bias[1](value.sum(axis=1))
        elif e & AUX:                       # GELU_AUX: the input of the GELU, for the backward pass
            c.store(*aux, value)
        if e & RELU:
            value = np.maximum(value, 0)
        elif e & GELU and not e & DGELU:
            value = gelu(value)
        store_d(value)
    size = storage(c["D.type"]).itemsize
    on_timeline(c.ctx, c.stream, c.routine, 2 * m * n * k * batches, (m * k + k * n + 2 * m * n) * size * batches,
                gemm_precision(storage(c["A.type"]), tf32))


ROUTINES = {"cublasLtMatmul": Matmul, "cublasLtMatmulAlgoGetHeuristic": MatmulAlgoGetHeuristic}


def run(ctx, name: str, stream: int, args: dict, device_scalars: bool) -> bytes:
    """Run (or, for the heuristic, check) the cuBLASLt call ``name``; nothing comes back to the host."""
    fn = ROUTINES.get(name)
    if fn is None:
        raise LibraryError(f"{name} is not one of the cuBLASLt functions cudalab implements.", NOT_SUPPORTED)
    fn(Call(ctx, name, stream, args, device_scalars))
    return b""
