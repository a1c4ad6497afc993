"""cupyx.jit's cooperative groups (``jit.cg``), made numba.cuda calls.

CuPy writes ``jit.cg.this_thread_block()`` and ``jit.cg.this_grid()`` and the functions of CUDA's
``cooperative_groups`` namespace over them: ``cg.sync(group)``, ``cg.memcpy_async(group, dst, i, src,
j, nbytes)``, ``cg.wait(group)``, ``cg.wait_prior(group, n)``. numba has a grid group whose only method is
``sync()``, and no thread-block group. Here each group is a numba type of no data (its threads are the
block's or the grid's), whose methods read the special registers as CUDA's ``thread_block`` and
``grid_group`` do; the grid's barrier is numba's (``cuda.cg.this_grid().sync()``, which makes the launch
cooperative, as CuPy's does for a kernel that syncs its grid). jit_spellings renames CuPy's names in a
kernel's code to private names on numba.cuda and numba.cuda.cg (``PREFIX``). ``sync`` is renamed
everywhere in a kernel, the method as well as ``cg.sync``, since a code object has one table of
attribute names: both groups answer the private name as a method too.

What differs from CuPy: the ranks and counts are numba's int64 where CuPy's C++ gives unsigned 64-bit
integers; ``memcpy_async`` copies at once, element by element over the block's threads (CUDA's copy
lands by the ``wait``, which is also a barrier of the group, so what a kernel reads after it is the
same), and needs both arrays of one element type; a grid's ``is_valid()`` asks for the grid's handle,
so a kernel that calls it is launched cooperatively.
"""
from __future__ import annotations

from numba import cuda
from numba.core import errors, types
from numba.core.extending import intrinsic, models, overload, overload_method
from numba.cuda import nvvmutils
from numba.np.numpy_support import as_dtype

PREFIX = "_cupyx_jit_"
# the names a kernel's code reads that this module answers under PREFIX (on numba.cuda.cg)
NAMES = ["this_thread_block", "this_grid", "sync", "wait", "wait_prior", "memcpy_async"]


def _inside_only(name):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"jit.cg.{name} works inside a cupyx.jit kernel only")
    stub.__name__ = stub.__qualname__ = name
    return stub


class ThreadBlockType(types.Type):
    """CuPy's thread-block group (``jit.cg.this_thread_block()``): its threads are the block's, so it
    carries no data; its methods are the block's barrier and geometry."""

    def __init__(self):
        super().__init__(name="ThreadBlock")


class GridGroupType(types.Type):
    """CuPy's grid group (``jit.cg.this_grid()``): every thread of the launch; no data either."""

    def __init__(self):
        super().__init__(name="CuPyGridGroup")


THREAD_BLOCK, GRID = ThreadBlockType(), GridGroupType()
models.register_default(ThreadBlockType)(models.OpaqueModel)
models.register_default(GridGroupType)(models.OpaqueModel)
GROUPS = (ThreadBlockType, GridGroupType)


def _group_maker(group_type):
    @intrinsic
    def make(typingctx):
        def codegen(context, builder, signature, args):
            return context.get_constant_null(signature.return_type)
        return group_type(), codegen
    return make


_thread_block, _grid = _group_maker(THREAD_BLOCK), _group_maker(GRID)

this_thread_block = _inside_only("this_thread_block")
this_thread_block.__doc__ = (
    "CuPy's ``jit.cg.this_thread_block()``: the calling thread's block as a group. ``sync()`` is "
    "``__syncthreads()``, ``thread_rank()`` the thread's number in the block, ``size()``/``num_threads()`` the "
    "block's thread count, ``group_index()``, ``thread_index()`` and ``dim_threads()`` (``group_dim()``) the "
    "block's and the thread's indices and the block's shape (``.x``, ``.y``, ``.z``).")
this_grid = _inside_only("this_grid")
this_grid.__doc__ = (
    "CuPy's ``jit.cg.this_grid()``: every thread of the launch as a group. ``sync()`` is the grid's barrier "
    "(a cooperative launch), ``thread_rank()``/``block_rank()`` number the threads and blocks of the grid "
    "(x fastest), ``size()``/``num_threads()`` and ``num_blocks()`` count them, ``dim_blocks()``/``group_dim()`` "
    "is ``gridDim`` and ``block_index()`` ``blockIdx``.")
overload(this_thread_block, target="cuda", inline="always")(lambda: lambda: _thread_block())
overload(this_grid, target="cuda", inline="always")(lambda: lambda: _grid())


def _method(group_type, *names):
    """Register the decorated overload as the method ``names`` of ``group_type``."""
    def register(function):
        for name in names:
            overload_method(group_type, name, target="cuda")(function)
        return function
    return register


# ------------------------------------------------------------------ the thread block
@_method(ThreadBlockType, "sync", PREFIX + "sync")
def _block_sync(block):
    def sync(block):
        cuda.syncthreads()
    return sync


@_method(ThreadBlockType, "thread_rank")
def _block_thread_rank(block):
    def rank(block):
        return (cuda.threadIdx.z * cuda.blockDim.y + cuda.threadIdx.y) * cuda.blockDim.x + cuda.threadIdx.x
    return rank


@_method(ThreadBlockType, "size", "num_threads")
def _block_size(block):
    def size(block):
        return cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    return size


@_method(ThreadBlockType, "group_index")
def _block_group_index(block):
    """The block's index in the grid (CUDA's ``thread_block::group_index()``, ``blockIdx``)."""
    return lambda block: cuda.blockIdx


@_method(ThreadBlockType, "thread_index")
def _block_thread_index(block):
    """The thread's index in the block (``thread_block::thread_index()``, ``threadIdx``)."""
    return lambda block: cuda.threadIdx


