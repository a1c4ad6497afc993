"""PyCUDA's CUDA arrays, as texture lessons make them: ``matrix_to_array`` and ``np_to_array`` from numpy
data in C or Fortran order, ``Array`` from a descriptor, and ``Memcpy2D``/``Memcpy3D`` to and from
arrays; and what PyCUDA answers for a dtype no array holds or a copy that does not fit."""
import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def drv():
    cudalab.numba.install()
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver
    yield pycuda.driver
    cudalab.numba.uninstall()


def read_2d(drv, array, rows, row_bytes, dtype, shape):
    out = np.zeros(shape, dtype)
    copy = drv.Memcpy2D()
    copy.set_src_array(array)
    copy.set_dst_host(out)
    copy.width_in_bytes = copy.dst_pitch = row_bytes
    copy.height = rows
    copy(aligned=True)
    return out


def test_matrix_to_array_in_c_and_fortran_order(drv):
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = drv.matrix_to_array(m, "C")
    d = rows.get_descriptor()
    assert (d.width, d.height, d.num_channels, d.format) == (4, 3, 1, drv.array_format.FLOAT)
    assert read_2d(drv, rows, 3, 16, np.float32, (3, 4)).tolist() == m.tolist()
    columns = drv.matrix_to_array(m, "F")          # the array's rows are the matrix's columns
    assert (columns.get_descriptor().width, columns.get_descriptor().height) == (3, 4)
    assert read_2d(drv, columns, 4, 12, np.float32, (4, 3)).tolist() == m.T.tolist()


def test_np_to_array_in_three_dimensions_and_back_with_memcpy3d(drv):
    volume = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    array = drv.np_to_array(volume, "C")
    d = array.get_descriptor_3d()
    assert (d.width, d.height, d.depth, d.format) == (4, 3, 2, drv.array_format.SIGNED_INT16)
    back = np.zeros_like(volume)
    copy = drv.Memcpy3D()
    copy.set_src_array(array)
    copy.set_dst_host(back)
    copy.width_in_bytes = copy.dst_pitch = 8
    copy.height = copy.dst_height = 3
    copy.depth = 2
    copy()
    assert back.tolist() == volume.tolist()


def test_doubles_as_int32_pairs_and_surface_arrays(drv):
    doubles = drv.np_to_array(np.arange(4.0).reshape(2, 2), "C")
    assert (doubles.get_descriptor().format, doubles.get_descriptor().num_channels) == \
        (drv.array_format.SIGNED_INT32, 2)
    surface = drv.np_to_array(np.ones((2, 5), np.float32), "C", allowSurfaceBind=True)
    d = surface.get_descriptor_3d()
    assert d.depth == 1 and d.flags == drv.array3d_flags.SURFACE_LDST | drv.array3d_flags.ARRAY3D_LAYERED


def test_an_array_from_a_descriptor_filled_from_the_device(drv):
    d = drv.ArrayDescriptor()
    d.width, d.height, d.format, d.num_channels = 4, 2, drv.dtype_to_array_format(np.uint8), 1
    array = drv.Array(d)
    src = drv.to_device(np.arange(8, dtype=np.uint8))
    copy = drv.Memcpy2D()
    copy.set_src_device(src)
    copy.set_dst_array(array)
    copy.width_in_bytes = copy.src_pitch = 4
    copy.height = 2
    copy()
    assert read_2d(drv, array, 2, 4, np.uint8, (2, 4)).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    array.free()


def test_what_pycuda_answers_for_a_misuse(drv):
    with pytest.raises(TypeError, match="cannot convert dtype 'float64' to array format"):
        drv.matrix_to_array(np.zeros((2, 2)), "C")      # doubles need allow_double_hack
    with pytest.raises(drv.LogicError, match="order must be either F or C"):
        drv.np_to_array(np.zeros((2, 2), np.float32), "K")
    array = drv.matrix_to_array(np.zeros((3, 4), np.float32), "C")
    too_wide = drv.Memcpy2D()
    too_wide.set_src_host(np.zeros((3, 8), np.float32))
    too_wide.set_dst_array(array)
    too_wide.width_in_bytes, too_wide.height = 32, 3
    with pytest.raises(drv.LogicError, match="cuMemcpy2D failed: invalid value .* does not fit in the CUDA array"):
        too_wide()


TEXTURE_2D = """
texture<float, 2> image;
__global__ void sample(float *dest, int w, float dx) {
    int x = threadIdx.x, y = threadIdx.y;
    dest[y * w + x] = tex2D(image, x + 0.5f + dx, y + 0.5f);
}
"""


