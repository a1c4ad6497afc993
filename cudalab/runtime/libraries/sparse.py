"""cuSPARSE's generic API (SpMV, SpMM, SpSV, dense <-> sparse), its format conversions and the legacy ILU(0)
(csrilu02) as numpy reference implementations.

``run(ctx, "cusparseSpMV", stream, args, device_scalars)`` does what cuSPARSE's routine does to the
device memory the emulator holds. The descriptors (cusparseCreateCsr, cusparseCreateDnVec, ...)
live in the shim (``programs/shim/cusparse.c``), which sends their fields with the call: a sparse
matrix ``matA`` arrives as ``matA.format``, ``matA.rows``, ``matA.cols``, ``matA.nnz``,
``matA.major`` (CSR's row offsets, CSC's column offsets, COO's row indices), ``matA.minor`` (the
other indices), ``matA.values``, ``matA.major_type``, ``matA.minor_type``, ``matA.base``,
``matA.type``; a dense vector as ``vecX.size``, ``.values``, ``.type``; a dense matrix as
``matB.rows``, ``.cols``, ``.ld``, ``.values``, ``.type``, ``.order``.

Every format becomes one list of (row, column, value) triplets, and a product is numpy's sum of
value * x[column] into each row (``np.add.at``), in the compute type: results match cuSPARSE
within floating-point rounding, not bit for bit. cuSPARSE does not check its index arrays (a
wrong one reads outside them on a GPU); cudalab does, and names the first bad entry.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from . import operands
from .operands import DATA_TYPES, LibraryError, affordable, on_timeline, storage

SUCCESS, INVALID_VALUE, EXECUTION_FAILED, INTERNAL_ERROR, MATRIX_TYPE_NOT_SUPPORTED, NOT_SUPPORTED = 0, 3, 6, 7, 8, 10
CSR, CSC, COO = 1, 2, 3
INDEX_TYPES = {1: np.uint16, 2: np.int32, 3: np.int64}        # cusparseIndexType_t
ORDER_COL, ORDER_ROW = 1, 2
SYMBOLIC, NUMERIC = 0, 1                                        # cusparseAction_t
# (value type of A, X/B, Y/C) -> compute type: the combinations of cuSPARSE's SpMV/SpMM tables
# that cudalab computes (real and complex f32/f64 throughout, half and bfloat16 data summed in f32)
COMPUTE = {0: 0, 1: 1, 4: 4, 5: 5, 2: 0, 14: 0}


@dataclass
class Triplets:
    """A sparse matrix as its nonzeros: rows[i], cols[i], values[i] (0-based), and its shape."""

    shape: tuple
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


class Call(operands.Call):
    """One cuSPARSE routine's arguments and device memory (``operands.Call``), with cuSPARSE's refusals."""

    def __init__(self, ctx, routine: str, stream: int, args: dict, device_scalars: bool):
        super().__init__(ctx, routine, stream, args, device_scalars, EXECUTION_FAILED)

    def refuse(self, why: str, status=INVALID_VALUE):
        answer = {INVALID_VALUE: "CUSPARSE_STATUS_INVALID_VALUE", NOT_SUPPORTED: "CUSPARSE_STATUS_NOT_SUPPORTED",
                  INTERNAL_ERROR: "CUSPARSE_STATUS_INTERNAL_ERROR",
                  MATRIX_TYPE_NOT_SUPPORTED: "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
                  EXECUTION_FAILED: "CUSPARSE_STATUS_EXECUTION_FAILED"}[status]
        raise LibraryError(f"{self.routine}: {why}, so cuSPARSE returns {answer} and does nothing.", status)

    def value_type(self, desc: str) -> int:
        code = self[f"{desc}.type"]
        if code not in COMPUTE:
            self.refuse(f"{desc}'s value type {code} is not one cudalab's cuSPARSE handles (f32, f64, their "
                        "complex forms, f16 and bf16)", NOT_SUPPORTED)
        return code

    def indices(self, name: str, addr: int, n: int, code: int) -> np.ndarray:
        return self.memory.array(name, addr, n, INDEX_TYPES.get(code, np.int32)).astype(np.int64)

    def timeline(self, flops, nbytes):
        on_timeline(self.ctx, self.stream, self.routine, flops, nbytes)


def _check_indices(c: Call, what: str, idx: np.ndarray, limit: int):
    bad = np.flatnonzero((idx < 0) | (idx >= limit))
    if bad.size:
        c.refuse(f"{what}[{bad[0]}] = {idx[bad[0]]} is outside 0..{limit - 1} (after the index base); cuSPARSE "
                 "does not check this and would read outside the matrix", EXECUTION_FAILED)


def _offsets_from(indices, n: int, base: int) -> np.ndarray:
    """CSR's row (CSC's column) offsets, n + 1 from base, of entries whose row (column) is ``indices``
    (0-based, in order): the written side of ``_offsets``."""
    return np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=n))]) + base


def _offsets(c: Call, what: str, addr: int, n: int, code: int, base: int, nnz: int) -> np.ndarray:
    """CSR's row (CSC's column) offsets: n + 1 of them, from base to nnz + base, never decreasing."""
    off = c.indices(what, addr, n + 1, code) - base
    if off[0] != 0 or off[-1] != nnz or np.any(np.diff(off) < 0):
        c.refuse(f"{what} must rise from the index base ({base}) to nnz + base ({nnz + base}), but it holds "
                 f"{off[0] + base} ... {off[-1] + base}" + (" and decreases" if np.any(np.diff(off) < 0) else ""),
                 EXECUTION_FAILED)
    return off


def sparse_matrix(c: Call, desc: str) -> Triplets:
    """The descriptor ``desc`` (CSR, CSC or COO) as triplets, checked."""
    fmt, rows, cols, nnz = (c[f"{desc}.{k}"] for k in ("format", "rows", "cols", "nnz"))
    base, code = c[f"{desc}.base"], c.value_type(desc)
    if fmt not in (CSR, CSC, COO):
        c.refuse(f"{desc} is in a format cudalab's cuSPARSE does not compute (it has CSR, CSC and COO)",
                 NOT_SUPPORTED)
    values = c.load(f"{desc}'s values", c[f"{desc}.values"], code, (nnz,), (1,), nnz)
    minor = c.indices(f"{desc}'s indices", c[f"{desc}.minor"], nnz, c[f"{desc}.minor_type"]) - base
    if fmt == COO:
        major = c.indices(f"{desc}'s row indices", c[f"{desc}.major"], nnz, c[f"{desc}.major_type"]) - base
        _check_indices(c, f"{desc}'s row indices", major, rows)
        _check_indices(c, f"{desc}'s column indices", minor, cols)
        return Triplets((rows, cols), major, minor, values)
    outer, inner = (rows, cols) if fmt == CSR else (cols, rows)
    off = _offsets(c, f"{desc}'s {'row' if fmt == CSR else 'column'} offsets", c[f"{desc}.major"], outer,
                   c[f"{desc}.major_type"], base, nnz)
    major = np.repeat(np.arange(outer), np.diff(off))
    _check_indices(c, f"{desc}'s {'column' if fmt == CSR else 'row'} indices", minor, inner)
    return Triplets((rows, cols), *((major, minor) if fmt == CSR else (minor, major)), values)


def _op(c: Call, name: str, a: Triplets) -> Triplets:
    """op(A) for cusparseOperation_t ``name``: the triplets with rows and columns swapped (and conjugated)."""
    op = c[name]
    if op not in (0, 1, 2):
        c.refuse(f"{name} = {op} is not a cusparseOperation_t")
    if op == 0:
        return a
    values = a.values.conj() if op == 2 else a.values
    return Triplets(a.shape[::-1], a.cols, a.rows, values)


def _compute(c: Call, *descs) -> np.dtype:
    """The compute type: the one the value types call for, and the one the call names."""
    codes = {COMPUTE[c.value_type(d)] for d in descs}
    wanted = c["computeType"]
    if len(codes) != 1 or wanted not in codes:
        c.refuse(f"the value types ({', '.join(str(c[d + '.type']) for d in descs)}) with computeType {wanted} "
                 "are not a combination cuSPARSE computes", NOT_SUPPORTED)
    return np.dtype(DATA_TYPES[wanted])


def _update(c: Call, out_old, product, compute):
    alpha, beta = c.scalar("alpha", compute), c.scalar("beta", compute)
    return alpha * product if beta == 0 else alpha * product + beta * out_old.astype(compute)


def SpMV(c: Call):
    """Y = alpha op(A) X + beta Y."""
    compute = _compute(c, "matA", "vecX", "vecY")
    a = _op(c, "opA", sparse_matrix(c, "matA"))
    m, n = a.shape
    if c["vecX.size"] != n or c["vecY.size"] != m:
        c.refuse(f"op(A) is {m} x {n}, so X must have {n} elements and Y {m}, but they have {c['vecX.size']} "
                 f"and {c['vecY.size']}")
    if not c["externalBuffer"]:         # cudalab needs none, but cuSPARSE 12.9 refuses it (checked on an H200)
        c.refuse("externalBuffer is NULL, and cuSPARSE needs a buffer of cusparseSpMV_bufferSize's size")
    x = c.load("vecX", c["vecX.values"], c["vecX.type"], (n,), (1,), n).astype(compute)
    y = c.load("vecY", c["vecY.values"], c["vecY.type"], (m,), (1,), m)
    product = np.zeros(m, compute)
    np.add.at(product, a.rows, a.values.astype(compute) * x[a.cols])
    c.store("vecY", c["vecY.values"], c["vecY.type"], (m,), (1,), m, _update(c, y, product, compute))
    c.timeline(2 * a.values.size, a.values.size * (compute.itemsize + 4) + (n + 2 * m) * compute.itemsize)


def _dense(c: Call, desc: str):
    """A dense matrix descriptor's (load, store) for its rows x cols elements, in its order."""
    rows, cols, ld, order = (c[f"{desc}.{k}"] for k in ("rows", "cols", "ld", "order"))
    code = c.value_type(desc)
    if order not in (ORDER_COL, ORDER_ROW):
        c.refuse(f"{desc}'s order {order} is not CUSPARSE_ORDER_COL or CUSPARSE_ORDER_ROW")
    inner = rows if order == ORDER_COL else cols
    if ld < max(1, inner):
        c.refuse(f"{desc}'s ld = {ld} is less than its {'rows' if order == ORDER_COL else 'columns'} ({inner})")
    strides = (1, ld) if order == ORDER_COL else (ld, 1)
    span = (cols - 1) * ld + rows if order == ORDER_COL else (rows - 1) * ld + cols
    where = (desc, c[f"{desc}.values"], code, (rows, cols), strides, span)
    return (lambda: c.load(*where)), (lambda values: c.store(*where, values))