@_method(ThreadBlockType, "dim_threads", "group_dim")
def _block_dim_threads(block):
    """The block's shape in threads (``thread_block::dim_threads()``, ``blockDim``)."""
    return lambda block: cuda.blockDim


# ------------------------------------------------------------------ the grid
@_method(GridGroupType, "sync", PREFIX + "sync")
def _grid_sync(grid):
    def sync(grid):
        cuda.cg.this_grid().sync()
    return sync


@_method(GridGroupType, "block_rank")
def _grid_block_rank(grid):
    def rank(grid):
        return (cuda.blockIdx.z * cuda.gridDim.y + cuda.blockIdx.y) * cuda.gridDim.x + cuda.blockIdx.x
    return rank


@_method(GridGroupType, "num_blocks")
def _grid_num_blocks(grid):
    return lambda grid: cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z


@_method(GridGroupType, "thread_rank")
def _grid_thread_rank(grid):
    """CUDA's ``grid_group::thread_rank()``: the block's rank times the block's threads, plus the
    thread's rank in its block."""
    def rank(grid):
        block = (cuda.blockIdx.z * cuda.gridDim.y + cuda.blockIdx.y) * cuda.gridDim.x + cuda.blockIdx.x
        inside = (cuda.threadIdx.z * cuda.blockDim.y + cuda.threadIdx.y) * cuda.blockDim.x + cuda.threadIdx.x
        return block * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) + inside
    return rank


@_method(GridGroupType, "size", "num_threads")
def _grid_size(grid):
    def size(grid):
        return (cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z) * (cuda.blockDim.x * cuda.blockDim.y
                                                                      * cuda.blockDim.z)
    return size


@_method(GridGroupType, "dim_blocks", "group_dim")
def _grid_dim_blocks(grid):
    return lambda grid: cuda.gridDim


@_method(GridGroupType, "block_index")
def _grid_block_index(grid):
    return lambda grid: cuda.blockIdx


@intrinsic
def _grid_handle_set(typingctx):
    """Whether the launch has a grid workspace (CUDA's ``grid_group::is_valid()``)."""
    def codegen(context, builder, signature, args):
        context.active_code_library.use_cooperative = True
        handle = builder.call(nvvmutils.declare_cudaCGGetIntrinsicHandle(builder.module),
                              (context.get_constant(types.int32, 1),))
        return builder.icmp_unsigned("!=", handle, context.get_constant(types.uint64, 0))
    return types.boolean(), codegen


@_method(GridGroupType, "is_valid")
def _grid_is_valid(grid):
    return lambda grid: _grid_handle_set()


# ------------------------------------------------------------------ cg.sync, cg.memcpy_async, cg.wait
def _need_group(group, what):
    if not isinstance(group, GROUPS):
        raise errors.TypingError(f"jit.cg.{what}(group, ...): the group must be jit.cg.this_thread_block() or "
                                 f"jit.cg.this_grid(), not {group}.")


sync = _inside_only("sync")
sync.__doc__ = "CuPy's ``jit.cg.sync(group)`` (CUDA's ``cg::sync``): the group's barrier, ``group.sync()``."


@overload(sync, target="cuda", inline="always")
def _sync(group):
    _need_group(group, "sync")
    return lambda group: group.sync()


wait = _inside_only("wait")
wait.__doc__ = ("CuPy's ``jit.cg.wait(group)``: every ``memcpy_async`` of the group has landed and the group's "
                "threads have met (cudalab's copies land at once, so this is the group's barrier).")
wait_prior = _inside_only("wait_prior")
wait_prior.__doc__ = "CuPy's ``jit.cg.wait_prior(group, n)``: as ``wait`` (no copy is ever still in flight)."


@overload(wait, target="cuda", inline="always")
def _wait(group):
    _need_group(group, "wait")
    return lambda group: group.sync()


@overload(wait_prior, target="cuda", inline="always")
def _wait_prior(group, step):
    _need_group(group, "wait_prior")
    return lambda group, step: group.sync()


memcpy_async = _inside_only("memcpy_async")
memcpy_async.__doc__ = (
    "CuPy's ``jit.cg.memcpy_async(group, dst, dst_idx, src, src_idx, size, aligned_size=None)``: ``size`` bytes "
    "from ``src[src_idx]`` on into ``dst[dst_idx]`` on, shared among the block's threads; read them after "
    "``jit.cg.wait(group)``.")


@overload(memcpy_async, target="cuda")
def _memcpy_async(group, dst, dst_idx, src, src_idx, size, aligned_size=None):
    if not isinstance(group, ThreadBlockType):
        raise errors.TypingError("jit.cg.memcpy_async(group, ...): CUDA copies asynchronously for a thread block "
                                 f"(jit.cg.this_thread_block()), not for {group}.")
    for name, array in (("dst", dst), ("src", src)):
        if not isinstance(array, types.Array) or array.ndim != 1:
            raise errors.TypingError(f"jit.cg.memcpy_async: {name} must be a 1-D array (CuPy views it as one), "
                                     f"not {array}.")
    if dst.dtype != src.dtype:
        raise errors.TypingError(f"jit.cg.memcpy_async copies {src.dtype} into {dst.dtype}: cudalab copies "
                                 "element by element, so both arrays need the same element type.")
    itemsize = as_dtype(src.dtype).itemsize

    def copy(group, dst, dst_idx, src, src_idx, size, aligned_size=None):
        count = size // itemsize
        k = group.thread_rank()
        step = group.size()
        while k < count:
            dst[dst_idx + k] = src[src_idx + k]
            k += step
    return copy


for _name in NAMES:
    setattr(cuda.cg, PREFIX + _name, globals()[_name])