def test_a_texture_reference_reads_a_bound_array_as_pycuda_lessons_do(drv):
    # CUDA 11's texture<float, 2> in a SourceModule, bound with set_array: built over a texture object
    from pycuda.compiler import SourceModule
    mod = SourceModule(TEXTURE_2D)
    image = mod.get_texref("image")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    image.set_array(drv.matrix_to_array(a, "C"))
    out = np.zeros_like(a)
    mod.get_function("sample")(drv.Out(out), np.int32(4), np.float32(0), block=(4, 3, 1), texrefs=[image])
    assert out.tolist() == a.tolist()
    image.set_filter_mode(drv.filter_mode.LINEAR)            # halfway between texels: their mean
    image.set_array(drv.matrix_to_array(a, "C"))
    mod.get_function("sample")(drv.Out(out), np.int32(4), np.float32(0.5), block=(4, 3, 1), texrefs=[image])
    assert out[0, :3].tolist() == [0.5, 1.5, 2.5] and out[0, 3] == 3.0      # clamped at the edge
    assert image.get_filter_mode() == drv.filter_mode.LINEAR and image.get_address_mode(0) == drv.address_mode.CLAMP


def test_a_gpuarray_bound_to_a_linear_texture_and_a_reference_the_module_lacks(drv):
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    mod = SourceModule("""
    texture<float, 1, cudaReadModeElementType> values;
    __global__ void every_other(float *dest) { dest[threadIdx.x] = tex1Dfetch(values, 2 * threadIdx.x); }
    """)
    values = mod.get_texref("values")
    assert gpuarray.to_gpu(np.arange(16, dtype=np.float32)).bind_to_texref_ext(values) == 0
    out = np.zeros(8, np.float32)
    mod.get_function("every_other")(drv.Out(out), block=(8, 1, 1), texrefs=[values])
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
    with pytest.raises(drv.LogicError, match="cuModuleGetTexRef failed: named symbol not found"):
        mod.get_texref("missing")


def test_a_reference_declared_in_an_included_file_and_matrix_to_texref(drv, tmp_path):
    # a book keeps its kernels in a .cu file that the SourceModule #includes
    from pycuda.compiler import SourceModule
    (tmp_path / "kernels.cu").write_text("""
    texture<int, 2, cudaReadModeElementType> grid;
    __global__ void read_grid(int *dest, int w) {
        dest[threadIdx.y * w + threadIdx.x] = tex2D(grid, threadIdx.x, threadIdx.y);
    }
    """)
    mod = SourceModule('#include "kernels.cu"\n', include_dirs=[str(tmp_path)])
    values = np.arange(20, dtype=np.int32).reshape(4, 5)[::-1].copy()
    drv.matrix_to_texref(values, mod.get_texref("grid"), order="C")
    out = np.zeros_like(values)
    mod.get_function("read_grid")(drv.Out(out), np.int32(5), block=(5, 4, 1))
    assert out.tolist() == values.tolist()


# pycourses round 18: surface references (surface<void, 2> in a SourceModule, get_surfref, set_array)
SURFACE_2D = """
surface<void, 2> canvas;
__global__ void paint(int w) {
    float v = 10.0f * threadIdx.y + threadIdx.x;
    surf2Dwrite(v, canvas, threadIdx.x * sizeof(float), threadIdx.y);
}
__global__ void doubled(float *dest, int w) {
    float v;
    surf2Dread(&v, canvas, threadIdx.x * sizeof(float), threadIdx.y);
    dest[threadIdx.y * w + threadIdx.x] = 2 * v;
}
"""


def test_a_surface_reference_written_by_one_kernel_and_read_by_the_next(drv):
    from pycuda.compiler import SourceModule
    mod = SourceModule(SURFACE_2D)
    canvas = mod.get_surfref("canvas")
    array = drv.np_to_array(np.zeros((3, 4), np.float32), "C", allowSurfaceBind=True)
    canvas.set_array(array)
    assert canvas.get_array() is array
    mod.get_function("paint")(np.int32(4), block=(4, 3, 1))
    out = np.zeros((3, 4), np.float32)
    mod.get_function("doubled")(drv.Out(out), np.int32(4), block=(4, 3, 1))
    assert out.tolist() == [[0, 2, 4, 6], [20, 22, 24, 26], [40, 42, 44, 46]]


def test_a_gpuarray_copied_into_a_surface_array_and_what_a_misuse_gets(drv):
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    mod = SourceModule(SURFACE_2D)
    canvas = mod.get_surfref("canvas")
    start = np.arange(12, dtype=np.float32).reshape(3, 4)
    canvas.set_array(drv.gpuarray_to_array(gpuarray.to_gpu(start), "C", allowSurfaceBind=True))
    out = np.zeros_like(start)
    mod.get_function("doubled")(drv.Out(out), np.int32(4), block=(4, 3, 1))
    assert out.tolist() == (2 * start).tolist()
    with pytest.raises(drv.LogicError, match="allowSurfaceBind=True"):      # an array made for textures only
        canvas.set_array(drv.matrix_to_array(start, "C"))
    with pytest.raises(drv.LogicError, match="cuModuleGetSurfRef failed: named symbol not found"):
        mod.get_surfref("missing")