def SpMM(c: Call):
    """C = alpha op(A) op(B) + beta C, B and C dense."""
    compute = _compute(c, "matA", "matB", "matC")
    a = _op(c, "opA", sparse_matrix(c, "matA"))
    load_b, _ = _dense(c, "matB")
    load_c, store_c = _dense(c, "matC")
    b = load_b().astype(compute)
    ob = c["opB"]
    if ob not in (0, 1, 2):
        c.refuse(f"opB = {ob} is not a cusparseOperation_t")
    b = b if ob == 0 else b.T if ob == 1 else b.conj().T
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or (c["matC.rows"], c["matC.cols"]) != (m, n):
        c.refuse(f"op(A) is {m} x {k} and op(B) {b.shape[0]} x {n}, so C must be {m} x {n}, but it is "
                 f"{c['matC.rows']} x {c['matC.cols']}" + ("" if b.shape[0] == k else " (and the inner sizes differ)"))
    affordable(c.ctx, c.routine, 2 * a.values.size * n, f"a product of {a.values.size:,} nonzeros by {n} columns",
               EXECUTION_FAILED)
    product = np.zeros((m, n), compute)
    np.add.at(product, a.rows, a.values.astype(compute)[:, None] * b[a.cols])
    store_c(_update(c, load_c(), product, compute))
    c.timeline(2 * a.values.size * n, (a.values.size * (compute.itemsize + 4) + (k + 2 * m) * n * compute.itemsize))


