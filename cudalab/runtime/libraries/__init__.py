"""NVIDIA's math libraries as reference implementations on the emulated device memory.

A whole program that calls cuBLAS, cuBLASLt, cuSPARSE, cuRAND's host API or cuFFT links against
cudalab's shim of the library (``programs/shim/cublas.c``, ``cublasLt.c``, ``cusparse.c``,
``curand.c``, ``cufft.c``), and each call becomes one operation here, in its stream's order on the
runtime's one timeline, named after the library routine ("cublasSgemm"). Modules: ``blas``
(cuBLAS's routines, v2 and legacy), ``blaslt`` (cuBLASLt's matmul), ``sparse`` (cuSPARSE's generic
API), ``rand`` (cuRAND's generators), ``fft`` (cuFFT's plans), ``operands`` (device memory as numpy
views, a call's arguments, the row on the timeline). The arithmetic is numpy's: results match the
library within floating-point rounding, and the library's own kernels are not emulated.
"""
