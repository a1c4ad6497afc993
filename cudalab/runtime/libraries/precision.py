"""The reduced input precision of cuBLAS's fast FP32 modes (TF32), for blas.py and blaslt.py.

A program that asks cuBLAS for TF32 (``cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)`` for
the single-precision routines, or ``CUBLAS_COMPUTE_32F_FAST_TF32`` for cublasGemmEx and
cublasLtMatmul) gets products whose float32 inputs were first rounded to TF32: float32's 8-bit
exponent with 10 explicit mantissa bits instead of 23. The products are then summed in float32.
So ``1 + 2**-12`` times 1 is 1 with TF32, and a program checked against a float32 CPU reference
misses it by ~1e-4 relative, as it does on a GPU.

Measured on an H200 (cuBLAS 13.1, cublasSgemm and cublasGemmEx, 2 x 2 and larger): inputs round to
nearest, ties to even (``1 + 2**-11 + 2**-12`` -> ``1 + 2**-10``, ``1 + 2**-12`` -> 1; not the ties-away
of ``cvt.rna.tf32.f32``, not truncation), the same on the A side and the B side.
``CUBLAS_COMPUTE_32F_FAST_16F`` and ``_FAST_16BF`` gave the very same TF32 results for float32
inputs (``1 + 2**-8 + 2**-23`` stayed ``1 + 2**-8``, which bfloat16 would not keep), so they are
modeled as TF32 too. ``NVIDIA_TF32_OVERRIDE=0`` in the program's environment turned TF32 off for both
the math mode and FAST_TF32 (full float32 results); that it does so for FAST_16F/16BF too is assumed,
not measured, as is cublasGemmEx's CUBLAS_COMPUTE_32F taking TF32 from the math mode (cuBLAS's
documentation says so). llm.c's dev/cuda/trimat_forward (kernel 0, cuBLAS with TF32, shrunk to
B=1, T=64, C=256, NH=2) now misses its CPU reference by ~2e-4 in cudalab as on an H200, and passes
with NVIDIA_TF32_OVERRIDE=0. A 1 x 1 x 1 cublasSgemm ran in full float32
on the H200 even in TF32 mode (cuBLAS picks a kernel without tensor cores); that size rule is not
modeled.
"""
from __future__ import annotations

import numpy as np

TF32_TENSOR_OP_MATH = 3                    # cublasMath_t (its low bits; flags such as 16 may be or'ed in)
PEDANTIC_MATH = 2
COMPUTE_32F = 68
FAST_COMPUTE = {74: "CUBLAS_COMPUTE_32F_FAST_16F", 75: "CUBLAS_COMPUTE_32F_FAST_16BF",
                77: "CUBLAS_COMPUTE_32F_FAST_TF32"}


def tf32_round(a: np.ndarray) -> np.ndarray:
    """float32 (or complex64: each part) values rounded to TF32's 10 mantissa bits, to nearest with
    ties to even; infinities and NaNs stay as they are, and a value past TF32's largest rounds to
    infinity, as float32 rounding does."""
    if np.iscomplexobj(a):
        return (tf32_round(a.real) + 1j * tf32_round(a.imag)).astype(np.complex64)
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    keep = ~np.isfinite(bits.view(np.float32))
    return np.where(keep, bits, rounded).view(np.float32)


def uses_tf32(compute: int, math_mode: int, override: bool) -> bool:
    """Whether float32 inputs are rounded to TF32: a fast compute type, or CUBLAS_COMPUTE_32F (what a
    cublasSgemm/Cgemm computes in) with the handle's math mode CUBLAS_TF32_TENSOR_OP_MATH.
    ``override``: NVIDIA_TF32_OVERRIDE=0 was set for the program, which turns TF32 off."""
    if override:
        return False
    return compute in FAST_COMPUTE or (compute == COMPUTE_32F and math_mode & 0xF == TF32_TENSOR_OP_MATH)


def inputs(a: np.ndarray, tf32: bool) -> np.ndarray:
    """A product's input as the tensor cores see it: rounded to TF32 when ``tf32`` and the values are
    float32 or complex64 (half and bfloat16 inputs are already exact in TF32)."""
    if tf32 and a.dtype in (np.float32, np.complex64):
        return tf32_round(a)
    return a