def Xcoo2csr(c: Call):
    """CSR row offsets from sorted COO row indices (32-bit)."""
    m, nnz, base = c["m"], c["nnz"], c["idxBase"]
    if m < 0 or nnz < 0 or base not in (0, 1):
        c.refuse("m and nnz must not be negative and idxBase must be 0 or 1" + f" (m = {m}, nnz = {nnz}, idxBase = {base})")
    rows = c.indices("cooRowInd", c["cooRowInd"], nnz, 2) - base
    _check_indices(c, "cooRowInd", rows, m)
    out = c.memory.array("csrSortedRowPtr", c["csrSortedRowPtr"], m + 1, np.int32)
    c.memory.store(out, _offsets_from(rows, m, base))
    c.timeline(nnz, 4 * (nnz + m + 1))


def Csr2cscEx2(c: Call):
    """The transpose's layout: CSC offsets, row indices and (for CUSPARSE_ACTION_NUMERIC) values."""
    m, n, nnz, base, action = c["m"], c["n"], c["nnz"], c["idxBase"], c["copyValues"]
    if min(m, n, nnz) < 0 or base not in (0, 1) or action not in (SYMBOLIC, NUMERIC):
        c.refuse(f"m = {m}, n = {n}, nnz = {nnz}, idxBase = {base}, copyValues = {action}: sizes must not be negative, "
                 "idxBase is 0 or 1 and copyValues CUSPARSE_ACTION_SYMBOLIC or _NUMERIC")
    off = _offsets(c, "csrRowPtr", c["csrRowPtr"], m, 2, base, nnz)
    cols = c.indices("csrColInd", c["csrColInd"], nnz, 2) - base
    _check_indices(c, "csrColInd", cols, n)
    rows = np.repeat(np.arange(m), np.diff(off))
    order = np.argsort(cols, kind="stable")          # by column, rows rising within each, as cuSPARSE lays them
    c.memory.store(c.memory.array("cscColPtr", c["cscColPtr"], n + 1, np.int32),
                   _offsets_from(cols, n, base))
    c.memory.store(c.memory.array("cscRowInd", c["cscRowInd"], nnz, np.int32), rows[order] + base)
    if action == NUMERIC:
        if c["valType"] not in DATA_TYPES:
            c.refuse(f"valType {c['valType']} is not a cudaDataType cudalab's cuSPARSE handles", NOT_SUPPORTED)
        kind = storage(c["valType"])
        values = c.memory.array("csrVal", c["csrVal"], nnz, kind)
        c.memory.store(c.memory.array("cscVal", c["cscVal"], nnz, kind), values[order])
    c.timeline(nnz, 16 * nnz + 4 * (m + n))


