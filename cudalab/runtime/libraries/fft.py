"""cuFFT's plans and transforms as numpy.fft reference implementations on the emulated device memory.

A plan is cuFFT's description of a batch of transforms: rank 1 to 3, sizes ``n`` (row-major, the
last dimension fastest), a type (C2C, R2C, C2R and their double forms Z2Z, D2Z, Z2D) and a layout:
the basic one (batches packed one after the other) or cuFFT's advanced one, where element
(b, i0, ..., ik) lies at ``b * dist + ((i0 * embed[1] + i1) * embed[2] + ...) * stride``. A real
transform's complex side has n_last / 2 + 1 elements in its last dimension; an in-place real
transform's real side is padded to twice that (cuFFT's FFTW-compatible padding). Inverse
transforms are unnormalized, as cuFFT's are. The arithmetic is numpy's (in double precision,
rounded to the plan's): results match cuFFT within floating-point rounding, and cuFFT's kernels
are not emulated (the call is one row on the timeline).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .operands import LibraryError, Operands, on_timeline

SUCCESS, INVALID_PLAN, INVALID_TYPE, INVALID_VALUE, EXEC_FAILED, INVALID_SIZE = 0, 1, 3, 4, 6, 8
# cufftType: (input dtype, output dtype, name as cuFFT's exec call spells it)
TYPES = {0x29: (np.complex64, np.complex64, "C2C"), 0x2A: (np.float32, np.complex64, "R2C"),
         0x2C: (np.complex64, np.float32, "C2R"), 0x69: (np.complex128, np.complex128, "Z2Z"),
         0x6A: (np.float64, np.complex128, "D2Z"), 0x6C: (np.complex128, np.float64, "Z2D")}
FORWARD, INVERSE = -1, 1


@dataclass
class Plan:
    """One cufftHandle once made: sizes, type, batch and the advanced layout (None: the basic one)."""

    n: tuple
    fft_type: int
    batch: int
    inembed: tuple | None = None
    istride: int = 1
    idist: int = 0
    onembed: tuple | None = None
    ostride: int = 1
    odist: int = 0
    stream: int = 0


def make_plan(n, fft_type, batch, inembed=None, istride=1, idist=0, onembed=None, ostride=1, odist=0) -> Plan:
    """cufftMakePlanMany's checks (CUFFT_INVALID_SIZE, CUFFT_INVALID_TYPE), as a Plan."""
    if fft_type not in TYPES:
        raise LibraryError(f"cufftPlan: type 0x{fft_type:x} is not a cufftType (CUFFT_C2C, R2C, C2R, Z2Z, D2Z, "
                           "Z2D).", INVALID_TYPE)
    if not 1 <= len(n) <= 3 or min(n) < 1 or batch < 1:
        raise LibraryError(f"cufftPlan: sizes {list(n)} with batch {batch}: cuFFT takes 1 to 3 dimensions of at "
                           "least 1 element and a batch of at least 1 (CUFFT_INVALID_SIZE).", INVALID_SIZE)
    return Plan(tuple(n), fft_type, batch, tuple(inembed) if inembed else None, istride, idist,
                tuple(onembed) if onembed else None, ostride, odist)


def _side(plan: Plan, complex_side: bool, inplace_real: bool):
    """(logical shape, embed) of one side: the complex side of a real transform is n_last/2 + 1 wide,
    the real side of an in-place real transform is padded to twice that."""
    n = list(plan.n)
    real = TYPES[plan.fft_type][2] in ("R2C", "C2R", "D2Z", "Z2D")
    if real and complex_side:
        n[-1] = n[-1] // 2 + 1
    embed = list(n)
    if real and not complex_side and inplace_real:
        embed[-1] = 2 * (plan.n[-1] // 2 + 1)
    return n, embed


def _operand(memory: Operands, name, addr, plan, dtype, shape, embed, stride, dist):
    """The batch of transforms' data: a view (batch, *shape) over the layout's strides."""
    strides, step = [], stride
    for e in reversed(embed):
        strides.insert(0, step)
        step *= e
    dist = dist or int(np.prod(embed)) * stride
    span = (plan.batch - 1) * dist + sum((s - 1) * st for s, st in zip(shape, strides)) + 1
    return memory.view(name, addr, dtype, (plan.batch, *shape), (dist, *strides), span)


def execute(ctx, plan: Plan, kind: str, idata: int, odata: int, direction: int):
    """cufftExec<kind>(plan, idata, odata[, direction]) on the emulated device memory."""
    src, dst, name = TYPES[plan.fft_type]
    if name != kind:
        raise LibraryError(f"cufftExec{kind}: the plan was made for {name} transforms, so the call does nothing "
                           f"and returns CUFFT_INVALID_VALUE: call cufftExec{name}.", INVALID_VALUE)
    if kind in ("C2C", "Z2Z") and direction not in (FORWARD, INVERSE):
        raise LibraryError(f"cufftExec{kind}: direction {direction} is neither CUFFT_FORWARD (-1) nor CUFFT_INVERSE "
                           "(1).", INVALID_VALUE)
    memory = Operands(ctx, f"cufftExec{kind}", EXEC_FAILED)
    inplace = idata == odata
    in_shape, in_embed = _side(plan, np.dtype(src).kind == "c", inplace)
    out_shape, out_embed = _side(plan, np.dtype(dst).kind == "c", inplace)
    x = _operand(memory, "idata", idata, plan, src, in_shape, plan.inembed or in_embed, plan.istride, plan.idist)
    y = _operand(memory, "odata", odata, plan, dst, out_shape, plan.onembed or out_embed, plan.ostride, plan.odist)
    axes = tuple(range(1, len(plan.n) + 1))
    values = x.astype(np.complex128 if np.dtype(src).kind == "c" else np.float64)
    if kind in ("C2C", "Z2Z"):
        out = np.fft.fftn(values, axes=axes) if direction == FORWARD else np.fft.ifftn(values, axes=axes, norm="forward")
    elif kind in ("R2C", "D2Z"):
        out = np.fft.rfftn(values, axes=axes)
    else:
        out = np.fft.irfftn(values, s=plan.n, axes=axes, norm="forward")
    memory.store(y, out)
    size = int(np.prod(plan.n)) * plan.batch
    on_timeline(ctx, plan.stream, f"cufftExec{kind}", 5 * size * np.log2(max(size, 2)),
                x.nbytes + y.nbytes)
