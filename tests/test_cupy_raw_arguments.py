"""A raw kernel's arguments and a module's variables as CuPy hands them over.

A lesson on constant memory writes ``args=(x_gpu)`` -- which is the array itself, not a tuple of
one -- and sets a ``__constant__`` variable through ``RawModule.get_global``. On a GPU the first
runs: CuPy passes each element of what it is given and the driver reads as many arguments as the
kernel has parameters; the first element's address is the array's. The emulator runs it the same
way and says what was meant."""
import numpy as np
import pytest

SCALE = r"""
__constant__ float factor;
__device__ int launches;

extern "C" __global__ void scale(float *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 16) x[i] *= factor;
    if (i == 0) launches += 1;
}
"""


def test_an_array_given_as_args_is_read_as_its_first_elements_address(cp):
    from cudalab.cupy.kernels import ExtraArgumentsWarning
    module = cp.RawModule(code=SCALE)
    factor = cp.ndarray((1,), dtype=cp.float32, memptr=module.get_global("factor"))
    factor[:] = 3.0
    x = cp.arange(16, dtype=cp.float32)
    with pytest.warns(ExtraArgumentsWarning, match=r"1 parameter but was given 16 arguments.*args=\(x,\)"):
        module.get_function("scale")((1,), (16,), (x))          # (x) is x: the lesson's spelling
    assert x.get().tolist() == [3.0 * k for k in range(16)]


def test_extra_arguments_are_left_unread_and_too_few_stay_an_error(cp):
    from cudalab.cupy.kernels import ExtraArgumentsWarning
    from cudalab.errors import LaunchError
    kernel = cp.RawModule(code=SCALE).get_function("scale")
    x = cp.ones(16, dtype=cp.float32)
    with pytest.warns(ExtraArgumentsWarning, match="reads the first 1"):
        kernel((1,), (16,), (x, np.int32(16)))
    with pytest.raises(LaunchError, match="takes 1 argument"):
        kernel((1,), (16,), ())


def test_get_global_points_at_a_modules_variable(cp):
    module = cp.RawModule(code=SCALE)
    pointer = module.get_global("launches")
    assert pointer.mem.size == 0                   # CuPy leaves the size unknown (CuPy 14 on an H200: 0)
    count = cp.ndarray((1,), dtype=cp.int32, memptr=pointer)
    kernel = module.get_function("scale")
    x = cp.ones(16, dtype=cp.float32)
    kernel((1,), (16,), (x,))
    kernel((1,), (16,), (x,))
    assert int(count.get()[0]) == 2                           # the kernels' own counter, read back
    with pytest.raises(Exception, match="no __constant__ or __device__ variable 'missing'"):
        module.get_global("missing")