def SparseToDense(c: Call):
    """matB (dense) = matA (sparse), zeros elsewhere."""
    a = sparse_matrix(c, "matA")
    _, store = _dense(c, "matB")
    if (c["matB.rows"], c["matB.cols"]) != a.shape:
        c.refuse(f"matA is {a.shape[0]} x {a.shape[1]} but matB {c['matB.rows']} x {c['matB.cols']}")
    dense = np.zeros(a.shape, a.values.dtype)
    np.add.at(dense, (a.rows, a.cols), a.values)
    store(dense)
    c.timeline(0, a.values.size * 12 + dense.nbytes)


def _nonzeros(c: Call):
    """matA's (dense) nonzeros in the order matB's format keeps them: by rows (CSR, COO) or columns (CSC)."""
    if c["matB.format"] not in (CSR, CSC, COO):
        c.refuse("matB is in a format cudalab's cuSPARSE does not compute (it has CSR, CSC and COO)", NOT_SUPPORTED)
    load, _ = _dense(c, "matA")
    dense = load()
    if (c["matB.rows"], c["matB.cols"]) != dense.shape:
        c.refuse(f"matA is {dense.shape[0]} x {dense.shape[1]} but matB {c['matB.rows']} x {c['matB.cols']}")
    if c["matB.format"] == CSC:
        cols, rows = np.nonzero(dense.T)
    else:
        rows, cols = np.nonzero(dense)
    return dense, rows, cols


def _store_indices(c: Call, name: str, addr: int, values, type_code: int):
    c.memory.store(c.memory.array(name, addr, len(values), INDEX_TYPES.get(type_code, np.int32)), values)