def test_doubles_in_a_layered_surface_as_pycuda_makes_a_2d_one(drv):
    # np_to_array(..., allowSurfaceBind=True) makes a 2D array a layered one (a layer of int32 pairs for doubles)
    from pycuda.compiler import SourceModule
    mod = SourceModule("""
    surface<void, cudaSurfaceType2DLayered> sheet;
    __global__ void fill() {
        double v = 0.5 * threadIdx.y + threadIdx.x;
        surf2DLayeredwrite(v, sheet, threadIdx.x * sizeof(double), threadIdx.y, 0);
    }
    __global__ void back(double *out) {
        double v;
        surf2DLayeredread(&v, sheet, threadIdx.x * sizeof(double), threadIdx.y, 0);
        out[threadIdx.y * 4 + threadIdx.x] = v;
    }
    """)
    mod.get_surfref("sheet").set_array(drv.np_to_array(np.zeros((3, 4)), "C", allowSurfaceBind=True))
    mod.get_function("fill")(block=(4, 3, 1))
    out = np.zeros((3, 4))
    mod.get_function("back")(drv.Out(out), block=(4, 3, 1))
    assert out.tolist() == [[0, 1, 2, 3], [0.5, 1.5, 2.5, 3.5], [1, 2, 3, 4]]


def test_fortran_ordered_arrays_travel_in_their_memory_order(drv):
    # PyCUDA copies an array's buffer: a kernel indexing linearly sees a column-major matrix by columns
    from pycuda.compiler import SourceModule
    mod = SourceModule("__global__ void number(float *d) { d[threadIdx.x] = threadIdx.x; }\n"
                       "__global__ void copy(float *o, const float *s) { o[threadIdx.x] = s[threadIdx.x]; }")
    numbered = np.zeros((2, 3), np.float32, order="F")
    mod.get_function("number")(drv.Out(numbered), block=(6, 1, 1))
    assert numbered.tolist() == [[0, 2, 4], [1, 3, 5]]
    flat = np.zeros(6, np.float32)
    mod.get_function("copy")(drv.Out(flat), drv.In(numbered), block=(6, 1, 1))
    assert flat.tolist() == [0, 1, 2, 3, 4, 5]
    back = np.zeros((2, 3), np.float32, order="F")
    device = drv.mem_alloc(back.nbytes)
    drv.memcpy_htod(device, numbered)
    drv.memcpy_dtoh(back, device)
    assert back.tolist() == numbered.tolist()


def test_a_multichannel_array_in_fortran_order_is_channels_width_height(drv):
    texels = np.asarray(np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6), order="F")
    d = drv.make_multichannel_2d_array(texels, order="F").get_descriptor()
    assert (d.num_channels, d.width, d.height) == (4, 5, 6)


def test_pycuda_helpers_put_doubles_and_complex_values_through_textures_and_surfaces(drv):
    # a texture's channels are 32-bit: a double travels as an int2, a complex<double> as an int4
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    mod = SourceModule("""
    #include <pycuda-helpers.hpp>
    texture<fp_tex_double, 1, cudaReadModeElementType> values;
    surface<void, cudaSurfaceType2DLayered> sheet;
    __global__ void twice(double *out) { out[threadIdx.x] = 2 * fp_tex1Dfetch(values, threadIdx.x); }
    __global__ void store(pycuda::complex<double> *in) {
        fp_surf2DLayeredwrite(in[threadIdx.x], sheet, threadIdx.x, 0, 0, cudaBoundaryModeTrap);
    }
    __global__ void load(pycuda::complex<double> *out) {
        fp_surf2DLayeredread(&out[threadIdx.x], sheet, threadIdx.x, 0, 0, cudaBoundaryModeTrap);
    }
    """)
    values = gpuarray.to_gpu(np.array([0.1, 1.5, -2.25]))      # (kept alive while the texture reads it)
    values.bind_to_texref_ext(mod.get_texref("values"), allow_double_hack=True)
    doubled = np.zeros(3)
    mod.get_function("twice")(drv.Out(doubled), block=(3, 1, 1))
    assert doubled.tolist() == [0.2, 3.0, -4.5]
    waves = np.array([[1 + 2j, -0.5j, 3.25]])
    mod.get_surfref("sheet").set_array(drv.np_to_array(np.zeros_like(waves), "C", allowSurfaceBind=True))
    mod.get_function("store")(drv.In(waves[0]), block=(3, 1, 1))
    back = np.zeros(3, complex)
    mod.get_function("load")(drv.Out(back), block=(3, 1, 1))
    assert back.tolist() == waves[0].tolist()
