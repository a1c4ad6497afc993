"""numba.cuda's ready-made kernels (``numba.cuda.kernels``) on cudalab's arrays.

numba's ``transpose`` asks numba's driver for the GPU and allocates numba's own device array, neither
of which exists without a GPU; ``install()`` puts this one in its place: the same tiled algorithm
(NVIDIA's "efficient matrix transpose": a tile of the block's size in shared memory, one column of
padding against bank conflicts), the same arguments and result, launched as a cudalab kernel, so it
shows up in the profile and the timeline like the program's own.
"""
from __future__ import annotations

import functools
import math

import numpy as np


def transpose(a, b=None):
    """Write the transpose of 2-d array ``a`` into ``b`` (a device array of the transposed shape) and
    return ``b``; without ``b``, a new device array. ``a`` may be a numpy array (copied in, as a
    kernel launch copies it); a device array's stream is used, as in numba."""
    from .host import device_array, get_current_device
    stream = getattr(a, "stream", 0)
    if len(a.shape) != 2:
        raise ValueError(f"transpose() takes a 2-d array; this one has shape {tuple(a.shape)}")
    if b is None:
        cols, rows = a.shape
        b = device_array((rows, cols), a.dtype, stream=stream)
    elif tuple(b.shape) != tuple(a.shape)[::-1]:
        raise ValueError(f"transpose(a, b): b must have shape {tuple(a.shape)[::-1]} for a of shape "
                         f"{tuple(a.shape)}, not {tuple(b.shape)}")
    tpb = int(get_current_device().MAX_THREADS_PER_BLOCK)
    tile_width = int(math.pow(2, math.log(tpb, 2) / 2))     # numba's split of the block into a square tile
    tile_height = int(tpb / tile_width)
    kernel = _tile_kernel(np.dtype(a.dtype), tile_height, tile_width)
    blocks = int(b.shape[0] / tile_height + 1), int(b.shape[1] / tile_width + 1)
    kernel[blocks, (tile_height, tile_width), stream](a, b)
    return b


@functools.lru_cache(maxsize=None)
def _tile_kernel(dtype: np.dtype, tile_height: int, tile_width: int):
    """The transpose kernel for one element type and tile (compiled once per pair, where numba compiles
    a new closure at each call)."""
    from numba import cuda
    from numba.cuda.np import numpy_support
    from .dispatcher import Dispatcher
    element = numpy_support.from_dtype(dtype)
    tile_shape = (tile_height, tile_width + 1)

    def transpose_tile(input, output):
        tile = cuda.shared.array(shape=tile_shape, dtype=element)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bx = cuda.blockIdx.x * cuda.blockDim.x
        by = cuda.blockIdx.y * cuda.blockDim.y
        x = by + tx
        y = bx + ty
        if by + ty < input.shape[0] and bx + tx < input.shape[1]:
            tile[ty, tx] = input[by + ty, bx + tx]
        cuda.syncthreads()
        if y < output.shape[0] and x < output.shape[1]:
            output[y, x] = tile[tx, ty]
    kernel = Dispatcher(transpose_tile)
    kernel.warns_as_numba = False       # numba's own kernel: its grid is numba's choice, not the program's
    return kernel