def _store_offsets(c: Call, dense, rows, cols):
    """CSR's row (CSC's column) offsets into matB.major; COO has none."""
    fmt, base = c["matB.format"], c["matB.base"]
    if fmt == COO:
        return
    outer = (rows, dense.shape[0]) if fmt == CSR else (cols, dense.shape[1])
    offsets = _offsets_from(*outer, base)
    _store_indices(c, "matB's offsets", c["matB.major"], offsets, c["matB.major_type"])


def DenseToSparse_analysis(c: Call) -> bytes:
    """Count matA's nonzeros (the shim sets matB's nnz to it) and write CSR/CSC offsets, as cuSPARSE does."""
    dense, rows, cols = _nonzeros(c)
    _store_offsets(c, dense, rows, cols)
    c.timeline(dense.size, dense.nbytes)
    return np.int64(rows.size).tobytes()


def DenseToSparse_convert(c: Call):
    """Fill matB's indices and values (its arrays sized by the analysis's nnz)."""
    dense, rows, cols = _nonzeros(c)
    if rows.size != c["matB.nnz"]:
        c.refuse(f"matA has {rows.size} nonzeros but matB was made for {c['matB.nnz']} (call "
                 "cusparseDenseToSparse_analysis, then cusparseSpMatGetSize and set matB's arrays to that size)")
    base, fmt = c["matB.base"], c["matB.format"]
    _store_offsets(c, dense, rows, cols)
    if fmt == COO:
        _store_indices(c, "matB's row indices", c["matB.major"], rows + base, c["matB.major_type"])
    _store_indices(c, "matB's indices", c["matB.minor"], (cols if fmt != CSC else rows) + base, c["matB.minor_type"])
    code = c.value_type("matB")
    c.store("matB's values", c["matB.values"], code, (rows.size,), (1,), rows.size, dense[rows, cols])
    c.timeline(dense.size, dense.nbytes + rows.size * 12)


FILL_LOWER, DIAG_UNIT = 0, 1                                   # cusparseFillMode_t, cusparseDiagType_t
SOLVE_TYPES = {0: np.float32, 1: np.float64, 4: np.complex64, 5: np.complex128}     # SpSV's and csrilu02's


def _triangle(c: Call, compute):
    """matA's triangle as SpSV reads it: (op(A)'s strict triangle as triplets, op(A)'s diagonal). The fill
    mode picks the triangle; a unit diagonal type takes ones, otherwise the stored diagonal (zero where
    none is stored, which the solve divides by, as a GPU's would)."""
    a = sparse_matrix(c, "matA")
    lower = c["matA.fill"] == FILL_LOWER
    keep = a.rows > a.cols if lower else a.rows < a.cols
    part = Triplets(a.shape, a.rows[keep], a.cols[keep], a.values[keep].astype(compute))
    diagonal = np.zeros(a.shape[0], compute)
    if c["matA.diag"] == DIAG_UNIT:
        diagonal[:] = 1
    else:
        on = a.rows == a.cols
        np.add.at(diagonal, a.rows[on], a.values[on].astype(compute))
    if c["opA"] == 2:
        diagonal = diagonal.conj()
    return _op(c, "opA", part), diagonal


def _ranges(offsets, which):
    """The positions offsets[w] .. offsets[w + 1] - 1 of every w in ``which``, one array."""
    starts, counts = offsets[which], offsets[which + 1] - offsets[which]
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return shift + np.arange(total)


