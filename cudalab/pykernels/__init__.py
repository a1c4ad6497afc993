"""Python kernels in numba.cuda's dialect, run by cudalab: ``@cudalab.jit`` compiles them to PTX with
numba-cuda (NVVM from NVIDIA's pip wheels, no GPU needed) and launches them on the emulator or a GPU.

    @cudalab.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]

    rec = add[blocks, 256](a, b, c)      # numpy arrays are copied in and back; returns a LaunchRecord

The PTX's line table points at the Python file, so the profile, the sanitizers and the widgets name
Python lines. ``cudalab.numba.install()`` makes unmodified ``numba.cuda`` programs use all of this.
"""
from .dispatcher import Dispatcher, PyKernel, jit  # noqa: F401
