"""NVIDIA's math libraries as reference implementations on the emulated device memory.

A whole program that calls cuBLAS or cuRAND's host API links against cudalab's shim of the library
(``programs/shim/cublas.c``, ``curand.c``), and each call becomes one operation here, in its
stream's order on the runtime's one timeline, named after the library routine ("cublasSgemm").
Modules: ``blas`` (cuBLAS's routines), ``rand`` (cuRAND's generators), ``operands`` (device
memory as numpy views, the row on the timeline). The arithmetic is numpy's: results match the
library within floating-point rounding, and the library's own kernels are not emulated.
"""