def substitute(part: Triplets, diagonal, rhs):
    """y with diagonal * y + part y = rhs, ``part`` a strict triangle (either one): a level at a time,
    every row whose needed rows are done solved at once (each row's sum in its entries' order, in the
    compute type), so a 2-D grid's triangle takes as many numpy steps as its diagonals, not its rows."""
    m = rhs.size
    by_row = np.argsort(part.rows, kind="stable")
    rows, cols, values = part.rows[by_row], part.cols[by_row], part.values[by_row]
    row_off = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
    by_col = np.argsort(cols, kind="stable")
    col_off = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=m))])
    waiting = np.diff(row_off)
    y = np.zeros(m, rhs.dtype)
    level = np.flatnonzero(waiting == 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while level.size:
            entries = _ranges(row_off, level)
            sums = np.zeros(m, rhs.dtype)
            np.add.at(sums, rows[entries], values[entries] * y[cols[entries]])
            y[level] = (rhs[level] - sums[level]) / diagonal[level]
            needing = rows[by_col[_ranges(col_off, level)]]
            waiting -= np.bincount(needing, minlength=m)
            level = np.unique(needing[waiting[needing] == 0])
    return y


def SpSV(c: Call):
    """cusparseSpSV_analysis and _solve: op(A) Y = alpha X, A's triangle by its fill mode and diagonal type.
    The analysis checks what the solve will need; the solve reads the matrix as it is then."""
    if c.value_type("matA") not in SOLVE_TYPES:
        c.refuse("matA's values are half or bfloat16, and cuSPARSE's SpSV solves in f32, f64 and their complex forms "
                 "only", NOT_SUPPORTED)
    compute = _compute(c, "matA", "vecX", "vecY")
    m, n = c["matA.rows"], c["matA.cols"]
    if m != n:
        c.refuse(f"matA is {m} x {n}: a triangular solve needs a square matrix")
    if c["vecX.size"] != m or c["vecY.size"] != m:
        c.refuse(f"matA is {m} x {m}, so X and Y must have {m} elements, but they have {c['vecX.size']} and "
                 f"{c['vecY.size']}")
    if c["opA"] not in (0, 1, 2):
        c.refuse(f"opA = {c['opA']} is not a cusparseOperation_t")
    if not c["externalBuffer"]:
        c.refuse("externalBuffer is NULL: allocate the bytes cusparseSpSV_bufferSize asked for and pass them")
    if not c["analysed"]:
        c.refuse("spsvDescr has not been through cusparseSpSV_analysis: call it once (with this matrix) before "
                 "the solves")
    part, diagonal = _triangle(c, compute)
    if c.routine.endswith("_analysis"):
        c.timeline(0, part.values.size * (compute.itemsize + 8))
        return
    alpha = c.scalar("alpha", compute)
    x = c.load("vecX", c["vecX.values"], c["vecX.type"], (m,), (1,), m).astype(compute)
    y = substitute(part, diagonal, (alpha * x).astype(compute))
    c.store("vecY", c["vecY.values"], c["vecY.type"], (m,), (1,), m, y)
    c.timeline(2 * part.values.size + m, part.values.size * (compute.itemsize + 4) + 3 * m * compute.itemsize)


def Ilu0(c: Call) -> bytes:
    """cusparse[SDCZ]csrilu02_analysis and cusparse[SDCZ]csrilu02: A = L U with L and U keeping A's pattern
    (no fill-in), written over A's values: L's entries below the diagonal (its unit diagonal not
    stored), U's on and above. Row by row, each entry left of the diagonal divided by its column's
    pivot, then that multiple of the pivot's row taken from the entries the two rows share. Answers
    the first zero pivot (the analysis: a missing diagonal entry; the factorization: that, or a
    diagonal that became zero), 0-based, or -1, as 4 bytes for cusparseXcsrilu02_zeroPivot."""
    dtype = SOLVE_TYPES[c["type"]]
    m, nnz = c["m"], c["nnz"]
    if m < 0 or nnz < 0:
        c.refuse(f"m = {m} and nnz = {nnz} must not be negative")
    if not c["descrA"]:
        c.refuse("descrA is NULL (make one with cusparseCreateMatDescr)")
    if c["descrA.type"] != 0:
        c.refuse("descrA's matrix type is not CUSPARSE_MATRIX_TYPE_GENERAL, the only one csrilu02 takes",
                 MATRIX_TYPE_NOT_SUPPORTED)
    if not c["buffer"]:
        c.refuse("pBuffer is NULL: allocate the bytes csrilu02_bufferSize asked for and pass them")
    if c["factor"] and not c["analysed"]:
        c.refuse("info has not been through csrilu02_analysis: call it before the factorization")
    base = c["descrA.base"]
    off = _offsets(c, "csrRowPtrA", c["row"], m, 2, base, nnz)
    cols = c.indices("csrColIndA", c["col"], nnz, 2) - base
    _check_indices(c, "csrColIndA", cols, m)
    rows = np.repeat(np.arange(m), np.diff(off))
    on = np.flatnonzero(cols == rows)
    pivot = np.full(m, -1)
    pivot[rows[on]] = on
    missing = np.flatnonzero(pivot < 0)
    if not c["factor"]:
        c.timeline(nnz, 8 * nnz)
        return np.int32(missing[0] if missing.size else -1).tobytes()
    unsorted = np.flatnonzero((np.diff(cols) <= 0) & (rows[1:] == rows[:-1]))
    if unsorted.size:
        c.refuse(f"csrColIndA is not sorted (strictly rising) in row {rows[unsorted[0]]}: csrilu02 needs each row's "
                 "columns in order, and on a GPU gives wrong factors otherwise", EXECUTION_FAILED)
    view = c.memory.array("csrValA_valM", c["val"], nnz, dtype)
    v = view.copy()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(m):
            lo, hi = off[i], off[i + 1]
            row_cols = cols[lo:hi]
            for p in range(lo, hi):
                k = cols[p]
                if k >= i:
                    break
                pk = pivot[k]
                v[p] = v[p] / (v[pk] if pk >= 0 else dtype(0))
                right = np.arange(pk + 1 if pk >= 0 else off[k] + np.searchsorted(cols[off[k]:off[k + 1]], k),
                                  off[k + 1])
                at = np.searchsorted(row_cols, cols[right])
                shared = at < row_cols.size
                shared[shared] = row_cols[at[shared]] == cols[right][shared]
                v[lo + at[shared]] -= v[p] * v[right[shared]]
    c.memory.store(view, v)
    zero = np.flatnonzero((pivot < 0) | (v[np.maximum(pivot, 0)] == 0))
    c.timeline(2 * nnz, 16 * nnz)
    return np.int32(zero[0] if zero.size else -1).tobytes()


PRUNE_TYPES = {2: np.float16, 0: np.float32, 1: np.float64}       # cudaDataType of [HSD]prune's values


def _prune_source(c: Call, dtype):
    """(rows, cols, values) of A's candidate entries in CSR order: every entry of a dense A (column-major,
    leading dimension lda; zeros too, which the percentage counts), or a CSR A's stored entries."""
    m, n = c["m"], c["n"]
    if not c["csr"]:
        lda = c["lda"]
        if lda < max(1, m):
            c.refuse(f"lda = {lda} is less than m = {m}: the dense matrix's columns would overlap")
        if m == 0 or n == 0:
            return (np.zeros(0, np.int64),) * 2 + (np.zeros(0, dtype),)
        dense = c.memory.view("A", c["A"], dtype, (m, n), (1, lda), lda * (n - 1) + m)
        rows, cols = np.divmod(np.arange(m * n), n)
        return rows, cols, np.asarray(dense).reshape(-1)
    nnz_a = c["nnzA"]
    if nnz_a < 0:
        c.refuse(f"nnzA = {nnz_a} is negative")
    base = c["descrA.base"]
    off = _offsets(c, "csrRowPtrA", c["rowA"], m, 2, base, nnz_a)
    cols = c.indices("csrColIndA", c["colA"], nnz_a, 2) - base
    _check_indices(c, "csrColIndA", cols, n)
    return np.repeat(np.arange(m), np.diff(off)), cols, c.memory.array("csrValA", c["valA"], nnz_a, dtype)


def _prune_threshold(c: Call, dtype, values):
    """The threshold: the one given, or, by percentage p, the entry at position ceil(count * p / 100) - 1
    (clamped to the entries) of A's absolute values in rising order, as cuSPARSE's documentation says and
    an H200 did (tools/prune_gpu_probe.cu): p = 50 of 20 entries keeps the ones above the 10th smallest."""
    if "threshold" in c.args:
        return dtype(c.scalar("threshold", dtype))
    if not c["info"]:
        c.refuse("info is not a live pruneInfo_t (make one with cusparseCreatePruneInfo)")
    p = np.array([c["percentageBits"]], np.uint32).view(np.float32)[0]
    if not 0 <= p <= 100:
        c.refuse(f"percentage = {p:g} is outside 0 to 100")
    if values.size == 0:
        return dtype(0)
    pos = int(np.ceil(np.float32(values.size) * (p / np.float32(100)))) - 1
    return np.sort(np.abs(values))[min(max(pos, 0), values.size - 1)]


def Prune(c: Call):
    """cusparse[HSD]prune{Dense2csr,Csr2csr}[ByPercentage] (the Nnz step and the one that fills C): C keeps
    A's entries whose absolute value is above the threshold (strictly: one equal to it goes), in A's
    order, with descrC's index base. A negative threshold is taken as it is (every entry of a dense A
    stays, zeros too); cuSPARSE 12.6 then wrote 32 entries a row whatever n was.

    Misuse as cuSPARSE 12.6 answered it on an H200 (tests/libraries/prune_h200.txt): a negative size, lda < m,
    a percentage outside 0..100 or a NULL buffer is INVALID_VALUE, a NULL csrRowPtrC INTERNAL_ERROR; the
    matrix type is not looked at, a NULL nnzTotalDevHostPtr is let be, and an empty matrix writes nothing.
    Where cuSPARSE crashed (a NULL threshold, descriptor or pruneInfo_t), cudalab refuses with a message."""
    dtype = PRUNE_TYPES[c["type"]]
    m, n = c["m"], c["n"]
    if m < 0 or n < 0:
        c.refuse(f"m = {m} and n = {n} must not be negative")
    if not c["descrC"]:
        c.refuse("descrC is NULL (make one with cusparseCreateMatDescr)")
    if c["csr"] and not c["descrA"]:
        c.refuse("descrA is NULL (make one with cusparseCreateMatDescr)")
    if not c["buffer"]:
        c.refuse("pBuffer is NULL: allocate the bytes the _bufferSizeExt call asked for and pass them")
    if not c["rowC"]:
        c.refuse("csrRowPtrC is NULL: it needs m + 1 ints of device memory", INTERNAL_ERROR)
    if m == 0 or n == 0:
        return np.zeros(0, np.uint8).tobytes()       # nothing written, not even the count
    rows, cols, values = _prune_source(c, dtype)
    threshold = _prune_threshold(c, dtype, values)
    keep = np.abs(values) > threshold
    rows, cols, values = rows[keep], cols[keep], values[keep]
    base = c["descrC.base"]
    if not c["fill"]:
        offsets = _offsets_from(rows, m, base)
        c.memory.store(c.memory.array("csrRowPtrC", c["rowC"], m + 1, np.int32), offsets)
        if c.device_scalars and c["nnzGiven"]:
            c.memory.store(c.memory.array("nnzTotalDevHostPtr", c["nnz"], 1, np.int32), rows.size)
        c.timeline(values.size, values.nbytes + 4 * (m + 1))
        return np.int32(rows.size).tobytes()
    c.memory.store(c.memory.array("csrColIndC", c["colC"], rows.size, np.int32), cols + base)
    c.memory.store(c.memory.array("csrValC", c["valC"], rows.size, dtype), values)
    c.timeline(keep.size, keep.size * np.dtype(dtype).itemsize + rows.size * (4 + np.dtype(dtype).itemsize))


ROUTINES = {"cusparseSpMV": SpMV, "cusparseSpMM": SpMM, "cusparseXcoo2csr": Xcoo2csr,
            "cusparseCsr2cscEx2": Csr2cscEx2, "cusparseSparseToDense": SparseToDense,
            "cusparseDenseToSparse_analysis": DenseToSparse_analysis,
            "cusparseDenseToSparse_convert": DenseToSparse_convert, "cusparseSpSV_analysis": SpSV,
            "cusparseSpSV_solve": SpSV}


def run(ctx, name: str, stream: int, args: dict, device_scalars: bool) -> bytes:
    """Run the cuSPARSE routine ``name`` (see the module docstring); returns what comes back to the
    host (DenseToSparse_analysis's nnz, as 8 bytes)."""
    fn = ROUTINES.get(name) or (Prune if re.fullmatch(r"cusparse[HSD]prune\w+", name) else
                                Ilu0 if re.fullmatch(r"cusparse[SDCZ]csrilu02(_analysis)?", name) else None)
    if fn is None:
        raise LibraryError(f"{name} is not one of the cuSPARSE routines cudalab implements.", NOT_SUPPORTED)
    return fn(Call(ctx, name, stream, args, device_scalars)) or b""
